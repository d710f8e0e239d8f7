"""Private tables (``pv.tabulate``) against PipelineDP and OpenDP's Polars API (issue 28).

Each library releases the count, sum and mean of one column per cell at the SAME
guarantee (epsilon, delta), the SAME contribution bounds (a person: at most ``max_groups``
cells, at most ``max_rows`` rows in each) and keys that are NOT public (each library's
own partition selection, paid from the same delta). Data sets:

* ``fair`` (statsmodels, 6,366 women, 1974): ``yrs_married`` in (0, 25) by occupation x
  marriage rating (29 cells of 1 to 1,093 rows); no person id, so each row is a person;
* ``persons`` (generated): n rows of n/4 people whose numbers of rows are heavy-tailed
  (Pareto weights, a few people with thousands of rows), 200 cells of Zipf popularity,
  each person mostly in a home cell; ``x`` lognormal clipped to (0, 100).

Per aggregate and library: the median and 90th percentile of the per-cell relative error
``|release - truth| / truth`` (truth: the raw data's, before bounding, so the bias of the
bounding counts) over the cells that every library released in every release (no selection
bias, the same cells for all), pooled over releases; the share of the true cells kept
(mean over releases) and the number of released keys absent from the data (must be 0);
the wall time of one release (median) over pandas ``groupby(...).agg(count, sum, mean)`` on
the same data, same run.

How each library is called (their own documented APIs, their defaults where they have
them): privest ``tabulate(..., inference="none")`` (estimates only, like the anchors; noise
"auto"); PipelineDP ``DPEngine.aggregate`` with ``LocalBackend``, COUNT, SUM and MEAN
(Laplace, its default truncated-geometric selection) on the rows as Python tuples (made
once, not timed); OpenDP ``Context.compositor`` on a Polars LazyFrame (made once, not
timed), identifier ``unit_of(contributions=1, identifier=...)`` then
``truncate_per_group(m)`` (random rows) and ``truncate_num_groups(k, keep="first")`` on
rows in random order (``keep="sample"`` fails in OpenDP 0.16.0 with Polars 1.36.1:
"multiple fields with name ..."), ``dp.len()`` and ``dp.sum`` (Laplace) of the values on
the grid 2^-10 as integers (its float sum's noise grows with n), and the mean as
sum / len (post-processing: better than ``.dp.mean``, which would release both again).
OpenDP's margin needs public ``max_length`` and ``max_groups``: n (the number of rows).

    python benchmarks/bench_tables.py [--sizes 1e5,1e6] [--reps 50] [--big-reps 20] [--quick]

``--speed`` times privest alone against pandas (no anchors) on the generated data at
``--sizes`` (e.g. 1e5,1e6,1e7), the runs of each size interleaved (pandas, privest, and with
``--baseline SRC`` the privest of another source tree in a worker process, e.g. the main
branch's, for a before/after in the same run), medians of ``--reps`` of the wall and the CPU
time (``time.process_time``, which other jobs' load does not inflate); and the peak memory
each allocates for one release beyond the data (tracemalloc, which numpy reports to).

``--dask`` releases the same table from a Dask frame generated lazily by partitions of
``--part-rows`` rows (``dd.from_map``; no file, so 10^8 rows need not fit on disk or in
memory at once) at ``--sizes``: the wall time and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

AGGS = ("count", "sum", "mean")
LIBRARIES = ("privest", "PipelineDP", "OpenDP")
#: OpenDP sums the values on this public grid, as integers (its float sums: see opendp_runner)
GRID = 1024


@dataclass
class Case:
    """One data set and its public parameters."""

    name: str
    df: pd.DataFrame
    by: list[str]
    unit: str | None
    column: str
    bounds: tuple[float, float]
    max_groups: int
    max_rows: int
    epsilon: float = 1.0
    delta: float = 1e-6


def fair_case() -> Case:
    import statsmodels.api as sm

    d = sm.datasets.fair.load_pandas().data
    df = d[["occupation", "rate_marriage", "yrs_married"]].astype(
        {"occupation": int, "rate_marriage": int}
    )
    return Case(
        "fair (statsmodels)",
        df,
        ["occupation", "rate_marriage"],
        None,
        "yrs_married",
        (0.0, 25.0),
        1,
        1,
    )


def persons_case(n: int, seed: int = 0, cells: int = 200) -> Case:
    """Heavy-tailed rows per person (module docstring), rows in random order."""
    rng = np.random.default_rng(seed)
    people = n // 4
    w = rng.pareto(1.2, people) + 1.0
    person = rng.choice(people, n, p=w / w.sum())
    pop = 1.0 / np.arange(1, cells + 1) ** 1.3
    pop /= pop.sum()
    home = rng.choice(cells, people, p=pop)
    cell = np.where(rng.random(n) < 0.6, home[person], rng.choice(cells, n, p=pop))
    x = np.clip(rng.lognormal(3.0, 1.0, n), 0.0, 100.0)
    df = pd.DataFrame({"pid": person, "cell": cell, "x": x})
    return Case(f"persons n={n:.0e}", df, ["cell"], "pid", "x", (0.0, 100.0), 4, 3)


# ---- the three libraries: each returns a DataFrame of the keys, count, sum, mean --------


def privest_table(case: Case, seed: int) -> pd.DataFrame:
    """The privest release itself (what ``--speed`` times)."""
    import privest as pv

    unit = {"unit": case.unit, "max_groups": case.max_groups, "max_rows": case.max_rows}
    return pv.tabulate(
        case.df,
        by=case.by,
        aggregates={case.column: list(AGGS)},
        bounds={case.column: case.bounds},
        epsilon=case.epsilon,
        delta=case.delta,
        inference="none",
        rng=seed,
        **(unit if case.unit else {}),
    )


def run_privest(case: Case, seed: int) -> pd.DataFrame:
    t = privest_table(case, seed)
    c = case.column
    out = pd.DataFrame(t[case.by])
    for a in AGGS:
        out[a] = np.asarray(t[f"{c}_{a}"], dtype=float)
    return out


def pipelinedp_runner(case: Case) -> Callable[[int], pd.DataFrame]:
    import pipeline_dp

    df = case.df
    keys = list(zip(*(df[b].to_numpy() for b in case.by), strict=True))
    ids = df[case.unit].to_numpy() if case.unit else np.arange(len(df))
    rows = list(zip(ids.tolist(), keys, df[case.column].to_numpy().tolist(), strict=True))
    M = pipeline_dp.Metrics
    extract = pipeline_dp.DataExtractors(
        privacy_id_extractor=lambda r: r[0],
        partition_extractor=lambda r: r[1],
        value_extractor=lambda r: r[2],
    )

    def run(seed: int) -> pd.DataFrame:
        # PipelineDP draws its noise from its own global generators: no seed to pass
        acc = pipeline_dp.NaiveBudgetAccountant(total_epsilon=case.epsilon, total_delta=case.delta)
        engine = pipeline_dp.DPEngine(acc, pipeline_dp.LocalBackend())
        params = pipeline_dp.AggregateParams(
            metrics=[M.COUNT, M.SUM, M.MEAN],
            max_partitions_contributed=case.max_groups,
            max_contributions_per_partition=case.max_rows,
            min_value=case.bounds[0],
            max_value=case.bounds[1],
        )
        result = engine.aggregate(rows, params, extract)
        acc.compute_budgets()
        got = list(result)
        out = pd.DataFrame([k for k, _ in got], columns=case.by)
        for a in AGGS:
            out[a] = [getattr(v, a) for _, v in got]
        return out

    return run


def opendp_runner(case: Case) -> Callable[[int], pd.DataFrame]:
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    n = len(case.df)
    # the value on the public grid 2^-10 as an integer column (made once, not timed): an
    # integer sum's noise does not grow with n, a float sum's does (OpenDP's margin for
    # float rounding grows with max_length: at n = 10^6 its noise scale was 200x that at
    # 10^5 in this benchmark)
    lo, hi = (round(b * GRID) for b in case.bounds)
    frame = pl.from_pandas(case.df).with_columns(
        (pl.col(case.column) * GRID).round().cast(pl.Int64).alias("_grid")
    )
    frame = frame.lazy()
    if case.unit:
        unit = dp.unit_of(contributions=1, identifier=case.unit)
    else:
        unit = dp.unit_of(contributions=1)
    margin = dp.polars.Margin(by=case.by, max_length=n, max_groups=n)
    ctx = dp.Context.compositor(
        data=frame,
        privacy_unit=unit,
        privacy_loss=dp.loss_of(epsilon=case.epsilon, delta=case.delta),
        split_evenly_over=1,
        margins=[margin],
    )
    q = ctx.query()
    if case.unit:
        q = q.truncate_per_group(case.max_rows, by=case.by)
        q = q.truncate_num_groups(case.max_groups, by=case.by, keep="first")
    value = pl.col("_grid").fill_null(0).dp.sum((lo, hi))
    q = q.group_by(case.by).agg(dp.len().alias("count"), value.alias("sum"))
    # the measurement depends on public inputs only: resolved (its noise scales found by
    # OpenDP's binary search) once, timed apart, then invoked once per release
    t = time.perf_counter()
    measurement = q.resolve()
    setup = time.perf_counter() - t
    spent = measurement.map(1)
    if spent[0] > case.epsilon * (1 + 1e-9) or spent[1] > case.delta * (1 + 1e-9):
        raise RuntimeError(f"OpenDP's measurement spends {spent}, above the guarantee")

    def run(seed: int) -> pd.DataFrame:
        # OpenDP samples its noise from the OS's secure generator: no seed to pass
        out = measurement(frame).collect().to_pandas()
        out["count"] = out["count"].astype(float)
        out["sum"] = out["sum"] / GRID
        out["mean"] = out["sum"] / out["count"].clip(lower=1.0)
        return out[[*case.by, *AGGS]]

    run.setup = setup
    return run


# ---- measuring -----------------------------------------------------------------------------


def truth(case: Case) -> pd.DataFrame:
    g = case.df.groupby(case.by)[case.column]
    return pd.DataFrame({"count": g.size().astype(float), "sum": g.sum(), "mean": g.mean()})


def collect(case: Case, run: Callable[[int], pd.DataFrame], reps: int) -> dict:
    """Run ``reps`` releases: the per-release cells (indexed by key) and wall times."""
    releases, times = [], []
    for r in range(reps):
        t = time.perf_counter()
        out = run(1000 + r)
        times.append(time.perf_counter() - t)
        releases.append(out.set_index(case.by)[list(AGGS)])
    return {"releases": releases, "seconds": float(np.median(times))}


def summarise(results: dict[str, dict], true: pd.DataFrame) -> dict[str, dict]:
    """Errors over the cells every library released in every release (module docstring)."""
    common = true.index
    for res in results.values():
        for rel in res["releases"]:
            common = common.intersection(rel.index)
    out = {}
    for name, res in results.items():
        errs = {a: [] for a in AGGS}
        kept, spurious = [], 0
        for rel in res["releases"]:
            inside = rel.index.isin(true.index)
            spurious += int((~inside).sum())
            kept.append(inside.sum() / len(true))
            est, tr = rel.loc[common], true.loc[common]
            for a in AGGS:
                errs[a].append(np.abs(est[a].to_numpy() - tr[a].to_numpy()) / tr[a].to_numpy())
        row = {"kept": float(np.mean(kept)), "spurious": spurious, "seconds": res["seconds"]}
        for a in AGGS:
            e = np.concatenate(errs[a])
            row[a] = (float(np.median(e)), float(np.quantile(e, 0.9)))
        out[name] = row
    out["_cells"] = {"common": len(common), "true": len(true)}
    return out


def pandas_floor(case: Case, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        case.df.groupby(case.by)[case.column].agg(["count", "sum", "mean"])
        times.append(time.perf_counter() - t)
    return float(np.median(times))


#: rows from which an anchor's first release is timed as is (a warm-up costs a release)
NO_WARMUP = 5_000_000


def bench_case(
    case: Case, reps: int, pipeline_reps: int, libraries: tuple[str, ...] = LIBRARIES
) -> dict:
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the anchors' FutureWarnings
        runners = {
            "privest": lambda: (lambda seed: run_privest(case, seed), reps),
            "PipelineDP": lambda: (pipelinedp_runner(case), pipeline_reps),
            "OpenDP": lambda: (opendp_runner(case), reps),
        }
        libs = {name: runners[name]() for name in libraries}
        for name, (run, n_reps) in libs.items():
            if name == "privest" or len(case.df) < NO_WARMUP:
                run(0)  # warm-up: imports and first-call set-up are not a release's cost
            results[name] = collect(case, run, n_reps)
            results[name]["reps"] = n_reps
            results[name]["setup"] = getattr(run, "setup", 0.0)
    summary = summarise(results, truth(case))
    summary["_floor"] = pandas_floor(case)
    for name in libs:
        summary[name]["reps"] = results[name]["reps"]
        summary[name]["setup"] = results[name]["setup"]
    return summary


def print_case(case: Case, s: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    cells, floor = s["_cells"], s["_floor"]
    table = Table(
        title=f"{case.name}: {len(case.df):,} rows, eps {case.epsilon:g}, delta "
        f"{case.delta:g}, max_groups {case.max_groups}, max_rows {case.max_rows}; errors "
        f"over {cells['common']} of {cells['true']} cells; pandas groupby {floor * 1e3:.1f} ms"
    )
    for col in ("library", "reps", *(f"{a} rel. err. med / p90" for a in AGGS)):
        table.add_column(col)
    for col in ("cells kept", "spurious", "time (s)", "x pandas", "set-up (s)"):
        table.add_column(col, justify="right")
    for name in (n for n in LIBRARIES if n in s):
        r = s[name]
        errs = [f"{r[a][0]:.3g} / {r[a][1]:.3g}" for a in AGGS]
        table.add_row(
            name,
            str(r["reps"]),
            *errs,
            f"{r['kept']:.3f}",
            str(r["spurious"]),
            f"{r['seconds']:.3f}",
            f"{r['seconds'] / floor:.1f}",
            f"{r['setup']:.1f}" if r["setup"] else "-",
        )
    Console(width=160).print(table)


def markdown(case: Case, s: dict) -> str:
    """The case's table in Markdown (for docs/tables.md)."""
    head = "| library | releases | " + " | ".join(f"{a}: median / p90" for a in AGGS)
    lines = [head + " | cells kept | time (s) | x pandas |", "|---" * (len(AGGS) + 5) + "|"]
    for name in (n for n in LIBRARIES if n in s):
        r = s[name]
        errs = " | ".join(f"{r[a][0]:.3g} / {r[a][1]:.3g}" for a in AGGS)
        ratio = r["seconds"] / s["_floor"]
        lines.append(
            f"| {name} | {r['reps']} | {errs} | {r['kept']:.3f} | "
            f"{r['seconds']:.3f} | {ratio:.1f} |"
        )
    return "\n".join(lines)


# ---- speed against pandas alone, with an optional baseline source tree --------------------


def _worker() -> None:
    """Read ``n seed`` lines; time one privest release on ``persons_case(n)``; print it."""
    cases: dict[int, Case] = {}
    for line in sys.stdin:
        n, seed = (int(v) for v in line.split())
        if n not in cases:  # made once per size (setdefault would remake it every time)
            cases[n] = persons_case(n)
        case = cases[n]
        if seed < 0:  # warm-up
            privest_table(case, 0)
            print(0.0, 0.0, flush=True)
            continue
        t, c = time.perf_counter(), time.process_time()
        privest_table(case, seed)
        print(time.perf_counter() - t, time.process_time() - c, flush=True)


def _peak(fn: Callable[[], object]) -> float:
    """The peak of the memory allocated while ``fn`` runs (bytes, tracemalloc)."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return float(peak)


def speed(sizes: list[int], reps: int, baseline: str | None) -> list[dict]:
    """Interleaved timings (module docstring) and one memory peak each, per size."""
    worker = None
    if baseline:
        env = {**os.environ, "PYTHONPATH": baseline}
        worker = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def base(n: int, seed: int) -> tuple[float, float]:
        worker.stdin.write(f"{n} {seed}\n")
        worker.stdin.flush()
        wall, cpu = worker.stdout.readline().split()
        return float(wall), float(cpu)

    def timed(fn: Callable[[], object]) -> tuple[float, float]:
        t, c = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - t, time.process_time() - c

    rows = []
    for n in sizes:
        case = persons_case(n)
        privest_table(case, 0)
        if worker:
            base(n, -1)
        times: dict[str, list[tuple[float, float]]] = {"pandas": [], "privest": [], "baseline": []}
        for r in range(reps):
            times["pandas"].append(timed(lambda c=case: pandas_floor(c, repeat=1)))
            times["privest"].append(timed(lambda c=case, s=1000 + r: privest_table(c, s)))
            if worker:
                times["baseline"].append(base(n, 1000 + r))
        row: dict = {"n": n}
        for k, v in times.items():
            if v:  # medians of the wall and the CPU time (process_time: not the others' load)
                row[k], row[k + "_cpu"] = (float(x) for x in np.median(np.array(v), axis=0))
        row["pandas_mib"] = _peak(lambda c=case: pandas_floor(c, repeat=1)) / 2**20
        row["privest_mib"] = _peak(lambda c=case: privest_table(c, 1)) / 2**20
        row["data_mib"] = case.df.memory_usage(deep=True).sum() / 2**20
        rows.append(row)
        print_speed(row)
    if worker:
        worker.stdin.close()
        worker.wait()
    return rows


def print_speed(row: dict) -> None:
    p = row["pandas"]
    pc = row["pandas_cpu"]
    line = (
        f"n={row['n']:.0e}: wall / CPU ms: pandas {p * 1e3:.1f} / {pc * 1e3:.1f}, privest "
        f"{row['privest'] * 1e3:.1f} / {row['privest_cpu'] * 1e3:.1f} "
        f"({row['privest'] / p:.2f}x / {row['privest_cpu'] / pc:.2f}x)"
    )
    if "baseline" in row:
        line += (
            f", baseline {row['baseline'] * 1e3:.1f} / {row['baseline_cpu'] * 1e3:.1f} "
            f"({row['baseline'] / p:.2f}x / {row['baseline_cpu'] / pc:.2f}x)"
        )
    line += (
        f"; peak memory beyond the data ({row['data_mib']:.0f} MiB): pandas "
        f"{row['pandas_mib']:.1f} MiB, privest {row['privest_mib']:.1f} MiB"
    )
    print(line, flush=True)


# ---- Dask on data generated lazily (no file: 10^8 rows do not fit as one) ------------------


def _persons_part(i: int, rows: int, people: int, cells: int, seed: int) -> pd.DataFrame:
    """Partition ``i`` of the lazily generated persons data: heavy-tailed persons (person
    ``floor(people U^4)``: person 0 holds about ``people^-1/4`` of the rows), each with a
    home cell fixed by its id (Zipf popularity) for 60% of its rows; ``x`` as in
    :func:`persons_case`. Same seed and ``i``, same rows."""
    rng = np.random.default_rng([seed, i])
    pop = 1.0 / np.arange(1, cells + 1) ** 1.3
    cdf = np.cumsum(pop / pop.sum())
    person = (people * rng.random(rows) ** 4).astype(np.int64)
    home = np.minimum(np.searchsorted(cdf, (person * 0.6180339887498949) % 1.0), cells - 1)
    other = np.minimum(np.searchsorted(cdf, rng.random(rows)), cells - 1)
    cell = np.where(rng.random(rows) < 0.6, home, other)
    x = np.clip(rng.lognormal(3.0, 1.0, rows), 0.0, 100.0)
    return pd.DataFrame({"pid": person, "cell": cell, "x": x})


def dask_speed(sizes: list[int], part_rows: int) -> list[dict]:
    """One ``pv.tabulate`` of a Dask frame generated lazily by partitions (``dd.from_map``),
    per size: its wall time and the process's peak resident memory so far."""
    import resource

    import dask.dataframe as dd

    import privest as pv

    out = []
    for n in sizes:
        parts = max(1, n // part_rows)
        ddf = dd.from_map(
            _persons_part,
            range(parts),
            rows=n // parts,
            people=n // 4,
            cells=200,
            seed=0,
            meta=_persons_part(0, 0, 1, 200, 0),
        )
        t = time.perf_counter()
        table = pv.tabulate(
            ddf,
            by="cell",
            unit="pid",
            max_groups=4,
            max_rows=3,
            aggregates={"x": list(AGGS)},
            bounds={"x": (0.0, 100.0)},
            epsilon=1.0,
            delta=1e-6,
            inference="none",
            rng=1,
        )
        row = {"n": n, "partitions": parts, "seconds": time.perf_counter() - t}
        row["cells"] = len(table)
        row["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(row, flush=True)
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,1e6", help="n of the generated data sets")
    ap.add_argument("--reps", type=int, default=50, help="releases per library and case")
    ap.add_argument("--big-reps", type=int, default=20, help="releases at n >= 10^6")
    ap.add_argument(
        "--pipeline-big",
        type=int,
        default=5,
        help="PipelineDP's releases above --pipeline-cap rows (pure Python)",
    )
    ap.add_argument("--pipeline-cap", type=float, default=2e5)
    ap.add_argument(
        "--libraries", default=",".join(LIBRARIES), help="a subset of " + ",".join(LIBRARIES)
    )
    ap.add_argument("--skip-real", action="store_true", help="only the generated data sets")
    ap.add_argument("--markdown", action="store_true", help="also print Markdown tables")
    ap.add_argument("--quick", action="store_true", help="n = 10^4 and 5 releases")
    ap.add_argument("--speed", action="store_true", help="privest against pandas only")
    ap.add_argument("--baseline", help="with --speed: a source tree to time as well")
    ap.add_argument("--dask", action="store_true", help="Dask on lazily generated data")
    ap.add_argument("--part-rows", type=float, default=2e6, help="with --dask: rows each")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker()
        return {}
    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    if args.quick:
        sizes, args.reps, args.big_reps = [10_000], 5, 5
    if args.speed:
        return {"speed": speed(sizes, args.reps, args.baseline)}
    if args.dask:
        return {"dask": dask_speed(sizes, int(args.part_rows))}
    libraries = tuple(v for v in args.libraries.split(",") if v)
    unknown = set(libraries) - set(LIBRARIES)
    if unknown or "privest" not in libraries:
        ap.error(f"--libraries: privest and some of {', '.join(LIBRARIES)}, not {args.libraries}")
    cases = ([] if args.skip_real else [fair_case()]) + [persons_case(n) for n in sizes]
    out = {}
    for case in cases:
        n = len(case.df)
        reps = args.reps if n < 1_000_000 else args.big_reps
        pipe = reps if n <= args.pipeline_cap else min(reps, args.pipeline_big)
        out[case.name] = s = bench_case(case, reps, pipe, libraries)
        print_case(case, s)
        if args.markdown:
            print(markdown(case, s), flush=True)
    return out


if __name__ == "__main__":
    main()
