"""The divergence guard of :class:`rbmviz.runs.Run` (the *Divergence* section of
:mod:`rbmviz.runs`): parameters that become NaN/inf, exceed or sit near ``max_weight``, a
recorded log-likelihood that collapses, and the likelihood guard — the log-likelihood of a few
fixed training rows (exact ``log Z`` for small models, otherwise an upper bound from a lower
bound of ``log Z``), checked whatever the metrics.  It only reads the model.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import evaluate as _evaluate
from .. import _blas
from .._blas import single_threaded_blas
from ..bounds import EXACT_BITS_MAX
from ..errors import RunDiverged
from ..kernels.exact import sigmoid_vec, softplus_vec
from ..model import RBM

__all__ = ["DivergenceGuard", "PINNED_FRACTION", "GUARD_ROWS", "GUARD_SWEEPS", "GUARD_EXACT_OPS"]

#: a parameter at or above this fraction of ``max_weight`` counts as pinned (diverged)
PINNED_FRACTION = 0.9
#: the likelihood guard (always on for binary models, whatever the metrics): rows of the fixed
#: ``spl`` subset whose log-likelihood it bounds, the most zero-temperature Gibbs sweeps and
#: mean-field iterations it makes per evaluation to find states of high probability, and the
#: largest enumeration (states × n_visible × n_hidden) for which it uses the exact ``log Z``
GUARD_ROWS = 32
GUARD_SWEEPS = 5
GUARD_EXACT_OPS = 2 ** 20
#: most row blocks (of at least 8 rows) the guard's search splits its rows into
SEARCH_BLOCKS = 2
#: key of the guard's best value in ``Run._best`` (not a metric name: it holds a space)
_GUARD_KEY = "log-likelihood bound"


def _softplus(x):
    return np.logaddexp(0.0, x)


def _search(rbm: RBM, V: np.ndarray, sweeps: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The zero-temperature sweeps of :func:`_log_z_lower_bound` from the rows ``V``, in the
    model's dtype: ``(S, pre, n_start)`` — the rows ``V`` followed by the states the sweeps
    reached, their pre-activations ``S W + c`` (model dtype; those of ``V`` are the first
    sweep's), and ``n_start`` = rows of ``V``.

    A row's sweeps do not depend on the other rows (a fixed point stays fixed), so the rows
    are searched in :data:`SEARCH_BLOCKS` fixed blocks — a function of the row count only —
    on the threads of :mod:`rbmviz._blas` when it has more than one."""
    v0 = np.ascontiguousarray(V, dtype=rbm.W.dtype)
    n = v0.shape[0]
    nb = min(SEARCH_BLOCKS, max(1, n // 8))
    edges = [n * i // nb for i in range(nb + 1)]
    parts = [(edges[i], edges[i + 1]) for i in range(nb)]
    pool = _blas._get_pool() if nb > 1 else None
    if pool is None:
        res = [_search_block(rbm, v0[lo:hi], sweeps) for lo, hi in parts]
    else:
        futures = [pool.submit(_search_block, rbm, v0[lo:hi], sweeps) for lo, hi in parts[1:]]
        res = [_search_block(rbm, v0[parts[0][0]:parts[0][1]], sweeps)]
        res += [f.result() for f in futures]
    S = np.concatenate([v0] + [r[0] for r in res])
    pre = np.concatenate([r[1] for r in res] + [r[2] for r in res])
    return S, pre, n


def _search_block(rbm, v0, sweeps):
    """The sweeps of :func:`_search` from the rows ``v0``: ``(v, pre0, pre)``, the states
    reached and the pre-activations of ``v0`` and of them."""
    W, b, c = rbm.params
    v = v0
    pre0 = pre = v0 @ W + c
    for i in range(sweeps):             # the search runs in the model's dtype
        if i:
            pre = v @ W + c
        h = (pre > 0).astype(W.dtype)
        nxt = (h @ W.T + b > 0).astype(W.dtype)
        if np.array_equal(nxt, v):
            break
        v = nxt
    else:                               # the last sweep moved: the new states' products
        pre = v @ W + c
    return v, pre0, pre


def _neg_free_energies(S: np.ndarray, pre: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``−F(s) = bᵀs + Σ_j softplus(pre_sj)`` of the rows of ``S`` from their pre-activations
    ``pre = S W + c``, summed in float64."""
    return S.astype(np.float64) @ np.asarray(b, dtype=np.float64) + _softplus_rows(pre)


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _softplus_rows(pre):
    """``Σ_j softplus(pre[r, j])`` per row, in float64 (:func:`rbmviz.kernels.exact.softplus_vec`)."""
    n, m = pre.shape
    out = np.empty(n)
    for r in range(n):
        t = 0.0
        for j in range(m):
            t += softplus_vec(np.float64(pre[r, j]))
        out[r] = t
    return out


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _mean_field_bound(W, b, c, iters):
    """The largest naive mean-field bound ``H(m) + bᵀm + Σ_j softplus(c_j + (mᵀW)_j)`` over
    ``iters`` damped iterations ``m ← ½ m + ½ σ(W σ(mᵀW + c) + b)`` from ``m = ½``, in float64
    (``W`` in its dtype).  An iteration is one pass over the rows of ``W``: row ``i`` gives
    ``m_i``'s update and then its share ``m_i W_i`` of the next ``mᵀW``."""
    n, k = W.shape
    m = np.full(n, 0.5)
    a = np.empty(k)
    for j in range(k):
        a[j] = c[j]
    for i in range(n):
        for j in range(k):
            a[j] += 0.5 * np.float64(W[i, j])
    q = np.empty(k)
    best = -np.inf
    for it in range(iters):
        ent = 0.0
        lin = 0.0
        for i in range(n):
            p = min(max(m[i], 1e-12), 1.0 - 1e-12)
            ent -= p * math.log(p) + (1.0 - p) * math.log1p(-p)
            lin += m[i] * b[i]
        sp = 0.0
        for j in range(k):
            sp += softplus_vec(a[j])
            q[j] = sigmoid_vec(a[j])
        best = max(best, ent + lin + sp)
        if it == iters - 1:
            break
        for j in range(k):
            a[j] = c[j]
        for i in range(n):
            t = 0.0
            for j in range(k):
                t += np.float64(W[i, j]) * q[j]
            mi = 0.5 * m[i] + 0.5 * sigmoid_vec(t + b[i])
            m[i] = mi
            for j in range(k):
                a[j] += mi * np.float64(W[i, j])
    return best


def _bound_terms(rbm: RBM, V: np.ndarray, sweeps: int = GUARD_SWEEPS) -> tuple[np.ndarray, float]:
    """``(−F(v) of the rows of V, the lower bound of log Z)`` of :func:`_log_z_lower_bound`,
    from one search (the rows' free energies come from its first products)."""
    W, b, c = rbm.params
    S, pre, n0 = _search(rbm, V, sweeps)
    f = _neg_free_energies(S, pre, b)
    keys = np.packbits(S.astype(np.uint8), axis=1)          # distinct states by their bits
    _, first = np.unique(keys.view(np.dtype((np.void, keys.shape[1]))).ravel(), return_index=True)
    fs = f[np.sort(first)]                                  # −F(s) of the distinct states
    top = float(fs.max())
    log_z = top + math.log(float(np.exp(fs - top).sum()))
    b64, c64 = np.asarray(b, dtype=np.float64), np.asarray(c, dtype=np.float64)
    log_z = max(log_z, _mean_field_bound(W, b64, c64, sweeps + 1))
    return f[:n0], log_z


def _log_z_lower_bound(rbm: RBM, V: np.ndarray, *, sweeps: int = GUARD_SWEEPS) -> float:
    """A lower bound on ``log Z`` from states of high probability found near the rows ``V``.

    ``log Z ≥ log Σ_{s∈S} exp(−F(s))`` for any set ``S`` of distinct states, and
    ``log Z ≥ H(m) + bᵀm + Σ_j softplus(c_j + (mᵀW)_j)`` for any ``m ∈ [0, 1]^n`` (naive mean
    field, ``H`` the entropy of independent units of means ``m``).  ``S`` holds the rows and the
    states that ``sweeps`` zero-temperature Gibbs sweeps (``h = [vW + c > 0]``,
    ``v = [Wh + b > 0]``, each lowering the energy) reach from them; the mean-field iterations
    start at ``m = ½``, where the bound is exact for a model without weights.  The search is
    deterministic and only reads the model.  On a diverged model the probability mass sits on a
    few saturated states that the sweeps find, and the bound is close to ``log Z``.

    Parameters
    ----------
    rbm : RBM
        A binary model (float32 or float64): the search and the pre-activations of its states
        in the model's dtype, the free energies summed and the mean-field iterations run in
        float64.
    V : numpy.ndarray, shape (n_rows, n_visible)
        0/1 rows where the search starts.
    sweeps : int
        Most sweeps (they stop at a fixed point) and mean-field iterations.

    Returns
    -------
    float
        A value ``≤ log Z`` (nats).
    """
    return _bound_terms(rbm, V, sweeps)[1]


def _log_z_enumerated(rbm: RBM, states: np.ndarray) -> float:
    """``log Z`` summed over ``states``, all the states of the smaller layer (numpy, float64).

    Parameters
    ----------
    rbm : RBM
        A binary model.
    states : numpy.ndarray, shape (2**n, n)
        :func:`rbmviz.evaluate.all_states` of the smaller layer's ``n`` units.

    Returns
    -------
    float
        ``log Z`` (nats).
    """
    W, b, c = (np.asarray(a, dtype=np.float64) for a in rbm.params)
    if states.shape[1] == W.shape[0]:               # enumerate the visible layer
        f = states @ b + _softplus(states @ W + c).sum(axis=1)
    else:                                           # the hidden layer
        f = states @ c + _softplus(states @ W.T + b).sum(axis=1)
    top = float(f.max())
    return top + math.log(float(np.exp(f - top).sum()))


def _log_likelihood_upper_bound(rbm: RBM, V: np.ndarray, *, log_z: float | None = None,
                               sweeps: int = GUARD_SWEEPS) -> float:
    """An upper bound on the mean log-likelihood of binary rows that needs no exact ``log Z``.

    ``log p(v) = −F(v) − log Z ≤ −F(v) − L`` for any ``L ≤ log Z``
    (:func:`_log_z_lower_bound`); with the exact ``log Z`` it is the exact log-likelihood.

    Parameters
    ----------
    rbm : RBM
        A binary model.
    V : numpy.ndarray, shape (n_rows, n_visible)
        0/1 rows.
    log_z : float, optional
        The exact ``log Z`` if known; default: :func:`_log_z_lower_bound` from ``V``.
    sweeps : int
        Passed to :func:`_log_z_lower_bound`.

    Returns
    -------
    float
        At least the mean log-likelihood of ``V`` (nats).
    """
    if log_z is None:
        f, log_z = _bound_terms(rbm, V, sweeps)
    else:
        W, b, c = rbm.params
        X = np.ascontiguousarray(V, dtype=W.dtype)
        f = _neg_free_energies(X, X @ W + c, b)
    return float(f.mean()) - log_z


class DivergenceGuard:
    """The divergence checks of :class:`rbmviz.runs.Run`, which inherits them.

    They read the run's ``rbm``, working model, ``max_weight``, ``max_ll_drop``, guard rows
    and best values so far, and stop the run by raising :class:`rbmviz.errors.RunDiverged`
    (stored as ``run.error``).
    """

    def _likelihood_guard_rows(self):
        """The rows whose log-likelihood the guard watches: the first :data:`GUARD_ROWS` 0/1
        rows of the fixed ``spl`` subset (None for an RBM that is not binary, and for a model
        of another kind: the guard bounds an RBM's likelihood); sets ``_guard_states``, the
        states it enumerates for the exact ``log Z`` (None: a bound)."""
        rbm = self.rbm
        self._guard_states = None
        if not isinstance(rbm, RBM):
            return None
        small = min(rbm.n_visible, rbm.n_hidden)
        if (rbm.is_binary and small <= EXACT_BITS_MAX
                and 2 ** small * rbm.n_visible * rbm.n_hidden <= GUARD_EXACT_OPS):
            self._guard_states = _evaluate.all_states(small)
        if not rbm.is_binary:
            return None
        X = self._ctx.spl_data
        X = np.ascontiguousarray(X[np.all((X == 0) | (X == 1), axis=1)][:GUARD_ROWS])
        return X if X.shape[0] else None

    @property
    def _guard_exact(self) -> bool:
        """Whether the likelihood guard enumerates the smaller layer (exact ``log Z``)."""
        return self._guard_states is not None

    def _diverged(self, quantity, value, why, *, in_epoch=True):
        self._sync()
        first = self._last_good
        lr = getattr(self.algorithm, "learning_rate", None)
        hint = f" (learning_rate={lr:g} may be too large)" if lr is not None else ""
        epoch = (self.epoch + 1 if self._pos else self.epoch) if in_epoch else self._epoch_value()
        when = (f"in epoch {epoch}" if in_epoch else
                f"at the evaluation after {self.algorithm.updates} updates (epoch {epoch})")
        msg = (f"run diverged: {why} {when} (last healthy evaluation at epoch {first}){hint}; "
               f"training stopped")
        self.error = RunDiverged(msg, epoch=epoch, last_good_epoch=first,
                                 quantity=quantity, value=value, records=self.records)
        raise self.error

    def _check_parameters(self):
        """Every parameter array of the working model, named by its ``param_names``
        (``param_names``): finite, at most ``max_weight`` and not
        pinned near it (:data:`PINNED_FRACTION`)."""
        work = self._work
        for name, arr in zip(work.param_names, work.params):
            if not np.all(np.isfinite(arr)):
                self._diverged(name, float("nan"), f"{name} contains NaN or inf")
            big = float(np.max(np.abs(arr))) if np.size(arr) else 0.0
            if big > self.max_weight:
                self._diverged(name, big, f"max |{name}| = {big:.3g} exceeds max_weight={self.max_weight:g}")
            if big >= PINNED_FRACTION * self.max_weight:
                self._diverged(name, big, f"max |{name}| = {big:.3g} is pinned near "
                                          f"max_weight={self.max_weight:g} (parameter growth)")

    def _check_collapse(self, m, val):
        """Likelihood collapse: ``val`` more than ``max_ll_drop`` below both its best so far
        and the uniform model's value (``−n_visible log 2`` for binary visibles)."""
        best = self._best.get(m, val)
        ref = min(best, -self.rbm.n_visible * math.log(2.0)) if self.rbm.is_binary else best
        if val < ref - self.max_ll_drop:
            self._diverged(m, val, f"{m} collapsed to {val:.4g} nats (best {best:.4g}; allowed drop "
                                   f"{self.max_ll_drop:.3g} below min(best, uniform model))",
                           in_epoch=False)
        self._best[m] = max(best, val)

    def _check_likelihood_bound(self):
        """The likelihood guard, whatever the metrics: the mean log-likelihood of the guard
        rows — exact when enumerating the smaller layer is cheap (at most
        :data:`GUARD_EXACT_OPS`), otherwise an upper bound of it
        (:func:`_log_likelihood_upper_bound`) — more than ``max_ll_drop`` below both its best
        value so far and the uniform model's value (as a collapsing likelihood metric).  While
        the best value is above the uniform model's, a bound that falls that far shows that the
        exact log-likelihood fell at least as far."""
        rows, work, exact = self._guard_rows, self._work, self._guard_exact
        with single_threaded_blas():     # small products: no waiting for BLAS threads
            log_z = _log_z_enumerated(work, self._guard_states) if exact else None
            val = _log_likelihood_upper_bound(work, rows, log_z=log_z)
        best = self._best.get(_GUARD_KEY, val)
        uniform = -self.rbm.n_visible * math.log(2.0)
        if val < min(best, uniform) - self.max_ll_drop:
            what = "to" if exact else "to at most"
            how = ("exact log Z" if exact else
                   "an upper bound from their free energies and the most probable states found")
            self._diverged("ll_guard", val,
                           f"the log-likelihood of {rows.shape[0]} training rows collapsed "
                           f"{what} {val:.4g} nats ({how}; best {best:.4g}; allowed drop "
                           f"{self.max_ll_drop:.3g} below min(best, uniform model "
                           f"{uniform:.4g}))", in_epoch=False)
        self._best[_GUARD_KEY] = max(best, val)
