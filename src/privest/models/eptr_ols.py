"""ePTR ordinary least squares (paper 001, Section 4, Algorithm 4), with tightened constants.

Steps (all radii public; the paper takes R_y := R_x R_theta):

1. x_i <- Pi_{R_x}(x_i) (radial projection), y_i <- clip(y_i, -R_y, R_y);
2. S = sum_i x_i x_i^T, lambda = lambda_min(S);
3. theta_hat = Pi_{R_theta}(S^{-1} sum_i y_i x_i);
4. gamma = (lambda - c0 n - L)_+ / L, with L = 2 R_x^2 in the paper (eq. 18);
5. alpha = 4 R_x^2 R_theta / (c0 n) in the paper;
6. ePTR (Algorithm 2), its Gaussian step at (eps/2, delta).

``constants="tight"`` (the default) replaces three of the paper's constants; ``"paper"`` keeps
them (the reproductions use it). Each replacement, with its proof sketch:

* **Lipschitz constant L = R_x^2.** Replacing row x by x' changes S by x'x'^T - x x^T, whose
  eigenvalues lie in [-||x||^2, ||x'||^2] (a difference of two rank-one PSD matrices), so its
  spectral norm is at most R_x^2 and by Weyl's inequality |lambda(S) - lambda(S')| <= R_x^2.
  Hence gamma = (lambda - c0 n - R_x^2)_+ / R_x^2 moves by at most 1 (condition (L) of
  Definition 2.1), and gamma > 0 gives lambda(S), lambda(S') > c0 n for every neighbour.
* **alpha = (R_x^2 R_theta + 2 R_x R_y) / (c0 n)** with a public ``y_radius`` R_y. Let a, b be
  the unprojected estimates on X and X' (S a = X^T y). Then S'(b - a) = (x x^T - x'x'^T) a +
  (y' x' - y x), and ||(x x^T - x'x'^T) a|| <= R_x^2 ||a|| (same spectral bound), ||y'x' - y x||
  <= 2 R_x R_y, so ||a - b|| <= (R_x^2 ||a|| + 2 R_x R_y) / (c0 n); writing the identity
  around the estimate of smaller norm gives the bound with min(||a||, ||b||). If that minimum
  is <= R_theta the bound is <= alpha and the projection is non-expansive. If both norms exceed
  R_theta (say R_theta < ||a|| <= ||b||), ||Pi(a) - Pi(b)|| <= R_theta ||a - b|| /
  sqrt(||a|| ||b||) <= R_theta (R_x^2 ||a|| + 2 R_x R_y) / (c0 n ||a||) <= alpha.
* **Analytic Gaussian step.** Step (b) of the proof of Theorem 2.2 only needs an (eps/2,
  delta)-DP Gaussian step; the classical sigma = 2 alpha c_delta / eps is far more than that
  (docs/eptr.md), so the step uses the analytic Gaussian mechanism (Balle and Wang 2018, Thm 8)
  on the float-safe lattice. The exact divergence of the mixed output is checked in the tests.

Private c0 (``c0="auto"``, :func:`auto_c0`): a stated share ``c0_share`` of epsilon releases
lambda_min(S) with lattice Laplace noise (replacement sensitivity R_x^2, proof above), a lower
confidence bound is taken, and c0 is chosen by a public rule from that released number; the
remaining budget runs ePTR. Basic composition gives (epsilon, delta) in total.

The paper's alpha when ||S^{-1} X^T y|| > R_theta: the same argument with ||x x^T a||, ||x' x'^T
a|| bounded separately gives (2 R_x^2 ||a|| + 2 R_x R_y)/(c0 n) <= 4 R_x^2 R_theta / (c0 n) at
R_y = R_x R_theta, so ``local_sensitivity_factor=1`` is private with either set of constants.
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
from privest.errors import BoundsError, NothingReleasedWarning, ValidationError
from privest.mechanisms.eptr import (
    check_eptr_parameters,
    eptr_domain,
    eptr_noise_scale,
    eptr_step,
    ptr_threshold,
    release_probability,
)
from privest.mechanisms.samplers.lattice import LatticeLaplace
from privest.models.central import box_radius, feature_bounds
from privest.models.eptr_inference import (
    INFERENCE_SHARE,
    eptr_ols_results,
    inference_share,
    projected_moments,
    sandwich_cov,
    sandwich_release,
    spent_text,
)
from privest.projection import project_rows
from privest.rng import resolve_rng
from privest.sklearn_contract import (
    PrivateEstimatorMixin,
    validate_fit_data,
    validate_predict_data,
    warn_privacy_habits,
)
from privest.validation import check_bounds, check_positive

__all__ = [
    "EPTRLinearRegression",
    "auto_c0",
    "lambda_min_lower",
    "ols_local_sensitivity",
    "ols_statistics",
    "projected_moments",
]

CONSTANTS = ("tight", "paper")
#: one-sided confidence level of the lower bound on lambda_min in ``c0="auto"``
AUTO_CONF_LEVEL = 0.95
#: ``c0="auto"`` outputs the bottom up front unless its predicted risk is this much below R_y^2
AUTO_MIN_GAIN = 0.01


def _check_constants(constants: str) -> str:
    if constants not in CONSTANTS:
        raise ValidationError(f"constants: {constants!r} is not accepted; use 'tight' or 'paper'")
    return constants


def ols_local_sensitivity(
    n: int,
    x_radius: float,
    theta_radius: float,
    c0: float,
    y_radius: float | None = None,
    constants: str = "paper",
) -> float:
    """alpha: the paper's 4 R_x^2 R_theta / (c0 n) (Algorithm 4, step 5; 0.02 at n=8000,
    c0=0.4, R_x=4) or the tight (R_x^2 R_theta + 2 R_x R_y) / (c0 n) (module docstring)."""
    if _check_constants(constants) == "paper":
        return 4.0 * x_radius**2 * theta_radius / (c0 * n)
    ry = x_radius * theta_radius if y_radius is None else y_radius
    return (x_radius**2 * theta_radius + 2.0 * x_radius * ry) / (c0 * n)


def gamma_scale(x_radius: float, constants: str = "paper") -> float:
    """The Lipschitz constant L of lambda_min(S) used in gamma: 2 R_x^2 (paper) or R_x^2."""
    return (2.0 if _check_constants(constants) == "paper" else 1.0) * x_radius**2


def ols_statistics(
    X: np.ndarray,
    y: np.ndarray,
    x_radius: float,
    theta_radius: float,
    c0: float,
    y_radius: float | None = None,
    constants: str = "paper",
) -> dict[str, Any]:
    """Steps 1-4 of Algorithm 4 on raw (X, y): a dict of NON-PRIVATE quantities.

    Keys: ``gamma``, ``lambda_min``, ``estimate`` (theta_hat, projected), ``unprojected``
    (S^{-1} X^T y, or the least-squares solution when S is singular), ``n_clipped_x``,
    ``n_clipped_y`` (record counts, for :meth:`EPTRLinearRegression.explain` only). S and
    X^T y are built from the projected rows (:func:`projected_moments`), without copying X.
    ``y_radius`` None means R_x R_theta (the paper's).
    """
    n, p = X.shape
    ry = x_radius * theta_radius if y_radius is None else y_radius
    scale, outside = project_rows(X, x_radius)
    yc = np.clip(y, -ry, ry)
    S, b = projected_moments(X, yc, scale)
    lam = float(np.linalg.eigvalsh(S)[0])
    L = gamma_scale(x_radius, constants)
    gamma = max(lam - c0 * n - L, 0.0) / L
    try:
        if lam <= 1e-12 * max(float(np.trace(S)), 1.0):
            raise np.linalg.LinAlgError
        unproj = np.linalg.solve(S, b)
    except np.linalg.LinAlgError:
        unproj = np.linalg.lstsq(S, b, rcond=None)[0]
    norm = float(np.linalg.norm(unproj))
    est = unproj * (theta_radius / norm) if norm > theta_radius else unproj.copy()
    return {
        "gamma": gamma,
        "lambda_min": lam,
        "estimate": est,
        "unprojected": unproj,
        "n_clipped_x": int(outside.sum()),
        "n_clipped_y": int(np.count_nonzero(np.abs(y) > ry)),
    }


def lambda_min_sensitivity(n: int, p: int, x_radius: float) -> float:
    """Replacement sensitivity of the computed lambda_min(S): R_x^2 (module docstring) plus
    twice a bound on the float error of forming S and its eigenvalue (4 (n + p) u n R_x^2)."""
    return x_radius**2 * (1.0 + 8.0 * (n + p) * 2.0**-52 * n)


def lambda_min_lower(noisy: float, scale: float) -> float:
    """The one-sided ``AUTO_CONF_LEVEL`` lower bound on lambda_min(S) from its release with
    Laplace noise of ``scale``: P(Laplace(b) > t) = exp(-t/b) / 2."""
    return noisy - scale * math.log(1.0 / (2.0 * (1.0 - AUTO_CONF_LEVEL)))


def auto_c0(
    lambda_lower: float,
    n: int,
    p: int,
    x_radius: float,
    theta_radius: float,
    y_radius: float,
    epsilon: float,
    delta: float,
    constants: str = "tight",
) -> float | None:
    """The public rule of ``c0="auto"``: a function of a released lower bound on
    lambda_min(S) and of public settings only.

    For c0 on a grid of (0, lambda_lower / n) it predicts gamma from ``lambda_lower``, the
    release probability q(c0) of Algorithm 2 at (epsilon, delta) (the ePTR part's budget) and
    the noise sd sigma(c0) (analytic Gaussian, or classical for the paper's constants), and
    minimises the predicted prediction risk q sigma^2 R_x^2 + (1 - q) R_y^2 (the bottom
    predicts 0, at risk up to R_y^2). Returns None when no c0 predicts a risk at least
    ``AUTO_MIN_GAIN`` below R_y^2: then the bottom is output up front.
    """
    top = lambda_lower / n
    if not top > 0:
        return None
    cal = "analytic" if constants == "tight" else "classic"
    unit = gaussian_sigma(epsilon / 2.0, delta, 1.0, cal)
    c0 = top * np.linspace(0.005, 0.995, 199)
    L = gamma_scale(x_radius, constants)
    gamma = np.maximum(lambda_lower - c0 * n - L, 0.0) / L
    q = np.asarray(release_probability(gamma, epsilon, delta))
    alpha = np.array(
        [ols_local_sensitivity(n, x_radius, theta_radius, c, y_radius, constants) for c in c0]
    )
    risk = q * (unit * alpha) ** 2 * x_radius**2 + (1.0 - q) * y_radius**2
    best = int(np.argmin(risk))
    if risk[best] > (1.0 - AUTO_MIN_GAIN) * y_radius**2:
        return None
    return float(c0[best])


class EPTRLinearRegression(PrivateEstimatorMixin, RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP least squares by efficient PTR (Algorithm 4 of paper 001).

    No intercept (as in the paper): append a public constant column to fit one, or use
    :class:`privest.models.linear.PrivateLinearRegression`, usually more accurate.

    Parameters
    ----------
    epsilon, delta : privacy target; delta in (0, 1) (the paper uses 0.01; theory wants
        delta <= n^-3).
    x_radius : R_x, public radius of the feature rows (rows outside are projected onto it).
        ``"auto"`` (default): the norm bound ||max(|lo|, |hi|)|| of ``domain.bounds`` (the
        features' public box; no centring, as there is no intercept); 1 (the paper's unit
        ball) when no box is given.
    theta_radius : R_theta, public radius of the coefficient vector.
    y_radius : R_y, public bound on |y| (responses are clipped to it); None means R_x R_theta,
        the paper's choice.
    c0 : public eigenvalue level (release needs lambda_min(X^T X)/n well above c0), or
        ``"auto"`` (default): spend ``c0_share`` of epsilon on a lattice-Laplace estimate of
        lambda_min(X^T X) and choose c0 by the public rule :func:`auto_c0`.
    c0_share : the share of epsilon spent on c0 when ``c0="auto"`` (default 0.1).
    constants : ``"tight"`` (default; module docstring) or ``"paper"`` (Algorithm 4 as
        published, classical Gaussian calibration: for reproductions).
    local_sensitivity_factor : multiplies alpha; 1 is private (module docstring).
    bottom : coefficients used when nothing is released (public; default zeros, the paper's
        simulation choice). ``predict`` then predicts with them, ``released_`` is False and a
        :class:`~privest.errors.NothingReleasedWarning` says why.
    clip : True projects records onto the public radii (Algorithm 4, step 1); False raises
        :class:`BoundsError` instead. How many were projected is data-dependent, so only
        the non-private :meth:`explain` reports it.
    random_state : None (secure randomness), an int seed or a Generator.
    budget : a :class:`~privest.Budget` charged ``guarantee`` at each ``fit``, before the
        data are read (refused fits release nothing); shared, never copied, by
        ``sklearn.base.clone``, so a grid search spends from it once per fit.
    domain : a :class:`~privest.Domain` stating the neighbour relation (docs/domain.md):
        swap only (Theorem 4.1 replaces one record, n public); add/remove and a person unit
        are refused at ``fit``; its bounds set R_x under ``x_radius="auto"`` and are refused
        with a numeric ``x_radius`` (the public set is then that ball).
    inference : ``"sandwich"`` (default): after a release, 0.1 of epsilon and of delta
        (``INFERENCE_SHARE``, taken from the ePTR step) releases X'X and the
        residual-weighted X'X for robust standard errors (privest.models.eptr_inference);
        ``"none"``: no standard errors, no budget for them.

    Fitted attributes: ``coef_``, ``x_radius_`` (the R_x used), ``released_``, ``c0_`` (the
    c0 used; a DP output under ``"auto"``, None if the bottom was output up front),
    ``lambda_min_lower_`` (the released lower bound, ``"auto"`` only),
    ``local_sensitivity_``, ``noise_scale_``, ``threshold_`` (M), ``guarantee_``, ``results_``
    (:class:`~privest.learn.results.FitResults`: NaN coefficients when nothing was released,
    no standard error near the R_theta sphere): all public (data-dependent diagnostics are
    in ``explain``).
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        x_radius: float | str = "auto",
        theta_radius: float = 1.0,
        y_radius: float | None = None,
        c0: float | str = "auto",
        c0_share: float = 0.1,
        constants: str = "tight",
        local_sensitivity_factor: float = 1.0,
        bottom: Any = None,
        clip: bool = False,
        random_state: Any = None,
        budget: Any = None,
        domain: Any = None,
        inference: str = "sandwich",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.x_radius = x_radius
        self.theta_radius = theta_radius
        self.y_radius = y_radius
        self.c0 = c0
        self.c0_share = c0_share
        self.constants = constants
        self.local_sensitivity_factor = local_sensitivity_factor
        self.bottom = bottom
        self.clip = clip
        self.random_state = random_state
        self.budget = budget
        self.domain = domain
        self.inference = inference

    @property
    def guarantee(self) -> ApproxDP:
        """(epsilon, delta)-DP under swap neighbours (Theorem 4.1), by basic composition of
        the c0_share epsilon Laplace step (``c0="auto"``), the release for the standard errors
        at INFERENCE_SHARE of epsilon and of delta (``inference="sandwich"``) and the ePTR
        step at the rest; a ``domain`` with another relation or with bounds is refused here,
        before any data."""
        unused = ("resolution",) if self.x_radius == "auto" else ("bounds", "resolution")
        eptr_domain(self.domain, "EPTRLinearRegression", *unused)
        return ApproxDP(self.epsilon, self.delta)

    @property
    def _calibration(self) -> str:
        return "analytic" if self.constants == "tight" else "classic"

    def ball_radius(self, p: int) -> float:
        """The public R_x for p features: ``x_radius``, or under ``"auto"`` the norm bound
        of ``domain.bounds`` (1 without a box). Reads no data."""
        if self.x_radius != "auto":
            return float(check_positive(self.x_radius, "x_radius"))
        b = feature_bounds(self.domain, None, getattr(self, "feature_names_in_", None))
        return 1.0 if b is None else box_radius(check_bounds(b, p), centred=False)

    @property
    def _y_radius(self) -> float:
        return self.x_radius_ * self.theta_radius if self.y_radius is None else self.y_radius

    def _inference_share(self) -> float:
        return inference_share(self.inference)

    def _eptr_epsilon(self) -> float:
        share = self._inference_share() + (self.c0_share if self.c0 == "auto" else 0.0)
        return self.epsilon * (1.0 - share)

    def _eptr_delta(self) -> float:
        return self.delta * (1.0 - self._inference_share())

    def _spent(self) -> str:
        """How the guarantee is split (basic composition), for ``results_``."""
        return spent_text(self.c0_share if self.c0 == "auto" else None, self.inference)

    def _check(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        _check_constants(self.constants)
        inference_share(self.inference)  # refuses an unknown value
        check_eptr_parameters(self.epsilon, self.delta, self._calibration)
        if self.x_radius != "auto":
            check_positive(self.x_radius, "x_radius")
        for name in ("theta_radius", "local_sensitivity_factor"):
            check_positive(getattr(self, name), name)
        if self.y_radius is not None:
            check_positive(self.y_radius, "y_radius")
        if self.c0 == "auto":
            top = 1.0 - self._inference_share()
            if not (isinstance(self.c0_share, int | float) and 0 < self.c0_share < top):
                raise ValidationError(
                    f"c0_share: {self.c0_share!r}; accepted: a number in (0, {top:g}) (with "
                    f"inference={self.inference!r})"
                )
            check_eptr_parameters(self._eptr_epsilon(), self._eptr_delta(), self._calibration)
        elif isinstance(self.c0, str):
            raise ValidationError(f"c0: {self.c0!r}; accepted: 'auto' or a number > 0")
        else:
            check_positive(self.c0, "c0")
        if self.local_sensitivity_factor < 1:
            raise ValidationError(
                f"local_sensitivity_factor: {self.local_sensitivity_factor} < 1 would break "
                "the guarantee"
            )
        X, y = validate_fit_data(self, X, y)
        self.x_radius_ = self.ball_radius(X.shape[1])
        if not self.clip:
            ry = self._y_radius
            if project_rows(X, self.x_radius_)[1].any() or np.any(np.abs(y) > ry):
                raise BoundsError(
                    f"X/y: some records lie outside the public bounds ||x|| <= {self.x_radius_}, "
                    f"|y| <= {ry}; pass clip=True to project them (Algorithm 4, step 1)"
                )
        return X, y

    def _bottom(self, p: int) -> np.ndarray:
        if self.bottom is None:
            return np.zeros(p)
        b = np.atleast_1d(np.asarray(self.bottom, dtype=float))
        if b.size == 1:
            b = np.full(p, b[0])
        if b.shape != (p,) or not np.all(np.isfinite(b)):
            raise ValidationError(f"bottom: must be a finite scalar or {p} public coefficients")
        return b

    def _warn_bottom(self, n: int, up_front: bool) -> None:
        L = gamma_scale(self.x_radius_, self.constants)
        m = ptr_threshold(self._eptr_epsilon(), self._eptr_delta())
        need = f"c0 + {(m + 1.0) * L / n:.3g}"
        why = (
            "the private estimate of lambda_min(X^T X)/n (the smallest eigenvalue of the "
            "feature second-moment matrix) was too small for any c0 to beat the bottom"
            if up_front
            else f"the test did not pass; it passes with high probability only when "
            f"lambda_min(X^T X)/n > {need} (here c0 = {self.c0_:.3g})"
        )
        warnings.warn(
            f"EPTRLinearRegression released nothing and outputs its bottom coefficients: {why}. "
            "To release: scale the features so that ||x|| <= x_radius is tight and the "
            "columns are not nearly collinear, use more rows or a larger epsilon, or use "
            "PrivateLinearRegression (method='adassp'), which has no release test.",
            NothingReleasedWarning,
            stacklevel=3,
        )

    def fit(self, X: Any, y: Any) -> EPTRLinearRegression:
        """Run Algorithm 4 once (after the private choice of c0 if ``c0="auto"``);
        ``released_`` says whether anything was released."""
        with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
            warn_privacy_habits(self, self.epsilon, self.delta)
            charge(self.budget, self.guarantee, label=type(self).__name__, mechanism="ePTR-OLS")
            X, y = self._check(X, y)
            n, p = X.shape
            bottom = self._bottom(p)
            rng = resolve_rng(self.random_state)
            eps = self._eptr_epsilon()
            self.guarantee_ = self.guarantee
            self.threshold_ = ptr_threshold(eps, self._eptr_delta())
            self.lambda_min_lower_ = None
            c0 = self.c0
            if c0 == "auto":
                c0 = self._private_c0(X, y, rng)
            self.c0_ = c0
            if c0 is None:
                self.released_, self.coef_ = False, bottom
                self.local_sensitivity_ = self.noise_scale_ = None
                self._finish(X, y, rng, c0)
                self._warn_bottom(n, up_front=True)
                return self
            stats = self._statistics(X, y, c0)
            self.local_sensitivity_ = self._alpha(n, c0)
            self.noise_scale_ = eptr_noise_scale(
                self.local_sensitivity_, eps, self._eptr_delta(), p, self._calibration
            )
            released, value = eptr_step(
                stats["estimate"],
                stats["gamma"],
                self.local_sensitivity_,
                eps,
                self._eptr_delta(),
                rng,
                dim=p,
                calibration=self._calibration,
            )
            self.released_ = released
            self.coef_ = value if released else bottom
            self._finish(X, y, rng, c0)
            if not released:
                self._warn_bottom(n, up_front=False)
            return self

    def _finish(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator, c0: Any) -> None:
        """``results_``: NaN coefficients when nothing was released; else the released ones
        with, under ``"sandwich"``, the covariance of privest.models.eptr_inference (its
        release runs only after ePTR released, at the public coef_)."""
        n, p = X.shape
        if not self.released_:
            why = "ePTR released nothing (the bottom is not an estimate): no coefficients"
            self.results_ = eptr_ols_results(self, None, None, n, [why])
            return
        if self.inference == "none":
            note = "inference='none': no standard errors (no budget spent on them)"
            self.results_ = eptr_ols_results(self, self.coef_, None, n, [note])
            return
        share = INFERENCE_SHARE
        noisy, r_bound = sandwich_release(
            X, y, self.coef_, self.x_radius_, self._y_radius, self.epsilon * share,
            self.delta * share, rng,
        )  # fmt: skip
        cov = sandwich_cov(noisy, p, self.x_radius_, r_bound, c0 * n, self.noise_scale_)
        self.results_ = eptr_ols_results(self, self.coef_, cov, n, [])

    def _statistics(self, X: np.ndarray, y: np.ndarray, c0: float) -> dict[str, Any]:
        return ols_statistics(
            X, y, self.x_radius_, self.theta_radius, c0, self._y_radius, self.constants
        )

    def _alpha(self, n: int, c0: float) -> float:
        return self.local_sensitivity_factor * ols_local_sensitivity(
            n, self.x_radius_, self.theta_radius, c0, self._y_radius, self.constants
        )

    def _lambda_min(self, X: np.ndarray, y: np.ndarray) -> float:
        return self._statistics(X, y, 1.0)["lambda_min"]

    def _private_c0(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> float | None:
        """Release lambda_min(S) at c0_share * epsilon, take its lower bound, apply auto_c0."""
        n, p = X.shape
        eps1 = self.epsilon * self.c0_share
        mech = LatticeLaplace(eps1, lambda_min_sensitivity(n, p, self.x_radius_))
        noisy = float(mech.release(self._lambda_min(X, y), rng))
        lower = lambda_min_lower(noisy, mech.scale)
        self.lambda_min_lower_ = lower
        return auto_c0(
            lower,
            n,
            p,
            self.x_radius_,
            self.theta_radius,
            self._y_radius,
            self._eptr_epsilon(),
            self._eptr_delta(),
            self.constants,
        )

    def predict(self, X: Any) -> np.ndarray:
        """X @ coef_ (the bottom coefficients when nothing was released; see ``released_``)."""
        X = validate_predict_data(self, X, "coef_")
        return X @ self.coef_

    def explain(self, X: Any, y: Any) -> dict[str, Any]:
        """NON-PRIVATE audit of Algorithm 4 on (X, y). NEVER publish the result.

        gamma, lambda_min, M, release probability, alpha, noise sd, the unnoised estimate and
        the record counts ``n_clipped_x`` (rows projected onto R_x) and ``n_clipped_y``
        (responses clipped to R_y) are functions of the private data; ``fit`` keeps none of
        them (Algorithm 2 publishes only the noised estimate or the bottom). With
        ``c0="auto"`` the c0 of the last fit is used, or, before any fit, the rule
        :func:`auto_c0` applied to the exact (non-private) lambda_min; ``c0`` is then None
        when the rule would output the bottom up front.
        """
        X, y = self._check(X, y)
        n, p = X.shape
        c0 = self.c0
        eps = self._eptr_epsilon()
        if c0 == "auto":
            if hasattr(self, "c0_"):
                c0 = self.c0_
            else:
                lam = self._lambda_min(X, y)
                c0 = auto_c0(
                    lam, n, p, self.x_radius_, self.theta_radius, self._y_radius, eps,
                    self._eptr_delta(), self.constants,
                )  # fmt: skip
        if c0 is None:
            return {"c0": None, "lambda_min": self._lambda_min(X, y), "release_probability": 0.0}
        stats = self._statistics(X, y, c0)
        alpha = self._alpha(n, c0)
        dlt = self._eptr_delta()
        return {
            **stats,
            "c0": c0,
            "M": ptr_threshold(eps, dlt),
            "release_probability": float(release_probability(stats["gamma"], eps, dlt)),
            "alpha": alpha,
            "noise_scale": eptr_noise_scale(alpha, eps, dlt, p, self._calibration),
        }
