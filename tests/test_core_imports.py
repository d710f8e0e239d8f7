"""Dependencies run one way: the core never imports a backend (privest.scale, Dask).

Every import statement of every module of the core packages is read, including those inside
functions (a lazy import is still a dependency), and the core is imported in a fresh
interpreter to see that no backend module gets loaded. ``release/`` joins ``CORE`` when the
released-columns protocol has moved out of it (issue 26, item 1).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import privest

SRC = Path(privest.__file__).resolve().parent
CORE = ("accounting", "learn", "mechanisms", "models")
FORBIDDEN = ("privest.scale", "dask", "distributed")


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imported_modules(path: Path, root: Path) -> set[str]:
    """Every module named by an import in ``path`` (a package ``root``'s file), relative
    imports resolved; ``from a import b`` counts as a and a.b; ``import_module("x")`` and
    ``__import__("x")`` with a literal name count too."""
    tree = ast.parse(path.read_text())
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            arg = node.args[0]
            if name in ("import_module", "__import__") and isinstance(arg, ast.Constant):
                out.add(str(arg.value))
    return out


def backend_imports(package: Path, root: Path) -> list[tuple[str, str]]:
    """(file, module) for every import of a forbidden module under ``package``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for mod in sorted(imported_modules(path, root)):
            if any(mod == f or mod.startswith(f + ".") for f in FORBIDDEN):
                found.append((str(path.relative_to(root)), mod))
    return found


@pytest.mark.parametrize("package", CORE)
def test_core_package_imports_no_backend(package):
    assert backend_imports(SRC / package, SRC) == []


def test_importing_the_core_loads_no_backend():
    modules = sorted(_module_name(p, SRC) for pkg in CORE for p in (SRC / pkg).rglob("*.py"))
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed') "
        "or m.startswith('privest.scale')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_the_walk_finds_backend_imports(tmp_path):
    """Negative control: a core-like package whose modules import the backend (at the top,
    inside a function, relatively, by name) is caught, file by file."""
    root = tmp_path / "privest"
    pkg = root / "learn"
    pkg.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from privest import scale\n")
    (pkg / "top.py").write_text("import dask.array as da\n")
    (pkg / "lazy.py").write_text("def f():\n    from privest.scale.fit import fit_dask\n")
    (pkg / "relative.py").write_text("from ..scale import fit\n")
    (pkg / "by_name.py").write_text("import importlib\nimportlib.import_module('distributed')\n")
    (pkg / "clean.py").write_text("import numpy as np\nfrom privest.learn import top\n")
    found = {file for file, _ in backend_imports(pkg, root)}
    assert found == {
        "learn/__init__.py",
        "learn/top.py",
        "learn/lazy.py",
        "learn/relative.py",
        "learn/by_name.py",
    }
