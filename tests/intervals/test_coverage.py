"""Coverage measured, at a reduced number of releases (the full tables come from
benchmarks/bench_central_inference.py, docs/central-inference.md).

Population: scikit-learn's diabetes progression (shipped with the package), sampled with
replacement. Each test checks the coverage against [0.935, 0.975] widened by 3 Monte Carlo
SEs, with a control that the same check fails for the noise-only interval, which ignores
the sampling error."""

import math

import numpy as np
import pytest

import privest as pv
from privest.domain import Domain
from privest.intervals.release import fourth_plan, moment_inference, plan_split, spread_plan
from privest.models.statistics import statistic_mechanism

pytestmark = pytest.mark.slow

BOUNDS = (0.0, 400.0)


@pytest.fixture(scope="module")
def population():
    from sklearn.datasets import load_diabetes

    return load_diabetes(scaled=False).target.astype(float)


def _scale(stat, eps, bounds, n):
    return float(
        statistic_mechanism(stat, epsilon=eps, bounds=bounds, mechanism="laplace")
        .noise_law(n)
        .scale
    )


def _check(cover, reps):
    se = math.sqrt(0.95 * 0.05 / reps)
    assert 0.935 - 3 * se <= cover <= 0.975 + 3 * se, cover


@pytest.mark.parametrize("n,eps", [(200, 1.0), (2000, 0.5)])
def test_mean_interval_covers(population, n, eps):
    reps, dom = 2000, Domain(bounds=BOUNDS)
    rng = np.random.default_rng(11)
    xs = population[rng.integers(0, population.size, (reps, n))]
    split = plan_split("mean", eps, "population")
    b = _scale("mean", split["point"], BOUNDS, n)
    centre, cap = spread_plan(dom)
    b2 = _scale("mean", split["spread"], (0.0, cap), n)
    est = np.clip(xs.mean(1) + rng.laplace(0, b, reps), *BOUNDS)
    spread = np.clip(((xs - centre) ** 2).mean(1) + rng.laplace(0, b2, reps), 0, cap)
    inf = moment_inference(
        "mean",
        "population",
        est,
        n,
        dom,
        b,
        split,
        spread=spread,
        spread_scale=b2,
        spread_cap=cap,
        centre=centre,
    )
    low, high = inf.conf_int()
    _check(np.mean((low <= population.mean()) & (population.mean() <= high)), reps)
    # control: the noise-only interval (full epsilon) misses the sampling error
    bn = _scale("mean", eps, BOUNDS, n)
    noise = moment_inference(
        "mean",
        "noise",
        np.clip(xs.mean(1) + rng.laplace(0, bn, reps), *BOUNDS),
        n,
        dom,
        bn,
        {"point": eps},
    )
    nl, nh = noise.conf_int()
    assert np.mean((nl <= population.mean()) & (population.mean() <= nh)) < 0.9


def test_variance_interval_covers(population):
    n, eps, reps, dom = 2000, 1.0, 2000, Domain(bounds=BOUNDS)
    rng = np.random.default_rng(12)
    xs = population[rng.integers(0, population.size, (reps, n))]
    split = plan_split("variance", eps, "population")
    b = _scale("variance", split["point"], BOUNDS, n)
    top = ((BOUNDS[1] - BOUNDS[0]) / 2) ** 2
    vhat = np.clip(xs.var(1) + rng.laplace(0, b, reps), 0, top)
    bm = _scale("mean", split["centre"], BOUNDS, n)
    mhat = np.clip(xs.mean(1) + rng.laplace(0, bm, reps), *BOUNDS)
    v, cap = fourth_plan(mhat, vhat, dom)
    t = (((xs - mhat[:, None]) ** 2 - v[:, None]) ** 2).mean(1)
    bt = cap * _scale("mean", split["fourth"], (0.0, 1.0), n)
    that = np.clip(t + rng.laplace(0, bt), 0, cap)
    inf = moment_inference(
        "variance",
        "population",
        vhat,
        n,
        dom,
        b,
        split,
        spread=that,
        spread_scale=bt,
        spread_cap=cap,
        centre=v,
    )
    low, high = inf.conf_int()
    truth = population.var()
    _check(np.mean((low <= truth) & (truth <= high)), reps)


def test_median_interval_covers_through_the_api(population):
    """300 releases of private_median itself (the population jittered by a uniform kernel
    of width 1 so that its median is unique: the progression is recorded in integers), and
    the control that the noise-only interval fails the same check."""
    n, eps, reps = 300, 2.0, 300
    rng = np.random.default_rng(13)
    # half the records are <= 140 and half >= 141: the jittered population's median is
    # 140.5, where its CDF crosses 1/2 with positive density on both sides
    truth = 140.5
    assert np.mean(population <= 140) == 0.5 and np.mean(population >= 141) == 0.5
    hits = noise_hits = 0
    for _ in range(reps):
        x = population[rng.integers(0, population.size, n)] + rng.uniform(-0.5, 0.5, n)
        low, high = pv.private_median(x, epsilon=eps, bounds=BOUNDS, rng=rng).conf_int()
        hits += low <= truth <= high
        own = pv.private_median(x, epsilon=eps, bounds=BOUNDS, rng=rng, inference="noise")
        noise_hits += own.conf_int()[0] <= truth <= own.conf_int()[1]
    _check(hits / reps, reps)
    # control: the noise-only interval (the data's own median) misses the sampling error
    assert noise_hits / reps < 0.9
