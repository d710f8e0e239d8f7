"""The vocabulary rules of docs/vocabulary.md, checked on the whole public API.

* no public parameter keeps a retired name (no aliases in 0.x);
* boxes are spelled ``bounds`` / ``y_bounds`` / ``theta_bounds``, balls ``*_radius``;
* ``delta`` is a DP delta: passing it moves the DP delta of the mechanism's guarantee;
* every mechanism exposes ``.guarantee`` before any data, and ``.release`` returns an
  object that carries the same guarantee;
* ``alpha`` is never both a ridge penalty and a significance level in one class.
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.accounting.base import Guarantee
from privest.contract import Mechanism
from privest.models.statistics import statistic_mechanism
from privest.registry import load, mechanism_names, mechanism_spec

PACKAGES = (
    "privest",
    "privest.accounting",
    "privest.audit",
    "privest.learn",
    "privest.mechanisms",
    "privest.models",
    "privest.release",
)

#: names retired by the vocabulary issue (docs/vocabulary.md, "Renamed in 0.2.0")
RETIRED = {
    "level",
    "target_delta",
    "param_bounds",
    "projection_radius",
    "target_bounds",
    "response_radius",
    "radius",
    "project",
    "return_result",
    "alpha_safety_factor",
    "convention",
    "bound",
    "q",
    "n_projected",
}
BOX_NAMES = {"bounds", "y_bounds", "theta_bounds"}
BALL_NAMES = {"x_radius", "y_radius", "theta_radius"}


def _public_objects():
    seen = {}
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return seen


def _parameters():
    """(where, inspect.Parameter) for every public function, constructor and method."""
    out = []
    for qual, obj in _public_objects().items():
        targets = [(qual, obj)] if inspect.isfunction(obj) else []
        if inspect.isclass(obj):
            if issubclass(obj, BaseException):
                continue
            targets.append((qual, obj.__init__))
            for mname, member in inspect.getmembers(obj):
                pandas_own = (getattr(member, "__module__", None) or "").startswith("pandas")
                if (
                    not mname.startswith("_")
                    and not pandas_own
                    and (inspect.isfunction(member) or inspect.ismethod(member))
                ):
                    targets.append((f"{qual}.{mname}", member))
        for where, fn in targets:
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                continue
            out += [(where, p) for name, p in params.items() if name not in ("self", "cls")]
    return out


PARAMETERS = _parameters()
SIGNATURES = [(where, p.name) for where, p in PARAMETERS]


def test_the_api_is_enumerated():
    assert len(_public_objects()) > 100 and len(SIGNATURES) > 500


def test_no_retired_parameter_name_survives():
    bad = sorted({(w, p) for w, p in SIGNATURES if p in RETIRED})
    assert not bad, bad


def test_bounds_have_two_spellings():
    boxes = {p for _, p in SIGNATURES if p.endswith("bounds")}
    balls = {p for _, p in SIGNATURES if p.endswith("radius")}
    assert boxes <= BOX_NAMES, boxes - BOX_NAMES
    assert balls <= BALL_NAMES, balls - BALL_NAMES


#: the DP deltas of the public API (docs/vocabulary.md, "Privacy")
DP_DELTAS = {"delta", "delta_x", "delta_y"}


def _unprotective_defaults(parameters):
    """(where, name, default) of every DP delta whose default is above 1e-5."""
    return [
        (where, p.name, p.default)
        for where, p in parameters
        if p.name in DP_DELTAS
        and p.default is not inspect.Parameter.empty
        and p.default is not None
        and not (isinstance(p.default, int | float) and 0 <= p.default <= 1e-5)
    ]


def test_a_dp_delta_default_is_at_most_1e_5_or_absent():
    """docs/vocabulary.md: a DP delta is required, or defaults to at most 1e-5 (a default
    such as 0.01 is 30 times 1/n at n = 3000: no protection)."""
    checked = [p for _, p in PARAMETERS if p.name in DP_DELTAS]
    assert len(checked) > 20
    assert not _unprotective_defaults(PARAMETERS)


def test_negative_control_a_delta_default_of_0_01_is_flagged():
    def f(delta=0.01, delta_x=1e-6, delta_y=None):
        return delta

    params = [("f", p) for p in inspect.signature(f).parameters.values()]
    assert _unprotective_defaults(params) == [("f", "delta", 0.01)]


def test_alpha_is_never_two_things_in_one_class():
    """A class whose constructor takes a ridge ``alpha`` has no method taking ``alpha``."""
    for qual, obj in _public_objects().items():
        if not inspect.isclass(obj) or issubclass(obj, BaseException):
            continue
        init = inspect.signature(obj.__init__).parameters
        if "alpha" not in init:
            continue
        for mname, member in inspect.getmembers(obj, inspect.isfunction):
            if mname != "__init__" and "alpha" in inspect.signature(member).parameters:
                pytest.fail(f"{qual}: alpha is a constructor parameter and one of {mname}'s")


# ------------------------------------------------------------------ mechanisms
def _frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.uniform(0, 1, n), "b": rng.uniform(-5, 5, n)})


#: every mechanism class, built from public parameters only, and data to release
MECHANISMS = {
    "ZILMechanism": (
        lambda: pv.ZILMechanism.calibrate(
            epsilon=1.0, delta=0.2, zero_prob=0.05, bounds={"a": (0, 1), "b": (-5, 5)}
        ),
        lambda m, rng: m.release(_frame(), rng=rng),
    ),
    "ExampleMechanism": (
        lambda: pv.ExampleMechanism(
            epsilon_x=1.0, epsilon_y=1.0, delta=1e-5, bounds=[(0, 1), (-5, 5)]
        ),
        lambda m, rng: m.release(_frame(), np.arange(40) % 2, rng=rng),
    ),
    "RegressionExampleMechanism": (
        lambda: pv.RegressionExampleMechanism(
            epsilon_x=1.0,
            epsilon_y=1.0,
            delta_x=1e-5,
            delta_y=1e-5,
            y_bounds=(0, 1),
            bounds=[(0, 1), (-5, 5)],
        ),
        lambda m, rng: m.release(_frame(), np.linspace(0, 1, 40), rng=rng),
    ),
    "GaussianMechanism": (
        lambda: pv.GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0, dims=3),
        lambda m, rng: m.release(np.zeros(3), rng=rng),
    ),
    "EPTR": (
        lambda: pv.EPTR(
            estimator=np.mean,
            safety_lower_bound=lambda x: 100.0,
            local_sensitivity=0.1,
            epsilon=1.0,
            delta=1e-5,
            dim=1,
        ),
        lambda m, rng: m.release(np.ones(10), rng=rng),
    ),
    "ClassicPTR": (
        lambda: pv.ClassicPTR(
            estimator=np.mean,
            distance_to_unsafe=lambda x: 100.0,
            local_sensitivity=0.1,
            epsilon=1.0,
            delta=1e-5,
        ),
        lambda m, rng: m.release(np.ones(10), rng=rng),
    ),
    "LaplaceMechanism": (
        lambda: pv.LaplaceMechanism("mean", epsilon=1.0, bounds=(0, 1)),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
    "DiscreteLaplace": (
        lambda: statistic_mechanism("count", epsilon=1.0, mechanism="discrete_laplace"),
        lambda m, rng: m.release((_frame()["a"] > 0.5).to_numpy(float), rng=rng),
    ),
    "PiecewiseLaplace": (
        lambda: pv.PiecewiseLaplace("median", epsilon=1.0, bounds=(0, 1)),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
    "InverseSensitivity": (
        lambda: pv.InverseSensitivity("quantile", quantile=0.9, epsilon=1.0, bounds=(0, 1)),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
    "SmoothSensitivity": (
        lambda: pv.SmoothSensitivity("median", epsilon=1.0, bounds=(0, 1)),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
    "PermuteAndFlip": (
        lambda: pv.PermuteAndFlip("median", epsilon=1.0, bounds=(0, 1), resolution=0.01),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
    "TwoStage": (
        lambda: pv.TwoStage("median", epsilon=1.0, bounds=(0, 1)),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
    "RankExponential": (
        lambda: statistic_mechanism(
            "median", epsilon=1.0, bounds=(0, 1), mechanism="rank_exponential"
        ),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
    "PTRMedian": (
        lambda: pv.PTRMedian(
            "median", epsilon=1.0, delta=1e-5, local_sensitivity=0.5, bounds=(0, 1)
        ),
        lambda m, rng: m.release(_frame()["a"], rng=rng),
    ),
}


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def test_every_concrete_mechanism_is_covered():
    for name in mechanism_names(auto=False):  # registered mechanisms load on first use
        load(mechanism_spec(name).target)
    concrete = {c.__name__ for c in _all_subclasses(Mechanism) if not inspect.isabstract(c)}
    assert concrete == set(MECHANISMS), concrete ^ set(MECHANISMS)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_mechanism_shape(name):
    """``.guarantee`` before any data; the released object carries the same guarantee."""
    build, release = MECHANISMS[name]
    mech = build()
    assert isinstance(mech, Mechanism)
    before = mech.guarantee
    assert isinstance(before, Guarantee)
    out = release(mech, pv.make_rng(1))
    assert isinstance(out.guarantee, Guarantee)
    assert out.guarantee.to_dict() == before.to_dict()
    for eps in (0.5, 1.0, 4.0):
        assert float(out.guarantee.delta(eps)) == float(before.delta(eps))


#: (build from delta, epsilon of the guarantee, deltas to try)
DELTA_CASES = {
    "zil": (
        lambda d: pv.ZILMechanism.calibrate(
            epsilon=1.0, delta=d, zero_prob=0.01, bounds=[(0, 1)] * 3
        ),
        1.0,
        (0.02, 0.05, 0.2),
    ),
    "examples": (
        lambda d: pv.ExampleMechanism(epsilon_x=1.0, epsilon_y=1.0, delta=d, bounds=(0, 1)),
        2.0,
        (1e-5, 0.05, 0.2),
    ),
    "gaussian": (
        lambda d: pv.GaussianMechanism(epsilon=1.0, delta=d, sensitivity=1.0),
        1.0,
        (1e-5, 0.05, 0.2),
    ),
    "smooth": (
        lambda d: pv.SmoothSensitivity("median", epsilon=1.0, delta=d, bounds=(0, 1)),
        1.0,
        (1e-5, 0.05, 0.2),
    ),
    "ptr_median": (
        lambda d: pv.PTRMedian(
            "median", epsilon=1.0, delta=d, local_sensitivity=0.5, bounds=(0, 1)
        ),
        1.0,
        (1e-5, 0.05, 0.2),
    ),
    "eptr": (
        lambda d: pv.EPTR(
            estimator=np.mean,
            safety_lower_bound=lambda x: 0.0,
            local_sensitivity=0.1,
            epsilon=1.0,
            delta=d,
        ),
        1.0,
        (1e-5, 0.05, 0.2),
    ),
}


@pytest.mark.parametrize("case", sorted(DELTA_CASES))
def test_delta_is_the_dp_delta_of_the_guarantee(case):
    """Wherever a mechanism takes ``delta``, it is the delta of its (epsilon, delta)
    guarantee at the mechanism's epsilon."""
    build, eps, deltas = DELTA_CASES[case]
    for d in deltas:
        # at most delta; the lattice Gaussian's integer variance lands a hair below it
        assert 0.9 * d <= float(build(d).guarantee.delta(eps)) <= d * (1 + 1e-9)


def test_every_release_object_has_a_guarantee():
    for name, (build, release) in MECHANISMS.items():
        out = release(build(), pv.make_rng(2))
        assert hasattr(out, "guarantee"), name
    stat = pv.private_median(_frame()["a"], epsilon=1.0, bounds=(0, 1), rng=3)
    assert isinstance(stat, float) and isinstance(stat.guarantee, Guarantee)
