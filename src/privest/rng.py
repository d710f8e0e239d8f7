"""Randomness for privest: secure by default, reproducible when seeded.

A real release must draw its noise from a cryptographically secure bit stream
(anchors.md pitfall 8): ``make_rng()`` keys randomgen's AES-128 counter-mode generator
(hardware AES where the CPU has it) from the operating system's entropy.
``make_rng(seed)`` gives numpy's PCG64 for reproducible experiments; :func:`rng_kind`
tells the two apart and every release records it.
"""

from __future__ import annotations

import secrets
from typing import Literal

import numpy as np

RNGKind = Literal["secure", "seeded"]
_SPAWN_KEY = 0x70726976  # "priv"

__all__ = ["RNGKind", "make_rng", "rng_kind"]


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

        return np.random.Generator(AESCounter(key=secrets.randbits(128), counter=0))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        from privest.errors import ValidationError

        raise ValidationError(f"seed: {seed!r} must be None (secure) or a non-negative integer")
    # A privest-specific spawn key keeps this stream apart from numpy's default_rng(seed):
    # the same integer seeding both the data and the noise must not correlate them.
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=(_SPAWN_KEY,)))
    )


def rng_kind(rng: np.random.Generator) -> RNGKind:
    """``"secure"`` if ``rng`` draws from a cryptographic bit generator, else ``"seeded"``."""
    name = type(rng.bit_generator).__name__
    return "secure" if name in {"ChaCha", "AESCounter", "SPECK128"} else "seeded"


def resolve_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Accept a Generator, a seed or ``None`` (secure) wherever an ``rng=`` argument is taken."""
    if isinstance(rng, np.random.Generator):
        return rng
    return make_rng(rng)
