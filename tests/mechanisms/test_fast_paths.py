"""The fast paths of the one-call releases give what the general paths give (issue 31,
"Speed"): the bounds check of one pair of floats or ints, the staircase's exact flat share in
int64 arithmetic, the lattice law's masses computed on first use, ``auto``'s cached choice,
the 62-bit words from a generator's raw stream and one lattice Laplace draw as a float."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privest.errors import BoundsError
from privest.mechanisms.lattice_plm import floor_share, stair_fraction
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.validation import check_bounds

PAIRS = [
    (0.0, 1.0),
    (-1.0, 1.0),
    (-0.0, 5e-324),
    (-1e100, 1e100),
    (1.0, 1.0 + 2e-16),
    (0.0, 1e-100),
    (0.0, 0.9e-100),  # too narrow
    (-1.1e100, 0.0),  # too large
    (1.0, 0.0),  # reversed
    (1.0, 1.0),
    (math.nan, 1.0),
    (0.0, math.inf),
    (-math.inf, 0.0),
]


def _outcome(bounds):
    """The checked (1, 2) pair, or the refusal (its message quotes ``bounds``' repr)."""
    try:
        out = check_bounds(bounds, 1, "b")
    except BoundsError as exc:
        return "refused: " + str(exc).replace(f"b: {bounds!r}", "b: B", 1)
    return out.dtype, out.shape, out.tolist()


@pytest.mark.parametrize("pair", PAIRS, ids=repr)
def test_a_pair_of_floats_is_checked_as_the_numpy_path_checks_it(pair):
    slow = _outcome(np.array(pair))  # an array takes the numpy path
    assert _outcome(pair) == slow
    assert _outcome(list(pair)) == slow
    assert _outcome((np.float64(pair[0]), pair[1])) == slow  # not two floats: numpy path


def test_control_the_comparison_tells_pairs_and_refusals_apart():
    assert _outcome((0.0, 1.0)) != _outcome(np.array((0.0, 2.0)))
    assert _outcome((1.0, 0.0)) != _outcome((1.0, 1.0))
    assert _outcome((1.0, 0.0)).startswith("refused") and _outcome((0.0, 1.0))[1] == (1, 2)


def _exact(length: np.ndarray, c) -> np.ndarray:
    return np.array([v * c.numerator // c.denominator for v in length.tolist()], dtype=np.int64)


@pytest.mark.parametrize("eps", [1e-3, 0.05, 0.3, 1.0, 2.5, 9.0, 40.0])
def test_the_flat_share_is_exact(eps):
    rng = np.random.default_rng(int(eps * 1000))
    length = np.concatenate(
        [np.arange(0, 300), rng.integers(0, 2**31, 3000), [2**31 - 1, 2**31, 2**45]]
    ).astype(np.int64)
    c = stair_fraction(eps)
    assert np.array_equal(floor_share(length, c), _exact(length, c))


def test_control_the_plain_int64_product_overflows():
    """``(L num) >> k`` in int64 overflows for long pieces: the exact check above sees it."""
    length = np.random.default_rng(0).integers(2**20, 2**31, 1000).astype(np.int64)
    c = stair_fraction(0.3)
    k = c.denominator.bit_length() - 1
    with np.errstate(over="ignore"):
        naive = (length * c.numerator) >> k
    assert not np.array_equal(naive, _exact(length, c))


def test_a_release_reads_no_mass_and_the_masses_do_not_depend_on_it():
    x = np.random.default_rng(3).uniform(-1, 1, 501)
    mech = PiecewiseLaplace("median", epsilon=0.7, bounds=(-1.0, 1.0))
    law = mech.law(x)
    value = law.sample(None, np.random.default_rng(5))
    assert not {"prob", "log_norm", "_piece_key"} & set(vars(law))  # computed on first use
    fresh = mech.law(x)
    before = fresh.prob.copy(), fresh.log_norm, fresh.error_mean_abs()
    assert fresh.sample(None, np.random.default_rng(5)) == value
    assert np.array_equal(law.prob, before[0]) and law.log_norm == before[1]
    assert law.error_mean_abs() == before[2]


def test_autos_choice_is_the_same_from_its_cache():
    """``auto``'s least-error choice, cached per public inputs, against the uncached rule on
    a grid whose choices differ (Laplace and discrete Laplace)."""
    from privest.domain import Domain
    from privest.mechanisms import auto

    seen = set()
    for statistic in ("mean", "sum", "count", "variance"):
        for eps in (0.01, 1.0, 50.0):
            for bounds in ((0.0, 1.0), (0.0, 1000.0)):
                dom = Domain(bounds=None if statistic == "count" else bounds)
                for _ in range(2):  # the second call is served from the cache
                    got = auto.auto_mechanism(statistic, domain=dom, epsilon=eps, n=100)
                    names = auto._candidates(statistic, dom)
                    specs = tuple(auto.mechanism_spec(m) for m in names)
                    assert got == auto._least_error.__wrapped__(statistic, dom, eps, 100, specs)
                seen.add(got)
    assert seen == {"laplace", "discrete_laplace"}  # control: the grid tells keys apart


INT_PAIRS = [(0, 1), (-3, 7), (0, 1.5), (10**30, 10**30 + 1), (0, 10**101), (1, 0), (2, 2)]


@pytest.mark.parametrize("pair", INT_PAIRS, ids=repr)
def test_a_pair_of_ints_is_checked_as_the_numpy_path_checks_it(pair):
    """Whole-number bounds take the fast path too (10^30 and 10^30 + 1 round to one float:
    refused by both paths)."""
    assert _outcome(pair) == _outcome(np.array(pair))


def test_control_int_pairs_are_told_apart():
    assert _outcome((0, 1))[2] == [[0.0, 1.0]] and _outcome((0, 2)) != _outcome((0, 1))
    assert _outcome((10**30, 10**30 + 1)).startswith("refused")


def _generators(seed: int):
    from randomgen import AESCounter

    yield np.random.Generator(np.random.PCG64(seed))
    yield np.random.Generator(AESCounter(key=seed + 1, counter=0))


@pytest.mark.parametrize("seed", range(5))
def test_raw_words_are_the_words_of_integers(seed):
    """The 62-bit words :class:`Bits` takes from a PCG64 or AESCounter generator's raw
    stream are those of ``integers(0, 2^62)``, and leave the generator in the same state."""
    from privest.mechanisms.samplers.bigint import Bits

    for gen, twin in zip(_generators(seed), _generators(seed), strict=True):
        bits = Bits(gen, block=64)
        assert bits._raw
        got = [bits.word() for _ in range(130)]  # three blocks
        want = [w for _ in range(3) for w in twin.integers(0, 2**62, size=64).tolist()[::-1]]
        assert got == want[:130]
        assert gen.integers(0, 2**62, size=4).tolist() == twin.integers(0, 2**62, size=4).tolist()


def test_control_a_32_bit_generator_keeps_integers():
    """MT19937's raw words are 32-bit: the shortcut would give other words, so it is not
    taken."""
    from privest.mechanisms.samplers.bigint import Bits

    gen = np.random.Generator(np.random.MT19937(1))
    twin = np.random.Generator(np.random.MT19937(1))
    assert not Bits(gen)._raw
    words = twin.integers(0, 2**62, size=8).tolist()
    raw = (np.random.Generator(np.random.MT19937(1)).bit_generator.random_raw(8) >> 2).tolist()
    assert raw != words  # the shortcut would differ here
    bits = Bits(gen, block=8)
    assert [bits.word() for _ in range(8)] == words[::-1]


@pytest.mark.parametrize("t", [1, 7, 2**20 + 3, 2**31 - 1])
def test_one_lattice_draw_is_the_batch_path_draw(t):
    """``release_integer(c, rng, None)`` (a float, no numpy) and the few-draws path of
    :func:`sample_discrete_laplace` give the draws of the batch function."""
    from privest.mechanisms.samplers.lattice import (
        LatticeLaplace,
        sample_discrete_laplace,
        sample_discrete_laplace_many,
    )

    lat = LatticeLaplace(1.0, 1.0)
    for seed in range(40):
        one, ref = np.random.default_rng(seed), np.random.default_rng(seed)
        assert np.array_equal(
            sample_discrete_laplace(t, 3, one), sample_discrete_laplace_many([t], [3], ref)[0]
        )
        center = int(ref.integers(-(2**40), 2**40))
        one, ref = np.random.default_rng(seed), np.random.default_rng(seed)
        got = lat.release_integer(center, one, None)
        assert type(got) is float and got == float(lat.release_integer(center, ref, 1)[0])


def test_control_the_draw_comparison_sees_another_stream():
    from privest.mechanisms.samplers.lattice import LatticeLaplace

    lat = LatticeLaplace(1.0, 1.0)
    draws = {lat.release_integer(0, np.random.default_rng(s), None) for s in range(20)}
    assert len(draws) > 10


def test_the_intervals_share_a_mechanism_per_public_inputs():
    """The interval's releases share one Laplace mechanism per set of public inputs: the
    same as a fresh one, another for other inputs, none for a mechanism with state, and the
    refusals of the fresh path (epsilon=True)."""
    from privest.domain import Domain
    from privest.errors import PrivacyParameterError
    from privest.models import statistics as st

    dom = Domain(bounds=(0.0, 4.0))
    kw = dict(mechanism="auto", n=50, domain=dom, clip=False, quantile=None)
    first = st._shared_mechanism("mean", epsilon=0.5, **kw)
    assert st._shared_mechanism("mean", epsilon=0.5, **kw) is first
    fresh = st.statistic_mechanism("mean", epsilon=0.5, **kw)
    assert repr(first) == repr(fresh) and first.name == fresh.name == "laplace"
    other = st._shared_mechanism("mean", epsilon=0.25, **kw)  # control: another key
    assert other is not first and other.epsilon == 0.25
    assert st._shared_mechanism("mean", epsilon=1, **kw) is not st._shared_mechanism(
        "mean", epsilon=1.0, **kw
    )
    with pytest.raises(PrivacyParameterError):
        st._shared_mechanism("mean", epsilon=True, **kw)
    med = dict(kw, mechanism="piecewise_laplace")
    assert st._shared_mechanism("median", epsilon=0.5, **med) is not st._shared_mechanism(
        "median", epsilon=0.5, **med
    )


@pytest.mark.parametrize("name", ["mean", "sum", "variance"])
def test_a_series_releases_what_its_array_releases(name):
    """A pandas Series is read through its float view (one fused pass, as an array): the
    same release and interval as the array; a NaN in it is refused alike."""
    pd = pytest.importorskip("pandas")
    import privest as pv

    f = getattr(pv, f"private_{name}")
    x = np.random.default_rng(4).uniform(-2.0, 3.0, 3001)
    for seed in range(3):
        a = f(x, epsilon=0.8, bounds=(-2.0, 3.0), rng=seed)
        s = f(pd.Series(x), epsilon=0.8, bounds=(-2.0, 3.0), rng=seed)
        assert float(a) == float(s) and a.conf_int(0.05) == s.conf_int(0.05)
    other = f(pd.Series(x), epsilon=0.8, bounds=(-2.0, 3.0), rng=99)  # control
    assert float(other) != float(a)
    x[7] = np.nan
    with pytest.raises(pv.ValidationError) as arr_err:
        f(x, epsilon=0.8, bounds=(-2.0, 3.0), rng=0)
    with pytest.raises(pv.ValidationError) as ser_err:
        f(pd.Series(x), epsilon=0.8, bounds=(-2.0, 3.0), rng=0)
    assert str(arr_err.value) == str(ser_err.value)
