"""Privacy accounting: guarantees as objects (paper 000, Sections 2-3); Gaussian calibration
and the local guarantee of paper 004's release."""

from privest.accounting.accountants import ACCOUNTANTS, Composition, compose_events
from privest.accounting.base import ApproxDP, Guarantee, approx_dp_tradeoff
from privest.accounting.budget import Budget, Spend
from privest.accounting.events import (
    ApproxDPEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    Event,
    GaussianEvent,
    ParallelEvent,
    PureDPEvent,
    TradeoffEvent,
    ZCDPEvent,
    event_from_dict,
)
from privest.accounting.gaussian import (
    GaussianRRGuarantee,
    LocalDP,
    gaussian_delta,
    gaussian_sigma,
)
from privest.accounting.zil import (
    beta_c,
    beta_c_zil,
    calibrate_c,
    calibrate_lam,
    check_unit,
    delta_c,
    delta_tilde,
    laplace_delta,
    laplace_tradeoff,
    laplace_tradeoff_zil,
    tradeoff_montecarlo,
)
from privest.accounting.zil_guarantee import ZILGuarantee, ZILTradeoff

__all__ = [
    "ACCOUNTANTS",
    "ApproxDP",
    "ApproxDPEvent",
    "Budget",
    "ComposedEvent",
    "Composition",
    "DiscreteGaussianEvent",
    "Event",
    "GaussianEvent",
    "ParallelEvent",
    "PureDPEvent",
    "TradeoffEvent",
    "ZCDPEvent",
    "GaussianRRGuarantee",
    "Guarantee",
    "LocalDP",
    "Spend",
    "ZILGuarantee",
    "ZILTradeoff",
    "approx_dp_tradeoff",
    "beta_c",
    "beta_c_zil",
    "calibrate_c",
    "calibrate_lam",
    "check_unit",
    "compose_events",
    "delta_c",
    "delta_tilde",
    "event_from_dict",
    "gaussian_delta",
    "gaussian_sigma",
    "laplace_delta",
    "laplace_tradeoff",
    "laplace_tradeoff_zil",
    "tradeoff_montecarlo",
]
