"""Output laws: the distribution of a mechanism's release on one data set (curator's view).

:class:`OutputLaw` derives every error functional (mean absolute error, mean squared error,
the probability that the error exceeds a value, its quantiles) from one function, the
output's CDF, in the manner of scipy.stats' distribution infrastructure; a law with a closed
form overrides what it can. :class:`DiscreteOutputLaw` derives them exactly from a pmf on
a finite support; :class:`PiecewiseDensity` is the two-step law of paper 002's piecewise
mechanisms.
"""

from privest.mechanisms.laws.base import DiscreteOutputLaw, OutputLaw
from privest.mechanisms.laws.piecewise import PiecewiseDensity, abs_error_quantile, texp_moments

__all__ = [
    "DiscreteOutputLaw",
    "OutputLaw",
    "PiecewiseDensity",
    "abs_error_quantile",
    "texp_moments",
]
