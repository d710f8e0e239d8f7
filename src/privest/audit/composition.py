"""Audit a sequence of central releases against the budget they were charged to.

k statistics of the same data set are released one after another (each by its own
mechanism); the composed output is the vector of the k releases. On a neighbouring pair
(x, x') the log-likelihood ratio of that vector is the sum of the k per-release ratios
(the releases draw independent noise), which the auditor (:func:`privest.audit.audit`)
uses as its Neyman-Pearson statistic. The claim tested is the composition a
:class:`~privest.Budget` reports for those k spends; a claim that under-counts the
composition (the negative control in the tests) is contradicted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privest.accounting.base import ApproxDP, Guarantee
from privest.audit.auditor import AuditResult, audit

__all__ = ["audit_composition"]


def audit_composition(
    mechanisms: Sequence[Any],
    x: Any,
    x_neighbour: Any,
    claimed: Guarantee | Any,
    *,
    n: int = 50_000,
    rng: np.random.Generator | int | None = None,
    conf_level: float = 0.95,
) -> AuditResult:
    """Audit k releases (``StatisticMechanism`` objects, each with ``law``) of ``x``.

    ``claimed`` is a :class:`~privest.accounting.base.Guarantee`, or a
    :class:`~privest.Budget` whose reported composition is the claim. Curator's tool: it
    computes the laws on the data, so run it on test data only.
    """
    if hasattr(claimed, "spent"):
        spent = claimed.spent()
        claimed = ApproxDP(spent.epsilon, min(spent.delta, 1 - 1e-12))
    laws_p = [m.law(x) for m in mechanisms]
    laws_q = [m.law(x_neighbour) for m in mechanisms]

    def sampler(laws: list[Any]) -> Any:
        def sample(size: int, gen: np.random.Generator) -> np.ndarray:
            return np.stack([law.sample(size, gen) for law in laws], axis=1)

        return sample

    def llr(outputs: np.ndarray) -> np.ndarray:
        return sum(
            q.logpdf(outputs[:, j]) - p.logpdf(outputs[:, j])
            for j, (p, q) in enumerate(zip(laws_p, laws_q, strict=True))
        )

    return audit(
        sampler(laws_p), sampler(laws_q), claimed, n=n, llr=llr, rng=rng, conf_level=conf_level
    )
