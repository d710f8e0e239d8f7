"""Loss catalogue for corrected-loss M-estimation on ZIL releases.

Paper 000 (Lu, Chen & Qiu), Sections 4 and 6 define the corrected losses built from a
loss l(x, theta) and the released copies X1 = X + Z, X2 = X1 + S:

* DR   (1/delta) l(X1) + (1 - 1/delta) l(X2)           (Section 4.1; no smoothness needed)
* SL   l(X2) - (1/2) Lap_w l(X2)                        (Section 6, eq. 6.1; l in C^2 in x)
* SDR  l(X1) - ((1 - delta)/2) Lap_w l(X2)              (Section 6; l in C^2 in x)

(delta the zero proportion) where ``Lap_w l = sum_k w_k d^2 l / dx_k^2`` is the Laplacian
weighted by the noise variance ``w_k = s_k^2`` of each feature column (0 for unnoised
columns; the paper's ``lam^2 Lap_x`` when every noised column has scale lam). This module gives
the losses themselves (the examples and experiments of paper Sections 4-7):
per-row values, gradients and Hessian sums in theta, and, for losses twice differentiable
in x, the Laplacian with its theta-derivatives. Everything is vectorised over rows.

Shapes: ``x`` is the (n, d) feature matrix (never the intercept or the response; a 1-D
``x`` is read as one column), ``y`` the (n,) response or ``None``, ``theta`` the (p,)
parameter, ``noise_var`` the (d,) weights w of the Laplacian (a boolean mask reads as
weights 0/1).

The catalogue is split by kind: :mod:`~privest.learn.losses.base` (the :class:`Loss`
interface and its capabilities), :mod:`~privest.learn.losses.index` (single-index regression
losses; the logistic and squared ones are also margin losses),
:mod:`~privest.learn.losses.margin` (margin losses of IWP-SGD, paper 004),
:mod:`~privest.learn.losses.scalar` (losses of one noised column),
:mod:`~privest.learn.losses.relu_net` and :mod:`~privest.learn.losses.user`. Names live in
one place, :mod:`~privest.learn.losses.registry`, for both families.
"""

from __future__ import annotations

from typing import Any

from privest.learn.losses.base import Loss, LossNotSmoothError
from privest.learn.losses.index import (
    HingeLoss,
    IndexLoss,
    LogisticLoss,
    QuantileRegressionLoss,
    SquaredLoss,
)
from privest.learn.losses.margin import ExponentialLoss, MarginLoss
from privest.learn.losses.registry import get_margin_loss, loss_names, resolve_loss
from privest.learn.losses.relu_net import ReLUNetLoss
from privest.learn.losses.scalar import (
    ScalarQuantileLoss,
    TransformedSquaredLoss,
    abs_sin_squared,
    indicator_squared,
    relu_squared,
)
from privest.learn.losses.user import CallableLoss

__all__ = [
    "LOSS_NAMES",
    "CallableLoss",
    "ExponentialLoss",
    "HingeLoss",
    "IndexLoss",
    "LogisticLoss",
    "Loss",
    "LossNotSmoothError",
    "MarginLoss",
    "QuantileRegressionLoss",
    "ReLUNetLoss",
    "ScalarQuantileLoss",
    "SquaredLoss",
    "TransformedSquaredLoss",
    "abs_sin_squared",
    "get_loss",
    "get_margin_loss",
    "indicator_squared",
    "relu_squared",
]


# --------------------------------------------------------------------------------------
# registry

LOSS_NAMES: tuple[str, ...] = loss_names("dr", aliases=False)  # the catalogue's spellings


def get_loss(name: str, **kwargs: Any) -> Loss:
    """A catalogue loss by name, e.g. ``get_loss("quantile", quantile=0.25)``.

    Names come from the shared registry (:func:`~privest.learn.losses.registry.resolve_loss`,
    family ``"dr"``): ``"squared"`` is ``"linear"``, and a name only IWP-SGD supports
    (``"exponential"``) is refused with a message saying so. Your own function: wrap it
    with :class:`CallableLoss`.
    """
    return resolve_loss(name, "dr", **kwargs)
