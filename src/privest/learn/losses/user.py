"""User-supplied losses: :class:`CallableLoss` wraps fn(x, y, theta) (DR only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from privest.errors import ValidationError
from privest.learn.losses.base import Loss

__all__ = ["CallableLoss"]

# --------------------------------------------------------------------------------------
# user-supplied losses


class CallableLoss(Loss):
    """Wrap a user function fn(x, y, theta) -> (n,) as a Loss (DR only: no Laplacian).

    ``n_params`` is p (an int) or a function d -> p. ``grad(x, y, theta) -> (n, p)`` is
    optional; without it the gradient is central finite differences of ``fn``. The output
    of ``fn`` (and ``grad``) is checked to be finite with the right shape; an exception on
    the first call is reported as a :class:`ValidationError`.
    """

    def __init__(
        self,
        fn: Callable[[np.ndarray, np.ndarray | None, np.ndarray], Any],
        n_params: int | Callable[[int], int],
        grad: Callable[[np.ndarray, np.ndarray | None, np.ndarray], Any] | None = None,
        name: str = "custom",
    ) -> None:
        if not callable(fn):
            raise ValidationError(f"fn: {fn!r} is not callable; pass fn(x, y, theta) -> (n,)")
        if grad is not None and not callable(grad):
            raise ValidationError(f"grad: {grad!r} is not callable")
        if not callable(n_params) and (
            isinstance(n_params, bool)
            or not isinstance(n_params, (int, np.integer))
            or n_params < 1
        ):
            raise ValidationError(
                f"n_params: {n_params!r} must be a positive integer or a function of d"
            )
        self.fn, self._grad_fn, self._p = fn, grad, n_params
        self.name = str(name)
        self._called = False

    def __repr__(self) -> str:
        return f"CallableLoss(name={self.name!r})"

    def n_params(self, d: int) -> int:
        if not callable(self._p):
            return int(self._p)
        p = self._p(int(d))
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValidationError(f"n_params({d}) returned {p!r}; expected a positive integer")
        return int(p)

    def _call(self, what: str, fn: Callable, x, y, th, shape: tuple[int, ...]) -> np.ndarray:
        if self._called:
            out = fn(x, y, th)
        else:
            try:
                out = fn(x, y, th)
            except Exception as exc:  # report a broken user function clearly
                raise ValidationError(
                    f"{what} of loss {self.name!r} raised {type(exc).__name__}: {exc} "
                    f"(called with x of shape {x.shape}, y={'None' if y is None else 'array'}, "
                    f"theta of shape {th.shape})"
                ) from exc
        try:
            arr = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            raise ValidationError(
                f"{what} of loss {self.name!r} returned {type(out).__name__}, not numbers"
            ) from None
        if arr.shape != shape:
            raise ValidationError(
                f"{what} of loss {self.name!r} returned shape {arr.shape}; expected {shape} "
                "(one value per row of x)"
            )
        if not np.all(np.isfinite(arr)):
            bad = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
            raise ValidationError(
                f"{what} of loss {self.name!r} returned a non-finite value ({arr.ravel()[bad]}) "
                f"at flat index {bad}; the loss must be finite on all of R^d"
            )
        return arr

    def value(self, x, y, theta):
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        out = self._call("fn", self.fn, x, y, th, (x.shape[0],))
        self._called = True
        return out

    def grad(self, x, y, theta):
        if self._grad_fn is None:
            return super().grad(x, y, theta)
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        return self._call("grad", self._grad_fn, x, y, th, (x.shape[0], th.size))
