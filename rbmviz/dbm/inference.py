"""TAP inference of a deep TAP machine (Tramel et al. 2018, App. E, eqs. 125–129): the TAP2
fixed points (:func:`tap_solve`), the TAP value ``Φ`` (:func:`tap_log_z`), the TAP
log-likelihood (:func:`log_likelihood`) and its gradient (:func:`gradient`); the equations are
restated in :mod:`rbmviz.dbm`.
"""
from __future__ import annotations

import dataclasses
import numbers
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._numerics import sigmoid as _sigmoid
from .._validation import check_array, check_bool, check_data, check_int, check_seed
from ..tap.options import DeepLikelihoodOptions as _DL, TAPSolverOptions as _O, check_option
from .model import DBM, _check_sequence

__all__ = ["DBMSolution", "tap_solve", "tap_log_z", "log_likelihood", "gradient"]

_EPS = 1e-12


def _entropy(m):
    mc = np.clip(m, _EPS, 1.0 - _EPS)
    return -(m * np.log(mc) + (1.0 - m) * np.log1p(-mc))



@dataclasses.dataclass
class DBMSolution:
    """TAP2 fixed points of a DBM, one per initialisation.

    Parameters
    ----------
    m : list of numpy.ndarray
        Per-layer magnetisations, shape (R, N_l) (``m[0]`` the data when clamped).
    converged : numpy.ndarray, shape (R,)
        Whether each run converged.
    n_iter : numpy.ndarray, shape (R,)
        Iterations done.
    phi : numpy.ndarray, shape (R,)
        The TAP value ``Φ(m)`` (≈ ln Z, or the clamped ``b·x + ln Z(x)``).
    clamped : bool
        Whether the visible layer was clamped.
    damping, tol : float
        The settings used.
    """

    m: list
    converged: np.ndarray
    n_iter: np.ndarray
    phi: np.ndarray
    clamped: bool
    damping: float
    tol: float

    @property
    def s(self) -> list[np.ndarray]:
        """Variances ``s⁽ˡ⁾ = m⁽ˡ⁾ − (m⁽ˡ⁾)²`` (0 for a clamped visible layer).

        Returns
        -------
        list of numpy.ndarray
            One array per layer.
        """
        out = [m - m * m for m in self.m]
        if self.clamped:
            out[0] = np.zeros_like(self.m[0])
        return out

    def __len__(self):
        return int(self.converged.shape[0])


def _check_dbm(dbm):
    """``dbm`` is a :class:`DBM` with usable (finite, right-shaped) parameters."""
    if not isinstance(dbm, DBM):
        raise TypeError(f"dbm must be an rbmviz.dbm.DBM, got {type(dbm).__name__}")
    dbm._check_params()


def _check_solution(sol, name: str, dbm: DBM, clamped: bool) -> None:
    """``sol`` is a :class:`DBMSolution` of ``dbm``'s layer sizes, free or clamped as asked."""
    if not isinstance(sol, DBMSolution):
        raise TypeError(f"{name} must be a DBMSolution (from rbmviz.dbm.tap_solve), got "
                        f"{type(sol).__name__}")
    if sol.clamped != clamped:
        raise ValueError(f"{name} must hold {'clamped' if clamped else 'free'} solutions "
                         f"(tap_solve(..., clamped={clamped})), got "
                         f"{'clamped' if sol.clamped else 'free'} ones")
    sizes = [np.shape(m)[1] if np.ndim(m) == 2 else None for m in sol.m]
    if sizes != list(dbm.layers) or len({np.shape(m)[0] for m in sol.m}) != 1:
        raise ValueError(f"{name} does not match the model: its magnetisations have shapes "
                         f"{[np.shape(m) for m in sol.m]}, the DBM has layers {list(dbm.layers)}")


def _check_magnetisations(m, name: str, dbm: DBM) -> list[np.ndarray]:
    """Per-layer magnetisations: one (R, N_l) array per layer, finite, in [0, 1]."""
    m = _check_sequence(m, name, len(dbm.layers), "one (R, N_l) array per layer")
    R = np.shape(m[0])[0] if np.ndim(m[0]) == 2 else None
    if R is None:
        raise ValueError(f"{name}[0] must be 2-D (R, {dbm.layers[0]}), got shape {np.shape(m[0])}")
    return [check_array(x, f"{name}[{l}]", shape=(R, n), low=0.0, high=1.0)
            for l, (x, n) in enumerate(zip(m, dbm.layers))]


def tap_log_z(dbm: DBM, m: Sequence[np.ndarray], *, clamped: bool = False) -> np.ndarray:
    """``Φ(m)`` per row (module docstring; Tramel et al. 2018, App. E).

    The TAP2 estimate of ``ln Z`` at free fixed points, of ``b·x + ln Σ_h e^{−E(x,h)}`` at
    clamped ones (``m[0] = x``, ``s⁽⁰⁾ = 0``).

    Parameters
    ----------
    dbm : DBM
        The model.
    m : sequence of numpy.ndarray
        Per-layer magnetisations, shape (R, N_l).
    clamped : bool
        Whether the visible layer is clamped.

    Returns
    -------
    numpy.ndarray, shape (R,)
        ``Φ(m)``.

    Raises
    ------
    TypeError
        If ``dbm`` is not a :class:`DBM`, ``m`` not a list of arrays or ``clamped`` not a bool.
    ValueError
        If ``m`` does not have one (R, N_l) array per layer with values in [0, 1].
    """
    _check_dbm(dbm)
    m = _check_magnetisations(m, "m", dbm)
    clamped = check_bool(clamped, "clamped")
    return _tap_log_z(dbm, m, clamped)


def _tap_log_z(dbm, m, clamped):
    s = [x - x * x for x in m]
    if clamped:
        s[0] = np.zeros_like(m[0])
    out = 0.0
    for l, x in enumerate(m):
        if not (clamped and l == 0):
            out = out + _entropy(x).sum(axis=1)
        out = out + x @ dbm.biases[l]
    for l, w in enumerate(dbm.W):
        out = out + np.einsum("ri,ri->r", m[l] @ w, m[l + 1])
        out = out + 0.5 * np.einsum("ri,ri->r", s[l] @ (w * w), s[l + 1])
    return out


def tap_solve(dbm: DBM, init: ArrayLike, *, clamped: bool = False, damping: float = _O.damping,
              tol: float = _O.tol, max_iter: int = _O.max_iter,
              init_hidden: Sequence[ArrayLike] | None = None) -> DBMSolution:
    """TAP2 fixed points of a DBM from ``R`` data-anchored initialisations (App. E, Alg. 1
    on the block matrix of eq. 125).

    Parameters
    ----------
    dbm : DBM
        The model.
    init : array (R, N_0)
        Binary data rows.  Free runs start at ``m⁽⁰⁾ = x`` (``s⁽⁰⁾ = 0``, eqs. 37–38);
        clamped runs keep ``m⁽⁰⁾ = x`` throughout.  Hidden layers start at the bottom-up pass
        ``m⁽ˡ⁾ = σ(θ⁽ˡ⁾ + W⁽ˡ⁾ᵀ m⁽ˡ⁻¹⁾)`` unless ``init_hidden`` (list of (R, N_l)) is given.
    clamped : bool
        Keep the visible layer at the data.
    damping : float in (0, 1]
        Weight of the new iterate (1 = undamped).
    tol : float > 0
        Convergence: mean squared change of all non-clamped magnetisations between
        iterations below ``tol``.
    max_iter : int ≥ 1
        Largest number of iterations.
    init_hidden : list of array, optional
        Initial hidden magnetisations, one (R, N_l) array per hidden layer.

    Returns
    -------
    DBMSolution
        The fixed points.

    Raises
    ------
    TypeError
        If ``dbm`` is not a :class:`DBM`, ``clamped`` is not a bool or an argument is not
        numeric.
    ValueError
        If the model's parameters are not finite, ``init`` is not binary data of ``N_0``
        columns, ``init_hidden`` does not have one array of shape (R, N_l) with values in
        [0, 1] per hidden layer, or a setting is out of range.
    """
    _check_dbm(dbm)
    X = check_data(init, "init", n_visible=dbm.layers[0])
    clamped = check_bool(clamped, "clamped")
    damping = check_option("damping", damping)
    tol = check_option("tol", tol)
    max_iter = check_option("max_iter", max_iter)
    L = dbm.n_hidden_layers
    W = dbm.W
    if init_hidden is not None:
        init_hidden = _check_sequence(init_hidden, "init_hidden", L, "one (R, N_l) array per "
                                      "hidden layer")
        m = [X.copy()] + [check_array(h, f"init_hidden[{l}]", shape=(X.shape[0], dbm.layers[l + 1]),
                                      low=0.0, high=1.0).copy()
                          for l, h in enumerate(init_hidden)]
    else:
        m = [X.copy()]
        for l in range(1, L + 1):
            m.append(_sigmoid(dbm.biases[l] + m[l - 1] @ W[l - 1]))
    W2 = [w * w for w in W]
    R = X.shape[0]
    n_free = dbm.n_units - (dbm.layers[0] if clamped else 0)
    free_layers = list(range(0 if not clamped else 1, L + 1))
    order = [l for l in free_layers if l % 2 == 1] + [l for l in free_layers if l % 2 == 0]
    converged = np.zeros(R, dtype=bool)
    n_iter = np.full(R, max_iter, dtype=np.int64)
    out = [x.copy() for x in m]
    live = np.arange(R)
    keep = 1.0 - damping
    for it in range(1, max_iter + 1):
        diff = np.zeros(live.size)
        for l in order:
            s_of = (lambda k: np.zeros_like(m[0]) if (clamped and k == 0) else m[k] - m[k] * m[k])
            field = np.broadcast_to(dbm.biases[l], m[l].shape).copy()
            ons = np.zeros_like(m[l])
            if l >= 1:
                field += m[l - 1] @ W[l - 1]
                ons += s_of(l - 1) @ W2[l - 1]
            if l < L:
                field += m[l + 1] @ W[l].T
                ons += s_of(l + 1) @ W2[l].T
            new = damping * _sigmoid(field - (m[l] - 0.5) * ons) + keep * m[l]
            diff += np.square(new - m[l]).sum(axis=1)
            m[l] = new
        done = diff < tol * n_free
        if done.any() or it == max_iter:
            stop = done | (it == max_iter)
            rows = live[stop]
            for l in range(L + 1):
                out[l][rows] = m[l][stop]
            converged[live[done]] = True
            n_iter[live[done]] = it
            live = live[~stop]
            if live.size == 0:
                break
            m = [x[~stop] for x in m]
    phi = _tap_log_z(dbm, out, clamped)
    return DBMSolution(m=out, converged=converged, n_iter=n_iter, phi=phi, clamped=bool(clamped),
                       damping=damping, tol=tol)


def log_likelihood(dbm: DBM, X: ArrayLike, *, init: ArrayLike | None = None,
                   n_init: int | None = None, seed: int = 0, damping: float = _DL.damping,
                   tol: float = _DL.tol, max_iter: int = _DL.max_iter, per_unit: bool = False,
                   details: bool = False) -> float | dict:
    """TAP log-likelihood of the rows of ``X`` (Tramel et al. 2018, App. E).

    ``mean_x Φ(clamped on x) − mean_k Φ(free solution k)``, free solutions from data-anchored
    starts, converged runs averaged uniformly (non-converged ones left out; NaN if none
    converged).

    Parameters
    ----------
    dbm : DBM
        The model.
    X : array_like, shape (R, N_0)
        Binary data rows.
    init : array_like, shape (R, N_0), optional
        Starts of the free runs; default ``X``.
    n_init : int, optional
        Draw this many rows of ``init`` with ``seed``.
    seed : int
        Seed of that draw.
    damping, tol, max_iter
        TAP iteration settings (:func:`tap_solve`); defaults and bounds
        :class:`rbmviz.tap.options.DeepLikelihoodOptions` (tol 1e-10, 2,000 iterations:
        tighter than training's).
    per_unit : bool
        Divide by ``Σ_l N_l`` (Fig. 11).
    details : bool
        Return a dict instead of a float.

    Returns
    -------
    float or dict
        The value; with ``details=True`` a dict with ``value``, ``clamped`` (per-row Φ),
        ``log_z`` (mean free Φ), ``n_free``, ``n_not_converged``.

    Raises
    ------
    TypeError
        If ``dbm`` is not a :class:`DBM`, ``per_unit``/``details`` not bools or a setting not
        numeric.
    ValueError
        For data that is not binary with ``N_0`` columns or a setting out of range.
    """
    _check_dbm(dbm)
    X = check_data(X, "X", n_visible=dbm.layers[0])
    I = X if init is None else check_data(init, "init", n_visible=dbm.layers[0])
    seed = check_seed(seed)
    per_unit = check_bool(per_unit, "per_unit")
    details = check_bool(details, "details")
    damping = check_option("damping", damping, options=_DL)
    tol = check_option("tol", tol, options=_DL)
    max_iter = check_option("max_iter", max_iter, options=_DL)
    if n_init is not None:
        n_init = check_int(n_init, "n_init", low=1)
        if n_init < I.shape[0]:
            I = I[np.sort(np.random.default_rng(seed).choice(I.shape[0], n_init, replace=False))]
    free = tap_solve(dbm, I, damping=damping, tol=tol, max_iter=max_iter)
    cl = tap_solve(dbm, X, clamped=True, damping=damping, tol=tol, max_iter=max_iter)
    log_z = float(np.mean(free.phi[free.converged])) if free.converged.any() else np.nan
    value = float(np.mean(cl.phi) - log_z)
    if per_unit:
        value /= dbm.n_units
    if not details:
        return value
    return {"value": value, "clamped": cl.phi, "log_z": log_z, "n_free": int(free.converged.sum()),
            "n_not_converged": int((~free.converged).sum() + (~cl.converged).sum())}


def gradient(dbm: DBM, X: ArrayLike, free: DBMSolution, clamped: DBMSolution,
             rows: ArrayLike | None = None) -> dict:
    """Ascent directions of the TAP log-likelihood (eqs. 126–129, binary units).

    Parameters
    ----------
    dbm : DBM
        The model.
    X : array (M, N_0)
        The mini-batch.
    free : DBMSolution
        Free solutions (``clamped=False``).
    clamped : DBMSolution
        Clamped solutions of the rows of ``X``.
    rows : int array, optional
        The free solutions to average over (default all).

    Returns
    -------
    dict
        ``"W"`` (list, one per coupling matrix) and ``"biases"`` (list, one per layer).

    Raises
    ------
    TypeError
        If ``free``/``clamped`` are not :class:`DBMSolution` s or ``rows`` does not hold
        integers.
    ValueError
        If ``free``/``clamped`` are not free/clamped solutions of this model's layer sizes,
        ``clamped`` does not have one row per row of ``X``, a row index is out of range, or
        there is no free solution to average over.
    """
    _check_dbm(dbm)
    X = check_data(X, "X", n_visible=dbm.layers[0])
    _check_solution(free, "free", dbm, clamped=False)
    _check_solution(clamped, "clamped", dbm, clamped=True)
    if len(clamped) != X.shape[0]:
        raise ValueError(f"clamped has {len(clamped)} rows for {X.shape[0]} rows of X")
    sel = slice(None) if rows is None else _check_rows(rows, "rows", len(free))
    mf = [x[sel] for x in free.m]
    sf = [x[sel] for x in free.s]
    K, M = mf[0].shape[0], X.shape[0]
    if K == 0:
        raise ValueError("no free solutions to average over")
    mc = [X] + [x for x in clamped.m[1:]]
    sc = [np.zeros_like(X)] + [x - x * x for x in clamped.m[1:]]
    gW, gb = [], []
    for l, w in enumerate(dbm.W):
        pos = mc[l].T @ mc[l + 1] / M + w * (sc[l].T @ sc[l + 1]) / M
        neg = mf[l].T @ mf[l + 1] / K + w * (sf[l].T @ sf[l + 1]) / K
        gW.append(pos - neg)
    for l in range(len(dbm.layers)):
        gb.append(mc[l].mean(axis=0) - mf[l].mean(axis=0))
    return {"W": gW, "biases": gb}


def _check_rows(rows, name: str, n: int) -> np.ndarray:
    """Row indices into ``n`` rows: a 1-D integer array with entries in [−n, n)."""
    if isinstance(rows, numbers.Integral) and not isinstance(rows, bool):
        rows = [rows]
    arr = np.asarray(rows)
    if arr.size == 0 and arr.dtype.kind not in "iub":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(f"{name} must be a 1-D array of integer row indices, got dtype {arr.dtype} "
                        f"of shape {arr.shape}")
    if arr.size and (arr.min() < -n or arr.max() >= n):
        bad = int(arr[(arr < -n) | (arr >= n)][0])
        raise ValueError(f"{name} holds index {bad}, out of range for {n} solutions (0 to {n - 1})")
    return arr.astype(np.int64)
