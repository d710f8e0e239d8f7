"""Private binary logistic regression by noisy full-batch gradient descent (docs/central-models.md).

Rows are preprocessed with public constants only (as in :mod:`privest.models.linear`):
x~ = (x - m, c), m the centre of the public box and c a constant column for the intercept,
so ||x~|| <= B. The per-example gradient of the logistic loss, (sigmoid(x~ theta) - y) x~, has
norm <= B, so replacing one record moves the gradient sum by at most 2B in L2.

Each of T steps releases the gradient sum with discrete Gaussian noise on a public lattice
(float-safe; docs/randomness.md) calibrated to rho / T zCDP, and takes a step
theta <- theta - eta (noisy sum / n + l2 theta); the output is the average of the last half of
the iterates. Everything after the releases is post-processing, and zCDP composes by
addition (Bun and Steinke 2016, Lemma 2.3), so the fit is rho-zCDP with rho the largest level
whose conversion meets (epsilon, delta): (epsilon, delta)-DP, exact accounting of the Gaussian
steps without subsampling (the full-batch analogue of Abadi et al. 2016; a composition of
Gaussian mechanisms is a Gaussian mechanism, Dong, Roth and Su 2022, Cor. 3.3).

Why not objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011; Kifer, Smith and
Thakurta 2012): its proof needs the exact minimiser of the perturbed objective and a
continuous noise density (a change of variables from the noise to the output), which neither
a numerical solver nor float-safe lattice noise provides. Noisy GD is private whatever the
optimiser does between releases.

The step size is eta = ``step_scale`` / L with L = 1 / 4 * (sum of squared half-widths / p +
c^2) + l2, a public stand-in for the curvature of the centred features; T (``max_iter``) and
eta are public. Too large a step only hurts accuracy, never privacy.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target

from privest.accounting.base import ApproxDP
from privest.accounting.budget import charge
from privest.accounting.zcdp import zcdp_rho_for
from privest.errors import BoundsError, ValidationError
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.central import feature_bounds
from privest.models.inference import LOGISTIC_SHARE, logistic_inference
from privest.models.linear import public_design
from privest.rng import resolve_rng
from privest.sklearn_contract import (
    PrivateEstimatorMixin,
    validate_fit_data,
    validate_predict_data,
    warn_privacy_habits,
)
from privest.validation import check_bounds, check_delta, check_epsilon

__all__ = ["PrivateLogisticRegression", "noisy_gd_logistic"]


def noisy_gd_logistic(
    Xc: np.ndarray,
    y01: np.ndarray,
    x_radius: float,
    rho: float,
    n_steps: int,
    step: float,
    l2: float,
    rng: np.random.Generator,
    noise: float | None = None,
) -> np.ndarray:
    """Noisy full-batch GD on the mean logistic loss + l2/2 ||theta||^2 (module docstring).

    Rows must satisfy ||x|| <= x_radius; the whole run is rho-zCDP under replacement. A 2-D
    ``y01`` (n, k) runs k fits at once, one per column (the bootstrap of
    :mod:`privest.models.inference`); the result is then (d, k). ``noise`` (that
    bootstrap only, never a release) swaps the lattice noise for continuous Gaussian noise of
    ``noise`` times its sd (0: the noise-free path).
    """
    n, d = Xc.shape
    slack = 1.0 + 4.0 * (n + d) * 2.0**-52  # float error of the gradient sum (twice)
    mech = lattice_gaussian_zcdp(rho / n_steps, 2.0 * x_radius * slack, d)
    theta = np.zeros((d, *y01.shape[1:]))
    avg = np.zeros_like(theta)
    start = n_steps // 2
    for t in range(n_steps):
        grad = Xc.T @ (expit(Xc @ theta) - y01)
        if noise is None:
            noisy = mech.release(grad, rng)
        else:
            noisy = grad + noise * mech.sigma * rng.standard_normal(grad.shape)
        theta = theta - step * (noisy / n + l2 * theta)
        if t >= start:
            avg += theta
    return avg / (n_steps - start)


class PrivateLogisticRegression(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """(epsilon, delta)-DP binary logistic regression (scikit-learn style), by noisy GD.

    Parameters
    ----------
    epsilon, delta : the privacy target of the whole fit (delta in (0, 1)).
    bounds : public box of the features (one pair for every column, or one per column).
    classes : the public pair of labels (the label set is never read off the data); None
        means labels 0 and 1.
    fit_intercept : an intercept through a public constant column.
    l2 : ridge penalty (l2/2) ||theta||^2 on the centred, intercept-augmented coefficients.
    max_iter : T, the number of noisy gradient steps (public).
    step_scale : the step is step_scale / L (module docstring).
    method : ``"noisy_gd"`` (the only method; kept as a parameter for future ones).
    clip : True clips features to the box; False raises :class:`BoundsError` outside it.
    random_state : None (secure randomness), an int seed or a Generator.
    budget : a :class:`~privest.Budget` charged ``guarantee`` at each ``fit``, before the
        data are read (refused fits release nothing); shared, never copied, by
        ``sklearn.base.clone``, so a grid search spends from it once per fit.
    domain : a :class:`~privest.Domain` giving the features' ``bounds`` (instead of, or in
        agreement with, ``bounds=``; swap neighbours only).
    inference : ``"none"`` (default) gives the estimate all of the budget and ``results_``
        no standard errors; ``"bootstrap"`` spends 10% of the fit's zCDP budget on the
        features' X'X, which the parametric bootstrap of the standard errors needs (200
        refits: about 1,000 times the fit's time, e.g. 19 s at n = 20,000, and its coverage
        on skewed real features is below 0.95: docs/central-models.md).

    Fitted attributes (public): ``coef_`` (1, p), ``intercept_`` (1,), ``classes_``,
    ``n_iter_`` (= ``max_iter``), ``guarantee_``, ``n_features_in_``, ``feature_names_in_``,
    ``results_`` (:class:`~privest.learn.results.FitResults` of the binary model, by the
    parametric bootstrap of :mod:`privest.models.inference`; its ``params`` undo the
    shrinkage of the T steps, so they differ from ``coef_``; NaN standard errors with
    ``inference="none"``).

    scikit-learn's ``check_estimator`` passes but for four checks that fit labels other
    than the public ``classes`` (``check_estimators_dtypes``,
    ``check_classifier_data_not_an_array``, ``check_classifiers_classes``,
    ``check_fit2d_1feature``): the label set is public and never read off the data (reading
    it would reveal whether some record has a given label), so such labels are refused.
    """

    _sklearn_expected_failures: ClassVar[dict[str, str]] = dict.fromkeys(
        (
            "check_estimators_dtypes",
            "check_classifier_data_not_an_array",
            "check_classifiers_classes",
            "check_fit2d_1feature",
        ),
        "fits labels outside the public classes; the label set is never read off the data",
    )

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        bounds: Any = None,
        classes: Any = None,
        fit_intercept: bool = True,
        l2: float = 1e-3,
        max_iter: int = 30,
        step_scale: float = 2.0,
        method: str = "noisy_gd",
        clip: bool = False,
        random_state: Any = None,
        budget: Any = None,
        domain: Any = None,
        inference: str = "none",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.fit_intercept = fit_intercept
        self.l2 = l2
        self.max_iter = max_iter
        self.step_scale = step_scale
        self.method = method
        self.clip = clip
        self.random_state = random_state
        self.budget = budget
        self.domain = domain
        self.inference = inference

    @property
    def guarantee(self) -> ApproxDP:
        """(epsilon, delta)-DP for the whole fit (zCDP composition of the T steps)."""
        return ApproxDP(self.epsilon, self.delta)

    def _labels(self, y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        classes = np.array([0, 1]) if self.classes is None else np.asarray(self.classes)
        if classes.shape != (2,) or classes[0] == classes[1]:
            raise ValidationError(f"classes: {self.classes!r} must be a pair of distinct labels")
        if type_of_target(y, input_name="y") == "multiclass" and np.unique(y).size > 2:
            raise ValidationError(
                "y: Only binary classification is supported; the labels must be the two "
                f"public classes {classes.tolist()}"
            )
        pos = y == classes[1]
        if not np.all(pos | (y == classes[0])):
            raise ValidationError(
                f"y: contains labels outside the public classes {classes.tolist()}"
            )
        return pos.astype(float), classes

    def fit(self, X: Any, y: Any) -> PrivateLogisticRegression:
        """Fit once under (epsilon, delta); returns self."""
        warn_privacy_habits(self, self.epsilon, self.delta)
        charge(
            self.budget,
            self.guarantee,
            label=type(self).__name__,
            mechanism="private logistic regression",
        )
        eps = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, allow_zero=False)
        if self.method != "noisy_gd":
            raise ValidationError(f"method: {self.method!r}; accepted: 'noisy_gd'")
        if self.inference not in ("bootstrap", "none"):
            raise ValidationError(f"inference: {self.inference!r}; accepted: 'bootstrap', 'none'")
        if not (isinstance(self.max_iter, int) and self.max_iter >= 2):
            raise ValidationError(f"max_iter: {self.max_iter!r} must be an integer >= 2")
        if not (self.l2 >= 0 and self.step_scale > 0):
            raise ValidationError("l2 must be >= 0 and step_scale > 0")
        X, y = validate_fit_data(self, X, y, classifier=True)
        bounds = feature_bounds(self.domain, self.bounds, getattr(self, "feature_names_in_", None))
        if bounds is None:
            raise BoundsError("bounds: the public box of the features is required")
        n, p = X.shape
        y01, classes = self._labels(y, n)
        b = check_bounds(bounds, p)
        if np.any((X < b[:, 0]) | (X > b[:, 1])):
            if not self.clip:
                raise BoundsError(
                    "X: some values lie outside the public bounds; pass clip=True to clip them"
                )
            X = np.clip(X, b[:, 0], b[:, 1])
        d = public_design(b, np.array([0.0, 1.0]), self.fit_intercept)
        Xc = X - d["centre"]
        if self.fit_intercept:
            Xc = np.hstack([Xc, np.full((n, 1), d["const"])])
        half = (b[:, 1] - b[:, 0]) / 2.0 if self.fit_intercept else np.abs(b).max(axis=1)
        curvature = 0.25 * (float(np.mean(half**2)) + d["const"] ** 2) + self.l2
        rng = resolve_rng(self.random_state)
        rho = zcdp_rho_for(eps, delta) * (1.0 - LOGISTIC_SHARE * (self.inference == "bootstrap"))
        step = self.step_scale / curvature

        args = (d["x_radius"], rho, self.max_iter, step, self.l2)
        theta = noisy_gd_logistic(Xc, y01, *args, rng)

        def refit(rows: np.ndarray, labels: np.ndarray, gen: Any, noise: float) -> np.ndarray:
            return noisy_gd_logistic(rows, labels, *args, gen, noise)  # the bootstrap's

        coef = theta[:p]
        icpt = (theta[p] * d["const"] if self.fit_intercept else 0.0) - coef @ d["centre"]
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([icpt])
        self.classes_ = classes
        self.n_iter_ = self.max_iter
        self.guarantee_ = self.guarantee
        self.results_ = logistic_inference(self, X, b, theta, refit, rng)
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def decision_function(self, X: Any) -> np.ndarray:
        """x coef + intercept."""
        X = validate_predict_data(self, X, "coef_")
        return X @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``."""
        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: Any) -> np.ndarray:
        """The more probable class."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]
