"""The batched kernels (learn/batched/) and the estimators are one code path (paper 000)."""

import warnings

import numpy as np
import pytest
from scipy import special

import privest as pv
from privest.learn.batched import BatchedObjective, corrected_newton, newton_box
from privest.learn.design import analysis_data
from privest.learn.estimators import DRLogisticRegression
from privest.learn.losses import LogisticLoss
from privest.learn.objective import CorrectedObjective


@pytest.fixture(scope="module")
def release():
    rng = np.random.default_rng(5)
    n, p = 3000, 3
    x = np.clip(rng.normal(size=(n, p)), -1, 1)
    y = (rng.random(n) < special.expit(0.3 + x.sum(axis=1))).astype(float)
    rel = pv.ZILMechanism(lam=0.3, zero_prob=0.25, bounds=[(-1, 1)] * p).release(
        x, rng=pv.make_rng(2)
    )
    return rel, y


@pytest.mark.parametrize("method", ["naive", "sl", "sdr", "dr"])
@pytest.mark.parametrize("intercept", [False, True])
def test_estimator_equals_a_batch_of_one(release, method, intercept):
    """DRLogisticRegression.fit and corrected_newton on a batch of one (the tables' path)
    give the same estimate."""
    rel, y = release
    est = DRLogisticRegression(method=method, fit_intercept=intercept, inference="none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coef = est.fit(rel, y).coef_
    loss = LogisticLoss(fit_intercept=intercept)
    noise_var = (0.3 * 2.0) ** 2
    designs: dict = {}

    def problem(m):
        return BatchedObjective.from_copies(
            loss, m, rel.x1[None], rel.x2[None], y[None], 0.25, noise_var, designs
        )

    p = rel.d + intercept
    fits, _ = corrected_newton(problem, [method], np.zeros((1, p)), -10.0, 10.0)
    assert np.max(np.abs(fits[method][0][0] - coef)) <= 1e-10


@pytest.mark.parametrize("method", ["naive", "sl", "sdr", "dr"])
def test_batched_objective_matches_the_corrected_objective(release, method):
    """Values, gradients and Hessians of BatchedObjective equal CorrectedObjective's."""
    rel, y = release
    loss = LogisticLoss(fit_intercept=True)
    obj = CorrectedObjective(loss, analysis_data(rel, y, None), method)
    prob = BatchedObjective.from_objective(obj)
    theta = np.array([0.2, -0.5, 0.8, 1.1])
    f, g, h = prob.derivs(theta[None])
    assert f[0] == pytest.approx(obj.value(theta), rel=1e-12)
    assert np.allclose(g[0], obj.grad(theta), rtol=1e-10, atol=1e-13)
    assert np.allclose(h[0], obj.hess(theta), rtol=1e-10, atol=1e-13)
    assert prob.value(theta[None])[0] == pytest.approx(obj.value(theta), rel=1e-12)


def test_newton_box_takes_a_box_per_coordinate(release):
    rel, y = release
    obj = CorrectedObjective(LogisticLoss(), analysis_data(rel, y, None), "naive")
    prob = BatchedObjective.from_objective(obj)
    lo, hi = np.array([-10.0, 0.0, -10.0]), np.array([10.0, 0.5, 10.0])
    theta, _, iters = newton_box(prob, np.zeros((1, 3)), lo, hi)
    assert theta[0, 1] == pytest.approx(0.5) and iters[0] < 100


def test_quantile_estimator_runs_the_table3_kernels_with_r_1():
    """DRQuantileRegressor (naive and DR median) = l1_ipm / median_dr_fit on a batch of one
    (Table 3 runs median_dr_fit from the naive fit on R replicates)."""
    from privest.learn.batched import Design, median_dr_fit, smoothed_dr_start
    from privest.learn.estimators import DRQuantileRegressor
    from privest.learn.losses import QuantileRegressionLoss
    from privest.learn.solvers import naive_l1

    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (1500, 3))
    y = 0.5 + x @ np.array([1.0, -1.0, 2.0]) + rng.normal(size=1500)
    rel = pv.ZILMechanism(lam=0.25, zero_prob=0.2, bounds=[(-1, 1)] * 3).release(
        x, rng=pv.make_rng(3)
    )
    loss = QuantileRegressionLoss()
    d1, d2 = (Design.from_rows(loss.design(v)) for v in (rel.x1, rel.x2))
    nai, _ = naive_l1(loss, d1, y[None], 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est_nai = DRQuantileRegressor(method="naive", inference="none").fit(rel, y)
        est_dr = DRQuantileRegressor(method="dr", inference="none").fit(rel, y)
    assert np.max(np.abs(est_nai.coef_ - nai[0])) <= 1e-10
    starts = np.vstack([nai, smoothed_dr_start(d1, d2, y[None], 0.2, nai, 10.0)])
    two = np.zeros(2, dtype=np.intp)
    theta, fval, _, _ = median_dr_fit(d1[two], d2[two], y[None][two], 0.2, starts, 10.0)
    assert np.max(np.abs(est_dr.coef_ - theta[np.argmin(fval)])) <= 1e-10


def test_the_design_cache_never_mixes_up_temporary_copies(release):
    """Designs are cached by id of the copy; a freed temporary's id can be reused by the next
    array, so an entry counts only for the very array it was made from (a mix-up fitted X1's
    design in X2's place)."""
    from privest.learn.batched import Design

    rel, y = release
    loss = LogisticLoss()
    x1, x2 = rel.x1[None], rel.x2[None]
    stale = {id(x2): (rel.x1[None], Design.from_features(x1, False))}  # a reused id
    theta = np.full((1, 3), 0.4)
    got = BatchedObjective.from_copies(loss, "sl", x1, x2, y[None], 0.25, 0.36, stale)
    fresh = BatchedObjective.from_copies(loss, "sl", x1, x2, y[None], 0.25, 0.36)
    assert got.value(theta)[0] == fresh.value(theta)[0]


def test_numba_loads_only_with_the_first_median_fit():
    """Importing the estimators does not import numba (0.4 s); the first DC simplex fit
    does (control: the same check after a fit sees it)."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from privest.learn.estimators import DRQuantileRegressor\n"
        "from privest.learn.batched import Design, dc_simplex_dr\n"
        "print('numba' in sys.modules)\n"
        "rng = np.random.default_rng(0)\n"
        "x = rng.normal(size=(1, 40, 2)); y = x.sum(axis=2)\n"
        "d = Design.from_features(x, intercept=True)\n"
        "dc_simplex_dr(d, d, y, 0.2, np.zeros((1, 3)), 5.0)\n"
        "print('numba' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("locators", ["ZipCacheLocator", ""])
def test_median_kernel_without_a_numba_cache_warns_and_still_fits(locators):
    """No cache location for numba (here: only the zip-file locator allowed): the kernel
    warns that it compiles in every process, and fits; with numba's default locators
    (control) it neither warns nor differs."""
    import os
    import subprocess
    import sys

    code = (
        "import warnings, numpy as np\n"
        "from privest.errors import NoCompileCacheWarning as W\n"
        "warnings.simplefilter('error', W)\n"
        "from privest.learn.batched import Design, dc_simplex_dr, l1_ipm\n"
        "try:\n"
        "    from privest.learn.batched import simplex_kernel\n"
        "except W as w:\n"
        "    print('warned:', 'NUMBA_CACHE_DIR' in str(w))\n"
        "    warnings.simplefilter('ignore', W)\n"
        "rng = np.random.default_rng(0)\n"
        "x = rng.normal(size=(1, 60, 2)); y = x.sum(axis=2) + rng.normal(size=(1, 60))\n"
        "d = Design.from_features(x, intercept=True)\n"
        "nai, _ = l1_ipm(d, y)\n"
        "theta, f, steps, ok = dc_simplex_dr(d, d, y, 0.2, nai, 5.0)\n"
        "print('ok:', bool(ok.all()), np.round(theta, 6).tolist())\n"
    )
    env = {**os.environ, "NUMBA_CACHE_LOCATOR_CLASSES": locators}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    lines = run.stdout.splitlines()
    assert lines[-1].startswith("ok: True")
    assert (lines[0] == "warned: True") is (locators != "")
