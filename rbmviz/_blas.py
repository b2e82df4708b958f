"""Matrix products whose result does not depend on the thread count.

OpenBLAS splits a product differently for 1 and for 2 threads, and the rounding follows the
split: a run on the BLAS path differed by ~1e-11 between ``OPENBLAS_NUM_THREADS=1`` and 2.
:func:`matmul` fixes the split instead: the rows of the product are cut into blocks whose
number depends on the shapes only (:func:`row_blocks`), each block is one single-threaded
BLAS call, and the blocks are spread over threads: Numba's, in one parallel kernel that calls
the ``gemm`` of numpy's own OpenBLAS (:mod:`rbmviz.kernels.gemm`), or a small pool of Python
threads (numpy releases the GIL) where that routine is not at hand.  The thread count then
only decides *who* computes a block, never *how*, so the product is bit-identical for any
number of threads, and the two ways give the same bits.

It is also robust on a shared machine: multi-threaded OpenBLAS spins while it waits for its
threads and becomes up to 10× slower when another process holds a core; single-threaded
calls do not wait for each other.

While any caller is inside :func:`single_threaded_blas` the process's BLAS runs one thread
per call (``threadpoolctl``; process-wide, reference-counted so that concurrent callers do
not restore the setting under each other).

The thread counts of the other pools are set here too: :func:`set_numba_threads` and
:func:`numba_threads` for Numba's (per calling thread), :func:`limit_threads` for a worker
process that owns a number of cores (Numba, :func:`matmul`'s pool and BLAS at once).
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from .kernels import gemm as _gemm
from .kernels.binary import active_index_, gather_rows_, gather_rows_T_

__all__ = ["matmul", "row_blocks", "single_threaded_blas", "set_threads", "get_threads",
           "set_numba_threads", "numba_threads", "limit_threads",
           "binary_rows", "binary_rows_split", "binary_matmul", "binary_matmul_T", "BINARY_DENSITY_MAX"]

#: a 0/1 left factor with at most this fraction of ones is multiplied as sums of rows
#: (:mod:`rbmviz.kernels.binary`): measured on 784×500 float32, single-threaded, the sum of
#: rows takes 0.4× BLAS's time at 13 % ones and the same time at ~30 %
BINARY_DENSITY_MAX = 0.25

#: a product is cut into 1, 2 or 4 row blocks (a power of two, so the blocks spread evenly
#: over 1, 2 or 4 threads) of at least this many rows: measured on 2 cores, the 100-row
#: float32 products of a 784×500 PCD update take 0.44 ms as two concurrent single-threaded
#: 50-row calls against 0.65 ms as one call (multi-threaded OpenBLAS: 0.38 ms, not
#: bit-identical across thread counts)
BLOCK_ROWS = 48
#: at most this many blocks per product
MAX_BLOCKS = 4

_lock = threading.Lock()
_depth = 0
_limiter = None
_controller = None
_pool: ThreadPoolExecutor | None = None
_threads = max(1, min(MAX_BLOCKS, os.cpu_count() or 1))
#: the process-wide BLAS limit :func:`limit_threads` has set (None: not set)
_process_limit: int | None = None


def get_threads() -> int:
    """Threads :func:`matmul` spreads its blocks over (default: the CPU count, at most
    :data:`MAX_BLOCKS`), on Numba's threads or its Python pool, whatever the calling thread's
    own Numba count."""
    return _threads


def set_threads(n: int) -> None:
    """Use ``n`` threads (≥ 1) in :func:`matmul`; results do not change."""
    global _threads, _pool
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    with _lock:
        _threads = n
        if _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None


def set_numba_threads(n: int) -> int:
    """Run the calling thread's Numba kernels on ``n`` threads, clamped to
    ``[1, NUMBA_NUM_THREADS]`` (``numba.set_num_threads`` is per thread).

    Parameters
    ----------
    n : int
        Threads asked for.

    Returns
    -------
    int
        The threads set.
    """
    n = max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(n)
    return n


@contextlib.contextmanager
def numba_threads(n: int) -> Iterator[None]:
    """The calling thread's Numba kernels on ``n`` threads (:func:`set_numba_threads`) for the
    duration; the count before is restored after."""
    before = numba.get_num_threads()
    set_numba_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def limit_threads(n: int | None) -> None:
    """A worker process given ``n`` cores uses at most that many threads everywhere: Numba
    (:func:`set_numba_threads`, the calling thread), :func:`matmul`'s pool and the BLAS
    library itself (``threadpoolctl``, process-wide).

    The BLAS limit matters most: a numpy product outside :func:`single_threaded_blas` (e.g.
    in AIS) otherwise runs OpenBLAS with one spinning thread per core in every worker, and two
    workers on two cores ran the quick dc-mnist sweep 4.6x slower than with
    ``OPENBLAS_NUM_THREADS=1`` (268 s against 58 s).

    Parameters
    ----------
    n : int or None
        Cores of the worker (``None``: leave every pool as it is).
    """
    global _process_limit
    if n is None:
        return
    n = set_numba_threads(n)
    if get_threads() != n:
        set_threads(n)
    if _process_limit != n:
        try:
            from threadpoolctl import threadpool_limits     # a scikit-learn dependency
        except ImportError:                                 # pragma: no cover
            return
        threadpool_limits(limits=n, user_api="blas")        # applied now, for the process
        _process_limit = n


def _get_pool():
    global _pool
    with _lock:
        if _pool is None and _threads > 1:
            _pool = ThreadPoolExecutor(max_workers=_threads - 1, thread_name_prefix="rbmviz-blas")
        return _pool


@contextlib.contextmanager
def single_threaded_blas():
    """BLAS limited to one thread per call for the duration (process-wide; nested and
    concurrent uses share one limit, restored when the last one leaves)."""
    global _depth, _limiter, _controller
    with _lock:
        if _depth == 0:
            try:
                if _controller is None:          # scanning the loaded libraries costs ~ms: once
                    from threadpoolctl import ThreadpoolController   # a scikit-learn dependency
                    _controller = ThreadpoolController()
                _limiter = _controller.limit(limits=1, user_api="blas")
            except ImportError:                                  # pragma: no cover
                _limiter = None
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None


def row_blocks(m: int) -> list[tuple[int, int]]:
    """Row ranges of a product with ``m`` rows: the largest of 1, 2, 4 (at most
    :data:`MAX_BLOCKS`) nearly equal blocks of at least :data:`BLOCK_ROWS` rows — a function
    of the shape only.

    OpenBLAS's rounding of a row depends on the rows of the call it is in, so the blocks, and
    with them the bits of a product, are fixed by ``m``; the thread count only decides who
    computes which block."""
    nb = 1
    while nb * 2 <= MAX_BLOCKS and m >= nb * 2 * BLOCK_ROWS:
        nb *= 2
    edges = np.linspace(0, m, nb + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def matmul(A, B, out):
    """``out[...] = A @ B`` (2-D arrays, ``out`` preallocated), bit-identical for any thread
    count; returns ``out``.

    The row blocks of :func:`row_blocks` are computed by one single-threaded BLAS call each:
    on Numba's threads (:func:`rbmviz.kernels.gemm.gemm_blocks_`) when numpy's OpenBLAS routine
    is at hand and the operands suit it (:func:`_gemm_route`), else by ``numpy.matmul`` on
    this module's thread pool — the same calls either way, so the same bits."""
    blocks = row_blocks(A.shape[0])
    with single_threaded_blas():
        route = _gemm_route(A, B, out) if len(blocks) > 1 else None
        if route is not None:
            n = max(1, min(_threads, len(blocks), numba.config.NUMBA_NUM_THREADS))
            before = numba.get_num_threads()
            if before != n:                  # get_threads() threads, whatever the caller's count
                numba.set_num_threads(n)
            try:
                _gemm_blocks(route, blocks)
            finally:
                if before != n:
                    numba.set_num_threads(before)
            return out
        pool = _get_pool() if len(blocks) > 1 else None
        if pool is None:
            for lo, hi in blocks:
                np.matmul(A[lo:hi], B, out=out[lo:hi])
            return out
        n = min(_threads, len(blocks))
        groups = [blocks[i::n] for i in range(n)]          # round-robin: equal shares
        futures = [pool.submit(_run_blocks, A, B, out, g) for g in groups[1:]]
        _run_blocks(A, B, out, groups[0])
        for f in futures:
            f.result()
    return out


def _gemm_blocks(route, blocks):
    """The ``blocks`` of a product on Numba's threads, ``route`` from :func:`_gemm_route`."""
    lo = np.array([b[0] for b in blocks], dtype=np.int64)
    hi = np.array([b[1] for b in blocks], dtype=np.int64)
    _gemm.gemm_blocks_(*route[:3], lo, hi, *route[3:])


def _layout(X):
    """``(trans, ld)`` of a 2-D array for a row-major ``gemm`` (one of its strides one item),
    or None."""
    it = X.itemsize
    s0, s1 = X.strides
    rows, cols = X.shape
    if s1 == it and s0 % it == 0 and s0 // it >= max(cols, 1):
        return _gemm.NO_TRANS, s0 // it
    if s0 == it and s1 % it == 0 and s1 // it >= max(rows, 1):
        return _gemm.TRANS, s1 // it
    return None


#: dtype -> address of numpy's own single-threaded-capable ``cblas_?gemm`` (ILP64); filled once
_routines: dict | None = None


def _gemm_route(A, B, out):
    """The arguments of :func:`rbmviz.kernels.gemm.gemm_blocks_` for ``out = A @ B`` (without
    the block bounds), or None when the product must go through ``numpy.matmul``: no checked
    routine for the dtype (:func:`_gemm_routines`), or operands that do not suit a direct
    call (:func:`_gemm_args`)."""
    fn = _gemm_routines().get(out.dtype.type)
    if fn is None:
        return None
    args = _gemm_args(A, B, out)
    return None if args is None else (fn,) + args


def _gemm_args(A, B, out):
    """``(ta, tb, n, k, pa, lda, step_a, pb, ldb, pc, ldc, step_c, one, zero)`` for a direct
    ``gemm`` of ``out = A @ B``, or None: mixed or non-float dtypes, an operand without a unit
    stride, an empty product, or ``out`` sharing memory with a factor."""
    dt = out.dtype
    if (dt.type not in (np.float32, np.float64) or A.dtype != dt or B.dtype != dt
            or A.ndim != 2 or B.ndim != 2 or out.ndim != 2 or 0 in A.shape or 0 in B.shape):
        return None
    la, lb, lc = _layout(A), _layout(B), _layout(out)
    if la is None or lb is None or lc is None or lc[0] != _gemm.NO_TRANS:
        return None
    if np.may_share_memory(out, A) or np.may_share_memory(out, B):
        return None
    return (la[0], lb[0], B.shape[1], A.shape[1], A.ctypes.data, la[1], A.strides[0],
            B.ctypes.data, lb[1], out.ctypes.data, lc[1], out.strides[0], dt.type(1), dt.type(0))


def _gemm_routines() -> dict:
    """``{numpy.float32: address, numpy.float64: address}`` of ``cblas_sgemm``/``cblas_dgemm``
    in the OpenBLAS numpy links (numpy's wheels: ``scipy_cblas_?gemm64_``), found once with
    ``threadpoolctl`` and checked: products of every layout through
    :func:`rbmviz.kernels.gemm.gemm_blocks_` must equal ``numpy.matmul``'s bit for bit, else
    (or with ``NUMBA_DISABLE_JIT``, or another BLAS) the result is empty and :func:`matmul`
    uses its thread pool."""
    global _routines
    if _routines is not None:
        return _routines
    with _lock:
        if _routines is not None:
            return _routines
        found = {}
        if _gemm.gemm_blocks_ is not None:
            try:
                found = _find_routines()
            except Exception:                        # pragma: no cover - any loader failure
                found = {}
        _routines = {}                # meanwhile (during the check) the thread pool multiplies
    if found and not _routines_agree(found):
        found = {}
    _routines = found
    return _routines


def _find_routines() -> dict:
    import ctypes

    from threadpoolctl import threadpool_info        # a scikit-learn dependency
    for lib in threadpool_info():
        path = lib.get("filepath") or ""
        if lib.get("internal_api") != "openblas" or "numpy" not in os.path.basename(os.path.dirname(path)):
            continue
        handle = ctypes.CDLL(path)
        out = {}
        for dtype, name in ((np.float32, "scipy_cblas_sgemm64_"), (np.float64, "scipy_cblas_dgemm64_")):
            f = getattr(handle, name, None)
            if f is not None:
                out[dtype] = ctypes.cast(f, ctypes.c_void_p).value
        return out
    return {}


def _routines_agree(found: dict) -> bool:
    """Whether products through ``found`` equal ``numpy.matmul``'s, block by block, for every
    layout of the factors (both dtypes)."""
    rng = np.random.default_rng(0)
    with single_threaded_blas():
        for dtype, fn in found.items():
            A = rng.standard_normal((130, 37)).astype(dtype)
            B = rng.standard_normal((37, 29)).astype(dtype)
            for a, b in ((A, B), (np.asfortranarray(A), B), (A, np.asfortranarray(B)),
                         (np.asfortranarray(A), np.asfortranarray(B))):
                out = np.empty((130, 29), dtype=dtype)
                blocks = row_blocks(130)
                _gemm_blocks((fn,) + _gemm_args(a, b, out), blocks)
                want = np.empty_like(out)
                for x, y in blocks:
                    np.matmul(a[x:y], b, out=want[x:y])
                if not np.array_equal(out, want):
                    return False
    return True


def _run_blocks(A, B, out, blocks):
    for lo, hi in blocks:
        np.matmul(A[lo:hi], B, out=out[lo:hi])


def binary_rows(A: np.ndarray, idx: np.ndarray, cnt: np.ndarray) -> float | None:
    """List the ones of each row of ``A`` into ``idx``/``cnt``
    (:func:`rbmviz.kernels.binary.active_index_`).

    Parameters
    ----------
    A : numpy.ndarray, shape (r, n)
        The left factor.
    idx : numpy.ndarray, int32, shape (r, n)
        Written: the columns of the ones of row ``a`` in ``idx[a, :cnt[a]]``.
    cnt : numpy.ndarray, int32, shape (r,)
        Written: the number of ones per row (−1 for a row that is not 0/1).

    Returns
    -------
    float or None
        The fraction of ones, or None when ``A`` holds another value (or has no rows).
    """
    if A.shape[0] == 0 or A.shape[1] == 0:
        return None
    active_index_(A, idx, cnt)
    if cnt.min() < 0:
        return None
    return float(cnt.sum()) / A.size


def binary_rows_split(A: np.ndarray, n: int, idx: np.ndarray, cnt: np.ndarray
                      ) -> tuple[float | None, float | None]:
    """:func:`binary_rows` of the row blocks ``A[:n]`` and ``A[n:]`` in one kernel call.

    Parameters
    ----------
    A : numpy.ndarray, shape (r, m)
        The stacked left factor (e.g. the chains above the data batch).
    n : int
        Rows of the first block (0 ≤ n ≤ r).
    idx, cnt
        As in :func:`binary_rows`, for all ``r`` rows.

    Returns
    -------
    tuple
        The fractions of ones of the two blocks (None for a block that holds another value
        or has no rows).
    """
    r, m = A.shape
    if r == 0 or m == 0:
        return None, None
    active_index_(A, idx, cnt)

    def part(c):
        if c.size == 0 or c.min() < 0:
            return None
        return float(c.sum()) / (c.size * m)
    return part(cnt[:n]), part(cnt[n:r])


def binary_matmul(A, B, out, idx, cnt, density):
    """``out[...] = A @ B``: as sums of rows of ``B`` when ``A`` is 0/1 with at most
    :data:`BINARY_DENSITY_MAX` ones (``density`` from :func:`binary_rows` on ``A``, whose lists
    ``idx``/``cnt`` it uses), else :func:`matmul`.  Bit-identical for any thread count either
    way; returns ``out``."""
    if density is not None and density <= BINARY_DENSITY_MAX:
        gather_rows_(idx, cnt, B, out)
        return out
    return matmul(A, B, out)


_scratch = threading.local()


def _column_lists(n: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """int32 scratch for the column lists of :func:`rbmviz.kernels.binary.gather_rows_T_`
    (``n`` columns, ``r`` rows), kept per thread and grown as needed (no allocation per
    product; concurrent callers never share it)."""
    tidx = getattr(_scratch, "tidx", None)
    if tidx is None or tidx.shape[0] < n or tidx.shape[1] < r:
        shape = (max(n, 0 if tidx is None else tidx.shape[0]), max(r, 1, 0 if tidx is None else tidx.shape[1]))
        tidx = _scratch.tidx = np.empty(shape, dtype=np.int32)
        _scratch.tcnt = np.empty(shape[0], dtype=np.int32)
    return tidx, _scratch.tcnt


def binary_matmul_T(blocks, out):
    """``out[...] = Σ_i A_iᵀ @ Y_i`` over ``blocks`` = ``[(A_i, Y_i, idx_i, cnt_i, density_i),
    …]`` (row blocks of a stacked product ``Aᵀ Y``): the dense blocks by :func:`matmul` (one
    product when all are dense), then the 0/1 blocks with at most :data:`BINARY_DENSITY_MAX`
    ones added as sums of rows of ``Y_i`` (:func:`rbmviz.kernels.binary.gather_rows_T_`).  Bit-identical for
    any thread count; returns ``out``."""
    sparse = [b for b in blocks if b[4] is not None and b[4] <= BINARY_DENSITY_MAX]
    dense = [b for b in blocks if not (b[4] is not None and b[4] <= BINARY_DENSITY_MAX)]
    acc = False
    for A, Y, *_ in dense:
        if acc:
            out += matmul(A.T, Y, np.empty_like(out))
        else:
            matmul(A.T, Y, out)
        acc = True
    for A, Y, idx, cnt, _ in sparse:
        tidx, tcnt = _column_lists(out.shape[0], Y.shape[0])
        gather_rows_T_(idx, cnt, Y, out, acc, tidx, tcnt)
        acc = True
    if not acc:
        out[...] = 0
    return out
