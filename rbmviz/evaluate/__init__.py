"""Evaluation of RBMs: exact enumeration, AIS, pseudo-likelihoods and the metrics registry.

* :mod:`rbmviz.evaluate.exact` — ``log Z``, log-likelihoods, the model's distribution,
  exact gradients and expected CD-k updates by enumerating the smaller layer
  (the AIS theory page of the documentation);
* :mod:`rbmviz.evaluate.ais` — annealed importance sampling for models too large to
  enumerate (the AIS theory page of the documentation);
* :mod:`rbmviz.evaluate.pseudo` — all-sites and stochastic pseudo-log-likelihood,
  reconstruction error;
* :mod:`rbmviz.evaluate.metrics` — the registry ``name -> fn(rbm, context)`` the run loop
  records from.

Every function is re-exported here (``rbmviz.evaluate.log_partition_exact`` ...).  All values
in nats, averaged over rows unless stated.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import tap as _tap
from . import ais, exact, metrics, pseudo  # noqa: F401
from .ais import (AISLogLikelihood, AISResult, ais_betas, ais_log_likelihood,  # noqa: F401
                  ais_log_partition, base_rate_visible_bias)
from .exact import (MAX_EXACT_BITS, all_states, exact_feasible, exact_gradient,  # noqa: F401
                    expected_cd_update, log_likelihood_exact, log_partition_exact,
                    log_probabilities_exact, model_statistics, transition_matrix,
                    visible_distribution)
from .metrics import METRICS, Metric, MetricContext, register  # noqa: F401
from .pseudo import (pseudo_log_likelihood, pseudo_log_likelihood_rows,  # noqa: F401
                     reconstruction_error, spl_subset, stochastic_pseudo_log_likelihood)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..model import RBM
    from ..tap.inference import TAPLogLikelihood

__all__ = [
    "log_partition_exact", "log_likelihood_exact", "log_probabilities_exact",
    "visible_distribution", "exact_gradient", "model_statistics", "expected_cd_update",
    "transition_matrix", "pseudo_log_likelihood", "pseudo_log_likelihood_rows",
    "stochastic_pseudo_log_likelihood", "spl_subset", "reconstruction_error", "all_states",
    "exact_feasible", "ais_log_partition", "ais_log_likelihood", "tap_log_likelihood",
    "AISResult", "AISLogLikelihood", "ais_betas", "base_rate_visible_bias", "METRICS", "Metric",
    "MetricContext", "register", "MAX_EXACT_BITS",
]


def tap_log_likelihood(rbm: RBM, V: ArrayLike, **options: Any) -> float | TAPLogLikelihood:
    """The TAP log-likelihood (Tramel et al. 2018, eq. 39): :func:`rbmviz.tap.log_likelihood`.

    Parameters
    ----------
    rbm : RBM
        The model (any unit priors).
    V : array_like, shape (n_samples, n_visible)
        Rows to evaluate.
    **options
        Options of :func:`rbmviz.tap.log_likelihood` (initialisation, tolerance ...).

    Returns
    -------
    float or rbmviz.tap.TAPLogLikelihood
        The TAP estimate of the mean log-likelihood of the rows, in nats; the details with
        ``details=True`` (as :func:`rbmviz.tap.log_likelihood`).
    """
    return _tap.log_likelihood(rbm, V, **options)
