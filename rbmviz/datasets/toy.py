"""Toy pattern sets: small enough for exact log-likelihoods (Fischer & Igel 2011; Upadhya &
Sastry 2017; Bengio & Delalleau 2009)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import _check_int, _rng



def _binary_codes(n_bits):
    """All ``2**n_bits`` binary codes; shape (2**n_bits, n_bits), bit ``i`` (LSB first) in column ``i``."""
    return (np.arange(2**n_bits)[:, None] >> np.arange(n_bits)) & 1


#: largest image side of the complete bars-and-stripes set (2·2**D − 2 rows)
MAX_BARS_AND_STRIPES_D = 16


def bars_and_stripes(D: int = 3) -> np.ndarray:
    """All distinct D x D bars-and-stripes patterns.

    A pattern has every column constant (vertical bars) or every row constant
    (horizontal stripes). The all-zero and all-one images are both, so there
    are ``2 * 2**D - 2`` distinct patterns (14 for ``D=3``).

    Parameters
    ----------
    D : int, default 3
        Side length of the square image, ``2 <= D <= 16`` (:data:`MAX_BARS_AND_STRIPES_D`:
        the set grows as 2**D; D = 16 is 131,070 rows of 256 pixels, 268 MB).

    Returns
    -------
    X : ndarray of float64, shape (2 * 2**D - 2, D * D)
        Patterns flattened row-major, values 0/1. Order (the same as PyDeep's
        ``generate_bars_and_stripes_complete``): first the vertical-bar images
        for ``k = 0, ..., 2**D - 2`` (column ``c`` on iff bit ``c`` of ``k``
        is set, least significant bit = leftmost column), then the
        horizontal-stripe images for ``k = 1, ..., 2**D - 1`` (row ``r`` on
        iff bit ``r`` of ``k``, LSB = top row). Row 0 is the all-zero image
        and the last row the all-one image.

    See Also
    --------
    bars_and_stripes_sample : samples of the generative process instead.

    Examples
    --------
    >>> X = bars_and_stripes(3)
    >>> X.shape
    (14, 9)
    >>> X[1].reshape(3, 3)
    array([[1., 0., 0.],
           [1., 0., 0.],
           [1., 0., 0.]])
    """
    D = _check_int(D, "D", 2, MAX_BARS_AND_STRIPES_D)
    codes = _binary_codes(D).astype(np.float64)          # (2**D, D)
    bars = np.repeat(codes[:-1, None, :], D, axis=1)     # column c = bit c
    stripes = np.repeat(codes[1:, :, None], D, axis=2)   # row r = bit r
    return np.concatenate([bars, stripes]).reshape(-1, D * D)


def bars_and_stripes_sample(D: int, n: int, seed: int | np.random.Generator | None) -> np.ndarray:
    """Samples of the bars-and-stripes generative process.

    Each of the ``D`` rows is set to all-0 or all-1 independently with
    probability 1/2 (horizontal stripes); then, with probability 1/2, the
    image is rotated by 90 degrees (vertical bars). The all-zero and all-one
    images thus have probability 1/8 each, the other ``2 * 2**D - 4``
    patterns ``1 / 2**(D+1)`` each: not the uniform distribution over
    ``bars_and_stripes(D)``.

    Parameters
    ----------
    D : int
        Side length of the square image, ``D >= 2``.
    n : int
        Number of samples, ``n >= 1``.
    seed : int, numpy.random.Generator or None
        Seed for ``np.random.default_rng``; ``None`` means 0.

    Returns
    -------
    X : ndarray of float64, shape (n, D * D)
        Samples flattened row-major, values 0/1, in the order drawn.
    """
    D = _check_int(D, "D", 2)
    n = _check_int(n, "n", 1)
    rng = _rng(seed)
    rows = rng.integers(0, 2, size=(n, D)).astype(np.float64)
    images = np.repeat(rows[:, :, None], D, axis=2)       # (n, D, D), rows constant
    rotate = rng.random(n) < 0.5
    images[rotate] = np.rot90(images[rotate], axes=(1, 2))
    return images.reshape(n, D * D)


def shifting_bar(N: int = 9, B: int = 1) -> np.ndarray:
    """All cyclic shifts of a bar of ``B`` consecutive ones among ``N`` pixels.

    Parameters
    ----------
    N : int, default 9
        Number of pixels, ``N >= 2``.
    B : int, default 1
        Bar length, ``1 <= B < N``.

    Returns
    -------
    X : ndarray of float64, shape (N, N)
        Row ``s`` has ones at pixels ``(s + k) mod N`` for ``k = 0, ..., B-1``
        (start positions ``s = 0, ..., N-1`` in order), zeros elsewhere. With
        ``B = 1`` this is the identity matrix.

    Examples
    --------
    >>> shifting_bar(4, 2)
    array([[1., 1., 0., 0.],
           [0., 1., 1., 0.],
           [0., 0., 1., 1.],
           [1., 0., 0., 1.]])
    """
    N = _check_int(N, "N", 2)
    B = _check_int(B, "B", 1, N - 1)
    offset = (np.arange(N)[None, :] - np.arange(N)[:, None]) % N   # pixel - start, mod N
    return (offset < B).astype(np.float64)


def diag(d: int = 6) -> np.ndarray:
    """Diag_d: the ``2d`` binary vectors with at most one change of value.

    These are ``1^j 0^(d-j)`` and ``0^j 1^(d-j)`` for ``j = 0, ..., d``
    (the all-zero and all-one vectors each once), to be used with the uniform
    distribution over them.

    .. warning::
       No available text defines Bengio & Delalleau's (2009) Diag data set.
       This definition was **fitted** to the single number Fischer & Igel
       report for it (bias bound minus bias after exact expected CD-1 on a
       6 x 6 RBM, about 0.00138); it is **not confirmed by a source** (the CD-bias
       theory page of the documentation).

    Parameters
    ----------
    d : int, default 6
        Vector length, ``d >= 1``.

    Returns
    -------
    X : ndarray of float64, shape (2 * d, d)
        Values 0/1. Rows ``0..d``: ``1^j 0^(d-j)`` for ``j = 0, ..., d``
        (all-zero first, all-one at row ``d``); rows ``d+1..2d-1``:
        ``0^j 1^(d-j)`` for ``j = 1, ..., d-1``.

    Examples
    --------
    >>> diag(3)
    array([[0., 0., 0.],
           [1., 0., 0.],
           [1., 1., 0.],
           [1., 1., 1.],
           [0., 1., 1.],
           [0., 0., 1.]])
    """
    d = _check_int(d, "d", 1)
    ones_first = (np.arange(d)[None, :] < np.arange(d + 1)[:, None]).astype(np.float64)
    return np.concatenate([ones_first, 1.0 - ones_first[1:d]])


def ball_1d(d: int = 6) -> np.ndarray:
    """1DBall_d: the ``d(d+1)/2`` non-empty contiguous blocks of ones on a line.

    No wrap-around: a block is ``0^a 1^w 0^(d-a-w)`` with width ``w >= 1``;
    to be used with the uniform distribution over them.

    .. warning::
       As for :func:`diag`, no available text defines Bengio & Delalleau's (2009)
       1DBall: this definition was **fitted** to Fischer & Igel's number for it (bias
       bound minus bias, about 0.02628), the match is loose, and it is **not confirmed
       by a source**.

    Parameters
    ----------
    d : int, default 6
        Vector length, ``d >= 1`` (as for :func:`diag`).

    Returns
    -------
    X : ndarray of float64, shape (d * (d + 1) // 2, d)
        Values 0/1, ordered by block width ``w = 1, ..., d``, then by start
        position ``a = 0, ..., d - w`` (the first ``d`` rows are one-hot, the
        last row is all-one).

    Examples
    --------
    >>> ball_1d(2)
    array([[1., 0.],
           [0., 1.],
           [1., 1.]])
    """
    d = _check_int(d, "d", 1)
    width, start = np.array([(w, a) for w in range(1, d + 1) for a in range(d - w + 1)]).T
    pixel = np.arange(d)[None, :]
    return ((pixel >= start[:, None]) & (pixel < (start + width)[:, None])).astype(np.float64)


def max_log_likelihood(X: ArrayLike) -> float:
    """Best achievable average log-likelihood on the rows of ``X``.

    The maximum over all distributions ``p`` of ``mean_i log p(X[i])`` is
    reached by the empirical distribution of the rows, so it equals minus
    the empirical entropy, ``sum_x q(x) log q(x)`` with ``q(x)`` the fraction
    of rows equal to ``x``. When the rows are distinct (the evaluation
    distribution is uniform over the patterns) this is ``-log(n_rows)``:
    ``-log 14 = -2.63906`` for ``bars_and_stripes(3)`` and
    ``-log 9 = -2.19722`` for ``shifting_bar(9, 1)``, returned exactly.
    (For the non-uniform generative B&S distribution the bound is
    ``-2.59930``; a large ``bars_and_stripes_sample`` approaches it.)

    Parameters
    ----------
    X : array_like, shape (n_rows, n_pixels)
        Data set, one pattern per row.

    Returns
    -------
    float
        Upper bound on the average test log-likelihood (ATLL), in nats.

    Raises
    ------
    ValueError
        If ``X`` is not a non-empty 2-D array.

    Examples
    --------
    >>> bool(max_log_likelihood(bars_and_stripes(3)) == -np.log(14))
    True
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array (n_rows, n_pixels), got shape {X.shape}")
    n = X.shape[0]
    counts = np.unique(X, axis=0, return_counts=True)[1]
    return float(np.sum(counts * np.log(counts)) / n - np.log(n))


__all__ = ["bars_and_stripes", "bars_and_stripes_sample", "shifting_bar", "diag", "ball_1d",
           "max_log_likelihood"]
