"""The TAP log-likelihood (Tramel et al. 2018, eq. 39): the data term of each row plus the
mean TAP free energy (eq. 36) of the distinct solutions reached from data-anchored starts
(:func:`log_likelihood`, :func:`data_term`, :class:`TAPLogLikelihood`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses
import warnings

import numpy as np
from numpy.typing import ArrayLike

from .._numerics import softplus as _softplus
from .._validation import check_bool, check_int, check_seed
from ._iteration import _layers
from .inference import TAPSolution, solve
from .options import TAPSolverOptions as _O, check_option
from .solutions import UniqueSolutions, solve_counted, unique_solutions

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["log_likelihood", "data_term", "TAPLogLikelihood"]


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
