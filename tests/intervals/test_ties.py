"""Records tied on a bound (clipped onto it, or a column's own minimum): the counts of them
that a quantile's interval releases, their exact privacy, their upper confidence bounds,
the plan that keeps the ends' noise clear of them, and the coverage on real columns
(docs/central-inference.md, "Medians and quantiles")."""

import math

import numpy as np
import pytest

import privest as pv
from privest.intervals.ranks import (
    TIE_TAIL,
    clear_of_edges,
    count_shares,
    endpoint_plan,
    rank_noise_cdf,
    robust_miss,
    tied_upper,
)
from privest.intervals.release import plan_split
from privest.models.statistics import statistic_law, statistic_mechanism


def _count_pmf(c: int, eps: float, n: int) -> np.ndarray:
    """The library's released count clamp(c + K, 0, n) as a pmf over 0..n."""
    law, _ = statistic_law(
        np.r_[np.ones(c), np.zeros(n - c)],
        statistic_mechanism("count", epsilon=eps, mechanism="discrete_laplace", n=n),
    )
    return np.exp(law.logpdf(np.arange(n + 1.0)))


@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_the_bound_counts_compose_to_their_share_exactly(q):
    """A swap that moves one record from the lower bound to the upper changes both counts by
    one: the joint law of the two released counts moves by at most e^eps (eps their share of
    epsilon), attained; control: each count at the whole share would leak more."""
    n, eps = 40, 0.6
    lo_share, hi_share = count_shares(q)
    assert lo_share + hi_share == pytest.approx(1.0)

    def worst(e_lo, e_hi):
        a = np.outer(_count_pmf(10, e_lo, n), _count_pmf(7, e_hi, n))
        b = np.outer(_count_pmf(9, e_lo, n), _count_pmf(8, e_hi, n))
        return float(np.max(np.abs(np.log(a) - np.log(b))))

    assert worst(eps * lo_share, eps * hi_share) == pytest.approx(eps, abs=1e-3)
    assert worst(eps * lo_share, eps * hi_share) <= eps + 1e-9
    assert worst(eps, eps) > 1.5 * eps  # the control: no sharing


def test_the_split_charges_the_counts_before_the_ends():
    x = np.random.default_rng(1).uniform(0, 100, 2000)
    r = pv.private_quantile(x, 0.9, epsilon=1.0, bounds=(0, 100), rng=2)
    assert r.split["bound counts"] == pytest.approx(
        plan_split("quantile", 1.0, "population")["bound counts"]
    )
    assert sum(r.split.values()) == pytest.approx(1.0)
    assert float(r.guarantee.eps) == 1.0


def test_on_its_own_lattice_a_quantile_releases_no_counts():
    """With a resolution the ends hold for any data: the counts' share goes to the point,
    and the releases still compose to the whole epsilon, charged once."""
    x = np.random.default_rng(1).integers(0, 100, 2000).astype(float)
    r = pv.private_quantile(x, 0.9, epsilon=1.0, bounds=(0, 100), resolution=1, rng=2)
    assert r.split == pytest.approx({"point": 0.5, "lower end": 0.25, "upper end": 0.25})
    assert plan_split("quantile", 1.0, "population", lattice=True) == pytest.approx(
        {"point": 0.5, "ends": 0.5}
    )
    assert float(r.guarantee.eps) == 1.0


@pytest.mark.parametrize("eps", [0.05, 0.5, 2.0])
def test_the_upper_bound_of_a_count_fails_at_most_its_share_of_alpha(eps):
    """Exactly over the count's law: P(c > tied_upper(release)) <= TIE_TAIL * alpha, at
    counts inside and at the ends of [0, n]; control: one less margin fails more often."""
    n, alpha = 300, 0.05
    p = float(
        statistic_mechanism("count", epsilon=eps, mechanism="discrete_laplace", n=n).noise_law(n).p
    )
    bounds = np.array([tied_upper(float(y), p, n, alpha) for y in range(n + 1)])
    worst = 0.0
    for c in (0, 3, 150, n):
        miss = float(_count_pmf(c, eps, n)[bounds < c].sum())
        assert miss <= TIE_TAIL * alpha + 1e-12
        worst = max(worst, float(_count_pmf(c, eps, n)[bounds - 1 < c].sum()))
    assert worst > TIE_TAIL * alpha  # the margin is the least that holds (the control)


def test_an_end_whose_noise_reaches_the_ties_on_a_bound_becomes_the_bound():
    """q = 0.9 of 1,000 records at eps 1: without ties both ends are released; with up to 150
    records on the upper bound the upper end would be pushed below them, so it is the bound
    and the lower end gets all of epsilon; a lower end is likewise kept clear of ties on the
    upper bound (it would land above the quantile past them)."""
    free = endpoint_plan(1000, 0.9, 1.0, 0.05)
    assert free.lower_rank is not None and free.upper_rank is not None
    tied = endpoint_plan(1000, 0.9, 4.0, 0.05, tied=(0, 90))
    assert tied.upper_rank is None and tied.lower_rank is not None
    assert tied.lower_epsilon == 4.0
    assert not clear_of_edges(free.upper_rank, 1000, 0.5, +1, (0, 150))
    assert clear_of_edges(free.upper_rank, 1000, 0.5, +1, (0, 0))
    assert not clear_of_edges(free.lower_rank, 1000, 0.5, -1, (0, 120))
    # neither end clear at half epsilon: the one clear at all of it is kept
    both_out = endpoint_plan(10_000, 0.9, 0.5, 0.05, tied=(0, 974))
    assert both_out.lower_rank is not None and both_out.upper_rank is None


# -- coverage on real columns (exact given each sample) -----------------------------------
def _end_tails(x, rank, eps, bounds, resolution, truth):
    """(P(end <= truth), P(end >= truth)) of the library's end at ``rank`` on ``x``."""
    from privest.mechanisms.profiles.reaches import rank_level

    if rank is None:
        return None
    mech = statistic_mechanism(
        "quantile",
        quantile=rank_level(rank, x.size),
        epsilon=eps,
        bounds=bounds,
        clip=True,
        resolution=resolution,
        mechanism="piecewise_laplace",
        target="rank",
    )
    law, _ = statistic_law(x, mech)
    # P(end < truth): the law's cdf at the last lattice point below the truth (the lattice
    # law's cdf_left is its cdf, which would count an end at the truth as a miss)
    step = mech.grid.step
    below = float(law.cdf(step * (math.ceil(truth / step) - 1)))
    return float(law.cdf(truth)), 1.0 - below


def _cover(lower, upper, bounds, truth):
    """P(min(L, U) <= truth <= max(L, U)) for independent ends (a bound: its value)."""

    def tails(t, bound):
        return (float(truth >= bound), float(truth <= bound)) if t is None else t

    (fl, gl), (fu, gu) = tails(lower, bounds[0]), tails(upper, bounds[1])
    at_l, at_u = max(fl + gl - 1, 0.0), max(fu + gu - 1, 0.0)
    return min(1.0, fl * gu + fu * gl - at_l * at_u)


def _coverages(col, bounds, q, n, eps, resolution, reps, seed):
    """(the library's coverage, the old plan's (no counts, all of the ends' share on the
    ends at planned ranks)), each the mean over samples of the exact conditional coverage,
    and their Monte Carlo SEs."""
    rng = np.random.default_rng(seed)
    truth = float(np.quantile(np.clip(col, *bounds), q, method="inverted_cdf"))
    old = endpoint_plan(n, q, 0.5 * eps, 0.05)
    new_c, old_c = [], []
    for i in range(reps):
        x = col[rng.integers(0, col.size, n)]
        r = pv.private_quantile(
            x, q, epsilon=eps, bounds=bounds, clip=True, resolution=resolution, rng=seed + i
        )
        it, sp = r.interval, r.split
        lower = _end_tails(x, it.lower_rank, sp.get("lower end"), bounds, resolution, truth)
        upper = _end_tails(x, it.upper_rank, sp.get("upper end"), bounds, resolution, truth)
        new_c.append(_cover(lower, upper, bounds, truth))
        lower = _end_tails(x, old.lower_rank, old.lower_epsilon, bounds, resolution, truth)
        upper = _end_tails(x, old.upper_rank, old.upper_epsilon, bounds, resolution, truth)
        old_c.append(_cover(lower, upper, bounds, truth))
    se = [float(np.std(c) / math.sqrt(reps)) for c in (new_c, old_c)]
    return float(np.mean(new_c)), float(np.mean(old_c)), se


@pytest.mark.slow
@pytest.mark.parametrize(
    "column,bounds,q,eps",
    [
        # 15% of the records clipped onto the upper bound, which is the 0.9-quantile
        ("diabetes", (50.0, 250.0), 0.9, 1.0),
        # 9.5% clipped onto the upper bound, the 0.9-quantile just inside it (1176)
        ("breast_cancer", (200.0, 1200.0), 0.9, 2.0),
    ],
)
def test_ties_on_a_bound_no_longer_under_cover(column, bounds, q, eps):
    """Real columns from scikit-learn, n = 1,000: the interval covers the clipped
    population's quantile at least 0.935 (less 3 MC SEs); control: the old plan (ranks blind
    to the ties) under-covers there, beyond 3 MC SEs."""
    from sklearn.datasets import load_breast_cancer, load_diabetes

    if column == "diabetes":
        col = load_diabetes(scaled=False).target
    else:
        col = load_breast_cancer().data[:, 3]
    new, old, (se_new, se_old) = _coverages(col, bounds, q, 1000, eps, None, 60, 7)
    assert new >= 0.935 - 3 * max(se_new, 1e-3), new
    assert old < 0.935 - 3 * max(se_old, 1e-3), old


# -- ties inside the bounds: the ends on the data's own lattice hold for any data ---------
def _tied_then_gap(n: int, eps: float, side: int):
    """Half the records tied at 10, half at the far bound 40 (a gap of 29 lattice points
    past the tie, the worst place for it), on the lattice 0..40; ``side`` -1: the lower end
    (its miss is landing above 10), +1: the mirror image for the upper end. Per rank k of
    the tie: the exact miss and the rank distance d the bound is evaluated at."""
    x = np.r_[np.full(n // 2, 10.0), np.full(n - n // 2, 40.0)]
    truth = 10.0
    if side > 0:
        x, truth = 40.0 - x, 30.0
    out = []
    for k in range(1, n // 2 + 1):
        rank = k if side < 0 else n + 1 - k  # the upper end: mirrored rank
        below, above = _end_tails(x, rank, eps, (0.0, 40.0), 1.0, truth)
        miss = 1.0 - below if side < 0 else 1.0 - above
        out.append((miss, n // 2 - k))  # d = B - k (lower), k - 1 - #{x < Q} (upper)
    return out


@pytest.mark.parametrize("eps", [0.5, 2.0])
@pytest.mark.parametrize("side", [-1, +1])
def test_the_bound_for_any_data_holds_where_the_model_fails(eps, side):
    """Records tied at the quantile and a long empty gap past it (the case the ranks' model
    of smooth gaps gets wrong): the exact chance that an end aimed inside the tie lands past
    the quantile is within robust_miss at every rank; control: the model's own tail there
    (1 - rank_noise_cdf at the same distance) is exceeded several-fold."""
    worst_model = 0.0
    for miss, d in _tied_then_gap(60, eps, side):
        assert miss <= float(robust_miss(d, eps, 41)) + 1e-12, (miss, d)
        model = 1.0 - float(rank_noise_cdf(np.array([d + 0.5]), eps)[0])
        if miss > 1e-6:
            worst_model = max(worst_model, miss / max(model, 1e-300))
    assert worst_model > 3.0  # the control: the model under-states the miss


@pytest.mark.slow
def test_interior_ties_no_longer_under_cover():
    """The raw proline column of scikit-learn's wine (178 values, so a sample of 10,000 is
    long runs of ties between wide gaps) on its lattice, median at eps 0.1: the interval
    covers at least 0.935 (less 3 MC SEs); control: the model's plan (all of the ends' share,
    no counts) under-covers there, beyond 3 MC SEs."""
    from sklearn.datasets import load_wine

    col = load_wine().data[:, 12]
    new, old, (se_new, se_old) = _coverages(col, (0.0, 2000.0), 0.5, 10_000, 0.1, 1.0, 40, 11)
    assert new >= 0.935 - 3 * max(se_new, 1e-3), new
    assert old < 0.935 - 3 * max(se_old, 1e-3), old


def test_a_one_ended_plan_chosen_by_the_counts_keeps_its_end_at_half_alpha():
    """The released counts pick the samples: where a count on the bound turns the two-ended
    plan into a one-ended one, the end stays at level 1 - alpha/2 (with all of epsilon);
    where the rule is public (the end would reach past x_(n) whatever the counts) it is at
    1 - alpha. Control: the two levels give different ranks, so the check can fail."""
    from privest.intervals.ranks import endpoint_ranks

    kw = dict(kind="population", center=None, points=None)
    counted = endpoint_plan(1000, 0.9, 4.0, 0.05, tied=(0, 90))
    half_alpha = endpoint_ranks(1000, 0.9, 4.0, 0.975, **kw)[0]
    full_alpha = endpoint_ranks(1000, 0.9, 4.0, 0.95, **kw)[0]
    assert half_alpha < full_alpha  # the control
    assert counted.lower_rank == half_alpha and counted.upper_rank is None
    public = endpoint_plan(100, 0.9, 2.0, 0.05)  # past x_(n) with no record on the bound
    assert public.upper_rank is None
    assert public.lower_rank == endpoint_ranks(100, 0.9, 2.0, 0.95, **kw)[0]


@pytest.mark.slow
def test_quantile_next_to_a_clipped_bound_covers():
    """Uniform(0, 1.1025) clipped to (0, 1): 9.3% of the records on the upper bound, the
    0.9-quantile 0.7% of them below it, so the count on the bound chooses the plan and is
    almost the complement of the count below the quantile. Population coverage over 2,000
    releases (n = 10^4, eps 4; MC SE 0.0049) within 3 SE of 0.95: the old rule's one-ended
    end at 1 - alpha covered 0.931 here (docs/central-inference.md)."""
    c, reps = 1.1025, 2000
    rng = np.random.default_rng(2027)
    hits = 0
    for _ in range(reps):
        x = rng.uniform(0.0, c, 10_000)
        r = pv.private_quantile(x, 0.9, epsilon=4.0, bounds=(0.0, 1.0), clip=True, rng=rng)
        ci = r.conf_int(0.05)
        hits += float(ci.lower) <= 0.9 * c <= float(ci.upper)
    se = math.sqrt(0.95 * 0.05 / reps)
    assert abs(hits / reps - 0.95) <= 3 * se


def test_an_end_ruled_out_by_the_far_sides_count_moves_outward():
    """q = 0.1 of 1,000 records, 85 released on the lower bound (upper confidence bound 116),
    ends' epsilon 0.5: the lower end is within reach of its own ties (the bound), and the
    upper end at its model rank is too close to the far side's released count (n times its
    noise's tail past it above EDGE_TAIL). It is kept at the nearest rank above that is clear
    instead of becoming the bound (docs/central-inference.md, "The far side"). Controls: the
    model rank and the rank one below the kept one are not clear; an end ruled out by its
    own side's ties, or publicly (no counts), still becomes the bound."""
    from privest.intervals.ranks import endpoint_ranks, outward

    n, tied, far = 1000, (116, 0), (85, 0)
    k_model = endpoint_ranks(n, 0.1, 0.5, 0.975)[1]
    plan = endpoint_plan(n, 0.1, 0.5, 0.05, tied=tied, far_tied=far)
    assert plan.lower_rank is None and plan.upper_epsilon == 0.5
    assert plan.upper_rank > k_model
    assert not clear_of_edges(k_model, n, 0.5, +1, tied, far)  # the old rule's bound
    assert clear_of_edges(plan.upper_rank, n, 0.5, +1, tied, far)
    assert not clear_of_edges(plan.upper_rank - 1, n, 0.5, +1, tied, far)
    # the near side: moving a lower end down only takes it deeper into its own ties
    assert outward(endpoint_ranks(n, 0.1, 0.5, 0.975)[0], n, 0.5, -1, tied, far) is None
    # public: the median of 100 at ends' epsilon 0.25 is the bounds whatever the counts
    assert endpoint_plan(100, 0.5, 0.25, 0.05, tied=(0, 0), far_tied=(0, 0)) == endpoint_plan(
        100, 0.5, 0.25, 0.05
    )
    assert endpoint_plan(100, 0.5, 0.25, 0.05).lower_rank is None


@pytest.mark.slow
def test_quantile_with_the_far_side_tied_covers_and_is_narrow():
    """Uniform(-0.0929, 1) clipped to (0, 1): 8.5% of the records on the lower bound, the
    0.1-quantile 0.0164 (n = 1,000, eps 1): the upper end's model rank is within reach of
    the released count on the far side, so the old rule's interval was the bounds in about
    80% of the releases. Coverage over 600 releases (MC SE 0.0089) at least 0.95 - 3 SE, and
    the upper end below the bound in nearly all of them (median width under a fifth of the
    range). Control: the non-private [0, x_(k)] at the rank of level 0.88 fails the same
    coverage check on the same samples."""
    a, reps, n = 0.0929, 600, 1000
    truth = 0.1 * (1 + a) - a
    k88 = int(np.searchsorted(np.cumsum(_binom(n, 0.1)), 0.88)) + 1  # P(B < k88) >= 0.88
    rng = np.random.default_rng(2028)
    hits = control = inside = 0
    widths = []
    for _ in range(reps):
        x = rng.uniform(-a, 1.0, n)
        r = pv.private_quantile(x, 0.1, epsilon=1.0, bounds=(0.0, 1.0), clip=True, rng=rng)
        lo, hi = (float(v) for v in r.conf_int(0.05))
        hits += lo <= truth <= hi
        inside += hi < 1.0
        widths.append(hi - lo)
        control += truth <= np.sort(np.clip(x, 0.0, 1.0))[k88 - 1]
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    assert hits / reps >= floor
    assert control / reps < floor  # the check can fail
    assert inside / reps >= 0.9 and float(np.median(widths)) < 0.2


def _binom(n: int, q: float) -> np.ndarray:
    """The Binomial(n, q) pmf over 0..n."""
    from scipy import stats

    return stats.binom.pmf(np.arange(n + 1), n, q)
