"""Privacy events: every guarantee emits one, it round-trips through JSON exactly, its
figures are the guarantee's own, and a malformed one is refused naming the field."""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from privest.accounting import (
    ApproxDP,
    ApproxDPEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    Event,
    GaussianEvent,
    ParallelEvent,
    PureDPEvent,
    TradeoffEvent,
    ZCDPEvent,
    event_from_dict,
)
from privest.accounting.base import Guarantee
from privest.accounting.gaussian import GaussianRRGuarantee, LatticeGaussianGuarantee, LocalDP
from privest.accounting.zcdp import ZCDP
from privest.accounting.zil_guarantee import ZILGuarantee, ZILTradeoff
from privest.errors import ValidationError
from privest.tables.plan import TableGuarantee

SRC = Path(__file__).resolve().parents[2] / "src" / "privest"

#: one instance of every Guarantee subclass, and the epsilon it is charged at
GUARANTEES = {
    "ApproxDP": (ApproxDP(0.7, 1e-6), None),
    "ApproxDP pure": (ApproxDP(0.7), None),
    "LocalDP": (LocalDP(2.0, 1e-5), None),
    "ZCDP": (ZCDP(0.05), 1.0),
    "GaussianRRGuarantee": (GaussianRRGuarantee(4.0, 2.0, 1.0), 3.0),
    "GaussianRRGuarantee public label": (GaussianRRGuarantee(4.0, 2.0, math.inf), 2.0),
    "LatticeGaussianGuarantee": (LatticeGaussianGuarantee(400.0, 3.0), 0.5),
    "LatticeGaussianGuarantee dims": (LatticeGaussianGuarantee(400.0, 3.5, dims=3), 0.5),
    "ZILTradeoff": (ZILTradeoff(1.2, 0.05, d=1), 1.0),
    "ZILTradeoff beta": (ZILTradeoff(1.2, 0.05, d=3), 1.0),
    "ZILGuarantee": (ZILGuarantee(0.8, 0.1, 2), 2.0),
    "TableGuarantee": (  # a table of one aggregate: 2 cells of 0.5 per person
        TableGuarantee(
            1.0,
            0.0,
            ComposedEvent((ParallelEvent(((2, PureDPEvent(0.5)),), 2),)),
            "add or remove one person",
        ),
        None,
    ),
}


def _guarantee_subclasses() -> set[str]:
    """Every class in src/privest deriving from a guarantee class (read from the source)."""
    names, found = {"Guarantee"}, set()
    trees = [ast.parse(p.read_text()) for p in SRC.rglob("*.py")]
    for _ in range(5):  # subclasses of subclasses
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                    if bases & names:
                        found.add(node.name)
        names |= found
    return found


def test_every_guarantee_class_is_covered():
    covered = {type(g).__name__ for g, _ in GUARANTEES.values()}
    assert _guarantee_subclasses() == covered


@pytest.mark.parametrize("name", sorted(GUARANTEES))
def test_every_guarantee_emits_an_event_that_round_trips_exactly(name):
    guarantee, eps = GUARANTEES[name]
    event = guarantee.event(eps)
    assert isinstance(event, Event)
    text = json.dumps(event.to_dict(), allow_nan=False)
    back = event_from_dict(json.loads(text))
    assert back == event and back.to_dict() == event.to_dict()
    assert type(back) is type(event)


@pytest.mark.parametrize("name", sorted(GUARANTEES))
def test_the_events_point_is_on_the_guarantees_profile(name):
    guarantee, eps = GUARANTEES[name]
    eps_at, delta_at = guarantee.event(eps).point()
    if eps is None:  # pure or approximate: its own point
        assert (eps_at, delta_at) == (guarantee.eps, guarantee.dlt)
    else:
        assert eps_at == eps
        assert delta_at >= float(guarantee.delta(eps)) * (1 - 1e-9)  # never below the curve
        assert delta_at <= float(guarantee.delta(eps)) * (1 + 1e-6) + 1e-12 or (
            "RR" in guarantee.label  # basic composition of the two parts: an upper bound
        )


@pytest.mark.parametrize("name", sorted(GUARANTEES))
def test_the_events_pld_dominates_the_guarantees_profile(name):
    """Where an event has a PLD, its profile is never below the guarantee's (pessimistic)
    and within the grid's error of it (tight)."""
    guarantee, _ = GUARANTEES[name]
    pld = guarantee.event().pld(1e-3)
    if pld is None:
        assert name.startswith(("ZCDP", "LatticeGaussianGuarantee dims"))
        return
    k = 2 if "RR" in guarantee.label and "inf" not in guarantee.label else 1
    if isinstance(guarantee, TableGuarantee):  # its event is the exact composition of the
        for eps in (0.0, 0.5, 1.0, 2.5):  # table's parts, within its stated (eps, delta)
            assert pld.delta(eps) <= float(guarantee.delta(eps)) + 1e-9
        return
    for eps in (0.0, 0.5, 1.0, 2.5):
        truth = float(guarantee.delta(eps))
        assert pld.delta(eps) >= truth * (1 - 1e-12)
        assert pld.delta(eps + k * 1e-3) <= truth + 1e-9


def test_zcdp_rho_comes_from_the_guarantee():
    assert PureDPEvent(0.5).zcdp_rho() == 0.125
    assert GaussianEvent(2.0).zcdp_rho() == 2.0
    assert LatticeGaussianGuarantee(400.0, 3.0).event().zcdp_rho() == pytest.approx(9 / 800)
    assert ZCDPEvent(0.3, 1.0).zcdp_rho() == 0.3
    assert ApproxDPEvent(0.5, 1e-6).zcdp_rho() is None
    assert TradeoffEvent("zil_beta", 1.0, 0.1).zcdp_rho() is None


def test_compositions_add_and_parallel_takes_the_worst():
    a, b = PureDPEvent(0.5), ApproxDPEvent(1.0, 1e-6)
    assert ComposedEvent((a, b)).point() == (1.5, 1e-6)
    par = ParallelEvent.of([a, b, a])
    assert par.parts == ((2, a), (1, b))
    assert par.point() == (1.0, 1e-6)
    assert ParallelEvent.of([a, b], touched=2).point() == (1.5, 1e-6)
    assert ParallelEvent(((1000, a),)).zcdp_rho() == 0.125
    assert ParallelEvent(((1000, a),), touched=2).zcdp_rho() == 0.25
    # a curve without its charging point has no point, and neither has a composition of it
    assert ComposedEvent((a, GaussianEvent(1.0))).point() is None
    nested = ParallelEvent(((3, ComposedEvent((a, GaussianEvent(1.0, 2.0)))),), touched=1)
    assert event_from_dict(json.loads(json.dumps(nested.to_dict()))) == nested


BAD = [
    ({"kind": "pure_dp", "epsilon": -1.0}, "epsilon"),
    ({"kind": "pure_dp", "epsilon": "0.5"}, "epsilon"),
    ({"kind": "pure_dp", "epsilon": True}, "epsilon"),
    ({"kind": "pure_dp"}, "missing"),
    ({"kind": "pure_dp", "epsilon": 1.0, "rho": 1e-12}, "unknown"),
    ({"kind": "approx_dp", "epsilon": 1.0, "delta": 1.0}, "delta"),
    ({"kind": "zcdp", "rho": -0.1}, "rho"),
    ({"kind": "zcdp", "rho": float("nan")}, "rho"),
    ({"kind": "gaussian", "mu": 0.0}, "mu"),
    ({"kind": "discrete_gaussian", "sigma2": 4.0, "shift": 1.5}, "shift"),
    ({"kind": "tradeoff", "curve": "other", "c": 1.0, "zero_prob": 0.1}, "curve"),
    ({"kind": "tradeoff", "curve": "zil_beta", "c": 1.0, "zero_prob": 1.0}, "zero_prob"),
    ({"kind": "composed", "events": []}, "events"),
    ({"kind": "composed", "events": [{"kind": "pure_dp", "epsilon": -2}]}, "events[0]"),
    (
        {"kind": "parallel", "parts": [{"count": 0, "event": {"kind": "pure_dp", "epsilon": 1}}]},
        "count",
    ),
    ({"kind": "mystery"}, "kind"),
    ([1, 2], "not an event"),
]


@pytest.mark.parametrize("data,field", BAD, ids=[str(i) for i in range(len(BAD))])
def test_a_malformed_event_is_refused_naming_the_field(data, field):
    with pytest.raises(ValidationError, match=re.escape(field)):
        event_from_dict(data)


def test_deep_nesting_is_refused():
    data = {"kind": "pure_dp", "epsilon": 1.0}
    for _ in range(40):
        data = {"kind": "composed", "events": [data]}
    with pytest.raises(ValidationError, match="deeper"):
        event_from_dict(data)


def test_a_guarantee_without_an_event_says_so():
    class Custom(Guarantee):
        def delta(self, epsilon):
            return np.zeros_like(np.asarray(epsilon, float))

    with pytest.raises(NotImplementedError, match="Custom"):
        Custom().event()


def test_discrete_gaussian_event_is_exact_on_the_lattice():
    """The PLD of one discrete Gaussian coordinate (atoms at (2 k s - s^2) / (2 sigma2))
    matches the exact profile of Canonne, Kamath and Steinke (2020, Thm 7)."""
    g = LatticeGaussianGuarantee(64.0, 2.0)
    pld = DiscreteGaussianEvent(64.0, 2).pld(1e-4)
    for eps in (0.1, 0.3, 0.6):
        truth = float(g.delta(eps))
        assert truth <= pld.delta(eps) <= float(g.delta(eps - 1e-4)) + 1e-12
