"""The numerical core of IWP-SGD: :func:`sgd_replicated` (paper 004, Alg. 1).

theta_t = Proj(theta_{t-1} - gamma_t (mean_batch IWP_grad(theta_{t-1}) + alpha theta_{t-1})),
one pass over the release by default (Alg. 1; the sign typo of the paper's text is fixed,
A4 in docs/iwp-sgd.md, "Notes, errata and choices"). The defaults of this function are the
paper's (constant step, last iterate, no ridge, remainder batch dropped): the reproductions
in ``privest.experiments.iwp_*`` rely on them; the estimators in
:mod:`privest.learn.iwp_sgd` pass consistent defaults (docs/iwp-sgd.md, Sec. 3).

:func:`sgd_replicated` runs the loop for R replications at once (X of shape (R, n, p)): one
pair of small matrix products per batch for all replications. The loop is
:func:`sgd_block` over a run's :class:`SGDPlan` and its :class:`SGDState`: one block of
records at a time, in order, a batch that straddles two blocks carried over, so that a
release held in parts (a backend's partitions, :func:`stream_examples`) gives the same run
as the release in one array. One replication's fused step runs its batches in the compiled
pass of :mod:`~privest.learn.iwp_kernel` (the same iterates to the bit) once the process has
passed :data:`KERNEL_AFTER` records through the numpy step.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from privest.backends import dispatch
from privest.errors import ValidationError
from privest.learn.iwp_losses import (
    iwp_gradient,
    iwp_regression_gradient,
    plain_gradient,
)
from privest.learn.losses import get_margin_loss
from privest.learn.weierstrass import best_orders, inverse_weight
from privest.validation import check_positive

__all__ = [
    "AVERAGING",
    "METHODS",
    "SGDPath",
    "SGDPlan",
    "SGDState",
    "example_sums",
    "sgd_block",
    "sgd_replicated",
    "stream_examples",
]

METHODS = ("iwp", "naive", "oracle")
#: the records a process passes through the numpy fused step before it loads the compiled
#: pass (:mod:`~privest.learn.iwp_kernel`): about the CPU time of importing numba and loading
#: the cached pass (about 1.5 s) at the numpy step's Python cost per record (docs/iwp-sgd.md)
KERNEL_AFTER = 1 << 21
_KERNEL_MODULE = "privest.learn.iwp_kernel"
_numpy_records = 0
AVERAGING = (None, "polyak", "tail")


class SGDPath:
    """Output of :func:`sgd_replicated`: last iterate, averaged iterate and the trajectory."""

    def __init__(self, last, average, history, batches, orders, n_averaged=0, step_sum=0.0):
        self.last: np.ndarray = last  # (R, p)
        self.step_sum = step_sum  # sum of the steps taken (alpha * it: the start's decay)
        self.n_averaged = n_averaged  # iterates in ``average`` (0 = last iterate)
        self.average: np.ndarray = average  # (R, p), averaged per ``averaging``
        self.history: np.ndarray = history  # (T, R, p)
        self.batches: np.ndarray = batches  # (T,) batch index of each recorded iterate
        self.orders = orders


def _gradient_fn(
    method: str,
    task: str,
    loss: str,
    sigma2: float,
    epsilon_y: float,
    order: int | str,
    noised: np.ndarray | None = None,
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    if task == "regression":
        corrected = method == "iwp"
        return lambda th, Xb, yb: iwp_regression_gradient(th, Xb, yb, sigma2, corrected, noised)
    if method == "iwp":
        w = inverse_weight(epsilon_y)
        return lambda th, Xb, yb: iwp_gradient(
            th, Xb, yb, sigma2, epsilon_y, loss, order, w, noised
        )
    return lambda th, Xb, yb: plain_gradient(th, Xb, yb, loss)


def _check_args(method, averaging, batch_size, n, n_passes, learning_rate, alpha, radius):
    if method not in METHODS:
        raise ValidationError(f"method: {method!r} is unknown; accepted: {METHODS}")
    if averaging not in AVERAGING:
        raise ValidationError(f"averaging: {averaging!r} is unknown; accepted: {AVERAGING}")
    if not isinstance(batch_size, (int, np.integer)) or not 1 <= batch_size <= n:
        raise ValidationError(f"batch_size: {batch_size!r} must be an integer in [1, n={n}]")
    if not isinstance(n_passes, (int, np.integer)) or n_passes < 1:
        raise ValidationError(f"n_passes: {n_passes!r} must be a positive integer")
    if not callable(learning_rate):
        check_positive(learning_rate, "learning_rate")
    if not (isinstance(alpha, (int, float, np.integer, np.floating)) and alpha >= 0):
        raise ValidationError(f"alpha: {alpha!r} must be a real number >= 0 (ridge)")
    if radius is not None:
        check_positive(radius, "theta_radius")


def _step_array(learning_rate, start_step: int, total: int) -> np.ndarray:
    """The step of each batch of this call (a named schedule is evaluated in one call)."""
    if not callable(learning_rate):
        return np.full(total, float(learning_rate))
    if getattr(learning_rate, "vectorized", False):
        return np.asarray(learning_rate(np.arange(start_step, start_step + total)), float)
    return np.array([float(learning_rate(start_step + t)) for t in range(total)])


@dataclasses.dataclass
class SGDPlan:
    """The public settings of one run of Algorithm 1 (what a block of records needs; it
    travels to a backend's workers). ``total``: batches of the run (all passes);
    ``intercept``: append a public constant column to each block's features."""

    method: str
    loss: Any
    task: str
    sigma2: float
    epsilon_y: float
    order: int | str
    batch_size: int
    learning_rate: float | Callable[[int], float]
    alpha: float
    theta_radius: float | None
    averaging: str | None
    noised: np.ndarray | None
    drop_last: bool
    start_step: int
    total: int
    tail_start: int
    record_every: int
    intercept: bool = False


@dataclasses.dataclass
class SGDState:
    """Where a run is: the iterate (R, p), the running average, the batches done (``t``),
    ||theta||^2 (fused step, -1 otherwise), the recorded trajectory, and the rows of a batch
    begun in an earlier block (``carry``)."""

    theta: np.ndarray
    avg_sum: np.ndarray
    n_avg: int
    t: int = 0
    sq: float = -1.0
    step_sum: float = 0.0
    hist: list[np.ndarray] = dataclasses.field(default_factory=list)
    marks: list[int] = dataclasses.field(default_factory=list)
    carry: tuple[np.ndarray, np.ndarray] | None = None


def plan_run(
    n: int, p: int, R: int = 1, *, n_passes: int = 1, theta0=None, average0=None, **settings
) -> tuple[SGDPlan, SGDState]:
    """The plan and start state of a run over ``n`` records of ``p`` features (``p``
    counts the intercept column when ``settings["intercept"]``)."""
    B, drop_last = settings["batch_size"], settings["drop_last"]
    full = n // B
    per_pass = full + (not drop_last and n - full * B > 0)
    total = per_pass * n_passes
    record_every = settings.pop("record_every", None) or max(1, total // 200)
    theta = np.zeros((R, p)) if theta0 is None else np.array(np.broadcast_to(theta0, (R, p)))
    avg_sum, n_avg = np.zeros_like(theta), 0
    tail_start = total // 2 if settings["averaging"] == "tail" else 0
    if average0 is not None and average0[1] > 0:
        n_avg, tail_start = int(average0[1]), 0
        avg_sum = np.array(average0[0], dtype=float) * n_avg
    plan = SGDPlan(total=total, tail_start=tail_start, record_every=record_every, **settings)
    state = SGDState(theta, avg_sum, n_avg, hist=[theta.copy()], marks=[0])
    return plan, state


def _fused_order(order: int | str, f: Any) -> int | tuple[np.ndarray, np.ndarray] | None:
    """A truncated series' order for a fused step: K, (t grid, best K) for ``"auto"`` with
    the loss's ``order_table``, or None (an order the generic step refuses, loudly)."""
    if isinstance(order, str):
        return best_orders(f) if order == "auto" and f.order_table is not None else None
    if isinstance(order, (bool, np.bool_)) or not isinstance(order, (int, np.integer)):
        return None
    return int(order) if order >= 0 else None


def _step_fns(plan: SGDPlan, p: int, R: int) -> tuple[Callable, Callable | None]:
    """The gradient of the plan's method and, for one replication, the loss's fused step."""
    grad = _gradient_fn(
        plan.method, plan.task, plan.loss, plan.sigma2, plan.epsilon_y, plan.order, plan.noised
    )
    if R != 1 or plan.task != "classification":
        return grad, None
    f = get_margin_loss(plan.loss)
    fused = f.sgd_step(
        order=_fused_order(plan.order, f),
        w=inverse_weight(plan.epsilon_y) if plan.method == "iwp" else 1.0,
        sigma2=plan.sigma2,
        alpha=float(plan.alpha),
        p=p,
        radius=plan.theta_radius,
        noised=plan.noised,
        corrected=plan.method == "iwp",
    )
    return grad, fused


def _compiled(fused: Any, full: int, B: int, p: int) -> bool:
    """Whether the fused step's batches take the compiled pass (the iterates are the same
    either way: the choice reads only public sizes and the process's history)."""
    global _numpy_records
    if fused is None or getattr(fused, "kernel", None) is None or full == 0 or min(B, p) < 2:
        return False  # numpy calls other BLAS routines for a single row or feature
    if _KERNEL_MODULE not in sys.modules:
        _numpy_records += full * B
        if _numpy_records < KERNEL_AFTER:
            return False
    return importlib.import_module(_KERNEL_MODULE).AVAILABLE


def _compiled_batches(fused, X, y, neg_y, steps, b, full, sq, book, state, bar):
    """The fused step over batches ``b`` to ``full - 1`` in the compiled pass, stopping
    before a batch that overflows; returns (next batch, ||theta||^2, n_avg)."""
    kernel = importlib.import_module(_KERNEL_MODULE)
    B = X.shape[0] // full
    b, sq, n_avg, recs, marks = kernel.run_batches(
        fused.kernel, state.theta[0], X, y, neg_y, steps, b, full, B, sq, book, state.avg_sum[0]
    )
    state.hist.extend(r[None].copy() for r in recs)
    state.marks.extend(marks.tolist())
    if bar is not None:
        bar[0].update(bar[1], completed=book[2] + b)
    return b, sq, n_avg


def sgd_block(
    plan: SGDPlan, state: SGDState, X: Any, y: Any, last: bool = True, bar: Any = None
) -> SGDState:
    """Algorithm 1 over one block of records (X (R, m, p) or (m, p), in order), continuing
    ``state`` (updated in place and returned). The rows after the last full batch are
    carried to the next block, or, when the block is ``last`` in its pass, fitted as a
    smaller batch (dropped with ``drop_last``). ``bar``: (progress bar, task) or None.

    One function on purpose: the loop over batches keeps its state in local variables,
    because a fit's time is this loop's per-step overhead.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim == 2:
        X, y = X[None], y[None]
    if plan.intercept:  # a public constant column, last
        X = np.concatenate([X, np.ones((*X.shape[:2], 1))], axis=2)
    if state.carry is not None:
        X = np.concatenate([state.carry[0], X], axis=1)
        y = np.concatenate([state.carry[1], y], axis=1)
    R, m, p = X.shape
    B = plan.batch_size
    full = m // B
    rest = m - full * B
    nb = full + (last and rest > 0 and not plan.drop_last)
    state.carry = None if last or not rest else (X[:, full * B :], y[:, full * B :])
    grad, fused = _step_fns(plan, p, R)
    steps = _step_array(plan.learning_rate, plan.start_step + state.t, nb)
    Xb_all = X[:, : full * B].reshape(R, full, B, p)
    yb_all = y[:, : full * B].reshape(R, full, B)
    tail = (X[:, full * B :], y[:, full * B :])  # the smaller last batch
    if fused is not None:  # one replication: the batches as 2-D views, made once
        neg_y = -y[0]
        neg_blocks = neg_y[: full * B].reshape(full, -1)
        blocks = list(zip(Xb_all[0], yb_all[0], neg_blocks, strict=True))
        if nb > full:
            blocks.append((tail[0][0], tail[1][0], neg_y[full * B :]))
        step_list = steps.tolist()
    compiled = _compiled(fused, full, B, p)
    if compiled:
        X2, y2 = np.ascontiguousarray(X[0, : full * B]), np.ascontiguousarray(y[0])
    ridge = None if not plan.alpha else plan.alpha * (1.0 if plan.noised is None else plan.noised)
    averaging, radius, total = plan.averaging, plan.theta_radius, plan.total
    tail_start, record_every = plan.tail_start, plan.record_every
    theta, avg_sum, n_avg, t0 = state.theta, state.avg_sum, state.n_avg, state.t
    hist, marks = state.hist, state.marks
    theta1 = theta[0]  # a view: every update of theta below is in place
    sq = state.sq if fused is not None else -1.0  # ||theta||^2 (fused path)
    if fused is not None and sq < 0.0:
        sq = float(theta1 @ theta1)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        b = 0
        while b < nb:
            if compiled and b < full:
                book = (averaging is not None, tail_start, t0, record_every, total, n_avg)
                b, sq, n_avg = _compiled_batches(
                    fused, X2, y2, neg_y, steps, b, full, sq, book, state, bar
                )
                if b == nb:
                    break
            t = t0 + b
            if fused is not None:  # one replication: the fused step (and projection)
                sq = fused(theta1, *blocks[b], step_list[b], sq)
            if sq < 0.0:  # generic path (or an overflow: the clipping path warns)
                Xb, yb = (Xb_all[:, b], yb_all[:, b]) if b < full else tail
                g = grad(theta, Xb, yb)
                if ridge is not None:  # ridge on the noised coordinates only
                    g = g + ridge * theta
                g *= steps[b]
                theta -= g
                if radius is not None:
                    norms = np.sqrt(np.einsum("rp,rp->r", theta, theta))
                    if norms.max() > radius:
                        theta *= np.minimum(1.0, radius / norms)[:, None]
                sq = float(theta1 @ theta1) if fused is not None else -1.0
            if averaging is not None and t >= tail_start:
                n_avg += 1
                avg_sum += theta
            if (t + 1) % record_every == 0 or t + 1 == total:
                hist.append(theta.copy())
                marks.append(t + 1)
            if bar is not None and (t + 1) % 500 == 0:
                bar[0].update(bar[1], completed=t + 1)
            b += 1
    state.n_avg, state.t, state.sq = n_avg, t0 + nb, sq
    state.step_sum += float(steps.sum())
    return state


def finish_run(plan: SGDPlan, state: SGDState) -> SGDPath:
    """The :class:`SGDPath` of a run's final state."""
    avg = state.avg_sum / max(state.n_avg, 1)
    average = avg if plan.averaging is not None else state.theta
    return SGDPath(
        state.theta,
        average,
        np.stack(state.hist),
        np.asarray(state.marks),
        plan.order,
        state.n_avg,
        state.step_sum,
    )


@dispatch
def stream_examples(
    X: Any, y: Any, plan: SGDPlan, state: SGDState, passes: int, progress: str | None = None
) -> SGDState:
    """Run ``plan`` from ``state`` over the examples ``X`` (n, p), ``y`` (n,), ``passes``
    times, in order (a :func:`~privest.backends.dispatch` function on the type of ``X``:
    this default holds them in memory, one block per pass; a backend streams its partitions
    through :func:`sgd_block` where they are). ``progress``: a progress bar's description,
    or None for no bar."""
    bar = None
    if progress is not None:
        from privest.progress import progress_bar

        display = progress_bar()
        display.start()
        bar = (display, display.add_task(progress, total=plan.total))
    try:
        for _ in range(passes):
            state = sgd_block(plan, state, X, y, True, bar)
    finally:
        if bar is not None:
            bar[0].stop()
    return state


@dispatch
def example_sums(X: Any, y: Any, intercept: bool, gram: bool) -> dict[str, Any]:
    """Sums over the examples (post-processing of the release): ``n``, ``yx`` = y'X (the
    raw features) and, with ``gram``, ``xx`` = X'X of the features with the intercept
    column when ``intercept`` (a :func:`~privest.backends.dispatch` function on the type of
    ``X``; a backend adds up its partitions' sums)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    out: dict[str, Any] = {"n": X.shape[0], "yx": y @ X}
    if gram:
        if intercept:
            X = np.hstack([X, np.ones((X.shape[0], 1))])
        out["xx"] = X.T @ X
    return out


def sgd_replicated(
    X: np.ndarray,
    y: np.ndarray,
    *,
    method: str = "iwp",
    loss: str = "exponential",
    task: str = "classification",
    sigma2: float = 0.0,
    epsilon_y: float = math.inf,
    order: int | str = "auto",
    batch_size: int = 128,
    learning_rate: float | Callable[[int], float] = 1e-4,
    alpha: float = 0.0,
    theta_radius: float | None = None,
    n_passes: int = 1,
    averaging: str | None = None,
    theta0: np.ndarray | None = None,
    record_every: int | None = None,
    progress: bool = False,
    description: str = "IWP-SGD",
    noised: np.ndarray | None = None,
    drop_last: bool = True,
    start_step: int = 0,
    average0: tuple[np.ndarray, int] | None = None,
) -> SGDPath:
    """Run Algorithm 1 (or a baseline) on R replications at once; X (R, n, p), y (R, n).

    Batches are taken in the given order; the remainder batch is dropped (A4, the paper's
    reproductions) unless ``drop_last=False`` (the estimators: a last smaller batch). With
    ``learning_rate`` callable, the step of batch t (0-based, across passes, counted from
    ``start_step``) is lr(t). ``noised``: mask of the noised coordinates (an appended public
    intercept column is not). ``average0 = (average, count)`` continues a running average
    (``partial_fit``): every iterate of this call is then averaged.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim == 2:
        X, y = X[None], y[None]
    R, n, p = X.shape
    _check_args(method, averaging, batch_size, n, n_passes, learning_rate, alpha, theta_radius)
    plan, state = plan_run(
        n,
        p,
        R,
        n_passes=n_passes,
        theta0=theta0,
        average0=average0,
        method=method,
        loss=loss,
        task=task,
        sigma2=sigma2,
        epsilon_y=epsilon_y,
        order=order,
        batch_size=batch_size,
        learning_rate=learning_rate,
        alpha=alpha,
        theta_radius=theta_radius,
        averaging=averaging,
        noised=noised,
        drop_last=drop_last,
        start_step=start_step,
        record_every=record_every,
    )
    show = progress and plan.total * R * batch_size >= 2_000_000
    state = stream_examples(X, y, plan, state, n_passes, description if show else None)
    return finish_run(plan, state)
