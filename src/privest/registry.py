"""Registries of the statistics and the mechanisms that release them (docs/mechanisms.md).

Two tables, each entry one frozen spec, importable without numpy (the ``privest`` command
lists their names in ``--help``):

* :class:`StatisticSpec`: a statistic's name, what it needs (bounds, a level), whether it
  decomposes over partitions (a function of per-part totals: out of core and in tables),
  and where its pieces live: the exact computation, the global sensitivity under each
  neighbour relation, the reach profile of paper 002 (Sec. 3.1);
* :class:`MechanismSpec`: a mechanism's name, its class, the statistics it releases, the
  public inputs its choice reads, whether it takes a lattice ``resolution``, the statistics
  it releases under add/remove neighbours, and whether ``mechanism="auto"`` may pick it.
  Every registered mechanism is float-safe (its releases lie on a public lattice, sampled
  exactly): tests/mechanisms/test_float_safety.py attacks every registered pair.

Targets are ``"module:attribute"`` strings, imported on first use (:func:`load`), so the
registries cost nothing at start-up. ``auto``, the CLI's choices and the docs' table
(:func:`markdown_table`) read them. A new mechanism is its module, one
:func:`register_mechanism` line (below, for the built-in ones) and its tests.
"""

from __future__ import annotations

import importlib
import numbers
from dataclasses import dataclass
from typing import Any

from privest.errors import ValidationError

__all__ = [
    "MechanismSpec",
    "StatisticSpec",
    "load",
    "markdown_table",
    "mechanism_names",
    "mechanism_spec",
    "parse_statistic",
    "quantile_level",
    "register_mechanism",
    "register_statistic",
    "statistic_names",
    "statistic_spec",
]


@dataclass(frozen=True)
class StatisticSpec:
    """One statistic of 1-D data (module docstring)."""

    name: str
    summary: str
    #: takes a level in (0, 1] (``"quantile:0.9"``)
    level: bool = False
    needs_bounds: bool = True
    #: a function of per-partition totals (Dask backends, table cells)
    decomposes: bool = False
    #: ``"module:function"`` ``(statistic, domain, n) -> float``: the global sensitivity
    sensitivity: str = "privest.mechanisms.profiles.sensitivity:global_sensitivity"
    #: ``"module:function"`` ``(x, bounds, *, clip[, quantile][, max_level])``: the reach
    #: profile of paper 002 (``(indicators)`` alone for statistics without bounds)
    profile: str | None = None
    #: its reaches cost a pass per level, so they may be truncated (paper 002, Sec. 5.2)
    truncatable: bool = False
    #: ``"module:function"`` the public rule of ``mechanism="auto"``
    auto: str = "privest.mechanisms.auto:auto_mechanism"


@dataclass(frozen=True)
class MechanismSpec:
    """One mechanism of the catalogue (module docstring)."""

    name: str
    #: ``"module:Class"``, a :class:`~privest.mechanisms.statistic.StatisticMechanism`
    target: str
    statistics: tuple[str, ...]
    summary: str
    #: the public inputs its release (and ``auto``'s choice of it) reads
    reads: tuple[str, ...] = ("epsilon", "bounds")
    #: releases on a public lattice (takes ``resolution=``)
    lattice: bool = False
    #: statistics it releases under add/remove neighbours (n private)
    add_remove: tuple[str, ...] = ()
    #: ``mechanism="auto"`` may choose it
    auto: bool = True
    #: where it comes from, e.g. ``"paper 002, Sec. 3"``
    source: str = ""


_STATISTICS: dict[str, StatisticSpec] = {}
_MECHANISMS: dict[str, MechanismSpec] = {}


def register_statistic(spec: StatisticSpec) -> StatisticSpec:
    """Add a statistic (a name may be registered once)."""
    if spec.name in _STATISTICS or ":" in spec.name:
        raise ValidationError(f"statistic: {spec.name!r} is registered already or malformed")
    _STATISTICS[spec.name] = spec
    return spec


def register_mechanism(spec: MechanismSpec) -> MechanismSpec:
    """Add a mechanism; the statistics it names must be registered first."""
    if spec.name in _MECHANISMS or spec.name == "auto":
        raise ValidationError(f"mechanism: {spec.name!r} is registered already or reserved")
    unknown = [s for s in (*spec.statistics, *spec.add_remove) if s not in _STATISTICS]
    if unknown or not set(spec.add_remove) <= set(spec.statistics):
        raise ValidationError(f"mechanism: {spec.name!r} names unknown statistics {unknown}")
    _MECHANISMS[spec.name] = spec
    return spec


def statistic_names() -> tuple[str, ...]:
    """The registered statistics, in registration order."""
    return tuple(_STATISTICS)


def statistic_spec(name: str) -> StatisticSpec:
    """The spec of ``name`` (``"quantile:0.9"`` reads as ``"quantile"``)."""
    base = name.partition(":")[0].strip()
    if base not in _STATISTICS:
        raise ValidationError(
            f"statistic: {name!r} is unknown; accepted: {', '.join(_STATISTICS)} "
            "(quantile as 'quantile:Q', Q in (0, 1])"
        )
    return _STATISTICS[base]


def quantile_level(q: Any) -> float:
    """``q`` checked as a quantile level: a number in (0, 1] (docs/vocabulary.md; quantile 0
    is refused)."""
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 < q <= 1:
        raise ValidationError(f"quantile: {q!r} must be a number in (0, 1]")
    return float(q)


def parse_statistic(spec: str) -> tuple[str, float | None]:
    """``"median"``, ``"quantile:0.9"``, ``"mean"``, ... -> (name, q); names are those of
    :func:`statistic_names`. Imports no numerical library (the command line checks its
    options with it before loading one)."""
    if not isinstance(spec, str):
        raise ValidationError(f"statistic: {spec!r} is not a string such as 'median'")
    name, _, arg = spec.partition(":")
    entry = statistic_spec(name.strip().lower())
    if entry.level:
        if not arg:
            return entry.name, None  # the level comes as quantile= (callers require it)
        try:
            q = float(arg)
        except ValueError:
            raise ValidationError(
                f"statistic: {spec!r} needs the level, e.g. 'quantile:0.9'"
            ) from None
        return entry.name, quantile_level(q)
    if arg:
        raise ValidationError(f"statistic: {spec!r} takes no argument")
    return entry.name, None


def mechanism_names(statistic: str | None = None, *, auto: bool = True) -> tuple[str, ...]:
    """The registered mechanisms (those releasing ``statistic``), with ``"auto"`` first
    unless ``auto=False``."""
    base = None if statistic is None else statistic_spec(statistic).name
    names = tuple(n for n, m in _MECHANISMS.items() if base is None or base in m.statistics)
    return ("auto", *names) if auto else names


def mechanism_spec(name: str) -> MechanismSpec:
    """The spec of the mechanism ``name``."""
    if name not in _MECHANISMS:
        raise ValidationError(
            f"mechanism: {name!r} is unknown; accepted: {', '.join(mechanism_names())}"
        )
    return _MECHANISMS[name]


def load(target: str) -> Any:
    """The object a ``"module:attribute"`` target names (imported on first use)."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def markdown_table() -> str:
    """The mechanisms as a Markdown table (docs/mechanisms.md holds it verbatim)."""
    rows = [
        "| mechanism | statistics | lattice | add/remove | auto | source |",
        "|---|---|---|---|---|---|",
    ]
    for m in _MECHANISMS.values():
        rows.append(
            f"| `{m.name}` | {', '.join(m.statistics)} | {'yes' if m.lattice else '-'} | "
            f"{', '.join(m.add_remove) or '-'} | "
            f"{'yes' if m.auto else '-'} | {m.source} |"
        )
    return "\n".join(rows)


# --- the built-in statistics ------------------------------------------------------------
_REACHES = "privest.mechanisms.profiles.reaches"
register_statistic(StatisticSpec("median", "the median", profile=f"{_REACHES}:median_profile"))
register_statistic(
    StatisticSpec("quantile", "a quantile", level=True, profile=f"{_REACHES}:quantile_profile")
)
register_statistic(
    StatisticSpec("mean", "the mean", decomposes=True, profile=f"{_REACHES}:mean_profile")
)
register_statistic(
    StatisticSpec("sum", "the sum", decomposes=True, profile=f"{_REACHES}:sum_profile")
)
register_statistic(
    StatisticSpec(
        "count",
        "a count (0/1 indicators)",
        needs_bounds=False,
        decomposes=True,
        profile=f"{_REACHES}:count_profile",
    )
)
register_statistic(
    StatisticSpec(
        "variance",
        "the population variance",
        decomposes=True,
        profile="privest.mechanisms.profiles.variance:variance_profile",
        truncatable=True,
    )
)

# --- the built-in mechanisms (one registration each) --------------------------------------------
_M = "privest.mechanisms"
_ORDER = ("median", "quantile")
_ALL = ("median", "quantile", "mean", "sum", "count", "variance")
register_mechanism(
    MechanismSpec(
        "piecewise_laplace",
        f"{_M}.piecewise_laplace:PiecewiseLaplace",
        _ALL,
        "noise following the data's gaps (the staircase on a lattice for order statistics)",
        reads=("epsilon", "bounds", "resolution", "quantile"),
        lattice=True,
        source="paper 002, Sec. 3",
    )
)
register_mechanism(
    MechanismSpec(
        "inverse_sensitivity",
        f"{_M}.inverse_sensitivity:InverseSensitivity",
        _ALL,
        "uniform inside the same pieces",
        reads=("epsilon", "bounds", "resolution", "quantile"),
        lattice=True,
        source="paper 002, Sec. 4.2",
    )
)
register_mechanism(
    MechanismSpec(
        "smooth_sensitivity",
        f"{_M}.smooth_sensitivity:SmoothSensitivity",
        _ORDER,
        "generalised Cauchy noise scaled to the smooth sensitivity",
        reads=("epsilon", "bounds", "quantile"),
        auto=False,
        source="Nissim, Raskhodnikova and Smith 2007",
    )
)
register_mechanism(
    MechanismSpec(
        "permute_and_flip",
        f"{_M}.lattice_pf:PermuteAndFlip",
        _ORDER,
        "permute-and-flip over the public lattice points",
        reads=("epsilon", "bounds", "resolution", "quantile", "n"),
        lattice=True,
        source="McKenna and Sheldon 2020",
    )
)
register_mechanism(
    MechanismSpec(
        "two_stage",
        f"{_M}.two_stage:TwoStage",
        _ORDER,
        "a noisy coarse histogram, then the staircase on the shrunk bounds",
        reads=("epsilon", "bounds", "resolution", "quantile"),
        lattice=True,
        auto=False,
        source="privest (docs/piecewise-laplace.md)",
    )
)
register_mechanism(
    MechanismSpec(
        "laplace",
        f"{_M}.laplace:LaplaceMechanism",
        _ALL,
        "Laplace noise with the global sensitivity, on a public lattice",
        add_remove=("sum", "count"),
        source="paper 002, Sec. 2",
    )
)
register_mechanism(
    MechanismSpec(
        "ptr",
        f"{_M}.ptr_median:PTRMedian",
        _ORDER,
        "propose-test-release with a proposed local sensitivity ((eps, delta)-DP)",
        reads=("epsilon", "delta", "bounds", "quantile", "local_sensitivity"),
        auto=False,
        source="paper 001, Alg. 1",
    )
)
register_mechanism(
    MechanismSpec(
        "discrete_laplace",
        f"{_M}.discrete_laplace:DiscreteLaplace",
        ("count",),
        "two-sided geometric noise: integer counts",
        add_remove=("count",),
        source="Ghosh, Roughgarden and Sundararajan 2009",
    )
)
register_mechanism(
    MechanismSpec(
        "rank_exponential",
        f"{_M}.rank_exponential:RankExponential",
        _ORDER,
        "the exponential mechanism over the lattice points with the rank utility",
        reads=("epsilon", "bounds", "resolution", "quantile"),
        lattice=True,
        add_remove=_ORDER,
        auto=False,
        source="McSherry and Talwar 2007; Smith 2011",
    )
)
