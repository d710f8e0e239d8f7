"""Central-DP estimators built on :mod:`privest.mechanisms` (papers 001 and 002)."""

from privest.models.statistics import (
    PrivateStatistic,
    private_count,
    private_mean,
    private_median,
    private_quantile,
    private_statistic,
    private_sum,
    private_variance,
)

__all__ = [
    "PrivateStatistic",
    "private_count",
    "private_mean",
    "private_median",
    "private_quantile",
    "private_statistic",
    "private_sum",
    "private_variance",
]
