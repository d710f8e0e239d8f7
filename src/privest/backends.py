"""Backends: where the data live, and the one seam through which a backend joins the core.

The core (``release/``, ``learn/``, ``mechanisms/``, ``models/``, ``accounting/``) never
imports a backend. An operation whose implementation depends on where the data are held
(``private_statistic``, ``load_release``, a corrected-loss objective, an IWP fit) is a
:func:`dispatch` function: :func:`functools.singledispatch` on the type of its first
argument, with the in-memory implementation as the default. A backend (``privest.scale``
for Dask) registers its own implementations with ``func.register(DaskType)`` when it is
imported, and names its storage engine with :func:`register_engine`.

Backends are found through the entry-point group ``privest.backends`` (``pyproject.toml``:
``dask = "privest.scale"``), loaded the first time a dispatch function meets a type from
outside numpy, pandas and the standard library, or an engine name it does not know. A
backend whose extra is not installed is absent: its types cannot be met, and an engine of
its name is refused with the install command (:func:`get_engine`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, TypeVar

from privest.errors import ValidationError

__all__ = ["ENTRY_POINT_GROUP", "dispatch", "get_engine", "load_backends", "register_engine"]

ENTRY_POINT_GROUP = "privest.backends"
#: the install command of each backend shipped as an extra (for the refusal's message)
_EXTRAS = {"dask": "pip install 'privest[dask]'"}
#: top-level packages whose types are never a backend's
_NATIVE = frozenset({"builtins", "numpy", "pandas", "privest", "collections", "pathlib"})

_loaded: set[str] = set()
_failed: dict[str, str] = {}
_engines: dict[str, Any] = {}

F = TypeVar("F", bound=Callable[..., Any])


def load_backends() -> None:
    """Import every installed backend once (each registers itself on import).

    A backend whose extra is missing (an ``ImportError`` naming a module outside privest)
    is recorded as absent, with the reason :func:`get_engine` reports.
    """
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _loaded or ep.name in _failed:
            continue
        try:
            ep.load()
        except ImportError as exc:
            if _missing_module(exc).startswith("privest"):
                raise  # a defect of privest itself, never hidden as an absent extra
            _failed[ep.name] = str(exc)
            continue
        _loaded.add(ep.name)


def _missing_module(exc: BaseException) -> str:
    """The name of the module whose absence caused ``exc`` (its causes included)."""
    while exc is not None:
        if isinstance(exc, ImportError) and exc.name:
            return exc.name
        exc = exc.__cause__ or exc.__context__
    return ""


def _foreign(obj: Any) -> bool:
    return type(obj).__module__.partition(".")[0] not in _NATIVE


def dispatch(func: F) -> F:
    """``functools.singledispatch`` whose default loads the installed backends the first
    time it meets a type from outside numpy, pandas and the standard library, then looks
    again (so a Dask array finds the Dask implementation without the caller importing it).
    ``.register``, ``.registry`` and ``.dispatch`` are singledispatch's."""
    sd = functools.singledispatch(func)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise TypeError(f"{func.__name__} needs its data as the first argument")
        impl = sd.dispatch(type(args[0]))
        if impl is func and _foreign(args[0]):
            load_backends()
            impl = sd.dispatch(type(args[0]))
        return impl(*args, **kwargs)

    wrapper.register = sd.register  # type: ignore[attr-defined]
    wrapper.registry = sd.registry  # type: ignore[attr-defined]
    wrapper.dispatch = sd.dispatch  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def register_engine(name: str, engine: Any) -> None:
    """Make ``engine`` (an object with the backend's entry points, e.g. ``load_release``)
    available as ``engine=name`` (``load_release``, the CLI's ``--engine``)."""
    _engines[name] = engine


def get_engine(name: str) -> Any:
    """The engine registered as ``name``, loading the installed backends first; a clear
    error naming the install command when its backend is absent."""
    if name not in _engines:
        load_backends()
    if name in _engines:
        return _engines[name]
    hint = _EXTRAS.get(name)
    why = _failed.get(name)
    if hint is not None:
        raise ValidationError(
            f"engine: {name!r} needs the extra: {hint}" + (f" ({why})" if why else "")
        )
    known = ["memory", *sorted(_engines)]
    raise ValidationError(f"engine: {name!r} is unknown; accepted: {', '.join(known)}")
