"""Privacy audit of the ZIL release against its own guarantee (paper 000, Thm 3.1-3.3).

``audit_zil_mechanism`` runs the real release path on worst-case neighbours and tests
with the exact log-likelihood ratio (atoms included); each claim is checked with
simultaneous Clopper-Pearson bounds at 95% confidence.
"""

import numpy as np
import pytest

import privest as pv
from privest.accounting import ApproxDP, delta_tilde
from privest.audit import audit_zil_mechanism, zil_neighbours

#: columns whose ranges differ by 10^4: noise is per unit of each range (issue 13)
BOUNDS = {"a": (0.0, 1.0), "b": (-1.0, 1.0), "c": (0.0, 1e4)}
RANGES = np.array([1.0, 2.0, 1e4])


def _mech(lam):
    return pv.ZILMechanism(lam=lam, zero_prob=0.1, bounds=BOUNDS)


def test_neighbours_realise_the_paper_shifts():
    mech = _mech(1.5)
    x, xp = zil_neighbours(mech.bounds, "individual")
    assert np.linalg.norm((xp - x) / RANGES) / 1.5 == pytest.approx(mech.guarantee.c_individual)
    x, xp = zil_neighbours(mech.bounds, "attribute")
    assert np.count_nonzero(xp - x) == 1
    assert np.linalg.norm((xp - x) / RANGES) / 1.5 == pytest.approx(mech.guarantee.c_attribute)


def test_release_meets_its_individual_guarantee():
    """Named bounds (the README's form) work, and the guarantee holds on the worst pair."""
    result = audit_zil_mechanism(_mech(1.5), "individual", rng=1)
    assert not result.contradicts, result.summary()


def test_release_meets_its_epsilon_delta_envelopes():
    c = _mech(1.5).guarantee.c_individual
    for eps in (0.5, 1.0, 2.0):
        claim = ApproxDP(eps, delta_tilde(eps, c, 0.1))
        assert not audit_zil_mechanism(_mech(1.5), claimed=claim, rng=2).contradicts


def test_under_noised_release_is_caught():
    """Negative control: noise at a third of the scale the guarantee was computed for."""
    claimed = _mech(1.5).guarantee.individual
    result = audit_zil_mechanism(_mech(0.5), claimed=claimed, rng=3)
    assert result.contradicts
    assert result.epsilon_lower_bound(delta=0.2) > claimed.epsilon(0.2)


def test_attribute_unit_holds_and_fails_when_under_noised():
    claimed = _mech(0.5).guarantee.attribute
    assert not audit_zil_mechanism(_mech(0.5), "attribute", rng=4).contradicts
    assert audit_zil_mechanism(_mech(0.5 / 3.0), "attribute", claimed=claimed, rng=5).contradicts
