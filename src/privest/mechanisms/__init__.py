"""Central mechanisms: the curator holds the data and releases a statistic or model.

Papers 001 (efficient Propose-Test-Release) and 002 (piecewise Laplace mechanism). Every
mechanism has one shape (:class:`Mechanism`): built from public parameters, ``.guarantee``
before any data, ``.release(data, rng=...)`` returning an object with the same guarantee.
The statistic mechanisms also give ``law(x)``, the curator's (non-private) view of the
output distribution on a data set (an :class:`OutputLaw`: density and exact error laws).
"""

from privest.contract import Mechanism
from privest.mechanisms.approximate import (
    ApproximateLpPLMLaw,
    ApproximatePiecewiseLaplaceLaw,
    RadiusBounds,
)
from privest.mechanisms.eptr import (
    EPTR,
    EPTRRelease,
    eptr_noise_scale,
    eptr_pair_divergence,
    ptr_threshold,
    release_probability,
)
from privest.mechanisms.gaussian import GaussianMechanism, gaussian_delta, gaussian_sigma
from privest.mechanisms.inverse_sensitivity import (
    GridInverseSensitivityLaw,
    InverseSensitivity,
    InverseSensitivityLaw,
)
from privest.mechanisms.laplace import LaplaceLaw, LaplaceMechanism
from privest.mechanisms.lattice_pf import PermuteAndFlip, PermuteFlipLaw
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace, PiecewiseLaplaceLaw
from privest.mechanisms.profiles.reaches import ReachProfile, check_reach_property, profile_for
from privest.mechanisms.ptr import ClassicPTR, classic_ptr_probability
from privest.mechanisms.ptr_median import PTRMedian, PTRMedianLaw
from privest.mechanisms.smooth_sensitivity import SmoothSensitivity, SmoothSensitivityLaw
from privest.mechanisms.statistic import StatisticMechanism
from privest.mechanisms.two_stage import TwoStage, TwoStageLaw
from privest.released import PrivateStatistic, PrivateValue

__all__ = [
    "EPTR",
    "ApproximateLpPLMLaw",
    "ApproximatePiecewiseLaplaceLaw",
    "ClassicPTR",
    "EPTRRelease",
    "GaussianMechanism",
    "GridInverseSensitivityLaw",
    "InverseSensitivity",
    "InverseSensitivityLaw",
    "LaplaceLaw",
    "LaplaceMechanism",
    "Mechanism",
    "OutputLaw",
    "PTRMedian",
    "PTRMedianLaw",
    "PermuteAndFlip",
    "PermuteFlipLaw",
    "PiecewiseLaplace",
    "PiecewiseLaplaceLaw",
    "PrivateStatistic",
    "PrivateValue",
    "RadiusBounds",
    "ReachProfile",
    "SmoothSensitivity",
    "SmoothSensitivityLaw",
    "StatisticMechanism",
    "TwoStage",
    "TwoStageLaw",
    "check_reach_property",
    "classic_ptr_probability",
    "eptr_noise_scale",
    "eptr_pair_divergence",
    "gaussian_delta",
    "gaussian_sigma",
    "profile_for",
    "ptr_threshold",
    "release_probability",
]
