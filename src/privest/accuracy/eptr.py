"""Accuracy of the ePTR models of paper 001 before any data (docs/accuracy.md, "ePTR
models").

Efficient PTR (paper 001, Algorithm 2) releases ``theta_hat + sigma zeta`` with probability
``q = expit(eps (gamma - M) / 2)`` and otherwise the data-independent bottom. Given a
release, the error of each released coordinate against the non-private estimate is
``N(0, sigma^2)``, ``sigma`` the Gaussian step's sd at the public local sensitivity
``alpha`` (:func:`~privest.mechanisms.eptr.eptr_noise_scale`, a function of n and c0 only).
Whether a release happens depends on the data through ``gamma``; the prediction states a
design and averages ``q`` over it:

* :class:`~privest.models.eptr_ols.EPTRLinearRegression` (Algorithm 4): ``gamma`` is
  ``(lambda_min(S) - c0 n - L)_+ / L``; the design is feature rows uniform in the ball of
  radius ``x_radius`` (``E x x' = R_x^2 I / (p + 2)``). ``lambda_min(S)`` is drawn on
  :data:`DRAWS` seeded data sets: exactly for ``n <= ROWS``, else by the central limit of
  the sum of n rows, ``S = n E xx' + sqrt(n / ROWS) (S_ROWS - ROWS E xx')``.
* :class:`~privest.models.eptr_bayes.EPTRBayesClassifier` (Algorithm 3): ``gamma`` is
  ``(min_k N_k - c0 n - 1)_+``; the design is stated class shares (default equal), the
  counts drawn multinomially on :data:`DRAWS` seeded data sets.
* :class:`~privest.models.eptr_nw.EPTRKernelRegressor` (Algorithm 5): at each query point
  ``gamma = (d_h - c0 n - 2 K) / (2 K)``; the design is features uniform on the model's
  public box, where the degree ``d_h`` has mean ``n E K_h`` and variance ``n Var K_h`` in
  closed form (products of normal CDFs); ``q`` is averaged over its normal approximation
  by Gauss-Hermite quadrature.

With ``c0="auto"`` a share of epsilon first releases ``lambda_min(S)`` (OLS) or the smallest
class count (Bayes) with Laplace noise, and c0 is the models' own public rule of it: the
noise is drawn with the data sets (seeded), so c0, sigma and q vary together, and the law
given a release weighs each draw's ``N(0, sigma^2)`` by its ``q``
(:class:`~privest.accuracy.base.MixtureErrorLaw`). There the Gaussian step's sd is computed
on the lattice at three values of alpha and interpolated (its ratio to alpha varies by
under 1% between them).

``Accuracy.refusal`` is the predicted chance that nothing is released (the test refuses, or
``c0="auto"`` outputs the bottom up front). The post-processing of a release (the Bayes
prior floored at c0 and renormalised, the class means projected to the ball, NW values
clipped to ``[-R_f, R_f]``) can only move it towards the public range: the prediction is
for the noise before it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import ndtr

from privest.accuracy.base import Accuracy, MixtureErrorLaw, NormalErrorLaw, check_alpha
from privest.errors import ValidationError
from privest.mechanisms.eptr import (
    EPTR,
    check_eptr_parameters,
    eptr_noise_scale,
    release_probability,
)
from privest.mechanisms.ptr import ClassicPTR, classic_ptr_probability
from privest.mechanisms.samplers.lattice import LatticeLaplace, lattice_gaussian
from privest.models.eptr_bayes import EPTRBayesClassifier, bayes_auto_c0, bayes_local_sensitivity
from privest.models.eptr_nw import EPTRKernelRegressor, nw_local_sensitivity
from privest.models.eptr_ols import (
    EPTRLinearRegression,
    auto_c0,
    gamma_scale,
    lambda_min_lower,
    lambda_min_sensitivity,
    ols_local_sensitivity,
)
from privest.validation import check_positive

__all__ = ["EPTR_MODELS", "predict_eptr", "predict_ptr"]

EPTR_MODELS = (EPTRLinearRegression, EPTRBayesClassifier, EPTRKernelRegressor)
#: seeded data sets of the design (the Monte Carlo error of a refusal chance is at most
#: 0.5 / sqrt(DRAWS)); fewer for OLS, whose c0="auto" rule is a search per data set
DRAWS, OLS_DRAWS, SEED = 4096, 512, 20_260_127
#: rows drawn per data set of the OLS design (the central limit scales them to n)
ROWS = 256
#: Gauss-Hermite nodes of the NW degree's normal approximation
NODES = 64


def _law(sigmas: np.ndarray, q: np.ndarray) -> Any:
    """The error law given a release: the draws' normals weighed by their chance ``q``."""
    if np.ptp(sigmas) == 0:
        return NormalErrorLaw(float(sigmas[0]))
    values, inverse = np.unique(sigmas, return_inverse=True)
    weights = np.bincount(inverse, weights=q if q.sum() > 0 else None, minlength=values.size)
    keep = weights > 0
    return MixtureErrorLaw([NormalErrorLaw(float(s)) for s in values[keep]], weights[keep])


def _sigmas(alphas: np.ndarray, eps: float, delta: float, dim: int, cal: str) -> np.ndarray:
    """The Gaussian step's sd at each alpha: exact at the least, the median and the largest,
    its ratio to alpha interpolated in log alpha between them (module docstring)."""
    ref = np.unique(np.quantile(alphas, [0.0, 0.5, 1.0]))
    ratio = [eptr_noise_scale(a, eps, delta, dim, cal) / a for a in ref]
    if ref.size == 1:
        return alphas * ratio[0]
    return alphas * np.interp(np.log(alphas), np.log(ref), ratio)


def _laplace(scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` stratified Laplace draws of ``scale``, in random order."""
    u = rng.permutation((np.arange(size) + 0.5) / size)
    return -scale * np.sign(u - 0.5) * np.log1p(-2.0 * np.abs(u - 0.5))


def _ols_lambda(n: int, p: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    """lambda_min(S) on OLS_DRAWS data sets of rows uniform in the ball (module docstring)."""
    m = min(n, ROWS)
    z = rng.standard_normal((OLS_DRAWS, m, p))
    r = radius * rng.random((OLS_DRAWS, m, 1)) ** (1.0 / p)
    x = z / np.linalg.norm(z, axis=2, keepdims=True) * r
    s_m = np.einsum("kij,kil->kjl", x, x)
    second = radius**2 / (p + 2) * np.eye(p)
    s = n * second + math.sqrt(n / m) * (s_m - m * second) if n > m else s_m
    return np.linalg.eigvalsh(s)[:, 0]


def _released(
    q: np.ndarray, alphas: np.ndarray, ok: np.ndarray, eps: float, delta: float, dim: int, cal: str
) -> tuple[Any, float]:
    """The law given a release and the refusal, from each draw's release chance ``q``, alpha
    and whether a c0 was chosen (``ok``; else the bottom is output up front)."""
    if not ok.any():
        raise ValidationError(
            "c0: on the stated design the rule of c0='auto' outputs the bottom up front on "
            "every draw: nothing would be released (raise epsilon or n, or give c0)"
        )
    q = np.where(ok, q, 0.0)
    sig = _sigmas(alphas[ok], eps, delta, dim, cal)
    return _law(sig, q[ok]), max(float(1.0 - np.mean(q)), 0.0)


def _ols(model: EPTRLinearRegression, n: int, p: int) -> tuple[list[str], Any, float, str]:
    eps, delta, cal = model._eptr_epsilon(), model._eptr_delta(), model._calibration
    check_eptr_parameters(model.epsilon, model.delta, cal)
    check_eptr_parameters(eps, delta, cal)
    rng = np.random.default_rng(SEED)
    R = model.ball_radius(p)
    ry = R * model.theta_radius if model.y_radius is None else model.y_radius
    lam = _ols_lambda(n, p, R, rng)
    if model.c0 == "auto":
        sens = lambda_min_sensitivity(n, p, R)
        mech = LatticeLaplace(model.epsilon * model.c0_share, sens)
        lower = lambda_min_lower(lam + _laplace(mech.scale, lam.size, rng), mech.scale)
        args = (R, model.theta_radius, ry, eps, delta, model.constants)
        c0 = np.array([auto_c0(v, n, p, *args) for v in lower], dtype=float)  # None -> nan
    else:
        c0 = np.full(lam.size, check_positive(model.c0, "c0"))
    ok = np.isfinite(c0)
    c0 = np.where(ok, c0, 1.0)
    scale = gamma_scale(R, model.constants)
    q = release_probability(np.maximum(lam - c0 * n - scale, 0.0) / scale, eps, delta)
    alpha = model.local_sensitivity_factor * ols_local_sensitivity(
        n, R, model.theta_radius, c0, ry, model.constants
    )
    law, refusal = _released(q, alpha, ok, eps, delta, p, cal)
    note = f"assumes feature rows uniform in the ball of radius {R:g}"
    return [f"coef x{j}" for j in range(p)], law, refusal, note


def _bayes(
    model: EPTRBayesClassifier, n: int, p: int, shares: Any
) -> tuple[list[str], Any, float, str]:
    cal = model._calibration
    eps, delta = model._eptr_epsilon(), float(model.delta)
    check_eptr_parameters(model.epsilon, delta, cal)
    if model.classes is None:
        raise ValidationError("classes: the public list of labels is required")
    labels = [str(c) for c in model.classes]
    k = len(labels)
    w = np.full(k, 1.0 / k) if shares is None else np.asarray(shares, dtype=float)
    if w.shape != (k,) or not (np.all(w > 0) and math.isclose(w.sum(), 1.0)):
        raise ValidationError(f"class_shares: {shares!r} must be {k} shares > 0 summing to 1")
    rng = np.random.default_rng(SEED)
    n_min = rng.multinomial(n, w, size=DRAWS).min(axis=1).astype(float)
    if model.c0 == "auto":
        mech = LatticeLaplace(model.epsilon * model.c0_share, 1.0)
        noisy = n_min + _laplace(mech.scale, DRAWS, rng)
        c0 = np.array([bayes_auto_c0(v, mech.scale, n, k, eps, delta) for v in noisy], float)
    else:
        if not 0 < check_positive(model.c0, "c0") < 1.0 / k:
            raise ValidationError(f"c0: {model.c0!r} is out of range; accepted: (0, 1/K)")
        c0 = np.full(DRAWS, float(model.c0))
    ok = np.isfinite(c0)
    c0 = np.where(ok, c0, 1.0 / k)
    q = release_probability(np.maximum(n_min - c0 * n - 1.0, 0.0), eps, delta)
    alphas = np.array([bayes_local_sensitivity(n, model.ball_radius(p), c) for c in c0])
    law, refusal = _released(q, alphas, ok, eps, delta, k * (p + 1), cal)
    names = [f"prior {c}" for c in labels]
    names += [f"mean {c} x{j}" for c in labels for j in range(p)]
    shown = np.array2string(w, precision=3, separator=", ")
    note = f"assumes class shares {shown}; the noise before the post-processing"
    return names, law, refusal, note


def _nw(model: EPTRKernelRegressor, n: int) -> tuple[list[str], list[Any], list[float], str]:
    queries = model._queries()
    m, d = queries.shape
    eps, delta = model._per_query_budget(m)
    box = model._box(d)
    lo, hi = box[:, 0], box[:, 1]
    h = model._bandwidth(n, d)
    kmax = (2.0 * math.pi) ** (-d / 2.0) * h ** (-d)
    # E K_h and E K_h^2 for x uniform on the box, a product over the coordinates
    mean = np.prod((ndtr((hi - queries) / h) - ndtr((lo - queries) / h)) / (hi - lo), axis=1)
    r2 = math.sqrt(2.0) / h
    square = np.prod(
        (ndtr((hi - queries) * r2) - ndtr((lo - queries) * r2))
        / ((hi - lo) * 2.0 * h * math.sqrt(math.pi)),
        axis=1,
    )
    nodes, weights = np.polynomial.hermite_e.hermegauss(NODES)
    degree = n * mean[:, None] + np.sqrt(n * (square - mean**2))[:, None] * nodes[None, :]
    gamma = np.maximum(degree - model.c0 * n - 2.0 * kmax, 0.0) / (2.0 * kmax)
    q = release_probability(gamma, eps, delta) @ weights / weights.sum()
    alpha = nw_local_sensitivity(n, d, h, model.y_radius, model.c0)
    sigma = eptr_noise_scale(alpha, eps, delta)
    laws = [NormalErrorLaw(sigma)] * m
    names = [f"estimate at {np.array2string(x, precision=3, separator=', ')}" for x in queries]
    note = (
        f"assumes features uniform on {box.tolist()} (the degree by its normal "
        "approximation); the noise before the clipping to [-y_radius, y_radius]"
    )
    return names, laws, [max(float(1.0 - v), 0.0) for v in q], note


def predict_eptr(
    model: Any,
    n: int,
    alpha: float,
    *,
    n_features: int | None = None,
    class_shares: Any = None,
) -> list[Accuracy]:
    """The predicted error, given a release, of each released quantity of an unfitted ePTR
    model, and the chance that nothing is released (module docstring); ``n_features`` is
    the number of features of the OLS and Bayes models (the NW model's query points give
    it), ``class_shares`` the stated shares of the Bayes model's classes."""
    if isinstance(model, EPTRKernelRegressor):
        names, laws, refusals, note = _nw(model, n)
        label = "ePTR-NW"
    else:
        box = None if isinstance(model, EPTRLinearRegression) else model.bounds
        if n_features is None and box is not None and np.ndim(box) == 2:
            n_features = len(box)  # the Bayes model's box, one pair per feature
        if not isinstance(n_features, (int, np.integer)) or n_features < 1:
            raise ValidationError(f"n_features: {n_features!r} must be a whole number >= 1")
        if isinstance(model, EPTRLinearRegression):
            names, law, refusal, note = _ols(model, n, int(n_features))
            label = "ePTR-OLS"
        else:
            names, law, refusal, note = _bayes(model, n, int(n_features), class_shares)
            label = "ePTR-Bayes"
        laws, refusals = [law] * len(names), [refusal] * len(names)
    return [
        Accuracy(name, law, alpha, label, n, note, refusal=r)
        for name, law, r in zip(names, laws, refusals, strict=True)
    ]


def predict_ptr(
    mechanism: EPTR | ClassicPTR, *, gamma: Any, dims: int | None = None, alpha: float = 0.05
) -> list[Accuracy]:
    """The predicted error of the generic propose-test-release mechanisms of paper 001 around
    a caller's estimator: :class:`~privest.mechanisms.eptr.EPTR` (Algorithm 2) and
    :class:`~privest.mechanisms.ptr.ClassicPTR` (Algorithm 1).

    Given a release, each coordinate errs by the Gaussian step, ``N(0, sigma^2)`` with the
    step's lattice sigma, exactly (``dims``, the estimator's output length, is the EPTR
    mechanism's ``dim`` unless given, 1 by default). Whether a release happens depends on
    the data through the estimator's safety margin, which the caller states as ``gamma``:
    the alpha-SaLBo value (ePTR) or the
    distance to an unsafe data set (classic PTR) expected of the data, one number or several
    equally likely ones. ``refusal`` is the predicted chance that nothing is released:
    ``1 - expit(eps (gamma - M) / 2)`` (ePTR) or one minus Algorithm 1's pass probability,
    averaged over the stated values."""
    alpha = check_alpha(alpha)
    g = np.atleast_1d(np.asarray(gamma, dtype=float))
    if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValidationError(f"gamma: {gamma!r} must be finite numbers >= 0 (a safety margin)")
    if dims is None:
        dims = getattr(mechanism, "dim", None) or 1
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise ValidationError(f"dims: {dims!r} must be a whole number >= 1")
    if isinstance(mechanism, EPTR):
        q = release_probability(g, mechanism.epsilon, mechanism.delta)
        sigma = eptr_noise_scale(mechanism.alpha, mechanism.epsilon, mechanism.delta, dims)
        label, what = "eptr", "SaLBo"
    elif isinstance(mechanism, ClassicPTR):
        q = classic_ptr_probability(g, mechanism.epsilon, mechanism.delta)
        eps = mechanism.epsilon / mechanism.noise_multiplier
        sigma = lattice_gaussian(eps, mechanism.delta, mechanism.alpha, dims, "classic").sigma
        label, what = "classic_ptr", "distance to unsafe"
    else:
        raise ValidationError(
            f"mechanism: a {type(mechanism).__name__} is not an EPTR or ClassicPTR mechanism"
        )
    quantity = "value" if dims == 1 else f"each of {dims} coordinates"
    shown = np.array2string(g, precision=3, separator=", ")
    return [
        Accuracy(
            quantity,
            NormalErrorLaw(sigma),
            alpha,
            label,
            assumption=f"given a release; assumes the {what} of the data is {shown}",
            refusal=float(1.0 - np.mean(q)),
        )
    ]
