"""The ZIL mechanism and the doubly random release (paper 000, Def 3.1 and Algorithm 1).

Each record is released once as ``X1 = X + Z`` with ``Z ~ ZIL(delta, lam^2 I)`` on the
noised columns J (one zero/non-zero draw and one ``W ~ Exp(1)`` per record, shared by
all noised coordinates), together with the doubly random copy ``X2 = X1 + S``,
``S ~ SL(delta lam^2 I)``, which is post-processing of X1 and costs no privacy
(Prop 2.2). Given ``X = x``, ``X2 - x ~ SL(lam^2 I)`` exactly (Section 3.1).

**With probability delta a record's noised columns are released exactly.** Columns
outside J are released unchanged and are not protected.

Floating-point note (anchors.md pitfall 1): the noised values are rounded to a
power-of-two grid about ``lam * 2^-20`` wide, so the low-order bits of a released value
do not betray the raw value; the induced bias is below ``lam * 1e-6`` per coordinate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from privest.accounting.zil import ZILGuarantee, calibrate_lam
from privest.errors import BoundsError, ValidationError
from privest.noise import sample_sl, sample_zil
from privest.rng import RNGKind, resolve_rng, rng_kind
from privest.validation import (
    as_float_matrix,
    check_bounds,
    check_epsilon,
    check_positive,
    check_probability,
)

__all__ = ["ZILMechanism", "ZILRelease", "output_grid"]

Columns = Sequence[int] | Sequence[str] | None


def output_grid(lam: float) -> float:
    """Width of the grid released values are rounded to: ``2^(floor(log2 lam) - 20)``."""
    return math.ldexp(1.0, math.floor(math.log2(lam)) - 20)


def _snap(values: np.ndarray, grid: float) -> np.ndarray:
    """Round in place to multiples of ``grid`` (a power of two, so scaling is exact)."""
    values *= 1.0 / grid
    np.rint(values, out=values)
    values *= grid
    return values


@dataclass(frozen=True, eq=False)
class ZILRelease:
    """A released data set: what the analyst holds (Algorithm 1's output plus its parameters).

    ``x1`` and ``x2`` have every input column; only ``columns`` (indices) were noised.
    Arrays are read-only: a release is never re-randomised.
    """

    x1: np.ndarray
    x2: np.ndarray
    lam: float
    delta: float
    bounds: np.ndarray
    columns: np.ndarray
    column_names: tuple[str, ...]
    rng_kind: RNGKind
    n_clipped: dict[str, int] = field(default_factory=dict)
    ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        for arr in (self.x1, self.x2, self.bounds, self.columns):
            arr.setflags(write=False)
        if self.ids is not None:
            self.ids.setflags(write=False)

    @property
    def n(self) -> int:
        """Number of released records."""
        return self.x1.shape[0]

    @property
    def d(self) -> int:
        """Number of columns (noised or not)."""
        return self.x1.shape[1]

    @property
    def noised_names(self) -> tuple[str, ...]:
        """Names of the noised columns."""
        return tuple(self.column_names[j] for j in self.columns)

    @property
    def guarantee(self) -> ZILGuarantee:
        """The privacy guarantee of the noised columns (Thm 3.1-3.2), at both levels."""
        return ZILGuarantee(lam=self.lam, delta=self.delta, bounds=self.bounds)

    def frame(self, which: Literal["x1", "x2"] = "x1") -> pd.DataFrame:
        """The released copy ``x1`` or ``x2`` as a DataFrame (ids as the index if present)."""
        data = self.x1 if which == "x1" else self.x2
        index = pd.Index(self.ids, name="id") if self.ids is not None else None
        return pd.DataFrame(data, columns=list(self.column_names), index=index)

    def save(self, path: str | Path, *, append: bool = False) -> None:
        """Write to (or, with ``append=True``, add to) an append-only release store."""
        from privest.release.store import save_release

        save_release(self, path, append=append)

    @classmethod
    def load(cls, path: str | Path) -> ZILRelease:
        """Read every record of a release store."""
        from privest.release.store import load_release

        return load_release(path)

    def summary(self) -> str:
        """A short text report: size, noised columns, clipping, randomness and privacy."""
        lines = [
            f"ZIL release: {self.n} records, {self.d} columns, "
            f"noised: {', '.join(self.noised_names)}",
            f"  lam = {self.lam:.6g}, zero proportion delta = {self.delta:.4g} "
            f"(about {self.delta:.1%} of records released without noise)",
            f"  randomness: {self.rng_kind}"
            + ("" if self.rng_kind == "secure" else " (reproducible; not for real releases)"),
        ]
        clipped = {k: v for k, v in self.n_clipped.items() if v}
        if clipped:
            lines.append(
                "  clipped to bounds: " + ", ".join(f"{k}: {v}" for k, v in clipped.items())
            )
        return "\n".join(lines)


class ZILMechanism:
    """ZIL release of ``columns`` with noise scale ``lam`` and zero proportion ``delta``.

    Parameters
    ----------
    lam : SL scale; noise covariance is ``(1 - delta) lam^2 I`` (Section 3.1).
    delta : probability that a record is released without noise, in (0, 1) ([000] A8).
    bounds : public bounds of the noised columns: one ``(lo, hi)`` for all, a list of pairs
        in the order of ``columns``, or a mapping ``{column: (lo, hi)}`` (then its keys are
        the noised columns). Never inferred from the data.
    columns : the noised columns (indices, or names for DataFrames); all when ``None``.
    clip : clip out-of-bounds values to the bounds (counted) instead of raising.
    """

    def __init__(
        self,
        lam: float,
        delta: float,
        bounds: Any,
        columns: Columns = None,
        clip: bool = False,
    ) -> None:
        self.lam = check_positive(lam, "lam")
        self.delta = check_probability(delta, "delta")
        if isinstance(bounds, Mapping):
            if columns is not None and list(columns) != list(bounds):
                raise ValidationError(
                    f"columns: {list(columns)!r} disagrees with the keys of bounds "
                    f"{list(bounds)!r}; give the noised columns once"
                )
            columns = list(bounds)
            bounds = list(bounds.values())
        self.columns = None if columns is None else list(columns)
        n_cols = None if self.columns is None else len(self.columns)
        if n_cols is not None and len(set(self.columns)) != n_cols:
            raise ValidationError(f"columns: {self.columns!r} has repeated entries")
        self.bounds = check_bounds(bounds, n_cols)
        self.clip = bool(clip)

    @classmethod
    def calibrate(
        cls,
        epsilon: float,
        target_delta: float,
        delta: float,
        bounds: Any,
        level: Literal["individual", "attribute"] = "individual",
        columns: Columns = None,
        clip: bool = False,
    ) -> ZILMechanism:
        """The mechanism with the least noise that is (epsilon, target_delta)-DP (Thm 3.3 recipe).

        Solves ``delta_tilde_{c', delta}(epsilon) = target_delta`` for c', then sets
        ``lam = diam / c'`` with diam the box diameter (``level="individual"``) or the largest
        column range (``"attribute"``). One noised column uses the exact Laplace profile.
        """
        check_epsilon(epsilon)
        tmp = cls(1.0, delta, bounds, columns=columns, clip=clip)
        lam = calibrate_lam(epsilon, target_delta, tmp.delta, tmp.bounds, level=level)
        return cls(lam, delta, bounds, columns=columns, clip=clip)

    @property
    def guarantee(self) -> ZILGuarantee:
        """Privacy guarantee of a release by this mechanism (individual and attribute level)."""
        return ZILGuarantee(lam=self.lam, delta=self.delta, bounds=self.bounds)

    def _resolve_columns(self, names: list[str], d: int) -> np.ndarray:
        if self.columns is None:
            if len(self.bounds) != d:
                raise BoundsError(
                    f"bounds: {len(self.bounds)} pairs for {d} columns of X; give one pair per "
                    "column, or select the noised columns with columns="
                )
            return np.arange(d)
        idx = []
        for c in self.columns:
            if isinstance(c, str):
                if c not in names:
                    raise ValidationError(f"columns: {c!r} is not a column of X; have {names}")
                idx.append(names.index(c))
            elif isinstance(c, (int, np.integer)) and 0 <= c < d:
                idx.append(int(c))
            else:
                raise ValidationError(
                    f"columns: {c!r} is neither a column name nor an index in [0, {d})"
                )
        if len(set(idx)) != len(idx):
            raise ValidationError(f"columns: {self.columns!r} names a column twice")
        return np.asarray(idx, dtype=np.intp)

    def release(
        self,
        X: Any,
        rng: np.random.Generator | int | None = None,
        ids: Any = None,
    ) -> ZILRelease:
        """Release ``X`` (array or DataFrame) once: Algorithm 1, steps 1 and 2.

        ``rng=None`` draws from a secure generator (:func:`privest.make_rng`); pass a
        seeded one only for experiments. ``ids`` (one per record, optional) are published
        with the records so that a store can refuse to release a record twice.
        """
        if isinstance(X, pd.DataFrame):
            names = [str(c) for c in X.columns]
        else:
            names = None
        x = as_float_matrix(X, "X")
        n, d = x.shape
        names = names or [f"x{j}" for j in range(d)]
        cols = self._resolve_columns(names, d)
        if ids is not None:
            ids = np.asarray(ids).astype(str)
            if ids.shape != (n,):
                raise ValidationError(f"ids: shape {ids.shape}; expected one id per record ({n},)")
            if np.unique(ids).size != n:
                raise ValidationError("ids: contains duplicates; each record needs its own id")
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        all_cols = cols.size == d and bool(np.all(cols == np.arange(d)))
        sub = x if all_cols else x[:, cols]
        n_out = np.zeros(cols.size, dtype=np.int64)
        if np.any(sub.min(axis=0) < lo) or np.any(sub.max(axis=0) > hi):
            n_out = ((sub < lo) | (sub > hi)).sum(axis=0)
            if not self.clip:
                j = int(np.argmax(n_out > 0))
                row = int(np.argmax((sub[:, j] < lo[j]) | (sub[:, j] > hi[j])))
                raise BoundsError(
                    f"X: column {names[cols[j]]!r} has {int(n_out[j])} values outside its "
                    f"bounds [{lo[j]:g}, {hi[j]:g}] (first: {sub[row, j]:g} at row {row}); "
                    "widen the public bounds or pass clip=True to clip them (the count is "
                    "reported)"
                )
            sub = np.clip(sub, lo, hi)
        gen = resolve_rng(rng)
        grid = output_grid(self.lam)
        # Step 1: X1 = X + Z on the noised columns, Z ~ ZIL(delta, lam^2 I).
        z, _ = sample_zil(n, cols.size, self.lam, self.delta, gen)
        z += sub
        _snap(z, grid)
        # Step 2: X2 = X1 + S, S ~ SL(delta lam^2 I) (post-processing of X1).
        s = sample_sl(n, cols.size, self.lam * math.sqrt(self.delta), gen)
        s += z
        _snap(s, grid)
        if all_cols:
            x1, x2 = z, s
        else:
            x1 = x.copy()
            x1[:, cols] = z
            x2 = x1.copy()
            x2[:, cols] = s
        return ZILRelease(
            x1=x1,
            x2=x2,
            lam=self.lam,
            delta=self.delta,
            bounds=self.bounds.copy(),
            columns=cols,
            column_names=tuple(names),
            rng_kind=rng_kind(gen),
            n_clipped={names[c]: int(k) for c, k in zip(cols, n_out, strict=True)},
            ids=ids,
        )

    def __repr__(self) -> str:
        return (
            f"ZILMechanism(lam={self.lam:.6g}, delta={self.delta:.4g}, "
            f"columns={self.columns!r}, clip={self.clip})"
        )
