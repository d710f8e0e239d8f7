"""Dependencies run one way (issue 26, item 1): the core never imports a backend.

Every import statement of the core packages is read from the source (at module level or
inside a function alike); none may name ``privest.scale``, ``dask`` or ``distributed``.
The backend joins through ``privest.backends`` (dispatch functions and engines)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "privest"
#: the core packages whose imports are walked (learn/ joins when its Dask fit has moved to
#: the backend: the fit backend's change)
CORE = ("release", "mechanisms", "models", "accounting")
FORBIDDEN = ("privest.scale", "dask", "distributed")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _backend(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


@pytest.mark.parametrize("package", CORE)
def test_the_core_never_imports_a_backend(package):
    files = sorted((SRC / package).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(SRC)): n for f in files for n in _imports(f) if _backend(n)}
    assert not bad, bad


def test_the_walk_sees_a_lazy_import(tmp_path):
    """Control: an import inside a function is found."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from privest.scale.release import x\n    import dask\n")
    assert [n for n in _imports(module) if _backend(n)] == ["privest.scale.release", "dask"]
