"""Two-way contingency tables with a private chi-square test of independence
(docs/tables.md, "Contingency tables").

``pv.contingency(df, rows="sex", columns="smoker", levels={...}, epsilon=1.0)`` releases
the ``r x c`` table of counts (public levels: every cell, empty ones too, so no selection)
and, with ``margins=True``, the row and column totals as well (a person is in one cell,
one row and one column: the three releases compose sequentially, each with Laplace noise,
shares 1/2, 1/4, 1/4). The released table is then post-processed:

* **consistency** (weighted least squares onto the consistent set): the table ``X``
  minimising ``sum (X - T~)^2 / v_T + sum (rowsum X - R~)^2 / v_R + sum (colsum X - C~)^2
  / v_C`` (each noise's variance), a linear projection (Hay, Rastogi, Miklau and Suciu
  2010); its margins are its own sums, so they agree with the table;
* **the test of independence**: ``X^2 = sum (X_ij - E_ij)^2 / E_ij`` on the fitted table,
  ``E`` from its margins. Its null law is simulated, not the chi-square law (which fails at
  small counts and ignores the noise; Gaboardi, Lim, Rogers and Vadhan 2016; Wang, Lee and
  Kifer 2015): tables of ``N~`` people drawn from the product of the fitted margins, the
  same noise drawn exactly from its law, the same projection, the same statistic; the
  p-value is ``(1 + #{X^2_sim >= X^2}) / (1 + B)``. It needs each person in one cell with
  one row (a multinomial null): ``unit=None`` or ``max_groups = max_rows = 1``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np
import pandas as pd

from privest.accounting.base import Guarantee
from privest.accounting.budget import Budget
from privest.accounting.events import ComposedEvent
from privest.domain import Domain
from privest.errors import ValidationError
from privest.rng import resolve_rng
from privest.tables.api import tabulate
from privest.tables.plan import TableGuarantee, make_plan

__all__ = ["ContingencyTable", "contingency"]


@dataclass
class ContingencyTable:
    """The released two-way table: ``table`` (the consistent fitted counts, levels as index
    and columns), ``row_totals``, ``column_totals``, the test (``statistic``, ``pvalue``)
    and the ``guarantee`` of the whole release."""

    table: pd.DataFrame
    row_totals: pd.Series
    column_totals: pd.Series
    statistic: float
    pvalue: float
    guarantee: Guarantee
    simulations: int


def _projection(r: int, c: int, variances: Sequence[float]) -> np.ndarray:
    """The matrix mapping the stacked releases (table, rows, columns) to the WLS table."""
    eye = np.eye(r * c)
    row_sum = np.kron(np.eye(r), np.ones((1, c)))
    col_sum = np.kron(np.ones((1, r)), np.eye(c))
    design = np.vstack([eye, row_sum, col_sum][: len(variances)])
    sizes = [r * c, r, c][: len(variances)]
    w = np.concatenate([np.full(s, 1.0 / v) for s, v in zip(sizes, variances, strict=True)])
    gram = design.T @ (design * w[:, None])
    return np.linalg.solve(gram, design.T * w[None, :])


def _statistic(x: np.ndarray, r: int, c: int) -> np.ndarray:
    """Pearson's X^2 of each fitted table (rows of ``x``, flattened r x c), cells clamped
    at 0 and expected counts at least 0.5."""
    t = np.maximum(x, 0.0).reshape(-1, r, c)
    n = np.maximum(t.sum(axis=(1, 2)), 1.0)
    e = np.maximum(t.sum(axis=2)[:, :, None] * t.sum(axis=1)[:, None, :] / n[:, None, None], 0.5)
    return ((t - e) ** 2 / e).sum(axis=(1, 2))


def _bounded(data: Any, rows: str, columns: str, unit: str | None, gen) -> pd.DataFrame:
    """One row per person (a uniformly random one of theirs: max_groups = max_rows = 1),
    once for the three releases; the data as they are when one record is the unit."""
    if not isinstance(data, pd.DataFrame):
        raise ValidationError(f"data: a {type(data).__name__} is not a pandas DataFrame")
    if unit is None:
        return data
    from privest.tables.totals import bound_rows, cell_codes, person_codes

    if unit not in data.columns:
        raise ValidationError(f"unit: {unit!r} is not a column of the data")
    cells, keys = cell_codes(data, (rows, columns), None)
    persons = person_codes(data[unit])
    keep, _ = bound_rows(cells, persons, len(keys), 1, 1, gen)
    return data.loc[keep, [rows, columns]]


def contingency(
    data: Any,
    *,
    rows: str,
    columns: str,
    levels: Mapping[str, Sequence[Any]],
    epsilon: float,
    unit: str | None = None,
    margins: bool = True,
    simulations: int = 999,
    budget: Budget | None = None,
    rng: np.random.Generator | int | None = None,
) -> ContingencyTable:
    """The private two-way table and its test of independence (module docstring).

    ``levels``: the public levels of ``rows`` and ``columns``; ``unit``: the person-id
    column (each person then counts once, in one uniformly chosen row of theirs)."""
    lv = {k: list(levels.get(k, ())) for k in (rows, columns)}
    if any(len(v) < 2 for v in lv.values()):
        raise ValidationError("levels: give the public levels of rows and columns (2 or more each)")
    if not (isinstance(simulations, int) and simulations >= 19):
        raise ValidationError(f"simulations: {simulations!r} must be an integer >= 19")
    gen = resolve_rng(rng)
    r, c = len(lv[rows]), len(lv[columns])
    shares = (0.5, 0.25, 0.25) if margins else (1.0,)
    keys = pd.DataFrame(list(product(lv[rows], lv[columns])), columns=[rows, columns])
    specs = [
        ([rows, columns], keys),
        ([rows], keys[[rows]].drop_duplicates().reset_index(drop=True)),
        ([columns], keys[[columns]].drop_duplicates().reset_index(drop=True)),
    ][: len(shares)]
    common = dict(aggregates={"n": "count"}, noise="laplace", inference="none")
    plans = [
        make_plan(
            by=by,
            public_keys=True,
            epsilon=epsilon * s,
            delta=0.0,
            bounds=None,
            unit=None,
            max_groups=None,
            max_rows=None,
            **common,
        )
        for (by, _), s in zip(specs, shares, strict=True)
    ]
    event = ComposedEvent(tuple(p.event for p in plans))
    if budget is not None:  # before any data is read
        budget.charge_event(event, label=f"contingency {rows} x {columns}", mechanism="tabulate")
    once = _bounded(data, rows, columns, unit, gen)
    released, variances = [], []
    for (by, k), share in zip(specs, shares, strict=True):
        t = tabulate(once, by=by, keys=k, epsilon=epsilon * share, rng=gen, **common)
        released.append(t["n"].to_numpy(dtype=float))  # clamped at 0: the sims clamp too
        variances.append(t.plan.primitives["rows"].noise.variance)
    proj = _projection(r, c, variances)
    fitted = proj @ np.concatenate(released)
    stat = float(_statistic(fitted[None, :], r, c)[0])
    pvalue = _null_pvalue(fitted, stat, proj, plans, r, c, simulations, gen)
    frame = pd.DataFrame(
        np.maximum(fitted, 0.0).reshape(r, c),
        index=pd.Index(lv[rows], name=rows),
        columns=pd.Index(lv[columns], name=columns),
    )
    dom = (
        Domain(neighbours="add_remove", unit=unit, max_groups=1, max_rows=1)
        if unit
        else Domain(neighbours="add_remove")
    )
    guarantee = TableGuarantee(epsilon, 0.0, event, dom.relation)
    return ContingencyTable(
        frame, frame.sum(axis=1), frame.sum(axis=0), stat, pvalue, guarantee, simulations
    )


def _null_pvalue(fitted, stat, proj, plans, r, c, simulations, gen) -> float:
    """The simulated null (module docstring): multinomial tables from the fitted margins,
    fresh exact noise, the same clamp, projection and statistic."""
    t = np.maximum(fitted, 0.0).reshape(r, c)
    total = t.sum()
    n = max(int(round(total)), 1)
    if total > 0:
        p = np.outer(t.sum(axis=1), t.sum(axis=0)).ravel() / total**2
    else:
        p = np.full(r * c, 1.0 / (r * c))
    cells = gen.multinomial(n, p / p.sum(), size=simulations).astype(float)
    grid = cells.reshape(-1, r, c)
    parts = [cells, grid.sum(axis=2), grid.sum(axis=1)]
    noisy = []
    for part, plan in zip(parts, plans, strict=False):
        noise = plan.primitives["rows"].noise
        draw = noise.sample(part.size, gen).reshape(part.shape) * noise.step
        noisy.append(np.maximum(part + draw, 0.0))
    sims = _statistic(np.concatenate(noisy, axis=1) @ proj.T, r, c)
    return float((1 + np.count_nonzero(sims >= stat)) / (1 + simulations))
