"""ePTR Gaussian Bayes classifier (paper 001, Section 3, Algorithm 3).

Model: P(y = k) = mu_k, x | y = k ~ N(m_k, I_p). Bayes rule (eq. 10) with the linear score
ln mu_k + x^T m_k - ||m_k||^2 / 2.

1. x_i <- Pi_{R_x}(x_i);
2. N_k, mu_hat_k = N_k / n, m_hat_k = class means (0 for an empty class; gamma = 0 then);
3. theta_hat = (mu_hat, m_hat_1, ..., m_hat_K) in R^{K(p+1)};
4. gamma = (min_k N_k - c0 n - 1)_+  (eq. 13);
5. alpha = (2/n) sqrt(2 R_x^2 / c0^2 + 2);
6. ePTR; every coordinate gets N(0, sigma^2), sigma = 2 alpha c_delta / eps;
7. post-processing: mu_k <- max(mu_k, c0) / sum_j max(mu_j, c0), m_k <- Pi_{R_x}(m_k).

Safety (eq. 12): one replacement moves a class mean by at most 2 R_x / (N_k - 1) and mu_hat by
1/n in two coordinates, so on {gamma > 0} the change is at most (1/n) sqrt(2 + 8 R_x^2/c0^2) <=
alpha. Bottom (unspecified in the paper): ``"random"`` draws mu ~ Dirichlet(1_K) (floored at c0,
renormalised) and m_k ~ N(0, R_x^2 I) projected to the R_x ball, as in the authors' code;
``"fixed"`` uses mu = 1/K and m_k = 0 (every point then goes to the first class).

Improvements over the paper (docs/eptr.md): ``bounds`` centres the features at the public box
centre before the projection (a record-wise public map, so neighbours stay neighbours; the
ball of radius R_x then covers the box with half the radius a ball at 0 needs), and
``c0="auto"`` spends ``c0_share`` of epsilon on the smallest class count with lattice Laplace
noise (replacement moves each count by at most 1, so min_k N_k by at most 1), takes a 95%
lower bound N_lo and sets c0 = (N_lo - 1 - M - (2/eps') ln 19) / n, where the predicted release
probability is 0.95 (eps' the ePTR part's epsilon), capped below 1/K; the bottom is output
up front (with a :class:`~privest.errors.NothingReleasedWarning`) when that is <= 0.
``constants="tight"`` (default) calibrates the Gaussian step by the analytic Gaussian
mechanism at (eps'/2, delta) (see :func:`privest.mechanisms.eptr.eptr_noise_scale`);
``"paper"`` keeps the classical calibration.

Standard errors (``inference="sandwich"``, issue 27): ``results_`` from a further release of
the within-class sums of squares, privest.models.eptr_bayes_inference and docs/eptr.md.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from privest._threads import fit_threads
from privest.accounting.base import ApproxDP
from privest.accounting.budget import charge
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
from privest.models.eptr_bayes_inference import (
    bayes_cov,
    bayes_results,
    square_sums,
    square_sums_release,
)
from privest.models.eptr_inference import INFERENCE_SHARE, inference_share, spent_text
from privest.projection import project_rows
from privest.rng import resolve_rng
from privest.sklearn_contract import (
    PrivateEstimatorMixin,
    validate_fit_data,
    validate_predict_data,
    warn_privacy_habits,
)
from privest.validation import check_bounds, check_positive

#: the summary's note on the shares of ``results_``
SHARES_NOTE = (
    "shares: as ePTR released them, before the floor at c0 and the renormalisation "
    "(class_prior_, used to predict, is their post-processed version)"
)

__all__ = [
    "EPTRBayesClassifier",
    "bayes_auto_c0",
    "bayes_local_sensitivity",
    "bayes_statistics",
    "linear_bayes_scores",
]


def bayes_local_sensitivity(n: int, x_radius: float, c0: float) -> float:
    """alpha = (2/n) sqrt(2 R_x^2 / c0^2 + 2); 0.113138 at n=5000, c0=0.04, R_x=8."""
    return 2.0 / n * math.sqrt(2.0 * x_radius**2 / c0**2 + 2.0)


def bayes_statistics(
    X: np.ndarray, labels: np.ndarray, n_classes: int, x_radius: float, c0: float
) -> dict[str, Any]:
    """Steps 1-4 of Algorithm 3 (NON-PRIVATE): counts, mu_hat, means, theta_hat, gamma.

    ``labels`` are class indices in ``range(n_classes)``. Means are built from the projected
    rows. ``n_clipped`` (a record count) is for :meth:`EPTRBayesClassifier.explain` only.
    """
    n, p = X.shape
    scale, outside = project_rows(X, x_radius)
    counts = np.bincount(labels, minlength=n_classes).astype(float)
    sums = np.zeros((n_classes, p))
    np.add.at(sums, labels, X * scale[:, None])
    means = sums / np.maximum(counts, 1.0)[:, None]
    mu = counts / n
    gamma = max(float(counts.min()) - c0 * n - 1.0, 0.0)
    return {
        "counts": counts,
        "class_prior": mu,
        "means": means,
        "estimate": np.concatenate([mu, means.ravel()]),
        "gamma": gamma,
        "n_clipped": int(outside.sum()),
    }


def bayes_auto_c0(
    noisy_min: float, scale: float, n: int, k: int, epsilon: float, delta: float
) -> float | None:
    """The public rule of ``c0="auto"`` (module docstring) from the released smallest class
    count ``noisy_min`` (Laplace of ``scale``) and the ePTR part's ``epsilon``: None when the
    bottom is output up front."""
    lower = noisy_min - scale * math.log(10.0)
    c0 = (lower - 1.0 - ptr_threshold(epsilon, delta) - 2.0 / epsilon * math.log(19.0)) / n
    if c0 <= 0:
        return None
    return min(c0, 0.999 / k)


def linear_bayes_scores(X: np.ndarray, prior: np.ndarray, means: np.ndarray) -> np.ndarray:
    """ln mu_k + x^T m_k - ||m_k||^2 / 2 for every row and class (eq. 10)."""
    with np.errstate(divide="ignore"):
        log_prior = np.log(prior)
    return X @ means.T + (log_prior - 0.5 * np.einsum("kj,kj->k", means, means))


class EPTRBayesClassifier(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """(epsilon, delta)-DP Gaussian Bayes classifier by efficient PTR (Algorithm 3, paper 001).

    Parameters
    ----------
    epsilon, delta : privacy target (delta in (0, 1); theory wants delta < n^-3).
    classes : the public list of the K labels. Required: the label set is never read off
        the data.
    x_radius : R_x, public radius; feature rows outside the ball are projected onto it.
        ``"auto"`` (default): the norm bound of the public box (``bounds`` or
        ``domain.bounds``) around its centre, sqrt(sum of squared half-widths); 1 (the
        paper's unit ball) when no box is given.
    c0 : ``"auto"`` (default since issue 31; module docstring; spends ``c0_share`` of
        epsilon), or a public level in (0, 1/K) (release needs every class larger than
        c0 n + 1). The paper fixes c0 per experiment (0.04 in its simulation E1, half the
        smallest class share in E3); the old default 0.05 stays available as ``c0=0.05``.
    c0_share : share of epsilon spent on c0 when ``c0="auto"`` (default 0.1).
    bounds : optional public box of the features (or ``domain.bounds``; a mapping column ->
        pair for a DataFrame); rows are centred at its centre before the projection (and at
        prediction). None: no centring (the paper).
    constants : ``"tight"`` (analytic Gaussian step; default) or ``"paper"``.
    bottom : ``"random"`` (default, authors' code) or ``"fixed"`` (module docstring): the
        data-independent classifier used when nothing is released. ``predict`` then uses it;
        check ``released_``.
    clip : True projects rows onto the R_x ball (Algorithm 3, step 1); False raises
        :class:`BoundsError` for rows outside it. The number projected is data-dependent:
        only the non-private :meth:`explain` reports it.
    random_state : None (secure randomness), an int seed or a Generator.
    budget : a :class:`~privest.Budget` charged ``guarantee`` at each ``fit``, before the
        data are read (refused fits release nothing); shared, never copied, by
        ``sklearn.base.clone``, so a grid search spends from it once per fit.
    domain : a :class:`~privest.Domain` (docs/domain.md) giving the features' ``bounds``
        (instead of, or agreeing with, ``bounds=``); swap neighbours only (Theorem 3.1
        replaces one record, n public): add/remove or a person unit is refused.
    inference : ``"none"`` (default; the classifier as before, nothing spent on standard
        errors) or ``"sandwich"``: 0.1 of epsilon and of delta (``INFERENCE_SHARE``, taken
        from the ePTR step before the data are read) releases, after a release, the K p
        within-class sums of squares, so that ``results_`` has standard errors and intervals
        for the class shares and means (privest.models.eptr_bayes_inference).

    Fitted attributes: ``classes_``, ``x_radius_`` (the R_x used), ``released_``,
    ``class_prior_``, ``means_`` (centred at the box centre),
    ``local_sensitivity_``, ``noise_scale_``, ``threshold_``, ``guarantee_``, ``results_``
    (:class:`~privest.learn.results.FitResults` of the shares and the class means in the
    features' units; NaN when nothing was released, no interval where the floor or the
    projection acted): all public.

    scikit-learn's ``check_estimator`` passes but for four checks: ``check_dtype_object``
    and ``check_classifiers_classes`` fit labels outside the public ``classes`` (refused:
    the label set is never read off the data); ``check_classifiers_one_label`` and
    ``check_classifiers_train`` (its binary problem) fit data in which a public class has no
    record, so Algorithm 3 releases nothing and the data-independent bottom classifier
    predicts (a class count is private; a fit cannot drop an empty class).
    """

    _sklearn_expected_failures: ClassVar[dict[str, str]] = {
        "check_dtype_object": "labels outside the public classes are refused",
        "check_classifiers_classes": "labels outside the public classes are refused",
        "check_classifiers_one_label": "a public class without records: the bottom predicts",
        "check_classifiers_train": "a public class without records: the bottom predicts",
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        classes: Any = None,
        x_radius: float | str = "auto",
        c0: float | str = "auto",
        c0_share: float = 0.1,
        bounds: Any = None,
        constants: str = "tight",
        bottom: str = "random",
        clip: bool = False,
        random_state: Any = None,
        budget: Any = None,
        domain: Any = None,
        inference: str = "none",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.x_radius = x_radius
        self.c0 = c0
        self.c0_share = c0_share
        self.bounds = bounds
        self.constants = constants
        self.bottom = bottom
        self.clip = clip
        self.random_state = random_state
        self.budget = budget
        self.domain = domain
        self.inference = inference

    @property
    def guarantee(self) -> ApproxDP:
        """(epsilon, delta)-DP under swap neighbours (Theorem 3.1), by basic composition of
        the c0_share epsilon Laplace step (``c0="auto"``), the release of the within-class
        sums of squares at INFERENCE_SHARE of epsilon and of delta (``inference="sandwich"``)
        and the ePTR step at the rest; a ``domain`` with another relation, or with bounds
        other than ``bounds=``, is refused here, before any data."""
        eptr_domain(self.domain, "EPTRBayesClassifier", "resolution", bounds=self.bounds)
        return ApproxDP(self.epsilon, self.delta)

    @property
    def _calibration(self) -> str:
        if self.constants not in ("tight", "paper"):
            raise ValidationError(f"constants: {self.constants!r}; accepted: 'tight' or 'paper'")
        return "analytic" if self.constants == "tight" else "classic"

    def _eptr_epsilon(self) -> float:
        share = inference_share(self.inference) + (self.c0_share if self.c0 == "auto" else 0.0)
        return self.epsilon * (1.0 - share)

    def _eptr_delta(self) -> float:
        return self.delta * (1.0 - inference_share(self.inference))

    def _spent(self) -> str:
        """How the guarantee is split (basic composition), for ``results_``."""
        return spent_text(self.c0_share if self.c0 == "auto" else None, self.inference)

    def _box(self) -> Any:
        return feature_bounds(self.domain, self.bounds, getattr(self, "feature_names_in_", None))

    def ball_radius(self, p: int) -> float:
        """The public R_x for p features: ``x_radius``, or under ``"auto"`` the norm bound
        of the public box around its centre (1 without a box). Reads no data."""
        if self.x_radius != "auto":
            return float(check_positive(self.x_radius, "x_radius"))
        b = self._box()
        return 1.0 if b is None else box_radius(check_bounds(b, p), centred=True)

    def _centre(self, X: np.ndarray) -> np.ndarray:
        b = self._box()
        if b is None:
            return X
        b = check_bounds(b, X.shape[1])
        return X - (b[:, 0] + b[:, 1]) / 2.0

    def _check(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        check_eptr_parameters(self.epsilon, self.delta, self._calibration)
        top = 1.0 - inference_share(self.inference)  # refuses an unknown inference
        if self.c0 == "auto" and not (
            isinstance(self.c0_share, int | float) and 0 < self.c0_share < top
        ):
            raise ValidationError(
                f"c0_share: {self.c0_share!r}; accepted: a number in (0, {top:g}) (with "
                f"inference={self.inference!r})"
            )
        check_eptr_parameters(self._eptr_epsilon(), self._eptr_delta(), self._calibration)
        if self.x_radius != "auto":
            check_positive(self.x_radius, "x_radius")
        if self.classes is None:
            raise ValidationError(
                "classes: the public list of labels is required (it is never read off the data)"
            )
        classes = np.asarray(self.classes)
        if classes.ndim != 1 or classes.size < 2 or np.unique(classes).size != classes.size:
            raise ValidationError(f"classes: {self.classes!r} must list at least 2 distinct labels")
        k = classes.size
        c0 = 0.5 / k if self.c0 == "auto" else check_positive(self.c0, "c0")
        if c0 >= 1.0 / k:
            raise ValidationError(
                f"c0: {c0} is out of range; accepted: (0, 1/K) = (0, {1 / k:.4g})"
            )
        if self.bottom not in ("random", "fixed"):
            raise ValidationError(f"bottom: {self.bottom!r}; accepted: 'random' or 'fixed'")
        X, y = validate_fit_data(self, X, y, classifier=True)
        self.x_radius_ = self.ball_radius(X.shape[1])
        X = self._centre(X)
        order = np.argsort(classes)
        pos = np.searchsorted(classes[order], y)
        pos = np.clip(pos, 0, k - 1)
        labels = order[pos]
        bad = classes[labels] != y
        if bad.any():
            raise ValidationError(
                f"y: contains labels outside the public classes {classes.tolist()}; every "
                "label must be one of them"
            )
        if not self.clip and project_rows(X, self.x_radius_)[1].any():
            hint = (
                "; or give the features' box as bounds= or domain= (x_radius='auto' then "
                "uses its norm bound)"
                if self.x_radius == "auto" and self._box() is None
                else ""
            )
            raise BoundsError(
                f"X: some rows lie outside the public ball ||x|| <= {self.x_radius_:.6g}; pass "
                f"clip=True to project them{hint}"
            )
        return X, labels, classes

    def _bottom(
        self, k: int, p: int, rng: np.random.Generator, c0: float
    ) -> tuple[np.ndarray, np.ndarray]:
        if self.bottom == "fixed":
            return np.full(k, 1.0 / k), np.zeros((k, p))
        mu = np.maximum(rng.dirichlet(np.ones(k)), c0)
        means = self.x_radius_ * rng.standard_normal((k, p))
        scale, _ = project_rows(means, self.x_radius_)
        return mu / mu.sum(), means * scale[:, None]

    def _private_c0(self, labels: np.ndarray, k: int, rng: np.random.Generator) -> float | None:
        """The noisy smallest class count, its 95% lower bound and the public rule."""
        mech = LatticeLaplace(self.epsilon * self.c0_share, 1.0)
        n_min = float(np.bincount(labels, minlength=k).min())
        noisy = float(mech.release(n_min, rng)[()])
        return bayes_auto_c0(
            noisy, mech.scale, labels.size, k, self._eptr_epsilon(), self._eptr_delta()
        )

    def fit(self, X: Any, y: Any) -> EPTRBayesClassifier:
        """Run Algorithm 3 once (after the private c0 with ``c0="auto"``); ``released_``
        says whether the test passed."""
        with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
            warn_privacy_habits(self, self.epsilon, self.delta)
            charge(self.budget, self.guarantee, label=type(self).__name__, mechanism="ePTR-Bayes")
            X, labels, classes = self._check(X, y)
            n, p = X.shape
            k = classes.size
            rng = resolve_rng(self.random_state)
            eps = self._eptr_epsilon()
            c0 = self._private_c0(labels, k, rng) if self.c0 == "auto" else self.c0
            self.c0_ = c0
            self.threshold_ = ptr_threshold(eps, self._eptr_delta())
            self.local_sensitivity_ = self.noise_scale_ = None
            released = False
            if c0 is not None:
                stats = bayes_statistics(X, labels, k, self.x_radius_, c0)
                self.local_sensitivity_ = bayes_local_sensitivity(n, self.x_radius_, c0)
                dim = k * (p + 1)
                self.noise_scale_ = eptr_noise_scale(
                    self.local_sensitivity_, eps, self._eptr_delta(), dim, self._calibration
                )
                released, value = eptr_step(
                    stats["estimate"],
                    stats["gamma"],
                    self.local_sensitivity_,
                    eps,
                    self._eptr_delta(),
                    rng,
                    dim=dim,
                    calibration=self._calibration,
                )
            if released:
                mu = np.maximum(value[:k], c0)
                mu /= mu.sum()
                means = value[k:].reshape(k, p)
                scale, projected = project_rows(means, self.x_radius_)
                means = means * scale[:, None]
            else:
                mu, means = self._bottom(k, p, rng, 0.5 / k if c0 is None else c0)
                warnings.warn(
                    "EPTRBayesClassifier released nothing and uses its data-independent bottom "
                    "classifier: a release needs every class to hold more than c0 n + 1 + M "
                    f"records (M = {self.threshold_:.3g})"
                    + (
                        ", and the private smallest class count was too small for any c0"
                        if c0 is None
                        else ""
                    )
                    + ". To release: use more rows, a larger epsilon or (with c0 given) a "
                    "smaller c0, or PrivateLogisticRegression for two classes.",
                    NothingReleasedWarning,
                    stacklevel=2,
                )
            self.released_ = released
            self.classes_ = classes
            self.class_prior_ = mu
            self.means_ = means
            self.guarantee_ = self.guarantee
            if released:
                self._results(X, labels, rng, value[:k], projected)
            else:
                why = "ePTR released nothing (the bottom is not an estimate): no parameters"
                self.results_ = bayes_results(self, n, [why])
            return self

    def _results(
        self,
        X: np.ndarray,
        labels: np.ndarray,
        rng: np.random.Generator,
        raw_shares: np.ndarray,
        projected: np.ndarray,
    ) -> None:
        """``results_`` after a release: under ``"sandwich"`` the within-class sums of
        squares are released (privest.models.eptr_bayes_inference) and the covariance
        built from released quantities only."""
        n, p = X.shape
        k = self.classes_.size
        if self.inference == "none":
            note = "inference='none': no standard errors (no budget spent on them)"
            self.results_ = bayes_results(self, n, [note, SHARES_NOTE], None, raw_shares)
            return
        mech = square_sums_release(
            n, k, p, self.epsilon * INFERENCE_SHARE, self.delta * INFERENCE_SHARE
        )
        noisy = mech.release(
            square_sums(X, labels, k, self.x_radius_).ravel() / self.x_radius_**2, rng
        )
        cov = bayes_cov(self.class_prior_, self.means_, noisy, n, self.noise_scale_, self.x_radius_)
        self.results_ = bayes_results(self, n, [SHARES_NOTE], cov, raw_shares, projected)

    def decision_function(self, X: Any) -> np.ndarray:
        """Linear Bayes scores ln mu_k + x^T m_k - ||m_k||^2/2 (test rows are not projected)."""
        X = validate_predict_data(self, X, "means_")
        return linear_bayes_scores(self._centre(X), self.class_prior_, self.means_)

    def predict(self, X: Any) -> np.ndarray:
        """The class of highest score (with the bottom classifier when nothing was released)."""
        best = np.argmax(self.decision_function(X), axis=1)
        return self.classes_[best]

    def explain(self, X: Any, y: Any) -> dict[str, Any]:
        """NON-PRIVATE audit of Algorithm 3 on (X, y). NEVER publish the result.

        Class counts, gamma, release probability, the unnoised estimate and ``n_clipped``
        (rows projected onto R_x; ``fit`` keeps no such count) leak the data.
        """
        X, labels, classes = self._check(X, y)
        c0 = getattr(self, "c0_", None) if self.c0 == "auto" else self.c0
        if c0 is None:
            return {"c0": None, "counts": np.bincount(labels, minlength=classes.size)}
        stats = bayes_statistics(X, labels, classes.size, self.x_radius_, c0)
        alpha = bayes_local_sensitivity(X.shape[0], self.x_radius_, c0)
        eps, dim, delta = self._eptr_epsilon(), classes.size * (X.shape[1] + 1), self._eptr_delta()
        return {
            **stats,
            "M": ptr_threshold(eps, delta),
            "release_probability": float(release_probability(stats["gamma"], eps, delta)),
            "alpha": alpha,
            "noise_scale": eptr_noise_scale(alpha, eps, delta, dim, self._calibration),
        }
