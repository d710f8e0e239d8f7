"""``privest release DATA.parquet --engine dask [--scheduler ADDRESS | --workers N]``."""

import shlex
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main
from privest.release.store import read_manifest

ARGS = ["--bounds", "a=-1:1,b=0:10", "--lam", "0.5", "--zero-prob", "0.1", "--id-column", "id"]


@pytest.fixture
def parquet(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for k in range(3):
        n = 400
        pd.DataFrame(
            {"id": np.arange(n) + n * k, "a": rng.uniform(-1, 1, n), "b": rng.uniform(0, 10, n)}
        ).to_parquet(folder / f"f{k}.parquet", index=False)
    return folder


@pytest.mark.slow
def test_workers_1_and_2_write_the_same_store(parquet, tmp_path, capsys):
    """The issue's check: a seeded release on 1 or 2 local worker processes, bit for bit."""
    digests = []
    for workers in ("1", "2"):
        store = tmp_path / f"w{workers}"
        argv = ["release", str(parquet), "--engine", "dask", "--workers", workers, "--seed", "3"]
        assert main([*argv, *ARGS, "--memory-limit", "500MB", "-o", str(store)]) == 0
        digests.append([p["sha256"] for p in read_manifest(store)["parts"]])
    assert len(digests[0]) == 3 and digests[0] == digests[1]
    out = capsys.readouterr().out
    assert "ZIL release: 1200 records" in out and "randomness: seeded" in out
    rel = pv.load_release(tmp_path / "w1")
    np.testing.assert_array_equal(rel.ids, np.arange(1200))
    # --append on Dask's local threads: the store's mechanism, released ids refused
    argv = ["release", str(parquet), "--engine", "dask", "--append", "--id-column", "id"]
    assert main([*argv, "-o", str(tmp_path / "w1")]) == 1
    assert "already released (e.g. id '0'" in capsys.readouterr().err


def test_engine_options_are_checked(parquet, tmp_path, capsys, monkeypatch):
    store = str(tmp_path / "s")
    assert main(["release", str(parquet), "--workers", "2", *ARGS, "-o", store]) == 2
    assert "--scheduler and --workers need --engine dask" in capsys.readouterr().err
    missing = ["release", str(tmp_path / "none.parquet"), "--engine", "dask", *ARGS, "-o", store]
    assert main(missing) == 2
    assert "does not exist" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were absent
    assert main(["release", str(parquet), "--engine", "dask", *ARGS, "-o", store]) == 2
    assert "pip install 'privest[dask]'" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


_CORE = """
import sys
import numpy as np, pandas as pd
from privest.cli import main
pd.DataFrame({"id": range(200), "a": np.linspace(-1, 1, 200)}).to_csv("d.csv", index=False)
assert main(["release", "d.csv", "--bounds=-1:1", "--lam", "0.5", "--zero-prob", "0.1",
             "--id-column", "id", "-o", "s"]) == 0
assert main(["privacy", "--store", "s"]) == 0
print(sorted(m for m in ("dask", "distributed") if m in sys.modules))
"""


def test_the_in_memory_release_never_imports_dask(tmp_path):
    """The core and the README's commands work without the extra (issue 20, item 5)."""
    out = subprocess.run(
        [sys.executable, "-c", _CORE], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "s" / "manifest.json").exists()  # the control: the release ran


def test_the_help_example_runs(tmp_path, monkeypatch):
    from privest.commands import release

    (example,) = [e for e in release.EXAMPLES if "--engine dask" in e]
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(1)
    pd.DataFrame({"id": np.arange(500), "age": rng.uniform(18, 90, 500)}).to_parquet("big.parquet")
    argv = shlex.split(example.split("#")[0])[1:]
    argv[argv.index("--workers") : argv.index("--workers") + 2] = []  # local threads: quick
    assert main(argv) == 0
    assert pv.load_release("big-store").n == 500
