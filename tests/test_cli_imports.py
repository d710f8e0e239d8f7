"""A successful ``privest stat`` mean or count imports no module it does not call: scipy
(and numpy.testing / numpy.f2py, which scipy's array-API layer imports) comes in only where
a function needs it (issue 31, CLI start-up; benchmarks/README.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

LAZY = ("scipy", "numpy.testing", "numpy.f2py")

_CODE = """
import sys
from privest.cli import main
status = main(['stat', PATH, '--column', 'x', '--epsilon', '1', '--bounds', '0:100', *ARGS])
print('imported:', status, *[m for m in LAZY if m in sys.modules])
"""


def _stat(tmp_path, args: list[str]) -> list[str]:
    path = tmp_path / "d.csv"
    path.write_text("x\n" + "".join(f"{i % 97}.5\n" for i in range(200)), encoding="utf-8")
    code = (
        _CODE.replace("PATH", repr(str(path)))
        .replace("ARGS", repr(args))
        .replace("LAZY", repr(LAZY))
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()[-1].split()[1:]


@pytest.mark.parametrize(
    "args", [["--stat", "mean"], ["--stat", "count", "--where", "0:50"]], ids=["mean", "count"]
)
def test_a_successful_mean_or_count_imports_no_scipy(tmp_path, args):
    assert _stat(tmp_path, [*args, "--seed", "1"]) == ["0"]


def test_control_the_check_sees_scipy_where_a_release_needs_it(tmp_path):
    # the median's lattice mechanism normalises with scipy.special.logsumexp
    assert _stat(tmp_path, ["--stat", "median", "--seed", "1"])[:2] == ["0", "scipy"]


#: modules a release may import that call scipy only inside the functions that need it
LIBRARY = (
    "privest.accounting",
    "privest.validation",
    "privest.models.statistics",
    "privest.mechanisms.smooth_sensitivity",
    "privest.mechanisms.approximate",
    "privest.mechanisms.eptr",
)


def test_the_library_modules_of_a_release_import_neither_pandas_nor_scipy():
    code = (
        f"import sys\nimport {', '.join(LIBRARY)}\n"
        "print(*[m for m in ('pandas', *LAZY) if m in sys.modules])"
    ).replace("LAZY", repr(LAZY))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == []
    # control: the same check names a module that is imported
    ctl = subprocess.run(
        [sys.executable, "-c", code.replace("privest.accounting,", "privest.accounting, scipy,")],
        capture_output=True,
        text=True,
    )
    assert ctl.stdout.split()[:1] == ["scipy"], ctl.stderr[-2000:]
