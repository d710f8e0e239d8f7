"""The package itself: lazy public names, the single version, the files a user expects."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import privest

ROOT = Path(__file__).resolve().parents[1]
INIT = Path(privest.__file__)


def test_import_privest_loads_no_numpy():
    code = "import sys, privest; print('numpy' in sys.modules, 'privest.release' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False", "False"]


_HEAVY = ("sklearn", "scipy.signal", "scipy.stats", "pandas")
_MEDIAN = (
    "import sys, numpy as np, privest as pv; x = np.linspace(0, 100, 1001); {call}; "
    "print(*[m for m in {heavy!r} if m in sys.modules])"
)


def test_the_first_median_with_its_interval_imports_no_heavy_module():
    """Issue 31: the first private_median of a process (with its interval, the default)
    imports neither scikit-learn, scipy.signal, scipy.stats nor pandas; the control imports
    scipy.stats in the same call and is seen."""
    median = "pv.private_median(x, epsilon=1.0, bounds=(0, 100), rng=0)"
    for call, seen in ((median, ""), (median + "; import scipy.stats", "scipy.stats")):
        code = _MEDIAN.format(call=call, heavy=_HEAVY)
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.strip() == seen


@pytest.mark.parametrize("name", privest.__all__)
def test_every_public_name_resolves(name):
    value = getattr(privest, name)
    assert value is not None
    assert name in dir(privest)
    namespace: dict = {}
    exec(f"from privest import {name}", namespace)
    assert namespace[name] is value


def test_lazy_names_match_all_and_the_type_checking_imports():
    assert set(privest.__all__) == set(privest._LAZY) | {"__version__"}
    tree = ast.parse(INIT.read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))  # if TYPE_CHECKING:
    imported = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == privest._LAZY


def test_subpackages_and_unknown_names():
    import privest.audit

    assert privest.audit is sys.modules["privest.audit"]
    assert privest.ZILMechanism.__module__ == "privest.release.zil"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        privest.nope  # noqa: B018


def test_one_version():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and meta["project"]["dynamic"] == ["version"]
    attr = meta["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "privest._version.__version__"
    assert privest.__version__ == version("privest")


def test_license_and_typed_marker():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "2026 the privest developers" in text
    assert (INIT.parent / "py.typed").is_file()
    assert "py.typed" in meta["tool"]["setuptools"]["package-data"]["privest"]
