"""Privacy events: what a mechanism's guarantee says, in the form accountants compose and
a budget ledger stores (docs/budget.md, "Events").

Every guarantee emits one (``guarantee.event(epsilon=None)``). An event describes the worst
pair of output laws of a mechanism on neighbours, not a number: a later, tighter
accountant can re-account a ledger of events. Each event answers three questions, each by
``None`` when it cannot:

* ``point()``: the (epsilon, delta) at which basic composition charges it. Pure and
  approximate DP events have one; a curve (Gaussian, zCDP, a trade-off curve) has one only
  when it was given the ``epsilon`` to be charged at (what the mechanism was calibrated
  for), and its delta there is computed from the curve, never taken from the caller;
* ``zcdp_rho()``: its zCDP rho (Bun and Steinke 2016: pure eps-DP is eps^2/2-zCDP, Prop
  1.4; a Gaussian of sensitivity/sigma mu is mu^2/2-zCDP, Prop 1.6; a discrete Gaussian
  shift^2/(2 sigma^2), Canonne, Kamath and Steinke 2020, Prop 5);
* ``pld(grid)``: its privacy-loss distribution (:mod:`privest.accounting.pld`).

``to_dict()`` / :func:`event_from_dict` round-trip every event through JSON exactly;
:func:`event_from_dict` checks every field and refuses a malformed one with one
:class:`~privest.errors.ValidationError` naming it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

import numpy as np

from privest.accounting.pld import LOSS_MAX, PLD, pld_from_atoms, pld_from_law
from privest.errors import ValidationError
from privest.validation import _short

__all__ = [
    "ApproxDPEvent",
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "Event",
    "GaussianEvent",
    "ParallelEvent",
    "PureDPEvent",
    "TradeoffEvent",
    "ZCDPEvent",
    "event_from_dict",
]

#: nested composed / parallel events deeper than this are refused (a damaged ledger)
MAX_DEPTH = 32
#: the trade-off curves a TradeoffEvent may name (paper 000, Thm 3.1 and eq 3.3)
CURVES = ("zil_laplace", "zil_beta")


def _real(value: Any, where: str, *, low: float = 0.0, open_low: bool = False) -> float:
    """A finite real number (not a bool, not a string) >= low (> low when open_low)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValidationError(f"{where}: {_short(value)} is not a real number")
    x = float(value)
    ok = (x > low) if open_low else (x >= low)
    if not (ok and math.isfinite(x)):
        raise ValidationError(
            f"{where}: {x!r} is out of range; accepted: finite and {'>' if open_low else '>='} "
            f"{low:g}"
        )
    return x


def _point_epsilon(value: Any, where: str) -> float | None:
    return None if value is None else _real(value, where)


class Event(ABC):
    """Base class of privacy events (module docstring)."""

    kind: ClassVar[str] = ""
    _kinds: ClassVar[dict[str, type[Event]]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.kind:
            Event._kinds[cls.kind] = cls

    @abstractmethod
    def point(self) -> tuple[float, float] | None:
        """(epsilon, delta) for basic composition, or ``None``."""

    def zcdp_rho(self) -> float | None:
        """The zCDP rho, or ``None`` when the event is not zCDP."""
        return None

    def pld(self, grid: float) -> PLD | None:
        """The privacy-loss distribution on ``grid``, or ``None`` when there is none."""
        return None

    def law(self) -> tuple:
        """What the tight accountants read: the event without its charging point."""
        return tuple((f.name, getattr(self, f.name)) for f in fields(self) if f.name != "epsilon")

    def law_key(self) -> tuple:
        """``(kind, law)``: equal for events the PLD accountant treats as one."""
        return (self.kind, self.law())

    def dominates(self, other: Event) -> bool:
        """Whether ``other``'s trade-off curve lies on or above this one's (``other`` is
        at least as private), known without computing either."""
        return other.law_key() == self.law_key()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description; :func:`event_from_dict` inverts it exactly."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            out[f.name] = getattr(self, f.name)
        return out

    @classmethod
    def _from_fields(cls, data: dict[str, Any], where: str, depth: int) -> Event:
        return cls(**{k: v for k, v in data.items() if k != "kind"})

    def describe(self) -> str:
        """A short text, e.g. ``"0.5-DP"``, ``"Gaussian(mu=1)"``."""
        return repr(self)


def event_from_dict(data: Any, where: str = "event", _depth: int = 0) -> Event:
    """The event :meth:`Event.to_dict` wrote, every field checked (module docstring)."""
    if _depth > MAX_DEPTH:
        raise ValidationError(f"{where}: events nested deeper than {MAX_DEPTH}")
    if not isinstance(data, dict):
        raise ValidationError(f"{where}: {_short(data)} is not an event (a JSON object)")
    cls = Event._kinds.get(data.get("kind")) if isinstance(data.get("kind"), str) else None
    if cls is None:
        raise ValidationError(
            f"{where}.kind: {_short(data.get('kind'))} is not an event kind; accepted: "
            f"{', '.join(sorted(Event._kinds))}"
        )
    names = {f.name for f in fields(cls)} | {"kind"}
    required = {f.name for f in fields(cls) if f.default is MISSING}
    extra, missing = set(data) - names, required - set(data)
    if extra or missing:
        what = f"unknown fields {sorted(extra)}" if extra else f"missing fields {sorted(missing)}"
        raise ValidationError(f"{where}: a {cls.kind!r} event with {what}")
    try:
        return cls._from_fields(data, where, _depth)
    except ValidationError as exc:
        msg = str(exc)
        raise ValidationError(msg if msg.startswith(where) else f"{where}.{msg}") from None


# ------------------------------------------------------------------ pure and approximate
@dataclass(frozen=True)
class PureDPEvent(Event):
    """epsilon-DP. Its worst pair is randomized response (Kairouz, Oh and Viswanath 2015):
    loss +-epsilon with probabilities e^eps / (1 + e^eps) and 1 / (1 + e^eps)."""

    epsilon: float
    kind: ClassVar[str] = "pure_dp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _real(self.epsilon, "epsilon"))

    def point(self) -> tuple[float, float]:
        return self.epsilon, 0.0

    def zcdp_rho(self) -> float:
        return self.epsilon**2 / 2.0

    def pld(self, grid: float) -> PLD:
        from scipy import special

        e = self.epsilon
        return pld_from_atoms([e, -e], [special.expit(e), special.expit(-e)], 0.0, grid)

    def law(self) -> tuple:
        return (("epsilon", self.epsilon),)

    def dominates(self, other: Event) -> bool:
        return isinstance(other, PureDPEvent) and other.epsilon <= self.epsilon

    def describe(self) -> str:
        return f"{self.epsilon:.4g}-DP"


@dataclass(frozen=True)
class ApproxDPEvent(Event):
    """(epsilon, delta)-DP, 0 < delta < 1. Worst pair: randomized response with an atom of
    mass delta at loss +inf (Kairouz, Oh and Viswanath 2015, Thm 3.3)."""

    epsilon: float
    delta: float
    kind: ClassVar[str] = "approx_dp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _real(self.epsilon, "epsilon"))
        d = _real(self.delta, "delta", open_low=True)
        if d >= 1:
            raise ValidationError(f"delta: {d!r} is out of range; accepted: (0, 1)")
        object.__setattr__(self, "delta", d)

    def point(self) -> tuple[float, float]:
        return self.epsilon, self.delta

    def pld(self, grid: float) -> PLD:
        from scipy import special

        e, keep = self.epsilon, 1.0 - self.delta
        masses = [keep * special.expit(e), keep * special.expit(-e)]
        return pld_from_atoms([e, -e], masses, self.delta, grid)

    def law(self) -> tuple:
        return (("epsilon", self.epsilon), ("delta", self.delta))

    def dominates(self, other: Event) -> bool:
        if isinstance(other, PureDPEvent):
            return other.epsilon <= self.epsilon
        return (
            isinstance(other, ApproxDPEvent)
            and other.epsilon <= self.epsilon
            and other.delta <= self.delta
        )

    def describe(self) -> str:
        return f"({self.epsilon:.4g}, {self.delta:.3g})-DP"


# ------------------------------------------------------------------ curves
@dataclass(frozen=True)
class ZCDPEvent(Event):
    """rho-zCDP (Bun and Steinke 2016), charged by basic composition at ``epsilon`` when
    given (delta from the tight conversion, :mod:`privest.accounting.zcdp`). No PLD: a
    zCDP bound has no single worst pair."""

    rho: float
    epsilon: float | None = None
    kind: ClassVar[str] = "zcdp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _real(self.rho, "rho"))
        object.__setattr__(self, "epsilon", _point_epsilon(self.epsilon, "epsilon"))

    def point(self) -> tuple[float, float] | None:
        from privest.accounting.profiles import zcdp_delta

        if self.epsilon is None:
            return None
        return self.epsilon, zcdp_delta(self.rho, self.epsilon)

    def zcdp_rho(self) -> float:
        return self.rho

    def dominates(self, other: Event) -> bool:
        return isinstance(other, ZCDPEvent) and other.rho <= self.rho

    def describe(self) -> str:
        return f"{self.rho:.4g}-zCDP"


@dataclass(frozen=True)
class GaussianEvent(Event):
    """Gaussian noise of sensitivity/sigma ``mu`` (mu-GDP): the loss under the worst pair
    is N(mu^2/2, mu^2) (Dong, Roth and Su 2022, Sec 2.3); exact profile of Balle and Wang
    (2018, Thm 8) at the charging point."""

    mu: float
    epsilon: float | None = None
    kind: ClassVar[str] = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _real(self.mu, "mu", open_low=True))
        object.__setattr__(self, "epsilon", _point_epsilon(self.epsilon, "epsilon"))

    def point(self) -> tuple[float, float] | None:
        from privest.accounting.profiles import gaussian_delta

        if self.epsilon is None:
            return None
        return self.epsilon, gaussian_delta(self.epsilon, self.mu, 1.0)

    def zcdp_rho(self) -> float:
        return self.mu**2 / 2.0

    def pld(self, grid: float) -> PLD:
        from scipy import special

        m, s = self.mu**2 / 2.0, self.mu
        return pld_from_law(
            lambda x: special.ndtr((x - m) / s),
            lambda x: special.ndtr((m - x) / s),
            m - 14.0 * s,
            m + 14.0 * s,
            0.0,
            grid,
        )

    def dominates(self, other: Event) -> bool:
        return isinstance(other, GaussianEvent) and other.mu <= self.mu

    def describe(self) -> str:
        return f"Gaussian(mu={self.mu:.4g})"


@dataclass(frozen=True)
class DiscreteGaussianEvent(Event):
    """One coordinate of discrete Gaussian noise of variance ``sigma2`` whose released
    integer moves by at most ``shift`` between neighbours (Canonne, Kamath and Steinke
    2020, Thm 7): the loss at k under N_Z(shift, sigma2) is (2 k shift - shift^2) /
    (2 sigma2), exact on |k| <= 40 sigma + shift (the rest weighs below e^-800)."""

    sigma2: float
    shift: int
    epsilon: float | None = None
    kind: ClassVar[str] = "discrete_gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma2", _real(self.sigma2, "sigma2", open_low=True))
        shift = self.shift
        if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)) or shift < 1:
            raise ValidationError(f"shift: {_short(shift)} must be an integer >= 1")
        object.__setattr__(self, "shift", int(shift))
        object.__setattr__(self, "epsilon", _point_epsilon(self.epsilon, "epsilon"))

    def point(self) -> tuple[float, float] | None:
        from privest.accounting.profiles import discrete_gaussian_delta

        if self.epsilon is None:
            return None
        return self.epsilon, discrete_gaussian_delta(self.epsilon, self.shift, self.sigma2)

    def zcdp_rho(self) -> float:
        return self.shift**2 / (2.0 * self.sigma2)

    def pld(self, grid: float) -> PLD:
        s, v = self.shift, self.sigma2
        top = int(math.ceil(40.0 * math.sqrt(v))) + s
        k = np.arange(-top, top + 1, dtype=float)
        log_w = -((k - s) ** 2) / (2.0 * v)  # N_Z(shift, sigma2), the law the loss is under
        mass = np.exp(log_w - np.logaddexp.reduce(log_w))
        return pld_from_atoms((2.0 * k * s - s * s) / (2.0 * v), mass, 0.0, grid)

    def describe(self) -> str:
        return f"discrete Gaussian(shift/sigma={self.shift / math.sqrt(self.sigma2):.4g})"


@dataclass(frozen=True)
class TradeoffEvent(Event):
    """A trade-off curve of paper 000: the ZIL mechanism's T_{1,c,z} (``"zil_laplace"``,
    exact for one noised attribute) or the bound beta_{c,z} <= T_{d,c,z} valid for every d
    (``"zil_beta"``; Thm 3.2(ii)), z = ``zero_prob`` (eq 3.3). Its pair: with probability
    z a record is released exactly (loss +inf), otherwise the Laplace loss of shift sqrt(2)
    c, or the limit experiment (3.4), a Gaussian of random mu = c / sqrt(W), W ~ Exp(1),
    whose loss has distribution function b_c(l / c) (:mod:`privest.accounting.zil`)."""

    curve: str
    c: float
    zero_prob: float
    epsilon: float | None = None
    kind: ClassVar[str] = "tradeoff"

    def __post_init__(self) -> None:
        if self.curve not in CURVES:
            raise ValidationError(
                f"curve: {_short(self.curve)} is not accepted; use one of {', '.join(CURVES)}"
            )
        object.__setattr__(self, "c", _real(self.c, "c", open_low=True))
        z = _real(self.zero_prob, "zero_prob")
        if z >= 1:
            raise ValidationError(f"zero_prob: {z!r} is out of range; accepted: [0, 1)")
        object.__setattr__(self, "zero_prob", z)
        object.__setattr__(self, "epsilon", _point_epsilon(self.epsilon, "epsilon"))

    @property
    def exact_laplace(self) -> bool:
        return self.curve == "zil_laplace"

    def point(self) -> tuple[float, float] | None:
        from privest.accounting.zil import delta_tilde

        if self.epsilon is None:
            return None
        d = float(delta_tilde(self.epsilon, self.c, self.zero_prob, self.exact_laplace))
        return self.epsilon, d

    def pld(self, grid: float) -> PLD:
        from privest.accounting.zil import zil_loss_law

        cdf, sf, lo, hi = zil_loss_law(self.c, self.exact_laplace)
        return pld_from_law(cdf, sf, lo, min(hi, LOSS_MAX), self.zero_prob, grid)

    def dominates(self, other: Event) -> bool:
        return (
            isinstance(other, TradeoffEvent)
            and (other.curve, other.zero_prob) == (self.curve, self.zero_prob)
            and other.c <= self.c
        )

    def describe(self) -> str:
        kind = "exact Laplace" if self.exact_laplace else "beta bound"
        return f"ZIL trade-off (c={self.c:.4g}, zero_prob={self.zero_prob:.3g}, {kind})"


# ------------------------------------------------------------------ compositions
def _check_event(value: Any, where: str) -> Event:
    if not isinstance(value, Event):
        raise ValidationError(f"{where}: {_short(value)} is not a privacy event")
    return value


def _compose_plds(events: list[Event], grid: float) -> PLD | None:
    """The PLD of the events run one after the other; equal laws by binary powers."""
    groups: dict[tuple, list[Event]] = {}
    for e in events:
        groups.setdefault(e.law_key(), []).append(e)
    out = None
    for same in groups.values():
        one = same[0].pld(grid)
        if one is None:
            return None
        part = one.self_compose(len(same))
        out = part if out is None else out.compose(part)
    return out


@dataclass(frozen=True)
class ComposedEvent(Event):
    """Sequential composition: the events' mechanisms run one after the other, each chosen
    after seeing the outputs of the ones before (Dong, Roth and Su 2022, Thm 3.2)."""

    events: tuple[Event, ...]
    kind: ClassVar[str] = "composed"

    def __post_init__(self) -> None:
        evs = tuple(self.events) if isinstance(self.events, (list, tuple)) else None
        if not evs:
            raise ValidationError(f"events: {_short(self.events)} must be a non-empty list")
        evs = tuple(_check_event(e, f"events[{i}]") for i, e in enumerate(evs))
        object.__setattr__(self, "events", evs)

    def point(self) -> tuple[float, float] | None:
        pts = [e.point() for e in self.events]
        if any(p is None for p in pts):
            return None
        return math.fsum(p[0] for p in pts), math.fsum(p[1] for p in pts)

    def zcdp_rho(self) -> float | None:
        rhos = [e.zcdp_rho() for e in self.events]
        return None if any(r is None for r in rhos) else math.fsum(rhos)

    def pld(self, grid: float) -> PLD | None:
        return _compose_plds(list(self.events), grid)

    def law(self) -> tuple:
        return tuple(e.law_key() for e in self.events)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "events": [e.to_dict() for e in self.events]}

    @classmethod
    def _from_fields(cls, data: dict[str, Any], where: str, depth: int) -> Event:
        evs = data["events"]
        if not isinstance(evs, list) or not evs:
            raise ValidationError(f"{where}.events: must be a non-empty list")
        return cls(
            tuple(event_from_dict(e, f"{where}.events[{i}]", depth + 1) for i, e in enumerate(evs))
        )

    def describe(self) -> str:
        return " + ".join(e.describe() for e in self.events)


@dataclass(frozen=True)
class ParallelEvent(Event):
    """Parallel composition over disjoint partitions (McSherry 2009, Thm 4): ``parts``
    lists ``(count, event)``, ``count`` disjoint partitions each released with ``event``.
    A neighbour changes at most ``touched`` partitions: 1 when one unit is added or
    removed, or when a change stays inside its partition (the partition key is public);
    2 when a swap may move a record from one partition to another. The cost is that of the
    ``touched`` worst parts, not the sum over all partitions.

    Accountants: basic and zCDP add the ``touched`` largest epsilons, deltas or rhos; the
    PLD composes the worst part ``touched`` times when one part dominates the others
    (:meth:`Event.dominates`), else each distinct part ``min(touched, count)`` times
    (valid: composing more mechanisms never lowers delta).
    """

    parts: tuple[tuple[int, Event], ...]
    touched: int = 1
    kind: ClassVar[str] = "parallel"

    def __post_init__(self) -> None:
        raw = self.parts if isinstance(self.parts, (list, tuple)) else ()
        if not raw:
            raise ValidationError(f"parts: {_short(self.parts)} must be a non-empty list")
        parts = []
        for i, part in enumerate(raw):
            if not (isinstance(part, (list, tuple)) and len(part) == 2):
                raise ValidationError(f"parts[{i}]: must be a (count, event) pair")
            parts.append(
                (_count(part[0], f"parts[{i}].count"), _check_event(part[1], f"parts[{i}].event"))
            )
        object.__setattr__(self, "parts", tuple(parts))
        object.__setattr__(self, "touched", _count(self.touched, "touched"))

    @classmethod
    def of(cls, events: list[Event] | tuple[Event, ...], touched: int = 1) -> ParallelEvent:
        """One event per partition; equal events are counted, not repeated."""
        counts: dict[Event, int] = {}
        for i, e in enumerate(events):
            counts[_check_event(e, f"events[{i}]")] = counts.get(e, 0) + 1
        return cls(tuple((n, e) for e, n in counts.items()), touched)

    def _largest(self, values: list[tuple[float, int]]) -> float:
        """The sum of the ``touched`` largest values, each repeated ``count`` times."""
        left, out = self.touched, []
        for v, n in sorted(values, reverse=True):
            take = min(n, left)
            out.append(v * take)
            left -= take
            if not left:
                break
        return math.fsum(out)

    def point(self) -> tuple[float, float] | None:
        pts = [(e.point(), n) for n, e in self.parts]
        if any(p is None for p, _ in pts):
            return None
        eps = self._largest([(p[0], n) for p, n in pts])
        return eps, self._largest([(p[1], n) for p, n in pts])

    def zcdp_rho(self) -> float | None:
        rhos = [(e.zcdp_rho(), n) for n, e in self.parts]
        return None if any(r is None for r, _ in rhos) else self._largest(rhos)

    def pld(self, grid: float) -> PLD | None:
        events = [e for _, e in self.parts]
        worst = next((w for w in events if all(w.dominates(e) for e in events)), None)
        t = min(self.touched, sum(n for n, _ in self.parts))
        if worst is not None:
            return _compose_plds([worst] * t, grid)
        return _compose_plds([e for n, e in self.parts for _ in range(min(t, n))], grid)

    def law(self) -> tuple:
        return (tuple((n, e.law_key()) for n, e in self.parts), self.touched)

    def to_dict(self) -> dict[str, Any]:
        parts = [{"count": n, "event": e.to_dict()} for n, e in self.parts]
        return {"kind": self.kind, "parts": parts, "touched": self.touched}

    @classmethod
    def _from_fields(cls, data: dict[str, Any], where: str, depth: int) -> Event:
        raw = data["parts"]
        if not isinstance(raw, list) or not raw:
            raise ValidationError(f"{where}.parts: must be a non-empty list")
        parts = []
        for i, part in enumerate(raw):
            at = f"{where}.parts[{i}]"
            if not isinstance(part, dict) or set(part) != {"count", "event"}:
                raise ValidationError(f"{at}: must be an object with count and event")
            ev = event_from_dict(part["event"], f"{at}.event", depth + 1)
            parts.append((_count(part["count"], f"{at}.count"), ev))
        return cls(tuple(parts), data.get("touched", 1))

    def describe(self) -> str:
        total = sum(n for n, _ in self.parts)
        inner = ", ".join(f"{n} x {e.describe()}" for n, e in self.parts)
        return f"parallel over {total} partitions ({self.touched} touched): {inner}"


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValidationError(f"{where}: {_short(value)} must be an integer >= 1")
    return int(value)
