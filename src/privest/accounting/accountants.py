"""Accountants: compose a list of privacy events into one (epsilon, delta) (docs/budget.md,
"Accountants").

* ``basic``: sequential composition, (sum of epsilons, sum of deltas) at each event's
  point (Dwork and Roth 2014, Thm 3.16). An event without a point (a curve not given the
  epsilon to be charged at) cannot be composed this way.
* ``zcdp``: the rho of the zCDP events add and are converted once, with the tight
  conversion (:mod:`privest.accounting.profiles`), at the delta the other events leave; the
  other events add by basic composition.
* ``pld``: the privacy-loss distributions of the events that have one are convolved
  (:mod:`privest.accounting.pld`: tight up to ``k * grid`` in epsilon, never below the
  truth) and read at the delta the other events leave; the others add by basic
  composition.

Each reports a :class:`Composition`: its epsilon at the total delta, the delta it used,
and ``unhandled``, the indices of the events it could not compose itself (composed by
basic composition instead; an ``unhandled`` event without a point makes its epsilon
infinite). :func:`compose_events` runs them on any list of events, with no budget and no
data (a plan); :func:`best` picks the smallest epsilon.

All three hold for mechanisms chosen adaptively with events fixed in advance. When the
events themselves are chosen after seeing earlier results (a budget queried over time),
basic composition and zCDP remain valid (privacy filters: Rogers, Roth, Ullman and Vadhan
2016; Feldman and Zrnic 2021), while no such result is known for the tight composition of
general PLDs: :class:`~privest.accounting.budget.Budget` admits by ``basic`` and ``zcdp``
unless asked otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from privest.accounting.events import Event
from privest.accounting.pld import PLD
from privest.accounting.profiles import zcdp_epsilon
from privest.errors import ValidationError
from privest.validation import check_delta

__all__ = [
    "ACCOUNTANTS",
    "PLD_GRID",
    "Composition",
    "best",
    "check_accountants",
    "compose_events",
]

#: the accountants, in the order reports list them (and ties are broken)
ACCOUNTANTS = ("basic", "zcdp", "pld")
#: the grid of the PLD accountant: k events over-state epsilon by less than k * PLD_GRID
PLD_GRID = 1e-3


@dataclass(frozen=True)
class Composition:
    """The composed guarantee of a list of events by one accountant (module docstring)."""

    epsilon: float
    delta: float
    accountant: str
    unhandled: tuple[int, ...] = ()


def check_accountants(accountant: Any) -> tuple[str, ...]:
    """``"basic"``, ``"zcdp"``, ``"pld"`` or a sequence of them, as a tuple in report order."""
    names = (accountant,) if isinstance(accountant, str) else accountant
    try:
        chosen = tuple(dict.fromkeys(names))
    except TypeError:
        chosen = ()
    if not chosen or any(n not in ACCOUNTANTS for n in chosen):
        raise ValidationError(
            f"accountant: {accountant!r} is not accepted; use one of {', '.join(ACCOUNTANTS)} "
            "or a list of them"
        )
    return tuple(n for n in ACCOUNTANTS if n in chosen)


def _basic(events: Sequence[Event]) -> Composition:
    points = [e.point() for e in events]
    missing = tuple(i for i, p in enumerate(points) if p is None)
    known = [p for p in points if p is not None]
    eps = math.inf if missing else math.fsum(p[0] for p in known)
    return Composition(eps, math.fsum(p[1] for p in known), "basic", missing)


def _hybrid(
    name: str,
    events: Sequence[Event],
    delta: float,
    handle: Callable[[Sequence[Event]], tuple[list[int], Callable[[float], float]]],
) -> Composition:
    """Compose what ``handle`` takes at the delta that basic composition of the rest leaves.

    ``handle(events)`` returns the indices it takes and ``epsilon_at(delta)`` for them.
    """
    taken, epsilon_at = handle(events)
    rest = [i for i in range(len(events)) if i not in set(taken)]
    others = _basic([events[i] for i in rest])
    if not taken:
        return Composition(others.epsilon, others.delta, name, tuple(rest))
    left = delta - others.delta
    eps = math.inf if left <= 0 or math.isinf(others.epsilon) else epsilon_at(left)
    return Composition(others.epsilon + eps, delta, name, tuple(rest))


def _zcdp_part(events: Sequence[Event]) -> tuple[list[int], Callable[[float], float]]:
    rhos = [e.zcdp_rho() for e in events]
    taken = [i for i, r in enumerate(rhos) if r is not None]
    rho = math.fsum(rhos[i] for i in taken)
    return taken, lambda left: zcdp_epsilon(rho, left)


def _pld_part(events: Sequence[Event], grid: float) -> tuple[list[int], Callable[[float], float]]:
    groups: dict[tuple, list[int]] = {}
    for i, e in enumerate(events):
        groups.setdefault(e.law_key(), []).append(i)
    taken: list[int] = []
    total: PLD | None = None
    for idx in sorted(groups.values(), key=len):
        one = events[idx[0]].pld(grid)
        if one is None:
            continue
        taken += idx
        part = one.self_compose(len(idx))
        total = part if total is None else total.compose(part)
    return sorted(taken), (lambda left: total.epsilon(left))


def compose_events(
    events: Iterable[Event],
    delta: float,
    accountants: str | Sequence[str] = ACCOUNTANTS,
    *,
    grid: float = PLD_GRID,
) -> dict[str, Composition]:
    """The composition of ``events`` at total ``delta`` by each accountant (module
    docstring): no budget, no data, nothing charged. ``grid`` is the PLD accountant's."""
    evs = list(events)
    for i, e in enumerate(evs):
        if not isinstance(e, Event):
            raise ValidationError(f"events[{i}]: {type(e).__name__} is not a privacy event")
    delta = check_delta(delta)
    if not (isinstance(grid, float) and 1e-5 <= grid <= 0.1):
        raise ValidationError(f"grid: {grid!r} is out of range; accepted: a float in [1e-5, 0.1]")
    out = {}
    for name in check_accountants(accountants):
        if name == "basic":
            out[name] = _basic(evs)
        elif name == "zcdp":
            out[name] = _hybrid(name, evs, delta, _zcdp_part)
        else:
            out[name] = _hybrid(name, evs, delta, lambda e: _pld_part(e, grid))
    return out


def best(results: Mapping[str, Composition]) -> Composition:
    """The composition with the smallest epsilon (the first in report order on a tie)."""
    return min(results.values(), key=lambda c: (c.epsilon, ACCOUNTANTS.index(c.accountant)))
