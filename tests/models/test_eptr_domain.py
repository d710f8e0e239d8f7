"""domain= on the ePTR estimators (paper 001: swap neighbours only; docs/domain.md).

The domain is a constructor parameter stored as given (scikit-learn's convention) and
checked where the guarantee is stated, before any data is read: at ``fit``.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from privest.accounting.budget import Budget
from privest.domain import Domain
from privest.errors import NothingReleasedWarning, ValidationError
from privest.models.eptr_bayes import EPTRBayesClassifier
from privest.models.eptr_nw import EPTRKernelRegressor
from privest.models.eptr_ols import EPTRLinearRegression

ADD_REMOVE = Domain(neighbours="add_remove")
PERSON = Domain(neighbours="add_remove", unit="pid", max_rows=2)


def _ols(**kw):
    return EPTRLinearRegression(
        epsilon=2.0, delta=1e-3, x_radius=4.0, c0=0.3, clip=True, random_state=3, **kw
    )


def _nw(**kw):
    return EPTRKernelRegressor(
        query_points=[[0.3], [0.45]], epsilon=4.0, delta=1e-3, bandwidth=0.1, c0=0.2,
        y_radius=2.0, clip=True, random_state=3, **kw,
    )  # fmt: skip


def _bayes(**kw):
    return EPTRBayesClassifier(
        epsilon=2.0, delta=1e-3, classes=[0, 1], x_radius=6.0, c0=0.2, clip=True,
        random_state=3, **kw,
    )  # fmt: skip


def _data(seed=0, n=3000):
    g = np.random.default_rng(seed)
    X = g.uniform(0, 1, (n, 2))
    y = X @ np.array([0.6, 0.3]) + 0.1 * g.standard_normal(n)
    return X, y, (X[:, 0] + X[:, 1] > 1).astype(int)


def _fitted(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NothingReleasedWarning)
        return model.fit(X, y)


def test_ols_with_a_swap_domain_is_the_same_fit():
    X, y, _ = _data()
    plain = _fitted(_ols(), X, y)
    for dom in (Domain(), Domain(n=X.shape[0])):
        fit = _fitted(_ols(domain=dom), X, y)
        assert fit.guarantee_.to_dict() == plain.guarantee_.to_dict()
        assert np.array_equal(fit.coef_, plain.coef_) and fit.released_ == plain.released_


def test_nw_bounds_from_the_domain_are_the_keyword_bounds():
    X, y, _ = _data()
    x = X[:, :1]
    plain = _fitted(_nw(bounds=(0.0, 0.4)), x, y)
    fit = _fitted(_nw(domain=Domain(bounds=(0.0, 0.4))), x, y)
    both = _fitted(_nw(bounds=(0, 0.4), domain=Domain(bounds=(0.0, 0.4), n=3000)), x, y)
    assert plain.released_.all()
    assert np.array_equal(fit.estimates_, plain.estimates_)
    assert np.array_equal(both.estimates_, plain.estimates_)
    # control: the box matters (the unit box, the default, clips nothing here)
    assert not np.array_equal(_fitted(_nw(), x, y).estimates_, plain.estimates_)
    frame = pd.DataFrame({"u": x[:, 0]})
    named = _fitted(_nw(domain=Domain(bounds={"u": (0.0, 0.4)})), frame, y)
    assert np.array_equal(named.estimates_, plain.estimates_)


def test_bayes_bounds_from_the_domain_are_the_keyword_bounds():
    X, _, label = _data()
    plain = _fitted(_bayes(bounds=[(0, 1), (0, 2)]), X, label)
    fit = _fitted(_bayes(domain=Domain(bounds=[(0, 1), (0, 2)])), X, label)
    assert plain.released_
    assert np.array_equal(fit.means_, plain.means_)
    assert np.array_equal(fit.predict(X), plain.predict(X))
    frame = pd.DataFrame(X, columns=["u", "v"])
    named = _fitted(_bayes(domain=Domain(bounds={"v": (0, 2), "u": (0, 1)})), frame, label)
    assert np.array_equal(named.means_, plain.means_)
    # control: the centre matters
    assert not np.array_equal(_fitted(_bayes(), X, label).means_, plain.means_)


@pytest.mark.parametrize("build", [_nw, _bayes])
def test_bounds_given_twice_must_agree_and_are_refused_before_the_budget(build):
    X, y, label = _data()
    budget = Budget(epsilon=10.0, delta=0.1)
    model = build(bounds=(0, 1), domain=Domain(bounds=(0, 2)), budget=budget)
    with pytest.raises(ValidationError, match="^bounds: given twice"):
        model.fit(X[:, :1] if build is _nw else X, y if build is _nw else label)
    assert budget.spends == ()


@pytest.mark.parametrize("build", [_ols, _nw, _bayes])
@pytest.mark.parametrize(
    ("dom", "match"),
    [
        (ADD_REMOVE, "^neighbours: 'add_remove'.*swap neighbours only"),
        (PERSON, "^unit: 'pid'.*swap neighbours only"),
        (Domain(resolution=0.5), "^domain.resolution"),
    ],
)
def test_another_relation_or_an_unused_fact_is_refused_at_fit(build, dom, match):
    X, y, label = _data(n=200)
    model = build(domain=dom)  # stored as given: scikit-learn validates in fit
    assert model.get_params()["domain"] is dom
    with pytest.raises(ValidationError, match=match):
        model.fit(X[:, :1] if build is _nw else X, label if build is _bayes else y)


def test_ols_refuses_bounds_its_ball_does_not_use():
    X, y, _ = _data(n=200)
    with pytest.raises(ValidationError, match="^domain.bounds"):
        _ols(domain=Domain(bounds=(0, 1))).fit(X, y)


@pytest.mark.parametrize("build", [_ols, _nw, _bayes])
def test_domain_survives_clone_and_set_params(build):
    dom = Domain(bounds=(0, 1), n=300) if build is not _ols else Domain(n=300)
    model = build(domain=dom)
    copy = clone(model)
    assert copy.get_params()["domain"] == dom and copy.domain is not None
    assert model.get_params()["domain"] is dom
    other = Domain(n=100)
    assert clone(copy.set_params(domain=other)).get_params()["domain"] == other
    assert clone(build()).get_params()["domain"] is None


def test_bayes_x_radius_auto_is_the_norm_bound_of_the_public_box():
    """x_radius="auto" (default) reads R_x off the public box, never the data: a typical
    feature box fits without BoundsError, the same R_x on swapped data; without a box the
    unit ball is kept and the error names the way out; an explicit x_radius is kept."""
    from privest.errors import BoundsError

    rng = np.random.default_rng(5)
    box = [(0.0, 10.0), (20.0, 25.0)]
    X = np.column_stack([rng.uniform(0, 10, 400), rng.uniform(20, 25, 400)])
    y = (X[:, 0] > 5).astype(int)
    kw = dict(epsilon=2.0, delta=1e-3, classes=[0, 1], random_state=0)
    radius = np.hypot(5.0, 2.5) * (1 + 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NothingReleasedWarning)
        for Xs in (X, np.full_like(X, 20.0)[:, ::-1].clip([0, 20], [10, 25])):
            m = EPTRBayesClassifier(**kw, bounds=box).fit(Xs, y)
            assert m.x_radius_ == radius
        by_domain = EPTRBayesClassifier(**kw, domain=Domain(bounds=box)).fit(X, y)
        assert by_domain.x_radius_ == radius
        assert EPTRBayesClassifier(**kw, x_radius=30.0).fit(X, y).x_radius_ == 30.0
    with pytest.raises(BoundsError, match="bounds= or domain="):
        EPTRBayesClassifier(**kw).fit(X, y)
    with pytest.raises(BoundsError, match="outside the public ball"):
        EPTRBayesClassifier(**kw, bounds=box, x_radius=1.0).fit(X, y)


def test_ols_x_radius_auto_is_the_norm_bound_of_the_domain_box():
    """EPTRLinearRegression(x_radius="auto", the default) takes R_x = ||max(|lo|, |hi|)|| of
    domain.bounds (no centring), the same on swapped data; without a box, the unit ball."""
    from privest.errors import BoundsError

    rng = np.random.default_rng(6)
    box = [(0.0, 10.0), (-3.0, 2.0)]
    X = np.column_stack([rng.uniform(0, 10, 300), rng.uniform(-3, 2, 300)])
    y = X @ [0.1, 0.2] + 0.1 * rng.standard_normal(300)
    kw = dict(epsilon=2.0, delta=1e-3, theta_radius=1.0, clip=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NothingReleasedWarning)
        for Xs in (X, np.zeros_like(X)):
            m = EPTRLinearRegression(**kw, domain=Domain(bounds=box)).fit(Xs, y)
            assert m.x_radius_ == np.hypot(10.0, 3.0) * (1 + 1e-12)
        assert EPTRLinearRegression(**kw).fit(X, y).x_radius_ == 1.0
    with pytest.raises(BoundsError, match="outside the public bounds"):
        EPTRLinearRegression(**{**kw, "clip": False}).fit(X, y)
