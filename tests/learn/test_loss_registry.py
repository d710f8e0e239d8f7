"""One registry of loss names for the DR (paper 000) and IWP-SGD (paper 004) families."""

from __future__ import annotations

import pytest

from privest.errors import ValidationError
from privest.learn.losses import LOSS_NAMES, Loss, get_loss
from privest.learn.losses.registry import loss_families, loss_names, resolve_loss
from privest.learn.weierstrass import MarginLoss, SquaredLoss, get_margin_loss


def test_both_families_read_one_registry():
    assert set(loss_names("dr", aliases=False)) == set(LOSS_NAMES)
    for name in ("logistic", "squared", "linear"):
        assert loss_families(name) == ("dr", "iwp")
        assert isinstance(get_loss(name), Loss)
        assert isinstance(get_margin_loss(name), MarginLoss)
    assert loss_families("exponential") == ("iwp",) and loss_families("hinge") == ("dr",)
    # "squared" and "linear" are one concept in each family
    assert type(get_loss("squared")) is type(get_loss("linear"))
    assert get_margin_loss("linear") is get_margin_loss("squared")
    assert isinstance(get_margin_loss("linear"), SquaredLoss)


def test_an_unsupported_combination_names_the_supported_ones():
    with pytest.raises(ValidationError, match="IWP-SGD") as exc:
        get_loss("exponential")
    assert "Supported here: logistic, linear" in str(exc.value)
    with pytest.raises(ValidationError, match="corrected-loss") as exc:
        get_margin_loss("quantile")
    assert "logistic, squared, exponential" in str(exc.value)
    with pytest.raises(NotImplementedError, match="smooth"):
        resolve_loss("hinge", "iwp")
    with pytest.raises(ValidationError, match="not a known loss"):
        resolve_loss("svm", "iwp")
    with pytest.raises(ValidationError, match="family"):
        resolve_loss("logistic", "bayes")
