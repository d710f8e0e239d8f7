"""Shared pieces of the ePTR reproductions (paper 001): result collection, progress, plots.

Not an experiment itself; the registered ones are ``eptr-bayes``, ``eptr-credit``, ``eptr-ols``,
``eptr-wine``, ``eptr-california`` and ``eptr-nw``.
"""

from __future__ import annotations

import math
import os
import warnings
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from privest.errors import NothingReleasedWarning
from privest.experiments.registry import Row

__all__ = [
    "Collector",
    "balanced_error",
    "bayes_fit_all",
    "data_file",
    "plot_panel",
    "quiet_bottom",
]


@contextmanager
def quiet_bottom() -> Iterator[None]:
    """Silence :class:`NothingReleasedWarning` inside a reproduction: a bottom output is a
    measured outcome there (each experiment reports the ePTR release rate), not news."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NothingReleasedWarning)
        yield


def balanced_error(pred: np.ndarray, labels: np.ndarray, k: int) -> float:
    """Mean over the classes present of the per-class error rate."""
    return float(
        np.mean([np.mean(pred[labels == c] != c) for c in range(k) if np.any(labels == c)])
    )


def bayes_fit_all(
    X: np.ndarray,
    labels: np.ndarray,
    *,
    k: int,
    x_radius: float,
    delta: float,
    eps: float,
    c0: float,
    split: float,
    rng: np.random.Generator,
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], bool]:
    """(prior, means) of every Bayes method of Figure 1 (non-private, ePTR with the paper's
    Algorithm 3 and constants, DPNB, DPNBSS) at eps, and whether ePTR released."""
    from privest.models.eptr_baselines import dpnb, dpnbss
    from privest.models.eptr_bayes import EPTRBayesClassifier, bayes_statistics

    with quiet_bottom():  # the release rate is recorded
        model = EPTRBayesClassifier(
            epsilon=eps,
            delta=delta,
            classes=list(range(k)),
            x_radius=x_radius,
            c0=c0,
            constants="paper",  # the paper's Algorithm 3, so the figures compare
            random_state=rng,
            clip=True,
        ).fit(X, labels)
    st = bayes_statistics(X, labels, k, x_radius, c0)
    return {
        "non-private": (np.maximum(st["class_prior"], 1e-12), st["means"]),
        "ePTR": (model.class_prior_, model.means_),
        "DPNB": dpnb(X, labels, k, x_radius, eps, split, rng),
        "DPNBSS": dpnbss(X, labels, k, x_radius, eps, split, rng),
    }, model.released_


def data_file(
    experiment: str, data_dir: str | Path | None, env: str, names: tuple[str, ...], hint: str
) -> Path:
    """The data file of a real-data reproduction: ``data_dir`` (``--data PATH``), else ``$env``.

    PATH is the file itself or a folder holding one of ``names``. The library ships no copy of
    the data and reads no default location: without a path this refuses, saying (``hint``)
    where to get the file and in what format.
    """
    where = data_dir or os.environ.get(env)
    if not where:
        raise FileNotFoundError(f"{experiment}: needs --data PATH (or ${env}): {hint}")
    path = Path(where)
    if path.is_dir():
        found = [path / n for n in names if (path / n).is_file()]
        if not found:
            raise FileNotFoundError(
                f"{experiment}: no {' or '.join(names)} in {path.resolve()}; {hint}"
            )
        return found[0]
    if not path.is_file():
        raise FileNotFoundError(f"{experiment}: {path.resolve()} does not exist; {hint}")
    return path


class Collector:
    """Per-replicate values keyed by (setting, n, method, parameter); summarised as mean and SE."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, float, str, str], list[float]] = defaultdict(list)
        self.notes: dict[tuple[str, float, str, str], str] = {}

    def add(self, setting: str, n: float, method: str, parameter: str, value: float) -> None:
        self._values[(setting, float(n), method, parameter)].append(float(value))

    def mean(self, setting: str, n: float, method: str, parameter: str) -> float:
        return float(np.mean(self._values[(setting, float(n), method, parameter)]))

    def se(self, setting: str, n: float, method: str, parameter: str) -> float:
        v = np.asarray(self._values[(setting, float(n), method, parameter)])
        return float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan

    def rows(self, note: str = "") -> list[Row]:
        out = []
        for key, vals in self._values.items():
            v = np.asarray(vals)
            se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
            out.append(
                Row(
                    key[0],
                    key[1],
                    key[2],
                    key[3],
                    float(v.mean()),
                    mc_se=se,
                    note=self.notes.get(key, note),
                )
            )
        return out


def plot_panel(
    ax: Any,
    col: Collector,
    settings: list[tuple[str, float, float]],
    methods: list[str],
    parameter: str,
    xlabel: str,
    ylabel: str,
    logy: bool = True,
) -> None:
    """One panel: mean +- 1.96 SE of ``parameter`` per method over (setting, n, x) triples."""
    for method in methods:
        xs, ms, ss = [], [], []
        for setting, n, x in settings:
            key = (setting, float(n), method, parameter)
            if key not in col._values:
                continue
            xs.append(x)
            ms.append(col.mean(setting, n, method, parameter))
            ss.append(col.se(setting, n, method, parameter))
        if not xs:
            continue
        ms, ss = np.asarray(ms), np.nan_to_num(np.asarray(ss))
        ax.plot(xs, ms, marker="o", ms=3, label=method)
        ax.fill_between(xs, np.maximum(ms - 1.96 * ss, 1e-12), ms + 1.96 * ss, alpha=0.2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
