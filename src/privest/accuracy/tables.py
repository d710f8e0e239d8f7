"""Accuracy of a group-by table's cells before any data (docs/accuracy.md, "Tables").

A table with a person as the unit (``Domain(unit=..., neighbours="add_remove",
max_groups=G, max_rows=R)``) releases, per cell, the noisy totals its aggregates need: the
count, and the sum of each column whose sum or mean is asked for (a mean is sum / count).
The calibration this module assumes, which the table release must keep:

* epsilon (and delta) split evenly over the released totals;
* a person changes at most G cells, by at most R rows each, each row's value in the public
  ``bounds`` [lo, hi] (clipped), so a total's sensitivity over the whole table is
  ``G R M`` in L1 and ``sqrt(G) R M`` in L2, with ``M = 1`` for the count and
  ``max(|lo|, |hi|)`` for a sum;
* Laplace noise of scale ``L1 / epsilon_total`` per cell (pure DP: one
  :class:`~privest.accounting.events.PureDPEvent` per total), or Gaussian noise of sd
  ``gaussian_sigma(epsilon_total, delta_total, L2, "analytic")`` (one
  :class:`~privest.accounting.events.GaussianEvent` per total).

A cell's mean ``S / C`` is predicted to first order around a stated cell size ``cell_n``
and mean ``m`` (default: the bounds' centre): ``error ~ (e_S - m e_C) / cell_n``, exact
for the Laplace pair (:class:`~privest.accuracy.base.LaplaceSumLaw`) and the Gaussian pair.
"""

from __future__ import annotations

import math

from privest.accounting.events import Event, GaussianEvent, PureDPEvent
from privest.accounting.gaussian import gaussian_sigma
from privest.accuracy.base import Accuracy, LaplaceSumLaw, NormalErrorLaw, check_alpha
from privest.errors import ValidationError
from privest.mechanisms.laplace import LaplaceLaw
from privest.validation import check_epsilon

__all__ = ["AGGREGATES", "parse_aggregate", "predict_table"]

AGGREGATES = ("count", "sum", "mean")
NOISES = ("laplace", "gaussian")


def parse_aggregate(spec: str) -> tuple[str, str | None]:
    """``"count"``, ``"sum:income"``, ``"mean:income"`` -> (aggregate, column)."""
    kind, _, column = str(spec).partition(":")
    if kind not in AGGREGATES or (kind == "count") != (column == ""):
        raise ValidationError(
            f"aggregates: {spec!r} is not accepted; use count, sum:COLUMN or mean:COLUMN"
        )
    return kind, column or None


def _totals(aggregates: list[str]) -> list[str]:
    """The noisy totals a table releases for its aggregates (module docstring)."""
    out = []
    for spec in aggregates:
        kind, col = parse_aggregate(spec)
        need = ["count"] if kind == "count" else [f"sum:{col}"] + (["count"] * (kind == "mean"))
        out += [t for t in need if t not in out]
    return out


def predict_table(
    aggregates: list[str],
    *,
    epsilon: float,
    max_groups: int,
    max_rows: int,
    cell_n: float,
    bounds: dict[str, tuple[float, float]] | None = None,
    noise: str = "laplace",
    delta: float = 0.0,
    cell_mean: dict[str, float] | None = None,
    alpha: float = 0.05,
) -> tuple[list[Accuracy], list[Event]]:
    """The predicted error of each aggregate in one cell of ``cell_n`` people's rows, and
    the privacy events of the whole table (module docstring). ``bounds`` maps each summed
    column to its public (lo, hi)."""
    alpha = check_alpha(alpha)
    eps = check_epsilon(epsilon)
    if noise not in NOISES:
        raise ValidationError(f"noise: {noise!r} is not one of {', '.join(NOISES)}")
    for name, v in (("max_groups", max_groups), ("max_rows", max_rows)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValidationError(f"{name}: {v!r} must be a whole number >= 1")
    if not (isinstance(cell_n, (int, float)) and cell_n > 0 and math.isfinite(cell_n)):
        raise ValidationError(f"cell_n: {cell_n!r} must be a number > 0 (a guessed cell size)")
    if noise == "gaussian" and not 0 < delta < 1:
        raise ValidationError(f"delta: {delta!r} must be in (0, 1) for Gaussian noise")
    totals = _totals(list(aggregates))
    k = len(totals)
    scales, events = {}, []
    for total in totals:
        col = total.partition(":")[2]
        if col and (bounds is None or col not in bounds):
            raise ValidationError(f"bounds: the public (lo, hi) of {col!r} is needed")
        m = 1.0 if not col else max(abs(float(v)) for v in bounds[col])
        if noise == "laplace":
            scales[total] = max_groups * max_rows * m * k / eps
            events.append(PureDPEvent(eps / k))
        else:
            l2 = math.sqrt(max_groups) * max_rows * m
            sigma = gaussian_sigma(eps / k, delta / k, l2, "analytic")
            scales[total] = sigma
            events.append(GaussianEvent(l2 / sigma, eps / k))
    out = []
    for spec in aggregates:
        kind, col = parse_aggregate(spec)
        key = "count" if kind == "count" else f"sum:{col}"
        plaus = (0.0, float(cell_n)) if kind == "count" else None
        if kind == "mean":
            lo, hi = bounds[col]
            m = (cell_mean or {}).get(col, (lo + hi) / 2.0)
            s_sum, s_cnt = scales[key] / cell_n, abs(m) * scales["count"] / cell_n
            law = (
                LaplaceSumLaw(s_sum, s_cnt)
                if noise == "laplace"
                else NormalErrorLaw(math.hypot(s_sum, s_cnt))
            )
            note = f"first order around a cell of {cell_n:g} rows with mean {m:g}"
            out.append(Accuracy(f"mean:{col} per cell", law, alpha, noise, None, note, (lo, hi)))
            continue
        if kind == "sum":
            lo, hi = bounds[col]
            plaus = (cell_n * min(lo, 0.0), cell_n * max(hi, 0.0))
        law = (
            LaplaceLaw(0, scales[key], 1.0, statistic=spec)  # scale = sensitivity / epsilon
            if noise == "laplace"
            else NormalErrorLaw(scales[key])
        )
        out.append(Accuracy(f"{spec} per cell", law, alpha, noise, None, "", plaus))
    return out, events
