"""Denoising a binary symmetric channel with a TAP machine and two baselines
(Tramel et al. 2018, Sec. VII.4.1, Figs. 8–9; the TAP theory page of the documentation).

Channel: every bit of a clean binary image ``x`` is flipped independently with probability
``p`` ∈ [0, 0.5] (:func:`corrupt`).  As a function of ``x`` its likelihood is a field on the
visible units (eq. 44, **sign corrected** — see the errata noted on the TAP theory page):

    P(y | x) ∝ exp(Σ_i D_i x_i),    D_i = (2 y_i − 1) ln((1 − p) / p)        (:func:`channel_field`)

so that ``y_i = 1`` and small ``p`` favour ``x_i = 1``.

Estimators (all return per-pixel posterior means in [0, 1]; :func:`denoise` rounds them):

* ``"ope"`` — optimal pointwise estimator: the factorised prior of the training marginals
  ``m`` combined with the channel, ``σ(logit m_i + D_i)`` (eq. 46, corrected: errata #4);
  returns ``y`` at ``p = 0`` and ``m`` at ``p = 0.5``;
* ``"nn"`` — the training image nearest to ``y`` in Hamming distance (1-NN);
* ``"tap"`` — TAP inference (Alg. 1) on the RBM with the channel field added to the visible
  field at every iteration (eq. 47: the visible biases shifted by ``D``), initialised at the
  OPE means; at ``p = 0`` the field is infinite and the observation is returned.

Score: the Matthews correlation coefficient of the binary estimate against the clean image
(:func:`mcc`, per image, 0 when undefined), averaged over images (:func:`denoising_curve`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice, check_data, check_float, check_int, check_seed
from .options import TAPSolverOptions as _O

if TYPE_CHECKING:
    import pandas
    from ..model import RBM

__all__ = ["corrupt", "channel_field", "data_marginals", "ope", "nearest_neighbour", "mcc",
           "denoise", "denoising_curve", "METHODS"]

#: the estimators :func:`denoise` knows
METHODS = ("tap", "ope", "nn")


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"p (flip probability) must be a real number in [0, 0.5], got {p!r}")
    p = float(p)
    if not (0.0 <= p <= 0.5):
        raise ValueError(f"p (flip probability of the binary symmetric channel) must be in "
                         f"[0, 0.5], got {p}")
    return p


def _binary(X, name, n_visible=None):
    return check_data(X, name, n_visible=n_visible, binary=True)


def corrupt(X: ArrayLike, p: float, seed: int | np.random.Generator = 0) -> np.ndarray:
    """Pass binary rows through a binary symmetric channel: flip each bit with probability ``p``.

    The flips are ``U < p`` for one array of uniforms ``U`` drawn from ``seed``, so the same
    seed gives nested noise for increasing ``p`` (every bit flipped at ``p`` is also flipped at
    any larger ``p``): the curves of :func:`denoising_curve` use common random numbers
    (Tramel et al. 2018, eq. 43, corrected).

    Parameters
    ----------
    X : array_like, shape (n, N)
        Clean 0/1 rows.
    p : float
        Flip probability in [0, 0.5].
    seed : int or numpy.random.Generator
        Seed of the uniforms.

    Returns
    -------
    numpy.ndarray, shape (n, N)
        The noisy rows, 0/1 float64.
    """
    X = _binary(X, "X")
    p = _check_p(p)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(check_seed(seed))
    flips = rng.random(X.shape) < p
    return np.where(flips, 1.0 - X, X)


def channel_field(Y: ArrayLike, p: float) -> np.ndarray:
    """The channel's log-likelihood ratio per pixel, ``D_i = (2 y_i − 1) ln((1 − p)/p)``.

    Tramel et al. (2018), eq. 44 with the sign corrected.  ``+inf``/``−inf`` at ``p = 0`` (the
    observation is certain), 0 at ``p = 0.5``.

    Parameters
    ----------
    Y : array_like, shape (n, N)
        Noisy 0/1 observations (the output of :func:`corrupt`).
    p
        The flip probability, as in :func:`corrupt`.

    Returns
    -------
    numpy.ndarray
        ``D``, shape of ``Y``.
    """
    shape = np.shape(Y)
    Y = _binary(np.atleast_2d(Y), "Y").reshape(shape)
    p = _check_p(p)
    with np.errstate(divide="ignore"):
        llr = np.log1p(-p) - np.log(p) if p > 0 else np.inf
    return (2.0 * Y - 1.0) * llr


def data_marginals(X: ArrayLike, eps: float = 1e-3) -> np.ndarray:
    """Per-pixel means of binary training rows, clipped to ``[eps, 1 − eps]``.

    Pixels that are constant in the training set would otherwise give an infinite prior field.

    Parameters
    ----------
    X : array_like, shape (n, N)
        0/1 training rows.
    eps : float
        Clipping.

    Returns
    -------
    numpy.ndarray, shape (N,)
        The clipped means.
    """
    X = _binary(X, "X")
    eps = check_float(eps, "eps", low=0.0, high=0.5)
    return np.clip(X.mean(axis=0), eps, 1.0 - eps)


def ope(Y: ArrayLike, p: float, marginals: ArrayLike) -> np.ndarray:
    """Optimal pointwise estimator, ``P(x_i = 1 | y_i) = σ(logit m_i + (2y_i − 1) ln((1−p)/p))``.

    Tramel et al. (2018), eq. 46, corrected by Bayes' rule.

    Parameters
    ----------
    Y, p
        The observations and the flip probability, as in :func:`channel_field`.
    marginals : array_like, shape (N,)
        Prior pixel means ``m`` in (0, 1) (see :func:`data_marginals`); values in {0, 1} are
        allowed only at ``p = 0``.

    Returns
    -------
    numpy.ndarray, shape (n, N)
        Posterior means: exactly ``Y`` at ``p = 0``, ``m`` at ``p = 0.5``.

    Raises
    ------
    ValueError
        If ``marginals`` has the wrong shape or lies outside [0, 1] (or (0, 1) for ``p > 0``).
    """
    Y = _binary(Y, "Y")
    p = _check_p(p)
    m = np.asarray(marginals, dtype=np.float64)
    if m.ndim != 1 or m.shape[0] != Y.shape[1]:
        raise ValueError(f"marginals must have shape ({Y.shape[1]},), got {m.shape}")
    if not np.all((m >= 0) & (m <= 1)):
        raise ValueError("marginals must lie in [0, 1]")
    if p == 0.0:
        return Y.copy()
    if np.any((m <= 0) | (m >= 1)):
        raise ValueError("marginals must lie strictly inside (0, 1) for p > 0 "
                         "(clip them, e.g. data_marginals(X, eps=1e-3))")
    if p == 0.5:
        return np.broadcast_to(m, Y.shape).copy()
    z = np.log(m) - np.log1p(-m) + channel_field(Y, p)
    return 0.5 * (1.0 + np.tanh(0.5 * z))          # σ(z), overflow-free


def nearest_neighbour(Y: ArrayLike, train: ArrayLike, *, chunk: int = 512,
                      return_index: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """1-NN estimate: for every row of ``Y`` the training row at the smallest Hamming distance.

    The first one on ties.  Distances are computed as ``d = y·(1 − t) + (1 − y)·t`` by
    matrix products, ``chunk`` rows of ``Y`` at a time (memory ``chunk × n_train``).

    Parameters
    ----------
    Y : array_like, shape (n, N)
        Noisy 0/1 observations.
    train : array_like, shape (n_train, N)
        0/1 training rows.
    chunk : int
        Rows of ``Y`` per matrix product.
    return_index : bool
        Also return the indices of the nearest rows.

    Returns
    -------
    estimate : numpy.ndarray, shape (n, N)
        The nearest training rows.
    index : numpy.ndarray, shape (n,)
        Their indices; only with ``return_index=True``.
    """
    Y = _binary(Y, "Y")
    T = _binary(train, "train", n_visible=Y.shape[1])
    chunk = check_int(chunk, "chunk", low=1)
    T32 = T.astype(np.float32)
    ones_t = T32.sum(axis=1)
    idx = np.empty(Y.shape[0], dtype=np.int64)
    for lo in range(0, Y.shape[0], chunk):
        y = Y[lo:lo + chunk].astype(np.float32)
        # Hamming = |y| + |t| − 2 y·t (exact in float32 for N < 2^24)
        d = y.sum(axis=1)[:, None] + ones_t[None, :] - 2.0 * (y @ T32.T)
        idx[lo:lo + chunk] = np.argmin(d, axis=1)
    est = T[idx].copy()
    return (est, idx) if return_index else est


def mcc(estimate: ArrayLike, truth: ArrayLike) -> np.ndarray | float:
    """Matthews correlation coefficient of binary estimates against the clean images, per row.

    Positive class = pixel value 1:
    ``MCC = (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))``, defined as 0 when the
    denominator is 0 (as ``sklearn.metrics.matthews_corrcoef``).

    Parameters
    ----------
    estimate : array_like, shape (n, N) or (N,)
        0/1 estimates.
    truth : array_like
        Clean 0/1 images, shape of ``estimate``.

    Returns
    -------
    numpy.ndarray or float
        Shape (n,) for 2-D inputs; a float for 1-D inputs.

    Raises
    ------
    ValueError
        If the shapes differ.
    """
    one_d = np.ndim(estimate) == 1 and np.ndim(truth) == 1
    E = _binary(np.atleast_2d(estimate), "estimate")
    T = _binary(np.atleast_2d(truth), "truth", n_visible=E.shape[1])
    if E.shape != T.shape:
        raise ValueError(f"estimate and truth must have the same shape, got {E.shape} and {T.shape}")
    tp = (E * T).sum(axis=1)
    tn = ((1 - E) * (1 - T)).sum(axis=1)
    fp = (E * (1 - T)).sum(axis=1)
    fn = ((1 - E) * T).sum(axis=1)
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    num = tp * tn - fp * fn
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.sqrt(np.where(den > 0, den, 1.0)), 0.0)
    return float(out[0]) if one_d else out


def _check_binary_model(rbm):
    prior = getattr(rbm, "visible_prior", None)
    kind = type(prior).__name__ if prior is not None else getattr(rbm, "visible", "bernoulli")
    if str(kind).lower() != "bernoulli":
        raise ValueError(f"TAP denoising of a binary channel needs Bernoulli visible units, "
                         f"got {kind!r}")


def tap_means(rbm, Y, p, marginals, *, order=_O.order, damping=_O.damping, tol=_O.tol,
              max_iter=_O.max_iter, details=False):
    """Posterior means of the TAP denoiser: Alg. 1 (``rbmviz.tap.solve``) with the channel
    field ``D`` (eq. 44, corrected) added to the visible field ``B^v`` at every iteration,
    started from the OPE means (``a^v(0)`` = OPE, ``c^v(0)`` = 0, eqs. 37–38).  ``Y`` itself at
    ``p = 0``.  ``details=True`` also returns the ``TAPSolution`` (None at p = 0)."""
    from . import solve

    _check_binary_model(rbm)
    Y = _binary(Y, "Y", n_visible=rbm.n_visible)
    p = _check_p(p)
    if p == 0.0:
        return (Y.copy(), None) if details else Y.copy()
    init = ope(Y, p, marginals)
    sol = solve(rbm, init, order=order, damping=damping, tol=tol, max_iter=max_iter,
                visible_field=channel_field(Y, p), data_anchored=False)
    av = np.asarray(sol.av, dtype=np.float64)
    return (av, sol) if details else av


def denoise(rbm: RBM | None, Y: ArrayLike, p: float, *, method: str = "tap",
            marginals: ArrayLike | None = None, train: ArrayLike | None = None,
            order: int = _O.order, damping: float = _O.damping, tol: float = _O.tol,
            max_iter: int = _O.max_iter,
            threshold: float = 0.5,
            return_means: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Denoise binary observations ``Y`` of a binary symmetric channel with flip probability ``p``.

    Parameters
    ----------
    rbm : RBM or None
        A model with Bernoulli visible units (used by ``method="tap"`` only; may be None
        otherwise).
    Y : array (n, N) of 0/1
        The noisy images.
    p : float in [0, 0.5]
        The channel's flip probability (known to the decoder).
    method : {"tap", "ope", "nn"}
        TAP inference on the RBM with the channel field (eq. 47), the optimal pointwise
        estimator (eq. 46) or the nearest training image (Hamming).
    marginals : array (N,), optional
        Prior pixel means for the OPE and the TAP initialisation; default
        ``data_marginals(train)``.
    train : array (n_train, N) of 0/1
        Training images (needed by "nn", and by "ope"/"tap" when ``marginals`` is not given).
    order, damping, tol, max_iter
        Passed to ``rbmviz.tap.solve`` (defaults and bounds:
        :class:`rbmviz.tap.options.TAPSolverOptions`).
    threshold : float
        Binary estimate = mean > threshold (0.5).
    return_means : bool
        Also return the posterior means.

    Returns
    -------
    estimate : numpy.ndarray, shape (n, N)
        0/1 estimates.  At ``p = 0`` every method except "nn" returns ``Y``.
    means : numpy.ndarray, shape (n, N)
        The posterior means; only with ``return_means=True``.

    Raises
    ------
    ValueError
        If a method lacks what it needs (``train``, ``marginals``, an RBM with Bernoulli
        visible units), or ``p`` is outside [0, 0.5].
    """
    check_choice(method, "method", METHODS)
    p = _check_p(p)
    Y = _binary(Y, "Y")
    threshold = check_float(threshold, "threshold", low=0.0, high=1.0)
    if method == "nn":
        if train is None:
            raise ValueError("method 'nn' needs the training images (train=...)")
        means = nearest_neighbour(Y, train)
    else:
        if marginals is None:
            if train is None:
                raise ValueError(f"method {method!r} needs marginals=... or train=...")
            marginals = data_marginals(train)
        if method == "ope":
            means = ope(Y, p, marginals)
        else:
            if rbm is None:
                raise ValueError("method 'tap' needs an RBM")
            means = tap_means(rbm, Y, p, marginals, order=order, damping=damping, tol=tol,
                              max_iter=max_iter)
    est = (means > threshold).astype(np.float64)
    if p == 0.0 and method != "nn":
        est = Y.copy()
    return (est, means) if return_means else est


def denoising_curve(rbm: RBM | None, X: ArrayLike, ps: Sequence[float], *, train: ArrayLike,
                    methods: Sequence[str] = METHODS, seed: int = 0, order: int = _O.order,
                    damping: float = _O.damping, tol: float = _O.tol, max_iter: int = _O.max_iter,
                    marginals: ArrayLike | None = None) -> "pandas.DataFrame":
    """Average denoising performance (MCC) against the flip probability (Fig. 8).

    Every method sees the same noise realisation at each ``p`` (one :func:`corrupt` draw per
    ``p`` from ``seed``; nested across ``p``).

    Parameters
    ----------
    rbm : RBM or None
        A binary model, for "tap"; may be None if "tap" is not among ``methods``.
    X : array (n, N) of 0/1
        Clean held-out images (the paper: 1,000 test images).
    ps : sequence of float
        Flip probabilities in [0, 0.5].
    train : array of 0/1
        Training images (marginals for the OPE, the 1-NN database).
    methods : sequence of str
        A subset of ("tap", "ope", "nn").
    seed : int
        Seed of the noise (:func:`corrupt`).
    order, damping, tol, max_iter
        Passed to ``rbmviz.tap.solve`` (defaults and bounds:
        :class:`rbmviz.tap.options.TAPSolverOptions`).
    marginals : array (N,), optional
        Prior pixel means; default ``data_marginals(train)``.

    Returns
    -------
    pandas.DataFrame
        Columns ``p``, ``method``, ``mcc`` (mean over images), ``mcc_sem`` (standard error),
        ``bit_error`` (fraction of wrong pixels), ``n_images``, and ``not_converged`` (TAP
        rows that hit ``max_iter``; 0 for the baselines).

    Raises
    ------
    ValueError
        If ``ps`` or ``methods`` is empty, or a method lacks what it needs.
    """
    import pandas as pd

    X = _binary(X, "X")
    T = _binary(train, "train", n_visible=X.shape[1])
    ps = [_check_p(p) for p in np.atleast_1d(ps)]
    if not ps:
        raise ValueError("ps must contain at least one flip probability")
    methods = tuple(methods)
    if not methods:
        raise ValueError("methods must name at least one of " + ", ".join(METHODS))
    for m in methods:
        check_choice(m, "method", METHODS)
    m_prior = data_marginals(T) if marginals is None else marginals
    U = np.random.default_rng(check_seed(seed)).random(X.shape)
    rows = []
    for p in ps:
        Y = np.where(U < p, 1.0 - X, X)
        for method in methods:
            bad = 0
            if method == "tap":
                means, sol = tap_means(rbm, Y, p, m_prior, order=order, damping=damping, tol=tol,
                                       max_iter=max_iter, details=True)
                est = Y.copy() if p == 0.0 else (means > 0.5).astype(np.float64)
                bad = 0 if sol is None else int((~np.asarray(sol.converged)).sum())
            else:
                est = denoise(None, Y, p, method=method, marginals=m_prior, train=T)
            score = mcc(est, X)
            n = len(score)
            rows.append({"p": p, "method": method, "mcc": float(score.mean()),
                         "mcc_sem": float(score.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0,
                         "bit_error": float(np.mean(est != X)), "n_images": n,
                         "not_converged": bad})
    return pd.DataFrame(rows)
