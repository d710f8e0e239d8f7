"""Margin losses f(z), z = y theta'x with y in {-1, +1}: the form IWP-SGD corrects (paper 004,
Sec. 5.2, App. D.5).

:class:`MarginLoss` is the margin form of a loss, given by its derivatives f^{(n)}; the
built-in losses are classes of their own, each with its capabilities (never recognised by
name): :class:`ExponentialLoss` here (closed-form inverse Weierstrass transform), and the
logistic and squared losses of :mod:`~privest.learn.losses.index`, which are also the DR
index losses (one class per loss for both estimation families).
"""

from __future__ import annotations

import math
import warnings
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numpy.polynomial import Polynomial
from scipy import special

from privest.errors import ValidationError
from privest.learn.losses.base import Loss

__all__ = [
    "ExponentOverflowWarning",
    "ExponentialLoss",
    "MarginLoss",
    "sigmoid_derivative_polynomials",
]

_EXP_LIMIT = 700.0


class ExponentOverflowWarning(UserWarning):
    """An exponent of the exponential IWP loss was clipped at +-700 to avoid overflow."""


def safe_exp(u: np.ndarray) -> np.ndarray:
    """e^u, with exponents beyond +-700 clipped (and an :class:`ExponentOverflowWarning`)."""
    if np.any(np.abs(u) > _EXP_LIMIT):
        warnings.warn(
            "exponential IWP loss: exponents beyond +-700 were clipped; the estimate is no "
            "longer unbiased (reduce the step size or add a projection radius)",
            ExponentOverflowWarning,
            stacklevel=4,
        )
        u = np.clip(u, -_EXP_LIMIT, _EXP_LIMIT)
    return np.exp(u)


@lru_cache(maxsize=1)
def sigmoid_derivative_polynomials(n_max: int = 10) -> tuple[Polynomial, ...]:
    """P_n with sig^{(n)}(z) = P_n(sig(z)): P_0(s) = s, P_{n+1} = P_n' s (1 - s)."""
    polys = [Polynomial([0.0, 1.0])]
    logistic_factor = Polynomial([0.0, 1.0, -1.0])
    for _ in range(n_max):
        polys.append(polys[-1].deriv() * logistic_factor)
    return tuple(polys)


@lru_cache(maxsize=1)
def sigmoid_coefficients() -> np.ndarray:
    """Matrix C with C[j, n] the coefficient of s^j in P_n (increasing powers)."""
    polys = sigmoid_derivative_polynomials()
    deg = max(q.degree() for q in polys)
    C = np.zeros((deg + 1, len(polys)))
    for n, q in enumerate(polys):
        C[: q.coef.size, n] = q.coef
    return C


class MarginLoss(Loss):
    """A margin loss f(z), z = y theta^T x, given by its derivatives f^{(n)}(z) (Sec. 5.2).

    ``derivative(z, n)`` must return f^{(n)}(z) elementwise for n = 0, ..., 2K + 1 (K the
    truncation order). A user-defined loss always uses the series truncated at an explicit
    integer ``order`` (Sec. 5.2 with the series of Thm 5.1 truncated), whatever its
    ``name``: only the built-in losses, whose classes say so, have a closed form
    (exponential, squared) or the ``order="auto"`` table (logistic).

    Capabilities of the margin form (besides :class:`~privest.learn.losses.base.Loss`'s):
    ``proba_scale`` (``predict_proba`` is sigmoid(scale f) when the minimiser of E f(y f)
    is f = logit(P(y = 1 | x)) / scale; ``None``: no probabilities), :meth:`margin_slope`
    and :meth:`margin_curvature` (|f'(0)|, |f''(0)|: IWP-SGD's public defaults).
    """

    form: str | None = None  # no per-record loss in (x, y, theta) for the DR estimators
    inverse_weierstrass: str | None = "series"
    proba_scale: float | None = None

    def __init__(
        self,
        name: str,
        derivative: Callable[[np.ndarray, int], np.ndarray],
        closed_form: bool = False,
    ):
        if closed_form:
            raise ValidationError(
                "closed_form: only the built-in 'exponential' and 'squared' losses have an "
                "exactly summed inverse Weierstrass series; a user MarginLoss uses the series "
                "truncated at an explicit order"
            )
        if not callable(derivative):
            raise ValidationError(
                f"derivative: got {type(derivative).__name__}; expected a callable (z, n) -> "
                "f^(n)(z)"
            )
        self.name = str(name)
        self._derivative = derivative

    def derivative(self, z: np.ndarray, n: int = 0) -> np.ndarray:
        """f^{(n)}(z), elementwise."""
        return self._derivative(np.asarray(z, dtype=float), n)

    def derivatives(self, z: np.ndarray, orders: list[int]) -> list[np.ndarray]:
        """f^{(n)}(z) for each n in ``orders``."""
        z = np.asarray(z, dtype=float)
        return [self.derivative(z, n) for n in orders]

    def __call__(self, z: np.ndarray) -> np.ndarray:
        return self.derivative(z, 0)

    def margin_slope(self) -> float:
        """|f'(0)|: the gradient at theta = 0 is f'(0) E[y x] (IWP-SGD's public radius)."""
        return abs(float(self.derivative(np.zeros(1), 1)[0]))

    def margin_curvature(self) -> float:
        """|f''(0)| (IWP-SGD's public first step)."""
        return abs(float(self.derivative(np.zeros(1), 2)[0]))

    def iwp_closed_form(
        self, m: np.ndarray, s: np.ndarray, need_loss: bool
    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """(F, A, B) = W_s^{-1}[f, f', f''] at the margins m exactly (``inverse_weierstrass
        == "closed"`` only; :func:`~privest.learn.iwp_losses.iwp_coefficients`)."""
        raise NotImplementedError(f"{self!r} has no closed-form inverse Weierstrass transform")

    def sgd_step(self, **settings) -> Callable[..., float] | None:
        """A fused IWP-SGD step for one replication, or ``None`` (the generic step)."""
        return None

    def __repr__(self) -> str:
        return f"MarginLoss({self.name!r})"


class ExponentialLoss(MarginLoss):
    """f(z) = e^-z: W_s^{-1}[f](z) = e^{-s/2} e^-z exactly (Sec. 5.2); no DR form.

    The minimiser of E exp(-y f) is f = logit(P(y = 1 | x)) / 2, so ``proba_scale`` is 2.
    """

    name = "exponential"
    inverse_weierstrass = "closed"
    proba_scale = 2.0

    def __init__(self) -> None:
        """No parameters (the class is the loss)."""

    def __repr__(self) -> str:
        return "ExponentialLoss()"

    def derivative(self, z: np.ndarray, n: int = 0) -> np.ndarray:
        """(-1)^n e^-z (exponents beyond 700 clipped, with a warning)."""
        e = safe_exp(-np.asarray(z, dtype=float))
        return -e if n % 2 else e

    def iwp_closed_form(self, m, s, need_loss):
        e = safe_exp(-s / 2.0 - m)
        return (e if need_loss else None), -e, e

    def sgd_step(self, **settings) -> Callable[..., float]:
        settings.pop("order", None)  # the closed form has no truncation order
        return fused_exponential_step(**settings)


def _shrink_and_project(
    theta: np.ndarray,
    thn: np.ndarray,
    noised: np.ndarray | None,
    shrink: float,
    grad: np.ndarray,
    r2: float,
    radius: float | None,
) -> float:
    """The end of a fused step, in place: theta <- theta - shrink theta_n - grad (theta_n =
    theta * noised, already in ``thn``; theta itself without noised coordinates), projected
    on the ball of squared radius ``r2``; returns the new ||theta||^2."""
    if noised is None:
        theta *= 1.0 - shrink
    else:
        np.multiply(thn, shrink, out=thn)
        theta -= thn
    theta -= grad
    sq = float(np.dot(theta, theta))
    if sq > r2:  # the projection on the ball of radius ``radius``
        theta *= radius / math.sqrt(sq)
        sq = r2
    return sq


def fused_exponential_step(
    w: float,
    sigma2: float,
    alpha: float,
    p: int,
    radius: float | None,
    noised: np.ndarray | None,
    corrected: bool,
) -> Callable[..., float]:
    """One IWP-SGD step of the exponential loss for one replication, fused, theta in place.

    The same quantities as :func:`~privest.learn.iwp_losses.iwp_gradient` (closed form,
    Sec. 5.2; ``corrected=False``: the plain gradient of the naive and oracle fits, labels
    weighted by ``w`` = S~ or 1) with one exponential per example (e^{m} = 1 / e^{-m}),
    preallocated buffers (``out=``), the label applied once to both exponentials so that one
    BLAS product gives both weighted sums, and no overflow scan: when an exponent overflows,
    a sum the step needs anyway is not finite, theta is left unchanged and the step returns
    -1; the caller then takes the clipping path (which warns). Arguments: theta (p,), X
    (B, p), y (B,), -y (B,), the step size and ||theta||^2; the step projects theta on the
    ball of radius ``radius`` and returns its new squared norm (one norm per step, not two).
    """
    # gradient = c X'(y a) + (alpha - sigma^2 c sum b) theta_n, c = e^{-s/2} / B (Sec. 5.2),
    # a = w1 e^{m} - w e^{-m}, b = w e^{-m} + w1 e^{m}, w1 = 1 - w; the plain gradient
    # (naive, oracle) is a = -e^{-m}, b = 0
    a0, a1 = -w, 1.0 - w
    b0, b1 = (w, 1.0 - w) if corrected else (0.0, 0.0)
    s2 = sigma2 if corrected else 0.0
    half_s2 = 0.5 * s2
    r2 = math.inf if radius is None else radius * radius
    M, grad = np.empty((2, p)), np.empty(p)
    sums, thn, coef = np.empty(2), np.empty(p), np.empty(2)
    dot, exp, divide, multiply, isfinite, mexp = (
        np.dot, np.exp, np.divide, np.multiply, math.isfinite, math.exp
    )  # fmt: skip
    bufs: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def buffers(nb: int) -> tuple[np.ndarray, np.ndarray]:
        bufs[nb] = (np.empty((2, nb)), np.ones(nb))
        return bufs[nb]

    def step(theta, X, y, neg_y, gamma, sq) -> float:
        nb = y.size
        Z, ones = bufs.get(nb) or buffers(nb)
        E = Z[0]
        dot(X, theta, out=E)
        multiply(E, neg_y, out=E)
        exp(E, out=E)  # e^{-m}, m = y theta'x
        divide(1.0, E, out=Z[1])
        dot(Z, ones, out=sums)  # (sum e^{-m}, sum e^{m})
        s_neg, s_pos = sums.tolist()
        if not isfinite(s_neg + s_pos):  # an exponent overflowed
            return -1.0
        if noised is not None:
            multiply(theta, noised, out=thn)
            sq = float(dot(thn, thn))
        c = mexp(-half_s2 * sq) / nb
        Z *= y
        dot(Z, X, out=M)  # (sum y e^{-m} x, sum y e^{m} x)
        coef[0] = a0 * gamma * c
        coef[1] = a1 * gamma * c
        dot(coef, M, out=grad)
        shrink = gamma * (alpha - s2 * c * (b0 * s_neg + b1 * s_pos))
        return _shrink_and_project(theta, thn, noised, shrink, grad, r2, radius)

    consts = [alpha, r2, _radius(radius), a0, a1, b0, b1, s2, half_s2, 0.0]
    step.kernel = (False, np.array(consts), _mask(noised), _NO_SERIES)  # type: ignore[attr-defined]
    return step


def _radius(radius: float | None) -> float:
    return math.nan if radius is None else float(radius)


def _mask(noised: np.ndarray | None) -> np.ndarray:
    return np.empty(0) if noised is None else np.ascontiguousarray(noised, dtype=float)


#: the series arguments of the compiled exponential step (none)
_NO_SERIES = (np.empty(0), np.zeros(1, np.int64), np.empty(0), np.zeros(1, np.int64))


def _series_matrix(C: np.ndarray, K: int, w: float) -> np.ndarray:
    """G with G @ (c_0, ..., c_K) = the coefficients, shape (2: a, b; L = 2K + 2 powers of
    sig; 2: sig(m), sig(-m)) flattened, of a = w A_K(m) - (1 - w) A_K(-m) and
    b = w B_K(m) + (1 - w) B_K(-m) (:func:`~privest.learn.iwp_losses.iwp_gradient`)."""
    L = 2 * K + 2
    g = np.zeros((2, L, 2, K + 1))
    for k in range(K + 1):
        col_a = np.array([-1.0, 1.0] + [0.0] * (L - 2)) if k == 0 else C[:L, 2 * k]  # f^(2k+1)
        g[0, :, 0, k], g[0, :, 1, k] = w * col_a, -(1.0 - w) * col_a
        if k < K:  # f^(2k+2) = P_{2k+1}
            g[1, :, 0, k], g[1, :, 1, k] = w * C[:L, 2 * k + 1], (1.0 - w) * C[:L, 2 * k + 1]
    return g.reshape(4 * L, K + 1)


def fused_logistic_step(
    order: int | tuple[np.ndarray, np.ndarray] | None,
    w: float,
    sigma2: float,
    alpha: float,
    p: int,
    radius: float | None,
    noised: np.ndarray | None,
    corrected: bool,
) -> Callable[..., float] | None:
    """One IWP-SGD step of the logistic loss's truncated series for one replication, fused,
    theta in place (``None``, the generic step, for the naive and oracle fits or an order
    the generic step refuses).

    The same quantities as :func:`~privest.learn.iwp_losses.iwp_gradient` (App. D.5): with
    f^{(1)} = sig - 1 and f^{(n)} = P_{n-1}(sig) for n >= 2, the truncated A_K and B_K are
    polynomials in sig = sigmoid(+-m) whose coefficients are the packaged P_n's combined
    with c_k = (-s/2)^k / k!, so a step is one sigmoid of (m, -m), its powers, one product
    with the (a, b) coefficients of this step, and the gradient's product, in preallocated
    buffers. ``order``: K, or (t grid, best K) of the loss's ``order_table`` ("auto": K
    read at t = s/2 each step). Arguments and return value as the exponential's fused step.
    """
    if not corrected or order is None:
        return None
    C = sigmoid_coefficients()
    k_top = int(order) if isinstance(order, (int, np.integer)) else int(order[1].max())
    if 2 * k_top >= C.shape[1]:
        return None  # beyond the tabulated P_n: the generic step raises
    grid = bests = None
    if not isinstance(order, (int, np.integer)):
        grid, bests = order[0].tolist(), order[1].tolist()
    mats = {K: _series_matrix(C, K, w) for K in range(k_top + 1)}
    r2 = math.inf if radius is None else radius * radius
    grad, thn, cvec = np.empty(p), np.empty(p), np.ones(k_top + 1)  # cvec[0] = c_0 = 1
    cvecs = [cvec[: K + 1] for K in range(k_top + 1)]
    qflat = {K: np.empty(m.shape[0]) for K, m in mats.items()}
    qs = {K: q.reshape(2, -1) for K, q in qflat.items()}
    dot, multiply, negative, expit, add = (
        np.dot, np.multiply, np.negative, special.expit, np.add.reduce
    )  # fmt: skip
    bufs: dict[int, tuple] = {}

    def buffers(nb: int) -> tuple:
        """Per batch size: the powers V (row j: sig^j of (m, -m)), the (2L, nb) views of
        their first L rows, and the (a, b) buffer."""
        V = np.empty((2 * k_top + 2, 2, nb))
        V[0] = 1.0
        views = {K: V[: 2 * K + 2].reshape(4 * K + 4, nb) for K in mats}
        bufs[nb] = (V, views, np.empty((2, nb)))
        return bufs[nb]

    def step(theta, X, y, neg_y, gamma, sq) -> float:
        nb = y.size
        V, views, AB = bufs.get(nb) or buffers(nb)
        S = V[1]
        dot(X, theta, out=S[0])
        multiply(S[0], y, out=S[0])  # m = y theta'x
        negative(S[0], out=S[1])
        expit(S, out=S)  # sig(m), sig(-m)
        if noised is not None:
            multiply(theta, noised, out=thn)
            sq = float(dot(thn, thn))
        s = sigma2 * sq
        if grid is None:
            K = k_top
        else:  # K = the best order at t = s / 2 (the table's searchsorted, clipped)
            K = bests[min(bisect_left(grid, 0.5 * s), len(grid) - 1)]
        coef = 1.0
        for k in range(1, K + 1):
            coef = coef * (-s / 2.0) / k
            cvec[k] = coef
        for j in range(2, 2 * K + 2):  # the powers sig^j (np.vander's order of products)
            multiply(V[j - 1], S, out=V[j])
        dot(mats[K], cvecs[K], out=qflat[K])
        dot(qs[K], views[K], out=AB)
        # theta <- theta - gamma (X'(y a) / nb + (alpha - sigma^2 mean b) theta_n)
        shrink = gamma * (alpha - sigma2 * (add(AB[1]) / nb))
        multiply(AB[0], y, out=AB[0])
        g = dot(AB[0], X, out=grad)
        g *= gamma / nb
        return _shrink_and_project(theta, thn, noised, shrink, g, r2, radius)

    mflat = np.concatenate([mats[K].ravel() for K in range(k_top + 1)])
    moff = np.cumsum([0] + [mats[K].size for K in range(k_top)]).astype(np.int64)
    series = (
        (mflat, moff, np.empty(0), np.array([k_top], np.int64))
        if grid is None
        else (mflat, moff, np.asarray(grid, float), np.asarray(bests, np.int64))
    )
    consts = [alpha, r2, _radius(radius), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, sigma2]
    step.kernel = (True, np.array(consts), _mask(noised), series)  # type: ignore[attr-defined]
    return step


def logistic_margin_derivative(z: np.ndarray, n: int) -> np.ndarray:
    """f^{(n)}(z) of f(z) = log(1 + e^-z): f' = -sig(-z), f^{(n)} = P_{n-1}(sig(z)), n >= 2."""
    if n == 0:
        return np.logaddexp(0.0, -z)
    if n == 1:
        return -special.expit(-z)
    polys = sigmoid_derivative_polynomials()
    if n - 1 >= len(polys):
        raise ValidationError(f"order: logistic derivatives are tabulated up to {len(polys)}")
    return polys[n - 1](special.expit(z))


def logistic_margin_derivatives(z: np.ndarray, orders: list[int]) -> list[np.ndarray]:
    """Every f^{(n)} of the logistic margin loss from one sigmoid, one Vandermonde matrix of
    its powers and one matrix product (f^{(n)} = P_{n-1}(sig), n >= 2)."""
    z = np.asarray(z, dtype=float)
    sig = special.expit(z)
    high = [n for n in orders if n >= 2]
    table: dict[int, np.ndarray] = {}
    if high:
        coef = sigmoid_coefficients()
        if max(high) - 1 >= coef.shape[1]:
            raise ValidationError(
                f"order: logistic derivatives are tabulated up to {coef.shape[1]}"
            )
        V = np.vander(sig.ravel(), coef.shape[0], increasing=True)
        D = V @ coef[:, [n - 1 for n in high]]
        table = {n: D[:, i].reshape(z.shape) for i, n in enumerate(high)}
    if 0 in orders:
        table[0] = np.logaddexp(0.0, -z)
    if 1 in orders:
        table[1] = sig - 1.0
    return [table[n] for n in orders]


def squared_margin_derivative(z: np.ndarray, n: int) -> np.ndarray:
    """f^{(n)}(z) of f(z) = (z - 1)^2 / 2."""
    if n == 0:
        return 0.5 * (z - 1.0) ** 2
    if n == 1:
        return z - 1.0
    return np.full_like(z, 1.0 if n == 2 else 0.0)
