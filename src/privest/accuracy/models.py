"""Accuracy of the central models before any data, from their noise calibration under a
stated design (docs/accuracy.md, "Central models").

The design: features independent and uniform on the public box (the reference design of
:func:`~privest.models.linear.choose_linear_method`), the coefficients guessed by the
caller. The prediction is of the privacy noise alone: the error of the private fit against
the non-private fit on the same data (the sampling error of the data comes on top).

* :class:`~privest.models.linear.PrivateLinearRegression` (AdaSSP, Wang 2018, Alg. 2): the
  released ``X^T X`` and ``X^T y`` carry discrete Gaussian noise of sds ``s_xx`` (off the
  diagonal ``s_xx / sqrt 2``) and ``s_xy`` (the model's zCDP shares). To first order
  ``theta~ - theta = M (e - E theta) - M R theta`` with ``M = (S + R)^-1``, ``S = n E[x x']``,
  ``R`` the ridge; ``E`` symmetric with ``Var E_ii = 2 Var E_ij``, so
  ``Cov(E theta) = (s_xx^2 / 2) (|theta|^2 I + theta theta')``.
* :class:`~privest.models.logistic.PrivateLogisticRegression` (noisy full-batch GD): each of
  the T steps adds discrete Gaussian noise of sd ``s`` to the gradient sum. Linearised
  around the noiseless path ``theta_t`` on the design, ``d_(t+1) = A_t d_t - (eta / n) xi_t``
  with ``A_t = I - eta (H(theta_t) + l2 I)``; the averaged tail iterate's noise is
  ``sum_s C_s xi_s`` (``C_s`` the sums of the products of the A's), and its bias is that
  of the noiseless average against the penalised optimum on the design.
* ``PrivateLogisticRegression(method="noisy_mm")`` (the default): the fit itself, run on
  the design (a Sobol sample of :data:`MM_POINTS` points) with its public settings (ridge,
  steps, zCDP shares: the model's own rule), :data:`MM_PATHS` times with seeded noise: the
  release of the Gram matrix (by the fit's own preconditioner, :data:`MM_DRAWS` draws) and
  normal gradient noise of the lattice's sd. The error law is normal with the runs'
  covariance and their mean offset from the penalised optimum on the design. A simulation,
  not a linearisation: when the noise is large (small n epsilon) it biases the fit away
  from 0 and widens it, which a linearisation misses (by 15-20% at n = 1000, epsilon 1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import expit

from privest.accounting.zcdp import zcdp_rho_for
from privest.accuracy.base import Accuracy, NormalErrorLaw, check_alpha
from privest.accuracy.eptr import EPTR_MODELS, predict_eptr
from privest.errors import ValidationError
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.inference import LOGISTIC_SHARE
from privest.models.linear import (
    ADASSP_FAILURE,
    ADASSP_SHARES,
    Y_MEAN_SHARE,
    PrivateLinearRegression,
    public_design,
)
from privest.models.linear_inference import INFERENCE_SHARE
from privest.models.logistic import NOISY_GD_L2, PrivateLogisticRegression
from privest.models.logistic_fit import DEFAULT_STEPS, gradient_sensitivity, gram_preconditioner
from privest.validation import check_bounds, check_delta, check_epsilon, check_probability

__all__ = ["predict_model"]

#: points of the quasi-random reference design of the logistic model
DESIGN_POINTS = 2**14
#: the noisy-MM prediction: seeded releases of the design's Gram matrix, seeded runs of the
#: fit (the Monte Carlo SE of a predicted sd is 1 / sqrt(2 MM_PATHS) of it, 3%) and points
#: of its design
MM_DRAWS, MM_PATHS, MM_POINTS, MM_SEED = 16, 512, 2**10, 20_260_131
ASSUMPTION = "assumes features independent and uniform on the bounds, coefficients {coef}"


def _guess(coef: Any, p: int) -> np.ndarray:
    beta = np.asarray(coef, dtype=float).reshape(-1)
    if beta.size == 1 and p > 1:
        beta = np.full(p, float(beta[0]))
    if beta.shape != (p,) or not np.all(np.isfinite(beta)):
        raise ValidationError(f"coef: {coef!r} must be {p} finite numbers (one per feature)")
    return beta


def _output_map(design: dict, p: int, fit_intercept: bool) -> np.ndarray:
    """The linear map from the centred parameters theta to (coef, intercept)."""
    d = design["dims"]
    out = np.zeros((p + 1, d))
    out[:p, :p] = np.eye(p)
    out[p, :p] = -design["centre"]
    if fit_intercept:
        out[p, p] = design["const"]
    return out


def _accuracies(cov, bias, names, label, n, alpha, assumption) -> list[Accuracy]:
    sds = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return [
        Accuracy(name, NormalErrorLaw(sd, b), alpha, label, n, assumption)
        for name, sd, b in zip(names, sds, bias, strict=True)
    ]


def _theta(
    design: dict, beta: np.ndarray, intercept: float, fit_intercept: bool, y_centre: float
) -> np.ndarray:
    """The centred parameters (coef, (intercept + coef . centre - y_centre) / const)."""
    if not fit_intercept:
        return beta.copy()
    icpt = intercept + beta @ design["centre"] - y_centre
    return np.append(beta, icpt / design["const"])


def _adassp(model: PrivateLinearRegression, n: int, beta: np.ndarray, intercept: float):
    b = check_bounds(model.bounds, beta.size)
    yb = check_bounds(model.y_bounds, 1, "y_bounds")[0]
    design = public_design(b, yb, model.fit_intercept)
    d = design["dims"]
    half = (b[:, 1] - b[:, 0]) / 2.0
    if model.fit_intercept:
        second = np.append(half**2 / 3.0, design["const"] ** 2)
    else:
        centre = (b[:, 0] + b[:, 1]) / 2.0
        second = half**2 / 3.0 + centre**2  # uncentred: E x^2 (cross terms kept below)
    mean = np.zeros(d) if model.fit_intercept else (b[:, 0] + b[:, 1]) / 2.0
    s = n * (np.diag(second - mean**2) + np.outer(mean, mean))
    rho = zcdp_rho_for(check_epsilon(model.epsilon), check_probability(model.delta, "delta"))
    rho *= 1.0 - INFERENCE_SHARE * (getattr(model, "inference", "none") == "sandwich")
    if model.method == "auto" and model.fit_intercept:  # the private mean of y comes first
        rho *= 1.0 - Y_MEAN_SHARE
    r_lam, r_xx, r_xy = (share * rho for share in ADASSP_SHARES)
    b2 = design["x_radius"] ** 2
    s_lam = lattice_gaussian_zcdp(r_lam, b2, 1).sigma
    s_xx = lattice_gaussian_zcdp(r_xx, math.sqrt(2.0) * b2, d * (d + 1) // 2).sigma
    s_xy = lattice_gaussian_zcdp(r_xy, 2.0 * design["x_radius"] * design["y_radius"], d).sigma
    off = s_xx / math.sqrt(2.0)
    lam_lower = max(float(np.linalg.eigvalsh(s)[0]) - 1.645 * s_lam, 0.0)
    ridge = max(0.0, math.sqrt(d * math.log(2.0 * d * d / ADASSP_FAILURE)) * off - lam_lower)
    theta = _theta(design, beta, intercept, model.fit_intercept, design["y_centre"])
    m = np.linalg.inv(s + ridge * np.eye(d))
    noise = s_xy**2 * np.eye(d) + off**2 * (theta @ theta * np.eye(d) + np.outer(theta, theta))
    out = _output_map(design, beta.size, model.fit_intercept)
    return out @ m @ noise @ m @ out.T, out @ (-ridge * m @ theta)


def _reference_rows(
    b: np.ndarray, design: dict, fit_intercept: bool, points: int = DESIGN_POINTS
) -> np.ndarray:
    """The quasi-random (scrambled Sobol, fixed seed) uniform design, preprocessed as the
    model does (centred, the constant column appended)."""
    from scipy.stats import qmc

    u = qmc.Sobol(b.shape[0], scramble=True, seed=0).random(points)
    x = b[:, 0] + u * (b[:, 1] - b[:, 0])
    xc = x - design["centre"]
    return np.hstack([xc, np.full((x.shape[0], 1), design["const"])]) if fit_intercept else xc


def _grad_hess(xc: np.ndarray, prob: np.ndarray, l2: float, th: np.ndarray):
    """The gradient and Hessian of the penalised mean logistic loss on the design."""
    s = expit(xc @ th)
    g = xc.T @ (s - prob) / xc.shape[0] + l2 * th
    h = (xc.T * (s * (1 - s))) @ xc / xc.shape[0] + l2 * np.eye(xc.shape[1])
    return g, h


def _optimum(xc: np.ndarray, prob: np.ndarray, l2: float) -> np.ndarray:
    """The penalised optimum on the design (Newton, to convergence)."""
    theta = np.zeros(xc.shape[1])
    for _ in range(50):
        g, h = _grad_hess(xc, prob, l2, theta)
        step = np.linalg.solve(h, g)
        theta -= step
        if np.abs(step).max() <= 1e-12 * (1.0 + np.abs(theta).max()):
            break
    return theta


def _noisy_gd(model: PrivateLogisticRegression, n: int, beta: np.ndarray, intercept: float):
    b = check_bounds(model.bounds, beta.size)
    design = public_design(b, np.array([0.0, 1.0]), model.fit_intercept)
    xc = _reference_rows(b, design, model.fit_intercept)
    d = xc.shape[1]
    # the labels (0/1, not centred) enter the mean gradient only through p(x) (linear in y)
    prob = expit(xc @ _theta(design, beta, intercept, model.fit_intercept, 0.0))
    half = (b[:, 1] - b[:, 0]) / 2.0 if model.fit_intercept else np.abs(b).max(axis=1)
    l2 = NOISY_GD_L2 if isinstance(model.l2, str) else float(model.l2)  # "auto"
    t_max = DEFAULT_STEPS["noisy_gd"] if model.max_iter is None else int(model.max_iter)
    curvature = 0.25 * (float(np.mean(half**2)) + design["const"] ** 2) + l2
    eta = model.step_scale / curvature
    rho = zcdp_rho_for(check_epsilon(model.epsilon), check_probability(model.delta, "delta"))
    rho *= 1.0 - LOGISTIC_SHARE * (getattr(model, "inference", "none") == "bootstrap")
    sigma = lattice_gaussian_zcdp(rho / t_max, 2.0 * design["x_radius"], d).sigma
    theta, steps, start = np.zeros(d), [], t_max // 2
    avg = np.zeros(d)
    for t in range(t_max):
        g, h = _grad_hess(xc, prob, l2, theta)
        steps.append(np.eye(d) - eta * h)
        theta = theta - eta * g
        if t >= start:
            avg += theta
    avg /= t_max - start
    # noise: avg - noiseless avg = -(eta / (n m)) sum_s D_s xi_s with D_s = sum over the
    # averaged t >= s of A_t ... A_(s+1); backwards, D_s = [s >= start] I + D_(s+1) A_(s+1)
    m = t_max - start
    cov, acc = np.zeros((d, d)), np.zeros((d, d))
    for s_ in range(t_max - 1, -1, -1):
        acc = (np.eye(d) if s_ >= start else 0.0) + (acc @ steps[s_ + 1] if s_ + 1 < t_max else 0.0)
        cov += acc @ acc.T
    cov *= (eta * sigma / (n * m)) ** 2
    out = _output_map(design, beta.size, model.fit_intercept)
    return out @ cov @ out.T, out @ (avg - _optimum(xc, prob, l2))


def _mm_paths(
    unit: np.ndarray, prob: np.ndarray, preconds: np.ndarray, cfg: dict, sigma: float, n: int
) -> np.ndarray:
    """The averaged iterates of :data:`MM_PATHS` noisy-MM runs on the design (the noise
    seeded): ``MM_PATHS / K`` runs with each of the K preconditioners; shape (runs, d)."""
    k, d, _ = preconds.shape
    per = MM_PATHS // k
    rng = np.random.default_rng(MM_SEED)
    theta, avg = np.zeros((d, k, per)), np.zeros((d, k, per))
    steps, l2, rows = cfg["steps"], cfg["l2"], unit.shape[0]
    for t in range(steps):
        # einsum, not BLAS: threaded BLAS is slow for these thin products on a busy machine
        resid = expit(np.einsum("mi,ir->mr", unit, theta.reshape(d, -1))) - prob[:, None]
        grad = np.einsum("mi,mr->ir", unit, resid).reshape(d, k, per) / rows + l2 * theta
        grad += (sigma / n) * rng.standard_normal(grad.shape)
        theta = theta - np.einsum("kij,jkr->ikr", preconds, grad)
        if t >= steps // 2:
            avg += theta
    return (avg / (steps - steps // 2)).reshape(d, -1).T


def _noisy_mm(model: PrivateLogisticRegression, n: int, beta: np.ndarray, intercept: float):
    """Noisy MM (module docstring): :data:`MM_PATHS` seeded runs of the fit on the design,
    with :data:`MM_DRAWS` seeded releases of its Gram matrix; their mean offset from the
    penalised optimum and their covariance."""
    b = check_bounds(model.bounds, beta.size)
    p = beta.size
    classes = model._classes()
    if classes.size != 2:
        raise ValidationError(
            f"classes: the accuracy of the multinomial model ({classes.size} classes) is not "
            "predicted; two classes are"
        )
    cfg = model._settings(n, p, 2, check_epsilon(model.epsilon), check_delta(model.delta))
    if model.fit_intercept:  # the fit's own scaling (PrivateLogisticRegression._fit_mm)
        centre, scale = b.mean(axis=1), (b[:, 1] - b[:, 0]) / 2.0
    else:
        centre, scale = np.zeros(p), np.abs(b).max(axis=1)
    design = {"centre": centre, "const": 1.0, "dims": p + int(model.fit_intercept)}
    unit = _reference_rows(b, design, model.fit_intercept, MM_POINTS)
    unit[:, :p] /= scale
    theta = beta * scale
    if model.fit_intercept:
        theta = np.append(theta, intercept + beta @ centre)
    prob = expit(unit @ theta)
    d = unit.shape[1]
    sigma = lattice_gaussian_zcdp(cfg["rho_step"], gradient_sensitivity(cfg["x_radius"], 2), d)
    gram = n * (unit.T @ unit) / unit.shape[0]
    preconds = np.array(
        [
            gram_preconditioner(
                gram,
                n,
                cfg["x_radius"],
                cfg["rho_gram"],
                2,
                cfg["l2"],
                np.random.default_rng([MM_SEED, k]),
            )  # fmt: skip
            for k in range(MM_DRAWS)
        ]
    )
    runs = _mm_paths(unit, prob, preconds, cfg, sigma.sigma, n)
    out = np.zeros((p + 1, d))
    out[:p, :p] = np.diag(1.0 / scale)
    out[p, :p] = -centre / scale
    if model.fit_intercept:
        out[p, p] = 1.0
    cov = np.cov(runs.T).reshape(d, d)
    return out @ cov @ out.T, out @ (runs.mean(axis=0) - _optimum(unit, prob, cfg["l2"]))


def predict_model(
    model: Any,
    *,
    n: int,
    coef: Any = None,
    intercept: float = 0.0,
    alpha: float = 0.05,
    n_features: int | None = None,
    class_shares: Any = None,
) -> list[Accuracy]:
    """The predicted error of each coefficient and the intercept of ``model`` (an unfitted
    estimator: its public parameters are read, nothing is fitted) for ``n`` records of the
    stated design (module docstring) with coefficients ``coef`` and ``intercept``.

    The ePTR models of paper 001 (:mod:`privest.accuracy.eptr`) need no coefficients: their
    noise does not depend on them. Their predictions are given a release, with the chance
    of none in ``Accuracy.refusal``; ``n_features`` (or ``coef``'s length) is the number of
    features of ``EPTRLinearRegression`` and ``EPTRBayesClassifier``, ``class_shares`` the
    stated shares of the latter's classes (default equal)."""
    alpha = check_alpha(alpha)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValidationError(f"n: {n!r} must be a whole number >= 2")
    if isinstance(model, EPTR_MODELS):
        if n_features is None and coef is not None:
            n_features = np.asarray(coef, dtype=float).reshape(-1).size
        return predict_eptr(model, int(n), alpha, n_features=n_features, class_shares=class_shares)
    if coef is None:
        raise ValidationError("coef: a guessed coefficient per feature is needed")
    if model.bounds is None:
        raise ValidationError("bounds: the model's public box is needed to predict its accuracy")
    b = np.asarray(model.bounds, dtype=float)
    p = b.shape[0] if b.ndim == 2 else np.asarray(coef, dtype=float).reshape(-1).size
    beta = _guess(coef, p)
    if isinstance(model, PrivateLinearRegression):
        if model.y_bounds is None:
            raise ValidationError("y_bounds: the public bounds of the response are needed")
        method = model.chosen_method(int(n), p)
        if method != "adassp":
            raise ValidationError(
                f"method: the accuracy of {method!r} is not predicted; "
                "PrivateLinearRegression(method='adassp') is"
            )
        cov, bias = _adassp(model, int(n), beta, float(intercept))
        label = "adassp"
    elif isinstance(model, PrivateLogisticRegression):
        label = "noisy_gd" if model.method == "noisy_gd" else "noisy_mm"
        fit = _noisy_gd if label == "noisy_gd" else _noisy_mm
        cov, bias = fit(model, int(n), beta, float(intercept))
    else:
        raise ValidationError(
            f"model: a {type(model).__name__} is not a PrivateLinearRegression, "
            "PrivateLogisticRegression, EPTRLinearRegression, EPTRBayesClassifier or "
            "EPTRKernelRegressor"
        )
    names = [f"coef x{j}" for j in range(p)] + ["intercept"]
    if not model.fit_intercept:  # no intercept is fitted (and ``intercept`` is not read)
        names, cov, bias = names[:p], cov[:p, :p], bias[:p]
    guess = np.array2string(beta, precision=3, separator=", ")
    assumption = ASSUMPTION.format(coef=guess) + f", intercept {intercept:g}"
    return _accuracies(cov, bias, names, label, int(n), alpha, assumption)
