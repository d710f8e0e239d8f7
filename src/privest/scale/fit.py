"""The Dask backend of the corrected-loss fits (paper 000, Secs. 4-6; docs/scale-out.md).

A :class:`~privest.scale.DaskRelease` is fitted by the estimators' own strategy
(:func:`~privest.learn.fitting.fit_objective`: starts, subsample-then-polish, solvers,
standard errors); this module only implements, for it, the objective protocol of the core
(:class:`~privest.learn.objective.Objective`), registered for
:func:`~privest.learn.objective.corrected_objective`. Each chunk of the release builds the
in-memory :class:`~privest.learn.objective.CorrectedObjective` of its own records (the
library's loss objects, unchanged) and returns its sums; the sums are added up on the
cluster by a tree reduction, so only numbers, p-vectors and p x p matrices reach the
client, never a record. Value, gradient and Hessian come together in one pass, which is
cached at its point (an accepted Newton step costs one pass). A subsample is the largest
chunk (thinned to evenly spaced records if larger than the subsample size), fitted on its
worker (only its solutions, p-vectors, come back). Exact percentiles
of per-record quantities (the kernel bandwidth of check and hinge losses) are found by the
distributed selection of :mod:`privest.scale.nonsmooth`.

IWP-SGD (paper 004, Alg. 1) on examples held as Dask arrays (a
:class:`~privest.release.examples.PrivateExamples` whose ``X`` and ``y`` are Dask arrays,
e.g. from :func:`~privest.scale.examples.load_examples_dask`): the estimators' own ``fit``
and ``partial_fit`` run, with this module's implementations of the core's
:func:`~privest.learn.iwp_core.example_sums` (partition sums) and
:func:`~privest.learn.iwp_core.stream_examples` (the loop's state passed from partition to
partition as a chain of tasks, each run where its partition is, a batch that straddles two
partitions carried with the state): the same run as in memory, the records never reaching
the client.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from privest.errors import ValidationError
from privest.learn.design import AnalysisData, analysis_data
from privest.learn.iwp_core import SGDPlan, SGDState, example_sums, sgd_block, stream_examples
from privest.learn.losses import Loss
from privest.learn.objective import CorrectedObjective, corrected_objective
from privest.release.zil import ZILRelease
from privest.scale.dask_release import DaskRelease, _metadata
from privest.scale.nonsmooth import exact_percentiles

__all__ = ["DaskObjective", "KEEP_SHARE", "cluster_memory", "partial_fit_stream"]


def _chunk_objective(
    x1: np.ndarray, x2: np.ndarray, spec: dict[str, Any], method: str
) -> CorrectedObjective:
    """The in-memory corrected objective of one chunk's records."""
    rel = ZILRelease(x1=x1, x2=x2, **spec["meta"])
    ad = analysis_data(rel, spec["y"], spec["features"])
    return CorrectedObjective(spec["loss"], ad, method)


def _chunk_apply(
    x1: np.ndarray, x2: np.ndarray, spec: dict[str, Any], method: str, func: Any, args: tuple
) -> Any:
    """``func`` of one chunk's corrected objective (on its worker)."""
    return func(_chunk_objective(x1, x2, spec, method), *args)


def _subsample_apply(obj: CorrectedObjective, size: int, func: Any, *args: Any) -> Any:
    """``func`` of at most ``size`` evenly spaced records of one chunk (on its worker)."""
    return obj.on_subsample(size, func, *args) if obj.n > size else func(obj, *args)


def _chunk_sums(obj: CorrectedObjective, theta: np.ndarray, what: str) -> dict[str, Any]:
    """Sums over one chunk: ``"derivs"`` (value, gradient, Hessian) or ``"scores"`` (sum and
    outer-product sum of the per-record scores psi_i)."""
    n = obj.n
    if n == 0:
        return {"n": 0}
    if what == "scores":
        psi = obj.scores(theta)
        return {"n": n, "s1": psi.sum(axis=0), "s2": psi.T @ psi}
    f, g = obj.value_and_grad(theta)
    return {"n": n, "f": f * n, "g": g * n, "h": obj.hess(theta) * n}


def _add(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    if a["n"] == 0:
        return b
    if b["n"] == 0:
        return a
    return {k: a[k] + b[k] for k in a}


def _tree_sum(parts: list[Any], combine: Any = None) -> Any:
    """Pairwise sums (or ``combine``) as delayed tasks: the reduction runs on the cluster."""
    while len(parts) > 1:
        add = dask.delayed(combine or _add, pure=True)
        pairs = [parts[i : i + 2] for i in range(0, len(parts), 2)]
        parts = [add(*pair) if len(pair) == 2 else pair[0] for pair in pairs]
    return parts[0]


#: share of the workers' memory limit the release may take when it is kept for the passes
KEEP_SHARE = 0.5


def cluster_memory() -> int:
    """Bytes the fit's passes may use: the workers' memory limits summed (the default
    ``distributed`` client's cluster), or this machine's memory (Dask's local schedulers)."""
    import psutil

    try:
        from distributed import default_client

        workers = default_client().scheduler_info()["workers"].values()
    except (ImportError, ValueError):
        return int(psutil.virtual_memory().total)
    total = psutil.virtual_memory().total
    return int(sum(w.get("memory_limit") or total for w in workers))


class _Source:
    """The release's chunks for the passes of one fit, and the passes' diagnostics.

    A public rule on the release's size (``2 x n x d x 8`` bytes) decides where the records
    are during the passes: kept in worker memory (read from the store once, ``dask.persist``,
    at the first pass) when they take at most :data:`KEEP_SHARE` of :func:`cluster_memory`;
    otherwise every pass reads each part from the store again (sha-checked), so the workers
    hold one part at a time and never spill. The fit is the same either way."""

    def __init__(self, release: DaskRelease) -> None:
        self.release = dataclasses.replace(release, ids=None)
        self.kept = 2 * release.n * release.d * 8 <= KEEP_SHARE * cluster_memory()
        self._blocks: list[tuple[Any, Any]] | None = None
        self.passes = 0
        self.seconds = 0.0  # wall time of the passes

    @property
    def blocks(self) -> list[tuple[Any, Any]]:
        if self._blocks is None:
            x1, x2 = self.release.x1, self.release.x2
            if self.kept:
                x1, x2 = dask.persist(x1, x2)
            # unoptimised: x1 and x2 of a chunk then share one read of its store part
            x1s, x2s = (a.to_delayed(optimize_graph=False).ravel() for a in (x1, x2))
            self._blocks = list(zip(x1s, x2s, strict=True))
        return self._blocks

    def compute(self, graph: Any) -> Any:
        start = time.perf_counter()
        out = dask.compute(graph)[0]
        self.passes += 1
        self.seconds += time.perf_counter() - start
        return out


class DaskObjective:
    """The corrected objective of ``method`` on a Dask-backed release, as mean over records
    (the core's :class:`~privest.learn.objective.Objective` protocol).

    ``derivs(theta)`` is one pass over the chunks and caches its point, so a line search
    that accepts a point leaves the next iteration's derivatives already computed.
    """

    in_memory = False
    where = "partition sums (Dask)"

    def __init__(
        self,
        loss: Loss,
        release: DaskRelease | _Source,
        method: str,
        y: Any,
        features: Sequence[str] | None,
    ) -> None:
        if y is not None and not isinstance(y, str):
            raise ValidationError(
                "y: a Dask-backed release takes the response as a column name of the release "
                "(an array would have to be sent to every worker)"
            )
        source = release if isinstance(release, _Source) else _Source(release)
        self.source = source
        self.spec = {
            "meta": _metadata(source.release),
            "loss": loss,
            "y": y,
            "features": None if features is None else list(features),
        }
        self.method = method
        self.loss = loss
        self.n = source.release.n
        empty = np.zeros((0, source.release.d))
        self.data: AnalysisData = _chunk_objective(empty, empty, self.spec, method).data
        self.p = loss.n_params(self.data.d)
        self._cached: tuple[np.ndarray, tuple] | None = None

    def with_method(self, method: str) -> DaskObjective:
        """The objective of another method on the same chunks (passes counted together)."""
        if method == self.method:
            return self
        return DaskObjective(self.loss, self.source, method, self.spec["y"], self.spec["features"])

    def _tasks(self, func: Any, args: tuple, blocks: list | None = None) -> list[Any]:
        spec = dask.delayed(self.spec, traverse=False)
        return [
            dask.delayed(_chunk_apply, pure=True)(b1, b2, spec, self.method, func, args)
            for b1, b2 in (self.source.blocks if blocks is None else blocks)
        ]

    def reduce(self, func: Callable[..., dict], *args: Any, combine: Any = None) -> dict:
        """One pass: ``func(chunk objective, *args)`` (a dict with the chunk's ``"n"``) on
        every chunk, added up (or merged by ``combine``) on the cluster."""
        return self.source.compute(_tree_sum(self._tasks(func, args), combine))

    def map_chunks(self, func: Any, *args: Any) -> list[Any]:
        """One pass: ``func(chunk objective, *args)`` of every chunk, to the client."""
        return self.source.compute(self._tasks(func, args))

    def percentiles(self, values: Callable[..., np.ndarray], qs: Any, *args: Any) -> Any:
        """Exact ``np.percentile`` of ``values(chunk objective, *args)`` over all records."""
        return exact_percentiles(self, values, np.asarray(qs, dtype=float), *args)

    def on_subsample(self, size: int, func: Callable[..., Any], *args: Any) -> Any:
        """``func`` of the largest chunk's objective (at most ``size`` evenly spaced records
        of it), run on its worker."""
        k = int(np.argmax(self.source.release.x1.chunks[0]))
        task = self._tasks(_subsample_apply, (size, func, *args), [self.source.blocks[k]])[0]
        return dask.compute(task)[0]

    def derivs(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Mean value, gradient (p,) and symmetric Hessian (p, p) at ``theta``."""
        if self._cached is not None and np.array_equal(self._cached[0], theta):
            return self._cached[1]
        s = self.reduce(_chunk_sums, np.array(theta, dtype=float), "derivs")
        h = s["h"] / self.n
        out = (float(s["f"] / self.n), s["g"] / self.n, 0.5 * (h + h.T))
        self._cached = (np.array(theta, dtype=float), out)
        return out

    def value(self, theta: np.ndarray) -> float:
        return self.derivs(theta)[0]

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        f, g, _ = self.derivs(theta)
        return f, g

    def grad(self, theta: np.ndarray) -> np.ndarray:
        return self.derivs(theta)[1]

    def hess(self, theta: np.ndarray) -> np.ndarray:
        return self.derivs(theta)[2]

    def score_cov(self, theta: np.ndarray) -> np.ndarray:
        """A_hat: the centred covariance of the per-record scores, from their sums."""
        s = self.reduce(_chunk_sums, np.array(theta, dtype=float), "scores")
        mean = s["s1"] / self.n
        return s["s2"] / self.n - np.outer(mean, mean)

    def diagnostics(self) -> dict[str, Any]:
        """``passes_`` (passes over all records, every method's), ``pass_seconds_`` (their
        wall time), ``records_in_memory_`` (kept in worker memory, or read on each pass)."""
        src = self.source
        return {
            "records_in_memory_": src.kept,
            "passes_": src.passes,
            "pass_seconds_": src.seconds,
        }


@corrected_objective.register
def _dask_objective(
    data: DaskRelease,
    y: Any,
    loss: Loss,
    method: str,
    *,
    features: Sequence[str] | None = None,
    n_draws: int = 1,
    rng: Any = None,
) -> DaskObjective:
    """A Dask-backed release's objective; what it cannot do is refused before any pass."""
    if method == "oracle":
        raise ValidationError("method='oracle' fits raw data; a Dask-backed release is released")
    if n_draws != 1:
        raise ValidationError("n_draws > 1 is not available out of core; use n_draws=1")
    return DaskObjective(loss, data, method, y, features)


def _example_blocks(X: da.Array, y: Any) -> list[tuple[Any, Any]]:
    if not isinstance(y, da.Array) or X.chunks[0] != y.chunks[0]:
        raise ValidationError("X, y: must be Dask arrays chunked alike by rows")
    xs, ys = (a.to_delayed(optimize_graph=False).ravel() for a in (X, y))  # one read each
    return list(zip(xs, ys, strict=True))


@example_sums.register
def _example_sums_dask(X: da.Array, y: Any, intercept: bool, gram: bool) -> dict[str, Any]:
    """The in-memory sums of each partition, added up on the cluster (one pass)."""
    parts = [
        dask.delayed(example_sums, pure=True)(xb, yb, intercept, gram)
        for xb, yb in _example_blocks(X, y)
    ]
    return dask.compute(_tree_sum(parts))[0]


@stream_examples.register
def _stream_examples_dask(
    X: da.Array, y: Any, plan: SGDPlan, state: SGDState, passes: int, progress: Any = None
) -> SGDState:
    """The loop over the partitions in order, ``passes`` times: each step a task on the
    partition's worker taking the state from the previous one (no progress bar: the loop
    runs on the workers)."""
    blocks = _example_blocks(X, y)
    settings = dask.delayed(plan, traverse=False)
    st: Any = dask.delayed(state, traverse=False)
    for _ in range(passes):
        for k, (xb, yb) in enumerate(blocks):
            st = dask.delayed(sgd_block, pure=False)(settings, st, xb, yb, k == len(blocks) - 1)
    return dask.compute(st)[0]


def _partial_fit_part(est: Any, x: np.ndarray, y: np.ndarray, template: Any, kwargs: dict) -> Any:
    """One ``partial_fit`` of ``est`` on a partition's examples (on the partition's worker)."""
    est.partial_fit(dataclasses.replace(template, X=x, y=y), **kwargs)
    return est


def partial_fit_stream(est: Any, examples: Any, X: Any, y: Any, **kwargs: Any) -> Any:
    """Stream the partitions of a Dask-held example release through ``est.partial_fit``
    (IWP-SGD, paper 004, Alg. 1): ``X`` (n, p) and ``y`` (n,) are Dask arrays chunked
    alike by rows; ``examples`` a :class:`~privest.release.examples.PrivateExamples` of the
    same release giving its public parameters (its own X and y are not read). The estimator
    travels from partition to partition as a chain of tasks, each run where its partition
    is; the records never leave the workers. Returns the fitted estimator (a copy: the
    one passed is not changed); the same as calling ``partial_fit`` on the partitions in
    order in memory."""
    import copy

    xs, ys = (a.to_delayed(optimize_graph=False).ravel() for a in (X, y))  # one read each
    if len(xs) != len(ys) or X.chunks[0] != y.chunks[0]:
        raise ValidationError("X, y: must be Dask arrays chunked alike by rows")
    template = dataclasses.replace(examples, X=np.zeros((0, X.shape[1])), y=np.zeros(0))
    state: Any = copy.deepcopy(est)
    for xb, yb in zip(xs, ys, strict=True):
        state = dask.delayed(_partial_fit_part, pure=False)(state, xb, yb, template, kwargs)
    return dask.compute(state)[0]
