"""Accuracy before release: the predicted error of every release from its public inputs
only (docs/accuracy.md).

* :func:`predict_statistic` (and :func:`epsilon_for_statistic`): the statistic mechanisms
  and the ``private_*`` functions, exact for the data-independent noises, exact on a stated
  reference shape of the data (:class:`ReferenceData`) for the instance-adaptive ones;
* :func:`predict_gaussian` (and :func:`epsilon_for_gaussian`): the Gaussian mechanism,
  exact;
* :func:`predict_model`: ``PrivateLinearRegression`` (AdaSSP) and
  ``PrivateLogisticRegression`` (noisy MM, noisy GD), from their noise calibration on a
  stated design; the ePTR models of paper 001 given a release, with the chance that their
  test refuses (``Accuracy.refusal``), and with :func:`predict_ptr` the generic ePTR and
  classic PTR mechanisms around a caller's estimator, at a stated safety margin;
* :func:`predict_zil` (and :func:`zil_parameter_for`): a ZIL release's values and column
  means, and the standard errors of DR fits on it (paper 000, Thm 5.3, on a stated design);
* :func:`predict_examples`: a local release of examples for IWP-SGD (paper 004), exact
  for the features' noise, the label share's variance exact;
* :func:`predict_table`: the cells of a group-by table with a person as the unit (counts,
  sums, means, medians and quantiles).

Each returns :class:`Accuracy` objects: ``se``, ``half_width`` (at level ``1 - alpha``),
``error_sf(a)`` = P(|error| > a), and the ``assumption`` the prediction rests on.
"""

from privest.accuracy.base import Accuracy, ReferenceData, solve_public
from privest.accuracy.eptr import predict_ptr
from privest.accuracy.examples import predict_examples
from privest.accuracy.gaussian import epsilon_for_gaussian, predict_gaussian
from privest.accuracy.models import predict_model
from privest.accuracy.statistics import epsilon_for_statistic, predict_statistic
from privest.accuracy.tables import predict_table
from privest.accuracy.zil import predict_zil, zil_parameter_for

__all__ = [
    "Accuracy",
    "ReferenceData",
    "epsilon_for_gaussian",
    "epsilon_for_statistic",
    "predict_examples",
    "predict_gaussian",
    "predict_model",
    "predict_ptr",
    "predict_statistic",
    "predict_table",
    "predict_zil",
    "solve_public",
    "zil_parameter_for",
]
