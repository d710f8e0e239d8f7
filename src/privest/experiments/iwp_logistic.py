"""Paper 004, Fig. 5 (E4): IWP-SGD with the logistic loss on the E1 synthetic data.

Same data, privacy and hyperparameters as E1 (:mod:`privest.experiments.iwp_synthetic`), with
the truncated IWP gradient of order K = "auto" (optimal truncation, App. D.7; the paper does
not say which K it used, A9 in docs/iwp-sgd.md). Figures: mean loss of fitted models and loss of the
averaged model against the number of batches. The paper prints no numbers.
"""

from __future__ import annotations

import numpy as np

from privest.experiments.iwp_synthetic import run_synthetic
from privest.experiments.registry import ExperimentResult, register


@register("iwp-logistic", "Paper 004 Fig. 5 (E4): IWP-SGD, logistic loss, synthetic", 100, 2)
def run(reps: int, rng: np.random.Generator, progress: bool = True, **kw) -> ExperimentResult:
    return run_synthetic(reps, rng, progress, "logistic", **kw)
