"""A privacy budget kept across queries, in memory or in a ledger file (docs/budget.md).

A :class:`Budget` holds a total (epsilon, delta) and the list of spends charged to it. A
mechanism given ``budget=`` charges its spend **before it reads any data**: the spend is
composed with the earlier ones and refused (:class:`~privest.errors.BudgetExceededError`,
nothing released, nothing recorded) when the composition would exceed the total. A spend
stays recorded even when the release then fails on the data, because such a failure is
itself an output that depends on the data.

Composition. Two accountants, both valid for every sequence of (adaptively chosen)
mechanisms; the report states which one it uses and takes the better (smaller epsilon
within the total delta):

* ``basic``: sequential composition, (sum of epsilons, sum of deltas) (Dwork and Roth
  2014, Thm. 3.16);
* ``zcdp``: the spends that are rho-zCDP (pure epsilon-DP steps: rho = eps^2 / 2, Bun and
  Steinke 2016, Prop. 1.4; discrete Gaussian steps: rho = shift^2 / (2 sigma^2), Canonne,
  Kamath and Steinke 2020) add their rho's and are converted once with the tight
  conversion (:mod:`privest.accounting.zcdp`) at the delta the other spends leave; the
  other spends (PTR, ePTR, a ZIL release) add by basic composition.

A ledger file (``Budget.create(path, ...)``, ``Budget.open(path)``) makes the budget
outlive the process: each charge re-reads the file, composes, and appends under an
exclusive lock with an atomic, fsynced replace (the release store's rules,
:mod:`privest.durable`), so concurrent queries cannot overspend and a crash loses no
recorded spend. The ledger protects a curator against mistakes, not against someone who
can edit the file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from privest.errors import BudgetExceededError, StoreError, ValidationError
from privest.validation import check_delta, check_epsilon

__all__ = ["Budget", "Composition", "Spend", "charge", "compose"]

LEDGER_FORMAT = "privest-budget-ledger"
LEDGER_VERSION = 1
#: how long a query waits for another query holding the ledger's lock (seconds)
LEDGER_TIMEOUT = 60.0


@dataclass(frozen=True)
class Spend:
    """One charge: its (epsilon, delta), its zCDP rho when it has one, a label."""

    label: str
    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    mechanism: str = ""
    time: str = ""


@dataclass(frozen=True)
class Composition:
    """The composed guarantee of a list of spends, and the accountant that gave it."""

    epsilon: float
    delta: float
    accountant: str


def _basic(spends: Sequence[Spend]) -> Composition:
    return Composition(
        math.fsum(s.epsilon for s in spends), math.fsum(s.delta for s in spends), "basic"
    )


def _zcdp(spends: Sequence[Spend], total_delta: float) -> Composition | None:
    from privest.accounting.zcdp import zcdp_epsilon

    zc = [s for s in spends if s.rho is not None]
    if not zc:
        return None
    rest = _basic([s for s in spends if s.rho is None])
    left = total_delta - rest.delta
    if left <= 0:
        return None
    eps = zcdp_epsilon(math.fsum(s.rho for s in zc), left)
    return Composition(rest.epsilon + eps, total_delta, "zcdp")


def compose(spends: Sequence[Spend], total_delta: float) -> Composition:
    """The better of the basic and the zCDP accountant within ``total_delta`` (module doc)."""
    basic = _basic(spends)
    zc = _zcdp(spends, total_delta)
    if zc is not None and zc.epsilon < basic.epsilon:
        return zc
    return basic


def spend_of(
    guarantee: Any, epsilon: float | None, delta: float | None
) -> tuple[float, float, Any]:
    """(epsilon, delta, rho) of a mechanism's guarantee; ``epsilon``/``delta`` its target."""
    from privest.accounting.base import ApproxDP
    from privest.accounting.gaussian import LatticeGaussianGuarantee

    if isinstance(guarantee, LatticeGaussianGuarantee):
        return float(epsilon), float(delta), guarantee.zcdp_rho
    if isinstance(guarantee, ApproxDP):
        eps, dlt = guarantee.eps, guarantee.dlt
        return eps, dlt, (eps * eps / 2.0 if dlt == 0 else None)
    if epsilon is None:
        raise ValidationError(
            f"budget: {type(guarantee).__name__} holds at every (epsilon, delta(epsilon)) of "
            "a curve; give the epsilon at which to charge it (budget_epsilon= in Python, "
            "--budget-epsilon on the command line)"
        )
    return float(epsilon), float(guarantee.delta(float(epsilon))), None


class Budget:
    """A total (epsilon, delta) and the spends charged to it (module docstring).

    ``Budget(2.0, 1e-6)`` lives in memory; ``Budget.create(path, 2.0, 1e-6)`` and
    ``Budget.open(path)`` keep it in a ledger file shared by processes (and the CLI's
    ``--budget``).
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, ledger: str | Path | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.ledger = None if ledger is None else Path(ledger)
        self._spends: list[Spend] = []

    def __copy__(self) -> Budget:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Budget:
        """A budget is one shared account: copies of an estimator (``sklearn.base.clone``,
        a grid search) must spend from it, not from a copy of it."""
        return self

    # -- ledger files ---------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, epsilon: float, delta: float = 0.0) -> Budget:
        """A new ledger file at ``path`` with the given total (refuses to overwrite one)."""
        from privest.durable import write_json_atomic

        budget = cls(epsilon, delta, ledger=path)
        p = budget.ledger
        with budget._lock():
            if p.exists():
                raise StoreError(f"budget: {str(p)!r} exists; open it with Budget.open")
            write_json_atomic(p, budget._document())
        return budget

    @classmethod
    def open(cls, path: str | Path) -> Budget:
        """The budget kept in the ledger file ``path``."""
        doc = _read_ledger(Path(path))
        budget = cls(doc["epsilon"], doc["delta"], ledger=path)
        budget._spends = doc["spends"]
        return budget

    def _lock(self) -> Any:
        from privest.durable import exclusive_lock

        busy = StoreError(
            f"budget: another query has held {str(self.ledger)!r} for over {LEDGER_TIMEOUT:g} s"
        )
        return exclusive_lock(
            self.ledger.with_name(self.ledger.name + ".lock"), LEDGER_TIMEOUT, busy
        )

    def _document(self) -> dict[str, Any]:
        return {
            "format": LEDGER_FORMAT,
            "version": LEDGER_VERSION,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "spends": [asdict(s) for s in self._spends],
        }

    # -- spending -------------------------------------------------------------------------
    @property
    def spends(self) -> tuple[Spend, ...]:
        """The spends charged so far (re-read from the ledger file when there is one)."""
        if self.ledger is not None:
            self._spends = _read_ledger(self.ledger)["spends"]
        return tuple(self._spends)

    def spent(self) -> Composition:
        """The composed guarantee of the spends so far."""
        return compose(self.spends, self.delta)

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
        """Record a spend, or raise :class:`BudgetExceededError` and record nothing."""
        spend = Spend(
            label or mechanism or "query",
            check_epsilon(epsilon),
            check_delta(delta),
            rho,
            mechanism,
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        if self.ledger is None:
            self._admit(self._spends, spend)
            self._spends.append(spend)
            return spend
        from privest.durable import write_json_atomic

        with self._lock():
            doc = _read_ledger(self.ledger)
            self.epsilon, self.delta = doc["epsilon"], doc["delta"]
            self._admit(doc["spends"], spend)
            self._spends = [*doc["spends"], spend]
            write_json_atomic(self.ledger, self._document())
        return spend

    def charge_guarantee(
        self,
        guarantee: Any,
        *,
        label: str,
        mechanism: str,
        epsilon: float | None = None,
        delta: float | None = None,
    ) -> Spend:
        """Charge a mechanism's guarantee (pure, approximate, discrete Gaussian, or a curve
        charged at ``epsilon``), before the mechanism reads any data."""
        eps, dlt, rho = spend_of(guarantee, epsilon, delta)
        return self.charge(eps, dlt, rho=rho, label=label, mechanism=mechanism)

    def _admit(self, spends: Sequence[Spend], spend: Spend) -> None:
        after = compose([*spends, spend], self.delta)
        if after.epsilon > self.epsilon * (1 + 1e-12) or after.delta > self.delta * (1 + 1e-12):
            now = compose(spends, self.delta)
            raise BudgetExceededError(
                f"budget: {spend.label!r} needs (epsilon={spend.epsilon:.4g}, "
                f"delta={spend.delta:.3g}); with the {len(spends)} earlier spends "
                f"(epsilon={now.epsilon:.4g}, delta={now.delta:.3g}, {now.accountant} "
                f"composition) it would exceed the total (epsilon={self.epsilon:g}, "
                f"delta={self.delta:g}). Nothing was read or released."
            )

    # -- reporting ------------------------------------------------------------------------
    def report(self) -> str:
        """The spends, the composed total under both accountants, and what is left."""
        spends = self.spends
        lines = [f"privacy budget: epsilon={self.epsilon:g}, delta={self.delta:g}"]
        if self.ledger is not None:
            lines[0] += f" (ledger {self.ledger})"
        for i, s in enumerate(spends, 1):
            rho = "" if s.rho is None else f", rho={s.rho:.4g}"
            lines.append(
                f"  {i:>3}. {s.label}: epsilon={s.epsilon:.4g}, delta={s.delta:.3g}{rho}"
                + (f" ({s.mechanism})" if s.mechanism else "")
            )
        basic, zc = _basic(spends), _zcdp(spends, self.delta)
        lines.append(
            f"spent (basic composition): epsilon={basic.epsilon:.4g}, delta={basic.delta:.3g}"
        )
        if zc is not None:
            lines.append(
                f"spent (zCDP for the pure and Gaussian steps): epsilon={zc.epsilon:.4g}, "
                f"delta={zc.delta:.3g}"
            )
        best = compose(spends, self.delta)
        eps_left, delta_left = self.remaining()
        lines.append(
            f"reported ({best.accountant}, the smaller epsilon): epsilon={best.epsilon:.4g}, "
            f"delta={best.delta:.3g}; left: epsilon={eps_left:.4g}, delta={delta_left:.3g}"
            + (" (the zCDP conversion uses the whole delta)" if best.accountant == "zcdp" else "")
        )
        return "\n".join(lines)

    def __repr__(self) -> str:
        where = "" if self.ledger is None else f", ledger={str(self.ledger)!r}"
        return f"Budget(epsilon={self.epsilon:g}, delta={self.delta:g}{where})"


def charge(
    budget: Budget | None,
    guarantee: Any,
    *,
    label: str,
    mechanism: str,
    epsilon: float | None = None,
    delta: float | None = None,
) -> Spend | None:
    """Charge ``budget`` (if any) for one release; every entry point calls this first."""
    if budget is None:
        return None
    if not isinstance(budget, Budget):
        raise ValidationError(f"budget: {budget!r} is not a privest.Budget (or None)")
    return budget.charge_guarantee(
        guarantee, label=label, mechanism=mechanism, epsilon=epsilon, delta=delta
    )


def _read_ledger(path: Path) -> dict[str, Any]:
    """Parse and check a ledger file; a damaged one is refused, never repaired silently."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise StoreError(
            f"budget: no ledger at {str(path)!r}; create one with `privest budget "
            f"{path} --epsilon E --delta D`"
        ) from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"budget: {str(path)!r} is not a readable ledger ({exc})") from None
    try:
        if doc["format"] != LEDGER_FORMAT or doc["version"] != LEDGER_VERSION:
            raise ValueError("format")
        spends = [Spend(**s) for s in doc["spends"]]
        for s in spends:
            check_epsilon(s.epsilon)
            check_delta(s.delta)
        return {
            "epsilon": check_epsilon(doc["epsilon"]),
            "delta": check_delta(doc["delta"]),
            "spends": spends,
        }
    except (KeyError, TypeError, ValueError):
        raise StoreError(f"budget: {str(path)!r} is not a privest budget ledger") from None
