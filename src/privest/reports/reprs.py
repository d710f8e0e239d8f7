"""The pieces of release reports, and the rich views of privest's objects in notebooks
(``_repr_html_``): guarantees, budgets, released statistics, fit results, tables, plans.

Every function reads its object through its public attributes only (duck typing), so the
objects' ``_repr_html_`` hooks can call it without an import circle (tests/test_layers.py);
everything shown is escaped, and nothing here reads or shows a data value: only
released values (a statistic's own release), public parameters and guarantees.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from privest.reports.figures import ALPHAS, envelope, profile_figure, tradeoff_figure

__all__ = [
    "STYLE",
    "accuracy_table",
    "budget_html",
    "guarantee_html",
    "html_table",
    "plan_html",
    "randomness_badge",
    "results_html",
    "statistic_html",
    "table_html",
]

#: the stylesheet of reports and notebook views (scoped to ``.privest``): readable on a
#: phone (tables scroll inside their box, figures shrink), and printed (no shadows, no
#: splitting a table or a figure across pages)
STYLE = """
.privest { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.45;
  color: #1b1f24; max-width: 60rem; }
.privest h1 { font-size: 1.6rem; margin: 0.2rem 0 0.6rem; }
.privest h2 { font-size: 1.25rem; margin: 1.6rem 0 0.5rem; border-bottom: 1px solid #d0d7de; }
.privest h3 { font-size: 1.05rem; margin: 1.1rem 0 0.4rem; }
.privest p, .privest li { margin: 0.3rem 0; }
.privest .scroll { overflow-x: auto; max-width: 100%; }
.privest table { border-collapse: collapse; margin: 0.4rem 0 0.8rem; font-size: 0.9rem; }
.privest th, .privest td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem;
  text-align: left; vertical-align: top; }
.privest th { background: #f3f5f7; }
.privest td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.privest .figures { display: flex; flex-wrap: wrap; gap: 1rem; }
.privest .figures > div { flex: 1 1 18rem; min-width: 0; }
.privest img.figure { width: 100%; height: auto; max-width: 32rem; display: block; }
.privest .badge { display: inline-block; padding: 0 0.4rem; border-radius: 0.3rem;
  font-size: 0.85em; font-weight: 600; }
.privest .ok { background: #dafbe1; color: #116329; }
.privest .warn { background: #fff8c5; color: #7d4e00; }
.privest .bad { background: #ffebe9; color: #a40e26; border: 1px solid #a40e26; }
.privest .note { color: #57606a; font-size: 0.9rem; }
.privest .cards { display: flex; flex-wrap: wrap; gap: 0.6rem; margin: 0.6rem 0; }
.privest .card { border: 1px solid #d0d7de; border-radius: 0.4rem; padding: 0.4rem 0.7rem;
  flex: 1 1 9rem; }
.privest .card b { display: block; font-size: 1.2rem; }
@media (max-width: 40rem) { .privest { font-size: 0.95rem; }
  .privest th, .privest td { padding: 0.2rem 0.3rem; } }
@media print { .privest { max-width: none; font-size: 10pt; }
  .privest .scroll { overflow: visible; }
  .privest table, .privest .figures > div, .privest .card { break-inside: avoid; }
  .privest h2 { break-after: avoid; }
  .privest .bad { -webkit-print-color-adjust: exact; print-color-adjust: exact; } }
"""

#: the epsilons at which a guarantee's delta is tabulated
EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0)


def esc(value: Any) -> str:
    """Text for HTML (escaped)."""
    return html.escape(str(value), quote=True)


def num(x: Any, digits: int = 4) -> str:
    """A number for a table cell (``-`` for None, ``inf`` kept)."""
    if x is None:
        return "-"
    x = float(x)
    return "inf" if math.isinf(x) else f"{x:.{digits}g}"


def badge(text: str, kind: str) -> str:
    return f'<span class="badge {kind}">{esc(text)}</span>'


def randomness_badge(kind: str) -> str:
    """Secure randomness in green; seeded (reproducible: not for real releases) in red."""
    if kind == "secure":
        return badge("secure", "ok")
    if kind == "seeded":
        return badge("seeded: reproducible, NOT for real releases", "bad")
    return badge(str(kind or "not recorded"), "warn")


def html_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[int] = ()):
    """A table in a horizontally scrolling box; cells are escaped unless they are
    ``(html,)`` tuples (already built markup)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for j, cell in enumerate(row):
            text = cell[0] if isinstance(cell, tuple) else esc(cell)
            cls = ' class="num"' if j in numeric else ""
            cells.append(f"<td{cls}>{text}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(body)}</table></div>'


def wrap(body: str) -> str:
    """A notebook view: the stylesheet and the body in a ``.privest`` box."""
    return f'<div class="privest"><style>{STYLE}</style>{body}</div>'


# -- guarantees -------------------------------------------------------------------------
def _delta_at(g: Any, eps: float) -> float:
    return float(np.asarray(g.delta(eps), dtype=float))


def _eps_top(g: Any) -> float:
    """An epsilon range that shows the guarantee's curve (up to its epsilon at a small
    delta, or where delta stops falling)."""
    for d in (1e-9, 1e-6, 1e-3):
        try:
            e = float(g.epsilon(d))
        except Exception:  # a guarantee without an inverse: fall back to the default
            break
        if math.isfinite(e) and e > 0:
            return 1.25 * e
    return 5.0  # delta has a floor (e.g. a ZIL release's zero_prob): show its fall


def guarantee_curves(g: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(beta at ALPHAS, epsilons, deltas): its trade-off curve (or the envelope of its
    (epsilon, delta) curve when it defines none) and its (epsilon, delta) curve."""
    eps = np.linspace(0.0, _eps_top(g), 81)
    dlt = np.array([_delta_at(g, e) for e in eps])
    if getattr(g, "has_tradeoff", False):
        beta = np.asarray(g.tradeoff(ALPHAS), dtype=float)
    else:
        beta = envelope(ALPHAS, list(zip(eps, dlt, strict=True)))
    return beta, eps, dlt


def guarantee_figures(g: Any, label: str) -> str:
    beta, eps, dlt = guarantee_curves(g)
    trade = tradeoff_figure([(label, beta, "-")], "trade-off curve")
    prof = profile_figure([(label, eps, dlt, "-")], "(epsilon, delta) curve")
    return f'<div class="figures"><div>{trade}</div><div>{prof}</div></div>'


def guarantee_table(g: Any, epsilons: Sequence[float] = EPSILONS) -> str:
    rows = [(num(e, 3), num(_delta_at(g, e), 4)) for e in epsilons]
    return html_table(["epsilon", "delta(epsilon)"], rows, numeric=(0, 1))


def guarantee_html(g: Any) -> str:
    """A guarantee: what it is, its delta at a few epsilons, its two curves."""
    body = (
        f"<h3>privacy guarantee: {esc(g.label)}</h3>"
        f'<p class="note">{esc(type(g).__name__)}: the mechanism is (epsilon, delta(epsilon))'
        "-DP at every epsilon below; the trade-off curve is the least type II error of any "
        "test that tries to tell whether one person's record was used (higher is more "
        "private; the dotted line is perfect privacy).</p>"
        + guarantee_table(g)
        + guarantee_figures(g, g.label)
    )
    return wrap(body)


# -- budgets and spends -------------------------------------------------------------------
def spends_table(spends: Sequence[Any], accuracy: dict[int, str] | None = None) -> str:
    """One row per spend: when, what, by which mechanism, its privacy event, its basic
    composition point and zCDP rho, and (when known) the expected accuracy."""
    from privest.accounting.ledger import display_label

    rows = []
    for i, s in enumerate(spends, 1):
        rows.append(
            (
                i,
                s.time or "-",
                display_label(s.label),
                display_label(s.mechanism) or "-",
                s.event.describe(),
                num(s.epsilon),
                num(s.delta, 3),
                num(s.rho),
                (accuracy or {}).get(i - 1, "-"),
            )
        )
    head = [
        "#",
        "time (UTC)",
        "label",
        "mechanism",
        "guarantee",
        "epsilon",
        "delta",
        "rho",
        "expected accuracy",
    ]
    return html_table(head, rows, numeric=(0, 5, 6, 7))


def composition_table(results: dict[str, Any], admit: Sequence[str] = ()) -> str:
    rows = []
    for name, c in results.items():
        note = "admits spends" if name in admit else ""
        if c.unhandled:
            note = ", ".join(s for s in (note, f"{len(c.unhandled)} by basic composition") if s)
        rows.append((name, num(c.epsilon), num(c.delta, 3), note or "-"))
    return html_table(["accountant", "epsilon", "delta", "note"], rows, numeric=(1, 2))


def budget_cards(total: tuple[float, float], used: Any, left: tuple[float, float]) -> str:
    cards = [
        ("total", f"epsilon {num(total[0])}", f"delta {num(total[1], 3)}"),
        (
            f"used ({used.accountant})",
            f"epsilon {num(used.epsilon)}",
            f"delta {num(used.delta, 3)}",
        ),
        ("left", f"epsilon {num(left[0])}", f"delta {num(left[1], 3)}"),
    ]
    return (
        '<div class="cards">'
        + "".join(f'<div class="card">{esc(a)}<b>{esc(b)}</b>{esc(c)}</div>' for a, b, c in cards)
        + "</div>"
    )


def budget_html(budget: Any, limit: int = 20) -> str:
    """A budget: its total, used and left, the spends (the last ``limit``) and the
    composition by every accountant."""
    spends = budget.spends
    every = budget.accounting()
    used = min((every[a] for a in budget.accountant), key=lambda c: c.epsilon)
    left = budget.remaining()
    shown = spends[-limit:]
    more = len(spends) - len(shown)
    where = f" (ledger {esc(budget.ledger)})" if budget.ledger is not None else " (in memory)"
    body = (
        f"<h3>privacy budget{where}</h3>"
        + budget_cards((budget.epsilon, budget.delta), used, left)
        + (f'<p class="note">{more} earlier spends not shown</p>' if more else "")
        + (spends_table(shown) if shown else "<p>no spends yet</p>")
        + composition_table(every, budget.accountant)
    )
    return wrap(body)


# -- accuracy, statistics, results, tables, plans ---------------------------------------------
def accuracy_table(accuracies: Sequence[Any]) -> str:
    rows = [
        (
            a.quantity,
            a.mechanism or "-",
            a.to_dict()["n"] or "-",
            num(a.se),
            f"{a.conf_level:.0%}",
            num(a.half_width),
            a.assumption or "exact from public inputs",
        )
        for a in accuracies
    ]
    head = ["quantity", "by", "n", "noise SE", "level", "half-width", "assumption"]
    return html_table(head, rows, numeric=(3, 5))


def statistic_html(stat: Any) -> str:
    """A released statistic: its value (the release itself), provenance and guarantee, and
    the expected error of a data-independent noise from its public inputs."""
    rows = [
        ("value (the release)", num(float(stat), 6)),
        ("statistic", stat.statistic),
        ("mechanism", stat.mechanism),
        ("guarantee", stat.guarantee.label),
        ("n (public)", "-" if stat.n is None else stat.n),
        ("bounds (public)", "-" if stat.bounds is None else stat.bounds),
        ("randomness", (randomness_badge(stat.randomness),)),
    ]
    if stat.interval is not None:  # the released interval (docs/central-inference.md)
        alpha = getattr(stat.interval, "alpha", 0.05)
        lo, hi = stat.conf_int(alpha)
        covers = "population quantity" if stat.inference == "population" else "noise only"
        rows += [
            (f"SE ({covers})", num(stat.bse, 4)),
            (f"{1 - alpha:.0%} interval ({covers})", f"[{num(lo, 6)}, {num(hi, 6)}]"),
        ]
    body = "<h3>private statistic</h3>" + html_table(["", ""], rows)
    note = _statistic_noise(stat)
    return wrap(body + f'<p class="note">{esc(note)}</p>')


def _statistic_noise(stat: Any) -> str:
    """The noise of a data-independent mechanism, from the release's public facts (the
    registry loads the class by name: no import of the mechanisms here)."""
    from privest.registry import load, mechanism_names, mechanism_spec

    if stat.mechanism not in mechanism_names(auto=False):
        return ""
    cls = load(mechanism_spec(stat.mechanism).target)
    if not hasattr(cls, "noise_law"):
        return (
            "its error depends on the data's gaps: predict it before a release with "
            "privest.accuracy.predict_statistic(..., reference=...)"
        )
    spec = stat.statistic.replace("quantile ", "quantile:")
    eps = getattr(stat.guarantee, "eps", None)
    try:
        law = cls(spec, epsilon=eps, bounds=stat.bounds).noise_law(stat.n)
        return (
            f"noise: SE {num(math.sqrt(law.error_mse()))}, 95% of releases within "
            f"+-{num(float(law.error_quantile(0.95)))} of the exact value (before clipping "
            "into the statistic's range)"
        )
    except Exception:  # not enough public facts on the release (e.g. n private)
        return ""


def results_html(results: Any) -> str:
    """A fit's results: the header (model, method, n, the release's guarantee) and the
    coefficient table."""
    summary = results.summary()
    cols = [c for c in summary.frame.columns if c != "on_bound"]
    rows = []
    for r in summary.rows():  # "parameter" first, as text ("class: parameter" if multinomial)
        on_bound = bool(r.get("on_bound", False))
        cells = [
            "on bound" if on_bound and c != "coef" else r[c] if isinstance(r[c], str) else num(r[c])
            for c in cols
        ]  # a text column (the calibrated models' p_ci) is shown as is
        rows.append((r["parameter"], *cells))
    head = "".join(f"<p>{esc(line)}</p>" for line in summary.header)
    body = (
        "<h3>fit results</h3>"
        + head
        + html_table(["parameter", *cols], rows, numeric=tuple(range(1, len(cols) + 1)))
    )
    return wrap(body)


def table_html(frame: Any, guarantee: Any = None, accuracy: Sequence[Any] = ()) -> str:
    """A released table (a DataFrame of noisy cells), its guarantee and the expected
    accuracy per cell (:func:`privest.accuracy.predict_table`)."""
    rows = [
        (k, *[num(v) if isinstance(v, (int, float)) else v for v in r])
        for k, r in zip(frame.index, frame.itertuples(index=False), strict=True)
    ]
    names = [str(frame.index.name or ""), *map(str, frame.columns)]
    body = "<h3>private table</h3>"
    if guarantee is not None:
        body += f"<p>guarantee: {esc(guarantee.label)}</p>"
    body += html_table(names, rows, numeric=tuple(range(1, len(names))))
    if accuracy:
        body += "<h3>expected accuracy per cell</h3>" + accuracy_table(accuracy)
    return wrap(body)


def plan_html(plan: Any) -> str:
    """A plan: each query's guarantee, predicted accuracy and warnings, then the whole
    plan by every accountant."""
    parts = [f"<h3>plan of {len(plan.queries)} queries</h3>"]
    for q in plan.queries:
        c = q.guarantee()
        parts.append(
            f"<p><b>{esc(q.name)}</b> ({esc(q.kind)}): {esc(q.description)}; "
            f"epsilon {num(c.epsilon)}, delta {num(c.delta, 3)} ({esc(c.accountant)})</p>"
            + accuracy_table(q.accuracy)
            + "".join(f"<p>{badge('warning', 'warn')} {esc(w)}</p>" for w in q.warnings)
        )
    parts.append(f"<p>whole plan, composed at delta={num(plan.delta, 3)}:</p>")
    parts.append(composition_table(plan.composition))
    parts += [f"<p>{badge('warning', 'warn')} {esc(w)}</p>" for w in plan.warnings]
    return wrap("".join(parts))
