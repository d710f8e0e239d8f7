"""Replication loops of the paper reproductions: Monte Carlo summaries and chunked runs over
worker processes (the solvers live in :mod:`privest.learn.batched`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np

from privest.progress import progress_bar

__all__ = ["map_chunks", "rmse_se"]


def rmse_se(err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column RMSE of ``err`` (R, k) and its Monte Carlo SE ``sd(e^2) / (2 RMSE sqrt(R))``."""
    e2 = np.asarray(err, dtype=float) ** 2
    r = e2.shape[0]
    rmse = np.sqrt(e2.mean(axis=0))
    sd = e2.std(axis=0, ddof=1) if r > 1 else np.full(e2.shape[1:], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = sd / (2.0 * rmse * math.sqrt(r))
    return rmse, se


def map_chunks(
    func: Callable[..., Any],
    tasks: Sequence[tuple],
    workers: int = 2,
    progress: bool = True,
    description: str = "replicates",
) -> list[Any]:
    """``[func(*t) for t in tasks]``, over ``workers`` processes, with a transient progress bar.

    Results come back in task order; each task carries its own spawned generator, so the
    numbers do not depend on ``workers``.
    """
    bar = progress_bar(progress)
    results: list[Any] = [None] * len(tasks)
    if workers <= 1 or len(tasks) <= 1:
        with bar:
            job = bar.add_task(description, total=len(tasks))
            for i, t in enumerate(tasks):
                results[i] = func(*t)
                bar.advance(job)
        return results
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # submit (and so fork the workers) before the progress bar starts its thread
        futures = {pool.submit(_single_thread_call, func, t): i for i, t in enumerate(tasks)}
        with bar:
            job = bar.add_task(description, total=len(tasks))
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                bar.advance(job)
    return results


def _single_thread_call(func: Callable[..., Any], args: Iterable[Any]) -> Any:
    """Run ``func(*args)`` with one BLAS thread (two worker processes share two cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return func(*args)
    with threadpool_limits(limits=1):
        return func(*args)
