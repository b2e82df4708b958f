"""Data sets: toy pattern generators and loaders of real benchmark files.

A package: :mod:`.toy` (generators), :mod:`.real` (digits and the file loaders),
:mod:`.files` (:func:`data_dir`, the one data location, and the errors); every name is
available as ``rbmviz.datasets.<name>``.

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

Rows for training and testing: ``load_split(name, split, limit=, binarize=, seed=,
test_rows=, subset_seed=, return_labels=)`` loads one split of a real data set, binarised,
limited and optionally a seeded subset (:mod:`.splits`, with the split rules ``SPLITS`` and
``TEST_FRACTION`` and the data knobs ``DataKnobs`` / ``DATA_KNOBS``, declared once); every
front end that trains on real data calls it.

Seeds: wherever a function draws random numbers, ``seed`` may be an int or a
``np.random.Generator``; ``seed=None`` means seed 0, so results are always
reproducible.
"""

from __future__ import annotations

import difflib
from typing import Any

import numpy as np

from .files import _FILES, DatasetCorruptError, DatasetNotFoundError, data_dir
from .real import OMNIGLOT_THRESHOLD, binarized_mnist, cbcl, digits, mnist, omniglot
from .splits import DATA_KNOBS, SPLITS, TEST_FRACTION, DataKnobs, load_split, split_rows
from .toy import (ball_1d, bars_and_stripes, bars_and_stripes_sample, diag, max_log_likelihood,
                  shifting_bar)

__all__ = [
    "DATA_KNOBS",
    "DataKnobs",
    "DatasetCorruptError",
    "DatasetNotFoundError",
    "LABELS",
    "OMNIGLOT_THRESHOLD",
    "SPLITS",
    "TEST_FRACTION",
    "available",
    "ball_1d",
    "bars_and_stripes",
    "bars_and_stripes_sample",
    "binarized_mnist",
    "cbcl",
    "data_dir",
    "diag",
    "digits",
    "label",
    "load",
    "load_split",
    "max_log_likelihood",
    "mnist",
    "names",
    "omniglot",
    "shifting_bar",
    "split_rows",
]


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


#: the names a student reads (menus, titles, legends), by registry name
LABELS = {
    "bars_and_stripes": "Bars & Stripes",
    "shifting_bar": "Shifting Bar",
    "diag": "Diag",
    "ball_1d": "1DBall",
    "digits": "8×8 digits (scikit-learn)",
    "mnist": "MNIST",
    "binarized_mnist": "binarized MNIST",
    "omniglot": "Omniglot",
    "cbcl": "CBCL faces",
}


def label(name: str) -> str:
    """The display name of data set ``name`` (e.g. ``"Bars & Stripes"``).

    Parameters
    ----------
    name : str
        The data set's name in the registry (:func:`names`), e.g. ``"bars_and_stripes"``.

    Returns
    -------
    str
        Its label (the name itself for a data set without one).
    """
    return LABELS.get(name, name)


def names() -> list[str]:
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


def load(name: str, **kwargs: Any) -> np.ndarray:
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


def available(name: str) -> bool:
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
