"""The iterations of TAP inference (Alg. 1; A.2 for binary models) behind
:func:`rbmviz.tap.solve`: the layers' priors in kernel form, the active set of rows, the
binary path (orders 1–3, BLAS products and a fused Numba elementwise pass) and the general
path (any unit priors, second order), and the eq. (36) free energy of general priors.

Speed (binary models): the products ``a W``, ``c (W∘W)`` (and ``g (W∘W∘W)``) are BLAS
matmuls (numpy, float64, or float32 copies with ``products="float32"``) into preallocated
buffers; the elementwise part of each half-step is one fused, row-parallel Numba pass
(:func:`rbmviz.kernels.tap.layer_update_`); rows that have converged leave the matmuls (an
*active set*, compacted in place).  The visible fields of the returned moments come from
each row's last visible products (written by the elementwise pass when the row finishes);
only the hidden ones take products after the iteration (:func:`_fields`).
"""
from __future__ import annotations

import time

import numpy as np

from .._validation import check_data, first_nonbinary
from ..kernels import priors as _kp
from ..kernels import tap as _k

#: compaction of the active set happens once this fraction of its rows has converged
_COMPACT_FRACTION = 1.0 / 16.0
#: rows per chunk of the binary iteration: the product buffers are (chunk, n), not (R, n)
#: (at 784×100 a 2048-row chunk's moments and products take ~29 MB, about the L3 size;
#: 256–1024-row chunks measured no faster than the whole batch at once)
_CHUNK = 2048


#: wall time one moments kernel call of a truncated prior aims at (Ctrl-C between calls)
CALL_SECONDS = 0.2


def _bernoulli_args(U):
    return 0, U, np.zeros_like(U), np.zeros_like(U), 0.0, 1.0, np.logaddexp(0.0, U)


class _Layer:
    """One layer's prior in kernel form: ``(kind, U, V, rho, lo, hi, logz0)``."""

    def __init__(self, prior, U, name):
        self.prior = prior
        self.name = name
        U = np.ascontiguousarray(U, dtype=np.float64)
        self.args = _bernoulli_args(U) if prior is None else tuple(prior.kernel_args(U))
        self.kind = int(self.args[0])
        self.U = self.args[1]
        self.lo, self.hi = float(self.args[4]), float(self.args[5])
        self.logz0 = self.args[6]
        self._rows_per_call = 64          # adapted to CALL_SECONDS by moments()

    @property
    def binary(self):
        return self.kind == 0

    def check(self, X, name, data_anchored):
        """Initial means: data of this prior (eqs. 37–38) or, if not data-anchored, values in
        ``[lo, hi]``."""
        if data_anchored and not self.binary:
            return np.ascontiguousarray(self.prior.check_data(X, name), dtype=np.float64)
        X = check_data(X, name, n_visible=self.U.shape[0], binary=False)
        if data_anchored:
            at = first_nonbinary(X)
            if at is not None:
                r, col = at
                raise ValueError(
                    f"{name} must be binary (0/1) data for Bernoulli {self.name} units (data-anchored "
                    f"initialisation, eqs. 37-38); found {float(X[r, col])!r} at row {r}, column {col}. "
                    f"Pass data_anchored=False to start from means in [0, 1] (e.g. the OPE for denoising)")
            return X
        bad = (X < self.lo) | (X > self.hi)
        if bad.any():
            r, col = np.argwhere(bad)[0]
            raise ValueError(f"{name} has {float(X[r, col])!r} at row {r}, column {col}; means of "
                             f"{self.name} units must lie in [{self.lo:g}, {self.hi:g}]")
        return X

    def moments(self, B, A):
        """``(ln Z, f_a, f_c)`` of every entry of the fields ``B``, ``A`` (R, n).

        Truncated priors cost ~2 µs per entry (Gauss–Legendre), so a large batch is done in
        row blocks of about :data:`CALL_SECONDS` each (rows are independent: the same
        result), which lets Ctrl-C interrupt a TAP solve within about that long."""
        B, A = np.ascontiguousarray(B), np.ascontiguousarray(A)
        lz, fa, fc = np.empty_like(B), np.empty_like(B), np.empty_like(B)
        R = B.shape[0] if B.ndim == 2 else 0
        if R <= 1 or self.binary:
            _kp.moments_rows(*self.args, B, A, lz, fa, fc)
            return lz, fa, fc
        lo = 0
        while lo < R:
            hi = min(R, lo + self._rows_per_call)
            t0 = time.perf_counter()
            _kp.moments_rows(*self.args, B[lo:hi], A[lo:hi], lz[lo:hi], fa[lo:hi], fc[lo:hi])
            per_row = (time.perf_counter() - t0) / (hi - lo)
            self._rows_per_call = int(min(4 * (hi - lo), max(1, CALL_SECONDS / max(per_row, 1e-9))))
            lo = hi
        return lz, fa, fc


def _layers(rbm):
    """The model's two layers in kernel form, after checking that ``rbm`` is an RBM whose
    parameters are finite (an array changed in place after :meth:`RBM.set_params` included)."""
    from ..model import RBM
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    for key in ("W", "b", "c"):
        if not np.all(np.isfinite(getattr(rbm, key))):
            raise ValueError(f"rbm.{key} contains NaN or inf; TAP inference needs finite parameters")
    return (_Layer(getattr(rbm, "visible_prior", None), rbm.b, "visible"),
            _Layer(getattr(rbm, "hidden_prior", None), rbm.c, "hidden"))


# ---------------------------------------------------------------------------- active set
def _iterate(state, ride, step, n_units, tol, max_iter, track=None):
    """Iterate ``step`` on the rows of ``state`` until each row's mean squared change is
    below ``tol``, with an active set.

    ``state``: name → (R, n) working arrays, updated by ``step(n, diff)`` on their first
    ``n`` rows (``diff[:n]`` receives each row's sum of squared changes of the means);
    ``ride``: per-row arrays that only follow the compaction (e.g. a field).  Converged rows
    are copied out at once; the working arrays are compacted (converged rows dropped, order
    kept) once a sixteenth of them has converged.  Returns ``(out, converged, n_iter)``.

    ``track``: a dict that, for ``step`` to read, receives ``"live"`` (bool, working row not
    yet converged), ``"idx"`` (the working rows' original rows; both updated in place),
    ``"thresh"`` (a row has converged when its ``diff`` is below it) and ``"last"`` (True
    during the last iteration): a row finishes in the iteration where it is live and its
    ``diff`` falls below ``thresh``, or in the last one.
    """
    R = next(iter(state.values())).shape[0]
    out = {k: np.empty_like(v) for k, v in state.items()}
    converged = np.zeros(R, dtype=bool)
    n_iter = np.full(R, max_iter, dtype=np.int64)
    idx = np.arange(R)
    live = np.ones(R, dtype=bool)
    diff = np.empty(R)
    thresh = tol * n_units
    if track is not None:
        track.update(live=live, idx=idx, thresh=thresh, last=False)
    n, n_live = R, R
    for it in range(1, max_iter + 1):
        if track is not None:
            track["last"] = it == max_iter
        step(n, diff[:n])
        newly = live[:n] & (diff[:n] < thresh)          # NaN never converges
        if not newly.any():
            continue
        rows = np.flatnonzero(newly)
        orig = idx[rows]
        for k, v in state.items():
            out[k][orig] = v[rows]
        converged[orig] = True
        n_iter[orig] = it
        live[rows] = False
        n_live -= rows.size
        if n_live == 0:
            n = 0
            break
        if n - n_live >= max(1, int(n * _COMPACT_FRACTION)):
            keep = np.flatnonzero(live[:n])
            for v in list(state.values()) + list(ride):
                v[:keep.size] = v[keep]
            idx[:keep.size] = idx[keep]
            live[:keep.size] = True
            n = keep.size
    if n == R and n_live == R:                   # no row converged: the working arrays are the result
        return dict(state), converged, n_iter
    if n:
        rows = np.flatnonzero(live[:n])
        for k, v in state.items():
            out[k][idx[rows]] = v[rows]
    return out, converged, n_iter


# ---------------------------------------------------------------------------- binary path
def _solve_binary(W, b, c, order, damping, tol, max_iter, av0, ah0, field, products="float64",
                  fields=None, first=None):
    """Orders 1–3 for Bernoulli units (A.2; order 2 = Alg. 1 with Bernoulli priors, B.8).

    ``products="float32"``: the matrix products take float32 copies of the moments and of
    ``W`` (and its powers); the moments, the elementwise pass and the convergence test stay
    float64.

    ``fields``: a dict that receives the visible layer's fields ``"Bv"``, ``"Av"`` (R, n_v)
    at the returned moments, computed from the products of each row's last half-step
    (:func:`rbmviz.kernels.tap.layer_update_` writes them when the row finishes; float64
    products only: with float32 ones the dict stays empty).

    ``first``: ``av0 @ W`` (R, n_h) if the caller has it (e.g. from ``a^h(0)``): the first
    iteration takes its hidden linear products from it (float64 products only).  The first
    iteration's ``c^v W∘W`` (and ``g^v W∘W∘W``) are zero without a product (``c^v(0) = 0``)."""
    R, nv = av0.shape
    nh = W.shape[1]
    pdt = np.dtype(products)
    Wp = W.astype(pdt) if pdt != W.dtype else W
    WT = np.ascontiguousarray(Wp.T)
    W2 = (W * W).astype(pdt) if order >= 2 else None
    W2T = np.ascontiguousarray(W2.T) if order >= 2 else None
    W3 = (W * W * W).astype(pdt) if order == 3 else None
    W3T = np.ascontiguousarray(W3.T) if order == 3 else None
    av = av0.copy()
    cv = np.zeros_like(av)                       # c^v(0) = 0 (eq. 38)
    ah = ah0.copy()
    ch = ah - ah * ah
    state = {"av": av, "cv": cv, "ah": ah, "ch": ch}
    if order == 3:
        gv = np.zeros_like(av)                   # g = 0 together with c^v(0) = 0
        gh = ch * (0.5 - ah)
        state.update(gv=gv, gh=gh)
    else:
        gv, gh = av, ah                          # never read or written below order 3
    C = max(1, min(R, _CHUNK))
    Ph, Pv = np.empty((C, nh), pdt), np.empty((C, nv), pdt)
    Qh = np.empty((C, nh), pdt) if order >= 2 else Ph
    Qv = np.empty((C, nv), pdt) if order >= 2 else Pv
    Th = np.empty((C, nh), pdt) if order == 3 else Ph
    Tv = np.empty((C, nv), pdt) if order == 3 else Pv
    if pdt == np.float64:
        def x(a, s, e, buf):                 # the moments enter the products as they are
            return a[s:e]
        Xv = Xh = None
    else:
        Xv, Xh = np.empty((C, nv), pdt), np.empty((C, nh), pdt)

        def x(a, s, e, buf):                 # a float32 copy of the chunk's moments
            out = buf[: e - s]
            out[...] = a[s:e]
            return out
    fld = field if field is not None else np.empty((0, nv))
    no_field = np.empty((0, nh))
    ride = [fld] if field is not None else []
    track = None
    no_rows = np.empty((0, nv))
    Bv_out = Av_out = no_rows                    # no fields captured
    no_live, no_idx = np.empty(0, dtype=bool), np.empty(0, dtype=np.int64)
    if fields is not None and pdt == np.float64:
        track = {}
        Bv_out, Av_out = np.empty((R, nv)), np.empty((R, nv))
        fields.update(Bv=Bv_out, Av=Av_out)
    no_hidden = np.empty((0, nh))
    if pdt != np.float64:
        first = None
    at_start = [True]                            # the first iteration (no row has moved yet)

    def step(n, diff):
        # Rows are independent: a whole iteration is done chunk by chunk (bounded buffers;
        # a chunk's moments and products stay in cache between matmuls and elementwise passes).
        start = at_start[0]
        at_start[0] = False
        for s in range(0, n, C):
            e = min(n, s + C)
            m = e - s
            # hidden side (uses the visible moments of the previous iteration)
            if start and first is not None:
                P = first[s:e]
            else:
                P = np.matmul(x(av, s, e, Xv), Wp, out=Ph[:m])
            if start:                            # c^v(0) = g^v(0) = 0: the products are 0
                if order >= 2:                   # (below order 2 Qh is Ph, below 3 Th is)
                    Qh[:m] = 0.0
                if order == 3:
                    Th[:m] = 0.0
            else:
                if order >= 2:
                    np.matmul(x(cv, s, e, Xv), W2, out=Qh[:m])
                if order == 3:
                    np.matmul(x(gv, s, e, Xv), W3, out=Th[:m])
            _k.layer_update_(order, damping, c, no_field, P, Qh[:m], Th[:m],
                             ah[s:e], ch[s:e], gh[s:e], diff[s:e], False,
                             no_live, no_idx, 0.0, False, no_hidden, no_hidden)
            # visible side (uses the new hidden moments)
            np.matmul(x(ah, s, e, Xh), WT, out=Pv[:m])
            if order >= 2:
                np.matmul(x(ch, s, e, Xh), W2T, out=Qv[:m])
            if order == 3:
                np.matmul(x(gh, s, e, Xh), W3T, out=Tv[:m])
            # (rows that finish now write their fields from these products)
            if track is None:
                live, idx, thresh, last = no_live, no_idx, 0.0, False
            else:
                live, idx = track["live"][s:e], track["idx"][s:e]
                thresh, last = track["thresh"], track["last"]
            _k.layer_update_(order, damping, b, fld[s:e], Pv[:m], Qv[:m], Tv[:m],
                             av[s:e], cv[s:e], gv[s:e], diff[s:e], True,
                             live, idx, thresh, last, Bv_out, Av_out)

    out, converged, n_iter = _iterate(state, ride, step, nv + nh, tol, max_iter, track)
    return out["av"], out["cv"], out["ah"], out["ch"], converged, n_iter


def _nu(m):
    return m - m * m


def _g(m):
    return (m - m * m) * (0.5 - m)


# ---------------------------------------------------------------------------- general path
def _solve_general(W, vis, hid, damping, tol, max_iter, av0, ah0, field):
    """Alg. 1 of Tramel et al. (2018) for any priors (order 2), batched over rows, with damping."""
    R, nv = av0.shape
    nh = W.shape[1]
    WT = np.ascontiguousarray(W.T)
    W2 = W * W
    W2T = np.ascontiguousarray(W2.T)
    av = av0.copy()
    cv = np.zeros_like(av)                       # c^v(0) = 0 (eq. 38)
    B0 = av @ W
    _, fa0, fc0 = hid.moments(B0, np.zeros_like(B0))    # the undamped first update
    ah = fa0 if ah0 is None else ah0.copy()
    ch = fc0
    state = {"av": av, "cv": cv, "ah": ah, "ch": ch}
    fld = field if field is not None else None
    ride = [fld] if field is not None else []
    keep = 1.0 - damping

    def step(n, diff):
        Ah = -(cv[:n] @ W2)
        Bh = Ah * ah[:n] + av[:n] @ W
        _, fa, fc = hid.moments(Bh, Ah)
        new = damping * fa + keep * ah[:n]
        diff[:] = np.square(new - ah[:n]).sum(axis=1)
        ah[:n] = new
        ch[:n] = damping * fc + keep * ch[:n]
        Av = -(ch[:n] @ W2T)
        Bv = Av * av[:n] + ah[:n] @ WT
        if fld is not None:
            Bv += fld[:n]
        _, fa, fc = vis.moments(Bv, Av)
        new = damping * fa + keep * av[:n]
        diff += np.square(new - av[:n]).sum(axis=1)
        av[:n] = new
        cv[:n] = damping * fc + keep * cv[:n]

    out, converged, n_iter = _iterate(state, ride, step, nv + nh, tol, max_iter)
    return out["av"], out["cv"], out["ah"], out["ch"], converged, n_iter


def _fields(W, av, cv, ah, ch, order, field, keep=None, visible=None):
    """``(Bv, Av, Bh, Ah)`` of eqs. (33)–(34) at given moments (plus the third-order term).

    ``keep``: a dict that receives ``avW`` (``a^v W``) and ``W2`` (``W∘W``), for the free
    energy of the same moments (:func:`rbmviz.tap.inference._free_energy_binary`).
    ``visible``: ``(Bv, Av)`` already known (the binary iteration computes them from its
    last products, :func:`rbmviz.kernels.tap.layer_update_`): only the hidden layer's
    fields are computed."""
    W2 = W * W
    Ph = av @ W
    if keep is not None:
        keep.update(avW=Ph, W2=W2)
    if order >= 2:
        Ah = cv @ W2
        np.negative(Ah, out=Ah)
    else:
        Ah = np.zeros_like(ah)
    Bh = Ah * ah                                 # in place: the same operations in the same order
    Bh += Ph
    if order == 3:
        W3 = W2 * W
        Bh += (1.0 / 3.0 - 2.0 * _nu(ah)) * (_g(av) @ W3)
    if visible is not None:
        Bv, Av = visible
        return Bv, Av, Bh, Ah
    Pv = ah @ W.T
    if order >= 2:
        Av = ch @ W2.T
        np.negative(Av, out=Av)
    else:
        Av = np.zeros_like(av)
    Bv = Av * av
    Bv += Pv
    if order == 3:
        Bv += (1.0 / 3.0 - 2.0 * _nu(av)) * (_g(ah) @ (W2 * W).T)
    if field is not None:
        Bv += field
    return Bv, Av, Bh, Ah


def _free_energy_eq36(W, vis, hid, av, cv, ah, ch, Bv, Av, Bh, Ah, field):
    """``𝔽_RBM`` of eq. (36) per row (with a field ``D`` in ``B^v``: ``−Σ D a^v`` more, so
    that it estimates ``−ln 𝒵`` of the model with the factor ``e^{D·x}``)."""
    lzv, _, _ = vis.moments(Bv, Av)
    lzh, _, _ = hid.moments(Bh, Ah)
    neg = (lzv - Bv * av + 0.5 * Av * (av * av + cv)).sum(axis=1)
    neg += (lzh - Bh * ah + 0.5 * Ah * (ah * ah + ch)).sum(axis=1)
    neg += np.einsum("rj,rj->r", av @ W, ah) + 0.5 * np.einsum("rj,rj->r", cv @ (W * W), ch)
    if field is not None:
        neg += np.einsum("ri,ri->r", field, av)
    return -neg
