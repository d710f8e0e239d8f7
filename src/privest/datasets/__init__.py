"""Data for demos, tests and reproductions: embedded real data and the papers' generators."""

from privest.datasets.embedded import DemoData, load_demo_data

__all__ = ["DemoData", "load_demo_data"]
