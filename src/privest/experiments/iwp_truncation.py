"""Paper 004, Fig. 3 (E3): truncation bias of the inverse Weierstrass series of the logistic loss.

bias_K(t) = sup_{z in [-6, 6]} |W_{2t}[g_t^K](z) - f(z)|, g_t^K = sum_{k<=K} (-t)^k/k! f^{(2k)}
(App. D.7), computed by a dense Simpson rule (exact up to ~1e-10; no Monte Carlo, so ``reps``
is unused). The paper prints no numbers; the note gives an independent prototype's table,
which used 80-node Gauss-Hermite and is inaccurate for t >= 10 (docs/iwp-sgd.md, section 5).
"""

from __future__ import annotations

import numpy as np

from privest.experiments.registry import ExperimentResult, Row, register
from privest.learn.weierstrass import truncation_bias

SPEC = {
    0.05: (1.2e-2, 1.5e-4, 4.5e-6, 2.1e-7),
    0.5: (1.1e-1, 9.6e-3, 1.8e-3, 4.6e-4),
    1.0: (2.1e-1, 2.8e-2, 7.6e-3, 2.7e-3),
    5.0: (7.6e-1, 2.1e-1, 9.9e-2, 6.1e-2),
    10.0: (1.2, 4.0e-1, 2.4e-1, 8.6e-1),
    25.0: (2.2, 8.7e-1, 1.8, 68.0),
}


@register("iwp-truncation", "Paper 004 Fig. 3 (E3): logistic truncation bias bias_K(t)", 1, 1)
def run(reps: int, rng: np.random.Generator, progress: bool = True) -> ExperimentResult:
    import matplotlib.pyplot as plt

    rows = []
    for t, spec in SPEC.items():
        for K in range(4):
            note = f"prototype table {spec[K]:.2g}; paper: figure only"
            value = float(truncation_bias(t, K))
            rows.append(
                Row(f"t={t:g}", float("nan"), f"K={K}", "bias_K(t), sup |z|<=6", value, note=note)
            )
    ts = np.geomspace(0.01, 25.0, 40)
    fig, ax = plt.subplots(figsize=(6, 4))
    for K in (1, 2, 3):
        ax.plot(ts, truncation_bias(ts, K), label=f"K={K}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("t = sigma^2 ||theta||^2 / 2")
    ax.set_ylabel("truncation bias (sup over |z| <= 6)")
    ax.set_title("Logistic loss: bias of the order-K inverse (paper 004 Fig. 3)")
    ax.legend()
    return ExperimentResult(rows=rows, figures={"main": fig})
