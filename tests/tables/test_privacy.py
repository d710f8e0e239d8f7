"""Exact privacy of a table's bounding and selection on small neighbour pairs.

The output law of a table of counts is computed exactly: the contribution bounding is a
uniform choice of a person's cells (its law enumerated; the implementation's frequencies
are checked against it below), each cell is then released or not and carries its noisy
count, independently given the bounded counts. The hockey-stick divergence between the
laws on a data set and on its neighbour with one person added (all their rows) must stay
within the (epsilon, delta) the accountant reports for the plan; negative controls (a
threshold set too low, a person left unbounded, a selection run at a larger epsilon) must
exceed it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privest.accounting.accountants import best, compose_events
from privest.tables.api import tabulate
from privest.tables.plan import make_plan
from privest.tables.selection import keep_probabilities, optimal_select
from privest.tables.totals import bound_rows


def _plan(**kw):
    base = dict(
        by=["g"],
        aggregates={"n": "count"},
        bounds=None,
        public_keys=False,
        epsilon=1.0,
        delta=1e-3,
        noise="laplace",
        inference="none",
    )
    base.update(kw)
    return make_plan(**base)


def _claim(plan) -> tuple[float, float]:
    c = best(compose_events(list(plan.event.events), plan.delta, ("basic", "zcdp")))
    return c.epsilon, c.delta


def _cell_law(count, present, kept, plan, noise) -> np.ndarray:
    """Law of one cell's output over [absent, values lo .. hi] (grid units), given its
    bounded count, whether it is a candidate, and its keep probability (optimal mode).
    Values below the threshold are never released; the range holds all but e^-40 of the
    noise's mass beyond it but e^-25 (the check's resolution)."""
    t = float(noise.scale)
    p = math.exp(-1 / t)
    lo = plan.threshold_units if plan.selection == "threshold" else -int(25 * t)
    values = np.arange(lo, 40 + int(25 * t))
    out = np.zeros(values.size + 1)
    if not present:
        out[0] = 1.0
        return out
    dens = (1 - p) / (1 + p) * p ** np.abs(values - count).astype(float)
    if plan.selection == "threshold":
        out[1:] = dens
        out[0] = 1.0 - dens.sum()
    else:
        out[1:] = kept * dens
        out[0] = 1 - kept
    return out


def _table_law(scenarios, plan) -> np.ndarray:
    """The joint output law: a mixture (weights) over bounded (counts, people, present)."""
    noise = plan.primitives["rows"].noise
    total = None
    for weight, counts, people, present in scenarios:
        laws = []
        for c, n, on in zip(counts, people, present, strict=True):
            kept = 0.0
            if plan.selection == "optimal":
                p = keep_probabilities(*plan.selection_params)
                kept = p[min(n, p.size - 1)]
            laws.append(_cell_law(c, on, kept, plan, noise))
        joint = laws[0]
        for law in laws[1:]:
            joint = np.multiply.outer(joint, law)
        total = weight * joint if total is None else total + weight * joint
    return total


def _hockey(p, q, eps) -> float:
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def _within(p, q, eps, delta) -> bool:
    return (
        _hockey(p, q, eps) <= delta * (1 + 1e-9) + 1e-15
        and _hockey(q, p, eps) <= delta * (1 + 1e-9) + 1e-15
    )


def test_one_record_in_a_new_cell_or_an_old_one():
    plan = _plan()
    eps, delta = _claim(plan)
    assert eps <= 1.0 + 1e-12 and delta <= 1e-3
    base = _table_law([(1.0, (3, 1, 0), (3, 1, 0), (True, True, False))], plan)
    new_cell = _table_law([(1.0, (3, 1, 1), (3, 1, 1), (True, True, True))], plan)
    old_cell = _table_law([(1.0, (4, 1, 0), (4, 1, 0), (True, True, False))], plan)
    assert _within(base, new_cell, eps, delta)
    assert _within(base, old_cell, eps, delta)
    plan.threshold_units -= 4  # negative control: the threshold too low for delta
    low = _table_law([(1.0, (3, 1, 0), (3, 1, 0), (True, True, False))], plan)
    low_new = _table_law([(1.0, (3, 1, 1), (3, 1, 1), (True, True, True))], plan)
    assert _hockey(low_new, low, eps) > 10 * delta


def _person_pair(plan, bounded: bool, base=(30, 24, 0)):
    """D: cells A, B, C hold ``base`` people; D' adds a person with one row in each of
    them. Bounded to 2 cells: a uniform pair of them (1/3 each)."""
    on = tuple(c > 0 for c in base)
    d = _table_law([(1.0, base, base, on)], plan)
    if bounded:
        counts = [tuple(c + (i != j) for j, c in enumerate(base)) for i in range(3)]
        pairs = [(1 / 3, c, c, tuple(v > 0 for v in c)) for c in counts]
    else:
        plus = tuple(c + 1 for c in base)
        pairs = [(1.0, plus, plus, (True, True, True))]
    return d, _table_law(pairs, plan)


def test_a_person_in_three_cells_bounded_to_two():
    plan = _plan(unit="pid", max_groups=2, max_rows=1)
    assert plan.selection == "threshold"
    eps, delta = _claim(plan)
    for base in ((30, 24, 0), (30, 24, 20)):  # a new cell, or three shared ones
        d, d2 = _person_pair(plan, bounded=True, base=base)
        assert _within(d, d2, eps, delta)
    # negative control: the person left unbounded in three shared cells (L1 3 > 2)
    d, d2 = _person_pair(plan, bounded=False, base=(30, 24, 20))
    assert not _within(d, d2, eps, delta)


def test_optimal_selection_with_several_rows_per_cell():
    """max_rows = 2: the optimal mechanism on the people counts, its own epsilon; the
    person has 2 rows in A and 1 in B (bounded to 1 cell: A or B, 1/2 each)."""
    plan = _plan(unit="pid", max_groups=1, max_rows=2)
    assert plan.selection == "optimal"
    eps, delta = _claim(plan)
    base = [(1.0, (6, 0), (4, 0), (True, False))]
    scen = [
        (1 / 2, (8, 0), (5, 0), (True, False)),
        (1 / 2, (6, 1), (4, 1), (True, True)),
    ]
    d, d2 = _table_law(base, plan), _table_law(scen, plan)
    assert _within(d, d2, eps, delta)
    e_cell, d_cell = plan.selection_params
    plan.selection_params = (4 * e_cell, 4 * d_cell)  # negative control: selection too loose
    assert not _within(_table_law(base, plan), _table_law(scen, plan), eps, delta)


# ------------------------------------------------------------------ the implementation
def test_bounding_is_a_uniform_choice_of_cells_and_rows():
    # persons 0..5 within limits; person 9 in cells 0, 1, 2 (one row each), and 5 rows in cell 3
    cells = np.array([0, 0, 1, 1, 2, 3, 0, 1, 2, 3, 3, 3, 3, 3])
    persons = np.array([0, 1, 2, 3, 4, 5, 9, 9, 9, 9, 9, 9, 9, 9])
    rng = np.random.default_rng(0)
    seen: dict[tuple, int] = {}
    row_kept = np.zeros(cells.size)
    reps = 3000
    for _ in range(reps):
        keep, people = bound_rows(cells, persons, 4, 2, 2, rng)
        assert keep[:6].all()  # people within the limits keep everything
        mine = tuple(sorted(set(cells[6:][keep[6:]].tolist())))
        assert len(mine) == 2 and np.count_nonzero(keep[9:]) in (0, 2)
        assert people.sum() == 6 + 2
        seen[mine] = seen.get(mine, 0) + 1
        row_kept += keep
    assert len(seen) == 6  # every pair of the person's 4 cells
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3
    # a row of the 5 in cell 3 is kept w.p. P(cell 3 chosen) * 2/5 = 1/2 * 2/5
    share = row_kept[9:] / reps
    assert np.all(np.abs(share - 0.2) < 4 * math.sqrt(0.2 * 0.8 / reps))


def test_optimal_keep_probabilities_are_dp_and_sampled_exactly():
    eps, delta = 0.5, 0.05
    p = keep_probabilities(eps, delta)
    assert p[0] == 0 and p[-1] == 1 and np.all(np.diff(p) >= 0)
    e = math.exp(eps)
    assert np.all(p[1:] <= e * p[:-1] + delta + 1e-15)
    assert np.all(1 - p[:-1] <= e * (1 - p[1:]) + delta + 1e-15)
    n = np.repeat(np.arange(p.size), 4000)
    kept = optimal_select(n, eps, delta, np.random.default_rng(1)).reshape(p.size, -1)
    se = np.sqrt(p * (1 - p) / 4000)
    assert np.all(np.abs(kept.mean(axis=1) - p) <= 5 * se + 1e-12)


def test_no_key_outside_the_data_is_ever_released():
    rng = np.random.default_rng(3)
    keys = [f"k{i}" for i in range(8)]
    df = pd.DataFrame({"g": rng.choice(keys, 400), "pid": rng.integers(0, 150, 400)})
    seen = set()
    for seed in range(40):
        t = tabulate(
            df,
            by="g",
            unit="pid",
            max_groups=2,
            aggregates={"n": "count"},
            epsilon=4.0,
            delta=0.2,
            rng=seed,
        )
        assert set(t["g"]) <= set(keys)
        seen |= set(t["g"])
    assert seen == set(keys)
    public = pd.DataFrame({"g": [*keys, "never", "nor"]})
    t = tabulate(df, by="g", unit="pid", aggregates={"n": "count"}, keys=public, epsilon=1.0, rng=1)
    assert list(t["g"]) == list(public["g"])  # every public key, empty ones too


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_the_plan_composes_within_the_total(noise):
    for keys, k, m in itertools.product((True, False), (1, 3), (1, 4)):
        plan = make_plan(
            by=["g"],
            unit="pid",
            max_groups=k,
            max_rows=m,
            aggregates={"n": "count", "x": ["sum", "mean", "median"]},
            bounds={"x": (-1, 3)},
            public_keys=keys,
            epsilon=0.7,
            delta=1e-6,
            noise=noise,
        )
        eps, delta = _claim(plan)
        assert eps <= 0.7 * (1 + 1e-9) and delta <= 1e-6 * (1 + 1e-9)
