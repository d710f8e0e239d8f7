"""Privacy accounting: guarantees as objects (paper 000, Sections 2-3)."""

from privest.accounting.base import ApproxDP, Guarantee, approx_dp_tradeoff
from privest.accounting.zil import (
    ZILGuarantee,
    ZILTradeoff,
    beta_c,
    beta_c_delta,
    calibrate_c,
    calibrate_lam,
    delta_c,
    delta_tilde,
    laplace_delta,
    laplace_tradeoff,
    laplace_tradeoff_delta,
    tradeoff_montecarlo,
)

__all__ = [
    "ApproxDP",
    "Guarantee",
    "ZILGuarantee",
    "ZILTradeoff",
    "approx_dp_tradeoff",
    "beta_c",
    "beta_c_delta",
    "calibrate_c",
    "calibrate_lam",
    "delta_c",
    "delta_tilde",
    "laplace_delta",
    "laplace_tradeoff",
    "laplace_tradeoff_delta",
    "tradeoff_montecarlo",
]
