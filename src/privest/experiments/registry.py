"""Registry of paper reproductions run by ``privest reproduce``.

Each experiment returns a table in the common format (one row per reported number)::

    setting, n, method, parameter, ours, paper, mc_se, flag, note

``paper`` is the paper's own number (NaN where the paper gives none), ``mc_se`` the
Monte Carlo standard error of ``ours`` (NaN for exact numbers), and ``flag`` marks a
cell more than 3 standard errors (or, for exact numbers, more than the paper's
rounding) from the paper. Experiments also return matplotlib figures.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privest.errors import ValidationError

__all__ = ["COLUMNS", "Experiment", "ExperimentResult", "Row", "get", "names", "register"]

COLUMNS = ["setting", "n", "method", "parameter", "ours", "paper", "mc_se", "flag", "note"]


@dataclass
class Row:
    """One reported number: ours beside the paper's."""

    setting: str
    n: float
    method: str
    parameter: str
    ours: float
    paper: float = math.nan
    mc_se: float = math.nan
    note: str = ""
    tolerance: float = math.nan  # for exact numbers: the paper's rounding

    def flag(self) -> str:
        if math.isnan(self.paper) or math.isnan(self.ours):
            return ""
        gap = abs(self.ours - self.paper)
        if not math.isnan(self.mc_se) and self.mc_se > 0:
            return ">3 SE" if gap > 3 * self.mc_se else ""
        if not math.isnan(self.tolerance):
            return "differs" if gap > self.tolerance else ""
        return ""


@dataclass
class ExperimentResult:
    """Rows of the common table and named figures."""

    rows: list[Row]
    figures: dict[str, Any] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        recs = [
            {**{k: getattr(r, k) for k in COLUMNS if k != "flag"}, "flag": r.flag()}
            for r in self.rows
        ]
        return pd.DataFrame(recs, columns=COLUMNS)


@dataclass(frozen=True)
class Experiment:
    """A registered reproduction: ``run(reps, quick, rng, progress)`` -> ExperimentResult."""

    name: str
    title: str
    default_reps: int
    quick_reps: int
    run: Callable[..., ExperimentResult]

    @property
    def takes_data(self) -> bool:
        """Whether the experiment reads an external data set (a ``data_dir`` argument)."""
        return "data_dir" in inspect.signature(self.run).parameters

    def execute(
        self,
        output: str | Path,
        reps: int | None = None,
        quick: bool = False,
        seed: int = 20260101,
        progress: bool = True,
        data_dir: str | Path | None = None,
    ) -> tuple[pd.DataFrame, list[Path]]:
        """Run and write ``OUTPUT/NAME.csv`` and ``OUTPUT/NAME[-figure].png``; return both.

        ``data_dir`` is the folder of an external data set, for the experiments that read one
        (:attr:`takes_data`)."""
        if reps is None:
            reps = self.quick_reps if quick else self.default_reps
        if reps < 1:
            raise ValidationError(f"reps: {reps} must be a positive integer")
        extra = {}
        if data_dir is not None:
            if not self.takes_data:
                raise ValidationError(f"--data: {self.name} reads no external data set")
            extra["data_dir"] = str(data_dir)
        result = self.run(reps=reps, rng=np.random.default_rng(seed), progress=progress, **extra)
        out = Path(output)
        out.mkdir(parents=True, exist_ok=True)
        table = result.table()
        table.to_csv(out / f"{self.name}.csv", index=False)
        import matplotlib.pyplot as plt

        paths = []
        for key, fig in result.figures.items():
            p = out / (f"{self.name}.png" if key == "main" else f"{self.name}-{key}.png")
            fig.savefig(p, dpi=120, bbox_inches="tight")
            plt.close(fig)
            paths.append(p)
        return table, paths


_REGISTRY: dict[str, Experiment] = {}


def register(
    name: str, title: str, default_reps: int, quick_reps: int
) -> Callable[[Callable[..., ExperimentResult]], Callable[..., ExperimentResult]]:
    """Decorator adding an experiment function to the registry."""

    def deco(func: Callable[..., ExperimentResult]) -> Callable[..., ExperimentResult]:
        _REGISTRY[name] = Experiment(name, title, default_reps, quick_reps, func)
        return func

    return deco


def _load_all() -> None:
    """Import every module of :mod:`privest.experiments`; each registers its experiments."""
    import pkgutil

    import privest.experiments as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")


def names() -> list[str]:
    """Names of all registered experiments."""
    _load_all()
    return sorted(_REGISTRY)


def get(name: str) -> Experiment:
    """The experiment called ``name``."""
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValidationError(
            f"experiment: {name!r} is unknown; available: {', '.join(sorted(_REGISTRY))}"
        ) from None
