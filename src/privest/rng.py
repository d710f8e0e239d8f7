"""Randomness for privest: secure by default, reproducible when seeded, and labelled by
how it was made.

A real release must draw its noise from a cryptographically secure bit stream:
``make_rng()`` keys randomgen's AES-128 counter-mode generator (hardware AES where the
CPU has it) from the operating system's entropy. ``make_rng(seed)`` gives numpy's PCG64
for reproducible experiments. :func:`rng_kind` says how a generator was made, from the
seeding, not from its class: ``"secure"`` (made by ``make_rng()``, or ``rng=None``),
``"seeded"`` (made by ``make_rng(seed)``, or an integer ``rng``) or ``"user"`` (a
Generator the caller built: privest cannot know how it was seeded, so it is never called
secure). Every release records its kind; stores refuse to mix a non-secure part into a
secure store.
"""

from __future__ import annotations

import secrets
from typing import Literal

import numpy as np

RNGKind = Literal["secure", "seeded", "user"]
_SPAWN_KEY = 0x70726976  # "priv"

__all__ = ["RNGKind", "make_rng", "partition_rng", "resolve_rng", "rng_kind"]


class _SecureGenerator(np.random.Generator):
    """A Generator made by ``make_rng()`` (the class records how it was seeded)."""

    kind: RNGKind = "secure"


class _SeededGenerator(np.random.Generator):
    """A Generator made by ``make_rng(seed)``."""

    kind: RNGKind = "seeded"


def make_rng(seed: int | None = None) -> np.random.Generator:
    """Return a numpy ``Generator``.

    ``seed=None``: AES-128 in counter mode (randomgen's ``AESCounter``) keyed with 128
    bits from ``secrets``, for real releases. An integer seed: ``numpy.random.PCG64``,
    reproducible, for experiments only (its state can be recovered from its outputs); its
    stream differs from ``numpy.random.default_rng(seed)``, so reusing one integer for
    simulated data and for the noise does not correlate them.
    """
    if seed is None:
        from randomgen import AESCounter

        return _SecureGenerator(AESCounter(key=secrets.randbits(128), counter=0))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        from privest.errors import ValidationError

        raise ValidationError(f"seed: {seed!r} must be None (secure) or a non-negative integer")
    # A privest-specific spawn key keeps this stream apart from numpy's default_rng(seed):
    # the same integer seeding both the data and the noise must not correlate them.
    bits = np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=(_SPAWN_KEY,)))
    return _SeededGenerator(bits)


def partition_rng(seed: int | None, index: int) -> np.random.Generator:
    """The generator of partition ``index`` of a partitioned (e.g. Dask) release.

    ``seed=None``: a fresh secure generator (its own 128-bit key from the operating system
    of the machine that draws). An integer seed: PCG64 seeded by the ``index``-th child of
    the seed's SeedSequence, so each partition has its own stream and the release depends on
    the seed and the partition index only, never on which worker draws it or when.
    """
    if seed is None:
        return make_rng()
    make_rng(seed)  # the same checks of the seed
    seq = np.random.SeedSequence(int(seed), spawn_key=(_SPAWN_KEY, int(index)))
    return _SeededGenerator(np.random.PCG64(seq))


def rng_kind(rng: np.random.Generator) -> RNGKind:
    """How ``rng`` was made: ``"secure"``, ``"seeded"`` or ``"user"`` (module docstring).

    A copy (pickle) of a privest generator is a plain Generator again: ``"user"``.
    """
    return getattr(rng, "kind", "user")


def resolve_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Accept a Generator, a seed or ``None`` (secure) wherever an ``rng=`` argument is taken."""
    if isinstance(rng, np.random.Generator):
        return rng
    return make_rng(rng)


def randomness_note(kind: str) -> str:
    """What a user should know about a randomness kind ("" for secure)."""
    if kind == "secure":
        return ""
    if kind == "seeded":
        return "reproducible: for experiments only, never for a real release"
    return "a caller-supplied generator: privest cannot tell whether it is secure"
