"""What a central mechanism releases: the private value with its guarantee.

Every mechanism's ``.release(data, rng=...)`` returns an object that carries the same
``.guarantee`` the mechanism exposed before it saw the data, and nothing data-dependent
beyond the released value itself (no exact counts, no diagnostics):

* :class:`PrivateStatistic`: one number; a ``float`` subclass, so it can be used where a
  float is expected (arithmetic on it gives plain floats);
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
    mechanism that produced it), ``guarantee``, ``n`` (public under swap neighbours),
    ``bounds`` (the public bounds), ``randomness`` (``"secure"`` or ``"seeded"``).
    """

    statistic: str
    mechanism: str
    guarantee: Guarantee
    n: int | None
    bounds: tuple[float, float] | None
    randomness: str

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
    ) -> PrivateStatistic:
        self = super().__new__(cls, value)
        self.statistic = statistic
        self.mechanism = mechanism
        self.guarantee = guarantee
        self.n = n
        self.bounds = bounds
        self.randomness = randomness
        return self

    @property
    def value(self) -> float:
        """The released number as a plain float."""
        return float(self)

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
            ),
        )

    def summary(self) -> str:
        """One paragraph: value, statistic, mechanism, guarantee, randomness."""
        lines = [
            f"private {self.statistic} = {float(self):.6g}  ({self.mechanism}, {self.guarantee})",
            f"  n = {self.n}, bounds = {self.bounds}",
            f"  randomness: {self.randomness}"
            + ("" if self.randomness == "secure" else " (reproducible; not for real releases)"),
        ]
        return "\n".join(lines)


def _rebuild_statistic(value, statistic, mechanism, guarantee, n, bounds, randomness):
    return PrivateStatistic(
        value,
        statistic=statistic,
        mechanism=mechanism,
        guarantee=guarantee,
        n=n,
        bounds=bounds,
        randomness=randomness,
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
