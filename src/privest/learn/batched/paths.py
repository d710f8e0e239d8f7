"""The start strategy of the corrected-loss fits, shared by the estimators and the tables.

Paper 000 fixes no optimiser (docs/dr-estimation.md, "Computation and inference"); privest
fits, for every replicate at once (R = 1 for an estimator):

* naive (or oracle) from ``theta0`` (the loss's initial point, zeros);
* SL and SDR from the naive fit;
* DR (non-convex: a difference of convex functions, eq. (4.4)) from the naive fit and, when
  the loss is smooth in x, from the SDR fit; the lower DR objective is kept.

Every run is :func:`~privest.learn.batched.newton.newton_box` over the parameter box.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from privest.learn.batched.newton import BatchedProblem, newton_box

__all__ = ["corrected_newton"]

Fit = tuple[np.ndarray, np.ndarray, np.ndarray]  # (theta, objective, iterations)


def corrected_newton(
    problem: Callable[[str], BatchedProblem],
    methods: Iterable[str],
    theta0: np.ndarray,
    lo: np.ndarray | float,
    hi: np.ndarray | float,
    sdr_start: bool = True,
) -> tuple[dict[str, Fit], np.ndarray | None]:
    """Fits of ``methods`` (and of the starts they need) by the strategy above.

    ``problem(method)`` gives the batched objective of a method ("naive", "oracle", "sl",
    "sdr", "dr"); each is called once. Returns ``{method: (theta, objective, iterations)}``
    for every method fitted, and the mask of replicates whose DR fit from the SDR start was
    strictly lower (None when DR had one start).
    """
    want = set(methods)
    out: dict[str, Fit] = {}
    if "oracle" in want:
        out["oracle"] = newton_box(problem("oracle"), theta0, lo, hi)
    if not want & {"naive", "sl", "sdr", "dr"}:
        return out, None
    out["naive"] = newton_box(problem("naive"), theta0, lo, hi)
    nai = out["naive"][0]
    if "sl" in want:
        out["sl"] = newton_box(problem("sl"), nai, lo, hi)
    if "sdr" in want or ("dr" in want and sdr_start):
        out["sdr"] = newton_box(problem("sdr"), nai, lo, hi)
    if "dr" in want:
        dr = problem("dr")
        th_a, f_a, it_a = newton_box(dr, nai, lo, hi)
        if not sdr_start:
            out["dr"] = (th_a, f_a, it_a)
            return out, None
        th_b, f_b, it_b = newton_box(dr, out["sdr"][0], lo, hi)
        use_b = f_b < f_a
        out["dr"] = (
            np.where(use_b[:, None], th_b, th_a),
            np.where(use_b, f_b, f_a),
            np.where(use_b, it_b, it_a),
        )
        return out, use_b & (f_b < f_a - 1e-10 * (1 + np.abs(f_a)))
    return out, None
