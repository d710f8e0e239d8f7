"""The ZIL mechanism's options, shared by ``privest release`` and ``privest privacy``.

``--zero-prob`` is the share of records released without noise (``zero_prob`` of
:class:`~privest.release.zil.ZILMechanism`); ``--delta`` is always the DP delta, the target
that ``--epsilon`` and ``--delta`` calibrate ``lam`` to.
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.errors import ValidationError

__all__ = ["add_mechanism_arguments", "mechanism_from_args"]


def add_mechanism_arguments(p: argparse.ArgumentParser) -> None:
    """``--bounds``, ``--lam``, ``--zero-prob``, ``--epsilon``, ``--delta``, ``--unit``."""
    p.add_argument(
        "--bounds",
        help="public bounds: lo:hi for every noised column, or "
        "name=lo:hi,name2=lo:hi (write --bounds=-1:1 for a negative lo)",
    )
    p.add_argument(
        "--lam",
        type=float,
        help="SL noise scale lambda, in units of each column's range (or calibrate it)",
    )
    p.add_argument(
        "--zero-prob",
        type=float,
        help="zero proportion: share of records released without noise, in (0, 1)",
    )
    p.add_argument("--epsilon", type=float, help="target epsilon (calibrates lambda)")
    p.add_argument(
        "--delta", type=float, help="target DP delta, larger than --zero-prob (calibrates lambda)"
    )
    p.add_argument(
        "--unit",
        choices=["individual", "attribute"],
        default="individual",
        help="the unit the target protects: whole records or single attributes "
        "(default individual)",
    )


def mechanism_from_args(args: argparse.Namespace, bounds: Any, resolution: Any = None) -> Any:
    """The ZIL mechanism of ``--lam/--zero-prob``, or calibrated to ``--epsilon/--delta``."""
    from privest.release.zil import ZILMechanism

    if args.lam is not None:
        if args.epsilon is not None or args.delta is not None:
            raise ValidationError(
                "give either --lam and --zero-prob, or --epsilon, --delta and --zero-prob"
            )
        if args.zero_prob is None:
            raise ValidationError("--zero-prob (the zero proportion) is required with --lam")
        return ZILMechanism(args.lam, args.zero_prob, bounds, clip=args.clip, resolution=resolution)
    if args.epsilon is None or args.delta is None or args.zero_prob is None:
        raise ValidationError(
            "give --lam and --zero-prob, or --epsilon, --delta and --zero-prob to calibrate lam"
        )
    return ZILMechanism.calibrate(
        epsilon=args.epsilon,
        delta=args.delta,
        zero_prob=args.zero_prob,
        bounds=bounds,
        unit=args.unit,
        clip=args.clip,
        resolution=resolution,
    )
