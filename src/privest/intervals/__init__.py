"""Standard errors and confidence intervals of the private statistics
(docs/central-inference.md).

:mod:`~privest.intervals.release` shares epsilon between the point and what its interval
needs; :mod:`~privest.intervals.laws` (sampling error and the exact noise law),
:mod:`~privest.intervals.counts` (counts, exactly) and :mod:`~privest.intervals.ranks`
(the order statistics that bound a quantile) compute the intervals from released values.
"""
