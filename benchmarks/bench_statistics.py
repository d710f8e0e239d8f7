"""Speed of the one-call statistics against their baselines, each timed in the same run.

Rows (issue 31, "Speed"), at n = 10^4, 10^5, 10^6, 10^7 (best of ``--repeat``):

* ``private_mean`` and ``private_sum`` against ``numpy.mean`` (goal <= 2x);
* ``private_variance`` against diffprivlib's ``tools.var`` (goal <= 1x; ``numpy.var`` where
  diffprivlib does not import);
* each of the three with the population interval (the default) and without
  (``inference="none"``), after an untimed warm-up that loads the compiled exact-sum pass
  (as a long-running process does; a one-off release uses the numpy pass,
  docs/central-inference.md, "Speed");
* the two-stage median (``mechanism="two_stage"``) against ``numpy.sort`` (goal <= 2x);
* start-up, in fresh processes: the first ``private_median`` (does it import scikit-learn
  or scipy.signal? goal: neither), ``privest stat`` on a missing file and with a column
  the file does not have (goal <= 0.5 s to the error) and a successful ``privest stat``
  mean (goal <= 1 s of imports), wall and CPU seconds and the number of modules loaded.

Run it against another checkout with ``PYTHONPATH=that/src`` for a before/after in one
session.

    python benchmarks/bench_statistics.py [--sizes 1e4,1e5,1e6,1e7] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _variance_anchor() -> tuple[str, Callable]:
    try:
        from diffprivlib.tools import var
    except Exception:  # noqa: BLE001 - any import failure falls back to numpy
        return "numpy.var", lambda x: np.var(x)
    return "diffprivlib var", lambda x: var(x, epsilon=1.0, bounds=(-1.0, 1.0))


def throughput(sizes: list[int], repeat: int, two_stage_max: int) -> list[tuple]:
    from privest.mechanisms.profiles import exact
    from privest.models.statistics import (
        private_mean,
        private_median,
        private_sum,
        private_variance,
    )

    exact.KERNEL_AFTER = 0  # warm: the process loads the compiled pass at once
    name, anchor = _variance_anchor()
    rows = []
    kw = dict(epsilon=1.0, bounds=(-1.0, 1.0), rng=0)
    funcs = (("mean", private_mean), ("sum", private_sum), ("variance", private_variance))
    for n in sizes:
        x = np.random.default_rng(n).uniform(-1, 1, n)
        for _, f in funcs:  # untimed warm-up
            f(x, **kw)
        mean = best(partial(np.mean, x), repeat)
        t_anchor = best(partial(anchor, x), repeat)
        for what, f in funcs:
            base = (name, t_anchor) if what == "variance" else ("numpy.mean", mean)
            for inference, tag in (("population", ""), ("none", ", none")):
                t = best(partial(f, x, inference=inference, **kw), repeat)
                rows.append((f"private_{what}{tag}", n, t, *base))
        if n <= two_stage_max:
            release = partial(private_median, x, mechanism="two_stage", **kw)
            t_sort = best(partial(np.sort, x), repeat)
            rows.append(("two_stage median", n, best(release, repeat), "numpy.sort", t_sort))
    return rows


_FIRST = """
import sys, time, resource, numpy as np
t = time.perf_counter()
import privest as pv
pv.private_median(np.arange(100.0), epsilon=1.0, bounds=(0, 100), rng=0)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "modules": len(sys.modules),
      "sklearn": "sklearn" in sys.modules, "scipy.signal": "scipy.signal" in sys.modules}))
"""

_CLI = """
import sys, time, resource, contextlib, io
t = time.perf_counter()
from privest.cli import main
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    status = main(["stat", PATH, "--column", COLUMN, "--stat", "mean", "--epsilon", "1",
                   "--bounds", "0:1", "--seed", "1"])
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "modules": len(sys.modules),
      "status": status, "pandas": "pandas" in sys.modules}))
"""


def _cli(path: str, column: str) -> str:
    return _CLI.replace("PATH", repr(path)).replace("COLUMN", repr(column))


def startup(repeat: int) -> dict:
    """Best-of-``repeat`` fresh processes for each start-up row (module docstring)."""
    out = {}
    tmp = tempfile.TemporaryDirectory()
    csv = Path(tmp.name) / "d.csv"
    csv.write_text("a,b\n0.5,0.25\n0.75,0.5\n")
    rows = (
        ("first private_median", _FIRST),
        ("privest stat, missing file", _cli("/nonexistent/missing.csv", "a")),
        ("privest stat, missing column", _cli(str(csv), "zz")),
        ("privest stat, a mean", _cli(str(csv), "a")),
    )
    for what, code in rows:
        runs = []
        for _ in range(repeat):
            res = subprocess.run(
                [sys.executable, "-c", "import json\n" + code],
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
        out[what] = min(runs, key=lambda r: r["wall"])
    tmp.cleanup()
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e4,1e5,1e6,1e7")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--two-stage-max", type=float, default=1e7, help="largest n of that row")
    ap.add_argument("--no-startup", action="store_true", help="skip the start-up rows")
    args = ap.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    rows = throughput(sizes, args.repeat, int(args.two_stage_max))
    print(f"{'what':<24}{'n':>10}{'privest (ms)':>14}  {'baseline':<16}{'(ms)':>10}{'ratio':>8}")
    for what, n, t, base, tb in rows:
        print(f"{what:<24}{n:>10,}{1e3 * t:>14.3f}  {base:<16}{1e3 * tb:>10.3f}{t / tb:>8.2f}")
    starts = {} if args.no_startup else startup(max(1, args.repeat // 2))
    for what, r in starts.items():
        extra = {k: v for k, v in r.items() if k not in ("wall", "cpu", "modules")}
        print(
            f"{what}: {r['wall']:.2f} s wall, {r['cpu']:.2f} CPU-s, {r['modules']} modules {extra}"
        )
    return {"rows": rows, "startup": starts}


if __name__ == "__main__":
    main()
