"""load_release(store, engine="dask"): one chunk per part, each part checked on its worker."""

import json
import os
import subprocess
import sys

import dask
import numpy as np
import pytest

import privest as pv
from privest.errors import StoreError, ValidationError
from privest.release.manifest import _digest
from privest.release.zil import ZILMechanism

pytestmark = pytest.mark.filterwarnings("ignore::privest.errors.SeededRandomnessWarning")


@pytest.fixture
def store(tmp_path):
    rng = np.random.default_rng(5)
    mech = ZILMechanism(lam=0.5, zero_prob=0.2, bounds=[(-1, 1)] * 3)
    path = tmp_path / "store"
    for k, rows in enumerate((400, 250, 300)):
        x = rng.uniform(-1, 1, size=(rows, 3))
        mech.release(x, rng=k, ids=np.arange(1000 * k, 1000 * k + rows)).save(path, append=k > 0)
    return path


def test_one_chunk_per_part_same_records(store):
    mem = pv.load_release(store)
    drel = pv.load_release(store, engine="dask")
    assert drel.x1.chunks[0] == (400, 250, 300)
    back = drel.compute(scheduler="sync")
    np.testing.assert_array_equal(back.x1, mem.x1)
    np.testing.assert_array_equal(back.x2, mem.x2)
    np.testing.assert_array_equal(back.ids, mem.ids)
    assert back.randomness == mem.randomness == "seeded"
    assert drel.guarantee.to_dict() == mem.guarantee.to_dict()


def test_damaged_part_raises_the_store_error(store):
    drel = pv.load_release(store, engine="dask")
    drel.x1.blocks[1].compute(scheduler="sync")  # control: the intact part reads
    part = store / "parts" / "part-000001.parquet"
    os.chmod(part, 0o644)
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    drel.x1.blocks[0].compute(scheduler="sync")  # the other parts still read
    with pytest.raises(StoreError, match="part-000001.parquet does not match its checksum"):
        drel.x1.blocks[1].compute(scheduler="sync")
    with pytest.raises(StoreError, match="does not match its checksum"):
        pv.load_release(store)


def test_unknown_engine_is_refused(store):
    with pytest.raises(ValidationError, match="engine"):
        pv.load_release(store, engine="spark")


def test_core_never_imports_dask(store):
    code = (
        "import sys, privest as pv\n"
        f"pv.load_release({str(store)!r}).x1.sum()\n"
        "pv.DRLinearRegression().fit(pv.load_release(" + repr(str(store)) + "), 'x0')\n"
        "assert 'dask' not in sys.modules, 'dask was imported'\n"
        "import privest.scale\n"
        "assert 'dask' in sys.modules  # control: the check can fail\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_blocks_are_the_same_records_in_memory_and_on_dask(store):
    """The released-columns protocol: both releases iterate the same (x1, x2, ids) blocks."""
    mem, drel = pv.load_release(store), pv.load_release(store, engine="dask")
    with dask.config.set(scheduler="sync"):
        blocks = list(drel.iter_blocks())
        assert [b[0].shape[0] for b in blocks] == [400, 250, 300]  # one per part
        small = list(drel.iter_blocks(rows=128))
    assert max(b[0].shape[0] for b in small) == 128
    for got in (blocks, small):
        for k in range(3):
            np.testing.assert_array_equal(
                np.concatenate([b[k] for b in got]), [mem.x1, mem.x2, mem.ids][k]
            )
    (one,) = list(mem.iter_blocks())
    np.testing.assert_array_equal(one[1], mem.x2)
    assert drel.summary() == mem.summary()


def test_a_store_with_an_unlisted_part_is_refused_on_dask_too(store):
    meta = json.loads((store / "manifest.json").read_text())
    meta["parts"].pop()
    meta["n_rows"] = sum(p["rows"] for p in meta["parts"])
    meta["manifest_sha256"] = _digest(meta)  # a determined editor
    (store / "manifest.json").write_text(json.dumps(meta))
    with pytest.raises(StoreError, match="part-000002.parquet is in .* but not in its manifest"):
        pv.load_release(store, engine="dask")


def test_out_of_core_data_need_a_store_and_find_their_backend(tmp_path):
    """In a fresh process, without privest.scale imported: a Dask DataFrame given to
    release() loads the backend through the entry point and is refused without store=; with
    store= it is released partition by partition."""
    code = (
        "import sys, numpy as np, pandas as pd, dask, dask.dataframe as dd, privest as pv\n"
        "df = pd.DataFrame({'id': range(100), 'a': np.zeros(100)})\n"
        "frame = dd.from_pandas(df, npartitions=2)\n"
        "mech = pv.ZILMechanism(0.5, 0.2, {'a': (-1.0, 1.0)})\n"
        "assert 'privest.scale' not in sys.modules\n"
        "try:\n"
        "    mech.release(frame)\n"
        "    raise SystemExit('accepted')\n"
        "except pv.ValidationError as exc:\n"
        "    assert 'pass store=' in str(exc)\n"
        "assert 'privest.scale' in sys.modules\n"
        "with dask.config.set(scheduler='sync'):\n"
        f"    batch = mech.release(frame, ids='id', store={str(tmp_path / 's')!r})\n"
        "print(type(batch).__name__, batch.n)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["DaskRelease", "100"]
