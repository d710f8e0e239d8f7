"""The release report: one self-contained HTML page for a disclosure review (docs/report.md).

From budget ledgers and release stores (and optionally the query plan the releases were
planned with): every release and spend with its guarantee, accountant and parameters; the
budget used and left; the trade-off and (epsilon, delta) curves; the expected accuracy of
each release (:mod:`privest.accuracy`); versions, randomness (seeded flagged red) and
times. It holds no data value: ledgers and store manifests hold none (a store's records
are never read), and the page shows only public parameters, guarantees and predictions.
No script, no external asset: figures are SVG images inside the page.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from privest.accounting.accountants import ACCOUNTANTS, best, compose_events
from privest.accounting.budget import Budget
from privest.accounting.events import Event
from privest.accounting.ledger import LEDGER_VERSION
from privest.errors import ValidationError
from privest.reports.figures import ALPHAS, envelope, profile_figure, tradeoff_figure
from privest.reports.reprs import (
    STYLE,
    accuracy_table,
    badge,
    budget_cards,
    composition_table,
    esc,
    guarantee_curves,
    html_table,
    num,
    randomness_badge,
    spends_table,
)

__all__ = ["LedgerSource", "StoreSource", "build_report", "load_source", "match_plan"]

#: deltas at which the composed (epsilon, delta) curves are computed (the large ones for
#: releases whose delta has a floor, such as ZIL's zero_prob)
CURVE_DELTAS = np.r_[np.logspace(-12, -2, 6), np.linspace(0.05, 0.95, 10)]


@dataclass
class LedgerSource:
    """A budget: its ledger file (or an in-memory budget) and its spends."""

    name: str
    budget: Budget


@dataclass
class StoreSource:
    """A ZIL release store: its validated manifest (the records are never read)."""

    name: str
    manifest: dict[str, Any]


def load_source(source: Any) -> LedgerSource | StoreSource:
    """A :class:`~privest.Budget`, a ledger file, or a release store folder."""
    if isinstance(source, Budget):
        return LedgerSource(str(source.ledger or "in-memory budget"), source)
    path = Path(source)
    if path.is_dir():
        from privest.release.store import read_manifest

        return StoreSource(str(path), read_manifest(path))
    if path.is_file():
        return LedgerSource(str(path), Budget.open(path))
    raise ValidationError(f"source: {str(source)!r} is neither a ledger file nor a store folder")


def match_plan(spends: Sequence[Any], plan: Any) -> dict[int, tuple[Any, str]]:
    """Spend index -> (planned query, how matched): by label equal to the query's name,
    else, in order, the first unmatched query with the same event and mechanism."""
    if plan is None:
        return {}
    free = list(plan.queries)
    out: dict[int, tuple[Any, str]] = {}
    for i, s in enumerate(spends):
        q = next((q for q in free if q.name == s.label), None)
        how = "by label"
        if q is None:
            how = "by order and guarantee"
            q = next(
                (
                    q
                    for q in free
                    if len(q.events) == 1
                    and q.events[0] == s.event
                    and s.mechanism
                    in ("auto", *(a.mechanism for a in q.accuracy), _model_mechanism(q))
                ),
                None,
            )
        if q is not None:
            free.remove(q)
            out[i] = (q, how)
    return out


def _model_mechanism(q: Any) -> str:
    names = {
        "linear": "private linear regression",
        "logistic": "private logistic regression",
        "release": "zil",
    }
    return names.get(q.kind, "")


def _composed_curves(events: list[Event]) -> tuple[list, list[tuple[float, float]]]:
    """The (epsilon, delta) curve of the events by the zCDP and PLD accountants (computed
    at CURVE_DELTAS) and every (epsilon, delta) point they hold at, basic included."""
    curves, points = [], []
    for name in ("zcdp", "pld"):
        eps = np.array(
            [compose_events(events, float(d), [name])[name].epsilon for d in CURVE_DELTAS]
        )
        curves.append((name, eps, CURVE_DELTAS, "-" if name == "pld" else "--"))
        points += [(e, d) for e, d in zip(eps, CURVE_DELTAS, strict=True) if math.isfinite(e)]
    basic = compose_events(events, 0.0, ["basic"])["basic"]
    if math.isfinite(basic.epsilon):
        points.append((basic.epsilon, basic.delta))
    return curves, points


def _ledger_section(src: LedgerSource, plan: Any, alpha: float) -> str:
    b = src.budget
    spends = list(b.spends)
    events = [s.event for s in spends]
    every = compose_events(events, b.delta, ACCOUNTANTS)
    used = best({k: v for k, v in every.items() if k in b.accountant})
    left = (max(0.0, b.epsilon - used.epsilon), max(0.0, b.delta - used.delta))
    matched = match_plan(spends, plan)
    acc_cells = {i: (_accuracy_cell(q, how, alpha),) for i, (q, how) in matched.items()}
    parts = [
        f"<h2>Budget: {esc(src.name)}</h2>",
        f"<p>ledger format version {LEDGER_VERSION}; admits spends by "
        f"{esc(' + '.join(b.accountant))} (the smallest epsilon counts); "
        f"{len(spends)} spends.</p>",
        budget_cards((b.epsilon, b.delta), used, left),
        "<h3>Spends</h3>",
        spends_table(spends, acc_cells) if spends else "<p>no spends yet</p>",
        '<p class="note">randomness: a ledger does not record whether a release used '
        "secure or seeded randomness; the stores and released objects do.</p>",
        "<h3>Composition by accountant</h3>",
        composition_table(every, b.accountant),
        '<p class="note">basic: sequential composition; zcdp: zero-concentrated DP; pld: '
        "privacy-loss distributions (tight, for queries fixed in advance; docs/budget.md)."
        "</p>",
    ]
    if spends:
        curves, points = _composed_curves(events)
        marks = [("budget total", b.epsilon, b.delta)]
        if math.isfinite(every["basic"].epsilon):
            marks.append(("basic composition", every["basic"].epsilon, every["basic"].delta))
        trade = [("spends composed", envelope(ALPHAS, points), "-")]
        if b.epsilon > 0:
            trade.append(("budget total", envelope(ALPHAS, [(b.epsilon, b.delta)]), "--"))
        parts.append(
            '<div class="figures"><div>'
            + profile_figure(curves, "(epsilon, delta) of the spends", marks)
            + "</div><div>"
            + tradeoff_figure(trade, "trade-off of the spends")
            + "</div></div>"
        )
    return "".join(parts)


def _accuracy_cell(q: Any, how: str, alpha: float) -> str:
    lines = [
        f"{esc(a.quantity)}: +-{num(a.with_alpha(alpha).half_width)} (SE {num(a.se)})"
        for a in q.accuracy[:6]
    ]
    more = len(q.accuracy) - 6
    return (
        "<br>".join(lines)
        + (f"<br>... {more} more" if more > 0 else "")
        + f'<br><span class="note">plan query {esc(q.name)!s}, matched {esc(how)}</span>'
    )


def _store_mechanism(meta: dict[str, Any]) -> Any:
    from privest.release.zil import ZILMechanism

    m = meta["mechanism"]
    return ZILMechanism(
        m["lam"],
        m["zero_prob"],
        dict(zip(m["columns"], m["bounds"], strict=True)),
        resolution=m["resolution"],
    )


def _store_section(src: StoreSource, alpha: float) -> str:
    from privest.accuracy.zil import predict_zil

    meta = src.manifest
    m = meta["mechanism"]
    mech = _store_mechanism(meta)
    g = mech.guarantee
    n = int(meta["n_rows"])
    cols = [
        (c, num(lo), num(hi), "-" if m["resolution"] is None else num(r))
        for c, (lo, hi), r in zip(
            m["columns"], m["bounds"], m["resolution"] or [None] * len(m["columns"]), strict=True
        )
    ]
    unnoised = [c for c in m["column_names"] if c not in m["columns"]]
    parts_rows = [
        (p["file"], p["rows"], (randomness_badge(p["randomness"]),), p["created"])
        for p in meta["parts"]
    ]
    beta_i, eps, dlt = guarantee_curves(g.individual)
    beta_a, eps_a, dlt_a = guarantee_curves(g.attribute)
    return "".join(
        [
            f"<h2>Release store: {esc(src.name)}</h2>",
            f"<p>ZIL release (paper 000, Algorithm 1) of {n} records; lam={num(mech.lam)} per "
            f"unit of each column's range, zero_prob={num(mech.zero_prob)}; store format version "
            f"{esc(meta['version'])}. Guarantee: {esc(g.label)}.</p>",
            f"<p>{badge('warning', 'warn')} a share zero_prob={num(mech.zero_prob)} of the "
            "records is released without noise: delta is at least that at every epsilon.</p>",
            html_table(["noised column", "lo", "hi", "resolution"], cols, numeric=(1, 2, 3)),
            (
                f"<p>{badge('not protected', 'bad')} released unchanged: "
                f"{esc(', '.join(unnoised))}</p>"
                if unnoised
                else ""
            ),
            "<h3>Guarantee (individual: whole records; attribute: one value)</h3>",
            html_table(
                ["epsilon", "delta individual", "delta attribute"],
                [
                    (num(e, 3), num(g.individual.delta(e)), num(g.attribute.delta(e)))
                    for e in (0.5, 1.0, 2.0, 4.0)
                ],
                numeric=(0, 1, 2),
            ),
            '<div class="figures"><div>'
            + tradeoff_figure(
                [("individual", beta_i, "-"), ("attribute", beta_a, "--")],
                "trade-off of the release",
            )
            + "</div><div>"
            + profile_figure(
                [("individual", eps, dlt, "-"), ("attribute", eps_a, dlt_a, "--")],
                "(epsilon, delta) of the release",
            )
            + "</div></div>",
            "<h3>Parts</h3>",
            html_table(["part", "rows", "randomness", "created (UTC)"], parts_rows, numeric=(1,)),
            "<h3>Expected accuracy</h3>",
            accuracy_table(predict_zil(mech, n=max(n, 2), alpha=alpha)),
            '<p class="note">DR fits on the release: predict their standard errors for a stated '
            "design with privest.accuracy.predict_zil(..., model=, coef=) or a plan.</p>",
        ]
    )


def _plan_section(plan: Any) -> str:
    parts = [
        "<h2>Planned queries</h2>",
        f"<p>composed at delta={num(plan.delta, 3)}; intervals at {1 - plan.alpha:.0%}.</p>",
    ]
    for q in plan.queries:
        c = q.guarantee()
        parts.append(
            f"<h3>{esc(q.name)}</h3><p>{esc(q.kind)}: {esc(q.description)}; "
            f"epsilon {num(c.epsilon)}, delta {num(c.delta, 3)} "
            f"({esc(c.accountant)})</p>" + accuracy_table(q.accuracy)
        )
        parts += [f"<p>{badge('warning', 'warn')} {esc(w)}</p>" for w in q.warnings]
    parts.append(composition_table(plan.composition))
    parts += [f"<p>{badge('warning', 'warn')} {esc(w)}</p>" for w in plan.warnings]
    return "".join(parts)


def _versions() -> str:
    import matplotlib
    import scipy

    from privest._version import __version__

    rows = [
        ("privest", __version__),
        ("Python", platform.python_version()),
        ("numpy", np.__version__),
        ("scipy", scipy.__version__),
        ("matplotlib", matplotlib.__version__),
    ]
    return html_table(["software", "version"], rows)


def build_report(sources: Sequence[Any], *, plan: Any = None, title: str = "") -> str:
    """The report page (module docstring) as HTML text."""
    loaded = [load_source(s) for s in sources]
    if not loaded:
        raise ValidationError("sources: give at least one ledger or release store")
    alpha = 0.05 if plan is None else plan.alpha
    now = datetime.now(UTC).isoformat(timespec="seconds")
    title = title or "privest release report"
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="note">generated {esc(now)} UTC from {len(loaded)} source(s); no data '
        "value is shown: only public parameters, guarantees and predicted accuracy.</p>",
    ]
    for src in loaded:
        body.append(
            _ledger_section(src, plan, alpha)
            if isinstance(src, LedgerSource)
            else _store_section(src, alpha)
        )
    if plan is not None:
        body.append(_plan_section(plan))
    body += ["<h2>Versions</h2>", _versions()]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>body {{ margin: 0.8rem; }}{STYLE}</style></head>"
        f'<body><main class="privest">{"".join(body)}</main></body></html>\n'
    )
