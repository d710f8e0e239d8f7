"""The exponential-mechanism quantile on a lattice (privest.mechanisms.rank_exponential):
its exact sampler draws its law, and the law is epsilon-DP under add/remove of a unit of
m rows (exact ratio of the pmfs over every candidate), with a negative control."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from privest.domain import Domain
from privest.mechanisms.rank_exponential import RankExponential, RankScore, sample_rank_em


def _mech(m: int, q: float = 0.5, eps: float = 1.0) -> RankExponential:
    dom = Domain(bounds=(0, 20), resolution=1, neighbours="add_remove", unit="pid", max_rows=m)
    return RankExponential("quantile", quantile=q, epsilon=eps, domain=dom)


def test_the_sampler_draws_the_law():
    x = np.array([3, 3, 4, 7, 8, 8, 8, 12, 15, 19], dtype=float)
    mech = _mech(1, q=0.3, eps=0.8)
    law = mech.law(x)
    draws = law.sample(20_000, rng=3)
    support = law.support()
    observed = np.array([np.count_nonzero(draws == v) for v in support])
    expected = law.pmf() * draws.size
    assert np.all(expected > 5)  # a cell per candidate
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-3


def _worst_log_ratio(mech, x, added) -> float:
    p = mech.law(x).pmf()
    q = mech.law(np.concatenate([x, added])).pmf()
    return float(np.max(np.abs(np.log(p) - np.log(q))))


def test_add_remove_a_unit_of_m_rows_is_epsilon_dp():
    rng = np.random.default_rng(0)
    for q in (0.5, 0.1, 0.9):
        mech = _mech(3, q=q, eps=1.0)
        for _ in range(20):
            x = rng.integers(0, 21, rng.integers(0, 15)).astype(float)
            added = rng.integers(0, 21, rng.integers(1, 4)).astype(float)
            assert _worst_log_ratio(mech, x, added) <= mech.score.epsilon_run + 1e-9


def test_negative_control_a_one_row_sensitivity_under_three_rows():
    """Scored as if a unit held one row, three added rows break the guarantee."""
    mech = _mech(1, q=0.5, eps=1.0)
    x = np.array([5.0, 6, 7, 8])
    assert _worst_log_ratio(mech, x, np.array([20.0, 20, 20])) > 1.2


def test_per_cell_levels_and_tables_of_cells():
    score = RankScore(0.5, 2.0, 1, any_level=True)
    counts = np.zeros((3, 11), dtype=np.int64)
    counts[:, 5] = 200  # every cell: 200 records on point 5
    levels = np.array([1 << 14, 1 << 15, 3 << 14])  # q = 1/4, 1/2, 3/4
    got = sample_rank_em(counts, score, np.random.default_rng(1), levels=levels)
    assert np.all(got == 5)  # any level's quantile is point 5; the rest weigh e^-40
    assert math.isclose(score.delta_ranks, 1.0)
