"""IWP-SGD estimators on locally private examples (paper 004, Alg. 1; docs/iwp-sgd.md, Sec. 3).

The loop is :func:`~privest.learn.iwp_core.sgd_replicated`. Three methods share it, with
the same data order, batch size, step and ridge (paper 004, Sec. 6):

* ``"iwp"``: the IWP gradient on a :class:`~privest.release.examples.PrivateExamples`;
* ``"naive"``: the plain gradient on the same release (biased, Thm 4.2);
* ``"oracle"``: the plain gradient on clean arrays (non-private reference).

Defaults give a consistent estimator of the clean ridge optimum (squared error ~ 1/n,
docs/iwp-sgd.md, Sec. 3): a decaying step (``learning_rate="optimal"``, eta0 / (1 + eta0
alpha t), the 1 / (mu t) step of Thm 5.5; ``"invscaling"`` as in scikit-learn), tail
averaging, ridge ``alpha=1`` (the paper's lambda, Sec. 6) and a projection radius
|phi'(0)| R / alpha from public quantities (it contains the clean ridge optimum).
The paper's runs (constant step, last iterate) are
``learning_rate=<float>`` or ``"constant"``, ``averaging=None``, ``theta_radius=None``.
Further passes (``n_passes > 1``) reuse the same release: no privacy cost
(post-processing), but the noise is reused, so Thm 5.5 (one pass) no longer applies.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from privest._threads import fit_threads
from privest.errors import ValidationError
from privest.learn.iwp_core import (
    METHODS,
    SGDPath,
    _check_args,
    example_sums,
    finish_run,
    plan_run,
    sgd_replicated,
    stream_examples,
)
from privest.learn.losses import get_margin_loss
from privest.learn.sgd_schedule import (
    MIN_CONTRACTION,
    check_convergence,
    convergence_advice,
    curvature_from_sums,
    default_eta0,
    default_radius,
    loss_name,
    make_schedule,
    radius_from_sums,
    steps_to_contract,
)
from privest.release.examples import PrivateExamples
from privest.rng import resolve_rng
from privest.sklearn_contract import validate_fit_data, validate_predict_data
from privest.validation import check_bounds

__all__ = ["IWPSGDClassifier", "IWPSGDRegressor", "SGDPath", "sgd_replicated"]


def _check_binary_target(y: np.ndarray, classes: Any) -> np.ndarray:
    """The two classes (given, or those of y); a message naming the problem otherwise."""
    if classes is None:
        kind = type_of_target(y, input_name="y")
        found = np.unique(y)
        if kind != "binary" or found.size != 2:
            raise ValidationError(
                "y: Only binary classification is supported (IWP-SGD fits a margin loss of "
                f"y in {{-1, +1}}); the target is {kind} with {found.size} "
                f"class{'es' if found.size != 1 else ''}"
            )
        return found
    classes = np.asarray(classes)
    if classes.size != 2:
        raise ValidationError(f"classes: IWP-SGD needs two classes, got {classes.size}")
    if not np.all(np.isin(y, classes)):
        raise ValidationError("y: has labels outside classes")
    return classes


def _intercept_start(f: Any, y: Any, n: int, eps_y: float, p: int) -> np.ndarray | None:
    """The start of a classifier with an intercept: slopes 0, the intercept at the loss's
    minimiser for the label share read from the release (post-processing: free).

    E[y~] = t E[y] under randomized response (t = 2S - 1 = tanh(eps_y / 2)), so the share is
    P = (1 + mean(y~) / t) / 2, clipped to [0.01, 0.99]; the intercept is logit(P) /
    ``proba_scale`` (logistic, exponential) or 2P - 1 (squared); other losses start at 0
    (None). A fit on few data for the noise stays near its start (docs/iwp-sgd.md, Sec. 3):
    near the label share, not P = 1/2."""
    scale = getattr(f, "proba_scale", None)
    if scale is None and not f.quadratic_in_theta:
        return None
    share = min(max(0.5 * (1.0 + float(y.sum()) / (n * math.tanh(eps_y / 2.0))), 0.01), 0.99)
    theta0 = np.zeros(p + 1)
    theta0[p] = 2.0 * share - 1.0 if scale is None else math.log(share / (1.0 - share)) / scale
    return theta0


class _ContractTags:
    """scikit-learn tags; placed before the Classifier/Regressor mixin, which set theirs."""

    def __sklearn_tags__(self) -> Any:
        """A binary classifier; one pass of SGD over scikit-learn's 100-200-row check data
        is not a converged fit, so its score thresholds do not apply (``poor_score``)."""
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_class = False
            tags.classifier_tags.poor_score = True
        if tags.regressor_tags is not None:
            tags.regressor_tags.poor_score = True
        return tags


class _IWPSGDBase(BaseEstimator):
    _task = "classification"

    def _check_method(self, data: Any) -> None:
        if self.method not in METHODS:
            raise ValidationError(f"method: {self.method!r} is unknown; accepted: {METHODS}")
        if self.method in ("iwp", "naive") and not isinstance(data, PrivateExamples):
            raise ValidationError(
                f"method={self.method!r} fits a PrivateExamples release (release_examples(...)); "
                "raw arrays are accepted only by method='oracle' (non-private reference)"
            )
        if self.method == "oracle" and isinstance(data, PrivateExamples):
            raise ValidationError(
                "method='oracle' is SGD on clean data: pass arrays X, y; use 'iwp' or 'naive' "
                "for a release"
            )
        if isinstance(data, PrivateExamples) and data.task != self._task:
            raise ValidationError(f"data: a {data.task} release cannot fit a {self._task} model")

    def _batch(self, n: int) -> int:
        B = self.batch_size
        if not isinstance(B, (int, np.integer)) or B < 1:
            raise ValidationError(f"batch_size: {B!r} must be a positive integer")
        if B > n:
            warnings.warn(f"batch_size={B} > n={n}: clipped to n", UserWarning, stacklevel=4)
            B = n
        return int(B)

    def _run(
        self, X, y, sigma2, eps_y, loss, x_radius, *, incremental=False, y_scale=1.0, y_var=0.0
    ):
        """One fit (or partial_fit pass) of the loop, on fit_threads' BLAS threads; sets the
        fitted attributes. ``X``, ``y`` may be held by a backend (Dask arrays, docs/scale-out.md):
        :func:`~privest.learn.iwp_core.example_sums` and ``stream_examples`` dispatch on their
        type, so the run is the in-memory one, its partitions streamed in order where they are."""
        with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
            n, p = X.shape
            alpha = self._check_alpha()
            f = get_margin_loss(loss)
            auto_radius = isinstance(self.theta_radius, str) and not self.fit_intercept
            sums = {"n": n}
            if auto_radius or f.quadratic_in_theta:  # post-processing of the release: free
                sums = example_sums(X, y, self.fit_intercept, f.quadratic_in_theta)
            radius = self._radius(sums, sigma2, eps_y, loss, x_radius, y_scale, y_var)
            noised = None
            if self.fit_intercept:  # a public constant column: not noised, not penalised
                noised = np.r_[np.ones(p), 0.0]
                x_radius = math.hypot(x_radius, 1.0)
            if self.shuffle:
                if not isinstance(X, np.ndarray):
                    raise ValidationError(
                        "shuffle: True permutes the records in memory; a release held out of core "
                        "is fitted in its stored order (shuffle before releasing), or fit it in "
                        "memory"
                    )
                rng = getattr(self, "_shuffle_rng", None)
                if rng is None or not incremental:
                    rng = self._shuffle_rng = resolve_rng(self.random_state)
                perm = rng.permutation(n)
                X, y = X[perm], y[perm]
            B = self._batch(n)
            bound = default_radius(loss, x_radius, alpha) * y_scale if alpha > 0 else None
            eta0 = self.eta0
            if isinstance(eta0, str):
                if eta0 != "auto":
                    raise ValidationError(f"eta0: {eta0!r}; use a positive number or 'auto'")
                eta0 = default_eta0(loss, x_radius, sigma2, p, B, alpha)
            schedule = make_schedule(self.learning_rate, eta0, self.power_t, alpha)
            fitted = hasattr(self, "t_")
            theta0, start, avg0 = None, 0, None
            if incremental and fitted:
                theta0, start = self._theta_, self.t_
                avg0 = (self._average_[None], self._n_averaged_)
            elif self.warm_start and fitted:
                theta0 = self._average_
            elif self.fit_intercept and self._task == "classification":
                theta0 = _intercept_start(f, y, n, eps_y, p)
            width = p + int(self.fit_intercept)
            if theta0 is not None and theta0.shape[-1] != width:
                raise ValidationError(f"X: has {p} features; the fitted model has another number")
            passes = 1 if incremental else self.n_passes
            _check_args(self.method, self.averaging, B, n, passes, schedule, alpha, radius)
            plan, state = plan_run(
                n,
                width,
                n_passes=passes,
                theta0=theta0,
                average0=avg0,
                method=self.method,
                loss=loss,
                task=self._task,
                sigma2=sigma2,
                epsilon_y=eps_y,
                order=getattr(self, "order", "auto"),
                batch_size=B,
                learning_rate=schedule,
                alpha=alpha,
                theta_radius=radius,
                averaging=self.averaging,
                noised=noised,
                drop_last=False,
                start_step=start,
                record_every=self.record_every,
                intercept=bool(self.fit_intercept),
            )
            show = self.progress and plan.total * B >= 2_000_000
            label = f"{type(self).__name__}({self.method})" if show else None
            path = finish_run(plan, stream_examples(X, y, plan, state, passes, label))
            T = int(path.batches[-1])
            self._theta_ = path.last[0]
            self._average_ = path.average[0]
            self._n_averaged_ = path.n_averaged
            self.t_ = start + T
            self.n_iter_ = (self.n_iter_ + 1) if incremental and fitted else passes
            self.n_batches_ = self.t_
            self.eta0_ = float(eta0)
            self.theta_radius_ = radius
            self.trajectory_ = path.history[:, 0]
            self.trajectory_batches_ = path.batches + start
            self._set_coef(self._average_, p)
            self._step_sum = path.step_sum + getattr(self, "_step_sum", 0.0) * incremental
            # the contraction of the start: (alpha + the loss's public curvature) x the step sum
            rate = alpha
            if f.quadratic_in_theta:
                rate += f.margin_curvature() * curvature_from_sums(sums, sigma2, noised)
            decay = rate * self._step_sum if rate > 0 else math.inf
            advice = ""
            if decay < MIN_CONTRACTION and not incremental:
                needed = steps_to_contract(self.learning_rate, float(eta0), alpha, rate)
                advice = convergence_advice(needed, n, B, T // passes)
            check_convergence(path.last, path.history, decay, bound, advice)
            return self

    def _radius(self, sums, sigma2, eps_y, loss, x_radius, y_scale, y_var):
        """The projection radius: ``theta_radius``, or for ``"auto"`` the public bound
        from the loss, the x radius and alpha (and, without an intercept, the release)."""
        alpha = self._check_alpha()
        radius = self.theta_radius
        if not isinstance(radius, str):
            return radius
        if radius != "auto":
            raise ValidationError(f"theta_radius: {radius!r}; use a number, 'auto' or None")
        if not self.fit_intercept:  # the bound needs ridge on every coordinate
            return radius_from_sums(loss, sums, sigma2, eps_y, x_radius, alpha, y_scale, y_var)
        return default_radius(loss, math.hypot(x_radius, 1.0), alpha) * y_scale

    def _check_alpha(self) -> float:
        alpha = self.alpha
        if not (isinstance(alpha, (int, float, np.integer, np.floating)) and alpha >= 0):
            raise ValidationError(f"alpha: {alpha!r} must be a real number >= 0 (ridge)")
        return float(alpha)

    def _set_coef(self, theta: np.ndarray, p: int) -> None:
        self.coef_ = theta[:p].copy()
        self.intercept_ = float(theta[p]) if self.fit_intercept else 0.0

    def summary(self) -> str:
        """Coefficients, method, loss, passes and the guarantee of the release it was fit on.

        Fitting spends no privacy (post-processing of the release).
        """
        check_is_fitted(self, "coef_")
        coef = np.ravel(self.coef_)
        intercept = float(np.ravel(self.intercept_)[0])
        names = [f"x{j}" for j in range(coef.size)]
        coefs = ", ".join(f"{n}={c:.4g}" for n, c in zip(names, coef, strict=True))
        privacy = (
            "clean data (oracle, no privacy)"
            if self.guarantee_ is None
            else f"{self.guarantee_} (fitting spends no privacy budget: post-processing)"
        )
        return "\n".join(
            [
                f"{type(self).__name__}: method={self.method}, "
                f"loss={loss_name(getattr(self, 'loss', 'squared'))}, "
                f"batches={self.n_batches_}, learning_rate={self.learning_rate!r}, "
                f"eta0={self.eta0_:.3g}, alpha={self.alpha:g}",
                f"privacy: {privacy}",
                f"coef: {coefs}; intercept={intercept:.4g}",
            ]
        )

    def _from_release(self, data: PrivateExamples, reset: bool) -> None:
        """A release sets the fitted input contract: its column count and public box."""
        if not reset and data.p != self.n_features_in_:
            raise ValidationError(
                f"X: the release has {data.p} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input"
            )
        self.n_features_in_ = data.p
        self.__dict__.pop("feature_names_in_", None)
        self.bounds_ = data.bounds

    def _map(self, X: Any) -> np.ndarray:
        """Validated clean features (``NotFittedError``, shape, names) in the mapped box."""
        return self._box(validate_predict_data(self, X))

    def _box(self, X: np.ndarray) -> np.ndarray:
        b = self.bounds_
        if b is None:
            return X
        return (X - b.mean(axis=1)) / ((b[:, 1] - b[:, 0]) / 2)

    def _clean_radius(self, X: np.ndarray) -> float:
        """R for the oracle: sqrt(p) in the mapped box, else the largest row norm (not private)."""
        if self.bounds_ is not None:
            return math.sqrt(X.shape[1])
        return float(np.sqrt((X**2).sum(axis=1).max())) if X.size else 1.0


_COMMON_DOC = """
    Parameters (keyword-only): ``method`` ("iwp", "naive" on a release; "oracle" on clean
    arrays); ``batch_size`` (clipped to n with a warning; the last smaller batch is used);
    ``learning_rate`` ("optimal", the default: eta0 / (1 + eta0 alpha t), "invscaling":
    eta0 / (t + 1)^power_t, "constant": eta0; a number is a constant step, a callable a
    step per batch index); ``eta0`` (a number or "auto": a mean-square stable step from R,
    sigma^2, p, the batch size and alpha, :func:`~privest.learn.sgd_schedule.default_eta0`);
    ``power_t``;
    ``alpha`` (ridge, the paper's lambda); ``theta_radius`` (L2 ball for theta: "auto" =
    |phi'(0)| R / alpha, which contains the clean ridge optimum; a number; None = none);
    ``averaging`` ("tail" = mean of the second half of the iterates, "polyak" = all, None =
    last iterate as in the paper); ``n_passes``; ``warm_start`` (``fit`` starts from the
    previous coefficients); ``shuffle`` (a pre-shuffle with ``random_state``);
    ``record_every`` (trajectory resolution); ``progress`` (rich bar); ``fit_intercept``
    (a public constant column, not noised and not penalised, A7 in docs/iwp-sgd.md; True
    by default for the classifier, whose fit then starts at the release's label share).

    ``partial_fit`` runs one pass over a further release (a stream of releases), continuing
    the iterate, the step counter and the average (every iterate of later calls is
    averaged). A release whose ``X`` and ``y`` are held by a backend (Dask arrays,
    docs/scale-out.md) is fitted by the same loop over its partitions in order, where they
    are (``shuffle=True`` is refused there). A ``ConvergenceWarning`` is raised when the
    iterate is not finite or far beyond the public bound on the optimum (diverged), or when
    alpha * sum of steps < 3 (the ridge term alone does not guarantee that the start is
    forgotten); that warning gives the records one pass would need and the ``n_passes``
    that would reach the contraction.

    Learned: ``coef_``, ``intercept_``, ``n_iter_`` (passes), ``n_batches_`` / ``t_`` (steps),
    ``eta0_``, ``theta_radius_``, ``trajectory_`` (iterates of the last call, the intercept
    last when fitted), ``trajectory_batches_``, ``guarantee_`` (the release's LDP guarantee,
    None for oracle). Prediction takes clean features in the caller's units and applies the
    release's public map (``bounds_``).
"""


def _proba_scale(est: Any) -> float | None:
    """The loss's ``proba_scale`` (None: no probabilities, or not a valid loss)."""
    try:
        return get_margin_loss(est.loss).proba_scale
    except (ValidationError, NotImplementedError):
        return None


def _has_proba(est: Any) -> bool:
    return _proba_scale(est) is not None


class IWPSGDClassifier(_ContractTags, ClassifierMixin, _IWPSGDBase):
    """Linear classifier trained by IWP-SGD on a locally private release (paper 004, Alg. 1).

    ``loss``: "exponential", "logistic", "squared" or a MarginLoss; ``order``: truncation K
    for non-closed-form losses (int or "auto", :func:`~privest.learn.weierstrass.choose_order`).
    ``coef_`` has shape (1, p) and ``intercept_`` shape (1,) as in scikit-learn;
    ``predict_proba`` is sigmoid(f) for the logistic loss and sigmoid(2 f) for the
    exponential loss (the minimiser of E exp(-y f) is f = logit(P(y=1|x)) / 2).
    """

    __doc__ = (__doc__ or "") + _COMMON_DOC

    def __init__(
        self,
        *,
        loss: str = "exponential",
        method: str = "iwp",
        order: int | str = "auto",
        batch_size: int = 128,
        learning_rate: str | float | Callable[[int], float] = "optimal",
        eta0: float | str = "auto",
        power_t: float = 0.5,
        alpha: float = 1.0,
        theta_radius: float | str | None = "auto",
        averaging: str | None = "tail",
        n_passes: int = 1,
        warm_start: bool = False,
        shuffle: bool = False,
        record_every: int | None = None,
        progress: bool = True,
        random_state: Any = None,
        fit_intercept: bool = True,
    ):
        self.fit_intercept = fit_intercept
        self.loss = loss
        self.method = method
        self.order = order
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.alpha = alpha
        self.theta_radius = theta_radius
        self.averaging = averaging
        self.n_passes = n_passes
        self.warm_start = warm_start
        self.shuffle = shuffle
        self.record_every = record_every
        self.progress = progress
        self.random_state = random_state

    def _set_coef(self, theta: np.ndarray, p: int) -> None:
        self.coef_ = theta[None, :p].copy()
        self.intercept_ = np.array([theta[p] if self.fit_intercept else 0.0])

    def _prepare(self, data, y, bounds, classes, reset=True):
        """(X, y in {-1, 1}, sigma^2, eps_y, R) of a release or of clean arrays (oracle)."""
        self._check_method(data)
        get_margin_loss(self.loss)
        if isinstance(data, PrivateExamples):
            if classes is not None and not np.array_equal(np.asarray(classes), data.classes):
                raise ValidationError("classes: differ from the release's classes")
            self._from_release(data, reset)
            self.classes_ = data.classes
            self.guarantee_ = (
                data.guarantee if math.isfinite(data.epsilon_x + data.epsilon_y) else None
            )
            return data.X, data.y, data.sigma2, data.epsilon_y, data.x_radius
        X, yy = validate_fit_data(self, data, y, classifier=True, reset=reset)
        self.classes_ = _check_binary_target(yy, classes)
        if reset:
            self.bounds_ = None if bounds is None else check_bounds(bounds, X.shape[1])
        self.guarantee_ = None
        ypm = np.where(yy == self.classes_[1], 1.0, -1.0)
        Z = self._box(X)
        return Z, ypm, 0.0, math.inf, self._clean_radius(Z)

    def fit(self, data: PrivateExamples | Any, y: Any = None, *, bounds: Any = None):
        """Fit on a release (``iwp``/``naive``) or on clean ``data, y`` (``oracle``).

        For the oracle, ``bounds`` applies the same public box map as a release made with
        ``bounds=`` so the three fits share coordinates.
        """
        if not self.warm_start:
            self.__dict__.pop("t_", None)
        X, yy, s2, eps_y, R = self._prepare(data, y, bounds, None)
        return self._run(X, yy, s2, eps_y, self.loss, R)

    def partial_fit(
        self, data: PrivateExamples | Any, y: Any = None, *, classes: Any = None, bounds: Any = None
    ):
        """One pass over a further release (or clean batch, oracle), continuing the fit."""
        fitted = hasattr(self, "t_")
        prev = getattr(self, "classes_", None)
        X, yy, s2, eps_y, R = self._prepare(data, y, bounds, classes, reset=not fitted)
        if fitted and not np.array_equal(prev, self.classes_):
            raise ValidationError("partial_fit: classes differ from the fit")
        return self._run(X, yy, s2, eps_y, self.loss, R, incremental=True)

    def decision_function(self, X: Any) -> np.ndarray:
        """f(x) = coef_ . x + intercept_ on the release's public map of clean features."""
        return self._map(X) @ self.coef_[0] + self.intercept_[0]

    def predict(self, X: Any) -> np.ndarray:
        f = self.decision_function(X)
        return self.classes_[(f > 0).astype(int)]

    @available_if(_has_proba)
    def predict_proba(self, X: Any) -> np.ndarray:
        """P(y = classes_[1] | x): sigmoid(f) (logistic), sigmoid(2 f) (exponential)."""
        f = self.decision_function(X)
        scale = _proba_scale(self)
        p1 = 0.5 * (1.0 + np.tanh(scale * f / 2.0))  # sigmoid, overflow-free
        return np.column_stack([1.0 - p1, p1])


class IWPSGDRegressor(_ContractTags, RegressorMixin, _IWPSGDBase):
    """Linear regression by IWP-SGD on a release with a noised target (paper 004, App. E.2).

    Gradient x~ (theta^T x~ - y~) - sigma^2 theta (+ alpha theta); ``method="naive"`` omits the
    correction, ``"oracle"`` fits clean arrays (pass ``bounds`` and ``y_bounds`` to use
    the release's coordinates). ``predict`` returns the target in the caller's units.

    ``alpha`` defaults to 0.1, not the classifier's 1: for features uniform on [-1, 1]^p,
    E[x x'] = I / 3, and alpha = 1 shrinks the least-squares coefficients 4-fold (test
    R^2 0.41 against 0.87 at alpha = 0.1 on a (12, 1e-5)-LDP release of 300,000
    examples; 0.38 against 0.66 at 50,000; docs/iwp-sgd.md, Sec. 3).
    """

    __doc__ = (__doc__ or "") + _COMMON_DOC
    _task = "regression"

    def __init__(
        self,
        *,
        method: str = "iwp",
        batch_size: int = 128,
        learning_rate: str | float | Callable[[int], float] = "optimal",
        eta0: float | str = "auto",
        power_t: float = 0.5,
        alpha: float = 0.1,
        theta_radius: float | str | None = "auto",
        averaging: str | None = "tail",
        n_passes: int = 1,
        warm_start: bool = False,
        shuffle: bool = False,
        record_every: int | None = None,
        progress: bool = True,
        random_state: Any = None,
        fit_intercept: bool = False,
    ):
        self.fit_intercept = fit_intercept
        self.method = method
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.alpha = alpha
        self.theta_radius = theta_radius
        self.averaging = averaging
        self.n_passes = n_passes
        self.warm_start = warm_start
        self.shuffle = shuffle
        self.record_every = record_every
        self.progress = progress
        self.random_state = random_state

    def _prepare(self, data, y, bounds, y_bounds, reset=True):
        self._check_method(data)
        if isinstance(data, PrivateExamples):
            self._from_release(data, reset)
            self.y_bounds_ = data.y_bounds
            self.guarantee_ = data.guarantee if math.isfinite(data.epsilon_x) else None
            self._y_noise_var = float(data.sigma2_y)
            return data.X, data.y, data.sigma2, data.x_radius, 1.0
        X, yv = validate_fit_data(self, data, y, classifier=False, reset=reset)
        if reset:
            self.bounds_ = None if bounds is None else check_bounds(bounds, X.shape[1])
            self.y_bounds_ = None if y_bounds is None else tuple(y_bounds)
        self.guarantee_ = None
        self._y_noise_var = 0.0
        if self.y_bounds_ is not None:
            lo, hi = self.y_bounds_
            yv = (yv - (lo + hi) / 2) / ((hi - lo) / 2)
        Z = self._box(X)
        y_scale = 1.0 if self.y_bounds_ is not None else float(np.abs(yv).max(initial=1.0))
        return Z, yv, 0.0, self._clean_radius(Z), y_scale

    def fit(
        self,
        data: PrivateExamples | Any,
        y: Any = None,
        *,
        bounds: Any = None,
        y_bounds: tuple[float, float] | None = None,
    ):
        if not self.warm_start:
            self.__dict__.pop("t_", None)
        X, yv, s2, R, ys = self._prepare(data, y, bounds, y_bounds)
        return self._run(X, yv, s2, math.inf, "squared", R, y_scale=ys, y_var=self._y_noise_var)

    def partial_fit(
        self,
        data: PrivateExamples | Any,
        y: Any = None,
        *,
        bounds: Any = None,
        y_bounds: tuple[float, float] | None = None,
    ):
        """One pass over a further release (or clean batch, oracle), continuing the fit."""
        fitted = hasattr(self, "t_")
        X, yv, s2, R, ys = self._prepare(data, y, bounds, y_bounds, reset=not fitted)
        return self._run(
            X, yv, s2, math.inf, "squared", R, incremental=True, y_scale=ys, y_var=self._y_noise_var
        )

    def predict(self, X: Any) -> np.ndarray:
        """The target in the caller's units (the release's public target map undone)."""
        out = self._map(X) @ self.coef_ + self.intercept_
        if self.y_bounds_ is None:
            return out
        lo, hi = self.y_bounds_
        return out * (hi - lo) / 2 + (lo + hi) / 2
