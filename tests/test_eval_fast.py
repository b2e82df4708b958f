"""The evaluation fast paths of a run: the flip-ratio form of the pseudo-likelihood, the fused
reconstruction error, the likelihood guard's one-search bound and the checks skipped on rows a
run has checked — against the plain numpy forms, in both dtypes and any thread count."""
import math

import numpy as np
import pytest

import rbmviz
from rbmviz._blas import numba_threads
from rbmviz.evaluate import pseudo
from rbmviz.evaluate.metrics import METRICS, MetricContext
from rbmviz.runs import guard


def _model(n_v, n_h, seed, scale, dtype="float64"):
    rbm = rbmviz.RBM(n_v, n_h, seed=seed, scale=scale, dtype=dtype)
    rng = np.random.default_rng(seed + 1)
    rbm.b[:] = rng.normal(0.0, scale, n_v)
    rbm.c[:] = rng.normal(0.0, scale, n_h)
    return rbm


def _rows(n, n_v, seed, density=0.3):
    return (np.random.default_rng(seed).random((n, n_v)) < density).astype(np.float64)


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_site_log_conditionals_match_numpy_form(scale):
    rbm = _model(40, 25, 0, scale)
    V = _rows(30, 40, 1)
    V, pre = pseudo._pre_activations(rbm, V)
    sites = np.arange(40)
    fast = pseudo._site_log_conditionals(rbm, V, pre, sites)
    ref = pseudo._site_log_conditionals_numpy(rbm, V, pre, sites)
    np.testing.assert_allclose(fast, ref, rtol=1e-10, atol=1e-10)


def test_huge_weights_take_the_numpy_form():
    rbm = _model(12, 6, 0, 1.0)
    rbm.W[3, 2] = 900.0
    V = _rows(10, 12, 2)
    V, pre = pseudo._pre_activations(rbm, V)
    sites = np.arange(12)
    np.testing.assert_array_equal(pseudo._site_log_conditionals(rbm, V, pre, sites),
                                  pseudo._site_log_conditionals_numpy(rbm, V, pre, sites))


def test_float32_spl_close_to_float64():
    rbm = _model(100, 60, 3, 0.3)
    X = _rows(80, 100, 4)
    s64 = pseudo.stochastic_pseudo_log_likelihood(rbm, X, rows=50, sites=20, seed=1)
    s32 = pseudo.stochastic_pseudo_log_likelihood(rbm.astype("float32"), X, rows=50, sites=20,
                                                  seed=1)
    assert abs(s32 - s64) < 1e-4 * abs(s64)


def test_spl_identical_for_any_thread_count():
    rbm = _model(100, 60, 5, 0.3)
    X = _rows(300, 100, 6)
    vals = []
    for n in (1, 2):
        with numba_threads(n):
            vals.append(pseudo.stochastic_pseudo_log_likelihood(rbm, X, rows=200, sites=30))
    assert vals[0] == vals[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_reconstruction_error_matches_numpy(dtype):
    rbm = _model(30, 20, 7, 0.5, dtype)
    V = np.random.default_rng(8).random((25, 30))
    W, b, c = (a.astype(np.float64) for a in rbm.params)
    H = 1.0 / (1.0 + np.exp(-(V @ W + c)))
    R = 1.0 / (1.0 + np.exp(-(H @ W.T + b)))
    ref = float(np.mean((V - R) ** 2))
    tol = 1e-12 if dtype == "float64" else 1e-6
    assert pseudo.reconstruction_error(rbm, V) == pytest.approx(ref, rel=tol)


def _reference_log_z_lower_bound(rbm, V, sweeps=guard.GUARD_SWEEPS):
    """The former numpy form of the guard's bound (float64 free energies, two passes per
    mean-field iteration)."""
    W, b, c = rbm.params
    W64, b64, c64 = (np.asarray(a, dtype=np.float64) for a in (W, b, c))
    v0 = v = np.asarray(V, dtype=W.dtype)
    for _ in range(sweeps):
        h = (v @ W + c > 0).astype(W.dtype)
        nxt = (h @ W.T + b > 0).astype(W.dtype)
        if np.array_equal(nxt, v):
            break
        v = nxt
    S = np.unique(np.concatenate([v0, v]), axis=0).astype(np.float64)
    f = S @ b64 + np.logaddexp(0.0, S @ W64 + c64).sum(axis=1)
    log_z = float(f.max() + np.log(np.exp(f - f.max()).sum()))
    m = np.full(W64.shape[0], 0.5)
    sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731
    for _ in range(sweeps + 1):
        p = np.clip(m, 1e-12, 1.0 - 1e-12)
        ent = float(-(p * np.log(p) + (1.0 - p) * np.log1p(-p)).sum())
        log_z = max(log_z, ent + float(m @ b64) + float(np.logaddexp(0.0, m @ W64 + c64).sum()))
        m = 0.5 * m + 0.5 * sig(W64 @ sig(m @ W64 + c64) + b64)
    return log_z


@pytest.mark.parametrize("scale", [0.01, 0.5, 5.0])
def test_guard_bound_matches_reference(scale):
    rbm = _model(60, 40, 9, scale)
    V = _rows(16, 60, 10)
    assert guard._log_z_lower_bound(rbm, V) == pytest.approx(
        _reference_log_z_lower_bound(rbm, V), rel=1e-12, abs=1e-9)
    f = V @ rbm.b + np.logaddexp(0.0, V @ rbm.W + rbm.c).sum(axis=1)
    lz = guard._log_z_lower_bound(rbm, V)
    assert guard._log_likelihood_upper_bound(rbm, V) == pytest.approx(f.mean() - lz, rel=1e-12)
    assert guard._log_likelihood_upper_bound(rbm, V, log_z=3.0) == pytest.approx(f.mean() - 3.0,
                                                                                  rel=1e-12)


def test_guard_bound_is_a_bound_on_a_small_model():
    rbm = _model(10, 6, 11, 2.0)
    V = _rows(12, 10, 12)
    from rbmviz.evaluate import log_partition_exact
    assert guard._log_z_lower_bound(rbm, V) <= log_partition_exact(rbm) + 1e-9
    assert guard._log_z_lower_bound(rbm.astype("float32"), V) <= log_partition_exact(rbm) + 1e-4


def test_checks_skipped_only_for_a_runs_context():
    X = _rows(50, 20, 13)
    rbm = _model(20, 10, 14, 0.3)
    run = rbmviz.Run(rbm.copy(), X, "pcd", epochs=1, batch_size=10, metrics=["spl", "recon_error"])
    assert run._ctx._checked
    ctx = MetricContext(X * 2.0)                     # not 0/1: the public checks apply
    assert not ctx._checked
    with pytest.raises(ValueError):
        METRICS["spl"].fn(rbm, ctx)
    with pytest.raises(ValueError):
        METRICS["recon_error"].fn(rbm, ctx)
    good = MetricContext(X)
    for m in ("spl", "recon_error"):
        fast = METRICS[m].fn(run._work, run._ctx)
        assert fast == METRICS[m].fn(run._work, good)
