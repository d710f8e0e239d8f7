"""How many BLAS threads a fit uses: one, unless ``PRIVEST_BLAS_THREADS`` says otherwise.

Every fit (the central and ePTR models, IWP-SGD, the DR estimators' solvers) runs inside
:func:`fit_threads`. Their BLAS work is on n x d products with small d and on d x d
matrices, where OpenBLAS threads cost far more CPU than they save wall time
(docs/central-models.md, "Threads"). ``PRIVEST_BLAS_THREADS`` overrides the default: a
positive integer k allows k threads; ``keep`` leaves BLAS as the process has it
(``OPENBLAS_NUM_THREADS``, a threadpoolctl limit set by the caller).
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any

from privest.errors import ValidationError

__all__ = ["ENV_VAR", "blas_thread_limit", "fit_threads"]

#: the environment variable read at every fit
ENV_VAR = "PRIVEST_BLAS_THREADS"


def blas_thread_limit() -> int | None:
    """The number of BLAS threads a fit may use (None: leave BLAS as it is), from
    ``PRIVEST_BLAS_THREADS`` (unset: 1)."""
    value = os.environ.get(ENV_VAR, "1").strip()
    if value.lower() == "keep":
        return None
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise ValidationError(
        f"{ENV_VAR}={value!r}: expected a positive integer (the BLAS threads of a fit) "
        "or 'keep' (leave BLAS as the process has it)"
    )


@functools.cache
def _controller() -> Any:
    """Made once, on the first fit: numpy's and scipy's BLAS are loaded by then (every fit
    module imports scipy.linalg, loaded here too so that the controller sees it)."""
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS before the libraries are listed
    from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

    return ThreadpoolController()


def fit_threads() -> contextlib.AbstractContextManager:
    """A context in which BLAS uses :func:`blas_thread_limit` threads."""
    limit = blas_thread_limit()
    if limit is None:
        return contextlib.nullcontext()
    return _controller().limit(limits=limit, user_api="blas")
