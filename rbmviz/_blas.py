"""Matrix products whose result does not depend on the thread count.

OpenBLAS splits a product differently for 1 and for 2 threads, and the rounding follows the
split: a run on the BLAS path differed by ~1e-11 between ``OPENBLAS_NUM_THREADS=1`` and 2.
:func:`matmul` fixes the split instead: the rows of the product are cut into blocks whose
number depends on the shapes only (:func:`row_blocks`), each block is one single-threaded
BLAS call, and the blocks are spread over a small pool of Python threads (numpy releases the
GIL).  The thread count then only decides *who* computes a block, never *how*, so the product
is bit-identical for any number of threads.

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

from .kernels.binary import active_index_, gather_rows_, gather_rows_T_

__all__ = ["matmul", "row_blocks", "single_threaded_blas", "set_threads", "get_threads",
           "set_numba_threads", "numba_threads", "limit_threads",
           "binary_rows", "binary_rows_split", "binary_matmul", "binary_matmul_T", "BINARY_DENSITY_MAX"]

#: a 0/1 left factor with at most this fraction of ones is multiplied as sums of rows
#: (:mod:`rbmviz.kernels.binary`): measured on 784×500 float32, single-threaded, the sum of
#: rows takes 0.4× BLAS's time at 13 % ones and the same time at ~30 %
BINARY_DENSITY_MAX = 0.25

#: rows per block aimed at (fewer, larger blocks cost less dispatch; and the OpenBLAS that numpy
#: ships mostly runs two concurrent single-threaded calls one after the other: on 2 cores the
#: 100-chain ``H Wᵀ`` of a PCD update took 0.70 ms as one block and 0.84 ms as two)
BLOCK_ROWS = 64
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
    """Threads :func:`matmul` uses (default: the CPU count, at most :data:`MAX_BLOCKS`)."""
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
    """Row ranges of a product with ``m`` rows: ``min(MAX_BLOCKS, max(1, m // BLOCK_ROWS))``
    nearly equal blocks — a function of the shape only."""
    nb = min(MAX_BLOCKS, max(1, m // BLOCK_ROWS))
    edges = np.linspace(0, m, nb + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def matmul(A, B, out):
    """``out[...] = A @ B`` (2-D arrays, ``out`` preallocated), bit-identical for any thread
    count.  Call it inside :func:`single_threaded_blas`; returns ``out``."""
    blocks = row_blocks(A.shape[0])
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
