"""Spends and the budget ledger file (docs/budget.md, "The ledger file").

A :class:`Spend` is one charge: a label, the mechanism's name, the time, and the privacy
**event** of the mechanism's guarantee (:mod:`privest.accounting.events`), from which every
figure is computed: its basic-composition point (epsilon, delta), its zCDP rho, its PLD.

Ledger format, version 2 (JSON)::

    {"format": "privest-budget-ledger", "version": 2, "epsilon": E, "delta": D,
     "accountant": ["basic", "zcdp"],
     "spends": [{"label": ..., "mechanism": ..., "time": ..., "event": {"kind": ...}}]}

Version 1 ledgers (spends of (epsilon, delta, rho)) still open: each spend becomes the
pure (delta = 0) or approximate DP event of its (epsilon, delta), and the rho it stored is
checked but not used (pure spends get epsilon^2/2 from their event; a stored rho cannot be
verified against an (epsilon, delta) with delta > 0). The next charge writes version 2.
Every field is checked on read; a damaged ledger is refused with one error naming the
field, never repaired silently.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privest.accounting.events import ApproxDPEvent, Event, PureDPEvent, event_from_dict
from privest.errors import StoreError, ValidationError
from privest.validation import _short, check_delta, check_epsilon

__all__ = [
    "LEDGER_FORMAT",
    "LEDGER_VERSION",
    "MAX_LABEL",
    "Spend",
    "check_label",
    "display_label",
    "point_event",
    "read_ledger",
]

LEDGER_FORMAT = "privest-budget-ledger"
LEDGER_VERSION = 2
#: the longest label a new spend may carry (reports show at most DISPLAY_LABEL characters)
MAX_LABEL = 1000
DISPLAY_LABEL = 60


def point_event(epsilon: Any, delta: Any = 0.0, rho: Any = None) -> Event:
    """The event of a spend given as (epsilon, delta): pure DP when delta is 0, else
    approximate DP. ``rho`` is computed, not trusted: it is refused unless it is the
    epsilon^2/2 that pure epsilon-DP implies (Bun and Steinke 2016, Prop 1.4)."""
    dlt = check_delta(delta)
    event: Event = PureDPEvent(check_epsilon(epsilon, allow_zero=True))
    if dlt > 0:
        event = ApproxDPEvent(event.epsilon, dlt)
    if rho is not None:
        implied = event.zcdp_rho()
        ok = (
            not isinstance(rho, bool)
            and isinstance(rho, (int, float))
            and implied is not None
            and math.isclose(float(rho), implied, rel_tol=1e-9, abs_tol=1e-300)
        )
        if not ok:
            what = f"{implied:.6g}" if implied is not None else "none: delta > 0"
            raise ValidationError(
                f"rho: {_short(rho)} is not the zCDP rho that (epsilon={event.point()[0]:g}, "
                f"delta={event.point()[1]:g}) implies ({what}); a spend's rho comes from the "
                "mechanism's guarantee: omit rho, or charge the guarantee "
                "(Budget.charge_guarantee, privest.accounting.budget.charge)"
            )
    return event


def check_label(label: Any, name: str = "label") -> str:
    if not isinstance(label, str):
        raise ValidationError(f"{name}: {_short(label)} is not a string")
    if len(label) > MAX_LABEL:
        raise ValidationError(
            f"{name}: {len(label)} characters; a spend's label has at most {MAX_LABEL}"
        )
    return label


def display_label(label: str) -> str:
    """The label for a report: control characters replaced, at most DISPLAY_LABEL long."""
    text = "".join(ch if ch.isprintable() else "?" for ch in label[: DISPLAY_LABEL + 1])
    if len(label) > DISPLAY_LABEL:
        return f"{text[: DISPLAY_LABEL - 1]}... ({len(label)} characters)"
    return text


@dataclass(frozen=True, init=False)
class Spend:
    """One charge: ``label``, the privacy ``event``, ``mechanism`` and ``time``.

    ``Spend(label, epsilon, delta=0.0, rho=None, mechanism="", time="")`` builds the pure
    or approximate DP event of (epsilon, delta) (``rho`` checked, :func:`point_event`);
    ``Spend(label, event=..., ...)`` takes any event. ``epsilon`` and ``delta`` are the
    event's basic-composition point (``None`` for a curve charged without one), ``rho``
    its zCDP rho (``None`` when it has none).
    """

    label: str
    event: Event
    mechanism: str = ""
    time: str = field(default="", compare=False)

    def __init__(
        self,
        label: str,
        epsilon: float | None = None,
        delta: float = 0.0,
        rho: float | None = None,
        mechanism: str = "",
        time: str = "",
        *,
        event: Event | None = None,
    ) -> None:
        if event is None:
            event = point_event(epsilon, delta, rho)
        elif not isinstance(event, Event) or epsilon is not None or rho is not None:
            raise ValidationError("Spend: give an event, or (epsilon, delta), not both")
        for name, value in (("label", label), ("mechanism", mechanism), ("time", time)):
            if not isinstance(value, str):
                raise ValidationError(f"{name}: {_short(value)} is not a string")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "event", event)

    @property
    def epsilon(self) -> float | None:
        p = self.event.point()
        return None if p is None else p[0]

    @property
    def delta(self) -> float | None:
        p = self.event.point()
        return None if p is None else p[1]

    @property
    def rho(self) -> float | None:
        return self.event.zcdp_rho()

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "mechanism": self.mechanism,
            "time": self.time,
            "event": self.event.to_dict(),
        }


def _field(doc: dict[str, Any], key: str, where: str) -> Any:
    if key not in doc:
        raise ValidationError(f"{where}: the field {key!r} is missing")
    return doc[key]


def _keys(doc: Any, keys: set[str], where: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise ValidationError(f"{where}: {_short(doc)} is not a JSON object")
    extra = set(doc) - keys
    if extra:
        raise ValidationError(f"{where}: unknown fields {sorted(extra)[:5]}")
    missing = keys - set(doc)
    if missing:
        raise ValidationError(f"{where}: missing fields {sorted(missing)}")
    return doc


def _spend_v2(doc: Any, where: str) -> Spend:
    doc = _keys(doc, {"label", "mechanism", "time", "event"}, where)
    event = event_from_dict(doc["event"], f"{where}.event")
    try:
        return Spend(doc["label"], mechanism=doc["mechanism"], time=doc["time"], event=event)
    except ValidationError as exc:
        raise ValidationError(f"{where}.{exc}") from None


def _spend_v1(doc: Any, where: str) -> Spend:
    doc = _keys(doc, {"label", "epsilon", "delta", "rho", "mechanism", "time"}, where)
    rho = doc["rho"]
    if rho is not None:  # checked, not used (module docstring)
        if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not rho >= 0:
            raise ValidationError(f"{where}.rho: {_short(rho)} must be a finite number >= 0")
        if not math.isfinite(rho):
            raise ValidationError(f"{where}.rho: {rho!r} must be a finite number >= 0")
    try:
        event = point_event(doc["epsilon"], doc["delta"])
        return Spend(doc["label"], mechanism=doc["mechanism"], time=doc["time"], event=event)
    except ValidationError as exc:
        raise ValidationError(f"{where}.{exc}") from None


def parse_ledger(doc: Any, default_accountant: tuple[str, ...]) -> dict[str, Any]:
    """The checked content of a ledger document (module docstring); ValidationError names
    the first bad field."""
    from privest.accounting.accountants import check_accountants

    if not isinstance(doc, dict) or doc.get("format") != LEDGER_FORMAT:
        raise ValidationError(f"format: not {LEDGER_FORMAT!r}")
    version = _field(doc, "version", "ledger")
    if isinstance(version, bool) or version not in (1, 2):
        raise ValidationError(f"version: {_short(version)} is not 1 or 2")
    keys = {"format", "version", "epsilon", "delta", "spends"}
    _keys(doc, keys | ({"accountant"} if version == 2 else set()), "ledger")
    epsilon, delta = check_epsilon(doc["epsilon"]), check_delta(doc["delta"])
    accountant = default_accountant
    if version == 2:
        accountant = check_accountants(doc["accountant"])
    spends = doc["spends"]
    if not isinstance(spends, list):
        raise ValidationError(f"spends: {_short(spends)} is not a list")
    read = _spend_v2 if version == 2 else _spend_v1
    return {
        "epsilon": epsilon,
        "delta": delta,
        "accountant": accountant,
        "version": version,
        "spends": [read(s, f"spends[{i}]") for i, s in enumerate(spends)],
    }


def read_ledger(path: Path, default_accountant: tuple[str, ...]) -> dict[str, Any]:
    """Read and check the ledger file at ``path``: :class:`StoreError` when it is missing,
    unreadable or malformed (one message naming the field)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StoreError(
            f"budget: no ledger at {str(path)!r}; create one with `privest budget "
            f"{path} --epsilon E --delta D`"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"budget: {str(path)!r} is not a readable ledger ({exc})") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant)
        return parse_ledger(doc, default_accountant)
    except (ValueError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, ValidationError) else "not valid JSON"
        raise StoreError(
            f"budget: {str(path)!r} is not a valid privest budget ledger: {reason}. Nothing "
            "was changed; restore the file from a copy"
        ) from None


def _no_constant(name: str) -> float:
    raise ValidationError(f"a number is {name}, which JSON does not allow")


def write_document(
    epsilon: float, delta: float, accountant: tuple[str, ...], spends: list[Spend]
) -> dict[str, Any]:
    """The version-2 document of a ledger."""
    return {
        "format": LEDGER_FORMAT,
        "version": LEDGER_VERSION,
        "epsilon": epsilon,
        "delta": delta,
        "accountant": list(accountant),
        "spends": [s.to_dict() for s in spends],
    }
