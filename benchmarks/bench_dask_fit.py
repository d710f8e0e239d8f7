"""DR logistic fit with sandwich SEs on a Dask-backed release (issue 20; paper 000, Sec. 4-5).

Builds a release store of n x 10 noised features and an unnoised 0/1 label by the
out-of-core release (``--part-rows`` records per part, generated on the workers), then fits
``DRLogisticRegression`` on ``load_release(store, engine="dask")`` on a LocalCluster of
``--workers`` worker processes (one thread each, ``--memory-limit`` each). Where the
release takes at most half the workers' memory the fit keeps it there (the time to read and
check the parts is reported apart); otherwise every pass reads the parts from the store
(``in_memory`` False). Reports the fit time, the time of the starts (the in-memory
multi-start strategy on the largest chunk, on its worker), the number of passes over all
records (one per accepted Newton step, one for the scores) and the time per pass.
Baseline, same run: the in-memory fit of the same store (``--baseline-rows``: only its
first parts, the time scaled by n), and the largest coefficient and SE difference between
the two fits where both ran on all records.

    python benchmarks/bench_dask_fit.py [--sizes 1e6 1e7] [--workers 2] [--part-rows 2.5e5]
        [--baseline-rows 1e7] [--memory-limit 2GB] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster, wait

import privest as pv
from privest.release.store import read_manifest
from privest.scale.fit import KEEP_SHARE, cluster_memory

P = 10
NAMES = [f"x{j}" for j in range(P)]


def _records(k: int, part_rows: int, n: int) -> pd.DataFrame:
    """Partition k of the data: 10 features in [-1, 1] and a logistic 0/1 label."""
    m = min(part_rows, n - k * part_rows)
    rng = np.random.default_rng(k)
    x = rng.uniform(-1, 1, (m, P))
    y = (rng.uniform(size=m) < 1 / (1 + np.exp(-(0.2 + x @ np.linspace(-1, 1, P))))).astype(float)
    return pd.DataFrame(x, columns=NAMES).assign(label=y)


def build_store(path: Path, n: int, part_rows: int) -> None:
    """n records released into a store by the out-of-core release (one part per
    ``part_rows`` partition, generated on the workers: the data never pass the client)."""
    if (path / "manifest.json").exists() and read_manifest(path)["n_rows"] == n:
        return
    shutil.rmtree(path, ignore_errors=True)
    mech = pv.ZILMechanism(lam=0.1, zero_prob=0.3, bounds={c: (-1, 1) for c in NAMES})
    frame = dd.from_map(
        _records, range(-(-n // part_rows)), part_rows=part_rows, n=n, meta=_records(0, 1, 1)
    )
    mech.release(frame, store=path, rng=100, ids=False)


def in_memory(path: Path, n: int, rows: int) -> tuple[float, object | None]:
    """The in-memory fit's time on the first ``rows`` records (read into this process
    first, untimed), scaled by n / rows."""
    drel = pv.load_release(path, engine="dask")
    part = dataclasses.replace(drel, x1=drel.x1[:rows], x2=drel.x2[:rows], ids=None)
    rel = part.compute(scheduler="threads")  # only the parts the first rows need
    t = time.perf_counter()
    fit = pv.DRLogisticRegression().fit(rel, "label")
    return (time.perf_counter() - t) * n / rows, (fit if rows >= n else None)


def run(n: int, args: argparse.Namespace, client: Client, work: Path) -> dict:
    store = work / f"store-{n}"
    t = time.perf_counter()
    build_store(store, n, args.part_rows)
    print(f"n = {n:.0e}: store built in {time.perf_counter() - t:.1f} s", flush=True)
    drel = pv.load_release(store, engine="dask")
    t_read = np.nan
    if 2 * n * P * 8 <= KEEP_SHARE * cluster_memory():  # the fit's rule: kept in memory
        t = time.perf_counter()
        x1, x2 = dask.persist(drel.x1, drel.x2)
        wait([x1, x2])
        t_read = time.perf_counter() - t
        drel = dataclasses.replace(drel, x1=x1, x2=x2)
        del x1, x2
    t = time.perf_counter()
    fit = pv.DRLogisticRegression().fit(drel, "label")
    t_fit = time.perf_counter() - t
    del drel  # frees the workers' copy, if kept
    rows = min(n, args.baseline_rows)
    t_mem, mem = in_memory(store, n, rows)
    out = {
        "n": n,
        "in_memory": fit.records_in_memory_,
        "read_s": t_read,
        "fit_s": t_fit,
        "passes": fit.passes_,
        "newton_iter": fit.solution_.n_iter,
        "start_s": t_fit - fit.pass_seconds_,
        "per_pass_s": fit.pass_seconds_ / fit.passes_,
        "memory_fit_s": t_mem,
        "memory_rows": rows,
        "ratio": t_fit / t_mem,
        "max_coef_diff": np.nan if mem is None else float(np.max(np.abs(fit.coef_ - mem.coef_))),
        "max_se_rel_diff": np.nan
        if mem is None
        else float(np.max(np.abs(fit.stderr_ / mem.stderr_ - 1))),
    }
    print(out, flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--part-rows", type=float, default=2.5e5)
    ap.add_argument("--baseline-rows", type=float, default=1e7)
    ap.add_argument("--memory-limit", default="2GB")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    args.part_rows, args.baseline_rows = int(args.part_rows), int(args.baseline_rows)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-dask-fit-"))
    rows = []
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            memory_limit=args.memory_limit,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):
        for n in args.sizes:
            rows.append(run(int(n), args, client, work))
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if len(table) > 1:
        slope = np.polyfit(np.log(table["n"]), np.log(table["fit_s"]), 1)[0]
        print(f"log-log slope of the Dask fit time against n: {slope:.2f}")


if __name__ == "__main__":
    main()
