"""The registries: one place for the names; the docs' table, the CLI's choices and auto read
them; unknown names and duplicate registrations are refused."""

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
