"""The fused exponential step of :func:`sgd_replicated` equals the generic path.

One replication (R = 1) of the exponential loss takes the fused step; the same data stacked
twice (R = 2) takes the generic, vectorised path (paper 004, Alg. 1 and Sec. 5.2). Both
must give the same iterates up to rounding, for every method, with and without the public
intercept mask, the projection, averaging, several passes and a smaller last batch.
"""

import numpy as np
import pytest

from privest.learn.iwp_core import sgd_replicated
from privest.learn.iwp_losses import ExponentOverflowWarning


def _data(n=1_000, p=4, sigma=0.7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) + sigma * rng.standard_normal((n, p))
    y = np.where(rng.random(n) < 0.7, 1.0, -1.0) * np.sign(X[:, 0] + 1e-12)
    return X, y


def _both(X, y, **kw):
    one = sgd_replicated(X, y, **kw)  # R = 1: the fused step
    two = sgd_replicated(np.stack([X, X]), np.stack([y, y]), **kw)  # R = 2: generic path
    return one, two


@pytest.mark.parametrize("method", ["iwp", "naive", "oracle"])
@pytest.mark.parametrize("intercept", [False, True])
def test_fused_step_equals_the_generic_path(method, intercept):
    X, y = _data()
    noised = None
    if intercept:
        X, noised = np.hstack([X, np.ones((len(X), 1))]), np.r_[np.ones(4), 0.0]
    kw = dict(method=method, sigma2=0.49, epsilon_y=1.5, batch_size=96, learning_rate=0.5,
              alpha=0.3, theta_radius=0.3, n_passes=2, averaging="tail", noised=noised,
              drop_last=False, record_every=1)  # fmt: skip
    one, two = _both(X, y, **kw)
    assert one.history.shape == (2 * 11 + 1, 1, X.shape[1])  # 10 full batches + 1 smaller
    projected = np.linalg.norm(one.history[:, 0], axis=1)
    assert projected.max() == pytest.approx(0.3, rel=1e-12)  # the ball is reached
    for r in range(2):
        np.testing.assert_allclose(two.history[:, r], one.history[:, 0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(two.average[r], one.average[0], rtol=1e-12, atol=1e-15)
    # negative control: another epsilon_y changes the iterates far beyond the tolerance
    other = sgd_replicated(X, y, **{**kw, "epsilon_y": 3.0})
    if method == "iwp":
        assert not np.allclose(other.history, one.history, rtol=1e-6)


def test_overflow_falls_back_to_the_clipping_path():
    """A step that overflows leaves theta alone and is redone by the (warning) clipping path."""
    X, y = _data(n=400, sigma=3.0)
    kw = dict(sigma2=9.0, epsilon_y=1.0, batch_size=50, learning_rate=200.0, alpha=0.1,
              record_every=1)  # fmt: skip
    with pytest.warns(ExponentOverflowWarning):
        one = sgd_replicated(X, y, **kw)
    with pytest.warns(ExponentOverflowWarning):
        two = sgd_replicated(np.stack([X, X]), np.stack([y, y]), **kw)
    assert np.isfinite(one.history).all()
    np.testing.assert_allclose(two.history[:, 1], one.history[:, 0], rtol=1e-9)


@pytest.mark.parametrize("order", ["auto", 0, 1, 5])
@pytest.mark.parametrize("epsilon_y", [1.5, np.inf])
@pytest.mark.parametrize("intercept", [False, True])
def test_fused_logistic_step_equals_the_generic_path(order, epsilon_y, intercept):
    """The logistic loss's truncated series (App. D.5): the fused step of one replication
    gives the generic path's iterates up to rounding (every order, label noise or none,
    the public intercept mask, ridge, projection, a smaller last batch, two passes)."""
    X, y = _data()
    noised = None
    if intercept:
        X, noised = np.hstack([X, np.ones((len(X), 1))]), np.r_[np.ones(4), 0.0]
    kw = dict(method="iwp", loss="logistic", order=order, sigma2=0.49, epsilon_y=epsilon_y,
              batch_size=96, learning_rate=0.5, alpha=0.3, theta_radius=0.3 if intercept
              else None, n_passes=2, averaging="tail", noised=noised, drop_last=False,
              record_every=1)  # fmt: skip
    one, two = _both(X, y, **kw)
    assert one.history.shape == (2 * 11 + 1, 1, X.shape[1])
    assert np.abs(one.history).max() > 0.25  # the iterates moved
    for r in range(2):
        np.testing.assert_allclose(two.history[:, r], one.history[:, 0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(two.average[r], one.average[0], rtol=1e-12, atol=1e-15)
    # negative control: another truncation order changes the iterates beyond the tolerance
    other = sgd_replicated(X, y, **{**kw, "order": 2 if order in (0, 1) else 0})
    assert not np.allclose(other.history, one.history, rtol=1e-6)


def test_fused_logistic_step_is_taken_and_refuses_what_the_generic_path_refuses():
    """One replication of the corrected logistic fit takes the fused step; an order beyond
    the tabulated derivatives still raises (from the generic path)."""
    from privest.errors import ValidationError
    from privest.learn.losses import get_margin_loss

    f = get_margin_loss("logistic")
    settings = dict(w=1.5, sigma2=0.5, alpha=0.0, p=3, radius=None, noised=None)
    assert f.sgd_step(order=2, corrected=True, **settings) is not None
    assert f.sgd_step(order=2, corrected=False, **settings) is None  # naive, oracle: generic
    assert f.sgd_step(order=None, corrected=True, **settings) is None
    X, y = _data(n=200)
    with pytest.raises(ValidationError, match="order"):
        sgd_replicated(X, y, loss="logistic", order=6, sigma2=0.5, batch_size=50)
