"""TAP inference: fixed points of the TAP / extended-mean-field free energy and their free
energies (:func:`solve`, :class:`TAPSolution`, :func:`free_energy_binary`).

References (formulas restated and checked in the TAP theory page of the documentation):

* binary RBMs, orders 1–3 (Gabrié, Tramel & Krzakala 2015): the expansion
  ``−Γ(m^v, m^h)`` of A.1 and its self-consistency equations A.2, with the derived
  third-order factor ``g(m) = (m − m²)(½ − m)`` (not the reference code's ``m²(1 − m)``,
  the errata noted on the TAP theory page);
* general priors, second order (Tramel et al. 2018): Alg. 1 with
  data-anchored initialisation (eqs. 37–38) and the TAP free energy ``𝔽_RBM`` (eq. 36).
  With Bernoulli priors Alg. 1 is TAP2 of A.2 (B.8).

The iterations themselves (the layers' priors in kernel form, the active set, the binary
and general paths) are in :mod:`rbmviz.tap._iteration`; counting the distinct solutions of
many starts (:func:`~rbmviz.tap.solutions.solve_counted`, the damping ladder,
:func:`~rbmviz.tap.solutions.unique_solutions`) in :mod:`rbmviz.tap.solutions`; the TAP
log-likelihood (eq. 39) in :mod:`rbmviz.tap.likelihood`.  Their names stay importable from
here.  Speed (binary models) measured with
bench/bench_tap.py on an idle 2-core machine: a 784×100 RBM trained 3 epochs with CD-1 on
MNIST, 10,000 data-anchored initialisations solved to tol 1e-8 (damping 0.5, all converged,
median 117 iterations, max 706) in 16–17 s; the matmuls alone account for ~60 % of it;
5× faster than the same iteration in plain numpy.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_array, check_data
from ..kernels import tap as _k
from ._iteration import (_fields, _free_energy_eq36, _g, _layers, _nu, _solve_binary,
                         _solve_general)
from .options import TAPSolverOptions as _O, check_option

if TYPE_CHECKING:
    from ..model import RBM

# the counting and likelihood names re-exported below are documented in their own modules
__all__ = ["solve", "TAPSolution", "free_energy_binary"]

# ---------------------------------------------------------------------------- results
@dataclasses.dataclass
class TAPSolution:
    """TAP fixed points reached from ``R`` initialisations (one per row).

    Parameters
    ----------
    av, cv, Bv, Av : ndarray (R, n_visible)
        Visible means ``a^v``, variances ``c^v`` and the fields ``B^v``, ``A^v`` of eqs.
        (33)–(34) evaluated at the returned means and variances
        (``A^v = −(W∘W) c^h``, ``B^v = A^v a^v + W a^h`` [+ ``visible_field``]).  At third
        order ``B`` also holds the ``W∘W∘W`` term, so that ``a = f_a(B, A)`` still holds.
    ah, ch, Bh, Ah : ndarray (R, n_hidden)
        The same for the hidden layer.
    converged : ndarray of bool (R,)
        The mean squared change of both layers' means between successive iterations fell
        below ``tol``.  Rows that hit ``max_iter`` are ``False`` and hold the last iterate.
    n_iter : ndarray of int (R,)
        Iterations done (``max_iter`` for non-converged rows).
    free_energy : ndarray (R,)
        ``𝔽_RBM`` of eq. (36) at the solution, ≈ ``−ln 𝒵`` of the model with NORMALISED unit
        priors (eq. 9).  For binary models it is ``Γ(m^v, m^h) + Σ softplus(b) +
        Σ softplus(c)`` with ``Γ`` the order-``order`` expansion (Gabrié et al. 2015).
    log_z : ndarray (R,)
        The same estimate as the RBM's own log partition function:
        ``−𝔽_RBM + Σ_i ln z_i + Σ_j ln z_j`` with ``ln z`` the priors' log-normalisers
        (``softplus(U)`` for Bernoulli units), i.e. ``−Γ`` for binary models — comparable to
        :func:`rbmviz.evaluate.log_partition_exact`.  With a ``visible_field`` ``D`` both
        refer to the model with the extra factor ``e^{D·x}`` (for Bernoulli units: visible
        biases ``b + D``).
    order, damping, tol
        The settings used.
    """

    av: np.ndarray
    cv: np.ndarray
    ah: np.ndarray
    ch: np.ndarray
    Bv: np.ndarray
    Av: np.ndarray
    Bh: np.ndarray
    Ah: np.ndarray
    converged: np.ndarray
    n_iter: np.ndarray
    free_energy: np.ndarray
    log_z: np.ndarray
    order: int = _O.order
    damping: float = _O.damping
    tol: float = _O.tol

    _ROW_FIELDS = ("av", "cv", "ah", "ch", "Bv", "Av", "Bh", "Ah", "converged", "n_iter",
                   "free_energy", "log_z")

    def __len__(self):
        return int(self.converged.shape[0])

    @property
    def n_converged(self) -> int:
        """Number of rows that converged.

        Returns
        -------
        int
            ``converged.sum()``.
        """
        return int(np.count_nonzero(self.converged))

    @property
    def not_converged(self) -> np.ndarray:
        """Indices of the rows that did not converge within ``max_iter``."""
        return np.flatnonzero(~self.converged)

    def subset(self, idx: ArrayLike) -> "TAPSolution":
        """The solutions of the rows ``idx``, copied.

        Parameters
        ----------
        idx : array_like of int or bool
            Row indices, or a boolean mask of length ``len(self)``.

        Returns
        -------
        TAPSolution
            The selected rows (same settings).

        Raises
        ------
        ValueError
            If a boolean mask has the wrong length, ``idx`` is not 1-D (nothing is reshaped)
            or an index is out of range.
        TypeError
            If ``idx`` holds neither integers nor booleans.
        """
        n = len(self)
        if isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_)):
            idx = [idx]
        idx = np.asarray(idx)
        if idx.dtype == bool:
            if idx.shape != (n,):
                raise ValueError(f"a boolean idx must have shape ({n},), got {idx.shape}")
            idx = np.flatnonzero(idx)
        elif idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"idx must hold integers or booleans, got dtype {idx.dtype}")
        if idx.ndim != 1:
            raise ValueError(f"idx must be 1-D (row indices or a mask), got shape {idx.shape}")
        idx = idx.astype(np.int64)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = int(idx[(idx < -n) | (idx >= n)][0])
            raise ValueError(f"idx holds row {bad}, out of range for {n} solutions (0 to {n - 1})")
        return dataclasses.replace(self, **{f: np.ascontiguousarray(getattr(self, f)[idx])
                                            for f in self._ROW_FIELDS})

    def __repr__(self):
        return (f"TAPSolution(R={len(self)}, order={self.order}, converged={self.n_converged}, "
                f"n_iter median={int(np.median(self.n_iter)) if len(self) else 0})")


def free_energy_binary(rbm: RBM, av: ArrayLike, ah: ArrayLike, *, order: int = _O.order,
                       visible_field: ArrayLike | None = None) -> np.ndarray:
    """``−Γ(m^v, m^h)`` of the order-1, 2 or 3 expansion for binary RBMs, per row.

    ``S(m^v) + S(m^h) + bᵀm^v + cᵀm^h + Σ W_ij m^v_i m^h_j + ½ Σ W_ij² ν(m^v_i) ν(m^h_j)
    + ⅔ Σ W_ij³ g(m^v_i) g(m^h_j)`` (the last two terms from order 2 and 3 on; Gabrié et al.
    2015; Tramel et al. 2018, eq. 36 with Bernoulli priors).  This is the TAP estimate of the
    RBM's own ``ln Z`` (``TAPSolution.log_z``).

    Parameters
    ----------
    rbm : RBM
        A binary model.
    av : array_like, shape (R, n_visible)
        Visible magnetisations in [0, 1].
    ah : array_like, shape (R, n_hidden)
        Hidden magnetisations in [0, 1].
    order : {1, 2, 3}
        Order of the expansion.
    visible_field : array_like, shape (R, n_visible), optional
        Extra field ``D``: the visible biases are ``b + D``.

    Returns
    -------
    numpy.ndarray, shape (R,)
        ``−Γ`` of every row.

    Raises
    ------
    ValueError
        If the model is not binary or has NaN or inf parameters, ``av`` or ``ah`` is not 2-D
        with the layer's number of columns and values in [0, 1], they have different numbers
        of rows, or ``visible_field`` is not finite of shape (R, n_visible) or (n_visible,).
    """
    order = check_option("order", order)
    vis, hid = _layers(rbm)
    if not (vis.binary and hid.binary):
        raise ValueError("free_energy_binary needs Bernoulli visible and hidden units; use "
                         "rbmviz.tap.solve(...).free_energy (eq. 36) for other priors")
    av = check_array(av, "av", ndim=2, low=0.0, high=1.0)
    ah = check_array(ah, "ah", ndim=2, low=0.0, high=1.0)
    for name, arr, n, layer in (("av", av, rbm.n_visible, "n_visible"), ("ah", ah, rbm.n_hidden, "n_hidden")):
        if arr.shape[1] != n:
            raise ValueError(f"{name} has {arr.shape[1]} columns but the model has {layer}={n}")
    if av.shape[0] != ah.shape[0]:
        raise ValueError(f"av and ah must have the same number of rows, got {av.shape[0]} and {ah.shape[0]}")
    if visible_field is not None:
        visible_field = check_array(visible_field, "visible_field")
        if visible_field.shape not in ((rbm.n_visible,), av.shape):
            raise ValueError(f"visible_field must have shape {av.shape} or ({rbm.n_visible},), got "
                             f"{visible_field.shape}")
    return _free_energy_binary(rbm, av, ah, order, visible_field)


def _free_energy_binary(rbm, av, ah, order, visible_field, avW=None, W2=None):
    """:func:`free_energy_binary` on checked arguments (``avW = av @ W`` and ``W2 = W∘W``,
    if given, are not computed again)."""
    W, b, c = (np.asarray(x, dtype=np.float64) for x in rbm.params)
    Sv, Sh = np.empty(av.shape[0]), np.empty(ah.shape[0])
    nu_v = np.empty_like(av) if order >= 2 else np.empty((0, av.shape[1]))
    nu_h = np.empty_like(ah) if order >= 2 else np.empty((0, ah.shape[1]))
    _k.entropy_rows(av, Sv, nu_v)            # ν(a) = a − a² in the same pass
    _k.entropy_rows(ah, Sh, nu_h)
    bias = b if visible_field is None else b + visible_field
    out = Sv + Sh + np.einsum("ri,ri->r", av, np.broadcast_to(bias, av.shape)) + ah @ c
    out += np.einsum("rj,rj->r", av @ W if avW is None else avW, ah)
    if order >= 2:
        out += 0.5 * np.einsum("rj,rj->r", nu_v @ (W * W if W2 is None else W2), nu_h)
    if order == 3:
        out += (2.0 / 3.0) * np.einsum("rj,rj->r", _g(av) @ (W * W * W), _g(ah))
    return out


# ---------------------------------------------------------------------------- solve
def solve(rbm: RBM, init_visible: ArrayLike, *, order: int = _O.order,
          damping: float | None = _O.damping, tol: float = _O.tol, max_iter: int = _O.max_iter,
          visible_field: ArrayLike | None = None, init_hidden: ArrayLike | None = None,
          data_anchored: bool = True, products: str = _O.products) -> TAPSolution:
    """TAP fixed points from ``R`` initialisations (Tramel et al. 2018, Alg. 1; Gabrié et al. 2015 for orders 1/3).

    Each row of ``init_visible`` starts one run of the iteration (data-anchored
    initialisation, eqs. 37–38: ``a^v(0) = x``, ``c^v(0) = 0``; with damping the hidden
    moments start at the undamped first update ``a^h(0) = f_a^h(Wᵀx, 0)``,
    ``c^h(0) = f_c^h(Wᵀx, 0)``).  Every iteration updates the hidden layer, then the visible
    layer with the new hidden moments (Alg. 1):

    ``A^h = −(W∘W)ᵀc^v``, ``B^h = A^h a^h + Wᵀa^v``, ``a^h = f_a^h(B^h, A^h)``, ``c^h = f_c^h``;
    ``A^v = −(W∘W)c^h``, ``B^v = A^v a^v + W a^h [+ D]``, ``a^v = f_a^v``, ``c^v = f_c^v``,

    each new value damped as ``δ·new + (1 − δ)·old``.  For all-binary models ``order`` picks
    the expansion of Gabrié et al. (2015): 1 = naive mean field, 2 = TAP2 (identical to Alg. 1
    with Bernoulli priors), 3 = TAP3 (with ``g(m) = (m − m²)(½ − m)``; at orders 1 and 3
    only the magnetisations are damped).  Other priors: order 2 only.

    A row has converged when the mean squared change of both layers' means between two
    successive iterations, ``(‖Δa^v‖² + ‖Δa^h‖²)/(n_v + n_h)``, falls below ``tol``
    (the ``10⁻⁸`` of Tramel et al., Fig. 3); rows that reach ``max_iter`` are flagged.

    Parameters
    ----------
    rbm : rbmviz.RBM
        The model (any unit priors).
    init_visible : array (R, n_visible)
        Initial visible means.  With ``data_anchored=True`` they must be data of the visible
        prior (0/1 for Bernoulli units, inside the interval for truncated priors).
    order : {1, 2, 3}
        TAP order; 1 and 3 for all-binary models only.
    damping : float in (0, 1] or None
        δ; ``None`` or 1 is the undamped iteration.
    tol : float > 0
        Convergence threshold of the mean squared change.
    max_iter : int ≥ 1
        Largest number of iterations.
    visible_field : array (R, n_visible) or (n_visible,), optional
        Extra field ``D`` added to ``B^v`` at every iteration (e.g. a channel's
        log-likelihood ratio in denoising: the visible biases become ``b + D``).
    init_hidden : array (R, n_hidden), optional
        Initial hidden means ``a^h(0)`` instead of the undamped first update (they only
        matter with damping; ``c^h(0)`` stays the first update's variance, or ``ν(a^h(0))``
        for binary models).
    data_anchored : bool
        ``False`` accepts any initial means in the prior's range (e.g. ``[0, 1]`` for
        Bernoulli units: the OPE means of denoising); ``c^v(0) = 0`` still.
    products : {"float64", "float32"}
        Precision of the iteration's matrix products (binary models only).  ``"float32"``
        makes them ~1.9× faster on one core; the products then carry a relative error of
        ~1e-7, which moves the fixed point by about as much — fine for the training
        tolerance 1e-8 (an MSE change), not for counting solutions at 1e-12.  The returned
        fields and free energies are computed in float64 either way.

    Returns
    -------
    TAPSolution
        The fixed points (or last iterates) of every row.

    Raises
    ------
    ValueError
        For an order other than 2 with non-binary units, initial means outside the prior's
        support (or range), or arrays whose rows do not match ``init_visible``.
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM` or ``data_anchored`` is not a bool.
    """
    vis, hid = _layers(rbm)
    order = check_option("order", order)
    binary = vis.binary and hid.binary
    if order != 2 and not binary:
        raise ValueError(f"order={order} needs Bernoulli visible and hidden units (Part A EMF); "
                         f"models with other unit priors support order=2 only")
    if damping is None:
        damping = 1.0
    damping = check_option("damping", damping)
    tol = check_option("tol", tol)
    max_iter = check_option("max_iter", max_iter)
    if not isinstance(data_anchored, (bool, np.bool_)):
        raise TypeError(f"data_anchored must be True or False, got {data_anchored!r}")
    products = check_option("products", products)
    if products != "float64" and not binary:
        raise ValueError(f"products={products!r} is for binary models; models with other unit "
                         f"priors compute their products in float64")
    nv, nh = rbm.n_visible, rbm.n_hidden
    av0 = vis.check(init_visible, "init_visible", bool(data_anchored))
    R = av0.shape[0]
    field = work_field = None
    if visible_field is not None:
        field = check_data(visible_field, "visible_field", n_visible=nv, binary=False)
        if field.shape[0] == 1 and R > 1:
            field = np.repeat(field, R, axis=0)
        if field.shape[0] != R:
            raise ValueError(f"visible_field has {field.shape[0]} rows but init_visible has {R}")
        # the iteration's own copy: the active set compacts it in place (``field`` stays in
        # row order for the fields and free energies of the solutions)
        work_field = field.copy()
    W = np.ascontiguousarray(rbm.W, dtype=np.float64)
    ah0 = None
    if init_hidden is not None:
        ah0 = check_data(init_hidden, "init_hidden", n_visible=nh, binary=False)
        if ah0.shape[0] != R:
            raise ValueError(f"init_hidden has {ah0.shape[0]} rows but init_visible has {R}")
        bad = (ah0 < hid.lo) | (ah0 > hid.hi)
        if bad.any():
            r, col = np.argwhere(bad)[0]
            raise ValueError(f"init_hidden has {float(ah0[r, col])!r} at row {r}, column {col}; "
                             f"hidden means must lie in [{hid.lo:g}, {hid.hi:g}]")
    if binary:
        first = None
        if ah0 is None:
            first = av0 @ W                  # also the first iteration's hidden products
            ah0 = 0.5 + 0.5 * np.tanh(0.5 * (first + hid.U))    # σ(c + Wᵀx)
        last = {}                    # the visible fields, from the iteration's last products
        av, cv, ah, ch, converged, n_iter = _solve_binary(
            W, vis.U, hid.U, order, damping, tol, max_iter, av0, ah0, work_field, products, last,
            first)
        kept = {}
        Bv, Av, Bh, Ah = _fields(W, av, cv, ah, ch, order, field, kept,
                                 (last["Bv"], last["Av"]) if last else None)
        if not np.asarray(rbm.W).flags.c_contiguous:   # the products of the same W only
            kept = {}
        log_z = _free_energy_binary(rbm, av, ah, order, field, **kept)
        free = -log_z + vis.logz0.sum() + hid.logz0.sum()
    else:
        av, cv, ah, ch, converged, n_iter = _solve_general(
            W, vis, hid, damping, tol, max_iter, av0, ah0, work_field)
        Bv, Av, Bh, Ah = _fields(W, av, cv, ah, ch, 2, field)
        free = _free_energy_eq36(W, vis, hid, av, cv, ah, ch, Bv, Av, Bh, Ah, field)
        log_z = -free + vis.logz0.sum() + hid.logz0.sum()
    return TAPSolution(av=av, cv=cv, ah=ah, ch=ch, Bv=Bv, Av=Av, Bh=Bh, Ah=Ah,
                       converged=converged, n_iter=n_iter, free_energy=free, log_z=log_z,
                       order=order, damping=damping, tol=tol)


# ---------------------------------------------------------------------------- unique


# counting unique solutions and the TAP log-likelihood, importable from here as they were
# (below the definitions above, which rbmviz.tap.solutions and rbmviz.tap.likelihood import)
from .solutions import (COUNT_TOL, FIRST_MAX_ITER, LADDER_RUNGS, UniqueSolutions,  # noqa: E402
                        _canonical_order, _cluster_sorted, damping_ladder, fallback_dampings,
                        solve_counted, unique_solutions)
from .likelihood import TAPLogLikelihood, _data_term, data_term, log_likelihood  # noqa: E402
