"""Exact samplers in Python integers, for noise whose integer scale outgrows int64.

The smooth-sensitivity mechanism (``mechanisms/smooth_sensitivity.py``) scales its noise to a
data-dependent smooth sensitivity on a public grid, so its integer scale ``t`` ranges over
many octaves and its acceptance tests compare integers like ``t^gamma``. Everything here is
integer arithmetic on uniform words from the caller's generator (drawn in bulk, used by
rejection), so every probability is exact:

- :meth:`Bits.below`: a uniform integer in ``[0, n)`` for any ``n``;
- :meth:`Bits.bernoulli_exp`: Bernoulli(exp(-num/den)) (Canonne, Kamath and Steinke 2020,
  Alg. 1);
- :func:`discrete_laplace_big`: P(k) proportional to ``exp(-|k|/t)`` (CKS20 Alg. 2, integer t);
- :func:`power_law_big`: P(k) proportional to ``t^gamma / (t^gamma + |k|^gamma)``, the
  discrete generalised Cauchy law, by rejection from a mixture of uniforms on
  ``[0, t 2^j)`` with ``P(j) = 2^-(j+1)`` (proposal mass ``(2/3) 4^-j0 / t`` at ``m``, ``j0``
  the least ``j`` with ``t 2^j > m``), accepted with the rational probability
  ``t^gamma 4^(j0-1) / (t^gamma + m^gamma)`` (``/4`` more for ``j0 = 0``), which is at most
  1 for ``gamma >= 2``; the accepted magnitude has mass ``w(m) / (6 t)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["Bits", "discrete_gaussian_big", "discrete_laplace_big", "power_law_big"]

_WORD = 62
_SPAN = 1 << _WORD
_TWO = np.uint64(2)
#: bit generators whose raw output is their 64-bit word: for them ``integers(0, 2^62)``
#: is the raw word shifted right by 2 (Lemire's method on a power-of-two range rejects
#: nothing), the same words for a fraction of the call's fixed cost
#: (tests/mechanisms/test_fast_paths.py compares them)
_RAW64 = ("numpy.random._pcg64.PCG64", "randomgen.aes.AESCounter")


def _raw64(bit_generator: Any) -> bool:
    kind = type(bit_generator)
    return f"{kind.__module__}.{kind.__qualname__}" in _RAW64


class Bits:
    """Uniform integers from a generator's 62-bit words, drawn in blocks of ``block``
    (``integers(0, 2^62, size=block)``, or the same words from the raw stream)."""

    def __init__(self, rng: np.random.Generator, block: int = 4096):
        self._rng, self._block = rng, block
        self._words: list[int] = []
        self._raw = _raw64(rng.bit_generator)

    def _refill(self) -> None:
        if self._raw:
            self._words = (self._rng.bit_generator.random_raw(self._block) >> _TWO).tolist()
        else:
            self._words = self._rng.integers(0, _SPAN, size=self._block).tolist()

    def word(self) -> int:
        if not self._words:
            self._refill()
        return self._words.pop()

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``: ``ceil(bits / 62)`` words, rejected above the
        largest multiple of ``n``."""
        if n < _SPAN:  # one word: the same draws as below, without the loop over words
            limit = _SPAN - _SPAN % n
            while True:
                if not self._words:
                    self._refill()
                u = self._words.pop()
                if u < limit:
                    return u % n
        chunks = max(1, -(-n.bit_length() // _WORD))
        span = 1 << (_WORD * chunks)
        limit = span - span % n
        while True:
            u = 0
            for _ in range(chunks):
                u = (u << _WORD) | self.word()
            if u < limit:
                return u % n

    def coin(self) -> bool:
        return self.below(2) == 1

    def bernoulli(self, num: int, den: int) -> bool:
        """Bernoulli(num / den) for integers ``0 <= num <= den``."""
        return self.below(den) < num

    def bernoulli_exp(self, num: int, den: int) -> bool:
        """Bernoulli(exp(-num/den)) for integers ``num >= 0``, ``den > 0`` (CKS20 Alg. 1)."""
        whole, frac = divmod(num, den)
        for _ in range(whole):  # Bernoulli(exp(-1)) each
            if not self._bernoulli_exp_unit(1, 1):
                return False
        return self._bernoulli_exp_unit(frac, den)

    def _bernoulli_exp_unit(self, num: int, den: int) -> bool:
        k = 1
        while self.bernoulli(num, den * k):  # Bernoulli(gamma / k)
            k += 1
        return k % 2 == 1

    def geometric_exp1(self) -> int:
        """Successes of Bernoulli(exp(-1)) before the first failure."""
        v = 0
        while self._bernoulli_exp_unit(1, 1):
            v += 1
        return v

    def geometric_half(self) -> int:
        """Heads before the first tail of a fair coin: ``P(j) = 2^-(j+1)``."""
        j = 0
        while self.coin():
            j += 1
        return j


def discrete_laplace_big(
    t: int, size: int, rng: np.random.Generator, bits: Bits | None = None
) -> list[int]:
    """``size`` exact draws with P(k) proportional to ``exp(-|k|/t)``, any integer ``t >= 1``."""
    bits, out = bits or Bits(rng), []
    while len(out) < size:
        u = bits.below(t)
        if not bits.bernoulli_exp(u, t):
            continue
        y = u + t * bits.geometric_exp1()
        neg = bits.coin()
        if neg and y == 0:
            continue
        out.append(-y if neg else y)
    return out


def discrete_gaussian_big(sigma2: int, size: int, rng: np.random.Generator) -> list[int]:
    """``size`` exact draws with P(k) proportional to ``exp(-k^2 / (2 sigma2))`` (CKS20 Alg. 3,
    integer ``sigma2``): discrete Laplace candidates at ``t = isqrt(sigma2) + 1`` accepted with
    Bernoulli(exp(-(|Y| t - sigma2)^2 / (2 sigma2 t^2))). The fast path for a few draws."""
    bits, out = Bits(rng, block=64), []
    t = math.isqrt(sigma2) + 1
    den = 2 * sigma2 * t * t
    while len(out) < size:
        (y,) = discrete_laplace_big(t, 1, rng, bits)
        if bits.bernoulli_exp((abs(y) * t - sigma2) ** 2, den):
            out.append(y)
    return out


def power_law_big(t: int, gamma: int, size: int, rng: np.random.Generator) -> list[int]:
    """``size`` exact draws with P(k) proportional to ``t^g / (t^g + |k|^g)``, integers
    ``t >= 1`` and ``g >= 2`` (module docstring; about ``12 / I_g`` proposals per draw,
    ``I_g = 2 (pi/g) / sin(pi/g)``: 5.4 for g = 4)."""
    if gamma < 2:
        raise ValueError("power_law_big needs an integer gamma >= 2")
    bits, out = Bits(rng), []
    tg = t**gamma
    while len(out) < size:
        j = bits.geometric_half()
        m = bits.below(t << j)
        neg = bits.coin()
        if neg and m == 0:
            continue
        j0 = 0 if m < t else (m // t).bit_length()  # least j0 with t 2^j0 > m
        den = tg + m**gamma
        if j0 == 0:
            ok = bits.bernoulli(tg, 4 * den)
        else:
            ok = bits.bernoulli(tg << (2 * (j0 - 1)), den)
        if ok:
            out.append(-m if neg else m)
    return out
