"""A catalogue of bad inputs to :mod:`rbmviz.evaluate`, in the style of
``tests/test_bad_inputs.py``: exact enumeration beyond the declared bound
(:data:`rbmviz.bounds.EXACT_BITS_MAX`) refused before it starts, AIS chain and temperature
counts bounded by the memory they would allocate (:data:`rbmviz.bounds.MEMORY_MAX`, the
message states the estimate and the bound), data outside [0, 1] and complex data refused,
``log_z`` that is not a finite real number, and index arguments out of range — each a
``ValueError``/``TypeError`` naming the argument, raised by rbmviz's own checks (the innermost
frame of the traceback is in the ``rbmviz`` package, never numpy's).
"""
import os
import time

import numpy as np
import pytest

import rbmviz
from rbmviz import bounds, datasets
from rbmviz import evaluate as ev
from rbmviz.evaluate import metrics
from test_bad_inputs import _innermost_file  # the catalogue's check: raised inside rbmviz

PKG = os.path.dirname(rbmviz.__file__)
X = datasets.bars_and_stripes(2)                   # (6, 4) binary


def _rbm(nv=4, nh=3):
    return rbmviz.RBM(nv, nh, seed=0)


BIG = (784, 30)                                     # a 2**30 enumeration (hours) if started


# (id, call(tmp_path), exception type, regex that names the argument)
CASES = [
    # --------------------------------------------------------- exact enumeration bound
    ("log_partition_exact-784x30", lambda t: ev.log_partition_exact(_rbm(*BIG)), ValueError,
     r"784×30 model needs 2\*\*30 states.*max_bits=24.*EXACT_BITS_MAX"),
    ("log_partition_exact-30x30", lambda t: ev.log_partition_exact(_rbm(30, 30)), ValueError,
     r"2\*\*30 states"),
    ("log_partition_exact-25x100", lambda t: ev.log_partition_exact(_rbm(25, 100)), ValueError,
     r"2\*\*25 states"),
    ("log_likelihood_exact-big", lambda t: ev.log_likelihood_exact(_rbm(*BIG), np.zeros((1, 784))),
     ValueError, r"2\*\*30 states.*max_bits"),
    ("log_probabilities_exact-big", lambda t: ev.log_probabilities_exact(_rbm(*BIG), np.zeros((1, 784))),
     ValueError, r"2\*\*30 states"),
    ("model_statistics-big", lambda t: ev.model_statistics(_rbm(*BIG)), ValueError, r"2\*\*30 states"),
    ("model_statistics-big-log_z", lambda t: ev.model_statistics(_rbm(*BIG), log_z=0.0), ValueError,
     r"2\*\*30 states"),
    ("exact_gradient-big", lambda t: ev.exact_gradient(_rbm(*BIG), np.zeros((1, 784))), ValueError,
     r"2\*\*30 states"),
    ("log_partition_exact-max_bits-high", lambda t: ev.log_partition_exact(_rbm(), max_bits=31),
     ValueError, r"max_bits must be <= 30"),
    ("log_partition_exact-max_bits-text", lambda t: ev.log_partition_exact(_rbm(), max_bits="24"),
     TypeError, r"max_bits must be an integer"),
    ("log_partition_exact-max_bits-below", lambda t: ev.log_partition_exact(_rbm(), max_bits=2),
     ValueError, r"2\*\*3 states.*max_bits=2"),
    ("visible_distribution-30", lambda t: ev.visible_distribution(_rbm(30, 3)), ValueError,
     r"n_visible=30 is too large.*EXACT_BITS_MAX"),
    ("all_states-25", lambda t: ev.all_states(25), ValueError, r"n must be <= 24"),
    ("all_states-24-memory", lambda t: ev.all_states(24), ValueError,
     r"all_states\(n=24\).*would allocate about 3\.\d GiB, more than the bound of 2\.0 GiB"),
    ("all_states-text", lambda t: ev.all_states("3"), TypeError, r"n must be an integer"),
    ("expected_cd_update-k-huge", lambda t: ev.expected_cd_update(_rbm(), X, 10**9), ValueError,
     r"k must be <= 1000"),
    ("exact_feasible-rbm", lambda t: ev.exact_feasible("model"), TypeError, r"rbm must be an rbmviz.RBM"),
    ("exact_feasible-max_bits", lambda t: ev.exact_feasible(_rbm(), "20"), TypeError,
     r"max_bits must be an integer"),
    # --------------------------------------------------------- AIS memory bound
    ("ais-n_chains-huge", lambda t: ev.ais_log_partition(_rbm(), n_chains=10**10, n_betas=2),
     ValueError, r"n_chains=10,000,000,000.*would allocate about 74\.5 GiB.*MEMORY_MAX"),
    ("ais-n_betas-huge", lambda t: ev.ais_log_partition(_rbm(), n_betas=10**9), ValueError,
     r"n_betas=1,000,000,000.*would allocate about 7\.5 GiB.*bound of 2\.0 GiB"),
    ("ais-both-large", lambda t: ev.ais_log_partition(_rbm(), n_chains=2 * 10**8, n_betas=10**8),
     ValueError, r"n_chains=200,000,000 and n_betas=100,000,000"),
    ("ais_betas-huge", lambda t: ev.ais_betas(10**10), ValueError, r"ais_betas with n_betas=10,000,000,000"),
    ("ais_log_likelihood-n_chains-huge",
     lambda t: ev.ais_log_likelihood(_rbm(), X, n_chains=10**10, n_betas=2), ValueError,
     r"n_chains=10,000,000,000.*would allocate"),
    ("ais-n_betas-text", lambda t: ev.ais_log_partition(_rbm(), n_betas="many"), TypeError,
     r"n_betas must be an integer"),
    ("ais-n_chains-float", lambda t: ev.ais_log_partition(_rbm(), n_chains=2.5), TypeError,
     r"n_chains must be an integer"),
    ("ais-threads-text", lambda t: ev.ais_log_partition(_rbm(), threads="2"), TypeError,
     r"threads must be an integer"),
    ("ais-rbm-type", lambda t: ev.ais_log_partition("model"), TypeError, r"rbm must be an rbmviz.RBM"),
    ("ais_log_likelihood-rbm-type", lambda t: ev.ais_log_likelihood("model", X), TypeError,
     r"rbm must be an rbmviz.RBM"),
    # --------------------------------------------------------- data outside [0, 1], complex data
    ("reconstruction_error-above-1", lambda t: ev.reconstruction_error(_rbm(), X * 2), ValueError,
     r"V must hold probabilities or states in \[0, 1\]; found 2.0"),
    ("reconstruction_error-negative", lambda t: ev.reconstruction_error(_rbm(), -X), ValueError,
     r"V must hold probabilities.*found -1.0"),
    ("reconstruction_error-complex", lambda t: ev.reconstruction_error(_rbm(), X + 0j), TypeError,
     r"V must hold real numbers, got complex"),
    ("log_likelihood_exact-complex", lambda t: ev.log_likelihood_exact(_rbm(), X + 1j), TypeError,
     r"V must hold real numbers"),
    ("log_likelihood_exact-complex-zero-imag", lambda t: ev.log_likelihood_exact(_rbm(), X + 0j),
     TypeError, r"V must hold real numbers"),
    ("pseudo_log_likelihood-complex", lambda t: ev.pseudo_log_likelihood(_rbm(), X + 0j), TypeError,
     r"V must hold real numbers"),
    ("spl-complex", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X + 0j), TypeError,
     r"V must hold real numbers"),
    ("exact_gradient-complex", lambda t: ev.exact_gradient(_rbm(), X + 0j), TypeError,
     r"V must hold real numbers"),
    ("expected_cd_update-complex", lambda t: ev.expected_cd_update(_rbm(), X + 0j, 1), TypeError,
     r"V must hold real numbers"),
    ("ais-data-complex", lambda t: ev.ais_log_partition(_rbm(), n_betas=3, data=X + 0j), TypeError,
     r"data must hold real numbers"),
    ("base_rate_visible_bias-complex", lambda t: ev.base_rate_visible_bias(X.astype(complex)),
     TypeError, r"data must hold real numbers"),
    ("ais_log_likelihood-complex", lambda t: ev.ais_log_likelihood(_rbm(), X + 0j, log_z=1.0),
     TypeError, r"V must hold real numbers"),
    ("tap_log_likelihood-complex", lambda t: ev.tap_log_likelihood(_rbm(), X + 0j), TypeError,
     r"must hold real numbers"),
    ("free_energy-complex", lambda t: _rbm().free_energy(X + 0j), TypeError, r"V must hold real numbers"),
    # --------------------------------------------------------- log_z
    ("log_likelihood_exact-log_z-text", lambda t: ev.log_likelihood_exact(_rbm(), X, log_z="3.2"),
     TypeError, r"log_z must be a real number, got '3.2'"),
    ("log_probabilities_exact-log_z-text", lambda t: ev.log_probabilities_exact(_rbm(), X, "a"),
     TypeError, r"log_z must be a real number"),
    ("log_likelihood_exact-log_z-nan", lambda t: ev.log_likelihood_exact(_rbm(), X, log_z=np.nan),
     ValueError, r"log_z must be finite"),
    ("log_likelihood_exact-log_z-inf", lambda t: ev.log_likelihood_exact(_rbm(), X, log_z=-np.inf),
     ValueError, r"log_z must be finite"),
    ("log_likelihood_exact-log_z-array", lambda t: ev.log_likelihood_exact(_rbm(), X, log_z=np.ones(3)),
     TypeError, r"log_z must be a real number"),
    ("log_likelihood_exact-log_z-complex", lambda t: ev.log_likelihood_exact(_rbm(), X, log_z=1j),
     TypeError, r"log_z must be a real number"),
    ("log_likelihood_exact-log_z-bool", lambda t: ev.log_likelihood_exact(_rbm(), X, log_z=True),
     TypeError, r"log_z must be a real number"),
    ("model_statistics-log_z-text", lambda t: ev.model_statistics(_rbm(), log_z="a"), TypeError,
     r"log_z must be a real number"),
    ("model_statistics-log_z-inf", lambda t: ev.model_statistics(_rbm(), log_z=np.inf), ValueError,
     r"log_z must be finite"),
    ("ais_log_likelihood-log_z-text", lambda t: ev.ais_log_likelihood(_rbm(), X, log_z="a"),
     TypeError, r"log_z must be a real number"),
    ("ais_log_likelihood-log_z-list", lambda t: ev.ais_log_likelihood(_rbm(), X, log_z=[1, 2]),
     TypeError, r"log_z must be a real number"),
    ("ais_log_likelihood-log_z-nan", lambda t: ev.ais_log_likelihood(_rbm(), X, log_z=float("nan")),
     ValueError, r"log_z must be finite"),
    # --------------------------------------------------------- indices
    ("spl-subset-row-out-of-range",
     lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([0, 99], [0])), ValueError,
     r"subset\[0\] \(row_index\) holds index 99, outside the 6 rows of V"),
    ("spl-subset-site-out-of-range",
     lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([0], [4])), ValueError,
     r"subset\[1\] \(site_index\) holds index 4, outside the 4 visible units"),
    ("spl-subset-negative",
     lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([-1], [0])), ValueError,
     r"subset\[0\] \(row_index\) holds index -1"),
    ("spl-subset-text", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=(["a"], [0])),
     TypeError, r"subset\[0\] \(row_index\) must hold integer indices"),
    ("spl-subset-fraction",
     lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([0.5], [0])), TypeError,
     r"subset\[0\].*integer indices"),
    ("spl-subset-one-array", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([0],)),
     TypeError, r"subset must be a pair"),
    ("spl-subset-2d", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([[0]], [0])),
     ValueError, r"subset\[0\] \(row_index\) must be a 1-D array"),
    ("spl-subset-empty", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([], [0])),
     ValueError, r"subset\[0\] \(row_index\) is empty"),
    ("spl-subset-bool", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([True], [0])),
     TypeError, r"subset\[0\]"),
    # --------------------------------------------------------- metrics
    ("MetricContext-data-text", lambda t: metrics.MetricContext("abc"), TypeError, r"data must be numeric"),
    ("MetricContext-test_data-columns", lambda t: metrics.MetricContext(X, np.ones((2, 5))),
     ValueError, r"test_data has 5 columns"),
    ("MetricContext-data-nan", lambda t: metrics.MetricContext(np.full((2, 2), np.nan)), ValueError,
     r"data contains NaN"),
    ("default_metrics-rbm", lambda t: metrics.default_metrics("m", exact=True, has_test=False),
     TypeError, r"rbm must be an rbmviz.RBM"),
]


@pytest.mark.parametrize("call,exc,match", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_bad_evaluate_input_gets_a_clear_error(tmp_path, call, exc, match):
    t0 = time.perf_counter()
    with pytest.raises(exc, match=match) as info:
        call(tmp_path)
    assert time.perf_counter() - t0 < 10, "refused only after starting the work"
    origin = _innermost_file(info)
    assert origin.startswith(PKG), (
        f"raised from {origin}, not by rbmviz's checks: {type(info.value).__name__}: {info.value}")


def test_catalogue_size():
    assert len(CASES) >= 50


def test_the_bounds_allow_what_they_declare():
    """At the bound the work runs: 2**EXACT_BITS_MAX is the limit, not below it; max_bits
    lifts it explicitly; probabilities in [0, 1] are reconstruction_error's input."""
    rbm = _rbm(bounds.EXACT_BITS_MAX + 6, 3)         # the smaller layer is what counts
    assert np.isfinite(ev.log_partition_exact(rbm))
    assert np.isfinite(ev.log_partition_exact(_rbm(5, 3), max_bits=3))
    assert 0 <= ev.reconstruction_error(_rbm(), np.full((2, 4), 0.5)) < 1
    assert np.isfinite(ev.log_likelihood_exact(_rbm(), X, log_z=np.float32(3.0)))
    assert np.isfinite(ev.log_likelihood_exact(_rbm(), X, log_z=np.array(3.0)))
    assert np.isfinite(ev.stochastic_pseudo_log_likelihood(_rbm(), X, subset=([0, 5], [0, 3])))
    res = ev.ais_log_partition(_rbm(), n_chains=10, n_betas=50)
    assert np.isfinite(res.log_z)
