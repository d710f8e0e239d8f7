"""The compiled pass of the exact sums (privest.mechanisms.profiles.exact_kernel) gives the
totals of the numpy pass (the reference) to the integer, hence the same releases to the bit:
on a corpus of edge cases (records on the bounds, -0.0, subnormals, ties of the grid
rounding, huge and tiny bounds, n = 1, NaN and inf refused alike) and on random data."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privest as pv
from privest.mechanisms.profiles import exact
from privest.mechanisms.profiles import exact_kernel as kern
from privest.mechanisms.profiles.exact import Derived, Deviation, exact_totals_with

STATISTICS = (None, "mean", "sum", "variance")


def _numpy(monkeypatch):
    monkeypatch.setattr(exact, "KERNEL_MIN", 1 << 62)


#: the arrays the compiled pass read (the test's control that it ran)
CALLS: list[int] = []
KERNEL_TOTALS = kern.kernel_totals


def _compiled(monkeypatch):
    monkeypatch.setattr(exact, "KERNEL_MIN", 1)
    monkeypatch.setattr(exact, "KERNEL_AFTER", 0)

    def spy(x, *args):
        CALLS.append(x.size)
        return KERNEL_TOTALS(x, *args)

    monkeypatch.setattr(kern, "kernel_totals", spy)


def _both(monkeypatch, fn):
    """``fn()`` through the numpy pass, then through the compiled pass (a result or the
    type and message of the error it raised)."""
    out = []
    for path in (_numpy, _compiled):
        path(monkeypatch)
        try:
            out.append(fn())
        except Exception as exc:  # noqa: BLE001 - the two paths must fail alike
            out.append((type(exc), str(exc)))
    return out


def _derived_maps(a: float, b: float) -> list[tuple[Derived, ...]]:
    """No derived mean; the records' (inside, and with a narrower clip); the spread (inside,
    and clipped); the fourth moment (inside, and clipped) where its cap is finite (else a
    release refuses the bounds before the pass)."""
    mid, half = (a + b) / 2, (b - a) / 2
    cap = half * half
    maps = [
        (),
        (Derived(None, a, b),),
        (Derived(None, a + half / 2, b),),
        (Derived(Deviation(mid), 0.0, cap, True),),
        (Derived(Deviation(mid), 0.0, cap / 3),),
    ]
    if cap * cap < 1e300:
        maps.append((Derived(Deviation(mid, cap / 4), 0.0, cap * cap, True),))
        maps.append((Derived(Deviation(a + half / 3, cap / 4), 0.0, cap * cap / 9),))
    return maps


def _corpus() -> list[tuple[np.ndarray, tuple[float, float]]]:
    tiny = math.ldexp(1.0, -1074)
    top = float(np.nextafter(2.0, 0.0))
    out = []
    for a, b in [(-1.0, 1.0), (0.0, 100.0), (-1e100, 1e100), (1e99, 1e100), (-1e-100, 1e-100)]:
        x = np.random.default_rng(0).uniform(a, b, 3000)
        x[:6] = [a, b, a, b, (a + b) / 2, 0.0 if a <= 0.0 <= b else a]
        out.append((x, (a, b)))
    p = exact._dyadic_exponent(-1.0, 1.0, exact._GRID_BITS)
    ties = (np.arange(-2000, 2000) + 0.5) * math.ldexp(1.0, -p)  # halves of the mean's grid
    q = exact._variance_grid(-1.0, 1.0)[1]
    vties = (np.arange(-2000, 2000) + 0.5) * math.ldexp(1.0, -q)  # of the variance's grid
    subnormal = np.array([tiny, -tiny, 2.2e-308, -2.2e-308, -0.0, 0.0, 1e-310, -1e-320])
    out += [
        (ties, (-1.0, 1.0)),
        (vties, (-1.0, 1.0)),
        (np.tile(subnormal, 50), (-1.0, 1.0)),
        (np.tile(subnormal, 50), (-1e-100, 1e-100)),
        (np.array([-0.0]), (-1.0, 1.0)),
        (np.array([0.25]), (0.0, 1.0)),
        (np.full(5000, 7.0), (7.0, 8.0)),  # every record on a bound
        # bounds whose grid values round up to 2^41 (mean) and 2^31 (variance): the blocks'
        # sums reach 2^53, the squares 2^62
        (np.full(5000, top), (-top, top)),
        (np.tile([-top, top, -top], 2000), (-top, top)),
    ]
    return out


@pytest.mark.parametrize("case", range(len(_corpus())))
def test_the_corpus_gives_the_same_totals(case, monkeypatch):
    x, (a, b) = _corpus()[case]
    CALLS.clear()
    for statistic in STATISTICS:
        for derived in _derived_maps(a, b):
            numpy, compiled = _both(
                monkeypatch,
                lambda d=derived, s=statistic: exact_totals_with(x, (a, b), d, statistic=s),
            )
            assert numpy == compiled, (statistic, derived)
    assert CALLS.count(x.size) == len(STATISTICS) * len(_derived_maps(a, b))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 2.0])
@pytest.mark.parametrize("where", [0, 70_000, -1])
def test_nan_inf_and_out_of_bounds_are_refused_alike(bad, where, monkeypatch):
    x = np.random.default_rng(1).uniform(-1, 1, 70_001)
    x[where] = bad
    numpy, compiled = _both(
        monkeypatch, lambda: exact_totals_with(x, (-1, 1), (), statistic="mean")
    )
    assert numpy == compiled
    assert isinstance(numpy, tuple) and issubclass(numpy[0], pv.PrivestError)
    # clip=True: out of bounds is clipped (and counted) alike; NaN is still refused
    numpy, compiled = _both(
        monkeypatch,
        lambda: exact_totals_with(x, (-1, 1), (Derived(None, -1, 1),), statistic="sum", clip=True),
    )
    assert numpy == compiled


def test_a_checked_pass_reads_the_records_alike(monkeypatch):
    """The variance's fourth-moment pass does not check the records again (checked=True)."""
    x = np.random.default_rng(4).uniform(-3, 5, 100_000)
    d = (Derived(Deviation(0.7, 2.5), 0.0, 30.0),)
    numpy, compiled = _both(monkeypatch, lambda: exact_totals_with(x, (-3, 5), d, checked=True))
    assert numpy == compiled and numpy[1][0]["clipped"] > 0


@pytest.mark.parametrize("func", [pv.private_mean, pv.private_sum, pv.private_variance])
@pytest.mark.parametrize("inference", ["population", "none"])
@pytest.mark.parametrize("clip", [False, True])
def test_releases_are_bit_identical(func, inference, clip, monkeypatch):
    x = np.random.default_rng(7).standard_t(3, 70_001) * 2 + 1
    bounds = (-4.0, 6.0) if clip else (float(x.min()), float(x.max()))

    def release():
        r = func(x, epsilon=0.7, bounds=bounds, rng=11, clip=clip, inference=inference)
        return float(r), r.conf_int() if inference != "none" else None

    numpy, compiled = _both(monkeypatch, release)
    assert numpy == compiled


def test_one_record_and_no_records(monkeypatch):
    for x in (np.array([0.5]), np.array([])):
        for func in (pv.private_mean, pv.private_sum, pv.private_variance):
            numpy, compiled = _both(
                monkeypatch,
                lambda: float(func(x, epsilon=1.0, bounds=(0, 1), rng=0, inference="none")),  # noqa: B023
            )
            assert numpy == compiled


@settings(max_examples=60, deadline=None)
@given(
    lo=st.floats(-1e6, 1e6),
    width=st.floats(1e-6, 1e6),
    u=st.lists(st.floats(0.0, 1.0, allow_subnormal=True), min_size=1, max_size=300),
    statistic=st.sampled_from(STATISTICS),
    which=st.integers(0, 6),
)
def test_random_data_give_the_same_totals(lo, width, u, statistic, which):
    a, b = lo, lo + width
    x = np.clip(a + np.asarray(u) * width, a, b)
    maps = _derived_maps(a, b)
    derived = maps[min(which, len(maps) - 1)]
    with pytest.MonkeyPatch.context() as mp:
        numpy, compiled = _both(
            mp, lambda: exact_totals_with(x, (a, b), derived, statistic=statistic)
        )
    assert numpy == compiled


def test_a_process_loads_the_compiled_pass_only_after_many_records():
    """A one-off release does not import numba; a process that has passed KERNEL_AFTER
    records through the numpy pass loads the compiled one (same totals)."""
    code = (
        "import sys, numpy as np\n"
        "from privest.mechanisms.profiles import exact\n"
        "exact.KERNEL_AFTER = 3 * exact.KERNEL_MIN\n"
        "x = np.linspace(0, 1, exact.KERNEL_MIN)\n"
        "got = [exact.exact_totals(x, 'variance', (0, 1)) for _ in range(2)]\n"
        "print('numba' in sys.modules)\n"
        "got.append(exact.exact_totals(x, 'variance', (0, 1)))\n"
        "print('numba' in sys.modules, got[0] == got[2])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "True"]
