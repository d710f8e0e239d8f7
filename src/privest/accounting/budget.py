"""A privacy budget kept across queries, in memory or in a ledger file (docs/budget.md).

``Budget`` = a total (epsilon, delta) + an accountant + a ledger of spends. A mechanism
given ``budget=`` charges the **event** of its guarantee (:mod:`privest.accounting.events`)
**before it reads any data**: the events so far and the new one are composed by the
budget's accountants (:mod:`privest.accounting.accountants`; the smallest epsilon wins) and
the spend is refused (:class:`~privest.errors.BudgetExceededError`, nothing released,
nothing recorded) when the composition would exceed the total. A spend stays recorded when
the release then fails on the data: that failure is itself an output that depends on it.

The accountant is ``("basic", "zcdp")`` unless chosen: both stay valid when each query is
chosen after seeing the results of the ones before. ``"pld"`` (tight) holds for events
fixed in advance; reports always show its figure.

Parallel composition: :meth:`Budget.charge_parallel` (or ``partitions=`` of
:func:`charge`) charges one release on each of several disjoint partitions of the data as
a :class:`~privest.accounting.events.ParallelEvent`: the cost of the worst partition, not
the sum.

A ledger file (``Budget.create(path, ...)``, ``Budget.open(path)``,
:mod:`privest.accounting.ledger`) makes the budget outlive the process and follow it into
other processes (a ledger-backed budget pickles as its file; an in-memory one refuses to be
pickled). Each charge re-reads the file, composes, and appends under an exclusive lock with
an atomic, fsynced replace (:mod:`privest.durable`); a symbolic link is the file it points
to, a file with several hard links is refused. The ledger protects a curator against
mistakes, not against someone who can edit the file.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from privest.accounting.accountants import (
    ACCOUNTANTS,
    Composition,
    best,
    check_accountants,
    compose_events,
)
from privest.accounting.base import Guarantee
from privest.accounting.events import Event, ParallelEvent
from privest.accounting.ledger import (
    Spend,
    check_label,
    display_label,
    point_event,
    read_ledger,
    write_document,
)
from privest.errors import BudgetExceededError, StoreError, ValidationError
from privest.validation import check_delta, check_epsilon

__all__ = ["DEFAULT_ACCOUNTANT", "Budget", "Composition", "Spend", "charge", "compose"]

#: the accountants a budget admits by unless told otherwise (module docstring)
DEFAULT_ACCOUNTANT = ("basic", "zcdp")
#: how long a query waits for another query holding the ledger's lock (seconds)
LEDGER_TIMEOUT = 60.0


def compose(
    spends: Sequence[Spend], total_delta: float, accountant: Any = DEFAULT_ACCOUNTANT
) -> Composition:
    """The smallest-epsilon composition of ``spends`` within ``total_delta`` by the
    accountants named (:func:`~privest.accounting.accountants.compose_events`)."""
    return best(compose_events([s.event for s in spends], total_delta, accountant))


def event_of(guarantee: Any, epsilon: float | None = None) -> Event:
    """The event a mechanism's ``guarantee`` is charged as; ``epsilon`` is the point of a
    curve at which basic composition charges it (its delta there is computed from the
    curve, never taken from the caller)."""
    if isinstance(guarantee, Event):
        return guarantee
    if not isinstance(guarantee, Guarantee):
        raise ValidationError(f"guarantee: a {type(guarantee).__name__} is not a Guarantee")
    return guarantee.event(None if epsilon is None else check_epsilon(epsilon))


class Budget:
    """A total (epsilon, delta), an accountant and the spends charged (module docstring).

    ``Budget(2.0, 1e-6)`` lives in memory; ``Budget.create(path, 2.0, 1e-6)`` and
    ``Budget.open(path)`` keep it in a ledger file shared by processes (and the CLI's
    ``--budget``). ``accountant``: ``"basic"``, ``"zcdp"``, ``"pld"`` or a list of them.
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        accountant: str | Sequence[str] = DEFAULT_ACCOUNTANT,
        ledger: str | Path | None = None,
    ):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.accountant = check_accountants(accountant)
        self.ledger = None if ledger is None else Path(ledger)
        self._spends: list[Spend] = []

    def __copy__(self) -> Budget:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Budget:
        """A budget is one shared account: copies of an estimator (``sklearn.base.clone``,
        a grid search) must spend from it, not from a copy of it."""
        return self

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Into another process a ledger-backed budget goes as its file, so that the spends
        there are charged to the same ledger; an in-memory budget cannot go."""
        if self.ledger is None:
            raise pickle.PicklingError(
                "budget: an in-memory Budget cannot be sent to another process (n_jobs > 1, "
                "a process pool, pickle): the spends there would not reach this budget. "
                "Use a ledger file (Budget.create(path, epsilon, delta)), which every "
                "process charges, or n_jobs=1"
            )
        return (Budget.open, (str(self._file()),))

    # -- ledger files ---------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | Path,
        epsilon: float,
        delta: float = 0.0,
        *,
        accountant: str | Sequence[str] = DEFAULT_ACCOUNTANT,
    ) -> Budget:
        """A new ledger file at ``path`` with the given total (refuses to overwrite one)."""
        from privest.durable import write_json_atomic

        budget = cls(epsilon, delta, accountant=accountant, ledger=path)
        with budget._lock() as real:
            if real.exists():
                raise StoreError(f"budget: {str(path)!r} exists; open it with Budget.open")
            write_json_atomic(real, budget._document())
        return budget

    @classmethod
    def open(cls, path: str | Path) -> Budget:
        """The budget kept in the ledger file ``path``."""
        budget = cls(1.0, ledger=path)
        budget._load(read_ledger(budget._file(), DEFAULT_ACCOUNTANT))
        return budget

    def _file(self) -> Path:
        from privest.durable import real_file

        return real_file(self.ledger, "budget")

    def _load(self, doc: dict[str, Any]) -> list[Spend]:
        self.epsilon, self.delta = doc["epsilon"], doc["delta"]
        self.accountant = doc["accountant"]
        self._spends = doc["spends"]
        return self._spends

    @contextmanager
    def _lock(self) -> Iterator[Path]:
        """Lock the real file behind the ledger path (the one replaced); yields it."""
        from privest.durable import exclusive_lock

        real = self._file()
        busy = StoreError(
            f"budget: another query has held {str(self.ledger)!r} for over {LEDGER_TIMEOUT:g} s"
        )
        with exclusive_lock(real.with_name(real.name + ".lock"), LEDGER_TIMEOUT, busy):
            if self._file() != real:
                raise StoreError(f"budget: {str(self.ledger)!r} was re-linked meanwhile")
            yield real

    def _document(self) -> dict[str, Any]:
        return write_document(self.epsilon, self.delta, self.accountant, self._spends)

    # -- spending -------------------------------------------------------------------------
    @property
    def spends(self) -> tuple[Spend, ...]:
        """The spends charged so far (re-read from the ledger file when there is one)."""
        if self.ledger is not None:
            self._load(read_ledger(self._file(), DEFAULT_ACCOUNTANT))
        return tuple(self._spends)

    def accounting(self, accountants: Any = ACCOUNTANTS) -> dict[str, Composition]:
        """The spends composed at the total delta by each accountant (also the ones this
        budget does not admit by)."""
        return compose_events([s.event for s in self.spends], self.delta, accountants)

    def spent(self) -> Composition:
        """The composed guarantee of the spends so far, by this budget's accountant."""
        return best(self.accounting(self.accountant))

    def remaining(self) -> tuple[float, float]:
        """(epsilon, delta) left under the accountant that gives the smaller epsilon."""
        c = self.spent()
        return max(0.0, self.epsilon - c.epsilon), max(0.0, self.delta - c.delta)

    def charge(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        rho: float | None = None,
        label: str = "",
        mechanism: str = "",
    ) -> Spend:
        """Charge (epsilon, delta)-DP (pure when delta is 0), or raise
        :class:`BudgetExceededError` and record nothing. ``rho`` is checked against the
        one the spend implies (:func:`~privest.accounting.ledger.point_event`)."""
        return self.charge_event(point_event(epsilon, delta, rho), label=label, mechanism=mechanism)

    def charge_guarantee(
        self,
        guarantee: Any,
        *,
        label: str,
        mechanism: str,
        epsilon: float | None = None,
        delta: float | None = None,
        partitions: int = 1,
    ) -> Spend:
        """Charge a mechanism's guarantee (its event) before the mechanism reads any data.

        ``epsilon``: the point of a curve at which basic composition charges it (a ZIL
        release's calibration epsilon); ``delta``, the mechanism's target there, is not
        used: the delta is computed from the guarantee. ``partitions``: the release is
        made on that many disjoint partitions, each with this guarantee
        (:meth:`charge_parallel`).
        """
        event = event_of(guarantee, epsilon)
        if partitions != 1:
            event = ParallelEvent(((partitions, event),))
        return self.charge_event(event, label=label, mechanism=mechanism)

    def charge_parallel(
        self,
        guarantees: Sequence[Any],
        *,
        label: str,
        mechanism: str,
        epsilon: float | None = None,
        touched: int = 1,
    ) -> Spend:
        """Charge one release on each of several disjoint partitions of the data, one
        guarantee (or event) per partition: the cost of the ``touched`` worst, not the sum.

        ``touched``: how many partitions one neighbour may change (1: a unit added or
        removed, or partitions keyed by public facts; 2: a swap that may move a record
        between partitions); :class:`~privest.accounting.events.ParallelEvent`.
        """
        if isinstance(guarantees, (str, bytes)) or not isinstance(guarantees, Sequence):
            raise ValidationError("guarantees: must be a list, one per partition")
        events = [event_of(g, epsilon) for g in guarantees]
        if not events:
            raise ValidationError("guarantees: the list of partitions is empty")
        return self.charge_event(
            ParallelEvent.of(events, touched), label=label, mechanism=mechanism
        )

    def charge_event(self, event: Event, *, label: str = "", mechanism: str = "") -> Spend:
        """Charge a privacy event, or raise :class:`BudgetExceededError` and record nothing."""
        if not isinstance(event, Event):
            raise ValidationError(f"event: a {type(event).__name__} is not a privacy event")
        check_label(label)
        check_label(mechanism, "mechanism")
        self._check_chargeable(event)
        when = datetime.now(UTC).isoformat(timespec="seconds")
        spend = Spend(label or mechanism or "query", mechanism=mechanism, time=when, event=event)
        if self.ledger is None:
            self._admit(self._spends, spend)
            self._spends.append(spend)
            return spend
        from privest.durable import write_json_atomic

        with self._lock() as real:
            before = self._load(read_ledger(real, DEFAULT_ACCOUNTANT))
            self._admit(before, spend)
            self._spends = [*before, spend]
            write_json_atomic(real, self._document())
        return spend

    def _check_chargeable(self, event: Event) -> None:
        """Refuse an event none of this budget's accountants can compose."""
        if event.point() is not None:
            return
        if "zcdp" in self.accountant and event.zcdp_rho() is not None:
            return
        if "pld" in self.accountant and event.pld(0.01) is not None:
            return
        raise ValidationError(
            f"budget: {event.describe()} holds at every (epsilon, delta(epsilon)) of a curve; "
            "give the epsilon at which to charge it (budget_epsilon= in Python, "
            "--budget-epsilon on the command line), or use a budget whose accountant "
            "composes curves (accountant='pld', docs/budget.md)"
        )

    def _admit(self, spends: Sequence[Spend], spend: Spend) -> None:
        events = [*(s.event for s in spends), spend.event]
        quick = [a for a in self.accountant if a != "pld"]  # the PLD only when they refuse
        results = compose_events(events, self.delta, quick) if quick else {}
        if not results or not self._within(best(results)):
            results = compose_events(events, self.delta, self.accountant)
        if self._within(best(results)):
            return
        now = compose(spends, self.delta, self.accountant)
        raise BudgetExceededError(
            f"budget: {display_label(spend.label)!r} needs {spend.event.describe()}; with the "
            f"{len(spends)} earlier spends (epsilon={now.epsilon:.4g}, delta={now.delta:.3g}, "
            f"{now.accountant} composition) it would exceed the total (epsilon={self.epsilon:g}, "
            f"delta={self.delta:g}). Nothing was read or released."
        )

    def _within(self, c: Composition) -> bool:
        return c.epsilon <= self.epsilon * (1 + 1e-12) and c.delta <= self.delta * (1 + 1e-12)

    # -- reporting ------------------------------------------------------------------------
    def report(self) -> str:
        """The spends, the composition by every accountant, and what is left."""
        spends = self.spends
        names = "+".join(self.accountant)
        head = f"privacy budget: epsilon={self.epsilon:g}, delta={self.delta:g}; admits by {names}"
        lines = [head + (f" (ledger {self.ledger})" if self.ledger is not None else "")]
        for i, s in enumerate(spends, 1):
            at = "" if s.epsilon is None else f"; epsilon={s.epsilon:.4g}, delta={s.delta:.3g}"
            rho = "" if s.rho is None else f", rho={s.rho:.4g}"
            mech = f" ({display_label(s.mechanism)})" if s.mechanism else ""
            lines.append(f"  {i:>3}. {display_label(s.label)}: {s.event.describe()}{at}{rho}{mech}")
        every = compose_events([s.event for s in spends], self.delta)
        lines.append(f"composed at delta={self.delta:g}, by accountant:")
        for name, c in every.items():
            note = "" if not c.unhandled else f" ({len(c.unhandled)} by basic composition)"
            used = "" if name in self.accountant else " (not used to admit: docs/budget.md)"
            lines.append(f"  {name:<5} epsilon={c.epsilon:.4g}, delta={c.delta:.3g}{note}{used}")
        chosen = best({k: v for k, v in every.items() if k in self.accountant})
        eps_left = max(0.0, self.epsilon - chosen.epsilon)
        delta_left = max(0.0, self.delta - chosen.delta)
        lines.append(
            f"reported ({chosen.accountant}, the smallest epsilon of {names}): "
            f"epsilon={chosen.epsilon:.4g}, delta={chosen.delta:.3g}; left: "
            f"epsilon={eps_left:.4g}, delta={delta_left:.3g}"
        )
        tight = every["pld"]
        if "pld" not in self.accountant and tight.epsilon < chosen.epsilon * (1 - 1e-3):
            lines.append(f"tighter (pld, for spends fixed in advance): epsilon={tight.epsilon:.4g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        where = "" if self.ledger is None else f", ledger={str(self.ledger)!r}"
        acc = "" if self.accountant == DEFAULT_ACCOUNTANT else f", accountant={self.accountant}"
        head = f"Budget(epsilon={self.epsilon:g}, delta={self.delta:g}{acc}{where})"
        try:
            n, used, (eps_left, delta_left) = len(self.spends), self.spent(), self.remaining()
        except (StoreError, OSError, ValidationError):  # an unreadable ledger: say no more
            return head
        return (
            f"{head}: a privacy budget; spent epsilon={used.epsilon:.4g}, delta="
            f"{used.delta:.3g} ({used.accountant}) in {n} spend(s); left epsilon={eps_left:.4g}, "
            f"delta={delta_left:.3g}; .report() lists them"
        )

    def _repr_html_(self) -> str:
        """Notebook view: total, used and left, the spends, every accountant."""
        from privest.reports.reprs import budget_html

        return budget_html(self)


def charge(
    budget: Budget | None,
    guarantee: Any,
    *,
    label: str,
    mechanism: str,
    epsilon: float | None = None,
    delta: float | None = None,
    partitions: int = 1,
) -> Spend | None:
    """Charge ``budget`` (if any) for one release; every entry point calls this first.

    ``partitions``: the release is made on that many disjoint partitions of the data, each
    with this guarantee: the cost of one (:meth:`Budget.charge_parallel`).
    """
    if budget is None:
        return None
    if not isinstance(budget, Budget):
        raise ValidationError(
            f"budget: a {type(budget).__name__} is not a privest.Budget (or None)"
        )
    return budget.charge_guarantee(
        guarantee,
        label=label,
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        partitions=partitions,
    )
