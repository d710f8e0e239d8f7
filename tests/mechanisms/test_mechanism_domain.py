"""domain= on the Gaussian mechanism, ePTR and classic PTR (docs/domain.md).

The Gaussian mechanism takes its sensitivity from the caller, so either relation is stated
(in its guarantee's label) and bounds are refused; ePTR and classic PTR (paper 001) hold
for swap neighbours only and refuse add/remove, a person unit and bounds.
"""

import numpy as np
import pytest

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.eptr import EPTR
from privest.mechanisms.gaussian import GaussianMechanism
from privest.mechanisms.ptr import ClassicPTR

ADD_REMOVE = Domain(neighbours="add_remove")
PERSON = Domain(neighbours="add_remove", unit="pid", max_rows=2)


@pytest.mark.parametrize("dom", [None, Domain(), Domain(n=50), ADD_REMOVE, PERSON])
def test_gaussian_states_the_relation_its_sensitivity_holds_under(dom):
    plain = GaussianMechanism(1.0, 1e-6, 2.0, dims=2)
    mech = GaussianMechanism(1.0, 1e-6, 2.0, dims=2, domain=dom)
    # the same noise: the caller's sensitivity is stated for the domain's relation
    assert mech.sigma == plain.sigma
    eps = np.array([0.5, 1.0, 2.0])
    assert np.array_equal(mech.guarantee.delta(eps), plain.guarantee.delta(eps))
    expected = Domain() if dom is None else dom
    assert mech.domain == expected
    assert mech.guarantee.label.endswith(f"({expected.relation})")
    assert expected.relation in mech.release([1.0, 2.0], rng=5).summary()
    a = mech.release([1.0, 2.0], rng=5).value
    assert np.array_equal(a, plain.release([1.0, 2.0], rng=5).value)


def test_the_shared_lattice_guarantee_is_not_relabelled():
    swap = GaussianMechanism(1.0, 1e-6, 1.0)
    GaussianMechanism(1.0, 1e-6, 1.0, domain=ADD_REMOVE)  # same cached lattice
    assert "add or remove" not in swap.guarantee.label
    assert "add or remove" not in GaussianMechanism(1.0, 1e-6, 1.0).guarantee.label


@pytest.mark.parametrize(
    ("dom", "match"),
    [(Domain(bounds=(0, 1)), "domain.bounds"), (Domain(resolution=1.0), "domain.resolution")],
)
def test_gaussian_refuses_a_fact_it_cannot_use(dom, match):
    with pytest.raises(ValidationError, match=match):
        GaussianMechanism(1.0, 1e-6, 1.0, domain=dom)


def test_gaussian_refuses_what_is_not_a_domain():
    with pytest.raises(ValidationError, match="domain"):
        GaussianMechanism(1.0, 1e-6, 1.0, domain={"bounds": (0, 1)})


def _eptr(**kw):
    return EPTR(np.mean, lambda x: 100.0, 0.1, 1.0, 1e-6, dim=1, **kw)


def _classic(**kw):
    return ClassicPTR(np.mean, lambda x: 100.0, 0.1, 1.0, 0.01, **kw)


@pytest.mark.parametrize("build", [_eptr, _classic])
def test_ptr_with_a_swap_domain_is_the_same_mechanism(build):
    x = np.linspace(0, 1, 20)
    plain, with_domain = build(), build(domain=Domain(n=20))
    assert with_domain.domain == Domain(n=20) and plain.domain == Domain()
    assert with_domain.guarantee.to_dict() == plain.guarantee.to_dict()
    a, b = plain.release(x, rng=3), with_domain.release(x, rng=3)
    assert a.released and b.released and np.array_equal(a.value, b.value)


@pytest.mark.parametrize("build", [_eptr, _classic])
@pytest.mark.parametrize(
    ("dom", "match"),
    [
        (ADD_REMOVE, "^neighbours: 'add_remove'.*swap neighbours only"),
        (PERSON, "^unit: 'pid'.*swap neighbours only"),
        (Domain(bounds=(0, 1)), "^domain.bounds"),
        (Domain(resolution=0.5), "^domain.resolution"),
    ],
)
def test_ptr_refuses_another_relation_or_an_unused_fact(build, dom, match):
    with pytest.raises(ValidationError, match=match):
        build(domain=dom)
