"""Release reports for people: one self-contained HTML page per set of ledgers and stores
(:func:`report`, ``privest report``; docs/report.md), and the rich notebook views of
privest's objects (:mod:`privest.reports.reprs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["report"]


def report(source: Any, path: str | Path, *, plan: Any = None, title: str = "") -> Path:
    """Write the release report of ``source`` to ``path`` (an ``.html`` file).

    ``source``: a :class:`~privest.Budget`, a ledger file, a release store folder, or a list
    of them. ``plan``: the query plan the releases were planned with (a
    :class:`~privest.planning.Plan`, a ``.toml``/``.json`` file or a dict): its predicted
    accuracy is shown beside the spends it matches. Returns the path written.
    """
    from privest.errors import ValidationError
    from privest.planning import Plan
    from privest.planning import plan as make_plan
    from privest.reports.page import build_report

    out = Path(path)
    if out.suffix.lower() not in (".html", ".htm"):
        raise ValidationError(f"path: {str(path)!r} must end in .html")
    sources = list(source) if isinstance(source, (list, tuple)) else [source]
    planned = plan if plan is None or isinstance(plan, Plan) else make_plan(plan)
    text = build_report(sources, plan=planned, title=title)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out
