"""``EPTRBayesClassifier`` against the majority class on held-out data (issue 31, item 5).

scikit-learn ``breast_cancer`` (p = 30), statsmodels ``fair`` (affairs > 0, p = 8) and
``anes96`` (vote, p = 10). Features are mapped to [-1, 1] by their range (public box
``bounds=(-1, 1)``, so ``x_radius="auto"`` is sqrt(p)), delta 1e-6. Each replication splits
70/30 and draws n training rows from the 70% with replacement; every variant is fitted on the
same rows with the same seed. Columns: the majority-class rate of the test split, the private
majority class (noisy class counts at the whole epsilon, argmax), the same model without
noise (NOT private: what the noise costs), ``c0=0.05`` (the old default), ``c0="auto"`` and
the class's current default; mean ± MC SE of the held-out accuracy and (k/reps) fits
released. docs/eptr.md records the table.

    python benchmarks/bench_eptr_majority.py --reps 10
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

DELTA = 1e-6


def _scale(a: np.ndarray) -> np.ndarray:
    lo, hi = a.min(axis=0), a.max(axis=0)
    return 2.0 * (a - lo) / np.where(hi > lo, hi - lo, 1.0) - 1.0


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features in [-1, 1] and integer labels."""
    if name == "breast_cancer":
        from sklearn import datasets

        X, y = datasets.load_breast_cancer(return_X_y=True)
    else:
        import statsmodels.api as sm

        if name == "fair":
            df = sm.datasets.fair.load_pandas().data
            X, y = df.drop(columns="affairs").to_numpy(float), (df["affairs"] > 0).to_numpy()
        elif name == "anes96":
            df = sm.datasets.anes96.load_pandas().data
            X, y = df.drop(columns="vote").to_numpy(float), df["vote"].to_numpy()
        else:
            raise ValueError(name)
    return _scale(X), np.asarray(y).astype(int)


def variants() -> dict:
    import privest as pv

    def make(**kw):
        return lambda e, s: pv.EPTRBayesClassifier(
            epsilon=e, delta=DELTA, classes=[0, 1], bounds=(-1, 1), random_state=s, **kw
        )

    return {
        "c0=0.05": make(c0=0.05),
        "c0=auto": make(c0="auto"),
        "default": make(),
    }


def private_majority(y: np.ndarray, eps: float, seed: int) -> int:
    """Argmax of the class counts with Laplace(2/eps) noise (a swap moves two counts by 1)."""
    from privest.mechanisms.samplers.lattice import LatticeLaplace

    rng = np.random.default_rng(seed)
    mech = LatticeLaplace(eps, 2.0)
    counts = np.bincount(y, minlength=2).astype(float)
    noisy = [float(mech.release(c, rng)[()]) for c in counts]
    return int(np.argmax(noisy))


def non_private(Xtr, ytr, Xte, yte) -> float:
    """Accuracy of the same model (Algorithm 3's statistics) without noise: NOT private."""
    from privest.models.eptr_bayes import bayes_statistics, linear_bayes_scores

    st = bayes_statistics(Xtr, ytr, 2, np.sqrt(Xtr.shape[1]), 0.05)
    pred = np.argmax(linear_bayes_scores(Xte, st["class_prior"], st["means"]), axis=1)
    return float(np.mean(pred == yte))


def cell(X, y, n: int, eps: float, reps: int) -> dict:
    from privest.errors import NothingReleasedWarning

    fits = variants()
    acc = {k: [] for k in ["majority", "private majority", "non-private", *fits]}
    rel = {k: 0 for k in fits}
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        perm = rng.permutation(len(y))
        cut = int(0.7 * len(y))
        tr, te = perm[:cut], perm[cut:]
        idx = rng.choice(tr, n, replace=True)
        Xtr, ytr, Xte, yte = X[idx], y[idx], X[te], y[te]
        acc["majority"].append(max(np.mean(yte), 1 - np.mean(yte)))
        acc["private majority"].append(np.mean(yte == private_majority(ytr, eps, r)))
        acc["non-private"].append(non_private(Xtr, ytr, Xte, yte))
        for name, mk in fits.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NothingReleasedWarning)
                m = mk(eps, r).fit(Xtr, ytr)
            acc[name].append(np.mean(m.predict(Xte) == yte))
            rel[name] += bool(m.released_)
    out = {k: (float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(reps))) for k, v in acc.items()}
    out["released"] = rel
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--data", default="breast_cancer,fair,anes96")
    ap.add_argument("--n", default="500,2000,10000")
    ap.add_argument("--eps", default="1,4")
    a = ap.parse_args(argv)
    import privest

    print(f"# privest from {privest.__file__}")
    names = ["majority", "private majority", "non-private", *variants()]
    print("| data | n | eps | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    rows = {}
    for data in a.data.split(","):
        X, y = load(data)
        for n in map(int, a.n.split(",")):
            for eps in map(float, a.eps.split(",")):
                c = cell(X, y, n, eps, a.reps)
                rows[(data, n, eps)] = c
                cols = [f"{c[k][0]:.3f}" for k in names[:3]]
                cols += [
                    f"{c[k][0]:.3f} ± {c[k][1]:.3f} ({c['released'][k]}/{a.reps})"
                    for k in names[3:]
                ]
                print(f"| {data} | {n} | {eps:g} | " + " | ".join(cols) + " |", flush=True)
    return rows


if __name__ == "__main__":
    main()
