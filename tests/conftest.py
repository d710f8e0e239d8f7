"""Shared fixtures: non-interactive matplotlib for every test; the shared data folder."""

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")


def _shared_data() -> Path | None:
    """The workspace's shared data folder: $PRIVEST_SHARED_DATA, a ``shared/data`` folder
    beside the checkout, or /work/shared/data (the product itself never reads it)."""
    here = Path(__file__).resolve().parents[1]
    for cand in (
        os.environ.get("PRIVEST_SHARED_DATA"),
        here.parent / "shared" / "data",
        "/work/shared/data",
    ):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


@pytest.fixture
def wine_dir() -> Path:
    """Folder of the wine-quality CSVs (paper 001, E7); skips, saying where it looked."""
    base = _shared_data()
    if base is None or not (base / "wine-quality").is_dir():
        pytest.skip("wine-quality CSVs not found: set PRIVEST_SHARED_DATA to the shared data")
    return base / "wine-quality"
