"""Local mechanisms that release data (paper 000: ZIL; paper 004: Gaussian features and
randomized-response labels) and the append-only release store."""

from privest.release.examples import (
    ExampleMechanism,
    PrivateExamples,
    RegressionExampleMechanism,
    release_examples,
    release_regression_examples,
)
from privest.release.store import load_release, read_manifest, save_release
from privest.release.zil import ZILMechanism, ZILRelease

__all__ = [
    "ExampleMechanism",
    "PrivateExamples",
    "RegressionExampleMechanism",
    "ZILMechanism",
    "ZILRelease",
    "load_release",
    "read_manifest",
    "release_examples",
    "release_regression_examples",
    "save_release",
]
