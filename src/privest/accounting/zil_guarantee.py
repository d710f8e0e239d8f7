"""The guarantee objects of the ZIL mechanism (paper 000, Thm 3.1 and eq 3.3): the
trade-off ``T_{d,c,delta}`` and the two-unit guarantee of a release. The functions they are
computed from live in :mod:`privest.accounting.zil`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privest.accounting.base import Guarantee
from privest.accounting.zil import (
    _SQRT2,
    ArrayLike,
    _as_alpha,
    _check_c,
    _check_d,
    _check_zero_prob,
    _out,
    _shrink,
    beta_c_zil,
    delta_tilde,
    laplace_tradeoff_zil,
    tradeoff_montecarlo,
    unit_diameters,
)
from privest.errors import ValidationError
from privest.rng import resolve_rng
from privest.validation import check_delta

__all__ = ["ZILGuarantee", "ZILTradeoff"]


def _fmt(x: float) -> str:
    return f"{x:.4g}"


class ZILTradeoff(Guarantee):
    """The T_{d,c,delta} guarantee of the ZIL mechanism (Thm 3.1, eq 3.3).

    ``c`` is the shift diam/lam, ``zero_prob`` the zero proportion (probability that a record
    is released without noise; 0 gives plain SL noise), ``d`` the number of noised
    attributes (``None`` if unknown). With ``exact_laplace`` (allowed only for d = 1; the
    default when d = 1) the exact T_{1,c,delta} is used; otherwise the closed-form bound
    beta_{c,delta} <= T_{d,c,delta}, valid for every d (Thm 3.2(ii)) and tight as d grows.
    """

    def __init__(
        self,
        c: float,
        zero_prob: float,
        d: int | None = None,
        exact_laplace: bool | None = None,
    ):
        self.c = _check_c(c)
        self.zero_prob = _check_zero_prob(zero_prob)
        self.d = None if d is None else _check_d(d)
        if exact_laplace is None:
            exact_laplace = self.d == 1
        if exact_laplace and self.d != 1:
            raise ValidationError(
                f"exact_laplace=True needs d == 1 (got d={self.d}); for d >= 2 only the "
                "beta_{c,delta} bound is a guarantee (use estimate_tradeoff for an estimate)"
            )
        self.exact_laplace = bool(exact_laplace)
        dd = "d" if self.d is None else str(self.d)
        kind = "exact Laplace" if self.exact_laplace else "beta bound"
        self.label = f"T_{{{dd},{_fmt(self.c)},{self.zero_prob:.3g}}} ({kind})"

    @property
    def eps0(self) -> float:
        """sqrt(2) c: the pure-DP epsilon of the d = 1 Laplace part (T_{1,c} >= f_{eps0,0})."""
        return _SQRT2 * self.c

    def delta(self, epsilon: ArrayLike) -> float | np.ndarray:
        """delta~_{c,delta}(epsilon) (Thm 3.3(i)); exact for d = 1 with exact_laplace."""
        return delta_tilde(epsilon, self.c, self.zero_prob, self.exact_laplace)

    def epsilon(self, delta: float) -> float:
        """Smallest epsilon with delta~(epsilon) <= delta, in closed form.

        0 when delta~(0) <= delta; inf when delta < zero_prob, and also when
        delta == zero_prob for the beta bound (reached only at eps0 = sqrt(2) c in
        the exact Laplace case). Inverts delta_c(eps) = 1 - exp(-c/u):
        eps = c^2/(2g) - g (beta) or eps0 - 2g (Laplace), g = -log(1 - q).
        """
        target = check_delta(delta)
        zp = self.zero_prob
        if float(self.delta(0.0)) <= target:
            return 0.0
        if target < zp or (target == zp and not self.exact_laplace):
            return math.inf
        g = -math.log1p(-(target - zp) / (1.0 - zp))
        if self.exact_laplace:
            return max(0.0, self.eps0 - 2.0 * g)
        return max(0.0, self.c**2 / (2.0 * g) - g)

    def tradeoff(self, alpha: ArrayLike) -> float | np.ndarray:
        """T_{1,c,delta} (exact_laplace) or the bound beta_{c,delta} (eq 3.3, Prop 3.2)."""
        if self.exact_laplace:
            return laplace_tradeoff_zil(alpha, self.c, self.zero_prob)
        return beta_c_zil(alpha, self.c, self.zero_prob)

    def estimate_tradeoff(
        self,
        alpha: ArrayLike,
        n_draws: int = 100_000,
        rng: np.random.Generator | int | None = None,
    ) -> float | np.ndarray:
        """Monte Carlo *estimate* of the exact T_{d,c,delta} (not a guarantee).

        Shrinks :func:`tradeoff_montecarlo` by eq (3.3). Exact for d = 1.
        """
        if self.d is None:
            raise ValidationError("estimate_tradeoff needs the number of noised attributes d")
        a = _as_alpha(alpha)
        if self.d == 1:
            return laplace_tradeoff_zil(a, self.c, self.zero_prob)
        gen = resolve_rng(rng)
        return _out(
            _shrink(
                a, self.zero_prob, lambda x: tradeoff_montecarlo(x, self.d, self.c, n_draws, gen)
            )
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "c": self.c,
            "zero_prob": self.zero_prob,
            "d": self.d,
            "exact_laplace": self.exact_laplace,
        }

    def event(self, epsilon: float | None = None) -> Any:
        """The curve as a :class:`~privest.accounting.events.TradeoffEvent` (exact Laplace
        or beta bound), charged at ``epsilon`` by basic composition."""
        from privest.accounting.events import TradeoffEvent

        curve = "zil_laplace" if self.exact_laplace else "zil_beta"
        return TradeoffEvent(curve, self.c, self.zero_prob, epsilon)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ZILTradeoff:
        """Inverse of :meth:`to_dict`."""
        return cls(data["c"], data["zero_prob"], data.get("d"), data.get("exact_laplace"))


class ZILGuarantee(Guarantee):
    """Both guarantees of one ZIL release (Thm 3.1): individual (DP/LDP) and attribute (ADP/LADP).

    Built from the noise scale ``lam`` (in units of each noised column's public range),
    the zero proportion ``zero_prob`` and the number ``n_noised`` of noised columns. Each
    column's box is mapped to [0, 1] before the noise, so ``c_I = sqrt(n_noised)/lam``
    (diameter of the unit cube) and ``c_A = 1/lam``. ``delta``/``epsilon``/``tradeoff``
    refer to the individual level. With one noised attribute the exact Laplace profile is
    used.
    """

    def __init__(self, lam: float, zero_prob: float, n_noised: int):
        self.lam = _check_c(lam, "lam")
        self.zero_prob = _check_zero_prob(zero_prob)
        self.n_noised = _check_d(n_noised)
        diam, widest = unit_diameters(self.n_noised)
        self.c_individual = diam / self.lam
        self.c_attribute = widest / self.lam
        exact = self.n_noised == 1
        self.individual = ZILTradeoff(self.c_individual, self.zero_prob, self.n_noised, exact)
        self.attribute = ZILTradeoff(self.c_attribute, self.zero_prob, self.n_noised, exact)
        self.label = (
            f"ZIL(lam={_fmt(self.lam)}, zero_prob={self.zero_prob:.3g}, d={self.n_noised}): "
            f"individual {self.individual.label}"
        )

    def delta(self, epsilon: ArrayLike) -> float | np.ndarray:
        return self.individual.delta(epsilon)

    def epsilon(self, delta: float) -> float:
        return self.individual.epsilon(delta)

    def tradeoff(self, alpha: ArrayLike) -> float | np.ndarray:
        return self.individual.tradeoff(alpha)

    def event(self, epsilon: float | None = None) -> Any:
        """The individual-level curve's event (what a budget charges for a release)."""
        return self.individual.event(epsilon)

    def estimate_tradeoff(
        self,
        alpha: ArrayLike,
        n_draws: int = 100_000,
        rng: np.random.Generator | int | None = None,
    ) -> float | np.ndarray:
        """Monte Carlo estimate of the individual-level T_{d,c_I,delta} (not a guarantee)."""
        return self.individual.estimate_tradeoff(alpha, n_draws, rng)

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "lam": self.lam,
            "zero_prob": self.zero_prob,
            "n_noised": self.n_noised,
            "c_individual": self.c_individual,
            "c_attribute": self.c_attribute,
            "individual": self.individual.to_dict(),
            "attribute": self.attribute.to_dict(),
        }

    def summary(self, epsilons: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)) -> str:
        """Short text report: both levels, an (eps, delta) table and the caveats."""
        zp = self.zero_prob
        kind = (
            "exact Laplace profile (one noised attribute)"
            if self.n_noised == 1
            else f"beta_{{c,delta}} bound (valid for any d; conservative for d={self.n_noised})"
        )
        lines = [
            f"ZIL mechanism: lam={_fmt(self.lam)} (per unit of each column's range), "
            f"zero_prob={zp:.3g}, {self.n_noised} noised attribute(s)",
            f"  individual (DP/LDP):   c_I={_fmt(self.c_individual)}  {self.individual.label}",
            f"  attribute (ADP/LADP):  c_A={_fmt(self.c_attribute)}  {self.attribute.label}",
            f"  accounting: {kind}",
            "  eps      delta (individual)   delta (attribute)",
        ]
        for e in epsilons:
            di = float(self.individual.delta(e))
            da = float(self.attribute.delta(e))
            lines.append(f"  {e:<8.3g} {di:<20.4f} {da:.4f}")
        lines += [
            "Caveats:",
            f"  - a share zero_prob={zp:.3g} of the records is released exactly, without noise; "
            f"delta(eps) >= {zp:.3g} at every eps.",
            "  - small target deltas (e.g. 1e-5) are practically unreachable: delta_c(eps) "
            "decays only like c^2/(2 eps)."
            if self.n_noised > 1
            else f"  - delta(eps) = {zp:.3g} for eps >= sqrt(2) c = {self.individual.eps0:.4g}; "
            "smaller target deltas (e.g. 1e-5) are unreachable.",
            "  - no Gaussian-DP (mu-GDP) conversion exists for this mechanism.",
        ]
        if self.n_noised > 1:
            lines.append(
                "  - the exact T_{d,c,delta} is known only by Monte Carlo (estimate_tradeoff): "
                "an estimate, not a guarantee."
            )
        return "\n".join(lines)
