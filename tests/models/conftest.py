"""Fixtures of the central models' tests."""

import pytest


@pytest.fixture
def counted_releases(monkeypatch) -> list[float]:
    """The zCDP rho of every lattice Gaussian release the central models make, in order
    (each mechanism's ``.release`` is counted where the model modules build it)."""
    from privest.mechanisms.samplers import lattice
    from privest.models import inference, linear, linear_inference, logistic, logistic_fit

    spent: list[float] = []

    def counted(rho: float, sensitivity: float, dims: int = 1):
        mech = lattice.lattice_gaussian_zcdp(rho, sensitivity, dims)
        real = mech.release

        def release(value, rng, size=None, **kw):  # kw: noise drawn ahead in a batch
            spent.append(rho)
            return real(value, rng, size, **kw)

        mech.release = release
        return mech

    for module in (inference, linear, linear_inference, logistic, logistic_fit):
        monkeypatch.setattr(module, "lattice_gaussian_zcdp", counted)
    return spent
