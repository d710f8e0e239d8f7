"""Releasing straight into a release store: the seam through which a backend releases data
it holds (docs/zil-release.md, "The release store"; docs/scale-out.md).

:func:`release_to_store` and :func:`out_of_core` are dispatch functions
(:mod:`privest.backends`): the in-memory implementations are here; a backend registers its
own for its types (Dask DataFrames: partition by partition), and a Parquet path goes to
the ``dask`` engine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privest.backends import dispatch, get_engine
from privest.release.columns import ReleasedColumns
from privest.release.store import check_ids_choice, save_release

__all__ = ["PATH_ENGINE", "out_of_core", "release_to_store"]

#: the engine that releases a Parquet path given to ``release(..., store=)``
PATH_ENGINE = "dask"


@dispatch
def out_of_core(data: Any) -> bool:
    """Whether ``data`` is held by a backend (e.g. a Dask DataFrame), whose release goes
    partition by partition into a store (:func:`release_to_store`). A backend registers its
    types; in-memory data are not."""
    return False


@dispatch
def release_to_store(
    data: Any,
    mech: Any,
    store: str | Path,
    *,
    rng: np.random.Generator | int | None = None,
    ids: Any = None,
    append: bool = False,
    budget: Any = None,
    budget_epsilon: float | None = None,
    label: str = "ZIL release",
) -> ReleasedColumns:
    """Release ``data`` with ``mech`` straight into the release store at ``store`` (a new
    one, or ``append=True``) and return the released batch
    (:meth:`~privest.release.zil.ZILMechanism.release` with ``store=``). A dispatch
    function (:mod:`privest.backends`): here in memory (release, then
    :func:`~privest.release.store.save_release`); a backend registers its own for its types
    (Dask: partition by partition); a Parquet path goes to the ``dask`` engine.
    A store needs ``ids`` (one per record, or the name of the id column of a DataFrame, as
    out of core) unless ``ids=False``.
    """
    kwargs = {"rng": rng, "ids": ids, "append": append, "budget": budget, "label": label}
    if isinstance(data, (str, os.PathLike)):
        engine = get_engine(PATH_ENGINE)
        return engine.release_to_store(data, mech, store, budget_epsilon=budget_epsilon, **kwargs)
    check_ids_choice(ids is not None and ids is not False, ids is not False, warn=False)
    if isinstance(ids, str) and isinstance(data, pd.DataFrame) and ids in data.columns:
        data, ids = data.drop(columns=ids), data[ids]
    rel = mech.release(data, rng, ids, budget=budget, budget_epsilon=budget_epsilon, label=label)
    save_release(rel, store, append=append, ids=ids is not False)
    return rel
