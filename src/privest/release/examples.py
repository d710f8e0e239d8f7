"""Locally private release of labelled examples (paper 004, Sec. 3; spec iwp_sgd.md Sec. 1).

Each user releases (x~, y~) once: x~ = x + N(0, sigma^2 I_p) after the features are mapped
into a public set of radius R (L2 ball, or a box mapped to [-1, 1]^p so R = sqrt(p)), with
sigma calibrated for L2 sensitivity 2R; the label goes through randomized response,
kept with probability S(eps_y) = 1/(1 + e^-eps_y). The release is
(eps_x + eps_y, delta)-LDP and every model trained on it afterwards is post-processing.
The regression variant (App. E.2) noises a continuous target mapped to [-1, 1] with a
second Gaussian mechanism; it is (eps_x + eps_y, delta_x + delta_y)-LDP.

Public parameters (epsilon, delta, radius or bounds) are inputs only. Records outside the
public set raise :class:`~privest.errors.BoundsError` unless ``project=True``; then they
are projected and the count is reported (``n_projected``).

Every Gaussian part is checked against the exact privacy profile (Balle and Wang 2018,
Thm 8) before any noise is drawn: the classic calibration is proven for eps <= 1 only
(spec A3), so a setting where it fails (e.g. eps_x = 10 at delta = 1e-5) raises
:class:`~privest.errors.PrivacyParameterError` instead of advertising a false guarantee.

``PrivateExamples.save(path)`` writes a folder ``manifest.json`` + ``data.npz`` with the
sha256 of the data file; :meth:`PrivateExamples.load` verifies it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

from privest.accounting.gaussian import LocalDP, calibrate_gaussian_sigma, require_gaussian_dp
from privest.errors import BoundsError, StoreError, ValidationError
from privest.rng import resolve_rng, rng_kind
from privest.validation import (
    as_float_matrix,
    as_float_vector,
    check_bounds,
    check_delta,
    check_epsilon,
    check_positive,
)

__all__ = [
    "PrivateExamples",
    "check_gaussian_part",
    "keep_probability",
    "project_features",
    "randomized_response",
    "release_examples",
    "release_regression_examples",
]

FORMAT = "privest-iwp-examples"
VERSION = 1


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
    X: np.ndarray, radius: float | None = None, bounds: Any = None, project: bool = False
) -> tuple[np.ndarray, float, np.ndarray | None, int]:
    """Map X into the public set; return (X mapped, R, bounds or None, number projected).

    ``radius``: the L2 ball of that radius (identity map). ``bounds``: a public box, mapped
    affinely to [-1, 1]^p (R = sqrt(p)). Exactly one must be given.
    """
    if (radius is None) == (bounds is None):
        raise ValidationError("radius/bounds: give exactly one public feature bound")
    X = as_float_matrix(X, "X")
    p = X.shape[1]
    if radius is not None:
        R = check_positive(radius, "radius")
        norms = np.linalg.norm(X, axis=1)
        outside = norms > R * (1 + 1e-12)
        n_out = int(outside.sum())
        if n_out and not project:
            raise BoundsError(
                f"X: {n_out} records have L2 norm above radius={R} (max {norms.max():.4g}); "
                "pass project=True to project them onto the ball (the count is reported)"
            )
        scale = np.minimum(1.0, R / np.maximum(norms, 1e-300))
        return X * scale[:, None], R, None, n_out
    b = check_bounds(bounds, p, "bounds")
    lo, hi = b[:, 0], b[:, 1]
    outside = np.any((X < lo) | (X > hi), axis=1)
    n_out = int(outside.sum())
    if n_out and not project:
        raise BoundsError(
            f"X: {n_out} records lie outside the public bounds; pass project=True to clip "
            "them to the box (the count is reported)"
        )
    Z = (np.clip(X, lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
    return Z, math.sqrt(p), b, n_out


def _labels_pm1(y: Any) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValidationError(f"y: has shape {arr.shape}; expected a 1-D array of labels")
    classes = np.unique(arr)
    if classes.size == 1 and np.isin(classes, (-1, 1)).all():
        classes = np.array([-1, 1])  # a single record's +-1 label (e.g. a neighbour audit)
    if classes.size != 2:
        raise ValidationError(
            f"y: has {classes.size} distinct labels {classes[:5].tolist()}; binary labels needed"
        )
    return np.where(arr == classes[1], 1.0, -1.0), classes


@dataclass
class PrivateExamples:
    """A locally private release of examples: everything an IWP learner needs, no raw data.

    ``X``: noisy features (in the mapped space, see :meth:`transform`); ``y``: noisy labels in
    {-1, +1} (classification) or the noisy target in [-1, 1]-units (regression).
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    sigma2: float
    epsilon_x: float
    epsilon_y: float
    delta: float
    radius: float
    task: str = "classification"
    calibration: str = "classic"
    bounds: np.ndarray | None = field(default=None, repr=False)
    n_projected: int = 0
    rng_kind: str = "seeded"
    classes: np.ndarray | None = field(default=None, repr=False)
    sigma2_y: float = 0.0
    delta_y: float = 0.0
    target_bounds: tuple[float, float] | None = None

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
        """(eps_x + eps_y, delta [+ delta_y])-LDP by composition (spec 1.3-1.4)."""
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
        lo, hi = self.target_bounds
        return (as_float_vector(y, "y") - (lo + hi) / 2) / ((hi - lo) / 2)

    # ------------------------------------------------------------------ storage
    def _meta(self) -> dict[str, Any]:
        return {
            "sigma2": self.sigma2,
            "epsilon_x": self.epsilon_x,
            "epsilon_y": self.epsilon_y if math.isfinite(self.epsilon_y) else "inf",
            "delta": self.delta,
            "radius": self.radius,
            "task": self.task,
            "calibration": self.calibration,
            "bounds": None if self.bounds is None else self.bounds.tolist(),
            "n_projected": self.n_projected,
            "rng_kind": self.rng_kind,
            "classes": None if self.classes is None else self.classes.tolist(),
            "sigma2_y": self.sigma2_y,
            "delta_y": self.delta_y,
            "target_bounds": None if self.target_bounds is None else list(self.target_bounds),
        }

    def save(self, path: str | Path) -> Path:
        """Write a new folder ``path`` (manifest.json + data.npz, sha256-checked)."""
        path = Path(path)
        if path.exists():
            raise StoreError(f"path: {str(path)!r} already exists; choose a new folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}-"))
        try:
            np.savez(tmp / "data.npz", X=self.X, y=self.y)
            digest = hashlib.sha256((tmp / "data.npz").read_bytes()).hexdigest()
            manifest = {
                "format": FORMAT,
                "version": VERSION,
                "n": self.n,
                "p": self.p,
                "mechanism": self._meta(),
                "guarantee": self.guarantee.to_dict(),
                "sha256": digest,
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
            os.rename(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return path

    @classmethod
    def load(cls, path: str | Path, verify: bool = True) -> PrivateExamples:
        """Read a folder written by :meth:`save`, checking format and checksum."""
        path = Path(path)
        try:
            manifest = json.loads((path / "manifest.json").read_text())
        except FileNotFoundError:
            raise StoreError(f"path: no IWP release at {str(path)!r} (no manifest.json)") from None
        if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            raise StoreError(f"path: {str(path)!r} is not a {FORMAT} v{VERSION} release")
        data = path / "data.npz"
        if verify and hashlib.sha256(data.read_bytes()).hexdigest() != manifest["sha256"]:
            raise StoreError(f"path: {data} does not match its checksum; it was modified")
        m = manifest["mechanism"]
        with np.load(data) as arrays:
            X, y = arrays["X"], arrays["y"]
        return cls(
            X=X,
            y=y,
            sigma2=float(m["sigma2"]),
            epsilon_x=float(m["epsilon_x"]),
            epsilon_y=math.inf if m["epsilon_y"] == "inf" else float(m["epsilon_y"]),
            delta=float(m["delta"]),
            radius=float(m["radius"]),
            task=m["task"],
            calibration=m["calibration"],
            bounds=None if m["bounds"] is None else np.asarray(m["bounds"], dtype=float),
            n_projected=int(m["n_projected"]),
            rng_kind=m["rng_kind"],
            classes=None if m["classes"] is None else np.asarray(m["classes"]),
            sigma2_y=float(m["sigma2_y"]),
            delta_y=float(m["delta_y"]),
            target_bounds=None if m["target_bounds"] is None else tuple(m["target_bounds"]),
        )


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
    App. E.2), but sigma = Delta sqrt(2 log(1.25/delta)) / eps is proven for eps <= 1 only
    (spec A3). The exact profile (Balle and Wang 2018, Thm 8) decides: at delta = 1e-5 the
    classic sigma holds up to eps ~ 8.4, so the paper's settings (eps_x <= 5) pass.
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


def _gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, calibration: str, name: str
) -> float:
    """Calibrated sigma of one Gaussian part, checked against its exact profile."""
    if math.isinf(epsilon):
        return 0.0
    sigma = calibrate_gaussian_sigma(epsilon, delta, sensitivity, calibration)
    check_gaussian_part(epsilon, delta, sigma, sensitivity, calibration, name)
    return sigma


def release_examples(
    X: Any,
    y: Any,
    *,
    epsilon_x: float,
    epsilon_y: float,
    delta: float,
    radius: float | None = None,
    bounds: Any = None,
    project: bool = False,
    calibration: str = "classic",
    rng: np.random.Generator | int | None = None,
) -> PrivateExamples:
    """Release (x + N(0, sigma^2 I), RR(y)) for each record (paper 004, Sec. 3).

    sigma = 2R sqrt(2 log(1.25/delta)) / eps_x (``calibration="classic"``, the paper's) or the
    analytic calibration of Balle and Wang (2018). If the classic sigma is not (eps_x, delta)-DP
    by the exact profile (large eps_x), :class:`PrivacyParameterError` is raised: use
    ``calibration="analytic"``. ``epsilon_x=inf`` / ``epsilon_y=inf`` leave
    that part un-noised (then the guarantee is not finite: for tests and oracles only).
    ``rng=None`` uses the secure generator; integer seeds are for experiments.
    """
    eps_x = _check_eps(epsilon_x, "epsilon_x")
    eps_y = _check_eps(epsilon_y, "epsilon_y")
    delta = check_delta(delta)
    if math.isfinite(eps_x) and delta == 0:
        raise ValidationError("delta: the Gaussian feature mechanism needs delta > 0")
    Z, R, b, n_out = project_features(X, radius, bounds, project)
    ypm, classes = _labels_pm1(y)
    if ypm.shape[0] != Z.shape[0]:
        raise ValidationError(f"y: has {ypm.shape[0]} labels for {Z.shape[0]} records")
    sigma = _gaussian_sigma(eps_x, delta, 2.0 * R, calibration, "epsilon_x")
    gen = resolve_rng(rng)
    return _release_with_sigma(
        Z, ypm, sigma, eps_y, gen, R, b, n_out, classes, eps_x, delta, calibration
    )


def _release_with_sigma(
    Z: np.ndarray,
    ypm: np.ndarray,
    sigma: float,
    eps_y: float,
    gen: np.random.Generator,
    R: float,
    b: np.ndarray | None,
    n_out: int,
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
        radius=R,
        calibration=calibration,
        bounds=b,
        n_projected=n_out,
        rng_kind=rng_kind(gen),
        classes=classes,
    )


def release_regression_examples(
    X: Any,
    y: Any,
    *,
    epsilon_x: float,
    epsilon_y: float,
    delta_x: float,
    delta_y: float,
    target_bounds: tuple[float, float],
    radius: float | None = None,
    bounds: Any = None,
    project: bool = False,
    calibration: str = "classic",
    rng: np.random.Generator | int | None = None,
) -> PrivateExamples:
    """Regression variant (paper 004, App. E.2; spec 1.4): Gaussian noise on a continuous target.

    The target is mapped from the public ``target_bounds`` to [-1, 1] (so ||Y|| = 1,
    sensitivity 2) and noised with sigma_y^2 = 8 log(1.25/delta_y) / eps_y^2 (classic).
    Guarantee: (eps_x + eps_y, delta_x + delta_y)-LDP. Both Gaussian parts are checked
    against the exact profile, as in :func:`release_examples`.
    """
    eps_x = _check_eps(epsilon_x, "epsilon_x")
    eps_y = check_epsilon(epsilon_y, "epsilon_y")
    delta_x, delta_y = check_delta(delta_x, "delta_x"), check_delta(delta_y, "delta_y")
    tb = check_bounds(target_bounds, 1, "target_bounds")[0]
    yv = as_float_vector(y, "y")
    out_y = (yv < tb[0]) | (yv > tb[1])
    if out_y.any() and not project:
        raise BoundsError(
            f"y: {int(out_y.sum())} targets lie outside target_bounds={tuple(tb)}; pass "
            "project=True to clip them (the count is reported)"
        )
    Z, R, b, n_out = project_features(X, radius, bounds, project)
    if yv.shape[0] != Z.shape[0]:
        raise ValidationError(f"y: has {yv.shape[0]} targets for {Z.shape[0]} records")
    t = (np.clip(yv, tb[0], tb[1]) - tb.mean()) / ((tb[1] - tb[0]) / 2)
    sigma = _gaussian_sigma(eps_x, delta_x, 2.0 * R, calibration, "epsilon_x")
    sigma_y = _gaussian_sigma(eps_y, delta_y, 2.0, calibration, "epsilon_y")
    gen = resolve_rng(rng)
    Xn = Z + sigma * gen.standard_normal(Z.shape) if sigma > 0 else Z.copy()
    yn = t + sigma_y * gen.standard_normal(t.shape)
    return PrivateExamples(
        X=Xn,
        y=yn,
        sigma2=sigma**2,
        epsilon_x=eps_x,
        epsilon_y=eps_y,
        delta=delta_x,
        radius=R,
        task="regression",
        calibration=calibration,
        bounds=b,
        n_projected=int(n_out + out_y.sum()),
        rng_kind=rng_kind(gen),
        sigma2_y=sigma_y**2,
        delta_y=delta_y,
        target_bounds=(float(tb[0]), float(tb[1])),
    )
