"""zcdp_rho_for is cached (every logistic fit asks it three times with the same floats): the
cached answer is the root search's, and equal public floats share one entry."""

from __future__ import annotations

import numpy as np
import pytest

from privest.accounting import profiles
from privest.accounting.zcdp import zcdp_delta, zcdp_rho_for


def test_cached_rho_is_the_root_search_and_meets_the_target():
    profiles._rho_for.cache_clear()
    rho = zcdp_rho_for(1.0, 1e-6)
    assert rho == profiles._rho_for.__wrapped__(1.0, 1e-6)  # the uncached search
    assert zcdp_delta(rho, 1.0) == pytest.approx(1e-6, rel=1e-6)
    assert zcdp_delta(rho * 1.001, 1.0) > 1e-6  # the largest such rho
    for eps in (np.float64(1.0), np.array(1.0), 1):  # the same public float
        assert zcdp_rho_for(eps, 1e-6) == rho
    info = profiles._rho_for.cache_info()
    assert (info.misses, info.hits) == (1, 3)
    assert zcdp_rho_for(2.0, 1e-6) > rho  # control: another epsilon is searched anew
    assert profiles._rho_for.cache_info().misses == 2
