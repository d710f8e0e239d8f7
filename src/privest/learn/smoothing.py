"""Gaussian smoothing of check and hinge losses (paper 000, Secs. 4 and 7.3;
docs/scale-out.md, "Nonsmooth losses").

A kinked index loss is rho(z) = s z + j (z)_+ of the kink distance z = a(y) + b(y) u
(:meth:`~privest.learn.losses.index.IndexLoss.kink_line`, ``kink_slopes``). Convolved with
a Gaussian kernel of bandwidth h it becomes smooth,

    rho_h(z) = z (s + j Phi(z/h)) + j h phi(z/h),

(the check loss: r (tau - 1 + Phi(r/h)) + h phi(r/h); the hinge: z Phi(z/h) + h phi(z/h)),
with value, gradient and Hessian that are sums over records. Two solvers use it:

* in memory, a warm start for the DC algorithm (:mod:`privest.learn.solvers`);
* on an objective held as partitions (``in_memory`` false), the solver itself
  (:func:`smoothing_fit`): the corrected smoothed objective is minimised by the projected
  Newton solver on partition sums, h shrinking geometrically from s to s / n (s the scale
  of the kink distance at theta = 0: the response's standard deviation, 1 for hinge
  labels), each stage started where the previous one stopped; from several starts, the
  lowest exact objective (one more pass each) is kept. The result is the minimiser of the
  smoothed objective at the last bandwidth, not the vertex the in-memory LP finds; the
  measured gap is in docs/scale-out.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from privest.learn.batched.newton import newton_box
from privest.learn.inference import _kink_moments, moment_sd
from privest.learn.losses import Loss
from privest.learn.objective import CorrectedObjective, Objective

__all__ = ["bandwidths", "smoothed_kink", "smoothed_sums", "smoothing_fit"]

# the first bandwidth (a multiple of the kink distance's scale s), the shrink factor, and
# the last bandwidth s n^H_END
H_START, H_SHRINK, H_END = 1.0, 0.3, -1.0


def smoothed_kink(
    loss: Loss, y: np.ndarray, u: np.ndarray, h: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per record: rho_h(z(y, u)) and its first and second derivatives in u."""
    a, b = loss.kink_line(y)
    z = a + b * u
    s_lo, jump = loss.kink_slopes
    s = z / h
    cdf, pdf = special.ndtr(s), np.exp(-0.5 * s**2) / np.sqrt(2 * np.pi)
    slope = s_lo + jump * cdf
    return z * slope + jump * h * pdf, slope * b, (jump * pdf / h) * (b * b)


def smoothed_sums(obj: CorrectedObjective, theta: np.ndarray, h: float) -> dict[str, Any]:
    """Sums over ``obj``'s records of the smoothed corrected loss: value, gradient, Hessian
    (the penalty, per record and term, included)."""
    loss = obj.loss
    p, n = obj.p, obj.n
    f, g, hess = 0.0, np.zeros(p), np.zeros((p, p))
    for t in obj.terms:
        d = loss.design(t.x)
        val, d1, d2 = smoothed_kink(loss, loss.response(t.y, n), d @ theta, h)
        f += t.weight * float(np.sum(val))
        g += t.weight * (d1 @ d)
        hess += t.weight * (d.T * d2) @ d
    w = sum(t.weight for t in obj.terms)
    theta = np.asarray(theta, float)
    f += w * n * loss.penalty(theta)
    g += w * n * loss.penalty_grad(theta.copy())
    hess += w * n * loss.penalty_hess(p)
    return {"n": n, "f": f, "g": g, "h": hess}


def _exact_value(obj: CorrectedObjective, theta: np.ndarray) -> dict[str, Any]:
    return {"n": obj.n, "f": float(np.sum(obj.rows(theta)))}


class _Smoothed:
    """The smoothed objective at bandwidth h as a batch of one for :func:`newton_box`."""

    n_reps = 1

    def __init__(self, target: Objective, h: float) -> None:
        self.target, self.h = target, h
        self._cached: tuple[np.ndarray, tuple] | None = None

    def _derivs(self, theta: np.ndarray) -> tuple:
        if self._cached is None or not np.array_equal(self._cached[0], theta):
            s = self.target.reduce(smoothed_sums, theta, self.h)
            n = self.target.n
            h = s["h"] / n
            self._cached = (theta.copy(), (s["f"] / n, s["g"] / n, 0.5 * (h + h.T)))
        return self._cached[1]

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        return np.array([self._derivs(theta[0])[0]])

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f, g, h = self._derivs(theta[0])
        return np.array([f]), g[None], h[None]

    def subset(self, idx: np.ndarray) -> _Smoothed:
        return self


def bandwidths(scale: float, n: int) -> list[float]:
    """s, 0.3 s, 0.09 s, ... down to (and ending at) s / n."""
    h_min = scale * n**H_END
    hs = [H_START * scale]
    while hs[-1] * H_SHRINK > h_min:
        hs.append(hs[-1] * H_SHRINK)
    return [*hs, h_min] if hs[-1] > h_min else hs


def _continuation(target: Objective, start: np.ndarray, box: np.ndarray, hs: list[float]):
    theta, iters = start, 0
    for h in hs:
        fit = newton_box(_Smoothed(target, h), theta[None], box[:, 0], box[:, 1])
        theta, iters = fit[0][0], iters + int(fit[2][0])
    return theta, iters, bool(fit[2][0] < 100)


def smoothing_fit(
    obj: Objective, box: np.ndarray, starts: list[np.ndarray]
) -> tuple[np.ndarray, float, bool, int, str]:
    """Minimise ``obj`` (a check or hinge index loss) by smoothing continuation from each
    of ``starts``; the lowest exact objective is kept (the first on ties). Returns
    (theta, objective, converged, Newton iterations, a description of the solver)."""
    scale = moment_sd(obj.reduce(_kink_moments, np.zeros(obj.p)), obj.n) or 1.0
    hs = bandwidths(scale, obj.n)
    best: tuple | None = None
    for start in starts:
        theta, iters, ok = _continuation(obj, start, box, hs)
        value = obj.reduce(_exact_value, theta)["f"] / obj.n
        if best is None or value < best[1]:
            best = (theta, value, ok, iters)
    assert best is not None
    return (*best, f"smoothing continuation, {len(hs)} bandwidths to {hs[-1]:.3g}")
