"""Speed and memory of the ZIL release (issue: foundation; paper 000 Algorithm 1).

Releases n = 10^6 records x 10 attributes and reports the time as a ratio to drawing
the same number (n * d) of standard normals with numpy in the same run, for a seeded
(PCG64) and a secure (AES counter) generator, plus the peak memory (tracemalloc) as a
multiple of the released arrays (x1 and x2). Goals: rate ratio >= 0.5 seeded,
>= 0.3 secure; peak memory <= 3x.

    python benchmarks/bench_zil_release.py [--n 1000000] [--d 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import privest as pv


def best_time(func, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n, d = args.n, args.d
    x = np.random.default_rng(0).uniform(-1, 1, (n, d))
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.1, bounds=(-1.0, 1.0) if d == 1 else [(-1, 1)] * d)
    seeded, secure = pv.make_rng(1), pv.make_rng()
    base = best_time(lambda: seeded.standard_normal((n, d)), args.repeat)
    t_seeded = best_time(lambda: mech.release(x, rng=seeded), args.repeat)
    t_secure = best_time(lambda: mech.release(x, rng=secure), args.repeat)
    tracemalloc.start()
    rel = mech.release(x, rng=seeded)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    released = rel.x1.nbytes + rel.x2.nbytes
    out = {
        "normals_s": base,
        "release_seeded_s": t_seeded,
        "release_secure_s": t_secure,
        "rate_ratio_seeded": base / t_seeded,
        "rate_ratio_secure": base / t_secure,
        "peak_memory_ratio": peak / released,
    }
    print(f"ZIL release, n={n:,} x d={d} (best of {args.repeat})")
    print(f"  numpy standard_normal({n}x{d}) baseline: {base:.3f} s")
    print(
        f"  release, seeded PCG64:  {t_seeded:.3f} s   rate ratio {out['rate_ratio_seeded']:.2f}"
        "  (goal >= 0.5)"
    )
    print(
        f"  release, secure AES:    {t_secure:.3f} s   rate ratio {out['rate_ratio_secure']:.2f}"
        "  (goal >= 0.3)"
    )
    print(
        f"  peak memory {peak / 2**20:.0f} MiB = {out['peak_memory_ratio']:.2f} x released arrays"
        f" ({released / 2**20:.0f} MiB; goal <= 3)"
    )
    return out


if __name__ == "__main__":
    main()
