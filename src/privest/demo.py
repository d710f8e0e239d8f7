"""``privest demo``: the main job, end to end on embedded real data.

One section per method, each in :mod:`privest.demos`: the ZIL release and DR estimation
(paper 000), private statistics by the piecewise Laplace mechanism and its baselines
(paper 002), ePTR models (paper 001) and IWP-SGD on a local release of examples
(paper 004). Every section prints its tables beside the non-private values and writes
its figures into the output folder.

The demo keeps a ledger (``ledger.json`` in the output folder, :class:`~privest.Budget`):
every release it prints is charged before the data are read. The sections that repeat a
fit many times to show its spread (ePTR's accuracy over 20 fits per epsilon, IWP-SGD over
40 simulated releases) are experiments on public benchmark data and are said so, not
charged. At the end the demo writes ``report.html`` (:func:`privest.report`) from the
ledger and the ZIL release store: the page a disclosure review would read.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from privest.rng import make_rng

#: Sections in the order they run (modules of :mod:`privest.demos`).
SECTIONS = ("zil", "statistics", "eptr", "iwp")
#: The demo's total budget: what its charged releases spend, with room for the composition
#: of basic accounting (docs/budget.md).
TOTAL_EPSILON, TOTAL_DELTA = 40.0, 0.5


def run_demo(output: Path, seed: int | None = None, console: Any = None) -> dict[str, Any]:
    """Run every section; figures, the ledger, the store and the report go under ``output``.
    Returns each section's key objects, and the budget under ``"budget"``."""
    import matplotlib

    matplotlib.use("Agg")
    from rich.console import Console

    from privest.accounting.budget import Budget
    from privest.reports import report

    console = console or Console()
    output.mkdir(parents=True, exist_ok=True)
    rng = make_rng(seed)
    ledger = output / "ledger.json"
    ledger.unlink(missing_ok=True)  # the demo's own file: a new run starts a new ledger
    budget = Budget.create(ledger, TOTAL_EPSILON, TOTAL_DELTA, accountant="pld")
    out: dict[str, Any] = {
        name: importlib.import_module(f"privest.demos.{name}").demo_section(
            console, output, rng, budget
        )
        for name in SECTIONS
    }
    console.rule("[bold]the demo's ledger and release report")
    console.print(budget.report())
    page = report([budget, output / "release-store"], output / "report.html", title="privest demo")
    console.print(f"ledger: {ledger}\nrelease report: {page}")
    out["budget"] = budget
    return out
