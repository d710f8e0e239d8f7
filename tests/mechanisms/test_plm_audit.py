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
from privest.mechanisms.inverse_sensitivity import InverseSensitivity
from privest.mechanisms.laplace import LaplaceMechanism
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.smooth_sensitivity import SmoothSensitivity

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
    m = PiecewiseLaplace.for_statistic(X, "median", epsilon=EPS, bounds=(0, 1))
    mp = PiecewiseLaplace.for_statistic(XP, "median", epsilon=EPS, bounds=(0, 1))
    result = _audit(m, mp, m.guarantee, 1)
    assert not result.contradicts, result.summary()
    assert result.epsilon_lower_bound() > 0.3  # the audit has power on this pair


def test_baselines_meet_their_guarantees():
    for cls in (InverseSensitivity, LaplaceMechanism):
        m = cls.for_statistic(X, "median", epsilon=EPS, bounds=(0, 1))
        mp = cls.for_statistic(XP, "median", epsilon=EPS, bounds=(0, 1))
        assert not _audit(m, mp, m.guarantee, 2).contradicts
    s, sp = (SmoothSensitivity(d, epsilon=EPS, bounds=(0, 1)) for d in (X, XP))
    assert not _audit(s, sp, s.guarantee, 3).contradicts


def test_broken_plm_is_caught():
    """Negative control: PLM run at 4 eps but claimed eps-DP."""
    m = PiecewiseLaplace.for_statistic(X, "median", epsilon=4 * EPS, bounds=(0, 1))
    mp = PiecewiseLaplace.for_statistic(XP, "median", epsilon=4 * EPS, bounds=(0, 1))
    result = _audit(m, mp, ApproxDP(EPS), 4)
    assert result.contradicts
    assert result.epsilon_lower_bound() > EPS


def test_local_sensitivity_laplace_is_caught():
    """Negative control: Laplace scaled to the local sensitivity (no pieces) leaks."""
    ls = lambda d: max(np.diff(np.sort(np.r_[d, 0.0, 1.0]))[1:-1].max(), 1e-3)  # noqa: E731
    m = LaplaceMechanism(float(np.median(X)), 2 * ls(X), EPS)
    mp = LaplaceMechanism(float(np.median(XP)), 2 * ls(XP), EPS)
    assert _audit(m, mp, ApproxDP(EPS), 5).contradicts
