"""TAP inference: fixed points of the TAP / extended-mean-field free energy, their free
energies, unique solutions and the TAP log-likelihood.

References (formulas restated and checked in the TAP theory page of the documentation):

* binary RBMs, orders 1–3 (Gabrié, Tramel & Krzakala 2015): the expansion
  ``−Γ(m^v, m^h)`` of A.1 and its self-consistency equations A.2, with the derived
  third-order factor ``g(m) = (m − m²)(½ − m)`` (not the reference code's ``m²(1 − m)``,
  the errata noted on the TAP theory page);
* general priors, second order (Tramel et al. 2018): Alg. 1 with
  data-anchored initialisation (eqs. 37–38), the TAP free energy ``𝔽_RBM`` (eq. 36) and the
  TAP log-likelihood (eq. 39).  With Bernoulli priors Alg. 1 is TAP2 of A.2 (B.8).

The iterations themselves (the layers' priors in kernel form, the active set, the binary
and general paths) are in :mod:`rbmviz.tap._iteration`.  Speed (binary models) measured with
bench/bench_tap.py on an idle 2-core machine: a 784×100 RBM trained 3 epochs with CD-1 on
MNIST, 10,000 data-anchored initialisations solved to tol 1e-8 (damping 0.5, all converged,
median 117 iterations, max 706) in 16–17 s; the matmuls alone account for ~60 % of it;
5× faster than the same iteration in plain numpy.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses
import time
import warnings

import numpy as np
from numpy.typing import ArrayLike

from .._numerics import softplus as _softplus
from .._validation import check_array, check_bool, check_data, check_int, check_seed
from ..kernels import tap as _k
from . import _iteration as _it
from ._iteration import (_fields, _free_energy_eq36, _g, _layers, _nu, _solve_binary,
                         _solve_general)
from .options import TAPSolverOptions as _O, check_option

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["solve", "solve_counted", "TAPSolution", "unique_solutions", "UniqueSolutions",
           "log_likelihood", "COUNT_TOL", "FIRST_MAX_ITER", "damping_ladder", "LADDER_RUNGS",
           "TAPLogLikelihood", "free_energy_binary", "data_term"]

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


@dataclasses.dataclass
class UniqueSolutions:
    """Distinct TAP solutions among the converged rows of a :class:`TAPSolution`.

    Parameters
    ----------
    representatives : ndarray of int (n_unique,)
        One row index (into the solution) per distinct solution, in canonical order.
    labels : ndarray of int (R,)
        Solution id of every initialisation (−1 for rows that did not converge).
    counts : ndarray of int (n_unique,)
        Initialisations that reached each solution.
    free_energy : ndarray (n_unique,)
        ``𝔽_RBM`` (eq. 36) of each solution (its representative's).
    n_unique : int
        Number of distinct solutions.
    tol : float
        The tolerance used.
    solutions : TAPSolution
        The representatives' solutions (``sol.subset(representatives)``).
    """

    representatives: np.ndarray
    labels: np.ndarray
    counts: np.ndarray
    free_energy: np.ndarray
    n_unique: int
    tol: float
    solutions: TAPSolution

    def __repr__(self):
        return f"UniqueSolutions(n_unique={self.n_unique}, tol={self.tol:g}, counts={self.counts.tolist()[:8]}...)"


@dataclasses.dataclass
class TAPLogLikelihood:
    """Detailed result of :func:`log_likelihood` (``details=True``); ``float(result)`` is ``value``.

    Parameters
    ----------
    value : float
        Tramel et al. (2018), eq. (39), averaged over the rows of ``V``.
    data_term : numpy.ndarray, shape (N,)
        The per-row ``Σ_i ln P_i(x_i) + Σ_j ln Z^h_j(Σ_i W_ij x_i, 0)``.
    mean_free_energy : float
        The average ``𝔽_RBM`` over the solutions used.
    n_solutions : int
        How many solutions entered the average (unique ones if ``unique``).
    n_not_converged : int
        The excluded initialisations.
    unique : bool
        Whether the average ran over unique solutions.
    solution : TAPSolution
        All runs.
    unique_solutions : UniqueSolutions or None
        The de-duplication, if ``unique``.
    """

    value: float
    data_term: np.ndarray
    mean_free_energy: float
    n_solutions: int
    n_not_converged: int
    unique: bool
    solution: TAPSolution
    unique_solutions: UniqueSolutions | None

    def __float__(self):
        return float(self.value)


# ---------------------------------------------------------------------------- priors
#: solve tolerance (MSE between iterations) recommended before counting unique solutions:
#: :attr:`TAPSolverOptions.count_tol <rbmviz.tap.options.TAPSolverOptions.count_tol>`
COUNT_TOL = _O.count_tol
#: iterations of the undamped first attempt of :func:`solve_counted`:
#: :attr:`TAPSolverOptions.first_max_iter <rbmviz.tap.options.TAPSolverOptions.first_max_iter>`
FIRST_MAX_ITER = _O.first_max_iter

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
    _k.entropy_rows(av, Sv)
    _k.entropy_rows(ah, Sh)
    bias = b if visible_field is None else b + visible_field
    out = Sv + Sh + np.einsum("ri,ri->r", av, np.broadcast_to(bias, av.shape)) + ah @ c
    out += np.einsum("rj,rj->r", av @ W if avW is None else avW, ah)
    if order >= 2:
        out += 0.5 * np.einsum("rj,rj->r", _nu(av) @ (W * W if W2 is None else W2), _nu(ah))
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
    field = None
    if visible_field is not None:
        field = check_data(visible_field, "visible_field", n_visible=nv, binary=False)
        # a private copy: the active set compacts it in place
        field = np.repeat(field, R, axis=0) if field.shape[0] == 1 and R > 1 else field.copy()
        if field.shape[0] != R:
            raise ValueError(f"visible_field has {field.shape[0]} rows but init_visible has {R}")
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
        if ah0 is None:
            ah0 = 0.5 + 0.5 * np.tanh(0.5 * (av0 @ W + hid.U))    # σ(c + Wᵀx)
        av, cv, ah, ch, converged, n_iter = _solve_binary(
            W, vis.U, hid.U, order, damping, tol, max_iter, av0, ah0, field, products)
        kept = {}
        Bv, Av, Bh, Ah = _fields(W, av, cv, ah, ch, order, field, kept)
        if not np.asarray(rbm.W).flags.c_contiguous:   # the products of the same W only
            kept = {}
        log_z = _free_energy_binary(rbm, av, ah, order, field, **kept)
        free = -log_z + vis.logz0.sum() + hid.logz0.sum()
    else:
        av, cv, ah, ch, converged, n_iter = _solve_general(
            W, vis, hid, damping, tol, max_iter, av0, ah0, field)
        Bv, Av, Bh, Ah = _fields(W, av, cv, ah, ch, 2, field)
        free = _free_energy_eq36(W, vis, hid, av, cv, ah, ch, Bv, Av, Bh, Ah, field)
        log_z = -free + vis.logz0.sum() + hid.logz0.sum()
    return TAPSolution(av=av, cv=cv, ah=ah, ch=ch, Bv=Bv, Av=Av, Bh=Bh, Ah=Ah,
                       converged=converged, n_iter=n_iter, free_energy=free, log_z=log_z,
                       order=order, damping=damping, tol=tol)


# ---------------------------------------------------------------------------- unique
def _canonical_order(X, s):
    """Row order by ``s``, ties broken by the rows' bytes: a function of the multiset of
    rows only (so invariant to the order of the initialisations)."""
    order = np.argsort(s, kind="stable")
    ss = s[order]
    if X.shape[0] > 1 and np.any(ss[1:] == ss[:-1]):
        keys = [(float(s[i]), X[i].tobytes()) for i in order]
        order = order[np.array(sorted(range(len(order)), key=keys.__getitem__), dtype=np.int64)]
    return order


def _cluster_sorted(X, s, n_first, window, tol_first, tol_second):
    """:func:`rbmviz.kernels.tap.cluster_sorted` in ranges of rows of about
    :data:`rbmviz.tap._iteration.CALL_SECONDS` each (the same labels; Ctrl-C works on tens of thousands of
    solutions, which take seconds to tens of seconds)."""
    X, s = np.ascontiguousarray(X), np.ascontiguousarray(s)
    R = X.shape[0]
    parent = np.arange(R)
    lo, size = 0, 256
    while lo < R:
        hi = min(R, lo + size)
        t0 = time.perf_counter()
        _k.link_sorted_(X, s, n_first, window, tol_first, tol_second, parent, lo, hi)
        per_row = (time.perf_counter() - t0) / (hi - lo)
        size = int(min(4 * (hi - lo), max(1, _it.CALL_SECONDS / max(per_row, 1e-9))))
        lo = hi
    return _k.labels_from_parent(parent)


def solve_counted(rbm: RBM, init_visible: ArrayLike, *, order: int = _O.order,
                  damping: float | None = _O.damping, tol: float = _O.count_tol,
                  max_iter: int = _O.max_iter, first_max_iter: int = _O.first_max_iter,
                  first_damping: float = _O.first_damping,
                  fallback_tol: float | None = None, scale_iter: bool = True,
                  return_fallback: bool = False) -> TAPSolution | tuple[TAPSolution, np.ndarray]:
    """TAP fixed points to be counted or averaged: undamped first, damped where that fails.

    Alg. 1 is first run undamped (``first_damping=1``) to ``tol`` (default
    :data:`COUNT_TOL`) for at most ``first_max_iter`` iterations; the rows that do not
    converge are run again from the same initialisation with ``damping`` (to ``fallback_tol``,
    default ``tol``) for at most ``max_iter`` iterations.  Near a fixed point the undamped
    iteration converges several times faster than a damped one (measured on a 784×100 TAP
    machine: 7 iterations against 22 to 1e-12), which is what makes a live evaluation cheap;
    the damped fallback keeps the rows whose undamped iteration oscillates.  Both are Alg. 1
    with the same fixed points; from the same start the two iterations may reach different
    ones, as two damping values may.

    Parameters
    ----------
    rbm : RBM
        The model.
    init_visible : array_like, shape (R, n_visible)
        Data-anchored initialisations (eqs. 37–38).
    order : {1, 2, 3}
        TAP order.
    damping : float, sequence of float, or None
        Damping of the second attempt (None, or equal to ``first_damping``: no second attempt;
        with None the first attempt gets ``max_iter`` iterations).  A sequence gives one
        attempt per value, in order, each on the rows the attempts before it left
        unconverged (e.g. ``(0.5, 0.2)``: rows whose iteration still oscillates at 0.5 are
        damped harder); rows that converged earlier are never solved again.
        :func:`damping_ladder` gives the evaluation's default sequence.
    tol : float
        Convergence threshold of the first attempt.
    max_iter : int
        Iterations of the second attempt (the first damped one).
    first_max_iter : int
        Iterations of the first attempt.
    first_damping : float or None
        Damping of the first attempt (1 or None: undamped).
    fallback_tol : float, optional
        Convergence threshold of the damped attempts (default ``tol``).
    scale_iter : bool
        A later attempt at damping ``d`` gets ``max_iter × d₁ / d`` iterations, ``d₁`` being
        the first damped attempt's damping (default): a step damped by ``d`` moves ``d``
        times the undamped update, so the same distance takes ``1/d`` times the steps (the
        ladder ``(0.5, 0.2, 0.1, 0.05)`` with ``max_iter=1000`` gives 1,000, 2,500, 5,000 and
        10,000).  False: ``max_iter`` for every attempt.
    return_fallback : bool
        Also return the rows whose first attempt did not converge.

    Returns
    -------
    TAPSolution or (TAPSolution, numpy.ndarray)
        The solution of every row (``n_iter`` of the attempt that produced it), and with
        ``return_fallback`` the indices of the rows solved again.

    Raises
    ------
    TypeError, ValueError
        Naming the argument, before any solve: ``rbm`` not an RBM with finite parameters,
        ``init_visible`` not data of the visible prior, a damping outside (0, 1], a tolerance
        ≤ 0, an iteration count below 1, flags that are not bools.
    """
    vis, _ = _layers(rbm)
    order = check_option("order", order)
    init_visible = vis.check(init_visible, "init_visible", True)
    first_max_iter = check_option("first_max_iter", first_max_iter)
    max_iter = check_option("max_iter", max_iter)
    first_damping = 1.0 if first_damping is None else check_option("first_damping", first_damping)
    tol = check_option("tol", tol)
    if fallback_tol is not None:
        fallback_tol = check_option("tol", fallback_tol, "fallback_tol")
    scale_iter = check_bool(scale_iter, "scale_iter")
    return_fallback = check_bool(return_fallback, "return_fallback")
    ladder = fallback_dampings(damping)
    first = max_iter if not ladder else min(first_max_iter, max_iter)
    sol = solve(rbm, init_visible, order=order, damping=first_damping, tol=tol, max_iter=first)
    bad = todo = sol.not_converged
    ladder = [d for d in ladder if d != float(first_damping)]   # (the same damping again
    for d in ladder:                                            # would reach nothing new)
        if not todo.size:
            break
        n_iter = int(round(max_iter * ladder[0] / d)) if scale_iter else max_iter
        again = solve(rbm, init_visible[todo], order=order, damping=d,
                      tol=tol if fallback_tol is None else fallback_tol, max_iter=n_iter)
        fields = {}
        for f in sol._ROW_FIELDS:
            arr = np.array(getattr(sol, f), copy=True)
            arr[todo] = getattr(again, f)
            fields[f] = arr
        sol = dataclasses.replace(sol, **fields)
        todo = sol.not_converged
    return (sol, bad) if return_fallback else sol


#: The rungs :func:`damping_ladder` descends below the training damping:
#: :attr:`TAPSolverOptions.ladder_rungs <rbmviz.tap.options.TAPSolverOptions.ladder_rungs>`
LADDER_RUNGS = tuple(_O.ladder_rungs)


def damping_ladder(damping: float = _O.damping, floor: float = _O.ladder_floor) -> tuple[float, ...]:
    """The damped attempts of a counting solve (:func:`solve_counted`): ``damping``, then
    each of :data:`LADDER_RUNGS` (0.2, 0.1, 0.05) below it down to ``floor``, for the rows
    whose iteration still oscillates.

    Measured on binary-MNIST N_h = 25 trained with 10 Alg. 1 iterations per update: after 50
    epochs, of 1,000 rows 166 converge at damping 0.5, in 1,000 or in 4,000 iterations, and
    991 with 0.2 after it (21 → 125 unique solutions); after 100 epochs, of 300 rows 104
    converge at 0.2 and not one more in 6,000 iterations, while 0.1 and 0.05 with 3,000
    iterations each converge 1,998 of 2,000.  With :func:`solve_counted`'s growing budget
    (``scale_iter``) a row that converges nowhere costs 18.5× ``max_iter`` iterations: the
    live explorer stops at ``floor=0.2``.

    Parameters
    ----------
    damping : float
        Damping of the first damped attempt (the training damping, Alg. 1), in (0, 1].
    floor : float
        The smallest damping tried, in (0, 1].

    Returns
    -------
    tuple of float
        ``(damping, 0.2, 0.1, 0.05)`` at the defaults; the rungs not below ``damping`` or
        below ``floor`` are left out.
    """
    damping = check_option("damping", damping)
    floor = check_option("ladder_floor", floor, "floor")
    return (damping,) + tuple(r for r in LADDER_RUNGS if floor <= r < damping)


def fallback_dampings(damping, name: str = "damping") -> tuple[float, ...]:
    """The dampings of :func:`solve_counted`'s later attempts, in order.

    Parameters
    ----------
    damping : float, sequence of float, or None
        None: no later attempt; a number: that one; a sequence: each in turn.
    name : str
        The name errors give the argument.

    Returns
    -------
    tuple of float
        The dampings, each checked to lie in (0, 1].

    Raises
    ------
    ValueError
        For an empty sequence or a value outside (0, 1].
    """
    if damping is None:
        return ()
    values = (damping,) if np.ndim(damping) == 0 else tuple(damping)
    if not values:
        raise ValueError(f"{name}: an empty sequence; give at least one damping (or None for "
                         f"no second attempt)")
    return tuple(check_option("damping", d, name) for d in values)


def unique_solutions(sol: TAPSolution, tol: float = _O.unique_tol) -> UniqueSolutions:
    """De-duplicate the converged solutions of ``sol``.

    Two solutions are the same when ``max_i |Δa^v_i| < tol`` and ``max_j |Δa^h_j| < tol``;
    solutions are grouped by single linkage (connected components of that relation), so the
    grouping, the solution ids, the representatives' values and the counts do not depend on
    the order of the initialisations: rows are put in a canonical order (by the sum of
    ``[a^v, a^h]``, ties by value) and ids are numbered in that order; the representative of
    a solution is its first member in that order.  Non-converged rows get label −1 and are
    left out.

    The tolerance must exceed the precision of the solutions.  ``solve``'s criterion bounds
    the *step* (mean squared change < ``tol``), not the distance to the fixed point, which is
    larger when the iteration contracts slowly.  Measured on a 784×100 RBM trained 3 epochs
    with CD-1 on MNIST (1,000 inits): solved to 1e-8 the counts at tol 1e-5/1e-4/1e-3/1e-2 are
    786/284/98/16, solved to 1e-12 they are 19/11/5/5 — report the count's sensitivity to
    ``tol`` or solve more tightly before counting: solutions solved
    with a tolerance looser than :data:`COUNT_TOL` (1e-12) draw a ``RuntimeWarning``.

    Parameters
    ----------
    sol : TAPSolution
        From :func:`solve`.
    tol : float
        Two solutions are the same when ``max_i |Δa^v_i| < tol`` and ``max_j |Δa^h_j| < tol``.

    Returns
    -------
    UniqueSolutions
        The distinct solutions, their labels and counts.

    Raises
    ------
    TypeError
        If ``sol`` is not a :class:`TAPSolution`.
    """
    if not isinstance(sol, TAPSolution):
        raise TypeError(f"sol must be a TAPSolution (from rbmviz.tap.solve), got {type(sol).__name__}")
    tol = check_option("unique_tol", tol, "tol")
    solved_to = getattr(sol, "tol", None)
    if solved_to is not None and solved_to > COUNT_TOL * 10:
        warnings.warn(f"counting unique solutions of runs solved to tol={solved_to:g}: the same "
                      f"fixed point can be scattered by more than the de-duplication tolerance "
                      f"{tol:g} and be counted many times; solve with tol <= {COUNT_TOL:g} "
                      f"(rbmviz.tap.COUNT_TOL) before counting", RuntimeWarning, stacklevel=2)
    R = len(sol)
    conv = np.flatnonzero(sol.converged)
    labels = np.full(R, -1, dtype=np.int64)
    if conv.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return UniqueSolutions(empty, labels, empty.copy(), np.empty(0), 0, tol, sol.subset(empty))
    nv = sol.av.shape[1]
    X = np.ascontiguousarray(np.hstack([sol.av[conv], sol.ah[conv]]))
    s = X.sum(axis=1)
    order = _canonical_order(X, s)
    window = tol * X.shape[1] * (1.0 + 1e-9) + 1e-12 * (np.abs(s).max() + 1.0)
    lab_sorted = _cluster_sorted(X[order], s[order], nv, window, tol, tol)
    labels[conv[order]] = lab_sorted
    n_unique = int(lab_sorted.max()) + 1
    first = np.full(n_unique, -1, dtype=np.int64)
    for pos in range(lab_sorted.size - 1, -1, -1):   # first occurrence of each id
        first[lab_sorted[pos]] = pos
    reps = conv[order[first]]
    counts = np.bincount(lab_sorted, minlength=n_unique).astype(np.int64)
    return UniqueSolutions(representatives=reps, labels=labels, counts=counts,
                           free_energy=sol.free_energy[reps].copy(), n_unique=n_unique, tol=tol,
                           solutions=sol.subset(reps))


# ---------------------------------------------------------------------------- likelihood
def data_term(rbm: RBM, V: ArrayLike) -> np.ndarray:
    """The data part of the TAP log-likelihood (eq. 39) of every row of ``V``:
    ``Σ_i ln P_i(x_i; θ) + Σ_j ln Z^h_j(Σ_i W_ij x_i, 0; θ)``, with normalised priors.

    ``ln P(x) ≈ data_term(x) + 𝔽_RBM`` (the TAP free energy of eq. 36, :attr:`TAPSolution.free_energy`,
    averaged over solutions); for a real-valued visible prior ``P_i`` is a density.

    Parameters
    ----------
    rbm : RBM
        The model (any unit priors).
    V : array_like, shape (N, n_visible)
        Rows in the support of the visible prior.

    Returns
    -------
    numpy.ndarray, shape (N,)
        The data term of every row, in nats.

    Raises
    ------
    ValueError
        If ``V`` is not data of the visible prior.
    """
    vis, hid = _layers(rbm)
    return _data_term(rbm, vis, hid, vis.check(V, "V", True))


def _data_term(rbm, vis, hid, X):
    """``Σ_i ln P_i(x_i; θ) + Σ_j ln Z^h_j(Σ_i W_ij x_i, 0; θ)`` per row (eq. 39)."""
    W = np.asarray(rbm.W, dtype=np.float64)
    pre = X @ W
    if vis.prior is None or vis.binary:
        lp = X @ vis.U - vis.logz0.sum()
    else:
        lp = vis.prior.log_prior(vis.U, X).sum(axis=1)
    if hid.binary:
        lz = (_softplus(pre + hid.U) - hid.logz0).sum(axis=1)
    else:
        lz = hid.moments(pre, np.zeros_like(pre))[0].sum(axis=1)
    return lp + lz


def log_likelihood(rbm: RBM, V: ArrayLike, *, init: ArrayLike | None = None,
                   n_init: int | None = None, unique: bool = True, seed: int = 0,
                   order: int = _O.order, damping: float | None = _O.damping,
                   tol: float | None = None, max_iter: int = _O.max_iter,
                   unique_tol: float = _O.unique_tol,
                   details: bool = False, undamped_first: bool = False) -> float | TAPLogLikelihood:
    """TAP estimate of the average log-likelihood of the rows of ``V`` (eq. 39), in nats.

    ``ln P(x) ≈ Σ_i ln P_i(x_i) + Σ_j ln Z^h_j(Σ_i W_ij x_i, 0) + (1/K) Σ_k 𝔽_RBM(k)``
    averaged over the rows ``x`` of ``V``, with the ``K`` TAP solutions obtained by
    :func:`solve` from data-anchored initialisations (eqs. 37–38).  Initialisations that do
    not converge within ``max_iter`` are excluded with a ``RuntimeWarning``; if none converges
    the result is NaN.  The per-unit value of the paper's figures is this divided by
    ``n_visible + n_hidden``.

    Parameters
    ----------
    rbm : RBM
        The model (any unit priors).
    V : array_like, shape (N, n_visible)
        Rows to evaluate (data of the visible prior).
    init : array_like, shape (R, n_visible), optional
        Initialisations; default ``V`` itself.
    n_init : int, optional
        Draw this many rows of ``init`` without replacement, with ``seed``.
    unique : bool
        Average uniformly over the unique converged solutions (Fig. 3, Sec. V.2;
        :func:`unique_solutions` with ``unique_tol``); False: over all converged runs
        (multiplicity-weighted).
    seed : int
        Seed of the draw of ``n_init`` rows.
    order : {1, 2, 3}
        TAP order; 1 and 3 for binary models only.
    damping : float, sequence of float, or None
        Damping of :func:`solve`; with ``undamped_first`` the damping(s) of the later
        attempts of :func:`solve_counted` (e.g. :func:`damping_ladder`).
    tol : float, optional
        Tolerance of :func:`solve`; default :data:`COUNT_TOL` (1e-12) with ``unique=True`` — at
        the paper's 1e-8 the same solution is scattered by more than ``unique_tol`` and would
        be counted many times (see :func:`unique_solutions`) — and 1e-8 otherwise.
    max_iter : int
        Iterations of :func:`solve`.
    unique_tol : float
        Tolerance of :func:`unique_solutions`.
    details : bool
        Return a :class:`TAPLogLikelihood` instead of a float.
    undamped_first : bool
        Solve with :func:`solve_counted` (undamped first, ``damping`` only for the runs that
        do not converge) instead of :func:`solve` with ``damping``: several times faster.

    Returns
    -------
    float or TAPLogLikelihood
        The estimate, or the details if ``details=True``.

    Raises
    ------
    TypeError, ValueError
        Naming the argument, before any solve: ``rbm`` not an RBM with finite parameters,
        ``V`` or ``init`` not data of the visible prior, a setting out of range or of the
        wrong type, flags that are not bools.
    """
    vis, hid = _layers(rbm)
    X = vis.check(V, "V", True)
    I = X if init is None else vis.check(init, "init", True)
    seed = check_seed(seed)
    unique = check_bool(unique, "unique")
    details = check_bool(details, "details")
    undamped_first = check_bool(undamped_first, "undamped_first")
    order = check_option("order", order)
    max_iter = check_option("max_iter", max_iter)
    unique_tol = check_option("unique_tol", unique_tol)
    if tol is not None:
        tol = check_option("tol", tol)
    if n_init is not None:
        n_init = check_int(n_init, "n_init", low=1)
        if n_init < I.shape[0]:
            pick = np.sort(np.random.default_rng(seed).choice(I.shape[0], n_init, replace=False))
            I = I[pick]
    if tol is None:
        tol = _O.count_tol if unique else _O.tol
    if undamped_first:
        sol = solve_counted(rbm, I, order=order, damping=damping, tol=tol, max_iter=max_iter)
    else:
        sol = solve(rbm, I, order=order, damping=damping, tol=tol, max_iter=max_iter)
    bad = len(sol) - sol.n_converged
    if bad:
        warnings.warn(f"{bad} of {len(sol)} TAP initialisations did not converge within "
                      f"max_iter={max_iter} (tol={tol:g}); they are left out of the TAP "
                      f"log-likelihood", RuntimeWarning, stacklevel=2)
    us = None
    if sol.n_converged == 0:
        F, n_sol = np.array([np.nan]), 0
    elif unique:
        us = unique_solutions(sol, unique_tol)
        F, n_sol = us.free_energy, us.n_unique
    else:
        F = sol.free_energy[sol.converged]
        n_sol = F.size
    data = _data_term(rbm, vis, hid, X)
    mean_f = float(np.mean(F))
    value = float(np.mean(data) + mean_f)
    if not details:
        return value
    return TAPLogLikelihood(value=value, data_term=data, mean_free_energy=mean_f,
                            n_solutions=n_sol, n_not_converged=bad, unique=bool(unique),
                            solution=sol, unique_solutions=us)
