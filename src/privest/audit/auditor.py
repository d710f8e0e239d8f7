"""Empirical privacy auditing by hypothesis testing.

A mechanism M is audited on one pair of neighbouring inputs x, x'. Write P for the law
of M(x) and Q for that of M(x'). Every test that rejects "the output came from P" on a
region S has type I error alpha = P(S) and type II error beta = 1 - Q(S); f-DP (Dong,
Roth and Su) says beta >= f(alpha) for every S, and (eps, delta)-DP is f-DP with
f = f_{eps,delta}. The auditor draws samples from P and Q, tests the regions
``{s > t}`` and ``{s >= t}`` of a statistic s (the log-likelihood ratio log q/p when it
is known, the Neyman-Pearson optimal choice), bounds alpha and beta from above with
one-sided Clopper-Pearson intervals made simultaneous by a Bonferroni correction, and
reports a contradiction when a bounded point falls below the claimed trade-off curve.
This is the hypothesis-testing view of auditing of Jagielski et al. (2020) and Nasr et
al. (2021), with every threshold accounted for.

Statistical guarantee: thresholds are fixed before the counted samples are drawn (from
an independent pilot sample, or given by the caller), so with probability at least
``conf_level`` every Clopper-Pearson bound holds at once. On that event no true claim
is reported as contradicted, and :meth:`AuditResult.epsilon_lower_bound` is a valid
lower bound on the mechanism's epsilon(delta) for every delta simultaneously.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from privest.accounting.base import Guarantee
from privest.errors import ValidationError
from privest.rng import resolve_rng
from privest.validation import check_delta, check_probability

__all__ = ["AuditResult", "audit", "clopper_pearson_upper"]

#: ``sample(n, rng)`` returns n outputs of the mechanism (an array whose first axis is n).
Sampler = Callable[[int, np.random.Generator], Any]
#: Maps n outputs to n real test statistics; larger values must point towards Q = M(x').
Statistic = Callable[[Any], ArrayLike]

_EPS_GRID = 513  # epsilons used to build the envelope of a claim without a trade-off function
_CURVE_GRID = 1001  # alphas at which the claimed curve is stored for plotting


def clopper_pearson_upper(k: ArrayLike, n: int, conf_level: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound U with P(p <= U) >= ``conf_level``, k ~ Bin(n, p).

    U is the ``conf_level`` quantile of Beta(k + 1, n - k), and 1 when k = n.
    """
    k = np.asarray(k, dtype=float)
    upper = stats.beta.ppf(conf_level, k + 1.0, np.maximum(n - k, 1.0))
    return np.where(k >= n, 1.0, upper)


def _rejection_counts(sorted_scores: np.ndarray, t: np.ndarray, strict: np.ndarray) -> np.ndarray:
    """Number of scores with ``s > t`` (where ``strict``) or ``s >= t`` (elsewhere)."""
    n = sorted_scores.size
    above = n - np.searchsorted(sorted_scores, t, side="right")
    at_or_above = n - np.searchsorted(sorted_scores, t, side="left")
    return np.where(strict, above, at_or_above)


def _statistic(outputs: Any, fn: Statistic | None, n: int, which: str) -> np.ndarray:
    """The n test statistics of a batch of outputs, checked for shape and NaN."""
    if fn is None:
        values = np.asarray(outputs, dtype=float)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValidationError(
                f"{which}: outputs have shape {values.shape}; pass score= or llr= to map "
                "multivariate outputs to one real statistic each"
            )
    else:
        values = np.asarray(fn(outputs), dtype=float).reshape(-1)
    if values.shape != (n,):
        raise ValidationError(
            f"{which}: expected {n} statistics (one per sampled output), got shape {values.shape}"
        )
    if np.isnan(values).any():
        raise ValidationError(
            f"{which}: {int(np.isnan(values).sum())} statistics are NaN; ±inf is accepted "
            "(atoms of the likelihood ratio), NaN is not"
        )
    return values


def _quantile_thresholds(pooled: np.ndarray, n_thresholds: int) -> np.ndarray:
    """Pilot quantiles: half evenly spaced in level, half logit-spaced to reach the tails."""
    m = pooled.size
    n_uniform = n_thresholds // 2
    n_logit = n_thresholds - n_uniform
    uniform = (np.arange(n_uniform) + 0.5) / max(n_uniform, 1)
    edge = special.logit(min(0.5, 1.0 / m))
    logit = special.expit(np.linspace(edge, -edge, n_logit))
    levels = np.clip(np.concatenate([uniform, logit]), 0.0, 1.0)
    # "inverted_cdf" returns observed values only: atoms (and ±inf) are hit exactly.
    return np.quantile(pooled, levels, method="inverted_cdf")


def _tradeoff_dp(alpha: np.ndarray, eps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """f_{eps,delta}(alpha) with broadcasting over all three arguments."""
    with np.errstate(over="ignore", invalid="ignore"):
        first = np.where(alpha > 0, 1.0 - delta - np.exp(eps) * alpha, 1.0 - delta)
    second = np.exp(-eps) * (1.0 - delta - alpha)
    return np.maximum(0.0, np.maximum(first, second))


def _profile(claimed: Guarantee, eps: np.ndarray) -> np.ndarray:
    """``claimed.delta`` on a grid, vectorised when the guarantee allows it."""
    try:
        values = np.asarray(claimed.delta(eps), dtype=float)
        if values.shape != eps.shape:
            raise ValueError
    except (TypeError, ValueError):
        values = np.array([float(claimed.delta(float(e))) for e in eps])
    return np.clip(values, 0.0, 1.0)


def _claimed_curve(claimed: Guarantee, eps_max: float) -> Callable[[np.ndarray], np.ndarray]:
    """The claimed trade-off function, or the envelope max_eps f_{eps, delta(eps)} of its profile.

    Each envelope term is implied by the claim, so checking a finite grid of epsilons
    (here up to ``eps_max``, beyond which no data point can show a violation) is valid.
    """
    if claimed.has_tradeoff:

        def curve(alpha: np.ndarray) -> np.ndarray:
            a = np.asarray(alpha, dtype=float)
            return np.clip(np.asarray(claimed.tradeoff(a), dtype=float), 0.0, 1.0)

        return curve
    eps = np.linspace(0.0, max(eps_max, 1e-3), _EPS_GRID)
    deltas = _profile(claimed, eps)

    def envelope(alpha: np.ndarray) -> np.ndarray:
        a = np.asarray(alpha, dtype=float)
        return _tradeoff_dp(a[..., None], eps, deltas).max(axis=-1)

    return envelope


@dataclass
class AuditResult:
    """Outcome of :func:`audit`: one entry per (test, direction).

    Direction 0 tests P = M(x) against Q = M(x') with the region ``{s > t}`` (``strict``)
    or ``{s >= t}``; direction 1 (present when ``symmetric``) tests Q against P with the
    complementary region, whose errors are those of direction 0 swapped. ``alpha`` and
    ``beta`` are the empirical type I and II errors, ``alpha_upper`` and ``beta_upper``
    their simultaneous Clopper-Pearson upper bounds, ``gap`` is
    ``f(alpha_upper) - beta_upper`` for the claimed curve f (positive = violation).
    """

    alpha: np.ndarray = field(repr=False)
    beta: np.ndarray = field(repr=False)
    alpha_upper: np.ndarray = field(repr=False)
    beta_upper: np.ndarray = field(repr=False)
    threshold: np.ndarray = field(repr=False)
    strict: np.ndarray = field(repr=False)
    direction: np.ndarray = field(repr=False)
    gap: np.ndarray = field(repr=False)
    violations: np.ndarray = field(repr=False)
    contradicts: bool
    claimed: str
    n: int
    conf_level: float
    n_tests: int
    symmetric: bool
    claimed_alpha: np.ndarray | None = field(default=None, repr=False)
    claimed_beta: np.ndarray | None = field(default=None, repr=False)

    def epsilon_lower_bound(self, delta: float = 0.0) -> float:
        """Largest eps the data certify: the mechanism is not (eps', delta)-DP for eps' < eps.

        max over tests of log((1 - delta - beta_U) / alpha_U) and
        log((1 - delta - alpha_U) / beta_U), floored at 0. It holds with probability
        ``conf_level`` for all deltas at once.
        """
        delta = check_delta(delta)
        a, b = self.alpha_upper, self.beta_upper
        with np.errstate(divide="ignore", invalid="ignore"):
            first = np.log(1.0 - delta - b) - np.log(a)
            second = np.log(1.0 - delta - a) - np.log(b)
        values = np.concatenate([first, second])
        values = values[np.isfinite(values)]
        return float(max(0.0, values.max())) if values.size else 0.0

    def worst(self) -> int:
        """Index of the test with the largest gap f(alpha_U) - beta_U."""
        return int(np.argmax(self.gap))

    def summary(self, deltas: tuple[float, ...] = (0.0,)) -> str:
        """A short plain-text report."""
        verdict = "CONTRADICTED" if self.contradicts else "not contradicted"
        dirs = "both directions" if self.symmetric else "one direction"
        lines = [
            f"Privacy audit of {self.claimed}: {verdict} at {self.conf_level:.0%} confidence",
            f"  n = {self.n} samples per input, {self.n_tests} tests (Bonferroni), {dirs}",
            f"  violations: {int(self.violations.sum())} of {self.violations.size} points",
        ]
        if self.claimed_beta is not None:
            i = self.worst()
            lines.append(
                f"  worst point: alpha_U = {self.alpha_upper[i]:.4g}, beta_U = "
                f"{self.beta_upper[i]:.4g}, claimed f(alpha_U) - beta_U = {self.gap[i]:+.4g}"
            )
        for d in deltas:
            lines.append(
                f"  epsilon lower bound at delta = {d:.3g}: {self.epsilon_lower_bound(d):.4g}"
            )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Draw the empirical ROC, its upper confidence corners and the claimed curve."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(4.5, 4.5))
        for d, style, name in ((0, "-", "P vs Q"), (1, ":", "Q vs P")):
            sel = self.direction == d
            if not sel.any():
                continue
            order = np.lexsort((-self.beta[sel], self.alpha[sel]))
            ax.plot(
                self.alpha[sel][order],
                self.beta[sel][order],
                style,
                color="C0",
                label=f"empirical ({name})",
            )
            order = np.lexsort((-self.beta_upper[sel], self.alpha_upper[sel]))
            ax.plot(
                self.alpha_upper[sel][order],
                self.beta_upper[sel][order],
                style,
                color="C1",
                alpha=0.8,
                label=f"upper {self.conf_level:.0%} bound ({name})",
            )
        if self.claimed_alpha is not None and self.claimed_beta is not None:
            ax.plot(self.claimed_alpha, self.claimed_beta, "k--", label=f"claimed {self.claimed}")
        if self.violations.any():
            v = self.violations
            ax.plot(self.alpha_upper[v], self.beta_upper[v], "rx", label="violation")
        ax.plot([0, 1], [1, 0], color="0.8", lw=0.8)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("type I error alpha")
        ax.set_ylabel("type II error beta")
        ax.set_title("privacy audit: " + ("contradicted" if self.contradicts else "consistent"))
        ax.legend(fontsize="small")
        return ax


def audit(
    sample_p: Sampler,
    sample_q: Sampler,
    claimed: Guarantee | None,
    *,
    n: int = 100_000,
    score: Statistic | None = None,
    llr: Statistic | None = None,
    conf_level: float = 0.95,
    n_thresholds: int = 200,
    symmetric: bool = True,
    rng: np.random.Generator | int | None = None,
    n_pilot: int | None = None,
    thresholds: ArrayLike | None = None,
) -> AuditResult:
    """Audit a mechanism on one neighbouring pair against a claimed guarantee.

    ``sample_p(n, rng)`` and ``sample_q(n, rng)`` return n outputs of M(x) and M(x').
    The statistic is ``llr(outputs)`` = log q/p (may be ±inf at atoms) when given, else
    ``score(outputs)``, else the outputs themselves when they are scalars; larger values
    must point towards x'. Thresholds are the pooled quantiles of ``n_pilot`` independent
    pilot draws from each side (default ``min(n, max(1000, n // 10))``) unless
    ``thresholds`` is given, plus ±inf; each threshold t gives the tests ``s > t`` and
    ``s >= t`` (so atoms contribute their ROC corners). With K tests, each of the 2K
    Clopper-Pearson bounds is taken at level ``1 - (1 - conf_level) / (2K)``.

    A test is a violation when ``beta_U < f(alpha_U)`` for the claimed trade-off f, or,
    when the claim has none, for the envelope ``max_eps f_{eps, delta(eps)}`` of its
    profile, which is the inequality ``eps < log((1 - delta(eps) - beta_U) / alpha_U)``
    or ``eps < log((1 - delta(eps) - alpha_U) / beta_U)``. Since f is non-increasing
    and alpha <= alpha_U, beta <= beta_U on the confidence event, a violation is real
    with probability at least ``conf_level``. With ``symmetric`` the swapped pair
    (Q, P) is checked as well at no statistical cost: its points are (beta_U, alpha_U).
    ``claimed=None`` only estimates.

    One function on purpose: the checks of the arguments, then the procedure above in its
    order.
    """
    if claimed is not None and not isinstance(claimed, Guarantee):
        raise ValidationError(f"claimed: {claimed!r} is not a privest Guarantee (or None)")
    for name, value, low in (("n", n, 1), ("n_thresholds", n_thresholds, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValidationError(f"{name}: {value!r} must be an integer >= {low}")
    conf_level = check_probability(conf_level, "conf_level")
    if llr is not None and score is not None:
        raise ValidationError("pass llr= or score=, not both (llr is the optimal statistic)")
    stat = llr if llr is not None else score
    n = int(n)
    gen = resolve_rng(rng)

    if thresholds is None:
        m = min(n, max(1000, n // 10)) if n_pilot is None else int(n_pilot)
        if m < 1:
            raise ValidationError(f"n_pilot: {n_pilot!r} must be an integer >= 1")
        pilot = np.concatenate(
            [
                _statistic(sample_p(m, gen), stat, m, "sample_p"),
                _statistic(sample_q(m, gen), stat, m, "sample_q"),
            ]
        )
        cut = _quantile_thresholds(pilot, int(n_thresholds))
    else:
        cut = np.asarray(thresholds, dtype=float).reshape(-1)
        if np.isnan(cut).any():
            raise ValidationError("thresholds: contain NaN")
    cut = np.unique(np.concatenate([cut, [-np.inf, np.inf]]))
    # ">" at every cut but +inf, ">=" at every cut but -inf: the trivial tests are dropped.
    t = np.concatenate([cut[:-1], cut[1:]])
    strict = np.concatenate([np.ones(cut.size - 1, bool), np.zeros(cut.size - 1, bool)])
    n_tests = t.size

    scores_p = np.sort(_statistic(sample_p(n, gen), stat, n, "sample_p"))
    scores_q = np.sort(_statistic(sample_q(n, gen), stat, n, "sample_q"))
    reject_p = _rejection_counts(scores_p, t, strict)  # type I errors under P
    accept_q = n - _rejection_counts(scores_q, t, strict)  # type II errors under Q
    level = 1.0 - (1.0 - conf_level) / (2 * n_tests)
    a_hat, b_hat = reject_p / n, accept_q / n
    a_up = clopper_pearson_upper(reject_p, n, level)
    b_up = clopper_pearson_upper(accept_q, n, level)

    direction = np.zeros(n_tests, dtype=np.int8)
    if symmetric:
        a_hat, b_hat = np.concatenate([a_hat, b_hat]), np.concatenate([b_hat, a_hat])
        a_up, b_up = np.concatenate([a_up, b_up]), np.concatenate([b_up, a_up])
        t, strict = np.tile(t, 2), np.tile(strict, 2)
        direction = np.concatenate([direction, np.ones(n_tests, dtype=np.int8)])

    if claimed is None:
        gap = np.full(a_up.shape, -np.inf)
        label, curve_a, curve_b = "no claim", None, None
    else:
        eps_max = float(max(-np.log(a_up).min(), -np.log(b_up).min()))
        curve = _claimed_curve(claimed, eps_max)
        gap = curve(a_up) - b_up
        curve_a = np.linspace(0.0, 1.0, _CURVE_GRID)
        curve_b = curve(curve_a)
        label = claimed.label
    violations = gap > 0
    return AuditResult(
        alpha=a_hat,
        beta=b_hat,
        alpha_upper=a_up,
        beta_upper=b_up,
        threshold=t,
        strict=strict,
        direction=direction,
        gap=gap,
        violations=violations,
        contradicts=bool(violations.any()),
        claimed=label,
        n=n,
        conf_level=conf_level,
        n_tests=n_tests,
        symmetric=bool(symmetric),
        claimed_alpha=curve_a,
        claimed_beta=curve_b,
    )
