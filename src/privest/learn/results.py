"""statsmodels-style results of a fit on released data (paper 000, Thms 5.3 and 6.1).

:class:`FitResults` holds the estimate, its covariance and the context a reader needs to
trust it: the method, the kind of standard errors, n, convergence and the privacy
guarantee of the release the fit used. Parameters that ended on the parameter box
(``theta_bounds``) have no Wald inference: the asymptotic normality of Thm 5.3 needs an
interior minimiser, so their standard error, z, p-value and interval are NaN and the
summary prints "on bound" instead of numbers that would look significant. Parameters
whose Wald interval is known to be too short (``noise_dominated``, set by the DR
estimators' public rule, docs/dr-estimation.md, "Which intervals to trust") keep their
numbers but are marked "*" in the summary, with a note saying what to use instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from privest.errors import ValidationError
from privest.tables import write_table

__all__ = ["FitResults", "FitSummary"]


def _label(name: Any) -> str:
    """A parameter's name as text: a (class, parameter) pair of a multinomial model as
    "class: parameter"."""
    return ": ".join(map(str, name)) if isinstance(name, tuple) else str(name)


@dataclass
class FitSummary:
    """A coefficient table like statsmodels' plus the fit's context; ``str()`` prints both."""

    frame: pd.DataFrame
    header: list[str]
    #: parameters whose printed label gets a "*" (a note in ``header`` says why)
    marked: tuple[Any, ...] = ()

    def __str__(self) -> str:
        shown = self.frame.copy()
        if self.marked:
            shown.index = [f"{_label(k)} *" if k in self.marked else k for k in shown.index]
        on_bound = shown.pop("on_bound") if "on_bound" in shown else None
        body_frame = shown.map(lambda v: f"{v:.4g}" if isinstance(v, float) else v)
        if on_bound is not None and on_bound.any():
            for col in ("std_err", "z", "p_value", "ci_lower", "ci_upper"):
                body_frame.loc[on_bound.to_numpy(), col] = "on bound"
        body = body_frame.to_string()
        rule = "=" * max(len(line) for line in body.splitlines())
        return "\n".join([rule, *self.header, rule, body, rule])

    def rows(self) -> list[dict[str, Any]]:
        """The table as rows: ``parameter`` (a (class, parameter) pair as "class: parameter")
        then one key per column (snake_case)."""
        return [
            {"parameter": _label(name), **dict(zip(self.frame.columns, values, strict=True))}
            for name, values in zip(
                self.frame.index, self.frame.itertuples(index=False), strict=True
            )
        ]

    def save(self, path: str | Path) -> Path:
        """Write the coefficient table as ``.csv`` or ``.json`` (a list of rows)."""
        return write_table(self.rows(), path)


@dataclass
class FitResults:
    """Estimate, covariance and context of one fit (statsmodels' result conventions).

    ``params``, ``bse``, ``tvalues`` (Wald z statistics, statsmodels' name), ``pvalues``
    are Series indexed by parameter name; ``conf_int(alpha)`` and ``cov_params()`` are
    DataFrames. ``on_bound`` marks parameters pinned on ``theta_bounds``: their inference
    is NaN (module docstring). ``noise_dominated`` (None: not assessed) marks parameters
    whose Wald interval is too short by the DR estimators' public rule (module docstring).
    """

    params: pd.Series
    cov: np.ndarray | None
    on_bound: pd.Series
    nobs: int
    method: str
    inference: str
    converged: bool
    model: str
    target: str | None = None
    guarantee: Any = None
    notes: list[str] = field(default_factory=list)
    #: how the guarantee was spent (None: a fit on released data, which spends nothing)
    spent: str | None = None
    noise_dominated: pd.Series | None = None
    #: the summary's note on the parameters marked ``on_bound`` (a model whose "bound" is
    #: another constraint than ``theta_bounds`` says which)
    on_bound_note: str = (
        "note: parameters pinned on theta_bounds have no std err, z, p-value or "
        "interval (Thm 5.3 needs an interior minimiser); files hold them empty (null)"
    )

    @property
    def bse(self) -> pd.Series:
        """Standard errors (NaN on the box or without inference)."""
        if self.cov is None:
            se = np.full(self.params.size, np.nan)
        else:
            se = np.sqrt(np.clip(np.diag(self.cov), 0, None))
        se = np.where(self.on_bound.to_numpy(), np.nan, se)
        return pd.Series(se, index=self.params.index, name="std_err")

    @property
    def tvalues(self) -> pd.Series:
        """Wald statistics coef / std err (asymptotically N(0, 1), Thm 5.3)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.params / self.bse).rename("z")

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of the Wald statistics."""
        z = self.tvalues.to_numpy()
        return pd.Series(2 * stats.norm.sf(np.abs(z)), index=self.params.index, name="p_value")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald intervals at level 1 - alpha: columns ``ci_lower``, ``ci_upper``."""
        a = float(alpha)
        if not 0 < a < 1:
            raise ValidationError(f"alpha: {alpha!r} must be in (0, 1) (1 - confidence level)")
        z = stats.norm.ppf(1 - a / 2)
        se = self.bse
        return pd.DataFrame(
            {"ci_lower": self.params - z * se, "ci_upper": self.params + z * se},
            index=self.params.index,
        )

    def cov_params(self) -> pd.DataFrame:
        """The estimated covariance of the parameters (NaN without inference)."""
        cov = np.full((self.params.size,) * 2, np.nan) if self.cov is None else self.cov
        return pd.DataFrame(cov, index=self.params.index, columns=self.params.index)

    def to_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per parameter: coef, std_err, z, p_value, ci_lower, ci_upper, on_bound."""
        frame = pd.concat(
            [
                self.params.rename("coef"),
                self.bse,
                self.tvalues,
                self.pvalues,
                self.conf_int(alpha),
                self.on_bound.rename("on_bound"),
            ],
            axis=1,
        )
        frame.index.name = "parameter"
        return frame

    def summary(self, alpha: float = 0.05) -> FitSummary:
        """The coefficient table at level 1 - alpha with a header: target, method, standard
        errors, n, convergence and the privacy guarantee of the release."""
        header = [
            f"{self.model}: target={self.target or '-'}, method={self.method}, n={self.nobs}",
            f"standard errors: {self.inference}, intervals at {1 - alpha:.0%}, "
            f"converged={self.converged}, on box: {int(self.on_bound.sum())}",
            "privacy: "
            + (
                "raw data (oracle, no privacy)"
                if self.guarantee is None
                else f"{self.guarantee} ("
                + (self.spent or "fitting spends no privacy budget: post-processing")
                + ")"
            ),
            *self.notes,
        ]
        if self.on_bound.any():
            header.append(self.on_bound_note)
        marked: tuple[Any, ...] = ()
        if self.noise_dominated is not None and self.noise_dominated.any():
            marked = tuple(self.params.index[self.noise_dominated.to_numpy()])
            header.append(
                f"note: * {', '.join(map(_label, marked))}: the noise variance of the feature "
                "may be many times its own, so the Wald interval is too short; use the fit's "
                "score_conf_int(release, y) (docs/dr-estimation.md, 'Which intervals to trust')"
            )
        return FitSummary(self.to_frame(alpha), header, marked)

    def save(self, path: str | Path, alpha: float = 0.05) -> Path:
        """Write the coefficient table as ``.csv`` or ``.json`` (keys as in :meth:`to_frame`)."""
        return self.summary(alpha).save(path)

    def __repr__(self) -> str:
        return (
            f"<FitResults {self.model} of {self.target or '-'}: {self.params.size} parameters, "
            f"method={self.method}, n={self.nobs}; .summary() prints the table>"
        )

    def _repr_html_(self) -> str:
        """Notebook view: the header and the coefficient table (privest.reports.reprs)."""
        from privest.reports.reprs import results_html

        return results_html(self)
