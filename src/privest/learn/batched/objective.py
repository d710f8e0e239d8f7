"""Corrected objectives of a single-index loss over a stack of data sets (paper 000, Secs. 4-7).

:class:`BatchedObjective` is the :class:`~privest.learn.objective.CorrectedObjective` of an
:class:`~privest.learn.losses.IndexLoss` (naive, DR eq. (4.4), SL eq. (6.1), SDR eq. (6.2);
the terms come from :func:`~privest.learn.objective.corrected_terms`) for R data sets at
once, in the form :func:`~privest.learn.batched.newton.newton_box` needs: values, gradients
and Hessians of every replicate from a few BLAS calls. The loss's own ``phi_derivs`` gives
phi and its u-derivatives, so the batched path and the estimators evaluate the same
formulas. With D = [1, x] (or x), W the Laplacian weights embedded in R^p (0 at the
intercept), b = W theta and s = theta' W theta (:class:`~privest.learn.losses.IndexLoss`):

* plain term a l:  f = a mean phi,  g = a D' phi' / n,  H = a D' diag(phi'') D / n
* Laplacian term c Lap_w l:  f = c s mean phi'',  g = c (2 mean(phi'') b + s D' phi''' / n),
  H = c (2 mean(phi'') W + 2 (b m' + m b') + s D' diag(phi'''') D / n), m = D' phi''' / n.

Terms on the same copy (SL: l(X2) and Lap l(X2)) share one evaluation of u = D theta.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from privest.errors import ValidationError
from privest.learn.batched.design import Design, _take
from privest.learn.losses import IndexLoss
from privest.learn.objective import CorrectedObjective, Term, corrected_terms

__all__ = ["BatchedObjective"]


@dataclass
class _Group:
    """The terms on one copy: ``plain`` weight a of l, ``lap`` weight c of Lap_w l."""

    design: Design
    y: np.ndarray
    plain: float = 0.0
    lap: float = 0.0


class BatchedObjective:
    """R corrected objectives of one index loss; theta has shape (R, p)."""

    def __init__(self, loss: IndexLoss, groups: list[_Group], noise_var: np.ndarray) -> None:
        if loss.form != "index" or loss.penalised:
            raise ValidationError(
                f"loss: the batched objectives take an unpenalised index loss; got {loss!r}"
            )
        self.loss, self.groups = loss, groups
        self.n_reps, self.n = groups[0].y.shape
        w = np.asarray(noise_var, dtype=float)
        self.wp = np.concatenate([[0.0], w]) if loss.fit_intercept else w
        self._memo: tuple[np.ndarray, list[dict[int, np.ndarray]]] | None = None

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_terms(
        cls,
        loss: IndexLoss,
        terms: list[Term],
        noise_var: np.ndarray,
        design: Callable[[np.ndarray], Design],
        designs: dict[int, tuple[np.ndarray, Design]] | None = None,
    ) -> BatchedObjective:
        """Group ``terms`` by copy; ``design(x)`` makes the :class:`Design` of one copy.

        ``designs`` (optional) caches the designs by copy across objectives of the same
        data; it holds each copy with its design, so an id is never reused for another
        array while the cache lives."""
        cache = {} if designs is None else designs
        groups: dict[int, _Group] = {}
        for t in terms:
            key = id(t.x)
            if key not in cache or cache[key][0] is not t.x:
                cache[key] = (t.x, design(t.x))
            if key not in groups:
                groups[key] = _Group(cache[key][1], t.y)
            g = groups[key]
            if t.laplacian:
                g.lap += t.weight
            else:
                g.plain += t.weight
        return cls(loss, list(groups.values()), noise_var)

    @classmethod
    def from_objective(
        cls, obj: CorrectedObjective, designs: dict[int, tuple[np.ndarray, Design]] | None = None
    ) -> BatchedObjective:
        """The estimators' objective as a batch of one (R = 1)."""
        loss = obj.loss
        terms = [
            Term(t.weight, t.x, loss.response(t.y, t.x.shape[0])[None], t.laplacian)
            for t in obj.terms
        ]
        return cls.from_terms(
            loss,
            terms,
            obj.data.noise_var,
            lambda x: Design.from_rows(loss.design(x)),
            designs,
        )

    @classmethod
    def from_copies(
        cls,
        loss: IndexLoss,
        method: str,
        x1: np.ndarray,
        x2: np.ndarray | None,
        y: np.ndarray,
        zero_prob: float = 1.0,
        noise_var: np.ndarray | float = 0.0,
        designs: dict[int, tuple[np.ndarray, Design]] | None = None,
    ) -> BatchedObjective:
        """R data sets at once: copies ``x1``, ``x2`` (R, n, d), responses ``y`` (R, n),
        Laplacian weights ``noise_var`` (one per column, or one for all)."""
        d = x1.shape[-1]
        terms = corrected_terms(method, zero_prob, (x1, y), [(x2, y)])
        var = np.broadcast_to(np.asarray(noise_var, dtype=float), (d,))
        return cls.from_terms(
            loss, terms, var, lambda x: Design.from_features(x, loss.fit_intercept), designs
        )

    def subset(self, idx: np.ndarray) -> BatchedObjective:
        groups = [_Group(g.design[idx], g.y[idx], g.plain, g.lap) for g in self.groups]
        new = object.__new__(BatchedObjective)
        new.loss, new.groups, new.wp = self.loss, groups, self.wp
        new.n_reps, new.n, new._memo = len(idx), self.n, None
        return new

    # ----------------------------------------------------------------- evaluations
    @staticmethod
    def _orders(g: _Group, derivs: bool) -> tuple[int, ...]:
        out: set[int] = set()
        if g.plain:
            out |= {0, 1, 2} if derivs else {0}
        if g.lap:
            out |= {2, 3, 4} if derivs else {2}
        return tuple(sorted(out))

    def _evals(
        self, theta: np.ndarray, idx: np.ndarray | None, derivs: bool
    ) -> list[dict[int, np.ndarray]]:
        """phi^(k)(y, D theta) of each group, at every order :meth:`derivs` needs. A value of
        all replicates computes them too and keeps them for a :meth:`derivs` at the same
        theta (a line search's accepted point is the next Newton step's): one pass over each
        design and one sigmoid saved, the same numbers."""
        memo, self._memo = self._memo, None
        if idx is None and memo is not None and np.array_equal(memo[0], theta):
            out = memo[1]
        else:
            memo = None  # drop the previous point's arrays before making this one's
            out = []
            for g in self.groups:
                orders = self._orders(g, derivs or idx is None)
                u = g.design.lin(theta, idx)
                vals = self.loss.phi_derivs(_take(g.y, idx), u, orders)
                out.append(dict(zip(orders, vals, strict=True)))
        if idx is None and not derivs:
            self._memo = (theta.copy(), out)
        return out

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Mean corrected loss of each replicate (of replicates ``idx`` when given)."""
        s = (self.wp * theta * theta).sum(axis=1)
        f = np.zeros(len(theta))
        for g, vals in zip(self.groups, self._evals(theta, idx, False), strict=True):
            if g.plain:
                f += g.plain * vals[0].mean(axis=1)
            if g.lap:
                f += g.lap * s * vals[2].mean(axis=1)
        return f

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean corrected loss, gradient (R, p) and Hessian (R, p, p) of every replicate."""
        n, p = self.n, theta.shape[1]
        b = self.wp * theta
        s = (b * theta).sum(axis=1)
        f, grad, hess = np.zeros(len(theta)), np.zeros(theta.shape), np.zeros((len(theta), p, p))
        for g, v in zip(self.groups, self._evals(theta, None, True), strict=True):
            u = v[2]  # every group has phi'': its shape is u's
            gvec = np.zeros_like(u)
            hvec = np.zeros_like(u)
            if g.plain:
                f += g.plain * v[0].mean(axis=1)
                gvec += g.plain * v[1]
                hvec += g.plain * v[2]
            if g.lap:
                c, m2 = g.lap, v[2].mean(axis=1)
                m3 = g.design.xtv(v[3]) / n
                f += c * s * m2
                grad += c * 2.0 * m2[:, None] * b
                gvec += (c * s)[:, None] * v[3]
                hvec += (c * s)[:, None] * v[4]
                outer = b[:, :, None] * m3[:, None, :]
                hess += c * 2.0 * (outer + outer.transpose(0, 2, 1))
                hess += c * 2.0 * m2[:, None, None] * np.diag(self.wp)
            grad += g.design.xtv(gvec) / n
            hess += g.design.gram(hvec) / n
        return f, grad, hess
