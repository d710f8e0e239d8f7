"""Exact privacy checks: log-density ratios between neighbours, and negative controls.

The log densities of PLM, INV and the approximate 1-D PLM are linear between the union of
both data sets' breakpoints, so evaluating the log-ratio just inside both ends of every
sub-interval finds its supremum (sub-intervals shorter than 1e-12 x range are skipped, as
a float-noise tolerance). Required: max |log p_x - log p_x'| <= eps + 1e-9
and the bounded-range span max - min <= eps + 1e-9. Negative controls must fail.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from privest.errors import ValidationError
from privest.mechanisms.approximate import ApproximatePiecewiseLaplaceLaw, RadiusBounds
from privest.mechanisms.inverse_sensitivity import GridInverseSensitivityLaw, InverseSensitivityLaw
from privest.mechanisms.laplace import LaplaceLaw
from privest.mechanisms.laws.piecewise import PiecewiseDensity
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw, segments_from_profile
from privest.mechanisms.profiles.reaches import count_profile, sorted_data
from privest.mechanisms.smooth_sensitivity import (
    SmoothSensitivityLaw,
    local_sensitivity_at_distance,
)

SLACK = 1e-9


def log_ratio_extremes(m1, m2, lo: float, hi: float) -> tuple[float, float]:
    """(max, min) of log p1 - log p2 over [lo, hi], from both ends of every sub-interval."""
    bp = np.unique(np.concatenate([m1.breakpoints(), m2.breakpoints(), [lo, hi]]))
    bp = bp[(bp >= lo) & (bp <= hi)]
    left, right = bp[:-1], bp[1:]
    keep = (right - left) > 1e-12 * (hi - lo)
    left, right = left[keep], right[keep]
    h = (right - left) * 1e-7
    ys = np.concatenate([left + h, right - h])
    d = m1.logpdf(ys) - m2.logpdf(ys)
    return float(d.max()), float(d.min())


def neighbours(x: np.ndarray, a: float, b: float, rng: np.random.Generator):
    """Swap one record (random position) for a, b, a tie value and a random value."""
    for new in (a, b, x[rng.integers(x.size)], rng.uniform(a, b)):
        y = x.copy()
        y[rng.integers(x.size)] = new
        yield y


def datasets(rng: np.random.Generator, count: int, a: float = -2.0, b: float = 3.0):
    for i in range(count):
        n = int(rng.integers(2, 14))
        x = rng.uniform(a, b, n)
        if i % 3 == 0:
            x = np.round(x * 2) / 2  # tied data
        yield x


def _check_pair(build, x, y, eps, lo=None, hi=None):
    m1, m2 = build(x), build(y)
    if lo is None:
        lo, hi = m1.support
        assert (lo, hi) == m2.support  # the output space is data-independent
    top, bottom = log_ratio_extremes(m1, m2, lo, hi)
    assert max(top, -bottom) <= eps + SLACK, (x, y, top, bottom)
    assert top - bottom <= eps + SLACK, (x, y, top, bottom)
    return top - bottom


STATISTICS = ["median", "quantile:0.1", "quantile:0.5", "quantile:0.9", "mean", "sum", "variance"]


@pytest.mark.parametrize("statistic", STATISTICS)
@pytest.mark.parametrize("cls", [PiecewiseLaplaceLaw, InverseSensitivityLaw])
def test_exact_log_ratio_bounded_by_epsilon(statistic, cls):
    """PLM and INV, every named statistic, random and adversarial neighbours."""
    rng = np.random.default_rng(zlib.crc32(f"{statistic}/{cls.__name__}".encode()))
    eps = float(rng.choice([0.3, 1.0, 2.5]))
    span = 0.0
    for x in datasets(rng, 25):

        def build(d, stat=statistic):
            return cls.for_statistic(d, stat, epsilon=eps, bounds=(-2, 3))

        for y in neighbours(x, -2.0, 3.0, rng):
            span = max(span, _check_pair(build, x, y, eps))
    assert span > 0.3 * eps  # the check is not vacuous


def test_all_ranks_of_order_statistics():
    rng = np.random.default_rng(5)
    eps = 1.0
    for x in datasets(rng, 12):
        for q in (1e-9, *np.linspace(0, 1, 7)[1:]):  # 1e-9: rank 1 (quantile 0 is refused)

            def build(d, q=q):
                return PiecewiseLaplaceLaw.for_statistic(
                    d, "quantile", quantile=q, epsilon=eps, bounds=(-2, 3)
                )

            for y in neighbours(x, -2.0, 3.0, rng):
                _check_pair(build, x, y, eps, -2.0, 3.0)


def test_median_br_span_reaches_epsilon():
    """The BR span reaches exactly eps for the median (as a prototype found): the bound is tight."""
    eps = 1.0
    x = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    y = x.copy()
    y[0] = 1.0
    m = lambda d: PiecewiseLaplaceLaw.for_statistic(d, "median", epsilon=eps, bounds=(0, 1))  # noqa: E731
    top, bottom = log_ratio_extremes(m(x), m(y), 0.0, 1.0)
    assert top - bottom == pytest.approx(eps, abs=1e-6)


@pytest.mark.parametrize("rho", [0.01, 0.3])
def test_rho_smoothed_plm_and_inv(rho):
    rng = np.random.default_rng(int(rho * 100))
    for cls in (PiecewiseLaplaceLaw, InverseSensitivityLaw):
        for x in datasets(rng, 15):

            def build(d, cls=cls):
                return cls.for_statistic(d, "median", epsilon=1.0, bounds=(-2, 3), rho=rho)

            for y in neighbours(x, -2.0, 3.0, rng):
                _check_pair(build, x, y, 1.0, -2.0 - rho, 3.0 + rho)


@pytest.mark.parametrize("tail", ["range_end", "gs"])
@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_truncated_variants(tail, statistic):
    rng = np.random.default_rng(17)
    for x in datasets(rng, 15):
        for k in (1, 2, 4):

            def build(d, k=k):
                return PiecewiseLaplaceLaw.for_statistic(
                    d, statistic, epsilon=0.8, bounds=(-2, 3), truncate=k, tail=tail
                )

            for y in neighbours(x, -2.0, 3.0, rng):
                _check_pair(build, x, y, 0.8, -2.0, 3.0)


def test_count_is_only_epsilon_dp_not_half():
    """Paper 002, Sec. 4.1: truncated Lap(2/eps) on [0, n] loses up to eps (normaliser),
    not eps/2."""
    eps = 1.0
    ind = np.r_[np.ones(5), np.zeros(5)]
    worst = 0.0
    for k in range(11):
        x = np.r_[np.ones(k), np.zeros(10 - k)]
        for j in (k - 1, k + 1):
            if 0 <= j <= 10:
                y = np.r_[np.ones(j), np.zeros(10 - j)]
                m1, m2 = (
                    PiecewiseLaplaceLaw(count_profile(x), eps),
                    PiecewiseLaplaceLaw(count_profile(y), eps),
                )
                top, bottom = log_ratio_extremes(m1, m2, 0.0, 10.0)
                worst = max(worst, top, -bottom)
    assert eps / 2 + 0.05 < worst <= eps + SLACK
    assert PiecewiseLaplaceLaw(count_profile(ind), eps).privacy_report()["pure_dp"] == eps


@pytest.mark.parametrize("indexing", ["paper", "tight"])
def test_approximate_plm_from_local_sensitivity(indexing):
    """Approximate 1-D PLM built from A_k (capped, truncated), output restricted to [a, b]."""
    rng = np.random.default_rng(3)
    eps = 1.0
    for x in datasets(rng, 15):
        for levels in (2, 6):

            def build(d, levels=levels):
                aug, a, b, _ = sorted_data(d, (-2, 3))
                n = aug.size - 2
                rank = (n + 1) // 2
                ak = local_sensitivity_at_distance(aug, rank, np.arange(levels + 1))
                radii = RadiusBounds.from_local_sensitivity(ak, indexing=indexing, cap=b - a)
                return ApproximatePiecewiseLaplaceLaw(
                    float(aug[rank]), radii, eps, output_range=(a, b)
                )

            for y in neighbours(x, -2.0, 3.0, rng):
                if y.size % 2 == 0:
                    continue
                _check_pair(build, x, y, eps, -2.0, 3.0)


def test_radius_builders_refuse_a_data_dependent_tail():
    """Def. 5.1(i): without a public cap the last radius A_K(x) would repeat forever."""
    ak = [0.1, 0.2, 0.3]
    for build in (
        lambda: RadiusBounds.from_local_sensitivity(ak),
        lambda: RadiusBounds.from_local_sensitivity(ak, indexing="tight"),
        lambda: RadiusBounds.lipschitz(2.0, 1.0, levels=3),
    ):
        with pytest.raises(ValidationError, match="cap: required"):
            build()
    for bad in (0.0, -1.0, np.inf, np.nan, "1"):
        with pytest.raises(ValidationError, match="cap"):
            RadiusBounds.from_local_sensitivity(ak, cap=bad)
    assert list(RadiusBounds.from_local_sensitivity(ak, cap=0.25).radii) == [0.2, 0.25, 0.25]
    assert list(RadiusBounds.from_local_sensitivity(ak, indexing="tight", cap=1).radii) == [
        0.1,
        0.2,
        0.3,
        1.0,
    ]


def _median_from_a0_a1(d, radii_from, output_range=None):
    """Approximate PLM of the median of 11 points in [0, 1] from A_0, A_1 only."""
    aug, *_ = sorted_data(d, (0, 1))
    ak = local_sensitivity_at_distance(aug, 6, [0, 1])
    return ApproximatePiecewiseLaplaceLaw(
        float(aug[6]), radii_from(ak), 1.0, output_range=output_range
    )


def test_negative_control_data_dependent_tail_is_caught():
    """The audit's reproduction: radii A_1(x) repeated forever (built deliberately, past the
    builder) leak without bound; restricting the output to [0, 1] still leaks more than
    eps; the capped builder meets eps on the same pairs."""
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 1, 11))
    leaky = lambda ak: RadiusBounds(ak[1:])  # noqa: E731 - tail A_1(x): data-dependent
    capped = lambda ak: RadiusBounds.from_local_sensitivity(ak, cap=1.0)  # noqa: E731
    worst = {"unbounded": 0.0, "range": 0.0, "capped": 0.0}
    for _ in range(60):
        y = x.copy()
        y[rng.integers(11)] = (0.0, 1.0, rng.uniform())[rng.integers(3)]
        for key, radii_from, out, (lo, hi) in (
            ("unbounded", leaky, None, (-50.0, 50.0)),
            ("range", leaky, (0.0, 1.0), (0.0, 1.0)),
            ("capped", capped, None, (-50.0, 50.0)),
        ):
            m1 = _median_from_a0_a1(x, radii_from, out)
            m2 = _median_from_a0_a1(y, radii_from, out)
            top, bottom = log_ratio_extremes(m1, m2, lo, hi)
            worst[key] = max(worst[key], top, -bottom)
    assert worst["unbounded"] > 10.0  # 126 in the audit: the ratio grows without bound
    assert worst["range"] > 1.0 + 0.05  # 1.03-1.18: still more than eps = 1
    assert worst["capped"] <= 1.0 + SLACK


def _triangles_and_ls(adj: np.ndarray) -> tuple[float, float]:
    """Triangle count and its exact local sensitivity under edge toggles, max common
    neighbours of a pair (paper 002, Sec. 5.2)."""
    a2 = adj @ adj
    np.fill_diagonal(a2, 0)
    return float(np.trace(adj @ adj @ adj) / 6), float(a2.max())


def test_approximate_plm_lipschitz_radii_triangle_count():
    """Cor. 5.2: R_l = min(LS + l - 1, n - 2) for the triangle count; exact
    log-ratio between graphs differing in one edge, output restricted to [0, C(n, 3)]."""
    rng = np.random.default_rng(4)
    nv = 7
    top = nv * (nv - 1) * (nv - 2) / 6
    eps = 1.0

    def build(adj):
        tri, ls = _triangles_and_ls(adj)
        radii = RadiusBounds.lipschitz(ls, 1.0, levels=nv, cap=float(nv - 2))
        return ApproximatePiecewiseLaplaceLaw(tri, radii, eps, output_range=(0.0, top))

    span = 0.0
    for _ in range(40):
        upper = np.triu((rng.random((nv, nv)) < rng.uniform(0.2, 0.8)).astype(float), 1)
        adj = upper + upper.T
        i, j = rng.choice(nv, 2, replace=False)
        other = adj.copy()
        other[i, j] = other[j, i] = 1 - adj[i, j]
        span = max(span, _check_pair(build, adj, other, eps, 0.0, top))
    assert span > 0.3 * eps


def test_grid_inverse_sensitivity_exact_pmf_ratios():
    """Discrete INV on a public grid: exact pmf ratios for several statistics."""
    grid = np.linspace(-2, 3, 251)
    rng = np.random.default_rng(9)
    for stat in ("median", "quantile:0.9", "mean", "variance"):
        g = grid if stat != "variance" else np.linspace(0, 6.25, 251)
        for x in datasets(rng, 10):
            for y in neighbours(x, -2.0, 3.0, rng):
                m1, m2 = (
                    GridInverseSensitivityLaw.for_statistic(
                        d, stat, epsilon=1.0, grid=g, bounds=(-2, 3)
                    )
                    for d in (x, y)
                )
                inside = np.isfinite(m1.log_prob)  # grid points in the range of f
                assert np.array_equal(inside, np.isfinite(m2.log_prob))
                d = m1.log_prob[inside] - m2.log_prob[inside]
                assert np.max(np.abs(d)) <= 1.0 + SLACK and d.max() - d.min() <= 1.0 + SLACK


def test_laplace_and_smooth_sensitivity_density_ratios():
    """Laplace exactly; smooth sensitivity (smooth density) on a dense grid incl. tails."""
    rng = np.random.default_rng(8)
    eps = 1.0
    grid = np.concatenate([np.linspace(-60, 60, 20001), [-1e4, 1e4]])
    for x in datasets(rng, 12):
        for y in neighbours(x, -2.0, 3.0, rng):
            for stat in ("median", "mean", "variance"):
                m1 = LaplaceLaw.for_statistic(x, stat, epsilon=eps, bounds=(-2, 3))
                m2 = LaplaceLaw.for_statistic(y, stat, epsilon=eps, bounds=(-2, 3))
                assert np.max(np.abs(m1.logpdf(grid) - m2.logpdf(grid))) <= eps + SLACK
            s1 = SmoothSensitivityLaw(x, epsilon=eps, bounds=(-2, 3))
            s2 = SmoothSensitivityLaw(y, epsilon=eps, bounds=(-2, 3))
            assert np.max(np.abs(s1.logpdf(grid) - s2.logpdf(grid))) <= eps + SLACK


# -- negative controls ----------------------------------------------------------------------
class _ZeroCentre(PiecewiseLaplaceLaw):
    """Broken rho-PLM: score 0 (not 1) on the rho-centre (docs/piecewise-laplace.md)."""

    @property
    def density(self) -> PiecewiseDensity:
        d = segments_from_profile(self.profile, self.epsilon, law="texp", rho=self.rho)
        level = np.where(d.rate == 0, 0.0, d.level)
        return PiecewiseDensity(
            d.left, d.right, d.inner, d.side, d.z0, d.z1, level, d.rate, d.epsilon, d.center
        )


class _LocalLaplace:
    """Broken: Laplace with scale 2 LS(x)/eps, no pieces."""

    def __init__(self, x, eps):
        aug, *_ = sorted_data(x, (-2, 3))
        rank = (aug.size - 1) // 2
        self.inner = LaplaceLaw(
            float(aug[rank]), 2 * local_sensitivity_at_distance(aug, rank, [0])[0] + 1e-3, eps
        )

    def breakpoints(self):
        return np.linspace(-2, 3, 2001)

    def logpdf(self, y):
        return self.inner.logpdf(y)


def _worst(build, rng, lo, hi, count=40):
    worst_ratio, worst_span = 0.0, 0.0
    for x in datasets(rng, count):
        if x.size % 2 == 0:
            x = np.append(x, 0.5)
        for y in neighbours(x, -2.0, 3.0, rng):
            top, bottom = log_ratio_extremes(build(x), build(y), lo, hi)
            worst_ratio = max(worst_ratio, top, -bottom)
            worst_span = max(worst_span, top - bottom)
    return worst_ratio, worst_span


def test_negative_control_zero_centre_is_caught():
    eps, rho = 1.0, 0.3
    build = lambda d: _ZeroCentre.for_statistic(d, "median", epsilon=eps, bounds=(-2, 3), rho=rho)  # noqa: E731
    ratio, span = _worst(build, np.random.default_rng(21), -2.0 - rho, 3.0 + rho)
    assert ratio > eps + 0.1 or span > eps + 0.1
    assert span > 1.5 * eps  # spec: the BR span reached 2 eps


def test_negative_control_local_sensitivity_laplace_is_caught():
    build = lambda d: _LocalLaplace(d, 1.0)  # noqa: E731
    ratio, _ = _worst(build, np.random.default_rng(22), -2.0, 3.0, count=20)
    assert ratio > 5.0
