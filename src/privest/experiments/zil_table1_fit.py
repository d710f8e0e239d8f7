"""Table 1 of paper 000 without replication noise: the RMSE of each cell in closed form.

Every Table 1 estimator is a mean over n i.i.d. per-record terms (Section 7.1: ORA
g(X), SL g(X2) (times 1 + 2 pi^2 lam^2 for |sin|, A2), DR (1/delta) g(X1) +
(1 - 1/delta) g(X2)), so its RMSE is sqrt(bias^2 + Var(term) / n) exactly. The mean and
variance of a term are estimated once from ``draws`` records (common random numbers for
every lam), which makes the RMSE of any cell, at any lam, accurate to about 0.1%, and lets
each of the paper's numbers be matched by the lam that reproduces it (docs/dr-estimation.md,
"Fidelity of the full runs").

``python -m privest.experiments.zil_table1_fit`` prints the per-cell fit.
"""

from __future__ import annotations

import math

import numpy as np

from privest.experiments.zil_tables import T1_LOSSES, T1_PAPER, T1_THETA0, _t1_g

__all__ = ["lam_fit", "t1_exact_rmse"]

_METHODS = ("ORA", "SL", "DR")


def _moments(delta: float, lam: float, draws: int, seed: int) -> dict[str, np.ndarray]:
    """(mean, variance) of each method's per-record term, for the three losses."""
    rng = np.random.default_rng(seed)
    x = rng.random(draws)
    zero = rng.random(draws) < delta
    w1 = np.sqrt(rng.standard_exponential(draws))
    g1 = rng.standard_normal(draws)
    w2 = np.sqrt(rng.standard_exponential(draws))
    g2 = rng.standard_normal(draws)
    x1 = x + np.where(zero, 0.0, lam * w1 * g1)
    x2 = x1 + lam * math.sqrt(delta) * w2 * g2
    g0, gx1, gx2 = (np.stack(_t1_g(v)) for v in (x, x1, x2))
    sl = gx2.copy()
    sl[2] *= 1.0 + 2.0 * math.pi**2 * lam**2
    dr = gx1 / delta + (1.0 - 1.0 / delta) * gx2
    return {m: (t.mean(axis=1), t.var(axis=1)) for m, t in zip(_METHODS, (g0, sl, dr), strict=True)}


def t1_exact_rmse(
    delta: float, lam: float, n: int, draws: int = 2_000_000, seed: int = 0
) -> dict[str, np.ndarray]:
    """RMSE of ORA, SL and DR (one value per loss) at n records: sqrt(bias^2 + Var / n)."""
    out = {}
    for m, (mean, var) in _moments(delta, lam, draws, seed).items():
        out[m] = np.sqrt((mean - np.asarray(T1_THETA0)) ** 2 + var / n)
    return out


def lam_fit(delta: float, block: str, lo: float = 0.5, hi: float = 2.5) -> list[dict]:
    """For each SL/DR cell of the paper's ``block`` ("S1" or "S2"), the smallest lam in
    [lo, hi] whose exact RMSE equals the paper's number (NaN when none does). The RMSE need
    not be monotone in lam (DR on a bounded g rises, then falls), so the first crossing on
    a grid of step 0.02 is located and interpolated linearly."""
    grid = np.arange(lo, hi + 1e-9, 0.02)
    moments = [_moments(delta, lam, 400_000, 0) for lam in grid]
    theta0 = np.asarray(T1_THETA0)
    rows = []
    for n in (500, 1000):
        paper = T1_PAPER[(block, n)]
        for m in ("SL", "DR"):
            for k, loss in enumerate(T1_LOSSES):
                rmse = np.array(
                    [math.sqrt((mo[m][0][k] - theta0[k]) ** 2 + mo[m][1][k] / n) for mo in moments]
                )
                gap = rmse - paper[m][k]
                cross = np.flatnonzero(np.sign(gap[:-1]) != np.sign(gap[1:]))
                lam = math.nan
                if cross.size:
                    i = int(cross[0])
                    lam = float(grid[i] - gap[i] * (grid[i + 1] - grid[i]) / (gap[i + 1] - gap[i]))
                rows.append({"n": n, "method": m, "loss": loss, "paper": paper[m][k], "lam": lam})
    return rows


def main() -> None:
    for block, delta in (("S1", 0.1), ("S2", 0.05)):
        for r in lam_fit(delta, block):
            print(
                f"{block} n={r['n']} {r['method']:3s} {r['loss']:14s} paper {r['paper']:.3f}"
                f"  lam fit {r['lam']:.3f}"
            )


if __name__ == "__main__":  # pragma: no cover
    main()
