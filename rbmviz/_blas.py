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
"""
from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["matmul", "row_blocks", "single_threaded_blas", "set_threads", "get_threads"]

#: rows per block aimed at (fewer, larger blocks cost less dispatch)
BLOCK_ROWS = 48
#: at most this many blocks per product
MAX_BLOCKS = 4

_lock = threading.Lock()
_depth = 0
_limiter = None
_controller = None
_pool: ThreadPoolExecutor | None = None
_threads = max(1, min(MAX_BLOCKS, os.cpu_count() or 1))


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
