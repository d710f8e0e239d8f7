"""BASELINES of paper 001's experiments (Sec. 3.3-5.2): for comparison, not for use.

The paper names these methods without formulas; they follow the authors' public reference
code (docs/eptr.md, "Notes, errata and choices"). Caveats that matter for privacy are
flagged per function:

* B0 :func:`gaussian_baseline`: Gaussian mechanism with global sensitivity (the range
  diameter of a projected estimator). Valid (eps, delta)-DP.
* B1 :func:`dpnb` (Vaidya et al. 2013) and B2 :func:`dpnbss` (Zafarani and Clifton; a Cauchy
  proxy, not a faithful smooth-sensitivity mechanism): the mean noise scale uses the true class
  counts, so they are NOT formally DP unless ``scale_with_noisy_counts=True``.
* B3 :func:`dpjl` (Sheffet 2017, Algorithm 1): private Johnson-Lindenstrauss sketch.
* B4 :func:`dpgd` (Cai, Wang and Zhang 2021, Algorithm 4.1): noisy projected gradient descent;
  the step size must be public.
* B5 :func:`functional_mechanism` (Zhang et al. 2012) for least squares, intended eps-DP.
* B6 :func:`wpe` (Cai, Chakraborty and Vuursteen 2024, simplified as in the reference code to a
  1-D Haar pointwise estimator with Laplace noise), eps-DP.

Their noise is plain floating point (``value + scale * Z``), which leaks through the low bits
of the output (Mironov 2012; docs/budget.md): they reproduce the paper's comparisons and must
not be used to publish anything. The models of :mod:`privest.models` are float-safe.
"""

from __future__ import annotations

import math

import numpy as np

from privest.mechanisms.gaussian import GaussianMechanism
from privest.projection import project_rows

__all__ = [
    "bayes_global_sensitivity",
    "dpgd",
    "dpjl",
    "dpnb",
    "dpnbss",
    "functional_mechanism",
    "gaussian_baseline",
    "wpe",
]


def _project(X: np.ndarray, radius: float) -> np.ndarray:
    scale, _ = project_rows(X, radius)
    return X * scale[:, None]


def gaussian_baseline(
    estimate: np.ndarray,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """B0: estimate + N(0, sigma^2 I) with global sensitivity (analytic Gaussian calibration).

    Use 2 R_theta for projected OLS, 2 R_f for NW and :func:`bayes_global_sensitivity` for the
    Bayes classifier.
    """
    mech = GaussianMechanism(epsilon, delta, sensitivity, "analytic", dims=np.size(estimate))
    return mech.release(estimate, rng).value


def bayes_global_sensitivity(n: int, x_radius: float) -> float:
    """sqrt(2/n^2 + 2 (2 R_x)^2): class means live in the R_x ball (loose; baseline B0)."""
    return math.sqrt(2.0 / n**2 + 2.0 * (2.0 * x_radius) ** 2)


def _naive_bayes(
    X: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    x_radius: float,
    epsilon: float,
    split: float,
    rng: np.random.Generator,
    cauchy: bool,
    scale_with_noisy_counts: bool,
) -> tuple[np.ndarray, np.ndarray]:
    n, p = X.shape
    Xp = _project(X, x_radius)
    counts = np.bincount(labels, minlength=n_classes).astype(float)
    sums = np.zeros((n_classes, p))
    np.add.at(sums, labels, Xp)
    means = sums / np.maximum(counts, 1.0)[:, None]
    eps_cnt, eps_mu = split * epsilon, (1.0 - split) * epsilon

    def noise(scale: np.ndarray | float, shape: tuple[int, ...]) -> np.ndarray:
        if cauchy:
            return math.sqrt(2.0) * np.asarray(scale) * rng.standard_cauchy(shape)
        return np.asarray(scale) * rng.laplace(0.0, 1.0, shape)

    noisy = np.maximum(counts + noise(2.0 / eps_cnt, counts.shape), 1e-8)
    prior = noisy / noisy.sum()
    base = noisy if scale_with_noisy_counts else counts
    eps_c = eps_mu / (n_classes * p)
    b = (2.0 * x_radius / (np.maximum(base, 0.0) + 1.0)) / eps_c
    means = means + noise(b[:, None], means.shape)
    return prior, _project(means, x_radius)


def dpnb(
    X: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    x_radius: float,
    epsilon: float,
    split: float,
    rng: np.random.Generator,
    scale_with_noisy_counts: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """B1 DPNB (Laplace): (class prior, class means) for the identity-covariance rule.

    Counts get Lap(2/(s eps)); each mean coordinate Lap((2 R_x/(N_k + 1)) / (eps (1-s)/(K p))).
    NOT formally DP with the default ``scale_with_noisy_counts=False`` (the reference code).
    """
    return _naive_bayes(
        X, labels, n_classes, x_radius, epsilon, split, rng, False, scale_with_noisy_counts
    )


def dpnbss(
    X: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    x_radius: float,
    epsilon: float,
    split: float,
    rng: np.random.Generator,
    scale_with_noisy_counts: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """B2 DPNBSS: as :func:`dpnb` with sqrt(2) x scale x standard Cauchy noise (a proxy)."""
    return _naive_bayes(
        X, labels, n_classes, x_radius, epsilon, split, rng, True, scale_with_noisy_counts
    )


def dpjl(
    X: np.ndarray,
    y: np.ndarray,
    x_radius: float,
    y_radius: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    r: int | None = None,
) -> np.ndarray:
    """B3 DPJL (Sheffet 2017, Algorithm 1): least squares on a private JL sketch of [X | y]."""
    n, p = X.shape
    A = np.column_stack([_project(X, x_radius), np.clip(y, -y_radius, y_radius)])
    d = p + 1
    r = r if r is not None else max(p + 10, min(n, 5 * p))
    b2 = x_radius**2 + y_radius**2
    l8 = math.log(8.0 / delta)
    w2 = 8.0 * b2 / epsilon * (math.sqrt(2.0 * r * l8) + 2.0 * l8)
    thr = w2 + rng.laplace(0.0, 4.0 * b2 / epsilon) + 4.0 * b2 * math.log(1.0 / delta) / epsilon
    gram = A.T @ A
    if np.linalg.eigvalsh(gram)[0] <= thr:
        A = np.vstack([A, math.sqrt(w2) * np.eye(d)])
    sketch = rng.standard_normal((r, A.shape[0])) @ A
    return np.linalg.lstsq(sketch[:, :p], sketch[:, p], rcond=None)[0]


def dpgd(
    X: np.ndarray,
    y: np.ndarray,
    x_radius: float,
    y_bound: float,
    theta_radius: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    iterations: int = 30,
    step: float = 0.8,
) -> np.ndarray:
    """B4 DPGD (Cai, Wang, Zhang 2021, Algorithm 4.1) with a public step size.

    beta <- Pi_C(beta - eta (1/n) sum (x^T beta - y) x + w_t), w_t ~ N(0, s^2 I),
    s = eta B sqrt(2 ln(2T/delta)) T / (n eps), B = 4 (R + C R_x) R_x.
    """
    n, p = X.shape
    Xp = _project(X, x_radius)
    yc = np.clip(y, -y_bound, y_bound)
    bound = 4.0 * (y_bound + theta_radius * x_radius) * x_radius
    s = step * bound * math.sqrt(2.0 * math.log(2.0 * iterations / delta)) * iterations
    s /= n * epsilon
    beta = np.zeros(p)
    for _ in range(iterations):  # T public iterations
        grad = Xp.T @ (Xp @ beta - yc) / n
        beta = beta - step * grad + s * rng.standard_normal(p)
        norm = np.linalg.norm(beta)
        if norm > theta_radius:
            beta *= theta_radius / norm
    return beta


def functional_mechanism(
    X: np.ndarray,
    y: np.ndarray,
    x_radius: float,
    y_radius: float,
    epsilon: float,
    rng: np.random.Generator,
    theta_radius: float | None = None,
) -> np.ndarray:
    """B5 Functional Mechanism for least squares (Zhang et al. 2012), intended eps-DP.

    Laplace(2 (p+1)^2 / eps) on the coefficients of the quadratic objective (normalised data),
    ridge 4 sqrt(2) x that scale, spectral trimming, optional projection to ``theta_radius``.
    """
    n, p = X.shape
    Xn = _project(X, x_radius) / x_radius
    yn = np.clip(y, -y_radius, y_radius) / y_radius
    sens = 2.0 * (p + 1) ** 2
    lin = -2.0 * Xn.T @ yn + rng.laplace(0.0, sens / epsilon, p)
    noise = np.triu(rng.laplace(0.0, sens / epsilon, (p, p)))
    Q = Xn.T @ Xn + noise + np.triu(noise, 1).T
    Q += 4.0 * math.sqrt(2.0) * sens / epsilon * np.eye(p)
    vals, vecs = np.linalg.eigh(Q)
    keep = vals > 0
    th = -0.5 * vecs[:, keep] @ ((vecs[:, keep].T @ lin) / vals[keep])
    beta = th * y_radius / x_radius
    if theta_radius is not None:
        norm = np.linalg.norm(beta)
        if norm > theta_radius:
            beta *= theta_radius / norm
    return beta


def wpe(
    x: np.ndarray,
    y: np.ndarray,
    x0: float,
    tau: float,
    levels: int,
    epsilon: float,
    rng: np.random.Generator,
) -> float:
    """B6 WPE, 1-D Haar pointwise estimate at x0 plus Lap(6 tau 2^L / (n eps)), eps-DP.

    f(x0) = a_0 + sum_{l=0..L} b_{l,k_l} psi_{l,k_l}(x0) with empirical coefficients of the
    clipped data (x in [0, 1], y in [-tau, tau]); the result is clipped to [-tau, tau].
    """
    xc = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    yc = np.clip(np.asarray(y, dtype=float), -tau, tau)
    n = xc.size
    est = float(np.mean(yc))
    for level in range(levels + 1):
        m = 2**level
        k = min(int(math.floor(m * x0)), m - 1)
        u = m * xc - k
        psi = np.where((u >= 0) & (u < 0.5), 1.0, np.where((u >= 0.5) & (u < 1.0), -1.0, 0.0))
        if k == m - 1:
            psi = np.where(xc == 1.0, -1.0, psi)  # the last interval is closed
        u0 = m * x0 - k
        psi0 = 1.0 if u0 < 0.5 else -1.0
        est += m * float(np.mean(yc * psi)) * psi0  # 2^{l/2} squared
    est += rng.laplace(0.0, 6.0 * tau * 2**levels / (n * epsilon))
    return float(np.clip(est, -tau, tau))
