"""Real data sets: scikit-learn's digits (bundled) and the file-based MNIST, binarised MNIST,
Omniglot and CBCL faces, read from :func:`~rbmviz.datasets.data_dir`."""
from __future__ import annotations

import gzip

import numpy as np

from ._common import _bernoulli, _check_choice, _check_int, _check_limit, _rng
from .files import _BINARIZED_MNIST_ROWS, _MNIST_FILES, _OMNIGLOT_IMAGES, _corrupt, _path, _reading

#: Ink fraction at or above which a downsampled Omniglot pixel becomes 1.
OMNIGLOT_THRESHOLD = 0.25


def digits(binarize: str | None = "threshold", return_labels: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
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


def mnist(split: str = "train", binarize: str | None = "threshold", seed: int | np.random.Generator | None = None,
          return_labels: bool = False, limit: int | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
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


def binarized_mnist(split: str = "train", limit: int | None = None) -> np.ndarray:
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
    DatasetNotFoundError, DatasetCorruptError
        As :func:`mnist` does, for this data set's files.
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


def omniglot(split: str = "background", size: int = 28, binarize: str | None = "threshold",
             return_labels: bool = False, limit: int | None = None,
             seed: int | np.random.Generator | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
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
    DatasetNotFoundError, DatasetCorruptError
        As :func:`mnist` does, for this data set's files.
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


def cbcl(photographic: bool = False, limit: int | None = None) -> np.ndarray:
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
    DatasetNotFoundError, DatasetCorruptError
        As :func:`mnist` does, for this data set's files.
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


__all__ = ["OMNIGLOT_THRESHOLD", "digits", "mnist", "binarized_mnist", "omniglot", "cbcl"]
