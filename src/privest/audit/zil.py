"""Audit of a ZIL mechanism on its worst-case neighbours (paper 000, Thm 3.1; spec 11.4).

The release path itself (``ZILMechanism.release``) is run on a record x at the low
corner of the bounds and on a neighbour x' that differs in every attribute (the
individual level: the opposite corner, shift ``diam / lam``) or in the attribute of
largest range (the attribute level). The statistic is the exact log-likelihood ratio of
X1 from the SL density, with the zero-inflation atoms at x (``-inf``) and x' (``+inf``).
X2 is post-processing of X1, so auditing X1 audits the whole release.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from privest.accounting.base import Guarantee
from privest.audit.auditor import AuditResult, audit
from privest.noise import sl_logpdf
from privest.release.zil import ZILMechanism, output_grid

__all__ = ["audit_zil_mechanism", "zil_neighbours"]


def zil_neighbours(
    bounds: np.ndarray, level: Literal["individual", "attribute"]
) -> tuple[np.ndarray, np.ndarray]:
    """The worst-case pair (x, x') inside ``bounds`` for the given level."""
    lo, hi = bounds[:, 0], bounds[:, 1]
    if level == "individual":
        return lo.copy(), hi.copy()
    x_prime = lo.copy()
    j = int(np.argmax(hi - lo))
    x_prime[j] = hi[j]
    return lo.copy(), x_prime


def audit_zil_mechanism(
    mechanism: ZILMechanism,
    level: Literal["individual", "attribute"] = "individual",
    claimed: Guarantee | None = None,
    *,
    n: int = 200_000,
    rng: np.random.Generator | int | None = None,
    **kwargs: Any,
) -> AuditResult:
    """Audit ``mechanism`` against ``claimed`` (default: its own guarantee at ``level``).

    Pass the claim of another mechanism to test a negative control (e.g. a release with
    less noise than the claim assumes). Extra keyword arguments go to :func:`audit`.
    """
    x, x_prime = zil_neighbours(mechanism.bounds, level)
    lam = mechanism.lam
    grid = output_grid(lam)
    if claimed is None:
        claimed = getattr(mechanism.guarantee, level)

    def sampler(record: np.ndarray):
        def sample(size: int, gen: np.random.Generator) -> np.ndarray:
            return mechanism.release(np.tile(record, (size, 1)), rng=gen).x1

        return sample

    def llr(y: np.ndarray) -> np.ndarray:
        out = sl_logpdf(y - x_prime, lam) - sl_logpdf(y - x, lam)
        out[np.all(np.abs(y - x) <= grid, axis=1)] = -np.inf
        out[np.all(np.abs(y - x_prime) <= grid, axis=1)] = np.inf
        return out

    return audit(sampler(x), sampler(x_prime), claimed, n=n, llr=llr, rng=rng, **kwargs)
