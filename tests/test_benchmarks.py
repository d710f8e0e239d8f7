"""``make bench`` (benchmarks/run_all.py) calls every script's ``main(argv)``: each script
must take its arguments from ``argv``, not from ``sys.argv``, or the run stops at it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(BENCH.glob("bench_*.py"))


def _main(path: Path) -> ast.FunctionDef:
    tree = ast.parse(path.read_text())
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert found, f"{path.name} has no main()"
    return found[0]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_main_parses_the_argv_it_is_given(path):
    main = _main(path)
    assert [a.arg for a in main.args.args] == ["argv"], f"{path.name}: main(argv=None)"
    calls = [
        n
        for n in ast.walk(main)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "parse_args"
    ]
    # a script with no options parses nothing (it says so in main's docstring)
    assert not calls or all(
        len(c.args) == 1 and isinstance(c.args[0], ast.Name) and c.args[0].id == "argv"
        for c in calls
    ), f"{path.name}: parse_args(argv)"


@pytest.mark.parametrize(
    "code",
    [
        "def main():\n    pass\n",
        "import argparse\ndef main(argv=None):\n    argparse.ArgumentParser().parse_args()\n",
    ],
)
def test_the_check_sees_a_script_that_ignores_argv(tmp_path, code):
    bad = tmp_path / "bench_bad.py"
    bad.write_text(code)
    with pytest.raises(AssertionError):
        test_main_parses_the_argv_it_is_given(bad)
