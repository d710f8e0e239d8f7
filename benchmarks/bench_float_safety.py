"""The cost of float safety: lattice noise against the plain float sampler, side by side.

Two timings, each a ratio to a baseline measured in the same run (best of ``--repeat``):

* ``private_mean`` on 10^6 values in [-1, 1] (exact integer sum on a public dyadic grid,
  discrete Laplace on a power-of-two lattice) against what privest did before: validate and
  clip the data, ``float(mean)``, add ``Generator.laplace(0, 2 / (n eps))``;
* ``EPTRLinearRegression.fit`` (n = 10^5 and 10^6, p = 20) with its Gaussian step on the
  lattice against the same fit with the step replaced by ``theta + sigma * standard_normal``.

Goal: both within 1.5x.

    python benchmarks/bench_float_safety.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable

import numpy as np

import privest.models.eptr_ols as eptr_ols
from privest.mechanisms.eptr import eptr_noise_scale
from privest.mechanisms.profiles.reaches import prepare_data
from privest.models.eptr_ols import EPTRLinearRegression
from privest.models.statistics import private_mean


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def float_mean(x: np.ndarray, epsilon: float, gen: np.random.Generator) -> float:
    """privest's private_mean before float safety (the baseline)."""
    arr, a, b, _ = prepare_data(x, (-1.0, 1.0), False)
    value = float(min(max(arr.mean(), a), b))
    return value + gen.laplace(0.0, (b - a) / (arr.size * epsilon))


def float_eptr_step(theta_hat, gamma, alpha, epsilon, delta, rng, dim=None, calibration="classic"):
    """ePTR's steps 2-5 with a continuous Gaussian step (the baseline)."""
    from privest.mechanisms.eptr import eptr_coin

    if not eptr_coin(gamma, epsilon, delta, rng):
        return False, None
    theta = np.asarray(theta_hat, dtype=float)
    sigma = eptr_noise_scale(alpha, epsilon, delta, theta.size, calibration)
    return True, theta + sigma * rng.standard_normal(theta.shape)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    gen = np.random.default_rng(0)
    rows = []

    x = gen.uniform(-1, 1, 10**6)
    lattice = best(lambda: private_mean(x, epsilon=1.0, bounds=(-1, 1), rng=gen), args.repeat)
    plain = best(lambda: float_mean(x, 1.0, gen), args.repeat)
    rows.append(("private_mean, n = 10^6", lattice, plain))

    p = 20
    for n in (10**5, 10**6):
        X = gen.standard_normal((n, p))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1) / 4.0)[:, None]
        y = np.clip(X @ (np.ones(p) / np.sqrt(p)) + gen.standard_normal(n), -4, 4)
        model = EPTRLinearRegression(
            epsilon=1.0,
            delta=1e-6,
            x_radius=4.0,
            theta_radius=1.0,
            c0=0.4,
            clip=True,
            random_state=gen,
        )
        fit = functools.partial(model.fit, X, y)
        lattice = best(fit, args.repeat)
        real = eptr_ols.eptr_step
        eptr_ols.eptr_step = float_eptr_step
        try:
            plain = best(fit, args.repeat)
        finally:
            eptr_ols.eptr_step = real
        rows.append((f"EPTRLinearRegression.fit, n = {n:.0e}, p = {p}", lattice, plain))

    print(f"{'what':<45} {'lattice (s)':>12} {'float (s)':>10} {'ratio':>7}")
    for what, a, b in rows:
        print(f"{what:<45} {a:12.4f} {b:10.4f} {a / b:7.2f}")


if __name__ == "__main__":
    main()
