"""What every ZIL release is, wherever its records are held (paper 000, Algorithm 1's output).

:class:`ReleasedColumns` is the seam between the core and a backend (``privest.backends``):
the in-memory :class:`~privest.release.zil.ZILRelease` and a backend's release (Dask's
``privest.scale.DaskRelease``) both hold ``x1``, ``x2`` (n, d), optional record ``ids``,
and the public metadata; each implements :meth:`ReleasedColumns.iter_blocks`, the
records as numpy row blocks, so that code written against the protocol (the store's
writer, a summary) runs on either. The metadata properties, the guarantee and the summary
live here once.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from privest.accounting.zil_guarantee import ZILGuarantee
from privest.domain import Domain
from privest.errors import SeededRandomnessWarning, ValidationError
from privest.rng import RNGKind, randomness_note

__all__ = ["Block", "ReleasedColumns", "local_domain", "warn_not_secure"]

#: one row block of a release: ``(x1, x2, ids)``, ``ids`` None for a release without ids
Block = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]

#: the id column's name wherever a release's records are written with their ids
ID_NAME = "id"


class ReleasedColumns:
    """The released-columns protocol: fields, derived metadata and block iteration.

    Fields (set by the implementing class): ``x1``, ``x2`` (n, d) arrays of any backend,
    ``ids`` (n,) or ``None``, ``lam``, ``zero_prob``, ``bounds`` (one (lo, hi) row per
    noised column), ``columns`` (indices of the noised columns), ``column_names``,
    ``randomness`` and ``resolution`` (one step per noised column, or ``None``).
    """

    x1: Any
    x2: Any
    ids: Any
    lam: float
    zero_prob: float
    bounds: np.ndarray
    columns: np.ndarray
    column_names: tuple[str, ...]
    randomness: RNGKind
    resolution: np.ndarray | None

    def iter_blocks(self, rows: int | None = None) -> Iterator[Block]:
        """The records as numpy row blocks ``(x1, x2, ids)`` in record order: the release's
        own blocks (``rows=None``; in memory one block, on Dask one per chunk), each cut
        into blocks of at most ``rows`` rows when ``rows`` is given."""
        raise NotImplementedError

    @property
    def n(self) -> int:
        """Number of released records."""
        return int(self.x1.shape[0])

    @property
    def d(self) -> int:
        """Number of columns (noised or not)."""
        return int(self.x1.shape[1])

    @property
    def noised_names(self) -> tuple[str, ...]:
        """Names of the noised columns."""
        return tuple(self.column_names[j] for j in self.columns)

    @property
    def unnoised_names(self) -> tuple[str, ...]:
        """Names of the columns released as they were (no noise, not protected)."""
        noised = set(int(j) for j in self.columns)
        return tuple(c for j, c in enumerate(self.column_names) if j not in noised)

    @property
    def noise_scale(self) -> np.ndarray:
        """(d,) SL scale of each column's noise: ``lam (hi_j - lo_j)`` if noised, else 0.

        ``X2 - x ~ SL(diag(noise_scale)^2)`` given the raw record x (Section 3.1).
        """
        out = np.zeros(self.d)
        out[self.columns] = self.lam * (self.bounds[:, 1] - self.bounds[:, 0])
        return out

    @property
    def guarantee(self) -> ZILGuarantee:
        """The privacy guarantee of the noised columns (Thm 3.1-3.2), at both units."""
        return ZILGuarantee(self.lam, self.zero_prob, self.columns.size)

    def metadata(self) -> dict[str, Any]:
        """The public fields (everything but the records and ids), as fresh copies."""
        return {
            "lam": float(self.lam),
            "zero_prob": float(self.zero_prob),
            "bounds": np.array(self.bounds, dtype=float),
            "columns": np.array(self.columns, dtype=np.intp),
            "column_names": tuple(self.column_names),
            "randomness": self.randomness,
            "resolution": None if self.resolution is None else np.array(self.resolution),
        }

    def summary(self) -> str:
        """A short text report: size, noised columns, the columns stored as they were,
        randomness and privacy (no data-dependent count beyond the public n)."""
        note = randomness_note(self.randomness)
        plain = ([ID_NAME] if self.ids is not None else []) + list(self.unnoised_names)
        lines = [
            f"ZIL release: {self.n} records, {self.d} columns, "
            f"noised: {', '.join(self.noised_names)}",
            f"  lam = {self.lam:.6g} (per unit of each column's range), zero_prob = "
            f"{self.zero_prob:.4g} (about {self.zero_prob:.1%} of records released without "
            "noise)",
            "  released as they are (no noise, not protected): "
            + (", ".join(plain) if plain else "none"),
            f"  randomness: {self.randomness}" + (f" ({note})" if note else ""),
        ]
        if self.ids is None:
            lines.append(
                "  no record ids: a store of this release cannot refuse a record released "
                "twice (docs/zil-release.md, 'The release store')"
            )
        if self.resolution is not None:
            res = ", ".join(
                f"{n}: {r:g}" for n, r in zip(self.noised_names, self.resolution, strict=True)
            )
            lines.append(f"  X1 rounded to the public resolution {res}")
        return "\n".join(lines)


def local_domain(
    domain: Domain | None, who: str, *unused: str, bounds: Any, resolution: Any = None
) -> tuple[Domain, Any, Any]:
    """``(domain, bounds, resolution)`` of a local release ``who`` from ``domain=`` and the
    keywords (:meth:`Domain.of`: a fact given both ways must agree), refusing the facts in
    ``unused``. Swap neighbours only: a local release publishes one row per record, so
    whether a record is there shows; its guarantee protects the record's values. A keyword
    is returned as given (its own spelling: a mapping's keys may be column indices); one
    ``resolution`` per column (a list or a mapping) cannot be compared with
    ``domain.resolution`` and is refused beside it."""
    one = resolution is None or (
        isinstance(resolution, numbers.Real) and not isinstance(resolution, (bool, Mapping))
    )
    facts = {"bounds": bounds, "resolution": float(resolution) if one and resolution else None}
    why = "a local release publishes one row per record and protects that record's values"
    dom = Domain.of(domain, **facts).without(who, *unused).swap_only(who, why)
    if not one and dom.resolution is not None:
        raise ValidationError(
            "resolution: given twice (domain.resolution and resolution=); give it once"
        )
    return (
        dom,
        dom.bounds if bounds is None else bounds,
        dom.resolution if resolution is None else resolution,
    )


def warn_not_secure(kind: str, stacklevel: int = 3) -> None:
    """Warn (:class:`~privest.errors.SeededRandomnessWarning`) when a release's randomness
    is not the secure generator: a seed (``rng=0`` included) or a caller's Generator."""
    if kind == "secure":
        return
    warnings.warn(
        f"release with {kind} randomness ({randomness_note(kind)}); pass rng=None "
        "(or omit --seed) for a real release",
        SeededRandomnessWarning,
        stacklevel=stacklevel,
    )
