"""Global sensitivities of the registered statistics under each neighbour relation.

Data in public ``[a, b]`` (docs/piecewise-laplace.md, "Reaches of each statistic"; Dwork and
Roth 2014, Sec. 3.3). Under **swap** neighbours (n public): the median and any order
statistic ``b - a``; the mean ``(b - a) / n``; the sum ``b - a``; a count 1; the population
variance ``(b - a)^2 (n - 1) / n^2``. Under **add/remove** neighbours (n private), a unit
holding at most ``m`` rows (``Domain.max_rows``; 1 for a record): a count ``m``; the sum
``m max(|a|, |b|)``; an order statistic ``b - a``; the mean and the variance have none (n is
private: release a noisy sum over a noisy count instead).
"""

from __future__ import annotations

import math

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.profiles.reaches import parse_statistic

__all__ = ["global_sensitivity"]


def global_sensitivity(statistic: str, domain: Domain, n: int | None = None) -> float:
    """The global sensitivity of ``statistic`` on ``domain`` (module docstring); ``n`` is
    needed for the mean and the variance under swap neighbours. ``inf`` where there is none."""
    name, _ = parse_statistic(statistic)
    if name == "count":
        return float(domain.max_rows or 1) if domain.neighbours == "add_remove" else 1.0
    a, b = domain.interval()
    if domain.neighbours == "add_remove":
        if name == "sum":
            return (domain.max_rows or 1) * max(abs(a), abs(b))
        if name in ("median", "quantile"):
            return b - a
        return math.inf
    if name in ("median", "quantile", "sum"):
        return b - a
    if n is None or n < 1:
        raise ValidationError(f"n: the sensitivity of the {name} needs the public n >= 1")
    if name == "mean":
        return (b - a) / n
    return (b - a) ** 2 * (n - 1) / n**2
