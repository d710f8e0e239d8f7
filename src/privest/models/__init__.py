"""Central-DP estimators built on :mod:`privest.mechanisms` (papers 001 and 002).

The paper-001 baselines (``dpnb``, ``dpjl``, ...) live in
:mod:`privest.models.eptr_baselines`; they are kept for comparisons, not recommended.

The names are loaded on first use (PEP 562, as in :mod:`privest`): ``private_median``
imports the statistics alone, not the estimators (nor scikit-learn, which they need).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from privest.models.eptr_bayes import EPTRBayesClassifier
    from privest.models.eptr_nw import EPTRKernelRegressor
    from privest.models.eptr_ols import EPTRLinearRegression
    from privest.models.linear import PrivateLinearRegression
    from privest.models.logistic import PrivateLogisticRegression
    from privest.models.statistics import (
        private_count,
        private_mean,
        private_median,
        private_quantile,
        private_statistic,
        private_sum,
        private_variance,
        statistic_mechanism,
    )

#: Where each public name lives (the module it is imported from on first use).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "privest.models.eptr_bayes": ("EPTRBayesClassifier",),
    "privest.models.eptr_nw": ("EPTRKernelRegressor",),
    "privest.models.eptr_ols": ("EPTRLinearRegression",),
    "privest.models.linear": ("PrivateLinearRegression",),
    "privest.models.logistic": ("PrivateLogisticRegression",),
    "privest.models.statistics": (
        "private_count",
        "private_mean",
        "private_median",
        "private_quantile",
        "private_statistic",
        "private_sum",
        "private_variance",
        "statistic_mechanism",
    ),
}
_LAZY: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "EPTRBayesClassifier",
    "EPTRKernelRegressor",
    "EPTRLinearRegression",
    "PrivateLinearRegression",
    "PrivateLogisticRegression",
    "private_count",
    "private_mean",
    "private_median",
    "private_quantile",
    "private_statistic",
    "private_sum",
    "private_variance",
    "statistic_mechanism",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first access (module docstring)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
