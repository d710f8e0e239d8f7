"""Central-DP estimators built on :mod:`privest.mechanisms` (papers 001 and 002)."""
