"""Float-safe noise on the cells of a table (docs/tables.md, "Composition").

A table releases, per cell, integers computed exactly: counts, and sums of records snapped
to a public dyadic grid (:mod:`privest.tables.totals`). A person changes at most ``touched``
cells (``max_groups``), each by at most ``S`` data units. :class:`CellNoise` adds exact
discrete noise on a public power-of-two grid ``g`` (a multiple of the data unit): the value
released is ``g (round(v / g) + K)``, every output a multiple of ``g`` whatever the data
(Mironov 2012; the construction of :mod:`privest.mechanisms.samplers.lattice`). In grid
units one cell moves by at most ``shift = S`` when ``g`` is the data unit, else
``floor(S g_data / g) + 1`` (rounding):

* Laplace: ``K`` discrete Laplace of scale ``t >= touched shift / eps`` (on the 2^-10 grid,
  :func:`~privest.mechanisms.discrete_laplace.discrete_laplace_scale`): each cell is
  ``shift / t``-DP, and a person's ``touched`` cells compose to at most eps (L1);
* Gaussian: ``K`` discrete Gaussian of integer variance ``sigma2 >= touched shift^2 /
  (2 rho)``: each cell is ``shift^2 / (2 sigma2)``-zCDP (Canonne, Kamath and Steinke 2020,
  Thm 14) and ``touched`` of them compose to rho (the L2 sensitivity ``sqrt(touched)``).

Each noise emits the accounting's event: a :class:`~privest.accounting.events.ParallelEvent`
over the cells, ``touched`` of them changed by one person.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from privest.accounting.events import (
    DiscreteGaussianEvent,
    Event,
    ParallelEvent,
    PureDPEvent,
)
from privest.errors import ValidationError
from privest.intervals.counts import count_noise_halfwidth
from privest.mechanisms.discrete_laplace import discrete_laplace_scale
from privest.mechanisms.samplers.lattice import (
    MAX_INT,
    grid_step,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    sample_discrete_laplace_many,
)

__all__ = ["CellNoise", "gaussian_noise", "laplace_noise", "release_all"]

#: Laplace grid: scale / g in [2^20, 2^21); Gaussian grid: sigma / g in [2^10, 2^11)
LAPLACE_BITS, GAUSSIAN_BITS = 20, 10


@dataclass(frozen=True)
class CellNoise:
    """Discrete noise on the grid ``step`` for data in units of ``unit`` (module docstring).

    ``kind``: ``"laplace"`` (``scale`` a rational t) or ``"gaussian"`` (``scale`` the
    integer variance sigma2), both in grid units."""

    kind: str
    unit: float
    step: float
    shift: int
    scale: Fraction | int
    touched: int

    @property
    def ratio(self) -> int:
        """Data units per grid step (a power of two >= 1)."""
        return round(self.step / self.unit)

    def event(self) -> Event:
        """A :class:`ParallelEvent` over the cells, ``touched`` of them changed per person."""
        if self.kind == "laplace":
            cell: Event = PureDPEvent(self.shift / float(self.scale))
        else:
            cell = DiscreteGaussianEvent(float(self.scale), int(self.shift))
        return ParallelEvent(((self.touched, cell),), self.touched)

    def to_grid(self, units: np.ndarray) -> np.ndarray:
        """``round(v / g)`` for integer data ``units`` (exact integer arithmetic)."""
        units = np.asarray(units, dtype=np.int64)
        r = self.ratio
        if r == 1:
            return units
        return (units + r // 2) // r  # floor((v + r/2) / r): round half up, exact

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` exact draws of K (int64, grid units)."""
        if size == 0:
            return np.zeros(0, dtype=np.int64)
        if self.kind == "laplace":
            return sample_discrete_laplace(self.scale, size, rng)
        return sample_discrete_gaussian(int(self.scale), size, rng)

    def release(self, units: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``g (round(v / g) + K)`` per cell, as floats (exact: integers below 2^53)."""
        return release_all([(self, units)], rng)[0]

    # -- the noise law (public) -----------------------------------------------------------
    @cached_property
    def _p(self) -> float:
        """The discrete Laplace ratio p = exp(-1/t)."""
        return math.exp(-1.0 / float(self.scale))

    @cached_property
    def _gauss_tail(self) -> np.ndarray:
        """P(|K| > j) for j = 0 .. 40 sigma (the discrete Gaussian, summed numerically)."""
        s2 = float(self.scale)
        top = math.ceil(40.0 * math.sqrt(s2)) + 1
        k = np.arange(top + 1, dtype=float)
        w = np.exp(-(k**2) / (2.0 * s2))
        mass = w / (2.0 * w.sum() - w[0])  # P(K = k) for k >= 0
        mass[1:] *= 2.0  # P(|K| = k)
        return np.concatenate([np.cumsum(mass[::-1])[::-1][1:], [0.0]])

    def abs_sf(self, j: np.ndarray | int) -> np.ndarray:
        """P(|K| > j) for integers j >= 0 (grid units)."""
        j = np.asarray(j, dtype=np.int64)
        if self.kind == "laplace":
            p = self._p
            return 2.0 * p ** (j.astype(float) + 1.0) / (1.0 + p)
        tail = self._gauss_tail
        return tail[np.clip(j, 0, tail.size - 1)]

    def upper_tail(self, j: int) -> float:
        """P(K >= j) for an integer j >= 1 (grid units): half of P(|K| > j - 1)."""
        return 0.5 * float(self.abs_sf(j - 1))

    def abs_quantile(self, beta: float) -> float:
        """The least ``q`` (value units) with P(|K g| > q) <= beta."""
        if self.kind == "laplace":
            return float(count_noise_halfwidth(self._p, beta)) * self.step
        tail = self._gauss_tail
        return float(np.argmax(tail <= beta)) * self.step

    @property
    def variance(self) -> float:
        """Var(K g) (value units squared)."""
        if self.kind == "laplace":
            p = self._p
            return 2.0 * p / (1.0 - p) ** 2 * self.step**2
        return float(self.scale) * self.step**2  # N_Z(0, s2) has variance <= s2 (CKS20 Prop 19)


def release_all(
    items: list[tuple[CellNoise, np.ndarray]], rng: np.random.Generator
) -> list[np.ndarray]:
    """:meth:`CellNoise.release` of each ``(noise, units)``, the Laplace ones' draws in one
    vectorised call (the same laws; the sampler's fixed cost paid once)."""
    laplace = [i for i, (noise, _) in enumerate(items) if noise.kind == "laplace"]
    draws = sample_discrete_laplace_many(
        [items[i][0].scale for i in laplace], [np.size(items[i][1]) for i in laplace], rng
    )
    k = dict(zip(laplace, draws, strict=True))
    out = []
    for i, (noise, units) in enumerate(items):
        c = noise.to_grid(units) + (k[i] if i in k else noise.sample(np.size(units), rng))
        if c.size and np.abs(c).max() >= MAX_INT:
            raise ValidationError("a cell's total is too large for the noise's grid")
        out.append(c.astype(float) * noise.step)
    return out


def laplace_noise(epsilon: float, sensitivity: int, touched: int, unit: float) -> CellNoise:
    """Laplace noise for cells of integer data (in ``unit``s) moving by at most
    ``sensitivity`` units each, ``touched`` cells per person: epsilon-DP over them."""
    target = touched * sensitivity * unit / epsilon
    step = max(unit, grid_step(target, LAPLACE_BITS))
    ratio = round(step / unit)
    shift = sensitivity if ratio == 1 else sensitivity // ratio + 1
    scale = discrete_laplace_scale(touched * shift, epsilon)
    return CellNoise("laplace", unit, step, int(shift), scale, int(touched))


def gaussian_noise(rho: float, sensitivity: int, touched: int, unit: float) -> CellNoise:
    """Discrete Gaussian noise for the same cells: rho-zCDP over a person's cells."""
    if not (rho > 0 and math.isfinite(rho)):
        raise ValidationError(f"rho: {rho!r} must be finite and > 0")
    sigma = math.sqrt(touched) * sensitivity * unit / math.sqrt(2.0 * rho)
    step = max(unit, grid_step(sigma, GAUSSIAN_BITS))
    while True:
        ratio = round(step / unit)
        shift = sensitivity if ratio == 1 else sensitivity // ratio + 1
        sigma2 = math.ceil(touched * shift**2 / (2.0 * rho))
        if sigma2 < 2**24:
            return CellNoise("gaussian", unit, step, int(shift), int(sigma2), int(touched))
        step *= 2.0
