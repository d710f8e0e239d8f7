"""The mechanism contract: the one shape of every privest mechanism, local or central.

Built from public parameters only (a :class:`~privest.domain.Domain` and privacy
parameters); :attr:`Mechanism.guarantee` is known before any data is seen;
``release(data, rng=...)`` returns a released object (:mod:`privest.released`, or a local
release) that carries the same guarantee. Every mechanism of every paper implements it:
the ZIL release (paper 000), ePTR (001), the statistic mechanisms (002) and the example
release of paper 004.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from privest.accounting.base import Guarantee

__all__ = ["Mechanism"]


class Mechanism(ABC):
    """The one shape of every privest mechanism, local or central.

    Built from public parameters only; :attr:`guarantee` is known before any data is seen;
    ``release(data, rng=...)`` returns a released object that carries the same guarantee.
    ``rng=None`` draws from the secure generator (:func:`privest.make_rng`).
    """

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The privacy guarantee of one release."""

    @abstractmethod
    def release(self, data: Any, rng: Any = None) -> Any:
        """Release ``data`` once; the result carries :attr:`guarantee`."""
