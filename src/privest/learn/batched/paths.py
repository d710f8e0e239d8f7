"""The start strategy of the corrected-loss fits, shared by the estimators and the tables.

Paper 000 fixes no optimiser (docs/dr-estimation.md, "Computation and inference"); privest
fits, for every replicate at once (R = 1 for an estimator):

* naive (or oracle) from ``theta0`` (the loss's initial point, zeros);
* SL and SDR from the naive fit;
* DR (non-convex: a difference of convex functions, eq. (4.4)) from the naive fit and, when
  the loss is smooth in x, from the SDR fit; the lower DR objective is kept.

With ``init_start`` (a loss not smooth in theta, whose corrected objective has more local
minima: check, hinge, networks) the SL, SDR and DR fits are also started at ``theta0``.
:func:`corrected_path` is the strategy for any solver of one method from a list of starts
(the estimators' :func:`~privest.learn.fitting.fit_objective`, on any backend);
:func:`corrected_newton` runs it with :func:`~privest.learn.batched.newton.newton_box` on
R replicates (the paper-000 tables).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from privest.learn.batched.newton import BatchedProblem, newton_box

__all__ = ["best_of", "corrected_newton", "corrected_path"]

Fit = tuple[np.ndarray, np.ndarray, np.ndarray]  # (theta (R, p), objective (R,), iterations)


def best_of(fits: list[Fit]) -> Fit:
    """Per replicate, the fit with the lowest objective (the first on ties)."""
    theta, f, it = fits[0]
    for th_b, f_b, it_b in fits[1:]:
        use = f_b < f
        theta = np.where(use[:, None], th_b, theta)
        f, it = np.where(use, f_b, f), np.where(use, it_b, it)
    return theta, f, it


def corrected_path(
    solve_from: Callable[[str, list[np.ndarray]], Fit],
    methods: Iterable[str],
    theta0: np.ndarray,
    sdr_start: bool = True,
    init_start: bool = False,
) -> dict[str, Fit]:
    """Fits of ``methods`` (and of the starts they need) by the strategy above.

    ``solve_from(method, starts)`` fits one method ("naive", "oracle", "sl", "sdr", "dr")
    from each of ``starts`` ((R, p) arrays) and keeps, per replicate, the lowest objective.
    Returns ``{method: (theta, objective, iterations)}`` for every method fitted.
    """
    want = set(methods)
    out: dict[str, Fit] = {}
    if "oracle" in want:
        out["oracle"] = solve_from("oracle", [theta0])
    if not want & {"naive", "sl", "sdr", "dr"}:
        return out
    out["naive"] = solve_from("naive", [theta0])
    nai = out["naive"][0]
    first = [theta0] if init_start else []
    if "sl" in want:
        out["sl"] = solve_from("sl", [*first, nai])
    if "sdr" in want:
        out["sdr"] = solve_from("sdr", [*first, nai])
    elif "dr" in want and sdr_start:
        out["sdr"] = solve_from("sdr", [nai])
    if "dr" in want:
        out["dr"] = solve_from("dr", [*first, nai] + ([out["sdr"][0]] if sdr_start else []))
    return out


def corrected_newton(
    problem: Callable[[str], BatchedProblem],
    methods: Iterable[str],
    theta0: np.ndarray,
    lo: np.ndarray | float,
    hi: np.ndarray | float,
    sdr_start: bool = True,
) -> tuple[dict[str, Fit], np.ndarray | None]:
    """:func:`corrected_path` with :func:`newton_box` over the box ``[lo, hi]``.

    ``problem(method)`` gives the batched objective of a method; each is called once.
    Returns the fits and the mask of replicates whose DR fit from the SDR start was strictly
    lower (None when DR had one start).
    """
    problems: dict[str, BatchedProblem] = {}
    dr_fits: list[Fit] = []

    def solve_from(method: str, starts: list[np.ndarray]) -> Fit:
        if method not in problems:
            problems[method] = problem(method)
        fits = [newton_box(problems[method], s, lo, hi) for s in starts]
        if method == "dr":
            dr_fits.extend(fits)
        return best_of(fits)

    out = corrected_path(solve_from, methods, theta0, sdr_start)
    if len(dr_fits) != 2:
        return out, None
    (_, f_a, _), (_, f_b, _) = dr_fits
    return out, (f_b < f_a) & (f_b < f_a - 1e-10 * (1 + np.abs(f_a)))
