"""Corrected-loss learning on ZIL releases (paper 000, Sections 4-6)."""

from privest.learn.losses import (
    LOSS_NAMES,
    CallableLoss,
    HingeLoss,
    IndexLoss,
    LogisticLoss,
    Loss,
    LossNotSmoothError,
    QuantileRegressionLoss,
    ReLUNetLoss,
    ScalarQuantileLoss,
    SquaredLoss,
    TransformedSquaredLoss,
    abs_sin_squared,
    get_loss,
    indicator_squared,
    relu_squared,
)

__all__ = [
    "LOSS_NAMES",
    "CallableLoss",
    "HingeLoss",
    "IndexLoss",
    "LogisticLoss",
    "Loss",
    "LossNotSmoothError",
    "QuantileRegressionLoss",
    "ReLUNetLoss",
    "ScalarQuantileLoss",
    "SquaredLoss",
    "TransformedSquaredLoss",
    "abs_sin_squared",
    "get_loss",
    "indicator_squared",
    "relu_squared",
]
