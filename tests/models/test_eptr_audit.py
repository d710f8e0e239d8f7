"""Empirical audit of the real ``EPTRLinearRegression.fit`` path (privest.audit.auditor).

The exact checks of test_eptr_salbo.py verify the formulas; this one runs the estimator itself
on an adversarial neighbouring pair (one record replaced by x' = R_x, y' = -R_y, a high-leverage
point) with c0 as large as a near-certain release allows, so that
||theta_hat(X) - theta_hat(X')|| is about 0.14 alpha.
The auditor tests the released value (the no-release atom mapped to -1e9) with simultaneous
Clopper-Pearson bounds at 95% confidence. Negative control: the same estimator with alpha
shrunk 50-fold (a wrong safety margin) is caught.
"""

import numpy as np

import privest.models.eptr_ols as ols_module
from privest.accounting.base import ApproxDP
from privest.audit.auditor import audit
from privest.models.eptr_ols import EPTRLinearRegression

EPS, DELTA, RX, RT = 2.0, 0.01, 2.0, 1.0


def _pair():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((200, 1))
    y = 0.5 * X[:, 0] + 0.5 * rng.standard_normal(200)
    Xp, yp = X.copy(), y.copy()
    Xp[0, 0], yp[0] = RX, -RX * RT
    return (X, y), (Xp, yp)


def _samplers(c0):
    (X, y), (Xp, yp) = _pair()

    def make(data):
        def sample(n, rng):
            out = np.empty(n)
            model = EPTRLinearRegression(
                epsilon=EPS,
                delta=DELTA,
                x_radius=RX,
                theta_radius=RT,
                c0=c0,
                random_state=rng,
                clip=True,
            )
            for i in range(n):
                model.fit(*data)
                out[i] = -model.coef_[0] if model.released_ else -1e9
            return out

        return sample

    return make((X, y)), make((Xp, yp))


def _c0_near_boundary():
    (X, y), (Xp, yp) = _pair()
    m = EPTRLinearRegression(
        epsilon=EPS, delta=DELTA, x_radius=RX, theta_radius=RT, c0=0.5, clip=True
    )
    lam = min(m.explain(X, y)["lambda_min"], m.explain(Xp, yp)["lambda_min"])
    return (lam - 2 * RX**2 * 13.0) / 200  # gamma ~ 12 > 2M = 11.2: nearly always released


def test_distance_is_a_sizeable_fraction_of_alpha():
    c0 = _c0_near_boundary()
    (X, y), (Xp, yp) = _pair()
    m = EPTRLinearRegression(
        epsilon=EPS, delta=DELTA, x_radius=RX, theta_radius=RT, c0=c0, clip=True
    )
    a, b = m.explain(X, y), m.explain(Xp, yp)
    dist = abs(a["estimate"][0] - b["estimate"][0])
    assert 0.1 * a["alpha"] < dist <= a["alpha"]
    assert min(a["release_probability"], b["release_probability"]) > 0.9


def test_fit_meets_its_guarantee_and_a_wrong_margin_is_caught(monkeypatch):
    c0 = _c0_near_boundary()
    sample_p, sample_q = _samplers(c0)
    res = audit(sample_p, sample_q, ApproxDP(EPS, DELTA), n=4000, rng=1)
    assert not res.contradicts, res.summary()
    real_alpha = ols_module.ols_local_sensitivity
    monkeypatch.setattr(ols_module, "ols_local_sensitivity", lambda *a: real_alpha(*a) / 50)
    sample_p, sample_q = _samplers(c0)
    bad = audit(sample_p, sample_q, ApproxDP(EPS, DELTA), n=4000, rng=2)
    assert bad.contradicts, bad.summary()
