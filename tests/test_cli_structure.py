"""The privest command's structure: one module per subcommand, help with working examples,
--version, ``python -m privest``, exit statuses, and a parser that imports no numerical
library."""

from __future__ import annotations

import argparse
import ast
import shlex
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privest
from privest import cli
from privest.cli import COMMANDS, build_parser, exit_status, main
from privest.errors import (
    DuplicateRecordError,
    StoreError,
    UnreachableTargetError,
    ValidationError,
)

COMMANDS_DIR = Path(cli.__file__).parent / "commands"
NAMES = [
    "release",
    "privacy",
    "fit",
    "stat",
    "table",
    "model",
    "budget",
    "plan",
    "report",
    "reproduce",
    "demo",
]
HEAVY = ("numpy", "pandas", "scipy", "sklearn", "matplotlib", "rich")


def _examples(help_text: str) -> list[str]:
    """The lines of the ``examples:`` block that ends a --help."""
    block = help_text.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def _argv(example: str) -> list[str]:
    words = shlex.split(example, comments=True)
    assert words[0] == "privest"
    return words[1:]


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def test_one_module_per_subcommand_none_imports_cli():
    assert [m.__name__.rsplit(".", 1)[1] for m in COMMANDS] == NAMES
    for path in COMMANDS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert "privest.cli" not in imported, path.name
    for module in COMMANDS:
        assert callable(module.add_parser) and callable(module.run)


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"privest {privest.__version__}"
    assert privest.__version__ == version("privest") == "0.2.0"


def test_python_dash_m():
    run = subprocess.run(
        [sys.executable, "-m", "privest", "--help"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0 and run.stdout.startswith("usage: privest")
    assert "examples:" in run.stdout and "exit status:" in run.stdout
    run = subprocess.run(
        [sys.executable, "-m", "privest", "stat", "nope.csv", "--column", "a"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2 and run.stderr.startswith("privest stat: error:")
    assert run.stderr.count("\n") == 1


def test_top_level_help_documents_exit_status_and_commands(capsys):
    text = _help([], capsys)
    for name in NAMES:
        assert f"\n    {name}" in text
    assert "exit status:" in text and "  2  usage error" in text and "  1  a valid request" in text
    assert 2 <= len(_examples(text)) <= 5  # 4 examples and "privest COMMAND --help"
    assert "Exit status:" in cli.__doc__


@pytest.mark.parametrize("name", NAMES)
def test_every_help_ends_with_examples_that_parse(name, capsys):
    text = _help([name], capsys)
    examples = _examples(text)
    assert 2 <= len(examples) <= 4
    assert text.rstrip().endswith(examples[-1])
    parser = build_parser()
    for example in examples:
        args = parser.parse_args(_argv(example))
        assert args.command == name or "afterwards" in example


def test_top_level_examples_parse(capsys):
    parser = build_parser()
    for example in _examples(_help([], capsys)):
        if "COMMAND" not in example:
            parser.parse_args(_argv(example))


def _example_data(folder: Path) -> None:
    """data.csv and more.csv with the columns the help examples use."""
    rng = np.random.default_rng(0)

    def frame(lo: int, hi: int) -> pd.DataFrame:
        n = hi - lo
        x1, x2 = np.clip(rng.normal(size=(2, n)), -3, 3)
        return pd.DataFrame(
            {
                "id": [f"p{i}" for i in range(lo, hi)],
                "age": rng.uniform(20, 80, n).round(1),
                "income": rng.uniform(0, 150, n).round(2),
                "x1": x1,
                "x2": x2,
                "y": np.clip(0.5 * x1 - 0.2 * x2 + 0.5 * rng.normal(size=n), -3, 3),
                "label": (x1 + 0.3 * rng.normal(size=n) > 0).astype(int),
            }
        )

    frame(0, 1500).to_csv(folder / "data.csv", index=False)
    frame(1500, 1600).to_csv(folder / "more.csv", index=False)


def test_help_examples_run(tmp_path, monkeypatch, capsys):
    """The examples of release, privacy, fit, stat, table, model, budget (and the top
    level's) work."""
    _example_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    examples = [
        example
        for module in COMMANDS[:7]  # reproduce and demo run for minutes; see test_cli.py
        for example in module.EXAMPLES
        if "--engine dask" not in example  # needs the extra: tests/scale/test_release_cli.py
    ]
    examples += [e for e in cli.EXAMPLES if "demo" not in e and "--id-column" not in e]
    for example in examples:
        assert main(_argv(example)) == 0, (example, capsys.readouterr().err)
    capsys.readouterr()
    assert (tmp_path / "store").is_dir() and (tmp_path / "tradeoff.png").is_file()
    assert len(privest.Budget.open(tmp_path / "ledger.json").spends) == 1
    for name in ("profile.csv", "fit.csv", "q90.json", "ols.csv", "table.csv"):
        assert (tmp_path / name).stat().st_size > 0


def test_parser_and_help_import_no_numerical_library():
    code = (
        "import sys, io, contextlib, privest.cli as c\n"
        "p = c.build_parser()\n"
        "p.format_help()\n"
        "for sub in p._subparsers._group_actions[0].choices.values():\n"
        "    sub.format_help()\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        c.main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


def test_exit_status_rule():
    import numpy.linalg

    assert exit_status(ValidationError("x")) == 2
    assert exit_status(UnreachableTargetError("x")) == 2
    assert exit_status(ValueError("x")) == 2
    assert exit_status(StoreError("x")) == 1
    assert exit_status(DuplicateRecordError("x")) == 1
    assert exit_status(RuntimeError("x")) == 1
    assert exit_status(OSError("x")) == 1
    assert exit_status(FloatingPointError("x")) == 1
    assert exit_status(numpy.linalg.LinAlgError("x")) == 1
    # an unexpected error (a dependency's, or a bug): one line and status 1, no traceback
    assert exit_status(TypeError("x")) == 1


def test_an_unexpected_error_prints_one_line_without_its_message(monkeypatch, capsys):
    """A dependency's message may quote data or hold a traceback: only its type is shown;
    PRIVEST_TRACEBACK=1 shows the traceback instead."""

    def boom(args, console):
        raise TypeError("could not convert 'SECRET' at /usr/lib/python3/x.py")

    argv = ["budget", "ledger.json", "--epsilon", "1"]
    build = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(build(), "budget", boom))
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected TypeError" in err
    assert "SECRET" not in err and "/usr/lib" not in err
    monkeypatch.setenv("PRIVEST_TRACEBACK", "1")
    with pytest.raises(TypeError):
        main(argv)


def _with_func(parser, command, func):
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub.choices[command].set_defaults(func=func)
    return parser


@pytest.mark.parametrize("kind", ["missing", "csv file", "empty folder"])
def test_every_missing_or_wrong_input_exits_2(tmp_path, capsys, kind):
    """A missing CSV, store or ledger, or one of the wrong kind, is a usage error (exit 2)
    for every command alike, and says what was expected (issue 30)."""
    csv = tmp_path / "data.csv"
    csv.write_text("a,b\n1,2\n")
    target = {"missing": tmp_path / "nope", "csv file": csv, "empty folder": tmp_path}[kind]
    calls = [
        ["fit", str(target), "--model", "linear", "--target", "b"],
        ["privacy", "--store", str(target), "--plot", ""],
        ["release", str(csv), "--append", "-o", str(target)],
    ]
    if kind != "csv file":
        calls += [
            [
                "stat",
                str(target),
                "--column",
                "a",
                "--stat",
                "mean",
                "--epsilon",
                "1",
                "--bounds",
                "0:1",
            ],
            ["budget", str(target)],
            [
                "stat",
                str(csv),
                "--column",
                "a",
                "--stat",
                "mean",
                "--epsilon",
                "1",
                "--bounds",
                "0:1",
                "--budget",
                str(target),
            ],
        ]
    for argv in calls:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"privest {argv[0]}: error:"), err


def test_fit_on_a_csv_says_it_wants_a_store(tmp_path, capsys):
    csv = tmp_path / "data.csv"
    csv.write_text("a,b\n1,2\n")
    assert main(["fit", str(csv), "--model", "linear", "--target", "b"]) == 2
    err = capsys.readouterr().err
    assert "expected a release store folder" in err and "NotADirectoryError" not in err


def test_bad_value_exits_2(tmp_path, capsys):
    assert main(["privacy", "--epsilon", "-1", "--delta", "0.2", "--zero-prob", "0.05"]) == 2
    assert capsys.readouterr().err.startswith("privest privacy: error: --bounds")
    args = ["privacy", "--bounds=0:1", "--plot", ""]
    assert main([*args, "--epsilon", "-1", "--delta", "0.2", "--zero-prob", "0.05"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("privest privacy: error:") and "epsilon" in err
    assert err.count("\n") == 1


def test_argparse_errors_exit_2_on_one_line(capsys):
    for argv in (["nope"], ["fit", "s", "--model", "nope"], ["stat", "d.csv"], []):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ": error: " in err and "--help" in err


def test_renamed_flags_are_gone(capsys):
    old = [
        ["privacy", "--target-delta", "0.2"],
        ["privacy", "--level", "individual"],
        ["release", "x.csv", "-o", "s", "--level", "attribute"],
        ["fit", "s", "--model", "linear", "--level", "0.9"],
        ["fit", "s", "--model", "linear", "--param-bounds", "0:1"],
        ["model", "eptr-nw", "x.csv", "--target", "y", "--epsilon", "1", "--delta", "0.1"]
        + ["--domain", "0:1"],
        ["model", "eptr-nw", "x.csv", "--target", "y", "--epsilon", "1", "--delta", "0.1"]
        + ["--response-radius", "1"],
        ["model", "eptr-ols", "x.csv", "--target", "y", "--epsilon", "1", "--delta", "0.1"]
        + ["--no-project"],
    ]
    for argv in old:
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        assert "unrecognized arguments" in capsys.readouterr().err


def test_model_refuses_out_of_range_records_unless_clip(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((500, 2))
    X[0] = [40.0, 0.0]
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": X @ [0.5, -0.2]}).to_csv(path, index=False)
    args = ["model", "eptr-ols", str(path), "--target", "y", "--epsilon", "1", "--delta", "0.01"]
    args += ["--x-radius", "4", "--theta-radius", "1", "--c0", "0.05", "--seed", "1"]
    assert main(args) == 2  # out-of-range records are an error unless --clip
    err = capsys.readouterr().err
    assert err.startswith("privest model: error:") and "--clip" in err
    assert main([*args, "--clip"]) == 0
    assert "projected onto them" in capsys.readouterr().out


def test_release_output_and_reproduce_demo_short_o():
    parser = build_parser()
    assert parser.parse_args(["reproduce", "--list", "-o", "d"]).output == "d"
    assert parser.parse_args(["demo", "-o", "d"]).output == "d"
    assert parser.parse_args(["release", "x.csv", "--output", "s"]).output == "s"


def _documented_commands() -> list[tuple[str, str]]:
    """``privest ...`` lines of the fenced shell blocks of README.md and docs/*.md."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = path.read_text().replace("\\\n", " ")
        for k, block in enumerate(text.split("```")):
            if k % 2 == 0 or block.startswith(("python", "json")):
                continue
            for line in block.splitlines():
                if line.startswith("privest "):
                    found.append((path.name, line.split(" > ")[0]))
    return found


def test_documented_command_lines_parse():
    found = _documented_commands()
    assert len(found) >= 10
    parser = build_parser()
    for name, line in found:
        try:
            parser.parse_args(_argv(line))
        except SystemExit:  # pragma: no cover - the message names the line
            pytest.fail(f"{name}: {line!r} does not parse")


@pytest.mark.parametrize(
    "options",
    [
        ["--stat", "mean", "--bounds", "0,1"],  # malformed bounds
        ["--stat", "quantile:1.5", "--bounds", "0:1"],  # level outside (0, 1]
        ["--stat", "mean"],  # bounds missing
    ],
)
def test_an_option_error_of_stat_loads_no_numerical_library(tmp_path, options):
    """An error in the options is reported before numpy, pandas or scipy is imported (issue
    31: a mistyped option answers at once)."""
    data = tmp_path / "x.csv"
    data.write_text("a\n0.5\n")
    argv = ["stat", str(data), "--column", "a", "--epsilon", "1", *options]
    code = (
        "import sys, privest.cli as c\n"
        f"status = c.main({argv!r})\n"
        f"print(status, ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    status, loaded = (run.stdout.strip().split(" ") + [""])[:2]
    assert status == "2" and loaded in ("", "rich"), run.stdout + run.stderr
