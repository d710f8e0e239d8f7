"""A model search under a Budget refuses before its first fit when all its fits cannot fit
(issue 30: it spent the budget, then failed at the refit)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

import privest as pv


def _data(n=300):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 2))
    return X, np.clip(X @ [0.5, -0.3] + rng.normal(0, 0.2, n), -2, 2)


def _search(budget, grid, epsilon=0.5):
    model = pv.PrivateLinearRegression(
        epsilon=epsilon,
        delta=1e-7,
        bounds=(-1, 1),
        y_bounds=(-2, 2),
        budget=budget,
        random_state=0,
    )
    return GridSearchCV(model, grid, cv=3)


def _fit(search, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the search habit warning, scikit-learn's summaries
        search.fit(X, y)


@pytest.mark.parametrize(
    "grid, total",
    [({"fit_intercept": [True, False]}, 3.0), ({"epsilon": [0.5, 5.0]}, 20.0)],
)
def test_a_search_that_cannot_fit_spends_nothing(grid, total):
    """2 candidates x 3 folds + the refit = 7 fits: 3.5 > 3; with epsilon in the grid,
    3 x (0.5 + 5) + 5 = 21.5 > 20. Every fit is refused: nothing is charged."""
    budget = pv.Budget(total, 1e-5)
    X, y = _data()
    with pytest.raises(ValueError, match="would fit PrivateLinearRegression 7 times"):
        _fit(_search(budget, grid), X, y)
    assert budget.spends == ()


@pytest.mark.parametrize(
    "grid, total", [({"fit_intercept": [True, False]}, 3.5), ({"epsilon": [0.5, 5.0]}, 21.5)]
)
def test_a_search_that_fits_spends_every_fit(grid, total):
    """The control: with exactly enough left the search runs and charges its 7 fits."""
    budget = pv.Budget(total, 1e-5)
    X, y = _data()
    _fit(_search(budget, grid), X, y)
    assert len(budget.spends) == 7
    assert budget.remaining()[0] == pytest.approx(0.0, abs=1e-9)


def test_a_second_run_of_the_same_search_is_checked_again():
    budget = pv.Budget(4.0, 1e-5)
    X, y = _data()
    search = _search(budget, {"fit_intercept": [True, False]})
    _fit(search, X, y)  # 3.5 of 4 spent
    with pytest.raises(ValueError, match="would fit"):
        _fit(search, X, y)
    assert len(budget.spends) == 7
