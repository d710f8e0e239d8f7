"""Coverage of the cells' intervals (slow): counts cover the bounded count, means and
medians the population mean and median, at level 0.95 at least (tolerance: 3 Monte Carlo
SEs of a 0.95 proportion). Public keys, so no selection conditions the release; a
contingency test's size at small counts stays at its level."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privest as pv

REPS = 150
LEVEL = 0.95


def _floor(n: int) -> float:
    return LEVEL - 3 * math.sqrt(LEVEL * (1 - LEVEL) / n)


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_cells_cover(noise):
    rng = np.random.default_rng(11)
    keys = pd.DataFrame({"g": ["a", "b"]})
    mean, median = 100 * 2 / 7, 100 * stats.beta.ppf(0.5, 2, 5)
    hits = {"n": [], "x_mean": [], "x_median": []}
    for rep in range(REPS):
        n = 2 * 300
        df = pd.DataFrame(
            {
                "pid": np.repeat(np.arange(n // 2), 2),  # two independent rows per person
                "g": rng.choice(["a", "b"], n),
                "x": 100 * rng.beta(2, 5, n),
            }
        )
        t = pv.tabulate(
            df, by="g", unit="pid", max_groups=2, max_rows=2, keys=keys,
            aggregates={"n": "count", "x": ["mean", "median"]}, bounds={"x": (0, 100)},
            epsilon=2.0, delta=1e-6, noise=noise, rng=rep,
        )  # fmt: skip
        true_n = df.groupby("g").size().reindex(keys["g"]).to_numpy()
        for name, truth in (("n", true_n), ("x_mean", mean), ("x_median", median)):
            hits[name] += list((t[name + "_lower"] <= truth) & (truth <= t[name + "_upper"]))
    for name, got in hits.items():
        assert np.mean(got) >= _floor(len(got)), (name, np.mean(got))


@pytest.mark.slow
def test_independence_test_holds_its_level_at_small_counts():
    """40 people in a 2 x 3 table under independence: the share of p-values <= 0.05 stays
    within 3 Monte Carlo SEs of 0.05 (the plain chi-square law ignores the noise)."""
    rng = np.random.default_rng(12)
    levels = {"a": ["x", "y"], "b": ["p", "q", "r"]}
    reps, pvals = 120, []
    for rep in range(reps):
        df = pd.DataFrame(
            {"a": rng.choice(["x", "y"], 40, p=[0.3, 0.7]),
             "b": rng.choice(["p", "q", "r"], 40, p=[0.5, 0.3, 0.2])}
        )  # fmt: skip
        res = pv.contingency(
            df, rows="a", columns="b", levels=levels, epsilon=1.0, simulations=99, rng=rep
        )
        pvals.append(res.pvalue)
    size = np.mean(np.array(pvals) <= 0.05)
    assert size <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps), size
    # and it has power: b follows a (300 people)
    a = rng.choice(["x", "y"], 300)
    b = np.where(a == "x", rng.choice(["p", "q"], 300), rng.choice(["q", "r"], 300))
    res = pv.contingency(
        pd.DataFrame({"a": a, "b": b}), rows="a", columns="b", levels=levels, epsilon=1.0,
        simulations=99, rng=1,
    )  # fmt: skip
    assert res.pvalue <= 0.05
