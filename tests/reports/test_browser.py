"""The report in a real browser (headless Chromium): the figures render, nothing fails to
load, no script error occurs, the page fits a phone's width, it prints, and a screenshot
is not blank. Each check has a negative control on a broken page.

Without Chromium the tests skip and say why, except where ``PRIVEST_REQUIRE_BROWSER=1``
(CI: ``.ci/run`` installs Debian's chromium), where its absence fails.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import privest as pv

from .test_report import make_sources

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: a probe run before the page: records load errors, every figure's size, and overflow
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) {
  window.__errors.push(String(e.message || (e.target && e.target.tagName) || "error"));
}, true);
window.addEventListener("load", function () {
  var figs = Array.prototype.map.call(document.querySelectorAll("img"), function (img) {
    var r = img.getBoundingClientRect();
    return {w: img.naturalWidth, h: img.naturalHeight, rw: r.width, rh: r.height};
  });
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({errors: window.__errors, figures: figs,
    scroll: document.documentElement.scrollWidth, inner: window.innerWidth});
  document.body.appendChild(out);
});
</script>"""


def _browser() -> str:
    found = next((p for p in map(shutil.which, CANDIDATES) if p), None)
    if found is None:
        msg = (
            "no Chromium found (looked for " + ", ".join(CANDIDATES) + "); install Debian's "
            "chromium (apt-get install -y --no-install-recommends chromium) to run this test"
        )
        if os.environ.get("PRIVEST_REQUIRE_BROWSER") == "1":
            pytest.fail(msg + " (PRIVEST_REQUIRE_BROWSER=1)")
        pytest.skip(msg)
    return found


def _run(browser: str, tmp: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={tmp / 'profile'}",
        "--virtual-time-budget=10000",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def _probe(browser: str, tmp: Path, page: Path, width: int) -> dict:
    """The probe's findings for ``page`` in a viewport ``width`` pixels wide: the page runs
    in an iframe of that width (headless windows are at least 500 wide), given as srcdoc
    so that the host may read the probe's findings."""
    inner = html.escape(page.read_text().replace("<head>", "<head>" + PROBE, 1), quote=True)
    host = tmp / f"host-{width}-{page.name}"
    host.write_text(
        f'<!DOCTYPE html><html><body style="margin:0"><iframe id="f" width="{width}" '
        f'height="900" style="border:0" srcdoc="{inner}"></iframe><script>'
        'document.getElementById("f").addEventListener("load", function () {'
        'var p = document.createElement("pre"); p.id = "probe";'
        'p.textContent = this.contentDocument.getElementById("probe").textContent;'
        "document.body.appendChild(p); });</script></body></html>"
    )
    run = _run(browser, tmp, host, "--window-size=1400,1000", "--dump-dom")
    found = re.search(r'<pre id="probe">(.*?)</pre>', run.stdout, flags=re.S)
    assert found is not None, run.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def _renders(result: dict, n_figures: int) -> bool:
    figs = result["figures"]
    return (
        not result["errors"]
        and len(figs) == n_figures
        and all(f["w"] > 0 and f["h"] > 0 and f["rw"] > 50 and f["rh"] > 50 for f in figs)
    )


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    ledger, store, plan = make_sources(folder)
    return pv.report([ledger, store], folder / "report.html", plan=plan)


@pytest.mark.slow
def test_figures_render_without_errors_on_a_desktop_and_a_phone(report_page, tmp_path):
    browser = _browser()
    desktop = _probe(browser, tmp_path, report_page, 1200)
    assert _renders(desktop, 4), desktop
    phone = _probe(browser, tmp_path, report_page, 390)
    assert _renders(phone, 4), phone
    assert phone["scroll"] <= phone["inner"], phone  # nothing wider than the phone
    assert phone["inner"] == 390 and all(f["rw"] <= 390 for f in phone["figures"])
    # negative control: a broken figure, a failing script and a too-wide table are seen
    bad = tmp_path / "bad.html"
    bad.write_text(
        report_page.read_text()
        .replace("base64,", "base64,AAAA", 1)
        .replace("</body>", "<script>undefined_function();</script></body>")
        .replace('<div class="scroll">', '<div style="width: 2000px">', 1)
    )
    broken = _probe(browser, tmp_path, bad, 390)
    assert not _renders(broken, 4)
    assert any("undefined_function" in e for e in broken["errors"])
    assert broken["scroll"] > broken["inner"]


@pytest.mark.slow
def test_screenshot_is_not_blank_and_the_page_prints(report_page, tmp_path):
    import matplotlib.image

    browser = _browser()
    shot = tmp_path / "shot.png"
    _run(browser, tmp_path, report_page, "--window-size=1000,1400", f"--screenshot={shot}")
    pixels = matplotlib.image.imread(shot)[..., :3]
    ink = np.mean(pixels.min(axis=-1) < 0.9)  # share of pixels that are not near white
    assert 0.02 < ink < 0.8, ink
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    _run(browser, tmp_path, blank, "--window-size=1000,1400", f"--screenshot={shot}")
    assert np.mean(matplotlib.image.imread(shot)[..., :3].min(axis=-1) < 0.9) < 0.02
    pdf = tmp_path / "report.pdf"
    _run(browser, tmp_path, report_page, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", data)) >= 2
