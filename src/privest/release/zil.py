"""The ZIL mechanism and the doubly random release (paper 000, Def 3.1 and Algorithm 1).

Each record is released once as ``X1 = X + Z`` with ``Z ~ ZIL(zero_prob, lam^2 D^2)`` on
the noised columns J, where ``D = diag(hi_j - lo_j)`` holds the public ranges: the box is
mapped to the unit cube, noised with ``ZIL(zero_prob, lam^2 I)`` (Algorithm 1, one
zero/non-zero draw and one ``W ~ Exp(1)`` per record, shared by all noised coordinates)
and mapped back, so every column gets noise in units of its own range and ``lam`` is
unit-free. The doubly random copy ``X2 = X1 + S``, ``S ~ SL(zero_prob lam^2 D^2)``, is
post-processing of X1 and costs no privacy (Prop 2.2); given ``X = x``,
``X2 - x ~ SL(lam^2 D^2)`` exactly (Section 3.1). The guarantee is that of Thm 3.1 on
the unit cube: diameter ``sqrt(|J|)`` for records, 1 for single attributes.

**With probability zero_prob a record's noised columns are released exactly.** Columns
outside J are released unchanged and are not protected.

Floating-point note (docs/zil-release.md): the noised values are rounded to a
power-of-two grid about ``lam (hi_j - lo_j) 2^-20`` wide per column, so the low-order
bits of a released value do not betray the raw value; the induced bias is below
``lam (hi_j - lo_j) 1e-6`` per coordinate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from privest.accounting.zil import calibrate_lam
from privest.accounting.zil_guarantee import ZILGuarantee
from privest.contract import Mechanism
from privest.errors import BoundsError, ValidationError
from privest.noise import sample_sl, sample_zil
from privest.release.ids import canonical_ids
from privest.rng import RNGKind, randomness_note, resolve_rng, rng_kind
from privest.validation import (
    as_float_matrix,
    check_bounds,
    check_epsilon,
    check_positive,
    check_probability,
)

if TYPE_CHECKING:
    from privest.scale import DaskRelease

__all__ = ["ZILMechanism", "ZILRelease", "output_grid", "zil_copies"]

Columns = Sequence[int] | Sequence[str] | None


def output_grid(noise_scale: Any) -> np.ndarray:
    """Per-column width of the grid released values are rounded to.

    ``2^(floor(log2 s_j) - 20)`` for the noise scale ``s_j = lam (hi_j - lo_j)`` of each
    noised column (a power of two, so the rounding is exact arithmetic).
    """
    s = np.asarray(noise_scale, dtype=float)
    return np.ldexp(1.0, np.floor(np.log2(s)).astype(int) - 20)


def zil_copies(
    x: np.ndarray,
    lam: float,
    zero_prob: float,
    rng: np.random.Generator,
    ranges: np.ndarray | None = None,
    round_x1: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 of paper 000 (Sec. 3.2) on the records of ``x`` (shape (..., d)).

    X1 = X + Z with Z ~ ZIL(zero_prob, lam^2 D^2) (one zero/non-zero draw and one
    W ~ Exp(1) per record, shared by its d coordinates) and X2 = X1 + S with
    S ~ SL(zero_prob lam^2 D^2), where D = diag(``ranges``) (the identity when ``None``).
    Leading axes of ``x`` are records too, so a batch of R data sets (R, n, d) is released in
    one call (the paper-000 tables) and one data set (n, d) by :meth:`ZILMechanism.release`.
    ``round_x1`` (optional) is applied to X1 in place before S is drawn (post-processing,
    e.g. the release's output grid). This is the only place privest draws ZIL noise.
    """
    shape = x.shape
    d = shape[-1]
    m = int(np.prod(shape[:-1]))
    z, _ = sample_zil(m, d, lam, zero_prob, rng)
    if ranges is not None:
        z *= ranges
    x1 = z.reshape(shape)
    x1 += x
    if round_x1 is not None:
        round_x1(x1)
    s = sample_sl(m, d, lam * math.sqrt(zero_prob), rng)
    if ranges is not None:
        s *= ranges
    x2 = s.reshape(shape)
    x2 += x1
    return x1, x2


def _snap(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Round the columns in place to multiples of ``grid`` (powers of two: exact scaling)."""
    values *= 1.0 / grid
    np.rint(values, out=values)
    values *= grid
    return values


class ReleasedColumns:
    """What a release's public metadata says about its columns; shared by the in-memory
    :class:`ZILRelease` and its Dask twin (``privest.scale.DaskRelease``), which both have
    ``x1`` of shape (n, d), ``columns``, ``column_names``, ``bounds``, ``lam`` and
    ``zero_prob``."""

    x1: Any
    lam: float
    zero_prob: float
    bounds: np.ndarray
    columns: np.ndarray
    column_names: tuple[str, ...]

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


@dataclass(frozen=True, eq=False)
class ZILRelease(ReleasedColumns):
    """A released data set: what the analyst holds (Algorithm 1's output plus its parameters).

    ``x1`` and ``x2`` have every input column; only ``columns`` (indices) were noised, each
    with noise in units of its public range (``bounds``, one row per noised column).
    Arrays are read-only: a release is never re-randomised.
    """

    x1: np.ndarray
    x2: np.ndarray
    lam: float
    zero_prob: float
    bounds: np.ndarray
    columns: np.ndarray
    column_names: tuple[str, ...]
    randomness: RNGKind
    ids: np.ndarray | None = None
    resolution: np.ndarray | None = None

    def __post_init__(self) -> None:
        for arr in (self.x1, self.x2, self.bounds, self.columns, self.ids, self.resolution):
            if arr is not None:
                arr.setflags(write=False)

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
        """A short text report: size, noised columns, randomness and privacy (no data-
        dependent count beyond the public n)."""
        note = randomness_note(self.randomness)
        lines = [
            f"ZIL release: {self.n} records, {self.d} columns, "
            f"noised: {', '.join(self.noised_names)}",
            f"  lam = {self.lam:.6g} (per unit of each column's range), zero_prob = "
            f"{self.zero_prob:.4g} (about {self.zero_prob:.1%} of records released without "
            "noise)",
            f"  randomness: {self.randomness}" + (f" ({note})" if note else ""),
        ]
        if self.resolution is not None:
            res = ", ".join(
                f"{n}: {r:g}" for n, r in zip(self.noised_names, self.resolution, strict=True)
            )
            lines.append(f"  X1 rounded to the public resolution {res}")
        return "\n".join(lines)


class ZILMechanism(Mechanism):
    """ZIL release of ``columns`` with noise scale ``lam`` and zero proportion ``zero_prob``.

    Parameters
    ----------
    lam : SL scale in units of each noised column's public range: column j gets noise of
        covariance ``(1 - zero_prob) (lam (hi_j - lo_j))^2`` (Section 3.1).
    zero_prob : probability that a record is released without noise, in (0, 1) (the
        paper's delta; docs/zil-release.md, Notes). It is *not* a DP delta; the release's
        DP delta is at
        least ``zero_prob`` at every epsilon (see :attr:`guarantee`).
    bounds : public bounds of the noised columns: a mapping ``{column: (lo, hi)}`` (its
        keys are the noised columns), a list of pairs in the order of ``columns``, or one
        ``(lo, hi)`` for every column in ``columns`` (one noised column when ``columns``
        is not given). Never inferred from the data.
    columns : the noised columns (indices, or names for DataFrames); all when ``None``.
    clip : clip out-of-bounds values to the bounds instead of raising.
    resolution : a public grid step for the released X1 of the noised columns (one number,
        a list in the order of ``columns``, or a mapping like ``bounds``); ``None`` keeps
        the fine float grid. On discrete data (e.g. integer ages) the unnoised records
        sit on the data's grid while noised ones do not, which tells them apart; rounding
        every released X1, noised or not, to the data's resolution removes that signal.
        It is post-processing (the guarantee is unchanged); X2 is drawn from the rounded
        X1, and the corrected losses gain a bias of order ``resolution^2`` times the
        loss's curvature, negligible when the step is small against the noise
        (docs/zil-release.md).
    """

    def __init__(
        self,
        lam: float,
        zero_prob: float,
        bounds: Any,
        columns: Columns = None,
        clip: bool = False,
        resolution: Any = None,
    ) -> None:
        self.lam = check_positive(lam, "lam")
        self.zero_prob = check_probability(zero_prob, "zero_prob")
        res_map = None
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
        if isinstance(resolution, Mapping):
            keys = list(resolution)
            if self.columns is None or sorted(map(str, keys)) != sorted(map(str, self.columns)):
                raise ValidationError(
                    f"resolution: keys {keys!r} must be the noised columns {self.columns!r}"
                )
            res_map = {str(k): v for k, v in resolution.items()}
            resolution = [res_map[str(c)] for c in self.columns]
        self.resolution = self._check_resolution(resolution)
        self._check_float_range()
        #: the epsilon :meth:`calibrate` targeted (individual unit), else None
        self.target_epsilon: float | None = None

    def _check_resolution(self, resolution: Any) -> np.ndarray | None:
        if resolution is None:
            return None
        k = self.bounds.shape[0]
        res = np.broadcast_to(np.asarray(resolution, dtype=float), (k,)).copy()
        if not np.all(np.isfinite(res)) or not np.all(res > 0):
            raise ValidationError(
                f"resolution: {resolution!r} must be finite steps > 0, one per noised column"
            )
        return res

    def _check_float_range(self) -> None:
        """Refuse settings whose noise or output grid leaves the float range, up front."""
        ranges = self.bounds[:, 1] - self.bounds[:, 0]
        scale = self.lam * ranges
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            widest = np.max(np.abs(self.bounds), axis=1) + 1e3 * scale
            grid = output_grid(scale) if np.all(np.isfinite(scale) & (scale > 0)) else scale
            steps = widest / grid
        if not (np.all(np.isfinite(widest)) and np.all(np.isfinite(steps)) and np.all(grid > 0)):
            raise ValidationError(
                f"lam: {self.lam:g} with these bounds puts the released values or their "
                "output grid outside the float range; use a lam and bounds of ordinary size"
            )

    @classmethod
    def calibrate(
        cls,
        epsilon: float,
        delta: float,
        zero_prob: float,
        bounds: Any,
        unit: Literal["individual", "attribute"] = "individual",
        columns: Columns = None,
        clip: bool = False,
        resolution: Any = None,
    ) -> ZILMechanism:
        """The mechanism with the least noise that is (epsilon, delta)-DP (Thm 3.3 recipe).

        Solves ``delta_tilde_{c', zero_prob}(epsilon) = delta`` for c', then sets
        ``lam = sqrt(|J|) / c'`` (``unit="individual"``: whole records, DP/LDP) or
        ``lam = 1 / c'`` (``"attribute"``: one attribute, ADP/LADP), the diameters of the
        unit cube each column's box is mapped to. One noised column uses the exact Laplace
        profile.
        """
        check_epsilon(epsilon)
        tmp = cls(1.0, zero_prob, bounds, columns=columns, clip=clip)
        lam = calibrate_lam(epsilon, delta, tmp.zero_prob, tmp.bounds.shape[0], unit=unit)
        mech = cls(lam, zero_prob, bounds, columns=columns, clip=clip, resolution=resolution)
        if unit == "individual":  # the point a budget is charged at (release's budget=)
            mech.target_epsilon = float(epsilon)
        return mech

    @property
    def guarantee(self) -> ZILGuarantee:
        """Privacy guarantee of a release by this mechanism (individual and attribute unit)."""
        return ZILGuarantee(self.lam, self.zero_prob, self.bounds.shape[0])

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
        *,
        budget: Any = None,
        budget_epsilon: float | None = None,
        label: str = "ZIL release",
        store: str | Path | None = None,
        append: bool = False,
    ) -> ZILRelease | DaskRelease:
        """Release ``X`` (array or DataFrame) once: Algorithm 1, steps 1 and 2.

        ``rng=None`` draws from a secure generator (:func:`privest.make_rng`); pass a
        seeded one only for experiments. ``ids`` (one per record, optional; whole numbers
        or text, see :func:`~privest.release.ids.canonical_ids`) are published with the
        records so that a store can refuse to release a record twice.

        ``budget`` (a :class:`~privest.Budget`) is charged before ``X`` is read, at the
        point ``(budget_epsilon, delta(budget_epsilon))`` of the individual-unit curve
        (default: the epsilon the mechanism was calibrated for).

        Out of core (docs/scale-out.md): with ``store=`` a Dask DataFrame or a Parquet path
        ``X`` is released partition by partition on the current Dask scheduler straight into
        the store (``append=True`` adds to it); ``ids`` is then the name of the id column,
        ``rng`` a seed or ``None``, and the result a :class:`~privest.scale.DaskRelease`.
        """
        from privest.accounting.budget import charge

        if store is not None:
            from privest.scale.release import release_to_store

            return release_to_store(
                self,
                X,
                store,
                rng=rng,
                id_column=ids,
                append=append,
                budget=budget,
                budget_epsilon=budget_epsilon,
                label=label,
            )
        if isinstance(X, (str, Path)) or type(X).__module__.startswith("dask"):
            raise ValidationError(
                "X: a Dask DataFrame or a Parquet path is released into a store: pass store="
            )

        charge(
            budget,
            self.guarantee,
            label=label,
            mechanism="zil",
            epsilon=budget_epsilon if budget_epsilon is not None else self.target_epsilon,
        )
        if isinstance(X, pd.DataFrame):
            names = [str(c) for c in X.columns]
        else:
            names = None
        x = as_float_matrix(X, "X")
        n, d = x.shape
        names = names or [f"x{j}" for j in range(d)]
        cols = self._resolve_columns(names, d)
        if ids is not None:
            ids, _ = canonical_ids(ids, n)
        all_cols = cols.size == d and bool(np.all(cols == np.arange(d)))
        sub = self._within_bounds(x if all_cols else x[:, cols], [names[c] for c in cols])
        gen = resolve_rng(rng)
        ranges = self.bounds[:, 1] - self.bounds[:, 0]
        grid = output_grid(self.lam * ranges)
        # Algorithm 1 on the noised columns: the unit cube's ZIL(zero_prob, lam^2 I) noise
        # mapped back by the ranges D; X1 on the output grid (or the public resolution)
        # before the doubly random copy X2 = X1 + S (post-processing of X1).
        z, s = zil_copies(sub, self.lam, self.zero_prob, gen, ranges, self._rounder(grid))
        _snap(s, grid)
        if not (np.isfinite(z).all() and np.isfinite(s).all()):
            raise ValidationError(
                "lam: the noise overflowed the float range; use a smaller lam or tighter bounds"
            )
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
            zero_prob=self.zero_prob,
            bounds=self.bounds.copy(),
            columns=cols,
            column_names=tuple(names),
            randomness=rng_kind(gen),
            ids=ids,
            resolution=None if self.resolution is None else self.resolution.copy(),
        )

    def _within_bounds(self, sub: np.ndarray, names: list[str]) -> np.ndarray:
        """The noised columns ``sub`` inside their public bounds: clipped with ``clip=True``,
        else a :class:`BoundsError` naming every column with a value outside."""
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        if not (np.any(sub.min(axis=0) < lo) or np.any(sub.max(axis=0) > hi)):
            return sub
        if not self.clip:
            n_out = ((sub < lo) | (sub > hi)).sum(axis=0)
            bad = [names[j] for j in np.flatnonzero(n_out)]
            raise BoundsError(
                f"X: columns {bad} have values outside their public bounds; widen the "
                "bounds or pass clip=True to clip them"
            )
        return np.clip(sub, lo, hi)

    def _rounder(self, grid: np.ndarray) -> Any:
        """In-place rounding of X1: the power-of-two output grid, or every released X1,
        noised or not, on the public ``resolution`` (post-processing)."""
        if self.resolution is None:
            return lambda z: _snap(z, grid)
        step = self.resolution

        def to_resolution(z: np.ndarray) -> None:
            z /= step
            np.rint(z, out=z)
            z *= step

        return to_resolution

    def __repr__(self) -> str:
        return (
            f"ZILMechanism(lam={self.lam:.6g}, zero_prob={self.zero_prob:.4g}, "
            f"columns={self.columns!r}, clip={self.clip})"
        )
