"""Coverage of EPTRBayesClassifier's 95% intervals (``inference="sandwich"``) on real data.

Each data set (iris, wine, breast_cancer, as shipped with scikit-learn) is the population;
each release resamples n records with replacement and fits EPTRBayesClassifier (default
``c0="auto"``, ``constants="tight"``, delta = 1e-6) on features mapped onto [-1, 1] by
their range (public box ``bounds=(-1, 1)``, so ``x_radius="auto"`` is sqrt(p)). The truth
is the population's class shares and class means. Coverage of each parameter is over the
released fits in which it has an interval (a class mean projected onto the R_x ball
claims none: "pinned"). Beside it: the non-private Wald interval on the same
resample (p_hat +- z sqrt(p_hat (1 - p_hat) / n), m_hat +- z s / sqrt(N_k)) and the
noise-only interval (the anchors' kind: the released value +- z sigma, sigma the sd of
the ePTR noise alone, ``noise_scale_``). The shares scored are those ePTR released, before
the floor and renormalisation (as ``results_`` reports them). MC SE of a coverage of
0.95: sqrt(0.95 0.05 / releases).

    python benchmarks/bench_eptr_bayes_inference.py [--releases 1000] [--quick]
        [--data iris] [--n 10000] [--epsilon 1]
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
import zlib

import numpy as np
from sklearn import datasets

from privest.errors import NothingReleasedWarning
from privest.models.eptr_bayes import EPTRBayesClassifier

DELTA = 1e-6
Z95 = 1.959964
LOADERS = {
    "iris": datasets.load_iris,
    "wine": datasets.load_wine,
    "breast_cancer": datasets.load_breast_cancer,
}


def population(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Z on [-1, 1] by the columns' range, labels 0..K-1, truth = (shares, means))."""
    d = LOADERS[name]()
    X, y = d.data.astype(float), d.target.astype(int)
    lo, hi = X.min(0), X.max(0)
    Z = (X - (lo + hi) / 2.0) / ((hi - lo) / 2.0)
    k = int(y.max()) + 1
    shares = np.bincount(y, minlength=k) / y.size
    means = np.vstack([Z[y == c].mean(0) for c in range(k)])
    return Z, y, np.concatenate([shares, means.ravel()])


def plain_wald(Z: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-private estimates and standard errors of (shares, means) on one resample."""
    n = y.size
    counts = np.bincount(y, minlength=k).astype(float)
    shares = counts / n
    means = np.vstack([Z[y == c].mean(0) for c in range(k)])
    var = np.vstack([Z[y == c].var(0) for c in range(k)])
    se = np.concatenate(
        [np.sqrt(shares * (1 - shares) / n), np.sqrt(var / counts[:, None]).ravel()]
    )
    return np.concatenate([shares, means.ravel()]), se


def cell(name: str, n: int, eps: float, releases: int, seed: int) -> dict:
    """Coverage over ``releases`` released fits (at most 4x as many attempts)."""
    Z, y, truth = population(name)
    k, p = int(y.max()) + 1, Z.shape[1]
    d = truth.size
    rng = np.random.default_rng(seed)
    hits, kept, plain, noise, widths, plain_w, noise_w = [], [], [], [], [], [], []
    released = attempts = 0
    while released < releases and attempts < 4 * releases:
        attempts += 1
        idx = rng.integers(0, y.size, n)
        Zs, ys = Z[idx], y[idx]
        model = EPTRBayesClassifier(
            epsilon=eps,
            delta=DELTA,
            classes=list(range(k)),
            bounds=(-1.0, 1.0),
            inference="sandwich",
            random_state=int(rng.integers(2**63)),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NothingReleasedWarning)
            model.fit(Zs, ys)
        if not model.released_:
            continue
        released += 1
        res = model.results_
        est, se = res.params.to_numpy(), res.bse.to_numpy()
        ok = ~res.on_bound.to_numpy()
        kept.append(ok)
        hits.append(np.abs(est - truth) <= Z95 * se)
        widths.append(2 * Z95 * se)
        pe, pse = plain_wald(Zs, ys, k)
        plain.append(np.abs(pe - truth) <= Z95 * pse)
        plain_w.append(2 * Z95 * pse)
        nse = Z95 * model.noise_scale_  # every released coordinate's noise sd
        noise.append(np.abs(est - truth) <= nse)
        noise_w.append(np.full(d, 2 * nse))
    kept_a = np.array(kept, dtype=bool).reshape(-1, d)
    n_kept = kept_a.sum(0)
    usable = n_kept > 0

    def rate(rows: list) -> np.ndarray:
        a = np.array(rows, dtype=float).reshape(-1, d)
        total = np.where(kept_a, a, 0.0).sum(0)
        return np.where(usable, total / np.maximum(n_kept, 1), np.nan)

    cov, plain_cov, noise_cov = rate(hits), rate(plain), rate(noise)
    ratio = rate([w / pw for w, pw in zip(widths, plain_w, strict=True)])
    noise_ratio = rate([w / pw for w, pw in zip(noise_w, plain_w, strict=True)])

    def stat(v: np.ndarray, part: slice, f: str) -> float:
        w = v[part][usable[part]]
        return float(getattr(np, f)(w)) if w.size else math.nan

    shares, means = slice(0, k), slice(k, d)
    return {
        "data": name,
        "n": n,
        "eps": eps,
        "releases": released,
        "attempts": attempts,
        "pinned_means": int(sum(released - n_kept[k + c * p] for c in range(k))),
        "shares_min": stat(cov, shares, "min"),
        "shares_mean": stat(cov, shares, "mean"),
        "means_min": stat(cov, means, "min"),
        "means_mean": stat(cov, means, "mean"),
        "mc_se": math.sqrt(0.95 * 0.05 / max(int(n_kept.min()), 1)),
        "plain_min": float(np.nanmin(plain_cov)) if released else math.nan,
        "noise_min": float(np.nanmin(noise_cov)) if released else math.nan,
        "ratio_shares": stat(ratio, shares, "mean"),
        "ratio_means": stat(ratio, means, "mean"),
        "noise_ratio_means": stat(noise_ratio, means, "mean"),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=1000, help="released fits per cell")
    parser.add_argument("--quick", action="store_true", help="20 releases, n = 10^4 only")
    parser.add_argument("--data", default="iris,wine,breast_cancer")
    parser.add_argument("--n", type=int, default=None, help="only this n")
    parser.add_argument("--epsilon", type=float, default=None, help="only this epsilon")
    args = parser.parse_args(argv)
    releases = 20 if args.quick else args.releases
    ns = (10_000,) if args.quick else (1_000, 10_000, 100_000)
    ns = tuple(n for n in ns if args.n in (None, n))
    epss = tuple(e for e in (1.0, 4.0) if args.epsilon in (None, e))
    print(
        "| data (K, p) | n | eps | releases / attempts | pinned means | shares min / "
        "mean | means min / mean | MC SE | plain Wald min | noise-only min | width / plain: "
        "shares, means | noise-only width / plain (means) |"
    )
    print("|---" * 12 + "|")
    rows = []
    for name in args.data.split(","):
        _, y, truth = population(name)
        k = int(y.max()) + 1
        for n in ns:
            for eps in epss:
                seed = zlib.crc32(f"{name}-{n}-{eps}".encode())
                t0 = time.perf_counter()
                r = cell(name, n, eps, releases, seed)
                r["seconds"] = time.perf_counter() - t0
                rows.append(r)
                print(
                    f"| {name} ({k}, {(truth.size - k) // k}) | {n} | {eps:g} | "
                    f"{r['releases']} / {r['attempts']} | {r['pinned_means']} | "
                    f"{r['shares_min']:.3f} / {r['shares_mean']:.3f} | "
                    f"{r['means_min']:.3f} / {r['means_mean']:.3f} | {r['mc_se']:.3f} | "
                    f"{r['plain_min']:.3f} | {r['noise_min']:.3f} | {r['ratio_shares']:.1f}, "
                    f"{r['ratio_means']:.1f} | {r['noise_ratio_means']:.1f} |",
                    flush=True,
                )
    return rows


if __name__ == "__main__":
    main()
