"""Counting the distinct TAP solutions of many starts (Tramel et al. 2018, Sec. VII.3, Figs.
3 and 5): :func:`solve_counted` (Alg. 1 undamped first, then a ladder of dampings for the
runs that do not settle), :func:`damping_ladder` and :func:`unique_solutions` (distinct
fixed points and the map initialisation → solution, :class:`UniqueSolutions`).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import dataclasses
import time
import warnings

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_bool
from ..kernels import tap as _k
from . import _iteration as _it
from ._iteration import _layers
from .inference import TAPSolution, solve
from .options import TAPSolverOptions as _O, check_option

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["solve_counted", "unique_solutions", "UniqueSolutions", "COUNT_TOL",
           "FIRST_MAX_ITER", "damping_ladder", "LADDER_RUNGS", "fallback_dampings"]


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


#: solve tolerance (MSE between iterations) recommended before counting unique solutions:
#: :attr:`TAPSolverOptions.count_tol <rbmviz.tap.options.TAPSolverOptions.count_tol>`
COUNT_TOL = _O.count_tol
#: iterations of the undamped first attempt of :func:`solve_counted`:
#: :attr:`TAPSolverOptions.first_max_iter <rbmviz.tap.options.TAPSolverOptions.first_max_iter>`
FIRST_MAX_ITER = _O.first_max_iter


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


def fallback_dampings(damping: float | Sequence[float] | None,
                      name: str = "damping") -> tuple[float, ...]:
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
