"""What is public about the data, in one object (docs/domain.md).

A :class:`Domain` holds the facts a mechanism may use without reading the data: the public
``bounds`` (and the lattice ``resolution`` of a release on a lattice), whether the number of
records ``n`` is public, the neighbour relation the guarantee is stated for, and the privacy
unit:

* ``neighbours="swap"`` (the default of privest's statistics, paper 002): neighbouring data
  sets differ in one record's value, and n is public;
* ``neighbours="add_remove"``: they differ by adding or removing one unit (a record, or a
  person with all their rows), so n is private;
* ``unit="record"``, or the name of a person-id column: with a person as the unit, each
  person's contribution is bounded first (at most ``max_groups`` groups of a table, at most
  ``max_rows`` rows in each), and the guarantee protects a whole person.

Every mechanism, ``private_*`` function and estimator of a central model accepts ``domain=``
beside its keyword arguments (``bounds=``, ``resolution=``), which build one; giving a fact
both ways is refused (one meaning per parameter). A mechanism whose guarantee holds for swap
neighbours only refuses another relation (:meth:`Domain.swap_only`), and one that takes no
bounds refuses a domain that gives them (:meth:`Domain.without`). :meth:`Domain.check` is
the one place the public-bounds rule is applied to 1-D data: out-of-bounds values are an
error unless the caller asks to clip them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from privest.errors import BoundsError, ValidationError

__all__ = ["NEIGHBOURS", "Domain", "Neighbours"]

Neighbours = Literal["swap", "add_remove"]
#: the neighbour relations a guarantee can be stated for
NEIGHBOURS: tuple[str, ...] = ("swap", "add_remove")


def _pair(value: Any, name: str) -> tuple[float, float]:
    """One ``(lo, hi)`` pair by the shared bounds rule (:func:`privest.validation.check_bounds`:
    finite numbers, lo < hi, a width inside the float range)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise BoundsError(f"{name}: {value!r:.60} is not a (lo, hi) pair of numbers")
    from privest.validation import check_bounds

    lo, hi = check_bounds(value, 1, name)[0].tolist()
    return lo, hi


def _canonical_bounds(bounds: Any) -> Any:
    """None, one pair, a tuple of pairs, or a mapping name -> pair (vocabulary: ``bounds``)."""
    if bounds is None:
        return None
    if isinstance(bounds, Mapping):
        return {str(k): _pair(v, f"bounds[{k!r}]") for k, v in bounds.items()}
    if isinstance(bounds, (str, bytes)):
        raise BoundsError(f"bounds: {bounds!r} is text; give (lo, hi) numbers")
    items = list(bounds)
    if len(items) == 2 and all(not hasattr(v, "__len__") for v in items):
        return _pair(items, "bounds")
    return tuple(_pair(v, f"bounds[{i}]") for i, v in enumerate(items))


def _json_bounds(b: Any) -> Any:
    if b is None or isinstance(b, dict):
        return b and {k: list(v) for k, v in b.items()}
    return [list(p) for p in b] if isinstance(b[0], tuple) else list(b)


@dataclass(frozen=True, eq=True)
class Domain:
    """The public facts about the data (module docstring).

    ``Domain(bounds=(0, 100))`` is the default flow: swap neighbours, one record the unit.
    ``Domain(bounds=(0, 2e5), neighbours="add_remove", unit="person_id", max_groups=3,
    max_rows=5)`` is a table's cell with a person as the unit.
    """

    bounds: Any = None
    resolution: float | None = None
    n: int | None = None
    neighbours: Neighbours = "swap"
    unit: str = "record"
    max_groups: int | None = None
    max_rows: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "bounds", _canonical_bounds(self.bounds))
        if self.resolution is not None:
            r = self.resolution
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not (0 < r < math.inf):
                raise ValidationError(f"resolution: {r!r} must be a finite number > 0")
            object.__setattr__(self, "resolution", float(r))
        if self.neighbours not in NEIGHBOURS:
            raise ValidationError(
                f"neighbours: {self.neighbours!r} is not one of {', '.join(NEIGHBOURS)}"
            )
        if not isinstance(self.unit, str) or not self.unit:
            raise ValidationError(f"unit: {self.unit!r} must be 'record' or a column name")
        for name in ("n", "max_groups", "max_rows"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValidationError(f"{name}: {v!r} must be a whole number >= 1 (or None)")
        if self.n is not None and self.neighbours == "add_remove":
            raise ValidationError(
                "n: under add/remove neighbours the number of records is private; "
                "a public n goes with neighbours='swap'"
            )
        person = self.unit != "record"
        if person and self.neighbours != "add_remove":
            raise ValidationError(
                f"unit: a person ({self.unit!r}) is protected against adding or removing "
                "all their rows: use neighbours='add_remove'"
            )
        if not person and (self.max_groups is not None or self.max_rows is not None):
            raise ValidationError(
                "max_groups, max_rows: contribution limits bound a person's rows; "
                "give unit= the person-id column"
            )

    def __hash__(self) -> int:  # bounds may be a mapping
        return hash(repr(self))

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def of(cls, domain: Domain | None = None, **facts: Any) -> Domain:
        """``domain`` with the keyword facts that are not ``None`` added; a fact given both
        ways (``domain.bounds`` and ``bounds=``) is refused unless the two agree."""
        given = {k: v for k, v in facts.items() if v is not None}
        if domain is None:
            return cls(**given)
        if not isinstance(domain, Domain):
            raise ValidationError(f"domain: {domain!r} is not a privest.Domain (or None)")
        both = {}
        for k, v in given.items():
            mine = getattr(domain, k)
            if k == "bounds":
                v = _canonical_bounds(v)
            if mine is not None and mine != v:
                raise ValidationError(
                    f"{k}: given twice with different values (domain.{k}={mine!r}, {k}={v!r}); "
                    "give it once"
                )
            both[k] = v
        return replace(domain, **both) if both else domain

    # -- reading ----------------------------------------------------------------------------
    @property
    def n_public(self) -> bool:
        """Whether a mechanism may use the number of records (swap neighbours)."""
        return self.neighbours == "swap"

    @property
    def by_person(self) -> bool:
        """Whether the privacy unit is a person with several rows."""
        return self.unit != "record"

    def interval(self, what: str = "bounds") -> tuple[float, float]:
        """The one ``(lo, hi)`` pair of 1-D data; an error naming ``what`` if there is none."""
        b = self.bounds
        if b is None:
            raise ValidationError(f"{what}: required (public bounds (lo, hi) of the data)")
        if isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], float):
            return b
        if isinstance(b, tuple) and len(b) == 1:
            return b[0]
        raise BoundsError(f"{what}: one (lo, hi) pair is needed for 1-D data, got {b!r}")

    @property
    def relation(self) -> str:
        """The neighbour relation in words, for guarantees and reports."""
        if self.neighbours == "swap":
            return "swap one record (n public)"
        if not self.by_person:
            return "add or remove one record"
        limits = [
            f"at most {v} {name}"
            for v, name in ((self.max_groups, "groups"), (self.max_rows, "rows per group"))
            if v is not None
        ]
        return f"add or remove one person ({self.unit})" + (
            f": {', '.join(limits)}" if limits else ""
        )

    def swap_only(self, who: str, why: str) -> Domain:
        """This domain if its relation is swap; otherwise the refusal of a mechanism ``who``
        whose guarantee holds for swap neighbours only (``why``), naming the parameter:
        ``unit`` for a person, ``neighbours`` for add/remove of one record."""
        if self.neighbours == "swap":
            return self
        given = f"unit: {self.unit!r} (a person)" if self.by_person else "neighbours: 'add_remove'"
        raise ValidationError(
            f"{given} is refused: {who} is stated for swap neighbours only (one record's "
            f"values replaced, n public): {why}"
        )

    def without(self, who: str, *facts: str) -> Domain:
        """This domain if it gives none of ``facts``, which ``who`` does not use: a fact a
        mechanism cannot use is refused rather than ignored (one meaning per parameter)."""
        given = [f for f in facts if getattr(self, f) is not None]
        if given:
            raise ValidationError(
                f"domain.{given[0]}: {who} does not use it; leave it out of the domain"
            )
        return self

    def check(self, x: Any, *, clip: bool = False, name: str = "x") -> tuple[Any, int]:
        """The public-bounds rule on 1-D data: ``(values as a float vector, n clipped)``.

        Out-of-bounds values raise :class:`~privest.errors.BoundsError` (naming how many, not
        which) unless ``clip=True``, which projects them onto the bounds."""
        import numpy as np

        from privest.validation import as_float_vector

        arr = as_float_vector(x, name)
        lo, hi = self.interval()
        outside = (arr < lo) | (arr > hi)
        n_out = int(np.count_nonzero(outside))
        if n_out and not clip:
            raise BoundsError(
                f"{name}: {n_out} value(s) outside the public bounds ({lo:g}, {hi:g}); "
                "widen the bounds or pass clip=True to clip them"
            )
        if n_out:
            arr = np.clip(arr, lo, hi)
        return arr, n_out

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (reports, ledgers)."""
        return {
            "bounds": _json_bounds(self.bounds),
            "resolution": self.resolution,
            "n": self.n,
            "neighbours": self.neighbours,
            "unit": self.unit,
            "max_groups": self.max_groups,
            "max_rows": self.max_rows,
        }
