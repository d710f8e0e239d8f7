"""make_rng: secure without a seed, reproducible with one; the kind is recorded."""

import numpy as np
import pytest

from privest.errors import ValidationError
from privest.rng import make_rng, resolve_rng, rng_kind


def test_secure_generator_is_aes_counter_and_unpredictable():
    a, b = make_rng(), make_rng()
    assert type(a.bit_generator).__name__ == "AESCounter"
    assert rng_kind(a) == "secure"
    assert not np.array_equal(a.random(8), b.random(8))


def test_seeded_generator_is_reproducible_and_labelled():
    a, b = make_rng(42), make_rng(42)
    np.testing.assert_array_equal(a.standard_normal(5), b.standard_normal(5))
    assert rng_kind(a) == "seeded"


def test_kind_comes_from_the_seeding_not_the_class():
    """Issue 14: a seeded cryptographic generator is not a secure release."""
    from randomgen import AESCounter, ChaCha

    assert rng_kind(np.random.default_rng(1)) == "user"
    assert rng_kind(np.random.Generator(ChaCha(seed=1))) == "user"
    assert rng_kind(np.random.Generator(AESCounter(key=1, counter=0))) == "user"
    import pickle

    assert rng_kind(pickle.loads(pickle.dumps(make_rng()))) == "user"  # copies lose the label
    assert rng_kind(resolve_rng(5)) == "seeded"


def test_resolve_rng_passes_generators_through():
    g = make_rng(3)
    assert resolve_rng(g) is g
    assert rng_kind(resolve_rng(None)) == "secure"


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True])
def test_bad_seed(bad):
    with pytest.raises(ValidationError, match="seed"):
        make_rng(bad)


def test_seeded_stream_differs_from_numpy_default_rng():
    """Seeding data and noise with the same integer must not correlate them."""
    assert not np.array_equal(make_rng(7).random(4), np.random.default_rng(7).random(4))
