"""Corrected-loss fits of a :class:`~privest.scale.DaskRelease` out of core (paper 000, Sec. 4-6).

The corrected objective, its gradient and Hessian, and the score outer products of the
sandwich (Thm 5.3) are sums over records. Each chunk of the release builds the in-memory
:class:`~privest.learn.objective.CorrectedObjective` of its own records (the library's
loss objects, unchanged) and returns its sums; the sums are added up on the cluster by a
tree reduction, so only numbers, p-vectors and p x p matrices reach the client, never a
record. The solver is the in-memory one: :func:`~privest.learn.batched.paths.corrected_newton`
(naive -> SDR -> DR from both starts) over :func:`~privest.learn.batched.newton.newton_box`,
with a problem object whose every evaluation is one pass over the chunks (value, gradient
and Hessian together, so an accepted Newton step costs one pass). Above
:data:`~privest.learn.solvers.SUBSAMPLE_ABOVE` records, as in memory, the multi-start
strategy runs on a part of the data (the largest chunk, on its worker) and Newton on all
records polishes its estimate. See docs/scale-out.md.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Sequence
from typing import Any

import dask
import numpy as np

from privest.errors import ValidationError
from privest.learn.batched.newton import newton_box
from privest.learn.design import AnalysisData, analysis_data
from privest.learn.inference import IndefiniteHessianError, sandwich
from privest.learn.losses import HingeLoss, Loss, QuantileRegressionLoss
from privest.learn.objective import CorrectedObjective
from privest.learn.solvers import (
    SUBSAMPLE_ABOVE,
    ConvergenceWarning,
    Solution,
    _finish,
    _newton_solution,
)
from privest.release.zil import ZILRelease
from privest.scale.dask_release import DaskRelease, _metadata

__all__ = ["DaskObjective", "fit_dask", "partial_fit_stream"]


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


class DaskObjective:
    """The corrected objective of ``method`` on a Dask-backed release, as mean over records.

    ``derivs(theta)`` is one pass over the chunks and caches its point, so a line search
    that accepts a point leaves the next iteration's derivatives already computed.
    """

    def __init__(
        self,
        loss: Loss,
        release: DaskRelease,
        method: str,
        y: Any,
        features: Sequence[str] | None,
    ) -> None:
        if y is not None and not isinstance(y, str):
            raise ValidationError(
                "y: a Dask-backed release takes the response as a column name of the release "
                "(an array would have to be sent to every worker)"
            )
        self.spec = {
            "meta": _metadata(release),
            "loss": loss,
            "y": y,
            "features": None if features is None else list(features),
        }
        self.method = method
        self.loss = loss
        self.n = release.n
        # unoptimised: x1 and x2 of a chunk then share one read of its store part
        x1s, x2s = (a.to_delayed(optimize_graph=False).ravel() for a in (release.x1, release.x2))
        self.blocks = list(zip(x1s, x2s, strict=True))
        empty = np.zeros((0, release.d))
        self.header: AnalysisData = _chunk_objective(empty, empty, self.spec, method).data
        self.p = loss.n_params(self.header.d)
        self.passes = 0
        self.seconds = 0.0  # wall time of the passes
        self._cached: tuple[np.ndarray, tuple] | None = None

    def _tasks(self, func: Any, args: tuple) -> list[Any]:
        spec = dask.delayed(self.spec, traverse=False)
        return [
            dask.delayed(_chunk_apply, pure=True)(b1, b2, spec, self.method, func, args)
            for b1, b2 in self.blocks
        ]

    def _compute(self, graph: Any) -> Any:
        start = time.perf_counter()
        out = dask.compute(graph)[0]
        self.passes += 1
        self.seconds += time.perf_counter() - start
        return out

    def reduce(self, func: Any, *args: Any, combine: Any = None) -> dict[str, Any]:
        """One pass: ``func(chunk objective, *args)`` (a dict with the chunk's ``"n"``) on
        every chunk, added up (or merged by ``combine``) on the cluster."""
        return self._compute(_tree_sum(self._tasks(func, args), combine))

    def map_chunks(self, func: Any, *args: Any) -> list[Any]:
        """One pass: ``func(chunk objective, *args)`` of every chunk, to the client."""
        return self._compute(self._tasks(func, args))

    def _reduce(self, theta: np.ndarray, what: str) -> dict[str, Any]:
        return self.reduce(_chunk_sums, theta, what)

    def derivs(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Mean value, gradient (p,) and symmetric Hessian (p, p) at ``theta``."""
        if self._cached is not None and np.array_equal(self._cached[0], theta):
            return self._cached[1]
        s = self._reduce(np.array(theta, dtype=float), "derivs")
        h = s["h"] / self.n
        out = (float(s["f"] / self.n), s["g"] / self.n, 0.5 * (h + h.T))
        self._cached = (np.array(theta, dtype=float), out)
        return out

    def score_cov(self, theta: np.ndarray) -> np.ndarray:
        """A_hat: the centred covariance of the per-record scores (sandwich_cov's)."""
        s = self._reduce(np.array(theta, dtype=float), "scores")
        mean = s["s1"] / self.n
        return s["s2"] / self.n - np.outer(mean, mean)


class _BatchOfOne:
    """A :class:`DaskObjective` in the batched Newton solver's form (R = 1)."""

    n_reps = 1

    def __init__(self, obj: DaskObjective) -> None:
        self.obj = obj

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        return np.array([self.obj.derivs(theta[0])[0]])

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f, g, h = self.obj.derivs(theta[0])
        return np.array([f]), g[None], h[None]

    def subset(self, idx: np.ndarray) -> _BatchOfOne:
        return self


def _check_supported(est: Any, loss: Loss) -> None:
    if est.method == "oracle":
        raise ValidationError("method='oracle' fits raw data; a Dask-backed release is released")
    if est.n_draws != 1:
        raise ValidationError("n_draws > 1 is not available out of core; use n_draws=1")
    if est.inference == "bootstrap":
        raise ValidationError(
            "inference='bootstrap' is not available out of core; use 'sandwich' or 'none'"
        )
    if not (loss.smooth_in_theta or _kinked(loss)):
        raise ValidationError(
            f"{loss.name}: out-of-core fits need a loss with an analytic Hessian in theta "
            "(logistic, linear and other smooth losses) or the check or hinge loss; fit "
            "other nonsmooth losses in memory (release.compute())"
        )


def _kinked(loss: Loss) -> bool:
    """Check and hinge losses: fitted out of core by smoothing continuation."""
    return isinstance(loss, (QuantileRegressionLoss, HingeLoss))


def _chunk_fit(x1: np.ndarray, x2: np.ndarray, spec: dict[str, Any], est: Any, box) -> tuple:
    """The in-memory fit's multi-start strategy on one chunk's records (on its worker)."""
    obj = _chunk_objective(x1, x2, spec, est.method)
    sol = est._solve(obj, spec["loss"], obj.data, box)
    return sol.theta, sol.starts


def _polish_from_chunk(
    est: Any, release: DaskRelease, target: DaskObjective, box: np.ndarray
) -> Solution:
    """Large data, as in memory: the multi-start strategy runs where the largest chunk is
    (only its estimate, a p-vector, comes back), then Newton on all records from it."""
    sizes = release.x1.chunks[0]
    k = int(np.argmax(sizes))
    b1, b2 = target.blocks[k]
    spec = dask.delayed(target.spec, traverse=False)
    theta, starts = dask.compute(dask.delayed(_chunk_fit)(b1, b2, spec, est, box))[0]
    fit = newton_box(_BatchOfOne(target), theta[None], box[:, 0], box[:, 1])
    sol = _finish(_newton_solution(fit), box)
    sol.starts = starts
    return sol


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


def _keep_on_workers(release: DaskRelease) -> tuple[DaskRelease, bool]:
    """The release for the fit's passes, and whether its records stay in worker memory.

    A public rule on the release's size (``2 x n x d x 8`` bytes): kept (read from the store
    once, ``dask.persist``) when it takes at most :data:`KEEP_SHARE` of :func:`cluster_memory`;
    otherwise every pass reads each part from the store again (sha-checked), so the workers
    hold one part at a time and never spill. The fit is the same either way."""
    size = 2 * release.n * release.d * 8
    if size > KEEP_SHARE * cluster_memory():
        return dataclasses.replace(release, ids=None), False
    x1, x2 = dask.persist(release.x1, release.x2)
    return dataclasses.replace(release, x1=x1, x2=x2, ids=None), True


def fit_dask(est: Any, release: DaskRelease, y: Any = None) -> Any:
    """Fit the estimator ``est`` (a :class:`~privest.learn.estimators.DRMEstimator`) on a
    Dask-backed release: the in-memory strategy (naive -> SDR -> DR from the naive and SDR
    fits, the lower objective kept) with every evaluation a reduction over the chunks."""
    from privest.learn.batched.paths import corrected_newton

    loss = est._make_loss()
    _check_supported(est, loss)
    release, kept = _keep_on_workers(release)
    naive = DaskObjective(loss, release, "naive", y, est.features)
    head = naive.header
    sdr_start = bool(loss.smooth_in_x and not head.y_noised)
    objs = {"naive": naive}
    if est.method == "sdr" or (est.method == "dr" and sdr_start):
        objs["sdr"] = DaskObjective(loss, release, "sdr", y, est.features)
    if est.method not in objs:
        objs[est.method] = DaskObjective(loss, release, est.method, y, est.features)
    target = objs[est.method]
    box = est._box(target.p)
    if _kinked(loss):
        from privest.scale.nonsmooth import smoothed_fit

        sol = _finish(smoothed_fit(loss, objs, est.method, box), box)
    elif release.n > SUBSAMPLE_ABOVE:
        sol = _polish_from_chunk(est, release, target, box)
    else:
        theta0 = np.clip(loss.initial_theta(head.d), box[:, 0], box[:, 1])[None]
        fits, _ = corrected_newton(
            lambda m: _BatchOfOne(objs[m]), [est.method], theta0, box[:, 0], box[:, 1], sdr_start
        )
        sol = _finish(_newton_solution(fits[est.method]), box)
        sol.starts = 2 if est.method == "dr" and sdr_start else 1
    if not _kinked(loss):
        sol.solver = "Newton on partition sums (Dask)"
    if not sol.converged:
        warnings.warn(
            f"Newton did not converge in {sol.n_iter} iterations (objective {sol.objective:.6g})",
            ConvergenceWarning,
            stacklevel=3,
        )
    est._set_solution(loss, sol, head, release.n, box, release.guarantee)
    cov = None
    est.inference_ = est.inference
    if est.inference == "sandwich":
        if _kinked(loss):
            from privest.scale.nonsmooth import kernel_hessian_dask

            v = kernel_hessian_dask(target, sol.theta)
        else:
            v = target.derivs(sol.theta)[2]
        a = target.score_cov(sol.theta)
        try:
            cov = sandwich(v, a, release.n)
        except IndefiniteHessianError as exc:
            raise IndefiniteHessianError(
                f"{exc}; the bootstrap is not available out of core: fit in memory"
            ) from None
        est.hessian_, est.score_cov_ = v, a
    # diagnostics: passes over all records (the standard errors' included) and their time
    est.records_in_memory_ = kept
    est.passes_ = sum(o.passes for o in objs.values())
    est.pass_seconds_ = sum(o.seconds for o in objs.values())
    est._set_results(cov, head, sol)
    return est


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
