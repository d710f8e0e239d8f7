"""The Domain: one object for the public facts, built from keywords or given whole; a fact
given both ways must agree; the neighbour relation and the unit are checked together."""

import math

import numpy as np
import pytest

import privest as pv
from privest.domain import Domain
from privest.errors import BoundsError, ValidationError
from privest.mechanisms.laplace import LaplaceMechanism


def test_defaults_and_relation():
    d = Domain(bounds=(0, 100))
    assert d.interval() == (0.0, 100.0) and d.n_public and not d.by_person
    assert d.relation.startswith("swap")
    p = Domain(bounds=(0, 1), neighbours="add_remove", unit="pid", max_groups=2, max_rows=3)
    assert p.by_person and not p.n_public
    assert "at most 2 groups" in p.relation and "3 rows" in p.relation
    assert hash(p) == hash(Domain(**{k: v for k, v in p.to_dict().items()}))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"bounds": (5, 1)}, "lo < hi"),
        ({"bounds": (0, math.inf)}, "finite"),
        ({"bounds": "0:1"}, "text"),
        ({"resolution": 0}, "resolution"),
        ({"neighbours": "replace"}, "neighbours"),
        ({"n": 0}, "n:"),
        ({"n": 10, "neighbours": "add_remove"}, "private"),
        ({"unit": "pid"}, "add_remove"),
        ({"max_rows": 2}, "unit="),
    ],
)
def test_refusals(kw, match):
    with pytest.raises(ValidationError, match=match):
        Domain(**kw)


def test_a_fact_given_twice_must_agree():
    d = Domain(bounds=(0, 100))
    assert Domain.of(d, bounds=(0, 100.0)) is not None
    with pytest.raises(ValidationError, match="given twice"):
        Domain.of(d, bounds=(0, 50))
    with pytest.raises(ValidationError, match="given twice"):
        pv.private_mean(np.ones(3), epsilon=1.0, bounds=(0, 2), domain=Domain(bounds=(0, 3)))
    same = pv.private_mean(np.ones(3), epsilon=1.0, domain=Domain(bounds=(0, 2)), rng=1)
    assert float(same) == float(pv.private_mean(np.ones(3), epsilon=1.0, bounds=(0, 2), rng=1))


def test_check_is_the_public_bounds_rule():
    d = Domain(bounds=(0, 1))
    x, k = d.check([0.2, 0.5])
    assert k == 0 and x.dtype == float
    with pytest.raises(BoundsError, match="1 value"):
        d.check([0.2, 1.5])
    x, k = d.check([0.2, 1.5], clip=True)
    assert k == 1 and x[1] == 1.0


def test_unsupported_relation_is_refused_before_any_data():
    dom = Domain(bounds=(0, 1), neighbours="add_remove")
    with pytest.raises(ValidationError, match="swap neighbours only"):
        LaplaceMechanism("mean", epsilon=1.0, domain=dom)
    with pytest.raises(ValidationError, match="swap neighbours only"):
        pv.PiecewiseLaplace("median", epsilon=1.0, domain=dom)


def test_laplace_sum_under_add_remove_is_eps_close_on_neighbours():
    """Exact: the sensitivity is max(|a|, |b|) (times a person's rows), not b - a."""
    eps, a, b = 1.0, -2.0, 5.0
    for rows in (1, 3):
        kw = {"neighbours": "add_remove"}
        if rows > 1:
            kw.update(unit="pid", max_rows=rows)
        mech = LaplaceMechanism("sum", epsilon=eps, domain=Domain(bounds=(a, b), **kw))
        x = np.array([1.0, -2.0, 4.5])
        y = np.r_[x, np.full(rows, b)]  # a unit added with all its rows at the far end
        lx, ly = mech.law(x), mech.law(y)
        assert lx.sensitivity >= rows * max(abs(a), abs(b))
        t = np.linspace(-40, 60, 2001)
        assert np.max(np.abs(lx.logpdf(t) - ly.logpdf(t))) <= eps * (1 + 1e-9)
        # control: the swap calibration (sensitivity b - a = 7 < 3 |b|) fails on this pair
        if rows > 1:
            swap = LaplaceMechanism("sum", epsilon=eps, bounds=(a, b))
            sx, sy = swap.law(x), swap.law(y)
            assert np.max(np.abs(sx.logpdf(t) - sy.logpdf(t))) > eps
        out = mech.release(x, rng=1)
        assert out.n is None  # n is private under add/remove
