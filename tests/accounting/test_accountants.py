"""The accountants against closed forms: k-fold pure DP (Kairouz, Oh and Viswanath 2015),
k Gaussians (one Gaussian of mu sqrt(k)), ZIL releases by their trade-off curves (paper
000, Thm 3.3; the limit experiment as a Gaussian of random mu), each with a negative
control; the PLD never under-reports and is within k * grid of the truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, special

from privest.accounting import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianEvent,
    ParallelEvent,
    PureDPEvent,
    TradeoffEvent,
    ZCDPEvent,
    compose_events,
)
from privest.accounting.pld import pld_from_atoms
from privest.accounting.profiles import gaussian_delta, zcdp_epsilon
from privest.accounting.zil import delta_tilde
from privest.errors import ValidationError
from privest.release.zil import ZILMechanism

GRID = 1e-3


def kairouz_delta(k: int, eps: float, i: int) -> float:
    """delta at epsilon (k - 2i) eps of k-fold eps-DP (Kairouz et al. 2015, Thm 3.3)."""
    top = sum(
        special.comb(k, l) * (math.exp((k - l) * eps) - math.exp((k - 2 * i + l) * eps))
        for l in range(i)
    )
    return top / (1 + math.exp(eps)) ** k


def check_tight(reported: float, exact: float, slack: float) -> None:
    """Pessimistic (never below the truth) and tight (within ``slack`` of it)."""
    assert reported >= exact * (1 - 1e-12), f"under-reported: {reported} < {exact}"
    assert reported <= exact + slack, f"loose: {reported} > {exact} + {slack}"


@pytest.mark.parametrize("k", [2, 5, 10])
def test_pld_of_k_pure_steps_is_the_optimal_composition(k):
    eps = 0.5
    results = compose_events([PureDPEvent(eps)] * k, 1e-9)
    assert results["basic"].epsilon == pytest.approx(k * eps)
    pld = PureDPEvent(eps).pld(GRID).self_compose(k)
    for i in range(1, k // 2 + 1):
        d = kairouz_delta(k, eps, i)
        check_tight(pld.epsilon(d), (k - 2 * i) * eps, k * GRID)
    # negative control: a PLD whose losses are rounded down by 0.01 under-reports, and the
    # check says so
    low = [eps - 0.01, -eps - 0.01]
    down = pld_from_atoms(low, [special.expit(eps), special.expit(-eps)], 0.0, GRID)
    if k > 2:  # at k = 2 the exact figure is 0: nothing to under-report
        d = kairouz_delta(k, eps, 1)
        with pytest.raises(AssertionError, match="under-reported"):
            check_tight(down.self_compose(k).epsilon(d), (k - 2) * eps, k * GRID)


def _gaussian_epsilon(mu: float, delta: float) -> float:
    return optimize.brentq(lambda e: gaussian_delta(e, mu, 1.0) - delta, 0.0, 200.0, xtol=1e-13)


@pytest.mark.parametrize("k,mu", [(1, 0.5), (4, 0.5), (10, 0.3), (3, 2.0)])
def test_k_gaussians_compose_to_one_gaussian_of_mu_sqrt_k(k, mu):
    delta = 1e-6
    results = compose_events([GaussianEvent(mu)] * k, delta)
    exact = _gaussian_epsilon(mu * math.sqrt(k), delta)
    check_tight(results["pld"].epsilon, exact, k * GRID + 1e-4)
    # zCDP: rho = k mu^2 / 2 with the tight conversion; never below the exact figure
    assert results["zcdp"].epsilon == pytest.approx(zcdp_epsilon(k * mu * mu / 2, delta))
    assert results["zcdp"].epsilon >= exact
    assert results["basic"].unhandled == tuple(range(k))  # no charging point given
    # negative control: one Gaussian too few is below the exact figure
    with pytest.raises(AssertionError, match="under-reported"):
        fewer = compose_events([GaussianEvent(mu)] * (k - 1) or [GaussianEvent(mu / 2)], delta)
        check_tight(fewer["pld"].epsilon, exact, k * GRID)


def _zil_event(epsilon: float, delta: float, zero_prob: float, columns: int):
    bounds = {f"x{j}": (0, 1) for j in range(columns)}
    mech = ZILMechanism.calibrate(epsilon=epsilon, delta=delta, zero_prob=zero_prob, bounds=bounds)
    return mech.guarantee.event(epsilon), mech.guarantee.individual


def _beta_mixture_delta(eps: float, c: float, z: float, k: int) -> float:
    """delta of k composed beta_{c,z} curves from the limit experiment (3.4): a Gaussian
    of mu = c sqrt(sum 1/W_i), W_i ~ Exp(1) (k = 1, 2 by quadrature)."""

    def g(*w):
        return gaussian_delta(eps, c * math.sqrt(sum(1 / x for x in w)), 1.0)

    opts = dict(epsabs=1e-13, epsrel=1e-11, limit=200)
    if k == 1:
        inner = integrate.quad(lambda w: math.exp(-w) * g(w), 0, np.inf, **opts)[0]
    else:
        inner = integrate.quad(
            lambda a: (
                math.exp(-a)
                * integrate.quad(lambda b: math.exp(-b) * g(a, b), 0, np.inf, **opts)[0]
            ),
            0,
            np.inf,
            **opts,
        )[0]
    return 1 - (1 - z) ** k + (1 - z) ** k * inner


def test_the_beta_curve_is_a_gaussian_of_random_mu():
    """The identity the ZIL event's PLD rests on: delta_c(eps) of Thm 3.3 equals the
    mixture over W of Gaussian profiles (negative control: a fixed mu = c does not)."""
    c, z = 1.0637, 0.1
    for eps in (0.3, 2.0):
        closed = float(delta_tilde(eps, c, z))
        assert _beta_mixture_delta(eps, c, z, 1) == pytest.approx(closed, rel=1e-9)
        assert z + (1 - z) * gaussian_delta(eps, c, 1.0) != pytest.approx(closed, rel=1e-2)


@pytest.mark.slow
def test_two_zil_releases_compose_by_their_curves_as_the_closed_form():
    event, _ = _zil_event(2.0, 0.3, 0.1, 2)
    pld = event.pld(GRID).self_compose(2)
    for eps in (0.5, 1.5, 3.0):
        exact = _beta_mixture_delta(eps, event.c, 0.1, 2)
        later = _beta_mixture_delta(eps - 2 * GRID, event.c, 0.1, 2)
        assert exact * (1 - 1e-9) <= pld.delta(eps) <= later + 1e-9


def test_k_exact_laplace_zil_releases_reach_their_atom():
    """One noised column: past k eps0 only the releases without noise remain, delta =
    1 - (1 - z)^k exactly; below it the composition still costs more (control)."""
    event = TradeoffEvent("zil_laplace", 0.8, 0.05)
    eps0 = math.sqrt(2) * 0.8
    for k in (1, 3, 6):
        pld = event.pld(GRID).self_compose(k)
        atom = 1 - 0.95**k
        assert pld.delta(k * eps0 + k * GRID) == pytest.approx(atom, abs=1e-9)
        assert pld.delta(k * eps0 - 0.5) > atom + 1e-3


#: the README's calibration (2, 0.3)-DP with zero_prob 0.1, and a stricter one; two columns
CALIBRATIONS = [
    ((2.0, 0.3, 0.1), [0.3, 0.6, 0.9, 0.9]),
    ((1.0, 0.01, 0.001), [0.01, 0.02, 0.05, 0.1]),
]


@pytest.mark.parametrize("calibration,deltas", CALIBRATIONS)
def test_k_zil_releases_by_their_curves_beat_basic_composition(calibration, deltas):
    """At the same total delta, the PLD of the curves gives a smaller epsilon than basic
    composition at the calibrated point, and than basic composition at the best points of
    the curves (equal split of delta: optimal, the profile being convex)."""
    event, guarantee = _zil_event(*calibration, 2)
    for k, delta in zip((1, 2, 5, 10), deltas, strict=True):
        results = compose_events([event] * k, delta)
        best_points = k * guarantee.epsilon(delta / k)
        if k == 1:  # one release: the curve's own figure, up to the grid
            check_tight(results["pld"].epsilon, calibration[0], GRID)
            continue
        at_point = results["basic"]
        assert results["pld"].epsilon < best_points
        assert at_point.delta > delta or results["pld"].epsilon < at_point.epsilon


def test_accountants_leave_what_they_cannot_handle_to_basic_composition():
    events = [ApproxDPEvent(1.0, 1e-6), PureDPEvent(0.1), ZCDPEvent(0.01, 0.5)]
    r = compose_events(events, 1e-5)
    assert r["basic"].epsilon == pytest.approx(1.6) and r["basic"].unhandled == ()
    assert r["zcdp"].unhandled == (0,)
    assert r["zcdp"].epsilon == pytest.approx(1.0 + zcdp_epsilon(0.005 + 0.01, 1e-5 - 1e-6))
    assert r["pld"].unhandled == (2,)  # zCDP has no worst pair
    # a curve without its point and no accountant able to compose it: no figure
    lone = compose_events([ZCDPEvent(0.1)], 1e-6, "basic")["basic"]
    assert lone.epsilon == math.inf and lone.unhandled == (0,)


def test_parallel_composition_costs_the_worst_partition():
    cell = PureDPEvent(0.5)
    r = compose_events([ParallelEvent(((1000, cell),))], 1e-6)
    assert r["basic"].epsilon == 0.5  # not 500
    assert 0.5 - 1e-3 <= r["pld"].epsilon <= 0.5 + GRID
    assert r["zcdp"].epsilon == pytest.approx(zcdp_epsilon(0.125, 1e-6))
    swap = compose_events([ParallelEvent(((1000, cell),), touched=2)], 0.0, "basic")
    assert swap["basic"].epsilon == 1.0
    # different cells: the PLD composes the worst (it dominates), basic the largest point
    mixed = ParallelEvent.of([GaussianEvent(0.5, 1.0), GaussianEvent(1.0, 1.0)])
    r = compose_events([mixed], 1e-6)
    check_tight(r["pld"].epsilon, _gaussian_epsilon(1.0, 1e-6), GRID)
    assert r["basic"].epsilon == 1.0
    # no part dominates: each part once (valid, not tight): above the worst alone
    odd = ParallelEvent.of([GaussianEvent(1.0), PureDPEvent(2.0)])
    assert compose_events([odd], 1e-6, "pld")["pld"].epsilon > 2.0


def test_composed_events_equal_their_parts():
    parts = [PureDPEvent(0.3), GaussianEvent(0.8)]
    one = compose_events([ComposedEvent(tuple(parts))], 1e-6)
    two = compose_events(parts, 1e-6)
    assert one["pld"].epsilon == pytest.approx(two["pld"].epsilon, abs=1e-12)
    assert one["zcdp"].epsilon == pytest.approx(two["zcdp"].epsilon)


def test_compose_events_refuses_what_is_not_an_event():
    with pytest.raises(ValidationError, match="events"):
        compose_events([0.5], 1e-6)
    with pytest.raises(ValidationError, match="accountant"):
        compose_events([PureDPEvent(1.0)], 1e-6, "renyi")
