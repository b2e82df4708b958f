"""AIS (reference/ais.md §2, §4): exactness for W = 0, agreement with exact log Z on small
random RBMs and on a 784×20 RBM trained on MNIST, the base-rate model, reproducibility and
thread independence, the result objects, and validation."""
import math
import time

import numba
import numpy as np
import pytest
from brute import random_rbm

import rbmviz
from rbmviz import evaluate as ev
from rbmviz.evaluate.ais import AISResult, ais_betas, base_rate_visible_bias
from rbmviz.datasets import DatasetNotFoundError
from rbmviz.evaluate import ais_log_likelihood, ais_log_partition


def test_zero_weights_give_log_z_exactly_with_zero_spread():
    """ais.md §4: W = 0 and b_A = b ⇒ deterministic weights ∏(1+e^{c_j})/2^{n_h}."""
    rbm = random_rbm(12, 7, 1.5, seed=0)
    rbm.W[:] = 0.0
    res = ais_log_partition(rbm, n_chains=50, n_betas=2000, seed=3)
    exact = float(np.logaddexp(0, rbm.b).sum() + np.logaddexp(0, rbm.c).sum())
    assert exact == pytest.approx(ev.log_partition_exact(rbm), abs=1e-12)
    assert res.log_z == pytest.approx(exact, abs=1e-10)
    assert np.ptp(res.log_weights) == 0.0
    assert res.log_z_low == pytest.approx(exact, abs=1e-10)
    assert res.log_z_high == pytest.approx(exact, abs=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_10x8_rbm_matches_exact_log_z(seed):
    rbm = random_rbm(10, 8, 1.0, seed=seed)
    exact = ev.log_partition_exact(rbm)
    res = ais_log_partition(rbm, n_chains=100, n_betas=10000, seed=seed)
    assert abs(res.log_z - exact) < 0.03, (res, exact)
    assert res.log_z_low - 0.01 <= exact <= res.log_z_high + 0.01
    assert res.log_z_low < res.log_z < res.log_z_high


def test_strong_weights_with_the_sm_schedule_and_an_always_on_pixel():
    """ais.md §2.1: W ~ N(0, 2²) and a pixel on in every training row (p̂ = 1 before
    clipping) — the base rate stays finite and AIS stays within a few hundredths."""
    rng = np.random.default_rng(5)
    rbm = random_rbm(10, 8, 2.0, seed=5)
    data = (rng.random((100, 10)) < 0.4).astype(float)
    data[:, 3] = 1.0
    data[:, 7] = 0.0
    bA = base_rate_visible_bias(data)
    assert np.all(np.isfinite(bA))
    betas = ais_betas(schedule="sm")
    assert len(betas) == 14501 and betas[0] == 0 and betas[-1] == 1 and np.all(np.diff(betas) > 0)
    res = ais_log_partition(rbm, n_chains=100, seed=2, data=data, betas=betas)
    assert abs(res.log_z - ev.log_partition_exact(rbm)) < 0.05
    assert np.all(np.isfinite(res.log_weights))


def test_base_rate_pseudo_counts():
    X = np.zeros((250, 3))
    X[:100, 0] = 1
    X[:, 1] = 1
    b = base_rate_visible_bias(X, batch_size=100)          # B = 2 batches → 10 pseudo-counts
    p = 1 / (1 + np.exp(-b))
    np.testing.assert_allclose(p, [(100 + 10) / 260, 1 - 1e-6, 10 / 260])


def test_same_seed_same_estimate_for_any_thread_count():
    """Neither Numba's thread count nor the split of the chains over worker threads changes
    a single draw."""
    rbm = random_rbm(30, 12, 0.5, seed=2)    # 120 chains: 3 blocks
    before = numba.get_num_threads()
    out = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            out.append(ais_log_partition(rbm, n_chains=120, n_betas=300, seed=7))
    finally:
        numba.set_num_threads(before)
    for workers in (1, 3):
        out.append(ais_log_partition(rbm, n_chains=120, n_betas=300, seed=7, threads=workers))
    for res in out[1:]:
        assert np.array_equal(out[0].log_weights, res.log_weights)
        assert out[0].log_z == res.log_z
    other = ais_log_partition(rbm, n_chains=120, n_betas=300, seed=8)
    assert not np.array_equal(other.log_weights, out[0].log_weights)


def test_float32_products_agree_with_float64():
    rbm = random_rbm(40, 10, 0.3, seed=4)
    r64 = ais_log_partition(rbm, n_chains=50, n_betas=1000, seed=1)
    r32 = ais_log_partition(rbm, n_chains=50, n_betas=1000, seed=1, dtype="float32")
    assert abs(r32.log_z - r64.log_z) < 1e-3
    r32m = ais_log_partition(rbm.astype("float32"), n_chains=50, n_betas=1000, seed=1)
    assert abs(r32m.log_z - r64.log_z) < 1e-3


def test_result_objects_unpack_and_convert():
    rbm = random_rbm(8, 5, 0.5, seed=1)
    res = ais_log_partition(rbm, n_chains=20, n_betas=200, seed=0)
    assert isinstance(res, AISResult)
    log_z, low, high, log_w = res
    assert float(res) == log_z and (low, high) == res.interval
    assert low <= log_z <= high and log_w.shape == (20,) and log_w.dtype == np.float64
    assert res.log_z_base == pytest.approx(5 * math.log(2) + np.logaddexp(0, rbm.b).sum())
    assert "AISResult(log_z=" in repr(res)
    V = rbmviz.datasets.bars_and_stripes(3)[:, :8]
    ll = ais_log_likelihood(rbm, V, log_z=res)
    ll_value, ll_low, ll_high, z = ll
    assert z is res and float(ll) == ll_value
    assert ll_value == pytest.approx(np.mean(-rbm.free_energy(V)) - log_z)
    assert ll_low <= ll_value <= ll_high
    assert ais_log_likelihood(rbm, V, log_z=ev.log_partition_exact(rbm)).ll == pytest.approx(
        ev.log_likelihood_exact(rbm, V))


def test_ais_log_likelihood_runs_ais_when_needed():
    rbm = random_rbm(10, 6, 1.0, seed=3)
    V = (np.random.default_rng(0).random((20, 10)) < 0.5).astype(float)
    ll = ais_log_likelihood(rbm, V, n_chains=100, n_betas=3000, seed=1, data=V)
    assert abs(ll.ll - ev.log_likelihood_exact(rbm, V)) < 0.05
    assert ll.log_z.log_weights.shape == (100,)


@pytest.mark.parametrize("kw, exc, match", [
    ({"n_chains": 0}, ValueError, "n_chains must be >= 1"),
    ({"n_betas": 1}, ValueError, "n_betas must be >= 2"),
    ({"betas": [0.0, 0.5, 0.5, 1.0]}, ValueError, "strictly increasing"),
    ({"betas": [0.1, 0.5, 1.0]}, ValueError, "start at 0 and end at 1"),
    ({"betas": [[0.0, 1.0]]}, ValueError, "1-D"),
    ({"seed": -1}, ValueError, "seed must be >= 0"),
    ({"data": np.ones((5, 3))}, ValueError, "data has 3 columns but the model has n_visible=8"),
    ({"data": np.full((5, 8), 0.5)}, ValueError, "data must be binary"),
    ({"dtype": "float16"}, ValueError, "dtype must be"),
    ({"threads": 0}, ValueError, "threads must be >= 1"),
])
def test_bad_arguments_raise_clear_errors(kw, exc, match):
    rbm = random_rbm(8, 4, 0.5, seed=0)
    with pytest.raises(exc, match=match):
        ais_log_partition(rbm, **kw)


def test_not_an_rbm_and_non_finite_parameters():
    with pytest.raises(TypeError, match="rbm must be an rbmviz.RBM"):
        ais_log_partition(np.zeros((3, 3)))
    rbm = random_rbm(8, 4, 0.5, seed=0)
    rbm.W[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        ais_log_partition(rbm, n_betas=10)


@pytest.fixture(scope="module")
def mnist_rbm():
    try:
        X = rbmviz.datasets.mnist(limit=2000)
    except DatasetNotFoundError as exc:   # pragma: no cover - data not installed
        pytest.skip(f"MNIST not available: {exc}")
    rbm = rbmviz.RBM(784, 20, seed=0, data=X)
    rbmviz.train(rbm, X, "cd", epochs=5, batch_size=100, learning_rate=0.1, k=1,
                 eval_every=5, metrics=["recon_error"])
    return rbm, X


def test_784x20_mnist_rbm_matches_exact_log_z(mnist_rbm):
    rbm, X = mnist_rbm
    exact = ev.log_partition_exact(rbm)
    t0 = time.perf_counter()
    res = ais_log_partition(rbm, n_chains=100, n_betas=10000, seed=0, data=X)
    elapsed = time.perf_counter() - t0
    assert abs(res.log_z - exact) < 0.2, (res, exact)
    assert res.log_z_low - 0.05 <= exact <= res.log_z_high + 0.05
    print(f"784x20 AIS 100x10000: {elapsed:.1f} s, log Z {res.log_z:.4f} vs exact {exact:.4f}")


@pytest.mark.slow
def test_784x500_timing():
    """Target (reference/dc-programming.md §6 evaluation): 100 chains × 10,000 β for a
    784×500 RBM in under 60 s on a 2-core machine — checked as at most 120 s of CPU time
    (the work of two busy cores for 60 s; wall time depends on what else the machine runs)."""
    X = rbmviz.datasets.mnist(limit=2000)
    rbm = rbmviz.RBM(784, 500, seed=0, data=X, scale=0.05)
    ais_log_partition(rbm, n_betas=10, seed=0, data=X)          # compile
    t0, c0 = time.perf_counter(), time.process_time()
    res = ais_log_partition(rbm, n_chains=100, n_betas=10000, seed=0, data=X)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"784x500 AIS 100x10000: wall {wall:.1f} s, cpu {cpu:.1f} s, {res}")
    assert np.isfinite(res.log_z) and cpu < 120


def test_estimate_tightens_as_the_number_of_betas_grows():
    """More intermediate distributions: smaller spread of the log-weights, a narrower ±3σ
    interval and (over several seeds) a smaller error against the exact log Z."""
    rbm = random_rbm(12, 8, 1.5, seed=4)
    exact = ev.log_partition_exact(rbm)
    spread, width, err = [], [], []
    for n_betas in (30, 300, 3000):
        runs = [ais_log_partition(rbm, n_chains=100, n_betas=n_betas, seed=s) for s in range(4)]
        spread.append(np.mean([np.std(r.log_weights) for r in runs]))
        width.append(np.mean([r.log_z_high - r.log_z for r in runs]))
        err.append(np.mean([abs(r.log_z - exact) for r in runs]))
    assert spread[0] > spread[1] > spread[2]
    assert width[0] > width[1] > width[2]
    assert err[0] > err[2] and err[2] < 0.05, err
