"""Dependencies run one way: the core never imports a backend, and no file imports another
that imports it back (checked on the source's import statements, every one of them,
including those inside functions; TYPE_CHECKING blocks excepted)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "privest"
CORE = ("release", "learn", "mechanisms", "models", "accounting")
BACKEND = ("privest.scale", "dask", "distributed")


def _imports(tree: ast.AST, module: str) -> set[str]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for n in ast.walk(node)}
    out = set()
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return out


def _module(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _backend_imports(source: str, module: str) -> list[str]:
    names = _imports(ast.parse(source), module)
    return sorted(n for n in names if any(n == b or n.startswith(b + ".") for b in BACKEND))


def test_the_core_never_imports_a_backend():
    bad = {}
    for pkg in CORE:
        for path in (SRC / pkg).rglob("*.py"):
            found = _backend_imports(path.read_text(), _module(path))
            if found:
                bad[str(path.relative_to(SRC))] = found
    assert not bad, bad


def test_the_backend_check_can_fail():
    """Control: a lazy import inside a function and a relative import are both found."""
    src = "def f():\n    import dask.array\nfrom ..scale import stats\n"
    assert _backend_imports(src, "privest.release.zil") == [
        "dask.array",
        "privest.scale",
        "privest.scale.stats",
    ]
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import dask\n"
    assert _backend_imports(guarded, "privest.release.zil") == []


def _graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in SRC.rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        targets = set()
        for name in _imports(ast.parse(path.read_text()), mod):
            while name and name not in files:
                name = name.rpartition(".")[0]
            if name and name != mod and not files[name].name == "__init__.py":
                targets.add(name)
        graph[mod] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_between_files():
    assert _cycles(_graph()) == []


def test_the_circle_check_can_fail():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
