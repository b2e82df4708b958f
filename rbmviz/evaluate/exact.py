"""Exact evaluation by enumeration: log Z and log-likelihoods, the model's distribution and
statistics, exact gradients and expected CD-k updates.

All values are in nats; "mean over rows" unless stated.  Exact routines enumerate the
smaller layer (the AIS theory page of the documentation) and refuse more than ``2**30`` states.
"""
from __future__ import annotations

import time

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_data, check_int, check_real
from ..bounds import EXACT_BITS_MAX, K_MAX, check_memory
from ..kernels import exact as _exact
from .._numerics import softplus as _softplus
from ..model import RBM

__all__ = [
    "log_partition_exact", "log_likelihood_exact", "log_probabilities_exact",
    "visible_distribution", "exact_gradient", "model_statistics", "expected_cd_update",
    "transition_matrix", "all_states", "exact_feasible", "MAX_EXACT_BITS",
]

#: the enumeration kernels' own ceiling: ``max_bits`` may be raised up to this explicitly;
#: the default limit is :data:`rbmviz.bounds.EXACT_BITS_MAX`
MAX_EXACT_BITS = _exact.MAX_ENUM_BITS


def _check_rbm(rbm):
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    rbm.require_binary("this evaluation (exact, AIS, pseudo-likelihood, reconstruction)")
    return rbm


def _check_rows(rbm, V):
    """``V`` checked as 0/1 rows of ``rbm`` (itself checked by :func:`_check_rbm`)."""
    return check_data(V, "V", n_visible=_check_rbm(rbm).n_visible)


def _check_max_bits(max_bits):
    """``max_bits`` (None: :data:`rbmviz.bounds.EXACT_BITS_MAX`), at most :data:`MAX_EXACT_BITS`."""
    if max_bits is None:
        return EXACT_BITS_MAX
    return check_int(max_bits, "max_bits", low=0, high=MAX_EXACT_BITS)


def _check_enumerable(rbm, max_bits=None):
    """Refuse, before any work, a model whose smaller layer has more than ``max_bits`` units."""
    limit = _check_max_bits(max_bits)
    smaller = min(rbm.n_visible, rbm.n_hidden)
    if smaller > limit:
        raise ValueError(
            f"exact enumeration of this {rbm.n_visible}×{rbm.n_hidden} model needs 2**{smaller} "
            f"states (its smaller layer has {smaller} units); the limit is max_bits={limit} "
            f"(rbmviz.bounds.EXACT_BITS_MAX = {EXACT_BITS_MAX}; 2**{EXACT_BITS_MAX} states take "
            f"seconds, every further bit doubles the time). Use "
            f"rbmviz.evaluate.ais_log_partition for large models, or pass max_bits (at most "
            f"{MAX_EXACT_BITS}) to enumerate anyway")
    return smaller


def _enum_args(rbm, max_bits=None):
    """``(M, a, o, enumerate_visible)`` for the smaller layer, float64."""
    _check_enumerable(rbm, max_bits)
    W, b, c = (np.ascontiguousarray(x, dtype=np.float64) for x in rbm.params)
    if rbm.n_visible <= rbm.n_hidden:
        return W, b, c, True
    return np.ascontiguousarray(W.T), c, b, False


def exact_feasible(rbm: RBM, max_bits: int = 20) -> bool:
    """Whether exact evaluation is cheap enough for live monitoring.

    Parameters
    ----------
    rbm : RBM
        The model.
    max_bits : int
        Largest size of the smaller layer that counts as cheap.

    Returns
    -------
    bool
        True if the smaller layer has at most ``max_bits`` units.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM` or ``max_bits`` not an integer.
    """
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    max_bits = check_int(max_bits, "max_bits", low=0)
    return min(rbm.n_visible, rbm.n_hidden) <= max_bits


#: wall time one enumeration kernel call aims at (Ctrl-C takes effect between calls)
CALL_SECONDS = 0.25
#: enumerations of at most this many states run in one kernel call (a few ms)
_ONE_CALL_STATES = 1 << 18


def _in_timed_ranges(n, run, first=1):
    """Call ``run(lo, hi)`` on consecutive ranges covering ``0 … n − 1``, each sized to take
    about :data:`CALL_SECONDS` (from the measured time of the previous one, growing at most
    4× per call), so that Python regains control — and Ctrl-C raises ``KeyboardInterrupt``
    — within about that long.  The ranges never change the result (the kernels combine
    their parts in a fixed order)."""
    lo, size = 0, max(1, first)
    while lo < n:
        hi = min(n, lo + size)
        t0 = time.perf_counter()
        run(lo, hi)
        per = (time.perf_counter() - t0) / (hi - lo)
        size = int(min(4 * size, max(1, CALL_SECONDS / max(per, 1e-12))))
        lo = hi


def _stats_in_timed_calls(M, a, o, log_z, nblocks, per, acc):
    """Every (block, chunk) unit of :func:`rbmviz.kernels.exact.expected_stats_part_`, each
    block's chunks in increasing order, in calls of about :data:`CALL_SECONDS`: all blocks
    for several chunks when a unit is cheap, a few blocks for one chunk when it is not
    (one chunk of every block of a 30×30 model takes seconds)."""
    unit = None                      # measured seconds per (block, chunk) unit
    j = 0
    while j < per:
        target = 2 if unit is None else max(1, int(CALL_SECONDS / max(unit, 1e-12)))
        sj = min(per - j, max(1, target // nblocks))
        j1 = j + sj
        b = 0
        while b < nblocks:
            sb = nblocks if target >= nblocks else min(nblocks, max(1, target))
            b1 = min(nblocks, b + sb)
            t0 = time.perf_counter()
            _exact.expected_stats_part_(M, a, o, log_z, j, j1, b, b1, *acc)
            new = (time.perf_counter() - t0) / ((j1 - j) * (b1 - b))
            unit = new if unit is None else max(new, unit / 4)     # grow at most 4x per call
            if sj == 1:
                target = max(1, int(CALL_SECONDS / max(unit, 1e-12)))
            b = b1
        j = j1


def _log_sum_states(M, a, o) -> float:
    """``log Z`` of the enumeration ``(M, a, o)``: one kernel call for small ones, else
    time-bounded ranges of chunks (same result to the bit)."""
    nA = M.shape[0]
    if (1 << nA) <= _ONE_CALL_STATES:
        return float(_exact.log_sum_states(M, a, o))
    nchunks, _ = _exact.n_chunks(nA)
    cmax, csum = np.empty(nchunks), np.empty(nchunks)
    _in_timed_ranges(nchunks, lambda lo, hi: _exact.log_sum_chunks_(M, a, o, lo, hi, cmax, csum),
                     first=8)
    return float(_exact.combine_chunks(cmax, csum))


def log_partition_exact(rbm: RBM, *, max_bits: int | None = None) -> float:
    """``log Z`` by enumerating the smaller layer (the AIS theory page of the documentation).

    ``log Z = logsumexp_v (−F(v)) = logsumexp_h (cᵀh + Σ_i softplus(b_i + (Wh)_i))``.
    Parallel, chunked, Gray-code incremental; bit-identical for any thread count.  Large
    enumerations run as kernel calls of about :data:`CALL_SECONDS` each, so Ctrl-C
    (``KeyboardInterrupt``) stops them within about that long (2**30 states take minutes).

    Parameters
    ----------
    rbm : RBM
        A binary model whose smaller layer has at most ``max_bits`` units.
    max_bits : int, optional
        Largest smaller layer enumerated; default :data:`rbmviz.bounds.EXACT_BITS_MAX`
        (24), at most :data:`MAX_EXACT_BITS` (each bit doubles the time: 2**30 states take
        minutes to hours).

    Returns
    -------
    float
        The log partition function, in nats.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`.
    ValueError
        If the model is not binary or its smaller layer has more than ``max_bits`` units
        (before any enumeration starts).
    """
    M, a, o, _ = _enum_args(_check_rbm(rbm), max_bits)
    return _log_sum_states(M, a, o)


def log_probabilities_exact(rbm: RBM, V: ArrayLike, log_z: float | None = None, *,
                            max_bits: int | None = None) -> np.ndarray:
    """Exact ``log p(v) = −F(v) − log Z`` of every row of ``V``.

    Parameters
    ----------
    rbm : RBM
        A binary model small enough to enumerate.
    V : array_like, shape (n_samples, n_visible)
        Visible states, 0/1.
    log_z : float, optional
        ``log Z`` if already known (computed by :func:`log_partition_exact` otherwise); a
        finite real number.
    max_bits : int, optional
        As in :func:`log_partition_exact`.

    Returns
    -------
    numpy.ndarray, shape (n_samples,)
        Log-probabilities in nats.

    Raises
    ------
    TypeError, ValueError
        As :func:`log_partition_exact` does; a ``ValueError`` also for ``V`` that is not 0/1
        rows of width ``n_visible``.
    """
    V = _check_rows(rbm, V)
    if log_z is None:
        log_z = log_partition_exact(rbm, max_bits=max_bits)
    else:
        log_z = check_real(log_z, "log_z")
    return -rbm.free_energy(V) - log_z


def log_likelihood_exact(rbm: RBM, V: ArrayLike, log_z: float | None = None, *,
                         max_bits: int | None = None) -> float:
    """Average log-likelihood ``(1/N) Σ_n log p(v⁽ⁿ⁾)`` in nats.

    The ATLL of Upadhya & Sastry (2017), eq. (9), with the ``1/N`` their text describes (the
    errata noted on the documentation's theory pages): the mean of
    :func:`log_probabilities_exact`.

    Parameters
    ----------
    rbm, V, log_z, max_bits
        As in :func:`log_probabilities_exact`.

    Returns
    -------
    float
        The mean log-likelihood of the rows.

    Raises
    ------
    TypeError, ValueError
        As :func:`log_probabilities_exact` does.
    """
    return float(np.mean(log_probabilities_exact(rbm, V, log_z, max_bits=max_bits)))


def all_states(n: int) -> np.ndarray:
    """All ``2**n`` binary vectors as rows, in lexicographic order.

    Row ``s`` is the binary expansion of ``s`` with unit 0 as the most significant bit.

    Parameters
    ----------
    n : int
        Number of units.

    Returns
    -------
    numpy.ndarray, shape (2**n, n)
        The states, float64.
    """
    n = check_int(n, "n", low=0, high=EXACT_BITS_MAX)
    check_memory(8.0 * (2 ** n) * (n + 1), f"all_states(n={n}) (2**{n} rows of {n} float64)")
    idx = np.arange(2 ** n, dtype=np.int64)
    return ((idx[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(np.float64)


def visible_distribution(rbm: RBM) -> np.ndarray:
    """The model's marginal ``p(v)`` over all ``2**n_visible`` visible states.

    Parameters
    ----------
    rbm : RBM
        A binary model with ``n_visible ≤ 24``.

    Returns
    -------
    numpy.ndarray, shape (2**n_visible,)
        Probabilities in :func:`all_states` order.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`.
    ValueError
        If the model is not binary or ``n_visible`` exceeds
        :data:`rbmviz.bounds.EXACT_BITS_MAX`.
    """
    _check_rbm(rbm)
    if rbm.n_visible > EXACT_BITS_MAX:
        raise ValueError(f"visible_distribution enumerates the visible layer: n_visible="
                         f"{rbm.n_visible} is too large (at most rbmviz.bounds.EXACT_BITS_MAX = "
                         f"{EXACT_BITS_MAX})")
    V = all_states(rbm.n_visible)
    return np.exp(log_probabilities_exact(rbm, V))


def model_statistics(rbm: RBM, log_z: float | None = None, *, max_bits: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact model expectations ``(E_p[v hᵀ], E_p[v], E_p[h])``, by enumerating the smaller layer.

    Enumerated in kernel calls of about :data:`CALL_SECONDS`, so Ctrl-C works on large ones.

    Parameters
    ----------
    rbm : RBM
        A binary model small enough to enumerate.
    log_z : float, optional
        ``log Z`` if already known; a finite real number.
    max_bits : int, optional
        As in :func:`log_partition_exact`.

    Returns
    -------
    vh : numpy.ndarray, shape (n_visible, n_hidden)
        ``E_p[v hᵀ]``.
    v : numpy.ndarray, shape (n_visible,)
        ``E_p[v]``.
    h : numpy.ndarray, shape (n_hidden,)
        ``E_p[h]``.

    Raises
    ------
    TypeError, ValueError
        As :func:`log_partition_exact` does.
    """
    M, a, o, vis = _enum_args(_check_rbm(rbm), max_bits)
    if log_z is None:
        log_z = _log_sum_states(M, a, o)
    else:
        log_z = check_real(log_z, "log_z")
    nA, nO = M.shape
    if (1 << nA) <= _ONE_CALL_STATES:
        E_sq, E_s, E_q = _exact.expected_stats(M, a, o, float(log_z))
    else:       # time-bounded calls (Ctrl-C), the same sums in the same order
        nblocks, per = _exact.n_blocks(nA)
        acc = (np.zeros((nblocks, nA, nO)), np.zeros((nblocks, nA)), np.zeros((nblocks, nO)))
        _stats_in_timed_calls(M, a, o, float(log_z), nblocks, per, acc)
        E_sq, E_s, E_q = _exact.sum_blocks(*acc)
    if vis:
        return E_sq, E_s, E_q
    return np.ascontiguousarray(E_sq.T), E_q, E_s


def _data_statistics(rbm, V):
    PH = rbm.hidden_probabilities(V)
    n = V.shape[0]
    return V.T @ PH / n, V.mean(axis=0), PH.mean(axis=0)


def exact_gradient(rbm: RBM, V: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact gradient of the average log-likelihood of the rows of ``V``.

    ``∂/∂θ (1/N) Σ_n log p(v⁽ⁿ⁾) = E_data[φ] − E_model[φ]`` with ``φ = (v hᵀ, v, h)`` and
    hidden conditional means in the data term (Fischer & Igel 2011, eq. 1.1; the conventions
    of the documentation's theory pages).

    Parameters
    ----------
    rbm, V
        As in :func:`log_probabilities_exact` (``V``: the training rows).

    Returns
    -------
    dW : numpy.ndarray, shape (n_visible, n_hidden)
        Gradient with respect to ``W``.
    db : numpy.ndarray, shape (n_visible,)
        Gradient with respect to ``b``.
    dc : numpy.ndarray, shape (n_hidden,)
        Gradient with respect to ``c``.

    Raises
    ------
    TypeError, ValueError
        As :func:`log_probabilities_exact` does.
    """
    V = _check_rows(rbm, V)
    dW, db, dc = _data_statistics(rbm, V)
    mW, mb, mc = model_statistics(rbm)
    return dW - mW, db - mb, dc - mc


def transition_matrix(rbm: RBM) -> np.ndarray:
    """Visible-to-visible block-Gibbs transition matrix ``T[v, v'] = Σ_h p(h | v) p(v' | h)``.

    Step 3 of the CD-bias theory page of the documentation.

    Parameters
    ----------
    rbm : RBM
        A binary model with ``n_visible, n_hidden ≤ 14``.

    Returns
    -------
    numpy.ndarray, shape (2**n_visible, 2**n_visible)
        Row-stochastic matrix, rows and columns in :func:`all_states` order.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`.
    ValueError
        If the model is not binary or a layer has more than 14 units.
    """
    _check_rbm(rbm)
    if rbm.n_visible > 14 or rbm.n_hidden > 14:
        raise ValueError(f"transition_matrix enumerates both layers; n_visible={rbm.n_visible}, "
                         f"n_hidden={rbm.n_hidden} is too large (≤ 14 each)")
    V, H = all_states(rbm.n_visible), all_states(rbm.n_hidden)
    W, b, c = (x.astype(np.float64) for x in rbm.params)
    A = V @ W + c                                   # (2^nv, nh)
    # log σ(a) = −softplus(−a): finite for any a (np.log(σ(a)) underflows to −inf, and
    # 0·(−inf) would give NaN in the products below)
    log_ph = -(H @ _softplus(-A).T + (1 - H) @ _softplus(A).T)   # (2^nh, 2^nv)
    B = H @ W.T + b                                 # (2^nh, nv)
    log_pv = -(V @ _softplus(-B).T + (1 - V) @ _softplus(B).T)   # (2^nv, 2^nh)
    return np.exp(log_ph.T) @ np.exp(log_pv.T)


def _state_index(V):
    n = V.shape[1]
    return (V.astype(np.int64) << np.arange(n - 1, -1, -1)).sum(axis=1)


def expected_cd_update(rbm: RBM, V: ArrayLike,
                       k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact expectation (over the Gibbs chain) of the batch CD-k update.

    The update of :mod:`rbmviz.algorithms.cd` with no sampling noise (step 5 of the CD-bias
    theory page of the documentation):
    ``CD = Σ_v p_e(v) φ̄(v) − Σ_v q_k(v) φ̄(v)``, ``q_k = p_eᵀ Tᵏ``,
    ``φ̄(v) = (v σ(c+vW)ᵀ, v, σ(c+vW))``, where ``p_e`` is the empirical distribution of the
    rows of ``V``.  The sampled update it matches uses hidden probabilities in both phases and
    a sampled visible state ``v⁽ᵏ⁾``.

    Parameters
    ----------
    rbm : RBM
        A binary model with ``n_visible, n_hidden ≤ 14``.
    V : array_like, shape (n_samples, n_visible)
        Training rows, 0/1.
    k : int
        Gibbs steps of CD-k, 1 to :data:`rbmviz.bounds.K_MAX`.

    Returns
    -------
    dW : numpy.ndarray, shape (n_visible, n_hidden)
        Expected update of ``W``.
    db : numpy.ndarray, shape (n_visible,)
        Expected update of ``b``.
    dc : numpy.ndarray, shape (n_hidden,)
        Expected update of ``c``.

    Raises
    ------
    TypeError, ValueError
        As :func:`transition_matrix` does (a layer of more than 14 units); a ``ValueError``
        also for ``V`` that is not 0/1 rows of width ``n_visible`` or ``k`` out of range.
    """
    V = _check_rows(rbm, V)
    k = check_int(k, "k", low=1, high=K_MAX)
    T = transition_matrix(rbm)
    p_e = np.bincount(_state_index(V), minlength=T.shape[0]) / V.shape[0]
    q = p_e.copy()
    for _ in range(k):
        q = q @ T
    S = all_states(rbm.n_visible)
    PH = rbm.hidden_probabilities(S)
    w = p_e - q
    return S.T @ (w[:, None] * PH), S.T @ w, PH.T @ w
