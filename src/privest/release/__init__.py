"""Local mechanisms that release data (paper 000: ZIL; paper 004: Gaussian features and
randomized-response labels) and the append-only release store.

Names load on first use (PEP 562), so the command line's ZIL release imports neither the
paper-004 module nor what it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from privest.release.columns import ReleasedColumns
    from privest.release.examples import (
        ExampleMechanism,
        PrivateExamples,
        RegressionExampleMechanism,
        release_examples,
        release_regression_examples,
    )
    from privest.release.manifest import read_manifest
    from privest.release.store import save_release
    from privest.release.zil import ZILMechanism, ZILRelease, load_release

_WHERE = {
    "ExampleMechanism": "examples",
    "PrivateExamples": "examples",
    "RegressionExampleMechanism": "examples",
    "ReleasedColumns": "columns",
    "ZILMechanism": "zil",
    "ZILRelease": "zil",
    "load_release": "zil",
    "read_manifest": "manifest",
    "release_examples": "examples",
    "release_regression_examples": "examples",
    "save_release": "store",
}

_SUBMODULES = ("columns", "examples", "examples_io", "ids", "manifest", "store", "zil")

#: kept literal for linters; the same names as _WHERE
__all__ = [
    "ExampleMechanism",
    "PrivateExamples",
    "RegressionExampleMechanism",
    "ReleasedColumns",
    "ZILMechanism",
    "ZILRelease",
    "load_release",
    "read_manifest",
    "release_examples",
    "release_regression_examples",
    "save_release",
]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"privest.release.{name}")
    if name not in _WHERE:
        raise AttributeError(f"module 'privest.release' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"privest.release.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
