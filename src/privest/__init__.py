"""privest: differentially private statistics and learning with honest inference.

The public API is re-exported here; see ``docs/`` and ARCHITECTURE for the map.
"""

from privest.accounting import ApproxDP, Guarantee, ZILGuarantee, ZILTradeoff
from privest.errors import (
    BoundsError,
    DuplicateRecordError,
    PrivacyParameterError,
    PrivestError,
    StoreError,
    UnreachableTargetError,
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
from privest.mechanisms import EPTR, ClassicPTR, EPTRRelease, GaussianMechanism, PiecewiseLaplace
from privest.models import (
    EPTRBayesClassifier,
    EPTRKernelRegressor,
    EPTRLinearRegression,
    PrivateStatistic,
    private_count,
    private_mean,
    private_median,
    private_quantile,
    private_sum,
    private_variance,
)
from privest.release import (
    PrivateExamples,
    ZILMechanism,
    ZILRelease,
    load_release,
    release_examples,
    release_regression_examples,
)
from privest.rng import make_rng, rng_kind

__version__ = "0.1.0"

__all__ = [
    "EPTR",
    "ApproxDP",
    "ClassicPTR",
    "BoundsError",
    "DRHingeClassifier",
    "DRLinearRegression",
    "DRLogisticRegression",
    "DRMEstimator",
    "DRQuantileRegressor",
    "DuplicateRecordError",
    "EPTRBayesClassifier",
    "EPTRKernelRegressor",
    "EPTRLinearRegression",
    "EPTRRelease",
    "GaussianMechanism",
    "IWPSGDClassifier",
    "IWPSGDRegressor",
    "Guarantee",
    "PiecewiseLaplace",
    "PrivacyParameterError",
    "PrivateExamples",
    "PrivateStatistic",
    "PrivestError",
    "StoreError",
    "UnreachableTargetError",
    "ValidationError",
    "ZILGuarantee",
    "ZILMechanism",
    "ZILRelease",
    "ZILTradeoff",
    "__version__",
    "load_release",
    "make_rng",
    "private_count",
    "private_mean",
    "private_median",
    "private_quantile",
    "private_sum",
    "private_variance",
    "release_examples",
    "release_regression_examples",
    "rng_kind",
]
