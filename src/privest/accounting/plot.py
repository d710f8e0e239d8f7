"""Plots of trade-off functions (paper 000, Fig 1).

``matplotlib.pyplot`` is imported only when a new figure is needed, so the module is
safe to import on headless machines (use the Agg backend there).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from privest.accounting.profiles import approx_dp_tradeoff

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from privest.accounting.base import Guarantee

__all__ = ["plot_guarantee", "plot_tradeoffs"]

_XLABEL = "type I error α"
_YLABEL = "type II error β"


def _new_axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(5, 5))
    return ax


def _alpha_grid(n: int = 801) -> np.ndarray:
    # dense near 0, where trade-off curves of weak guarantees are steep
    return np.unique(np.concatenate([np.linspace(0.0, 1.0, n), np.logspace(-6, 0, n // 2)]))


def _finish(ax: Axes) -> None:
    alpha = np.array([0.0, 1.0])
    ax.plot(alpha, 1.0 - alpha, color="0.6", lw=0.8, ls=":", label="1 − α (no privacy loss)")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_aspect("equal")
    ax.set_xlabel(_XLABEL)
    ax.set_ylabel(_YLABEL)
    ax.legend(fontsize="small", loc="upper right")


def plot_guarantee(
    g: Guarantee,
    ax: Axes | None = None,
    epsilons: Iterable[float] = (0.5, 1.0, 2.0),
    label: str | None = None,
) -> Axes:
    """Trade-off curve of ``g`` (when it has one) and its f_{eps, g.delta(eps)} envelopes.

    Each envelope (dashed) is the (eps, delta(eps))-DP trade-off of Prop 2.1; by Thm 3.3
    they lie below the curve and touch it (Fig 1(a)). Returns the Axes.
    """
    ax = _new_axes(ax)
    alpha = _alpha_grid()
    if g.has_tradeoff:
        ax.plot(alpha, np.asarray(g.tradeoff(alpha)), lw=2, label=label or g.label)
    for eps in epsilons:
        dlt = float(g.delta(float(eps)))
        ax.plot(
            alpha,
            approx_dp_tradeoff(alpha, float(eps), dlt),
            ls="--",
            lw=0.9,
            label=f"f(ε={eps:.3g}, δ={dlt:.3g})",
        )
    if not g.has_tradeoff and label:
        ax.set_title(label)
    _finish(ax)
    return ax


def plot_tradeoffs(curves: Mapping[str, tuple[Any, Any]], ax: Axes | None = None) -> Axes:
    """Overlay several trade-off curves ``{label: (alpha, beta)}``; returns the Axes."""
    ax = _new_axes(ax)
    for name, (alpha, beta) in curves.items():
        ax.plot(np.asarray(alpha, dtype=float), np.asarray(beta, dtype=float), label=name)
    _finish(ax)
    return ax
