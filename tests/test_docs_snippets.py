"""Every code block of README.md and docs/*.md runs as written.

Blocks of one page run in order, in one namespace and one fresh working folder, like a
notebook. A fence is one of:

* `````python``: executed;
* a block whose commands start with ``privest``: each command (backslash continuations
  joined, trailing ``# ...`` comments dropped) runs through ``privest.cli.main`` and must
  exit 0;
* the ``make demo`` / ``make test`` block at the top of the README (CI runs those);
* `````text``: output or notation, not code.

Anything else fails, so an unlabelled block cannot slip through unchecked. Pages may use
the external-data folder ``path/to/wine-quality``: it is created with small synthetic
CSVs in the UCI format before the page runs.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(path: Path) -> list[tuple[int, str, str]]:
    """(line number, language, code) of every fenced block of ``path``."""
    out, lang, start, buf = [], None, 0, []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = FENCE.match(line)
        if m and lang is None:
            lang, start, buf = m.group(1), i, []
        elif line.strip() == "```" and lang is not None:
            out.append((start, lang, "\n".join(buf)))
            lang = None
        elif lang is not None:
            buf.append(line)
    assert lang is None, f"{path.name}: unclosed fence at line {start}"
    return out


def _commands(code: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", code)
    cmds = []
    for line in joined.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            cmds.append(line)
    return cmds


def kind(lang: str, code: str) -> str:
    cmds = _commands(code)
    if lang == "python":
        return "python"
    if lang == "text":
        return "text"
    if cmds and all(c.startswith("make ") for c in cmds):
        return "make"
    if (
        lang in ("", "bash", "sh", "console")
        and cmds
        and all(c.startswith("privest ") for c in cmds)
    ):
        return "cli"
    return "unknown"


def _fake_wine(folder: Path) -> None:
    """Small synthetic files in the UCI wine-quality format (';'-separated)."""
    from privest.datasets.wine import WINE_FEATURES

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for colour, n in (("red", 400), ("white", 600)):
        x = rng.uniform(0.5, 1.5, (n, len(WINE_FEATURES)))
        quality = np.clip(np.rint(5 + 2 * (x[:, 0] - 1) + rng.normal(size=n)), 3, 9)
        lines = [";".join(f'"{c}"' for c in (*WINE_FEATURES, "quality"))]
        lines += [
            ";".join(f"{v:.4f}" for v in row) + f";{int(q)}"
            for row, q in zip(x, quality, strict=True)
        ]
        (folder / f"winequality-{colour}.csv").write_text("\n".join(lines) + "\n")


def test_every_fence_is_labelled():
    unknown = [
        f"{page.name}:{line}"
        for page in PAGES
        for line, lang, code in blocks(page)
        if kind(lang, code) == "unknown"
    ]
    assert not unknown, f"label these blocks python, text or privest commands: {unknown}"


def test_the_pages_have_runnable_blocks():
    runnable = sum(
        kind(lang, code) in ("python", "cli") for page in PAGES for _, lang, code in blocks(page)
    )
    assert runnable >= 15


#: modules of the Dask extra, which a page that mentions Dask needs (``pip install
#: 'privest[dask]'``; ``make test`` installs the dev extra only)
DASK_EXTRA = ("dask", "distributed")


def _missing_extra(page: Path) -> str | None:
    """Why ``page`` cannot run here (an extra it needs is absent), or None. Absence is an
    error where ``PRIVEST_REQUIRE_DASK=1`` (CI, ``.ci/run``), as in tests/scale."""
    import importlib.util
    import os

    if not any("dask" in code or "distributed" in code for _, _, code in blocks(page)):
        return None
    missing = [m for m in DASK_EXTRA if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    why = f"{page.name} needs the Dask extra ({', '.join(missing)}): pip install 'privest[dask]'"
    if os.environ.get("PRIVEST_REQUIRE_DASK") == "1":
        pytest.fail(why + " (PRIVEST_REQUIRE_DASK=1)")
    return why


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_runs_as_written(page, tmp_path, monkeypatch, capsys):
    why = _missing_extra(page)
    if why:
        pytest.skip(why)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from privest.cli import main

    # A page's snippets may open figures (audit plots, tradeoff curves) and leave them open, as
    # a user's script would; close them per page so that the pages stay independent.
    plt.close("all")

    monkeypatch.chdir(tmp_path)
    _fake_wine(tmp_path / "path" / "to" / "wine-quality")
    namespace: dict = {"__name__": "__docs__"}
    for line, lang, code in blocks(page):
        what = kind(lang, code)
        if what == "python":
            try:
                exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - report the block that failed
                pytest.fail(f"{page.name}:{line}: {type(exc).__name__}: {exc}")
        elif what == "cli":
            for cmd in _commands(code):
                code_ = main(shlex.split(cmd)[1:])
                err = capsys.readouterr().err
                assert code_ == 0, f"{page.name}:{line}: `{cmd}` exited {code_}: {err}"
