"""Standard errors of the default private logistic regression, ``method="noisy_mm"``
(docs/central-models.md, "Standard errors").

The fit releases, at each of its T steps t, the iterate theta_t and the noisy gradient sum
g~_t = g(theta_t) + z_t of the logistic loss, z_t ~ N(0, s_g^2 I) independent
(:func:`privest.models.logistic_fit.noisy_descent`). The standard errors spend one more
release: the Hessian sum H = sum_i p_i (1 - p_i) x_i x_i' at the point theta_H of
:func:`hessian_point` (the ridge-free bounded-Hessian step from the released path, between
the ridge-shrunk fit and the minimiser, so nearer the secant the one step needs than the
fit), p_i = sigmoid(x_i' theta_H) (public weights once the path is released), as the Gram
of the rows sqrt(p_i (1 - p_i)) x_i, whose norm is at most B / 2 at any point: replacement
sensitivity sqrt(2) B^2 / 4. Everything after that release is post-processing.

``params`` are the averaged one-step (Newton) estimates from the released path,
theta_os = mean_t (theta_t - M g~_t) over the last half of the steps (the iterates the fit
averages), M = H~^{-1} (the released Hessian, eigenvalues floored). Since
g(theta_t) ~= H (theta_t - theta_hat), theta_hat the ridge-free maximum likelihood estimate,

    theta_os - theta_hat ~= M E d - M zbar,   d = mean_t theta_t - theta_hat,

E the noise of H~ and zbar the mean of the m gradient noises: the one step removes the
ridge's shrinkage and what the T steps left unconverged (to first order), so the intervals
need not cover a bias. With theta_hat - theta_0 ~= H^{-1} score (Cov H^{-1}, the classical
model-based term), the noise-aware sandwich is

    Cov = M (H~ + s_g^2 / m I + s_H^2 / 2 (||d||^2 I + d d')) M',

s_H the noise sd of a diagonal entry of H~ (E d has the covariance of the linear model's
E theta term, :mod:`privest.models.linear_inference`), d estimated by mean_t theta_t - theta_os.
Given M, M zbar would be normal with covariance s_g^2 / m M M'; but M depends on zbar
through the point theta_H (it takes the window's noisy gradients), and the linearisation
drops M (H(theta_H) - H_t) (theta_t - theta_hat), H_t the gradient's secant between theta_t
and theta_hat: second order in the distance to theta_hat, but the iterates and theta_H
carry the window's gradient noises, so its part linear in the noise (the path's bias times
the log-likelihood's third derivative, neither released) is correlated with M zbar. At
n = 10^4, epsilon 1 the two leave the noise part up to 10% wider than reported
(docs/central-models.md, "Epsilon 1: which term is short"). The sampling term assumes the
logistic variance function (as the classical standard error does).

Two Hessian releases (issue 27 item 4; where :func:`split_share`, a public rule on n,
epsilon, d and K, says so: two classes from n x epsilon = :data:`SANDWICH_MIN_N_EPS` on, the
model-based sampling term): the Hessian's rho is split, :data:`SPLIT_FIRST` to a release at
the first half's bounded-Hessian step (:func:`hessian_point` of the first T/2 steps, drawn before
the window's gradient noises), the one step from the last :data:`SPLIT_LEAD` steps before
the window with it (:func:`lead_point`, near the minimiser), the rest to a release there, and
H~ is the two releases' precision-weighted mean (:func:`combine_hessians`: the noise of one
release at the whole share). The point no longer depends on the window's zbar, so (ii)
vanishes and (i) shrinks: at n = 10^4, epsilon 1 the worst coverage rose from 0.913-0.918
to 0.94-0.95 on anes96 and breast cancer (docs/central-models.md, "Epsilon 1: which term is
short"). Replacement sensitivity and release per Hessian as above; both inside the standard
errors' share.

M floors the eigenvalues of H~ at 2 sqrt(d) s_H (about the spectral norm of its noise). When
the released Hessian is that noisy, the floor shortens the step and the estimate keeps part
of the shrinkage, a bias the sandwich does not cover; so the standard errors are withheld
(NaN) when lowering the floor to s_H moves some estimate by more than
:data:`FLOOR_SENSITIVITY` of its standard error. That check passes the releases whose noise
inflated H~ (a shorter step, the same bias), so below :data:`SANDWICH_MIN_N_EPS` the
standard errors are also withheld when the smallest eigenvalue of H~ is below the floor
(``determined`` in :func:`one_step_cov`). Coverage and the share withheld, per data set, n
and epsilon: docs/central-models.md.

K >= 3 classes (the multinomial fit) take the same path in the identified coordinates
beta_c = theta_c - theta_0 (:func:`contrasts`; the softmax depends on theta only through
them, as statsmodels' MNLogit parametrises it): d (K - 1) parameters, the gradient's
columns 1..K-1 (the gradient in beta, same noise s_g) and the (K - 1) d square Hessian of
:func:`noisy_hessian`, released with replacement sensitivity sqrt(2) B^2 / 2; given from
n x epsilon = :data:`MULTICLASS_MIN_N_EPS` on, and with ``determined``.

``cov_type="HC0"`` replaces the sampling term H~ of the meat by K~+, the released outer
products of the per-record scores (:func:`noisy_score_gram`, at theta_os, with
:func:`score_share` of the standard errors' rho; the Hessian gets the rest) with its
eigenvalues floored at 0: the robust sandwich M K M, which does not assume the logistic
variance function (records iid). The default ``cov_type="auto"`` (:func:`resolve_cov_type`,
a public rule) takes it with K >= 3 classes from n x epsilon =
:data:`MULTICLASS_HC0_MIN_N_EPS` on and the model-based term otherwise (two classes always;
docs/central-models.md, "Robust standard errors" and "Multiclass standard errors").
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import expit, softmax

from privest.models.inference import nearest_psd, noisy_gram
from privest.models.logistic_fit import GRADIENT_BLOCK, hessian_sum

__all__ = [
    "COV_TYPES",
    "FLOOR_SENSITIVITY",
    "MULTICLASS_HC0_MIN_N_EPS",
    "MULTICLASS_MIN_N_EPS",
    "SANDWICH_MIN_N_EPS",
    "SANDWICH_SHARE",
    "MULTICLASS_SCORE_SHARE",
    "SCORE_SHARE",
    "SPLIT_FIRST",
    "SPLIT_LEAD",
    "combine_hessians",
    "contrasts",
    "hessian_point",
    "in_classes",
    "lead_point",
    "noisy_hessian",
    "noisy_score_gram",
    "one_step_cov",
    "resolve_cov_type",
    "score_share",
    "split_share",
]

#: share of the fit's zCDP rho spent on the Hessian release the standard errors need
SANDWICH_SHARE = 0.2
#: the sampling term of the sandwich (statsmodels' ``cov_type`` names): ``"nonrobust"``
#: the model's H^-1, ``"HC0"`` the robust H^-1 K H^-1 (records iid, no model assumption),
#: ``"auto"`` one of the two by the public rule of :func:`resolve_cov_type`
COV_TYPES = ("auto", "nonrobust", "HC0")
#: with ``cov_type="HC0"`` the share of the standard errors' rho spent on the score outer
#: products K (released at the one-step estimate); the Hessian gets the rest (a public rule)
SCORE_SHARE = 0.5
#: the same share with K >= 3 classes (:func:`score_share`, a public rule; the Hessian gets
#: 0.6): the Hessian of the contrasts, with twice the binary one's sensitivity, is the term
#: that withholds. At n = 10^4, epsilon 4 (1,000 releases) wine's withheld share 0.14 ->
#: 0.03 (worst coverage 0.939 -> 0.940), iris 0.922 -> 0.932, anes96 0.939 -> 0.939
#: (docs/central-models.md, "Multiclass standard errors")
MULTICLASS_SCORE_SHARE = 0.4
#: ``inference="auto"`` spends that share only from this n x epsilon on (a public rule):
#: below it the released Hessian was too noisy for standard errors in most releases
#: (breast cancer and randhie at n = 2000, epsilon 1: 80% withheld, the rest undercovered;
#: n = 10^4, epsilon 0.5: 3-59%), while the share cost the fit up to 0.03 in log-loss
#: (docs/central-models.md); below it ``inference="sandwich"`` also withholds them where
#: the released Hessian's smallest eigenvalue is below its noise's spectral norm
SANDWICH_MIN_N_EPS = 1e4
#: with K >= 3 classes the sandwich is given only from this n x epsilon on (a public rule),
#: and always under the ``determined`` check: the Hessian of the contrasts has twice the
#: binary one's sensitivity, so its noise relative to the Hessian matches the binary's at
#: twice the n x epsilon; at n = 10^4, epsilon 1 the intervals given undercovered (0.16-0.84
#: worst on four data sets) with 54-91% withheld (docs/central-models.md)
MULTICLASS_MIN_N_EPS = 2.0 * SANDWICH_MIN_N_EPS
#: ``cov_type="auto"`` with K >= 3 classes takes ``"HC0"`` from this n x epsilon on (a
#: public rule): the Hessian released with 0.6 of the share (1 -
#: :data:`MULTICLASS_SCORE_SHARE`; set with half) is then at most 0.65 (half: 1 / sqrt(2))
#: as noisy, relative to the Hessian, as the whole share's at :data:`MULTICLASS_MIN_N_EPS`.
#: Measured at n = 10^4, epsilon 4: wine's worst coefficient 0.898 -> 0.939 (the
#: multinomial variance function fails there); below it the halved share's noise broke a
#: binary cell (randhie, n x epsilon = 10^4: 0.941 -> 0.827)
MULTICLASS_HC0_MIN_N_EPS = 2.0 * MULTICLASS_MIN_N_EPS
#: the first Hessian release's share of the Hessian's rho (``split_share``): released at the
#: first half's bounded-Hessian step, before the window's gradient noises are drawn
SPLIT_FIRST = 0.25
#: the one step towards the second release point uses the last SPLIT_LEAD steps before the
#: window (steps 6-9 of 20): from all ten it overreaches (docs/central-models.md)
SPLIT_LEAD = 4
#: standard errors are withheld when lowering the eigenvalue floor of H~ from 2 sqrt(d) to 1
#: noise sd moves some estimate by more than this many of its standard errors
FLOOR_SENSITIVITY = 0.5


def resolve_cov_type(cov_type: str, n: int, epsilon: float, k: int) -> str:
    """The sandwich's sampling term for ``cov_type`` (:data:`COV_TYPES`), from public inputs
    only (n, epsilon and the number of public classes k; never the data): ``"auto"`` is
    ``"HC0"`` with k >= 3 and n x epsilon >= :data:`MULTICLASS_HC0_MIN_N_EPS`, else
    ``"nonrobust"`` (two classes always); the other values are themselves
    (docs/central-models.md, "Multiclass standard errors")."""
    if cov_type != "auto":
        return cov_type
    return "HC0" if k > 2 and n * epsilon >= MULTICLASS_HC0_MIN_N_EPS else "nonrobust"


def score_share(k: int) -> float:
    """With ``cov_type="HC0"`` the share of the standard errors' rho spent on the score outer
    products K~ (the Hessian gets the rest), from the number of public classes k only:
    :data:`MULTICLASS_SCORE_SHARE` with k >= 3, :data:`SCORE_SHARE` with two
    (docs/central-models.md, "Multiclass standard errors")."""
    return MULTICLASS_SCORE_SHARE if k > 2 else SCORE_SHARE


def contrasts(thetas: np.ndarray, grads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The released path (``thetas``, ``grads`` (..., d, k)) in the identified coordinates:
    two classes (k = 1) as they are; K >= 3 classes the contrasts beta_c = theta_c - theta_0
    (c = 1..K-1, stacked class by class) and the gradient sums' columns 1..K-1 (the softmax
    depends on theta through beta only, so the gradient in beta_c is column c of the
    gradient in theta, with the same noise). Returns (..., d) or (..., (K-1) d)."""
    if thetas.shape[-1] == 1:
        return thetas[..., 0], grads[..., 0]

    def stack(a: np.ndarray) -> np.ndarray:
        return np.swapaxes(a, -1, -2).reshape(*a.shape[:-2], -1)

    return stack(thetas[..., 1:] - thetas[..., :1]), stack(grads[..., 1:])


def _class_gram(
    Xc: np.ndarray, weights: Callable[[np.ndarray, slice], np.ndarray], k: int
) -> np.ndarray:
    """sum_i W_i (x) x_i x_i', W_i the k x k matrix of record i, blocks class by class; over
    blocks of :data:`~privest.models.logistic_fit.GRADIENT_BLOCK` rows: ``weights(rows, sl)``
    gives the (b, k, k) weights of the rows ``Xc[sl]``, and each pair of classes adds the
    block's weighted Gram (no n x d weighted copy, one pass over X)."""
    n, d = Xc.shape
    S = np.zeros((k, d, k, d))
    for start in range(0, n, GRADIENT_BLOCK):
        sl = slice(start, start + GRADIENT_BLOCK)
        rows = Xc[sl]
        W = weights(rows, sl)
        for a in range(k):
            for b in range(a, k):
                S[a, :, b] += rows.T @ (rows * W[:, a, b, None])
    for a in range(k):
        for b in range(a + 1, k):
            S[b, :, a] = S[a, :, b].T
    return S.reshape(k * d, k * d)


def _release(S: np.ndarray, radius: float, rho: float, n: int, rng) -> tuple[np.ndarray, float]:
    """:func:`~privest.models.inference.noisy_gram` of a sum of per-record positive
    semi-definite terms of Frobenius norm <= radius^2; returns it and its diagonal's sd."""
    released, sd_off = noisy_gram(S, radius, rho, n, rng)
    return released, sd_off * math.sqrt(2.0)


def noisy_hessian(
    Xc: np.ndarray, theta: np.ndarray, x_radius: float, rho: float, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    """The Hessian sum of the log-likelihood in the coordinates of :func:`contrasts` at the
    released ``theta`` (d, k), under rho-zCDP (rows with ||x|| <= x_radius): two classes,
    sum_i p_i (1 - p_i) x_i x_i' (module docstring); K >= 3, sum_i A_i (x) x_i x_i' with
    A_i = diag(q_i) - q_i q_i', q_i the softmax probabilities of classes 1..K-1, blocks
    class by class. Each record adds a positive semi-definite C_i with ||C_i||_F =
    ||A_i||_F ||x_i||^2 <= B^2 / 2 (||A_i||_F^2 <= s2 - 2 s3 + s2^2 <= s2 (1 - s2) <= 1/4,
    s_j = sum_c p_ic^j over all K classes, s3 >= s2^2 by Cauchy-Schwarz), so replacement
    moves the sum by at most sqrt(2) B^2 / 2 in Frobenius norm (<C, C'> >= 0): the Gram
    release of rows of norm B / sqrt(2) (B / 2 for two classes). Returns the noisy symmetric
    matrix and the noise sd of its diagonal."""
    if theta.shape[1] == 1:  # blockwise, without an n x d weighted copy
        return _release(hessian_sum(Xc, theta[:, 0]), x_radius / 2.0, rho, Xc.shape[0], rng)

    def weights(rows: np.ndarray, sl: slice) -> np.ndarray:  # A_i = diag(q_i) - q_i q_i'
        q = softmax(rows @ theta, axis=1)[:, 1:]
        return q[:, :, None] * (np.eye(q.shape[1]) - q[:, None, :])

    S = _class_gram(Xc, weights, theta.shape[1] - 1)
    return _release(S, x_radius / math.sqrt(2.0), rho, Xc.shape[0], rng)


def noisy_score_gram(
    Xc: np.ndarray,
    Y: np.ndarray,
    theta: np.ndarray,
    x_radius: float,
    rho: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float]:
    """K = sum_i s_i s_i', the outer products of the per-record scores in the coordinates
    of :func:`contrasts` at ``theta`` (d, k), under rho-zCDP: s_i = r_i (x) x_i with
    r_i = y_i - p_i (two classes, ``Y`` (n, 1) 0/1) or r_ic = y_ic - q_ic, c = 1..K-1
    (``Y`` (n, K) one-hot). ||s_i|| = ||r_i|| ||x_i|| with |r_i| <= 1 for two classes and
    ||r_i||^2 <= (1 - q_iy)^2 + (sum_{c != y} q_ic)^2 <= 2 for K >= 3 (class y's residual,
    plus the others' probabilities, which sum to at most 1 - q_iy; the supremum 2 is
    approached as q_iy -> 0 with the mass on one other class 1..K-1): the Gram release of
    rows of norm B (B sqrt(2)), replacement sensitivity sqrt(2) B^2 (2 sqrt(2) B^2)
    (docs/central-models.md, "Robust standard errors"). Returns the noisy symmetric matrix
    and the noise sd of its diagonal."""

    def weights(rows: np.ndarray, sl: slice) -> np.ndarray:  # r_i r_i'
        z = rows @ theta
        R = Y[sl] - expit(z) if theta.shape[1] == 1 else Y[sl, 1:] - softmax(z, axis=1)[:, 1:]
        return R[:, :, None] * R[:, None, :]

    radius = x_radius * (1.0 if theta.shape[1] == 1 else math.sqrt(2.0))
    S = _class_gram(Xc, weights, max(theta.shape[1] - 1, 1))
    return _release(S, radius, rho, Xc.shape[0], rng)


def hessian_point(
    thetas: np.ndarray, grads: np.ndarray, precond: np.ndarray, l2: float, n: int
) -> np.ndarray:
    """Where the Hessian is released: the averaged bounded-Hessian step without the ridge,
    mean_t (theta_t - (P^-1 - l2 I)^-1 g~_t / n), from the released path (``thetas``,
    ``grads`` (m, d) or (m, d, k), one column per class) and the released preconditioner
    P = (H0 + l2 I)^-1 of the fit. H0 bounds the Hessian, so the point lies between the
    ridge-shrunk fit and the minimiser; the Hessian there is closer to the secant the one
    step needs than the fit's (module docstring). Post-processing of released quantities."""
    vals, vecs = np.linalg.eigh(np.linalg.inv(precond))
    H0_inv = (vecs / np.maximum(vals - l2, 1e-12)) @ vecs.T
    return np.mean(thetas - np.einsum("ij,mj...->mi...", H0_inv, grads) / n, axis=0)


def in_classes(beta: np.ndarray, d: int) -> np.ndarray:
    """The (d, k) parameter of the fit from the identified ``beta`` of :func:`contrasts`:
    (d, 1) for two classes, else a zero first class and beta's K - 1 blocks."""
    cols = beta.reshape(-1, d).T
    return cols if cols.shape[1] == 1 else np.column_stack([np.zeros(d), cols])


def _floored(H: np.ndarray, sd_h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The eigenvalues of the released H~ (ascending), them floored at 2 sqrt(d) s_H (about
    its noise's spectral norm), and the eigenvectors."""
    raw, vecs = np.linalg.eigh((H + H.T) / 2.0)
    return raw, np.maximum(raw, 2.0 * math.sqrt(H.shape[0]) * sd_h), vecs


def _one_step(thetas: np.ndarray, grads: np.ndarray, vals: np.ndarray, vecs: np.ndarray):
    M = (vecs / vals) @ vecs.T
    return np.mean(thetas - grads @ M, axis=0), M


def one_step_cov(
    thetas: np.ndarray,
    grads: np.ndarray,
    sd_g: float,
    H: np.ndarray,
    sd_h: float,
    determined: bool = False,
    K: np.ndarray | None = None,
    noise_only: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """(theta_os, Cov) of the averaged one-step estimate (module docstring) from released
    quantities only: the iterates ``thetas`` (m, d) the noisy gradient sums ``grads`` (m, d)
    were taken at (noise sd ``sd_g`` per coordinate) and the noisy Hessian sum ``H`` (noise
    sd ``sd_h`` on its diagonal). Cov is None when the estimate depends on the eigenvalue
    floor of H~ (:data:`FLOOR_SENSITIVITY`): the released Hessian is then too noisy for the
    step to undo the fit's shrinkage, and an interval would not cover. With ``determined``
    (the fit's rule below :data:`SANDWICH_MIN_N_EPS`) Cov is also None when the smallest
    eigenvalue of H~ is below the floor 2 sqrt(d) s_H, its noise's spectral norm. With ``K``
    (the released score outer products, ``cov_type="HC0"``) the sampling term of the meat is
    K~ with its eigenvalues floored at 0 instead of H~: M K M, the robust sandwich. With
    ``noise_only`` Cov is the privacy noise's part alone, M (s_g^2 / m I + s_H^2 / 2 (...)) M
    (the spread around the sample's own estimate: the noise-only interval; withheld as the
    full Cov is)."""
    m, d = thetas.shape
    raw, vals, vecs = _floored(H, sd_h)
    theta, M = _one_step(thetas, grads, vals, vecs)
    dev = thetas.mean(axis=0) - theta
    noise = sd_g**2 / m * np.eye(d)
    noise += sd_h**2 / 2.0 * ((dev @ dev) * np.eye(d) + np.outer(dev, dev))
    sampling = (vecs * vals) @ vecs.T if K is None else nearest_psd(K)
    cov = M @ (sampling + noise) @ M
    low, _ = _one_step(thetas, grads, np.maximum(raw, sd_h), vecs)
    if np.max(np.abs(low - theta) / np.sqrt(np.diag(cov))) > FLOOR_SENSITIVITY:
        return theta, None
    if determined and raw[0] < vals[0]:  # the smallest eigenvalue is below the floor
        return theta, None
    return theta, M @ noise @ M if noise_only else cov


def split_share(n: int, epsilon: float, d: int, k: int) -> float:
    """The first Hessian release's share of the Hessian's rho (0: one release at
    :func:`hessian_point`, the path before the split). A public rule on the number of
    records, epsilon, the design's width and the number of classes (two classes only; K >= 3
    keep one release). The width d does not enter: measured on d = 3-5 at n = 10^4, epsilon
    1 and 4, one share served all (docs/central-models.md, "The two Hessian releases")."""
    return SPLIT_FIRST if k == 2 and n * epsilon >= SANDWICH_MIN_N_EPS else 0.0


def lead_point(thetas: np.ndarray, grads: np.ndarray, H: np.ndarray, sd_h: float) -> np.ndarray:
    """Where the second Hessian is released: the averaged one step of :func:`one_step_cov`
    (eigenvalues of H~ floored at 2 sqrt(d) s_H) from the steps before the window
    (``thetas``, ``grads`` (m, d), the last :data:`SPLIT_LEAD`), with the first release
    ``H``: near the minimiser and independent of the window's gradient noises, whose
    dependence through theta_H the one-release sandwich drops (module docstring).
    Post-processing of released quantities."""
    _, vals, vecs = _floored(H, sd_h)
    return _one_step(thetas, grads, vals, vecs)[0]


def combine_hessians(
    first: tuple[np.ndarray, float], second: tuple[np.ndarray, float]
) -> tuple[np.ndarray, float]:
    """The sandwich's Hessian from the two releases (``(H~, s_H)`` each): their precision-
    weighted mean, whose noise is that of one release at the two shares' sum (the same
    structure, diagonal sd s_H, independent of the window's gradient noises). The second
    alone (replayed: docs/central-models.md) is too noisy where the Hessian is weak
    (randhie at epsilon 1: 0.815 worst coverage, 50% withheld)."""
    w1, w2 = first[1] ** -2, second[1] ** -2
    return (w1 * first[0] + w2 * second[0]) / (w1 + w2), (w1 + w2) ** -0.5
