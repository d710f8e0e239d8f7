"""Issue 30, item 8: seeded randomness in a release warns, on every release path; the
secure default does not (the control). The progress of a large release is shown."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privest as pv
import privest.progress
from privest.cli import main
from privest.errors import SeededRandomnessWarning

X = np.random.default_rng(0).uniform(0, 1, (50, 2))
Y = np.random.default_rng(1).integers(0, 2, 50)
ZIL = pv.ZILMechanism(0.5, 0.1, [(0.0, 1.0)] * 2)
EXAMPLES = pv.ExampleMechanism(epsilon_x=1.0, epsilon_y=1.0, delta=1e-5, bounds=(0.0, 1.0))
REGRESSION = pv.RegressionExampleMechanism(
    epsilon_x=1.0, epsilon_y=1.0, delta_x=1e-5, delta_y=1e-5, y_bounds=(0, 1), bounds=(0.0, 1.0)
)
#: each release path: (rng, a fresh folder) -> release
PATHS = {
    "ZIL": lambda rng, folder: ZIL.release(X, rng=rng),
    "ZIL into a store": lambda rng, folder: ZIL.release(X, rng, np.arange(50), store=folder),
    "examples": lambda rng, folder: EXAMPLES.release(X, Y, rng=rng),
    "release_examples": lambda rng, folder: pv.release_examples(
        X, Y, epsilon_x=1.0, epsilon_y=1.0, delta=1e-5, bounds=(0.0, 1.0), rng=rng
    ),
    "regression examples": lambda rng, folder: REGRESSION.release(X, Y.astype(float), rng=rng),
}


@pytest.mark.parametrize("rng", [0, 7, np.random.default_rng(0)], ids=["rng=0", "rng=7", "user"])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_non_secure_release_warns(path, rng, tmp_path):
    with pytest.warns(SeededRandomnessWarning, match="never for a real release|cannot tell"):
        PATHS[path](rng, tmp_path / "seeded")
    with warnings.catch_warnings():  # control: the secure default is silent
        warnings.simplefilter("error", SeededRandomnessWarning)
        PATHS[path](None, tmp_path / "secure")


def test_the_cli_seed_warns(tmp_path, capsys):
    pd.DataFrame({"id": range(20), "a": np.linspace(0, 1, 20)}).to_csv(tmp_path / "d.csv")
    args = ["release", str(tmp_path / "d.csv"), "--bounds", "a=0:1", "--lam", "0.5"]
    args += ["--zero-prob", "0.1", "--id-column", "id", "--columns", "a"]
    assert main([*args, "--seed", "0", "-o", str(tmp_path / "s")]) == 0
    out, err = capsys.readouterr()
    assert "randomness: seeded (reproducible" in out
    # the command line prints the SeededRandomnessWarning in one line
    assert err.count("privest release: warning: release with seeded randomness") == 1


def test_a_large_release_and_its_store_part_show_progress(tmp_path, monkeypatch):
    """The thresholds lowered to 1000 records: the release and its part writer each run a
    progress bar over their blocks; below the threshold, none (the control)."""
    import privest.release.store as store
    import privest.release.zil as zil

    bars = []

    def spy(items, description, enabled=True, total=None):
        bars.append(description)
        yield from items

    monkeypatch.setattr(privest.progress, "progress_iter", spy)
    monkeypatch.setattr(zil, "PROGRESS_ROWS", 1000)
    monkeypatch.setattr(store, "PROGRESS_ROWS", 1000)
    monkeypatch.setattr(store, "GROUP_ROWS", 300)
    x = np.random.default_rng(2).uniform(0, 1, (999, 2))
    ZIL.release(x, ids=np.arange(999)).save(tmp_path / "small")
    assert bars == []
    x = np.random.default_rng(2).uniform(0, 1, (200_000, 2))
    rel = ZIL.release(x, ids=np.arange(200_000))
    rel.save(tmp_path / "large")
    assert bars == ["releasing (ZIL noise)", "writing the release"]
    assert pv.load_release(tmp_path / "large").n == 200_000
