"""Fits of a Dask-backed release on a LocalCluster equal the in-memory fits of that release."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import privest as pv
from privest.errors import ValidationError
from privest.scale import DaskRelease


@pytest.fixture(scope="module")
def release():
    rng = np.random.default_rng(11)
    n = 6000
    x = rng.uniform(-1, 1, size=(n, 3))
    eta = 0.3 + x @ [1.0, -1.0, 0.5]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    df = pd.DataFrame(np.column_stack([x, y, eta + rng.normal(size=n)]), columns=list("abcyz"))
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds={c: (-1, 1) for c in "abc"})
    return mech.release(df, rng=1)


@pytest.mark.parametrize(
    ("est", "target"),
    [
        (pv.DRLogisticRegression(), "y"),
        (pv.DRLogisticRegression(method="sdr"), "y"),
        (pv.DRLinearRegression(features=list("abc")), "z"),
    ],
)
def test_fit_equals_in_memory_fit(client, release, est, target):
    mem = clone(est).fit(release, target)
    drel = DaskRelease.from_release(release, chunk_rows=1300)  # 5 chunks, the last short
    dsk = clone(est).fit(drel, target)
    # same objective and solver on the same records: only summation order differs
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(dsk.stderr_, mem.stderr_, rtol=1e-8, atol=0)
    assert dsk.converged_ and dsk.n_ == mem.n_ and dsk.param_names_ == mem.param_names_
    assert str(dsk.summary()).count("\n") == str(mem.summary()).count("\n")


def test_large_data_path_polishes_a_chunk_fit(client, release, monkeypatch):
    """Above SUBSAMPLE_ABOVE records the starts run on one chunk; Newton on all records
    then reaches the in-memory minimiser (same tolerance)."""
    import privest.learn.fitting as fitting

    mem = pv.DRLogisticRegression().fit(release, "y")  # all records: no subsample
    monkeypatch.setattr(fitting, "SUBSAMPLE_ABOVE", 1000)  # the one strategy's threshold
    dsk = pv.DRLogisticRegression().fit(DaskRelease.from_release(release, chunk_rows=1300), "y")
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(dsk.stderr_, mem.stderr_, rtol=1e-8, atol=0)
    assert dsk.passes_ < 10  # the starts cost no pass over all records


def test_equality_check_can_fail(client, release):
    """Control: moving one released value by 0.5 moves the fit far beyond 1e-8."""
    x1 = np.array(release.x1)
    x1[0, 0] += 0.5
    moved = dataclasses.replace(release, x1=x1)
    mem = pv.DRLogisticRegression().fit(release, "y")
    dsk = pv.DRLogisticRegression().fit(DaskRelease.from_release(moved), "y")
    assert np.abs(dsk.coef_ - mem.coef_).max() > 1e-6


def test_refusals(release):
    drel = DaskRelease.from_release(release)
    with pytest.raises(ValidationError, match="column name"):
        pv.DRLogisticRegression().fit(drel, np.zeros(release.n))
    with pytest.raises(ValidationError, match="bootstrap"):
        pv.DRLogisticRegression(inference="bootstrap").fit(drel, "y")


def test_iwp_sgd_streams_partitions_like_partial_fit_in_memory(client):
    import dask.array as da

    from privest.scale.fit import partial_fit_stream

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (4000, 3))
    ex = pv.release_examples(
        x,
        (x.sum(axis=1) > 0).astype(int),
        epsilon_x=2.0,
        epsilon_y=2.0,
        delta=1e-5,
        bounds=(-1, 1),
        rng=1,
    )
    est = pv.IWPSGDClassifier(loss="logistic", random_state=0)
    mem, back = clone(est), clone(est)
    with warnings.catch_warnings():  # few records: IWP-SGD may warn about convergence
        warnings.simplefilter("ignore")
        for s in range(0, 4000, 1000):
            mem.partial_fit(dataclasses.replace(ex, X=ex.X[s : s + 1000], y=ex.y[s : s + 1000]))
        for s in range(3000, -1, -1000):  # control: another order gives another fit
            back.partial_fit(dataclasses.replace(ex, X=ex.X[s : s + 1000], y=ex.y[s : s + 1000]))
        got = partial_fit_stream(
            est, ex, da.from_array(ex.X, chunks=(1000, 3)), da.from_array(ex.y, chunks=1000)
        )
    np.testing.assert_array_equal(got.coef_, mem.coef_)
    assert not np.array_equal(back.coef_, mem.coef_)
    assert not hasattr(est, "coef_")  # the estimator passed is left unfitted


def test_release_larger_than_the_memory_rule_streams_from_the_store(
    client, release, tmp_path, monkeypatch
):
    """A release over KEEP_SHARE of the workers' memory is read from the store on every
    pass (the workers hold one part at a time) and fits exactly as one kept in memory;
    control: a kept release reads each part once."""
    import privest.scale.fit as dask_fit
    import privest.scale.store as dask_store

    for start in range(0, release.n, 1500):  # a store of 4 parts
        part = dataclasses.replace(
            release, x1=release.x1[start : start + 1500], x2=release.x2[start : start + 1500]
        )
        part.save(tmp_path / "s", append=start > 0)
    log = tmp_path / "reads"  # a file: the tasks reach the workers pickled

    def counted(*args):
        with open(log, "a") as f:
            f.write(args[1]["file"] + "\n")
        return read_part_arrays(*args)

    def reads():
        n = len(log.read_text().splitlines()) if log.exists() else 0
        log.unlink(missing_ok=True)
        return n

    read_part_arrays = dask_store.read_part_arrays
    monkeypatch.setattr(dask_store, "read_part_arrays", counted)
    kept = pv.DRLogisticRegression().fit(pv.load_release(tmp_path / "s", engine="dask"), "y")
    assert kept.records_in_memory_ and reads() == 4
    monkeypatch.setattr(dask_fit, "KEEP_SHARE", 0.0)
    streamed = pv.DRLogisticRegression().fit(pv.load_release(tmp_path / "s", engine="dask"), "y")
    assert not streamed.records_in_memory_
    assert reads() == 4 * streamed.passes_  # every pass reads every part
    np.testing.assert_array_equal(streamed.coef_, kept.coef_)
    np.testing.assert_array_equal(streamed.stderr_, kept.stderr_)
    mem = pv.DRLogisticRegression().fit(release, "y")
    np.testing.assert_allclose(streamed.coef_, mem.coef_, rtol=0, atol=1e-8)


def test_cluster_memory_is_the_workers_limits(client):
    from privest.scale.fit import cluster_memory

    limits = [w["memory_limit"] for w in client.scheduler_info()["workers"].values()]
    assert cluster_memory() == sum(limits) > 0


@pytest.fixture(scope="module")
def examples():
    from privest.release.examples import release_regression_examples

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (4000, 3))
    kw = dict(epsilon_x=2.0, epsilon_y=2.0, bounds=(-1, 1), rng=1)
    clf = pv.release_examples(x, (x.sum(axis=1) > 0).astype(int), delta=1e-5, **kw)
    reg = release_regression_examples(
        x, x @ [0.3, -0.2, 0.1], delta_x=5e-6, delta_y=5e-6, y_bounds=(-1, 1), **kw
    )
    return clf, reg


def _on_dask(ex, rows):
    import dask.array as da

    return dataclasses.replace(
        ex, X=da.from_array(ex.X, chunks=(rows, ex.p)), y=da.from_array(ex.y, chunks=rows)
    )


@pytest.mark.parametrize(
    "est",
    [
        pv.IWPSGDClassifier(loss="logistic"),
        pv.IWPSGDClassifier(loss="exponential", batch_size=100, averaging="polyak"),
        pv.IWPSGDClassifier(loss="squared", fit_intercept=True, n_passes=2),
        pv.IWPSGDRegressor(),
        pv.IWPSGDRegressor(fit_intercept=True, theta_radius=None),
    ],
)
def test_iwp_fit_of_dask_examples_is_the_in_memory_fit(client, examples, est):
    """IWPSGD*.fit on examples held as Dask arrays (partitions of 900 rows: batches straddle
    them) runs the in-memory loop over the partitions in order: the same iterates."""
    ex = examples[isinstance(est, pv.IWPSGDRegressor)]
    est = clone(est).set_params(progress=False)
    with warnings.catch_warnings():  # few records: IWP-SGD may warn about convergence
        warnings.simplefilter("ignore")
        mem = clone(est).fit(ex)
        dsk = clone(est).fit(_on_dask(ex, 900))
    np.testing.assert_allclose(dsk.trajectory_, mem.trajectory_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-12, atol=1e-15)
    assert dsk.t_ == mem.t_ and dsk.theta_radius_ == pytest.approx(mem.theta_radius_)


def test_iwp_partial_fit_of_dask_examples_and_its_control(client, examples):
    """partial_fit continues across Dask-held releases as in memory; control: the same
    records in another order give another fit, so the equality can fail."""
    ex = examples[0]
    halves = [
        dataclasses.replace(ex, X=ex.X[s : s + 2000], y=ex.y[s : s + 2000]) for s in (0, 2000)
    ]
    est = pv.IWPSGDClassifier(loss="logistic", progress=False)
    mem, dsk = clone(est), clone(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for h in halves:
            mem.partial_fit(h)
            dsk.partial_fit(_on_dask(h, 700))
        rev = dataclasses.replace(ex, X=ex.X[::-1].copy(), y=ex.y[::-1].copy())
        other = clone(est).fit(_on_dask(rev, 900))
        whole = clone(est).fit(ex)
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-12, atol=1e-15)
    assert dsk.t_ == mem.t_
    assert np.abs(other.coef_ - whole.coef_).max() > 1e-6


def test_iwp_dask_refusals(examples):
    ex = _on_dask(examples[0], 900)
    with pytest.raises(ValidationError, match="shuffle"):
        pv.IWPSGDClassifier(shuffle=True, random_state=0, progress=False).fit(ex)
    import dask.array as da

    bad = dataclasses.replace(ex, y=da.from_array(np.asarray(examples[0].y), chunks=1000))
    with pytest.raises(ValidationError, match="chunked alike"):
        pv.IWPSGDClassifier(progress=False).fit(bad)


def test_a_registered_loss_fits_out_of_core_as_in_memory(client, monkeypatch):
    """A loss the library does not ship (its class and one registration) is fitted on a
    Dask-backed release by the same strategy as in memory: nothing in privest.scale names
    it."""
    from privest.learn.losses import registry
    from privest.learn.losses.index import IndexLoss

    class PoissonLoss(IndexLoss):
        name = "poisson"
        smooth_in_x = smooth_in_theta = True

        def phi(self, y, u):
            return np.exp(u) - y * u

        def dphi(self, y, u):
            return np.exp(u) - y

        def d2phi(self, y, u):
            return np.exp(u)

        d3phi = d4phi = d2phi

    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))
    registry.register_loss(registry.LossSpec("poisson", "e^u - y u", {"dr": PoissonLoss}))
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (3000, 2))
    counts = rng.poisson(np.exp(0.2 + x @ [0.5, -0.5])).astype(float)
    df = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": counts})
    rel = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds={"a": (-1, 1), "b": (-1, 1)})
    rel = rel.release(df, rng=4)
    est = pv.DRMEstimator(loss="poisson", features=["a", "b"])
    mem = clone(est).fit(rel, "y")
    dsk = clone(est).fit(DaskRelease.from_release(rel, chunk_rows=700), "y")
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(dsk.stderr_, mem.stderr_, rtol=1e-8, atol=0)
    assert dsk.solution_.starts == mem.solution_.starts == 2 and dsk.passes_ > 0
