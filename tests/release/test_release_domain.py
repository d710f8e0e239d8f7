"""domain= on the local releases: the ZIL mechanism (paper 000) and the example mechanisms
(paper 004). The domain gives the public bounds (and the ZIL release's resolution); a
local release protects one record's values with n public, so add/remove neighbours and a
person unit are refused (docs/domain.md)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.domain import Domain
from privest.errors import BoundsError, SeededRandomnessWarning, ValidationError
from privest.release.examples import ExampleMechanism, RegressionExampleMechanism

ADD_REMOVE = Domain(bounds=(0, 1), neighbours="add_remove")
PERSON = Domain(bounds=(0, 1), neighbours="add_remove", unit="pid", max_rows=3)
REFUSED = [
    (ADD_REMOVE, "^neighbours: 'add_remove'.*swap neighbours only"),
    (PERSON, "^unit: 'pid'.*swap neighbours only"),
]


@pytest.fixture(autouse=True)
def _seeded_is_fine():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededRandomnessWarning)
        yield


def _frame(n=300, seed=0):
    g = np.random.default_rng(seed)
    return pd.DataFrame({"age": g.integers(18, 91, n), "income": g.uniform(0, 2e5, n)})


BOUNDS = {"age": (18, 90), "income": (0, 2e5)}


@pytest.mark.parametrize(
    ("keywords", "domain"),
    [
        ({"bounds": BOUNDS}, Domain(bounds=BOUNDS)),
        ({"bounds": [(18, 90), (0, 2e5)]}, Domain(bounds=[(18, 90), (0, 2e5)])),
        ({"bounds": (0, 2e5), "columns": ["income"]}, Domain(bounds=(0, 2e5), n=300)),
        ({"bounds": BOUNDS, "resolution": 1.0}, Domain(bounds=BOUNDS, resolution=1)),
    ],
)
def test_zil_from_a_domain_is_the_same_release(keywords, domain):
    X = _frame()
    plain = pv.ZILMechanism(0.3, 0.1, **keywords)
    columns = keywords.get("columns")
    mech = pv.ZILMechanism(0.3, 0.1, columns=columns, domain=domain)
    assert mech.domain == domain
    assert np.array_equal(mech.bounds, plain.bounds) and mech.columns == plain.columns
    assert mech.guarantee.to_dict() == plain.guarantee.to_dict()
    a, b = plain.release(X, rng=7), mech.release(X, rng=7)
    assert np.array_equal(a.x1, b.x1) and np.array_equal(a.x2, b.x2)
    # both ways, agreeing, is the same mechanism too
    both = pv.ZILMechanism(0.3, 0.1, **keywords, domain=domain)
    assert np.array_equal(both.release(X, rng=7).x1, a.x1)


def test_zil_keyword_bounds_keep_their_column_indices():
    X = np.random.default_rng(1).uniform(0, 1, (50, 3))
    mech = pv.ZILMechanism(0.3, 0.1, bounds={2: (0, 1)}, domain=Domain(n=50))
    assert mech.columns == [2]
    rel = mech.release(X, rng=1)
    assert np.array_equal(rel.x1[:, :2], X[:, :2]) and not np.array_equal(rel.x1[:, 2], X[:, 2])


def test_zil_calibrate_from_a_domain():
    plain = pv.ZILMechanism.calibrate(1.0, 0.1, 0.05, bounds=BOUNDS, resolution=1.0)
    mech = pv.ZILMechanism.calibrate(1.0, 0.1, 0.05, domain=Domain(bounds=BOUNDS, resolution=1))
    assert mech.lam == plain.lam and mech.target_epsilon == plain.target_epsilon
    assert np.array_equal(mech.resolution, plain.resolution)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"bounds": (0, 1), "domain": Domain(bounds=(0, 2))}, "^bounds: given twice"),
        ({"bounds": (0, 1), "resolution": 0.5, "domain": Domain(resolution=1)}, "^resolution:"),
        (
            {"bounds": BOUNDS, "resolution": [1, 1], "domain": Domain(resolution=1)},
            "^resolution: given twice",
        ),
    ],
)
def test_zil_refuses_a_fact_given_twice_with_different_values(kw, match):
    with pytest.raises(ValidationError, match=match):
        pv.ZILMechanism(0.3, 0.1, **kw)


def test_zil_needs_bounds_one_way_or_the_other():
    with pytest.raises(BoundsError, match="^bounds: required"):
        pv.ZILMechanism(0.3, 0.1)
    with pytest.raises(BoundsError, match="^bounds: required"):
        pv.ZILMechanism(0.3, 0.1, domain=Domain(n=10))


@pytest.mark.parametrize(("dom", "match"), REFUSED)
def test_zil_refuses_add_remove_and_a_person(dom, match):
    with pytest.raises(ValidationError, match=match):
        pv.ZILMechanism(0.3, 0.1, domain=dom)
    with pytest.raises(ValidationError, match=match):
        pv.ZILMechanism.calibrate(1.0, 0.1, 0.05, domain=dom)


def _examples(n=200, p=2, seed=3):
    g = np.random.default_rng(seed)
    X = g.uniform(-2, 2, (n, p))
    return X, np.where(X[:, 0] > 0, 1, 0), np.clip(X[:, 0] + g.normal(0, 0.5, n), -3, 3)


CLS = {"epsilon_x": 1.0, "epsilon_y": 1.0, "delta": 1e-5}
REG = {"epsilon_x": 1.0, "epsilon_y": 1.0, "delta_x": 1e-5, "delta_y": 1e-5, "y_bounds": (-3, 3)}


@pytest.mark.parametrize(
    ("release", "kw"),
    [(pv.release_examples, CLS), (pv.release_regression_examples, REG)],
)
@pytest.mark.parametrize(
    ("keywords", "domain"),
    [
        ({"bounds": (-2, 2)}, Domain(bounds=(-2, 2))),
        ({"bounds": [(-2, 2), (-3, 3)]}, Domain(bounds=[(-2, 2), (-3, 3)])),
        ({"x_radius": 3.0}, Domain(n=200)),
    ],
)
def test_examples_from_a_domain_are_the_same_release(release, kw, keywords, domain):
    X, labels, target = _examples()
    y = labels if release is pv.release_examples else target
    extra = {} if "bounds" in keywords else {"x_radius": keywords["x_radius"]}
    a = release(X, y, **kw, **keywords, rng=11)
    b = release(X, y, **kw, **extra, domain=domain, rng=11)
    assert a.guarantee.to_dict() == b.guarantee.to_dict() and a.sigma2 == b.sigma2
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)


def test_example_bounds_by_column_name_from_a_domain():
    X, labels, _ = _examples()
    frame = pd.DataFrame(X, columns=["u", "v"])
    box = {"v": (-3, 3), "u": (-2, 2)}
    a = pv.release_examples(frame, labels, **CLS, bounds=box, rng=2)
    b = pv.release_examples(frame, labels, **CLS, domain=Domain(bounds=box), rng=2)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.bounds, b.bounds)


@pytest.mark.parametrize(
    "build",
    [
        lambda **k: ExampleMechanism(**CLS, **k),
        lambda **k: RegressionExampleMechanism(**REG, **k),
    ],
)
def test_example_mechanisms_refuse(build):
    with pytest.raises(ValidationError, match="^bounds: given twice"):
        build(bounds=(-2, 2), domain=Domain(bounds=(-1, 1)))
    with pytest.raises(ValidationError, match="exactly one"):  # a box and a ball
        build(x_radius=1.0, domain=Domain(bounds=(-1, 1)))
    with pytest.raises(ValidationError, match="^domain.resolution"):  # not used: refused
        build(domain=Domain(bounds=(-1, 1), resolution=0.5))
    for dom, match in REFUSED:
        with pytest.raises(ValidationError, match=match):
            build(domain=dom)
    assert build(domain=Domain(bounds=(-1, 1))).domain == Domain(bounds=(-1, 1))
