"""ZIL release out of core on Dask (issue 20; paper 000, Algorithm 1; docs/scale-out.md).

Writes a Parquet input of n x d uniform records partition by partition (never whole in
memory), then releases it into a store on a LocalCluster of ``--workers`` worker processes
(one thread each, ``--memory-limit`` each) and reports the wall time, records per second,
the peak resident memory of each worker (psutil, sampled every 0.2 s) and whether a worker
spilled to disk. Baseline, same run: the in-memory release of the first ``--baseline-rows``
records on this process (read the Parquet, ``ZILMechanism.release``, ``save``), as records
per second and per CPU second (pyarrow may use several threads, and the machine may be
shared, so records per CPU second is the fair per-core comparison; the workers' CPU time is
read with psutil). Goal: Dask >= 0.5x the in-memory rate per core; peak worker memory below
its limit; no spill. The log-log slope of time against n (near 1) says how the cost grows.

    python benchmarks/bench_dask_release.py [--sizes 1e6 1e7 1e8] [--workers 2]
        [--memory-limit 2GB] [--partition-rows 500000] [--workdir DIR] [--seeded]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import psutil
from distributed import Client, LocalCluster

import privest as pv
from privest.release.store import read_manifest


def write_input(folder: Path, n: int, d: int, rows: int) -> None:
    """n x d uniform(-1, 1) records as Parquet files of ``rows`` rows (one at a time)."""
    if (folder / "_done").exists():
        return
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    cols = [f"x{j}" for j in range(d)]
    for k, start in enumerate(range(0, n, rows)):
        m = min(rows, n - start)
        x = np.random.default_rng(k).uniform(-1, 1, (m, d))
        pd.DataFrame(x, columns=cols).to_parquet(folder / f"part-{k:05d}.parquet", index=False)
    (folder / "_done").touch()


def in_memory_rate(folder: Path, n: int, mech, seed, store: Path) -> tuple[float, float]:
    """Records per second and per CPU second (all threads of this process) of read +
    release + save, in this process, on ``n`` records."""
    t0, c0 = time.perf_counter(), time.process_time()
    frames, rows = [], 0
    for f in sorted(folder.glob("part-*.parquet")):  # only the files the first n rows need
        frames.append(pd.read_parquet(f))
        rows += len(frames[-1])
        if rows >= n:
            break
    df = pd.concat(frames, ignore_index=True).iloc[:n]
    mech.release(df, rng=seed).save(store, ids=False)  # as the Dask runs below
    t, c = time.perf_counter() - t0, time.process_time() - c0
    shutil.rmtree(store)
    return n / t, n / c


def worker_cpu(client: Client) -> float:
    """CPU seconds (user + system) the worker processes have used so far."""
    return sum(client.run(lambda: sum(psutil.Process().cpu_times()[:2])).values())


class PeakMemory:
    """The largest resident memory seen on each worker while running (a client thread)."""

    def __init__(self, client: Client, every: float = 0.2) -> None:
        self.client, self.every, self.peak = client, every, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss = self.client.run(lambda: psutil.Process().memory_info().rss)
            for w, v in rss.items():
                self.peak[w] = max(self.peak.get(w, 0), v)
            self._stop.wait(self.every)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def spilled(client: Client) -> int:
    """Keys the workers spilled to disk (0 means no spill)."""

    def count(dask_worker) -> int:
        slow = getattr(dask_worker.data, "slow", None)
        return 0 if slow is None else len(slow)

    return sum(client.run(count).values())


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6])
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--partition-rows", type=int, default=500_000)
    parser.add_argument("--baseline-rows", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--seeded", action="store_true", help="seeded, not secure, randomness")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # id-less stores and seeded releases warn, by choice here
    sizes = [int(s) for s in args.sizes]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="privest-bench-dask-"))
    seed = 1 if args.seeded else None
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.1, bounds=[(-1.0, 1.0)] * args.d)
    base_n = min(args.baseline_rows, max(sizes))
    write_input(work / f"input-{max(sizes)}", max(sizes), args.d, args.partition_rows)
    base_rate, base_cpu = in_memory_rate(
        work / f"input-{max(sizes)}", base_n, mech, seed, work / "mem"
    )
    print(
        f"in-memory release (read + release + save) of {base_n:,} x {args.d}: "
        f"{base_rate:,.0f} records/s, {base_cpu:,.0f} records per CPU second"
    )
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
        warm = pd.DataFrame(np.zeros((1000, args.d)), columns=[f"x{j}" for j in range(args.d)])
        warm = dd.from_pandas(warm, npartitions=args.workers)
        mech.release(warm, store=work / "warm-up", ids=False)
        shutil.rmtree(work / "warm-up")  # the workers have imported privest: not timed below
        idle = max(client.run(lambda: psutil.Process().memory_info().rss).values()) / 1e9
        print(f"idle worker memory (privest imported): {idle:.2f} GB", flush=True)
        for n in sizes:
            folder = work / f"input-{n}"
            write_input(folder, n, args.d, args.partition_rows)
            store = work / f"store-{n}"
            shutil.rmtree(store, ignore_errors=True)
            c0 = worker_cpu(client)
            with PeakMemory(client) as mem:
                t0 = time.perf_counter()
                mech.release(folder, rng=seed, store=store, ids=False)
                t = time.perf_counter() - t0
            cpu = worker_cpu(client) - c0  # includes the memory sampler's few calls
            assert read_manifest(store)["n_rows"] == n
            shutil.rmtree(store)
            rate = n / t
            row = {
                "n": n,
                "seconds": t,
                "records_per_s": rate,
                "per_worker_vs_in_memory": rate / args.workers / base_rate,
                "per_cpu_second_vs_in_memory": n / cpu / base_cpu,
                "peak_worker_gb": max(mem.peak.values()) / 1e9,
                "spilled_keys": spilled(client),
            }
            rows.append(row)
            print(
                f"n = {n:>11,}: {t:8.1f} s, {rate:12,.0f} records/s, per worker "
                f"{row['per_worker_vs_in_memory']:.2f}x in-memory, per CPU second "
                f"{row['per_cpu_second_vs_in_memory']:.2f}x, peak worker memory "
                f"{row['peak_worker_gb']:.2f} GB (limit {args.memory_limit}), spilled keys "
                f"{row['spilled_keys']}",
                flush=True,
            )
    slope = None
    if len(rows) > 1:
        slope = float(
            np.polyfit(np.log([r["n"] for r in rows]), np.log([r["seconds"] for r in rows]), 1)[0]
        )
        print(f"log-log slope of time against n: {slope:.2f}")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "in_memory_records_per_s": base_rate,
        "in_memory_records_per_cpu_s": base_cpu,
        "rows": rows,
        "slope": slope,
    }


if __name__ == "__main__":
    main()
