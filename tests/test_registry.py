"""The registries: one place for the names; the docs' table, the CLI's choices and auto read
them; unknown names and duplicate registrations are refused."""

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

from privest.errors import ValidationError
from privest.registry import (
    MechanismSpec,
    markdown_table,
    mechanism_names,
    mechanism_spec,
    register_mechanism,
    statistic_names,
    statistic_spec,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "mechanisms.md"


def test_docs_table_is_the_registry():
    assert markdown_table() in DOCS.read_text()


def test_names_and_lookups():
    assert statistic_names()[:2] == ("median", "quantile")
    assert statistic_spec("quantile:0.9").level
    assert mechanism_names()[0] == "auto"
    assert "discrete_laplace" in mechanism_names("count")
    assert "discrete_laplace" not in mechanism_names("mean")
    with pytest.raises(ValidationError, match="accepted"):
        statistic_spec("mode")
    with pytest.raises(ValidationError, match="accepted"):
        mechanism_spec("gaussian_magic")


def test_registration_is_checked():
    with pytest.raises(ValidationError, match="registered already"):
        register_mechanism(MechanismSpec("laplace", "x:y", ("count",), "dup"))
    with pytest.raises(ValidationError, match="unknown statistics"):
        register_mechanism(MechanismSpec("new_one", "x:y", ("mode",), "bad"))
    assert "new_one" not in mechanism_names()


def test_cli_choices_read_the_registry():
    import argparse

    from privest.commands import stat

    parser = argparse.ArgumentParser()
    stat.add_parser(parser.add_subparsers())
    sub = parser._subparsers._group_actions[0].choices["stat"]
    action = next(a for a in sub._actions if "--mechanism" in a.option_strings)
    assert tuple(action.choices) == mechanism_names()


def _required(spec) -> list[str]:
    """The public inputs a mechanism's constructor cannot do without."""
    module, name = spec.target.split(":")
    init = getattr(importlib.import_module(module), name).__init__
    return [
        p.name
        for p in inspect.signature(init).parameters.values()
        if p.default is inspect.Parameter.empty
        and p.name not in ("self", "statistic")
        and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]


def test_reads_names_every_required_public_input():
    """`reads` is what the CLI, the plans and the errors say a mechanism takes: a required
    input missing from it (ptr's delta was) sends users round in circles."""
    for name in mechanism_names(auto=False):
        spec = mechanism_spec(name)
        assert set(_required(spec)) <= set(spec.reads), name
    # control: ptr's reads without delta are caught
    short = dataclasses.replace(
        mechanism_spec("ptr"), reads=("epsilon", "bounds", "local_sensitivity")
    )
    assert not set(_required(short)) <= set(short.reads)
