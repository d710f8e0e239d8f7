"""DaskRelease: the Dask-backed twin of ZILRelease holds the same records and metadata."""

import numpy as np
import pytest

from privest.release.zil import ZILMechanism
from privest.scale import DaskRelease


@pytest.fixture
def release():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(1000, 3))
    mech = ZILMechanism(lam=0.5, zero_prob=0.2, bounds=[(-1, 1)] * 3)
    return mech.release(x, rng=7)


def test_round_trip_is_exact(release):
    drel = DaskRelease.from_release(release, chunk_rows=300)
    assert drel.x1.chunks[0] == (300, 300, 300, 100)
    back = drel.compute(scheduler="sync")
    np.testing.assert_array_equal(back.x1, release.x1)
    np.testing.assert_array_equal(back.x2, release.x2)
    assert (drel.n, drel.d, drel.noised_names) == (release.n, release.d, release.noised_names)
    np.testing.assert_array_equal(drel.noise_scale, release.noise_scale)
    assert drel.guarantee.to_dict() == release.guarantee.to_dict()


def test_refuses_column_chunks(release):
    drel = DaskRelease.from_release(release)
    with pytest.raises(ValueError, match="chunked by rows only"):
        DaskRelease(
            x1=drel.x1.rechunk((250, 1)),
            x2=drel.x2.rechunk((250, 1)),
            lam=0.5,
            zero_prob=0.2,
            bounds=release.bounds,
            columns=release.columns,
            column_names=release.column_names,
            randomness=release.randomness,
        )
