"""The judge of the hostile corpus (issue 30): every call answers or refuses at once.

A case is a call (API) or a command line (CLI) with what it should do: ``"refuse"`` (a
privest error; on the command line a one-line ``privest <command>: error: ...`` and exit
status 1 or 2), ``"answer"`` (a result that passes the case's check) or ``"either"`` (a
clear refusal or a checked answer). :func:`judge` returns one outcome:

* ``ok``;
* ``traceback``: an exception that is not privest's (API), a traceback, a raw Python
  warning or a multi-line error on the command line;
* ``hang``: more than :data:`CPU_LIMIT` seconds of CPU (stopped at :data:`WALL_LIMIT`
  seconds of wall time);
* ``silent_wrong``: a result where a refusal was due, or a result that fails its check;
* ``refused_valid``: a refusal of a request that should have been answered;
* ``data_in_message``: an error or warning that quotes a data value (the data carry
  :data:`SENTINEL` and :data:`SENTINEL_TEXT`);
* ``data_deleted``: a failed command that removed or changed a file of a store or ledger.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import signal
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SENTINEL = 987654.321
SENTINEL_TEXT = "SECRETXYZ"
LEAK = re.compile(r"987654|9\.87654e\+0?5|9\.876543|SECRETXYZ")
#: seconds of CPU a case may take (answer or refusal)
CPU_LIMIT = 1.0
#: seconds of wall time after which a case is stopped as a hang
WALL_LIMIT = 10.0
OUTCOMES = (
    "ok",
    "traceback",
    "hang",
    "silent_wrong",
    "refused_valid",
    "data_in_message",
    "data_deleted",
)
_RAW_WARNING = re.compile(r"\w+Warning: |^\s+warnings\.warn|\.py:\d+", re.M)
_ERROR_LINE = re.compile(r"^privest( \w+)?: error: \S")


@dataclass
class Case:
    """One hostile input: ``call()`` (API) or ``argv`` (CLI, run by :func:`run_cli`)."""

    name: str
    expect: str  # "refuse" | "answer" | "either"
    call: Callable[[], Any] | None = None
    argv: Sequence[str] | None = None
    check: Callable[[Any], bool] | None = None
    guarded: Sequence[Path] = field(default_factory=tuple)  # files a failure must not touch

    @property
    def kind(self) -> str:
        return "cli" if self.argv is not None else "api"


class _Stopped(BaseException):
    """Raised by the wall-clock alarm (a BaseException: no ``except Exception`` eats it)."""


@contextlib.contextmanager
def _deadline(seconds: float):
    def stop(*_: Any) -> None:
        raise _Stopped

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _snapshot(paths: Sequence[Path]) -> dict[str, str]:
    out = {}
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            if f.name.endswith(".lock"):
                continue
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def _deleted(before: dict[str, str]) -> list[str]:
    lost = []
    for name, digest in before.items():
        p = Path(name)
        if not p.is_file() or hashlib.sha256(p.read_bytes()).hexdigest() != digest:
            lost.append(p.name)
    return lost


def _privest_error(exc: BaseException) -> bool:
    from privest.errors import PrivestError

    return isinstance(exc, PrivestError)


def judge_api(case: Case) -> tuple[str, str]:
    """(outcome, detail) of an API case."""
    before = _snapshot(case.guarded)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.process_time()
        try:
            with _deadline(WALL_LIMIT):
                result, exc = case.call(), None
        except _Stopped:
            return "hang", f"no answer in {WALL_LIMIT:g} s"
        except Exception as e:  # noqa: BLE001 - judged below
            result, exc = None, e
        cpu = time.process_time() - t0
    texts = [str(w.message) for w in caught] + ([str(exc)] if exc is not None else [])
    if any(LEAK.search(t) for t in texts):
        return "data_in_message", next(t for t in texts if LEAK.search(t))[:200]
    if exc is not None and not _privest_error(exc):
        return "traceback", f"{type(exc).__name__}: {str(exc)[:150]}"
    if cpu > CPU_LIMIT:
        return "hang", f"{cpu:.2f} s of CPU"
    if exc is not None:
        lost = _deleted(before)
        if lost:
            return "data_deleted", f"{lost} after {type(exc).__name__}"
        if case.expect == "answer":
            return "refused_valid", f"{type(exc).__name__}: {str(exc)[:150]}"
        return "ok", f"{type(exc).__name__}: {str(exc)[:150]}"
    if case.expect == "refuse":
        return "silent_wrong", f"returned {_short(result)}"
    if case.check is not None and not case.check(result):
        return "silent_wrong", f"wrong answer {_short(result)}"
    return "ok", f"answer {_short(result)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def _show_on_stderr(message, category, filename, lineno, file=None, line=None) -> None:
    """Python's default display of a warning (a user's shell sees this)."""
    import sys

    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_cli(argv: Sequence[str]) -> tuple[int | None, str, str, BaseException | None]:
    """``privest ARGV`` in this process: (status, stdout, stderr, escaped exception)."""
    from privest.cli import main

    out, err = io.StringIO(), io.StringIO()
    exc = None
    status: int | None = None
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("default")
        warnings.showwarning = _show_on_stderr
        try:
            status = main(list(argv))
        except SystemExit as e:  # argparse
            status = e.code if isinstance(e.code, int) else 2
        except _Stopped:
            raise
        except BaseException as e:  # noqa: BLE001 - a traceback on the command line
            exc = e
    return status, out.getvalue(), err.getvalue(), exc


def judge_cli(case: Case) -> tuple[str, str]:
    """(outcome, detail) of a command-line case."""
    before = _snapshot(case.guarded)
    t0 = time.process_time()
    try:
        with _deadline(WALL_LIMIT):
            status, out, err, exc = run_cli(case.argv)
    except _Stopped:
        return "hang", f"no answer in {WALL_LIMIT:g} s"
    cpu = time.process_time() - t0
    if exc is not None:
        return "traceback", f"{type(exc).__name__}: {str(exc)[:150]}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    shown = err + (out if status != 0 else "")
    if LEAK.search(shown):
        return "data_in_message", LEAK.search(shown).group(0) + ": " + _first(shown)
    raw = [ln for ln in lines if _RAW_WARNING.search(ln) and not ln.startswith("privest")]
    if raw or "Traceback" in err:
        return "traceback", (raw or ["Traceback"])[0][:200]
    if cpu > CPU_LIMIT:
        return "hang", f"{cpu:.2f} s of CPU"
    if status != 0:
        lost = _deleted(before)
        if lost:
            return "data_deleted", f"{lost} after exit {status}"
        errors = [ln for ln in lines if _ERROR_LINE.match(ln)]
        if status not in (1, 2) or len(errors) != 1 or not lines[-1].startswith("privest"):
            return "traceback", f"exit {status}: {err[-200:]!r}"
        if case.expect == "answer":
            return "refused_valid", errors[0][:200]
        return "ok", errors[0][:200]
    if case.expect == "refuse":
        return "silent_wrong", f"exit 0: {_first(out)}"
    if case.check is not None and not case.check(out):
        return "silent_wrong", f"wrong answer: {_first(out)}"
    return "ok", "exit 0"


def _first(text: str) -> str:
    return " ".join(text.split())[:200]


def judge(case: Case) -> tuple[str, str]:
    return judge_cli(case) if case.kind == "cli" else judge_api(case)


def tally(cases: Sequence[Case]) -> tuple[dict[str, int], list[tuple[str, str, str]]]:
    """Counts per outcome, and (name, outcome, detail) of every case that is not ok."""
    counts = dict.fromkeys(OUTCOMES, 0)
    bad = []
    for case in cases:
        outcome, detail = judge(case)
        counts[outcome] += 1
        if outcome != "ok":
            bad.append((case.name, outcome, detail))
    return counts, bad
