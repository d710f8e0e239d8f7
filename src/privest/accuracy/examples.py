"""Accuracy of a local release of examples before any data (paper 004, Sec. 3 and App. E.2;
docs/accuracy.md, "Examples for IWP-SGD").

An :class:`~privest.release.examples.ExampleMechanism` maps each record's features into
the public set (a box onto [-1, 1]^p, ``R = sqrt(p)``; or the ball of radius
``x_radius``, ``R = x_radius``) and adds ``N(0, sigma^2)`` to every coordinate, ``sigma``
calibrated to the L2 sensitivity ``2 R``; it keeps each +-1 label with probability
``S = e^eps_y / (1 + e^eps_y)`` and flips it otherwise. None of this reads the data, so:

* one released feature value, and a feature's mean over n records, err by
  ``N(0, sigma^2)`` and ``N(0, sigma^2 / n)`` exactly (in the release's coordinates);
* the label share debiased from the release, ``(1 + mean(y~) / t) / 2`` with
  ``t = 2S - 1 = tanh(eps_y / 2)``, errs with variance ``(1 - t^2) / (4 t^2 n)`` whatever
  the labels are (each flip is independent of them); its law is normal by the central
  limit theorem (stated);
* the regression variant adds ``N(0, sigma_y^2)`` to the target mapped onto [-1, 1]:
  its value and its mean are exact as for the features.

The noise alone: the sampling error of the data comes on top.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from privest.accuracy.base import Accuracy, NormalErrorLaw, check_alpha
from privest.errors import ValidationError
from privest.mechanisms.gaussian import gaussian_sigma
from privest.release.examples import ExampleMechanism, RegressionExampleMechanism

__all__ = ["predict_examples"]


def _radius(mech: Any, n_features: int | None) -> float:
    """R of the public feature set (``n_features`` is needed for one pair broadcast)."""
    if mech.x_radius is not None:
        return float(mech.x_radius)
    b = mech.bounds
    if isinstance(b, Mapping):
        p = len(b)
    else:
        arr = np.asarray(b, dtype=float)
        p = None if arr.shape == (2,) else arr.shape[0]
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
            raise ValidationError(f"n_features: {n_features!r} must be a whole number >= 1")
        if p is not None and p != n_features:
            raise ValidationError(f"n_features: {n_features} but the bounds give {p} pairs")
        p = n_features
    if p is None:
        raise ValidationError(
            "n_features: one (lo, hi) pair for every column leaves the number of features "
            "open; give n_features="
        )
    return math.sqrt(p)


def predict_examples(
    mechanism: ExampleMechanism | RegressionExampleMechanism,
    *,
    n: int,
    n_features: int | None = None,
    alpha: float = 0.05,
) -> list[Accuracy]:
    """The predicted noise of a local release of ``n`` examples by ``mechanism`` (module
    docstring): one feature value, a feature's mean, and the label share (classification)
    or the target's value and mean (regression), in the release's coordinates."""
    alpha = check_alpha(alpha)
    if not isinstance(mechanism, (ExampleMechanism, RegressionExampleMechanism)):
        raise ValidationError(
            f"mechanism: a {type(mechanism).__name__} is not an example mechanism (paper 004)"
        )
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValidationError(f"n: {n!r} must be a whole number >= 1")
    n = int(n)
    regression = isinstance(mechanism, RegressionExampleMechanism)
    delta_x = mechanism.delta_x if regression else mechanism.delta
    r = _radius(mechanism, n_features)
    name = "examples"
    out = []
    if math.isfinite(mechanism.epsilon_x):
        sigma = gaussian_sigma(mechanism.epsilon_x, delta_x, 2.0 * r, mechanism.calibration)
        out += [
            Accuracy("value of a feature", NormalErrorLaw(sigma), alpha, name, n),
            Accuracy("mean of a feature", NormalErrorLaw(sigma / math.sqrt(n)), alpha, name, n),
        ]
    if not math.isfinite(mechanism.epsilon_y):
        return out
    if regression:
        sigma_y = gaussian_sigma(mechanism.epsilon_y, mechanism.delta_y, 2.0, mechanism.calibration)
        out += [
            Accuracy("value of the target", NormalErrorLaw(sigma_y), alpha, name, n),
            Accuracy("mean of the target", NormalErrorLaw(sigma_y / math.sqrt(n)), alpha, name, n),
        ]
        return out
    t = math.tanh(mechanism.epsilon_y / 2.0)
    se = math.sqrt((1.0 - t * t) / n) / (2.0 * t)
    out.append(
        Accuracy(
            "label share",
            NormalErrorLaw(se),
            alpha,
            name,
            n,
            "normal approximation (central limit) of the randomized response's flips",
            (0.0, 1.0),
        )
    )
    return out
