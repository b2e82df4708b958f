"""The enumeration kernels' branch-free softplus and sigmoid (rbmviz.kernels.exact) against
numpy over the whole float64 range, and exact log Z / model statistics against plain numpy
enumeration on models with large weights, in both orientations."""
import numba
import numpy as np
import pytest
from brute import random_rbm

from rbmviz import evaluate as ev
from rbmviz.kernels import exact as kx

TINY = np.finfo(np.float64).tiny


@numba.njit(cache=False)
def _map_softplus(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = kx.softplus_vec(x[i])
    return out


@numba.njit(cache=False)
def _map_sigmoid(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = kx.sigmoid_vec(x[i])
    return out


def _grid():
    """Every scale of float64, both signs, and the values where the formulas switch."""
    rng = np.random.default_rng(0)
    mags = np.concatenate([np.logspace(-320, 308, 20001), np.linspace(0.0, 800.0, 200001),
                           np.abs(rng.standard_normal(100000)) * 40,
                           [0.41421356237309503, np.log(2.0), 36.7, 37.5, 708.39, 709.78,
                            744.44, 745.13, 745.2, 746.0, 1e300, np.finfo(np.float64).max,
                            5e-324, TINY]])
    x = np.concatenate([mags, -mags, [0.0, -0.0]])
    # values near the switch of the logarithm's range reduction: e^{-|x|} = √2 − 1
    x0 = -np.log(np.sqrt(2.0) - 1.0)
    return np.concatenate([x, x0 + np.arange(-50, 51) * np.spacing(x0)])


def _within_ulps(got, want, ulps):
    """``got`` within ``ulps`` units in the last place of ``want`` (absolutely within 1e-300
    where ``want`` is subnormal); infinities and NaNs where ``want`` has them."""
    got, want = np.asarray(got), np.asarray(want)
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin], want[~fin], equal_nan=True)
    got, want = got[fin], want[fin]
    err = np.abs(got - want)
    with np.errstate(over="ignore"):
        ulp = np.spacing(np.abs(want))
    normal = np.abs(want) >= TINY
    worst = np.argmax(np.where(normal, err / np.where(normal, ulp, 1.0), 0.0))
    assert np.all(err[normal] <= ulps * ulp[normal]), (got[worst], want[worst])
    assert np.all(err[~normal] <= 1e-300)          # subnormal results: absolute


def test_softplus_matches_numpy_over_the_whole_range():
    x = _grid()
    got = _map_softplus(x)
    want = np.logaddexp(0.0, x)
    _within_ulps(got, want, 4)
    fin = np.isfinite(want)
    assert np.all(np.abs(got[fin] - want[fin]) <= np.maximum(2e-15, 1e-15 * want[fin]))


def test_softplus_special_values():
    got = _map_softplus(np.array([np.inf, -np.inf, np.nan, 1e300, -1e300, 0.0, -0.0, 700.0,
                                  -700.0, -746.0, -800.0]))
    assert got[0] == np.inf and got[1] == 0.0 and np.isnan(got[2])
    assert got[3] == 1e300 and got[4] == 0.0
    assert got[5] == got[6] == np.log(2.0)
    assert got[7] == 700.0
    assert got[8] == pytest.approx(np.exp(-700.0), rel=4e-16)
    assert got[9] == 0.0 and got[10] == 0.0


def _sigmoid_ref(x):
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def test_sigmoid_matches_numpy_over_the_whole_range():
    x = _grid()
    _within_ulps(_map_sigmoid(x), _sigmoid_ref(x), 4)


def test_sigmoid_special_values():
    got = _map_sigmoid(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e300, -1e300, 800.0]))
    assert got[0] == 1.0 and got[1] == 0.0 and np.isnan(got[2])
    assert got[3] == got[4] == 0.5 and got[5] == 1.0 and got[6] == 0.0 and got[7] == 1.0


@pytest.mark.parametrize("n", [1, 7, 64, kx.SEGMENT - 1, kx.SEGMENT, kx.SEGMENT + 1, 3000])
@pytest.mark.parametrize("scale", [0.5, 10.0, 300.0])
def test_softplus_sum_matches_numpy(n, scale):
    x = np.random.default_rng(n).standard_normal(n) * scale
    want = np.logaddexp(0.0, x).sum()
    assert kx.softplus_sum(x) == pytest.approx(want, rel=2e-15 * np.sqrt(n) + 1e-15, abs=1e-14)


def test_softplus_sum_special_values():
    assert kx.softplus_sum(np.array([1.0, -np.inf, -1e300])) == np.logaddexp(0.0, 1.0)
    assert kx.softplus_sum(np.array([1.0, np.inf, -np.inf])) == np.inf
    assert np.isnan(kx.softplus_sum(np.array([1.0, np.nan, 2.0])))
    assert kx.softplus_sum(np.full(2 * kx.SEGMENT + 5, -np.inf)) == 0.0
    # many factors 1 + e^{-|x|} = 2 (x = 0): products of up to SEGMENT of them stay finite
    assert kx.softplus_sum(np.zeros(5000)) == pytest.approx(5000 * np.log(2.0), rel=1e-14)
    assert kx.softplus_sum(np.full(5000, 1e300)) == pytest.approx(5e303, rel=1e-14)


def _numpy_enumeration(rbm):
    """``(log Z, E[v hᵀ], E[v], E[h])`` by enumerating the smaller layer in plain numpy."""
    W, b, c = rbm.params
    vis = rbm.n_visible <= rbm.n_hidden
    M, a, o = (W, b, c) if vis else (W.T, c, b)
    n = M.shape[0]
    S = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
    A = S @ M + o
    vals = S @ a + np.logaddexp(0.0, A).sum(1)
    m = vals.max()
    log_z = m + np.log(np.exp(vals - m).sum())
    p = np.exp(vals - log_z)
    Q = _sigmoid_ref(A)
    E_sq, E_s, E_q = S.T @ (p[:, None] * Q), S.T @ p, Q.T @ p
    if vis:
        return log_z, E_sq, E_s, E_q
    return log_z, E_sq.T, E_q, E_s


LARGE = [(10, 60, 3.0), (60, 10, 3.0), (8, 2500, 1.0), (2500, 8, 1.0), (9, 40, 60.0),
         (40, 9, 60.0), (12, 12, 400.0)]


@pytest.mark.parametrize("nv,nh,scale", LARGE)
def test_log_z_matches_numpy_enumeration_with_large_weights(nv, nh, scale):
    rbm = random_rbm(nv, nh, scale=scale, seed=nv + nh)
    want = _numpy_enumeration(rbm)[0]
    assert ev.log_partition_exact(rbm) == pytest.approx(want, rel=1e-13, abs=1e-11)


@pytest.mark.parametrize("nv,nh,scale", LARGE)
def test_model_statistics_match_numpy_enumeration_with_large_weights(nv, nh, scale):
    rbm = random_rbm(nv, nh, scale=scale, seed=nv + nh)
    _, *want = _numpy_enumeration(rbm)
    for got, w in zip(ev.model_statistics(rbm), want):
        np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-13)


def test_wide_layer_results_do_not_depend_on_the_thread_count():
    # 13 enumerated units (2 chunks) and 1,500 summed out (two softplus segments)
    rbm = random_rbm(13, 1500, scale=0.3, seed=4)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ev.log_partition_exact(rbm), ev.model_statistics(rbm)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = ev.log_partition_exact(rbm), ev.model_statistics(rbm)
    finally:
        numba.set_num_threads(before)
    assert one[0] == two[0]
    for a, b in zip(one[1], two[1]):
        assert np.array_equal(a, b)
