"""Central-DP estimators built on :mod:`privest.mechanisms` (papers 001 and 002).

The paper-001 baselines (``dpnb``, ``dpjl``, ...) live in
:mod:`privest.models.eptr_baselines`; they are kept for comparisons, not recommended.
"""

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
