"""Blocked products on Numba's threads (rbmviz.kernels.gemm through rbmviz._blas.matmul): the
same bits as one numpy.matmul per row block, for every layout, any thread count; the fallback
for operands a direct BLAS call cannot take; the check that refuses a wrong routine."""
import numpy as np
import pytest

from rbmviz import _blas
from rbmviz._blas import matmul, numba_threads, row_blocks, single_threaded_blas


def _numpy_blocks(A, B):
    """The reference: one single-threaded numpy.matmul per row block."""
    out = np.empty((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    with single_threaded_blas():
        for lo, hi in row_blocks(A.shape[0]):
            np.matmul(A[lo:hi], B, out=out[lo:hi])
    return out


def _uses_numpy_wheel_openblas():
    cfg = getattr(np, "__config__", None)
    try:
        return cfg.CONFIG["Build Dependencies"]["blas"]["name"] == "scipy-openblas"
    except Exception:
        return False


def test_numpy_wheels_openblas_routines_are_found_and_pass_their_check():
    if not _uses_numpy_wheel_openblas():
        pytest.skip("numpy is not linked to the scipy-openblas of its wheels")
    found = _blas._gemm_routines()
    assert set(found) == {np.float32, np.float64}
    assert all(isinstance(a, int) and a > 0 for a in found.values())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["C", "A^T", "B^T", "out slice"])
@pytest.mark.parametrize("m", [96, 100, 200, 500])
def test_blocked_product_equals_numpy_block_by_block(dtype, layout, m):
    rng = np.random.default_rng(m)
    A = rng.standard_normal((m, 70)).astype(dtype)
    B = rng.standard_normal((70, 45)).astype(dtype)
    if layout == "A^T":
        A = np.ascontiguousarray(A.T).T              # F-ordered: a transposed factor for gemm
    if layout == "B^T":
        B = np.ascontiguousarray(B.T).T
    big = np.full((m + 7, 45 + 3), np.nan, dtype=dtype)
    out = big[3:3 + m, 2:2 + 45] if layout == "out slice" else np.empty((m, 45), dtype=dtype)
    assert len(row_blocks(m)) > 1
    if _blas._gemm_routines():
        assert _blas._gemm_route(A, B, out) is not None
    matmul(A, B, out)
    want = _numpy_blocks(A, B)
    assert np.array_equal(out, want)
    if layout == "out slice":                        # nothing outside the slice is written
        rest = big.copy()
        rest[3:3 + m, 2:2 + 45] = 0
        assert np.isnan(rest).sum() == big.size - m * 45
    np.testing.assert_allclose(out, A.astype(np.float64) @ B.astype(np.float64),
                               rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-4 if dtype == np.float32 else 1e-12)


def test_blocked_product_does_not_depend_on_numba_threads():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((300, 120)).astype(np.float32)
    B = rng.standard_normal((120, 90)).astype(np.float32)
    res = []
    for n in (1, 2):
        out = np.empty((300, 90), dtype=np.float32)
        with numba_threads(n):
            matmul(A, B, out)
        res.append(out)
    assert np.array_equal(res[0], res[1])


@pytest.mark.parametrize("case", ["mixed dtypes", "strided", "out overlaps A", "integers"])
def test_operands_a_direct_call_cannot_take_go_through_numpy(case):
    rng = np.random.default_rng(2)
    A = rng.standard_normal((100, 40))
    B = rng.standard_normal((40, 30))
    out = np.empty((100, 30))
    if case == "mixed dtypes":
        B = B.astype(np.float32)
    elif case == "strided":
        A = rng.standard_normal((100, 80))[:, ::2]
    elif case == "out overlaps A":
        A = rng.standard_normal((100, 40))
        buf = np.zeros((100, 70))
        buf[:, :40] = A
        A, out = buf[:, :40], buf[:, 40:70]
        B = rng.standard_normal((40, 30))
    else:
        A = rng.integers(0, 3, (100, 40))
        B = rng.integers(0, 3, (40, 30))
        out = np.empty((100, 30), dtype=A.dtype)
    assert _blas._gemm_route(A, B, out) is None
    want = A.astype(np.float64) @ B.astype(np.float64)
    matmul(A, B, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_the_check_refuses_a_routine_of_the_wrong_precision():
    found = _blas._gemm_routines()
    if not found:
        pytest.skip("no direct BLAS routine here")
    # sgemm given float64 operands (within their buffers: it reads half the bytes) computes
    # something else: the check must say so
    assert _blas._routines_agree(found) is True
    assert _blas._routines_agree({np.float64: found[np.float32]}) is False
