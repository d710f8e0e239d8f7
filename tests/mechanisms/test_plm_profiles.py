"""Reach profiles (docs/piecewise-laplace.md, "Reaches of each statistic"): brute-force
oracle, Cor. 3.1 on neighbours, validation."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

from privest.errors import BoundsError, ValidationError
from privest.mechanisms.profiles.exact import exact_statistic
from privest.mechanisms.profiles.reaches import (
    ReachProfile,
    check_reach_property,
    count_profile,
    from_callables,
    mean_profile,
    median_profile,
    order_statistic_profile,
    profile_for,
    quantile_profile,
    quantile_target,
    sum_profile,
    target_ranks,
)
from privest.mechanisms.profiles.variance import variance_global_sensitivity, variance_profile
from privest.mechanisms.smooth_sensitivity import local_sensitivity_at_distance

GRID = np.round(np.arange(6) * 0.2, 10)  # the universe {0, 0.2, ..., 1}


def _within(x: np.ndarray, level: int):
    """Every data set at swap distance <= level from x over the grid universe."""
    n = x.size
    for pos in itertools.combinations(range(n), level):
        for vals in itertools.product(GRID, repeat=level):
            y = x.copy()
            y[list(pos)] = vals
            yield y


def _brute_reaches(x: np.ndarray, f, levels: int):
    up, dn = [], []
    for lvl in range(levels + 1):
        vals = [f(y) for y in _within(x, lvl)]
        up.append(max(vals))
        dn.append(min(vals))
    return np.array(up), np.array(dn)


def _pad(a: np.ndarray, size: int) -> np.ndarray:
    return np.concatenate([a, np.full(max(0, size - a.size), a[-1])])[:size]


STATS = {
    "median": (lambda y: float(np.median(y)), lambda x: median_profile(x, (0, 1))),
    "quantile:0.75": (
        lambda y: float(
            np.mean(np.sort(y)[np.array(target_ranks(quantile_target(0.75, y.size))) - 1])
        ),
        lambda x: quantile_profile(x, (0, 1), quantile=0.75),
    ),
    "mean": (lambda y: float(np.mean(y)), lambda x: mean_profile(x, (0, 1))),
    "sum": (lambda y: float(np.sum(y)), lambda x: sum_profile(x, (0, 1))),
    "variance-max": (lambda y: float(np.var(y)), lambda x: variance_profile(x, (0, 1))),
}


@pytest.mark.parametrize("name", list(STATS))
@pytest.mark.parametrize("n", [3, 4])
def test_reaches_match_brute_force_enumeration(name, n):
    """U_l and D_l equal the max and min of f over all data sets within distance l."""
    f, build = STATS[name]
    rng = np.random.default_rng(n)
    for _ in range(3):
        x = rng.choice(GRID, size=n)
        prof = build(x)
        up, dn = _brute_reaches(x, f, n)
        assert np.allclose(_pad(prof.upper, n + 1), up, atol=1e-12), (x, prof.upper, up)
        if name != "variance-max":  # the variance minimum is off-grid: next test
            assert np.allclose(_pad(prof.lower, n + 1), dn, atol=1e-12), (x, prof.lower, dn)


def test_variance_lower_reach_matches_exhaustive_subsets():
    """Min variance after changing l records: keep any n-l records, move the rest to their mean."""
    rng = np.random.default_rng(7)
    for n in (3, 5, 7):
        x = rng.random(n)
        prof = variance_profile(x, (0, 1))
        for lvl in range(n + 1):
            best = np.inf
            for keep in itertools.combinations(range(n), n - lvl):
                kept = x[list(keep)]
                ss = float(((kept - kept.mean()) ** 2).sum()) if kept.size else 0.0
                best = min(best, ss / n)
            assert _pad(prof.lower, n + 1)[lvl] == pytest.approx(best, abs=1e-12)


def test_count_profile_is_clipped_steps():
    prof = count_profile(np.array([1, 0, 1, 1, 0]))
    assert prof.center == 3
    assert list(prof.upper) == [3, 4, 5, 5, 5, 5]
    assert list(prof.lower) == [3, 2, 1, 0, 0, 0]


def test_local_sensitivity_at_distance_matches_brute_force():
    """A_k of the median (NRS07) against enumeration over the grid universe."""

    def ls(y):
        m = float(np.median(y))
        return max(abs(m - float(np.median(z))) for z in _within(y, 1))

    rng = np.random.default_rng(3)
    for _ in range(3):
        x = np.sort(rng.choice(GRID, size=3))
        aug = np.concatenate([[0.0], x, [1.0]])
        for k in range(3):
            brute = max(ls(y) for y in _within(x, k))
            assert local_sensitivity_at_distance(aug, 2, [k])[0] == pytest.approx(brute)


def test_variance_global_sensitivity_is_attained_and_not_exceeded():
    for n in (2, 3, 4):
        worst = 0.0
        for x in itertools.product(GRID, repeat=n):
            x = np.array(x)
            worst = max(worst, max(abs(np.var(x) - np.var(y)) for y in _within(x, 1)))
        assert worst == pytest.approx(variance_global_sensitivity(n, 0.0, 1.0))


def _neighbours(x: np.ndarray, a: float, b: float, rng: np.random.Generator):
    """Swap one record for a, b, a tie value and a random value."""
    for new in (a, b, x[rng.integers(x.size)], rng.uniform(a, b)):
        y = x.copy()
        y[rng.integers(x.size)] = new
        yield y


@pytest.mark.parametrize("statistic", ["median", "quantile:0.2", "mean", "sum", "variance"])
def test_reach_property_holds_on_neighbours(statistic):
    """Cor. 3.1, U_l(x) <= U_{l+1}(x') and D_l(x) >= D_{l+1}(x'), exactly in floats."""
    rng = np.random.default_rng(11)
    for trial in range(30):
        n = int(rng.integers(2, 12))
        x = rng.uniform(-3, 5, n)
        if trial % 3 == 0:
            x = np.round(x)  # ties
        p = profile_for(x, statistic, (-3, 5))
        for y in _neighbours(x, -3.0, 5.0, rng):
            assert check_reach_property(p, profile_for(y, statistic, (-3, 5))) == 0.0


# bounds where extended-precision prefix sums used to miss Cor. 3.1 by one ulp
BOUND_SETTINGS = [(-3.0, 5.0), (-1000.0, 0.001), (0.0, 1e6), (1e6, 1e6 + 1), (-1e-3, 1e-3)]


def _stress_data(rng: np.random.Generator, n: int, a: float, b: float) -> np.ndarray:
    """Uniform, U-shaped, piled near a, or tied (7 values incl. both bounds) data in [a, b]."""
    kind = int(rng.integers(4))
    if kind == 0:
        return rng.uniform(a, b, n)
    if kind == 1:
        return a + (b - a) * rng.beta(0.3, 0.3, n)
    if kind == 2:
        return a + (b - a) * rng.random(n) ** 8
    return np.clip(a + (b - a) * rng.integers(0, 7, n) / 6, a, b)


def _count_violations(build, rng, a, b, pairs, n_range):
    """Neighbour pairs (swap one record for a, b, a tie or a random value) breaking Cor. 3.1."""
    bad, done = [], 0
    while done < pairs:
        n = int(np.exp(rng.uniform(*np.log(n_range))))
        x = _stress_data(rng, n, a, b)
        p = build(x)
        for _ in range(4):
            y = x.copy()
            y[rng.integers(n)] = (a, b, x[rng.integers(n)], rng.uniform(a, b))[rng.integers(4)]
            gap = check_reach_property(p, build(y))
            if gap > 0:
                bad.append((n, gap))
            done += 1
    return bad


@pytest.mark.parametrize("bounds", BOUND_SETTINGS, ids=str)
@pytest.mark.parametrize("statistic", ["mean", "sum", "median", "quantile:0.9"])
def test_reach_property_is_exact_at_scale(statistic, bounds):
    """Cor. 3.1 at scale: 240 neighbour pairs, n log-uniform in [50, 5000]: not one ulp of slack.

    The extended-precision prefix sums used before broke Cor. 3.1 by an ulp for the mean
    and the sum in 5 of these 10 settings (1 to 36 of 240 pairs); the exact grid sums do not.
    """
    a, b = bounds
    rng = np.random.default_rng(zlib.crc32(f"{statistic}{bounds}".encode()))
    bad = _count_violations(lambda d: profile_for(d, statistic, bounds), rng, a, b, 240, (50, 5000))
    assert bad == []


@pytest.mark.parametrize("bounds", BOUND_SETTINGS, ids=str)
def test_variance_reach_property_is_exact_with_margins(bounds):
    """Cor. 3.1 for the variance: full profiles (n <= 150) and truncated ones (n up to 5000).

    The plain extended-precision reaches broke it in 3 of these settings (3 to 7 of the
    120 full-profile pairs); the outward margins of :func:`variance_profile` make it exact.
    """
    a, b = bounds
    rng = np.random.default_rng(zlib.crc32(f"variance{bounds}".encode()))
    full = _count_violations(lambda d: variance_profile(d, bounds), rng, a, b, 120, (2, 150))
    cut = _count_violations(
        lambda d: variance_profile(d, bounds, max_level=6), rng, a, b, 120, (50, 5000)
    )
    assert full == [] and cut == []


@pytest.mark.parametrize("statistic", ["mean", "median", "variance"])
def test_gs_tail_keeps_the_reach_property_exactly(statistic):
    """The GS tail (paper 002, Sec. 5.2) accumulated step by step keeps Cor. 3.1 bit for bit."""
    a, b = -1000.0, 0.001
    rng = np.random.default_rng(zlib.crc32(statistic.encode()))
    for k in (1, 3):

        def build(d, k=k):
            p = profile_for(d, statistic, (a, b), max_level=k if statistic == "variance" else None)
            return p.truncated(k, tail="gs")

        assert _count_violations(build, rng, a, b, 60, (20, 400)) == []


def test_check_reach_property_detects_a_broken_profile():
    x = np.array([0.1, 0.5, 0.9])
    good = median_profile(x, (0, 1))
    bad = ReachProfile(0.6, [0.6, 0.95, 1.0], [0.6, 0.59, 0.0], 0.0, 1.0, 1.0)
    assert check_reach_property(good, bad) > 0


def test_median_conventions():
    x = np.array([4.0, 1.0, 3.0, 2.0])
    assert median_profile(x, (0, 5)).center == 2.5
    assert median_profile(x, (0, 5), even="low").center == 2.0
    assert order_statistic_profile(x, 4, (0, 5)).center == 4.0
    # numpy's position 1 + 3 * 0.9 = 3.7: the nearest half rank 3.5, (x_(3) + x_(4)) / 2
    assert quantile_profile(x, (0, 5), quantile=0.9).center == 3.5
    assert quantile_profile(x, (0, 5), quantile=0.5).center == 2.5  # the median
    assert quantile_profile(x, (0, 5), quantile=1e-9).center == 1.0  # the minimum
    with pytest.raises(ValidationError, match=r"quantile: .* \(0, 1\]"):  # docs: (0, 1]
        quantile_profile(x, (0, 5), quantile=0.0)
    for stat in ("median", "quantile:0.3", "mean", "sum", "variance"):
        value = exact_statistic(x, stat, (0, 5)).value
        assert profile_for(x, stat, (0, 5)).center == pytest.approx(value, abs=1e-12)


def test_truncated_profiles_reach_the_range():
    x = np.random.default_rng(0).random(50)
    p = mean_profile(x, (0, 1))
    t = p.truncated(5)
    assert t.upper.size == 6 and t.upper[-1] == 1.0 and t.lower[-1] == 0.0
    g = p.truncated(5, tail="gs")
    assert np.allclose(np.diff(g.upper[5:-1]), p.global_sensitivity)
    assert check_reach_property(t, mean_profile(np.append(x[1:], 1.0), (0, 1)).truncated(5)) == 0


def test_from_callables_and_validation():
    x = np.array([0.2, 0.4, 0.6])
    p = from_callables(
        x,
        np.median,
        lambda d, lvl: float(np.sort(np.append(d, [1.0, 1.0, 1.0]))[1 + lvl]),
        lambda d, lvl: float(np.sort(np.append(d, [0.0, 0.0, 0.0]))[4 - lvl]),
        lo=0.0,
        hi=1.0,
        global_sensitivity=1.0,
        max_level=1,
    )
    assert p.upper[-1] == 1.0 and p.center == 0.4
    with pytest.raises(ValidationError, match="nondecreasing"):
        ReachProfile(0.5, [0.5, 0.4, 1.0], [0.5, 0.0], 0.0, 1.0, 1.0)
    with pytest.raises(ValidationError, match="must equal the range"):
        ReachProfile(0.5, [0.5, 0.9], [0.5, 0.0], 0.0, 1.0, 1.0)
    with pytest.raises(ValidationError, match="bounded"):
        ReachProfile(0.5, [0.5, np.inf], [0.5, 0.0], 0.0, np.inf, 1.0)


def test_out_of_bounds_data_is_an_error_unless_clipped():
    x = np.array([-1.0, 0.5, 2.0, 0.7])
    with pytest.raises(BoundsError, match="some values lie outside"):
        median_profile(x, (0, 1))
    p = median_profile(x, (0, 1), clip=True)
    assert p.n_clipped == 2 and p.upper[-1] == 1.0
    with pytest.raises(BoundsError):
        mean_profile(x, (1, 0))
    with pytest.raises(ValidationError, match="NaN"):
        median_profile(np.array([0.1, np.nan]), (0, 1))
    with pytest.raises(ValidationError, match="unknown"):
        profile_for(x, "mode", (0, 1))
