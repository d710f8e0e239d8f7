"""IWP loss and gradient for linear margin models, vectorised over replications and a batch.

Paper 004, eqs. (6)-(7), Sec. 5.2 and App. D.5. With the noisy margin
m~ = y~ theta^T x~, s = sigma^2 ||theta||^2 and the label weights w+ = S~, w- = 1 - S~:

    IWP loss      l~ = w+ F(m~) + w- F(-m~),            F = W_s^{-1}[f]
    IWP gradient  sum_s w_s (s y~ x~ A(s m~) - sigma^2 theta B(s m~)),
                  A = W_s^{-1}[f'], B = W_s^{-1}[f'']   (eq. 16)

in closed form for the exponential and squared losses and truncated at order K otherwise
(A_K, F_K to order K, B_K to order K - 1, so the gradient is exactly that of F_K). The naive
("plain") versions evaluate f on the noisy (or, for the oracle, the clean) data.

What applies is read from the loss's capabilities (:class:`~privest.learn.losses.MarginLoss`),
never from its name: ``inverse_weierstrass == "closed"`` (the exponential and squared
losses) gives the exact transform of the loss's ``iwp_closed_form``; otherwise the series
of its own derivatives, so a user margin loss called "exponential" gets the truncated
series. ``order="auto"`` reads the loss's truncation-bias table (``order_table``, App. D.7:
the logistic loss's), so it is refused for losses without one.

Shapes: ``theta`` (R, p) for R replications; ``X`` (R, B, p); ``y`` (R, B). A 1-D theta and
2-D X are accepted and treated as R = 1.
"""

from __future__ import annotations

import numpy as np

from privest.errors import ValidationError
from privest.learn.losses import MarginLoss, get_margin_loss
from privest.learn.losses.margin import ExponentOverflowWarning
from privest.learn.weierstrass import choose_order, inverse_weight

__all__ = [
    "ExponentOverflowWarning",
    "iwp_coefficients",
    "iwp_gradient",
    "iwp_loss",
    "iwp_regression_gradient",
    "iwp_regression_loss",
    "plain_gradient",
    "plain_loss",
]


def _as_batch(theta: np.ndarray, X: np.ndarray, y: np.ndarray):
    theta = np.asarray(theta, dtype=float)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    squeeze = theta.ndim == 1
    if squeeze:
        theta, X, y = theta[None], X[None], y[None]
    return theta, X, y, squeeze


def _margins(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return y * (X @ theta[:, :, None])[:, :, 0]


def _resolve_order(order: int | str, s: np.ndarray, f: MarginLoss) -> np.ndarray | int:
    """K for the truncated series: ``"auto"`` (a loss with an ``order_table``, App. D.7) or
    an integer >= 0."""
    if isinstance(order, str) and order == "auto":
        if f.order_table is not None:
            return choose_order(s / 2.0, f)
        raise ValidationError(
            f"order: 'auto' reads the logistic loss's truncation-bias table (paper 004, "
            f"App. D.7) and does not apply to {f!r}; give an explicit integer order K >= 0 "
            "(the series uses f^(n) up to n = 2K + 1)"
        )
    if isinstance(order, (bool, np.bool_)) or not isinstance(order, (int, np.integer)) or order < 0:
        raise ValidationError(f"order: {order!r} must be 'auto' or an integer >= 0")
    return int(order)


def _truncated_all(
    f: MarginLoss, u: np.ndarray, s: np.ndarray, order: np.ndarray | int, need_loss: bool
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(F_K, A_K, B_K): sums over k <= K (B: k <= K - 1) of (-s/2)^k/k! f^{(2k + 0, 1, 2)}(u).

    K may differ per replication (rows of u); every derivative is evaluated once.
    """
    k_arr = np.asarray(order)
    uniform = k_arr.ndim == 0 or bool(np.all(k_arr == k_arr.flat[0]))
    kmax = int(k_arr.max())
    orders = list(range(0 if need_loss else 1, 2 * kmax + 2))
    d = dict(zip(orders, f.derivatives(u, orders), strict=True))
    k_col = None if uniform else np.broadcast_to(k_arr, s.shape[:1])[:, None]
    F = np.zeros_like(u) if need_loss else None
    A = np.zeros_like(u)
    B = np.zeros_like(u)
    coef = np.ones_like(s)
    for k in range(kmax + 1):
        if k:
            coef = coef * (-s / 2.0) / k
        keep = 1.0 if uniform else (k <= k_col)
        if need_loss:
            F = F + keep * coef * d[2 * k]
        A = A + keep * coef * d[2 * k + 1]
        if k < kmax:
            keep_b = 1.0 if uniform else (k <= k_col - 1)
            B = B + keep_b * coef * d[2 * k + 2]
    return F, A, B


def iwp_coefficients(
    loss: str | MarginLoss,
    m: np.ndarray,
    s: np.ndarray,
    order: int | str = "auto",
    need_loss: bool = False,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(F, A, B) of the module docstring at the margins ``m`` (R, B), s = sigma^2 ||theta||^2."""
    f = get_margin_loss(loss)
    if f.inverse_weierstrass == "closed":
        return f.iwp_closed_form(m, s, need_loss)
    K = _resolve_order(order, s[:, 0], f)
    return _truncated_all(f, m, s, K, need_loss)


def iwp_loss(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    sigma2: float,
    epsilon_y: float,
    loss: str | MarginLoss = "exponential",
    order: int | str = "auto",
    noised: np.ndarray | None = None,
) -> np.ndarray:
    """Per-example IWP loss T^{-1}[l(theta, ., .)](x~, y~) (eq. 6), shape (R, B) or (B,).

    ``noised``: boolean mask of the noised coordinates (default all); a public un-noised
    column such as an intercept is left out of sigma^2 ||theta||^2 (A7 in docs/iwp-sgd.md).
    """
    theta, X, y, squeeze = _as_batch(theta, X, y)
    w = inverse_weight(epsilon_y)
    m = _margins(theta, X, y)
    thn = theta if noised is None else theta * noised
    s = sigma2 * np.sum(thn**2, axis=1, keepdims=True)
    Fp, _, _ = iwp_coefficients(loss, m, s, order, need_loss=True)
    out = w * Fp
    if w != 1.0:
        Fm, _, _ = iwp_coefficients(loss, -m, s, order, need_loss=True)
        out = out + (1.0 - w) * Fm
    return out[0] if squeeze else out


def iwp_gradient(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    sigma2: float,
    epsilon_y: float,
    loss: str | MarginLoss = "exponential",
    order: int | str = "auto",
    weight: float | None = None,
    noised: np.ndarray | None = None,
) -> np.ndarray:
    """Batch mean of the IWP gradient (eq. 7 / eq. 16), shape (R, p) or (p,).

    ``weight`` (S~) may be passed precomputed to save work in a hot loop; ``noised`` as in
    :func:`iwp_loss`.
    """
    theta, X, y, squeeze = _as_batch(theta, X, y)
    w = inverse_weight(epsilon_y) if weight is None else weight
    m = _margins(theta, X, y)
    thn = theta if noised is None else theta * noised
    s = sigma2 * np.sum(thn**2, axis=1, keepdims=True)
    if w == 1.0:
        _, a, b = iwp_coefficients(loss, m, s, order)
    else:
        _, A2, B2 = iwp_coefficients(loss, np.stack([m, -m]), s, order)
        a, b = w * A2[0] - (1.0 - w) * A2[1], w * B2[0] + (1.0 - w) * B2[1]
    nb = X.shape[1]
    g = ((a * y)[:, None, :] @ X)[:, 0, :] / nb - sigma2 * thn * b.mean(axis=1, keepdims=True)
    return g[0] if squeeze else g


def plain_loss(
    theta: np.ndarray, X: np.ndarray, y: np.ndarray, loss: str | MarginLoss = "exponential"
) -> np.ndarray:
    """Per-example f(y theta^T x): the loss on clean data, or the naive loss on a release."""
    theta, X, y, squeeze = _as_batch(theta, X, y)
    f = get_margin_loss(loss)
    out = f(_margins(theta, X, y))
    return out[0] if squeeze else out


def plain_gradient(
    theta: np.ndarray, X: np.ndarray, y: np.ndarray, loss: str | MarginLoss = "exponential"
) -> np.ndarray:
    """Batch mean of grad f(y theta^T x) = f'(m) y x (naive on a release, oracle on clean data)."""
    theta, X, y, squeeze = _as_batch(theta, X, y)
    f = get_margin_loss(loss)
    d = f.derivative(_margins(theta, X, y), 1)
    g = ((d * y)[:, None, :] @ X)[:, 0, :] / X.shape[1]
    return g[0] if squeeze else g


def iwp_regression_loss(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    sigma2: float,
    sigma2_y: float = 0.0,
    corrected: bool = True,
) -> np.ndarray:
    """1/2 (theta^T x~ - y~)^2 - sigma^2 ||theta||^2 / 2 - sigma_y^2 / 2 (App. E.2), unbiased."""
    theta, X, y, squeeze = _as_batch(theta, X, y)
    r = (X @ theta[:, :, None])[:, :, 0] - y
    out = 0.5 * r**2
    if corrected:
        out = out - 0.5 * sigma2 * np.sum(theta**2, axis=1, keepdims=True) - 0.5 * sigma2_y
    return out[0] if squeeze else out


def iwp_regression_gradient(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    sigma2: float,
    corrected: bool = True,
    noised: np.ndarray | None = None,
) -> np.ndarray:
    """Batch mean of x~ (theta^T x~ - y~) - sigma^2 theta (App. E.2); naive omits the last term."""
    theta, X, y, squeeze = _as_batch(theta, X, y)
    r = (X @ theta[:, :, None])[:, :, 0] - y
    g = (r[:, None, :] @ X)[:, 0, :] / X.shape[1]
    if corrected:
        g = g - sigma2 * (theta if noised is None else theta * noised)
    return g[0] if squeeze else g
