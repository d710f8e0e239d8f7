"""The public rule behind ``mechanism="auto"`` (docs/mechanisms.md, "Choosing the mechanism").

The rule reads only public inputs: the statistic, the :class:`~privest.domain.Domain`
(bounds, resolution, neighbour relation) and epsilon; it reads neither the data nor n, and
the choice spends no privacy.

* Statistics that decompose over records (count, sum, mean, variance; the registry's
  ``decomposes``): among the registered mechanisms ``auto`` may choose that release the
  statistic under the domain's neighbour relation and whose noise does not depend on the
  data (they have a ``noise_law``), the one with the least expected absolute error, from
  its exact noise law (ties: registration order). Adding such a mechanism to the registry
  makes it the default wherever it is better.
* Order statistics (median, quantiles): permute-and-flip (McKenna and Sheldon 2020) over the
  lattice points when the user declares a ``resolution`` and the bounds hold at most
  ``PF_MAX_CANDIDATES`` of them (a coarse public lattice, e.g. integer data); else the
  piecewise Laplace staircase on the fine default lattice (paper 002). On a declared
  lattice both run on the same points, aim at the same target, and permute-and-flip is at
  or below the staircase in 359 of 360 measured cells (worst +0.2%); without
  one, permute-and-flip needs a coarse grid of its own, which gains on some data and loses
  without bound on data concentrated relative to the bounds, in the same public cell
  (n, eps, q): no public rule takes the gain without the loss (measured per public cell in
  docs/piecewise-laplace.md, "Permute-and-flip and choosing the mechanism").
"""

from __future__ import annotations

import functools
import math

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.lattice_pf import PF_MAX_CANDIDATES
from privest.mechanisms.profiles.reaches import parse_statistic
from privest.registry import (
    MechanismSpec,
    load,
    mechanism_names,
    mechanism_spec,
    statistic_spec,
)

__all__ = ["auto_mechanism"]


def _pf_lattice(name: str, domain: Domain) -> bool:
    """A median/quantile on a declared lattice small enough for permute-and-flip (public)."""
    if name not in ("median", "quantile") or domain.resolution is None or domain.bounds is None:
        return False
    a, b = domain.interval()
    step = domain.resolution
    return math.floor(b / step) - math.ceil(a / step) + 1 <= PF_MAX_CANDIDATES


def _candidates(name: str, domain: Domain) -> list[str]:
    out = []
    for m in mechanism_names(name, auto=False):
        spec = mechanism_spec(m)
        relation_ok = domain.neighbours == "swap" or name in spec.add_remove
        if spec.auto and relation_ok and hasattr(load(spec.target), "noise_law"):
            out.append(m)
    return out


def auto_mechanism(
    statistic: str, *, domain: Domain, epsilon: float = 1.0, n: int | None = None
) -> str:
    """The mechanism ``auto`` picks (module docstring); public inputs only, no data.
    ``n`` (public under swap neighbours) only sizes the planning noise laws."""
    # the same public inputs give the same choice while the registry (which only grows)
    # keeps its size; a typed cache keeps 1 and True apart (True is refused below)
    if not isinstance(epsilon, (int, float)):  # the mechanisms word the refusal
        return _choose.__wrapped__(statistic, domain, epsilon, n, 0)
    return _choose(statistic, domain, epsilon, n, len(mechanism_names()))


@functools.lru_cache(maxsize=256, typed=True)
def _choose(
    statistic: str, domain: Domain, epsilon: float, n: int | None, registry_size: int
) -> str:
    """:func:`auto_mechanism`, cached per public inputs and registry size."""
    name, _ = parse_statistic(statistic)
    if not statistic_spec(name).decomposes:
        return "permute_and_flip" if _pf_lattice(name, domain) else "piecewise_laplace"
    names = _candidates(name, domain)
    if not names:
        raise ValidationError(
            f"mechanism: no registered mechanism releases the {name} under "
            f"{domain.relation}; accepted relations are listed in docs/mechanisms.md"
        )
    n_plan = n if n is not None else 2  # the relative errors do not depend on n
    specs = tuple(mechanism_spec(m) for m in names)
    if not isinstance(epsilon, (int, float)):  # the mechanisms word the refusal
        return _least_error.__wrapped__(statistic, domain, epsilon, n_plan, specs)
    return _least_error(statistic, domain, epsilon, n_plan, specs)


@functools.lru_cache(maxsize=256)
def _least_error(
    statistic: str, domain: Domain, epsilon: float, n: int, specs: tuple[MechanismSpec, ...]
) -> str:
    """The candidate with the least expected absolute error (ties: the first): public
    inputs only, so it is computed once per process for each set of them (the specs in
    the key: a mechanism registered later makes a new key)."""

    def error(spec: MechanismSpec) -> float:
        mech = load(spec.target)(statistic, epsilon=epsilon, domain=domain)
        return float(mech.noise_law(n).error_mean_abs())

    return min(specs, key=error).name
