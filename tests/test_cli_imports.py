"""A successful ``privest stat`` mean or count imports no module it does not call: scipy
(and numpy.testing / numpy.f2py, which scipy's array-API layer imports) comes in only where
a function needs it, and pandas only where the CSV file is not plain enough to be read
without it (privest.commands._column) (issue 31, CLI start-up; benchmarks/README.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

LAZY = ("scipy", "numpy.testing", "numpy.f2py")
#: what a call may import only where it needs it: the above, and pandas
CALLED = (*LAZY, "pandas")

_CODE = """
import sys
PRE
from privest.cli import main
status = main(['stat', PATH, '--column', 'x', '--epsilon', '1', '--bounds', '0:100', *ARGS])
print('imported:', status, *[m for m in LAZY if m in sys.modules])
"""


def _stat(tmp_path, args: list[str], cell: str = "", pre: str = "") -> list[str]:
    """The exit status of ``privest stat`` and the modules of :data:`CALLED` it imported;
    ``cell`` is the first record (default a number like the others); ``pre``: code run
    first in the process."""
    path = tmp_path / "d.csv"
    rows = [cell or "1.5", *(f"{i % 97}.5" for i in range(199))]
    path.write_text("x\n" + "".join(f"{r}\n" for r in rows), encoding="utf-8")
    code = (
        _CODE.replace("PRE", pre)
        .replace("PATH", repr(str(path)))
        .replace("ARGS", repr(args))
        .replace("LAZY", repr(CALLED))
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()[-1].split()[1:]


@pytest.mark.parametrize(
    "args",
    [
        ["--stat", "mean"],
        ["--stat", "sum"],
        ["--stat", "variance"],
        ["--stat", "count", "--where", "0:50"],
    ],
    ids=["mean", "sum", "variance", "count"],
)
def test_a_successful_mean_sum_variance_or_count_imports_neither_scipy_nor_pandas(tmp_path, args):
    assert _stat(tmp_path, [*args, "--seed", "1"]) == ["0"]


def test_a_quoted_number_is_read_without_pandas(tmp_path):
    assert _stat(tmp_path, ["--stat", "mean", "--seed", "1"], '"1.5"') == ["0"]


@pytest.mark.parametrize("cell", ["1e1", "1.5000000000000001", '"1e1"'])
def test_control_a_file_that_is_not_plain_is_read_with_pandas(tmp_path, cell):
    # pandas accepts these cells (an exponent, 17 digits, a quoted exponent)
    assert _stat(tmp_path, ["--stat", "mean", "--seed", "1"], cell) == ["0", "pandas"]


def test_a_median_with_its_interval_imports_neither_scipy_nor_pandas(tmp_path):
    # the lattice law's normalisation (scipy.special.logsumexp) is the law's, not a release's
    assert _stat(tmp_path, ["--stat", "median", "--seed", "1"]) == ["0"]


def test_control_the_check_sees_scipy_where_the_process_imports_it(tmp_path):
    got = _stat(tmp_path, ["--stat", "median", "--seed", "1"], pre="import scipy.special")
    assert got[:2] == ["0", "scipy"]


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
