"""The blocked gradient sum of the noisy logistic steps equals the whole-matrix products."""

import numpy as np
import pytest
from scipy.special import expit, softmax

from privest.models.logistic_fit import GRADIENT_BLOCK, gradient_sum


def _data(n: int, m: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    Xc = np.hstack([rng.uniform(-1, 1, (n, 4)), np.ones((n, 1))])
    labels = rng.integers(0, max(m, 2), n)
    Y = (labels[:, None] == np.arange(1, 2) if m == 1 else labels[:, None] == np.arange(m)) * 1.0
    return Xc, Y, rng.normal(size=(5, m))


def _whole(Xc, Y, theta):
    z = Xc @ theta
    return Xc.T @ ((expit(z) if Y.shape[1] == 1 else softmax(z, axis=1)) - Y)


@pytest.mark.parametrize("m", [1, 3])
def test_blocks_sum_to_the_whole_product(m):
    Xc, Y, theta = _data(2 * GRADIENT_BLOCK + 123, m)  # two full blocks and a short one
    got, want = gradient_sum(Xc, Y, theta), _whole(Xc, Y, theta)
    assert got.shape == want.shape == (5, m)
    bound = 4.0 * Xc.shape[0] * 2.0**-52 * np.abs(Xc).sum(axis=0)[:, None]  # rounding only
    assert np.all(np.abs(got - want) <= bound)


@pytest.mark.parametrize("m", [1, 3])
def test_one_block_is_bit_identical(m):
    Xc, Y, theta = _data(GRADIENT_BLOCK, m)
    assert np.array_equal(gradient_sum(Xc, Y, theta), _whole(Xc, Y, theta))


def test_a_dropped_block_is_seen():
    """Negative control: a sum that skips the last block fails the comparison."""
    Xc, Y, theta = _data(2 * GRADIENT_BLOCK + 123, 1)
    short = gradient_sum(Xc[: 2 * GRADIENT_BLOCK], Y[: 2 * GRADIENT_BLOCK], theta)
    bound = 4.0 * Xc.shape[0] * 2.0**-52 * np.abs(Xc).sum(axis=0)[:, None]
    assert not np.all(np.abs(short - _whole(Xc, Y, theta)) <= bound)
