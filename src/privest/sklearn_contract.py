"""The scikit-learn estimator contract for privest's estimators, and where it breaks privacy.

Input validation goes through scikit-learn's own utilities (``validate_data``,
``check_is_fitted``, ``check_classification_targets``), so the estimators raise what
scikit-learn raises (``NotFittedError``, ``X has 3 features, but ... is expecting 4``,
feature names seen at fit in another order) and set ``n_features_in_`` and
``feature_names_in_``. Two privest rules are kept on top: a message never carries a data
value (docs/vocabulary.md; scikit-learn's "could not convert string to float: 'abc'" would),
and non-numeric DataFrame columns are named.

Two scikit-learn habits spend privacy without saying so (docs/central-models.md, "With
scikit-learn"); :func:`warn_privacy_habits`, called by every private ``fit``, warns about
them with a :class:`~privest.errors.PrivacyHabitWarning`:

* a data-dependent transformer (``StandardScaler``, ``MinMaxScaler``, ...) before a private
  estimator in a ``Pipeline``: its fitted means, ranges or quantiles are read off the
  private data and are not private; they also make the public bounds meaningless. Scale with
  public bounds instead (a ``FunctionTransformer`` with constants);
* ``GridSearchCV``, ``RandomizedSearchCV`` or cross-validation over a private estimator:
  every fit is a new release from the same records, so k fits spend k times the guarantee
  (basic composition, Dwork and Roth 2014, Thm 3.16). The warning names the total.
"""

from __future__ import annotations

import sys
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from privest.errors import BudgetExceededError, PrivacyHabitWarning, ValidationError
from privest.validation import check_real_data

__all__ = [
    "DATA_DEPENDENT_TRANSFORMERS",
    "PrivateEstimatorMixin",
    "validate_fit_data",
    "validate_predict_data",
    "warn_privacy_habits",
]

#: scikit-learn transformers whose fit reads statistics off the data (not private).
DATA_DEPENDENT_TRANSFORMERS = (
    "StandardScaler",
    "MinMaxScaler",
    "MaxAbsScaler",
    "RobustScaler",
    "QuantileTransformer",
    "PowerTransformer",
    "KBinsDiscretizer",
    "SplineTransformer",
    "SimpleImputer",
    "KNNImputer",
    "IterativeImputer",
    "PCA",
    "TruncatedSVD",
)
#: how many calling frames :func:`warn_privacy_habits` looks through
_MAX_FRAMES = 60


class PrivateEstimatorMixin:
    """Tags of a private estimator: its fit is random, so scikit-learn's checks may expect
    the same output from two fits only when ``random_state`` is fixed."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.non_deterministic = getattr(self, "random_state", None) is None
        return tags


def _numeric_frame(X: Any, name: str = "X") -> None:
    """Refuse non-numeric DataFrame columns (named) and arrays holding text
    (:func:`~privest.validation.check_real_data`), which a float conversion would read
    silently ('2' as 2); scikit-learn's own checks refuse complex, sparse and other
    objects with the messages its estimator checks expect."""
    if isinstance(X, pd.DataFrame):
        bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if bad:
            raise ValidationError(
                f"{name}: columns {bad} are not numeric; privest accepts numeric columns only "
                "(encode categories as numbers first)"
            )
        return
    if sparse.issparse(X):
        return  # scikit-learn's "sparse input is not supported"
    try:
        arr = X.to_numpy() if isinstance(X, pd.Series) else np.asarray(X)
    except (TypeError, ValueError):
        return  # ragged input: scikit-learn's own message
    if arr.dtype.kind == "c" or (
        arr.dtype.kind == "O" and not any(isinstance(v, str | bytes) for v in arr.ravel())
    ):
        return  # complex, or objects without text: scikit-learn's own checks and messages
    check_real_data(arr, name)


def _without_values(exc: Exception) -> Exception:
    """Errors that quote data (numpy's conversion errors, scikit-learn's 1-D message, which
    prints the array) are replaced by the same message without the values."""
    text = str(exc)
    if "could not convert" in text:
        return ValidationError(
            "X/y: cannot be read as numbers; pass numeric arrays or DataFrames (encode "
            "categories as numbers first)"
        )
    if "array=" in text:
        got = "a scalar" if "scalar" in text else "a 1-D array"
        return ValidationError(
            f"X: expected a 2-D array (records x attributes), got {got}. Reshape your data "
            "either using X.reshape(-1, 1) if your data has a single feature or "
            "X.reshape(1, -1) if it contains a single sample."
        )
    if isinstance(exc, ValueError) and not isinstance(exc, ValidationError):
        return ValidationError(text)  # scikit-learn's message, privest's exception type
    return exc


def validate_fit_data(
    estimator: Any, X: Any, y: Any, *, classifier: bool = False, reset: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` as float matrix and vector (labels kept as given for a classifier),
    through ``validate_data``: sets ``n_features_in_`` and ``feature_names_in_`` (with
    ``reset=False``, as ``partial_fit`` after the first call, checks them instead)."""
    _numeric_frame(X)
    if not classifier:
        _numeric_frame(y, "y")
    try:
        X, y = validate_data(
            estimator, X, y, dtype=np.float64, y_numeric=not classifier, reset=reset
        )
    except (ValueError, TypeError) as exc:
        raise _without_values(exc) from None
    if classifier and not (y.ndim == 1 and y.dtype.kind in "biu"):
        # integer or boolean labels in one column are binary or multiclass: always accepted
        try:
            check_classification_targets(y)
        except ValueError as exc:  # scikit-learn's message names the label type only
            raise ValidationError(f"y: {exc}") from None
    return X, y


def validate_predict_data(estimator: Any, X: Any, attribute: str | None = None) -> np.ndarray:
    """``X`` for a fitted estimator: ``NotFittedError`` before ``fit``; the number, names
    and order of the columns seen at fit (scikit-learn's checks and messages)."""
    check_is_fitted(estimator, attribute)
    _numeric_frame(X)
    try:
        return validate_data(estimator, X, dtype=np.float64, reset=False)
    except (ValueError, TypeError) as exc:
        raise _without_values(exc) from None


def _callers() -> Iterator[tuple[Any, Any]]:
    """(the frame's ``self`` or None, the frame) for the calling frames, innermost first."""
    frame: Any = sys._getframe(2)
    for _ in range(_MAX_FRAMES):
        if frame is None:
            return
        yield frame.f_locals.get("self"), frame
        frame = frame.f_back


def _data_dependent(step: Any) -> list[str]:
    """Names of the data-dependent transformers in a step (nested pipelines included)."""
    if step is None or isinstance(step, str):
        return []
    found = [type(step).__name__] if type(step).__name__ in DATA_DEPENDENT_TRANSFORMERS else []
    for attr in ("steps", "transformer_list", "transformers"):
        for item in getattr(step, attr, None) or []:
            found += _data_dependent(item[1])
    return found


def _pipeline_scalers(estimator: Any, owner: Any) -> list[str]:
    from sklearn.pipeline import Pipeline

    if not isinstance(owner, Pipeline):
        return []
    steps = [s for _, s in owner.steps]
    idx = next((i for i, s in enumerate(steps) if s is estimator), None)
    if idx is None:
        return []
    return [name for s in steps[:idx] for name in _data_dependent(s)]


def _search_fits(owner: Any) -> tuple[int, bool] | None:
    """How many fits a search makes (candidates x folds, + 1 refit), and whether its
    candidates vary the privacy parameters (then each fit spends its own)."""
    from sklearn.model_selection import GridSearchCV, ParameterGrid, RandomizedSearchCV

    n_splits = getattr(owner, "n_splits_", None)
    if isinstance(owner, GridSearchCV):
        grid = owner.param_grid
        n_candidates = len(ParameterGrid(grid))
        keys = {k for g in (grid if isinstance(grid, list) else [grid]) for k in g}
    elif isinstance(owner, RandomizedSearchCV):
        n_candidates = int(owner.n_iter)
        dists = owner.param_distributions
        keys = {k for g in (dists if isinstance(dists, list) else [dists]) for k in g}
    else:
        return None
    if n_splits is None:
        return None
    varies = any(k.split("__")[-1] in ("epsilon", "delta", "budget") for k in keys)
    return n_candidates * int(n_splits) + int(bool(owner.refit)), varies


#: the search runs already checked against their budget (a run is one ``fit`` call of the
#: search: scikit-learn makes a new ``_checked_cv_orig`` at each)
_CHECKED_RUNS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _planned_spends(search: Any, epsilon: float, delta: float) -> list | None:
    """(epsilon, delta) of every fit the search will make (candidates x folds + the refit at
    the largest candidate), or None when they cannot be known before it runs."""
    from sklearn.model_selection import GridSearchCV, ParameterGrid

    counted = _search_fits(search)
    if counted is None:
        return None
    fits, varies = counted
    if not varies:
        return [(epsilon, delta)] * fits
    if not isinstance(search, GridSearchCV):
        return None  # sampled candidates: unknown until drawn
    cands = []
    for params in ParameterGrid(search.param_grid):
        last = {k.split("__")[-1]: v for k, v in params.items()}
        if "budget" in last:
            return None
        cands.append((last.get("epsilon", epsilon), last.get("delta", delta)))
    plan = [c for c in cands for _ in range(int(search.n_splits_))]
    if search.refit:
        plan.append(max(cands))
    return plan


def _refuse_unaffordable_search(
    search: Any, estimator: Any, budget: Any, epsilon: float, delta: float
) -> None:
    """:class:`BudgetExceededError` at the first fit of a search run whose fits together
    cannot fit what is left of ``budget`` (the same composition as ``Budget.charge``), so a
    search never spends part of a budget and then fails at its refit."""
    from privest.accounting.accountants import best, compose_events
    from privest.accounting.base import ApproxDP
    from privest.accounting.budget import event_of

    run = getattr(search, "_checked_cv_orig", None)
    checked = _CHECKED_RUNS.get(search)
    if run is None or (checked is not None and checked[0] is run and checked[1] is None):
        return
    if checked is not None and checked[0] is run:
        # every fit of a refused run is refused (scikit-learn catches each)
        raise BudgetExceededError(str(checked[1]))
    plan = _planned_spends(search, epsilon, delta)
    refusal = None
    if plan is not None:
        events = [s.event for s in budget.spends] + [event_of(ApproxDP(e, d)) for e, d in plan]
        after = best(compose_events(events, budget.delta, budget.accountant))
        if after.epsilon > budget.epsilon * (1 + 1e-12) or after.delta > budget.delta * (1 + 1e-12):
            refusal = BudgetExceededError(
                f"budget: {type(search).__name__} would fit {type(estimator).__name__} "
                f"{len(plan)} times; with what is already spent that composes to (epsilon="
                f"{after.epsilon:.4g}, delta={after.delta:.3g}, {after.accountant} "
                f"composition), beyond the total (epsilon={budget.epsilon:g}, delta="
                f"{budget.delta:g}). Every fit of the search is refused before it reads "
                "anything: nothing was spent. Search fewer candidates or folds, or choose "
                "settings from public information."
            )
    _CHECKED_RUNS[search] = (run, refusal)
    if refusal is not None:
        raise refusal


def warn_privacy_habits(estimator: Any, epsilon: float, delta: float) -> None:
    """Warn when this ``fit`` runs after a data-dependent transformer in a Pipeline, or
    inside a model search or cross-validation (module docstring)."""
    from sklearn.model_selection._search import BaseSearchCV

    scalers: list[str] = []
    search: Any = None
    cross_validation = False
    for owner, frame in _callers():
        if isinstance(owner, PrivateEstimatorMixin) and owner is not estimator:
            return  # a fit inside another private estimator's fit: that one warns
        scalers += _pipeline_scalers(estimator, owner)
        if isinstance(owner, BaseSearchCV):
            search = owner
            break
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            cross_validation = True
    name = type(estimator).__name__
    if scalers:
        warnings.warn(
            f"{name} is fitted after {', '.join(sorted(set(scalers)))} in a Pipeline: such a "
            "transformer learns means, ranges or quantiles from the private data, which are "
            "not private and make the public bounds meaningless. Scale with public bounds "
            "instead (e.g. a FunctionTransformer with constants).",
            PrivacyHabitWarning,
            stacklevel=3,
        )
    if search is None and not cross_validation:
        return
    counted = _search_fits(search) if search is not None else None
    what = type(search).__name__ if search is not None else "cross-validation"
    if counted is None:
        total = (
            f"k fits on the same records spend (k x {epsilon:g}, k x {delta:g}) (basic composition)"
        )
    elif counted[1]:
        total = (
            f"its {counted[0]} fits on the same records spend the sum of their candidates' "
            "(epsilon, delta) (basic composition)"
        )
    else:
        fits = counted[0]
        total = (
            f"its {fits} fits on the same records spend (epsilon={fits * epsilon:g}, "
            f"delta={min(fits * delta, 1.0):g}) in total (basic composition)"
        )
    budget = getattr(estimator, "budget", None)
    if budget is not None and search is not None:
        _refuse_unaffordable_search(search, estimator, budget, epsilon, delta)
    warnings.warn(
        f"{what} refits the private {name} once per candidate and fold: each fit spends "
        f"(epsilon={epsilon:g}, delta={delta:g}), and {total}. "
        + (
            "Its budget is charged at every fit and refuses the fit that would exceed it."
            if budget is not None
            else "Pass budget=privest.Budget(...) to cap the total, or choose settings from "
            "public information."
        ),
        PrivacyHabitWarning,
        stacklevel=3,
    )
