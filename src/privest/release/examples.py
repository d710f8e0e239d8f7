"""Locally private release of labelled examples (paper 004, Sec. 3 and App. E.2).

Each user releases (x~, y~) once: x~ = x + N(0, sigma^2 I_p) after the features are mapped
into a public set of radius R (the L2 ball ``x_radius``, or the box ``bounds`` mapped to
[-1, 1]^p so that every column is noised in units of its own range and R = sqrt(p)), with
sigma calibrated for L2 sensitivity 2R; the label goes through randomized response, kept
with probability S(eps_y) = 1/(1 + e^-eps_y). The release is (eps_x + eps_y, delta)-LDP and
every model trained on it afterwards is post-processing. The regression variant (App. E.2)
noises a continuous target mapped from ``y_bounds`` to [-1, 1] with a second Gaussian
mechanism; it is (eps_x + eps_y, delta_x + delta_y)-LDP.

:class:`ExampleMechanism` and :class:`RegressionExampleMechanism` are built from these
public parameters only and expose ``.guarantee`` before any data;
``.release(X, y, rng=...)`` returns :class:`PrivateExamples` with the same guarantee.
:func:`release_examples` and :func:`release_regression_examples` are one-call wrappers.
Records outside the public set raise :class:`~privest.errors.BoundsError` unless
``clip=True`` (then they are projected onto it).

Every Gaussian part is checked against the exact privacy profile (Balle and Wang 2018,
Thm 8) before any noise is drawn: the classic calibration is proven for eps <= 1 only
(docs/iwp-sgd.md), so a setting where it fails (e.g. eps_x = 10 at delta = 1e-5) raises
:class:`~privest.errors.PrivacyParameterError` instead of advertising a false guarantee.

``PrivateExamples.save(path)`` writes a folder ``manifest.json`` + ``data.npz`` with the
sha256 of the data file; :meth:`PrivateExamples.load` verifies it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from privest.accounting.budget import charge
from privest.accounting.gaussian import LocalDP, gaussian_sigma, require_gaussian_dp
from privest.contract import Mechanism
from privest.errors import BoundsError, PrivacyParameterError, ValidationError
from privest.projection import project_rows
from privest.release.columns import local_domain, warn_not_secure
from privest.rng import resolve_rng, rng_kind
from privest.validation import (
    as_float_matrix,
    as_float_vector,
    box_bounds,
    check_bounds,
    check_delta,
    check_epsilon,
    check_positive,
)

__all__ = [
    "ExampleMechanism",
    "PrivateExamples",
    "RegressionExampleMechanism",
    "check_gaussian_part",
    "keep_probability",
    "labels_pm1",
    "project_features",
    "randomized_response",
    "release_examples",
    "release_regression_examples",
]


def keep_probability(epsilon_y: float) -> float:
    """S(eps) = 1 / (1 + e^-eps): the probability that randomized response keeps the label."""
    return 1.0 if math.isinf(epsilon_y) else float(special.expit(epsilon_y))


def randomized_response(
    y: np.ndarray, epsilon_y: float, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Flip each +-1 label with probability 1 - S(eps_y) (eps_y-LDP; ``inf``: no flip)."""
    y = np.asarray(y, dtype=float)
    if math.isinf(epsilon_y):
        return y.copy()
    flip = resolve_rng(rng).random(y.shape) >= keep_probability(epsilon_y)
    return np.where(flip, -y, y)


def _check_eps(value: float, name: str) -> float:
    if isinstance(value, (int, float)) and math.isinf(value) and value > 0:
        return math.inf
    return check_epsilon(value, name)


def project_features(
    X: Any, x_radius: float | None = None, bounds: Any = None, clip: bool = False
) -> tuple[np.ndarray, float, np.ndarray | None, int]:
    """Map X into the public set; return (X mapped, R, bounds or None, number clipped).

    ``x_radius``: the L2 ball of that radius (identity map inside it). ``bounds``: a public
    box (one pair for every column, a list of pairs, or a mapping column -> pair for a
    DataFrame), mapped affinely to [-1, 1]^p, so every column is noised in units of its own
    range (R = sqrt(p)). Exactly one must be given. Outside records raise
    :class:`BoundsError` unless ``clip`` (then they are projected onto the set).
    """
    if (x_radius is None) == (bounds is None):
        raise ValidationError("x_radius/bounds: give exactly one public feature bound")
    names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
    X = as_float_matrix(X, "X")
    p = X.shape[1]
    if x_radius is not None:
        R = check_positive(x_radius, "x_radius")
        scale, outside = project_rows(X, R * (1 + 1e-12))
        n_out = int(outside.sum())
        if n_out and not clip:
            raise BoundsError(
                f"X: some records have L2 norm above x_radius={R:g}; pass clip=True to "
                "project them onto the ball"
            )
        return X * scale[:, None], R, None, n_out
    b = box_bounds(bounds, p, names)
    lo, hi = b[:, 0], b[:, 1]
    outside = np.any((X < lo) | (X > hi), axis=1)
    n_out = int(outside.sum())
    if n_out and not clip:
        raise BoundsError(
            "X: some records lie outside the public bounds; pass clip=True to clip them to the box"
        )
    Z = (np.clip(X, lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
    return Z, math.sqrt(p), b, n_out


def labels_pm1(y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Binary labels as -1/+1 and their two classes (the larger one is +1)."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValidationError(f"y: has shape {arr.shape}; expected a 1-D array of labels")
    if arr.dtype.kind == "c":
        raise ValidationError("y: holds complex numbers; expected two class labels")
    classes = np.unique(arr)
    if classes.size == 1 and np.isin(classes, (-1, 1)).all():
        classes = np.array([-1, 1])  # a single record's +-1 label (e.g. a neighbour audit)
    if classes.size != 2:
        raise ValidationError(
            "y: binary labels needed, exactly two distinct values (the labels found are "
            "not shown: they are data)"
        )
    return np.where(arr == classes[1], 1.0, -1.0), classes


@dataclass
class PrivateExamples:
    """A locally private release of examples: everything an IWP learner needs, no raw data.

    ``X``: noisy features (in the mapped space, see :meth:`transform`); ``y``: noisy labels in
    {-1, +1} (classification) or the noisy target in [-1, 1]-units (regression).
    ``x_radius`` is the radius R of the public feature set in the mapped space (sqrt(p) for
    a box); ``bounds`` the public box (``None`` for a ball); ``y_bounds`` the public range of
    a regression target.
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    sigma2: float
    epsilon_x: float
    epsilon_y: float
    delta: float
    x_radius: float
    task: str = "classification"
    calibration: str = "classic"
    bounds: np.ndarray | None = field(default=None, repr=False)
    randomness: str = "seeded"
    classes: np.ndarray | None = field(default=None, repr=False)
    sigma2_y: float = 0.0
    delta_y: float = 0.0
    y_bounds: tuple[float, float] | None = None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def p(self) -> int:
        return int(self.X.shape[1])

    @property
    def sigma(self) -> float:
        return math.sqrt(self.sigma2)

    @property
    def keep_probability(self) -> float:
        """S(eps_y); 1 for regression."""
        return keep_probability(self.epsilon_y) if self.task == "classification" else 1.0

    @property
    def flip_probability(self) -> float:
        """1 - S(eps_y), the randomized-response flip probability."""
        return 1.0 - self.keep_probability

    @property
    def guarantee(self) -> LocalDP:
        """(eps_x + eps_y, delta [+ delta_y])-LDP by basic composition (paper 004, Sec. 3)."""
        return LocalDP(self.epsilon_x + self.epsilon_y, self.delta + self.delta_y)

    def transform(self, X: Any) -> np.ndarray:
        """Map clean features (e.g. a test set) into the release's coordinates (no noise)."""
        X = as_float_matrix(X, "X")
        if self.bounds is None:
            return X
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        return (X - (lo + hi) / 2) / ((hi - lo) / 2)

    def transform_target(self, y: Any) -> np.ndarray:
        """Map a clean target to the regression release's [-1, 1] units (labels: to +-1)."""
        if self.task == "classification":
            arr = np.asarray(y)
            return np.where(arr == self.classes[1], 1.0, -1.0)
        lo, hi = self.y_bounds
        return (as_float_vector(y, "y") - (lo + hi) / 2) / ((hi - lo) / 2)

    # ------------------------------------------------------------------ storage
    def save(self, path: str | Path) -> Path:
        """Write a new folder ``path`` (manifest.json + data.npz, sha256-checked, fsynced)."""
        from privest.release.examples_io import save_examples

        return save_examples(self, Path(path))

    @classmethod
    def load(cls, path: str | Path, verify: bool = True) -> PrivateExamples:
        """Read a folder written by :meth:`save`, checking format and checksum."""
        from privest.release.examples_io import load_examples

        return load_examples(cls, Path(path), verify)


def check_gaussian_part(
    epsilon: float,
    delta: float,
    sigma: float,
    sensitivity: float,
    calibration: str = "classic",
    name: str = "epsilon_x",
) -> float:
    """Exact delta(eps) of N(0, sigma^2) at L2 ``sensitivity``; raise if it exceeds ``delta``.

    The release advertises (eps, delta) for each Gaussian part (paper 004, Sec. 3 and
    App. E.2), but sigma = Delta sqrt(2 log(1.25/delta)) / eps is proven for eps <= 1 only.
    The exact profile (Balle and Wang 2018, Thm 8) decides: at delta = 1e-5 the classic
    sigma holds up to eps ~ 8.4, so the paper's settings (eps_x <= 5) pass.
    """
    if calibration == "classic":
        what = (
            f"{name}: {epsilon:g} is too large for calibration='classic' at delta={delta:g}: "
            f"the classic sigma={sigma:.4g} (sensitivity {sensitivity:.4g}; proven for epsilon "
            "<= 1 only)"
        )
        remedy = f"use calibration='analytic', valid for every epsilon, or a smaller {name}"
    else:
        what = (
            f"{name}: sigma={sigma:.4g} at sensitivity {sensitivity:.4g} is not "
            f"({epsilon:g}, {delta:g})-DP: it"
        )
        remedy = "the calibration is wrong"
    return require_gaussian_dp(epsilon, delta, sensitivity, sigma, what, remedy)


_CALIBRATIONS = ("classic", "analytic")


def _check_calibration(calibration: str) -> str:
    if calibration not in _CALIBRATIONS:
        raise ValidationError(
            f"calibration: {calibration!r} is unknown; accepted: 'classic' (paper 004, "
            "default), 'analytic' (Balle and Wang 2018)"
        )
    return calibration


def _gaussian_part_sigma(
    epsilon: float, delta: float, sensitivity: float, calibration: str, name: str
) -> float:
    """Calibrated sigma of one Gaussian part, checked against its exact profile."""
    if math.isinf(epsilon):
        return 0.0
    sigma = gaussian_sigma(epsilon, delta, sensitivity, calibration)
    check_gaussian_part(epsilon, delta, sigma, sensitivity, calibration, name)
    return sigma


def _positive_delta(delta: float, name: str, epsilon: float) -> float:
    delta = check_delta(delta, name)
    if math.isfinite(epsilon) and delta == 0:
        raise PrivacyParameterError(f"{name}: 0 is out of range; a Gaussian part needs > 0")
    return delta


class ExampleMechanism(Mechanism):
    """Gaussian features + randomized-response labels (paper 004, Sec. 3), public parameters.

    Parameters
    ----------
    epsilon_x, epsilon_y : budgets of the feature (Gaussian) and label (randomized
        response) parts; ``inf`` leaves that part un-noised (tests and oracles only).
    delta : DP delta of the Gaussian part.
    bounds, x_radius : the public feature set, exactly one: a box (mapped to [-1, 1]^p;
        one pair for every column, a list of pairs, or a mapping for a DataFrame) or the
        L2 ball of radius ``x_radius``.
    clip : project records outside the public set onto it instead of raising.
    calibration : ``"classic"`` (the paper's) or ``"analytic"`` (Balle and Wang 2018).
    domain : a :class:`~privest.Domain` giving the features' ``bounds`` instead of, or
        agreeing with, ``bounds=`` (docs/domain.md); a domain without bounds goes with
        ``x_radius``. Swap neighbours only (each record's values are protected, n public):
        add/remove or a person unit is refused. ``y_bounds`` stays a keyword.
    """

    task = "classification"
    _who = "the example release (paper 004)"

    def __init__(
        self,
        *,
        epsilon_x: float,
        epsilon_y: float,
        delta: float,
        bounds: Any = None,
        x_radius: float | None = None,
        clip: bool = False,
        calibration: str = "classic",
        domain: Any = None,
    ) -> None:
        self.epsilon_x = _check_eps(epsilon_x, "epsilon_x")
        self.epsilon_y = _check_eps(epsilon_y, "epsilon_y")
        self.delta = _positive_delta(delta, "delta", self.epsilon_x)
        self.domain, bounds, _ = local_domain(domain, self._who, "resolution", bounds=bounds)
        if (x_radius is None) == (bounds is None):
            raise ValidationError("x_radius/bounds: give exactly one public feature bound")
        self.bounds, self.x_radius, self.clip = bounds, x_radius, bool(clip)
        self.calibration = _check_calibration(calibration)

    @property
    def guarantee(self) -> LocalDP:
        """(eps_x + eps_y, delta)-LDP by basic composition of the two parts."""
        return LocalDP(self.epsilon_x + self.epsilon_y, self.delta)

    def release(
        self, X: Any, y: Any, rng: np.random.Generator | int | None = None
    ) -> PrivateExamples:
        """Release every record once: (x + N(0, sigma^2 I), RR(y)).

        ``rng=None`` uses the secure generator; integer seeds are for experiments.
        """
        Z, R, b, _ = project_features(X, self.x_radius, self.bounds, self.clip)
        ypm, classes = labels_pm1(y)
        if ypm.shape[0] != Z.shape[0]:
            raise ValidationError(f"y: has {ypm.shape[0]} labels for {Z.shape[0]} records")
        sigma = _gaussian_part_sigma(
            self.epsilon_x, self.delta, 2.0 * R, self.calibration, "epsilon_x"
        )
        gen = resolve_rng(rng)
        warn_not_secure(rng_kind(gen))
        return _release_with_sigma(
            Z,
            ypm,
            sigma,
            self.epsilon_y,
            gen,
            R,
            b,
            classes,
            self.epsilon_x,
            self.delta,
            self.calibration,
        )


def _release_with_sigma(
    Z: np.ndarray,
    ypm: np.ndarray,
    sigma: float,
    eps_y: float,
    gen: np.random.Generator,
    R: float,
    b: np.ndarray | None,
    classes: np.ndarray | None,
    eps_x: float,
    delta: float,
    calibration: str,
) -> PrivateExamples:
    """The noise step at a given sigma (used by the privacy tests' negative controls)."""
    Xn = Z + sigma * gen.standard_normal(Z.shape) if sigma > 0 else Z.copy()
    yn = randomized_response(ypm, eps_y, gen)
    return PrivateExamples(
        X=Xn,
        y=yn,
        sigma2=sigma**2,
        epsilon_x=eps_x,
        epsilon_y=eps_y,
        delta=delta,
        x_radius=R,
        calibration=calibration,
        bounds=b,
        randomness=rng_kind(gen),
        classes=classes,
    )


class RegressionExampleMechanism(Mechanism):
    """The regression variant (paper 004, App. E.2): Gaussian noise on a continuous target.

    The target is mapped from the public ``y_bounds`` to [-1, 1] (so ||Y|| = 1, sensitivity
    2) and noised with sigma_y^2 = 8 log(1.25/delta_y) / eps_y^2 (classic). Guarantee:
    (eps_x + eps_y, delta_x + delta_y)-LDP. Both Gaussian parts are checked against the
    exact profile. Other parameters (``domain`` too) as in :class:`ExampleMechanism`.
    """

    task = "regression"
    _who = "the regression example release (paper 004)"

    def __init__(
        self,
        *,
        epsilon_x: float,
        epsilon_y: float,
        delta_x: float,
        delta_y: float,
        y_bounds: tuple[float, float],
        bounds: Any = None,
        x_radius: float | None = None,
        clip: bool = False,
        calibration: str = "classic",
        domain: Any = None,
    ) -> None:
        self.epsilon_x = _check_eps(epsilon_x, "epsilon_x")
        self.epsilon_y = check_epsilon(epsilon_y, "epsilon_y")
        self.delta_x = _positive_delta(delta_x, "delta_x", self.epsilon_x)
        self.delta_y = _positive_delta(delta_y, "delta_y", self.epsilon_y)
        self.y_bounds = check_bounds(y_bounds, 1, "y_bounds")[0]
        self.domain, bounds, _ = local_domain(domain, self._who, "resolution", bounds=bounds)
        if (x_radius is None) == (bounds is None):
            raise ValidationError("x_radius/bounds: give exactly one public feature bound")
        self.bounds, self.x_radius, self.clip = bounds, x_radius, bool(clip)
        self.calibration = _check_calibration(calibration)

    @property
    def guarantee(self) -> LocalDP:
        """(eps_x + eps_y, delta_x + delta_y)-LDP by basic composition."""
        return LocalDP(self.epsilon_x + self.epsilon_y, self.delta_x + self.delta_y)

    def release(
        self, X: Any, y: Any, rng: np.random.Generator | int | None = None
    ) -> PrivateExamples:
        """Release every record once: (x + N(0, sigma^2 I), t(y) + N(0, sigma_y^2))."""
        lo, hi = self.y_bounds
        yv = as_float_vector(y, "y")
        out_y = (yv < lo) | (yv > hi)
        if out_y.any() and not self.clip:
            raise BoundsError(
                f"y: some targets lie outside y_bounds=({lo:g}, {hi:g}); pass clip=True to "
                "clip them"
            )
        Z, R, b, _ = project_features(X, self.x_radius, self.bounds, self.clip)
        if yv.shape[0] != Z.shape[0]:
            raise ValidationError(f"y: has {yv.shape[0]} targets for {Z.shape[0]} records")
        t = (np.clip(yv, lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
        sigma = _gaussian_part_sigma(
            self.epsilon_x, self.delta_x, 2.0 * R, self.calibration, "epsilon_x"
        )
        sigma_y = _gaussian_part_sigma(
            self.epsilon_y, self.delta_y, 2.0, self.calibration, "epsilon_y"
        )
        gen = resolve_rng(rng)
        warn_not_secure(rng_kind(gen))
        Xn = Z + sigma * gen.standard_normal(Z.shape) if sigma > 0 else Z.copy()
        yn = t + sigma_y * gen.standard_normal(t.shape)
        return PrivateExamples(
            X=Xn,
            y=yn,
            sigma2=sigma**2,
            epsilon_x=self.epsilon_x,
            epsilon_y=self.epsilon_y,
            delta=self.delta_x,
            x_radius=R,
            task="regression",
            calibration=self.calibration,
            bounds=b,
            randomness=rng_kind(gen),
            sigma2_y=sigma_y**2,
            delta_y=self.delta_y,
            y_bounds=(float(lo), float(hi)),
        )


def release_examples(
    X: Any,
    y: Any,
    *,
    epsilon_x: float,
    epsilon_y: float,
    delta: float,
    bounds: Any = None,
    x_radius: float | None = None,
    clip: bool = False,
    calibration: str = "classic",
    rng: np.random.Generator | int | None = None,
    budget: Any = None,
    domain: Any = None,
) -> PrivateExamples:
    """Release (x + N(0, sigma^2 I), RR(y)) for each record: :class:`ExampleMechanism` in one call.

    sigma = 2R sqrt(2 log(1.25/delta)) / eps_x (``calibration="classic"``, the paper's) or the
    analytic calibration of Balle and Wang (2018); a classic sigma that is not (eps_x,
    delta)-DP by the exact profile raises :class:`PrivacyParameterError`. ``budget`` (a
    :class:`~privest.Budget`) is charged the guarantee before the data are read; ``domain``
    as in :class:`ExampleMechanism`.
    """
    mech = ExampleMechanism(
        epsilon_x=epsilon_x,
        epsilon_y=epsilon_y,
        delta=delta,
        bounds=bounds,
        x_radius=x_radius,
        clip=clip,
        calibration=calibration,
        domain=domain,
    )
    if budget is not None:  # (an infinite epsilon, for tests and oracles, has no guarantee)
        charge(budget, mech.guarantee, label="examples", mechanism="examples")
    return mech.release(X, y, rng=rng)


def release_regression_examples(
    X: Any,
    y: Any,
    *,
    epsilon_x: float,
    epsilon_y: float,
    delta_x: float,
    delta_y: float,
    y_bounds: tuple[float, float],
    bounds: Any = None,
    x_radius: float | None = None,
    clip: bool = False,
    calibration: str = "classic",
    rng: np.random.Generator | int | None = None,
    budget: Any = None,
    domain: Any = None,
) -> PrivateExamples:
    """:class:`RegressionExampleMechanism` in one call (paper 004, App. E.2); ``budget`` is
    charged before the data are read."""
    mech = RegressionExampleMechanism(
        epsilon_x=epsilon_x,
        epsilon_y=epsilon_y,
        delta_x=delta_x,
        delta_y=delta_y,
        y_bounds=y_bounds,
        bounds=bounds,
        x_radius=x_radius,
        clip=clip,
        calibration=calibration,
        domain=domain,
    )
    if budget is not None:
        charge(budget, mech.guarantee, label="regression examples", mechanism="examples")
    return mech.release(X, y, rng=rng)
