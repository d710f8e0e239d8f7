"""Score-test intervals for one coefficient of a corrected-loss fit (docs/dr-estimation.md,
"Coverage at the README's settings").

The Wald interval theta_j -+ z SE(theta_hat) uses the sandwich at the estimate; where the
corrected Hessian in a coordinate depends strongly on the estimate, its SE collapses exactly
in the releases whose estimate is far off. The generalised score test (Boos 1992, Rotnitzky
and Jewell 1990) evaluates everything at the hypothesised value c instead:

* the constrained fit: the nuisance parameters eta(c) = argmin over the others of the
  corrected objective with theta_j = c (local Newton from a start on the branch);
* the corrected mean score there, g(c), whose nuisance part is 0;
* its variance under the null, w' A(c) w / n, with w = (1, -V_nn^-1 V_nj) at c
  (the efficient-score direction; A the centred covariance of the per-record scores),

and T(c) = g_j(c) / sqrt(w' A w / n) is asymptotically N(0, 1) at the true c by the central
limit theorem for a mean of per-record scores (Thm 5.3's conditions), with no V_jj and no
inverse of the full Hessian. The interval is {c : |T(c)| <= z} with eta(c) on the branch of
constrained minima through the estimate (where eta(theta_j) is the fit's own): each end is
found by continuation from the estimate in small steps, each refit started from its
neighbour's minimum moved along the branch's tangent, then Brent's method between the last
two points (docs/dr-estimation.md, "Which branch the interval follows"; the refits' cost:
"The cost of the score-test interval"). When the nuisance block is linear in theta (least
squares) and A does not depend on theta, it is the Wald interval.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import optimize, stats

from privest._threads import fit_threads
from privest.learn.batched.objective import BatchedObjective
from privest.learn.objective import Objective, score_cov_on_designs
from privest.learn.solvers import batched_problem

__all__ = ["constrained_fit", "score_interval", "score_statistic"]


def _newton_step(g: np.ndarray, h: np.ndarray) -> np.ndarray | None:
    """A descent step -H^-1 g, with H shifted by mu I (Levenberg) until it is positive
    definite; None if H or g is not finite."""
    if not (np.isfinite(h).all() and np.isfinite(g).all()):
        return None
    mu, scale = 0.0, max(float(np.abs(h).max()), 1e-300)
    while True:
        try:
            chol = np.linalg.cholesky(h + mu * np.eye(h.shape[0]))
            return -np.linalg.solve(chol.T, np.linalg.solve(chol, g))
        except np.linalg.LinAlgError:
            mu = max(4 * mu, 1e-8 * scale)


def _evaluations(obj: Objective) -> tuple[Callable, Callable]:
    """(value, derivs) of ``obj`` at one theta. Where the batched solvers take the objective
    (:func:`~privest.learn.solvers.batched_problem`: an unpenalised index loss held in
    memory), their fused kernel (R = 1): one D theta and one sigmoid per copy for the value,
    the derivatives at the same theta from them, the Hessian from the cached products
    d_ij d_ik (the designs kept in ``obj.designs``, where the score covariance finds them).
    Otherwise ``obj.derivs``, a value and then the derivatives at the same theta evaluating
    it once. The same formulas either way (equal up to rounding); a point whose index
    overflows has the value +inf (or NaN), which the line search rejects."""
    prob = batched_problem(obj) if hasattr(obj, "in_memory") else None
    if isinstance(prob, BatchedObjective):

        def derivs(t: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
            with np.errstate(divide="ignore"):
                f, g, h = prob.derivs(t[None])
            return float(f[0]), g[0], h[0]

        def value(t: np.ndarray) -> float:
            with np.errstate(divide="ignore"):
                return float(prob.value(t[None])[0])

        return value, derivs
    memo: list = [None, None]

    def own(t: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        if memo[0] is None or not np.array_equal(memo[0], t):
            memo[:] = [t.copy(), obj.derivs(t)]
        return memo[1]

    return lambda t: float(own(t)[0]), own


def _score_cov(obj: Objective, theta: np.ndarray) -> np.ndarray:
    """``obj.score_cov(theta)``; where the refits' kernel holds the designs (an index loss
    without Laplacian terms, :func:`_evaluations`), A from them in one piece at every n
    (the objective's own goes block by block above ``SCORE_BLOCK`` records, building each
    block's design again): the same formulas, equal up to rounding."""
    a = score_cov_on_designs(obj, theta)
    return obj.score_cov(theta) if a is None else a


_HALVINGS = 2.0 ** -np.arange(28)  # the line search's steps: halved until below 1e-8


def constrained_fit(
    obj: Objective,
    theta: np.ndarray,
    j: int | None,
    *,
    c: float = 0.0,
    box: np.ndarray | None = None,
    steps: int = 50,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(theta, gradient, Hessian) at the constrained fit: theta_j = c and the others at a
    local minimum of the corrected objective inside ``box`` ((p, 2), default unbounded), by
    damped (Levenberg-shifted) Newton from ``theta``'s (``j=None``: nothing held), the
    step halved until the objective decreases enough (Armijo) or below 1e-8, trials
    evaluating the objective only (:func:`_evaluations`). None when there is no interior
    local minimum: a free parameter reaches the box or the Hessian of the free parameters
    there is not positive definite; a line search whose every trial would be clipped to the
    box is that at once."""
    value, derivs = _evaluations(obj)
    t = np.array(theta, dtype=float)
    lo, hi = (np.full(t.size, -np.inf), np.full(t.size, np.inf)) if box is None else box.T
    rest = np.arange(t.size)
    if j is not None:
        t[j] = c
        rest = np.delete(rest, j)
    f, g, h = derivs(t)
    if rest.size == 0:  # one parameter: nothing to profile out
        return t, g, h
    full = False
    for _ in range(steps):
        step = _newton_step(g[rest], h[np.ix_(rest, rest)])
        if step is None:
            return None
        slope, scale = float(g[rest] @ step), max(1.0, abs(f))
        if -slope < (1e-13 if full else 1e-15) * scale:  # after a full step: f's rounding
            break
        trial = t[rest] + _HALVINGS[:, None] * step
        on_box = np.any((trial <= lo[rest]) | (trial >= hi[rest]), axis=1)
        # a Newton decrement this small is in the quadratic regime: the full step (a line
        # search there would compare values that differ by rounding only)
        full = -slope < 1e-10 * scale and not on_box[0]
        for k, s in enumerate(_HALVINGS):
            if on_box[k:].all():  # any point it accepts is on the box
                return None
            new = t.copy()
            new[rest] = np.clip(trial[k], lo[rest], hi[rest])
            if full or value(new) <= f + 1e-4 * s * slope:
                break
        t = new
        f, g, h = derivs(t)
        if on_box[k] or not np.isfinite(f):
            return None
    hn = h[np.ix_(rest, rest)]
    if not np.isfinite(hn).all() or np.linalg.eigvalsh(hn).min() <= 0:
        return None
    return t, g, h


def _refit(
    obj: Objective, start: np.ndarray, j: int, c: float, box: np.ndarray | None
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray] | None:
    """(T(c), the constrained fit's theta, its tangent w, its Hessian) with the
    nuisance started at ``start``'s; None when the fit has no interior minimum. w = (1,
    -V_nn^-1 V_nj) is both the efficient-score direction and d theta / dc along the branch
    of minima (implicit function theorem)."""
    fit = constrained_fit(obj, start, j, c=float(c), box=box)
    if fit is None:
        return None
    t, g, h = fit
    rest = np.delete(np.arange(t.size), j)
    w = np.zeros(t.size)
    w[j] = 1.0
    w[rest] = -np.linalg.solve(h[np.ix_(rest, rest)], h[rest, j])
    var = w @ _score_cov(obj, t) @ w / obj.n
    return float(w @ g / np.sqrt(var)), t, w, h


def score_statistic(
    obj: Objective, theta: np.ndarray, j: int, c: float, box: np.ndarray | None = None
) -> tuple[float, np.ndarray | None]:
    """(T(c), the constrained fit's theta): the generalised score statistic for theta_j = c
    (module docstring), the nuisance started at ``theta``'s (one refit: the minimum it lands
    in depends on the start; :func:`score_interval` follows one branch); NaN (and None)
    when the constrained fit's nuisance Hessian is not positive definite."""
    point = _refit(obj, theta, j, c, box)
    return (float("nan"), None) if point is None else point[:2]


class _Undefined(Exception):
    """T is undefined (the nuisance Hessian is not positive definite)."""


def _crossing(stat, inner: float, outer: float, z: float, xtol: float) -> float:
    """The c between ``inner`` (accepted) and ``outer`` (rejected) where |stat(c)| = z
    (Brent's method); NaN if stat is undefined on the way."""

    def excess(c: float) -> float:
        value = stat(c)
        if np.isnan(value):
            raise _Undefined
        return abs(value) - z

    try:
        return float(optimize.brentq(excess, inner, outer, xtol=xtol))
    except _Undefined:
        return float("nan")


def _bracketed(obj: Objective, j: int, p0: tuple, p1: tuple, z: float, xtol: float, box) -> float:
    """The crossing of |T| = z between two neighbouring points of the path (``p0`` accepted,
    ``p1`` rejected; :func:`_refit`'s tuples), each refit started on the cubic Hermite
    interpolant of the branch between their minima (their tangents the slopes: nearer the
    branch than the chord, an error O(dc^4) instead of O(dc^2)); Brent's first two calls,
    at the two points, take their T."""
    (_, t0, w0, _), (_, t1, w1, _) = p0, p1
    h = t1[j] - t0[j]

    def refit(x: float) -> float:
        s = (x - t0[j]) / h
        start = (
            (1 + 2 * s) * (1 - s) ** 2 * t0
            + s * (1 - s) ** 2 * h * w0
            + s * s * (3 - 2 * s) * t1
            - s * s * (1 - s) * h * w1
        )
        on = _refit(obj, start, j, x, box)
        return float("nan") if on is None else on[0]

    def stat(x: float) -> float:
        if x in (t0[j], t1[j]):
            return p0[0] if x == t0[j] else p1[0]
        return refit(x)

    return _crossing(stat, t0[j], t1[j], z, xtol)


def _jumped(prev: tuple, new: tuple, j: int) -> bool:
    """Whether the refit at the new point left the branch of the previous one: its nuisance
    moved from the tangent's prediction by more than half the predicted move plus the
    held coordinate's step, in the previous Hessian's metric (on one smooth branch the miss
    is O(dc^2) against O(dc), so halving dc always passes)."""
    (_, t0, w0, h), (_, t1, _, _) = prev, new
    dc = t1[j] - t0[j]
    rest = np.delete(np.arange(t0.size), j)
    hn = h[np.ix_(rest, rest)]
    miss = t1[rest] - t0[rest] - dc * w0[rest]
    move = dc * w0[rest]
    scale = np.sqrt(move @ hn @ move) + abs(dc) * np.sqrt(abs(h[j, j]))
    return bool(np.sqrt(miss @ hn @ miss) > 0.5 * scale)


_MAX_DT = 0.5  # the largest change of T in one step of the path: the first crossing is found


def _path_end(
    obj: Objective, prev: tuple, j: int, se: float, sign: float, z: float, edge: float, box
) -> float:
    """One end of the interval along the branch of constrained minima through the estimate
    (docs/dr-estimation.md, "Which branch the interval follows"): steps from theta_j
    outwards, each refit started at the previous point moved along its tangent. A step
    whose refit is undefined or jumped (:func:`_jumped`) is halved, and later steps bisect
    towards the nearest point that failed; when the refit fails started within ``se`` / 256
    of it, the branch has ended there (NaN). A step that moved T by more than ``_MAX_DT`` is
    halved; an accepted one sets the next to move T by about ``_MAX_DT`` / 2 (at most
    doubling it). The end is the first c where |T| > z (Brent's
    method between the last two points, each refit started on the chord between their
    minima), the box's edge if the path reaches it accepted, NaN after 200 refits.
    ``prev``: the estimate's point (:func:`_refit` at theta_j)."""
    step, small, fail = se / 4, se / 256, None
    for _ in range(200):
        c0 = prev[1][j]
        if fail is not None:  # bisect towards the nearest point that failed
            step = min(step, abs(fail - c0) / 2)
        c = c0 + sign * step
        if fail is not None and abs(fail - c0) <= small:  # the last try, from close
            c, step = fail, abs(fail - c0)
        if (c - edge) * sign >= 0:
            c, step = edge, abs(edge - c0)
        point = _refit(obj, prev[1] + (c - c0) * prev[2], j, c, box)
        if point is None or _jumped(prev, point, j):
            if step <= small:
                return float("nan")
            fail, step = c, step / 2
            continue
        if step > small and abs(point[0] - prev[0]) > _MAX_DT:  # too coarse, not a barrier
            step /= 2
            continue
        if abs(point[0]) > z:
            return _bracketed(obj, j, prev, point, z, 1e-3 * se, box)
        if c == edge:
            return edge
        if c == fail:
            fail = None
        dt = abs(point[0] - prev[0])  # aim the next step at a change of T of _MAX_DT / 2
        prev, step = point, step * min(2.0, max(0.5, _MAX_DT / 2 / max(dt, 1e-12)))
    return float("nan")


def score_interval(
    obj: Objective,
    theta: np.ndarray,
    j: int,
    se: float,
    alpha: float = 0.05,
    box: np.ndarray | None = None,
) -> tuple[float, float]:
    """{c : |T(c)| <= z_(1 - alpha/2)} around theta_j along the branch of constrained minima
    through the estimate (:func:`_path_end`, steps scaled by ``se``); an end that reaches
    the box is the box's, one where the branch's refit loses its interior minimum (the
    nuisance Hessian is not positive definite, or the branch ends) NaN. The refits are fits:
    BLAS runs with :func:`~privest._threads.fit_threads`' threads (one by default)."""
    z = stats.norm.ppf(1 - alpha / 2)
    theta = np.asarray(theta, float)
    edges = (-np.inf, np.inf) if box is None else box[j]
    with fit_threads():
        start = _refit(obj, theta, j, theta[j], box)  # the fit's own minimum
        if start is None:
            return float("nan"), float("nan")
        se = max(se, 1e-300)
        lo, hi = (
            _path_end(obj, start, j, se, s, z, e, box)
            for s, e in zip((-1.0, 1.0), edges, strict=True)
        )
    return lo, hi
