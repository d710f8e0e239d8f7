"""Accuracy of a ZIL release and of the DR fits made on it, before any data (paper 000;
docs/accuracy.md, "The ZIL release").

* One released value of a noised column: ``X1 - x`` is 0 with probability ``zero_prob``,
  else Laplace with variance ``s^2``, ``s = lam (hi - lo)`` (Algorithm 1: ``sqrt(W) N(0,
  s^2)``, ``W ~ Exp(1)``, is Laplace of scale ``s / sqrt 2``), so
  ``P(|err| > a) = (1 - zero_prob) exp(-sqrt(2) a / s)`` exactly.
* The mean of a noised column over the n released records: the noise adds
  ``s sqrt((1 - zero_prob) / n)`` of standard error (central limit).
* A DR fit (or SL, SDR): the standard errors of Thm 5.3's sandwich ``V^-1 A V^-1 / n``
  evaluated at the true parameters on a stated design (``design=``: features uniform on the
  public bounds by default, a stated shape per column, or a public reference table of
  feature rows), a response from a guessed linear or logistic model kept unnoised by the analyst,
  released by the mechanism itself in a simulation of ``n_sim`` records with a fixed seed
  (:mod:`privest.learn.objective` and :mod:`privest.learn.inference`, the code the fit
  uses). The standard errors include the sampling error of the data.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from privest.accuracy.base import (
    Accuracy,
    NormalErrorLaw,
    ReferenceData,
    check_alpha,
    solve_public,
)
from privest.errors import SeededRandomnessWarning, ValidationError
from privest.learn.design import analysis_data
from privest.learn.inference import (
    IndefiniteHessianError,
    hessian_estimate,
    sandwich,
    score_covariance,
)
from privest.learn.losses import LogisticLoss, SquaredLoss
from privest.learn.objective import CorrectedObjective
from privest.mechanisms.laws.base import OutputLaw
from privest.release.zil import ZILMechanism

__all__ = ["ZILValueLaw", "predict_zil", "zil_parameter_for"]

#: records of the simulated design (the Monte Carlo error of a predicted SE is ~1/sqrt of it)
N_SIM = 100_000
MODELS = ("linear", "logistic")


class ZILValueLaw(OutputLaw):
    """The error of one released value of a noised column (module docstring)."""

    def __init__(self, scale: float, zero_prob: float):
        self.scale, self.zero_prob = float(scale), float(zero_prob)
        self.value, self.epsilon = 0.0, math.nan

    def error_sf(self, alpha: ArrayLike) -> np.ndarray:
        a = np.maximum(np.asarray(alpha, dtype=float), 0.0)
        return (1.0 - self.zero_prob) * np.exp(-math.sqrt(2.0) * a / self.scale)

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        return 1.0 - self.error_sf(alpha)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        half = 0.5 * self.error_sf(np.abs(y))
        return np.where(y < 0, half, 1.0 - half)

    def cdf_left(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        return np.where(y <= 0, 0.5 * self.error_sf(np.abs(y)), self.cdf(y))

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        a = np.abs(np.asarray(y, dtype=float))
        b = self.scale / math.sqrt(2.0)
        return np.log1p(-self.zero_prob) - a / b - math.log(2.0 * b)

    def sample(self, size: Any = None, rng: Any = None) -> Any:
        gen = np.random.default_rng(rng)
        keep = gen.random(size) >= self.zero_prob
        return keep * gen.laplace(0.0, self.scale / math.sqrt(2.0), size)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        q = np.asarray(p, dtype=float)
        with np.errstate(divide="ignore"):
            a = -self.scale / math.sqrt(2.0) * np.log((1.0 - q) / (1.0 - self.zero_prob))
        return np.where(q <= self.zero_prob, 0.0, a)

    def error_mse(self) -> float:
        return (1.0 - self.zero_prob) * self.scale**2


def _names(mech: ZILMechanism) -> list[str]:
    return (
        [str(c) for c in mech.columns]
        if mech.columns is not None
        else [f"x{j}" for j in range(mech.bounds.shape[0])]
    )


def _coef(coef: Any, names: list[str]) -> np.ndarray:
    if isinstance(coef, Mapping):
        missing = [c for c in names if c not in coef]
        if missing or set(coef) - set(names):
            raise ValidationError(f"coef: give one value per noised column {names}")
        coef = [coef[c] for c in names]
    beta = np.asarray(coef, dtype=float).reshape(-1)
    if beta.shape != (len(names),) or not np.all(np.isfinite(beta)):
        raise ValidationError(f"coef: {coef!r} must be {len(names)} finite numbers")
    return beta


def _design_rows(
    mech: ZILMechanism, design: Any, n_sim: int, rng: np.random.Generator, seed: int
) -> tuple[np.ndarray, str]:
    """``n_sim`` feature rows of the stated design, and the design in words.

    ``design``: None (each feature uniform on its public bounds); a mapping column ->
    :class:`ReferenceData` (or its shape name or fields) for each noised column; or a public
    reference table of feature rows (a DataFrame with the noised columns, or an array of
    their width), resampled with replacement and clipped to the bounds."""
    names = _names(mech)
    lo, hi = mech.bounds[:, 0], mech.bounds[:, 1]
    if design is None:
        return lo + rng.random((n_sim, lo.size)) * (hi - lo), "features uniform on the bounds"
    if isinstance(design, Mapping):
        unknown = set(design) - set(names)
        if unknown:
            raise ValidationError(f"design: no noised column named {sorted(unknown)}")
        cols, words = [], []
        for j, name in enumerate(names):
            ref = replace(ReferenceData.of(design.get(name)), draws=1, seed=seed + j)
            bounds = (float(lo[j]), float(hi[j]))
            cols.append(ref.samples(n_sim, bounds)[0])
            words.append(f"{name} {ref.spread(bounds)}")
        return np.column_stack(cols), "; ".join(words)
    if isinstance(design, pd.DataFrame):
        missing = [c for c in names if c not in design.columns]
        if missing:
            raise ValidationError(f"design: the reference table has no column(s) {missing}")
        table = design[names].to_numpy(dtype=float)
    else:
        table = np.asarray(design, dtype=float)
    if table.ndim != 2 or table.shape[1] != len(names) or table.shape[0] < 2:
        raise ValidationError(
            f"design: a reference table needs rows of the {len(names)} noised columns {names}"
        )
    if not np.all(np.isfinite(table)):
        raise ValidationError("design: the reference table has missing or infinite values")
    rows = np.clip(table[rng.integers(0, table.shape[0], n_sim)], lo, hi)
    return rows, f"features resampled from a public reference table of {table.shape[0]} rows"


def _dr_cov(
    mech: ZILMechanism,
    n: int,
    model: str,
    beta: np.ndarray,
    intercept: float,
    noise_sd: float,
    method: str,
    n_sim: int,
    seed: int,
    design: Any,
) -> tuple[np.ndarray, str]:
    """The sandwich covariance of the fit at n records of the simulated design, and the
    design in words."""
    rng = np.random.default_rng(seed)
    x, words = _design_rows(mech, design, n_sim, rng, seed)
    index = intercept + x @ beta
    if model == "linear":
        y = index + noise_sd * rng.standard_normal(n_sim)
        loss = SquaredLoss(fit_intercept=True)
    else:
        y = (rng.random(n_sim) < 1.0 / (1.0 + np.exp(-index))).astype(float)
        loss = LogisticLoss(fit_intercept=True)
    data = pd.DataFrame(x, columns=_names(mech)) if mech.columns is not None else x
    with warnings.catch_warnings():  # a simulation: its seeded noise is never published
        warnings.simplefilter("ignore", SeededRandomnessWarning)
        rel = mech.release(data, rng=rng)
    obj = CorrectedObjective(loss, analysis_data(rel, y), method)
    theta = np.r_[intercept, beta]
    cov = sandwich(hessian_estimate(obj, theta), score_covariance(obj, theta), n)
    return cov, words


def predict_zil(
    mechanism: ZILMechanism,
    *,
    n: int,
    model: str | None = None,
    coef: Any = None,
    intercept: float = 0.0,
    noise_sd: float = 1.0,
    method: str = "dr",
    alpha: float = 0.05,
    n_sim: int = N_SIM,
    seed: int = 0,
    design: Any = None,
) -> list[Accuracy]:
    """The predicted accuracy of a release by ``mechanism`` of ``n`` records (module
    docstring): for each noised column one released value and the column's mean; with
    ``model`` (``"linear"``, residual sd ``noise_sd``, or ``"logistic"``) and guessed
    ``coef`` (one per noised column, or a mapping) and ``intercept``, each parameter of a
    ``method`` fit (``"dr"``, ``"sl"``, ``"sdr"``) on the release with an unnoised
    response, its features drawn from ``design`` (None: uniform on the bounds; a mapping
    column -> :class:`ReferenceData` shape; or a public reference table of feature rows)."""
    alpha = check_alpha(alpha)
    if not isinstance(mechanism, ZILMechanism):
        raise ValidationError(f"mechanism: a {type(mechanism).__name__} is not a ZILMechanism")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValidationError(f"n: {n!r} must be a whole number >= 2")
    names = _names(mechanism)
    zp = mechanism.zero_prob
    scales = mechanism.lam * (mechanism.bounds[:, 1] - mechanism.bounds[:, 0])
    out = []
    for name, s, (lo, hi) in zip(names, scales, mechanism.bounds, strict=True):
        out.append(
            Accuracy(
                f"value of {name}",
                ZILValueLaw(s, zp),
                alpha,
                "zil",
                int(n),
                plausible=(float(lo), float(hi)),
            )
        )
        mean_law = NormalErrorLaw(s * math.sqrt((1.0 - zp) / n))
        out.append(
            Accuracy(
                f"mean of {name}",
                mean_law,
                alpha,
                "zil",
                int(n),
                "normal approximation (central limit)",
                (float(lo), float(hi)),
            )
        )
    if model is None:
        return out
    if model not in MODELS:
        raise ValidationError(f"model: {model!r} is not one of {', '.join(MODELS)}")
    if coef is None:
        raise ValidationError("coef: a guessed coefficient per noised column is needed")
    beta = _coef(coef, names)
    cov, words = _dr_cov(
        mechanism,
        int(n),
        model,
        beta,
        float(intercept),
        float(noise_sd),
        method,
        int(n_sim),
        int(seed),
        design,
    )
    guess = ", ".join(f"{c}={b:g}" for c, b in zip(names, beta, strict=True))
    assumption = (
        f"{method} {model} fit; assumes {words}, {guess}, intercept "
        f"{intercept:g}"
        + (f", residual sd {noise_sd:g}" if model == "linear" else "")
        + f", response unnoised; sandwich (Thm 5.3) on {n_sim} simulated records"
    )
    for name, se in zip(["intercept", *names], np.sqrt(np.diag(cov)), strict=True):
        out.append(
            Accuracy(f"{model} {name}", NormalErrorLaw(se), alpha, method, int(n), assumption)
        )
    return out


def zil_parameter_for(
    half_width: float,
    *,
    solve: str,
    bounds: Any,
    n: int,
    quantity: str | None = None,
    lam: float | None = None,
    zero_prob: float | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    unit: str = "individual",
    **prediction: Any,
) -> float:
    """The ZIL parameter ``solve`` (``"lam"``, ``"zero_prob"`` or ``"epsilon"``) at which
    the predicted half-width of ``quantity`` (default: the widest of the predictions of
    :func:`predict_zil` with ``prediction``'s options) is at most ``half_width``: the
    largest lam (``zero_prob`` given), the least zero_prob (``lam`` given), or the least
    epsilon (``delta`` and ``zero_prob`` given; lam calibrated)."""

    def mech_at(v: float) -> ZILMechanism:
        if solve == "lam":
            return ZILMechanism(v, zero_prob, bounds)
        if solve == "zero_prob":
            return ZILMechanism(lam, v, bounds)
        return ZILMechanism.calibrate(v, delta, zero_prob, bounds, unit=unit)

    def widest(v: float) -> float:
        try:
            preds = predict_zil(mech_at(v), n=n, **prediction)
        except IndefiniteHessianError:  # so much noise that the fit has no sandwich
            return math.inf
        chosen = [a for a in preds if quantity is None or a.quantity == quantity]
        if not chosen:
            raise ValidationError(
                f"quantity: {quantity!r} is not predicted; have {[a.quantity for a in preds]}"
            )
        return max(a.half_width for a in chosen)

    needs = {"lam": ("zero_prob",), "zero_prob": ("lam",), "epsilon": ("delta", "zero_prob")}
    if solve not in needs:
        raise ValidationError(f"solve: {solve!r} is not one of lam, zero_prob, epsilon")
    given = {"lam": lam, "zero_prob": zero_prob, "epsilon": epsilon, "delta": delta}
    missing = [k for k in needs[solve] if given[k] is None]
    if missing or given[solve] is not None:
        raise ValidationError(f"solve={solve!r}: give {', '.join(needs[solve])} and not {solve}")
    ranges = {"lam": (1e-3, 10.0), "zero_prob": (1e-3, 0.999), "epsilon": (1e-2, 1e2)}
    lo, hi = ranges[solve]
    if solve == "epsilon":
        lo = max(lo, _least_epsilon(delta, zero_prob, bounds, unit))
    return solve_public(widest, half_width, name=solve, lo=lo, hi=hi, increasing=solve == "lam")


def _least_epsilon(delta: float, zero_prob: float, bounds: Any, unit: str) -> float:
    """A little above the least epsilon that (delta, zero_prob) can be calibrated at."""
    from privest.errors import UnreachableTargetError

    eps = 1e-2
    while eps < 1e2:
        try:
            ZILMechanism.calibrate(eps, delta, zero_prob, bounds, unit=unit)
            return eps
        except UnreachableTargetError:
            eps *= 1.25
    raise ValidationError(f"delta: {delta:g} cannot be reached with zero_prob={zero_prob:g}")
