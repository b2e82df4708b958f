"""Products with a 0/1 left factor as sums of rows (rbmviz.kernels.binary, rbmviz._blas):
exact against the dense product, independent of the thread count, and the same CD/PCD update
as the BLAS path."""
import numba
import numpy as np
import pytest

from rbmviz import RBM, _blas
from rbmviz._blas import binary_matmul, binary_matmul_T, binary_rows
from rbmviz.algorithms.cd import CD, PCD


def _dyadic(rng, shape):
    """Values k/1024 with |k| < 2**15: every sum of up to 2**20 of them is exact in float64,
    whatever the order, so a sum of rows and a BLAS product must agree bit for bit."""
    return rng.integers(-2**15, 2**15, size=shape) / 1024.0


@pytest.mark.parametrize("density", [0.0, 0.05, 0.2, 1.0])
def test_sums_of_rows_equal_the_dense_products(density):
    rng = np.random.default_rng(1)
    S = (rng.random((37, 53)) < density).astype(np.float64)
    W, Y = _dyadic(rng, (53, 29)), _dyadic(rng, (37, 29))
    idx, cnt = np.empty(S.shape, np.int32), np.empty(37, np.int32)
    d = binary_rows(S, idx, cnt)
    assert d == pytest.approx(S.mean())
    np.testing.assert_array_equal(cnt, S.sum(axis=1))
    for a in range(37):                                   # the lists are the ones, ascending
        np.testing.assert_array_equal(idx[a, :cnt[a]], np.flatnonzero(S[a]))
    from rbmviz.kernels.binary import gather_rows_, scatter_rows_T_
    out = np.full((37, 29), np.nan)
    gather_rows_(idx, cnt, W, out)
    np.testing.assert_array_equal(out, S @ W)
    G = np.full((53, 29), np.nan)
    scatter_rows_T_(idx, cnt, Y, G, False)
    np.testing.assert_array_equal(G, S.T @ Y)
    scatter_rows_T_(idx, cnt, Y, G, True)                 # accumulate
    np.testing.assert_array_equal(G, 2 * (S.T @ Y))
    from rbmviz.kernels.binary import gather_rows_T_     # the same sums, gathered per row of G
    tidx, tcnt = np.empty((53, 40), np.int32), np.empty(53, np.int32)
    G2 = np.full((53, 29), np.nan)
    gather_rows_T_(idx, cnt, Y, G2, False, tidx, tcnt)
    np.testing.assert_array_equal(G2, S.T @ Y)
    gather_rows_T_(idx, cnt, Y, G2, True, tidx, tcnt)
    np.testing.assert_array_equal(G2, G)


def test_gathered_and_scattered_transposed_sums_are_the_same_bits():
    """Sᵀ Y gathered per row of the result adds the same rows in the same order as the
    scatter: the same bits for inexact values too."""
    from rbmviz.kernels.binary import gather_rows_T_, scatter_rows_T_
    rng = np.random.default_rng(7)
    S = (rng.random((90, 140)) < 0.15).astype(np.float32)
    Y = rng.standard_normal((90, 70)).astype(np.float32)
    idx, cnt = np.empty(S.shape, np.int32), np.empty(90, np.int32)
    binary_rows(S, idx, cnt)
    G1, G2 = rng.standard_normal((2, 140, 70)).astype(np.float32)
    G1c = G1.copy()
    scatter_rows_T_(idx, cnt, Y, G1, True)
    gather_rows_T_(idx, cnt, Y, G1c, True, np.empty((140, 90), np.int32), np.empty(140, np.int32))
    np.testing.assert_array_equal(G1, G1c)


def test_a_row_that_is_not_binary_falls_back_to_blas():
    rng = np.random.default_rng(2)
    S = (rng.random((8, 10)) < 0.1).astype(np.float64)
    S[3, 4] = 0.5
    idx, cnt = np.empty(S.shape, np.int32), np.empty(8, np.int32)
    assert binary_rows(S, idx, cnt) is None
    assert cnt[3] == -1
    W = rng.standard_normal((10, 6))
    out = np.empty((8, 6))
    np.testing.assert_allclose(binary_matmul(S, W, out, idx, cnt, None), S @ W, rtol=1e-12)
    Y = rng.standard_normal((8, 6))
    G = np.empty((10, 6))
    np.testing.assert_allclose(binary_matmul_T([(S, Y, idx, cnt, None)], G), S.T @ Y, rtol=1e-12)
    assert binary_rows(np.zeros((0, 5)), idx, cnt) is None


def test_mixed_dense_and_sparse_blocks_add_up():
    rng = np.random.default_rng(3)
    A1 = (rng.random((20, 30)) < 0.1).astype(np.float64)     # sparse block
    A2 = (rng.random((15, 30)) < 0.9).astype(np.float64)     # dense block
    Y1, Y2 = _dyadic(rng, (20, 12)), _dyadic(rng, (15, 12))
    i1, c1 = np.empty(A1.shape, np.int32), np.empty(20, np.int32)
    i2, c2 = np.empty(A2.shape, np.int32), np.empty(15, np.int32)
    blocks = [(A1, Y1, i1, c1, binary_rows(A1, i1, c1)), (A2, Y2, i2, c2, binary_rows(A2, i2, c2))]
    G = np.empty((30, 12))
    with _blas.single_threaded_blas():
        binary_matmul_T(blocks, G)
    np.testing.assert_array_equal(G, A1.T @ Y1 + A2.T @ Y2)


def test_sums_of_rows_do_not_depend_on_the_thread_count():
    from rbmviz.kernels.binary import gather_rows_, scatter_rows_T_
    rng = np.random.default_rng(4)
    S = (rng.random((64, 300)) < 0.15).astype(np.float32)
    W = rng.standard_normal((300, 260)).astype(np.float32)
    Y = rng.standard_normal((64, 260)).astype(np.float32)
    idx, cnt = np.empty(S.shape, np.int32), np.empty(64, np.int32)
    binary_rows(S, idx, cnt)
    res = []
    before = numba.get_num_threads()
    try:
        for t in sorted({1, before}):
            numba.set_num_threads(t)
            out, G = np.empty((64, 260), np.float32), np.empty((300, 260), np.float32)
            gather_rows_(idx, cnt, W, out)
            scatter_rows_T_(idx, cnt, Y, G, False)
            res.append((out, G))
    finally:
        numba.set_num_threads(before)
    for out, G in res[1:]:
        np.testing.assert_array_equal(out, res[0][0])
        np.testing.assert_array_equal(G, res[0][1])


@pytest.mark.parametrize("cls", [CD, PCD])
def test_a_cd_update_is_the_same_with_sums_of_rows(cls, monkeypatch):
    """One update from dyadic weights on sparse 0/1 data: the sums-of-rows path and the
    all-BLAS path draw the same samples (every pre-activation ``S W`` is exact either way), so
    the biases agree bit for bit and the weights to rounding of the weight step's sums."""
    import rbmviz.algorithms.cd as cdmod

    rng = np.random.default_rng(5)
    X = (rng.random((40, 120)) < 0.12).astype(np.float64)
    models, calls = [], []
    real_gather = _blas.gather_rows_
    monkeypatch.setattr(_blas, "gather_rows_", lambda *a: (calls.append(1), real_gather(*a)))
    for fused in ("gather_pcd_first_layer_", "gather_sigmoid_rows_scaled_"):   # sums of rows + sampling
        real = getattr(cdmod, fused)
        monkeypatch.setattr(cdmod, fused, lambda *a, _f=real: (calls.append(1), _f(*a)))
    for dense in (False, True):
        monkeypatch.setattr(_blas, "BINARY_DENSITY_MAX", -1.0 if dense else 0.25)
        monkeypatch.setattr(cdmod, "BINARY_DENSITY_MAX", -1.0 if dense else 0.25)
        rbm = RBM(120, 70, seed=0)
        rbm.W[...] = _dyadic(np.random.default_rng(6), rbm.W.shape) / 64
        rbm.b[...] = -2.0                       # sparse chains as well as sparse data
        alg = cls(k=2, learning_rate=0.05, seed=3)
        alg.setup(rbm, X, 20)
        alg.update(rbm, X[:20])
        models.append(rbm)
        if not dense:
            assert len(calls) >= 3, "the sums-of-rows path was not taken"
    np.testing.assert_array_equal(models[0].b, models[1].b)
    np.testing.assert_array_equal(models[0].c, models[1].c)
    np.testing.assert_allclose(models[0].W, models[1].W, rtol=0, atol=1e-15)
    assert not np.array_equal(models[0].W, RBM(120, 70, seed=0).W)

