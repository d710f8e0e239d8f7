"""``privest stat`` without pandas (issue 31, "every privest stat call: <= 1 s of imports").

Two measurements, each in fresh processes:

* start-up: a successful ``privest stat data.csv --column x --stat S`` (1000 rows; mean,
  count, median; a plain file and one with quoted fields), CPU user+sys and wall seconds
  of the whole call and whether pandas was imported, for this tree and for a baseline
  tree (``--baseline SRC``, e.g. the code of the branch before), interleaved,
  ``--rounds`` rounds, medians;
* the read of one column of an n-row, 3-column CSV file (``--sizes``): the plain reader
  (privest.commands._column) against ``pandas.read_csv`` (and privest's ``read_csv``, the
  one the command used before), wall and CPU seconds of the read alone and the process's
  peak RSS (imports included).

``python benchmarks/bench_cli_column.py --baseline /path/to/old/src --rounds 5 --sizes 1e6``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SRC = str(Path(__file__).resolve().parents[1] / "src")

_CLI = """
import sys, time, resource, contextlib, io, json
t = time.perf_counter()
from privest.cli import main
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    status = main(["stat", PATH, "--column", "x", "--epsilon", "1", "--seed", "1", *ARGS])
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "status": status,
      "modules": len(sys.modules), "pandas": "pandas" in sys.modules}))
"""

_READ = """
import sys, time, resource, json
READER
t, c = time.perf_counter(), time.process_time()
x = read()
wall, cpu = time.perf_counter() - t, time.process_time() - c
assert len(x) == N
print(json.dumps({"wall": wall, "cpu": cpu,
      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

READERS = {
    "plain reader": "from privest.commands._column import read_plain_column\n"
    "read = lambda: read_plain_column(PATH, ',', 'x')",
    "pandas.read_csv": "import pandas as pd\nread = lambda: pd.read_csv(PATH)['x'].to_numpy()",
    "privest read_csv (before)": "from privest.commands._common import read_csv\n"
    "read = lambda: read_csv(PATH, ',')['x'].to_numpy()",
}

STATS = {
    "mean": ["--stat", "mean", "--bounds", "0:100"],
    "count": ["--stat", "count", "--where", "0:50"],
    "median": ["--stat", "median", "--bounds", "0:100"],
}


def _run(code: str, src: str) -> dict:
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.splitlines()[-1])


def _write(path: Path, n: int, seed: int = 0, quoted: bool = False) -> None:
    """An n-row file: id, x (2 decimals in [0, 100)), y (4 decimals); ``quoted``: x in
    quotes and y a quoted text with a comma and a quote (``"y, ""k"" 0.1234"``)."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 100, n), rng.uniform(-1, 1, n)
    row = '{i},"{a:.2f}","y, ""k"" {b:.4f}"' if quoted else "{i},{a:.2f},{b:.4f}"
    lines = "\n".join(row.format(i=i, a=a, b=b) for i, a, b in zip(range(n), x, y, strict=True))
    path.write_text("id,x,y\n" + lines + "\n")


def startup(trees: dict[str, str], rounds: int, folder: Path) -> None:
    files = {"plain": folder / "d1000.csv", "quoted": folder / "q1000.csv"}
    for kind, path in files.items():
        _write(path, 1000, quoted=kind == "quoted")
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for _ in range(rounds):  # interleaved: every tree, file and statistic in every round
        for stat, args in STATS.items():
            for kind, path in files.items():
                for tree, src in trees.items():
                    code = _CLI.replace("PATH", repr(str(path))).replace("ARGS", repr(args))
                    runs.setdefault((stat, kind, tree), []).append(_run(code, src))
    for (stat, kind, tree), rs in runs.items():
        assert all(r["status"] == 0 for r in rs)
        print(
            f"stat {stat:6s} {kind:6s} {tree:8s}: "
            f"CPU-s {statistics.median(r['cpu'] for r in rs):.2f}, "
            f"wall {statistics.median(r['wall'] for r in rs):.2f} s, "
            f"{rs[0]['modules']} modules, pandas imported: {rs[0]['pandas']}"
        )


def reads(sizes: list[int], rounds: int, folder: Path) -> None:
    for n in sizes:
        path = folder / f"d{n}.csv"
        _write(path, n)
        mb = path.stat().st_size / 2**20
        runs: dict[str, list[dict]] = {}
        for _ in range(rounds):
            for what, reader in READERS.items():
                code = _READ.replace("READER", reader).replace("PATH", repr(str(path)))
                runs.setdefault(what, []).append(_run(code.replace("N", str(n)), SRC))
        for what, rs in runs.items():
            wall = statistics.median(r["wall"] for r in rs)
            print(
                f"n={n:.0e} ({mb:.0f} MB) {what:26s}: wall {wall:.3f} s, "
                f"CPU {statistics.median(r['cpu'] for r in rs):.3f} s, "
                f"peak RSS {statistics.median(r['rss_mb'] for r in rs):.0f} MB"
            )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", help="the src folder of the code to compare with")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--sizes", type=float, nargs="*", default=[1e5, 1e6])
    args = p.parse_args(argv)
    trees = {"this": SRC, **({"baseline": args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as tmp:
        startup(trees, args.rounds, Path(tmp))
        reads([int(n) for n in args.sizes], args.rounds, Path(tmp))


if __name__ == "__main__":
    main(sys.argv[1:])
