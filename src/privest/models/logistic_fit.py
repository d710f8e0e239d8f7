"""The noisy fits behind :class:`~privest.models.logistic.PrivateLogisticRegression`.

Both methods run T noisy full-batch steps on the mean logistic loss + l2/2 ||theta||^2 and
output the average of the last half of the iterates (docs/central-models.md).

- ``"noisy_gd"`` (the default before issue 31): theta <- theta - eta (noisy gradient mean + l2
  theta), fixed step eta, on features centred at the public box centre.
- ``"noisy_mm"`` (the default): the bounded-Hessian (majorize-minimize) step of Boehning and
  Lindsay (1988): the logistic Hessian is at most X^T X / (4 n) (binary) and the multinomial
  one at most (I - 11^T / K) / 2 (x) X^T X / n <= I / 2 (x) X^T X / n (Boehning 1992, Lemma),
  so theta <- theta - (H0 + l2 I)^{-1} (noisy gradient mean + l2 theta) with H0 that bound
  descends without a step size to tune. X^T X is released once (share :data:`GRAM_SHARE`
  of the zCDP budget; :func:`privest.models.inference.noisy_gram`), its eigenvalues floored at
  about the spectral norm of its noise; the rest of the budget is split evenly over the T
  gradient releases. Features are scaled to [-1, 1] by the public box (plus a constant
  1 for the intercept), so the row bound is B = sqrt(d), d the number of columns.

Sensitivity of the gradient sum under replacement of one record: binary, (sigmoid - y) x has
norm <= B, so 2B; multinomial (K >= 3 classes, K x d gradient), ||(softmax - e_y) x^T||_F =
||softmax - e_y|| ||x|| <= sqrt(2) B, so 2 sqrt(2) B. Every release is discrete Gaussian
noise on a public lattice (docs/randomness.md); zCDP composes by addition (Bun and Steinke
2016, Lemma 2.3) and everything between releases is post-processing, so the fit is rho-zCDP
with rho the largest level whose conversion meets (epsilon, delta).

The ridge of ``"noisy_mm"`` is a public rule (:func:`logistic_rule`), a function of n, p, the
number of classes, epsilon and delta only (the box scaling fixes B), never of the data.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, softmax

from privest.accounting.zcdp import zcdp_rho_for
from privest.errors import BoundsError
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.inference import noisy_gram

__all__ = [
    "GRAM_SHARE",
    "OUT_OF_BOX",
    "bounded_hessian_inverse",
    "design_rows",
    "gradient_sensitivity",
    "gradient_sum",
    "gram_preconditioner",
    "hessian_sum",
    "logistic_rule",
    "noisy_descent",
]

#: zCDP share of the X^T X release of ``"noisy_mm"``
GRAM_SHARE = 0.1
#: default number of noisy steps of each method
DEFAULT_STEPS = {"noisy_mm": 20, "noisy_gd": 30}
#: rows per block of :func:`gradient_sum` (8192 x 21 doubles: 1.4 MB, within a core's cache)
GRADIENT_BLOCK = 8192
#: ridge = RIDGE_SCALE * u * max(1, u), u the norm of the gradient-mean noise (logistic_rule)
RIDGE_SCALE = 0.5


def gradient_sensitivity(x_radius: float, n_classes: int) -> float:
    """L2 sensitivity of the gradient sum under replacement (module docstring)."""
    return 2.0 * x_radius * (1.0 if n_classes == 2 else math.sqrt(2.0))


def logistic_rule(
    n: int, p: int, n_classes: int, epsilon: float, delta: float, fit_intercept: bool = True
) -> dict[str, float | int]:
    """The public settings of ``"noisy_mm"``: ridge, steps and zCDP shares; reads no data.

    u = sqrt(dims) * sensitivity / (n sqrt(2 rho_g)) is the L2 norm of the noise of the
    gradient mean averaged over the steps (rho_g the gradients' share; dims = d for binary, K d
    for K classes); the ridge is 0.5 u max(1, u): proportional to the noise while it is small
    (an O(1 / (n epsilon)) bias), growing faster when the noise dominates, so the fit shrinks
    towards the uniform probabilities rather than towards noise. The constants were chosen on
    synthetic data and checked on real data in benchmarks/bench_private_logistic_calibration.py.
    """
    d = p + int(fit_intercept)
    x_radius = math.sqrt(d)
    rho = zcdp_rho_for(epsilon, delta)
    rho_grad = (1.0 - GRAM_SHARE) * rho
    dims = d * (1 if n_classes == 2 else n_classes)
    sens = gradient_sensitivity(x_radius, n_classes)
    u = math.sqrt(dims) * sens / (n * math.sqrt(2.0 * rho_grad))
    steps = DEFAULT_STEPS["noisy_mm"]
    return {
        "l2": RIDGE_SCALE * u * max(1.0, u),
        "steps": steps,
        "x_radius": x_radius,
        "rho_gram": GRAM_SHARE * rho,
        "rho_step": rho_grad / steps,
    }


def bounded_hessian_inverse(
    Xc: np.ndarray,
    x_radius: float,
    rho: float,
    n_classes: int,
    l2: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """(H0 + l2 I)^{-1} with H0 = c X^T X / n from a rho-zCDP release of X^T X (c = 1/4 for
    two classes, 1/2 for more; module docstring); eigenvalues floored at 2 sqrt(d) times the
    noise sd of one entry (about the spectral norm of the noise)."""
    return gram_preconditioner(Xc.T @ Xc, Xc.shape[0], x_radius, rho, n_classes, l2, rng)


def gram_preconditioner(
    S: np.ndarray,
    n: int,
    x_radius: float,
    rho: float,
    n_classes: int,
    l2: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """:func:`bounded_hessian_inverse` from the Gram matrix ``S = X^T X`` of ``n`` rows (the
    accuracy prediction passes that of a reference design)."""
    d = S.shape[0]
    S_noisy, sigma = noisy_gram(S, x_radius, rho, n, rng)
    c = 0.25 if n_classes == 2 else 0.5
    vals, vecs = np.linalg.eigh(c * S_noisy / n)
    vals = np.maximum(vals, 2.0 * math.sqrt(d) * c * sigma / n) + l2
    return (vecs / vals) @ vecs.T


#: the refusal of features outside the public box (both fitting methods)
OUT_OF_BOX = "X: some values lie outside the public bounds; pass clip=True to clip them"


def design_rows(
    X: np.ndarray,
    centre: np.ndarray,
    scale: np.ndarray,
    const: float | None,
    box: np.ndarray | None = None,
    clip: bool = False,
) -> np.ndarray:
    """The design (x - centre) / scale, with a last column ``const`` (None: no column),
    filled block by block (no n x p temporaries). Column-major: a block of
    :data:`GRADIENT_BLOCK` rows is then d contiguous runs, which both products of
    :func:`gradient_sum` stream through (row-major rows of d = 21 doubles cost them 1.3-1.5
    times the CPU at 10^6 rows, docs/central-models.md "BLAS threads and speed"). Each block
    is transposed once into a small contiguous buffer, where the arithmetic runs and, with a
    ``box`` (p, 2), the features are checked against it in the same pass (clipped to it with
    ``clip``, else :class:`~privest.errors.BoundsError`; a value is moved only if outside).
    Every entry is the same float operation whatever the layout."""
    n, p = X.shape
    Xc = np.empty((n, p + int(const is not None)), order="F")
    buf = np.empty((p, min(n, GRADIENT_BLOCK)))
    centre, scale = centre[:, None], scale[:, None]
    for start in range(0, n, GRADIENT_BLOCK):  # a block stays in cache for its arithmetic
        rows = X[start : start + GRADIENT_BLOCK]
        block = buf[:, : rows.shape[0]]
        np.copyto(block, rows.T)
        if box is not None and (
            np.any(block.min(axis=1) < box[:, 0]) or np.any(block.max(axis=1) > box[:, 1])
        ):
            if not clip:
                raise BoundsError(OUT_OF_BOX)
            np.clip(block, box[:, :1], box[:, 1:], out=block)
        np.divide(np.subtract(block, centre, out=block), scale, out=block)
        Xc[start : start + GRADIENT_BLOCK, :p] = block.T
    if const is not None:
        Xc[:, p] = const
    return Xc


def gradient_sum(Xc: np.ndarray, Y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """X^T (sigmoid(X theta) - Y) (softmax for K >= 3 classes), over blocks of
    :data:`GRADIENT_BLOCK` rows: each block is read from memory once and stays in cache for its
    second product, one pass over X where the two whole-matrix products took two. The sum is
    the same up to rounding (bit-identical for n <= GRADIENT_BLOCK)."""
    g = np.zeros((Xc.shape[1], Y.shape[1]))
    for start in range(0, Xc.shape[0], GRADIENT_BLOCK):
        rows = Xc[start : start + GRADIENT_BLOCK]
        z = rows @ theta
        resid = expit(z) if Y.shape[1] == 1 else softmax(z, axis=1)
        resid -= Y[start : start + GRADIENT_BLOCK]
        g += rows.T @ resid
    return g


def hessian_sum(Xc: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """sum_i p_i (1 - p_i) x_i x_i^T, p = sigmoid(X theta) (``theta`` (d,)), as the Gram
    matrix of the rows x_i sqrt(p_i (1 - p_i)) formed block by block (:data:`GRADIENT_BLOCK`
    rows): no n x d weighted copy, one pass over X. The same sum up to rounding
    (bit-identical for n <= GRADIENT_BLOCK)."""
    d = Xc.shape[1]
    H = np.zeros((d, d))
    for start in range(0, Xc.shape[0], GRADIENT_BLOCK):
        rows = Xc[start : start + GRADIENT_BLOCK]
        p = expit(rows @ theta)
        rows = rows * np.sqrt(p * (1.0 - p))[:, None]
        H += rows.T @ rows
    return H


def noisy_descent(
    Xc: np.ndarray,
    Y: np.ndarray,
    *,
    x_radius: float,
    rho_step: float,
    steps: int,
    precond: np.ndarray,
    l2: float,
    rng: np.random.Generator,
    trace: dict | None = None,
) -> np.ndarray:
    """T noisy steps theta <- theta - precond (noisy gradient mean + l2 theta); each gradient
    release is rho_step-zCDP (module docstring). Y is (n, 1) 0/1 for two classes (sigmoid
    model) or (n, K) one-hot for K >= 3 (softmax); rows need ||x|| <= x_radius. Returns the
    (d, 1) or (d, K) average of the last half of the iterates. A ``trace`` dict receives the
    released path: ``thetas`` (T, d, m), the iterate each noisy gradient sum ``grads``
    (T, d, m) was taken at, and the noise sd ``sigma`` of one gradient coordinate."""
    n, d = Xc.shape
    m = Y.shape[1]
    n_classes = 2 if m == 1 else m
    slack = 1.0 + 4.0 * (n + d) * 2.0**-52  # float error of the gradient sum (twice)
    sens = gradient_sensitivity(x_radius, n_classes) * slack
    mech = lattice_gaussian_zcdp(rho_step, sens, d * m)
    theta = np.zeros((d, m))
    avg = np.zeros((d, m))
    thetas, grads = np.zeros((steps, d, m)), np.zeros((steps, d, m))
    start = steps // 2
    noise = mech.noise(steps * d * m, rng).reshape(steps, d * m)  # one batch for all steps
    for t in range(steps):
        noisy = mech.release(gradient_sum(Xc, Y, theta).ravel(), rng, noise=noise[t])
        noisy = noisy.reshape(d, m)
        thetas[t], grads[t] = theta, noisy
        theta = theta - precond @ (noisy / n + l2 * theta)
        if t >= start:
            avg += theta
    if trace is not None:
        trace.update(thetas=thetas, grads=grads, sigma=mech.sigma)
    return avg / (steps - start)
