"""The paper-004 example release out of core: partitioned Parquet parts and their reader."""

import json
import warnings

import dask
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import privest as pv
from privest.errors import StoreError
from privest.release.examples import ExampleMechanism
from privest.rng import partition_rng
from privest.scale.examples import load_examples_dask, release_examples_to_folder

BOUNDS = {"a": (-1.0, 1.0), "b": (0.0, 10.0)}


@pytest.fixture
def parquet_folder(tmp_path):
    """3 files, so 3 partitions; the first holds one class only."""
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(0, 10, n)})
    df["label"] = np.where(df["a"] + rng.normal(0, 0.3, n) > 0, "yes", "no")
    df.loc[:199, "label"] = "yes"
    folder = tmp_path / "input"
    folder.mkdir()
    for k in range(3):
        df.iloc[200 * k : 200 * (k + 1)].to_parquet(folder / f"f{k}.parquet", index=False)
    return folder, df


def _mech():
    return ExampleMechanism(epsilon_x=1.0, epsilon_y=1.0, delta=1e-5, bounds=BOUNDS)


def _digests(path):
    return [p["sha256"] for p in json.loads((path / "manifest.json").read_text())["parts"]]


def test_seeded_release_is_the_same_whatever_the_workers(parquet_folder, tmp_path):
    """Invariant: seed and partitioning fix the release bit for bit, and each part is the
    in-memory release of its partition with the partition's generator."""
    folder, df = parquet_folder
    out = {}
    for workers in (1, 2):
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=False, dashboard_address=":0"
            ) as cluster,
            Client(cluster),
        ):
            out[workers] = release_examples_to_folder(
                _mech(), folder, tmp_path / f"w{workers}", label="label", rng=7
            )
    assert _digests(out[1]) == _digests(out[2])
    with dask.config.set(scheduler="sync"):
        ex, X, y = load_examples_dask(out[2])
        X, y = X.compute(), y.compute()
    for k in range(3):
        part = df.iloc[200 * k : 200 * (k + 1)]
        ypm = np.where(part["label"] == "yes", 1.0, -1.0)  # classes of the whole column
        mem = _mech().release(part[["a", "b"]], ypm, rng=partition_rng(7, k))
        np.testing.assert_array_equal(X[200 * k : 200 * (k + 1)], mem.X)
        np.testing.assert_array_equal(y[200 * k : 200 * (k + 1)], mem.y)
    assert ex.n == 0 and ex.sigma2 == mem.sigma2 and ex.randomness == "seeded"
    assert (
        list(ex.classes) == ["no", "yes"] and ex.guarantee.to_dict() == _mech().guarantee.to_dict()
    )
    # control: another seed gives other parts
    with dask.config.set(scheduler="sync"):
        other = release_examples_to_folder(_mech(), folder, tmp_path / "s8", label="label", rng=8)
    assert set(_digests(other)).isdisjoint(_digests(out[1]))


def test_secure_release_and_stream_fit(parquet_folder, tmp_path):
    from privest.scale.fit import partial_fit_stream

    folder, _ = parquet_folder
    with dask.config.set(scheduler="sync"):
        a = release_examples_to_folder(_mech(), folder, tmp_path / "a", label="label")
        b = release_examples_to_folder(_mech(), folder, tmp_path / "b", label="label")
        ex, X, y = load_examples_dask(a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # IWP-SGD's convergence note at n = 600
            est = partial_fit_stream(pv.IWPSGDClassifier(random_state=0), ex, X, y)
    assert ex.randomness == "secure" and set(_digests(a)).isdisjoint(_digests(b))
    assert est.coef_.shape[-1] == 2


def test_estimator_fit_of_the_folder_is_the_in_memory_fit(parquet_folder, tmp_path):
    """The folder's examples (Dask arrays, one chunk per part) fit by the estimator's own
    ``fit``, dispatched to the Dask backend: the in-memory fit of the same examples."""
    import dataclasses

    folder, _ = parquet_folder
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IWP-SGD's convergence note at n = 600
        path = release_examples_to_folder(_mech(), folder, tmp_path / "r", label="label", rng=3)
        ex, X, y = load_examples_dask(path)
        est = pv.IWPSGDClassifier(loss="logistic", batch_size=64, progress=False)
        dsk = est.fit(dataclasses.replace(ex, X=X, y=y))
        mem = pv.IWPSGDClassifier(loss="logistic", batch_size=64, progress=False)
        mem.fit(dataclasses.replace(ex, X=X.compute(), y=y.compute()))
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-12, atol=1e-15)
    assert dsk.n_batches_ == mem.n_batches_ == 10  # 600 records: 9 batches of 64 and 24


def test_modified_part_is_refused(parquet_folder, tmp_path):
    folder, _ = parquet_folder
    with dask.config.set(scheduler="sync"):
        path = release_examples_to_folder(_mech(), folder, tmp_path / "r", label="label", rng=1)
        _, X, _ = load_examples_dask(path)
        X.compute()  # control: the intact release reads
        part = path / "parts" / "part-000001.parquet"
        frame = pd.read_parquet(part)
        frame.loc[0, "x0"] += 1.0
        frame.to_parquet(part, index=False)
        with pytest.raises(StoreError, match="checksum"):
            load_examples_dask(path)[1].compute()
    with pytest.raises(StoreError, match="already exists"):
        release_examples_to_folder(_mech(), folder, path, label="label", rng=1)


def test_reader_refuses_a_missing_or_foreign_manifest(tmp_path):
    """No manifest, or the in-memory format's manifest: a StoreError naming what is wrong
    (control: the in-memory reader accepts its own folder)."""
    with pytest.raises(StoreError, match="no manifest.json"):
        load_examples_dask(tmp_path / "nothing")
    x = np.random.default_rng(1).uniform(0, 1, (50, 2))
    ex = _mech().release(pd.DataFrame(x, columns=["a", "b"]), (x[:, 0] > 0.5).astype(int), rng=1)
    ex.save(tmp_path / "in-memory")
    assert pv.PrivateExamples.load(tmp_path / "in-memory").X.shape == (50, 2)
    with pytest.raises(StoreError, match="is not a privest-iwp-examples-parts v1 release"):
        load_examples_dask(tmp_path / "in-memory")
