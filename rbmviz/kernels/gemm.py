"""Row blocks of a matrix product on Numba's threads, each block one single-threaded BLAS call.

:func:`rbmviz._blas.matmul` cuts a product into row blocks fixed by its shape and computes each
block with one single-threaded ``gemm``.  :func:`gemm_blocks_` runs those calls in a ``prange``
over the blocks: the same calls, with the same arguments, as one ``numpy.matmul`` per block, so
the same bits, on the thread team that runs every other kernel of an update.  Compared with a
pool of Python threads, a hand-off costs no GIL round trip, and the team's threads are the
ones already awake from the previous kernel (on a virtual machine an idle core that has
halted takes tens of microseconds to wake).

The BLAS routine is ``cblas_sgemm`` / ``cblas_dgemm`` of the OpenBLAS that numpy itself links
(64-bit integers, the ``scipy_cblas_?gemm64_`` symbols of numpy's wheels), called through its
address, which is an argument (:func:`_call_gemm`), so the compiled kernel holds no pointer of
one process and is cached like every other kernel.  :mod:`rbmviz._blas` finds the routine,
checks it against ``numpy.matmul`` once, and falls back to its thread pool when any of that
fails.
"""
import numba
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

#: CBLAS enum values
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


@intrinsic
def _call_gemm(typingctx, fn, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc):
    """``cblas_?gemm(RowMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)`` through
    the routine's address ``fn`` (int64); ``pa``/``pb``/``pc`` are addresses (int64), the
    integers 64-bit (ILP64), ``alpha``/``beta`` float32 for ``sgemm``, float64 for ``dgemm``."""
    if alpha != beta or alpha not in (types.float32, types.float64):
        return None
    sig = types.void(fn, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc)

    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        real = ir.FloatType() if signature.args[6] == types.float32 else ir.DoubleType()
        ptr = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i64, i64, i64, real, ptr, i64,
                                               ptr, i64, real, ptr, i64])
        f = builder.inttoptr(args[0], fnty.as_pointer())
        (fn_, ta_, tb_, m_, n_, k_, al_, pa_, lda_, pb_, ldb_, be_, pc_, ldc_) = args
        builder.call(f, [ir.Constant(i32, ROW_MAJOR), builder.trunc(ta_, i32), builder.trunc(tb_, i32),
                         m_, n_, k_, al_, builder.inttoptr(pa_, ptr), lda_,
                         builder.inttoptr(pb_, ptr), ldb_, be_, builder.inttoptr(pc_, ptr), ldc_])
        return context.get_dummy_value()
    return sig, codegen


@njit(parallel=True, cache=True, nogil=True)
def gemm_blocks_(fn, ta, tb, lo, hi, n, k, pa, lda, step_a, pb, ldb, pc, ldc, step_c, one, zero):
    """Rows ``[lo[i], hi[i])`` of ``C = op(A) op(B)`` for every block ``i``, in parallel over the
    blocks, each one single-threaded BLAS call (the BLAS must be limited to one thread).

    ``pa``, ``pb``, ``pc`` are the addresses of the first elements; ``step_a`` / ``step_c`` the
    bytes from one row of ``op(A)`` / ``C`` to the next; ``one``, ``zero`` 1 and 0 in the
    arrays' dtype (which selects ``sgemm`` or ``dgemm`` at ``fn``)."""
    for i in prange(lo.shape[0]):
        _call_gemm(fn, ta, tb, hi[i] - lo[i], n, k, one, pa + lo[i] * step_a, lda, pb, ldb,
                   zero, pc + lo[i] * step_c, ldc)


if numba.config.DISABLE_JIT:      # NUMBA_DISABLE_JIT=1: an intrinsic cannot run as Python
    gemm_blocks_ = None           # rbmviz._blas then multiplies with numpy.matmul
