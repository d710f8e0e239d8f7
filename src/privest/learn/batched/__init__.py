"""Batched solvers: R independent fits at once (paper 000, Secs. 4-7).

The estimators call them with R = 1 for the built-in losses
(:mod:`privest.learn.solvers`); the paper-000 tables with R = Monte Carlo replicates.

* :class:`~privest.learn.batched.design.Design`: stacks of designs (R, p, n);
* :func:`~privest.learn.batched.newton.newton_box`: projected, modified Newton on a box;
* :class:`~privest.learn.batched.objective.BatchedObjective`: naive/DR/SL/SDR objectives of
  an index loss (logistic: Sec. 7.2);
* :func:`~privest.learn.batched.paths.corrected_newton`: naive -> SL/SDR -> DR, the start
  strategy of the estimators and the tables;
* :func:`~privest.learn.batched.lp.l1_ipm`: weighted, tilted L1 regression (interior point);
* :func:`~privest.learn.batched.dc.dc_simplex_dr`, :func:`~privest.learn.batched.dc.dc_median_dr`:
  the DC algorithm for DR median regression (Sec. 7.3); the warm-simplex version is one
  compiled loop per replicate (numba), the only kernel here not batched as arrays
  (:func:`~privest.learn.batched.simplex.lad_simplex`: the same loop for median regression);
* :class:`~privest.learn.batched.scl.SCLProblem`: the sCL competitor of Table 3.
"""

from privest.learn.batched.dc import (
    dc_median_dr,
    dc_simplex_dr,
    dr_median_objective,
    median_dr_fit,
    smoothed_dr_start,
)
from privest.learn.batched.design import Design
from privest.learn.batched.lp import l1_ipm
from privest.learn.batched.newton import BatchedProblem, newton_box
from privest.learn.batched.objective import BatchedObjective
from privest.learn.batched.paths import corrected_newton
from privest.learn.batched.scl import SCLProblem
from privest.learn.batched.simplex import lad_simplex

__all__ = [
    "BatchedObjective",
    "BatchedProblem",
    "Design",
    "SCLProblem",
    "corrected_newton",
    "dc_median_dr",
    "dc_simplex_dr",
    "dr_median_objective",
    "l1_ipm",
    "lad_simplex",
    "median_dr_fit",
    "newton_box",
    "smoothed_dr_start",
]
