"""Audit of a ZIL mechanism on its worst-case neighbours (paper 000, Thm 3.1).

The release path itself (``ZILMechanism.release``) is run on a record x at the low
corner of the bounds and on a neighbour x' that differs in every attribute (the
individual unit: the opposite corner, shift ``sqrt(d) / lam`` in the unit cube) or in one
attribute (the attribute unit: shift ``1 / lam``). The statistic is the exact
log-likelihood ratio of X1 from the SL density of the noise in units of each column's
range, with the zero-inflation atoms at x (``-inf``) and x' (``+inf``). X2 is
post-processing of X1, so auditing X1 audits the whole release.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np

from privest.accounting.base import Guarantee
from privest.accounting.zil import check_unit
from privest.audit.auditor import AuditResult, audit
from privest.errors import SeededRandomnessWarning
from privest.noise import sl_logpdf
from privest.release.zil import ZILMechanism, output_grid

__all__ = ["audit_zil_mechanism", "zil_neighbours"]


def zil_neighbours(
    bounds: np.ndarray, unit: Literal["individual", "attribute"]
) -> tuple[np.ndarray, np.ndarray]:
    """The worst-case pair (x, x') inside ``bounds`` for the protection ``unit``."""
    lo, hi = bounds[:, 0], bounds[:, 1]
    if check_unit(unit) == "individual":
        return lo.copy(), hi.copy()
    x_prime = lo.copy()
    x_prime[0] = hi[0]  # every attribute spans 1 in the unit cube: any one is worst
    return lo.copy(), x_prime


def audit_zil_mechanism(
    mechanism: ZILMechanism,
    unit: Literal["individual", "attribute"] = "individual",
    claimed: Guarantee | None = None,
    *,
    n: int = 200_000,
    rng: np.random.Generator | int | None = None,
    **kwargs: Any,
) -> AuditResult:
    """Audit ``mechanism`` against ``claimed`` (default: its own guarantee at ``unit``).

    The noised columns are released by a copy of the mechanism that addresses them by
    position (so mechanisms built with named bounds work too). Pass the claim of another
    mechanism to test a negative control (e.g. a release with less noise than the claim
    assumes). Extra keyword arguments go to :func:`audit`.
    """
    x, x_prime = zil_neighbours(mechanism.bounds, unit)
    positional = ZILMechanism(mechanism.lam, mechanism.zero_prob, mechanism.bounds)
    lam = mechanism.lam
    ranges = mechanism.bounds[:, 1] - mechanism.bounds[:, 0]
    grid = output_grid(lam * ranges)
    if claimed is None:
        claimed = getattr(mechanism.guarantee, unit)

    def sampler(record: np.ndarray):
        def sample(size: int, gen: np.random.Generator) -> np.ndarray:
            with warnings.catch_warnings():  # an audit, not a release: seeds are its point
                warnings.simplefilter("ignore", SeededRandomnessWarning)
                return positional.release(np.tile(record, (size, 1)), rng=gen).x1

        return sample

    def llr(y: np.ndarray) -> np.ndarray:
        # the SL density of the noise in units of each range (the Jacobian cancels)
        out = sl_logpdf((y - x_prime) / ranges, lam) - sl_logpdf((y - x) / ranges, lam)
        out[np.all(np.abs(y - x) <= grid, axis=1)] = -np.inf
        out[np.all(np.abs(y - x_prime) <= grid, axis=1)] = np.inf
        return out

    return audit(sampler(x), sampler(x_prime), claimed, n=n, llr=llr, rng=rng, **kwargs)
