"""Private statistics of Dask-held data: the in-memory mechanism's law and release exactly."""

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.mechanisms.lattice_plm import truncation_levels
from privest.mechanisms.profiles.lattice import lattice_order_profile, order_window
from privest.models.statistics import statistic_law, statistic_mechanism
from privest.registry import mechanism_names, mechanism_spec
from privest.scale import stats
from privest.scale.stats import dask_partitions, read_column


@pytest.fixture(autouse=True)
def sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    # rounded values: many ties, as in survey data
    return np.round(rng.normal(50, 10, 12001).clip(0, 100), 1)


@pytest.mark.parametrize("statistic", ["mean", "sum", "variance"])
def test_sums_equal_in_memory_for_the_same_seed(data, statistic):
    dx = da.from_array(data, chunks=2500)
    for seed in (1, 2):
        mem = pv.private_statistic(data, statistic, epsilon=1.0, bounds=(0, 100), rng=seed)
        dsk = pv.private_statistic(dx, statistic, epsilon=1.0, bounds=(0, 100), rng=seed)
        assert float(dsk) == float(mem) and dsk.n == mem.n == data.size
    # control: the release does depend on the seed (the equality above could fail)
    one = pv.private_statistic(dx, statistic, epsilon=1.0, bounds=(0, 100), rng=1)
    assert float(one) != float(
        pv.private_statistic(dx, statistic, epsilon=1.0, bounds=(0, 100), rng=2)
    )


def test_count_equals_in_memory(data):
    ind = data > 60
    dind = da.from_array(ind.astype(float), chunks=5000)
    mem = pv.private_count(ind, epsilon=0.5, rng=3)
    assert float(pv.private_statistic(dind, "count", epsilon=0.5, rng=3)) == float(mem)


@pytest.mark.parametrize(
    ("statistic", "quantile", "n"),
    [
        ("median", None, 12001),
        ("median", None, 12000),
        ("quantile", 0.9, 12001),
        ("quantile", 0.02, 7),
    ],
)
def test_quantile_law_is_the_in_memory_law(data, monkeypatch, statistic, quantile, n):
    """Exact check: the selected order statistics are np.sort's; the profile, hence the law,
    is the in-memory one; the same seed gives the same release."""
    monkeypatch.setattr(stats, "BUCKETS", 16)  # force several histogram passes
    monkeypatch.setattr(stats, "SELECT_LIMIT", 40)
    x = data[:n]
    mech = statistic_mechanism(statistic, epsilon=1.0, bounds=(0, 100), quantile=quantile)
    parts = dask_partitions(da.from_array(x, chunks=max(1, n // 5)))
    levels = truncation_levels(1.0, mech.grid.kb - mech.grid.ka + 1)
    inward = mech.inward(n)  # the public rank-target rule (n = 7, q = 0.02: inward)
    _, first, last = order_window(mech.spec, None, n, levels, inward=inward)
    got, n_got, _, passes = stats.select_order_statistics(
        parts,
        mech.grid,
        (0.0, 100.0),
        lambda m: order_window(mech.spec, None, m, levels, inward=mech.inward(m))[1:],
    )
    want = np.sort(mech.grid.snap(x)).astype(np.int64)[first - 1 : last]
    np.testing.assert_array_equal(got, want)
    assert n_got == n and (passes > 2 or n < 100)
    law, _ = statistic_law(da.from_array(x, chunks=max(1, n // 5)), mech)
    prof = lattice_order_profile(x, mech.spec, (0, 100), levels=levels, inward=inward)
    np.testing.assert_array_equal(law.profile.upper, prof.upper)
    np.testing.assert_array_equal(law.profile.lower, prof.lower)
    np.testing.assert_allclose(law.prob, mech.law(x).prob, rtol=0, atol=0)
    for seed in (4, 5):
        mem = mech.release(x, rng=seed)
        dsk = pv.private_statistic(
            da.from_array(x, chunks=max(1, n // 5)),
            statistic,
            epsilon=1.0,
            bounds=(0, 100),
            quantile=quantile,
            rng=seed,
            inference="none",  # the mechanism's own release, all of epsilon on the point
        )
        assert float(dsk) == float(mem)


def test_selection_check_can_fail(data):
    """Control: one record moved across the median changes the selected order statistics."""
    mech = statistic_mechanism("median", epsilon=1.0, bounds=(0, 100))
    moved = data.copy()
    moved[np.argmin(moved)] = 100.0
    law, _ = statistic_law(da.from_array(moved, chunks=3000), mech)
    assert not np.array_equal(law.profile.upper, mech.law(data).profile.upper)


def test_parquet_and_frame_inputs_clip_and_bounds(tmp_path, data):
    path = tmp_path / "data.parquet"
    frame = pd.DataFrame({"v": np.append(data, 130.0), "w": 0.0})
    frame.to_parquet(path)
    ddf = dd.from_pandas(frame, npartitions=3)
    mem = pv.private_median(frame["v"].to_numpy(), epsilon=1.0, bounds=(0, 100), clip=True, rng=9)
    for x in (read_column(path, "v"), ddf["v"], ddf[["v"]]):
        got = pv.private_statistic(x, "median", epsilon=1.0, bounds=(0, 100), clip=True, rng=9)
        assert float(got) == float(mem)
    with pytest.raises(pv.BoundsError):
        pv.private_statistic(ddf["v"], "median", epsilon=1.0, bounds=(0, 100))
    with pytest.raises(pv.ValidationError, match="select one column"):
        pv.private_statistic(ddf, "mean", epsilon=1.0, bounds=(0, 100))


def _pairs() -> list[tuple[str, str, float | None]]:
    """Every registered statistic x every mechanism= choice (auto included)."""
    out = []
    for stat, res in (
        ("median", None),
        ("quantile:0.9", None),
        ("median", 1.0),
        ("mean", None),
        ("sum", None),
        ("count", None),
        ("variance", None),
    ):
        for m in mechanism_names(stat.partition(":")[0]):
            out.append((stat, m, res))
    return out


@pytest.mark.parametrize(("statistic", "mechanism", "resolution"), _pairs())
def test_same_choice_and_release_in_memory_and_on_dask(statistic, mechanism, resolution):
    """The same public inputs pick the same mechanism; seeded, the same release (or the same
    refusal, for mechanisms whose law needs every record at once)."""
    rng = np.random.default_rng(5)
    x = np.round(rng.uniform(0, 100, 5000))  # integers: auto picks PF with resolution=1
    if statistic == "count":
        x = (x > 40).astype(float)
    dx = da.from_array(x, chunks=1300)
    kw = dict(epsilon=1.0, mechanism=mechanism, rng=11, inference="none")  # the point release
    if statistic != "count":
        kw["bounds"] = (0, 100)
    if resolution is not None:  # refused alike by the mechanisms without a lattice
        kw["resolution"] = resolution
    try:
        mem = pv.private_statistic(x, statistic, **kw)
    except pv.ValidationError as exc:  # ptr's own inputs; a resolution off the lattice
        assert mechanism == "ptr" or not mechanism_spec(mechanism).lattice
        with pytest.raises(type(exc)):
            pv.private_statistic(dx, statistic, **kw)
        return
    try:
        dsk = pv.private_statistic(dx, statistic, **kw)
    except pv.ValidationError as exc:
        assert "not available out of core" in str(exc)
        assert mechanism != "auto", "auto must pick a mechanism the backend can run"
        return
    assert dsk.mechanism == mem.mechanism
    assert float(dsk) == float(mem)
    assert dsk.n == mem.n == x.size


def test_auto_picks_permute_and_flip_on_dask_as_in_memory():
    """The defect of the two copies: on Dask 'auto' picked piecewise Laplace where memory
    picked permute-and-flip (5,000 integers, resolution 1)."""
    x = np.random.default_rng(1).integers(0, 101, 5000).astype(float)
    kw = dict(epsilon=1.0, bounds=(0, 100), resolution=1, rng=3)
    mem = pv.private_median(x, **kw)
    dsk = pv.private_median(da.from_array(x, chunks=1000), **kw)
    assert mem.mechanism == dsk.mechanism == "permute_and_flip"
    assert float(mem) == float(dsk)
