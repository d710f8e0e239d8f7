"""Standard errors of the central models from their released quantities (docs/central-models.md).

Everything here is post-processing of what a fit released: it never reads the private data.

Linear regression: :mod:`privest.models.linear_inference`.

Logistic regression (noisy GD, :mod:`privest.models.logistic`): no closed form, so a
parametric bootstrap (Ferrando, Wang and Sheldon 2022, Sec. 3): features are simulated from
a normal law with the released (noisy) first and second moments, clipped to the public box;
labels from the released fit; the same noisy GD (same steps, step size and noise law) is
rerun. Noisy GD stops after T steps, short of the minimiser, so its estimate is shrunk
towards the start; the mean map m(theta) = E[fit | data from theta] is solved for
m(theta~) = released estimate (indirect inference, Gourieroux, Monfort and Renault 1993) by
Newton steps on the noise-free mean path, and Cov(theta~) = M^-1 Cov*(fit) M^-T with
M = dm/dtheta. Binary only.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from privest.accounting.zcdp import zcdp_rho_for
from privest.errors import NoStandardErrorsWarning
from privest.learn.results import FitResults
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.central import public_design

__all__ = [
    "LOGISTIC_SHARE",
    "CalibratedFitResults",
    "central_results",
    "logistic_cov",
    "logistic_inference",
    "nearest_psd",
    "noisy_gram",
]

#: share of the fit's zCDP rho spent on the releases only the logistic standard errors need
#: (its simulated design needs the features' X'X)
LOGISTIC_SHARE = 0.1
#: bootstrap refits and Newton steps of the logistic parametric bootstrap
N_BOOTSTRAP = 200
NEWTON_STEPS = 4
#: central-model privacy line of the summary
SPENT = "the fit spent it; the standard errors are post-processing of its releases"


def noisy_gram(
    S: np.ndarray, x_radius: float, rho: float, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    """Release the symmetric Gram matrix S = X^T X of n rows with ||x|| <= x_radius, rho-zCDP.

    The released vector (diagonal, sqrt(2) x upper triangle) has the Frobenius norm of S and
    replacement sensitivity ||x x^T - x'x'^T||_F <= sqrt(2) B^2 (Wang 2018, Alg. 2;
    privest.models.linear's module docstring). Returns the noisy symmetric matrix and the sd
    of one off-diagonal entry (the diagonal's is sqrt(2) times it).
    """
    d = S.shape[0]
    slack = 1.0 + 8.0 * (n + d) * 2.0**-52 * n  # float error of forming the sums (twice)
    iu = np.triu_indices(d, 1)
    mech = lattice_gaussian_zcdp(rho, math.sqrt(2.0) * x_radius**2 * slack, d * (d + 1) // 2)
    w_noisy = mech.release(np.concatenate([np.diag(S), math.sqrt(2.0) * S[iu]]), rng)
    S_noisy = np.diag(w_noisy[:d])
    S_noisy[iu] = w_noisy[d:] / math.sqrt(2.0)
    return S_noisy + np.triu(S_noisy, 1).T, mech.sigma / math.sqrt(2.0)


def nearest_psd(S: np.ndarray) -> np.ndarray:
    """The nearest positive semi-definite matrix to the symmetric part of ``S``."""
    vals, vecs = np.linalg.eigh((S + S.T) / 2.0)
    return (vecs * np.maximum(vals, 0.0)) @ vecs.T


def _sim_design(
    G: np.ndarray, n: int, design: dict[str, Any], rng: np.random.Generator
) -> np.ndarray:
    """n rows from N(mu, Sigma), the moments read off the released Gram of (x - m, c) (m the
    box centre, c ``design["const"]``), clipped to the box and centred at m."""
    p = design["half"].size
    mu = G[:p, p] / (n * design["const"])
    Sigma = nearest_psd(G[:p, :p] / n - np.outer(mu, mu))
    X = rng.multivariate_normal(mu, Sigma, size=n, method="eigh")
    return np.clip(X, -design["half"], design["half"])


def logistic_cov(
    theta: np.ndarray,
    Xs: np.ndarray,
    fit: Callable[[np.ndarray, np.ndarray, np.random.Generator, float], np.ndarray],
    rng: np.random.Generator,
    n_boot: int = N_BOOTSTRAP,
) -> tuple[np.ndarray, np.ndarray]:
    """(theta~, Cov(theta~)) of a shrunk fit by the parametric bootstrap on the simulated
    design rows ``Xs`` (module docstring); ``fit(rows, Y, rng, noise)`` reruns the fit once
    per column of Y (labels, or probabilities for the mean path) with Gaussian noise of
    ``noise`` times the released noise's sd, and returns (d, k). Cov is None when the
    Newton steps do not solve m(theta~) = theta (the shrinkage cannot be undone)."""
    d = theta.size
    h = 1e-4 * max(1.0, float(np.max(np.abs(theta))))
    t_tilde = theta.copy()
    for _ in range(NEWTON_STEPS + 1):  # the mean map is the noise-free path of the fit
        cols = np.column_stack([t_tilde, t_tilde[:, None] + h * np.eye(d)])
        m = fit(Xs, expit(Xs @ cols), rng, 0.0)
        M = (m[:, 1:] - m[:, :1]) / h
        gap = theta - m[:, 0]
        if np.linalg.cond(M) > 1e6:
            return t_tilde, None
        t_tilde = t_tilde + np.linalg.solve(M, gap)
    if np.max(np.abs(gap)) > 1e-3 * max(1.0, float(np.max(np.abs(theta)))):
        return t_tilde, None
    Y = (rng.random((Xs.shape[0], n_boot)) < expit(Xs @ t_tilde)[:, None]).astype(float)
    M_inv = np.linalg.inv(M)
    return t_tilde, M_inv @ np.cov(fit(Xs, Y, rng, 1.0)) @ M_inv.T


def logistic_inference(
    est: Any,
    X: np.ndarray,
    bounds: np.ndarray,
    theta: np.ndarray,
    fit: Callable[[np.ndarray, np.ndarray, np.random.Generator, float], np.ndarray],
    rng: np.random.Generator,
) -> FitResults:
    """The results of a binary noisy-GD fit: one charged release (the Gram of the centred
    features and a constant, with ``LOGISTIC_SHARE`` of rho), then post-processing only."""
    n, p = X.shape
    gd = public_design(bounds, np.array([0.0, 1.0]), True)
    gd["half"] = (bounds[:, 1] - bounds[:, 0]) / 2.0
    fd = dict(public_design(bounds, np.array([0.0, 1.0]), est.fit_intercept), y_centre=0.0)
    if est.inference == "none":
        note = "no standard errors (inference='none')"
        return central_results(est, theta, None, fd, n, "noisy_gd", "none", [note])
    rho = zcdp_rho_for(est.epsilon, est.delta) * LOGISTIC_SHARE
    rows = np.hstack([X - gd["centre"], np.full((n, 1), gd["const"])])
    G, _ = noisy_gram(rows.T @ rows, gd["x_radius"], rho, n, rng)
    est.released_gram_ = G
    # post-processing of the releases (G, theta) from here on
    Xs = _sim_design(G, n, gd, rng)
    Xs = np.hstack([Xs, np.full((n, 1), gd["const"])]) if est.fit_intercept else Xs + gd["centre"]
    t_tilde, cov = logistic_cov(theta, Xs, fit, rng)
    if cov is None:
        warnings.warn(
            "results_: the shrinkage of the noisy GD steps could not be undone (the released "
            "fit is too far from any model's mean fit): no standard errors; more records, a "
            "larger epsilon or features on [-1, 1] help",
            NoStandardErrorsWarning,
            stacklevel=3,
        )
        note = "no standard errors: the shrinkage of the T steps could not be undone"
        return central_results(est, theta, None, fd, n, "noisy_gd", "none", [note])
    how = "parametric bootstrap (sampling and privacy noise)"
    note = "params: the fit with the shrinkage of its T steps undone (indirect inference)"
    return central_results(est, t_tilde, cov, fd, n, "noisy_gd", how, [note])


@dataclass
class CalibratedFitResults(FitResults):
    """:class:`~privest.learn.results.FitResults` whose ``pvalues`` come from a null
    simulated from the noise law where ``null_pvalues`` is not NaN (the normal approximation
    elsewhere); ``summary()`` says which (docs/central-models.md, "Calibrated Wald tests and
    intervals"). With ``null_intervals``, ``conf_int`` of those rows inverts the same
    simulated test: 0 is in a row's interval iff its p-value is >= alpha."""

    null_pvalues: pd.Series | None = None
    #: how the simulated p-values were obtained (a line of the summary)
    calibration: str = ""
    #: ``conf_int(alpha)`` -> (k, 2) intervals of the k simulated rows, in order (None: the
    #: Wald intervals everywhere)
    null_intervals: Any = None

    def _simulated(self) -> np.ndarray:
        """Which rows have simulated p-values."""
        sim = self.null_pvalues
        return np.zeros(self.params.size, bool) if sim is None else ~np.isnan(sim.to_numpy())

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values: simulated null where calibrated, normal approximation else."""
        z = np.abs(self.tvalues.to_numpy())
        normal = 2 * stats.norm.sf(z)
        sim = np.full(z.size, np.nan) if self.null_pvalues is None else self.null_pvalues
        p = np.where(np.isnan(sim) | np.isnan(z), normal, sim)
        return pd.Series(p, index=self.params.index, name="p_value")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Intervals at level 1 - alpha: the inverted simulated test on the simulated rows
        (with ``null_intervals``), Wald intervals elsewhere."""
        out = super().conf_int(alpha)
        rows = self._simulated()
        if self.null_intervals is not None and rows.any():
            out.loc[rows, ["ci_lower", "ci_upper"]] = self.null_intervals.conf_int(float(alpha))
        return out

    def to_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """:meth:`FitResults.to_frame` with, where some rows are simulated, ``z`` renamed
        ``z_first_order`` (coef / std_err, which the simulated p-values do not use) and a
        column ``p_ci`` naming how each row's p-value and interval were obtained."""
        frame = super().to_frame(alpha)
        rows = self._simulated()
        if rows.any():
            frame = frame.rename(columns={"z": "z_first_order"})
            how = "simulated" if self.null_intervals is not None else "p simulated"
            kind = np.where(rows, how, "normal")
            frame.insert(frame.columns.get_loc("ci_upper") + 1, "p_ci", kind)
        return frame

    def summary(self, alpha: float = 0.05) -> Any:
        """The table and header of :meth:`FitResults.summary`, plus a line naming which
        p-values (and intervals) are calibrated by simulation and which use the normal
        approximation."""
        out = super().summary(alpha)
        sim = self.null_pvalues
        done = [] if sim is None else [str(k) for k, v in sim.items() if not np.isnan(v)]
        what = "p-values and intervals" if self.null_intervals is not None else "p-values"
        line = "p-values: normal approximation"
        if done:
            rest = [str(k) for k in self.params.index if str(k) not in done]
            line = f"{what}: {self.calibration} for {', '.join(done)}"
            line += f"; normal approximation for {', '.join(rest)}" if rest else ""
            out.header.append(line)
            line = (
                "z_first_order: coef / std_err (the normal approximation; the simulated "
                "rows' p_value and interval do not use it)"
            )
        out.header.append(line)
        return out


def central_results(
    est: Any,
    theta: np.ndarray,
    cov: np.ndarray | None,
    design: dict[str, Any],
    n: int,
    method: str,
    inference: str,
    notes: list[str],
    null_pvalues: np.ndarray | None = None,
    null_intervals: Any = None,
    classes: Any = None,
) -> FitResults:
    """The :class:`~privest.learn.results.FitResults` of a central fit in the user's
    coordinates: (intercept, coef) = J theta + (y centre, 0), so Cov = J Cov(theta) J'.
    ``null_pvalues`` (theta coordinates) are simulated p-values of the coefficients (the
    intercept, a combination of theta, keeps the normal approximation): a
    :class:`CalibratedFitResults` then, whose simulated rows take their intervals from
    ``null_intervals`` (``conf_int(alpha)`` -> (p, 2) for the coefficients) if given. With
    ``classes`` (a multinomial model) theta stacks one block per listed class and the params
    are indexed by (class, parameter)."""
    p = est.n_features_in_
    names = list(getattr(est, "feature_names_in_", [f"x{j}" for j in range(p)]))
    J = np.eye(p, theta.size // (1 if classes is None else len(classes)))
    if est.fit_intercept:
        J = np.vstack([np.append(-design["centre"], design["const"]), J])
        names = ["intercept", *names]
    index = pd.Index([str(v) for v in names], name="parameter")
    if classes is not None:
        J = np.kron(np.eye(len(classes)), J)
        levels = [[str(c) for c in classes], list(index)]
        index = pd.MultiIndex.from_product(levels, names=["class", "parameter"])
    params = J @ theta
    if est.fit_intercept:
        params[:: len(names)] += design["y_centre"]
    extra: dict[str, Any] = {}
    if null_pvalues is not None:
        sim = np.full(params.size, np.nan)
        sim[int(est.fit_intercept) :] = null_pvalues[:p]
        calibration = "simulated null (2,000 draws from the noise law)"
        extra = {"null_pvalues": pd.Series(sim, index=index), "calibration": calibration}
        extra["null_intervals"] = null_intervals
    return (CalibratedFitResults if extra else FitResults)(
        params=pd.Series(params, index=index, name="coef"),
        cov=None if cov is None else J @ cov @ J.T,
        on_bound=pd.Series(False, index=index),
        nobs=n,
        method=method,
        inference=inference,
        converged=True,
        model=type(est).__name__,
        guarantee=est.guarantee,
        notes=notes,
        spent=SPENT,
        **extra,
    )
