"""Synthetic data for the paper-002 comparisons (piecewise Laplace vs INV vs smooth sensitivity
vs Laplace; docs/piecewise-laplace.md, "Exact error laws").

Paper 002 has no data of its own (it is theoretical); the reproduction and the benchmarks
compare the mechanisms on five named distributions, clipped to the public bounds
:data:`PLM_BOUNDS`: normal, lognormal, uniform on [-5, 5], a two-component bimodal normal
mixture (modes at -3 and +3, sd 0.5) and a heavy-tailed standard Cauchy.
"""

from __future__ import annotations

import numpy as np

from privest.errors import ValidationError

__all__ = ["PLM_BOUNDS", "PLM_DISTRIBUTIONS", "make_plm_data"]

#: the public data range of the paper-002 comparisons
PLM_BOUNDS = (-10.0, 10.0)
#: the named distributions :func:`make_plm_data` draws from
PLM_DISTRIBUTIONS = ("normal", "lognormal", "uniform", "bimodal", "heavy-tailed")


def make_plm_data(
    dist: str, n: int, rng: np.random.Generator, bounds: tuple[float, float] = PLM_BOUNDS
) -> np.ndarray:
    """n records of a named distribution (:data:`PLM_DISTRIBUTIONS`), clipped to ``bounds``."""
    if dist == "normal":
        x = rng.normal(size=n)
    elif dist == "lognormal":
        x = rng.lognormal(size=n)
    elif dist == "uniform":
        x = rng.uniform(-5, 5, n)
    elif dist == "bimodal":
        x = rng.normal(size=n) * 0.5 + np.where(rng.random(n) < 0.5, -3.0, 3.0)
    elif dist == "heavy-tailed":
        x = rng.standard_cauchy(n)
    else:
        raise ValidationError(f"dist: {dist!r} is unknown; accepted: {list(PLM_DISTRIBUTIONS)}")
    return np.clip(x, *bounds)
