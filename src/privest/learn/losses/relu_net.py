"""A user-style nonsmooth loss: the one-hidden-layer ReLU network of paper 000, Sec. 4.1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privest.errors import ValidationError
from privest.learn.losses.base import Loss, _sigmoid, _softplus

__all__ = ["ReLUNetLoss"]

# --------------------------------------------------------------------------------------
# a user-defined nonsmooth loss: one-hidden-layer ReLU network (paper 000, Sec. 4.1)


class ReLUNetLoss(Loss):
    """f(x) = w2' relu(W1 x + b1) + b2 with ``hidden`` units; l = (y - f)^2 or logistic.

    ``task="regression"``: l = (y - f)^2; ``task="classification"``: l = softplus(f) - y f
    with y in {0, 1}. theta = [W1 (row-major, hidden x d), b1, w2, b2], p = hidden (d + 2) + 1.
    Not C^2 in x (ReLU kinks), so DR only (paper Section 4.1: "neural network models using
    the ReLU activation"). The gradient is exact backpropagation (a.e.).
    """

    name = "relu_net"

    def __init__(self, hidden: int = 8, task: str = "regression", seed: int = 0) -> None:
        if isinstance(hidden, bool) or not isinstance(hidden, (int, np.integer)) or hidden < 1:
            raise ValidationError(f"hidden: {hidden!r} must be a positive integer")
        if task not in ("regression", "classification"):
            raise ValidationError(f"task: {task!r} must be 'regression' or 'classification'")
        self.hidden, self.task, self.seed = int(hidden), task, int(seed)

    def __repr__(self) -> str:
        return f"ReLUNetLoss(hidden={self.hidden}, task={self.task!r}, seed={self.seed})"

    def n_params(self, d: int) -> int:
        if int(d) < 1:
            raise ValidationError(f"d: {d} feature columns; need at least one")
        return self.hidden * (int(d) + 2) + 1

    def param_names(self, feature_names: Sequence[str]) -> list[str]:
        h = self.hidden
        w1 = [f"W1[{k},{f}]" for k in range(h) for f in feature_names]
        return w1 + [f"b1[{k}]" for k in range(h)] + [f"w2[{k}]" for k in range(h)] + ["b2"]

    def initial_theta(self, d: int) -> np.ndarray:
        """Small random weights from ``seed``: W1 ~ N(0, 1/d), w2 ~ N(0, 1/hidden), b = 0."""
        rng = np.random.default_rng(self.seed)
        h = self.hidden
        w1 = rng.standard_normal(h * d) / np.sqrt(d)
        w2 = rng.standard_normal(h) / np.sqrt(h)
        return np.concatenate([w1, np.zeros(h), w2, [0.0]])

    def _unpack(self, th: np.ndarray, d: int):
        h = self.hidden
        W1 = th[: h * d].reshape(h, d)
        b1 = th[h * d : h * d + h]
        w2 = th[h * d + h : h * d + 2 * h]
        return W1, b1, w2, float(th[-1])

    def _forward(self, x: np.ndarray, th: np.ndarray):
        W1, b1, w2, b2 = self._unpack(th, x.shape[1])
        a = x @ W1.T + b1
        hid = np.maximum(a, 0.0)
        return a, hid, w2, hid @ w2 + b2

    def response(self, y: Any, n: int) -> np.ndarray:
        if y is None:
            raise ValidationError(f"y: loss {self.name!r} needs a response; got None")
        arr = np.asarray(y, dtype=float)
        if arr.size != n:
            raise ValidationError(f"y: has shape {arr.shape}; expected ({n},) to match x")
        return arr.reshape(n)

    def _link(self, y: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Loss values and dl/df."""
        if self.task == "regression":
            r = f - y
            return r * r, 2.0 * r
        return _softplus(f) - y * f, _sigmoid(f) - y

    def value(self, x, y, theta):
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        f = self._forward(x, th)[3]
        return self._link(self.response(y, x.shape[0]), f)[0]

    def grad(self, x, y, theta):
        x = self._x(x)
        n, d = x.shape
        th = self._theta(theta, d)
        a, hid, w2, f = self._forward(x, th)
        dl = self._link(self.response(y, n), f)[1]
        da = (a > 0) * w2[None, :]  # df/da, (n, hidden)
        dW1 = (da[:, :, None] * x[:, None, :]).reshape(n, self.hidden * d)
        out = np.concatenate([dW1, da, hid, np.ones((n, 1))], axis=1)
        return dl[:, None] * out

    def predict(self, x, theta):
        """f(x) (regression) or P(y = 1 | x) = sigmoid(f) (classification)."""
        x = self._x(x)
        f = self._forward(x, self._theta(theta, x.shape[1]))[3]
        return f if self.task == "regression" else _sigmoid(f)
