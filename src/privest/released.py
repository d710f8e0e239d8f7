"""What a central mechanism releases: the private value with its guarantee.

Every mechanism's ``.release(data, rng=...)`` returns an object that carries the same
``.guarantee`` the mechanism exposed before it saw the data, and nothing data-dependent
beyond the released value itself (no exact counts, no diagnostics):

* :class:`PrivateStatistic`: one number; a ``float`` subclass, so it can be used where a
  float is expected (arithmetic on it gives plain floats). Released with inference (the
  default of the ``private_*`` functions) it also carries ``bse`` and ``conf_int(alpha)``
  for the population quantity, from released values only (docs/central-inference.md);
* :class:`PrivateValue`: a vector (the Gaussian mechanism, private regressions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privest.accounting.base import Guarantee

__all__ = ["PrivateStatistic", "PrivateValue"]


class PrivateStatistic(float):
    """A private release of one statistic: ``float`` with its provenance.

    Attributes: ``statistic`` (e.g. ``"median"``, ``"quantile 0.9"``), ``mechanism`` (the
    mechanism that produced it), ``guarantee`` (of everything released for it: the point and
    what its interval needed), ``n`` (public under swap neighbours), ``bounds`` (the public
    bounds), ``randomness`` (``"secure"`` or ``"seeded"``), ``inference`` (``"population"``,
    ``"noise"`` or ``"none"``) and ``split`` (how epsilon was shared between the point and
    the interval's releases). ``bse`` and ``conf_int(alpha)`` are the standard error and
    the interval (docs/central-inference.md); with ``inference="none"`` they raise.
    """

    statistic: str
    mechanism: str
    guarantee: Guarantee
    n: int | None
    bounds: tuple[float, float] | None
    randomness: str
    interval: Any

    def __new__(
        cls,
        value: float,
        *,
        statistic: str,
        mechanism: str,
        guarantee: Guarantee,
        n: int | None = None,
        bounds: tuple[float, float] | None = None,
        randomness: str = "secure",
        interval: Any = None,
    ) -> PrivateStatistic:
        self = super().__new__(cls, value)
        self.statistic = statistic
        self.mechanism = mechanism
        self.guarantee = guarantee
        self.n = n
        self.bounds = bounds
        self.randomness = randomness
        self.interval = interval
        return self

    @property
    def value(self) -> float:
        """The released number as a plain float."""
        return float(self)

    @property
    def inference(self) -> str:
        """What :meth:`conf_int` covers: ``"population"``, ``"noise"`` or ``"none"``."""
        return "none" if self.interval is None else self.interval.kind

    @property
    def split(self) -> dict[str, float]:
        """The epsilon of each release behind this statistic (``{"point": eps}`` without
        inference); they compose to the guarantee's epsilon."""
        if self.interval is None:
            return {"point": float(getattr(self.guarantee, "eps", float("nan")))}
        return dict(self.interval.split)

    def _inference(self) -> Any:
        if self.interval is None:
            from privest.errors import ValidationError

            raise ValidationError(
                f"inference: this {self.statistic} was released with inference='none' (all of "
                "epsilon on the point); release it with inference='population' (or 'noise') "
                "for an interval"
            )
        return self.interval

    @property
    def bse(self) -> float:
        """Standard error of the estimate: sampling and privacy noise
        (``inference="population"``) or the noise alone (``"noise"``)."""
        return float(self._inference().bse)

    def conf_int(self, alpha: float = 0.05) -> Any:
        """The ``1 - alpha`` interval ``(lower, upper)`` for the population quantity (or, with
        ``inference="noise"``, for the data's own value); docs/central-inference.md."""
        return self._inference().conf_int(alpha)

    def _repr_html_(self) -> str:
        """Notebook view: the release, its provenance, guarantee and interval."""
        from privest.reports.reprs import statistic_html

        return statistic_html(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_statistic,
            (
                float(self),
                self.statistic,
                self.mechanism,
                self.guarantee,
                self.n,
                self.bounds,
                self.randomness,
                self.interval,
            ),
        )

    def summary(self, alpha: float = 0.05) -> str:
        """One paragraph: value, statistic, mechanism, guarantee, the interval at level
        1 - alpha (what it covers, how epsilon was split), randomness."""
        lines = [
            f"private {self.statistic} = {float(self):.6g}  ({self.mechanism}, {self.guarantee})",
            f"  n = {self.n}, bounds = {self.bounds}",
            *self._interval_lines(alpha),
            f"  randomness: {self.randomness}"
            + ("" if self.randomness == "secure" else " (reproducible; not for real releases)"),
        ]
        return "\n".join(lines)

    def _interval_lines(self, alpha: float) -> list[str]:
        if self.interval is None:
            return ["  inference: none (all of epsilon on the point)"]
        low, high = self.conf_int(alpha)
        kind = "sampling and privacy noise" if self.inference == "population" else "noise only"
        split = ", ".join(f"{k} {v:.4g}" for k, v in self.split.items())
        return [
            f"  {1 - alpha:.0%} interval [{low:.6g}, {high:.6g}], std err {self.bse:.4g}",
            f"  covers {self.interval.target} ({kind})",
            f"  epsilon split: {split}",
        ]


def _rebuild_statistic(value, statistic, mechanism, guarantee, n, bounds, randomness, interval):
    return PrivateStatistic(
        value,
        statistic=statistic,
        mechanism=mechanism,
        guarantee=guarantee,
        n=n,
        bounds=bounds,
        randomness=randomness,
        interval=interval,
    )


@dataclass(frozen=True)
class PrivateValue:
    """A private release of a vector: ``value`` with its ``guarantee``; ``np.asarray`` works."""

    value: np.ndarray
    guarantee: Guarantee
    mechanism: str
    randomness: str = "secure"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.value, dtype=dtype)

    def summary(self) -> str:
        return (
            f"{self.mechanism}: {np.array2string(np.asarray(self.value), precision=4)} under "
            f"{self.guarantee} (randomness: {self.randomness})"
        )
