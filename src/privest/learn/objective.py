"""Corrected-loss objectives on a ZIL release (paper 000, Sections 4 and 6).

For a loss l(x, theta) and the released copies X1, X2, with delta the zero proportion
(``zero_prob``) and the noise ``X2 - x ~ SL(Sigma)``, ``Sigma = diag(s_k^2)`` (s_k the
noise scale of column k, ``lam (hi_k - lo_k)`` in privest, 0 for unnoised columns):

* naive  l(X1)                                          biased (attenuation)
* DR     (1/delta) l(X1) + (1 - 1/delta) l(X2)          eq (4.4); no smoothness needed
* SL     l(X2) - (1/2) Lap_Sigma l(X2)                  eq (6.1); l in C^2 in x
* SDR    l(X1) - ((1 - delta)/2) Lap_Sigma l(X2)        eq (6.2); l in C^2 in x
* oracle l(X) on raw data (experiments only).

``Lap_Sigma l = sum_k s_k^2 d^2 l / dx_k^2`` is the paper's ``lam^2 Lap_x l`` for a
diagonal noise covariance (the same derivation: the SL characteristic function
``1 / (1 + t' Sigma t / 2)`` gives ``E l(x + S) = l(x) + (1/2) Lap_Sigma l(x) + ...`` for
the quadratic part, exactly as with ``Sigma = lam^2 I``). Each is conditionally unbiased
for l(x) given the raw record (docs/dr-estimation.md). The optional B-draw DR replaces
l(X2) by the mean over X2 and B - 1 further copies X1 + S_b, S_b ~ SL(delta Sigma), drawn
by the analyst: still unbiased, with lower variance.

The seam of the backends (docs/scale-out.md): a fit reads an objective only through the
:class:`Objective` protocol, and :func:`corrected_objective` builds it for the data at
hand (a :func:`~privest.backends.dispatch` function on the release's type: in memory,
:class:`CorrectedObjective`; a backend such as privest.scale registers its own, whose
evaluations are sums over partitions). The fitting strategy
(:func:`~privest.learn.fitting.fit_objective`), the solvers and the standard errors are the
same for every backend.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from privest.backends import dispatch
from privest.errors import ValidationError
from privest.learn.design import AnalysisData, analysis_data, oracle_data
from privest.learn.gram import weighted_gram
from privest.learn.losses import Loss, LossNotSmoothError
from privest.noise import sample_sl

__all__ = [
    "METHODS",
    "CorrectedObjective",
    "Objective",
    "Term",
    "corrected_objective",
    "corrected_terms",
    "index_sandwich_parts",
    "score_cov_on_designs",
    "score_covariance",
]

Method = Literal["dr", "sl", "sdr", "naive", "oracle"]
METHODS = ("dr", "sl", "sdr", "naive", "oracle")


@dataclass(frozen=True)
class Term:
    """One weighted term of an objective: ``weight * l(x, y)`` or ``weight * Lap_x l(x, y)``."""

    weight: float
    x: np.ndarray
    y: np.ndarray | None
    laplacian: bool = False


def corrected_terms(
    method: str,
    zero_prob: float,
    first: tuple[np.ndarray, np.ndarray | None],
    copies: list[tuple[np.ndarray, np.ndarray | None]],
) -> list[Term]:
    """The weighted terms of ``method``'s corrected loss (one place for eqs (4.4), (6.1), (6.2)).

    ``first`` is (X1, Y1) (the raw data for ``"oracle"``), ``copies`` the doubly random
    copies [(X2, Y2), ...] (B of them for the B-draw DR; only the first is read by SL/SDR).
    The arrays may carry leading replicate axes: the batched solvers pass (R, n, d) stacks.
    """
    d = zero_prob
    (x1, y1), (x2, y2) = first, copies[0]
    if method in ("naive", "oracle"):
        return [Term(1.0, x1, y1)]
    if method == "sl":
        return [Term(1.0, x2, y2), Term(-0.5, x2, y2, True)]
    if method == "sdr":
        return [Term(1.0, x1, y1), Term(-(1 - d) / 2, x2, y2, True)]
    b = len(copies)
    return [Term(1.0 / d, x1, y1)] + [Term((1.0 - 1.0 / d) / b, x, y) for x, y in copies]


class Objective(Protocol):
    """What a fit reads from a corrected objective, wherever its records are.

    Means over records: ``value``, ``value_and_grad``, ``grad``, ``hess`` and ``derivs``
    (value, gradient and Hessian together); ``score_cov``: A_hat of the sandwich (Thm 5.3).
    ``reduce(func, *args)`` adds up ``func(block, *args)`` (a dict of sums with the block's
    ``"n"``) over blocks of records, each block an in-memory :class:`CorrectedObjective`;
    ``percentiles(values, qs, *args)`` gives ``np.percentile`` of the per-record
    ``values(block, *args)`` over all records; ``on_subsample(size, func, *args)`` runs
    ``func`` on the in-memory objective of about ``size`` records, where they are.
    ``in_memory``: every record in one array (the LP, scan and bootstrap apply); ``where``:
    how evaluations are made (for the notes, "" in memory); ``diagnostics()``: a backend's
    fitted attributes (e.g. ``passes_``). ``data`` holds the columns' metadata.
    """

    loss: Loss
    method: str
    n: int
    p: int
    data: AnalysisData
    in_memory: bool
    where: str

    def with_method(self, method: str) -> Objective: ...

    def value(self, theta: np.ndarray) -> float: ...

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]: ...

    def grad(self, theta: np.ndarray) -> np.ndarray: ...

    def hess(self, theta: np.ndarray) -> np.ndarray: ...

    def derivs(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]: ...

    def score_cov(self, theta: np.ndarray) -> np.ndarray: ...

    def reduce(self, func: Callable[..., dict], *args: Any, combine: Any = None) -> dict: ...

    def percentiles(self, values: Callable[..., np.ndarray], qs: Any, *args: Any) -> Any: ...

    def on_subsample(self, size: int, func: Callable[..., Any], *args: Any) -> Any: ...

    def diagnostics(self) -> dict[str, Any]: ...


@dispatch
def corrected_objective(
    data: Any,
    y: Any,
    loss: Loss,
    method: str,
    *,
    features: Sequence[str] | None = None,
    n_draws: int = 1,
    rng: np.random.Generator | None = None,
) -> Objective:
    """The corrected objective of ``method`` on ``data`` (a release, or raw data for the
    oracle), for the response ``y`` (a column name or an array) and the ``features``.

    A :func:`~privest.backends.dispatch` function on the type of ``data``: this default
    holds the records in memory; a backend registers its own for its release type and
    refuses there what it cannot do (naming what it accepts).
    """
    ad = oracle_data(data, y) if method == "oracle" else analysis_data(data, y, features)
    return CorrectedObjective(loss, ad, method, n_draws, rng)


class CorrectedObjective:
    """The per-row corrected loss of ``method`` and its derivatives in theta (means over
    rows), all records in memory (the :class:`Objective` protocol)."""

    in_memory = True
    where = ""

    def __init__(
        self,
        loss: Loss,
        data: AnalysisData,
        method: Method = "dr",
        n_draws: int = 1,
        rng: np.random.Generator | None = None,
    ) -> None:
        if method not in METHODS:
            raise ValidationError(f"method: {method!r} is not one of {METHODS}")
        if n_draws < 1:
            raise ValidationError(f"n_draws: {n_draws} must be >= 1")
        if loss.form is None:
            raise ValidationError(
                f"loss: {loss!r} is a margin loss for IWP-SGD, with no per-record form "
                "l(x, y, theta); the DR estimators take a catalogue loss (get_loss) or a Loss "
                "that defines n_params and value"
            )
        self.loss, self.data, self.method = loss, data, method
        self.designs: dict = {}  # the batched solvers' designs of each copy, shared by methods
        self._kept_hess: tuple[np.ndarray, np.ndarray] | None = None  # see score_cov
        if method in ("sl", "sdr"):
            if not loss.smooth_in_x:
                raise LossNotSmoothError(
                    f"method={method!r} needs the Laplacian of the loss in x, which "
                    f"{loss.name} does not provide (it is not twice differentiable in x); "
                    "use method='dr', which needs no smoothness"
                )
            if data.y_noised:
                raise ValidationError(
                    f"method={method!r} with a noised response is not supported; use 'dr'"
                )
        copies = [(data.x2, data.y2)]
        if method == "dr":
            copies += self._extra_copies(n_draws - 1, rng)
        terms = corrected_terms(method, data.zero_prob, (data.x1, data.y1), copies)
        self.terms = terms
        self.n = data.n
        self.p = loss.n_params(data.d)

    def _extra_copies(self, k: int, rng: np.random.Generator | None):
        """B - 1 further doubly random copies X1 + S_b (noised columns and response only)."""
        if k == 0:
            return []
        if rng is None:
            raise ValidationError("n_draws > 1 needs an rng for the analyst's extra copies")
        data = self.data
        cols = np.flatnonzero(data.noised)
        scales = np.append(data.noise_scale[cols], data.y_noise_scale)
        if not data.y_noised:
            scales = scales[:-1]
        scales = scales * math.sqrt(data.zero_prob)
        out = []
        for _ in range(k):
            s = sample_sl(data.n, scales.size, 1.0, rng)  # one joint SL vector per record
            s *= scales
            x = data.x1.copy()
            x[:, cols] += s[:, : cols.size]
            y = data.y1 if not data.y_noised else data.y1 + s[:, -1]
            out.append((x, y))
        return out

    def _combine(self, theta: np.ndarray, plain, laplacian, shape) -> np.ndarray:
        """sum_t w_t f_t with f = ``plain`` or, for Laplacian terms, ``laplacian``."""
        out = np.zeros(shape)
        for t in self.terms:
            f = (
                laplacian(t.x, t.y, theta, self.data.noise_var)
                if t.laplacian
                else plain(t.x, t.y, theta)
            )
            out += t.weight * f
        return out

    def rows(self, theta: np.ndarray) -> np.ndarray:
        """Per-row corrected loss (n,)."""
        return self._combine(theta, self.loss.value, self.loss.laplacian, self.n)

    def value(self, theta: np.ndarray) -> float:
        """Mean corrected loss."""
        return float(np.mean(self.rows(theta)))

    def scores(self, theta: np.ndarray) -> np.ndarray:
        """Per-row gradients psi_i (n, p) of the corrected loss (Thm 5.3)."""
        return self._combine(theta, self.loss.grad, self.loss.laplacian_grad, (self.n, self.p))

    def grad(self, theta: np.ndarray) -> np.ndarray:
        """Mean gradient (p,)."""
        return self.scores(theta).mean(axis=0)

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Mean corrected loss and its gradient from summed evaluations (the solvers' path)."""
        total, grad = 0.0, np.zeros(self.p)
        for t in self.terms:
            if t.laplacian:
                v, g = self.loss.laplacian_value_grad_sum(
                    t.x, t.y, theta, self.data.noise_var, t.weight
                )
            else:
                v, g = self.loss.value_grad_sum(t.x, t.y, theta, t.weight)
            total += v
            grad += g
        return total / self.n, grad / self.n

    def hess(self, theta: np.ndarray) -> np.ndarray:
        """Mean Hessian (p, p) of the corrected loss (the DR/SL/SDR-weighted Hessian); the
        one :meth:`score_cov` formed at the same theta when it made both in one pass."""
        kept, self._kept_hess = self._kept_hess, None
        if kept is not None and np.array_equal(kept[0], theta):
            return kept[1]
        out = np.zeros((self.p, self.p))
        for t in self.terms:
            w = np.full(self.n, t.weight)
            h = (
                self.loss.laplacian_hess_sum(t.x, t.y, theta, self.data.noise_var, w)
                if t.laplacian
                else self.loss.hess_sum(t.x, t.y, theta, w)
            )
            out += h
        out /= self.n
        return 0.5 * (out + out.T)

    def derivs(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Mean value, gradient and Hessian."""
        f, g = self.value_and_grad(theta)
        return f, g, self.hess(theta)

    def with_method(self, method: str) -> CorrectedObjective:
        """The objective of another method on the same records (no extra draws)."""
        if method == self.method:
            return self
        new = CorrectedObjective(self.loss, self.data, method)
        new.designs = self.designs
        return new

    def score_cov(self, theta: np.ndarray) -> np.ndarray:
        """A_hat, the centred covariance of the per-record scores (:func:`score_covariance`).

        For an unpenalised smooth index loss without Laplacian terms (DR, naive, oracle) the
        Hessian at theta is formed in the same pass (:func:`index_sandwich_parts`: one
        D theta and one phi' / phi'' evaluation per block, instead of one for the scores
        and one for the Hessian) and kept for a :meth:`hess` at the same theta (the
        sandwich asks for it next)."""
        if _fused_sandwich_applies(self):
            a, v = index_sandwich_parts(self, theta)
            self._kept_hess = (np.array(theta, dtype=float), v)
            return a
        return score_covariance(self, theta)

    def reduce(self, func: Callable[..., dict], *args: Any, combine: Any = None) -> dict:
        """``func(self, *args)``: the records in memory are one block."""
        return func(self, *args)

    def percentiles(self, values: Callable[..., np.ndarray], qs: Any, *args: Any) -> Any:
        """``np.percentile(values(self, *args), qs)``."""
        return np.percentile(values(self, *args), qs)

    def on_subsample(self, size: int, func: Callable[..., Any], *args: Any) -> Any:
        """``func`` of the objective on ``size`` evenly spaced records."""
        rows = np.linspace(0, self.n - 1, size).astype(np.intp)
        return func(self.restricted(rows), *args)

    def diagnostics(self) -> dict[str, Any]:
        return {}

    def restricted(self, rows: np.ndarray | slice) -> CorrectedObjective:
        """The objective on a subset of records (bootstrap), sharing the extra copies; a
        slice of rows gives views, not copies."""
        new = object.__new__(CorrectedObjective)
        new.loss, new.method, new.p = self.loss, self.method, self.p
        new.designs, new._kept_hess = {}, None
        new.data = self.data.subset(rows)
        new.terms = [
            Term(t.weight, t.x[rows], None if t.y is None else t.y[rows], t.laplacian)
            for t in self.terms
        ]
        new.n = len(range(self.n)[rows]) if isinstance(rows, slice) else rows.size
        return new


# rows per block of scores in score_covariance (an (n, p) array of them is never formed)
SCORE_BLOCK = 65_536


def score_covariance(
    obj: CorrectedObjective, theta: np.ndarray, block: int = SCORE_BLOCK
) -> np.ndarray:
    """A_hat = (1/n) sum_i (psi_i - psi_bar)(psi_i - psi_bar)' (Thm 5.3's middle matrix).

    On large data the scores are formed block by block of rows (cache-sized, never the whole
    (n, p) array), shifted by the first block's mean so that the one-pass formula does not
    cancel; the result equals the two-pass one up to rounding.
    """
    if obj.n <= block:
        psi = obj.scores(theta)
        psi = psi - psi.mean(axis=0)
        return psi.T @ psi / obj.n
    shift = None
    total, cross = np.zeros(obj.p), np.zeros((obj.p, obj.p))
    for start in range(0, obj.n, block):
        psi = obj.restricted(slice(start, start + block)).scores(theta)
        if shift is None:
            shift = psi.mean(axis=0)
        psi -= shift
        total += psi.sum(axis=0)
        cross += psi.T @ psi
    mean = total / obj.n
    return cross / obj.n - np.outer(mean, mean)


def _fused_sandwich_applies(obj: CorrectedObjective) -> bool:
    loss = obj.loss
    return (
        loss.form == "index"
        and loss.smooth_in_theta
        and not loss.penalised
        and not any(t.laplacian for t in obj.terms)
    )


def index_sandwich_parts(
    obj: CorrectedObjective, theta: np.ndarray, block: int = SCORE_BLOCK
) -> tuple[np.ndarray, np.ndarray]:
    """(A_hat, V_hat) of an index loss l = phi(y, D theta) in one pass over blocks of rows.

    Per block and term t (weight w_t): u = D_t theta, psi_i = sum_t w_t phi'(y, u_ti) D_ti
    and V += sum_t D_t' diag(w_t phi''(y, u_t)) D_t. A_hat is formed as in
    :func:`score_covariance` (shifted by the first block's mean); the same numbers as the
    scores and the Hessian computed apart, up to rounding.
    """
    loss, n, p = obj.loss, obj.n, obj.p
    designs = _solver_designs(obj) if n <= block else None
    if designs is not None:
        return _parts_on_designs(obj, theta, designs)
    shift = None
    total, cross, hess = np.zeros(p), np.zeros((p, p)), np.zeros((p, p))
    for start in range(0, n, block):
        psi = None
        for t in obj.terms:
            d = loss.design(t.x[start : start + block])
            y = loss.response(t.y[start : start + block], d.shape[0])
            d1, d2 = loss.phi_derivs(y, d @ theta, (1, 2))
            part = d * (t.weight * d1)[:, None]
            if psi is None:
                psi = part
            else:
                psi += part
            hess += weighted_gram(d, t.weight * d2)
        if shift is None:
            shift = psi.mean(axis=0)
        psi -= shift
        total += psi.sum(axis=0)
        cross += psi.T @ psi
    mean = total / n
    hess /= n
    return cross / n - np.outer(mean, mean), 0.5 * (hess + hess.T)


def score_cov_on_designs(obj: Objective, theta: np.ndarray) -> np.ndarray | None:
    """A_hat of :func:`index_sandwich_parts` in one piece on the batched solvers' cached
    designs at any n (that function uses them up to one block), or None where they do not
    apply (not an index loss without Laplacian terms, or no design cached)."""
    if not (isinstance(obj, CorrectedObjective) and _fused_sandwich_applies(obj)):
        return None
    designs = _solver_designs(obj)
    return None if designs is None else _parts_on_designs(obj, theta, designs)[0]


def _solver_designs(obj: CorrectedObjective) -> list[Any] | None:
    """The designs the batched solvers cached for each term of ``obj`` (one design each,
    stored transposed with its products d_ij d_ik: small data), or None if a term has none."""
    out = []
    for t in obj.terms:
        hit = obj.designs.get(id(t.x))
        if hit is None or hit[0] is not t.x or hit[1].rows is not None or hit[1].box:
            return None
        out.append(hit[1])
    return out


def _parts_on_designs(
    obj: CorrectedObjective, theta: np.ndarray, designs: list[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`index_sandwich_parts` in one block on the solvers' cached designs (the fit has
    just used them): no design is built again and each Gram is one product with the cached
    d_ij d_ik. The same formulas; equal to the blocked pass up to rounding."""
    loss, n = obj.loss, obj.n
    psi_t, hess = None, np.zeros((obj.p, obj.p))
    for t, des in zip(obj.terms, designs, strict=True):
        y = loss.response(t.y, n)
        d1, d2 = loss.phi_derivs(y, des.lin(theta[None])[0], (1, 2))
        part = des.xt[0] * (t.weight * d1)  # the scores transposed, (p, n)
        psi_t = part if psi_t is None else psi_t + part
        hess += des.gram((t.weight * d2)[None])[0]
    psi_t -= psi_t.mean(axis=1, keepdims=True)
    mean = psi_t.sum(axis=1) / n
    hess /= n
    return psi_t @ psi_t.T / n - np.outer(mean, mean), 0.5 * (hess + hess.T)
