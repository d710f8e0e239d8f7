"""Synthetic designs of paper 000's simulations (Section 7.2-7.3: Tables 2 and 3)."""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["truncated_normal"]


def truncated_normal(shape: tuple[int, ...], bound: float, rng: np.random.Generator) -> np.ndarray:
    """Independent N(0, 1) draws truncated to ``[-bound, bound]`` (inverse-cdf method)."""
    lo = special.ndtr(-bound)
    u = rng.uniform(lo, 1.0 - lo, size=shape)
    return special.ndtri(u)
