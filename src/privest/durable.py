"""Durable files shared by the release store and the budget ledger.

Both hold state that a privacy guarantee rests on (which records were released, how much
budget was spent), so both follow the same rules: every read-check-write runs under an
exclusive file lock (released by the operating system if the process dies), and a file is
replaced atomically: written to a temporary in the same folder, flushed to disk (fsync),
renamed over the old one, and the folder fsynced, so a crash leaves the old or the new
file, never a torn one. A file reached through a symbolic link is the link's target (one
lock, one file replaced); a file with several names (hard links) is refused, since an
atomic replace through one name would leave the others on the old file.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["exclusive_lock", "fsync_dir", "real_file", "staged_folder", "write_json_atomic"]


def fsync_dir(path: Path) -> None:
    """Flush a folder's entries (a rename or a new file in it) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def staged_folder(path: Path) -> Iterator[Path]:
    """A new folder ``path``, written under a temporary sibling name (yielded) and renamed
    into place in one step when the block succeeds, after the folder is fsynced (and its
    parent after the rename); removed on any error, so a reader sees all of it or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}-"))
    try:
        yield tmp
        fsync_dir(tmp)
        os.rename(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json_atomic(path: Path, obj: Any) -> None:
    """Replace ``path`` by the JSON of ``obj`` atomically and durably (module docstring).

    The temporary is ``.<stem>-<pid>.tmp`` beside ``path``; a writer killed before the
    rename leaves only that, which the owners clean up.
    """
    tmp = path.parent / f".{path.stem}-{os.getpid()}.tmp"
    try:
        with open(tmp, "w") as fh:
            json.dump(obj, fh, indent=2, allow_nan=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def real_file(path: Path, what: str) -> Path:
    """The one file behind ``path`` (module docstring): symbolic links resolved, and
    :class:`~privest.errors.StoreError` when the file has other names (hard links)."""
    from privest.errors import StoreError

    real = Path(os.path.realpath(path))
    try:
        names = real.stat().st_nlink
    except FileNotFoundError:
        return real
    if names > 1:
        raise StoreError(
            f"{what}: {str(path)!r} has {names} names (hard links); each would become a "
            "separate file at the next write. Keep one name (remove the others), or use a "
            "symbolic link"
        )
    return real


@contextmanager
def exclusive_lock(lock_path: Path, timeout: float, busy: Exception) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path``; raise ``busy`` after ``timeout`` seconds."""
    from filelock import FileLock, Timeout

    try:
        with FileLock(lock_path, timeout=timeout):
            yield
    except Timeout:
        raise busy from None
