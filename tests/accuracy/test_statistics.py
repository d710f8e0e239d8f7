"""Predicted accuracy of the statistic mechanisms against simulation (docs/accuracy.md).

Every check compares a predicted probability of exceeding a value, or a predicted mean
squared error, with its Monte Carlo estimate, within 4 combined Monte Carlo standard
errors (the prediction's own, for the averaged instance-adaptive laws, plus the
simulation's); each has a negative control that a wrong prediction fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import privest as pv
from privest.accuracy import ReferenceData, epsilon_for_statistic
from privest.accuracy import predict_statistic as predict_default
from privest.errors import ValidationError
from privest.models.statistics import statistic_mechanism


def predict_statistic(*args, inference="none", **kwargs):
    """The prediction for the mechanism at the whole epsilon (``inference="none"``), which
    these tests compare with the mechanism's own releases."""
    return predict_default(*args, inference=inference, **kwargs)


Z = 4.0


def _agree(pred: float, pred_se: float, sim: np.ndarray) -> bool:
    """Whether the mean of ``sim`` (independent draws) agrees with ``pred`` within Z
    combined standard errors."""
    se = math.hypot(pred_se, float(np.std(sim, ddof=1)) / math.sqrt(sim.size))
    return abs(float(np.mean(sim)) - pred) <= Z * max(se, 1e-12)


@pytest.mark.parametrize(("statistic", "n"), [("mean", 500), ("sum", 500), ("count", 800)])
def test_data_independent_noise_is_predicted_exactly(statistic, n):
    """Laplace mean and sum, discrete Laplace count: the predicted exceedance of the
    half-width and the predicted MSE match releases drawn by the mechanism's sampler."""
    rng = np.random.default_rng(1)
    bounds = None if statistic == "count" else (0.0, 10.0)
    x = (rng.random(n) < 0.4).astype(float) if statistic == "count" else rng.uniform(3, 7, n)
    acc = predict_statistic(statistic, epsilon=0.7, bounds=bounds, n=n)
    assert acc.assumption == ""  # exact from the public inputs
    mech = statistic_mechanism(statistic, epsilon=0.7, bounds=bounds)
    assert acc.mechanism == mech.name
    law = mech.law(x)
    err = np.abs(np.asarray(law.sample(20_000, rng)) - law.value)
    p = acc.error_sf(acc.half_width)
    assert p <= acc.alpha + 1e-12
    assert _agree(p, 0.0, (err > acc.half_width).astype(float))
    assert _agree(acc.se**2, 0.0, err**2)
    # negative control: the noise of twice the epsilon is refused by the same check
    wrong = predict_statistic(statistic, epsilon=1.4, bounds=bounds, n=n)
    assert not _agree(wrong.error_sf(wrong.half_width), 0.0, (err > wrong.half_width) * 1.0)


def _simulate(mech_name, n, eps, reference, resolution, reps, seed):
    """|release - statistic| on ``reps`` data sets drawn from the reference shape (fresh
    seeds), one release each by the mechanism's sampler."""
    rng = np.random.default_rng(seed)
    mech = statistic_mechanism(
        "median", epsilon=eps, bounds=(0, 100), mechanism=mech_name, resolution=resolution
    )
    fresh = ReferenceData(reference.shape, reference.mean, reference.sd, draws=reps, seed=seed)
    out = []
    for x in fresh.samples(n, (0.0, 100.0), resolution):
        law = mech.law(x)
        out.append(abs(float(law.sample(None, rng)) - law.value))
    return np.array(out)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mechanism", "resolution", "n", "eps"),
    [("piecewise_laplace", None, 1000, 1.0), ("permute_and_flip", 1.0, 2000, 0.2)],
)
def test_instance_adaptive_prediction_matches_data_drawn_from_the_shape(
    mechanism, resolution, n, eps
):
    ref = ReferenceData("normal", sd=12.0, draws=100, seed=11)
    acc = predict_statistic(
        "median",
        epsilon=eps,
        bounds=(0, 100),
        n=n,
        mechanism=mechanism,
        resolution=resolution,
        reference=ref,
    )
    assert "normal" in acc.assumption and acc.mechanism == mechanism
    err = _simulate(mechanism, n, eps, ref, resolution, 800, seed=99)
    laws = acc.law.laws
    # just above the half-width and its half (on a lattice, never exactly on an atom)
    for a in (acc.half_width * (1 + 1e-9), 0.5 * acc.half_width + 1e-3):
        parts = np.array([float(law.error_sf(a)) for law in laws])
        assert _agree(parts.mean(), parts.std(ddof=1) / math.sqrt(parts.size), err > a)
    mses = np.array([law.error_mse() for law in laws])
    assert _agree(mses.mean(), mses.std(ddof=1) / math.sqrt(mses.size), err**2)
    # negative control: the prediction for a four times wider spread is refused
    wide = predict_statistic(
        "median",
        epsilon=eps,
        bounds=(0, 100),
        n=n,
        mechanism=mechanism,
        resolution=resolution,
        reference=ReferenceData("normal", sd=48.0, draws=50),
    )
    assert not _agree(wide.se**2, 0.0, err**2)


def test_range_of_n_gives_the_worst():
    one = predict_statistic("mean", epsilon=1.0, bounds=(0, 1), n=100)
    both = predict_statistic("mean", epsilon=1.0, bounds=(0, 1), n=(100, 10_000))
    assert both.half_width == pytest.approx(one.half_width)
    assert both.n == (100, 10_000) and "worst over n" in both.assumption
    # auto: permute-and-flip on a declared coarse lattice at every n (n is not read)
    small = predict_statistic("median", epsilon=1.0, bounds=(0, 100), n=500, resolution=1.0)
    large = predict_statistic("median", epsilon=1.0, bounds=(0, 100), n=5000, resolution=1.0)
    assert (small.mechanism, large.mechanism) == ("permute_and_flip", "permute_and_flip")
    assert large.half_width < small.half_width


def test_inverse_epsilon_meets_the_target_and_no_less_would():
    target = 0.05
    eps = epsilon_for_statistic("mean", target, bounds=(0, 10), n=2000, inference="none")
    at = predict_statistic("mean", epsilon=eps, bounds=(0, 10), n=2000)
    below = predict_statistic("mean", epsilon=eps * 0.99, bounds=(0, 10), n=2000)
    assert at.half_width <= target < below.half_width
    # Laplace: half-width = -log(alpha) (b - a) / (n eps) exactly
    assert eps == pytest.approx(-math.log(0.05) * 10 / (2000 * target), rel=2e-3)
    with pytest.raises(ValidationError, match="not reachable"):
        epsilon_for_statistic("sum", 1e-9, bounds=(0, 10), n=10)


def test_inputs_are_checked():
    with pytest.raises(ValidationError, match="n: .*depends on the data"):
        predict_statistic("median", epsilon=1.0, bounds=(0, 1))
    with pytest.raises(ValidationError, match="range"):
        predict_statistic("mean", epsilon=1.0, bounds=(0, 1), n=(10, 5))
    with pytest.raises(ValidationError, match="shape"):
        predict_statistic("median", epsilon=1.0, bounds=(0, 1), n=10, reference="cauchy")
    with pytest.raises(ValidationError, match="unknown fields"):
        ReferenceData.of({"shape": "normal", "spread": 2})
    mech = pv.PiecewiseLaplace("median", epsilon=1.0, bounds=(0, 1))
    assert predict_statistic(mech, n=50).mechanism == "piecewise_laplace"


@pytest.mark.parametrize(
    ("statistic", "share", "resolution"),
    [("mean", 0.75, None), ("median", 0.3, None), ("median", 0.5, 1.0), ("count", 1.0, None)],
)
def test_the_default_predicts_the_point_of_a_release_with_inference(statistic, share, resolution):
    """private_* release the point with its share of epsilon by default (inference=
    "population"): the default prediction is that of the point's epsilon (a median on its
    own lattice releases no bound counts: 0.5)."""
    bounds = None if statistic == "count" else (0.0, 100.0)
    kw = dict(bounds=bounds, n=1000, resolution=resolution)
    default = predict_default(statistic, epsilon=1.0, **kw)
    point = predict_statistic(statistic, epsilon=share, inference="none", **kw)
    assert default.half_width == pytest.approx(point.half_width)
    if share < 1:  # control: the whole epsilon predicts a smaller error
        whole = predict_statistic(statistic, epsilon=1.0, inference="none", **kw)
        assert whole.half_width < default.half_width
