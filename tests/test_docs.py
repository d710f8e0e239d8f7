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
