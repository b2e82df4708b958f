"""The one way rows of a real data set are loaded for training and testing: :func:`load_split`
(a named data set's split, binarised, limited and optionally a seeded subset), with the split
rules it follows (:data:`SPLITS`, :data:`TEST_FRACTION`) and the knobs front ends offer for it
(:class:`DataKnobs`, :data:`DATA_KNOBS`), declared once here.

The settings (:func:`rbmviz.settings.load_data`), the TAP tab (:func:`rbmviz.live.tap.tap_data`),
the TAP presets (:func:`rbmviz.tap.presets.load_data`) and the TAP reproductions all call
:func:`load_split`.
"""
from __future__ import annotations

import numbers

import numpy as np
import param

from ..bounds import SEED_MAX, parameters_doc
from ._common import _bernoulli, _check_choice, _rng
from .files import _BINARIZED_MNIST_ROWS, _MNIST_FILES, _OMNIGLOT_IMAGES
from .real import cbcl, digits, mnist, binarized_mnist, omniglot

__all__ = ["DATA_KNOBS", "DataKnobs", "SPLITS", "TEST_FRACTION", "load_split", "split_rows"]


#: the official splits of the file data sets, training split first, with their rows
SPLITS: dict[str, dict[str, int]] = {
    "mnist": {s: n for s, (_, _, n) in _MNIST_FILES.items()},
    "binarized_mnist": dict(_BINARIZED_MNIST_ROWS),
    "omniglot": dict(_OMNIGLOT_IMAGES),
}
#: ``"train"`` and ``"test"`` of the data sets whose official splits have other names
_ALIASES = {"omniglot": {"train": "background", "test": "evaluation"}}
#: the data sets without an official test split, and their rows (all of which :func:`load_split`
#: calls ``"all"``; ``"train"`` / ``"test"`` hold the last rows out)
_WHOLE = {"digits": 1797, "cbcl": 2429}

#: fraction of the rows held out (the last ones) as the test set of data sets without an
#: official split (digits, CBCL), unless ``test_rows`` says otherwise
TEST_FRACTION = 0.2


class DataKnobs(param.Parameterized):
    """The knobs of the data sets, declared once: default, bounds, label and help.  The
    generated data sets' sizes (``D``, ``N``, ``B``, ``d``; :data:`DATA_KNOBS` says which data
    set takes which) and how the real ones are loaded (``binarize``, ``data_seed``, ``limit``;
    :func:`load_split`).  :class:`rbmviz.settings.DataSettings` holds copies of them and
    :func:`rbmviz.presets.for_dataset` checks against them.
    """

    D = param.Integer(
        3, bounds=(2, 10), label="Bars & stripes side D",
        doc="bars_and_stripes: image side; the 2·2^D − 2 patterns of D×D pixels.")
    N = param.Integer(
        9, bounds=(2, 1024), softbounds=(2, 32), label="Shifting bar pixels N",
        doc="shifting_bar: number of pixels (and of patterns).")
    B = param.Integer(
        1, bounds=(1, 1023), softbounds=(1, 31), label="Shifting bar length B",
        doc="shifting_bar: bar length, 1 <= B < N.")
    d = param.Integer(
        6, bounds=(1, 256), softbounds=(1, 32), label="Diag / 1DBall size d",
        doc="diag and ball_1d: number of pixels.")
    binarize = param.Selector(
        default="threshold", objects=["threshold", "stochastic"],
        doc="Grey-level data to 0/1: 'threshold' (a pixel is 1 when at least half on) or "
            "'stochastic' (1 with probability equal to its grey level, one fixed draw from "
            "data_seed).")
    data_seed = param.Integer(
        0, bounds=(0, SEED_MAX), softbounds=(0, 100),
        doc="Seed of the stochastic binarisation.")
    limit = param.Integer(
        None, allow_None=True, bounds=(1, None), softbounds=(1, 60000),
        doc="Use at most this many rows of each split (real data sets only); none = all.")


DataKnobs.__doc__ = DataKnobs.__doc__.rstrip() + "\n\n" + parameters_doc(DataKnobs)

#: the size knobs of :class:`DataKnobs` each generated data set takes (the other data sets
#: take none)
DATA_KNOBS: dict[str, tuple[str, ...]] = {"bars_and_stripes": ("D",), "shifting_bar": ("N", "B"),
                                          "diag": ("d",), "ball_1d": ("d",)}


def _split_names(name):
    if name in SPLITS:
        return tuple(SPLITS[name]) + tuple(_ALIASES.get(name, {}))
    return ("train", "test", "all")


def split_rows(name: str, split: str, *, test_rows: int | None = None) -> int:
    """Rows of split ``split`` of data set ``name`` (without reading any file).

    Parameters
    ----------
    name : {"mnist", "binarized_mnist", "omniglot", "digits", "cbcl"}
        A real data set.
    split : str
        As :func:`load_split` takes it.
    test_rows : int, optional
        As :func:`load_split` takes it.

    Returns
    -------
    int
        The number of rows.

    Raises
    ------
    ValueError
        For an unknown data set or split.

    Examples
    --------
    >>> split_rows("digits", "train"), split_rows("omniglot", "test")
    (1438, 13180)
    """
    _check_choice(name, "name", tuple(SPLITS) + tuple(_WHOLE))
    _check_choice(split, "split", _split_names(name))
    if name in SPLITS:
        return SPLITS[name][_ALIASES.get(name, {}).get(split, split)]
    n = _WHOLE[name]
    n_test = _held_out_rows(n, test_rows)
    return {"all": n, "train": n - n_test, "test": n_test}[split]


def _held_out_rows(n, test_rows):
    if test_rows is None:
        return int(n * TEST_FRACTION)
    if isinstance(test_rows, bool) or not isinstance(test_rows, numbers.Integral) \
            or not 1 <= test_rows < n:
        raise ValueError(f"test_rows must be an integer in [1, {n - 1}], got {test_rows!r}")
    return int(test_rows)


def _binarized(grey, binarize, seed):
    """Grey levels in [0, 1] as they are (``None``), ``>= 0.5`` (``"threshold"``) or one
    Bernoulli draw from ``seed`` (``"stochastic"``), as 0/1 float64."""
    if binarize == "threshold":
        return (grey >= 0.5).astype(np.float64)
    if binarize == "stochastic":
        return _bernoulli(grey, 1.0, _rng(seed))
    return grey


def load_split(name: str, split: str = "train", *, limit: int | None = None,
               binarize: str | None = DataKnobs.param.binarize.default,
               seed: int | np.random.Generator | None = DataKnobs.param.data_seed.default,
               test_rows: int | None = None,
               subset_seed: int | np.random.Generator | None = None,
               return_labels: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Rows of one split of a real data set: loaded, binarised and limited in one place.

    Splits: ``mnist`` ``"train"`` / ``"test"``; ``binarized_mnist`` ``"train"`` / ``"valid"`` /
    ``"test"``; ``omniglot`` ``"background"`` / ``"evaluation"`` (also called ``"train"`` /
    ``"test"``) — the official files.  ``digits`` (1,797 images) and ``cbcl`` (the 2,429
    training faces) have no official test split: ``"all"`` is every row, ``"test"`` the last
    ``test_rows`` rows (default ``floor(TEST_FRACTION · n)``: 359 digits, 485 faces) and
    ``"train"`` the rows before them.

    Parameters
    ----------
    name : {"mnist", "binarized_mnist", "omniglot", "digits", "cbcl"}
        The data set.
    split : str
        The split (above).
    limit : int, optional
        At most this many rows: the first ones of the split (only these are read from an IDX
        or ``.amat`` file), or of its seeded permutation with ``subset_seed``.  None: all.
    binarize : {"threshold", "stochastic", None}
        ``"threshold"``: a pixel is 1 when its grey level is at least half on (MNIST
        ``pixel >= 128``, the digits ``pixel >= 8``, the faces ``>= 0.5``; Omniglot at its
        ink-fraction threshold :data:`~rbmviz.datasets.OMNIGLOT_THRESHOLD`);
        ``"stochastic"``: 1 with probability equal to the grey level, one fixed draw from
        ``seed``; None: the grey levels in [0, 1].  ``binarized_mnist`` is binary already (the
        knob does not apply).
    seed : int, numpy.random.Generator or None
        Seed of the stochastic binarisation (None means 0).  MNIST and Omniglot draw each
        split's pixels row by row (the first rows do not depend on ``limit``); the digits and
        the faces draw every row at once before the split, so their train and test rows come
        from one draw.
    test_rows : int, optional
        Rows held out as ``"test"`` by ``digits`` and ``cbcl`` (e.g. the TAP tab's 200).
    subset_seed : int, numpy.random.Generator or None
        None: the split's rows in file order.  Otherwise the split's rows in the order of
        ``numpy.random.default_rng(subset_seed).permutation``, so that ``limit`` keeps a
        seeded random subset.
    return_labels : bool
        Also return the class of each row (mnist, omniglot, digits).

    Returns
    -------
    X : numpy.ndarray of float64, shape (n_rows, n_pixels)
        The rows.
    y : numpy.ndarray of int64, shape (n_rows,)
        Their classes; only with ``return_labels``.

    Raises
    ------
    ValueError
        For an unknown data set, split or mode, a bad ``limit`` or ``test_rows``, labels asked
        of a data set without them, or a corrupt file
        (:class:`~rbmviz.datasets.DatasetCorruptError`).
    rbmviz.datasets.DatasetNotFoundError
        A file is missing (the message says where to put it).

    Examples
    --------
    >>> load_split("digits", "test", limit=5).shape
    (5, 64)
    >>> X, y = load_split("digits", "train", limit=3, subset_seed=0, return_labels=True)
    >>> X.shape, y.shape
    ((3, 64), (3,))
    """
    n_split = split_rows(name, split, test_rows=test_rows)
    _check_choice(binarize, "binarize", ("threshold", "stochastic", None))
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 1:
            raise ValueError(f"limit must be None or an integer >= 1, got {limit!r}")
        limit = min(int(limit), n_split)
    if return_labels and name in ("cbcl", "binarized_mnist"):
        raise ValueError(f"data set {name!r} has no labels (return_labels=True)")
    n_read = n_split if subset_seed is not None or limit is None else limit
    y = None
    if name in SPLITS:
        official = _ALIASES.get(name, {}).get(split, split)
        if name == "binarized_mnist":
            X = binarized_mnist(official, limit=n_read)
        else:
            loader = mnist if name == "mnist" else omniglot
            got = loader(official, binarize=binarize, seed=seed, limit=n_read,
                         return_labels=return_labels)
            X, y = got if return_labels else (got, None)
    else:
        if name == "digits":
            grey, y = digits(binarize=None, return_labels=True)     # grey levels / 16
        else:
            grey = cbcl()
        X = _binarized(grey, binarize, seed)
        n_test = _held_out_rows(len(X), test_rows)
        rows = {"all": slice(None), "train": slice(0, len(X) - n_test),
                "test": slice(len(X) - n_test, None)}[split]
        X = X[rows]
        y = None if not return_labels else y[rows]
    if subset_seed is not None:
        order = np.random.default_rng(subset_seed).permutation(n_split)[:limit]
        X = X[order]
        y = None if y is None else y[order]
    elif limit is not None:
        X = X[:limit]
        y = None if y is None else y[:limit]
    return (X, y) if return_labels else X
