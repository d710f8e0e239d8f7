"""Minimising corrected objectives over a compact parameter box (paper 000, eq. (4.1)).

Paper 000 fixes no optimiser or parameter set; these choices are described in
docs/dr-estimation.md, "Computation and inference".

The DR objective is a difference of convex functions (a negative weight 1 - 1/delta on
the X2 term) and can be unbounded below on an unbounded parameter set, so every solver
works inside an explicit box and reports when the solution sits on it. Strategies:

* quadratic in theta (squared losses, least squares): one exact Newton step, i.e. the
  closed forms; a box search if the Hessian is not positive definite;
* scalar piecewise-linear (scalar quantile loss): the exact O(n log n) scan over the
  breakpoints X1_i, X2_i;
* quantile regression on a symmetric box (naive, oracle; DR for the median): the batched
  kernels with R = 1 -- an interior-point L1 fit and the DC algorithm with warm-simplex
  convex steps (:mod:`privest.learn.batched`, the code of the paper-000 Table 3);
* other check and hinge losses with several parameters: the convex-concave procedure (DC
  algorithm) -- linearise the concave X2 part at the iterate and solve the convex rest as
  a HiGHS linear program, from several starts;
* smooth in theta with an analytic Hessian (logistic): projected, modified Newton with
  backtracking, the batched kernel :func:`~privest.learn.batched.newton.newton_box` with
  R = 1 (the paper-000 tables run it with R = replicates; L-BFGS-B takes over if it stalls);
* everything else: L-BFGS-B with analytic (or a.e.) gradients from several starts.

The choice reads the loss's capabilities (``quadratic_in_theta``, ``kink``, ``form``,
``smooth_in_theta``) and whether the objective holds its records in memory
(:class:`~privest.learn.objective.Objective`): on an objective held as partitions the
solvers that need every record at once (scan, LP, interior point) do not apply, and check
and hinge losses are fitted by smoothing continuation (:mod:`privest.learn.smoothing`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, sparse

from privest._threads import fit_threads
from privest.errors import ValidationError
from privest.learn.batched import (
    BatchedObjective,
    BatchedProblem,
    Design,
    l1_ipm,
    lad_simplex,
    median_dr_fit,
    newton_box,
    smoothed_dr_start,
)
from privest.learn.batched.design import _solve
from privest.learn.losses import QuantileRegressionLoss
from privest.learn.objective import CorrectedObjective, Objective
from privest.learn.smoothing import smoothed_kink, smoothing_fit

__all__ = [
    "ConvergenceWarning",
    "Solution",
    "batched_problem",
    "check_solvable",
    "solve",
]


class ConvergenceWarning(UserWarning):
    """A solver stopped before meeting its tolerance; the result carries diagnostics."""


@dataclass
class Solution:
    """Result of a fit: parameters, objective, diagnostics."""

    theta: np.ndarray
    objective: float
    converged: bool
    n_iter: int
    solver: str
    message: str = ""
    at_bound: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    starts: int = 1


def _keep_best(sols: list[Solution], describe) -> Solution:
    """The lowest objective over the starts; warn (with ``describe(best)``) if it stopped early."""
    best = min(sols, key=lambda sol: sol.objective)
    if not best.converged:
        warnings.warn(describe(best), ConvergenceWarning, stacklevel=4)
    return best


def _at_bound(theta: np.ndarray, box: np.ndarray) -> np.ndarray:
    tol = 1e-7 * np.maximum(1.0, np.abs(box).max(axis=1))
    return (np.abs(theta - box[:, 0]) <= tol) | (np.abs(theta - box[:, 1]) <= tol)


def _finish(sol: Solution, box: np.ndarray) -> Solution:
    sol.at_bound = _at_bound(sol.theta, box)
    return sol


def _kinked_index(loss) -> bool:
    return loss.kink != "none" and loss.form == "index"


def check_solvable(obj: Objective) -> None:
    """Refuse, before any pass, a loss that no solver fits on ``obj``: an objective held
    as partitions takes losses with an analytic Hessian or the check and hinge losses."""
    loss = obj.loss
    if obj.in_memory or loss.smooth_in_theta or _kinked_index(loss):
        return
    raise ValidationError(
        f"{loss.name}: out-of-core fits need a loss with an analytic Hessian in theta "
        "(logistic, linear and other smooth losses) or the check or hinge loss; fit other "
        "nonsmooth losses on a release in memory (a DaskRelease: release.compute())"
    )


def solve(
    obj: Objective,
    box: np.ndarray,
    starts: list[np.ndarray] | None = None,
    xtol: float = 1e-10,
) -> Solution:
    """Minimise ``obj`` over ``box`` ((p, 2) array), trying each of ``starts`` (the Newton
    solver stops at steps below ``xtol``)."""
    with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
        return _dispatch(obj, box, starts, xtol)


def _dispatch(obj: Objective, box: np.ndarray, starts, xtol: float) -> Solution:
    starts = [np.clip(s, box[:, 0], box[:, 1]) for s in (starts or [np.zeros(obj.p)])]
    loss = obj.loss
    check_solvable(obj)
    if loss.quadratic_in_theta:
        return _finish(_solve_quadratic(obj, box, starts), box)
    if obj.in_memory and loss.kink == "check" and loss.form == "location":
        return _finish(_solve_scalar_scan(obj, box), box)
    if obj.in_memory and loss.kink == "check" and _l1_batched_applies(obj, box):
        return _finish(_solve_l1_batched(obj, box), box)
    if _kinked_index(loss):
        if not obj.in_memory:
            theta, value, ok, iters, how = smoothing_fit(obj, box, starts)
            return _finish(Solution(theta, value, ok, iters, how, starts=len(starts)), box)
        return _finish(_solve_dc_lp(obj, box, starts), box)
    if loss.smooth_in_theta:
        return _finish(_solve_newton(obj, box, starts, xtol), box)
    return _finish(_solve_lbfgsb(obj, box, starts), box)


# ------------------------------------------------------------------ quadratic: Newton
def _solve_quadratic(obj: CorrectedObjective, box: np.ndarray, starts) -> Solution:
    theta0 = starts[0]
    h = obj.hess(theta0)
    g = obj.grad(theta0)
    try:
        chol = np.linalg.cholesky(h)
    except np.linalg.LinAlgError:
        chol = None
    if chol is not None:
        theta = theta0 - np.linalg.solve(h, g)
        if np.all((theta >= box[:, 0]) & (theta <= box[:, 1])):
            return Solution(theta, obj.value(theta), True, 1, "closed form (Newton step)")
    # indefinite (finite-sample DR/SL) or outside the box: constrained search
    sol = _solve_lbfgsb(obj, box, starts)
    sol.message = (
        "Hessian not positive definite; box-constrained search"
        if chol is None
        else "closed form outside the box; box-constrained search"
    )
    return sol


# -------------------------------------------------------------- scalar check: exact scan
def _solve_scalar_scan(obj: CorrectedObjective, box: np.ndarray) -> Solution:
    """Exact minimiser of sum_k w_k rho_tau(z_k - theta) over [lo, hi]: a breakpoint or an end."""
    tau = obj.loss.quantile
    z = np.concatenate([t.x[:, 0] for t in obj.terms])
    w = np.concatenate([np.full(t.x.shape[0], t.weight) for t in obj.terms]) / obj.n
    order = np.argsort(z, kind="stable")
    z, w = z[order], w[order]
    lo, hi = box[0]
    cand = np.concatenate([[lo], z[(z > lo) & (z < hi)], [hi]])
    # f(theta) = tau (sum w z - theta sum w) - (B(theta) - theta A(theta)),
    # A, B = sums of w and w z over z_k < theta (rho is continuous, ties do not matter)
    k = np.searchsorted(z, cand, side="left")
    cw = np.concatenate([[0.0], np.cumsum(w)])
    cwz = np.concatenate([[0.0], np.cumsum(w * z)])
    f = tau * (cwz[-1] - cand * cw[-1]) - (cwz[k] - cand * cw[k])
    j = int(np.argmin(f))
    theta = np.array([cand[j]])
    return Solution(theta, float(f[j]), True, 1, "exact breakpoint scan")


# ------------------------------------------------ check loss: batched L1 kernels, R = 1
def _l1_batched_applies(obj: CorrectedObjective, box: np.ndarray) -> bool:
    """The batched L1 kernels take the check loss of an index (quantile regression), a
    symmetric box |theta_j| <= B, one response, and for DR the median with one doubly
    random copy (the paper-000 setting, Sec. 7.3)."""
    if obj.loss.form != "index":
        return False
    bound = box[0, 1]
    if not (np.all(box[:, 1] == bound) and np.all(box[:, 0] == -bound)):
        return False
    if obj.method in ("naive", "oracle"):
        return True
    terms = obj.terms
    return (
        obj.method == "dr"
        and obj.loss.quantile == 0.5
        and len(terms) == 2
        and (terms[0].y is terms[1].y or np.array_equal(terms[0].y, terms[1].y))
    )


def naive_l1(loss: QuantileRegressionLoss, d: Design, y: np.ndarray, bound: float):
    """min_theta sum_i rho_tau(y_i - d_i'theta) over the box: the median (tau = 1/2) by the
    compiled simplex of :func:`lad_simplex` from the least-squares fit (an exact vertex),
    other quantiles (and a median whose basis the simplex cannot identify) by
    :func:`l1_ipm`: rho_tau(r) = |r|/2 + (tau - 1/2) r, so the weights are 1/2 and the tilt
    c = -(tau - 1/2) D'1. Returns ``(theta (R, p), iterations)``."""
    if loss.quantile == 0.5:
        ols = np.clip(_solve(d.gram(np.ones_like(y)), d.xtv(y)), -bound, bound)
        theta, ok = lad_simplex(d, y, bound, ols)
        if ok.all():
            return theta, np.ones(len(theta), dtype=int)
    c = -(loss.quantile - 0.5) * d.xtv(np.ones_like(y))
    return l1_ipm(d, y, w=np.full(y.shape, 0.5), c=c, bound=bound)


def _solve_l1_batched(obj: CorrectedObjective, box: np.ndarray) -> Solution:
    """Quantile regression on a batch of one: naive/oracle by :func:`l1_ipm`; DR (median) by
    :func:`median_dr_fit` -- the code of Table 3 (R = replicates) -- from the naive fit and
    from :func:`smoothed_dr_start`, the lower objective kept."""
    loss, bound = obj.loss, float(box[0, 1])
    first = obj.terms[0]
    y = loss.response(first.y, first.x.shape[0])[None]
    d1 = Design.from_rows(loss.design(first.x))
    theta, iters = naive_l1(loss, d1, y, bound)
    if obj.method in ("naive", "oracle"):
        ok = bool(iters[0] < 100)
        return Solution(
            theta[0], obj.value(theta[0]), ok, int(iters[0]), "L1 (simplex or interior point)"
        )
    d2 = Design.from_rows(loss.design(obj.terms[1].x))
    delta = obj.data.zero_prob
    # two starts as a batch of two: the naive fit and a smoothed start; the simplex starts
    # both from the naive fit's vertex (the smoothed start gives the first DC step's signs)
    starts = np.vstack([theta, smoothed_dr_start(d1, d2, y, delta, theta, bound)])
    two = np.zeros(2, dtype=np.intp)
    fits = median_dr_fit(d1[two], d2[two], y[two], delta, starts, bound, vertex=theta[two])
    k = int(np.argmin(fits[1]))
    theta, steps, fell_back = fits[0][k], int(fits[2][k]), bool(fits[3][k])
    how = "interior-point" if fell_back else "warm simplex"
    return Solution(
        theta,
        obj.value(theta),
        steps < 50 or not fell_back,
        steps,
        f"DC algorithm, {how} convex steps",
        starts=2,
    )


# ------------------------------------------------------- check / hinge: DC algorithm + LP
def _subgrad_sum(loss, d: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Sum over rows of an a.e. gradient in theta of phi(y, d'theta) (its subgradient)."""
    return loss.dphi(loss.response(y, d.shape[0]), d @ theta) @ d


def _ridge_mask(loss, p: int) -> np.ndarray:
    mask = np.ones(p, bool)
    if loss.fit_intercept:
        mask[0] = False
    return mask


def _lp_convex_part(loss, d, y, a, c, box, ridge, cuts):
    """min a * sum_i phi_i(theta) + c' theta (+ ridge via tangent cuts) over the box, by HiGHS."""
    n, p = d.shape
    if loss.kink == "check":
        tau = loss.quantile
        # variables [theta, u_pos, u_neg]: d theta + u_pos - u_neg = y
        cost = np.concatenate([c, np.full(n, a * tau), np.full(n, a * (1 - tau))])
        eye = sparse.identity(n, format="csr")
        a_eq = sparse.hstack([sparse.csr_matrix(d), eye, -eye], format="csr")
        b_eq, a_ub, b_ub = y, None, None
        bounds = [tuple(b) for b in box] + [(0, None)] * (2 * n)
    else:
        yy = loss.response(y, n)
        # variables [theta, xi]: -y_i d_i theta - xi_i <= -1, xi >= 0
        cost = np.concatenate([c, np.full(n, a)])
        a_ub = sparse.hstack(
            [sparse.csr_matrix(-yy[:, None] * d), -sparse.identity(n, format="csr")], format="csr"
        )
        b_ub = -np.ones(n)
        a_eq = b_eq = None
        bounds = [tuple(b) for b in box] + [(0, None)] * n
    n_var = cost.size
    if ridge > 0:  # epigraph t >= (ridge/2)||beta||^2, outer-approximated by tangent cuts
        mask = _ridge_mask(loss, p)
        cost = np.append(cost, 1.0)
        bounds.append((0, None))
        rows = []
        rhs = []
        for b in cuts:
            gq = np.where(mask, ridge * b, 0.0)  # gradient of q at b
            row = np.zeros(n_var + 1)
            row[:p] = gq
            row[-1] = -1.0
            rows.append(row)
            rhs.append(gq @ b - 0.5 * ridge * np.sum(b[mask] ** 2))
        cut_mat = sparse.csr_matrix(np.array(rows))
        a_ub = (
            cut_mat
            if a_ub is None
            else sparse.vstack(
                [sparse.hstack([a_ub, sparse.csr_matrix((a_ub.shape[0], 1))]), cut_mat],
                format="csr",
            )
        )
        b_ub = np.array(rhs) if b_ub is None else np.concatenate([b_ub, rhs])
        if a_eq is not None:
            a_eq = sparse.hstack([a_eq, sparse.csr_matrix((a_eq.shape[0], 1))], format="csr")
    res = optimize.linprog(
        cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs-ipm"
    )
    if res.status != 0:
        raise RuntimeError(f"HiGHS linear program failed: {res.message}")
    return res.x[:p]


def _convex_solve(loss, d, y, a, c, box, ridge, start):
    """Solve the convex subproblem; with a ridge, add tangent cuts until they are tight."""
    cuts = [start.copy()]
    for _ in range(50):
        theta = _lp_convex_part(loss, d, y, a, c, box, ridge, cuts)
        if ridge == 0:
            return theta
        mask = _ridge_mask(loss, d.shape[1])
        q = 0.5 * ridge * np.sum(theta[mask] ** 2)
        approx = max(
            0.5 * ridge * np.sum(b[mask] ** 2) + ridge * b[mask] @ (theta - b)[mask] for b in cuts
        )
        if q - approx <= 1e-10 * (1.0 + q):
            return theta
        cuts.append(theta)
    return theta


def _smoothed_presolve(
    obj: CorrectedObjective, box: np.ndarray, start: np.ndarray, ridge: float
) -> np.ndarray:
    """Minimise the Gaussian-smoothed objective (:func:`~privest.learn.smoothing.smoothed_kink`)
    with L-BFGS-B, bandwidth shrinking to 0: a cheap warm start that leaves the exact DC
    algorithm only a few LP iterations.
    """
    loss = obj.loss
    parts = [
        (t.weight / obj.n, loss.design(t.x), loss.response(t.y, t.x.shape[0])) for t in obj.terms
    ]
    mask = _ridge_mask(loss, obj.p)
    theta = start.copy()
    scale = float(np.std(parts[0][2])) or 1.0
    for h in (0.1 * scale, 0.01 * scale, 0.001 * scale):

        def fun(th, h=h):
            val, grad = 0.0, np.zeros(obj.p)
            for w, d, y in parts:
                rho, d1, _ = smoothed_kink(loss, y, d @ th, h)
                val += w * np.sum(rho)
                grad += w * (d1 @ d)
            beta = np.where(mask, th, 0.0)
            return val + 0.5 * ridge * beta @ beta, grad + ridge * beta

        res = optimize.minimize(
            fun, theta, jac=True, method="L-BFGS-B", bounds=[tuple(b) for b in box]
        )
        theta = np.asarray(res.x, float)
    return theta


def _solve_dc_lp(obj: CorrectedObjective, box: np.ndarray, starts) -> Solution:
    loss = obj.loss
    pos = [t for t in obj.terms if t.weight > 0]
    neg = [t for t in obj.terms if t.weight < 0]
    if len(pos) != 1:
        raise RuntimeError("DC solver expects exactly one positively weighted term")
    d_pos = loss.design(pos[0].x)
    d_neg = [(loss.design(t.x), t.y, t.weight) for t in neg]
    ridge = float(getattr(loss, "alpha", 0.0)) * sum(t.weight for t in obj.terms)
    a = pos[0].weight / obj.n
    sols: list[Solution] = []
    for start in starts:
        theta = _smoothed_presolve(obj, box, start, ridge) if neg else start.copy()
        value = obj.value(theta)
        converged = not neg
        n_iter = 0
        for n_iter in range(1, 101):  # noqa: B007 - n_iter is reported below
            c = sum(w / obj.n * _subgrad_sum(loss, dn, yn, theta) for dn, yn, w in d_neg)
            c = np.asarray(c, dtype=float) if neg else np.zeros(obj.p)
            new = _convex_solve(loss, d_pos, pos[0].y, a, c, box, ridge, theta)
            new_value = obj.value(new)
            step = np.max(np.abs(new - theta))
            # a DC step never increases the objective; allow LP round-off
            if new_value > value + 1e-12 * (1 + abs(value)):
                converged = True
                break
            done = value - new_value <= 1e-12 * (1 + abs(value)) or step < 1e-10
            theta, value = new, new_value
            if not neg or done:
                converged = True
                break
        sol = Solution(
            theta, value, converged, n_iter, "DC algorithm with HiGHS LPs", starts=len(starts)
        )
        sols.append(sol)
    return _keep_best(
        sols,
        lambda b: f"DC algorithm stopped after {b.n_iter} iterations without meeting its tolerance",
    )


# ----------------------------------------------------------------------------- Newton
class _OneObjective:
    """An objective as a batch of one for :func:`newton_box`, from its ``derivs`` (any loss
    with an analytic Hessian, in memory or as partition sums)."""

    n_reps = 1

    def __init__(self, obj: Objective) -> None:
        self.obj = obj

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        return np.array([self.obj.value(theta[0])])

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f, g, h = self.obj.derivs(theta[0])
        return np.array([f]), g[None], h[None]

    def subset(self, idx: np.ndarray) -> _OneObjective:
        return self


def batched_problem(obj: Objective) -> BatchedProblem:
    """The objective in the batched solvers' form, R = 1: the fused objective of an
    unpenalised index loss held in memory (its designs cached across the methods of one
    fit), a wrapper of ``obj`` otherwise."""
    loss = obj.loss
    if obj.in_memory and loss.form == "index" and not loss.penalised:
        return BatchedObjective.from_objective(obj, obj.designs)
    return _OneObjective(obj)


def _newton_solution(fit: tuple, max_iter: int = 100) -> Solution:
    """A :func:`newton_box` result (R = 1) as a Solution; converged when it stopped before
    ``max_iter`` (a small step, predicted decrease or projected gradient, or no decrease
    along the projected Newton path: its stopping rules)."""
    theta, f, iters = fit
    ok = bool(iters[0] < max_iter)
    return Solution(
        theta[0], float(f[0]), ok, int(iters[0]), "Newton", "" if ok else "iteration limit"
    )


def _solve_newton(obj: Objective, box: np.ndarray, starts, xtol: float = 1e-10) -> Solution:
    """Projected, modified Newton (:func:`newton_box`, R = 1) from each start; L-BFGS-B
    finishes a run that stalls; the lowest objective is kept."""
    prob = batched_problem(obj)
    sols: list[Solution] = []
    for start in starts:
        fit = newton_box(prob, start[None], box[:, 0], box[:, 1], xtol=xtol)
        sol = _newton_solution(fit)
        if not sol.converged:  # stalled on the box or non-convexity: let L-BFGS-B finish
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                sol = _solve_lbfgsb(obj, box, [sol.theta])
            sol.solver = "Newton, then L-BFGS-B"
        sol.starts = len(starts)
        sols.append(sol)
    return _keep_best(
        sols, lambda b: f"solver did not converge: {b.message} (objective {b.objective:.6g})"
    )


# --------------------------------------------------------------------------- L-BFGS-B
def _solve_lbfgsb(obj: CorrectedObjective, box: np.ndarray, starts) -> Solution:
    sols: list[Solution] = []
    for start in starts:
        res = optimize.minimize(
            obj.value_and_grad,
            start,
            jac=True,
            method="L-BFGS-B",
            bounds=[tuple(b) for b in box],
            options={"maxiter": 2000, "ftol": 1e-13, "gtol": 1e-9},
        )
        sol = Solution(
            np.asarray(res.x, float),
            float(res.fun),
            bool(res.success),
            int(res.nit),
            "L-BFGS-B",
            str(res.message),
            starts=len(starts),
        )
        sols.append(sol)
    return _keep_best(
        sols,
        lambda b: (
            f"L-BFGS-B did not converge: {b.message} (objective {b.objective:.6g}, "
            f"{b.n_iter} iterations)"
        ),
    )
