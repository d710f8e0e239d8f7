"""Progress bars for long runs (experiments, long fits): rich, on stderr, transient."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["progress_bar", "progress_iter"]


def progress_bar(enabled: bool = True) -> Any:
    """A ``rich.progress.Progress`` (description, bar, done/total, elapsed) on stderr that
    disappears when done; a no-op display when ``enabled`` is false."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not enabled,
    )


def progress_iter(
    items: Iterable[Any], description: str, enabled: bool = True, total: int | None = None
) -> Iterator[Any]:
    """Iterate over ``items`` with a progress bar (``total`` defaults to ``len(items)``)."""
    total = len(items) if total is None else total  # type: ignore[arg-type]
    with progress_bar(enabled) as bar:
        job = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(job)
