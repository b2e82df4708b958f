"""Data sets: toy pattern generators and loaders of real benchmark files.

Every function returns the data as a 2-D ``np.float64`` array of shape
``(n_patterns, n_pixels)``, one pattern per row, images flattened row-major.
Binary data sets hold the values 0.0 and 1.0; grey-level variants hold values
in [0, 1].

Toy sets (small enough for exact log-likelihoods; see ``max_log_likelihood``):
``bars_and_stripes``, ``bars_and_stripes_sample``, ``shifting_bar``, ``diag``,
``ball_1d``.

Real data: ``digits`` (bundled with scikit-learn, always available) and the
file-based ``mnist``, ``binarized_mnist``, ``omniglot``, ``cbcl``, read from
the data directory ``data_dir()``: the ``RBMVIZ_DATA`` environment variable if
set, else ``$XDG_CACHE_HOME/rbmviz/data`` (default ``~/.cache/rbmviz/data``).
Layout inside it::

    mnist/train-images-idx3-ubyte.gz      mnist/train-labels-idx1-ubyte.gz
    mnist/t10k-images-idx3-ubyte.gz       mnist/t10k-labels-idx1-ubyte.gz
    binarized_mnist/binarized_mnist_{train,valid,test}.amat.gz
    omniglot/images_{background,evaluation}.npz
    cbcl/CBCL_Face.mat

A missing file raises ``DatasetNotFoundError`` (a ``FileNotFoundError``) that
says where it was looked for and how to get it; an unreadable file raises
``DatasetCorruptError`` (a ``ValueError``) naming the file. ``available(name)``
checks for the files without reading them; ``load(name, **kwargs)`` and
``names()`` give access by name.

Seeds: wherever a function draws random numbers, ``seed`` may be an int or a
``np.random.Generator``; ``seed=None`` means seed 0, so results are always
reproducible.
"""

from __future__ import annotations

import difflib
import gzip
import numbers
import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = [
    "DatasetCorruptError",
    "DatasetNotFoundError",
    "OMNIGLOT_THRESHOLD",
    "available",
    "ball_1d",
    "bars_and_stripes",
    "bars_and_stripes_sample",
    "binarized_mnist",
    "cbcl",
    "data_dir",
    "diag",
    "digits",
    "load",
    "max_log_likelihood",
    "mnist",
    "names",
    "omniglot",
    "shifting_bar",
]

#: Ink fraction at or above which a downsampled Omniglot pixel becomes 1.
OMNIGLOT_THRESHOLD = 0.25


# --------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------


def _check_int(value, name, low, high=None):
    """Return ``int(value)`` if it is an integer in ``[low, high]``, else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {bounds}, got {value!r}")
    return int(value)


def _check_choice(value, name, choices):
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if not any(value is c or (isinstance(value, str) and value == c) for c in choices):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def _check_limit(limit, n_max):
    """Number of rows to load: ``n_max`` for ``limit=None``, else ``limit`` in [1, n_max]."""
    return n_max if limit is None else _check_int(limit, "limit", 1, n_max)


def _rng(seed):
    """``np.random.default_rng(seed)``, with ``seed=None`` meaning 0."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        seed = 0
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be None, a non-negative integer or a numpy Generator; got {seed!r}")
    return np.random.default_rng(int(seed))


def _bernoulli(values, scale, rng, chunk=4096):
    """0/1 float64 array: entry is 1 with probability ``values / scale``.

    Drawn ``chunk`` rows at a time to bound the temporaries; the uniform
    numbers come out in the same order as one ``rng.random(values.shape)``
    call, so the first rows do not depend on how many rows there are.
    """
    out = np.empty(values.shape)
    for start in range(0, len(values), chunk):
        block = values[start:start + chunk]
        out[start:start + chunk] = rng.random(block.shape) < block / scale
    return out


# --------------------------------------------------------------------------
# Toy generators
# --------------------------------------------------------------------------


def _binary_codes(n_bits):
    """All ``2**n_bits`` binary codes; shape (2**n_bits, n_bits), bit ``i`` (LSB first) in column ``i``."""
    return (np.arange(2**n_bits)[:, None] >> np.arange(n_bits)) & 1


def bars_and_stripes(D=3):
    """All distinct D x D bars-and-stripes patterns.

    A pattern has every column constant (vertical bars) or every row constant
    (horizontal stripes). The all-zero and all-one images are both, so there
    are ``2 * 2**D - 2`` distinct patterns (14 for ``D=3``).

    Parameters
    ----------
    D : int, default 3
        Side length of the square image, ``D >= 2``.

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
    D = _check_int(D, "D", 2)
    codes = _binary_codes(D).astype(np.float64)          # (2**D, D)
    bars = np.repeat(codes[:-1, None, :], D, axis=1)     # column c = bit c
    stripes = np.repeat(codes[1:, :, None], D, axis=2)   # row r = bit r
    return np.concatenate([bars, stripes]).reshape(-1, D * D)


def bars_and_stripes_sample(D, n, seed):
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


def shifting_bar(N=9, B=1):
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


def diag(d=6):
    """Diag_d: the ``2d`` binary vectors with at most one change of value.

    These are ``1^j 0^(d-j)`` and ``0^j 1^(d-j)`` for ``j = 0, ..., d``
    (the all-zero and all-one vectors each once), to be used with the uniform
    distribution over them.

    .. warning::
       No available text defines Bengio & Delalleau's (2009) Diag data set.
       This definition was **fitted** to the single number Fischer & Igel
       report for it (bias bound minus bias after exact expected CD-1 on a
       6 x 6 RBM, about 0.00138); it is **not confirmed by a source**. See
       the project's reference notes (datasets.md, Sec. 3).

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


def ball_1d(d=6):
    """1DBall_d: the ``d(d+1)/2`` non-empty contiguous blocks of ones on a line.

    No wrap-around: a block is ``0^a 1^w 0^(d-a-w)`` with width ``w >= 1``;
    to be used with the uniform distribution over them.

    .. warning::
       No available text defines Bengio & Delalleau's (2009) 1DBall data set.
       This definition was **fitted** to the single number Fischer & Igel
       report for it (bias bound minus bias, about 0.02628), and the match is
       loose; it is **not confirmed by a source**. See the project's reference
       notes (datasets.md, Sec. 3).

    Parameters
    ----------
    d : int, default 6
        Vector length, ``d >= 1``.

    Returns
    -------
    X : ndarray of float64, shape (d * (d + 1) // 2, d)
        Values 0/1, ordered by block width ``w = 1, ..., d``, then by start
        position ``a = 0, ..., d - w`` (the first ``d`` rows are one-hot, the
        last row is all-one).

    Examples
    --------
    >>> ball_1d(3)
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.],
           [1., 1., 0.],
           [0., 1., 1.],
           [1., 1., 1.]])
    """
    d = _check_int(d, "d", 1)
    width, start = np.array([(w, a) for w in range(1, d + 1) for a in range(d - w + 1)]).T
    pixel = np.arange(d)[None, :]
    return ((pixel >= start[:, None]) & (pixel < (start + width)[:, None])).astype(np.float64)


def max_log_likelihood(X):
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


def digits(binarize="threshold", return_labels=False):
    """scikit-learn's bundled 8 x 8 handwritten digits (1797 images).

    Loaded with ``sklearn.datasets.load_digits`` (no download); grey levels
    0..16.

    Parameters
    ----------
    binarize : {"threshold", None}, default "threshold"
        ``"threshold"``: pixel ``>= 8`` (half of the range) becomes 1, else 0.
        ``None``: grey levels scaled to [0, 1] by dividing by 16.
    return_labels : bool, default False
        Also return the digit classes.

    Returns
    -------
    X : ndarray of float64, shape (1797, 64)
        Images flattened row-major, in scikit-learn's order.
    y : ndarray of int64, shape (1797,)
        Digit classes 0..9; only if ``return_labels``.
    """
    _check_choice(binarize, "binarize", ("threshold", None))
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = (X >= 8).astype(np.float64) if binarize == "threshold" else X / 16.0
    return (X, y.astype(np.int64)) if return_labels else X


# --------------------------------------------------------------------------
# Data directory, files and errors
# --------------------------------------------------------------------------


class DatasetNotFoundError(FileNotFoundError):
    """A data set file is missing from the data directory."""


class DatasetCorruptError(ValueError):
    """A data set file exists but cannot be read or has an unexpected format."""


def data_dir():
    """Directory holding the real data sets.

    Returns
    -------
    pathlib.Path
        ``$RBMVIZ_DATA`` if that environment variable is set (and not empty);
        otherwise ``$XDG_CACHE_HOME/rbmviz/data``, with ``XDG_CACHE_HOME``
        defaulting to ``~/.cache``. The directory is not created.
    """
    env = os.environ.get("RBMVIZ_DATA")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "rbmviz" / "data"


_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", 60000),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 10000),
}
_BINARIZED_MNIST_ROWS = {"train": 50000, "valid": 10000, "test": 10000}
_OMNIGLOT_IMAGES = {"background": 19280, "evaluation": 13180}

# Folder, file names and where to get them, per file-based data set.
_FILES = {
    "mnist": [f for split in _MNIST_FILES.values() for f in split[:2]],
    "binarized_mnist": [f"binarized_mnist_{s}.amat.gz" for s in _BINARIZED_MNIST_ROWS],
    "omniglot": [f"images_{s}.npz" for s in _OMNIGLOT_IMAGES],
    "cbcl": ["CBCL_Face.mat"],
}
_SOURCES = {
    "mnist": "the original MNIST database of LeCun, Cortes & Burges in IDX format, "
    "gzip-compressed, under its usual file names (from the MNIST web site or any mirror)",
    "binarized_mnist": "the fixed binarisation of MNIST by Larochelle & Murray (2011), "
    "the text files binarized_mnist_{train,valid,test}.amat, each compressed with gzip",
    "omniglot": "the 105x105 Omniglot images of Lake et al. as NumPy archives with arrays "
    "'images' (bool, n_characters x 20 x 105 x 105, True = background) and 'labels', "
    "e.g. from the GitHub repository bitsandscraps/omniglot",
    "cbcl": "the 2429 training faces of the MIT CBCL Face Database #1 as a MATLAB file with "
    "variable M of shape (361, 2429), e.g. data/CBCL_Face.mat of the GitHub repository "
    "hiroyuki-kasai/NMFLibrary",
}


def _path(dataset, filename):
    """Full path of ``filename`` of ``dataset``; raise DatasetNotFoundError if it is missing."""
    root = data_dir()
    path = root / dataset / filename
    if path.is_file():
        return path
    if os.environ.get("RBMVIZ_DATA"):
        how = "set by the RBMVIZ_DATA environment variable"
    else:
        how = ("the default, used because the RBMVIZ_DATA environment variable is not set; "
               "set RBMVIZ_DATA to use another directory")
    files = ", ".join(_FILES[dataset])
    raise DatasetNotFoundError(
        f"Data set file {filename!r} ({dataset}) not found.\n"
        f"  Looked for: {path}\n"
        f"  Data directory: {root} ({how}).\n"
        f"  To get it: copy the folder `{dataset}/` with the files {files} into the data "
        f"directory, so that the file is at {path}. These files are {_SOURCES[dataset]}."
    )


@contextmanager
def _reading(path):
    """Turn any error raised while reading ``path`` into a DatasetCorruptError naming it."""
    try:
        yield
    except (DatasetCorruptError, MemoryError):
        raise
    except Exception as exc:  # gzip/zlib/zip/npy/MATLAB parsers raise many error types
        raise _corrupt(path, f"{type(exc).__name__}: {exc}") from exc


def _corrupt(path, why):
    return DatasetCorruptError(
        f"Cannot read data set file {path.name!r} ({path}): {why}. "
        "The file may be truncated or corrupt; replace it with a fresh copy."
    )


def available(name):
    """Whether a data set can be loaded without missing files.

    Parameters
    ----------
    name : str
        A name from ``names()``.

    Returns
    -------
    bool
        True for generators and ``digits``; for file-based data sets, whether
        all their files (every split) are present in ``data_dir()``. The files
        are not read.
    """
    _lookup(name)
    root = data_dir()
    return all((root / name / f).is_file() for f in _FILES.get(name, ()))


# --------------------------------------------------------------------------
# File-based loaders
# --------------------------------------------------------------------------


def _read_idx(path, magic, n_items, item_shape, limit):
    """First ``limit`` items of a gzip IDX file as uint8, shape (limit, prod(item_shape))."""
    header_len = 4 * (2 + len(item_shape))
    with _reading(path), gzip.open(path, "rb") as f:
        header = np.frombuffer(f.read(header_len), ">u4")
        expected = (magic, n_items, *item_shape)
        if header.shape != (len(expected),) or tuple(header) != expected:
            raise _corrupt(path, f"IDX header {tuple(int(h) for h in header)} "
                                 f"is not the expected (magic, count, dims) {expected}")
        size = limit * int(np.prod(item_shape, dtype=np.int64))
        data = f.read(size)
        if len(data) != size or (limit == n_items and f.read(1)):
            raise _corrupt(path, f"expected {n_items} items of shape {item_shape}")
    return np.frombuffer(data, np.uint8).reshape(limit, -1)


def mnist(split="train", binarize="threshold", seed=None, return_labels=False, limit=None):
    """MNIST handwritten digits, 28 x 28, from the original IDX files.

    Reads ``<data_dir>/mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz``,
    checking the IDX magic numbers (2051 images, 2049 labels) and sizes.

    Parameters
    ----------
    split : {"train", "test"}, default "train"
        60,000 training or 10,000 test images, in file order (the first
        training labels are 5, 0, 4, 1, 9, 2).
    binarize : {"threshold", "stochastic", None}, default "threshold"
        With intensities ``x = pixel / 255``: ``"threshold"`` gives
        ``x > 0.5`` (pixel >= 128) as 0/1 ("binary-MNIST"); ``"stochastic"``
        sets each pixel to 1 with probability ``x`` (Salakhutdinov & Murray
        2008), one fixed draw determined by ``seed``; ``None`` returns ``x``.
    seed : int, numpy.random.Generator or None, default None
        Seed of the stochastic binarisation; ``None`` means 0, so the draw is
        reproducible. Pixel draws are taken row by row, so the first ``k``
        rows do not depend on ``limit``. Ignored for the other modes.
    return_labels : bool, default False
        Also return the digit classes.
    limit : int or None, default None
        Load only the first ``limit`` images (read and binarised alone, so a
        small limit is fast).

    Returns
    -------
    X : ndarray of float64, shape (n_images, 784)
        Images flattened row-major; values 0/1 when binarised, in [0, 1]
        (multiples of 1/255) for ``binarize=None``. ``n_images`` is 60000,
        10000 or ``limit``.
    y : ndarray of int64, shape (n_images,)
        Digit classes 0..9; only if ``return_labels``.

    Raises
    ------
    DatasetNotFoundError
        If a file is missing (the message says how to get it).
    DatasetCorruptError
        A ``ValueError``: a file is unreadable or has the wrong format.
    """
    _check_choice(split, "split", tuple(_MNIST_FILES))
    _check_choice(binarize, "binarize", ("threshold", "stochastic", None))
    images_file, labels_file, n_max = _MNIST_FILES[split]
    n = _check_limit(limit, n_max)
    rng = _rng(seed) if binarize == "stochastic" else None
    path = _path("mnist", images_file)
    pixels = _read_idx(path, 2051, n_max, (28, 28), n)
    if binarize == "threshold":
        X = (pixels > 127).astype(np.float64)
    elif binarize == "stochastic":
        X = _bernoulli(pixels, 255.0, rng)
    else:
        X = pixels / 255.0
    if not return_labels:
        return X
    path = _path("mnist", labels_file)
    y = _read_idx(path, 2049, n_max, (), n).ravel()
    if y.max() > 9:
        raise _corrupt(path, f"label {y.max()} is outside 0..9")
    return X, y.astype(np.int64)


def binarized_mnist(split="train", limit=None):
    """MNIST with the fixed stochastic binarisation of Larochelle & Murray (2011).

    Reads ``<data_dir>/binarized_mnist/binarized_mnist_<split>.amat.gz``
    (ASCII, one image per line: 784 characters '0'/'1' separated by spaces,
    1568 bytes per line); the characters are taken straight from the bytes
    (every other byte), and the line layout is checked.

    Parameters
    ----------
    split : {"train", "valid", "test"}, default "train"
        50,000 / 10,000 / 10,000 images (mean pixel values 0.1306 / 0.1311 /
        0.1325). The file holds no labels.
    limit : int or None, default None
        Load only the first ``limit`` images.

    Returns
    -------
    X : ndarray of float64, shape (n_images, 784)
        Values 0/1, images flattened row-major (MNIST orientation).

    Raises
    ------
    DatasetNotFoundError
        If the file is missing (the message says how to get it).
    DatasetCorruptError
        A ``ValueError``: the file is unreadable or has the wrong layout.
    """
    _check_choice(split, "split", tuple(_BINARIZED_MNIST_ROWS))
    n_max = _BINARIZED_MNIST_ROWS[split]
    n = _check_limit(limit, n_max)
    path = _path("binarized_mnist", f"binarized_mnist_{split}.amat.gz")
    line = 2 * 784
    with _reading(path), gzip.open(path, "rb") as f:
        data = f.read(n * line)
        if len(data) != n * line or (n == n_max and f.read(1)):
            raise _corrupt(path, f"expected {n_max} lines of {line} bytes")
    chars = np.frombuffer(data, np.uint8).reshape(n, line)
    bits = chars[:, 0::2] - np.uint8(ord("0"))              # '0'/'1' -> 0/1, others wrap to > 1
    separators = chars[:, 1::2]
    if (bits > 1).any() or (separators[:, :-1] != ord(" ")).any() or (separators[:, -1] != ord("\n")).any():
        raise _corrupt(path, f"expected lines of 784 space-separated '0'/'1' characters ({line} bytes)")
    return bits.astype(np.float64)


def _area_matrix(size, n_in=105):
    """Overlap matrix W of shape (size, n_in) for exact area averaging, scaled to integers.

    ``W[i, j]`` is ``size`` times the length of the overlap between input
    pixel ``[j, j+1)`` and output cell ``[i n_in/size, (i+1) n_in/size)``;
    rows sum to ``n_in``, so ``W @ img @ W.T / n_in**2`` averages ``img`` over
    each output cell. The integer entries keep float32 sums exact.
    """
    edges = np.arange(size + 1) * n_in                      # output cell edges, times size
    left = np.arange(n_in) * size                            # input pixel edges, times size
    overlap = np.minimum(edges[1:, None], left + size) - np.maximum(edges[:-1, None], left)
    return np.clip(overlap, 0, None).astype(np.float32)


def omniglot(split="background", size=28, binarize="threshold", return_labels=False, limit=None, seed=None):
    """Omniglot handwritten characters (Lake et al.), downsampled from 105 x 105.

    Reads ``<data_dir>/omniglot/images_<split>.npz`` (bool images, True =
    background) and converts to ink = ``1 - image`` (strokes are 1). Each
    image is shrunk to ``size x size`` by exact area averaging: every output
    pixel is the area-weighted mean of the input pixels its square covers,
    computed for all images at once as ``R @ ink @ R.T`` with the
    (size, 105) overlap matrix ``R`` (rows summing to 1). This gives ink
    fractions in [0, 1] (mean 0.078, as at full resolution), then binarised.

    Note: this is not the 28 x 28 Omniglot file (``chardata.mat``) used by
    Burda et al. (IWAE); splits and preprocessing differ.

    Parameters
    ----------
    split : {"background", "evaluation"}, default "background"
        19,280 images (964 characters) or 13,180 images (659 characters).
    size : int, default 28
        Output side length, 1 to 105 (105 keeps the original pixels).
    binarize : {"threshold", "stochastic", None}, default "threshold"
        ``"threshold"``: pixel is 1 where the ink fraction is
        ``>= OMNIGLOT_THRESHOLD`` (0.25). A threshold of 0.5 breaks thin
        strokes (which are about one output pixel wide at 28 x 28) into
        pieces; 0.25 keeps them connected. Mean pixel value at ``size=28``:
        0.105 (background) against 0.078 at 0.5. ``"stochastic"``: 1 with
        probability equal to the ink fraction, one fixed draw determined by
        ``seed``. ``None``: the ink fractions.
    return_labels : bool, default False
        Also return the character labels.
    limit : int or None, default None
        Use only the first ``limit`` images (in row order, see below).
    seed : int, numpy.random.Generator or None, default None
        Seed of the stochastic binarisation; ``None`` means 0. Ignored for
        the other modes.

    Returns
    -------
    X : ndarray of float64, shape (n_images, size * size)
        Images flattened row-major. Row ``20 * c + k`` is drawing ``k``
        (drawer ``k + 1``) of character ``c``.
    y : ndarray of int64, shape (n_images,)
        Character index ``c`` within the split (0..963 for background, where
        ``c`` is the original character number minus 1; 0..658 for
        evaluation, original number minus 965). Only if ``return_labels``.

    Raises
    ------
    DatasetNotFoundError
        If the file is missing (the message says how to get it).
    DatasetCorruptError
        A ``ValueError``: the file is unreadable or has the wrong format.
    """
    _check_choice(split, "split", tuple(_OMNIGLOT_IMAGES))
    size = _check_int(size, "size", 1, 105)
    _check_choice(binarize, "binarize", ("threshold", "stochastic", None))
    n_max = _OMNIGLOT_IMAGES[split]
    n = _check_limit(limit, n_max)
    rng = _rng(seed) if binarize == "stochastic" else None
    path = _path("omniglot", f"images_{split}.npz")
    with _reading(path), np.load(path, allow_pickle=False) as archive:
        images, labels = archive["images"], archive["labels"]
        shape = (n_max // 20, 20, 105, 105)
        if images.dtype != bool or images.shape != shape or labels.shape != shape[:2]:
            raise _corrupt(path, f"expected bool images of shape {shape} and labels of shape "
                                 f"{shape[:2]}, got {images.dtype} {images.shape} and {labels.shape}")
    images = images.reshape(n_max, 105, 105)[:n]
    R = _area_matrix(size)
    counts = np.empty((n, size, size), np.float32)
    for start in range(0, n, 2048):                           # chunks bound the float32 copy
        ink = np.logical_not(images[start:start + 2048]).astype(np.float32)
        np.matmul(R, ink @ R.T, out=counts[start:start + 2048])
    X = counts.reshape(n, size * size).astype(np.float64) / 105.0**2
    if binarize == "threshold":
        X = (X >= OMNIGLOT_THRESHOLD).astype(np.float64)
    elif binarize == "stochastic":
        X = _bernoulli(X, 1.0, rng)
    return (X, labels.reshape(-1)[:n].astype(np.int64)) if return_labels else X


def cbcl(photographic=False, limit=None):
    """MIT CBCL Face Database #1: the 2,429 training faces, 19 x 19.

    Reads variable ``M`` (shape (361, 2429), one face per column in MATLAB
    column-major order) from ``<data_dir>/cbcl/CBCL_Face.mat``. Each face is
    returned upright (``M[:, i].reshape(19, 19, order="F")``) and flattened
    row-major.

    As stored, the polarity is inverted relative to a photograph: eyes and
    mouth are bright. Values are multiples of 1/256 in [1/256, 1], mean 0.503.

    Parameters
    ----------
    photographic : bool, default False
        Return ``1 - M`` instead: conventional polarity (dark eyes, bright
        skin), values in [0, 255/256]; ``256 * X`` is the 8-bit grey level.
    limit : int or None, default None
        Load only the first ``limit`` faces.

    Returns
    -------
    X : ndarray of float64, shape (n_faces, 361)
        Grey levels in [0, 1], one upright face per row; ``n_faces`` is 2429
        or ``limit``.

    Raises
    ------
    DatasetNotFoundError
        If the file is missing (the message says how to get it).
    DatasetCorruptError
        A ``ValueError``: the file is unreadable or has the wrong format.
    """
    from scipy.io import loadmat

    if not isinstance(photographic, (bool, np.bool_)):
        raise ValueError(f"photographic must be True or False, got {photographic!r}")
    n = _check_limit(limit, 2429)
    path = _path("cbcl", "CBCL_Face.mat")
    with _reading(path):
        M = loadmat(path, variable_names=["M"]).get("M")
        if M is None or M.shape != (361, 2429):
            raise _corrupt(path, f"expected a variable M of shape (361, 2429), got "
                                 f"{None if M is None else M.shape}")
    X = np.asarray(M[:, :n].T, dtype=np.float64).reshape(n, 19, 19).transpose(0, 2, 1).reshape(n, 361)
    return 1.0 - X if photographic else X


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------

_REGISTRY = {
    "bars_and_stripes": bars_and_stripes,
    "shifting_bar": shifting_bar,
    "diag": diag,
    "ball_1d": ball_1d,
    "digits": digits,
    "mnist": mnist,
    "binarized_mnist": binarized_mnist,
    "omniglot": omniglot,
    "cbcl": cbcl,
}


def names():
    """Names accepted by ``load`` and ``available``.

    Returns
    -------
    list of str
        Toy generators first, then ``digits`` and the file-based data sets.
    """
    return list(_REGISTRY)


def _lookup(name):
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(name), _REGISTRY, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"name must be one of {', '.join(_REGISTRY)}; got {name!r}.{hint}") from None


def load(name, **kwargs):
    """Load or generate a data set by name.

    Parameters
    ----------
    name : str
        One of ``names()``.
    **kwargs
        Passed to the data set's function (e.g. ``D=4`` for
        ``"bars_and_stripes"``, ``split="test"`` for ``"mnist"``).

    Returns
    -------
    X : ndarray of float64, shape (n_patterns, n_pixels)
        Or ``(X, y)`` where the function was asked for labels.

    Examples
    --------
    >>> load("shifting_bar", N=5).shape
    (5, 5)
    """
    return _lookup(name)(**kwargs)
