"""The exact CD-k bias, Δ and the bounds of Fischer & Igel (2011) (the CD-bias theory page of the documentation); see :mod:`rbmviz.bias` for what is computed and its limits."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .. import evaluate
from .._validation import check_data, check_int
from ..kernels import bias as _kb
from ..model import RBM

if TYPE_CHECKING:
    import pandas

__all__ = [
    "MAX_EXACT_UNITS", "BoundFactors", "delta", "delta_terms", "delta_brute_force",
    "empirical_distribution", "cd_bias_exact", "cd_bias_parameters", "cd_bias_bound",
    "bound_factors", "bengio_delalleau_bound", "bias_table",
]

#: largest layer for which the exact bias (and exact expected-update training) is computed
MAX_EXACT_UNITS = _kb.MAX_UNITS
#: largest n_visible + n_hidden for :func:`delta_brute_force`
MAX_BRUTE_FORCE_UNITS = 20


class BoundFactors(NamedTuple):
    """The Fischer–Igel bound and its two antagonistic factors (Theorems 3 and 4).

    ``bound = distance * mixing``; floats for the batch bound, arrays of shape (n_samples,)
    per pattern (``delta`` is a float either way).

    Parameters
    ----------
    bound : float or numpy.ndarray
        The bound on the bias.
    distance : float or numpy.ndarray
        Total-variation distance ``½‖μ − p‖₁`` between the chain's start and the model.
    mixing : float
        ``(1 − exp(−(n_visible + n_hidden) Δ))**k``.
    delta : float
        Δ (:func:`delta`).
    """

    bound: float | np.ndarray
    #: total-variation distance ``½‖μ − p‖₁`` between the chain's start and the model
    distance: float | np.ndarray
    #: ``(1 − exp(−(n_visible + n_hidden) Δ))**k``
    mixing: float
    #: Δ (:func:`delta`)
    delta: float


# ---------------------------------------------------------------------------- checks

def _check_rbm(rbm) -> RBM:
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    return rbm


def _check_exact_size(rbm, what="the exact CD bias"):
    if rbm.n_visible > MAX_EXACT_UNITS or rbm.n_hidden > MAX_EXACT_UNITS:
        raise ValueError(
            f"{what} enumerates both layers: it builds p(h|v) and p(v|h) for all "
            f"2**n_visible x 2**n_hidden state pairs and the 2**n_visible x 2**n_visible "
            f"transition matrix, so it needs n_visible <= {MAX_EXACT_UNITS} and n_hidden <= "
            f"{MAX_EXACT_UNITS} (tables of at most 2**{2 * MAX_EXACT_UNITS} entries); this model "
            f"has n_visible={rbm.n_visible}, n_hidden={rbm.n_hidden}. The bound "
            f"(cd_bias_bound) works for larger models")


def _check_k(k) -> int:
    return check_int(k, "k", low=1)


def _params64(rbm):
    return tuple(np.asarray(x, dtype=np.float64) for x in rbm.params)


def _state_index(V) -> np.ndarray:
    n = V.shape[1]
    return (V.astype(np.int64) << np.arange(n - 1, -1, -1)).sum(axis=1)


def empirical_distribution(data: ArrayLike, n_visible: int) -> np.ndarray:
    """The empirical distribution ``p_e`` of the rows of ``data`` over all visible states.

    Parameters
    ----------
    data : array_like, shape (n_samples, n_visible)
        0/1 rows (duplicate rows count twice).
    n_visible : int
        Visible units, at most 24.

    Returns
    -------
    numpy.ndarray, shape (2**n_visible,)
        ``p_e``, float64, in :func:`rbmviz.evaluate.all_states` order (unit 0 is the most
        significant bit of the state index).
    """
    n_visible = check_int(n_visible, "n_visible", low=1, high=24)
    V = check_data(data, "data", n_visible=n_visible)
    return np.bincount(_state_index(V), minlength=2 ** n_visible) / V.shape[0]


# ---------------------------------------------------------------------------- Δ

def delta_terms(rbm: RBM) -> tuple[np.ndarray, np.ndarray]:
    """ϑ (visible units) and ξ (hidden units) of Theorem 3 (Fischer & Igel 2011).

    ``ϑ_l = max(|b_l + Σ_s max(W_ls, 0)|, |b_l + Σ_s min(W_ls, 0)|)`` is the largest change
    of energy obtainable by flipping visible unit ``l`` alone (the hidden units "select"
    all positive or all negative weights); ``ξ_s`` is the same for hidden unit ``s``.

    Parameters
    ----------
    rbm : RBM
        The model.

    Returns
    -------
    vartheta : numpy.ndarray, shape (n_visible,)
        ϑ, float64.
    xi : numpy.ndarray, shape (n_hidden,)
        ξ, float64.
    """
    W, b, c = _params64(_check_rbm(rbm))
    pos, neg = np.clip(W, 0, None), np.clip(W, None, 0)
    vartheta = np.maximum(np.abs(b + pos.sum(axis=1)), np.abs(b + neg.sum(axis=1)))
    xi = np.maximum(np.abs(c + pos.sum(axis=0)), np.abs(c + neg.sum(axis=0)))
    return vartheta, xi


def delta(rbm: RBM) -> float:
    """Δ = max(max_l ϑ_l, max_s ξ_s), the largest change of the energy caused by flipping one unit.

    Fischer & Igel (2011), Theorem 3.  It enters the bound through the mixing factor
    ``(1 − exp(−(n_visible + n_hidden) Δ))**k``.

    Parameters
    ----------
    rbm : RBM
        The model (Δ reads its ``W``, ``b`` and ``c``).

    Returns
    -------
    float
        Δ, the larger of the largest ϑ and the largest ξ of :func:`delta_terms`.
    """
    vartheta, xi = delta_terms(rbm)
    return float(max(vartheta.max(), xi.max()))


def delta_brute_force(rbm: RBM) -> float:
    """Δ by brute force: ``max |E(x) − E(x')|`` over joint states differing in one unit.

    Over all joint states ``x = (v, h)`` and all ``x'`` differing from ``x`` in exactly one
    unit (Brémaud's definition).  A check of :func:`delta` for tests; enumerates
    ``2**(n_visible + n_hidden)`` states.

    Parameters
    ----------
    rbm : RBM
        A binary model with ``n_visible + n_hidden <= 20``.

    Returns
    -------
    float
        Δ.

    Raises
    ------
    ValueError
        If the model has more than 20 units.
    """
    _check_rbm(rbm)
    nv, nh = rbm.n_visible, rbm.n_hidden
    if nv + nh > MAX_BRUTE_FORCE_UNITS:
        raise ValueError(f"delta_brute_force enumerates all 2**(n_visible + n_hidden) joint "
                         f"states; n_visible + n_hidden = {nv + nh} > {MAX_BRUTE_FORCE_UNITS}")
    W, b, c = _params64(rbm)
    V, H = evaluate.all_states(nv), evaluate.all_states(nh)
    E = -(V @ W @ H.T) - (V @ b)[:, None] - (H @ c)[None, :]        # (2**nv, 2**nh)
    iv, ih = np.arange(2 ** nv), np.arange(2 ** nh)
    best = 0.0
    for bit in range(nv):
        best = max(best, float(np.abs(E[iv ^ (1 << bit)] - E).max()))
    for bit in range(nh):
        best = max(best, float(np.abs(E[:, ih ^ (1 << bit)] - E).max()))
    return best


# ---------------------------------------------------------------------------- exact bias

def _signed_bias(rbm, data, k, per_pattern):
    """Σ_v (q_k − p)(v) φ̄(v) for the batch start ``p_e`` (shape (1, P)) or for every row
    (shape (n_samples, P)), P = nv·nh + nv + nh, parameters in the order (W row-major, b, c)."""
    _check_rbm(rbm)
    k = _check_k(k)
    V = check_data(data, "data", n_visible=rbm.n_visible)
    _check_exact_size(rbm)
    nv, nh = rbm.n_visible, rbm.n_hidden
    with np.errstate(divide="ignore", invalid="ignore"):    # extreme parameters: see _finite
        T = evaluate.transition_matrix(rbm)              # (2**nv, 2**nv)
    p = evaluate.visible_distribution(rbm)               # (2**nv,)
    S = evaluate.all_states(nv)
    PH = rbm.hidden_probabilities(S)                     # (2**nv, nh)
    Phi = np.concatenate([(S[:, :, None] * PH[:, None, :]).reshape(len(S), nv * nh), S, PH],
                         axis=1)                         # φ̄(v), (2**nv, P)
    idx = _state_index(V)
    if per_pattern:
        Q = np.zeros((len(idx), len(S)))
        Q[np.arange(len(idx)), idx] = 1.0
    else:
        Q = (np.bincount(idx, minlength=len(S)) / len(idx))[None, :]
    for _ in range(k):
        Q = Q @ T
    return _finite((Q - p) @ Phi)


def _finite(x):
    if not np.all(np.isfinite(x)):
        raise ValueError(
            "the exact CD bias is not finite for these parameters: a pre-activation beyond "
            "about ±745 makes a sigmoid underflow in rbmviz.evaluate.transition_matrix")
    return x


def cd_bias_exact(rbm: RBM, data: ArrayLike, k: int, *,
                  per_pattern: bool = False) -> float | np.ndarray:
    """The bias of the expected CD-k update, maximised over all parameters, computed exactly.

    Batch (default; the left side of Fischer & Igel's Theorem 4)::

        max_a | ∂/∂θ_a (1/N) Σ_n ln p(v⁽ⁿ⁾) − E[CD_k(θ_a)] |
          = max_a | Σ_v (q_k(v) − p(v)) φ̄_a(v) |,   q_k = p_e Tᵏ,

    where ``p_e`` is the empirical distribution of the rows of ``data`` and ``T`` the
    block-Gibbs transition matrix (:func:`rbmviz.evaluate.transition_matrix`).  The maximum
    runs over every entry of ``W``, ``b`` and ``c``.  This is the bias of the *averaged*
    update, not the average of per-pattern biases.

    Parameters
    ----------
    rbm : RBM
        A binary model with n_visible <= 10 and n_hidden <= 10 (both layers are enumerated).
    data : array_like, shape (n_samples, n_visible) or (n_visible,)
        0/1 training rows, or one pattern.
    k : int
        Number of Gibbs steps of CD-k (>= 1).
    per_pattern : bool
        If True, the single-pattern bias of Theorem 3 (§5) for every row as ``v⁽⁰⁾``
        (chain started at that pattern).

    Returns
    -------
    float or numpy.ndarray
        The bias; shape (n_samples,), float64, if ``per_pattern``.

    Raises
    ------
    ValueError
        ``k < 1``, non-binary data, wrong number of columns, or a model too large to
        enumerate.

    Examples
    --------
    >>> import numpy as np, rbmviz
    >>> rbm = rbmviz.RBM(2, 2, init="zeros")
    >>> _ = rbm.set_params(W=np.array([[1.0, 0.5], [-2.0, 0.3]]), b=[0.1, -0.2], c=[0.3, 0.0])
    >>> round(cd_bias_exact(rbm, [[1, 0], [0, 1]], k=1), 10)
    0.0517347523
    """
    D = np.abs(_signed_bias(rbm, data, k, per_pattern))
    out = D.max(axis=1)
    return out if per_pattern else float(out[0])


def cd_bias_parameters(rbm: RBM, data: ArrayLike, k: int, *,
                       signed: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The batch bias of the expected CD-k update for every parameter separately.

    ``gradient − E[CD-k update] = Σ_v (q_k(v) − p(v)) φ̄(v)`` (the CD-bias theory page of the documentation), with
    the absolute value taken unless ``signed``.  Arguments as in :func:`cd_bias_exact`
    (batch form).

    Parameters
    ----------
    rbm : RBM
        A binary model with n_visible <= 10 and n_hidden <= 10.
    data : array_like, shape (n_samples, n_visible)
        0/1 training rows.
    k : int
        Gibbs steps of CD-k (>= 1).
    signed : bool
        Keep the sign of the bias.

    Returns
    -------
    bias_W : numpy.ndarray, shape (n_visible, n_hidden)
        Bias of the ``W`` update, float64.
    bias_b : numpy.ndarray, shape (n_visible,)
        Bias of the ``b`` update.
    bias_c : numpy.ndarray, shape (n_hidden,)
        Bias of the ``c`` update.
    """
    D = _signed_bias(rbm, data, k, False)[0]
    if not signed:
        D = np.abs(D)
    nv, nh = rbm.n_visible, rbm.n_hidden
    return D[:nv * nh].reshape(nv, nh), D[nv * nh:nv * nh + nv], D[nv * nh + nv:]


# ---------------------------------------------------------------------------- bounds

def _distances(rbm, data, per_pattern):
    """TV distances ``1 − p(v⁽⁰⁾)`` per row, or ``½‖p_e − p‖₁``; needs only p on the data
    rows and log Z (smaller layer enumerated)."""
    V = check_data(data, "data", n_visible=rbm.n_visible)
    rows, inverse = np.unique(V, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    p_rows = np.exp(evaluate.log_probabilities_exact(rbm, rows))   # p of the distinct rows
    if per_pattern:
        return 1.0 - p_rows[inverse]
    pe = np.bincount(inverse) / len(inverse)
    return 0.5 * (np.abs(pe - p_rows).sum() + max(0.0, 1.0 - p_rows.sum()))


def _mixing(rbm, k, d):
    return (-math.expm1(-(rbm.n_visible + rbm.n_hidden) * d)) ** k


def _one_minus_mixing(rbm, k, d):
    """``1 − (1 − e^{−(m+n)Δ})**k`` without cancellation (it is ≈ k e^{−(m+n)Δ}, far below
    float64's resolution near 1 once Δ is a few units)."""
    return -math.expm1(k * math.log1p(-math.exp(-(rbm.n_visible + rbm.n_hidden) * d)))


def bound_factors(rbm: RBM, data: ArrayLike, k: int, *,
                  per_pattern: bool = False) -> BoundFactors:
    """The Fischer–Igel bound and its two factors.

    Theorem 4 (batch; Fischer & Igel 2011)::

        bias ≤ ½‖p_e − p‖₁ · (1 − exp(−(n_visible + n_hidden) Δ))**k
               └ distance ┘   └──────────── mixing ────────────┘

    Theorem 3 (``per_pattern``, §5): the distance of the chain started at ``v⁽⁰⁾`` is
    ``1 − p(v⁽⁰⁾)`` (total variation between the point mass and ``p``).  Both distances
    are total-variation distances, with the ½.

    The distance shrinks as the model learns the data, while the mixing factor grows with
    the parameters (through Δ) towards 1 — the two antagonistic terms of the paper.

    Parameters
    ----------
    rbm : RBM
        Only ``p(v)`` on the data rows is needed (log Z by enumerating the smaller
        layer, at most 30 units), so this works for models too large for the exact bias.
    data : array_like, shape (n_samples, n_visible) or (n_visible,)
        0/1 training rows, or one pattern.
    k : int
        Gibbs steps of CD-k (>= 1).
    per_pattern : bool
        Theorem 3 for every row instead of Theorem 4.

    Returns
    -------
    BoundFactors
        ``(bound, distance, mixing, delta)``.
    """
    _check_rbm(rbm)
    k = _check_k(k)
    dist = _distances(rbm, data, per_pattern)
    d = delta(rbm)
    mix = _mixing(rbm, k, d)
    if not per_pattern:
        dist = float(dist)
    return BoundFactors(dist * mix, dist, mix, d)


def cd_bias_bound(rbm: RBM, data: ArrayLike, k: int, *,
                  per_pattern: bool = False) -> float | np.ndarray:
    """Fischer & Igel's bound on the bias: ``½‖p_e − p‖₁ (1 − e^{−(m+n)Δ})ᵏ`` (Theorem 4),
    or ``(1 − p(v⁽⁰⁾)) (1 − e^{−(m+n)Δ})ᵏ`` for every row (Theorem 3, ``per_pattern``);
    ``m + n = n_visible + n_hidden``.  See :func:`bound_factors` for the two factors.

    Parameters
    ----------
    rbm, data, k, per_pattern
        The model, the training rows (or one pattern), k of CD-k and the per-row switch, as
        :func:`bound_factors` takes them.

    Returns
    -------
    float or numpy.ndarray
        The bound; shape (n_samples,), float64, if ``per_pattern``.
    """
    return bound_factors(rbm, data, k, per_pattern=per_pattern).bound


def bengio_delalleau_bound(rbm: RBM, k: int) -> float:
    """A bound of the Bengio–Delalleau (2009) type on the bias of CD-k — **a stand-in, not
    their exact expression**.

    Fischer & Igel compare their bound with the earlier one of Bengio & Delalleau, which
    depends on the magnitude of the parameters through two quantities α and β, grows
    quickly with them and approaches ``2**n_visible``.  Its exact formula and the exact
    definitions of α and β are not available to this project (UNCONFIRMED; the CD-bias theory page of the
    documentation).  This function returns the bound of the same form derived there from a
    Doeblin (minorisation) argument::

        2**m (1 − 2**m σ(−α)**n σ(−β)**m)**k,
        α = max_s (|c_s| + Σ_l |W_ls|),   β = max_l (|b_l| + Σ_s |W_ls|),

    with ``m = n_visible``, ``n = n_hidden``.  Every visible transition probability is at
    least ``τ = σ(−α)**n σ(−β)**m``, so the chain contracts in total variation by
    ``1 − 2**m τ`` per step; summing the per-state error over the ``2**m`` states with
    ``|∂ ln p(v)/∂θ_a| ≤ 1`` gives the bound.  It is a valid bound (for one pattern and for
    the batch) but its constants need not coincide with Bengio & Delalleau's.

    Parameters
    ----------
    rbm : RBM
        Any size; only the parameters are used.
    k : int
        Gibbs steps of CD-k (>= 1).

    Returns
    -------
    float
        Between 0 and ``2**n_visible``.
    """
    _check_rbm(rbm)
    k = _check_k(k)
    W, b, c = _params64(rbm)
    m, n = rbm.n_visible, rbm.n_hidden
    alpha = float((np.abs(c) + np.abs(W).sum(axis=0)).max())
    beta = float((np.abs(b) + np.abs(W).sum(axis=1)).max())
    log_eps = m * math.log(2.0) - n * np.logaddexp(0.0, alpha) - m * np.logaddexp(0.0, beta)
    return float(2.0 ** m * (-math.expm1(log_eps)) ** k)


def bias_table(rbm: RBM, data: ArrayLike, ks: Sequence[int] = (1, 2, 5, 10)) -> "pandas.DataFrame":
    """Exact batch bias, both bounds and the bound's factors for several ``k`` at once
    (the transition matrix is built once).

    Parameters
    ----------
    rbm, data
        As in :func:`cd_bias_parameters`.
    ks : sequence of int
        The values of ``k``.

    Returns
    -------
    pandas.DataFrame
        One row per k and columns ``k``, ``bias``, ``bound``, ``distance``, ``mixing``,
        ``one_minus_mixing``, ``delta``, ``bd_bound``.

    Raises
    ------
    ValueError
        If ``ks`` is empty or holds a value below 1, or the data or model do not fit.
    """
    import pandas as pd
    _check_rbm(rbm)
    ks = [_check_k(k) for k in np.atleast_1d(ks).tolist()]
    if not ks:
        raise ValueError("ks is empty; expected at least one k >= 1")
    V = check_data(data, "data", n_visible=rbm.n_visible)
    _check_exact_size(rbm)
    # one transition matrix, powers applied incrementally
    with np.errstate(divide="ignore", invalid="ignore"):
        T = evaluate.transition_matrix(rbm)
    p = evaluate.visible_distribution(rbm)
    S = evaluate.all_states(rbm.n_visible)
    PH = rbm.hidden_probabilities(S)
    nv, nh = rbm.n_visible, rbm.n_hidden
    Phi = np.concatenate([(S[:, :, None] * PH[:, None, :]).reshape(len(S), nv * nh), S, PH], axis=1)
    pe = np.bincount(_state_index(V), minlength=len(S)) / len(V)
    dist = 0.5 * float(np.abs(pe - p).sum())
    d = delta(rbm)
    rows, q, done = [], pe, 0
    for k in sorted(set(ks)):
        for _ in range(k - done):
            q = q @ T
        done = k
        mix = _mixing(rbm, k, d)
        rows.append(dict(k=k, bias=float(np.abs(_finite((q - p) @ Phi)).max()), bound=dist * mix,
                         distance=dist, mixing=mix, one_minus_mixing=_one_minus_mixing(rbm, k, d),
                         delta=d,
                         bd_bound=bengio_delalleau_bound(rbm, k)))
    return pd.DataFrame(rows)
