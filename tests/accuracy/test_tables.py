"""Predicted accuracy of a table's cells under the calibration privest.accuracy.tables
states (docs/accuracy.md, "Tables"), against noise drawn with that calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privest.accounting.accountants import compose_events
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


def test_cells_under_laplace_calibration():
    g, m, eps, cell_n = 2, 3, 0.8, 250.0
    accs, events = predict_table(
        ["count", "sum:income", "mean:income"],
        epsilon=eps,
        max_groups=g,
        max_rows=m,
        cell_n=cell_n,
        bounds=BOUNDS,
    )
    # two totals (count, sum): each at eps / 2, scale G R M / (eps / 2)
    assert compose_events(events, 0.0, ["basic"])["basic"].epsilon == pytest.approx(eps)
    s_count, s_sum = g * m * 2 / eps, g * m * 1000.0 * 2 / eps
    rng = np.random.default_rng(1)
    e_count, e_sum = rng.laplace(0, s_count, 40_000), rng.laplace(0, s_sum, 40_000)
    sims = {
        "count per cell": np.abs(e_count),
        "sum:income per cell": np.abs(e_sum),
        # sum / count to first order around cell_n rows of mean 500
        "mean:income per cell": np.abs((e_sum - 500.0 * e_count) / cell_n),
    }
    for a in accs:
        err = sims[a.quantity]
        assert _within(float(a.error_sf(a.half_width)), (err > a.half_width) * 1.0), a.quantity
        assert _within(a.se**2, err**2), a.quantity
    assert accs[0].plausible == (0.0, cell_n)


def test_cells_under_gaussian_calibration():
    accs, events = predict_table(
        ["count", "mean:income"],
        epsilon=1.0,
        max_groups=4,
        max_rows=1,
        cell_n=100,
        bounds=BOUNDS,
        noise="gaussian",
        delta=1e-6,
    )
    basic = compose_events(events, 1e-6, ["basic"])["basic"]
    assert basic.epsilon == pytest.approx(1.0) and basic.delta == pytest.approx(1e-6, rel=1e-6)
    assert accs[0].law.sd > 0 and accs[1].law.sd > accs[0].law.sd / 100 * 500


def test_table_inputs_are_checked():
    with pytest.raises(ValidationError, match="aggregates"):
        predict_table(["median:income"], epsilon=1, max_groups=1, max_rows=1, cell_n=10)
    with pytest.raises(ValidationError, match="bounds"):
        predict_table(["sum:income"], epsilon=1, max_groups=1, max_rows=1, cell_n=10)
    with pytest.raises(ValidationError, match="max_rows"):
        predict_table(["count"], epsilon=1, max_groups=1, max_rows=0, cell_n=10)
    with pytest.raises(ValidationError, match="delta"):
        predict_table(["count"], epsilon=1, max_groups=1, max_rows=1, cell_n=10, noise="gaussian")
