"""Two-stage medians and quantiles (mechanisms/two_stage.py).

Privacy by composition of two exactly checked parts, and end to end: the law of the chosen
bin (stage 1) and the mixture pmf of the release are computed exactly for a data set and
each swap neighbour on a small lattice; the largest log ratio must stay within eps_1 and
eps. Negative control: stage-1 noise calibrated for sensitivity 1 (eps_1 doubled) is
flagged by the same checks.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import privest as pv
from privest.datasets.synthetic_plm import make_plm_data
from privest.domain import Domain
from privest.mechanisms import two_stage
from privest.mechanisms.auto import auto_mechanism
from privest.mechanisms.lattice_plm import LatticeProfileLaw
from privest.mechanisms.profiles.lattice import order_statistics
from privest.mechanisms.samplers.bigint import Bits
from privest.mechanisms.two_stage import (
    TwoStage,
    bin_law,
    discrete_laplace_rational,
)

X = np.array([10.0, 11, 11, 12, 20, 21, 33, 40, 41])  # n = 9 in (0, 64), 16 bins of 4
VALUES = (0.0, 11.0, 13.0, 30.0, 64.0)  # a bound, a tie, a neighbour bin, far, the top


def neighbours(x):
    for i, v in itertools.product(range(x.size), VALUES):
        x2 = x.copy()
        x2[i] = v
        yield x2


def test_bin_law_matches_enumeration():
    """Three bins, noise enumerated to |z| <= 40 (tail e^-20 per bin at eps_1 = 1)."""
    counts, eps1, thr = np.array([1, 3, 2]), 1.0, 3
    z = np.arange(-40, 41)
    pz = np.exp(-eps1 * np.abs(z) / 2)
    pz /= pz.sum()
    zi, zj, zk = np.meshgrid(z, z, z, indexing="ij")
    s1, s2 = counts[0] + zi, counts[0] + counts[1] + zi + zj
    chosen = np.where(s1 >= thr, 0, np.where(s2 >= thr, 1, 2))  # bin 2 if none reaches
    mass = pz[:, None, None] * pz[None, :, None] * pz[None, None, :]
    want = np.array([mass[chosen == b].sum() for b in range(3)])
    assert np.allclose(bin_law(counts, eps1, thr), want, atol=1e-8)


def test_discrete_laplace_sampler_follows_its_pmf():
    """20,000 seeded exact draws against exp(-eps |z| / 2) (chi-square, |z| <= 8 pooled)."""
    eps = Fraction(0.7)
    draws = np.array(discrete_laplace_rational(eps, 20_000, Bits(np.random.default_rng(3))))
    z = np.arange(-8, 9)
    p = np.exp(-0.7 * np.abs(z) / 2)
    p /= np.exp(-0.7 * np.abs(np.arange(-400, 401)) / 2).sum()
    counts = np.array([(draws == v).sum() for v in z] + [(np.abs(draws) > 8).sum()])
    expect = np.append(p, 1 - p.sum()) * draws.size
    assert stats.chisquare(counts, expect).pvalue > 1e-3


def stage_one_ratio(eps1_run, eps1_claim=None):
    mech = TwoStage("median", epsilon=1.0, bounds=(0, 64), resolution=1.0)
    law = mech.law(X)
    base = bin_law(law.counts, eps1_run, law.threshold)
    worst = 0.0
    for x2 in neighbours(X):
        other = bin_law(mech.law(x2).counts, eps1_run, law.threshold)
        ok = (base > 1e-12) & (other > 1e-12)
        worst = max(worst, float(np.max(np.abs(np.log(base[ok]) - np.log(other[ok])))))
    return worst


def test_stage_one_is_eps1_dp_exactly_and_the_control_fails():
    eps1 = 0.5
    assert 0.3 * eps1 < stage_one_ratio(eps1) <= eps1 * (1 + 1e-9)
    assert stage_one_ratio(2 * eps1) > 1.2 * eps1  # sensitivity-1 calibration: flagged


def end_to_end_ratio(mech):
    """max over neighbours and lattice points of |log P(y|x) - log P(y|x')| (inf where one
    support holds a point the other lacks)."""
    y = np.arange(0, 65, dtype=float)
    base = mech.law(X).logpdf(y)
    worst = 0.0
    for x2 in neighbours(X):
        other = mech.law(x2).logpdf(y)
        if np.any(np.isfinite(base) != np.isfinite(other)):
            return np.inf
        both = np.isfinite(base)
        worst = max(worst, float(np.max(np.abs(base[both] - other[both]))))
    return worst


def test_end_to_end_law_is_eps_dp_and_the_control_fails():
    mech = TwoStage("quantile", quantile=0.3, epsilon=1.0, bounds=(0, 64), resolution=1.0)
    assert np.all(np.isfinite(mech.law(X).logpdf(np.arange(0, 65.0))))  # public support
    assert 0.3 < end_to_end_ratio(mech) <= 1.0 * (1 + 1e-9)
    # control: bounds shrunk with next to no noise on the histogram (eps_1 = 40, i.e. read
    # from the data), still claimed 1-DP: the release's support follows the data
    bad = TwoStage("quantile", quantile=0.3, epsilon=1.0, bounds=(0, 64), resolution=1.0)
    bad.eps1 = 40.0
    assert end_to_end_ratio(bad) > 3.0


def test_wide_bounds_two_stage_beats_the_one_stage_staircase():
    """Exact E|release - x_(k)| on one wide-bounds cell (n = 100, q = 0.1, eps = 1)."""
    x = make_plm_data("normal", 100, np.random.default_rng(1), (-10, 10))
    ref = float(np.sort(x)[9])
    kw = dict(quantile=0.1, epsilon=1.0, bounds=(-1000, 1000))
    two = TwoStage("quantile", **kw).law(x).error_mean_abs(reference=ref)
    one = LatticeProfileLaw.for_statistic(x, "quantile", shape="stair", target="auto", **kw)
    assert two < 0.7 * one.error_mean_abs(reference=ref)


def test_release_runs_both_stages_and_auto_never_picks_it():
    r = pv.private_quantile(X, 0.3, epsilon=1.0, bounds=(0, 64), mechanism="two_stage", rng=2)
    assert r.mechanism == "two_stage" and str(r.guarantee) == "1-DP" and 0 <= float(r) <= 64
    draws = TwoStage("median", epsilon=1.0, bounds=(0, 64), resolution=1.0).law(X).sample(50, rng=4)
    assert np.all(draws == np.round(draws))  # on the lattice
    for n in (20, 1000, 10**5):
        assert (
            auto_mechanism("quantile:0.1", domain=Domain(bounds=(-1000, 1000)), n=n) != "two_stage"
        )


def test_second_stage_from_one_sort_is_the_law_on_the_clipped_data(monkeypatch):
    """The second stage read from the one sort equals the staircase law built from the
    unsorted data for every bin (same pmf on every lattice point); a release computes
    neither the exact bin law nor a second sort. Control: a window read one rank off
    gives another pmf."""
    x = np.random.default_rng(5).permutation(np.r_[X, 3.0, 63.0, 64.0, 0.0, 17.5])
    grid = np.arange(0, 64.5, 0.5)
    for stat, q in (("median", None), ("quantile", 0.2), ("quantile", 0.9)):
        mech = TwoStage(stat, quantile=q, epsilon=1.0, bounds=(0, 64), resolution=1.0)
        law = mech.law(x)
        for j in range(mech.bins):
            direct = mech.second(law.edges[[max(j - 1, 0), min(j + 2, 16)]]).law(x)
            assert np.array_equal(law.stage_two(j).logpdf(grid), direct.logpdf(grid))
    moved = np.where(x == 20.0, 22.0, x)  # control: one record moved inside the window
    mech = TwoStage("median", epsilon=1.0, bounds=(0, 64), resolution=1.0)
    bounds = mech.law(x).edges[[4, 7]]  # the bins around the median
    assert not np.array_equal(
        mech.law(x).stage_two(5).logpdf(grid), mech.second(bounds).law(moved).logpdf(grid)
    )

    def refuse(*args, **kwargs):
        raise AssertionError("the release computed the exact bin law")

    monkeypatch.setattr("privest.mechanisms.two_stage.bin_law", refuse)
    r = pv.private_median(x, epsilon=1.0, bounds=(0, 64), mechanism="two_stage", rng=1)
    assert 0 <= float(r) <= 64


@pytest.mark.parametrize("sampled", [1 << 17, 0])
def test_counts_and_windows_without_a_sort_equal_those_of_a_sort(monkeypatch, sampled):
    """The bin counts (blocked counting passes, blocks of 7 records here so that they cross
    block ends) and the second stage's window of clipped order statistics (selection on
    the records inside the shrunk bounds, or, above ``_SAMPLED`` records, on all records
    then clipped) equal what one sort gives: records exactly on the edges and one float
    either side of them, ties, empty bins, windows at both ends. Control: the window one
    rank off differs."""
    monkeypatch.setattr(two_stage, "_BLOCK", 7)
    monkeypatch.setattr(two_stage, "_SAMPLED", sampled)
    rng = np.random.default_rng(11)
    edges = two_stage._edges(0.0, 64.0, 16)
    x = np.concatenate([edges, np.nextafter(edges, -1.0), np.nextafter(edges, 99.0)])
    x = rng.permutation(np.r_[np.clip(x, 0.0, 64.0), np.repeat(20.0, 30), rng.uniform(0, 8, 40)])
    xs, n = np.sort(x), x.size
    below = np.searchsorted(xs, edges[:-1], side="left")
    law = TwoStage("median", epsilon=1.0, bounds=(0, 64)).law(x)
    assert np.array_equal(law.counts, np.diff(np.append(below, n)))
    for j, (first, last) in itertools.product(
        range(16), [(1, 9), (n // 2 - 6, n // 2 + 6), (n - 4, n)]
    ):
        lo, hi = two_stage._shrunk(edges, j)
        window, clipped = two_stage._clipped_window(x, lo, hi, (first, last))
        assert np.array_equal(window, np.clip(xs[first - 1 : last], lo, hi))
        assert clipped == np.count_nonzero((x < lo) | (x > hi))
    assert np.array_equal(order_statistics(x, 3, 50), xs[2:50])
    assert not np.array_equal(order_statistics(x, 3, 50), xs[3:51])  # control


def test_order_statistics_preselected_by_a_sample_are_exact():
    """Above 2^17 records the window is preselected by value from a strided sample; the
    result equals a sort's whether the sample's proposal holds (random order, ties, sorted)
    or not (every sampled record is an outlier: the fallback selects from all records)."""
    rng = np.random.default_rng(12)
    n = (1 << 17) + 1001
    spiked = rng.uniform(0, 1, n)
    spiked[:: n // (1 << 15)] = 1e6  # exactly the strided sample's records
    for x in (
        rng.uniform(-1, 1, n),
        rng.integers(0, 4, n).astype(float),
        np.sort(rng.normal(size=n)),
        spiked,
    ):
        xs = np.sort(x)
        for first, last in ((1, 1), (1, 300), (n // 2 - 200, n // 2 + 200), (n - 9, n)):
            assert np.array_equal(order_statistics(x, first, last), xs[first - 1 : last])


@pytest.mark.parametrize("n", [999, (1 << 15) + 77, (1 << 17) + 1001])
def test_order_statistics_in_a_shared_selection_are_exact(n):
    """Inside ``shared_selection(x)`` the windows of x (and of views of its memory) read
    the first selection (all records sorted, or a band of values around the first window
    widened by 2 sqrt(n) ranks) and equal a sort's: windows inside the band, far outside it
    (a second selection), at both ends, ties, a spiked sample; another array is selected
    as usual and not kept; the range is read once. Control: the entry's records altered
    change a later window, so the later windows are read from the entry."""
    from privest.mechanisms.profiles import lattice

    rng = np.random.default_rng(n)
    spiked = rng.uniform(0, 1, n)
    spiked[:: max(1, n // (1 << 15))] = 1e6
    for x in (rng.uniform(-1, 1, n), rng.integers(0, 4, n).astype(float), spiked):
        xs, other = np.sort(x), rng.normal(size=n)
        windows = [(n // 2 - 300, n // 2 + 300), (max(1, n // 2 - 900), n // 2 - 100)]
        windows += [(1, 40), (n - 9, n), (n // 3, n // 3 + 20), (n // 2, n // 2)]
        with lattice.shared_selection(x):
            for first, last in windows:
                assert np.array_equal(order_statistics(x, first, last), xs[first - 1 : last])
                view = x[:]  # another view of the same memory
                assert np.array_equal(order_statistics(view, first, last), xs[first - 1 : last])
                got = order_statistics(other, first, last)
                assert np.array_equal(got, np.sort(other)[first - 1 : last])
            shared = lattice._SHARED.get()
            assert 1 <= len(shared["windows"]) <= len(windows)
            for arr in (x, x[:], other, x):
                assert lattice.data_range(arr) == (arr.min(), arr.max())
            assert shared["range"] == (x.min(), x.max())
            assert not lattice.selection_is_shared(other)
        assert lattice._SHARED.get() is None
    with lattice.shared_selection(x):  # control
        first, last = n // 2 - 10, n // 2 + 10
        order_statistics(x, first, last)
        (entry,) = lattice._SHARED.get()["windows"]
        entry[1][:] = 7.0  # the entry's own records (a copy or a sorted copy of x's)
        assert not np.array_equal(order_statistics(x, first, last), xs[first - 1 : last])


def test_chosen_bin_from_two_counts_is_the_bin_of_all_counts(monkeypatch):
    """Above ``_SAMPLED`` records (0 here) the first stage's bin comes from a sample's
    proposal and two exact counts (``_crossing``); it equals the bin read from all 16 counts
    for noise from small to as large as the counts, on uniform, concentrated, sorted and
    edge-tied data. Both ways are taken: settled by the two counts, and handed back (None)
    to all the counts."""
    monkeypatch.setattr(two_stage, "_SAMPLED", 0)
    monkeypatch.setattr(two_stage, "_BLOCK", 1000)
    rng = np.random.default_rng(21)
    edges = two_stage._edges(-1.0, 1.0, 16)
    n = 20_011
    datasets = [
        rng.uniform(-1, 1, n),
        np.clip(rng.normal(0.3, 0.01, n), -1, 1),
        np.sort(rng.uniform(-1, 1, n)),
        rng.choice(edges, n),
    ]
    settled = handed_back = 0
    for x, q in itertools.product(datasets, (0.5, 0.1, 0.9)):
        law = TwoStage(f"quantile:{q}", epsilon=1.0, bounds=(-1, 1)).law(x)
        ref = TwoStage(f"quantile:{q}", epsilon=1.0, bounds=(-1, 1)).law(x)
        ref.counts  # noqa: B018 (all counts first: the reference way)
        for scale in (3, 300, 3000):
            for _ in range(40):
                noise = rng.integers(-scale, scale + 1, 16)
                fast = two_stage._crossing(law.x, law.edges, noise, law.threshold)
                settled += fast is not None
                handed_back += fast is None
                assert law.chosen_bin(noise) == ref.chosen_bin(noise)
                assert "counts" not in law.__dict__ or fast is None
                law.__dict__.pop("counts", None)
    assert settled > 100 and handed_back > 0
