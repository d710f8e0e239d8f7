"""Central mechanisms: the curator holds the data and releases a statistic or model.

Papers 001 (efficient Propose-Test-Release) and 002 (piecewise Laplace mechanism).
"""

from privest.mechanisms.approximate import (
    ApproximateLpPLM,
    ApproximatePiecewiseLaplace,
    RadiusBounds,
)
from privest.mechanisms.base import Mechanism
from privest.mechanisms.eptr import (
    EPTR,
    EPTRRelease,
    eptr_noise_scale,
    eptr_pair_divergence,
    ptr_threshold,
    release_probability,
)
from privest.mechanisms.gaussian import GaussianMechanism, gaussian_delta, gaussian_sigma
from privest.mechanisms.inverse_sensitivity import GridInverseSensitivity, InverseSensitivity
from privest.mechanisms.laplace import LaplaceMechanism
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.profiles import ReachProfile, check_reach_property, profile_for
from privest.mechanisms.ptr import ClassicPTR, classic_ptr_probability
from privest.mechanisms.ptr_median import PTRMedian
from privest.mechanisms.smooth_sensitivity import SmoothSensitivity

__all__ = [
    "EPTR",
    "ClassicPTR",
    "EPTRRelease",
    "GaussianMechanism",
    "ApproximateLpPLM",
    "ApproximatePiecewiseLaplace",
    "GridInverseSensitivity",
    "InverseSensitivity",
    "LaplaceMechanism",
    "Mechanism",
    "PTRMedian",
    "PiecewiseLaplace",
    "RadiusBounds",
    "ReachProfile",
    "SmoothSensitivity",
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
