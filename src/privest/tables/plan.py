"""The public plan of a private table: what is released, with which noise and budget
(docs/tables.md). Built from public inputs only, before any data is read.

A table's aggregates are finished from a few **primitives** per cell, each released once
with noise (post-processing does the rest):

* ``rows``: the number of rows (after contribution bounding); needed by counts, means and
  the intervals of quantiles;
* ``centred:C``: the sum of ``x - c`` over the cell's rows, ``c`` the midpoint of the
  public bounds (a person moves it by at most ``max_rows (b - a) / 2``). A mean is
  ``c + centred / rows``, a sum ``c rows + centred`` (the centring halves the noise of a
  sum over the raw one when the count is released anyway);
* ``sum:C``: the raw sum, when no count is released;
* ``square:C``: the sum of ``(x - c)^2`` (the sampling variance of a mean's interval);
* ``point:C:q``, ``lower:C:q``, ``upper:C:q``: a quantile and the two ends of its interval,
  by the exponential mechanism (:mod:`privest.mechanisms.rank_exponential`).

Composition: a person touches at most ``max_groups`` cells, so each primitive is a
parallel composition over the cells with ``touched = max_groups``
(:class:`~privest.accounting.events.ParallelEvent`), and the primitives and the selection
compose sequentially (:class:`~privest.accounting.events.ComposedEvent`). The total is
split by public weights (:data:`WEIGHTS`): Laplace noise splits epsilon (pure DP adds up);
Gaussian noise splits the zCDP rho that the total (epsilon, delta) allows (Bun and Steinke
2016), so several aggregates sharing a table pay sqrt-wise. The plan checks, before any data
is read, that the accountant composes its events within the total.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from privest.accounting.accountants import best, compose_events
from privest.accounting.base import ApproxDP
from privest.accounting.events import (
    ApproxDPEvent,
    ComposedEvent,
    Event,
    ParallelEvent,
    PureDPEvent,
    ZCDPEvent,
)
from privest.accounting.profiles import zcdp_rho_for
from privest.domain import Domain
from privest.errors import PrivacyParameterError, ValidationError
from privest.mechanisms.rank_exponential import RankScore, em_grid
from privest.tables.noise import CellNoise, gaussian_noise, laplace_noise
from privest.tables.selection import threshold
from privest.validation import check_bounds, check_delta, check_epsilon

__all__ = [
    "Aggregate",
    "INFERENCE",
    "NOISES",
    "Plan",
    "Primitive",
    "TableGuarantee",
    "make_plan",
    "parse_aggregates",
]

STATISTICS = ("count", "sum", "mean", "median", "quantile")
NOISES = ("auto", "laplace", "gaussian")
INFERENCE = ("population", "none")
#: the public weights of the budget split (the optimal selection weighs 1)
WEIGHTS = {
    "rows": 1.0,
    "centred": 1.0,
    "sum": 1.0,
    "square": 0.5,
    "point": 1.0,
    "lower": 0.5,
    "upper": 0.5,
}
#: data are snapped to a dyadic grid with |value| < 2^GRID_BITS units (exact int64 sums)
GRID_BITS = 30
#: at most this many rows (the exact per-cell sums stay below 2^61)
MAX_ROWS_TOTAL = 2**31


@dataclass(frozen=True)
class Aggregate:
    """One requested output: ``output`` (column prefix), its statistic, the data column
    (None for a count of rows) and the quantile level."""

    output: str
    statistic: str
    column: str | None
    quantile: float | None = None


def _parse_one(name: str, spec: Any, alone: bool) -> Aggregate:
    if not isinstance(spec, str):
        raise ValidationError(f"aggregates[{name!r}]: {spec!r} is not a statistic name")
    stat, _, level = spec.partition(":")
    stat = stat.strip()
    if stat not in STATISTICS:
        raise ValidationError(
            f"aggregates[{name!r}]: {spec!r} is unknown; accepted: {', '.join(STATISTICS)} "
            "(quantile as 'quantile:Q')"
        )
    if stat == "quantile":
        try:
            q = float(level)
        except ValueError:
            raise ValidationError(
                f"aggregates[{name!r}]: {spec!r} needs a level, e.g. quantile:0.9"
            ) from None
        if not 0.0 < q < 1.0:
            raise ValidationError(f"aggregates[{name!r}]: the level {q!r} must be in (0, 1)")
        return Aggregate(f"{name}_quantile_{q:g}", "quantile", name, q)
    if level:
        raise ValidationError(f"aggregates[{name!r}]: {spec!r} takes no level")
    if stat == "count":
        return Aggregate(name if alone else f"{name}_count", "count", None)
    q = 0.5 if stat == "median" else None
    return Aggregate(f"{name}_{stat}", stat, name, q)


def parse_aggregates(aggregates: Any) -> tuple[Aggregate, ...]:
    """``{"n": "count", "income": ["sum", "mean", "median", "quantile:0.9"]}`` ->
    aggregates (module docstring of :mod:`privest.tables.api`)."""
    if not isinstance(aggregates, Mapping) or not aggregates:
        raise ValidationError(
            "aggregates: give a mapping name -> statistic(s), e.g. {'n': 'count', "
            "'income': ['sum', 'mean', 'median']}"
        )
    out: list[Aggregate] = []
    for name, specs in aggregates.items():
        if not isinstance(name, str) or not name:
            raise ValidationError(f"aggregates: the key {name!r} must be a column or output name")
        alone = isinstance(specs, str)
        for spec in [specs] if alone else list(specs):
            out.append(_parse_one(name, spec, alone))
    names = [a.output for a in out]
    if len(set(names)) != len(names):
        raise ValidationError(f"aggregates: an output is asked twice ({names})")
    return tuple(out)


@dataclass
class Primitive:
    """One noisy release per cell (module docstring); ``noise`` (sums and counts) or
    ``score`` (quantiles) is set by the plan."""

    kind: str
    column: str | None = None
    quantile: float | None = None
    noise: CellNoise | None = None
    score: RankScore | None = None
    #: the public snapping of the column: grid exponent p, bound H in grid units
    p: int = 0
    bound: int = 1

    @property
    def key(self) -> str:
        return ":".join(str(v) for v in (self.kind, self.column, self.quantile) if v is not None)

    #: the exponential mechanism is accounted in zCDP (Gaussian plans)
    zcdp: bool = False

    def event(self, touched: int) -> Event:
        if self.noise is not None:
            return self.noise.event()
        eps = self.score.epsilon_run
        # eps-DP, and eps-bounded range: eps^2 / 8-zCDP (Cesar and Rogers 2021)
        cell = ZCDPEvent(eps * eps / 8.0) if self.zcdp else PureDPEvent(eps)
        return ParallelEvent(((touched, cell),), touched)


class TableGuarantee(ApproxDP):
    """(epsilon, delta)-DP of a whole table per privacy unit: its event is the plan's
    composition (the selection, and each primitive in parallel over the cells)."""

    def __init__(self, epsilon: float, delta: float, event: Event, relation: str):
        super().__init__(epsilon, delta)
        self._event = event
        self.relation = relation
        self.label = f"{self.label} ({relation})"

    def event(self, epsilon: float | None = None) -> Event:
        return self._event

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "relation": self.relation, "event": self._event.to_dict()}


@dataclass
class Plan:
    """Everything public about one table (module docstring)."""

    by: tuple[str, ...]
    unit: str | None
    max_groups: int
    max_rows: int
    aggregates: tuple[Aggregate, ...]
    bounds: dict[str, tuple[float, float]]
    public_keys: bool
    noise: str
    inference: str
    alpha: float
    epsilon: float
    delta: float
    primitives: dict[str, Primitive] = field(default_factory=dict)
    #: "none" (public keys), "threshold" (on the released rows) or "optimal"
    selection: str = "none"
    #: the optimal selection's per-cell (eps, delta); the threshold in grid units
    selection_params: tuple[float, float] = (0.0, 0.0)
    threshold_units: int = 0
    grids: dict[str, Any] = field(default_factory=dict)
    event: Event | None = None
    guarantee: TableGuarantee | None = None
    domain: Domain | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.column for a in self.aggregates if a.column is not None))


def _primitive_set(aggs: tuple[Aggregate, ...], inference: bool) -> list[Primitive]:
    stats = {a.statistic for a in aggs}
    quantiles = [a for a in aggs if a.statistic in ("median", "quantile")]
    rows = bool(stats & {"count", "mean"}) or (inference and bool(quantiles))
    prims = [Primitive("rows")] if rows else []
    for col in dict.fromkeys(a.column for a in aggs if a.statistic in ("sum", "mean")):
        prims.append(Primitive("centred" if rows else "sum", col))
        if inference and any(a.column == col and a.statistic == "mean" for a in aggs):
            prims.append(Primitive("square", col))
    for a in quantiles:
        kinds = ("point", "lower", "upper") if inference else ("point",)
        prims += [Primitive(k, a.column, a.quantile) for k in kinds]
    return prims


def _snap(prim: Primitive, a: float, b: float, m: int) -> int:
    """Set the public grid of a sum-like primitive; its per-cell sensitivity in units."""
    half = (b - a) / 2.0
    top = {"centred": half, "sum": max(abs(a), abs(b)), "square": half * half}[prim.kind]
    if top == 0:
        raise ValidationError(f"bounds[{prim.column!r}]: ({a:g}, {b:g}) has no width")
    prim.p = GRID_BITS - math.frexp(top)[1]
    prim.bound = math.ceil(math.ldexp(top, prim.p))
    return m * prim.bound


def _split(plan: Plan, prims: list[Primitive], gaussian: bool) -> tuple[float, float, float]:
    """(epsilon or rho for the primitives, extra epsilon of the selection, its delta)."""
    eps, delta = plan.epsilon, plan.delta
    weights = sum(WEIGHTS[p.kind] for p in prims)
    if plan.selection == "optimal":
        share = eps / (weights + 1.0)
        sel_delta = delta / 2 if gaussian else delta
        plan.selection_params = (share / plan.max_groups, sel_delta / plan.max_groups)
        eps, delta = eps - share, delta - sel_delta
        extra = 0.0
    elif plan.selection == "threshold":
        sel_delta = delta / 2 if gaussian else delta
        extra = -math.log1p(-sel_delta)  # ln(1 / (1 - delta)): module docstring of selection
        eps, delta = eps - extra, delta - sel_delta
    else:
        sel_delta = extra = 0.0
    if eps <= 0:
        raise PrivacyParameterError("epsilon: too small for this table's selection")
    total = zcdp_rho_for(eps, delta) if gaussian else eps
    return total / weights, extra, sel_delta


def _assign(plan: Plan, prims: list[Primitive], gaussian: bool) -> None:
    per_weight, extra, sel_delta = _split(plan, prims, gaussian)
    k, m = plan.max_groups, plan.max_rows
    for prim in prims:
        share = per_weight * WEIGHTS[prim.kind]
        if prim.kind in ("point", "lower", "upper"):
            # per cell: eps / k (pure, L1 over k cells) or rho / k = eps_cell^2 / 8 (zCDP)
            eps_cell = math.sqrt(8.0 * share / k) if gaussian else share / k
            ends = prim.kind != "point"  # their levels are set per cell from the count
            prim.score = RankScore(prim.quantile, eps_cell, m, any_level=ends)
            prim.zcdp = gaussian
            continue
        if prim.kind == "rows":
            sens, unit = m, 1.0
        else:
            sens = _snap(prim, *plan.bounds[prim.column], m)
            unit = math.ldexp(1.0, -prim.p)
        build = gaussian_noise if gaussian else laplace_noise
        prim.noise = build(share, sens, k, unit)
    events: list[Event] = [p.event(k) for p in prims]
    if plan.selection == "optimal":
        e_cell, d_cell = plan.selection_params
        events.append(ParallelEvent(((k, ApproxDPEvent(e_cell, d_cell)),), k))
    elif plan.selection == "threshold":
        events.append(ApproxDPEvent(extra, sel_delta))
        rows = next(p for p in prims if p.kind == "rows")
        plan.threshold_units = threshold(rows.noise, m, sel_delta / k)
    plan.primitives = {p.key: p for p in prims}
    plan.event = ComposedEvent(tuple(events))


def _check_within(plan: Plan) -> None:
    """The accountant's composition of the plan's events within the total (a safety net
    against a planning defect: nothing is read before it passes)."""
    done = best(compose_events(list(plan.event.events), max(plan.delta, 1e-100), ("basic", "zcdp")))
    if done.epsilon > plan.epsilon * (1 + 1e-9) or done.delta > plan.delta * (1 + 1e-9):
        raise PrivacyParameterError(
            f"the table's plan composes to (epsilon={done.epsilon:.6g}, delta={done.delta:.3g}) "
            f"above the total ({plan.epsilon:g}, {plan.delta:g}): a defect, please report it"
        )


def _noise_kind(noise: str, delta: float, prims: list[Primitive], plan: Plan) -> bool:
    """Whether the plan uses Gaussian noise (``noise="auto"``: the smaller variance of a
    sensitivity-1 cell primitive, from the public split)."""
    if noise == "laplace":
        return False
    if delta == 0:
        if noise == "gaussian":
            raise PrivacyParameterError("delta: Gaussian noise needs delta > 0")
        return False
    if noise == "gaussian":
        return True
    per_l, _, _ = _split(plan, prims, False)
    per_g, _, _ = _split(plan, prims, True)
    k = plan.max_groups
    return k / (2.0 * per_g) < 2.0 * (k / per_l) ** 2


def make_plan(
    *,
    by: Any,
    aggregates: Any,
    public_keys: bool,
    unit: str | None = None,
    max_groups: int | None = None,
    max_rows: int | None = None,
    bounds: Any = None,
    epsilon: float,
    delta: float,
    noise: str = "auto",
    inference: str = "population",
    alpha: float = 0.05,
    resolution: Mapping[str, float] | None = None,
) -> Plan:
    """The public plan (module docstring); every input is checked here."""
    by_t = (by,) if isinstance(by, str) else tuple(by)
    if not by_t or not all(isinstance(c, str) and c for c in by_t):
        raise ValidationError(f"by: {by!r} must be a column name or a list of them")
    if unit is not None and (not isinstance(unit, str) or unit in by_t or not unit):
        raise ValidationError(f"unit: {unit!r} must be the person-id column (not a key) or None")
    dom = Domain(
        neighbours="add_remove",
        unit=unit or "record",
        max_groups=(1 if max_groups is None else max_groups) if unit else None,
        max_rows=(1 if max_rows is None else max_rows) if unit else None,
    )
    if unit is None and (max_groups not in (None, 1) or max_rows not in (None, 1)):
        raise ValidationError("max_groups, max_rows: without unit= one record is the unit (1, 1)")
    if noise not in NOISES:
        raise ValidationError(f"noise: {noise!r} is not one of {', '.join(NOISES)}")
    if inference not in INFERENCE:
        raise ValidationError(f"inference: {inference!r} is not one of {', '.join(INFERENCE)}")
    if not (isinstance(alpha, float | int) and 0 < alpha < 1):
        raise ValidationError(f"alpha: {alpha!r} must be in (0, 1)")
    aggs = parse_aggregates(aggregates)
    cols = tuple(dict.fromkeys(a.column for a in aggs if a.column is not None))
    clash = [c for c in cols if c in by_t or c == unit]
    if clash:
        raise ValidationError(f"aggregates: {clash} are keys or the unit, not values")
    bmap = {} if bounds is None else bounds
    if not isinstance(bmap, Mapping):
        raise ValidationError("bounds: a mapping column -> (lo, hi), e.g. {'income': (0, 2e5)}")
    missing = [c for c in cols if c not in bmap]
    if missing:
        raise ValidationError(f"bounds: public bounds are needed for {missing}")
    pairs = {c: tuple(check_bounds(bmap[c], 1, f"bounds[{c!r}]")[0].tolist()) for c in cols}
    plan = Plan(
        by_t,
        unit,
        dom.max_groups or 1,
        dom.max_rows or 1,
        aggs,
        pairs,
        public_keys,
        noise,
        inference,
        float(alpha),
        check_epsilon(epsilon),
        check_delta(delta),
        domain=dom,
    )
    prims = _primitive_set(aggs, inference == "population")
    has_rows = any(p.kind == "rows" for p in prims)
    if not public_keys:
        if plan.delta == 0:
            raise PrivacyParameterError(
                "delta: the keys are not public, so selecting the released cells needs "
                "delta > 0 (or give keys=, a public key table)"
            )
        plan.selection = "threshold" if has_rows and plan.max_rows == 1 else "optimal"
    gaussian = _noise_kind(noise, plan.delta, prims, plan)
    plan.noise = "gaussian" if gaussian else "laplace"
    for c in cols:
        res = None if resolution is None else resolution.get(c)
        if any(a.column == c and a.statistic in ("median", "quantile") for a in aggs):
            plan.grids[c] = em_grid(*pairs[c], res)
    _assign(plan, prims, gaussian)
    _check_within(plan)
    spent_delta = plan.delta if (gaussian or not public_keys) else 0.0
    plan.guarantee = TableGuarantee(plan.epsilon, spent_delta, plan.event, dom.relation)
    return plan
