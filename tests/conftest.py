"""Shared fixtures: non-interactive matplotlib for every test."""

import matplotlib

matplotlib.use("Agg")
