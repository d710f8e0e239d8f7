"""Paper 000's claims for the DR estimator, as slow Monte Carlo tests (public API only).

* Thms 5.2-5.3: DR is consistent at the root-n rate, E||theta_n - theta0||^2 ~ 1 / n, also
  for a loss that is not smooth in x (the ReLU model of Sec. 7.1, setting S1 of Table 1).
* Thm 5.3: the sandwich intervals of the median regression (DRQuantileRegressor) and of
  the linear SVM (DRHingeClassifier) cover.

CI coverage of SL and SDR (and DR) for the linear model, and of DR for the ReLU, indicator,
|sin| and logistic models, is tested in tests/learn/test_estimators.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import optimize, special

import privest as pv
from privest.learn import relu_squared
from privest.learn.estimators import DRHingeClassifier, DRMEstimator, DRQuantileRegressor


def _slope(means: np.ndarray, ses: np.ndarray, ns) -> tuple[float, float]:
    """Least-squares slope of log mean vs log n, and its SE from the relative SEs."""
    x = np.log(ns) - np.log(ns).mean()
    slope = float(x @ np.log(means) / (x @ x))
    return slope, float(np.sqrt(np.sum((x / (x @ x)) ** 2 * (ses / means) ** 2)))


def _relu_errors(method: str, ns, reps: int) -> tuple[np.ndarray, np.ndarray]:
    theta0, lam, delta = 0.5, 0.94, 0.1  # setting S1 of Table 1 (Sec. 7.1)
    means, ses = [], []
    for i, n in enumerate(ns):
        errs = []
        for r in range(reps):
            seed = 10_000 * (i + 1) + r
            x = np.random.default_rng(seed).uniform(0, 1, (n, 1))
            rel = pv.ZILMechanism(lam=lam, zero_prob=delta, bounds=(0, 1)).release(
                x, rng=pv.make_rng(seed)
            )
            fit = DRMEstimator(loss=relu_squared(), method=method, inference="none").fit(rel)
            errs.append(float(np.sum((np.ravel(fit.coef_) - theta0) ** 2)))
        means.append(np.mean(errs))
        ses.append(np.std(errs, ddof=1) / math.sqrt(reps))
    return np.array(means), np.array(ses)


@pytest.mark.slow
def test_dr_error_falls_like_one_over_n_thm_5_2():
    ns, reps = (250, 1000, 4000), 60
    means, ses = _relu_errors("dr", ns, reps)
    slope, se = _slope(means, ses, ns)
    # band: 3 SE of the fitted slope (delta method from the replications), SE about 0.1
    assert abs(slope + 1.0) <= 3 * se, (slope, se, means)
    assert se < 0.2
    # negative control: the naive fit (noise ignored) is biased and stalls at a floor
    naive, naive_se = _relu_errors("naive", ns[::2], reps // 2)
    control, control_se = _slope(naive, naive_se, ns[::2])
    assert abs(control + 1.0) > 3 * max(se, control_se), (control, naive)


def _quantile_coverage(method: str, reps: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Coverage of the 95% and (negative control) 50% intervals over ``reps`` releases."""
    truth = np.array([0.5, 1.0, -0.5])
    hits, narrow = np.zeros(3), np.zeros(3)
    for r in range(reps):
        rng = np.random.default_rng(7000 + r)
        x = rng.uniform(-1, 1, (n, 2))
        y = truth[0] + x @ truth[1:] + rng.standard_normal(n)  # median = mean: theta0 = truth
        rel = pv.ZILMechanism(lam=0.25, zero_prob=0.2, bounds=[(-1, 1)] * 2).release(
            x, rng=pv.make_rng(8000 + r)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = DRQuantileRegressor(quantile=0.5, method=method).fit(rel, y)
        for rate, level in ((hits, 0.05), (narrow, 0.5)):
            ci = fit.results_.conf_int(alpha=level).to_numpy()
            rate += (ci[:, 0] <= truth) & (truth <= ci[:, 1])
    return hits / reps, narrow / reps


# releases per coverage test: binomial SE sqrt(0.95 * 0.05 / 480) = 1.0%, so the +-2% band of
# the issue is 2 SE (the seeds are fixed, so the test is deterministic; measured on other
# seeds: median regression 0.965 / 0.942 / 0.954, hinge 0.958 / 0.940 over 400 releases)
COVERAGE_RELEASES = 480
COVERAGE_BAND = 0.02


@pytest.mark.slow
def test_dr_median_regression_intervals_cover():
    """95% +- 2% per coefficient over 480 releases (~25 s of CPU: a release and its fit cost
    ~0.05 s). Negative control from the same fits: the 50% intervals fall outside the band."""
    rate, narrow = _quantile_coverage("dr", COVERAGE_RELEASES, 500)
    assert np.all(np.abs(rate - 0.95) <= COVERAGE_BAND), rate
    assert np.all(narrow < 0.95 - COVERAGE_BAND), narrow  # the band can fail


def _hinge_theta0() -> np.ndarray:
    """Minimiser of the population hinge risk E (1 - y (a + b x))_+ of the design below.

    x ~ U(-1, 1), P(y = 1 | x) = expit(3 x + 0.5): the risk is a 1-D integral (midpoint
    rule on 400,000 points; the kinks make the error O(h^2), far below the intervals).
    """
    xs = (np.arange(400_000) + 0.5) / 200_000 - 1.0
    p1 = special.expit(3 * xs + 0.5)

    def risk(t):
        f = t[0] + t[1] * xs
        return np.mean(p1 * np.maximum(0, 1 - f) + (1 - p1) * np.maximum(0, 1 + f))

    opts = {"xatol": 1e-10, "fatol": 1e-14, "maxiter": 5000}
    return optimize.minimize(risk, [0.3, 1.5], method="Nelder-Mead", options=opts).x


@pytest.mark.slow
def test_dr_hinge_intervals_cover():
    """95% +- 2% per coefficient (intercept, slope), n = 2000, 480 releases.

    One DR hinge fit (DC algorithm with HiGHS LP steps from several starts, and a kernel
    estimate of the bread) costs ~0.2 s of CPU at n = 2000, so the test takes ~100 s of CPU.
    At n = 1000 the slope's intervals covered 88-90% (100 releases): the kernel estimate of
    the hinge's bread needs more data than the median regression's.
    Negative control from the same fits: the 50% intervals must fall outside the band.
    """
    theta0 = _hinge_theta0()
    reps, n = COVERAGE_RELEASES, 2000
    hits, narrow = np.zeros(2), np.zeros(2)
    for r in range(reps):
        rng = np.random.default_rng(r)
        x = rng.uniform(-1, 1, (n, 1))
        y = np.where(rng.random(n) < special.expit(3 * x[:, 0] + 0.5), 1, -1)
        rel = pv.ZILMechanism(lam=0.25, zero_prob=0.2, bounds=[(-1, 1)]).release(
            x, rng=pv.make_rng(100 + r)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = DRHingeClassifier(method="dr").fit(rel, y)
        for rate, level in ((hits, 0.05), (narrow, 0.5)):
            ci = fit.results_.conf_int(alpha=level).to_numpy()
            rate += (ci[:, 0] <= theta0) & (theta0 <= ci[:, 1])
    assert np.all(np.abs(hits / reps - 0.95) <= COVERAGE_BAND), (hits / reps, theta0)
    assert np.all(narrow / reps < 0.95 - COVERAGE_BAND), narrow / reps  # the band can fail
