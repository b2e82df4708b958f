"""Adaptive TAP (adaTAP; Opper & Winther 2001) for binary RBMs, solved with VAMP — Tramel et
al. (2018), Appendix D, Alg. 3 (restated and checked in the TAP-beyond theory page of the documentation).

All units are stacked into one vector of ``n = n_v + n_h`` binary variables with the block
coupling and field

    ``J = [[0, W], [Wᵀ, 0]]``,   ``H = (b, c)``.

Every unit carries two Gaussian-form messages ``exp(B x − A x²/2)``: ``(A₁, B₁)`` from the
interaction side into the prior, ``(A₂, B₂)`` from the prior into the interaction side.
One iteration of Alg. 3 (binary units, ``x² = x``):

* prior step: ``a₁ = σ(B₁ − A₁/2)``, ``v₁ = a₁(1 − a₁)``, ``A₂ = 1/v₁ − A₁``,
  ``B₂ = a₁/v₁ − B₁`` (``= 1/(1 − a₁) − B₁`` as the seed prints it);
* interaction step: ``C₂ = (diag(A₂) − J)⁻¹``, ``a₂ = C₂(B₂ + H)``, ``d = diag C₂``,
  ``A₁ ← 1/d − A₂``, ``B₁ ← a₂/d − B₂``,

with the new ``(A₁, B₁)`` damped as ``δ·new + (1 − δ)·old``.  At the fixed point ``a₁ = a₂``
(the magnetisations) and ``v₁ = d`` (the variances), the outputs that replace Alg. 1's in
the training update (Alg. 2, eq. 40).

Stability (not in the paper): as printed (damping 0.5, ``A₁ = B₁ = 0``)
the iteration reaches ``v₁ → 0`` and then ``1/v₁ = ∞`` on some strongly coupled models;
``v₁`` is floored at ``var_floor`` (1e-12) and the default damping is 0.1 (weight of the new
iterate).

Cost: ``C₂`` differs per row (``A₂`` does), so each iteration needs one ``n × n`` inverse
per initialisation — the paper's "10³× slower than TAP" (Fig. 10 right).  Here the inverse
is never formed: ``diag(A₂) − J = [[D_l, −W_l], [−W_lᵀ, D_s]]`` is reduced to the Schur
complement ``S = D_s − W_lᵀ D_l⁻¹ W_l`` of the larger layer ``l`` (size of the smaller layer
``s``), from which ``a₂`` and ``diag C₂`` follow exactly::

    x_s = S⁻¹ (y_s + W_lᵀ D_l⁻¹ y_l),   x_l = D_l⁻¹ (y_l + W_l x_s),
    diag C_ss = diag S⁻¹,               diag C_ll = D_l⁻¹ + D_l⁻² diag(W_l S⁻¹ W_lᵀ),

all rows of a chunk at once (stacked BLAS matmuls and ``np.linalg.inv``; no Python loop over
units or rows).  ``method="direct"`` inverts the full matrix instead (the reference for the
tests).

The adaTAP (expectation-consistent) estimate of ``ln Z`` at a fixed point is

    ``ln Z_EC = Σ_i softplus(B₁ᵢ − A₁ᵢ/2) − ½ ln|det(diag(A₂) − J)| + ½ (B₂ + H)ᵀ C₂ (B₂ + H)
    − ½ Σ_i ln v₁ᵢ − Σ_i a₁ᵢ²/(2 v₁ᵢ)``

(the prior side, plus the Gaussian interaction side, minus the Gaussian with both messages).
"""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from .. import bounds as _bounds
from .._blas import single_threaded_blas
from .._numerics import sigmoid as _sigmoid, softplus as _softplus
from ..model import RBM
from .._validation import (check_array, check_bool, check_choice, check_data, check_float,
                           check_int)
from .inference import TAPSolution

__all__ = ["solve", "AdaTAPSolution", "interaction_step", "work_bytes", "METHODS"]

METHODS = ("schur", "direct")
#: bytes of stacked (rows, n_l, n_s) work arrays per chunk of rows
_CHUNK_BYTES = 64 * 2 ** 20
#: Schur complements up to this size are solved with one BLAS thread: their many small
#: products gain nothing from threads, and on a busy machine spinning BLAS threads made them
#: 6–10× slower (measured: 784×16, 50 rows, 0.19 s vs 0.03 s per iteration)
_SINGLE_THREAD_MAX = 64


def _blas_threads(n_small):
    """One BLAS thread for small Schur complements (see ``_SINGLE_THREAD_MAX``)."""
    return single_threaded_blas() if n_small <= _SINGLE_THREAD_MAX else contextlib.nullcontext()


@dataclasses.dataclass
class AdaTAPSolution(TAPSolution):
    """adaTAP fixed points (Alg. 3), one per initialisation; a :class:`TAPSolution` whose
    ``av, cv, ah, ch`` are ``a₁`` and ``v₁`` (equal to ``a₂`` and ``diag C₂`` at
    convergence), ``Bv, Av, Bh, Ah`` the interaction-side messages ``(B₁ − H, A₁)`` (so that
    ``a = σ(H + B − A/2) = f_a(B, A)`` as for Alg. 1), ``log_z`` the expectation-consistent
    estimate ``ln Z_EC`` and ``free_energy = −ln Z_EC + Σ softplus(b) + Σ softplus(c)``
    (normalised priors, as ``𝔽_RBM`` of eq. 36).

    Parameters
    ----------
    av, cv, ah, ch, Bv, Av, Bh, Ah, converged, n_iter, free_energy, log_z, order, damping, tol
        As in :class:`TAPSolution`, with the meaning above.
    a2, d : ndarray (R, n)
        Interaction-side means ``a₂ = C₂(B₂ + H)`` and variances ``d = diag C₂``, units
        stacked ``(visible, hidden)``.
    A1, B1, A2, B2 : ndarray (R, n)
        The messages at the returned iterate.
    residual_a, residual_v : ndarray (R,)
        ``max_i |a₁ − a₂|`` and ``max_i |v₁ − d|`` at the returned iterate.
    history : dict of ndarray (n_iterations,)
        Per iteration, over the rows still running: ``"active"`` (count), ``"max_da"``
        (max ``|a₁ − a₂|``), ``"max_dv"`` (max ``|v₁ − d|``) and ``"max_step"`` (max mean
        squared change of ``a₁`` from the previous iteration).
    method, var_floor
        The settings used.
    """

    a2: np.ndarray = None
    d: np.ndarray = None
    A1: np.ndarray = None
    B1: np.ndarray = None
    A2: np.ndarray = None
    B2: np.ndarray = None
    residual_a: np.ndarray = None
    residual_v: np.ndarray = None
    history: dict = None
    method: str = "schur"
    var_floor: float = 1e-12

    _ROW_FIELDS = TAPSolution._ROW_FIELDS + ("a2", "d", "A1", "B1", "A2", "B2", "residual_a",
                                             "residual_v")

    def __repr__(self):
        return (f"AdaTAPSolution(R={len(self)}, converged={self.n_converged}, "
                f"n_iter median={int(np.median(self.n_iter)) if len(self) else 0}, "
                f"max |a1-a2|={float(np.max(self.residual_a)) if len(self) else 0:.2g})")


# ---------------------------------------------------------------------------- linear algebra
def _chunk_rows(nl, ns):
    return max(1, int(_CHUNK_BYTES // (8 * max(1, nl * ns + ns * ns))))


def work_bytes(n_visible: int, n_hidden: int, rows: int, method: str = "schur") -> int:
    """Estimated peak bytes of the work arrays of :func:`interaction_step` (an upper bound of
    what numpy allocates, checked against ``tracemalloc`` in the tests).

    ``"direct"``: ``J`` plus, per chunk of ``r`` rows, the matrices ``M``, their inverses and
    LAPACK's two copies (identity right-hand side, LU factors): ``8 n² (1 + 4 r)`` with
    ``n = n_v + n_h``.  ``"schur"``: two copies of the weights, then either the product table
    (``n_l n_s(n_s + 1)/2`` numbers, three times while it is built) and ``6 n_s²`` numbers
    per row, or the stacked ``(r, n_l, n_s)`` products and Schur complements,
    ``8 r (3 n_l n_s + 5 n_s²)``.  Rows are chunked so that a chunk's stacked arrays take
    about 64 MB, but never fewer than one row: a single large row sets the peak.

    Parameters
    ----------
    n_visible, n_hidden : int
        Layer sizes.
    rows : int
        Rows solved at once.
    method : {"schur", "direct"}
        How the system is solved.

    Returns
    -------
    int
        Bytes.
    """
    if method == "direct":
        n = n_visible + n_hidden
        r = min(rows, _chunk_rows(n, n))
        return 8 * n * n * (1 + 4 * r)
    nl, ns = max(n_visible, n_hidden), min(n_visible, n_hidden)
    r = min(rows, _chunk_rows(nl, ns))
    table = 8 * nl * ns * (ns + 1) // 2
    if table <= _CHUNK_BYTES:
        return 16 * nl * ns + 3 * table + 8 * r * 6 * ns * ns
    return 16 * nl * ns + 8 * r * (3 * nl * ns + 5 * ns * ns)


def _check_work_memory(n_visible, n_hidden, rows, method):
    """Refuse a solve whose work arrays exceed :data:`rbmviz.bounds.MEMORY_MAX`, before any of
    them is allocated (the message states the estimate and the bound)."""
    n, ns = n_visible + n_hidden, min(n_visible, n_hidden)
    size = (f"one {n:,}×{n:,} matrix per row" if method == "direct" else
            f"one {ns:,}×{ns:,} Schur complement per row")
    try:
        _bounds.check_memory(work_bytes(n_visible, n_hidden, rows, method),
                             f"method={method!r} (adaTAP's Gaussian step on a {n_visible}×"
                             f"{n_hidden} model: {size})")
    except ValueError as exc:
        hint = ("; method='schur' eliminates the larger layer and needs about "
                f"{work_bytes(n_visible, n_hidden, rows, 'schur') / 2**20:,.0f} MiB"
                if method == "direct" else "")
        raise ValueError(f"{exc}{hint}") from None


def _outer_table(Wl):
    """``K[i, t] = W_l[i, a] W_l[i, b]`` over the pairs ``t = (a ≤ b)`` of the smaller layer,
    with the pair indices and weights ``2 − δ_ab``: shared by every row and iteration, it turns
    ``W_lᵀ D⁻¹ W_l`` and ``diag(W_l S⁻¹ W_lᵀ)`` of a whole chunk into one GEMM each."""
    ia, ib = np.triu_indices(Wl.shape[1])
    K = np.ascontiguousarray(Wl[:, ia] * Wl[:, ib])
    return K, ia, ib, np.where(ia == ib, 1.0, 2.0)


def interaction_step(W: np.ndarray, A2: np.ndarray, y: np.ndarray, *, method: str = "schur",
                     logdet: bool = False, table: np.ndarray | bool | None = None
                     ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian (interaction) step of Alg. 3 for a batch of rows.

    For every row ``r``: ``M_r = diag(A2_r) − J`` with ``J = [[0, W], [Wᵀ, 0]]``; returns
    ``x = M_r⁻¹ y_r`` and ``d = diag(M_r⁻¹)`` (shape (R, n) each, units stacked visible then
    hidden) and, with ``logdet=True``, ``ln|det M_r|`` (R,).

    ``method="schur"`` eliminates the larger layer (Schur complement of size
    ``min(n_v, n_h)``, see the module docstring); ``"direct"`` inverts ``M_r``.  Rows are
    processed in chunks that bound the stacked work arrays (~64 MB).  When the table of
    products ``W_ia W_ib`` (:func:`_outer_table`, ``n_l · n_s(n_s + 1)/2`` numbers) fits in
    that budget, ``S`` and ``diag(W_l S⁻¹ W_lᵀ)`` of a chunk are single matrix products with
    it (pass ``table`` to reuse it across calls, ``table=False`` to use stacked products).

    Parameters
    ----------
    W : numpy.ndarray, shape (n_v, n_h)
        Weights.
    A2 : numpy.ndarray, shape (R, n)
        Diagonal of every row's ``M_r`` (units stacked visible then hidden).
    y : numpy.ndarray, shape (R, n)
        Right-hand sides.
    method : {"schur", "direct"}
        How the system is solved.
    logdet : bool
        Also return ``ln|det M_r|``.
    table : numpy.ndarray or bool, optional
        The product table to reuse, ``False`` for stacked products, None to build it when
        it fits.

    Returns
    -------
    x : numpy.ndarray, shape (R, n)
        ``M_r⁻¹ y_r``.
    d : numpy.ndarray, shape (R, n)
        ``diag(M_r⁻¹)``.
    logdet : numpy.ndarray, shape (R,)
        ``ln|det M_r|``; only with ``logdet=True``.

    Raises
    ------
    TypeError
        For non-numeric arrays, a ``logdet`` that is not a bool or a ``table`` that is not a
        product table.
    ValueError
        If ``W`` is not 2-D, ``A2`` not (R, n_v + n_h) or ``y`` not of ``A2``'s shape (nothing
        is reshaped), an entry is NaN or inf, ``table`` was built for other weights, or the
        work arrays would exceed :data:`rbmviz.bounds.MEMORY_MAX` (:func:`work_bytes`).
    """
    method = check_choice(method, "method", METHODS)
    logdet = check_bool(logdet, "logdet")
    W = check_array(W, "W", ndim=2)
    nv, nh = W.shape
    if nv == 0 or nh == 0:
        raise ValueError(f"W must have at least one row and one column, got shape {W.shape}")
    A2 = check_array(A2, "A2", ndim=2)
    R, n = A2.shape
    if n != nv + nh:
        raise ValueError(f"A2 has {n} columns but W of shape {W.shape} needs n_visible + n_hidden "
                         f"= {nv + nh}")
    y = check_array(y, "y", shape=A2.shape)
    if table is not None and table is not False and method == "schur":
        if not (isinstance(table, tuple) and len(table) == 4):
            raise TypeError(f"table must be None, False or a product table (from the weights' "
                            f"_outer_table), got {type(table).__name__}")
        nl, ns = max(nv, nh), min(nv, nh)
        if np.shape(table[0]) != (nl, ns * (ns + 1) // 2):
            raise ValueError(f"table has products of shape {np.shape(table[0])}; W of shape "
                             f"{W.shape} needs {(nl, ns * (ns + 1) // 2)}")
    elif table is not None and table is not False and not isinstance(table, tuple):
        raise TypeError(f"table must be None, False or a product table, got {type(table).__name__}")
    _check_work_memory(nv, nh, R, method)
    x, d = np.empty((R, n)), np.empty((R, n))
    ld = np.empty(R) if logdet else None
    if method == "direct":
        J = np.zeros((n, n))
        J[:nv, nv:], J[nv:, :nv] = W, W.T
        step = _chunk_rows(n, n)
        idx = np.arange(n)
        for lo in range(0, R, step):
            hi = min(R, lo + step)
            M = -np.broadcast_to(J, (hi - lo, n, n)).copy()
            M[:, idx, idx] += A2[lo:hi]
            C = np.linalg.inv(M)
            x[lo:hi] = np.einsum("rij,rj->ri", C, y[lo:hi])
            d[lo:hi] = np.diagonal(C, axis1=1, axis2=2)
            if logdet:
                ld[lo:hi] = np.linalg.slogdet(M)[1]
        return (x, d, ld) if logdet else (x, d)
    # Schur complement of the larger layer l (W_l has shape (n_l, n_s))
    if nv >= nh:
        Wl, sl_l, sl_s = W, slice(0, nv), slice(nv, n)
    else:
        Wl, sl_l, sl_s = np.ascontiguousarray(W.T), slice(nv, n), slice(0, nv)
    nl, ns = Wl.shape
    WlT = np.ascontiguousarray(Wl.T)
    if table is None and 8 * nl * ns * (ns + 1) // 2 <= _CHUNK_BYTES:
        table = _outer_table(Wl)
    elif table is False:
        table = None
    step = _chunk_rows(nl, ns)
    diag = np.arange(ns)
    for lo in range(0, R, step):
        hi = min(R, lo + step)
        Dl, Ds = A2[lo:hi, sl_l], A2[lo:hi, sl_s]
        yl, ys = y[lo:hi, sl_l], y[lo:hi, sl_s]
        inv_Dl = 1.0 / Dl
        if table is not None:
            K, ia, ib, wt = table
            S = np.empty((hi - lo, ns, ns))
            tri = -(inv_Dl @ K)                                # −W_lᵀ D_l⁻¹ W_l, upper triangle
            S[:, ia, ib] = tri
            S[:, ib, ia] = tri
        else:
            T = Wl[None, :, :] * inv_Dl[:, :, None]            # D_l⁻¹ W_l   (r, n_l, n_s)
            S = -np.matmul(WlT[None, :, :], T)                 # −W_lᵀ D_l⁻¹ W_l
        S[:, diag, diag] += Ds
        Sinv = np.linalg.inv(S)
        rhs = ys + (yl * inv_Dl) @ Wl
        xs = np.einsum("rab,rb->ra", Sinv, rhs)
        xl = (yl + xs @ WlT) * inv_Dl
        if table is not None:
            q = (Sinv[:, ia, ib] * wt) @ K.T                   # diag(W_l S⁻¹ W_lᵀ)
        else:
            P = np.matmul(Wl[None, :, :], Sinv)                # W_l S⁻¹  (r, n_l, n_s)
            q = np.einsum("ria,ia->ri", P, Wl)
        x[lo:hi, sl_l], x[lo:hi, sl_s] = xl, xs
        d[lo:hi, sl_l] = inv_Dl * (1.0 + q * inv_Dl)
        d[lo:hi, sl_s] = np.diagonal(Sinv, axis1=1, axis2=2)
        if logdet:
            ld[lo:hi] = np.log(np.abs(Dl)).sum(axis=1) + np.linalg.slogdet(S)[1]
    return (x, d, ld) if logdet else (x, d)


def _prior_step(A1, B1, var_floor):
    """``a₁ = σ(B₁ − A₁/2)``, ``v₁ = max(a₁(1 − a₁), floor)``, ``A₂ = 1/v₁ − A₁``,
    ``B₂ = a₁/v₁ − B₁`` (Alg. 3, prior updates)."""
    a1 = _sigmoid(B1 - 0.5 * A1)
    v1 = np.maximum(a1 * (1.0 - a1), var_floor)
    return a1, v1, 1.0 / v1 - A1, a1 / v1 - B1


def _log_z_ec(W, H, A1, B1, method, var_floor):
    """``ln Z_EC`` per row at the messages ``(A₁, B₁)`` (module docstring)."""
    a1, v1, A2, B2 = _prior_step(A1, B1, var_floor)
    y = B2 + H
    x, _, ld = interaction_step(W, A2, y, method=method, logdet=True)
    return (_softplus(B1 - 0.5 * A1).sum(axis=1) - 0.5 * ld + 0.5 * np.einsum("ri,ri->r", y, x)
            - 0.5 * np.log(v1).sum(axis=1) - (a1 * a1 / (2.0 * v1)).sum(axis=1))


# ---------------------------------------------------------------------------- solve
def solve(rbm: RBM, init: ArrayLike | None = None, *, damping: float = 0.5, tol: float = 1e-10,
          max_iter: int = 2000, init_clip: float = 0.01, var_floor: float = 1e-12,
          method: str = "schur", min_iter: int = 1) -> AdaTAPSolution:
    """adaTAP fixed points of a binary RBM from ``R`` initialisations (Alg. 3 via VAMP).

    Parameters
    ----------
    rbm : rbmviz.RBM
        Bernoulli visible and hidden units.
    init : array (R, n_visible) or None
        Data-anchored starts (as eqs. 37–38 for Alg. 1): row ``x`` starts the messages at
        ``A₁ = 0``, ``B₁ = logit(m)`` with ``m = (x, σ(c + Wᵀx))`` clipped to
        ``[init_clip, 1 − init_clip]`` (so that the first prior step returns these means).
        ``None``: one run from ``A₁ = B₁ = 0`` (all means ½), as printed.
    damping : float in (0, 1]
        δ, weight of the new ``(A₁, B₁)``; 1 is the undamped iteration of the seed.  Fig. 10
        uses 0.5; at strong coupling 0.5 can diverge.
    tol : float ≥ 0
        A row has converged when both ``mean_i (a₁ − a₂)²`` and ``mean_i (v₁ − d)²`` are
        below ``tol`` (0: never — run exactly ``max_iter`` iterations, Fig. 10's fixed
        iteration counts).
    max_iter : int ≥ 1
        Largest number of iterations.
    init_clip : float in (0, ½)
        Clipping of the initial means.
    var_floor : float > 0
        Floor of ``v₁`` (avoids ``1/v₁ = ∞`` when a mean saturates).
    method : {"schur", "direct"}
        How the Gaussian step is solved (:func:`interaction_step`).
    min_iter : int ≥ 1
        Iterations before a row may stop.

    Returns
    -------
    AdaTAPSolution
        Non-converged rows hold their last iterate (``converged`` False, ``n_iter =
        max_iter``); a row whose messages become non-finite stops there and is flagged.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM` or an argument is not numeric.
    ValueError
        If the model is not binary or has NaN or inf parameters, ``init`` is not binary data
        with ``n_visible`` columns, an argument is out of range, or the work arrays of the
        Gaussian step would exceed :data:`rbmviz.bounds.MEMORY_MAX` (:func:`work_bytes`;
        ``method="direct"`` on a large model).
    """
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    if not rbm.is_binary:
        raise ValueError("adaTAP (Alg. 3) is implemented for binary (Bernoulli) visible and "
                         f"hidden units; this model has {rbm.visible}/{rbm.hidden} units")
    for key in ("W", "b", "c"):
        if not np.all(np.isfinite(getattr(rbm, key))):
            raise ValueError(f"rbm.{key} contains NaN or inf; adaTAP needs finite parameters")
    damping = check_float(damping, "damping", low=0.0, high=1.0, low_open=True)
    tol = check_float(tol, "tol", low=0.0)
    max_iter = check_int(max_iter, "max_iter", low=1)
    min_iter = check_int(min_iter, "min_iter", low=1)
    init_clip = check_float(init_clip, "init_clip", low=0.0, high=0.5, low_open=True)
    if init_clip == 0.5:
        raise ValueError("init_clip must be < 0.5, got 0.5")
    var_floor = check_float(var_floor, "var_floor", low=0.0, high=0.25, low_open=True)
    method = check_choice(method, "method", METHODS)
    W = np.asarray(rbm.W, dtype=np.float64)
    b = np.asarray(rbm.b, dtype=np.float64)
    c = np.asarray(rbm.c, dtype=np.float64)
    nv, nh = W.shape
    n = nv + nh
    H = np.concatenate([b, c])
    X = None if init is None else check_data(init, "init", n_visible=nv, binary=True)
    _check_work_memory(nv, nh, 1 if X is None else X.shape[0], method)
    if X is None:
        A1 = np.zeros((1, n))
        B1 = np.zeros((1, n))
    else:
        m = np.hstack([X, _sigmoid(X @ W + c)])
        m = np.clip(m, init_clip, 1.0 - init_clip)
        A1 = np.zeros_like(m)
        B1 = np.log(m) - np.log1p(-m)
    table = None
    if method == "schur":
        Wl = W if nv >= nh else W.T
        if 8 * Wl.shape[0] * Wl.shape[1] * (Wl.shape[1] + 1) // 2 <= _CHUNK_BYTES:
            table = _outer_table(np.ascontiguousarray(Wl))
    hist = {"active": [], "max_da": [], "max_dv": [], "max_step": []}
    with _blas_threads(min(nv, nh)):
        return _run(W, b, c, H, A1, B1, table, damping, tol, max_iter, min_iter, var_floor,
                    method, hist)


def _run(W, b, c, H, A1, B1, table, damping, tol, max_iter, min_iter, var_floor, method, hist):
    nv, nh = W.shape
    n = nv + nh
    R = A1.shape[0]
    keys = ("a1", "v1", "a2", "d", "A1", "B1", "A2", "B2")
    out = {k: np.empty((R, n)) for k in keys}
    converged = np.zeros(R, dtype=bool)
    n_iter = np.full(R, max_iter, dtype=np.int64)
    live = np.arange(R)
    prev_a1 = None
    thresh = tol
    for it in range(1, max_iter + 1):
        a1, v1, A2, B2 = _prior_step(A1, B1, var_floor)
        a2, d = interaction_step(W, A2, B2 + H, method=method, table=table)
        A1n = 1.0 / d - A2
        B1n = a2 / d - B2
        da = np.mean((a1 - a2) ** 2, axis=1)
        dv = np.mean((v1 - d) ** 2, axis=1)
        step = np.full(live.size, np.inf) if prev_a1 is None else np.mean((a1 - prev_a1) ** 2, axis=1)
        hist["active"].append(live.size)
        hist["max_da"].append(float(np.max(np.abs(a1 - a2))))
        hist["max_dv"].append(float(np.max(np.abs(v1 - d))))
        hist["max_step"].append(float(np.max(step)) if prev_a1 is not None else np.nan)
        bad = ~(np.isfinite(A1n).all(axis=1) & np.isfinite(B1n).all(axis=1))
        done = (da < thresh) & (dv < thresh) & (it >= min_iter) & ~bad
        last = it == max_iter
        stop = done | bad | last
        if stop.any():
            rows = live[stop]
            cur = dict(a1=a1, v1=v1, a2=a2, d=d, A1=A1, B1=B1, A2=A2, B2=B2)
            for k in keys:
                out[k][rows] = cur[k][stop]
            converged[live[done]] = True
            if not last:
                n_iter[live[stop]] = it
            keep = ~stop
            live = live[keep]
            if live.size == 0:
                break
            A1, B1, A1n, B1n, a1 = A1[keep], B1[keep], A1n[keep], B1n[keep], a1[keep]
        A1 = damping * A1n + (1.0 - damping) * A1
        B1 = damping * B1n + (1.0 - damping) * B1
        prev_a1 = a1
    av, ah = out["a1"][:, :nv], out["a1"][:, nv:]
    cv, ch = out["v1"][:, :nv], out["v1"][:, nv:]
    log_z = np.full(R, np.nan)
    ok = np.isfinite(out["A1"]).all(axis=1) & np.isfinite(out["B1"]).all(axis=1)
    if ok.any():
        log_z[ok] = _log_z_ec(W, H, out["A1"][ok], out["B1"][ok], method, var_floor)
    free = -log_z + _softplus(b).sum() + _softplus(c).sum()
    Bfull = out["B1"] - H
    return AdaTAPSolution(
        av=np.ascontiguousarray(av), cv=np.ascontiguousarray(cv),
        ah=np.ascontiguousarray(ah), ch=np.ascontiguousarray(ch),
        Bv=np.ascontiguousarray(Bfull[:, :nv]), Av=np.ascontiguousarray(out["A1"][:, :nv]),
        Bh=np.ascontiguousarray(Bfull[:, nv:]), Ah=np.ascontiguousarray(out["A1"][:, nv:]),
        converged=converged, n_iter=n_iter, free_energy=free, log_z=log_z, order=2,
        damping=damping, tol=tol, a2=out["a2"], d=out["d"], A1=out["A1"], B1=out["B1"],
        A2=out["A2"], B2=out["B2"],
        residual_a=np.max(np.abs(out["a1"] - out["a2"]), axis=1),
        residual_v=np.max(np.abs(out["v1"] - out["d"]), axis=1),
        history={k: np.asarray(v) for k, v in hist.items()}, method=method, var_floor=var_floor)
