"""Private logistic regression, binary or multiclass, by noisy full-batch descent
(docs/central-models.md).

``method="noisy_mm"`` (the default, ``"auto"``): bounded-Hessian (majorize-minimize) steps with
a ridge set by a public rule (:func:`privest.models.logistic_fit.logistic_rule`, from n, p,
the number of classes, epsilon and delta only), on features scaled to [-1, 1] by the public
box. ``method="noisy_gd"``: the default before issue 31 (fixed-step gradient descent, l2 =
1e-3, 30 steps, features centred at the box centre), kept for comparison. The two
algorithms, their sensitivities and their accounting are in :mod:`privest.models.logistic_fit`;
the standard errors of ``"noisy_mm"`` (``inference="auto"``/``"sandwich"``) in
:mod:`privest.models.logistic_inference`.

Two classes fit the sigmoid model (``coef_`` of shape (1, p)); K >= 3 public classes fit the
multinomial (softmax) model (``coef_`` (K, p)) under the same single (epsilon, delta)
guarantee: the K x d gradient is released as one vector with replacement sensitivity
2 sqrt(2) B, not K separate fits with a split budget.

Why not objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011; Kifer, Smith and
Thakurta 2012): its proof needs the exact minimiser of the perturbed objective and a
continuous noise density (a change of variables from the noise to the output), which neither
a numerical solver nor float-safe lattice noise provides. Noisy descent is private whatever
the optimiser does between releases.

For ``"noisy_gd"`` the step is eta = ``step_scale`` / L with L = 1 / 4 * (mean squared
half-width + c^2) + l2, a public stand-in for the curvature of the centred features. Too
large a step only hurts accuracy, never privacy.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target

from privest._threads import fit_threads
from privest.accounting.base import ApproxDP
from privest.accounting.budget import charge
from privest.accounting.zcdp import zcdp_rho_for
from privest.errors import BoundsError, ValidationError
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.central import feature_bounds, public_design
from privest.models.inference import LOGISTIC_SHARE, central_results, logistic_inference
from privest.models.logistic_fit import (
    DEFAULT_STEPS,
    OUT_OF_BOX,
    bounded_hessian_inverse,
    design_rows,
    logistic_rule,
    noisy_descent,
)
from privest.models.logistic_inference import (
    COV_TYPES,
    MULTICLASS_MIN_N_EPS,
    SANDWICH_MIN_N_EPS,
    SANDWICH_SHARE,
    SPLIT_LEAD,
    combine_hessians,
    contrasts,
    hessian_point,
    in_classes,
    lead_point,
    noisy_hessian,
    noisy_score_gram,
    one_step_cov,
    resolve_cov_type,
    score_share,
    split_share,
)
from privest.rng import resolve_rng
from privest.sklearn_contract import (
    PrivateEstimatorMixin,
    validate_fit_data,
    validate_predict_data,
    warn_privacy_habits,
)
from privest.validation import check_bounds, check_delta, check_epsilon

__all__ = ["PrivateLogisticRegression", "noisy_gd_logistic"]

METHODS = ("auto", "noisy_mm", "noisy_gd")
#: the ridge of ``"noisy_gd"`` when ``l2="auto"`` (its value before issue 31)
NOISY_GD_L2 = 1e-3
INFERENCE = ("auto", "sandwich", "none", "bootstrap")


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
    ``noise`` times its sd (0: the noise-free path). The noise of all steps is drawn in one
    batch before them (it does not depend on the data: every release keeps its law; the
    continuous draws are the step-by-step stream of the same generator).
    """
    n, d = Xc.shape
    slack = 1.0 + 4.0 * (n + d) * 2.0**-52  # float error of the gradient sum (twice)
    mech = lattice_gaussian_zcdp(rho / n_steps, 2.0 * x_radius * slack, d)
    theta = np.zeros((d, *y01.shape[1:]))
    avg = np.zeros_like(theta)
    start = n_steps // 2
    if noise is None:
        draws = mech.noise(n_steps * theta.size, rng).reshape(n_steps, theta.size)
    else:
        draws = noise * mech.sigma * rng.standard_normal((n_steps, *theta.shape))
    for t in range(n_steps):
        grad = Xc.T @ (expit(Xc @ theta) - y01)
        if noise is None:
            noisy = mech.release(grad, rng, noise=draws[t])
        else:
            noisy = grad + draws[t]
        theta = theta - step * (noisy / n + l2 * theta)
        if t >= start:
            avg += theta
    return avg / (n_steps - start)


class PrivateLogisticRegression(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """(epsilon, delta)-DP logistic regression (scikit-learn style), binary or multinomial.

    Parameters
    ----------
    epsilon, delta : the privacy target of the whole fit (delta in (0, 1)).
    bounds : public box of the features (one pair for every column, or one per column).
    classes : the public labels (never read off the data): two for the binary model, K >= 3
        for the multinomial one; None means labels 0 and 1.
    fit_intercept : an intercept through a public constant column.
    l2 : ridge penalty (l2/2) ||theta||^2 on the design's coefficients (module docstring), or
        ``"auto"``: the public rule of ``"noisy_mm"``, 1e-3 for ``"noisy_gd"``.
    max_iter : T, the number of noisy steps (public); None: 20 (``"noisy_mm"``), 30
        (``"noisy_gd"``).
    step_scale : the step of ``"noisy_gd"`` is step_scale / L (module docstring).
    method : ``"auto"`` (= ``"noisy_mm"``), ``"noisy_mm"`` or ``"noisy_gd"`` (the default
        before issue 31).
    clip : True clips features to the box; False raises :class:`BoundsError` outside it.
    random_state : None (secure randomness), an int seed or a Generator.
    budget : a :class:`~privest.Budget` charged ``guarantee`` at each ``fit``, before the
        data are read (refused fits release nothing); shared, never copied, by
        ``sklearn.base.clone``, so a grid search spends from it once per fit.
    domain : a :class:`~privest.Domain` giving the features' ``bounds`` (instead of, or in
        agreement with, ``bounds=``; swap neighbours only).
    inference : ``"auto"`` (default): ``"sandwich"`` for ``method="noisy_mm"`` with two
        classes and n x epsilon >= 10^4 (a public rule: below it the released Hessian is
        too noisy for standard errors; ``results_`` says so), else ``"none"``.
        ``"sandwich"``: 20% of the zCDP budget (inside the stated guarantee, charged with it before
        the data are read) releases the Hessian sum (at the ridge-free bounded-Hessian step from the
        released path; with two classes from n x epsilon = 10^4 on, two releases splitting that
        share, the second at a one step from the path before the window, a public rule:
        :func:`~privest.models.logistic_inference.split_share`); ``results_`` then holds the
        one-step estimate from the released path and its noise-aware sandwich standard errors
        (sampling and privacy noise; :mod:`privest.models.logistic_inference`), NaN when the
        released Hessian is too noisy for them (small n epsilon; the summary says so). ``"none"``:
        the fit gets the whole budget and ``results_`` has the coefficients without standard errors.
        ``"bootstrap"`` (``method="noisy_gd"``, two classes): 10% of the budget releases the
        features' X'X for a parametric bootstrap (200 refits, about 1,000 times the fit's time;
        coverage on skewed real features below 0.95). With K >= 3 classes ``results_`` holds the
        log-odds of classes 2..K against the first, indexed by (class, parameter); their standard
        errors need ``inference="sandwich"`` and n x epsilon >= 2 x 10^4 (below it the fit keeps the
        whole budget and ``results_`` says why); the default spends nothing on them. Coverage:
        docs/central-models.md.
    cov_type : the sampling term of ``"sandwich"`` (statsmodels' names): ``"nonrobust"``
        the model-based H^-1; ``"HC0"`` the robust H^-1 K H^-1 (K the score outer
        products, records iid without the logistic variance assumption), released with half
        of the standard errors' share with two classes, 0.4 of it with K >= 3 (the Hessian
        gets the rest, in one release; same guarantee; a public rule,
        :func:`~privest.models.logistic_inference.score_share`); ``"auto"`` (default)
        ``"HC0"`` with K >= 3 classes and n x epsilon >= 4 x 10^4, else ``"nonrobust"``
        (two classes always; a public rule,
        :func:`~privest.models.logistic_inference.resolve_cov_type`).

    Fitted attributes (public): ``coef_`` (1, p) or (K, p), ``intercept_`` (1,) or (K,),
    ``classes_``, ``method_``, ``l2_`` (the ridge used), ``n_iter_``, ``guarantee_``,
    ``n_features_in_``, ``feature_names_in_``, and ``results_``
    (:class:`~privest.learn.results.FitResults`, intercept first; with ``"sandwich"`` or
    ``"bootstrap"`` its ``params`` undo the ridge and early-stopping shrinkage of the T
    steps, so they differ from ``coef_``, which is tuned for prediction).

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
        l2: float | str = "auto",
        max_iter: int | None = None,
        step_scale: float = 2.0,
        method: str = "auto",
        clip: bool = False,
        random_state: Any = None,
        budget: Any = None,
        domain: Any = None,
        inference: str = "auto",
        cov_type: str = "auto",
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
        self.cov_type = cov_type

    @property
    def guarantee(self) -> ApproxDP:
        """(epsilon, delta)-DP for the whole fit (zCDP composition of all releases)."""
        return ApproxDP(self.epsilon, self.delta)

    def _classes(self) -> np.ndarray:
        classes = np.array([0, 1]) if self.classes is None else np.asarray(self.classes)
        if classes.ndim != 1 or classes.size < 2 or np.unique(classes).size != classes.size:
            raise ValidationError(
                f"classes: {self.classes!r} must list at least two distinct public labels"
            )
        return classes

    def _targets(self, y: np.ndarray, classes: np.ndarray) -> np.ndarray:
        """(n, 1) 0/1 for two classes, (n, K) one-hot for K >= 3. The label type is read
        only when a label is outside ``classes`` (to name the error): with every label in
        the default (0, 1), y cannot be multiclass."""
        if classes.size == 2:  # one column: no n x 2 table
            last = y == classes[1]
            known = last | (y == classes[0])
        else:
            onehot = y[:, None] == classes[None, :]
            known = onehot.any(axis=1)
        if not np.all(known):
            if self.classes is None and type_of_target(y, input_name="y") == "multiclass":
                raise ValidationError(
                    "y: Only binary classification is supported with classes=None (labels 0 "
                    "and 1); pass classes= listing every public label to fit the multinomial "
                    "model"
                )
            raise ValidationError(
                f"y: contains labels outside the public classes {classes.tolist()}; pass "
                "classes= listing every label (three or more fit the multinomial model)"
            )
        return last[:, None].astype(float) if classes.size == 2 else onehot.astype(float)

    def _settings(self, n: int, p: int, k: int, eps: float, delta: float) -> dict:
        """Method, ridge and steps from public inputs only (never the data)."""
        if self.method not in METHODS:
            raise ValidationError(f"method: {self.method!r}; accepted: {', '.join(METHODS)}")
        method = "noisy_mm" if self.method == "auto" else self.method
        if not (self.max_iter is None or (isinstance(self.max_iter, int) and self.max_iter >= 2)):
            raise ValidationError(f"max_iter: {self.max_iter!r} must be None or an integer >= 2")
        steps = DEFAULT_STEPS[method] if self.max_iter is None else self.max_iter
        auto_l2 = isinstance(self.l2, str) and self.l2 == "auto"
        if not auto_l2 and not (isinstance(self.l2, int | float) and self.l2 >= 0):
            raise ValidationError(f"l2: {self.l2!r} must be 'auto' or a number >= 0")
        if not self.step_scale > 0:
            raise ValidationError(f"step_scale: {self.step_scale!r} must be > 0")
        inference = self._inference(method, k, n * eps)
        rule = logistic_rule(n, p, k, eps, delta, self.fit_intercept)
        l2 = (rule["l2"] if method == "noisy_mm" else NOISY_GD_L2) if auto_l2 else float(self.l2)
        share = {"bootstrap": LOGISTIC_SHARE, "sandwich": SANDWICH_SHARE}.get(inference, 0.0)
        rho = zcdp_rho_for(eps, delta) * (1.0 - share)
        rho_step = (rho - rule["rho_gram"]) / steps if method == "noisy_mm" else rho / steps
        return {
            **rule,
            "method": method,
            "steps": steps,
            "l2": l2,
            "rho_step": rho_step,
            "inference": inference,
            "rho_inference": share * zcdp_rho_for(eps, delta),
            "cov_type": resolve_cov_type(self.cov_type, n, eps, k),
        }

    def _inference(self, method: str, k: int, n_eps: float) -> str:
        """The standard errors used (public: the method, the number of classes and n eps)."""
        if self.inference not in INFERENCE:
            raise ValidationError(f"inference: {self.inference!r}; accepted: {INFERENCE}")
        if self.cov_type not in COV_TYPES:
            raise ValidationError(f"cov_type: {self.cov_type!r}; accepted: {COV_TYPES}")
        if self.inference == "auto":
            usable = method == "noisy_mm" and k == 2 and n_eps >= SANDWICH_MIN_N_EPS
            return "sandwich" if usable else "none"
        if self.inference == "sandwich" and method != "noisy_mm":
            raise ValidationError(
                "inference='sandwich': the noise-aware sandwich is implemented for "
                "method='noisy_mm' (the default); pass inference='none'"
            )
        if self.inference == "sandwich" and k > 2 and n_eps < MULTICLASS_MIN_N_EPS:
            return "none"  # results_ says why; the fit keeps the whole budget
        if self.inference == "bootstrap" and (method != "noisy_gd" or k != 2):
            raise ValidationError(
                "inference='bootstrap': the parametric bootstrap is implemented for "
                "method='noisy_gd' with two classes; pass method='noisy_gd' or inference='none'"
            )
        return self.inference

    def fit(self, X: Any, y: Any) -> PrivateLogisticRegression:
        """Fit once under (epsilon, delta); returns self."""
        with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
            warn_privacy_habits(self, self.epsilon, self.delta)
            charge(
                self.budget,
                self.guarantee,
                label=type(self).__name__,
                mechanism="private logistic regression",
            )
            eps = check_epsilon(self.epsilon)
            delta = check_delta(self.delta, allow_zero=False)
            classes = self._classes()
            X, y = validate_fit_data(self, X, y, classifier=True)
            bounds = feature_bounds(
                self.domain, self.bounds, getattr(self, "feature_names_in_", None)
            )
            if bounds is None:
                raise BoundsError("bounds: the public box of the features is required")
            n, p = X.shape
            cfg = self._settings(n, p, classes.size, eps, delta)
            Y = self._targets(y, classes)
            b = check_bounds(bounds, p)
            gd = cfg["method"] == "noisy_gd"  # noisy_mm checks the box in its design pass
            if gd and (np.any(X.min(axis=0) < b[:, 0]) or np.any(X.max(axis=0) > b[:, 1])):
                if not self.clip:
                    raise BoundsError(OUT_OF_BOX)
                X = np.clip(X, b[:, 0], b[:, 1])
            rng = resolve_rng(self.random_state)
            path: dict[str, Any] = {}
            if cfg["method"] == "noisy_mm":
                coef, icpt = self._fit_mm(X, Y, b, cfg, classes.size, rng, path)
            else:
                coef, icpt = self._fit_gd(X, Y, b, cfg, rng)
            self.coef_, self.intercept_ = coef, icpt
            self.classes_ = classes
            self.method_, self.l2_, self.n_iter_ = cfg["method"], cfg["l2"], cfg["steps"]
            self.guarantee_ = self.guarantee
            if cfg["inference"] == "sandwich":
                self.results_ = self._sandwich(path, cfg, rng)
            else:
                self.results_ = self._results(X, b, cfg, rng)
        return self

    def _sandwich(self, path: dict[str, Any], cfg: dict, rng: Any) -> Any:
        """``results_`` of ``"noisy_mm"``: the Hessian (share
        :data:`~privest.models.logistic_inference.SANDWICH_SHARE` of rho, in one or two
        releases: :meth:`_hessian`), then the one-step
        estimate and its noise-aware sandwich from the released path
        (:mod:`privest.models.logistic_inference`)."""
        Xc, trace, start = path["Xc"], path["trace"], cfg["steps"] // 2
        window = (trace["thetas"][start:], trace["grads"][start:])
        robust = cfg["cov_type"] == "HC0"  # public: K gets score_share(k) of the inference rho
        share_k = score_share(self.classes_.size) if robust else 0.0  # public: k classes
        rho_h = cfg["rho_inference"] * (1.0 - share_k)
        H, sd_h = self._hessian(path, cfg, rho_h, rng)
        # post-processing of the released path and Hessian from here on
        small = Xc.shape[0] * self.epsilon < SANDWICH_MIN_N_EPS  # public: n and epsilon
        small = small or self.classes_.size > 2  # always checked with K >= 3 classes
        args = (*contrasts(*window), trace["sigma"], H, sd_h)
        theta, cov = one_step_cov(*args, determined=small)
        how, note = "noise-aware sandwich (sampling and privacy noise)", []
        if robust and cov is not None:  # the second release, at the one-step estimate
            at = in_classes(theta, Xc.shape[1])
            rho_k = cfg["rho_inference"] * share_k
            K, _ = noisy_score_gram(Xc, path["Y"], at, cfg["x_radius"], rho_k, rng)
            theta, cov = one_step_cov(*args, determined=small, K=K)  # post-processing
            how = "robust (HC0) noise-aware sandwich (sampling and privacy noise)"
        if cov is None:  # NaN standard errors, stated in the summary (as linear's ePTR)
            why = "the released Hessian is too noisy at this n and epsilon (more records help)"
            how, note = "none", [f"no standard errors: {why}"]
        note.append("params: one Newton step from the released path (no ridge shrinkage)")
        k = theta.size // Xc.shape[1]  # classes against the first
        unscale = np.append(1.0 / path["scale"], [1.0] * self.fit_intercept)  # (coef, const)
        unscale = np.tile(unscale, k)
        design = {"centre": path["centre"], "const": 1.0, "y_centre": 0.0}
        cov = None if cov is None else unscale[:, None] * cov * unscale
        return central_results(
            self, unscale * theta, cov, design, Xc.shape[0], "noisy_mm", how,
            note + self._against_first(), classes=self._result_classes(),
        )  # fmt: skip

    def _hessian(
        self, path: dict[str, Any], cfg: dict, rho: float, rng: Any
    ) -> tuple[np.ndarray, float]:
        """The released Hessian the sandwich uses (rho-zCDP in all): one release at
        :func:`~privest.models.logistic_inference.hessian_point` of the window, or, where
        :func:`~privest.models.logistic_inference.split_share` (public: n, epsilon, d, K)
        splits rho, a first release at the first half's bounded-Hessian step, the one step
        from the last steps before the window with it
        (:func:`~privest.models.logistic_inference.lead_point`), a second release there, and
        the two combined (:func:`~privest.models.logistic_inference.combine_hessians`)."""
        Xc, trace, start = path["Xc"], path["trace"], cfg["steps"] // 2
        (n, d), x_radius = Xc.shape, cfg["x_radius"]
        first = split_share(n, self.epsilon, d, self.classes_.size)
        first *= cfg["cov_type"] != "HC0"  # public; HC0's Hessian shares its part with K
        if not first:
            window = (trace["thetas"][start:], trace["grads"][start:])
            at = hessian_point(*window, path["precond"], cfg["l2"], n)
            return noisy_hessian(Xc, at, x_radius, rho, rng)
        early = (trace["thetas"][:start], trace["grads"][:start])
        at = hessian_point(*early, path["precond"], cfg["l2"], n)
        H1 = noisy_hessian(Xc, at, x_radius, rho * first, rng)
        lead = slice(max(start - SPLIT_LEAD, 0), start)
        at = in_classes(lead_point(*contrasts(trace["thetas"][lead], trace["grads"][lead]), *H1), d)
        H2 = noisy_hessian(Xc, at, x_radius, rho * (1.0 - first), rng)
        return combine_hessians(H1, H2)

    def _result_classes(self) -> Any:
        """The class level of ``results_`` (None for two classes: one block)."""
        return None if self.classes_.size == 2 else self.classes_[1:]

    def _against_first(self) -> list[str]:
        """The summary's note on the multinomial parameters (none for two classes)."""
        if self.classes_.size == 2:
            return []
        first = self.classes_[0]
        return [f"params: log-odds of each class against the first public class ({first})"]

    def _results(self, X: np.ndarray, b: np.ndarray, cfg: dict, rng: Any) -> Any:
        """``results_`` of the binary model: the parametric bootstrap of
        :mod:`privest.models.inference` (``inference="bootstrap"``), else the coefficients
        without standard errors."""
        n, p = X.shape
        if cfg["inference"] == "none":
            fd = {"centre": np.zeros(p), "const": 1.0, "y_centre": 0.0}
            theta = np.column_stack([self.coef_, self.intercept_][: 1 + self.fit_intercept])
            theta = (theta[1:] - theta[0] if theta.shape[0] > 1 else theta).ravel()
            note = "no standard errors (inference='none')"
            if self.inference == "sandwich":  # K >= 3 classes below MULTICLASS_MIN_N_EPS
                note = (
                    "no standard errors: with three or more classes they need n x epsilon >= "
                    f"{MULTICLASS_MIN_N_EPS:g} (the released Hessian is too noisy below; the "
                    "fit kept the whole budget)"
                )
            elif self.inference == "auto" and self.classes_.size > 2:
                note = (
                    "no standard errors: the default spends nothing on them with three or more "
                    f"classes (inference='sandwich' spends {SANDWICH_SHARE:.0%} of the budget)"
                )
            elif self.inference == "auto" and self.method_ == "noisy_mm":
                note = (
                    f"no standard errors: n x epsilon is below {SANDWICH_MIN_N_EPS:g}, where the "
                    "released Hessian is too noisy for them (inference='sandwich' spends "
                    f"{SANDWICH_SHARE:.0%} of the budget on them anyway)"
                )
            return central_results(
                self, theta, None, fd, n, self.method_, "none",
                [note, *self._against_first()], classes=self._result_classes(),
            )  # fmt: skip
        d = public_design(b, np.array([0.0, 1.0]), self.fit_intercept)
        half = (b[:, 1] - b[:, 0]) / 2.0 if self.fit_intercept else np.abs(b).max(axis=1)
        curvature = 0.25 * (float(np.mean(half**2)) + d["const"] ** 2) + cfg["l2"]
        args = (d["x_radius"], cfg["rho_step"] * cfg["steps"], cfg["steps"])
        args += (self.step_scale / curvature, cfg["l2"])
        theta = self.coef_[0].copy()
        if self.fit_intercept:  # the design's coordinates of the released fit
            theta = np.append(theta, (self.intercept_[0] + theta @ d["centre"]) / d["const"])

        def refit(rows: np.ndarray, labels: np.ndarray, gen: Any, noise: float) -> np.ndarray:
            return noisy_gd_logistic(rows, labels, *args, gen, noise)  # the bootstrap's

        return logistic_inference(self, X, b, theta, refit, rng)

    def _fit_mm(
        self,
        X: np.ndarray,
        Y: np.ndarray,
        b: np.ndarray,
        cfg: dict,
        k: int,
        rng: Any,
        path: dict[str, Any],
    ) -> tuple[np.ndarray, np.ndarray]:
        """``"noisy_mm"`` on x~ = ((x - m) / h, 1) (or x / max|bound| without intercept);
        ``path`` receives the design rows, their centre and scale and the released path."""
        if self.fit_intercept:
            centre, scale = b.mean(axis=1), (b[:, 1] - b[:, 0]) / 2.0
        else:
            centre, scale = np.zeros(b.shape[0]), np.abs(b).max(axis=1)
        Xc = design_rows(X, centre, scale, 1.0 if self.fit_intercept else None, b, self.clip)
        precond = bounded_hessian_inverse(Xc, cfg["x_radius"], cfg["rho_gram"], k, cfg["l2"], rng)
        theta = noisy_descent(
            Xc,
            Y,
            x_radius=cfg["x_radius"],
            rho_step=cfg["rho_step"],
            steps=cfg["steps"],
            precond=precond,
            l2=cfg["l2"],
            rng=rng,
            trace=path.setdefault("trace", {}),
        )
        path.update(Xc=Xc, Y=Y, centre=centre, scale=scale, theta=theta, precond=precond)
        coef = (theta[: X.shape[1]] / scale[:, None]).T
        const = theta[-1] if self.fit_intercept else np.zeros(theta.shape[1])
        return coef, const - coef @ centre

    def _fit_gd(
        self, X: np.ndarray, Y: np.ndarray, b: np.ndarray, cfg: dict, rng: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """``"noisy_gd"``: the design and step of the default before issue 31."""
        p = X.shape[1]
        d = public_design(b, np.array([0.0, 1.0]), self.fit_intercept)
        Xc = design_rows(X, d["centre"], np.ones(p), d["const"] if self.fit_intercept else None)
        half = (b[:, 1] - b[:, 0]) / 2.0 if self.fit_intercept else np.abs(b).max(axis=1)
        curvature = 0.25 * (float(np.mean(half**2)) + d["const"] ** 2) + cfg["l2"]
        theta = noisy_descent(
            Xc,
            Y,
            x_radius=d["x_radius"],
            rho_step=cfg["rho_step"],
            steps=cfg["steps"],
            precond=np.eye(Xc.shape[1]) * (self.step_scale / curvature),
            l2=cfg["l2"],
            rng=rng,
        )
        coef = theta[:p].T
        const = theta[p] * d["const"] if self.fit_intercept else np.zeros(theta.shape[1])
        return coef, const - coef @ d["centre"]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # only with public classes= (K >= 3)
        return tags

    def decision_function(self, X: Any) -> np.ndarray:
        """x coef + intercept: (n,) for two classes, (n, K) for K >= 3."""
        X = validate_predict_data(self, X, "coef_")
        z = X @ self.coef_.T + self.intercept_
        return z[:, 0] if self.coef_.shape[0] == 1 else z

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``; rows sum to 1."""
        z = self.decision_function(X)
        if z.ndim == 1:
            p1 = expit(z)
            return np.column_stack([1.0 - p1, p1])
        return softmax(z, axis=1)

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class."""
        z = self.decision_function(X)
        idx = (z > 0).astype(int) if z.ndim == 1 else np.argmax(z, axis=1)
        return self.classes_[idx]
