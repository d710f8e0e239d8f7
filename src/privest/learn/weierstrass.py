"""Bernoulli and Weierstrass transforms and their inverses (paper 004, Sec. 5.1, Thm 5.1, App. D).

* Bernoulli (label noise): B_eps[g](y) = S g(y) + (1-S) g(-y); inverse
  B_eps^{-1}[g](y~) = S~ g(y~) + (1-S~) g(-y~), S~ = 1/(1 - e^-eps) (Thm 5.1).
* Weierstrass (feature noise): W_{s}[f](z) = E f(z + sqrt(s) G). Its inverse is the series
  sum_k (-s/2)^k / k! f^{(2k)} (Thm 5.1). Closed forms: e^{a z} -> e^{-s a^2/2} e^{a z};
  polynomials via probabilists' Hermite polynomials, z^n -> s^{n/2} He_n(z / sqrt(s)).
* Margin (GLM) losses f(y theta^T x): the p-dimensional inverse reduces to a 1-D one with
  s = sigma^2 ||theta||^2 (Sec. 5.2, App. D.5). :class:`MarginLoss` gives f^{(n)}; the
  truncated inverse of order K is sum_{k<=K} (-s/2)^k / k! f^{(2k)}. The built-in losses
  are the types :class:`ExponentialLoss`, :class:`SquaredLoss` (closed forms) and
  :class:`LogisticLoss`; dispatch is on these types, never on a loss's name.
* Truncation bias (App. D.7, Fig. 3): bias_K(t) = sup_z |W_{2t}[g_t^K](z) - f(z)| with
  g_t^K = sum_{k<=K} (-t)^k/k! f^{(2k)}, by Gauss-Hermite quadrature.

Rule for K ("auto", :func:`choose_order`): for the logistic loss the series is only
asymptotic, so at each step we take K = argmin_{K in {1,2,3}} bias_K(t) at the current
t = sigma^2 ||theta||^2 / 2 (the "optimal truncation" of App. D.7), read from a table of
bias_K computed once on a log grid of t (sup over z in [-6, 6]). The table is the logistic
loss's: a user :class:`MarginLoss` needs an explicit integer order.
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

__all__ = [
    "AUTO_ORDERS",
    "ExponentialLoss",
    "LogisticLoss",
    "MarginLoss",
    "SquaredLoss",
    "bernoulli_inverse",
    "bernoulli_transform",
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


# ----------------------------------------------------------------------- margin losses
@lru_cache(maxsize=1)
def sigmoid_derivative_polynomials(n_max: int = 10) -> tuple[Polynomial, ...]:
    """P_n with sig^{(n)}(z) = P_n(sig(z)): P_0(s) = s, P_{n+1} = P_n' s (1 - s)."""
    polys = [Polynomial([0.0, 1.0])]
    logistic_factor = Polynomial([0.0, 1.0, -1.0])
    for _ in range(n_max):
        polys.append(polys[-1].deriv() * logistic_factor)
    return tuple(polys)


@lru_cache(maxsize=1)
def _sigmoid_coefficients() -> np.ndarray:
    """Matrix C with C[j, n] the coefficient of s^j in P_n (increasing powers)."""
    polys = sigmoid_derivative_polynomials()
    deg = max(q.degree() for q in polys)
    C = np.zeros((deg + 1, len(polys)))
    for n, q in enumerate(polys):
        C[: q.coef.size, n] = q.coef
    return C


class MarginLoss:
    """A margin loss f(z), z = y theta^T x, given by its derivatives f^{(n)}(z) (Sec. 5.2).

    ``derivative(z, n)`` must return f^{(n)}(z) elementwise for n = 0, ..., 2K + 1 (K the
    truncation order). A user-defined loss always uses the series truncated at an explicit
    integer ``order`` (Sec. 5.2 with the series of Thm 5.1 truncated), whatever its
    ``name``: only the built-in
    losses, recognised by type, get a closed form (exponential, squared) or the
    ``order="auto"`` table (logistic).
    """

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
        return self._derivative(np.asarray(z, dtype=float), n)

    def derivatives(self, z: np.ndarray, orders: list[int]) -> list[np.ndarray]:
        """f^{(n)}(z) for each n in ``orders``."""
        z = np.asarray(z, dtype=float)
        return [self.derivative(z, n) for n in orders]

    def __call__(self, z: np.ndarray) -> np.ndarray:
        return self.derivative(z, 0)

    def __repr__(self) -> str:
        return f"MarginLoss({self.name!r})"


class ExponentialLoss(MarginLoss):
    """f(z) = e^-z: W_s^{-1}[f](z) = e^{-s/2} e^-z exactly (Sec. 5.2)."""

    def __init__(self) -> None:
        super().__init__("exponential", _exp_derivative)


class SquaredLoss(MarginLoss):
    """f(z) = (z - 1)^2 / 2: W_s^{-1}[f] = f - s/2 exactly (Sec. 5.2)."""

    def __init__(self) -> None:
        super().__init__("squared", _squared_derivative)


class LogisticLoss(MarginLoss):
    """f(z) = log(1 + e^-z): asymptotic series, truncated at K (``"auto"``: App. D.7)."""

    def __init__(self) -> None:
        super().__init__("logistic", _logistic_derivative)

    def derivatives(self, z: np.ndarray, orders: list[int]) -> list[np.ndarray]:
        """One sigmoid, one Vandermonde matrix of its powers and one matrix product give
        every f^{(n)} = P_{n-1}(sig), n >= 2."""
        z = np.asarray(z, dtype=float)
        sig = special.expit(z)
        high = [n for n in orders if n >= 2]
        table: dict[int, np.ndarray] = {}
        if high:
            coef = _sigmoid_coefficients()
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


def _exp_derivative(z: np.ndarray, n: int) -> np.ndarray:
    return (-1.0) ** n * np.exp(-z)


def _squared_derivative(z: np.ndarray, n: int) -> np.ndarray:
    if n == 0:
        return 0.5 * (z - 1.0) ** 2
    if n == 1:
        return z - 1.0
    return np.full_like(z, 1.0 if n == 2 else 0.0)


def _logistic_derivative(z: np.ndarray, n: int) -> np.ndarray:
    if n == 0:
        return np.logaddexp(0.0, -z)
    if n == 1:
        return -special.expit(-z)
    polys = sigmoid_derivative_polynomials()
    if n - 1 >= len(polys):
        raise ValidationError(f"order: logistic derivatives are tabulated up to {len(polys)}")
    return polys[n - 1](special.expit(z))


def get_margin_loss(loss: str | MarginLoss) -> MarginLoss:
    """A :class:`MarginLoss`, or a name of the shared loss registry (family ``"iwp"``:
    'exponential', 'logistic', 'squared' alias 'linear'; 'hinge' is refused, not smooth).

    The built-in losses are shared instances (dispatch is on their types, see the module
    docstring).
    """
    if isinstance(loss, MarginLoss):
        return loss
    from privest.learn.losses.registry import canonical_name, resolve_loss

    key = canonical_name(loss) if isinstance(loss, str) else repr(loss)
    cached = _BUILT.get(key)
    if cached is None:
        cached = _BUILT[key] = resolve_loss(loss, "iwp")
    return cached


_BUILT: dict[str, MarginLoss] = {}


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
_ORDER_TABLE_FILE = "logistic_truncation_bias.json"


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

    target = Path(path) if path else Path(__file__).with_name("data") / _ORDER_TABLE_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(compute_order_table("logistic"), indent=1) + "\n")
    return str(target)


@lru_cache(maxsize=1)
def load_order_table() -> tuple[np.ndarray, np.ndarray]:
    """(t_grid, bias) of the logistic loss, bias[i, j] = bias_{AUTO_ORDERS[i]}(t_grid[j]),
    read from the packaged JSON (computed once by :func:`write_order_table`)."""
    import json
    from importlib import resources

    text = resources.files("privest.learn").joinpath("data", _ORDER_TABLE_FILE).read_text()
    table = json.loads(text)
    return np.asarray(table["t_grid"], dtype=float), np.asarray(table["bias"], dtype=float)


def _order_table(loss_name: str) -> tuple[np.ndarray, np.ndarray]:
    if loss_name != "logistic":
        raise ValidationError(
            f"loss: order='auto' is tabulated for the logistic loss only, not {loss_name!r}"
        )
    t_grid, bias = load_order_table()
    return t_grid, np.asarray(AUTO_ORDERS)[np.argmin(bias, axis=0)]


def choose_order(t: float | np.ndarray, loss: str = "logistic") -> np.ndarray:
    """K* = argmin_{K in {1, 2, 3}} bias_K(t), t = sigma^2 ||theta||^2 / 2 (optimal truncation)."""
    t_grid, best = _order_table(loss)
    idx = np.clip(np.searchsorted(t_grid, np.asarray(t, dtype=float)), 0, t_grid.size - 1)
    return best[idx]
