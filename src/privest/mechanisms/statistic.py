"""The statistic mechanisms' common class: one named statistic of 1-D data (paper 002).

A :class:`StatisticMechanism` is built from its :class:`~privest.domain.Domain` (the
public bounds, the lattice resolution, the neighbour relation) and epsilon; it states its
guarantee relative to the domain's neighbour relation before any data is read, and refuses
a relation it does not support. :meth:`StatisticMechanism.law` is the curator's
(non-private) view: the output distribution on a data set; :meth:`release` draws one value
from it as a :class:`~privest.released.PrivateStatistic`.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np

from privest.accounting.base import ApproxDP, Guarantee
from privest.contract import Mechanism
from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.profiles.reaches import parse_statistic, quantile_rank
from privest.registry import MechanismSpec, mechanism_spec
from privest.released import PrivateStatistic
from privest.rng import resolve_rng, rng_kind
from privest.validation import check_epsilon

__all__ = ["StatisticMechanism"]


class StatisticMechanism(Mechanism):
    """A pure eps-DP central mechanism for one named statistic of 1-D data (paper 002).

    ``statistic`` is ``"median"``, ``"quantile"`` (with ``quantile``, the level in (0, 1],
    or ``"quantile:0.9"``), ``"mean"``, ``"sum"``, ``"count"`` (data are 0/1 indicators)
    or ``"variance"``. The public facts come as ``domain=`` (a
    :class:`~privest.domain.Domain`) or as ``bounds=`` (and ``resolution=`` for the lattice
    mechanisms), which build one; bounds are not needed for counts. ``clip`` clips
    out-of-bounds data instead of raising. By default neighbours swap one record (n is
    public); ``Domain(neighbours="add_remove")`` is accepted for the statistics in
    :attr:`add_remove` and refused for the others.

    :meth:`law` is the curator's view: the output distribution on a data set (density,
    exact error laws); it reveals the data and is never to be published. :meth:`release`
    draws one value from it and returns a :class:`~privest.released.PrivateStatistic`.
    """

    #: the name under which the mechanism is registered (:mod:`privest.registry`): its
    #: spec there says which statistics it releases, under which neighbour relations, and
    #: whether it takes a lattice ``resolution``
    name: str = "statistic"

    def __init__(
        self,
        statistic: str = "median",
        *,
        epsilon: float,
        bounds: Any = None,
        quantile: float | None = None,
        clip: bool = False,
        domain: Domain | None = None,
        resolution: float | None = None,
    ) -> None:
        name, q_spec = parse_statistic(statistic)
        entry = self.registered()
        if name not in entry.statistics:
            raise ValidationError(
                f"statistic: {self.name} does not release the {name}; accepted: "
                f"{', '.join(entry.statistics)}"
            )
        q = q_spec if quantile is None else quantile
        if name == "quantile":
            if q is None:
                raise ValidationError("quantile: the level is required, e.g. quantile=0.9")
            quantile_rank(q, 1)  # validates the level in (0, 1]
            if q == 0.5:  # one concept, one release: the median (same target, law, label)
                name, q = "median", None
        elif q is not None:
            raise ValidationError(
                f"quantile: only the quantile statistic takes a level; got quantile={q!r}"
            )
        dom = Domain.of(domain, bounds=bounds, resolution=resolution)
        if dom.resolution is not None and not entry.lattice:
            raise ValidationError(
                f"resolution: {self.name} does not release on a lattice; the lattice "
                "mechanisms take it (privest.registry.mechanism_names())"
            )
        if dom.neighbours != "swap" and name not in entry.add_remove:
            raise ValidationError(
                f"neighbours: {self.name} releases the {name} under swap neighbours only (n "
                "public); "
                + (
                    f"under add/remove it releases {', '.join(entry.add_remove)}"
                    if entry.add_remove
                    else "choose a mechanism that supports add/remove"
                )
            )
        self.statistic, self.q = name, q
        self.epsilon = check_epsilon(epsilon)
        self.domain = dom
        self.bounds = None if name == "count" else dom.interval()
        self.clip = bool(clip)

    @classmethod
    def registered(cls) -> MechanismSpec:
        """This mechanism's entry in the registry (:func:`privest.registry.mechanism_spec`)."""
        return mechanism_spec(cls.name)

    @property
    def guarantee(self) -> Guarantee:
        """Pure epsilon-DP under the domain's neighbour relation."""
        return ApproxDP(self.epsilon)

    @property
    def label(self) -> str:
        """``"median"``, ``"quantile 0.9"``, ..."""
        return f"quantile {self.q:g}" if self.statistic == "quantile" else self.statistic

    @property
    def spec(self) -> str:
        """The statistic as one string: ``"median"``, ``"quantile:0.9"``, ..."""
        return f"quantile:{self.q}" if self.statistic == "quantile" else self.statistic

    @abstractmethod
    def law(self, x: Any) -> OutputLaw:
        """NON-PRIVATE: the output distribution of this mechanism on the data ``x``."""

    def release(self, x: Any, rng: Any = None, *, budget: Any = None, label: str = "") -> Any:
        """One eps-DP release of the statistic of ``x`` (a ``PrivateStatistic``).

        ``budget`` (a :class:`~privest.Budget`) is charged before ``x`` is read; ``label``
        names the spend (default: the statistic).
        """
        from privest.accounting.budget import charge

        charge(budget, self.guarantee, label=label or self.label, mechanism=self.name)
        gen = resolve_rng(rng)
        return self.release_from_law(self.law(x), int(np.size(x)), gen)

    def release_from_law(self, law: OutputLaw, n: int, gen: np.random.Generator) -> Any:
        """One draw of ``law`` (this mechanism's law on data of ``n`` records) as the
        release; what :meth:`release` does once it has the law (a backend builds the same
        law from partition sums, :func:`privest.models.statistics.statistic_law`)."""
        value = float(law.sample(None, gen))
        clamp = getattr(law, "clamp", None)
        if clamp is not None:  # post-processing into the statistic's public range
            value = float(clamp(value))
        return PrivateStatistic(
            value,
            statistic=self.label,
            mechanism=self.name,
            guarantee=self.guarantee,
            n=n if self.domain.n_public else None,  # n is private under add/remove
            bounds=self.bounds,
            randomness=rng_kind(gen),
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.spec!r}, epsilon={self.epsilon:g}, "
            f"bounds={self.bounds}, clip={self.clip})"
        )
