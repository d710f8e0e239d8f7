"""Standard errors of :class:`~privest.models.eptr_bayes.EPTRBayesClassifier` from released
quantities only (docs/eptr.md, "Standard errors and intervals of the ePTR Bayes classifier").

Algorithm 3 of paper 001 (Section 3) releases theta_rel = theta_hat + sigma zeta with
theta_hat = (mu_hat, m_hat_1, ..., m_hat_K) the plug-in estimates of eq. (11) on the
projected rows and sigma public; post-processing floors the shares at c0 and renormalises
them and projects each mean onto the R_x ball. With the records an iid sample:

* the shares v = mu_hat + sigma zeta_mu as ePTR released them (before the floor at c0 and
  the renormalisation, which give ``class_prior_``) have covariance (diag(mu) - mu mu') / n
  (multinomial sampling; plug-in mu = ``class_prior_``) plus sigma^2 I, no further release.
  The floored, renormalised shares are not used: with ``c0="auto"`` the floor acts in a
  sizeable share of releases (c0 lies a few noise sds below the smallest share), and a
  floor on one share moves every other through the renormalisation (docs/eptr.md);
* a class mean m_kj has variance s_kj^2 / N_k + sigma^2 (s_kj^2 the within-class variance
  of feature j; the paper's model fixes it at 1, real classes are not isotropic). It is not
  released by ePTR, so after a release :data:`~privest.models.eptr_inference.INFERENCE_SHARE`
  of epsilon and of delta buys one Gaussian release of the K p within-class sums of squares
  Q_kj = sum_{i in class k} x_ij^2 over the projected rows: replacing a record (x, a) by
  (x', b) changes the vector by -x^2 in class a and +x'^2 in class b (entry-wise squares),
  of L2 norm sqrt(sum_j x_j^4 + sum_j x'_j^4) <= sqrt(||x||^4 + ||x'||^4) <= sqrt(2) R_x^2
  (the same bound when a = b), times :func:`~privest.models.eptr_inference.float_slack`.
  Post-processing: N_k = mu_k n, s_kj^2 = Q~_kj / N_k - m_kj^2 + sigma^2 (the released
  m_kj^2 is high by sigma^2 on average), kept in [0, R_x^2].

Within-class covariances between features are not released: those entries of the
covariance are NaN (a joint Wald test over one class's mean is not available); means of
different classes and shares against means are uncorrelated to first order.

Pinned estimates: the coordinates of a class mean that lay outside the R_x ball (the
projection acted; the law is not normal there) get no interval.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from privest.learn.results import FitResults
from privest.mechanisms.samplers.lattice import LatticeGaussian, lattice_gaussian
from privest.models.eptr_inference import eptr_results, float_slack
from privest.projection import project_rows

__all__ = ["bayes_cov", "bayes_results", "feature_means", "square_sums", "square_sums_release"]


def square_sums(X: np.ndarray, labels: np.ndarray, k: int, x_radius: float) -> np.ndarray:
    """NON-PRIVATE (K, p) within-class sums of squares Q_kj over the projected rows."""
    scale, _ = project_rows(X, x_radius)
    Q = np.zeros((k, X.shape[1]))
    np.add.at(Q, labels, (X * scale[:, None]) ** 2)
    return Q


def square_sums_release(n: int, k: int, p: int, epsilon: float, delta: float) -> LatticeGaussian:
    """The Gaussian mechanism of the release of Q / R_x^2 (module docstring): L2
    sensitivity sqrt(2) x :func:`float_slack`, K p coordinates, analytic calibration."""
    return lattice_gaussian(epsilon, delta, math.sqrt(2.0) * float_slack(n, p), k * p, "analytic")


def bayes_cov(
    prior: np.ndarray,
    means: np.ndarray,
    noisy_q: np.ndarray,
    n: int,
    sigma: float,
    x_radius: float,
) -> np.ndarray:
    """Cov of (shares, class means row by row) from released quantities (module docstring):
    ``prior`` the post-processed shares (plug-in), ``means`` the released means (in the
    centred coordinates the sums of squares were taken in),
    ``noisy_q`` the released Q / R_x^2. NaN where a covariance was not released (two
    features of one class)."""
    k, p = means.shape
    mu = np.asarray(prior, dtype=float)
    cov = np.zeros((k * (p + 1),) * 2)
    cov[:k, :k] = (np.diag(mu) - np.outer(mu, mu)) / n + sigma**2 * np.eye(k)
    counts = mu * n
    q = np.asarray(noisy_q, dtype=float).reshape(k, p) * x_radius**2
    s2 = np.clip(q / counts[:, None] - means**2 + sigma**2, 0.0, x_radius**2)
    var = s2 / counts[:, None] + sigma**2
    for c in range(k):
        block = slice(k + c * p, k + (c + 1) * p)
        cov[block, block] = np.nan
        cov[block, block][np.diag_indices(p)] = var[c]
    return cov


def feature_means(est: Any) -> np.ndarray:
    """The (K, p) released class means ``means_`` (centred at the public box centre) in the
    features' own units: the centre added back (no box: as they are)."""
    minus_centre = est._centre(np.zeros((1, est.means_.shape[1])))[0]  # -(box centre)
    return est.means_ - minus_centre


def bayes_results(
    est: Any,
    n: int,
    notes: list[str],
    cov: np.ndarray | None = None,
    raw_shares: np.ndarray | None = None,
    projected: Any = False,
) -> FitResults:
    """The :class:`~privest.learn.results.FitResults` of an ePTR Bayes fit: the shares as
    ePTR released them (``raw_shares``, before the floor and renormalisation) and the class
    means (in the features' own units: the public box centre added back) indexed by (class,
    "share" or feature). Nothing released: NaN parameters."""
    k, p = est.classes_.size, est.n_features_in_
    names = [str(v) for v in getattr(est, "feature_names_in_", [f"x{j}" for j in range(p)])]
    classes = [str(c) for c in est.classes_]
    index = pd.MultiIndex.from_tuples(
        [(c, "share") for c in classes] + [(c, f) for c in classes for f in names],
        names=["class", "parameter"],
    )
    if est.released_:
        values = np.concatenate([raw_shares, feature_means(est).ravel()])
    else:
        values = np.full(k * (p + 1), np.nan)
    pinned = np.zeros(k * (p + 1), dtype=bool)
    if cov is not None:  # no standard errors: nothing to withhold
        pinned[k:] = np.repeat(np.broadcast_to(np.asarray(projected, dtype=bool), (k,)), p)
    return eptr_results(
        est,
        pd.Series(values, index=index),
        cov,
        pd.Series(pinned, index=index),
        n,
        notes,
        method="ePTR-Bayes",
        inference="multinomial shares and within-class variances from released sums of "
        "squares, plus the ePTR noise",
        on_bound_note=(
            "note: a class mean released outside the x_radius ball (projected onto it) gets "
            "no interval; files hold the numbers empty (null)"
        ),
    )
