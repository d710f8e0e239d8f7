"""Permute-and-flip medians / quantiles over public lattice candidates (lattice_pf.py).

Privacy is checked exactly: the law of every candidate (Gauss-Legendre, exact for the
polynomial integrand; checked against enumerating every order) on a data set and each of
its neighbours (ties, breakpoints, lattice edges, odd and even n, quantiles); the largest
log ratio must stay within eps. Flip probabilities without the factor 1/2 (a
sensitivity-2 utility) are the negative control: the same check flags them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from neighbours import NEIGHBOUR_DATA as DATA
from neighbours import worst_log_ratio
from scipy import stats

import privest as pv
from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.auto import auto_mechanism
from privest.mechanisms.lattice_pf import PF_MAX_CANDIDATES, PermuteFlipLaw

SCORES = ["stair", "rank"]


def law_of(x, stat="median", eps=1.0, bounds=(0, 8), resolution=1.0, score="stair", q=None):
    return PermuteFlipLaw.for_statistic(
        np.asarray(x, dtype=float),
        stat,
        epsilon=eps,
        bounds=bounds,
        quantile=q,
        resolution=resolution,
        score=score,
    )


def worst_ratio(x, stat, eps, score, q=None, values=range(9), bounds=(0, 8), resolution=1.0):
    """max over swap neighbours (one record -> any of ``values``) and candidates of
    |log P(y|x) - log P(y|x')|."""
    return worst_log_ratio(
        lambda d: np.log(law_of(d, stat, eps, bounds, resolution, score, q).pmf()), x, values
    )


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_median_is_eps_dp_on_every_neighbour(name, score, eps):
    assert worst_ratio(DATA[name], "median", eps, score) <= eps * (1 + 1e-9)


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("q", [0.1, 0.9])
def test_quantiles_are_eps_dp_on_a_half_step_lattice(score, q):
    x = [0.5, 1.0, 1.0, 1.0, 2.5, 3.0, 4.0, 4.0]
    vals = np.arange(0, 4.01, 0.5)
    w = worst_ratio(x, "quantile", 1.0, score, q, vals, bounds=(0, 4), resolution=0.5)
    assert w <= 1.0 * (1 + 1e-9)


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize(("q", "eps"), [(0.1, 1.0), (0.3, 2.0), (0.9, 1.0)])
def test_the_mechanism_with_the_inward_target_is_eps_dp(score, q, eps):
    """The mechanism aims half a rank inward where the public rule says so (the average of
    two order statistics, on the half lattice): exact pmf ratios on every neighbour."""
    x = [0.5, 1.0, 1.0, 1.0, 2.5, 3.0, 4.0, 4.0]
    kw = dict(quantile=q, epsilon=eps, bounds=(0, 4), resolution=0.5, score=score)
    mech = pv.PermuteAndFlip("quantile", **kw)
    assert mech.inward(len(x))
    w = worst_log_ratio(lambda d: np.log(mech.law(d).pmf()), x, np.arange(0, 4.01, 0.5))
    assert 0.3 * eps < w <= eps * (1 + 1e-9)


@pytest.mark.parametrize("score", SCORES)
def test_negative_control_flips_without_the_half_are_flagged(score):
    """p_r = exp(-eps (s_r - 1)) (a sensitivity-2 utility) is not eps-DP: flagged. The
    correct law reaches a real share of eps on the same data, so the check bites."""
    eps = 1.0
    assert worst_ratio(DATA["spread"], "median", 2 * eps, score) > 1.2 * eps
    assert worst_ratio(DATA["spread"], "median", eps, score) > 0.5 * eps


def test_law_matches_enumeration_of_every_order():
    """The Gauss-Legendre law equals the PF law summed over all 5! candidate orders."""
    law = law_of([0, 2, 2, 6, 8], eps=1.3, resolution=2.0, score="rank")
    p = np.exp(law.log_p)
    exact = np.zeros(p.size)
    for order in itertools.permutations(range(p.size)):
        reach = 1.0
        for r in order:
            exact[r] += reach * p[r]
            reach *= 1 - p[r]
    exact /= math.factorial(p.size)
    assert np.allclose(law.pmf(), exact, rtol=1e-13, atol=0)


@pytest.mark.parametrize("score", SCORES)
def test_exact_sampler_follows_the_law(score):
    """10,000 seeded draws against the exact pmf (chi-square)."""
    law = law_of([1, 2, 2, 2, 3, 6, 7], eps=1.0, score=score)
    draws = law.sample(10_000, rng=5)
    counts = np.array([(draws == v).sum() for v in range(9)])
    assert counts.sum() == draws.size
    assert stats.chisquare(counts, law.pmf() * draws.size).pvalue > 1e-3


def test_error_laws_are_consistent_with_the_pmf():
    law = law_of([0, 1, 1, 4, 6, 7, 8, 8], eps=0.8, bounds=(0, 12))
    k, p = law.index, law.pmf()
    err = np.abs(k * law.unit - law.value)
    assert p.sum() == pytest.approx(1.0, abs=1e-13)
    assert law.error_mean_abs() == pytest.approx(np.sum(p * err), rel=1e-12)
    for a in (0.0, 0.5, 3.0):
        assert law.error_cdf(a) == pytest.approx(np.sum(p[err <= a]), abs=1e-12)
    assert np.allclose(law.cdf(k * law.unit), np.cumsum(p), atol=1e-12)
    d = law.error_quantile(0.5)
    assert np.sum(p[err <= d]) >= 0.5 and np.sum(p[err < d]) < 0.5


def test_pf_is_at_or_below_the_exponential_mechanism_on_ties():
    """On tied integers (resolution 1) PF's exact E|err| is at or below the staircase PLM's
    on the same lattice."""
    x = np.random.default_rng(0).integers(40, 60, 1001).astype(float)
    kw = dict(epsilon=0.5, bounds=(0, 100), resolution=1)
    pf = pv.PermuteAndFlip("quantile:0.1", **kw).law(x).error_mean_abs()
    plm = pv.PiecewiseLaplace("quantile:0.1", **kw).law(x).error_mean_abs()
    assert pf <= plm


def test_support_attack_finds_no_impossible_output():
    """Draws on data near 0 all lie on the neighbour's candidate lattice."""
    x = np.random.default_rng(4).normal(0.0, 0.01, 101).clip(-1, 1)
    x2 = x.copy()
    x2[np.argmin(np.abs(x))] = 0.9
    mech = pv.PermuteAndFlip("median", epsilon=1.0, bounds=(-1, 1))
    y = mech.law(x).sample(2000, rng=6)
    assert np.all(np.isfinite(mech.law(x2).logpdf(y)))


def test_too_many_candidates_is_refused_before_any_data():
    with pytest.raises(ValidationError, match="candidates"):
        pv.PermuteAndFlip("median", epsilon=1.0, bounds=(0, 100), resolution=0.01)


class Sentinel:
    """Data of public length n that raise on any other access."""

    def __init__(self, n):
        self.n = n

    def __getattr__(self, name):
        raise AssertionError(f"the data were read ({name})")

    def __len__(self):
        return self.n

    def __iter__(self):
        raise AssertionError("the data were read (iter)")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data were read (array)")


def test_auto_reads_no_data(monkeypatch):
    """The choice is made from (statistic, bounds, resolution) before the data are touched:
    with data that raise on any access, the chosen mechanism's law is reached."""
    chosen = []

    def law(self, x):
        chosen.append(self.name)
        raise LookupError("stop")

    for cls in (pv.PermuteAndFlip, pv.PiecewiseLaplace):
        monkeypatch.setattr(cls, "law", law)
    cases = ((1, 5000, "permute_and_flip"), (1, 20, "permute_and_flip"))
    cases += ((None, 5000, "piecewise_laplace"), (0.01, 20, "piecewise_laplace"))
    for resolution, n, expected in cases:
        with pytest.raises(LookupError):
            pv.private_median(Sentinel(n), epsilon=1.0, bounds=(0, 100), resolution=resolution)
        assert chosen.pop() == expected


def test_auto_rule_is_public():
    """Permute-and-flip on a declared lattice of at most PF_MAX_CANDIDATES points, at every
    n (the rule reads no n); the staircase otherwise."""
    for n in (None, 20, 10**6):
        assert (
            auto_mechanism("median", domain=Domain(bounds=(0, 100), resolution=1), n=n)
            == "permute_and_flip"
        )
        assert auto_mechanism("median", domain=Domain(bounds=(0, 100)), n=n) == (
            "piecewise_laplace"
        )
    top = (PF_MAX_CANDIDATES - 1) * 0.5
    assert (
        auto_mechanism("quantile:0.1", domain=Domain(bounds=(0, top), resolution=0.5))
        == "permute_and_flip"
    )
    assert (
        auto_mechanism("median", domain=Domain(bounds=(0, top + 0.5), resolution=0.5))
        == "piecewise_laplace"
    )


@pytest.mark.parametrize("q", [0.1, 0.9])
def test_pf_aims_at_the_staircase_target_and_beats_it_on_a_declared_lattice(q):
    """One target for both: where the public rule moves the staircase half a rank inward,
    permute-and-flip aims there too; on a declared lattice its exact E|release - numpy's
    quantile| is then at or below the staircase's (n = 20, eps = 1, integer data).
    Control: aimed at the unmoved rank, permute-and-flip loses to the staircase at q = 0.9
    (the comparison can fail)."""
    x = np.array([0, 1, 1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7, 8, 9, 11, 14, 17, 25, 40], dtype=float)
    kw = dict(quantile=q, epsilon=1.0, bounds=(0, 50), resolution=1.0)
    pf, stair = pv.PermuteAndFlip("quantile", **kw), pv.PiecewiseLaplace("quantile", **kw)
    assert pf.inward(x.size) and stair.inward(x.size)
    assert pf.law(x).value == stair.law(x).value
    truth = float(np.quantile(x, q))
    e_stair = stair.law(x).error_mean_abs(reference=truth)
    assert pf.law(x).error_mean_abs(reference=truth) <= e_stair
    if q == 0.9:
        unmoved = PermuteFlipLaw.for_statistic(x, "quantile", **kw)  # the rank target itself
        assert unmoved.error_mean_abs(reference=truth) > 1.05 * e_stair


def test_without_a_lattice_the_grid_gains_and_loses_in_one_public_cell():
    """Why ``auto`` keeps the staircase when no ``resolution`` is declared
    (docs/piecewise-laplace.md, "Permute-and-flip and choosing the mechanism"): in one
    public cell (median, n = 640, eps = 4, bounds (0, 100)) permute-and-flip on its default
    grid is better on data spread over the bounds and many times worse on concentrated
    data (exact laws, averaged over 8 offsets against the grid). A rule that sees only the
    cell gives both data sets one mechanism: the same for each, the staircase."""
    z = stats.norm.ppf((np.arange(640) + 0.5) / 640)
    kw = dict(epsilon=4.0, bounds=(0, 100))
    grid, stair = pv.PermuteAndFlip("median", **kw), pv.PiecewiseLaplace("median", **kw)
    ratio = {}
    for sd in (12.5, 0.25):
        errs = np.zeros(2)
        for j in range(8):
            x = 50 + (j + 0.5) / 8 * grid.resolution + sd * z
            truth = float(np.median(x))
            errs += [m.law(x).error_mean_abs(reference=truth) for m in (grid, stair)]
        ratio[sd] = errs[0] / errs[1]
        chosen = pv.private_median(x, rng=0, inference="none", **kw).mechanism
        assert chosen == auto_mechanism("median", domain=Domain(bounds=(0, 100))) == stair.name
    assert ratio[12.5] < 0.9 and ratio[0.25] > 10
