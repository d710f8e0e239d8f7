"""The sCL competitor of paper 000, Table 3 (docs/dr-estimation.md, "The sCL competitor"):
a Gaussian-smoothed check loss on X2 with the exact SL correction, batched over replicates."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from privest.learn.batched.design import Design, _take

__all__ = ["SCLProblem"]

_SQRT_2PI = math.sqrt(2.0 * math.pi)


class SCLProblem:
    """privest's reconstruction of Wang, Stefanski & Zhu (2012) on X2, tau-quantile regression.

    Per observation, with r = y - d'theta, d = (1, x2), beta = theta without the intercept:
    rho_h(r) - (lam^2 ||beta||^2 / 2) phi(r/h)/h, where rho_h(r) = r (tau - Phi(-r/h)) +
    h phi(r/h) is the check loss smoothed with a N(0, h^2) kernel (rho_h'' = phi(r/h)/h).
    The second term is the exact SL(lam^2 I) correction (X2 = X + SL(lam^2 I) noise).
    """

    def __init__(self, d2: Design, y: np.ndarray, lam: float, h: float, tau: float = 0.5):
        self.d2, self.y, self.lam, self.h, self.tau = d2, y, lam, h, tau
        self.n_reps, self.n = y.shape

    def subset(self, idx: np.ndarray) -> SCLProblem:
        return SCLProblem(self.d2[idx], self.y[idx], self.lam, self.h, self.tau)

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        z = (_take(self.y, idx) - self.d2.lin(theta, idx)) / self.h
        pdf = np.exp(-0.5 * z * z) / _SQRT_2PI
        q = (theta[:, 1:] ** 2).sum(axis=1)
        rho = self.h * (z * (self.tau - special.ndtr(-z)) + pdf)
        return rho.mean(axis=1) - self.lam**2 / 2.0 * q * (pdf / self.h).mean(axis=1)

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d2, h, n = self.d2, self.h, self.n
        z = (self.y - d2.lin(theta)) / h
        pdf = np.exp(-0.5 * z * z) / _SQRT_2PI
        q = (theta[:, 1:] ** 2).sum(axis=1)
        psi = self.tau - special.ndtr(-z)  # rho_h'(r)
        c = self.lam**2 / 2.0
        k = pdf / h  # rho_h''(r), the kernel of the correction
        k1 = -(z / h) * k  # k'(r)
        k2 = (z * z - 1.0) / (h * h) * k  # k''(r)
        mk = k.mean(axis=1)
        f = h * (z * psi + pdf).mean(axis=1) - c * q * mk
        pb = theta.copy()
        pb[:, 0] = 0.0  # P theta: the slopes only
        m1 = d2.xtv(k1) / n  # mean k'(r) d
        # dr/dtheta = -d: grad rho_h(r) = -psi d; grad q k(r) = 2 k P theta - q k'(r) d
        g = -d2.xtv(psi) / n - c * (2.0 * mk[:, None] * pb - q[:, None] * m1)
        pmat = np.eye(theta.shape[1])
        pmat[0, 0] = 0.0
        outer = pb[:, :, None] * m1[:, None, :]
        hs = d2.gram(k - c * q[:, None] * k2) / n
        hs = hs - c * (2.0 * mk[:, None, None] * pmat - 2.0 * (outer + outer.transpose(0, 2, 1)))
        return f, g, hs
