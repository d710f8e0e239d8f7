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
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from privest.accounting.zil import calibrate_lam
from privest.accounting.zil_guarantee import ZILGuarantee
from privest.backends import get_engine
from privest.contract import Mechanism
from privest.errors import BoundsError, ValidationError
from privest.noise import sl_scales, zil_scales
from privest.release.columns import Block, ReleasedColumns, local_domain, warn_not_secure
from privest.release.ids import canonical_ids
from privest.release.into_store import out_of_core, release_to_store
from privest.release.store import read_release, save_release
from privest.rng import RNGKind, resolve_rng, rng_kind
from privest.validation import (
    as_float_matrix,
    check_bounds,
    check_epsilon,
    check_positive,
    check_probability,
)

__all__ = [
    "ZILMechanism",
    "ZILRelease",
    "block_rows",
    "bounds_error",
    "load_release",
    "output_grid",
    "zil_copies",
]

Columns = Sequence[int] | Sequence[str] | None
Rounder = Callable[[np.ndarray], Any]
#: a release of at least this many records shows progress (rich, on stderr)
PROGRESS_ROWS = 1 << 21


def output_grid(noise_scale: Any) -> np.ndarray:
    """Per-column width of the grid released values are rounded to.

    ``2^(floor(log2 s_j) - 20)`` for the noise scale ``s_j = lam (hi_j - lo_j)`` of each
    noised column (a power of two, so the rounding is exact arithmetic).
    """
    s = np.asarray(noise_scale, dtype=float)
    return np.ldexp(1.0, np.floor(np.log2(s)).astype(int) - 20)


def block_rows(d: int) -> int:
    """Records per block of a release with ``d`` noised columns: about 2^17 values, so a
    block's arrays stay in the processor's cache while every step runs over them."""
    return max(64, (1 << 17) // max(d, 1) // 64 * 64)


def _normals(rng: np.random.Generator, out: np.ndarray, buf: np.ndarray | None) -> np.ndarray:
    """N(0, 1) draws for the (rows, d) block ``out``, in record order: into ``out`` itself
    when it is C-contiguous, else into the start of ``buf`` (returned)."""
    if out.flags.c_contiguous:
        rng.standard_normal(out=out)
        return out
    g = buf.reshape(-1)[: out.size].reshape(out.shape)
    rng.standard_normal(out=g)
    return g


def _algorithm1(
    x: np.ndarray,
    x1: np.ndarray,
    x2: np.ndarray,
    lam: float,
    zero_prob: float,
    rng: np.random.Generator,
    ranges: float | np.ndarray | None = None,
    rounders: tuple[Rounder | None, Rounder | None] = (None, None),
    check: Callable[[np.ndarray], np.ndarray] | None = None,
    rows: int | None = None,
    progress: bool = False,
) -> None:
    """Algorithm 1 of paper 000 (Sec. 3.2) on the records (rows) of ``x`` (m, d): fills
    ``x1`` with X1 = X + Z, Z ~ ZIL(zero_prob, lam^2 D^2) (one zero/non-zero draw and one
    W ~ Exp(1) per record, shared by its d coordinates), and ``x2`` with X2 = X1 + S,
    S ~ SL(zero_prob lam^2 D^2), D = diag(``ranges``) (the identity when ``None``).
    ``rounders`` round X1 (before S is drawn) and X2 in place (post-processing: the output
    grid, a public resolution); ``check`` returns each input block inside its bounds (or
    raises). In blocks of ``rows`` records (all at once when ``None``), each drawn in record
    order, so the draws depend on the seed, d, m and the blocks only; blocks that fit in
    the processor's cache (:func:`block_rows`) make every step after the draws nearly free.
    This is the only place privest draws ZIL noise.
    """
    m, d = x.shape
    rows = m if rows is None else rows
    buf = None if x1.flags.c_contiguous else np.empty(d * min(rows, m))
    starts: Iterator[int] | range = range(0, m, rows)
    if progress:
        from privest.progress import progress_iter

        starts = progress_iter(starts, "releasing (ZIL noise)")
    scale2 = lam * math.sqrt(zero_prob)
    for a in starts:
        xb, o1, o2 = x[a : a + rows], x1[a : a + rows], x2[a : a + rows]
        if check is not None:
            xb = check(xb)
        mult = zil_scales(xb.shape[0], lam, zero_prob, rng)[:, None]
        np.multiply(_normals(rng, o1, buf), mult, out=o1)
        if ranges is not None:
            o1 *= ranges
        o1 += xb
        if rounders[0] is not None:
            rounders[0](o1)
        g = _normals(rng, o2, buf)
        np.multiply(g, sl_scales(xb.shape[0], scale2, rng)[:, None], out=o2)
        if ranges is not None:
            o2 *= ranges
        o2 += o1
        if rounders[1] is not None:
            rounders[1](o2)
        if not np.isfinite(o2).all():  # X2 = X1 + S: non-finite if X1 is
            raise ValidationError(
                "lam: the noise overflowed the float range; use a smaller lam or tighter bounds"
            )


def zil_copies(
    x: np.ndarray,
    lam: float,
    zero_prob: float,
    rng: np.random.Generator,
    ranges: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 on the records of ``x`` (shape (..., d)): ``(X1, X2)`` of its shape.

    Leading axes of ``x`` are records too, so a batch of R data sets (R, n, d) is released
    in one call (the paper-000 tables); ``ranges`` (d,) scales each column's noise. All
    records in one block: the draws of :meth:`ZILMechanism.release` when n fits in one of
    its blocks (it adds the bounds check and the output grid).
    """
    shape = x.shape
    flat = np.asarray(x, dtype=float).reshape(-1, shape[-1])
    x1, x2 = np.empty(flat.shape), np.empty(flat.shape)
    d_ranges = None if ranges is None else np.asarray(ranges, dtype=float)
    _algorithm1(flat, x1, x2, lam, zero_prob, rng, d_ranges)
    return x1.reshape(shape), x2.reshape(shape)


def _column_range(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's minimum and maximum over a (rows, d) block. A C-ordered block is
    reduced as (rows / 64, 64 d) first: reducing over few long rows is ten times faster
    than over many short ones."""
    rows, d = block.shape
    if block.flags.c_contiguous and rows % 64 == 0:
        wide = block.reshape(rows // 64, 64 * d)
        return wide.min(axis=0).reshape(64, d).min(axis=0), wide.max(axis=0).reshape(64, d).max(
            axis=0
        )
    return block.min(axis=0), block.max(axis=0)


def bounds_error(columns: list[str]) -> BoundsError:
    """The refusal of data with values outside the public bounds in ``columns`` (names
    only: no value, row or count); the names are also its ``columns`` attribute."""
    err = BoundsError(
        f"X: columns {list(columns)} have values outside their public bounds; widen the "
        "bounds or pass clip=True to clip them"
    )
    err.columns = list(columns)  # type: ignore[attr-defined]
    return err


def _per_column(values: np.ndarray) -> float | np.ndarray:
    """A per-column factor (d,) as one float if all are equal (the same products, faster)."""
    v = np.asarray(values, dtype=float)
    return float(v[0]) if v.size and bool(np.all(v == v[0])) else v


def _snapper(grid: np.ndarray) -> Rounder:
    """In-place rounding of (rows, d) blocks to multiples of ``grid`` (d,): powers of two,
    so the scaling is exact."""
    inverse = 1.0 / (grid := _per_column(grid))

    def snap(values: np.ndarray) -> None:
        values *= inverse
        np.rint(values, out=values)
        values *= grid

    return snap


def _stepper(step: np.ndarray) -> Rounder:
    """In-place rounding of (rows, d) blocks to multiples of the public ``step`` (d,)."""
    step = _per_column(step)

    def to_step(values: np.ndarray) -> None:
        values /= step
        np.rint(values, out=values)
        values *= step

    return to_step


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

    def iter_blocks(self, rows: int | None = None) -> Iterator[Block]:
        """Row blocks ``(x1, x2, ids)`` (views): one, or of at most ``rows`` rows."""
        step = self.n if rows is None else max(1, int(rows))
        for a in range(0, self.n, step):
            ids = None if self.ids is None else self.ids[a : a + step]
            yield self.x1[a : a + step], self.x2[a : a + step], ids

    def frame(self, which: Literal["x1", "x2"] = "x1") -> pd.DataFrame:
        """The released copy ``x1`` or ``x2`` as a DataFrame (ids as the index if present)."""
        data = self.x1 if which == "x1" else self.x2
        index = pd.Index(self.ids, name="id") if self.ids is not None else None
        return pd.DataFrame(data, columns=list(self.column_names), index=index)

    def save(self, path: str | Path, *, append: bool = False, ids: bool = True) -> None:
        """Write to (or, with ``append=True``, add to) an append-only release store
        (:func:`~privest.release.store.save_release`; ``ids=False`` for a store without
        record ids, which cannot refuse a record released twice)."""
        save_release(self, path, append=append, ids=ids)

    @classmethod
    def load(cls, path: str | Path) -> ZILRelease:
        """Read every record of a release store."""
        return cls(**read_release(path))


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
    domain : a :class:`~privest.Domain` giving ``bounds`` (and one ``resolution`` for every
        noised column) instead of, or agreeing with, the keywords (docs/domain.md). Swap
        neighbours only (Thm 3.1 protects one record's values, n public): add/remove or a
        person unit is refused.
    """

    def __init__(
        self,
        lam: float,
        zero_prob: float,
        bounds: Any = None,
        columns: Columns = None,
        clip: bool = False,
        resolution: Any = None,
        *,
        domain: Any = None,
    ) -> None:
        self.lam = check_positive(lam, "lam")
        self.zero_prob = check_probability(zero_prob, "zero_prob")
        self.domain, bounds, resolution = local_domain(
            domain, "the ZIL release", bounds=bounds, resolution=resolution
        )
        if bounds is None:
            raise BoundsError("bounds: required (public bounds of the noised columns)")
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
        bounds: Any = None,
        unit: Literal["individual", "attribute"] = "individual",
        columns: Columns = None,
        clip: bool = False,
        resolution: Any = None,
        *,
        domain: Any = None,
    ) -> ZILMechanism:
        """The mechanism with the least noise that is (epsilon, delta)-DP (Thm 3.3 recipe).

        Solves ``delta_tilde_{c', zero_prob}(epsilon) = delta`` for c', then sets
        ``lam = sqrt(|J|) / c'`` (``unit="individual"``: whole records, DP/LDP) or
        ``lam = 1 / c'`` (``"attribute"``: one attribute, ADP/LADP), the diameters of the
        unit cube each column's box is mapped to. One noised column uses the exact Laplace
        profile.
        """
        check_epsilon(epsilon)
        kw = {"columns": columns, "clip": clip, "resolution": resolution, "domain": domain}
        tmp = cls(1.0, zero_prob, bounds, **kw)
        lam = calibrate_lam(epsilon, delta, tmp.zero_prob, tmp.bounds.shape[0], unit=unit)
        mech = cls(lam, zero_prob, bounds, **kw)
        if unit == "individual":  # the point a budget is charged at (release's budget=)
            mech.target_epsilon = float(epsilon)
        return mech

    @property
    def guarantee(self) -> ZILGuarantee:
        """Privacy guarantee of a release by this mechanism (individual and attribute unit)."""
        return ZILGuarantee(self.lam, self.zero_prob, self.bounds.shape[0])

    def resolve_columns(self, names: list[str], d: int) -> np.ndarray:
        """The indices of the noised columns among ``names`` (``d`` columns): a clear error
        for a column that is not there, a wrong number of bounds or a repeated column."""
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

    def charge(self, budget: Any, budget_epsilon: float | None, label: str) -> None:
        """Charge ``budget`` (if any) for one release, before any data are read: at
        ``budget_epsilon`` on the individual-unit curve (default: the calibrated epsilon)."""
        from privest.accounting.budget import charge

        epsilon = budget_epsilon if budget_epsilon is not None else self.target_epsilon
        charge(budget, self.guarantee, label=label, mechanism="zil", epsilon=epsilon)

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
    ) -> Any:
        """Release ``X`` (array or DataFrame) once: Algorithm 1, steps 1 and 2.

        ``rng=None`` draws from a secure generator (:func:`privest.make_rng`); a seed (or a
        Generator of the caller's) is for experiments only and warns
        (:class:`~privest.errors.SeededRandomnessWarning`). ``ids`` (one per record; whole
        numbers or text, canonical whatever their spelling: :mod:`privest.release.ids`)
        are published with the records so that a store can refuse to release a record
        twice; ``ids=False`` says there are none on purpose.

        ``budget`` (a :class:`~privest.Budget`) is charged before ``X`` is read, at the
        point ``(budget_epsilon, delta(budget_epsilon))`` of the individual-unit curve
        (default: the epsilon the mechanism was calibrated for).

        With ``store=`` the release goes straight into that release store (``append=True``
        adds to it; :func:`~privest.release.into_store.release_to_store`): an in-memory
        ``X`` is released and saved, out-of-core data (a Dask DataFrame, or a Parquet path,
        on the ``dask`` engine; docs/scale-out.md) partition by partition by its backend,
        with ``ids`` the name of the id column and ``rng`` a seed or ``None``. A store needs
        ids unless ``ids=False``.
        """
        if store is not None:
            return release_to_store(
                X,
                self,
                store,
                rng=rng,
                ids=ids,
                append=append,
                budget=budget,
                budget_epsilon=budget_epsilon,
                label=label,
            )
        if isinstance(X, (str, os.PathLike)) or out_of_core(X):
            raise ValidationError(
                "X: a Parquet path or out-of-core data is released straight into a store: "
                "pass store="
            )
        self.charge(budget, budget_epsilon, label)
        names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
        x = as_float_matrix(X, "X")
        n, d = x.shape
        names = names or [f"x{j}" for j in range(d)]
        cols = self.resolve_columns(names, d)
        if ids is not None and ids is not False:
            ids, _ = canonical_ids(ids, n)
        else:
            ids = None
        gen = resolve_rng(rng)
        warn_not_secure(rng_kind(gen))
        x1, x2 = self._noised(x, cols, names, gen)
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

    def _noised(
        self, x: np.ndarray, cols: np.ndarray, names: list[str], gen: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(X1, X2)`` of ``x``: Algorithm 1 on the noised columns ``cols``,
        the unit cube's ZIL(zero_prob, lam^2 I) noise mapped back by the ranges D; X1 on
        the output grid (or the public resolution) before X2 = X1 + S is drawn, X2 on the
        output grid; the other columns as they are."""
        n, d = x.shape
        k = cols.size
        ranges = self.bounds[:, 1] - self.bounds[:, 0]
        snap = _snapper(output_grid(self.lam * ranges))
        round_x1 = snap if self.resolution is None else _stepper(self.resolution)
        ranges = _per_column(ranges)
        x1, x2 = np.empty((n, d)), np.empty((n, d))
        plain = np.setdiff1d(np.arange(d), cols)  # released as they are
        if plain.size:
            x1[:, plain] = x2[:, plain] = x[:, plain]
        in_place = np.array_equal(cols, np.arange(cols[0], cols[0] + k))
        if in_place:  # a range of columns: noised where they are
            span = slice(int(cols[0]), int(cols[0]) + k)
            src, out1, out2 = x[:, span], x1[:, span], x2[:, span]
        else:  # gathered, then put back
            src = x[:, cols]
            out1, out2 = np.empty((n, k)), np.empty((n, k))
        check = self._bounds_check(x, cols, names)
        lam, zp, rows = self.lam, self.zero_prob, block_rows(k)
        progress = n >= PROGRESS_ROWS
        _algorithm1(src, out1, out2, lam, zp, gen, ranges, (round_x1, snap), check, rows, progress)
        if not in_place:
            x1[:, cols], x2[:, cols] = out1, out2
        return x1, x2

    def _bounds_check(
        self, x: np.ndarray, cols: np.ndarray, names: list[str]
    ) -> Callable[[np.ndarray], np.ndarray]:
        """The check of each (rows, k) block of the noised columns: the block if inside the
        public bounds, clipped with ``clip=True``, else a :class:`BoundsError` naming every
        column of ``x`` with a value outside (no value, row or count)."""
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        flat = isinstance(_per_column(lo), float) and isinstance(_per_column(hi), float)

        def check(block: np.ndarray) -> np.ndarray:
            low, high = (block.min(), block.max()) if flat else _column_range(block)
            if np.all(low >= lo) and np.all(high <= hi):
                return block
            if self.clip:
                return np.clip(block, lo, hi)
            sub = x[:, cols]
            out = ((sub < lo) | (sub > hi)).any(axis=0)
            raise bounds_error([names[c] for c in cols[out]])

        return check

    def __repr__(self) -> str:
        return (
            f"ZILMechanism(lam={self.lam:.6g}, zero_prob={self.zero_prob:.4g}, "
            f"columns={self.columns!r}, clip={self.clip})"
        )


def load_release(path: str | Path, *, engine: str = "memory") -> Any:
    """Read the release stored at ``path`` (docs/zil-release.md, "The release store").

    ``engine="memory"`` (default) reads every part listed in the manifest into one
    :class:`ZILRelease`; another engine (``"dask"``: the extra ``privest[dask]``,
    docs/scale-out.md) returns its own release with the records where it keeps them
    (:func:`privest.backends.get_engine`). Either way every part is checked against its
    sha256 and the manifest's layout before its records are used.
    """
    if engine != "memory":
        return get_engine(engine).load_release(path)
    return ZILRelease(**read_release(path))
