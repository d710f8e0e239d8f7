"""Dask cases of the hostile corpus: ``--engine dask`` on bad Parquet, and Dask arrays and
Series with NaN, complex, object and text values (the extra ``privest[dask]``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from corpus.harness import SENTINEL, SENTINEL_TEXT, Case

N = 400


_PARQUET = ("good", "nan", "sentinel", "inf", "text_age", "empty_rows", "ids_dup")
_OTHER = {
    "empty_dir": "empty_dir",
    "csv": "data.csv",
    "garbage": "garbage.parquet",
    "missing": "nope.parquet",
    "out": "out",
}


def parquet_paths(d: Path) -> dict[str, Path]:
    """Where :func:`write_parquet` puts each input (nothing is written)."""
    return {**{k: d / f"{k}.parquet" for k in _PARQUET}, **{k: d / v for k, v in _OTHER.items()}}


def write_parquet(d: Path) -> dict[str, Path]:
    """Write the inputs into ``d``; returns them by name (:func:`parquet_paths`)."""
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "id": np.arange(N),
            "age": rng.integers(18, 90, N).astype(float),
            "income": rng.uniform(0, 200, N),
            "city": [f"{SENTINEL_TEXT}-{i}" for i in range(N)],
        }
    )
    f: dict[str, Path] = {}

    def pq(name: str, frame: pd.DataFrame) -> None:
        f[name] = d / f"{name}.parquet"
        frame.to_parquet(f[name], index=False)

    pq("good", df)
    pq("nan", df.assign(age=np.where(np.arange(N) == 5, np.nan, df["age"])))
    pq("sentinel", df.assign(age=np.where(np.arange(N) == 5, SENTINEL, df["age"])))
    pq("inf", df.assign(age=np.where(np.arange(N) == 5, np.inf, df["age"])))
    pq("text_age", df.assign(age=df["age"].astype(str)))
    pq("empty_rows", df.iloc[:0])
    pq("ids_dup", df.assign(id=df["id"] % 10))
    f["empty_dir"] = d / "empty_dir"
    f["empty_dir"].mkdir(exist_ok=True)
    f["csv"] = d / "data.csv"
    df.to_csv(f["csv"], index=False)
    f["garbage"] = d / "garbage.parquet"
    f["garbage"].write_bytes(b"PAR1" + bytes(range(256)) * 8)
    f["missing"] = d / "nope.parquet"
    f["out"] = d / "out"
    f["out"].mkdir(exist_ok=True)
    return f


def dask_cli_cases(f: dict[str, Path]) -> list[Case]:
    c: list[Case] = []
    add = lambda name, expect, argv, **kw: c.append(  # noqa: E731
        Case(f"dask-cli/{name}", expect, argv=argv, **kw)
    )
    for stat, extra in (
        ("median", ["--bounds", "0:120"]),
        ("mean", ["--bounds", "0:120"]),
        ("count", ["--where", "18:65"]),
    ):
        base = ["stat", "--engine", "dask", "--stat", stat, "--epsilon", "1", *extra]
        for data in (
            "missing",
            "empty_dir",
            "csv",
            "garbage",
            "nan",
            "sentinel",
            "inf",
            "text_age",
            "empty_rows",
        ):
            expect = "refuse"
            if stat == "count" and data == "sentinel":
                expect = "answer"  # a count of the records in [18, 65]
            add(f"stat-{stat}/{data}", expect, [*base, str(f[data]), "--column", "age"])
        add(f"stat-{stat}/column_missing", "refuse", [*base, str(f["good"]), "--column", "agee"])
        add(f"stat-{stat}/column_text", "refuse", [*base, str(f["good"]), "--column", "city"])
        add(f"stat-{stat}/ok", "answer", [*base, str(f["good"]), "--column", "age"])
    add(
        "stat/diagnostics",
        "refuse",
        [
            "stat",
            "--engine",
            "dask",
            str(f["good"]),
            "--column",
            "age",
            "--stat",
            "median",
            "--epsilon",
            "1",
            "--bounds",
            "0:120",
            "--diagnostics",
        ],
    )
    add(
        "stat/workers=0",
        "refuse",
        [
            "stat",
            "--engine",
            "dask",
            "--workers",
            "0",
            str(f["good"]),
            "--column",
            "age",
            "--stat",
            "mean",
            "--epsilon",
            "1",
            "--bounds",
            "0:120",
        ],
    )
    rel = [
        "release",
        "--engine",
        "dask",
        "--columns",
        "age",
        "--bounds",
        "age=18:90",
        "--lam",
        "0.5",
        "--zero-prob",
        "0.1",
        "--id-column",
        "id",
    ]
    for i, data in enumerate(
        ("missing", "empty_dir", "csv", "garbage", "nan", "sentinel", "text_age", "ids_dup")
    ):
        add(
            f"release/{data}",
            "refuse",
            [rel[0], str(f[data]), *rel[1:], "-o", str(f["out"] / f"s{i}")],
        )
    add(
        "release/id_missing",
        "refuse",
        [
            "release",
            "--engine",
            "dask",
            str(f["good"]),
            "--columns",
            "age",
            "--bounds",
            "age=18:90",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "--id-column",
            "nope",
            "-o",
            str(f["out"] / "sx"),
        ],
    )
    add(
        "fit/on_parquet",
        "refuse",
        ["fit", "--engine", "dask", str(f["good"]), "--model", "linear", "--target", "income"],
    )
    add(
        "fit/missing",
        "refuse",
        ["fit", "--engine", "dask", str(f["missing"]), "--model", "linear", "--target", "income"],
    )
    return c


def dask_api_cases() -> list[Case]:
    import dask.array as da
    import dask.dataframe as dd

    from privest import private_statistic

    x = np.random.default_rng(1).uniform(1, 9, N)

    def stat(data, statistic="mean"):
        return lambda: private_statistic(data(), statistic, epsilon=1, bounds=(0, 10), rng=0)

    arrays = {
        "nan": lambda: da.from_array(np.r_[x[:-1], np.nan], chunks=100),
        "inf": lambda: da.from_array(np.r_[x[:-1], np.inf], chunks=100),
        "complex": lambda: da.from_array(x + 1j, chunks=100),
        "object_text": lambda: da.from_array(np.array([*x[:-1], "2"], dtype=object), chunks=100),
        "text": lambda: da.from_array(x.astype(str), chunks=100),
        "sentinel": lambda: da.from_array(np.r_[x[:-1], SENTINEL], chunks=100),
        "two_d": lambda: da.from_array(np.c_[x, x], chunks=100),
        "empty": lambda: da.from_array(np.array([]), chunks=100),
        "series_text": lambda: dd.from_pandas(pd.Series([SENTINEL_TEXT] * N), npartitions=4),
        "series_nan": lambda: dd.from_pandas(pd.Series(np.r_[x[:-1], np.nan]), npartitions=4),
        "frame_two_columns": lambda: dd.from_pandas(pd.DataFrame({"a": x, "b": x}), npartitions=4),
    }
    c = []
    for name, make in arrays.items():
        for statistic in ("mean", "median", "variance"):
            c.append(Case(f"dask-api/{statistic}/{name}", "refuse", call=stat(make, statistic)))
    ok = lambda: da.from_array(x, chunks=100)  # noqa: E731
    for statistic in ("mean", "median", "variance"):
        c.append(Case(f"dask-api/{statistic}/ok", "answer", call=stat(ok, statistic)))
    c.append(
        Case(
            "dask-api/mean/epsilon_1e308",
            "refuse",
            call=lambda: private_statistic(ok(), "mean", epsilon=1e308, bounds=(0, 10)),
        )
    )
    c.append(
        Case(
            "dask-api/median/epsilon_1e-300",
            "refuse",
            call=lambda: private_statistic(ok(), "median", epsilon=1e-300, bounds=(0, 10)),
        )
    )
    return c


def warm_up_dask(f: dict[str, Path]) -> None:
    """One good call of each path: Dask's first use (imports, threads) is not counted."""
    import dask.array as da

    from corpus.harness import run_cli
    from privest import private_statistic

    ok = ["stat", "--engine", "dask", str(f["good"]), "--column", "age", "--epsilon", "1"]
    for extra in (
        ["--stat", "median", "--bounds", "0:120"],
        ["--stat", "mean", "--bounds", "0:120"],
    ):
        run_cli(ok + extra)
    x = da.from_array(np.linspace(1, 9, N), chunks=100)
    for statistic in ("mean", "median"):
        private_statistic(x, statistic, epsilon=1, bounds=(0, 10), rng=0)


def dask_cases(folder: Path, write: bool = True) -> list[Case]:
    """The Dask cases on inputs in ``folder`` (written first, and Dask warmed up, when
    ``write``)."""
    f = write_parquet(folder) if write else parquet_paths(folder)
    assert f == parquet_paths(folder)
    if write:
        warm_up_dask(f)
    # not here: --scheduler naming a scheduler that does not answer waits distributed's
    # connect timeout (30 s, commands/_engine.py), and stopping it leaves Dask unusable
    return [*dask_cli_cases(f), *dask_api_cases()]
