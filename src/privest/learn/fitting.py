"""The one fitting strategy of the corrected-loss estimators, whatever holds the records
(paper 000, Secs. 4-6; docs/dr-estimation.md, "Computation and inference").

:func:`fit_objective` minimises an :class:`~privest.learn.objective.Objective` over the
parameter box:

* the start strategy of :func:`~privest.learn.batched.paths.corrected_path` (naive, then
  SL/SDR, then DR from the naive and SDR fits, the lower objective kept; a loss not smooth
  in theta also from its initial point; the start fits to :data:`START_XTOL`), each run by
  :func:`~privest.learn.solvers.solve`, which picks the solver from the loss's
  capabilities and from where the records are;
* on large data (more than :data:`SUBSAMPLE_ABOVE` records) and a loss smooth in theta,
  the starts and the runs from them use a subsample of about :data:`SUBSAMPLE_SIZE`
  records (in memory: evenly spaced records; a backend's: where its records are, e.g. one
  partition on its worker), and only the distinct local solutions are polished on all
  records (the objective and its minimiser are those of the full data).
"""

from __future__ import annotations

import warnings

import numpy as np

from privest.learn.batched.paths import Fit, corrected_path
from privest.learn.objective import Objective
from privest.learn.solvers import Solution, solve

__all__ = ["SUBSAMPLE_ABOVE", "SUBSAMPLE_SIZE", "fit_objective"]

#: Above this many records, the multi-start runs on a subsample of about this size first
#: (it only locates the local solutions: at 10^5 and 10^6 records 20,000 cost the fewest
#: passes in all, polish included; docs/dr-estimation.md, "Speed").
SUBSAMPLE_ABOVE = 50_000
SUBSAMPLE_SIZE = 20_000
#: Newton's step tolerance on all records from a subsample's solution: the result is
#: accurate to about 1e-7, far below any standard error at the sizes that need a subsample
#: (about 1e-2 at n = 10^6), and a full-data iteration or two is saved.
POLISH_XTOL = 1e-7
#: Newton's step tolerance of the fits that are only starts (naive, SL, SDR when the target
#: is DR): a pure Newton step below 1e4 times this ends them about 1e-4 from their minimum,
#: and the target's Newton run from there reaches the same solution (to 1e-14 in the
#: benchmarks) with a step or two fewer in each start fit (docs/dr-estimation.md, "Speed").
START_XTOL = 1e-6
#: Subsample solutions closer than this (max norm) are one local solution.
DISTINCT = 1e-2


def fit_objective(obj: Objective, box: np.ndarray) -> Solution:
    """Minimise ``obj`` over ``box`` ((p, 2) array) by the strategy of the module docstring."""
    if obj.n > SUBSAMPLE_ABOVE and obj.loss.smooth_in_theta:
        thetas, starts = obj.on_subsample(SUBSAMPLE_SIZE, local_solutions, box)
        sol = solve(obj, box, thetas, xtol=POLISH_XTOL)
        sol.starts = starts
        return sol
    return _run_path(obj, box, separate=False)[0]


def local_solutions(obj: Objective, box: np.ndarray) -> tuple[list[np.ndarray], int]:
    """The distinct local solutions of ``obj``'s method from each of its starts (lowest
    objective first) and the number of starts: what a subsample passes to the polish."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, runs = _run_path(obj, box, separate=True)
    distinct: list[np.ndarray] = []
    for sol in sorted(runs, key=lambda s: s.objective):
        if all(np.max(np.abs(sol.theta - t)) > DISTINCT for t in distinct):
            distinct.append(sol.theta)
    return distinct, len(runs)


def _run_path(obj: Objective, box: np.ndarray, separate: bool) -> tuple[Solution, list[Solution]]:
    """The start strategy for ``obj.method``: its solution and (``separate``: one solve per
    start) the run from each of its starts. The start fits are silent; the target's solver
    warns when it stops early."""
    loss, method = obj.loss, obj.method
    theta0 = np.clip(loss.initial_theta(obj.data.d), box[:, 0], box[:, 1])
    found: dict[str, Solution] = {}
    runs: list[Solution] = []

    def solve_from(m: str, starts: list[np.ndarray]) -> Fit:
        points = [s[0] for s in starts]
        if m == method and separate:
            runs.extend(solve(obj, box, [s]) for s in points)
            sol = min(runs, key=lambda s: s.objective)
        elif m == method:
            sol = solve(obj, box, points)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol = solve(obj.with_method(m), box, points, xtol=START_XTOL)
        found[m] = sol
        return sol.theta[None], np.array([sol.objective]), np.array([sol.n_iter])

    sdr_start = bool(loss.smooth_in_x and not obj.data.y_noised)
    corrected_path(solve_from, [method], theta0[None], sdr_start, not loss.smooth_in_theta)
    return found[method], runs
