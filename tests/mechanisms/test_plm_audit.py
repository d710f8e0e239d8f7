"""Empirical privacy audit (privest.audit) of PLM and the baselines, with negative controls.

Each audit uses the exact log-likelihood ratio of the two neighbouring output laws as the
test statistic, 60,000 draws per side and 95% simultaneous Clopper-Pearson bounds. A true
claim is contradicted with probability <= 5% (fixed seeds make each run deterministic);
the broken mechanisms are ones whose true epsilon is far above the claim.
"""

from __future__ import annotations

import numpy as np

from privest.accounting.base import ApproxDP
from privest.audit import audit
from privest.mechanisms.approximate import ApproximatePiecewiseLaplaceLaw, RadiusBounds
from privest.mechanisms.inverse_sensitivity import GridInverseSensitivityLaw, InverseSensitivityLaw
from privest.mechanisms.laplace import LaplaceLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw
from privest.mechanisms.profiles.reaches import sorted_data
from privest.mechanisms.smooth_sensitivity import (
    SmoothSensitivityLaw,
    local_sensitivity_at_distance,
)

EPS = 1.0
N = 60_000
# worst-case-style neighbours for the median: one record moves to the far bound
X = np.array([0.0, 0.05, 0.1, 0.15, 0.2])
XP = np.array([1.0, 0.05, 0.1, 0.15, 0.2])


def _audit(m, mp, claimed, seed):
    return audit(
        lambda n, g: m.sample(n, g),
        lambda n, g: mp.sample(n, g),
        claimed,
        n=N,
        llr=lambda y: mp.logpdf(y) - m.logpdf(y),
        rng=seed,
    )


def test_plm_meets_its_guarantee():
    m = PiecewiseLaplaceLaw.for_statistic(X, "median", epsilon=EPS, bounds=(0, 1))
    mp = PiecewiseLaplaceLaw.for_statistic(XP, "median", epsilon=EPS, bounds=(0, 1))
    result = _audit(m, mp, m.guarantee, 1)
    assert not result.contradicts, result.summary()
    assert result.epsilon_lower_bound() > 0.3  # the audit has power on this pair


def test_baselines_meet_their_guarantees():
    for cls in (InverseSensitivityLaw, LaplaceLaw):
        m = cls.for_statistic(X, "median", epsilon=EPS, bounds=(0, 1))
        mp = cls.for_statistic(XP, "median", epsilon=EPS, bounds=(0, 1))
        assert not _audit(m, mp, m.guarantee, 2).contradicts
    s, sp = (SmoothSensitivityLaw(d, epsilon=EPS, bounds=(0, 1)) for d in (X, XP))
    assert not _audit(s, sp, s.guarantee, 3).contradicts


def test_broken_plm_is_caught():
    """Negative control: PLM run at 4 eps but claimed eps-DP."""
    m = PiecewiseLaplaceLaw.for_statistic(X, "median", epsilon=4 * EPS, bounds=(0, 1))
    mp = PiecewiseLaplaceLaw.for_statistic(XP, "median", epsilon=4 * EPS, bounds=(0, 1))
    result = _audit(m, mp, ApproxDP(EPS), 4)
    assert result.contradicts
    assert result.epsilon_lower_bound() > EPS


def test_local_sensitivity_laplace_is_caught():
    """Negative control: Laplace scaled to the local sensitivity (no pieces) leaks."""
    ls = lambda d: max(np.diff(np.sort(np.r_[d, 0.0, 1.0]))[1:-1].max(), 1e-3)  # noqa: E731
    m = LaplaceLaw(float(np.median(X)), 2 * ls(X), EPS)
    mp = LaplaceLaw(float(np.median(XP)), 2 * ls(XP), EPS)
    assert _audit(m, mp, ApproxDP(EPS), 5).contradicts


# -- the variants: rho-smoothing, truncation, a public grid, approximate radii ---------------
def _approximate(d, radii_from):
    """Approximate 1-D PLM of the median (rank 3 of 5) from A_0, A_1 on [0, 1]."""
    aug, *_ = sorted_data(d, (0, 1))
    ak = local_sensitivity_at_distance(aug, 3, [0, 1])
    return ApproximatePiecewiseLaplaceLaw(float(aug[3]), radii_from(ak), EPS)


VARIANTS = {
    "rho-PLM": lambda d: PiecewiseLaplaceLaw.for_statistic(
        d, "median", epsilon=EPS, bounds=(0, 1), rho=0.05
    ),
    "truncated PLM, GS tail": lambda d: PiecewiseLaplaceLaw.for_statistic(
        d, "median", epsilon=EPS, bounds=(0, 1), truncate=2, tail="gs"
    ),
    "truncated INV, range-end tail": lambda d: InverseSensitivityLaw.for_statistic(
        d, "median", epsilon=EPS, bounds=(0, 1), truncate=3
    ),
    "grid INV": lambda d: GridInverseSensitivityLaw.for_statistic(
        d, "median", epsilon=EPS, grid=np.linspace(0, 1, 101), bounds=(0, 1)
    ),
    "approximate PLM, capped radii": lambda d: _approximate(
        d, lambda ak: RadiusBounds.from_local_sensitivity(ak, cap=1.0)
    ),
}


def test_variants_meet_their_guarantees():
    for seed, (name, build) in enumerate(VARIANTS.items(), start=10):
        m, mp = build(X), build(XP)
        result = _audit(m, mp, m.guarantee, seed)
        assert not result.contradicts, (name, result.summary())
        assert result.epsilon_lower_bound() > 0.2, name  # the audit has power on this pair


def test_data_dependent_radius_tail_is_caught():
    """Negative control (the audited bug): radii A_1(x) repeated forever, built past the
    builder that now refuses them. The tail scale follows the data and the audit sees it."""
    leaky = lambda ak: RadiusBounds(ak[1:])  # noqa: E731
    m, mp = _approximate(X, leaky), _approximate(XP, leaky)
    result = _audit(m, mp, ApproxDP(EPS), 6)
    assert result.contradicts
    assert result.epsilon_lower_bound() > 2 * EPS
