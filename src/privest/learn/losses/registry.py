"""The one registry of loss names, for both estimation families (docs/vocabulary.md, "loss").

A name maps to one loss class (its module defines it, with its capabilities); each family
builds it with its own arguments:

* ``"dr"``: corrected-loss M-estimation on ZIL releases (paper 000, Secs. 4-7): the index
  or per-record form l(x, y, theta) of a :class:`~privest.learn.losses.base.Loss` (DR, SL,
  SDR);
* ``"iwp"``: IWP-SGD on locally private examples (paper 004, Sec. 5.2): the margin form
  f(y theta'x) of a :class:`~privest.learn.losses.margin.MarginLoss`, with its inverse
  Weierstrass transform (shared instances, :func:`get_margin_loss`).

``"squared"`` and ``"linear"`` are one loss (:class:`~privest.learn.losses.index.SquaredLoss`):
for labels in {-1, +1} the margin loss (1 - y theta'x)^2 / 2 equals (y - theta'x)^2 / 2.
A name a family cannot use is refused with a message naming the families that support it
(e.g. ``"hinge"`` is not smooth, so it has no inverse Weierstrass transform;
``"exponential"`` has no DR form). Adding a loss: its module (the class and its
capabilities), one :func:`register_loss` below, its tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from privest.errors import ValidationError
from privest.learn.losses.index import HingeLoss, LogisticLoss, QuantileRegressionLoss, SquaredLoss
from privest.learn.losses.margin import ExponentialLoss, MarginLoss
from privest.learn.losses.relu_net import ReLUNetLoss
from privest.learn.losses.scalar import (
    ScalarQuantileLoss,
    abs_sin_squared,
    indicator_squared,
    relu_squared,
)

__all__ = [
    "FAMILIES",
    "LossSpec",
    "canonical_name",
    "get_margin_loss",
    "loss_families",
    "loss_names",
    "register_loss",
    "resolve_loss",
]

FAMILIES: dict[str, str] = {
    "dr": "corrected-loss M-estimation on ZIL releases (DR, SL, SDR; paper 000)",
    "iwp": "IWP-SGD on locally private examples (paper 004)",
}


def _iwp(cls: type[MarginLoss]) -> Callable[..., MarginLoss]:
    def build(**kwargs: Any) -> MarginLoss:
        if kwargs:
            raise TypeError(f"the IWP margin loss takes no arguments, got {sorted(kwargs)}")
        return cls()

    return build


def _hinge_iwp(**kwargs: Any) -> Any:
    raise NotImplementedError(
        "loss: the hinge loss is not smooth, so its inverse Weierstrass transform does not "
        "exist (paper 004 covers C^inf losses); use 'logistic' as a smooth surrogate, or the "
        "hinge loss with the DR estimators (DRHingeClassifier)"
    )


@dataclass(frozen=True)
class LossSpec:
    """A loss name, what it is, and one builder per supported family."""

    name: str
    description: str
    builders: dict[str, Callable[..., Any]] = field(default_factory=dict)
    refusals: dict[str, Callable[..., Any]] = field(default_factory=dict)
    shown_as: dict[str, str] = field(default_factory=dict)  # a family's own spelling

    def label(self, family: str) -> str:
        return self.shown_as.get(family, self.name)


_SPECS: dict[str, LossSpec] = {}
_ALIASES: dict[str, str] = {"linear": "squared"}  # the DR catalogue's name


def register_loss(spec: LossSpec) -> None:
    """Make ``spec.name`` a loss name (a loss's one registration; the names of the built-in
    losses are registered below). A name is registered once."""
    if spec.name in _SPECS or spec.name in _ALIASES:
        raise ValidationError(f"loss: {spec.name!r} is already registered")
    _SPECS[spec.name] = spec


register_loss(
    LossSpec(
        "logistic",
        "log(1 + exp(-y u))",
        {"dr": LogisticLoss, "iwp": _iwp(LogisticLoss)},
    )
)
register_loss(
    LossSpec(
        "squared",
        "least squares (y - u)^2; margin form (1 - y u)^2 / 2 (alias 'linear')",
        {"dr": SquaredLoss, "iwp": _iwp(SquaredLoss)},
        shown_as={"dr": "linear"},
    )
)
register_loss(
    LossSpec("exponential", "exp(-y u) (closed-form IWP loss)", {"iwp": _iwp(ExponentialLoss)})
)
register_loss(
    LossSpec(
        "hinge",
        "max(0, 1 - y u) (not smooth)",
        {"dr": HingeLoss},
        refusals={"iwp": _hinge_iwp},
    )
)
register_loss(
    LossSpec("quantile", "check loss of a linear quantile", {"dr": QuantileRegressionLoss})
)
register_loss(LossSpec("relu", "(y - max(0, x'beta))^2", {"dr": relu_squared}))
register_loss(LossSpec("indicator", "(y - 1(x'beta > 0))^2", {"dr": indicator_squared}))
register_loss(LossSpec("abs_sin", "(y - |sin(x'beta)|)^2", {"dr": abs_sin_squared}))
register_loss(LossSpec("scalar_quantile", "quantile of one column", {"dr": ScalarQuantileLoss}))
register_loss(LossSpec("relu_net", "one-hidden-layer ReLU network (squared)", {"dr": ReLUNetLoss}))


def loss_names(family: str | None = None, aliases: bool = True) -> tuple[str, ...]:
    """Registered names, all or those one family supports (in its own spelling first)."""
    specs = [s for s in _SPECS.values() if family is None or family in s.builders]
    names = [s.label(family) if family else s.name for s in specs]
    for s in specs if aliases else ():  # the other spellings last
        names += [a for a in (s.name, *_aliases(s.name)) if a not in names]
    return tuple(names)


def _aliases(name: str) -> list[str]:
    return [a for a, n in _ALIASES.items() if n == name]


def canonical_name(name: str) -> str:
    """The registry's name for a spelling ('linear' -> 'squared'); unknown names unchanged."""
    return _ALIASES.get(name, name)


def loss_families(name: str) -> tuple[str, ...]:
    """The families that support ``name`` (empty for an unknown name)."""
    spec = _SPECS.get(_ALIASES.get(name, name))
    return tuple(spec.builders) if spec else ()


def resolve_loss(name: str, family: str, **kwargs: Any) -> Any:
    """The ``family``'s loss object for ``name``; a clear error when it does not apply."""
    if family not in FAMILIES:
        raise ValidationError(f"family: {family!r} is unknown; accepted: {sorted(FAMILIES)}")
    key = _ALIASES.get(name, name) if isinstance(name, str) else None
    spec = _SPECS.get(key) if key is not None else None
    if spec is None:
        raise ValidationError(
            f"loss: {name!r} is not a known loss; {FAMILIES[family]} accepts "
            f"{', '.join(loss_names(family))}, or a loss object of its own type"
        )
    if family in spec.refusals:
        spec.refusals[family](**kwargs)
    if family not in spec.builders:
        others = "; ".join(f"{f}: {FAMILIES[f]}" for f in spec.builders)
        raise ValidationError(
            f"loss: {name!r} is not supported by {FAMILIES[family]}; it is supported by "
            f"{others}. Supported here: {', '.join(loss_names(family))}"
        )
    try:
        return spec.builders[family](**kwargs)
    except TypeError as exc:
        raise ValidationError(f"loss {name!r}: bad keyword arguments {kwargs}: {exc}") from None


_BUILT: dict[str, MarginLoss] = {}


def get_margin_loss(loss: str | MarginLoss) -> MarginLoss:
    """A :class:`~privest.learn.losses.margin.MarginLoss` (returned as it is), or a name of
    family ``"iwp"``: 'exponential', 'logistic', 'squared' alias 'linear' ('hinge' is
    refused, not smooth). The built-in losses are shared instances; what IWP-SGD does with
    them is read from their capabilities, never from their names."""
    if isinstance(loss, MarginLoss):
        return loss
    key = canonical_name(loss) if isinstance(loss, str) else repr(loss)
    cached = _BUILT.get(key)
    if cached is None:
        cached = _BUILT[key] = resolve_loss(loss, "iwp")
    return cached
