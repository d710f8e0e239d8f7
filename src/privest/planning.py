"""A query plan: the guarantee and the expected accuracy of releases before any data
(docs/accuracy.md, "Plans"; ``privest plan``).

A plan is a TOML or JSON file (or the same as a dict)::

    [plan]                  # optional
    delta = 1e-6            # the total delta the plan is composed at
    alpha = 0.05            # intervals at level 1 - alpha
    budget = {epsilon = 2.0, delta = 1e-6}   # optional: does the plan fit?

    [[query]]
    name = "median age"
    kind = "stat"           # stat | release | linear | logistic | table | gaussian | eptr
    statistic = "median"
    epsilon = 0.5
    bounds = [18, 90]
    n = [50000, 200000]     # a public n, or a range

Each query gives its privacy events (the ones a budget would be charged), its predicted
accuracy (:mod:`privest.accuracy`) and plain-language warnings where the noise will swamp
the signal; the plan composes every query's events by each accountant
(:func:`~privest.accounting.accountants.compose_events`). Nothing reads data.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privest.accounting.accountants import (
    ACCOUNTANTS,
    Composition,
    best,
    check_accountants,
    compose_events,
)
from privest.accounting.budget import DEFAULT_ACCOUNTANT
from privest.accounting.events import Event
from privest.accuracy.base import Accuracy, check_alpha
from privest.errors import ValidationError

__all__ = ["KINDS", "Plan", "PlannedQuery", "headline", "plan", "read_plan"]

KINDS = ("stat", "release", "linear", "logistic", "table", "gaussian", "eptr")
#: the ePTR models of a plan's ``eptr`` query (``model = "ols"``, ...)
EPTR_MODELS = {
    "ols": "EPTRLinearRegression",
    "bayes": "EPTRBayesClassifier",
    "nw": "EPTRKernelRegressor",
}
PLAN_KEYS = {"delta", "alpha", "budget"}
COMMON = {"name", "kind"}
KEYS: dict[str, set[str]] = {
    "stat": {
        "statistic",
        "epsilon",
        "bounds",
        "n",
        "mechanism",
        "quantile",
        "resolution",
        "reference",
        "neighbours",
        "delta",
        "local_sensitivity",
        "inference",
    },
    "release": {
        "bounds",
        "n",
        "lam",
        "zero_prob",
        "epsilon",
        "delta",
        "unit",
        "model",
        "coef",
        "intercept",
        "noise_sd",
        "method",
        "budget_epsilon",
    },
    "linear": {
        "epsilon",
        "delta",
        "bounds",
        "y_bounds",
        "n",
        "coef",
        "intercept",
        "method",
        "fit_intercept",
    },
    "logistic": {
        "epsilon",
        "delta",
        "bounds",
        "n",
        "coef",
        "intercept",
        "l2",
        "max_iter",
        "step_scale",
        "fit_intercept",
        "method",
    },
    "table": {
        "by",
        "max_groups",
        "max_rows",
        "aggregates",
        "bounds",
        "epsilon",
        "noise",
        "delta",
        "cell_n",
        "cell_mean",
        "public_keys",
        "inference",
        "resolution",
        "reference",
    },
    "gaussian": {"epsilon", "delta", "sensitivity", "calibration", "dims"},
    "eptr": {
        "model",
        "n",
        "n_features",
        "class_shares",
        "epsilon",
        "delta",
        "x_radius",
        "theta_radius",
        "y_radius",
        "c0",
        "c0_share",
        "constants",
        "classes",
        "bounds",
        "query_points",
        "bandwidth",
        "bandwidth_scale",
        "budget_mode",
    },
}


def headline(results: dict[str, Composition]) -> Composition:
    """The composition to quote: the smallest epsilon, and among those within the PLD's
    discretisation (1e-3) of it the smallest delta (a pure query reads epsilon-DP)."""
    top = best(results)
    near = [c for c in results.values() if c.epsilon <= top.epsilon + 1e-3]
    return min(near, key=lambda c: (c.delta, c.epsilon))


@dataclass
class PlannedQuery:
    """One query of a plan: its events, predicted accuracy and warnings."""

    name: str
    kind: str
    description: str
    events: list[Event]
    accuracy: list[Accuracy]
    warnings: list[str] = field(default_factory=list)
    spec: dict[str, Any] = field(default_factory=dict)

    @property
    def delta(self) -> float:
        """The delta this query alone is composed at: its events' own (basic composition)
        delta plus 1e-6 (what the zCDP and PLD accountants may use)."""
        return _default_delta(self.events, None)

    def composition(self) -> dict[str, Composition]:
        """This query's guarantee by each accountant, at :attr:`delta`."""
        return compose_events(self.events, self.delta)

    def guarantee(self) -> Composition:
        """The composition to quote for this query (:func:`headline`)."""
        return headline(self.composition())


@dataclass
class Plan:
    """A planned set of queries and their composition (module docstring)."""

    queries: list[PlannedQuery]
    delta: float
    alpha: float
    composition: dict[str, Composition]
    budget: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        """One row per predicted quantity (``privest plan -o``): the query, its guarantee
        by the best accountant, the prediction and its warnings."""
        out = []
        for q in self.queries:
            c = q.guarantee()
            for a in q.accuracy:
                out.append(
                    {
                        "query": q.name,
                        "kind": q.kind,
                        "epsilon": c.epsilon,
                        "delta": c.delta,
                        "accountant": c.accountant,
                        **a.to_dict(),
                        "warning": "; ".join(w for w in q.warnings if a.quantity in w),
                    }
                )
        return out

    def __str__(self) -> str:
        lines = [f"plan of {len(self.queries)} queries, composed at delta={self.delta:g}:"]
        for q in self.queries:
            c = q.guarantee()
            lines.append(
                f"- {q.name} ({q.kind}: {q.description}): epsilon={c.epsilon:.4g}, "
                f"delta={c.delta:.3g} ({c.accountant})"
            )
            lines += [f"    {a}" for a in q.accuracy]
            lines += [f"    warning: {w}" for w in q.warnings]
        for name, c in self.composition.items():
            lines.append(f"whole plan by {name}: epsilon={c.epsilon:.4g}, delta={c.delta:.3g}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from privest.reports.reprs import plan_html

        return plan_html(self)


def _pair(value: Any, what: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValidationError(f"{what}: {value!r} is not a [lo, hi] pair") from None
    return lo, hi


def _bounds_map(value: Any, what: str) -> dict[str, tuple[float, float]]:
    if not isinstance(value, Mapping):
        raise ValidationError(f"{what}: give a table of column = [lo, hi]")
    return {str(k): _pair(v, f"{what}.{k}") for k, v in value.items()}


def _swamp(acc: Accuracy) -> str | None:
    """The warning for a prediction whose interval is wider than its plausible range."""
    if acc.plausible is None:
        return None
    lo, hi = acc.plausible
    if 2.0 * acc.half_width <= hi - lo:
        return None
    return (
        f"{acc.quantity}: the {acc.conf_level:.0%} interval (+-{acc.half_width:.3g}) is "
        f"wider than its plausible range [{lo:.4g}, {hi:.4g}]: the noise will swamp the "
        "signal; raise epsilon, or release fewer or coarser quantities"
    )


def _sign(acc: Accuracy, guess: float) -> str | None:
    if guess == 0 or acc.half_width < abs(guess):
        return None
    return (
        f"{acc.quantity}: the {acc.conf_level:.0%} half-width {acc.half_width:.3g} "
        f"exceeds the guessed size {abs(guess):.3g}: its sign will not be distinguishable "
        "from 0"
    )


def _stat(q: dict[str, Any], alpha: float) -> PlannedQuery:
    from privest.accuracy.statistics import predict_statistic
    from privest.domain import Domain
    from privest.models.statistics import statistic_mechanism

    stat = q.get("statistic")
    if not isinstance(stat, str):
        raise ValidationError('statistic: required, e.g. statistic = "median"')
    bounds = None if q.get("bounds") is None else _pair(q["bounds"], "bounds")
    options = {k: q[k] for k in ("delta", "local_sensitivity") if k in q}
    dom = Domain(
        bounds=bounds, resolution=q.get("resolution"), neighbours=q.get("neighbours", "swap")
    )
    n = q.get("n")
    acc = predict_statistic(
        stat,
        epsilon=q.get("epsilon"),
        domain=dom,
        n=n,
        mechanism=q.get("mechanism", "auto"),
        quantile=q.get("quantile"),
        reference=q.get("reference"),
        alpha=alpha,
        inference=q.get("inference", "population"),
        **options,
    )
    n_one = n if isinstance(n, int) else None
    mech = statistic_mechanism(
        stat,
        epsilon=q["epsilon"],
        domain=dom,
        n=n_one,
        mechanism=q.get("mechanism", "auto"),
        quantile=q.get("quantile"),
        **options,
    )
    desc = f"{mech.label} by {acc.mechanism}, epsilon={q['epsilon']:g}"
    return PlannedQuery(
        "", "stat", desc, [mech.guarantee.event()], [acc], [w for w in [_swamp(acc)] if w]
    )


def _release(q: dict[str, Any], alpha: float) -> PlannedQuery:
    from privest.accuracy.zil import predict_zil
    from privest.release.zil import ZILMechanism

    raw = q.get("bounds")
    bounds = (
        _bounds_map(raw, "bounds")
        if isinstance(raw, Mapping)
        else [_pair(b, "bounds") for b in (raw or [])]
    )
    if not bounds:
        raise ValidationError("bounds: the public [lo, hi] of the noised columns are required")
    if q.get("lam") is not None:
        mech = ZILMechanism(q["lam"], q.get("zero_prob"), bounds)
    else:
        mech = ZILMechanism.calibrate(
            q.get("epsilon"),
            q.get("delta"),
            q.get("zero_prob"),
            bounds,
            unit=q.get("unit", "individual"),
        )
    at = q.get("budget_epsilon", mech.target_epsilon)
    fit = {k: q[k] for k in ("model", "coef", "intercept", "noise_sd", "method") if k in q}
    accs = predict_zil(mech, n=q.get("n"), alpha=alpha, **fit)
    warns = [
        f"a share zero_prob={mech.zero_prob:g} of the records is released without noise: "
        f"the DP delta is at least {mech.zero_prob:g} at every epsilon"
    ]
    coef = fit.get("coef")
    if coef is not None:
        guesses = dict(
            zip(
                mech.columns or [f"x{j}" for j in range(len(bounds))],
                coef.values() if isinstance(coef, Mapping) else coef,
                strict=False,
            )
        )
        for a in accs:
            col = a.quantity.partition(" ")[2]
            if col in guesses and (w := _sign(a, float(guesses[col]))):
                warns.append(w)
    warns += [w for a in accs if a.quantity.startswith("mean") and (w := _swamp(a))]
    desc = f"ZIL lam={mech.lam:.4g}, zero_prob={mech.zero_prob:g}, {len(bounds)} noised columns"
    return PlannedQuery("", "release", desc, [mech.guarantee.event(at)], accs, warns)


def _model(q: dict[str, Any], alpha: float) -> PlannedQuery:
    import numpy as np

    from privest.accuracy.models import predict_model
    from privest.models.linear import PrivateLinearRegression
    from privest.models.logistic import PrivateLogisticRegression

    params = {k: v for k, v in q.items() if k not in {"name", "kind", "n", "coef", "intercept"}}
    cls = PrivateLinearRegression if q["kind"] == "linear" else PrivateLogisticRegression
    if q.get("coef") is None:
        raise ValidationError("coef: a guessed coefficient per feature is needed")
    model = cls(**params)
    accs = predict_model(
        model, n=q.get("n"), coef=q["coef"], intercept=q.get("intercept", 0.0), alpha=alpha
    )
    coefs = [a for a in accs if a.quantity.startswith("coef")]
    guesses = np.broadcast_to(np.asarray(q["coef"], dtype=float), (len(coefs),))
    warns = [w for a, g in zip(coefs, guesses, strict=True) if (w := _sign(a, float(g)))]
    desc = f"{cls.__name__}({accs[0].mechanism}), epsilon={model.epsilon:g}, delta={model.delta:g}"
    return PlannedQuery("", q["kind"], desc, [model.guarantee.event()], accs, warns)


def _table(q: dict[str, Any], alpha: float) -> PlannedQuery:
    from privest.accuracy.tables import predict_table

    aggs = q.get("aggregates")
    if not isinstance(aggs, list) or not aggs:
        raise ValidationError('aggregates: a list such as ["count", "mean:income"]')
    bounds = _bounds_map(q["bounds"], "bounds") if q.get("bounds") is not None else None
    accs, events = predict_table(
        aggs,
        epsilon=q.get("epsilon"),
        max_groups=q.get("max_groups"),
        max_rows=q.get("max_rows"),
        cell_n=q.get("cell_n"),
        bounds=bounds,
        noise=q.get("noise", "auto"),
        delta=q.get("delta", 0.0),
        cell_mean=q.get("cell_mean"),
        alpha=alpha,
        public_keys=q.get("public_keys", True),
        inference=q.get("inference", "population"),
        resolution=q.get("resolution"),
        reference=q.get("reference"),
    )
    by = ", ".join(map(str, q.get("by") or [])) or "(no grouping)"
    desc = (
        f"table by {by}: {', '.join(aggs)}; a person in at most {q['max_groups']} cells, "
        f"{q['max_rows']} rows each; epsilon={q['epsilon']:g}"
    )
    return PlannedQuery("", "table", desc, events, accs, [w for a in accs if (w := _swamp(a))])


def _gaussian(q: dict[str, Any], alpha: float) -> PlannedQuery:
    from privest.accuracy.gaussian import predict_gaussian
    from privest.mechanisms.gaussian import GaussianMechanism

    missing = [k for k in ("epsilon", "delta", "sensitivity") if q.get(k) is None]
    if missing:
        raise ValidationError(f"{', '.join(missing)}: required for a Gaussian release")
    mech = GaussianMechanism(**{k: q[k] for k in KEYS["gaussian"] if k in q})
    acc = predict_gaussian(mech, alpha=alpha)
    desc = f"{mech!r}"
    return PlannedQuery("", "gaussian", desc, [mech.guarantee.event()], [acc], [])


def _eptr(q: dict[str, Any], alpha: float) -> PlannedQuery:
    import privest.models as models
    from privest.accuracy.models import predict_model

    name = q.get("model")
    if name not in EPTR_MODELS:
        raise ValidationError(f"model: {name!r}; accepted: {', '.join(EPTR_MODELS)}")
    cls = getattr(models, EPTR_MODELS[name])
    drop = {"name", "kind", "model", "n", "n_features", "class_shares"}
    model = cls(**{k: v for k, v in q.items() if k not in drop})
    accs = predict_model(
        model,
        n=q.get("n"),
        alpha=alpha,
        n_features=q.get("n_features"),
        class_shares=q.get("class_shares"),
    )
    g = model.guarantee
    refusal = max(a.refusal for a in accs)
    warns = []
    if refusal > 0.05:
        warns.append(
            f"the propose-test step refuses with probability up to {refusal:.2g} on the "
            "stated design: nothing is released then (the bottom is output)"
        )
    desc = f"{cls.__name__}, epsilon={g.eps:g}, delta={g.dlt:g}"
    return PlannedQuery("", "eptr", desc, [g.event()], accs, warns)


BUILDERS: dict[str, Callable[[dict[str, Any], float], PlannedQuery]] = {
    "stat": _stat,
    "release": _release,
    "linear": _model,
    "logistic": _model,
    "table": _table,
    "gaussian": _gaussian,
    "eptr": _eptr,
}


def _query(q: Any, i: int, alpha: float) -> PlannedQuery:
    if not isinstance(q, Mapping):
        raise ValidationError(f"query {i + 1}: is not a table of settings")
    q = dict(q)
    kind = q.setdefault("kind", "stat")
    if kind not in KINDS:
        raise ValidationError(f"query {i + 1}: kind {kind!r} is not one of {', '.join(KINDS)}")
    unknown = set(q) - COMMON - KEYS[kind]
    if unknown:
        raise ValidationError(
            f"query {i + 1}: unknown settings {sorted(unknown)} for kind {kind!r}; accepted: "
            f"{', '.join(sorted(KEYS[kind]))}"
        )
    try:
        out = BUILDERS[kind](q, alpha)
    except ValidationError as exc:
        raise ValidationError(f"query {i + 1} ({q.get('name', kind)}): {exc}") from None
    out.name = str(q.get("name", f"query {i + 1}"))
    out.spec = q
    return out


def read_plan(path: str | Path) -> dict[str, Any]:
    """A plan file as a dict: ``.toml`` (standard library) or ``.json``."""
    p = Path(path)
    if p.suffix not in (".toml", ".json"):
        raise ValidationError(f"plan: {str(path)!r} must be a .toml or .json file")
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"plan: cannot read {str(path)!r} ({type(exc).__name__})") from None
    try:
        return tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError(f"plan: {str(path)!r} does not parse ({exc})") from None


def _default_delta(events: list[Event], budget: dict[str, Any] | None) -> float:
    """The budget's delta, else the basic composition's delta plus 1e-6."""
    if budget is not None:
        return float(budget.get("delta", 0.0))
    points = [e.point() for e in events]
    return math.fsum(p[1] for p in points if p is not None) + 1e-6


def plan(source: str | Path | Mapping[str, Any]) -> Plan:
    """Evaluate a plan (module docstring): a path to a ``.toml``/``.json`` file or a dict."""
    doc = dict(source) if isinstance(source, Mapping) else read_plan(source)
    head = doc.get("plan", {})
    if not isinstance(head, Mapping) or set(head) - PLAN_KEYS:
        raise ValidationError(f"plan: the [plan] table accepts {', '.join(sorted(PLAN_KEYS))}")
    extra = set(doc) - {"plan", "query"}
    if extra:
        raise ValidationError(f"plan: unknown tables {sorted(extra)}; use [plan] and [[query]]")
    queries_in = doc.get("query")
    if not isinstance(queries_in, list) or not queries_in:
        raise ValidationError("plan: no [[query]] entries")
    alpha = check_alpha(head.get("alpha", 0.05))
    queries = [_query(q, i, alpha) for i, q in enumerate(queries_in)]
    events = [e for q in queries for e in q.events]
    budget = head.get("budget")
    if budget is not None and (not isinstance(budget, Mapping) or "epsilon" not in budget):
        raise ValidationError("budget: give {epsilon = E, delta = D}")
    delta = float(head.get("delta", _default_delta(events, budget)))
    composition = compose_events(events, delta, ACCOUNTANTS)
    out = Plan(queries, delta, alpha, composition, budget and dict(budget))
    if budget is not None:
        admit = check_accountants(budget.get("accountant", DEFAULT_ACCOUNTANT))
        c = best({k: v for k, v in composition.items() if k in admit})
        if c.epsilon > float(budget["epsilon"]) or c.delta > float(budget.get("delta", 0.0)):
            tight = composition["pld"]
            fits = tight.epsilon <= float(budget["epsilon"]) and "pld" not in admit
            out.warnings.append(
                f"the plan needs epsilon={c.epsilon:.4g}, delta={c.delta:.3g} ({c.accountant}), "
                f"over the budget (epsilon={budget['epsilon']:g}, "
                f"delta={budget.get('delta', 0.0):g}): a budget would refuse its last queries"
                + (
                    f"; the PLD accountant (epsilon={tight.epsilon:.4g}) fits, for queries fixed "
                    "in advance (docs/budget.md)"
                    if fits
                    else ""
                )
            )
    return out
