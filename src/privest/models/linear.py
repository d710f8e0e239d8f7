"""Private linear regression, the best available by default (docs/central-models.md).

``method="adassp"``: sufficient-statistics perturbation with a privately chosen ridge (AdaSSP,
Wang 2018, "Revisiting differentially private linear regression", Algorithm 2):

1. x~ = (x - m, c): features centred at the public box centre m, plus a public constant
   column c when ``fit_intercept`` (counted in the row bound B = ||(h, c)||, h the box
   half-widths); y~ = y - m_y with |y~| <= h_y (centre and half-width of ``y_bounds``).
2. release lambda_min(X~^T X~) + noise (L2 sensitivity B^2 under replacement: x'x'^T - x x^T
   has eigenvalues in [-B^2, B^2], Weyl), and lower it by 1.645 sds (a 95% bound);
3. release X~^T X~ as the vector (diagonal, sqrt(2) x upper triangle), whose L2 norm is the
   Frobenius norm, with sensitivity ||x x^T - x'x'^T||_F <= sqrt(2) B^2;
4. release X~^T y~, sensitivity ||y x - y'x'|| <= 2 B h_y;
5. ridge lambda = max(0, sqrt(d ln(2 d^2 / rho)) sigma_XX - lambda_min_lower), rho = 0.05
   (Wang 2018, Alg. 2, line 3 with his sigma written as ours), and theta = (noisy X^T X +
   lambda I)^{-1} noisy X^T y, with eigenvalues floored at a small positive level
   (post-processing).

Every release is discrete Gaussian noise on a public lattice (float-safe; docs/randomness.md),
calibrated in zCDP (shares 0.2 / 0.4 / 0.4 of rho, where rho is the largest zCDP level whose
conversion meets (epsilon, delta)); zCDP composes by addition (Bun and Steinke 2016, Lemma
2.3), so the whole fit is (epsilon, delta)-DP. Neighbours differ in one record (replacement).

``method="eptr"`` fits :class:`~privest.models.eptr_ols.EPTRLinearRegression` (tight constants,
private c0) on the same centred rows. ``method="auto"`` applies :func:`choose_linear_method`, a
function of public inputs only (n, p, epsilon, delta and the bounds), never of the data.
With an intercept, ``"auto"`` first applies the public rule :func:`constant_beats_slopes`
(issue 31): where noisy slopes are predicted not to beat the private constant predictor at a
public reference, it releases the private mean of y with the whole budget (``method_`` is
``"constant"``, ``fallback_``, :class:`~privest.errors.ConstantFallbackWarning`). Where it
picks AdaSSP, it centres y at a private mean (share :data:`Y_MEAN_SHARE` of rho), so that the
ridge shrinks towards the private constant rather than towards the centre of ``y_bounds``,
and still falls back to the constant when the released quantities predict that the noisy
slopes explain less than :data:`FALLBACK_RATIO` times the variance their noise adds (then
the inference share buys a second private mean; post-processing and adaptive composition;
docs/central-models.md).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from privest._threads import fit_threads
from privest.accounting.base import ApproxDP
from privest.accounting.budget import charge
from privest.accounting.gaussian import gaussian_sigma
from privest.accounting.zcdp import zcdp_rho_for
from privest.errors import (
    BoundsError,
    ConstantFallbackWarning,
    UnstableIntervalWarning,
    ValidationError,
)
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.central import feature_bounds, public_design
from privest.models.eptr_ols import EPTRLinearRegression, ols_local_sensitivity
from privest.models.inference import central_results, noisy_gram
from privest.models.linear_inference import (
    INFERENCE_SHARE,
    YY_SHARE,
    calibrated_pivot,
    calibration_needed,
    linear_inference,
    noisy_square_sum,
    residual_bound,
    ridge_free_solve,
)
from privest.rng import resolve_rng
from privest.sklearn_contract import (
    PrivateEstimatorMixin,
    validate_fit_data,
    validate_predict_data,
    warn_privacy_habits,
)
from privest.validation import EPSILON_RANGE, check_bounds, check_delta, check_epsilon

__all__ = [
    "PrivateLinearRegression",
    "adassp",
    "choose_linear_method",
    "constant_beats_slopes",
    "public_design",
]

METHODS = ("auto", "adassp", "eptr")
#: zCDP shares of the three AdaSSP releases: lambda_min, X^T X, X^T y
ADASSP_SHARES = (0.2, 0.4, 0.4)
#: zCDP share of the private mean of y that centres the response in ``method="auto"``
Y_MEAN_SHARE = 0.1
#: ``method="auto"`` falls back to the private constant unless the slopes' predicted explained
#: variance exceeds this multiple of their predicted noise variance (the excess): the noisy
#: explained variance is inflated by about one excess, so 2 is break-even; 3 keeps the slopes
#: only when their estimated gain is about two of its noise sds (sqrt(2 / d) excess, d ~ 10)
#: above zero (issue 31: at 2, noisy slopes were kept in ~10% of weak-signal fits)
FALLBACK_RATIO = 3.0
#: the sd of a rho-zCDP Gaussian is sensitivity / sqrt(2 rho): the factor 1 / sqrt(2)
Y_SHARE_SD = 1.0 / math.sqrt(2.0)
#: failure probability of the ridge choice (Wang 2018, Alg. 2)
ADASSP_FAILURE = 0.05
#: share of the variance of a response uniform on ``y_bounds`` that the reference slopes of
#: :func:`constant_beats_slopes` explain (a modest signal: the rule guards the weak ones)
REFERENCE_R2 = 0.25


def choose_linear_method(
    n: int,
    p: int,
    epsilon: float,
    delta: float,
    bounds: Any,
    y_bounds: Any,
    fit_intercept: bool = True,
) -> str:
    """The public rule of ``method="auto"``: ``"adassp"`` or ``"eptr"``, from public inputs only.

    It compares the two methods' coefficient noise sd at a public reference design (features
    independent and uniform on the box, so lambda_min(X^T X)/n = min half-width^2 / 3, and a
    coefficient vector of norm y half-width / min half-width): ePTR at c0 = half that level
    (analytic Gaussian at 0.9 epsilon / 2), AdaSSP through the noise of X^T y and of X^T X
    times the coefficient norm, divided by n lambda_min. ePTR pays for its release test
    (predicted release probability at the reference design); ties go to AdaSSP, which has no
    release test and shapes its noise by the data's own X^T X. Both predicted risks are capped
    at the squared reference coefficient norm (ePTR's bottom; AdaSSP's ridge shrinks to 0).
    """
    from privest.mechanisms.eptr import release_probability

    b = check_bounds(bounds, p)
    yb = check_bounds(y_bounds, 1, "y_bounds")[0]
    d = public_design(b, yb, fit_intercept)
    lam_ref = d["min_half"] ** 2 / 3.0
    theta_norm = d["y_radius"] / d["min_half"]
    rho = zcdp_rho_for(epsilon, delta)
    s_xx = math.sqrt(2.0) * d["x_radius"] ** 2 / math.sqrt(2.0 * ADASSP_SHARES[1] * rho)
    s_xy = 2.0 * d["x_radius"] * d["y_radius"] / math.sqrt(2.0 * ADASSP_SHARES[2] * rho)
    adassp_sd = (s_xy + s_xx * theta_norm) / (n * lam_ref)
    c0 = lam_ref / 2.0
    alpha = ols_local_sensitivity(n, d["x_radius"], 2 * theta_norm, c0, d["y_radius"], "tight")
    eps2 = 0.9 * epsilon
    if min(eps2 / 2.0, 0.1 * epsilon) < EPSILON_RANGE[0]:
        return "adassp"  # ePTR's c0 or Gaussian step would fall below the accepted epsilon
    eptr_sd = gaussian_sigma(eps2 / 2.0, delta, alpha, "analytic")
    gamma = max(n * (lam_ref - c0) - d["x_radius"] ** 2, 0.0) / d["x_radius"] ** 2
    q = float(release_probability(gamma, eps2, delta))
    eptr_risk = q * eptr_sd**2 + (1.0 - q) * theta_norm**2
    adassp_risk = min(adassp_sd**2, theta_norm**2)  # the ridge shrinks towards 0
    return "eptr" if eptr_risk < adassp_risk else "adassp"


def constant_beats_slopes(
    n: int,
    p: int,
    epsilon: float,
    delta: float,
    bounds: Any,
    y_bounds: Any,
    inference_share: float = INFERENCE_SHARE,
) -> bool:
    """The public rule of ``method="auto"`` (issue 31): True when, at a public reference, the
    private constant predictor (the private mean of y with the whole budget) is predicted to
    have a lower test MSE than ``"auto"``'s AdaSSP fit (with an intercept). Public inputs only.

    Reference: features independent and uniform on the box (as in
    :func:`choose_linear_method`), a response uniform on ``y_bounds`` of which the slopes
    explain :data:`REFERENCE_R2` of the variance, spread evenly over the features. The slopes'
    predicted excess risk is the ridge regression risk at that design, sum_j s_j [(lambda
    t_j / (n s_j + lambda))^2 + sigma^2 / (n s_j + lambda)^2] (s_j = h_j^2 / 3, t_j the
    reference slopes, lambda AdaSSP's ridge at the reference lambda_min, sigma^2 the noise
    variance of X^T y plus that of X^T X times ||t||^2); they gain the explained variance
    minus that. The intercept of ``"auto"`` carries the error of its private mean
    (:data:`Y_MEAN_SHARE` of rho) plus the constant column's noise; the constant's, that of
    a mean with all of rho. The constant wins when its intercept advantage exceeds the gain.
    """
    b = check_bounds(bounds, p)
    yb = check_bounds(y_bounds, 1, "y_bounds")[0]
    d = public_design(b, yb, True)
    rho_all = zcdp_rho_for(epsilon, delta)
    rho = (1.0 - Y_MEAN_SHARE) * (1.0 - inference_share) * rho_all
    r_lam, r_xx, r_xy = (s * rho for s in ADASSP_SHARES)
    B2, hy, c2, dims = d["x_radius"] ** 2, d["y_radius"], d["const"] ** 2, d["dims"]
    sd_xx = B2 / math.sqrt(2.0 * r_xx)  # an off-diagonal entry of the noisy X^T X
    sd_xy = 2.0 * math.sqrt(B2) * hy / math.sqrt(2.0 * r_xy)
    lam_lower = max(n * d["min_half"] ** 2 / 3.0 - 1.645 * B2 / math.sqrt(2.0 * r_lam), 0.0)
    ridge = max(0.0, math.sqrt(dims * math.log(2.0 * dims**2 / ADASSP_FAILURE)) * sd_xx - lam_lower)
    s = ((b[:, 1] - b[:, 0]) / 2.0) ** 2 / 3.0
    t2 = REFERENCE_R2 * hy**2 / 3.0 / p / s  # squared reference slopes
    noise = sd_xy**2 + sd_xx**2 * float(np.sum(t2))
    den = n * s + ridge
    gain = float(np.sum(s * t2 - s * (ridge**2 * t2 + noise) / den**2))
    var_mean = (Y_SHARE_SD * 2.0 * hy / n) ** 2 / rho_all  # a private mean with all of rho
    intercept_cost = var_mean / Y_MEAN_SHARE + c2 * noise / (n * c2 + ridge) ** 2 - var_mean
    return intercept_cost >= gain


def private_mean_response(
    y: np.ndarray, y_bounds: np.ndarray, rho: float, rng: np.random.Generator
) -> float:
    """rho-zCDP mean of y in public [lo, hi] (sum with replacement sensitivity hi - lo, n
    public), clipped to the bounds (post-processing): the private constant predictor."""
    lo, hi = float(y_bounds[0]), float(y_bounds[1])
    slack = 1.0 + 4.0 * y.size * 2.0**-52
    mech = lattice_gaussian_zcdp(rho, (hi - lo) * slack, 1)
    noisy = float(mech.release(float(np.sum(y - lo)), rng)[()])
    return float(np.clip(lo + noisy / y.size, lo, hi))


def adassp(
    Xc: np.ndarray,
    yc: np.ndarray,
    x_radius: float,
    y_radius: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    inference_share: float = 0.0,
    rho: float | None = None,
) -> dict[str, Any]:
    """AdaSSP (module docstring) on rows with ||x|| <= x_radius and |y| <= y_radius.

    ``rho`` (zCDP) overrides the level met by (epsilon, delta) when AdaSSP is one release
    among several. ``inference_share`` > 0 keeps that share of rho for the releases the
    standard errors need (:func:`inference_releases`). Returns the coefficients, the public
    ridge and noise sds and the released statistics (all DP outputs).
    """
    n, d = Xc.shape
    rho = zcdp_rho_for(epsilon, delta) if rho is None else rho
    rho_inference = inference_share * rho
    rho -= rho_inference
    r_lam, r_xx, r_xy = (s * rho for s in ADASSP_SHARES)
    b2 = x_radius**2
    slack = 1.0 + 8.0 * (n + d) * 2.0**-52 * n  # float error of forming the sums (twice)
    m_lam = lattice_gaussian_zcdp(r_lam, b2 * slack, 1)
    m_xy = lattice_gaussian_zcdp(r_xy, 2.0 * x_radius * y_radius * slack, d)
    S = Xc.T @ Xc
    S = (S + S.T) / 2.0
    lam = float(np.linalg.eigvalsh(S)[0])
    lam_noisy = float(m_lam.release(lam, rng)[()])
    lam_lower = max(lam_noisy - 1.645 * m_lam.sigma, 0.0)
    S_noisy, sigma_xx = noisy_gram(S, x_radius, r_xx, n, rng)
    b_noisy = m_xy.release(Xc.T @ yc, rng)
    ridge = max(0.0, math.sqrt(d * math.log(2.0 * d * d / ADASSP_FAILURE)) * sigma_xx - lam_lower)
    vals, vecs = np.linalg.eigh(S_noisy + ridge * np.eye(d))
    floor = max(1e-6 * b2 * n, sigma_xx)  # post-processing: keep the system well posed
    vals = np.maximum(vals, floor)
    theta = vecs @ ((vecs.T @ b_noisy) / vals)
    # predicted excess test MSE from the noise, E[(x^T (theta_hat - theta))^2], at the noisy
    # Gram's spectrum (released quantities only): sum_i (v_i / n) / v_i^2 (sd_xy^2 + sd_xx^2
    # ||theta||^2) with v_i the ridged eigenvalues
    noise_var = m_xy.sigma**2 + sigma_xx**2 * float(theta @ theta)
    spectrum = np.maximum(vals - ridge, 0.0) / n
    excess = float(np.sum(spectrum / vals**2)) * noise_var
    explained = float(np.sum(spectrum * (vecs.T @ theta) ** 2))
    released = {
        "S": S_noisy,
        "b": b_noisy,
        "floor": floor,
        "sd_xx": math.sqrt(2.0) * sigma_xx,
        "sd_xy": m_xy.sigma,
        "x_radius": x_radius,
        "n": n,
    }
    if rho_inference:
        released.update(inference_releases(Xc, yc, released, y_radius, rho_inference, rng))
    return {
        "theta": theta,
        "ridge": ridge,
        "predicted_excess": excess,
        "predicted_explained": explained,
        "xty": b_noisy,
        "lambda_min_lower": lam_lower,
        "noise_sds": (m_lam.sigma, math.sqrt(2.0) * sigma_xx, m_xy.sigma),
        "released": released,
    }


def inference_releases(
    Xc: np.ndarray,
    yc: np.ndarray,
    rel: dict[str, Any],
    y_radius: float,
    rho: float,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """The releases only the standard errors need, rho-zCDP in all, after AdaSSP's
    (adaptive composition; :mod:`privest.models.linear_inference`): y'y (YY_SHARE of rho),
    then M = sum_i r_i^2 x_i x_i' with r_i the residual at the released ridge-free estimate,
    clipped to the public R (the rest of rho). Returns the two releases and R."""
    n = yc.size
    yy = noisy_square_sum(yc, y_radius, YY_SHARE * rho, rng)[0]
    theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])  # post-processing from here
    R = residual_bound({**rel, "yy": yy}, theta, y_radius)
    W = Xc * np.clip(yc - Xc @ theta, -R, R)[:, None]
    M = W.T @ W
    M_noisy, sd_off = noisy_gram(
        (M + M.T) / 2.0, R * rel["x_radius"], (1.0 - YY_SHARE) * rho, n, rng
    )
    return {"yy": yy, "M": M_noisy, "sd_m": math.sqrt(2.0) * sd_off, "residual_clip": R}


class PrivateLinearRegression(PrivateEstimatorMixin, RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP linear regression (scikit-learn style); AdaSSP by default.

    Parameters
    ----------
    epsilon, delta : the privacy target of the whole fit (delta in (0, 1)).
    bounds : public box of the features: one ``(lo, hi)`` pair for every column or one pair
        per column.
    y_bounds : public ``(lo, hi)`` of the response.
    method : ``"auto"`` (default; :func:`choose_linear_method`, public inputs only),
        ``"adassp"`` or ``"eptr"``.
    fit_intercept : fit an intercept through a public constant column (module docstring).
    clip : True clips records to the public boxes; False (default) raises
        :class:`BoundsError` for records outside them.
    random_state : None (secure randomness), an int seed or a Generator.
    budget : a :class:`~privest.Budget` charged ``guarantee`` at each ``fit``, before the
        data are read (refused fits release nothing); shared, never copied, by
        ``sklearn.base.clone``, so a grid search spends from it once per fit.
    domain : a :class:`~privest.Domain` giving the features' ``bounds`` (instead of, or in
        agreement with, ``bounds=``; swap neighbours only).
    inference : ``"sandwich"`` (default) spends 10% of the fit's zCDP budget on y'y and the
        residual-weighted Gram, which the standard errors need (AdaSSP only;
        :mod:`privest.models.linear_inference`); ``"none"`` gives the estimate all of it.

    Fitted attributes (all public): ``coef_``, ``intercept_``, ``method_`` (the method
    used), ``ridge_`` (AdaSSP), ``released_`` (False only when ePTR output its bottom),
    ``fallback_`` (True when ``"auto"`` output the private constant predictor: zero slopes,
    the private mean of y as intercept; a ConstantFallbackWarning says so), ``guarantee_``,
    ``results_`` (:class:`~privest.learn.results.FitResults`: standard errors by the
    noise-aware sandwich of :mod:`privest.models.linear_inference`, NaN for ePTR, after a
    fallback or with ``inference="none"``).
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        bounds: Any = None,
        y_bounds: Any = None,
        method: str = "auto",
        fit_intercept: bool = True,
        clip: bool = False,
        random_state: Any = None,
        budget: Any = None,
        domain: Any = None,
        inference: str = "sandwich",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.y_bounds = y_bounds
        self.method = method
        self.fit_intercept = fit_intercept
        self.clip = clip
        self.random_state = random_state
        self.budget = budget
        self.domain = domain
        self.inference = inference

    @property
    def guarantee(self) -> ApproxDP:
        """(epsilon, delta)-DP for the whole fit (zCDP composition for AdaSSP; basic
        composition for ePTR with its private c0)."""
        return ApproxDP(self.epsilon, self.delta)

    def _check(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        check_epsilon(self.epsilon)
        check_delta(self.delta, allow_zero=False)
        if self.method not in METHODS:
            raise ValidationError(f"method: {self.method!r}; accepted: {', '.join(METHODS)}")
        if self.inference not in ("sandwich", "none"):
            raise ValidationError(f"inference: {self.inference!r}; accepted: 'sandwich', 'none'")
        X, y = validate_fit_data(self, X, y)
        bounds = feature_bounds(self.domain, self.bounds, getattr(self, "feature_names_in_", None))
        if bounds is None or self.y_bounds is None:
            raise BoundsError(
                "bounds and y_bounds: public bounds of the features and of the response are "
                "required (they are never read off the data)"
            )
        b = check_bounds(bounds, X.shape[1])
        yb = check_bounds(self.y_bounds, 1, "y_bounds")[0]
        outside = np.any((X < b[:, 0]) | (X > b[:, 1])) or np.any((y < yb[0]) | (y > yb[1]))
        if outside and not self.clip:
            raise BoundsError(
                "X/y: some values lie outside the public bounds/y_bounds; pass clip=True to "
                "clip them to the boxes"
            )
        return np.clip(X, b[:, 0], b[:, 1]), np.clip(y, yb[0], yb[1]), b, yb

    def chosen_method(self, n: int, p: int) -> str:
        """The method ``fit`` uses for n rows and p features (public: reads no data)."""
        if self.method != "auto":
            return self.method
        bounds = feature_bounds(self.domain, self.bounds, getattr(self, "feature_names_in_", None))
        share = INFERENCE_SHARE if self.inference == "sandwich" else 0.0
        args = (n, p, self.epsilon, self.delta, bounds, self.y_bounds)
        if self.fit_intercept and constant_beats_slopes(*args, share):
            return "constant"
        return choose_linear_method(*args, self.fit_intercept)

    def fit(self, X: Any, y: Any) -> PrivateLinearRegression:
        """Fit once under (epsilon, delta); returns self."""
        with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
            warn_privacy_habits(self, self.epsilon, self.delta)
            charge(
                self.budget,
                self.guarantee,
                label=type(self).__name__,
                mechanism="private linear regression",
            )
            X, y, b, yb = self._check(X, y)
            n, p = X.shape
            design = public_design(b, yb, self.fit_intercept)
            Xc = X - design["centre"]
            if self.fit_intercept:
                Xc = np.hstack([Xc, np.full((n, 1), design["const"])])
            rng = resolve_rng(self.random_state)
            self.method_ = self.chosen_method(n, p)
            self.ridge_ = None
            self.released_ = True
            self.fallback_ = False
            rho_all = zcdp_rho_for(self.epsilon, self.delta)
            share = INFERENCE_SHARE if self.inference == "sandwich" else 0.0
            if self.method_ == "constant":  # the public rule: the private mean with all of rho
                design["y_centre"] = private_mean_response(y, yb, rho_all, rng)
                theta = np.zeros(Xc.shape[1])
                self._say_fallback("the public rule predicts that noisy slopes cannot beat it", 3)
            elif self.method_ == "adassp" and self.method == "auto" and self.fit_intercept:
                theta = self._auto_adassp(Xc, y, design, yb, rho_all, share, rng)
            elif self.method_ == "adassp":
                out = adassp(
                    Xc,
                    y - design["y_centre"],
                    design["x_radius"],
                    design["y_radius"],
                    self.epsilon,
                    self.delta,
                    rng,
                    share,
                    rho=rho_all,
                )
                theta, self.ridge_, self.released_stats_ = (
                    out["theta"],
                    out["ridge"],
                    out["released"],
                )
            else:
                theta_radius = 2.0 * design["y_radius"] / design["min_half"]
                model = EPTRLinearRegression(
                    epsilon=self.epsilon,
                    delta=self.delta,
                    x_radius=design["x_radius"] * (1 + 1e-12),
                    theta_radius=theta_radius,
                    y_radius=design["y_radius"] * (1 + 1e-12),
                    clip=True,
                    random_state=rng,
                    inference="none",  # its results_ are not used here
                ).fit(Xc, y - design["y_centre"])
                theta, self.released_ = model.coef_, model.released_
            self.coef_ = theta[:p].copy()
            const = theta[p] * design["const"] if self.fit_intercept else 0.0
            self.intercept_ = float(design["y_centre"] + const - self.coef_ @ design["centre"])
            self.guarantee_ = self.guarantee
            ok = self.method_ == "adassp" and self.inference == "sandwich" and not self.fallback_
            what = "fell back to the private constant" if self.fallback_ else self.method_
            why = [] if ok else [f"no standard errors ({what}, inference={self.inference!r})"]
            cov = null_p = pivot = None
            if ok:
                theta, cov, why = linear_inference(self.released_stats_, rng)
                if why:
                    msg = f"PrivateLinearRegression results_: {why[0]}"
                    warnings.warn(msg, UnstableIntervalWarning, 2)
                null_p = np.full(theta.size, np.nan)  # NaN: the normal approximation
                if calibration_needed(self.released_stats_):  # a public rule (released scales)
                    pivot = calibrated_pivot(theta, self.released_stats_, rng).subset(slice(0, p))
                    null_p = pivot.pvalues(np.zeros((p, 1)))[:, 0]
            how = "noise-aware sandwich (HC0 sampling, simulated privacy noise)" if ok else "none"
            args = (theta, cov, design, n, self.method_, how, why, null_p, pivot)
            self.results_ = central_results(self, *args)
            return self

    def _auto_adassp(
        self,
        Xc: np.ndarray,
        y: np.ndarray,
        design: dict,
        yb: np.ndarray,
        rho_all: float,
        share: float,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """``method="auto"`` with AdaSSP (module docstring): y centred at a private mean
        (:data:`Y_MEAN_SHARE` of rho), so that the ridge shrinks towards the private constant;
        AdaSSP on the rest but for the inference ``share``; then the slopes are kept only if,
        judged on released quantities only, they explain more than FALLBACK_RATIO times the
        variance their noise adds. Kept: the inference share goes to the standard errors'
        releases. Else: to a second private mean, and the constant is the inverse-variance
        pool of the two means and the mean in the constant column's noisy X^T y (adaptive
        composition; post-processing). Sets ``fallback_``, ``ridge_``, ``released_stats_``."""
        n, p = Xc.shape[0], Xc.shape[1] - 1
        rho = (1.0 - Y_MEAN_SHARE) * rho_all
        y_mean = private_mean_response(y, yb, Y_MEAN_SHARE * rho_all, rng)
        design["y_centre"] = y_mean
        design["y_radius"] = max(yb[1] - y_mean, y_mean - yb[0])
        yc = y - y_mean
        x_r, y_r = design["x_radius"], design["y_radius"]
        out = adassp(Xc, yc, x_r, y_r, self.epsilon, self.delta, rng, rho=(1.0 - share) * rho)
        theta, self.ridge_, self.released_stats_ = out["theta"], out["ridge"], out["released"]
        if out["predicted_explained"] > FALLBACK_RATIO * out["predicted_excess"]:
            if share:
                self.released_stats_.update(
                    inference_releases(Xc, yc, out["released"], y_r, share * rho, rng)
                )
            return theta
        unit = (Y_SHARE_SD * (yb[1] - yb[0]) / n) ** 2  # a mean's variance times its rho
        means = [(y_mean, unit / (Y_MEAN_SHARE * rho_all))]
        if share:
            means.append((private_mean_response(y, yb, share * rho, rng), unit / (share * rho)))
        c = design["const"]
        means.append((y_mean + out["xty"][p] / (c * n), (out["noise_sds"][2] / (c * n)) ** 2))
        w = np.array([1.0 / v for _, v in means])
        pooled = float(np.dot(w, [m for m, _ in means]) / w.sum())
        constant = np.zeros_like(theta)
        constant[p] = (pooled - y_mean) / c
        self._say_fallback("its released quantities predict more noise than signal", 4)
        return constant

    def _say_fallback(self, why: str, stacklevel: int) -> None:
        """Set ``fallback_`` and warn (ConstantFallbackWarning; no data value is named)."""
        self.fallback_ = True
        warnings.warn(
            f"PrivateLinearRegression output the private mean of y (zero slopes; fallback_ is "
            f"True): at this n, epsilon and these bounds {why}",
            ConstantFallbackWarning,
            stacklevel=stacklevel,
        )

    def predict(self, X: Any) -> np.ndarray:
        """X @ coef_ + intercept_."""
        X = validate_predict_data(self, X, "coef_")
        return X @ self.coef_ + self.intercept_
