"""load_release(store, engine="dask"): one chunk per part, each part checked on its worker."""

import os
import subprocess
import sys

import numpy as np
import pytest

import privest as pv
from privest.errors import StoreError, ValidationError
from privest.release.zil import ZILMechanism


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
