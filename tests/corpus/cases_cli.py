"""Command-line cases of the hostile corpus: every subcommand, bad files and bad options.

:func:`cli_cases` writes its input files into a folder first (CSV files with a text column
whose cells carry :data:`~corpus.harness.SENTINEL_TEXT`, a duplicate header, an empty file,
a binary file, ids above 2^63, a store and a ledger)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from corpus.harness import SENTINEL, SENTINEL_TEXT, Case, run_cli

N = 200


def _frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    return pd.DataFrame(
        {
            "id": np.arange(1, n + 1),
            "age": rng.integers(18, 90, n),
            "income": rng.uniform(0, 200, n).round(2),
            "x1": x1.round(4),
            "x2": x2.round(4),
            "y": (0.5 * x1 - 0.3 * x2 + rng.normal(0, 0.2, n)).clip(-2, 2).round(4),
            "label": (x1 + rng.normal(0, 0.5, n) > 0).astype(int),
            "city": [f"{SENTINEL_TEXT}-{i}" for i in range(n)],
        }
    )


NAMES = (
    "good",
    "plain",
    "more",
    "again",
    "sentinel",
    "nan",
    "dup",
    "empty",
    "header",
    "binary",
    "quote",
    "ids_big",
    "ids_dup",
    "ids_text",
    "ids_missing",
    "textnum",
    "huge",
    "inf",
    "semi",
    "dir",
    "missing",
    "wide",
    "store",
    "ledger",
    "corrupt_ledger",
    "out",
)
_FILES = {
    "dir": "folder.csv",
    "missing": "nope.csv",
    "store": "store",
    "ledger": "ledger.json",
    "corrupt_ledger": "corrupt.json",
    "out": "out",
}


def input_paths(d: Path) -> dict[str, Path]:
    """Where :func:`write_inputs` puts each input (nothing is written)."""
    return {name: d / _FILES.get(name, f"{name}.csv") for name in NAMES}


def write_inputs(d: Path) -> dict[str, Path]:
    """Write the input files into ``d``; returns them by name (:func:`input_paths`)."""
    d.mkdir(parents=True, exist_ok=True)
    df = _frame()
    f: dict[str, Path] = {}

    def csv(name: str, frame: pd.DataFrame) -> Path:
        f[name] = d / f"{name}.csv"
        frame.to_csv(f[name], index=False)
        return f[name]

    csv("good", df)
    plain = lambda seed: _frame(seed=seed).drop(columns="city")  # noqa: E731
    csv("plain", plain(0))
    csv("more", plain(1).assign(id=lambda t: t["id"] + 10_000))
    csv("again", plain(2))  # the same ids as plain
    df = df.drop(columns="city")  # the variants: numeric columns only
    bad = df.astype({"age": float})
    bad.loc[[3, 7], "age"] = SENTINEL
    csv("sentinel", bad)
    nan = df.astype({"age": float})
    nan.loc[5, "age"] = np.nan
    csv("nan", nan)
    f["dup"] = d / "dup.csv"
    f["dup"].write_text(
        "age,age,y\n" + "\n".join(f"{i % 70 + 18},{i % 50},{i % 2}" for i in range(N)) + "\n"
    )
    f["empty"] = d / "empty.csv"
    f["empty"].write_text("")
    f["header"] = d / "header.csv"
    f["header"].write_text("id,age,income,x1,x2,y,label\n")
    f["binary"] = d / "binary.csv"
    f["binary"].write_bytes(bytes(np.random.default_rng(3).integers(0, 256, 4000, dtype=np.uint8)))
    f["quote"] = d / "quote.csv"
    f["quote"].write_text('age,y\n"unterminated,1\n2,3\n')
    big = df.copy().astype({"id": object})
    big.loc[0, "id"] = str(2**64 - 1)
    big.loc[1, "id"] = str(2**63)
    csv("ids_big", big)
    csv("ids_dup", df.assign(id=df["id"] % 50))
    csv("ids_text", df.assign(id=[f"p{SENTINEL_TEXT}{i}" for i in range(N)]))
    csv("ids_missing", df.assign(id=[*range(N - 1), None]))
    csv("textnum", df.assign(age=df["age"].astype(str) + "y"))
    csv("huge", df.assign(income=1e308))
    csv("inf", df.assign(income=np.where(np.arange(N) == 4, np.inf, df["income"])))
    f["semi"] = d / "semi.csv"
    df.to_csv(f["semi"], index=False, sep=";")
    f["dir"] = d / "folder.csv"
    f["dir"].mkdir(exist_ok=True)
    f["missing"] = d / "nope.csv"
    f["wide"] = d / "wide.csv"
    pd.DataFrame(np.random.default_rng(4).uniform(0, 1, (50, 300))).add_prefix("c").to_csv(
        f["wide"], index=False
    )
    # a store and a ledger, made by privest itself
    f["store"] = d / "store"
    status, _, err, exc = run_cli(
        [
            "release",
            str(f["plain"]),
            "--columns",
            "age,income",
            "--bounds",
            "age=18:90,income=0:200",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "--id-column",
            "id",
            "--seed",
            "1",
            "-o",
            str(f["store"]),
        ]
    )
    assert status == 0 and exc is None, err
    f["ledger"] = d / "ledger.json"
    status, _, err, exc = run_cli(["budget", str(f["ledger"]), "--epsilon", "1", "--delta", "1e-6"])
    assert status == 0 and exc is None, err
    f["corrupt_ledger"] = d / "corrupt.json"
    f["corrupt_ledger"].write_text('{"format": "privest-budget-ledger", "epsilon": "x"')
    f["out"] = d / "out"
    f["out"].mkdir(exist_ok=True)
    return f


BAD_EPS = ["0", "-1", "nan", "inf", "1e308", "1e-300", "abc", ""]
#: outside the accepted range [1e-4, 1e3]: refused now, answered before (either is clear)
FAR_EPS = ["1e5", "1e-6", "1e-4", "1e3"]
BAD_BOUNDS = ["10:0", "5:5", "nan:1", "0:inf", "a:b", "0:10:20", "0", "=0:1", "-1e308:1e308", ""]


def _stat(f: dict[str, Path], *extra: str, data: str = "good", column: str = "age") -> list[str]:
    return ["stat", str(f[data]), "--column", column, *extra]


def stat_cases(f: dict[str, Path]) -> list[Case]:
    c: list[Case] = []
    add = lambda name, expect, argv, **kw: c.append(  # noqa: E731
        Case(f"cli/stat/{name}", expect, argv=argv, **kw)
    )
    for eps in BAD_EPS + FAR_EPS:
        for stat in ("median", "mean"):
            add(
                f"epsilon={eps}/{stat}",
                "either" if eps in FAR_EPS else "refuse",
                _stat(f, "--stat", stat, "--bounds", "0:120", "--epsilon=" + eps),
            )
    for b in BAD_BOUNDS:
        for stat in ("median", "mean", "variance"):
            add(
                f"bounds={b}/{stat}",
                "refuse",
                _stat(f, "--stat", stat, "--epsilon", "1", "--bounds=" + b),
            )
    for where in ("100:0", "nan:100", "nan:nan", "a:b", "5", "", "1:2:3"):
        add(
            f"where={where}",
            "refuse",
            _stat(f, "--stat", "count", "--epsilon", "1", "--where=" + where),
        )
    for where in ("0:inf", "-inf:inf", "inf:inf", "30:30"):  # intervals, empty or not
        add(
            f"where={where}",
            "answer",
            _stat(f, "--stat", "count", "--epsilon", "1", "--where=" + where),
        )
    for spec in (
        "quantile:0",
        "quantile:-0.5",
        "quantile:1.5",
        "quantile:nan",
        "quantile",
        "quantile:x",
        "median:2",
        "nonsense",
        "count",
        "",
    ):
        add(
            f"stat={spec}",
            "refuse",
            _stat(f, "--stat", spec, "--epsilon", "1", "--bounds", "0:120"),
        )
    for res in ("0", "-1", "nan", "inf", "abc"):
        add(
            f"resolution={res}",
            "refuse",
            _stat(
                f, "--stat", "median", "--epsilon", "1", "--bounds", "0:120", "--resolution=" + res
            ),
        )
    add(
        "resolution=1e-300",
        "either",
        _stat(f, "--stat", "median", "--epsilon", "1", "--bounds", "0:120", "--resolution=1e-300"),
    )
    ok = ("--stat", "median", "--epsilon", "1", "--bounds", "0:120")
    for data in ("missing", "dir", "empty", "header", "binary", "quote", "dup"):
        add(f"input={data}", "refuse", _stat(f, *ok, data=data))
    add("column_typo", "refuse", _stat(f, *ok, column="agee"))
    add("column_text", "refuse", _stat(f, *ok, column="city"))
    add(
        "column_text_count",
        "refuse",
        _stat(f, "--stat", "count", "--epsilon", "1", "--where", "0:1", column="city"),
    )
    add("column_text_numbers", "refuse", _stat(f, *ok, data="textnum"))
    add("column_nan", "refuse", _stat(f, *ok, data="nan"))
    add("column_sentinel", "refuse", _stat(f, *ok, data="sentinel"))
    add(
        "column_sentinel_count",
        "answer",
        _stat(f, "--stat", "count", "--epsilon", "1", "--where", "0:50", data="sentinel"),
    )
    add(
        "column_inf",
        "refuse",
        _stat(
            f, "--stat", "mean", "--epsilon", "1", "--bounds", "0:200", data="inf", column="income"
        ),
    )
    add(
        "column_huge",
        "refuse",
        _stat(
            f, "--stat", "mean", "--epsilon", "1", "--bounds", "0:200", data="huge", column="income"
        ),
    )
    add(
        "column_huge_clip",
        "answer",
        _stat(
            f,
            "--stat",
            "mean",
            "--epsilon",
            "1",
            "--bounds",
            "0:200",
            "--clip",
            data="huge",
            column="income",
        ),
    )
    add("dup_header_second", "refuse", _stat(f, *ok, data="dup", column="age.1"))
    add("semicolon", "answer", _stat(f, *ok, data="semi"))
    add("sep_weird", "refuse", _stat(f, *ok, "--sep", "xx"))
    add("sep_empty", "refuse", _stat(f, *ok, "--sep", ""))
    add("output_bad_suffix", "refuse", _stat(f, *ok, "-o", str(f["out"] / "x.txt")))
    add("output_is_dir", "refuse", _stat(f, *ok, "-o", str(f["out"]) + "/"))
    add(
        "format_mismatch",
        "refuse",
        _stat(f, *ok, "-o", str(f["out"] / "x.csv"), "--format", "json"),
    )
    add("seed_text", "refuse", _stat(f, *ok, "--seed", "x"))
    add("seed_negative", "refuse", _stat(f, *ok, "--seed", "-1"))
    add("mechanism_unknown", "refuse", _stat(f, *ok, "--mechanism", "nope"))
    add(
        "smooth_mean",
        "refuse",
        _stat(
            f,
            "--stat",
            "mean",
            "--epsilon",
            "1",
            "--bounds",
            "0:120",
            "--mechanism",
            "smooth_sensitivity",
        ),
    )
    add("budget_missing_ledger", "refuse", _stat(f, *ok, "--budget", str(f["out"] / "no.json")))
    add(
        "budget_corrupt_ledger",
        "refuse",
        _stat(f, *ok, "--budget", str(f["corrupt_ledger"])),
        guarded=(f["corrupt_ledger"],),
    )
    add("budget_column_typo", "refuse", _stat(f, *ok, "--budget", str(f["ledger"]), column="agee"))
    add("engine_workers_without_dask", "refuse", _stat(f, *ok, "--workers", "2"))
    add("diagnostics", "answer", _stat(f, *ok, "--diagnostics", "--seed", "1"))
    add("ok_median", "answer", _stat(f, *ok, "--seed", "1"))
    add("ok_count", "answer", _stat(f, "--stat", "count", "--epsilon", "1", "--where", "18:65"))
    return c


def model_cases(f: dict[str, Path]) -> list[Case]:
    c: list[Case] = []
    good = str(f["good"])
    lin = [
        "model",
        "linear",
        good,
        "--target",
        "y",
        "--features",
        "x1,x2",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--bounds=-1:1",
        "--y-bounds=-2:2",
    ]
    log = [
        "model",
        "logistic",
        good,
        "--target",
        "label",
        "--features",
        "x1,x2",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--bounds=-1:1",
    ]
    ols = [
        "model",
        "eptr-ols",
        good,
        "--target",
        "y",
        "--features",
        "x1,x2",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--x-radius",
        "2",
        "--theta-radius",
        "1",
        "--y-radius",
        "2",
        "--c0",
        "0.1",
    ]
    bayes = [
        "model",
        "eptr-bayes",
        good,
        "--target",
        "label",
        "--features",
        "x1,x2",
        "--classes",
        "0,1",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--x-radius",
        "2",
        "--c0",
        "auto",
    ]
    nw = [
        "model",
        "eptr-nw",
        good,
        "--target",
        "y",
        "--features",
        "x1",
        "--bounds=-1:1",
        "--query=-0.5,0,0.5",
        "--bandwidth",
        "0.3",
        "--y-radius",
        "2",
        "--c0",
        "0.05",
        "--epsilon",
        "2",
        "--delta",
        "1e-6",
    ]
    add = lambda name, expect, argv, **kw: c.append(  # noqa: E731
        Case(f"cli/model/{name}", expect, argv=argv, **kw)
    )

    def swap(argv: list[str], option: str, value: str | None) -> list[str]:
        out = list(argv)
        if option in out:
            i = out.index(option)
            del out[i : i + 2]
        return out + ([f"{option}={value}"] if value is not None else [])

    for method, argv in (
        ("linear", lin),
        ("logistic", log),
        ("eptr-ols", ols),
        ("eptr-bayes", bayes),
        ("eptr-nw", nw),
    ):
        add(f"{method}/ok", "either", argv + ["--seed", "1"])
        for eps in ("0", "-1", "nan", "inf", "1e308", "1e-300"):
            add(f"{method}/epsilon={eps}", "refuse", swap(argv, "--epsilon", eps))
        for dl in ("0", "1", "nan", "-1", "2"):
            add(f"{method}/delta={dl}", "refuse", swap(argv, "--delta", dl))
        add(f"{method}/target_missing", "refuse", swap(argv, "--target", "nope"))
        add(f"{method}/target_text", "refuse", swap(argv, "--target", "city"))
        add(f"{method}/feature_text", "refuse", swap(argv, "--features", "x1,city"))
        add(f"{method}/feature_typo", "refuse", swap(argv, "--features", "x1,x3"))
        add(
            f"{method}/target_in_features",
            "refuse",
            swap(argv, "--features", "x1," + argv[argv.index("--target") + 1]),
        )
        add(f"{method}/feature_twice", "refuse", swap(argv, "--features", "x1,x1"))
        add(f"{method}/input_missing", "refuse", [*argv[:2], str(f["missing"]), *argv[3:]])
        add(f"{method}/input_dup", "refuse", [*argv[:2], str(f["dup"]), *argv[3:]])
        add(f"{method}/input_empty", "refuse", [*argv[:2], str(f["empty"]), *argv[3:]])
    for b in ("1:-1", "nan:1", "a:b", "-1e308:1e308"):
        add(f"linear/bounds={b}", "refuse", swap(lin, "--bounds", b))
        add(f"logistic/bounds={b}", "refuse", swap(log, "--bounds", b))
    add(
        "linear/huge_bounds",
        "either",
        swap(swap(lin, "--bounds", "-1e200:1e200"), "--y-bounds", "-1e200:1e200"),
    )
    add("linear/eps_1e-3", "either", swap(lin, "--epsilon", "1e-3"))
    add("logistic/eps_1e-3", "either", swap(log, "--epsilon", "1e-3"))
    add("logistic/three_classes", "refuse", log + ["--classes", "0,1,2"])
    add("eptr-ols/c0=-1", "refuse", swap(ols, "--c0", "-1"))
    add("eptr-ols/c0=abc", "refuse", swap(ols, "--c0", "abc"))
    add("eptr-ols/x_radius=0", "refuse", swap(ols, "--x-radius", "0"))
    add("eptr-ols/x_radius=nan", "refuse", swap(ols, "--x-radius", "nan"))
    add("eptr-bayes/classes=0", "refuse", swap(bayes, "--classes", "0"))
    add("eptr-nw/query=a", "refuse", swap(nw, "--query", "a,b"))
    add("eptr-nw/query=nan", "refuse", swap(nw, "--query", "nan"))
    add("eptr-nw/bandwidth=0", "refuse", swap(nw, "--bandwidth", "0"))
    add("eptr-nw/c0=auto", "refuse", swap(nw, "--c0", "auto"))
    add(
        "linear/budget_typo_target",
        "refuse",
        swap(lin, "--target", "yy") + ["--budget", str(f["ledger"])],
    )
    return c


def release_cases(f: dict[str, Path]) -> list[Case]:
    c: list[Case] = []
    out = f["out"]
    add = lambda name, expect, argv, **kw: c.append(  # noqa: E731
        Case(f"cli/release/{name}", expect, argv=argv, **kw)
    )

    def rel(data: str, *extra: str, store: str = "s") -> list[str]:
        return [
            "release",
            str(f[data]),
            "--columns",
            "age,income",
            "--bounds",
            "age=18:90,income=0:200",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "--id-column",
            "id",
            "-o",
            str(out / store),
            *extra,
        ]

    for i, data in enumerate(
        (
            "missing",
            "dir",
            "empty",
            "header",
            "binary",
            "dup",
            "nan",
            "sentinel",
            "textnum",
            "ids_big",
            "ids_dup",
            "ids_missing",
            "inf",
            "huge",
        )
    ):
        add(f"input={data}", "refuse", rel(data, store=f"s{i}"))
    add("ids_text", "answer", rel("ids_text", store="stext"))
    add("ok", "answer", rel("plain", store="sok"))
    add(
        "id_column_missing",
        "refuse",
        [
            "release",
            str(f["good"]),
            "--bounds",
            "0:1",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "--id-column",
            "nope",
            "-o",
            str(out / "sid"),
        ],
    )
    add(
        "bounds_unknown_column",
        "refuse",
        [
            "release",
            str(f["plain"]),
            "--bounds",
            "agee=18:90",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "-o",
            str(out / "sb"),
        ],
    )
    add(
        "bounds_text_column",
        "refuse",
        [
            "release",
            str(f["good"]),
            "--bounds",
            "city=0:1",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "--id-column",
            "id",
            "-o",
            str(out / "sc"),
        ],
    )
    add(
        "one_pair_all_columns_with_text",
        "refuse",
        [
            "release",
            str(f["good"]),
            "--bounds",
            "0:200",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "--id-column",
            "id",
            "-o",
            str(out / "sd"),
        ],
    )
    for name, extra in (
        ("lam=-1", ["--lam=-1"]),
        ("lam=nan", ["--lam=nan"]),
        ("lam=inf", ["--lam=inf"]),
        ("zero_prob=1", ["--zero-prob=1"]),
        ("zero_prob=0", ["--zero-prob=0"]),
        ("zero_prob=-1", ["--zero-prob=-1"]),
    ):
        argv = rel("plain", store="se")
        for opt in extra:
            key = opt.split("=")[0]
            i = argv.index(key)
            del argv[i : i + 2]
        add(name, "refuse", argv + extra)
    add("epsilon_and_lam", "refuse", rel("plain", "--epsilon", "1", store="sf"))
    add(
        "calibrate_eps=1e308",
        "refuse",
        [
            "release",
            str(f["plain"]),
            "--columns",
            "age",
            "--bounds",
            "18:90",
            "--epsilon",
            "1e308",
            "--delta",
            "0.2",
            "--zero-prob",
            "0.05",
            "-o",
            str(out / "sg"),
        ],
    )
    add(
        "calibrate_eps=1e-300",
        "refuse",
        [
            "release",
            str(f["plain"]),
            "--columns",
            "age",
            "--bounds",
            "18:90",
            "--epsilon",
            "1e-300",
            "--delta",
            "0.2",
            "--zero-prob",
            "0.05",
            "-o",
            str(out / "sh"),
        ],
    )
    add("resolution=abc", "refuse", rel("plain", "--resolution", "abc", store="si"))
    add("resolution=0", "refuse", rel("plain", "--resolution", "0", store="sj"))
    add("output_is_file", "refuse", rel("plain", store="../plain.csv"))
    store = f["store"]
    guarded = (store,)
    app = ["release", "--append", "--id-column", "id", "-o", str(store)]
    for data in (
        "again",
        "dup",
        "empty",
        "header",
        "binary",
        "sentinel",
        "nan",
        "ids_big",
        "ids_dup",
        "textnum",
        "missing",
    ):
        add(f"append={data}", "refuse", [app[0], str(f[data]), *app[1:]], guarded=guarded)
    add(
        "append_to_missing_store",
        "refuse",
        ["release", str(f["more"]), "--append", "--id-column", "id", "-o", str(out / "none")],
    )
    add(
        "append_with_lam",
        "refuse",
        ["release", str(f["more"]), "--lam", "1", *app[1:]],
        guarded=guarded,
    )
    return c


def other_cases(f: dict[str, Path]) -> list[Case]:
    c: list[Case] = []
    add = lambda name, expect, argv, **kw: c.append(  # noqa: E731
        Case(f"cli/{name}", expect, argv=argv, **kw)
    )
    store = str(f["store"])
    fit = ["fit", store, "--model", "linear", "--target", "income", "--features", "age"]
    add("fit/on_csv", "refuse", ["fit", str(f["good"]), "--model", "linear", "--target", "y"])
    add(
        "fit/missing_store",
        "refuse",
        ["fit", str(f["missing"]), "--model", "linear", "--target", "y"],
    )
    add("fit/empty_dir", "refuse", ["fit", str(f["dir"]), "--model", "linear", "--target", "y"])
    add("fit/target_missing", "refuse", [*fit[:4], "--target", "nope"])
    add("fit/feature_typo", "refuse", [*fit[:6], "--features", "agee"])
    add("fit/target_in_features", "refuse", [*fit[:6], "--features", "age,income"])
    add(
        "fit/quantile=0",
        "refuse",
        ["fit", store, "--model", "quantile", "--target", "income", "--quantile", "0"],
    )
    add(
        "fit/quantile=nan",
        "refuse",
        ["fit", store, "--model", "quantile", "--target", "income", "--quantile", "nan"],
    )
    add("fit/conf_level=1.5", "refuse", [*fit, "--conf-level", "1.5"])
    add("fit/conf_level=nan", "refuse", [*fit, "--conf-level", "nan"])
    add("fit/theta_bounds=bad", "refuse", [*fit, "--theta-bounds=5:-5"])
    add("fit/n_draws=0", "refuse", [*fit, "--n-draws", "0"])
    add(
        "fit/loss_bad",
        "refuse",
        ["fit", store, "--model", "custom", "--target", "income", "--loss", "os:nope"],
    )
    add(
        "fit/loss_not_callable",
        "refuse",
        ["fit", store, "--model", "custom", "--target", "income", "--loss", "os:sep"],
    )
    add("fit/ok", "answer", fit)
    priv = ["privacy", "--plot", ""]
    add("privacy/lam=-1", "refuse", [*priv, "--lam=-1", "--zero-prob", "0.1", "--bounds", "0:1"])
    add(
        "privacy/zero_prob=2",
        "refuse",
        [*priv, "--lam", "1", "--zero-prob", "2", "--bounds", "0:1"],
    )
    add(
        "privacy/bounds=bad",
        "refuse",
        [*priv, "--lam", "1", "--zero-prob", "0.1", "--bounds", "1:0"],
    )
    add(
        "privacy/d=0",
        "refuse",
        [*priv, "--lam", "1", "--zero-prob", "0.1", "--bounds", "0:1", "--d", "0"],
    )
    add(
        "privacy/d=-3",
        "refuse",
        [*priv, "--lam", "1", "--zero-prob", "0.1", "--bounds", "0:1", "--d=-3"],
    )
    add(
        "privacy/d=huge",
        "refuse",
        [*priv, "--lam", "1", "--zero-prob", "0.1", "--bounds", "0:1", "--d", "1000000000"],
    )
    add("privacy/store_missing", "refuse", [*priv, "--store", str(f["missing"])])
    add("privacy/store_is_csv", "refuse", [*priv, "--store", str(f["good"])])
    add(
        "privacy/envelopes_bad",
        "refuse",
        [
            "privacy",
            "--lam",
            "1",
            "--zero-prob",
            "0.1",
            "--bounds",
            "0:1",
            "--plot",
            str(f["out"] / "t.png"),
            "--envelopes",
            "-1",
            "nan",
        ],
    )
    add(
        "privacy/plot_into_file",
        "refuse",
        [
            "privacy",
            "--lam",
            "1",
            "--zero-prob",
            "0.1",
            "--bounds",
            "0:1",
            "--plot",
            str(f["good"]) + "/t.png",
        ],
    )
    add("privacy/ok", "answer", [*priv, "--store", store])
    add("budget/missing", "refuse", ["budget", str(f["missing"])])
    add(
        "budget/corrupt",
        "refuse",
        ["budget", str(f["corrupt_ledger"])],
        guarded=(f["corrupt_ledger"],),
    )
    add("budget/not_json", "refuse", ["budget", str(f["good"])], guarded=(f["good"],))
    add("budget/epsilon=-1", "refuse", ["budget", str(f["out"] / "l1.json"), "--epsilon=-1"])
    add("budget/epsilon=nan", "refuse", ["budget", str(f["out"] / "l2.json"), "--epsilon=nan"])
    add("budget/epsilon=1e308", "refuse", ["budget", str(f["out"] / "l3.json"), "--epsilon=1e308"])
    add(
        "budget/delta=2",
        "refuse",
        ["budget", str(f["out"] / "l4.json"), "--epsilon", "1", "--delta", "2"],
    )
    add(
        "budget/exists",
        "refuse",
        ["budget", str(f["ledger"]), "--epsilon", "5"],
        guarded=(f["ledger"],),
    )
    add("budget/dir", "refuse", ["budget", str(f["dir"])])
    add("budget/ok", "answer", ["budget", str(f["ledger"])])
    add("reproduce/unknown", "refuse", ["reproduce", "nope", "-o", str(f["out"] / "r")])
    add(
        "reproduce/reps=0",
        "refuse",
        ["reproduce", "zil-table2", "--reps", "0", "-o", str(f["out"] / "r")],
    )
    add(
        "reproduce/reps=-1",
        "refuse",
        ["reproduce", "zil-table2", "--reps=-1", "-o", str(f["out"] / "r")],
    )
    add(
        "reproduce/data_missing",
        "refuse",
        ["reproduce", "eptr-wine", "--data", str(f["missing"]), "-o", str(f["out"] / "r")],
    )
    add("demo/output_is_file", "refuse", ["demo", "-o", str(f["good"])])
    add("top/no_command", "refuse", [])
    add("top/unknown_command", "refuse", ["nope"])
    return c


def cli_cases(folder: Path, write: bool = True) -> list[Case]:
    """The command-line cases on inputs in ``folder`` (written first when ``write``)."""
    f = write_inputs(folder) if write else input_paths(folder)
    assert f == input_paths(folder)
    return [*stat_cases(f), *model_cases(f), *release_cases(f), *other_cases(f)]
