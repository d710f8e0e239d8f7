"""Accuracy of the Gaussian mechanism before any data (docs/accuracy.md, "The Gaussian
mechanism").

:class:`~privest.mechanisms.gaussian.GaussianMechanism` adds to each of its ``dims``
coordinates the discrete Gaussian of its lattice (variance ``sigma2`` grid steps of size
``g``, ``sigma = sqrt(sigma2) g``), after rounding the value to the grid. Its noise does not
depend on the data, so the prediction is exact from (epsilon, delta, sensitivity,
calibration, dims): the law of each coordinate's error is taken as ``N(0, sigma^2)``. The
grid has ``sigma / g >= 2^10``; the discrete Gaussian's variance differs from ``sigma^2`` by
a factor ``exp(-2 pi^2 sigma2)`` (nil), its CDF from the normal's by at most about one
lattice point's mass, ``g / (sigma sqrt(2 pi)) < 4e-4``, and the rounding adds at most
``g / 2 <= sigma / 2048``: none of this is measurable by a simulation of fewer than
millions of releases (the tests draw 21,000).
"""

from __future__ import annotations

import math

from privest.accuracy.base import Accuracy, NormalErrorLaw, check_alpha, solve_public
from privest.errors import PrivacyParameterError, ValidationError
from privest.mechanisms.gaussian import GaussianMechanism

__all__ = ["epsilon_for_gaussian", "predict_gaussian"]

#: epsilon is searched in this range by :func:`epsilon_for_gaussian`
EPSILON_RANGE = (1e-3, 1e2)


def predict_gaussian(
    mechanism: GaussianMechanism | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sensitivity: float | None = None,
    calibration: str = "analytic",
    dims: int = 1,
    alpha: float = 0.05,
) -> Accuracy:
    """The predicted error of each released coordinate of a Gaussian mechanism (module
    docstring): a built ``mechanism``, or its public inputs. Exact; no data read."""
    alpha = check_alpha(alpha)
    if mechanism is None:
        missing = [k for k, v in (("epsilon", epsilon), ("delta", delta)) if v is None]
        missing += ["sensitivity"] if sensitivity is None else []
        if missing:
            raise ValidationError(f"{', '.join(missing)}: required to predict a Gaussian release")
        mechanism = GaussianMechanism(
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            calibration=calibration,
            dims=dims,
        )
    elif not isinstance(mechanism, GaussianMechanism):
        raise ValidationError(f"mechanism: a {type(mechanism).__name__} is not a GaussianMechanism")
    what = "value" if mechanism.dims == 1 else f"each of {mechanism.dims} coordinates"
    return Accuracy(what, NormalErrorLaw(mechanism.sigma), alpha, "gaussian")


def epsilon_for_gaussian(
    half_width: float,
    *,
    delta: float,
    sensitivity: float,
    calibration: str = "analytic",
    dims: int = 1,
    alpha: float = 0.05,
) -> float:
    """The least epsilon (in [1e-3, 100]) whose predicted half-width of each coordinate (at
    level ``1 - alpha``) is at most ``half_width``, at the given ``delta``; the value
    returned meets the target. ``"classic"`` and ``"paper_eq3"`` are not (epsilon,
    delta)-DP at large epsilon: the top of the range is halved until they are."""

    def at(eps: float) -> float:
        try:
            return predict_gaussian(
                epsilon=eps,
                delta=delta,
                sensitivity=sensitivity,
                calibration=calibration,
                dims=dims,
                alpha=alpha,
            ).half_width
        except PrivacyParameterError:
            if calibration == "analytic":
                raise
            return math.inf

    lo, hi = EPSILON_RANGE
    while hi > lo and math.isinf(at(hi)):
        hi /= 2.0
    return solve_public(at, half_width, name="epsilon", lo=lo, hi=hi, increasing=False)
