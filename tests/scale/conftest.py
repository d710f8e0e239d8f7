"""Dask tests: not collected (with a clear message) without the extra, except in CI, where
``PRIVEST_REQUIRE_DASK=1`` (set by ``.ci/run``) turns the missing extra into an error."""

import importlib.util
import os
import warnings

_MISSING = [m for m in ("dask", "distributed") if importlib.util.find_spec(m) is None]
_MSG = f"the Dask extra is not installed ({', '.join(_MISSING)}): pip install 'privest[dask]'"

if _MISSING:
    if os.environ.get("PRIVEST_REQUIRE_DASK") == "1":
        raise RuntimeError(_MSG + " (PRIVEST_REQUIRE_DASK=1)")
    warnings.warn("tests/scale skipped: " + _MSG, stacklevel=1)
    collect_ignore_glob = ["test_*.py"]


if not _MISSING:
    import pytest

    @pytest.fixture(scope="module")
    def client():
        """A LocalCluster of two in-process workers (they start in 0.1 s; worker processes
        take seconds: the tests that need processes start their own)."""
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as c,
        ):
            yield c
