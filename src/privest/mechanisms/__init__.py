"""Central mechanisms: the curator holds the data and releases a statistic or model.

Papers 001 (efficient Propose-Test-Release) and 002 (piecewise Laplace mechanism).
"""
