"""Figures of reports and notebook views, as self-contained ``<img>`` elements (an SVG in a
``data:`` URI: no external file, no script; each figure's ids stay inside its own image).

Only duck-typed inputs (curves as arrays), so that the objects' ``_repr_html_`` hooks can
use it without importing each other (tests/test_layers.py).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["ALPHAS", "envelope", "figure_img", "profile_figure", "tradeoff_figure"]

#: type I errors at which trade-off curves are drawn (dense near 0, where they are steep)
ALPHAS = np.unique(np.concatenate([np.linspace(0.0, 1.0, 201), np.logspace(-6, 0, 121)]))
_STYLE = {"svg.fonttype": "none", "svg.hashsalt": "privest", "font.size": 9}


def envelope(alpha: np.ndarray, points: Sequence[tuple[float, float]]) -> np.ndarray:
    """The trade-off curve implied by holding (eps_k, delta_k)-DP at every point: the
    largest of the f_{eps, delta} curves (Dong, Roth and Su 2022, Prop. 2.5), a lower
    bound of the true curve."""
    out = np.zeros_like(alpha)
    for eps, dlt in points:
        if not np.isfinite(eps) or dlt >= 1.0:
            continue
        e = np.exp(min(eps, 700.0))
        f = np.maximum.reduce([np.zeros_like(alpha), 1 - dlt - e * alpha, (1 - dlt - alpha) / e])
        out = np.maximum(out, f)
    return out


def figure_img(fig: Any, alt: str) -> str:
    """The matplotlib figure as an ``<img>`` with an inline SVG."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context(_STYLE):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img class="figure" alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def _axes(size: tuple[float, float]) -> tuple[Any, Any]:
    """A figure outside pyplot (no backend, no global state: safe in notebooks)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplots()


def tradeoff_figure(curves: Sequence[tuple[str, np.ndarray, str]], title: str) -> str:
    """Trade-off curves ``(label, beta at ALPHAS, line style)`` against 1 - alpha."""
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        fig, ax = _axes((4.2, 4.0))
        for label, beta, style in curves:
            ax.plot(ALPHAS, np.clip(beta, 0.0, 1.0), style, lw=1.4, label=label)
        ax.plot([0, 1], [1, 0], ":", color="0.6", lw=0.8, label="1 - α (no privacy loss)")
        ax.set(
            xlim=(0, 1), ylim=(0, 1), xlabel="type I error α", ylabel="type II error β", title=title
        )
        ax.set_aspect("equal")
        ax.legend(fontsize="small", loc="upper right")
    return figure_img(fig, f"{title}: trade-off curves (type II against type I error)")


def profile_figure(
    curves: Sequence[tuple[str, np.ndarray, np.ndarray, str]],
    title: str,
    marks: Sequence[tuple[str, float, float]] = (),
) -> str:
    """(epsilon, delta) curves ``(label, epsilons, deltas, style)`` on a log delta axis,
    with labelled points ``marks`` (e.g. the budget's total)."""
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        fig, ax = _axes((5.0, 3.4))
        floor = 1e-12
        for label, eps, dlt, style in curves:
            eps, dlt = np.asarray(eps, float), np.asarray(dlt, float)
            keep = np.isfinite(eps) & (dlt > floor)
            if keep.any():
                ax.plot(eps[keep], dlt[keep], style, lw=1.4, label=label)
        for label, eps, dlt in marks:
            if np.isfinite(eps) and dlt > 0:
                ax.plot([eps], [dlt], "o", ms=6, label=label)
        ax.set_yscale("log")
        ax.set(xlabel="epsilon", ylabel="delta", title=title)
        ax.set_xlim(left=0)
        ax.grid(True, which="major", lw=0.3)
        ax.legend(fontsize="small")
    return figure_img(fig, f"{title}: delta against epsilon")
