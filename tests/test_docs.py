"""The API reference builds offline from the docstrings (``make docs``, pdoc)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _api_modules() -> list[str]:
    """``API_MODULES`` of the Makefile: the modules ``make docs`` documents."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    match = re.search(r"^API_MODULES :=(.*)$", text, flags=re.MULTILINE)
    assert match is not None
    return match.group(1).split()


@pytest.mark.slow
def test_api_reference_builds(tmp_path):
    pytest.importorskip("pdoc")
    modules = _api_modules()
    assert modules[0] == "privest" and "privest.release" in modules
    subprocess.run(
        [sys.executable, "-m", "pdoc", "--docformat", "numpy", "-o", str(tmp_path), *modules],
        check=True,
        capture_output=True,
    )
    page = (tmp_path / "privest.html").read_text()
    assert "ZILMechanism" in page and "private_median" in page
    assert (tmp_path / "index.html").is_file()
    release = (tmp_path / "privest" / "release.html").read_text()
    assert "load_release" in release


#: a page cited as ``docs/NAME.md`` in code, docstrings, messages or the README
CITATION = re.compile(r"\bdocs/([A-Za-z0-9_.-]+\.md)\b")
#: a relative link between the docs pages, ``[text](NAME.md)`` or ``(NAME.png)``
LINK = re.compile(r"\]\(([A-Za-z0-9_.-]+\.(?:md|png))(?:#[^)]*)?\)")


def missing_citations(texts: dict[str, str], pattern: re.Pattern, folder: Path) -> list[str]:
    """``where: name`` for every name ``pattern`` finds in ``texts`` (a file name -> its
    text) that is not a file of ``folder``."""
    return sorted(
        {
            f"{where}: {name}"
            for where, text in texts.items()
            for name in pattern.findall(text)
            if not (folder / name).is_file()
        }
    )


def _sources() -> dict[str, str]:
    files = [*sorted((ROOT / "src").rglob("*.py")), ROOT / "README.md"]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}


def test_every_cited_docs_page_exists():
    texts = _sources()
    assert sum(len(CITATION.findall(t)) for t in texts.values()) > 50  # the pattern finds them
    assert missing_citations(texts, CITATION, ROOT / "docs") == []
    # negative control: a made-up page is flagged, with where it is cited
    fake = {"src/privest/x.py": '"""See docs/no-such-page.md and docs/accuracy.md."""'}
    assert missing_citations(fake, CITATION, ROOT / "docs") == ["src/privest/x.py: no-such-page.md"]


def test_links_between_docs_pages_resolve():
    pages = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))}
    assert sum(len(LINK.findall(t)) for t in pages.values()) > 10
    assert missing_citations(pages, LINK, ROOT / "docs") == []
    fake = {"index.md": "see [the plans](plans.md) and [the report](report.md#what)"}
    assert missing_citations(fake, LINK, ROOT / "docs") == ["index.md: plans.md"]


def unlisted(index: str, names: list[str]) -> list[str]:
    """The page names of ``names`` that ``index`` does not link to."""
    listed = set(LINK.findall(index))
    return [name for name in names if name not in listed]


def test_the_index_lists_every_page():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    names = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "index.md"]
    assert len(names) > 10 and unlisted(index, names) == []
    # negative control: an index without the report page's link misses it
    assert unlisted(index.replace("(report.md)", "(elsewhere)"), names) == ["report.md"]
