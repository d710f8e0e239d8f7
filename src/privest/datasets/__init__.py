"""Data for demos, tests and reproductions: embedded real data, loaders of real data
sets that need a download (each takes a local path and says what to fetch when absent),
and the papers' synthetic generators (paper 002: :func:`make_plm_data`; paper 004:
:func:`make_iwp_classification`)."""

from privest.datasets.acs import load_acs
from privest.datasets.california import california_features, load_california_housing
from privest.datasets.credit import credit_features, load_credit_default
from privest.datasets.embedded import DemoData, load_demo_data
from privest.datasets.synthetic_iwp import make_iwp_classification
from privest.datasets.synthetic_plm import PLM_BOUNDS, PLM_DISTRIBUTIONS, make_plm_data
from privest.datasets.wine import WINE_FEATURES, load_wine_quality

__all__ = [
    "PLM_BOUNDS",
    "PLM_DISTRIBUTIONS",
    "WINE_FEATURES",
    "DemoData",
    "california_features",
    "credit_features",
    "load_acs",
    "load_california_housing",
    "load_credit_default",
    "load_demo_data",
    "load_wine_quality",
    "make_iwp_classification",
    "make_plm_data",
]
