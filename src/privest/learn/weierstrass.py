"""Bernoulli and Weierstrass transforms and their inverses (paper 004, Sec. 5.1, Thm 5.1, App. D).

* Bernoulli (label noise): B_eps[g](y) = S g(y) + (1-S) g(-y); inverse
  B_eps^{-1}[g](y~) = S~ g(y~) + (1-S~) g(-y~), S~ = 1/(1 - e^-eps) (Thm 5.1).
* Weierstrass (feature noise): W_{s}[f](z) = E f(z + sqrt(s) G). Its inverse is the series
  sum_k (-s/2)^k / k! f^{(2k)} (Thm 5.1). Closed forms: e^{a z} -> e^{-s a^2/2} e^{a z};
  polynomials via probabilists' Hermite polynomials, z^n -> s^{n/2} He_n(z / sqrt(s)).
* Margin (GLM) losses f(y theta^T x): the p-dimensional inverse reduces to a 1-D one with
  s = sigma^2 ||theta||^2 (Sec. 5.2, App. D.5). A :class:`~privest.learn.losses.MarginLoss`
  gives f^{(n)}; the truncated inverse of order K is sum_{k<=K} (-s/2)^k / k! f^{(2k)}.
  The losses themselves live in :mod:`privest.learn.losses` (one class per loss, shared
  with the DR estimators); what applies to a loss is read from its capabilities
  (``inverse_weierstrass``: closed or series; ``order_table``), never from its name.
* Truncation bias (App. D.7, Fig. 3): bias_K(t) = sup_z |W_{2t}[g_t^K](z) - f(z)| with
  g_t^K = sum_{k<=K} (-t)^k/k! f^{(2k)}, by Gauss-Hermite quadrature.

Rule for K ("auto", :func:`choose_order`): for the logistic loss the series is only
asymptotic, so at each step we take K = argmin_{K in {1,2,3}} bias_K(t) at the current
t = sigma^2 ||theta||^2 / 2 (the "optimal truncation" of App. D.7), read from a table of
bias_K computed once on a log grid of t (sup over z in [-6, 6]). The table is the logistic
loss's (its ``order_table``): a user margin loss needs an explicit integer order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numpy.polynomial import Polynomial
from numpy.polynomial import hermite_e as H
from scipy import special

from privest.errors import ValidationError
from privest.learn.losses import (
    ExponentialLoss,
    LogisticLoss,
    MarginLoss,
    SquaredLoss,
    get_margin_loss,
)
from privest.learn.losses.margin import sigmoid_derivative_polynomials

__all__ = [
    "AUTO_ORDERS",
    "ExponentialLoss",
    "LogisticLoss",
    "MarginLoss",
    "SquaredLoss",
    "bernoulli_inverse",
    "bernoulli_transform",
    "best_orders",
    "choose_order",
    "compute_order_table",
    "get_margin_loss",
    "inverse_weight",
    "inverse_weierstrass_polynomial",
    "keep_probability",
    "load_order_table",
    "sigmoid_derivative_polynomials",
    "truncated_inverse",
    "truncation_bias",
    "weierstrass_polynomial",
    "weierstrass_quadrature",
    "write_order_table",
]

AUTO_ORDERS = (1, 2, 3)


# --------------------------------------------------------------------- Bernoulli (labels)
def keep_probability(epsilon: float) -> float:
    """S(eps) = 1/(1 + e^-eps) (1 when eps = inf)."""
    return 1.0 if math.isinf(epsilon) else float(special.expit(epsilon))


def inverse_weight(epsilon: float) -> float:
    """S~(eps) = 1/(1 - e^-eps) = e^eps/(e^eps - 1) (1 when eps = inf)."""
    if math.isinf(epsilon):
        return 1.0
    if not epsilon > 0:
        raise ValidationError(f"epsilon_y: {epsilon!r} must be > 0 for the label correction")
    return float(-1.0 / np.expm1(-epsilon))


def bernoulli_transform(g_y: np.ndarray, g_minus_y: np.ndarray, epsilon: float) -> np.ndarray:
    """B_eps[g](y) = S g(y) + (1-S) g(-y), given g(y) and g(-y)."""
    s = keep_probability(epsilon)
    return s * np.asarray(g_y) + (1.0 - s) * np.asarray(g_minus_y)


def bernoulli_inverse(g_y: np.ndarray, g_minus_y: np.ndarray, epsilon: float) -> np.ndarray:
    """B_eps^{-1}[g](y~) = S~ g(y~) + (1-S~) g(-y~) (Thm 5.1)."""
    w = inverse_weight(epsilon)
    return w * np.asarray(g_y) + (1.0 - w) * np.asarray(g_minus_y)


# ----------------------------------------------------------------- Weierstrass (features)
def weierstrass_quadrature(
    f: Callable[[np.ndarray], np.ndarray], z: np.ndarray, s: float, n_nodes: int = 120
) -> np.ndarray:
    """W_s[f](z) = E f(z + sqrt(s) G), G ~ N(0, 1), by Gauss-Hermite (hermegauss) quadrature."""
    nodes, weights = H.hermegauss(n_nodes)
    weights = weights / math.sqrt(2.0 * math.pi)
    z = np.asarray(z, dtype=float)
    vals = f(z[..., None] + math.sqrt(s) * nodes)
    return vals @ weights


def inverse_weierstrass_polynomial(poly: Polynomial, s: float) -> Polynomial:
    """W_s^{-1}[P] for a polynomial P: z^n -> s^{n/2} He_n(z / sqrt(s)) (Thm 5.1's series)."""
    coef = np.asarray(poly.coef, dtype=float)
    if s == 0:
        return Polynomial(coef)
    sd = math.sqrt(s)
    out = Polynomial([0.0])
    for n, a in enumerate(coef):
        if a == 0:
            continue
        he = H.herme2poly(np.eye(n + 1)[n])  # He_n as power-series coefficients
        out = out + a * Polynomial(he * sd ** (n - np.arange(n + 1)))
    return out


def _double_factorial_odd(k: int) -> int:
    """(2k - 1)!! = E G^{2k} for G ~ N(0, 1) (1 for k = 0)."""
    return math.factorial(2 * k) // (2**k * math.factorial(k))


def weierstrass_polynomial(poly: Polynomial, s: float) -> Polynomial:
    """W_s[P] for a polynomial: E (z + sqrt(s) G)^n = sum_k C(n, 2k) z^{n-2k} s^k (2k-1)!!."""
    coef = np.asarray(poly.coef, dtype=float)
    out = np.zeros(coef.size)
    for n, a in enumerate(coef):
        for k in range(n // 2 + 1):
            out[n - 2 * k] += a * math.comb(n, 2 * k) * s**k * _double_factorial_odd(k)
    return Polynomial(out)


def truncated_inverse(
    loss: MarginLoss, z: np.ndarray, s: np.ndarray | float, order: int, shift: int = 0
) -> np.ndarray:
    """sum_{k<=order} (-s/2)^k / k! f^{(2k + shift)}(z): W_s^{-1}[f^{(shift)}] truncated at K."""
    z = np.asarray(z, dtype=float)
    s = np.asarray(s, dtype=float)
    out = np.zeros(np.broadcast_shapes(z.shape, s.shape))
    coef = np.ones_like(s)
    for k in range(order + 1):
        if k:
            coef = coef * (-s / 2.0) / k
        out = out + coef * loss.derivative(z, 2 * k + shift)
    return out


def truncation_bias(
    t: float | np.ndarray,
    order: int,
    loss: str | MarginLoss = "logistic",
    z_grid: np.ndarray | None = None,
    n_nodes: int = 1601,
) -> np.ndarray:
    """bias_K(t) = sup_z |W_{2t}[g_t^K](z) - f(z)| over ``z_grid`` (default [-6, 6]) (App. D.7).

    The Gaussian expectation uses a dense Simpson rule on [-10, 10] standard deviations:
    Gauss-Hermite with 80 nodes is inaccurate for t >= 10 because g_t^K has
    sigmoid-like features on a scale 1/sqrt(2t) of the node spacing.
    """
    f = get_margin_loss(loss)
    z = np.linspace(-6.0, 6.0, 241) if z_grid is None else np.asarray(z_grid, dtype=float)
    ts = np.atleast_1d(np.asarray(t, dtype=float))
    nodes = np.linspace(-10.0, 10.0, n_nodes | 1)
    h = nodes[1] - nodes[0]
    simpson = np.ones(nodes.size)
    simpson[1:-1:2], simpson[2:-1:2] = 4.0, 2.0
    weights = simpson * h / 3.0 * np.exp(-0.5 * nodes**2) / math.sqrt(2.0 * math.pi)
    out = np.empty(ts.shape)
    for i, ti in enumerate(ts):
        pts = z[:, None] + math.sqrt(2.0 * ti) * nodes
        g = truncated_inverse(f, pts, 2.0 * ti, order)
        out[i] = np.max(np.abs(g @ weights - f(z)))
    return out if np.ndim(t) else out[0]


ORDER_TABLE_T_GRID = (1e-3, 200.0, 61)  # np.geomspace(*ORDER_TABLE_T_GRID): the t grid


def compute_order_table(loss: str = "logistic") -> dict:
    """bias_K(t) for K in :data:`AUTO_ORDERS` on the log grid of t (App. D.7, Fig. 3).

    This is the expensive computation (about 10-25 s) behind :func:`choose_order`; for the
    logistic loss its result ships with privest as package data (``learn/data/``), so it
    runs only when regenerating that file (``make data``, which calls
    :func:`write_order_table`).
    """
    t_grid = np.geomspace(*ORDER_TABLE_T_GRID)
    bias = np.stack([truncation_bias(t_grid, k, loss, n_nodes=1601) for k in AUTO_ORDERS])
    return {
        "loss": str(loss),
        "orders": list(AUTO_ORDERS),
        "t_grid": t_grid.tolist(),
        "bias": bias.tolist(),
        "note": "bias_K(t) = sup_{|z|<=6} |W_2t[g_t^K](z) - f(z)| (paper 004, App. D.7); "
        "regenerate with: make data",
    }


def write_order_table(path: str | None = None) -> str:
    """Recompute the logistic bias table and write it as JSON (default: the packaged file)."""
    import json
    from pathlib import Path

    table = get_margin_loss("logistic").order_table
    target = Path(path) if path else Path(__file__).with_name("data") / str(table)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(compute_order_table("logistic"), indent=1) + "\n")
    return str(target)


@lru_cache(maxsize=4)
def load_order_table(file: str = "logistic_truncation_bias.json") -> tuple[np.ndarray, np.ndarray]:
    """(t_grid, bias) of a packaged table (default: the logistic loss's), bias[i, j] =
    bias_{AUTO_ORDERS[i]}(t_grid[j]), computed once by :func:`write_order_table`."""
    import json
    from importlib import resources

    text = resources.files("privest.learn").joinpath("data", file).read_text()
    table = json.loads(text)
    return np.asarray(table["t_grid"], dtype=float), np.asarray(table["bias"], dtype=float)


def best_orders(loss: str | MarginLoss) -> tuple[np.ndarray, np.ndarray]:
    """(t grid, K* at each grid point) of the loss's ``order_table`` (:func:`choose_order`)."""
    f = get_margin_loss(loss)
    if f.order_table is None:
        raise ValidationError(
            f"loss: order='auto' is tabulated for the logistic loss only, not {f.name!r}"
        )
    t_grid, bias = load_order_table(f.order_table)
    return t_grid, np.asarray(AUTO_ORDERS)[np.argmin(bias, axis=0)]


def choose_order(t: float | np.ndarray, loss: str | MarginLoss = "logistic") -> np.ndarray:
    """K* = argmin_{K in {1, 2, 3}} bias_K(t), t = sigma^2 ||theta||^2 / 2 (optimal truncation),
    read from the loss's ``order_table``."""
    t_grid, best = best_orders(loss)
    idx = np.clip(np.searchsorted(t_grid, np.asarray(t, dtype=float)), 0, t_grid.size - 1)
    return best[idx]
