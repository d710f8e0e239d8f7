"""Speed and memory of the ZIL release (paper 000 Algorithm 1; issue 31, "Speed").

Two rows of issue 31, at several n, each as a ratio to a baseline timed in the same run:

* **ZIL release n x d vs 2 n d numpy normals.** ``ZILMechanism.release`` of n records x d
  attributes (a C-ordered numpy array, and a DataFrame) against drawing the 2 n d standard
  normals a release needs (X1's and X2's Gaussian coordinates) with the same generator:
  seeded (PCG64) and secure (AES counter). Goal <= 1.5. Also the peak memory (tracemalloc)
  as a multiple of the released arrays (x1 and x2).
* **privest release of a CSV vs pandas.read_csv.** ``privest release`` of an n-row CSV
  (an id column, d uniform columns and a 0/1 target) as a fresh process, against a fresh
  process that imports pandas and reads the same file: wall time and peak resident memory.
  Goal <= 2.

Run it with another checkout's interpreter to measure "before" in the same session.

    python benchmarks/bench_zil_release.py [--sizes 1e4 1e5 1e6 1e7] [--cli-sizes 1e4 1e5 1e6]
        [--d 10] [--repeat 7] [--cli-repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import privest as pv


def timed(func) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    w, c = time.perf_counter(), time.process_time()
    func()
    return time.perf_counter() - w, time.process_time() - c


def release_row(n: int, d: int, repeat: int) -> dict[str, float]:
    """Release time / normals time, seeded and secure, numpy and DataFrame input: medians
    over ``repeat`` rounds of the per-round ratios (each round times the normals, the array
    release and the frame release back to back), in wall and in CPU time."""
    x = np.random.default_rng(0).uniform(-1, 1, (n, d))
    frame = pd.DataFrame(x, columns=[f"x{j}" for j in range(d)])
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.1, bounds=[(-1.0, 1.0)] * d)
    out = {}
    for kind, gen in (("seeded", pv.make_rng(1)), ("secure", pv.make_rng())):
        runs = []
        for _ in range(repeat):
            base = timed(lambda g=gen: g.standard_normal((2 * n, d)))
            arr = timed(lambda g=gen: mech.release(x, rng=g))
            df = timed(lambda g=gen: mech.release(frame, rng=g))
            runs.append([arr[k] / base[k] for k in (0, 1)] + [df[k] / base[k] for k in (0, 1)])
        med = np.median(np.array(runs), axis=0)
        for k, key in enumerate(("array", "array_cpu", "frame", "frame_cpu")):
            out[f"{kind}_{key}"] = float(med[k])
    tracemalloc.start()
    rel = mech.release(x, rng=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out["memory"] = peak / (rel.x1.nbytes + rel.x2.nbytes)
    return out


def write_csv(path: Path, n: int, d: int) -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": np.arange(n)})
    for j in range(d):
        df[f"x{j}"] = rng.uniform(0, 1, n).round(6)
    df["y"] = rng.integers(0, 2, n)
    df.to_csv(path, index=False)


def run(argv: list[str]) -> tuple[float, float]:
    """Wall time (s) and peak resident memory (MiB) of a fresh process (GNU time's %M: a
    child forked from this process would count this process's pages too)."""
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed: {proc.stderr[-500:]}")
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024


def cli_row(n: int, d: int, repeat: int, work: Path) -> dict[str, float]:
    """``privest release`` of an n-row CSV against ``pandas.read_csv`` of it (processes)."""
    csv = work / f"d{n}.csv"
    if not csv.exists():
        write_csv(csv, n, d)
    bounds = ",".join(f"x{j}=0:1" for j in range(d))
    read = [sys.executable, "-c", f"import pandas; pandas.read_csv({str(csv)!r})"]
    best = {"read_s": np.inf, "release_s": np.inf, "read_mib": 0.0, "release_mib": 0.0}
    for k in range(repeat):
        store = work / f"s{n}-{k}"
        release = [sys.executable, "-m", "privest", "release", str(csv), "--bounds", bounds]
        release += ["--lam", "0.5", "--zero-prob", "0.1", "--id-column", "id", "-o", str(store)]
        for key, argv in (("read", read), ("release", release)):
            wall, rss = run(argv)
            best[f"{key}_s"] = min(best[f"{key}_s"], wall)
            best[f"{key}_mib"] = max(best[f"{key}_mib"], rss)
    best["ratio"] = best["release_s"] / best["read_s"]
    best["memory_ratio"] = best["release_mib"] / best["read_mib"]
    return best


def main(argv: list[str] | None = None) -> dict[str, dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[1e4, 1e5, 1e6])
    parser.add_argument("--cli-sizes", type=float, nargs="*", default=[1e4, 1e5, 1e6])
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cli-repeat", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # seeded releases warn (they are not real releases)
    results: dict[str, dict] = {}
    print(f"ZIL release, d={args.d}: time / time of 2 n d normals (same generator), median "
          f"of {args.repeat} interleaved rounds, wall (CPU); goal <= 1.5")  # fmt: skip
    print("        n    seeded array    seeded frame    secure array    secure frame  peak memory")
    for n in map(int, args.sizes):
        row = release_row(n, args.d, args.repeat)
        results[f"release {n}"] = row
        cells = [
            f"{row[f'{g}_{k}']:>5.2f}x ({row[f'{g}_{k}_cpu']:.2f}x)"
            for g in ("seeded", "secure")
            for k in ("array", "frame")
        ]
        print(f"{n:>9,}   " + "  ".join(cells) + f"  {row['memory']:>6.2f}x released")
    print(f"\nprivest release of a CSV (id, {args.d} columns, y) vs pandas.read_csv, fresh "
          "processes; goal <= 2")  # fmt: skip
    print("        n   read_csv      release      ratio   peak RSS read / release (ratio)")
    with tempfile.TemporaryDirectory() as tmp:
        for n in map(int, args.cli_sizes):
            row = cli_row(n, args.d, args.cli_repeat, Path(tmp))
            results[f"cli {n}"] = row
            print(
                f"{n:>9,}   {row['read_s']:>7.2f} s   {row['release_s']:>7.2f} s   "
                f"{row['ratio']:>5.2f}x   {row['read_mib']:>6.0f} / {row['release_mib']:>6.0f} "
                f"MiB ({row['memory_ratio']:.2f}x)"
            )
    return results


if __name__ == "__main__":
    main()
