"""privest: differentially private statistics and learning with honest inference.

The public API is re-exported here; see ``docs/`` (``docs/vocabulary.md`` lists every
public name).

The names are loaded on first use (PEP 562): ``import privest`` imports neither numpy nor
any subpackage, so the ``privest`` command starts fast. ``privest.ZILMechanism``,
``from privest import ZILMechanism`` and ``dir(privest)`` work as with eager imports, and
subpackages (``privest.audit``, ...) load on attribute access too.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from privest._version import __version__

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from privest.accounting import (
        ApproxDP,
        Budget,
        Guarantee,
        ZILGuarantee,
        ZILTradeoff,
    )
    from privest.accuracy import (
        Accuracy,
        ReferenceData,
        predict_examples,
        predict_gaussian,
        predict_model,
        predict_ptr,
        predict_statistic,
        predict_table,
        predict_zil,
    )
    from privest.domain import Domain
    from privest.errors import (
        BoundsError,
        BudgetExceededError,
        DuplicateRecordError,
        EstimationError,
        NoCompileCacheWarning,
        NoiseDominatedWarning,
        NoStandardErrorsWarning,
        NothingReleasedWarning,
        PrivacyHabitWarning,
        PrivacyParameterError,
        PrivestError,
        StoreError,
        UnreachableTargetError,
        UnstableIntervalWarning,
        ValidationError,
    )
    from privest.learn import (
        DRHingeClassifier,
        DRLinearRegression,
        DRLogisticRegression,
        DRMEstimator,
        DRQuantileRegressor,
        IWPSGDClassifier,
        IWPSGDRegressor,
    )
    from privest.mechanisms import (
        EPTR,
        ClassicPTR,
        EPTRRelease,
        GaussianMechanism,
        InverseSensitivity,
        LaplaceMechanism,
        Mechanism,
        PermuteAndFlip,
        PiecewiseLaplace,
        PrivateStatistic,
        PrivateValue,
        PTRMedian,
        SmoothSensitivity,
        TwoStage,
    )
    from privest.models import (
        EPTRBayesClassifier,
        EPTRKernelRegressor,
        EPTRLinearRegression,
        PrivateLinearRegression,
        PrivateLogisticRegression,
        private_count,
        private_mean,
        private_median,
        private_quantile,
        private_statistic,
        private_sum,
        private_variance,
        statistic_mechanism,
    )
    from privest.planning import plan
    from privest.release import (
        ExampleMechanism,
        PrivateExamples,
        RegressionExampleMechanism,
        ZILMechanism,
        ZILRelease,
        load_release,
        release_examples,
        release_regression_examples,
    )
    from privest.reports import report
    from privest.rng import make_rng, rng_kind
    from privest.stattests import (
        PrivateTestResult,
        mean_diff_test,
        mean_test,
        proportion_diff_test,
        proportion_test,
    )
    from privest.tables import PrivateTable, contingency, tabulate

#: Where each public name lives (the module it is imported from on first use).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "privest.domain": ("Domain",),
    "privest.accuracy": (
        "Accuracy",
        "ReferenceData",
        "predict_examples",
        "predict_gaussian",
        "predict_model",
        "predict_ptr",
        "predict_statistic",
        "predict_table",
        "predict_zil",
    ),
    "privest.planning": ("plan",),
    "privest.reports": ("report",),
    "privest.accounting": (
        "ApproxDP",
        "Budget",
        "Guarantee",
        "ZILGuarantee",
        "ZILTradeoff",
    ),
    "privest.errors": (
        "BoundsError",
        "BudgetExceededError",
        "DuplicateRecordError",
        "EstimationError",
        "NoCompileCacheWarning",
        "NoStandardErrorsWarning",
        "NoiseDominatedWarning",
        "NothingReleasedWarning",
        "PrivacyHabitWarning",
        "PrivacyParameterError",
        "PrivestError",
        "StoreError",
        "UnreachableTargetError",
        "UnstableIntervalWarning",
        "ValidationError",
    ),
    "privest.learn": (
        "DRHingeClassifier",
        "DRLinearRegression",
        "DRLogisticRegression",
        "DRMEstimator",
        "DRQuantileRegressor",
        "IWPSGDClassifier",
        "IWPSGDRegressor",
    ),
    "privest.mechanisms": (
        "EPTR",
        "ClassicPTR",
        "EPTRRelease",
        "GaussianMechanism",
        "InverseSensitivity",
        "LaplaceMechanism",
        "Mechanism",
        "PTRMedian",
        "PermuteAndFlip",
        "PiecewiseLaplace",
        "PrivateStatistic",
        "PrivateValue",
        "SmoothSensitivity",
        "TwoStage",
    ),
    "privest.models": (
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
    ),
    "privest.release": (
        "ExampleMechanism",
        "PrivateExamples",
        "RegressionExampleMechanism",
        "ZILMechanism",
        "ZILRelease",
        "load_release",
        "release_examples",
        "release_regression_examples",
    ),
    "privest.rng": (
        "make_rng",
        "rng_kind",
    ),
    "privest.stattests": (
        "PrivateTestResult",
        "mean_diff_test",
        "mean_test",
        "proportion_diff_test",
        "proportion_test",
    ),
    "privest.tables": (
        "PrivateTable",
        "contingency",
        "tabulate",
    ),
}
_LAZY: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

#: kept literal for linters; tests/test_package.py checks it equals _EXPORTS
__all__ = [
    "Accuracy",
    "ApproxDP",
    "BoundsError",
    "Budget",
    "BudgetExceededError",
    "ClassicPTR",
    "DRHingeClassifier",
    "Domain",
    "DRLinearRegression",
    "DRLogisticRegression",
    "DRMEstimator",
    "DRQuantileRegressor",
    "DuplicateRecordError",
    "EPTR",
    "EPTRBayesClassifier",
    "EPTRKernelRegressor",
    "EPTRLinearRegression",
    "EPTRRelease",
    "EstimationError",
    "ExampleMechanism",
    "GaussianMechanism",
    "Guarantee",
    "IWPSGDClassifier",
    "IWPSGDRegressor",
    "InverseSensitivity",
    "LaplaceMechanism",
    "Mechanism",
    "NoCompileCacheWarning",
    "NoStandardErrorsWarning",
    "NoiseDominatedWarning",
    "NothingReleasedWarning",
    "PTRMedian",
    "PermuteAndFlip",
    "PiecewiseLaplace",
    "PrivacyHabitWarning",
    "PrivacyParameterError",
    "PrivateExamples",
    "PrivateLinearRegression",
    "PrivateLogisticRegression",
    "PrivateStatistic",
    "PrivateTable",
    "PrivateTestResult",
    "PrivateValue",
    "PrivestError",
    "ReferenceData",
    "RegressionExampleMechanism",
    "SmoothSensitivity",
    "StoreError",
    "TwoStage",
    "UnreachableTargetError",
    "UnstableIntervalWarning",
    "ValidationError",
    "ZILGuarantee",
    "ZILMechanism",
    "ZILRelease",
    "ZILTradeoff",
    "__version__",
    "contingency",
    "load_release",
    "make_rng",
    "mean_diff_test",
    "mean_test",
    "plan",
    "predict_examples",
    "predict_gaussian",
    "predict_model",
    "predict_ptr",
    "predict_statistic",
    "predict_table",
    "predict_zil",
    "private_count",
    "private_mean",
    "private_median",
    "private_quantile",
    "private_statistic",
    "private_sum",
    "private_variance",
    "proportion_diff_test",
    "proportion_test",
    "release_examples",
    "release_regression_examples",
    "report",
    "rng_kind",
    "statistic_mechanism",
    "tabulate",
]


def __getattr__(name: str) -> Any:
    """Import a public name (or a subpackage such as ``audit``) on first access."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
