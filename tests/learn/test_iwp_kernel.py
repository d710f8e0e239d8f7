"""The compiled pass of IWP-SGD's fused step (privest.learn.iwp_kernel) gives the numpy
fused step's iterates to the bit (paper 004, Alg. 1; docs/iwp-sgd.md, "Speed").

A seeded corpus over losses x orders x public intercept mask x projection x averaging x
ridge x batch sizes (a smaller last batch, batches above numpy's 128-value pairwise block)
compares the two paths with ``array_equal``, which a one-ulp change of an iterate fails.
The exponential loss is compared to the bit only where numpy's ``exp`` is libm's: on CPUs
with AVX-512 numpy dispatches ``exp`` to its own SIMD routine, whose last bit differs from
libm's (which the compiled pass calls) in about 5% of arguments; there the iterates agree to
rounding instead (``allclose`` at 1e-12, which a change of 1e-9 fails).
"""

import math
import subprocess
import sys

import numpy as np
import pytest

from privest.learn import iwp_core
from privest.learn.iwp_core import sgd_replicated
from privest.learn.iwp_losses import ExponentOverflowWarning

kernel = pytest.importorskip("privest.learn.iwp_kernel")  # numba is a dependency
pytestmark = pytest.mark.skipif(not kernel.AVAILABLE, reason="numpy's CBLAS not found")


def _data(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) + 0.7 * rng.standard_normal((n, p))
    y = np.where(rng.random(n) < 0.7, 1.0, -1.0) * np.sign(X[:, 0] + 1e-12)
    return X, y


def _run(compiled: bool, monkeypatch, X, y, **kw):
    with monkeypatch.context() as m:
        m.setattr(iwp_core, "_compiled", lambda *a: compiled)
        return sgd_replicated(X, y, **kw)


def _corpus():
    rng = np.random.default_rng(2026)
    cases = []
    for loss, orders in (("exponential", [0]), ("logistic", [0, 1, 2, 3, 5, "auto"])):
        for order in orders:
            for _ in range(4):
                cases.append(
                    dict(
                        loss=loss,
                        order=order,
                        intercept=bool(rng.integers(2)),
                        theta_radius=[None, 0.3, 2.0][rng.integers(3)],
                        averaging=[None, "polyak", "tail"][rng.integers(3)],
                        alpha=[0.0, 0.3][rng.integers(2)],
                        batch_size=int(rng.choice([2, 7, 96, 128, 300])),
                        sigma2=float(rng.choice([0.0, 0.49, 2.0])),
                        epsilon_y=float(rng.choice([1.5, np.inf])),
                        seed=int(rng.integers(1000)),
                    )
                )
    return cases


def _numpy_exp_is_libm() -> bool:
    """Whether numpy's ``exp`` rounds as libm's on this CPU (probe of 10^4 arguments)."""
    v = np.random.default_rng(0).uniform(-30.0, 30.0, 10_000)
    return bool(np.array_equal(np.exp(v), [math.exp(t) for t in v]))


def _same(got: np.ndarray, ref: np.ndarray, to_the_bit: bool) -> None:
    if to_the_bit:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", _corpus(), ids=lambda c: f"{c['loss']}-{c['order']}")
def test_compiled_pass_equals_the_numpy_fused_step_to_the_bit(case, monkeypatch):
    case = dict(case)
    X, y = _data(1_000 + case["batch_size"] // 2, 4, case.pop("seed"))
    noised = None
    if case.pop("intercept"):
        X, noised = np.hstack([X, np.ones((len(X), 1))]), np.r_[np.ones(4), 0.0]
    kw = dict(method="iwp", learning_rate=0.2, n_passes=2, noised=noised, drop_last=False,
              record_every=1, **case)  # fmt: skip
    bit = case["loss"] != "exponential" or _numpy_exp_is_libm()
    ref = _run(False, monkeypatch, X, y, **kw)
    got = _run(True, monkeypatch, X, y, **kw)
    assert np.abs(ref.history).max() > 0.05  # the iterates moved
    _same(got.history, ref.history, bit)
    np.testing.assert_array_equal(got.batches, ref.batches)
    _same(got.average, ref.average, bit)
    assert got.n_averaged == ref.n_averaged
    # control: the comparison catches a one-ulp change (to the bit) or one of 1e-9 (rounding)
    moved = got.history.copy()
    moved[-1, 0, 1] = np.nextafter(moved[-1, 0, 1], np.inf) if bit else moved[-1, 0, 1] + 1e-9
    with pytest.raises(AssertionError):
        _same(moved, ref.history, bit)


def test_add_reduce_is_numpys_pairwise_sum():
    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 1000, 4097, 70_001]:
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, size=n)
        assert kernel.add_reduce(a) == np.add.reduce(a), n


def test_an_overflowing_batch_takes_the_clipping_path_in_both(monkeypatch):
    """The compiled pass stops before a batch whose exponent overflows; the warning clipping
    path redoes it, then the compiled pass resumes: the numpy path's iterates."""
    X, y = _data(400, 4, 1)
    X *= 4.0
    kw = dict(sigma2=9.0, epsilon_y=1.0, batch_size=50, learning_rate=200.0, alpha=0.1,
              record_every=1)  # fmt: skip
    with pytest.warns(ExponentOverflowWarning):
        ref = _run(False, monkeypatch, X, y, **kw)
    with pytest.warns(ExponentOverflowWarning):
        got = _run(True, monkeypatch, X, y, **kw)
    np.testing.assert_array_equal(got.history, ref.history)


def test_a_process_loads_the_compiled_pass_only_after_many_records():
    """A one-off fit does not import numba; a process that has passed KERNEL_AFTER records
    through the numpy fused step loads the compiled pass (same iterates); one feature or
    one row per batch never does (numpy calls other BLAS routines there)."""
    code = (
        "import sys, numpy as np\n"
        "from privest.learn import iwp_core\n"
        "iwp_core.KERNEL_AFTER = 5_000\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.standard_normal((2_000, 3)); y = np.sign(X[:, 0])\n"
        "kw = dict(loss='logistic', order=2, sigma2=0.5, epsilon_y=2.0, learning_rate=0.1)\n"
        "sgd_replicated = iwp_core.sgd_replicated\n"
        "sgd_replicated(X[:, :1], y, **kw); sgd_replicated(X, y, batch_size=1, **kw)\n"
        "got = [sgd_replicated(X, y, **kw).last for _ in range(2)]\n"
        "print('numba' in sys.modules)\n"
        "got.append(sgd_replicated(X, y, **kw).last)\n"
        "print('privest.learn.iwp_kernel' in sys.modules, np.array_equal(got[0], got[2]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "True"]
