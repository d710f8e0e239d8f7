"""Central mechanisms: the curator holds the data and releases a statistic or model.

Papers 001 (efficient Propose-Test-Release) and 002 (piecewise Laplace mechanism). Every
mechanism has one shape (:class:`Mechanism`): built from public parameters, ``.guarantee``
before any data, ``.release(data, rng=...)`` returning an object with the same guarantee.
The statistic mechanisms also give ``law(x)``, the curator's (non-private) view of the
output distribution on a data set (an :class:`OutputLaw`: density and exact error laws).

The names are loaded on first use (PEP 562, as in :mod:`privest`): importing one mechanism
(``privest.mechanisms.auto``, say) does not import the others, nor scipy's modules that
only some of them need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
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
    from privest.mechanisms.profiles.reaches import (
        ReachProfile,
        check_reach_property,
        profile_for,
    )
    from privest.mechanisms.ptr import ClassicPTR, classic_ptr_probability
    from privest.mechanisms.ptr_median import PTRMedian, PTRMedianLaw
    from privest.mechanisms.smooth_sensitivity import SmoothSensitivity, SmoothSensitivityLaw
    from privest.mechanisms.statistic import StatisticMechanism
    from privest.mechanisms.two_stage import TwoStage, TwoStageLaw
    from privest.released import PrivateStatistic, PrivateValue

_M = "privest.mechanisms"
#: Where each public name lives (the module it is imported from on first use).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "privest.contract": ("Mechanism",),
    f"{_M}.approximate": (
        "ApproximateLpPLMLaw",
        "ApproximatePiecewiseLaplaceLaw",
        "RadiusBounds",
    ),
    f"{_M}.eptr": (
        "EPTR",
        "EPTRRelease",
        "eptr_noise_scale",
        "eptr_pair_divergence",
        "ptr_threshold",
        "release_probability",
    ),
    f"{_M}.gaussian": ("GaussianMechanism", "gaussian_delta", "gaussian_sigma"),
    f"{_M}.inverse_sensitivity": (
        "GridInverseSensitivityLaw",
        "InverseSensitivity",
        "InverseSensitivityLaw",
    ),
    f"{_M}.laplace": ("LaplaceLaw", "LaplaceMechanism"),
    f"{_M}.lattice_pf": ("PermuteAndFlip", "PermuteFlipLaw"),
    f"{_M}.laws.base": ("OutputLaw",),
    f"{_M}.piecewise_laplace": ("PiecewiseLaplace", "PiecewiseLaplaceLaw"),
    f"{_M}.profiles.reaches": ("ReachProfile", "check_reach_property", "profile_for"),
    f"{_M}.ptr": ("ClassicPTR", "classic_ptr_probability"),
    f"{_M}.ptr_median": ("PTRMedian", "PTRMedianLaw"),
    f"{_M}.smooth_sensitivity": ("SmoothSensitivity", "SmoothSensitivityLaw"),
    f"{_M}.statistic": ("StatisticMechanism",),
    f"{_M}.two_stage": ("TwoStage", "TwoStageLaw"),
    "privest.released": ("PrivateStatistic", "PrivateValue"),
}
_LAZY: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

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
