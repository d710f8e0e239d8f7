"""``privest demo``: the main job, end to end on embedded real data.

One section per method, each in :mod:`privest.demos`: the ZIL release and DR estimation
(paper 000), private statistics by the piecewise Laplace mechanism and its baselines
(paper 002), ePTR models (paper 001) and IWP-SGD on a local release of examples
(paper 004). Every section prints its tables beside the non-private values and writes
its figures into the output folder.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from privest.rng import make_rng

#: Sections in the order they run (modules of :mod:`privest.demos`).
SECTIONS = ("zil", "statistics", "eptr", "iwp")


def run_demo(output: Path, seed: int | None = None, console: Any = None) -> dict[str, Any]:
    """Run every section; figures go under ``output``. Returns each section's key objects."""
    import matplotlib

    matplotlib.use("Agg")
    from rich.console import Console

    console = console or Console()
    output.mkdir(parents=True, exist_ok=True)
    rng = make_rng(seed)
    return {
        name: importlib.import_module(f"privest.demos.{name}").demo_section(console, output, rng)
        for name in SECTIONS
    }
