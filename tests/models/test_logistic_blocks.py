"""The speed paths of the private logistic regression compute what the plain products did:
the column-major design (``design_rows``), the blocked Gram of the multiclass standard errors
(``_class_gram``) and the batched noise of ``noisy_gd_logistic`` (docs/central-models.md,
"BLAS threads and speed")."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, softmax

import privest as pv
import privest.models.logistic as logistic_module
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.logistic import noisy_gd_logistic
from privest.models.logistic_fit import GRADIENT_BLOCK, design_rows
from privest.models.logistic_inference import _class_gram, noisy_hessian, noisy_score_gram

N = 2 * GRADIENT_BLOCK + 123  # two full blocks and a short one


def _design(n: int = N, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-1, 1, (n, 4)), np.ones(n)])


def test_design_rows_are_the_scaled_features_column_major():
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 5, (N, 3))
    centre, scale = np.array([1.0, 0.5, -2.0]), np.array([4.0, 3.0, 0.75])
    Xc = design_rows(X, centre, scale, 1.0)
    assert Xc.flags.f_contiguous and Xc.shape == (N, 4)
    assert np.array_equal(Xc, np.column_stack([(X - centre) / scale, np.ones(N)]))
    assert np.array_equal(design_rows(X, centre, scale, None), (X - centre) / scale)
    # control: a design that skipped the division is seen
    assert not np.array_equal(Xc[:, :3], X - centre)


def test_design_rows_check_and_clip_the_box_in_their_pass():
    """With a box, ``design_rows`` refuses a value outside it (here only in the short last
    block) or, with ``clip``, builds the design of the clipped features; within the box the
    check moves nothing."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (N, 3))
    X[-5, 1] = 1.5  # in the last, short block
    box = np.array([[-1.0, 1.0], [-1.0, 1.0], [-2.0, 2.0]])
    centre, scale = np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 2.0])
    with pytest.raises(pv.BoundsError):
        design_rows(X, centre, scale, 1.0, box)
    clipped = np.clip(X, box[:, 0], box[:, 1])
    want = design_rows(clipped, centre, scale, 1.0)
    assert np.array_equal(design_rows(X, centre, scale, 1.0, box, True), want)
    assert np.array_equal(design_rows(clipped, centre, scale, 1.0, box), want)
    # control: the unclipped design differs where the value was outside
    assert not np.array_equal(design_rows(X, centre, scale, 1.0), want)


@pytest.mark.parametrize("method", ["noisy_mm", "noisy_gd"])
def test_clipped_fit_is_the_fit_of_the_clipped_features(method):
    """``clip=True`` releases what the fit of the clipped features releases (noisy_mm clips in
    its design pass, noisy_gd before it); without ``clip`` the fit refuses them."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1.3, 1.3, (N, 4))
    y = rng.integers(0, 2, N)
    kw = {"epsilon": 2.0, "bounds": (-1, 1), "method": method, "inference": "none"}
    got = pv.PrivateLogisticRegression(clip=True, random_state=0, **kw).fit(X, y)
    ref = pv.PrivateLogisticRegression(random_state=0, **kw).fit(np.clip(X, -1, 1), y)
    assert np.array_equal(got.coef_, ref.coef_)
    assert np.array_equal(got.intercept_, ref.intercept_)
    with pytest.raises(pv.BoundsError):
        pv.PrivateLogisticRegression(random_state=0, **kw).fit(X, y)
    # control: the unclipped features (a wider box) give another fit
    wide = pv.PrivateLogisticRegression(random_state=0, **{**kw, "bounds": (-1.3, 1.3)})
    assert not np.array_equal(wide.fit(X, y).coef_, ref.coef_)


def _fit(X, y, seed, **kw):
    """Coefficients, intercepts and the sandwich's params and standard errors (n epsilon is
    above both classes' thresholds, so the Hessian and score releases run)."""
    model = pv.PrivateLogisticRegression(
        epsilon=2.0, delta=1e-6, bounds=(-1, 1), random_state=seed, inference="sandwich", **kw
    )
    model.fit(X, y)
    bse = np.asarray(model.results_.bse, dtype=float)
    assert np.all(np.isfinite(bse))
    return np.concatenate([model.coef_.ravel(), model.intercept_, model.results_.params, bse])


@pytest.mark.parametrize("k", [2, 3])
def test_column_major_design_releases_what_row_major_did(monkeypatch, k):
    """The fit (descent, Gram, Hessian, scores) on the column-major design against the same
    fit on a row-major copy: the same released values under a seed (the sums differ by
    rounding only, far below the noise lattice's step)."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (N, 4))
    y = rng.integers(0, k, N)
    kw = {"classes": list(range(k)), "cov_type": "HC0"}
    got = _fit(X, y, 0, **kw)
    row_major = design_rows  # the module's helper, copied to C order

    monkeypatch.setattr(
        logistic_module, "design_rows", lambda *a: np.ascontiguousarray(row_major(*a))
    )
    assert np.array_equal(got, _fit(X, y, 0, **kw))
    assert not np.array_equal(got, _fit(X, y, 1, **kw))  # control: another seed differs


def _whole_class_gram(Xc, W):
    """The former whole-matrix form: one n x d weighted copy per pair of classes."""
    k, d = W.shape[1], Xc.shape[1]
    S = np.empty((k * d, k * d))
    for a in range(k):
        for b in range(k):
            S[a * d : (a + 1) * d, b * d : (b + 1) * d] = Xc.T @ (Xc * W[:, a, b, None])
    return S


def _hessian_weights(Xc, theta):
    q = softmax(Xc @ theta, axis=1)[:, 1:]
    return q[:, :, None] * (np.eye(q.shape[1]) - q[:, None, :])


@pytest.mark.parametrize("what", ["hessian", "scores"])
def test_blocked_class_gram_sums_to_the_whole_product(what):
    Xc = _design()
    rng = np.random.default_rng(3)
    theta = rng.normal(size=(5, 3))
    Y = np.eye(3)[rng.integers(0, 3, N)]

    def weights(rows, sl):
        if what == "hessian":
            return _hessian_weights(rows, theta)
        R = Y[sl, 1:] - softmax(rows @ theta, axis=1)[:, 1:]
        return R[:, :, None] * R[:, None, :]

    whole = np.concatenate(
        [weights(Xc[i : i + 1000], slice(i, i + 1000)) for i in range(0, N, 1000)]
    )
    want = _whole_class_gram(Xc, whole)
    bound = 4.0 * N * 2.0**-52 * N  # rounding only: |weights| <= 1, |x| <= 1
    assert np.all(np.abs(_class_gram(Xc, weights, 2) - want) <= bound)
    # control: a sum that skips the last block fails the comparison
    short = _class_gram(Xc[: 2 * GRADIENT_BLOCK], weights, 2)
    assert not np.all(np.abs(short - want) <= bound)


def test_released_multiclass_matrices_use_the_blocked_gram():
    """noisy_hessian and noisy_score_gram (K = 3) at a huge rho release the whole-matrix sums
    to within their noise; a wrong class (the control) is far outside it."""
    Xc = _design()
    rng = np.random.default_rng(4)
    theta = rng.normal(size=(5, 3))
    Y = np.eye(3)[rng.integers(0, 3, N)]
    H, sd = noisy_hessian(Xc, theta, np.sqrt(5.0), 1e12, rng)
    want = _whole_class_gram(Xc, _hessian_weights(Xc, theta))
    assert np.all(np.abs(H - want) <= 8 * sd)
    R = Y[:, 1:] - softmax(Xc @ theta, axis=1)[:, 1:]
    K, sd = noisy_score_gram(Xc, Y, theta, np.sqrt(5.0), 1e12, rng)
    assert np.all(np.abs(K - _whole_class_gram(Xc, R[:, :, None] * R[:, None, :])) <= 8 * sd)
    wrong = _whole_class_gram(Xc, _hessian_weights(Xc, theta[:, ::-1]))
    assert not np.all(np.abs(H - wrong) <= 8 * sd)


def _step_by_step(Xc, y01, x_radius, rho, n_steps, step, l2, rng, noise):
    """The former loop: the continuous bootstrap noise drawn at each step."""
    n, d = Xc.shape
    slack = 1.0 + 4.0 * (n + d) * 2.0**-52
    sigma = lattice_gaussian_zcdp(rho / n_steps, 2.0 * x_radius * slack, d).sigma
    theta = np.zeros((d, *y01.shape[1:]))
    avg = np.zeros_like(theta)
    for t in range(n_steps):
        grad = Xc.T @ (expit(Xc @ theta) - y01)
        noisy = grad + noise * sigma * rng.standard_normal(grad.shape)
        theta = theta - step * (noisy / n + l2 * theta)
        if t >= n_steps // 2:
            avg += theta
    return avg / (n_steps - n_steps // 2)


@pytest.mark.parametrize("noise", [0.0, 1.0])
def test_batched_bootstrap_noise_is_the_step_by_step_stream(noise):
    Xc = _design(3000)
    rng = np.random.default_rng(5)
    Y = (rng.uniform(size=(3000, 4)) < 0.4).astype(float)
    args = (Xc, Y, np.sqrt(5.0), 0.5, 12, 0.8, 1e-3)
    got = noisy_gd_logistic(*args, np.random.default_rng(6), noise)
    assert np.array_equal(got, _step_by_step(*args, np.random.default_rng(6), noise))
    if noise:  # control: another generator's noise differs
        assert not np.array_equal(got, _step_by_step(*args, np.random.default_rng(7), noise))
