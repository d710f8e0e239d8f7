"""The floating-point support attack (Mironov 2012) against every central mechanism.

For a data set ``x`` and a neighbour ``x2``, draw 20,000 outputs of ``M(x)`` and ask, for
each, whether ``M(x2)`` could have produced it. An output impossible under the neighbour
tells the attacker that the data is ``x``: a pure-DP claim is then false for that output.

* Lattice mechanisms release ``g (round(f/g) + K)`` with ``K`` supported on every integer,
  so ``M(x2)`` can produce exactly the multiples of the neighbour's step ``g`` (a refusal,
  NaN, is possible under both). The oracle reads ``g`` from the neighbour's own mechanism,
  so a data-dependent step would be caught.
* Negative control: the plain float sampler ``f + Generator.laplace(0, scale)`` that privest
  used before. Its oracle re-implements numpy's sampler (U = 53-bit uniform; U >= 1/2:
  ``-scale log(2 - U - U)``, else ``scale log(U + U)``) and searches the uniforms near the
  inverse of ``y - f(x2)``; the oracle is first checked to explain every output under ``x``
  itself, then shown to flag many outputs under the neighbour.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privest.mechanisms.eptr import EPTR
from privest.mechanisms.gaussian import GaussianMechanism
from privest.mechanisms.laplace import LaplaceLaw
from privest.mechanisms.ptr import ClassicPTR
from privest.mechanisms.ptr_median import PTRMedianLaw
from privest.mechanisms.smooth_sensitivity import SmoothSensitivityLaw
from privest.models.statistics import private_mean

N = 20_000
BOUNDS = (-1.0, 1.0)


def data_pair() -> tuple[np.ndarray, np.ndarray]:
    """n = 100 values +-1 (the issue's example) and the neighbour with one record flipped."""
    x = np.where(np.random.default_rng(0).random(100) < 0.5, -1.0, 1.0)
    x2 = x.copy()
    x2[np.argmax(x < 0)] = 1.0
    return x, x2


def impossible_on_lattice(y: np.ndarray, step: float) -> int:
    """Outputs that are not NaN and not a multiple of the neighbour's step."""
    y = np.asarray(y, dtype=float).ravel()
    y = y[~np.isnan(y)]
    k = y / step
    return int(np.sum(~np.isfinite(k) | (k != np.rint(k))))


def _candidates(lap: np.ndarray, scale: float, upper: bool, width: int) -> np.ndarray:
    """The 53-bit uniforms within ``width`` grid points of the inverse of ``lap``."""
    with np.errstate(over="ignore"):
        u0 = 1 - 0.5 * np.exp(-lap / scale) if upper else 0.5 * np.exp(lap / scale)
    m = np.rint(u0 * 2.0**53)[:, None] + np.arange(-width, width + 1)[None, :]
    u = m / 2.0**53
    return np.where((u >= 0.5) & (u < 1) if upper else (u > 0) & (u < 0.5), u, np.nan)


def float_laplace_possible(y: np.ndarray, loc: float, scale: float, width: int = 64) -> np.ndarray:
    """Could ``loc + Generator.laplace(0, scale)`` have output ``y``? (numpy's sampler).

    numpy's sampler calls the C library's ``log``; the vectorised ``np.log`` may differ from
    it in the last bit, so outputs the vectorised pass cannot explain are re-checked with
    ``math.log`` (the C library's).
    """
    y = np.asarray(y, dtype=float)
    lap = y - loc
    found = np.zeros(y.size, dtype=bool)
    for upper in (True, False):
        u = _candidates(lap, scale, upper, width)
        with np.errstate(divide="ignore", invalid="ignore"):
            if upper:
                cand = loc + (0.0 - scale * np.log(2.0 - u - u))
            else:
                cand = loc + (0.0 + scale * np.log(u + u))
        found |= np.any(cand == y[:, None], axis=1)
    for i in np.flatnonzero(~found):
        for upper in (True, False):
            for u in _candidates(lap[i : i + 1], scale, upper, width)[0]:
                if u == u:  # not NaN
                    term = -scale * math.log(2.0 - u - u) if upper else scale * math.log(u + u)
                    found[i] |= loc + (0.0 + term) == y[i]
    return found


# ------------------------------------------------------------------ negative control
def test_the_attack_flags_the_plain_float_laplace_sampler():
    x, x2 = data_pair()
    scale = (2.0 / x.size) / 1.0  # mean of data in [-1, 1], eps = 1
    f, f2 = float(np.mean(x)), float(np.mean(x2))
    y = f + np.random.default_rng(1).laplace(0.0, scale, N)
    assert float_laplace_possible(y, f, scale).all()  # the oracle explains every output
    flagged = np.sum(~float_laplace_possible(y, f2, scale))
    assert flagged > N / 10  # 24% at this seed: each one refutes the neighbour outright


# ------------------------------------------------------------------ lattice mechanisms
@pytest.mark.parametrize("statistic", ["mean", "sum", "variance"])
def test_laplace_statistics_leave_nothing_impossible(statistic):
    x, x2 = data_pair()
    law = LaplaceLaw.for_statistic(x, statistic, epsilon=1.0, bounds=BOUNDS)
    neighbour = LaplaceLaw.for_statistic(x2, statistic, epsilon=1.0, bounds=BOUNDS)
    y = law.sample(N, rng=1)
    assert impossible_on_lattice(y, neighbour.lattice.step) == 0


def test_count_leaves_nothing_impossible():
    x, x2 = data_pair()
    law = LaplaceLaw.for_statistic(x > 0, "count", epsilon=1.0)
    neighbour = LaplaceLaw.for_statistic(x2 > 0, "count", epsilon=1.0)
    assert impossible_on_lattice(law.sample(N, rng=2), neighbour.lattice.step) == 0


def test_private_mean_releases_the_same_lattice():
    x, x2 = data_pair()
    step = LaplaceLaw.for_statistic(x2, "mean", epsilon=1.0, bounds=BOUNDS).lattice.step
    gen = np.random.default_rng(3)
    y = [private_mean(x, epsilon=1.0, bounds=BOUNDS, rng=gen).value for _ in range(2000)]
    assert impossible_on_lattice(np.array(y), step) == 0


def test_gaussian_mechanism_leaves_nothing_impossible():
    x, x2 = data_pair()
    mech = GaussianMechanism(1.0, 1e-6, sensitivity=2.0 / x.size)
    gen = np.random.default_rng(4)
    y = np.array([mech.release(np.mean(x), gen).value for _ in range(N)])
    neighbour = GaussianMechanism(1.0, 1e-6, sensitivity=2.0 / x2.size)
    assert impossible_on_lattice(y, neighbour._noise.step) == 0


def _eptr() -> EPTR:
    return EPTR(
        np.mean,
        lambda d: 1e3,  # always safe: every draw goes through the Gaussian step
        local_sensitivity=0.02,
        epsilon=1.0,
        delta=1e-6,
        dim=1,
    )


def test_eptr_gaussian_step_leaves_nothing_impossible():
    x, _ = data_pair()
    mech = _eptr()
    gen = np.random.default_rng(5)
    y = np.array([mech.release(x, gen).value for _ in range(N)])
    assert np.all(np.isfinite(y))
    step = _eptr_step(mech)
    assert impossible_on_lattice(y, step) == 0


def _eptr_step(mech: EPTR) -> float:
    from privest.mechanisms.eptr import _eptr_gaussian

    return _eptr_gaussian(mech.alpha, mech.epsilon, mech.delta, 1).step


def test_classic_ptr_gaussian_step_leaves_nothing_impossible():
    from privest.mechanisms.samplers.lattice import lattice_gaussian

    x, _ = data_pair()
    mech = ClassicPTR(np.mean, lambda d: 1e3, local_sensitivity=0.02, epsilon=1.0, delta=1e-6)
    gen = np.random.default_rng(6)
    y = np.concatenate([mech.release(x, gen).value for _ in range(N)])
    step = lattice_gaussian(0.5, 1e-6, 0.02, 1, "classic").step
    assert impossible_on_lattice(y, step) == 0


def test_ptr_median_leaves_nothing_impossible():
    x, x2 = data_pair()
    x = x * np.linspace(0.5, 1, x.size)
    x2 = x2 * np.linspace(0.5, 1, x2.size)
    kw = dict(epsilon=1.0, delta=1e-6, bounds=BOUNDS, local_sensitivity=0.05)
    law = PTRMedianLaw(x, **kw)
    y = law.sample(N, rng=7)
    assert impossible_on_lattice(y, PTRMedianLaw(x2, **kw).lattice.step) == 0


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_smooth_sensitivity_leaves_nothing_impossible(delta):
    x, x2 = data_pair()
    x = x * np.linspace(0.5, 1, x.size)
    x2 = x2 * np.linspace(0.5, 1, x2.size)
    law = SmoothSensitivityLaw(x, epsilon=1.0, bounds=BOUNDS, delta=delta)
    y = law.sample(N, rng=8)
    step = SmoothSensitivityLaw(x2, epsilon=1.0, bounds=BOUNDS, delta=delta).step
    assert impossible_on_lattice(y, step) == 0


# ------------------------------------------------------------------ private regressions
@pytest.mark.slow
@pytest.mark.parametrize("model", ["linear", "linear with standard errors", "logistic"])
def test_private_regressions_release_only_lattice_values(model, monkeypatch):
    """Every noisy statistic AdaSSP and noisy GD release (the coefficients are their public
    post-processing) is a multiple of its mechanism's step, which depends on public settings
    only; at least 20,000 released numbers are checked. The linear standard errors' residual
    Gram is clipped at a bound read off the fit's earlier releases (adaptive composition), so
    its step is on the lattice too but differs between fits."""
    from privest.mechanisms.samplers.lattice import LatticeGaussian
    from privest.models.linear import PrivateLinearRegression
    from privest.models.logistic import PrivateLogisticRegression

    released: list[tuple[np.ndarray, float]] = []
    real = LatticeGaussian.release

    def spy(self, value, rng, size=None, **kw):  # kw: noise drawn ahead in a batch
        out = real(self, value, rng, size, **kw)
        released.append((np.asarray(out, dtype=float).ravel(), self.step))
        return out

    monkeypatch.setattr(LatticeGaussian, "release", spy)
    gen = np.random.default_rng(9)
    X = gen.uniform(0, 1, (200, 2))  # n above the public constant rule (issue 31)
    y = np.clip(X @ [0.5, -0.3] + 0.1 * gen.standard_normal(200), 0, 1)
    if model.startswith("linear"):
        kw = {} if model == "linear with standard errors" else {"inference": "none"}
        est = PrivateLinearRegression(
            epsilon=1.0, delta=1e-6, bounds=(0, 1), y_bounds=(0, 1), random_state=gen, **kw
        )
    else:
        y = (y > np.median(y)).astype(float)
        est = PrivateLogisticRegression(epsilon=1.0, delta=1e-6, bounds=(0, 1), random_state=gen)
    steps = set()
    while sum(v.size for v, _ in released) < N:
        est.fit(X, y)
    for values, step in released:
        steps.add(step)
        assert impossible_on_lattice(values, step) == 0
    if model != "linear with standard errors":
        assert len(steps) <= 3  # one public step per released statistic, the same every fit


# ------------------------------------------------------------------ PLM and INV on a lattice
@pytest.mark.parametrize("mechanism", ["piecewise_laplace", "inverse_sensitivity"])
@pytest.mark.parametrize("statistic", ["median", "quantile:0.9"])
def test_plm_and_inv_leave_nothing_impossible(mechanism, statistic):
    """Medians near 0 (the case where 28% of the float PLM's releases were impossible):
    every exact lattice draw is a multiple of the neighbour's public unit inside its range."""
    from privest.models.statistics import statistic_mechanism

    x = np.random.default_rng(4).normal(0.0, 0.01, 101).clip(-1, 1)
    x2 = x.copy()
    x2[np.argmin(np.abs(x))] = 0.9
    mech = statistic_mechanism(statistic, epsilon=1.0, bounds=BOUNDS, mechanism=mechanism)
    law, neighbour = mech.law(x), mech.law(x2)
    y = law.sample(N, rng=6)
    assert impossible_on_lattice(y, neighbour.unit) == 0
    lo, hi = neighbour.profile.lo * neighbour.unit, neighbour.profile.hi * neighbour.unit
    assert y.min() >= lo and y.max() <= hi
    assert np.all(np.isfinite(neighbour.logpdf(y)))


# ------------------------------------------------------------------ every registered pair
def _registry_pairs() -> list[tuple[str, str]]:
    """Every statistic x mechanism the registry allows with public inputs alone."""
    from privest.registry import mechanism_names, mechanism_spec

    plain = {"epsilon", "bounds", "resolution", "quantile", "n"}
    out = []
    for stat in ("median", "quantile:0.9", "mean", "sum", "count", "variance"):
        for m in mechanism_names(stat.partition(":")[0], auto=False):
            if set(mechanism_spec(m).reads) <= plain:
                out.append((stat, m))
    return out


def impossible_under(neighbour, y: np.ndarray, public_ends: tuple[float, float]) -> int:
    """Releases the neighbour's law cannot produce: off its public lattice (Laplace laws),
    or of probability zero under it (the exact lattice laws); a clamp to the statistic's
    public range ends is possible under both."""
    y = np.asarray(y, dtype=float)
    y = y[(y != public_ends[0]) & (y != public_ends[1])]
    if hasattr(neighbour, "lattice"):
        return impossible_on_lattice(y, neighbour.lattice.step)
    return int(np.sum(~np.isfinite(neighbour.logpdf(y))))


@pytest.mark.parametrize(("statistic", "mechanism"), _registry_pairs())
def test_every_registered_pair_leaves_nothing_impossible(statistic, mechanism):
    """Data near 0 with bounds (0, 10^6), where the float releases of PLM and INV left 58 to
    172 of 800 outputs impossible under the neighbour: every release must be possible."""
    from privest.models.statistics import statistic_mechanism

    rng = np.random.default_rng(7)
    x = np.abs(rng.normal(0.0, 0.01, 101))
    x2 = x.copy()
    x2[np.argmin(x)] = 3.0
    bounds = (0.0, 1e6)
    if statistic == "count":
        x, x2, bounds = (x > 0.005).astype(float), (x2 > 0.005).astype(float), None
    mech = statistic_mechanism(statistic, epsilon=1.0, bounds=bounds, mechanism=mechanism)
    law, neighbour = mech.law(x), mech.law(x2)
    y = np.asarray(law.sample(800, rng=8), dtype=float)
    clamp = getattr(law, "clamp", None)
    y = y if clamp is None else np.asarray(clamp(y), dtype=float)
    ends = getattr(law, "output_range", None) or (math.nan, math.nan)
    assert impossible_under(neighbour, y, ends) == 0


def test_the_support_oracle_can_fail():
    """Control: the continuous PLM sampler of paper 002 (still available as a law, for
    analysis) puts its draws off the neighbour's lattice."""
    from privest.mechanisms.piecewise_laplace import PiecewiseLaplace

    x = np.abs(np.random.default_rng(7).normal(0.0, 0.01, 101))
    x2 = x.copy()
    x2[np.argmin(x)] = 3.0
    mech = PiecewiseLaplace("mean", epsilon=1.0, bounds=(0.0, 1e6))
    y = mech.continuous_law(x).sample(800, rng=8)
    assert impossible_under(mech.law(x2), y, (math.nan, math.nan)) > 700
