"""The ZIL release out of core (issue 20, requirements 1 and 4): a Dask DataFrame or a
Parquet folder released partition by partition into a store."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster
from scipy import stats

import privest as pv
from privest.errors import BoundsError, StoreError, ValidationError
from privest.release.store import read_manifest, save_release

BOUNDS = {"a": (-1.0, 1.0), "b": (0.0, 10.0)}
pytestmark = [
    pytest.mark.filterwarnings("ignore::privest.errors.SeededRandomnessWarning"),
    pytest.mark.filterwarnings("ignore::privest.errors.NoRecordIdsWarning"),
]


def _data(n: int, seed: int = 0, start: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(start, start + n),
            "a": rng.uniform(-1, 1, n),
            "b": rng.uniform(0, 10, n),
            "c": rng.normal(size=n),  # not noised: released as is
        }
    )


@pytest.fixture
def parquet_folder(tmp_path):
    """A Parquet input of 4 files, so 4 partitions whatever reads it."""
    folder = tmp_path / "input"
    folder.mkdir()
    df = _data(2000)
    for k in range(4):
        df.iloc[500 * k : 500 * (k + 1)].to_parquet(folder / f"f{k}.parquet", index=False)
    return folder, df


def _part_digests(store) -> list[str]:
    return [p["sha256"] for p in read_manifest(store)["parts"]]


def test_seeded_release_is_the_same_whatever_the_workers(parquet_folder, tmp_path):
    """Invariant: the seed and the partitioning fix the release bit for bit; the number of
    workers and the scheduling do not (one SeedSequence child per partition index)."""
    folder, _ = parquet_folder
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=BOUNDS)
    digests = {}
    for workers in (1, 2):
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=False, dashboard_address=":0"
            ) as cluster,
            Client(cluster),
        ):
            mech.release(folder, rng=11, ids="id", store=tmp_path / f"w{workers}")
        digests[workers] = _part_digests(tmp_path / f"w{workers}")
    with dask.config.set(scheduler="threads", num_workers=3):
        mech.release(folder, rng=11, ids="id", store=tmp_path / "threads")
    assert len(digests[1]) == 4
    assert digests[1] == digests[2] == _part_digests(tmp_path / "threads")
    # the comparison can fail: another seed, or another partitioning, is another release
    with dask.config.set(scheduler="sync"):
        mech.release(folder, rng=12, ids="id", store=tmp_path / "seed12")
        frame = dd.read_parquet(folder).repartition(npartitions=2)
        mech.release(frame, rng=11, ids="id", store=tmp_path / "two")
    assert set(_part_digests(tmp_path / "seed12")).isdisjoint(digests[1])
    one, two = pv.load_release(tmp_path / "w1"), pv.load_release(tmp_path / "two")
    np.testing.assert_array_equal(one.ids, two.ids)
    assert not np.array_equal(one.x1, two.x1)


def test_store_written_by_dask_loads_and_holds_the_input(parquet_folder, tmp_path):
    folder, df = parquet_folder
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=BOUNDS, resolution={"a": 0.5, "b": 1})
    with dask.config.set(scheduler="sync"):
        batch = mech.release(folder, rng=1, ids="id", store=tmp_path / "s")
    rel = pv.load_release(tmp_path / "s")
    assert (rel.n, rel.column_names, rel.noised_names) == (2000, ("a", "b", "c"), ("a", "b"))
    assert rel.randomness == "seeded" and rel.guarantee.to_dict() == mech.guarantee.to_dict()
    np.testing.assert_array_equal(rel.ids, df["id"])  # partition order is record order
    np.testing.assert_array_equal(rel.x1[:, 2], df["c"])  # the unnoised column as is
    np.testing.assert_array_equal(rel.x1[:, 0] / 0.5, np.rint(rel.x1[:, 0] / 0.5))  # resolution
    back = batch.compute(scheduler="sync")  # the returned DaskRelease reads the same parts
    np.testing.assert_array_equal(back.x2, rel.x2)
    np.testing.assert_array_equal(back.ids, rel.ids)
    assert not list((tmp_path / "s" / "parts").glob(".part-*"))


def test_agrees_in_law_with_the_in_memory_release(tmp_path):
    """One noised column on the output grid, so unnoised records are exact: the share of
    exact records is Binomial(n, zero_prob) and X2 - x ~ SL(lam^2 D^2), in 1-D a Laplace
    of scale lam D / sqrt(2) (paper 000, Sec. 3.1). Both checks have a negative control."""
    n, lam, zero_prob = 20_000, 0.5, 0.2
    rng = np.random.default_rng(5)
    x = np.round(rng.uniform(-1, 1, n) * 1024) / 1024  # on the 2^-20 output grid
    mech = pv.ZILMechanism(lam=lam, zero_prob=zero_prob, bounds=(-1.0, 1.0))
    frame = dd.from_pandas(pd.DataFrame({"x0": x}), npartitions=5)
    with dask.config.set(scheduler="sync"):
        mech.release(frame, rng=21, store=tmp_path / "s", ids=False)
    rel = pv.load_release(tmp_path / "s")
    mem = mech.release(x[:, None], rng=22)
    z1, z2 = rel.x1[:, 0] - x, rel.x2[:, 0] - x
    # exact records: within 4 binomial SEs (a false alarm has probability < 1e-4)
    se = np.sqrt(zero_prob * (1 - zero_prob) / n)
    assert abs(np.mean(z1 == 0) - zero_prob) < 4 * se
    assert abs(np.mean(mem.x1[:, 0] == x) - zero_prob) < 4 * se
    # exact law of X2 - x; with fixed seeds, level 1e-3 (a false alarm has probability 1e-3)
    scale = lam * 2.0 / np.sqrt(2)
    assert stats.kstest(z2, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(z2, stats.laplace(scale=1.1 * scale).cdf).pvalue < 1e-3  # control
    # two-sample: Dask and in-memory noise X1 - x have one law; a 25% larger lam is caught
    assert stats.ks_2samp(z1, mem.x1[:, 0] - x).pvalue > 1e-3
    wider = pv.ZILMechanism(lam=1.25 * lam, zero_prob=zero_prob, bounds=(-1.0, 1.0))
    assert stats.ks_2samp(z1, wider.release(x[:, None], rng=23).x1[:, 0] - x).pvalue < 1e-3


def _message(exc_type, func) -> str:
    with pytest.raises(exc_type) as info:
        func()
    return str(info.value)


@pytest.mark.parametrize(
    ("mech", "edit", "exc"),
    [
        (pv.ZILMechanism(0.5, 0.2, BOUNDS), {"a": (30, 3.0), "b": (1700, -1.0)}, BoundsError),
        (pv.ZILMechanism(0.5, 0.2, {"a": (-1, 1), "zz": (0, 1)}), {}, ValidationError),
        (pv.ZILMechanism(0.5, 0.2, [(-1, 1)] * 2), {}, BoundsError),  # 2 pairs, 3 columns
        (pv.ZILMechanism(0.5, 0.2, BOUNDS), {"c": (10, "x")}, ValidationError),  # text
    ],
)
def test_refusals_are_the_in_memory_ones(mech, edit, exc, tmp_path):
    df = _data(2000)
    for col, (row, value) in edit.items():
        if isinstance(value, str):
            df[col] = df[col].astype(str)
        df.loc[row, col] = value
    expected = _message(exc, lambda: mech.release(df.drop(columns="id"), rng=1))
    frame = dd.from_pandas(df, npartitions=4)
    with dask.config.set(scheduler="sync"):
        got = _message(exc, lambda: mech.release(frame, rng=1, ids="id", store=tmp_path / "s"))
    assert got == expected
    assert not (tmp_path / "s" / "manifest.json").exists()
    assert not list((tmp_path / "s").glob("parts/*"))  # nothing half-written stays
    if exc is BoundsError and edit:  # clip=True releases the same data
        clipping = pv.ZILMechanism(0.5, 0.2, BOUNDS, clip=True)
        with dask.config.set(scheduler="sync"):
            clipping.release(frame, rng=1, ids="id", store=tmp_path / "s")
        assert pv.load_release(tmp_path / "s").n == 2000


def test_ids_and_randomness_refusals(tmp_path):
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=BOUNDS)
    df = _data(1000)
    save_release(mech.release(df.drop(columns="id"), ids=df["id"]), tmp_path / "s")  # secure
    again = _data(1000, seed=1, start=900)  # ids 900..999 were released
    frame = dd.from_pandas(again, npartitions=3)
    with dask.config.set(scheduler="sync"):
        with pytest.raises(pv.DuplicateRecordError, match="e.g. id '900'"):
            mech.release(frame, ids="id", store=tmp_path / "s", append=True)
        repeated = _data(1000, start=5000)
        repeated.loc[999, "id"] = 5000  # a repeat across partitions
        with pytest.raises(ValidationError, match="contains duplicates"):
            mech.release(
                dd.from_pandas(repeated, npartitions=3), ids="id", store=tmp_path / "s", append=True
            )
        with pytest.raises(StoreError, match="cannot append a seeded release"):
            mech.release(frame, rng=3, ids="id", store=tmp_path / "s", append=True)
        with pytest.raises(ValidationError, match="seed or None"):
            mech.release(frame, rng=np.random.default_rng(0), ids="id", store=tmp_path / "t")
        assert pv.load_release(tmp_path / "s").n == 1000
        new = dd.from_pandas(_data(1000, seed=2, start=1000), npartitions=2)
        mech.release(new, ids="id", store=tmp_path / "s", append=True)
    manifest = read_manifest(tmp_path / "s")
    assert [p["randomness"] for p in manifest["parts"]] == ["secure"] * 3
    assert not list((tmp_path / "s" / "parts").glob(".part-*"))
    # secure mode: a fresh key per partition, so two identical partitions get other noise
    twin = pd.concat([_data(500, start=0), _data(500, start=500)]).reset_index(drop=True)
    twin[["a", "b", "c"]] = pd.concat([_data(500)[["a", "b", "c"]]] * 2, ignore_index=True)
    with dask.config.set(scheduler="sync"):
        mech.release(dd.from_pandas(twin, npartitions=2), ids="id", store=tmp_path / "twin")
    rel = pv.load_release(tmp_path / "twin")
    assert not np.any(rel.x2[:500, 0] == rel.x2[500:, 0])


def test_concurrent_in_memory_append_loses_nothing(tmp_path):
    """The Dask release holds the store's lock from its first check to its commit: an
    in-memory append meanwhile waits (or times out), then adds its records."""
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=BOUNDS)
    store = tmp_path / "s"
    df = _data(300)
    save_release(mech.release(df.drop(columns="id"), ids=df["id"]), store)
    started, go = threading.Event(), threading.Event()

    def partition(k):
        if k == 1:
            started.set()
            go.wait(60)
        return _data(300, seed=10 + k, start=1000 * (k + 1))

    frame = dd.from_delayed([dask.delayed(partition)(k) for k in range(3)], meta=_data(0))
    errors = []

    def run(func):
        try:
            func()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    other = _data(300, seed=99, start=10_000)
    in_memory = mech.release(other.drop(columns="id"), ids=other["id"])
    with dask.config.set(scheduler="sync"):
        dask_writer = threading.Thread(
            target=run, args=(lambda: mech.release(frame, ids="id", store=store, append=True),)
        )
        dask_writer.start()
        assert started.wait(60)
        with pytest.raises(StoreError, match="another writer"):
            save_release(in_memory, store, append=True, lock_timeout=0.2)
        appender = threading.Thread(
            target=run, args=(lambda: save_release(in_memory, store, append=True),)
        )
        appender.start()
        go.set()
        dask_writer.join(60)
        appender.join(60)
    assert not errors
    rel = pv.load_release(store)
    assert rel.n == 300 * 5
    assert np.unique(rel.ids).size == rel.n and set(other["id"]) <= set(rel.ids)


_KILLED = """
import sys, time
import dask, dask.dataframe as dd, numpy as np, pandas as pd
import privest as pv

def partition(k):
    if k == 1:
        time.sleep(600)  # the client is killed while this partition is being made
    return pd.DataFrame({"id": np.arange(100) + 1000 * (k + 1), "a": np.zeros(100),
                         "b": np.ones(100), "c": np.zeros(100)})

meta = partition(0).iloc[:0]
frame = dd.from_delayed([dask.delayed(partition)(k) for k in range(2)], meta=meta)
mech = pv.ZILMechanism(0.5, 0.2, {"a": (-1.0, 1.0), "b": (0.0, 10.0)})
with dask.config.set(scheduler="threads", num_workers=2):  # partition 0 runs meanwhile
    mech.release(frame, ids="id", store=sys.argv[1], append=sys.argv[2] == "append")
"""


@pytest.mark.parametrize("mode", ["append", "create"])
def test_killed_dask_release_leaves_a_store_the_next_write_cleans(mode, tmp_path):
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=BOUNDS)
    store = tmp_path / "s"
    df = _data(300)
    if mode == "append":
        save_release(mech.release(df.drop(columns="id"), ids=df["id"]), store)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(store), mode])
    try:
        for _ in range(1800):  # until partition 0's part is on disk (at most 180 s)
            if list(store.glob("parts/.part-*.tmp")) or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert proc.poll() is None and list(store.glob("parts/.part-*.tmp"))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    if mode == "append":
        assert pv.load_release(store).n == 300  # the commit never happened
        save_release(mech.release(df.drop(columns="id"), ids=df["id"] + 10**6), store, append=True)
    else:
        assert not (store / "manifest.json").exists()
        save_release(mech.release(df.drop(columns="id"), ids=df["id"]), store)
    rel = pv.load_release(store)
    assert rel.n == (600 if mode == "append" else 300)
    listed = json.loads((store / "manifest.json").read_text())["parts"]
    assert sorted(f.name for f in store.glob("parts/*")) == [Path(p["file"]).name for p in listed]


def test_ids_are_required_canonical_and_seeds_warn_out_of_core(tmp_path):
    """Issue 30, items 8 and 10, on Dask: no ids without ids=False (refused before the
    budget is charged); ids=False warns; a text id spelled otherwise is still refused."""
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=BOUNDS)
    frame = dd.from_pandas(_data(600), npartitions=3)
    budget = pv.Budget(epsilon=10.0, delta=0.9)
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValidationError, match="ids=False"):
            mech.release(frame, store=tmp_path / "s", budget=budget)
        assert budget.remaining() == (10.0, 0.9) and not (tmp_path / "s").exists()
        with pytest.warns(pv.errors.NoRecordIdsWarning):
            mech.release(frame.drop(columns="id"), store=tmp_path / "s", ids=False)
        with pytest.warns(pv.errors.SeededRandomnessWarning):
            mech.release(frame, rng=3, ids="id", store=tmp_path / "seeded")
        text = _data(600)
        text["id"] = [f"p{i}" if i % 2 else str(i) for i in range(600)]  # text ids
        mech.release(dd.from_pandas(text, npartitions=3), ids="id", store=tmp_path / "t")
        again = _data(10, start=0)
        again["id"] = ["0010", "+12.0", *[f"q{i}" for i in range(8)]]  # ids 10 and 12
        with pytest.raises(pv.DuplicateRecordError, match="e.g. id '10'"):
            mech.release(
                dd.from_pandas(again, npartitions=2), ids="id", store=tmp_path / "t", append=True
            )
    assert pv.load_release(tmp_path / "t").n == 600


def test_the_example_release_dispatches_to_the_backend(tmp_path):
    """The core's release_examples_to_folder: a Dask DataFrame goes to the Dask
    implementation; a pandas DataFrame is refused with where to go instead."""
    from privest.release.examples_io import release_examples_to_folder
    from privest.scale.examples import load_examples_dask

    mech = pv.ExampleMechanism(epsilon_x=1.0, epsilon_y=1.0, delta=1e-5, bounds=(-1.0, 1.0))
    df = _data(400).drop(columns=["id", "b"]).assign(label=lambda d: (d["c"] > 0).astype(int))
    with dask.config.set(scheduler="sync"):
        path = release_examples_to_folder(
            dd.from_pandas(df.drop(columns="c"), npartitions=2), mech, tmp_path / "e", label="label"
        )
        _, X, y = load_examples_dask(path)
        assert X.shape == (400, 1) and y.compute().size == 400
    with pytest.raises(ValidationError, match="held in memory"):
        release_examples_to_folder(df, mech, tmp_path / "m", label="label")
