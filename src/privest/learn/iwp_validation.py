"""Input validation of the IWP-SGD estimators through scikit-learn's own utilities.

``validate_data`` sets ``n_features_in_`` and ``feature_names_in_`` and raises what
scikit-learn raises (sparse input, complex or non-finite values, a 1-D ``X``, columns
in another order at predict time); ``check_is_fitted`` raises ``NotFittedError``. A
message never quotes a data value (numpy's "could not convert string to float: 'abc'"
would), so such errors are replaced by one that does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from privest.errors import ValidationError

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - scikit-learn 1.4 / 1.5

    def _validate_data(estimator: Any, *args: Any, **kwargs: Any) -> Any:
        return estimator._validate_data(*args, **kwargs)


__all__ = ["check_binary_target", "fit_arrays", "predict_array"]


def _without_values(exc: Exception) -> Exception:
    if "could not convert" in str(exc):
        return ValidationError(
            "X/y: cannot be read as numbers; pass numeric arrays or DataFrames (encode "
            "categories as numbers first)"
        )
    return exc


def fit_arrays(
    estimator: Any, X: Any, y: Any, *, classifier: bool, reset: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) as a float matrix and a vector (a classifier's labels as given)."""
    try:
        X, y = _validate_data(
            estimator, X, y, dtype=np.float64, y_numeric=not classifier, reset=reset
        )
    except (ValueError, TypeError) as exc:
        raise _without_values(exc) from None
    if classifier:
        check_classification_targets(y)
    return X, y


def check_binary_target(y: np.ndarray, classes: Any) -> np.ndarray:
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


def predict_array(estimator: Any, X: Any) -> np.ndarray:
    """X for a fitted estimator: ``NotFittedError`` before ``fit``; the number, names and
    order of the columns seen at fit."""
    check_is_fitted(estimator)
    try:
        return _validate_data(estimator, X, dtype=np.float64, reset=False)
    except (ValueError, TypeError) as exc:
        raise _without_values(exc) from None
