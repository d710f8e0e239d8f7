"""Standard errors of :class:`~privest.models.linear.PrivateLinearRegression` (AdaSSP) from
its releases (docs/central-models.md, "Standard errors, intervals and Wald tests").

The fit releases noisy A = X'X + E and b = X'y + e (AdaSSP), then, for inference only, with
:data:`INFERENCE_SHARE` of its zCDP budget: y'y (the share :data:`YY_SHARE` of it) and the
residual-weighted Gram M = sum_i r_i^2 x_i x_i' (the rest), where r_i = clip(y_i - x_i'theta,
-R, R) is the residual at the released ridge-free estimate theta = A^-1 b. theta is public
once released, and so is R = :data:`RESIDUAL_CLIP` x the residual sd read off the released
y'y, b and A (post-processing), never more than y_radius + B ||theta|| (which clips
nothing); adaptive composition in zCDP (Bun and Steinke 2016, Lemma 2.3). The rows r_i x_i
have norm <= R B, so M is released like X'X (Frobenius sensitivity sqrt(2) R^2 B^2).
Clipping at 3 sds loses 0.5% of E r^2 for normal residuals, more for heavier tails.

theta - theta_0 ~= A^-1 [(X'y - X'X theta_0) + e - E theta_0]: the sampling term has the
heteroscedasticity-robust covariance M (White's HC0; the records an iid sample), e has
s_xy^2 I and E has independent entries (sd s on the diagonal, s / sqrt(2) off it). The
covariance is a parametric simulation (Ferrando, Wang and Sheldon, AISTATS 2022, Sec. 3)
of the same ridge-free solve with the same eigenvalue floor: A* = A + E*,
b* = A theta + u* + e*, theta* = A*^-1 b*, with E*, e* of the noise's known law (continuous
Gaussian of the lattice noise's sd) and u* ~ N(0, M~), M~ the released M shrunk towards the
classical sigma^2 A by its known noise (:func:`robust_gram`; a noise-swamped M would
otherwise inflate the term). The spread of each coefficient is the 95% range of the draws
over 2 x 1.96 (the sd for a normal law; robust to the heavy tails of a near-singular solve),
the correlations those of the draws. Where A is well determined this is the first-order
sandwich A^-1 (M + s_xy^2 I + s^2/2 (||theta||^2 I + theta theta')) A^-1 (tested).

Where the noise of X'X is comparable to its smallest eigenvalue (lambda_min(A) below
:data:`UNSTABLE_RATIO` x the noise's spectral norm 2 sqrt(d) s / sqrt(2)), neither law is
right: the simulation around the noisy A misses the bias of the solve in the weak
directions (undercoverage, 0.83 on the ten diabetes features) and the first-order sandwich
overstates the spread (overcoverage, 0.99). There each standard error is the larger of the
two (conservative), and the results say so, in a note and an UnstableIntervalWarning
(docs/central-models.md gives the cells).

Those conservative standard errors make the normal-approximation Wald test reject a true
zero almost never. Where lambda_min(A) is below :data:`CALIBRATE_RATIO` x the noise's
spectral norm (a public rule), the p-values of the coefficients come from a null simulated
by the same simulation, and their intervals invert that test (:func:`calibrated_pivot`;
docs/central-models.md, "Calibrated Wald tests and intervals"; the simulation-calibrated
tests of Awan and Wang).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp

__all__ = [
    "INFERENCE_SHARE",
    "CalibratedPivot",
    "RESIDUAL_CLIP",
    "YY_SHARE",
    "calibrated_pivot",
    "calibrated_pvalues",
    "calibration_needed",
    "linear_inference",
    "noisy_square_sum",
    "residual_bound",
    "ridge_free_solve",
    "robust_gram",
    "simulated_cov",
]

#: share of the fit's zCDP rho spent on the releases only the standard errors need
INFERENCE_SHARE = 0.10
#: part of INFERENCE_SHARE that releases y'y (it sets the residual clip); the rest releases M
YY_SHARE = 0.2
#: residuals are clipped at this many residual sds (read off the released y'y)
RESIDUAL_CLIP = 3.0
#: draws of the parametric simulation
N_DRAWS = 2000
#: below this ratio of lambda_min(noisy X'X) to the noise's spectral norm, results_ warns
UNSTABLE_RATIO = 2.0
#: below this ratio the Wald p-values are calibrated by simulation (:func:`calibration_needed`)
CALIBRATE_RATIO = 10.0
#: the calibrated intervals' ends are found to this fraction of the first-order standard error
#: (far below the Monte Carlo error of an end from N_DRAWS draws)
BISECT_TOL = 1e-6
Z975 = float(norm.ppf(0.975))


def noisy_square_sum(
    yc: np.ndarray, y_radius: float, rho: float, rng: np.random.Generator
) -> tuple[float, float]:
    """y'y released under rho-zCDP (|y| <= y_radius, so y^2 in [0, y_radius^2]: replacement
    sensitivity y_radius^2). Returns the noisy sum and its noise sd."""
    slack = 1.0 + 4.0 * yc.size * 2.0**-52
    mech = lattice_gaussian_zcdp(rho, y_radius**2 * slack, 1)
    return float(mech.release(float(yc @ yc), rng)[()]), mech.sigma


def ridge_free_solve(A: np.ndarray, b: np.ndarray, floor: float) -> np.ndarray:
    """theta = A^-1 b with the eigenvalues of the symmetric A floored at ``floor`` (the fit's
    post-processing); A (..., d, d) and b (..., d) may carry a leading batch axis."""
    vals, vecs = np.linalg.eigh((A + np.swapaxes(A, -1, -2)) / 2.0)
    proj = np.einsum("...ji,...j->...i", vecs, b) / np.maximum(vals, floor)
    return np.einsum("...ij,...j->...i", vecs, proj)


def _residual_var(rel: dict[str, Any], theta: np.ndarray) -> float:
    """(y'y - 2 theta'X'y + theta'X'X theta) / n from the released statistics."""
    return float(rel["yy"] - 2.0 * theta @ rel["b"] + theta @ rel["S"] @ theta) / rel["n"]


def residual_bound(rel: dict[str, Any], theta: np.ndarray, y_radius: float) -> float:
    """The public clip R of the residuals at theta: RESIDUAL_CLIP x the residual sd from the
    released y'y, X'y and X'X (post-processing), at most y_radius + B ||theta||."""
    bound = y_radius + rel["x_radius"] * float(np.linalg.norm(theta))
    sigma2 = _residual_var(rel, theta)
    return min(RESIDUAL_CLIP * math.sqrt(sigma2), bound) if sigma2 > 0 else bound


def _sym_noise(sd: float, d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """k symmetric d x d matrices with independent N(0, sd^2) diagonal and N(0, sd^2 / 2)
    off-diagonal entries (the law of the noise of the released X'X)."""
    G = rng.standard_normal((k, d, d)) * (sd / 2.0)
    return G + np.swapaxes(G, 1, 2)  # off-diagonal variance sd^2 / 2, diagonal sd^2


def robust_gram(theta: np.ndarray, rel: dict[str, Any]) -> np.ndarray:
    """The sampling term's middle matrix: the released M shrunk towards the homoscedastic
    sigma^2 A (sigma^2 from the released y'y, X'y and X'X) by the positive-part
    James-Stein weight w = max(0, 1 - E||noise of M||_F^2 / ||M - sigma^2 A||_F^2), with
    E||noise||_F^2 = sd_m^2 d (d + 1) / 2 known; then projected on the positive semidefinite
    cone. Where M's noise swamps its heteroscedastic part, w -> 0 (the classical term)."""
    d = theta.size
    A = rel["S"]
    target = max(_residual_var(rel, theta), 0.0) * A
    gap = (rel["M"] + rel["M"].T) / 2.0 - target
    noise = rel["sd_m"] ** 2 * d * (d + 1) / 2.0
    w = max(0.0, 1.0 - noise / max(float(np.sum(gap**2)), 1e-300))
    vals, vecs = np.linalg.eigh(target + w * gap)
    return (vecs * np.maximum(vals, 0.0)) @ vecs.T


def _simulated_releases(
    truth: np.ndarray,
    gram: np.ndarray | None,
    rel: dict[str, Any],
    rng: np.random.Generator,
    draws: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(A*, b*) of ``draws`` simulated releases from a world whose X'X is the released A and
    whose coefficients are ``truth``: A* = A + E*, b* = A truth + u* + e*, u* ~ N(0, gram)
    (no sampling term if ``gram`` is None; module docstring)."""
    d = truth.size
    A = rel["S"]
    b = A @ truth + rel["sd_xy"] * rng.standard_normal((draws, d))
    if gram is not None:
        vals, vecs = np.linalg.eigh(gram)
        b += (rng.standard_normal((draws, d)) * np.sqrt(np.maximum(vals, 0.0))) @ vecs.T
    return A + _sym_noise(rel["sd_xx"], d, draws, rng), b


def simulated_cov(
    theta: np.ndarray,
    rel: dict[str, Any],
    rng: np.random.Generator,
    sampling: bool = True,
    draws: int = N_DRAWS,
) -> np.ndarray:
    """Cov(theta) by the parametric simulation of the module docstring, from released
    quantities: ``S`` (noisy X'X), ``M`` (noisy residual-weighted Gram), ``floor`` and the
    noise sds ``sd_xx`` (diagonal of X'X) and ``sd_xy``. ``sampling=False`` drops u* (the
    noise-only covariance, which undercovers the population value)."""
    d = theta.size
    gram = robust_gram(theta, rel) if sampling else None
    A_sim, b_sim = _simulated_releases(theta, gram, rel, rng, draws)
    delta = ridge_free_solve(A_sim, b_sim, rel["floor"]) - theta
    lo, hi = np.quantile(delta, [0.025, 0.975], axis=0)
    scale = (hi - lo) / (2.0 * Z975)
    corr = np.corrcoef(delta, rowvar=False) if d > 1 else np.ones((1, 1))
    return corr * np.outer(scale, scale)


def _floored_inverse(A: np.ndarray, floor: float) -> np.ndarray:
    """A^-1 of symmetric (k, d, d) matrices with eigenvalues floored at ``floor`` (the
    solve's post-processing, :func:`ridge_free_solve`)."""
    vals, vecs = np.linalg.eigh((A + np.swapaxes(A, -1, -2)) / 2.0)
    return (vecs / np.maximum(vals, floor)[:, None, :]) @ np.swapaxes(vecs, 1, 2)


def _first_order_var(a: np.ndarray, theta: np.ndarray, mid: np.ndarray, sd_xx: float) -> np.ndarray:
    """a' (mid + s^2/2 (||theta||^2 I + theta theta')) a, batched over rows a (k, d) of A^-1
    and theta (k, d): the first-order sandwich variance of a coefficient; ``mid`` = M~ +
    s_xy^2 I."""
    norm2 = np.sum(theta**2, axis=1) * np.sum(a**2, axis=1) + np.sum(a * theta, axis=1) ** 2
    return np.maximum(np.einsum("ki,ij,kj->k", a, mid, a) + sd_xx**2 / 2.0 * norm2, 1e-300)


def _wald_z(A_inv: np.ndarray, b: np.ndarray, mid: np.ndarray, sd_xx: float, j: int) -> np.ndarray:
    """Wald z of coefficient j: theta = A^-1 b over the standard error of the first-order
    sandwich (:func:`_first_order_var`), batched over A^-1 (k, d, d) and b (k, d)."""
    theta = np.einsum("kij,kj->ki", A_inv, b)
    return theta[:, j] / np.sqrt(_first_order_var(A_inv[:, j, :], theta, mid, sd_xx))


def calibration_needed(rel: dict[str, Any]) -> bool:
    """The public rule of the calibrated Wald tests: lambda_min of the released X'X below
    :data:`CALIBRATE_RATIO` x the noise's spectral norm 2 sqrt(d) s / sqrt(2), read off the
    releases only; above it the normal approximation is used."""
    d = rel["S"].shape[0]
    noise_norm = 2.0 * math.sqrt(d) * rel["sd_xx"] / math.sqrt(2.0)
    return bool(np.linalg.eigvalsh(rel["S"])[0] < CALIBRATE_RATIO * noise_norm)


def _restricted_family(
    A: np.ndarray, b: np.ndarray, floor: float, j: int
) -> tuple[np.ndarray, np.ndarray]:
    """The null worlds theta_j = c: (t0, v) with the restricted solve t(c) = t0 + c v
    (t_j = c, the rest the floored solve of A_kk t_k = b_k - A_kj c; affine in c)."""
    d = b.size
    keep = np.arange(d) != j
    F = _floored_inverse(A[np.ix_(keep, keep)][None], floor)[0]
    t0, v = np.zeros(d), np.zeros(d)
    t0[keep], v[keep], v[j] = F @ b[keep], -F @ A[keep, j], 1.0
    return t0, v


@dataclass(frozen=True)
class CalibratedPivot:
    """The simulated nulls of the calibrated Wald tests of every coefficient j and every
    hypothesised value c of theta_j, from one shared set of draws (docs/central-models.md,
    "Calibrated Wald tests and intervals"). Under theta_j = c the simulated estimate is
    affine in c, so its studentised pivot is (n0 + c n1) / sqrt(v0 + c v1 + c^2 v2) per
    draw; the observed one is (theta_j - c) / se_j. Post-processing of the releases."""

    theta: np.ndarray  # (d,) the ridge-free solve
    se: np.ndarray  # (d,) its first-order sandwich standard errors
    num: np.ndarray  # (2, d, draws): theta*_j - c = num[0] + c num[1]
    var: np.ndarray  # (3, d, draws): the simulated first-order variance, a quadratic in c

    def pvalues(self, c: np.ndarray) -> np.ndarray:
        """p_j(c) = (1 + #{|z*_j(c)| >= |z_j(c)|}) / (1 + draws) for c of shape (d, q)."""
        c = np.asarray(c, float)[:, None, :]
        z_obs = np.abs(self.theta[:, None] - c[:, 0, :]) / self.se[:, None]
        z_sim = (self.num[0][..., None] + c * self.num[1][..., None]) / np.sqrt(
            np.maximum(
                self.var[0][..., None] + c * (self.var[1][..., None] + c * self.var[2][..., None]),
                1e-300,
            )
        )
        hits = np.sum(np.abs(z_sim) >= z_obs[:, None, :], axis=1)
        return (1.0 + hits) / (1.0 + self.num.shape[2])

    def conf_int(self, alpha: float) -> np.ndarray:
        """(d, 2): per coefficient, the values c that the test does not reject at alpha
        (p_j(c) >= alpha), found outward from theta_j (p = 1) by doubling then bisection,
        with c = 0 decided by p_j(0) itself: 0 lies in the interval iff p_j(0) >= alpha.
        An end whose p never drops below alpha (alpha < 1 / (1 + draws)) is infinite."""
        d = self.theta.size
        side = np.repeat([[-1.0], [1.0]], d, axis=1)  # (2, d): lower, upper
        inner = np.tile(self.theta, (2, 1))
        outer = np.full((2, d), np.nan)
        on_side = side * -self.theta > 0  # 0 lies on this side of theta_j
        p0 = self.pvalues(np.zeros((d, 1)))[:, 0]
        outer[on_side & (p0 < alpha)[None]] = 0.0
        inner[on_side & (p0 >= alpha)[None]] = 0.0
        step = self.se[None] * np.ones((2, d))
        for _ in range(64):  # doubling: an outer point that the test rejects
            todo = np.isnan(outer)
            if not todo.any():
                break
            trial = inner + side * step
            rejected = self._p2(trial) < alpha
            outer[todo & rejected] = trial[todo & rejected]
            step = step * 2.0
        for _ in range(64):  # bisection between an accepted and a rejected point
            if not np.any(np.abs(outer - inner) > BISECT_TOL * self.se):  # NaN: unbounded
                break
            mid = np.where(np.isnan(outer), inner, (inner + outer) / 2.0)
            ok = self._p2(mid) >= alpha
            inner = np.where(ok, mid, inner)
            outer = np.where(ok, outer, mid)
        inner[np.isnan(outer)] = side[np.isnan(outer)] * np.inf
        return inner.T

    def subset(self, rows: slice) -> CalibratedPivot:
        """The pivot of the coefficients ``rows`` only."""
        return CalibratedPivot(
            self.theta[rows], self.se[rows], self.num[:, rows], self.var[:, rows]
        )

    def _p2(self, c: np.ndarray) -> np.ndarray:
        """p-values at the (2, d) lower and upper candidates."""
        return self.pvalues(c.T).T


def calibrated_pivot(
    theta: np.ndarray,
    rel: dict[str, Any],
    rng: np.random.Generator,
    draws: int = N_DRAWS,
    world_gram: np.ndarray | None = None,
) -> CalibratedPivot:
    """The simulated nulls of the calibrated Wald tests (docs/central-models.md, "Calibrated
    Wald tests and intervals"): the statistic is the Wald z with the first-order sandwich's
    standard error; the null world of theta_j = c has X'X = the released A and the
    restricted solve (theta_j = c, the rest A_kk^-1 (b_k - A_kj c)) as coefficients; each of
    ``draws`` simulated releases (:func:`_simulated_releases`, the sampling term M~) is
    solved and studentised like the real one. The noises of the simulated releases do not
    depend on the null: one set of draws (and one decomposition of the simulated X'X)
    serves every coefficient and value. ``world_gram`` replaces the null world's X'X (the
    simulated releases world_gram + E*, b* = world_gram theta_0(c) + u* + e*; the observed
    statistic and the restricted solve keep A): the benchmark's diagnostics of the null
    world (docs/central-models.md). Post-processing."""
    d = theta.size
    A, b, s2 = rel["S"], rel["b"], rel["sd_xx"] ** 2 / 2.0
    gram = robust_gram(theta, rel)
    mid = gram + rel["sd_xy"] ** 2 * np.eye(d)
    A_sim, noise = _simulated_releases(np.zeros(d), gram, rel, rng, draws)
    base = A if world_gram is None else world_gram
    A_sim += base - A
    inv_sim, inv = _floored_inverse(A_sim, rel["floor"]), _floored_inverse(A[None], rel["floor"])
    fam = [_restricted_family(A, b, rel["floor"], j) for j in range(d)]
    T0, V = np.array([f[0] for f in fam]), np.array([f[1] for f in fam])  # rows: j
    PA = inv_sim @ base
    G = np.einsum("kij,kj->ki", inv_sim, noise)[:, None, :] + np.einsum("kil,jl->kji", PA, T0)
    H = np.einsum("kil,jl->kji", PA, V)  # (draws, j, i): theta*_i = G + c H under theta_j = c
    se = np.sqrt(_first_order_var(inv[0], np.tile(theta, (d, 1)), mid, rel["sd_xx"]))
    a = np.swapaxes(inv_sim, 0, 1)  # (j, draws, i): row j of each simulated A^-1
    G, H = np.swapaxes(G, 0, 1), np.swapaxes(H, 0, 1)
    aa, ag, ah = np.sum(a * a, -1), np.sum(a * G, -1), np.sum(a * H, -1)
    q = np.einsum("jki,il,jkl->jk", a, mid, a)
    var = np.stack(
        [
            q + s2 * (aa * np.sum(G * G, -1) + ag**2),
            s2 * 2.0 * (aa * np.sum(G * H, -1) + ag * ah),
            s2 * (aa * np.sum(H * H, -1) + ah**2),
        ]
    )
    jj = np.arange(d)
    num = np.stack([G[jj, :, jj], H[jj, :, jj] - 1.0])
    return CalibratedPivot(theta, se, num, var)


def calibrated_pvalues(
    theta: np.ndarray, rel: dict[str, Any], rng: np.random.Generator, draws: int = N_DRAWS
) -> np.ndarray:
    """Two-sided p-values of theta_j = 0 from :func:`calibrated_pivot`:
    p = (1 + #{|z*| >= |z|}) / (1 + draws)."""
    return calibrated_pivot(theta, rel, rng, draws).pvalues(np.zeros((theta.size, 1)))[:, 0]


def linear_inference(
    rel: dict[str, Any], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(theta, Cov(theta), notes) of the ridge-free solve A^-1 b of the released statistics
    (the ridge of the fit shrinks coef_ by a bias the intervals would not cover); the notes
    flag a noisy X'X that is not well determined (module docstring)."""
    theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
    cov = simulated_cov(theta, rel, rng)
    d = theta.size
    noise_norm = 2.0 * math.sqrt(d) * rel["sd_xx"] / math.sqrt(2.0)  # semicircle edge
    vals, vecs = np.linalg.eigh(rel["S"])
    if vals[0] >= UNSTABLE_RATIO * noise_norm:
        return theta, cov, []
    # unstable: the simulation around the noisy A misses the solve's bias in the weak
    # directions; the wider of it and the first-order sandwich, coefficient by coefficient
    A_inv = (vecs / np.maximum(vals, rel["floor"])) @ vecs.T
    tt = (theta @ theta) * np.eye(d) + np.outer(theta, theta)
    mid = robust_gram(theta, rel) + rel["sd_xy"] ** 2 * np.eye(d) + rel["sd_xx"] ** 2 / 2 * tt
    scale = np.sqrt(np.maximum(np.diag(A_inv @ mid @ A_inv), np.diag(cov)) / np.diag(cov))
    note = (
        "unstable: the noise of X'X is comparable to its smallest eigenvalue; the standard "
        "errors are wide and conservative, the slopes' p-values and intervals simulated "
        "(more records, a larger epsilon or fewer, less collinear features help)"
    )
    return theta, cov * np.outer(scale, scale), [note]
