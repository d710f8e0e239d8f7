"""Predicted accuracy of a table's cells (docs/accuracy.md, "Tables"), against the releases
of pv.tabulate itself."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.accuracy import predict_table
from privest.accuracy.base import LaplaceSumLaw
from privest.errors import ValidationError

BOUNDS = {"income": (0.0, 1000.0)}


def _within(pred: float, sim: np.ndarray, z: float = 4.0) -> bool:
    return abs(float(np.mean(sim)) - pred) <= z * float(np.std(sim, ddof=1)) / math.sqrt(sim.size)


@pytest.mark.parametrize(("s1", "s2"), [(3.0, 1.0), (2.0, 2.0), (1.0, 0.0)])
def test_laplace_sum_law_matches_draws(s1, s2):
    law = LaplaceSumLaw(s1, s2)
    rng = np.random.default_rng(0)
    err = np.abs(rng.laplace(0, s1, 50_000) + rng.laplace(0, s2, 50_000))
    for a in (0.5, 2.0, float(law.error_quantile(0.95))):
        assert _within(float(law.error_sf(a)), (err > a) * 1.0)
    assert _within(law.error_mse(), err**2)
    assert float(law.error_cdf(0.0)) == 0.0 and float(law.cdf(0.0)) == pytest.approx(0.5)
    # the density integrates to the CDF
    ys = np.linspace(-40, 3, 20_001)
    mass = np.trapezoid(np.exp(law.logpdf(ys)), ys)
    assert mass == pytest.approx(float(law.cdf(3.0)), abs=1e-4)


def _people(n_cell: int, seed: int) -> pd.DataFrame:
    """Two cells of ``n_cell`` people, one row each: bounding drops nothing, so a release's
    error is its noise alone."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": np.arange(2 * n_cell),
            "region": np.repeat(["a", "b"], n_cell),
            "income": rng.uniform(0, 1000, 2 * n_cell),
        }
    )


@pytest.mark.slow
@pytest.mark.parametrize(("noise", "delta"), [("laplace", 0.0), ("gaussian", 1e-6)])
def test_prediction_matches_the_tables_releases(noise, delta):
    """The predicted SE of a cell's count, sum and mean against R releases by pv.tabulate
    (public keys), within 4 Monte Carlo SEs of a standard deviation; the prediction's
    event composes to the table's guarantee. Control: the calibration of the count alone
    (all of epsilon on it) predicts a smaller SE that the same check rejects."""
    g, m, eps, n_cell, reps = 2, 3, 1.0, 300, 120
    df = _people(n_cell, 0)
    kw = dict(epsilon=eps, max_groups=g, max_rows=m, noise=noise, delta=delta)
    accs, events = predict_table(
        ["count", "sum:income", "mean:income"],
        cell_n=n_cell,
        bounds=BOUNDS,
        cell_mean={"income": float(df.income[:n_cell].mean())},
        **kw,
    )
    keys = pd.DataFrame({"region": ["a", "b"]})
    out = np.array(
        [
            pv.tabulate(
                df,
                by="region",
                unit="pid",
                aggregates={"n": "count", "income": ["sum", "mean"]},
                bounds=BOUNDS,
                keys=keys,
                rng=seed,
                **kw,
            )[["n", "income_sum", "income_mean"]].to_numpy()[0]
            for seed in range(reps)
        ]
    )
    first = df.income[:n_cell]
    err = out - np.array([n_cell, first.sum(), first.mean()])
    tol = 4.0 / math.sqrt(2.0 * (reps - 1))
    for j, acc in enumerate(accs):
        sd = math.sqrt(np.mean(err[:, j] ** 2))
        assert abs(sd / acc.se - 1.0) <= tol, (acc.quantity, sd, acc.se)
    table = pv.tabulate(
        df,
        by="region",
        unit="pid",
        aggregates={"n": "count", "income": ["sum", "mean"]},
        bounds=BOUNDS,
        keys=keys,
        rng=0,
        **kw,
    )
    assert events == [table.guarantee.event()]  # the table's own plan, composed
    alone = predict_table(["count"], cell_n=n_cell, **kw)[0][0]
    assert abs(math.sqrt(np.mean(err[:, 0] ** 2)) / alone.se - 1.0) > tol


def test_table_inputs_are_checked():
    with pytest.raises(ValidationError, match="aggregates"):
        predict_table(["mode:income"], epsilon=1, max_groups=1, max_rows=1, cell_n=10)
    with pytest.raises(ValidationError, match="bounds"):
        predict_table(["sum:income"], epsilon=1, max_groups=1, max_rows=1, cell_n=10)
    with pytest.raises(ValidationError, match="max_rows"):
        predict_table(["count"], epsilon=1, max_groups=1, max_rows=0, cell_n=10)
    with pytest.raises(ValidationError, match="delta"):
        predict_table(["count"], epsilon=1, max_groups=1, max_rows=1, cell_n=10, noise="gaussian")


def _agree(pred: float, pred_se: float, sim: np.ndarray, z: float = 4.0) -> bool:
    """The mean of ``sim`` against ``pred`` within z combined Monte Carlo SEs (the
    prediction's own, from its averaged reference cells, plus the simulation's)."""
    se = math.hypot(pred_se, float(np.std(sim, ddof=1)) / math.sqrt(sim.size))
    return abs(float(np.mean(sim)) - pred) <= z * se


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "level"), [("median:income", 0.5), ("quantile:0.8:income", 0.8)])
def test_quantile_prediction_matches_the_tables_releases(spec, level):
    """A cell's median or quantile: the prediction (the exact law of the plan's exponential
    mechanism on reference cells drawn from the stated shape) against pv.tabulate's releases
    on fresh data drawn from that shape, 2 cells x 200 tables: P(|error| > a) at the
    half-width and its half, and the MSE. Negative control: the prediction for cells of a
    quarter of the size is refused by the same check."""
    n_cell, eps, reps = 150, 0.5, 200
    ref = {"shape": "normal", "sd": 150.0, "draws": 100}
    kw = dict(epsilon=eps, max_groups=1, max_rows=2, inference="none")
    acc = predict_table([spec], cell_n=n_cell, bounds=BOUNDS, reference=ref, **kw)[0][0]
    assert acc.mechanism == "rank_exponential" and "normal" in acc.assumption
    kind = "median" if level == 0.5 else f"quantile:{level}"
    out = "income_median" if level == 0.5 else f"income_quantile_{level:g}"
    rng = np.random.default_rng(4)
    keys = pd.DataFrame({"region": ["a", "b"]})
    err = []
    for seed in range(reps):
        df = _people(n_cell, 0)
        df["income"] = np.clip(rng.normal(500.0, 150.0, 2 * n_cell), 0.0, 1000.0)
        table = pv.tabulate(
            df, by="region", unit="pid", aggregates={"income": kind}, bounds=BOUNDS,
            keys=keys, rng=seed, **kw,
        )  # fmt: skip
        truth = [np.quantile(df.income[df.region == r], level, method="inverted_cdf") for r in "ab"]
        err += list(np.abs(table[out].to_numpy() - np.array(truth)))
    err = np.array(err)
    laws = acc.law.laws

    def check(a_law, a: float) -> bool:
        parts = np.array([float(law.error_sf(a)) for law in a_law.laws])
        return _agree(parts.mean(), parts.std(ddof=1) / math.sqrt(parts.size), err > a)

    for a in (acc.half_width * (1 + 1e-9), 0.5 * acc.half_width):
        assert check(acc.law, a)
    mses = np.array([law.error_mse() for law in laws])
    assert _agree(mses.mean(), mses.std(ddof=1) / math.sqrt(mses.size), err**2)
    small = predict_table([spec], cell_n=n_cell // 4, bounds=BOUNDS, reference=ref, **kw)[0][0]
    assert not check(small.law, small.half_width * (1 + 1e-9))
