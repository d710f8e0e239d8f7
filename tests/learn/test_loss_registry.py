"""One registry of loss names for the DR (paper 000) and IWP-SGD (paper 004) families."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import privest as pv
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


def test_one_class_per_loss_for_both_families():
    """The DR and IWP families build the same class for a shared name, with capabilities
    for both forms."""
    for name in ("logistic", "squared"):
        assert type(get_loss(name)) is type(get_margin_loss(name))
    caps = get_loss("logistic").capabilities()
    assert caps["form"] == "index" and caps["inverse_weierstrass"] == "series"
    assert caps["order_table"] is not None and caps["kink"] == "none"
    assert get_loss("linear").capabilities()["inverse_weierstrass"] == "closed"
    assert get_loss("hinge").capabilities()["inverse_weierstrass"] is None
    assert get_loss("quantile").kink == "check" and get_loss("hinge").kink == "hinge"
    assert get_margin_loss("exponential").form is None  # no DR form


def _concrete_loss_classes() -> set[str]:
    out, todo = set(), [Loss]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("privest.learn.losses"):
            out.add(cls.__name__)
    return out - {"Loss", "IndexLoss", "MarginLoss"}


def _class_tests(text: str, names: set[str]) -> list[str]:
    pattern = re.compile(r"isinstance\([^)]*\b(" + "|".join(sorted(names)) + r")\b")
    return [line.strip() for line in text.splitlines() if pattern.search(line)]


def test_the_library_reads_capabilities_not_loss_classes():
    """No module tests a loss's class: solvers, inference, the strategy and the backends
    read its capabilities (a new loss is its module, one registration, its tests).
    Control: the search finds such a test where there is one."""
    names = _concrete_loss_classes()
    assert {"LogisticLoss", "SquaredLoss", "ExponentialLoss", "ScalarQuantileLoss"} <= names
    src = Path(pv.__file__).parent
    hits = {
        str(p.relative_to(src)): found
        for p in src.rglob("*.py")
        if (found := _class_tests(p.read_text(), names))
    }
    assert hits == {}
    assert _class_tests("    if isinstance(loss, (QuantileRegressionLoss, HingeLoss)):", names)


class HalfExponentialLoss(MarginLoss):
    """f(z) = e^{-z/2}: W_s^{-1}[f] = e^{-s/8} f exactly (e^{az} -> e^{-s a^2/2} e^{az})."""

    name = "half_exponential"
    inverse_weierstrass = "closed"

    def __init__(self) -> None:
        pass

    def derivative(self, z, n=0):
        return (-0.5) ** n * np.exp(-np.asarray(z, dtype=float) / 2)

    def iwp_closed_form(self, m, s, need_loss):
        e = np.exp(-s / 8.0 - m / 2.0)
        return (e if need_loss else None), -e / 2, e / 4


def test_a_new_margin_loss_is_its_class_and_one_registration(monkeypatch):
    """IWP-SGD uses a newly registered loss by name, with its own closed form (equal to its
    series at a high order) and its own public defaults (|f'(0)| = 1/2)."""
    from privest.learn.iwp_losses import iwp_gradient, iwp_loss
    from privest.learn.losses import registry
    from privest.learn.sgd_schedule import default_radius

    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))
    monkeypatch.setattr(registry, "_BUILT", {})
    registry.register_loss(
        registry.LossSpec("half_exponential", "e^(-z/2)", {"iwp": HalfExponentialLoss})
    )
    rng = np.random.default_rng(3)
    theta, X = rng.normal(size=3) * 0.5, rng.normal(size=(40, 3))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    series = MarginLoss("series", HalfExponentialLoss().derivative)
    for fn in (iwp_loss, iwp_gradient):
        exact = fn(theta, X, y, 2.0, 1.5, "half_exponential")
        np.testing.assert_allclose(fn(theta, X, y, 2.0, 1.5, series, 25), exact, rtol=1e-12)
        assert not np.allclose(fn(theta, X, y, 2.0, 1.5, series, 1), exact, rtol=1e-3)
    assert default_radius("half_exponential", 2.0, 1.0) == 1.0  # |f'(0)| R / alpha
    x = rng.uniform(-1, 1, (3000, 2))
    rel = pv.release_examples(
        x, (x.sum(axis=1) > 0).astype(int), epsilon_x=3, epsilon_y=3, delta=1e-5,
        bounds=(-1, 1), rng=1,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = pv.IWPSGDClassifier(loss="half_exponential", progress=False).fit(rel)
    assert np.all(np.isfinite(fit.coef_)) and not hasattr(fit, "predict_proba")
