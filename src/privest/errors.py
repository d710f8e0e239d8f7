"""Exception types of privest.

Every error subclasses ``ValueError`` (bad input) or ``RuntimeError`` (a state or
numerical failure), so callers that catch the builtin types keep working.
"""

from __future__ import annotations


class PrivestError(Exception):
    """Base class of every error raised by privest."""


class ValidationError(PrivestError, ValueError):
    """An argument has a bad value, type or shape; the message names all three."""


class BoundsError(ValidationError):
    """Data bounds are malformed, or data fall outside them and clipping was not asked for."""


class PrivacyParameterError(ValidationError):
    """A privacy parameter (epsilon, delta, lam, ...) is outside its accepted range."""


class UnreachableTargetError(ValidationError):
    """A privacy target cannot be met by the mechanism with the given parameters."""


class StoreError(PrivestError, RuntimeError):
    """A release store is missing, corrupt or cannot be written."""


class DuplicateRecordError(StoreError):
    """A record id was already released: releasing it again would compose privacy loss."""


class EstimationError(PrivestError, RuntimeError):
    """A fit produced no meaningful estimate (e.g. most parameters on the parameter box)."""


class BudgetExceededError(PrivestError, RuntimeError):
    """A query would spend more than what is left of its privacy budget; nothing was read."""


class NothingReleasedWarning(UserWarning):
    """A central model output its data-independent bottom: nothing was released.

    That nothing was released is itself part of the public output, so the warning leaks
    nothing; its message states the release condition in terms of public settings and what
    to change (never a data value).
    """


class ConstantFallbackWarning(UserWarning):
    """A private regression output its private constant predictor (the private mean of the
    response) because, judged on its released quantities only, its noisy slopes would add
    more error than they explain (``fallback_`` is True; docs/central-models.md)."""


class UnstableIntervalWarning(UserWarning):
    """A central model's standard errors rest on a released X'X whose noise is comparable to
    its smallest eigenvalue: they are computed conservatively and the results say so
    (docs/central-models.md, "Standard errors, intervals and Wald tests")."""


class NoiseDominatedWarning(UserWarning):
    """A corrected-loss fit (DR, SL, SDR) has a coefficient whose feature's public noise
    variance is many times that feature's own variance as the release shows it: its Wald
    (sandwich) interval is too short, so ``results_`` marks it and ``score_conf_int`` gives
    the interval to use (docs/dr-estimation.md, "Which intervals to trust")."""


class NoCompileCacheWarning(UserWarning):
    """numba found no writable cache for a compiled kernel of privest, so the kernel is
    compiled again in every new process (seconds each); setting ``NUMBA_CACHE_DIR`` to a
    writable directory compiles it once."""


class NoStandardErrorsWarning(UserWarning):
    """A central model's ``results_`` carry no standard errors because the inference could
    not be computed from its releases (e.g. the noisy GD bootstrap could not undo the
    shrinkage of the fit's steps); the results' notes say why (docs/central-models.md)."""


class PrivacyHabitWarning(UserWarning):
    """A scikit-learn habit that spends or leaks privacy around a private estimator: a
    data-dependent scaler before it in a Pipeline, or a model search / cross-validation
    that refits it on the same records (:mod:`privest.sklearn_contract`)."""


class SeededRandomnessWarning(UserWarning):
    """A release drew its noise from seeded (or caller-supplied) randomness: reproducible,
    hence for experiments only, never for a real release (docs/randomness.md)."""


class NoRecordIdsWarning(UserWarning):
    """Records were written to a release store without record ids, by the caller's explicit
    choice (``ids=False``, ``--no-ids``): such a store cannot refuse to release a record
    twice (docs/zil-release.md, "The release store")."""
