"""Each data set's train/test rule (:data:`DATASETS`) and :func:`load_data`, which loads (or
generates) the training and test rows a :class:`~rbmviz.settings.DataSettings` names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .. import datasets as _datasets

if TYPE_CHECKING:
    from .classes import DataSettings

__all__ = ["DATASETS", "DatasetRule", "TEST_FRACTION", "dataset_knobs", "load_data"]


@dataclass(frozen=True)
class DatasetRule:
    """How :func:`load_data` builds the train/test pair of one data set.

    Parameters
    ----------
    kind : str
        "toy" (generated complete pattern set; test = train), "bundled" (ships with a
        dependency; fixed held-out split), "file" (read from the data directory).
    knobs : tuple of str
        The :class:`DataSettings` knobs the data set uses.
    splits : tuple of str or None
        For data sets with an official split, the (train, test) split names.
    test_rows : int or None
        Rows of the official test split (so that ``limit`` reads only what it keeps).
    """

    kind: str
    knobs: tuple[str, ...]
    splits: tuple[str, str] | None = None
    test_rows: int | None = None


def _file_rule(name: str, knobs: tuple[str, ...]) -> DatasetRule:
    splits = tuple(_datasets.SPLITS[name])           # training split first, test split last
    return DatasetRule("file", knobs, (splits[0], splits[-1]), _datasets.SPLITS[name][splits[-1]])


#: the rule of every data set :class:`DataSettings` offers (the splits and their rows are
#: :mod:`rbmviz.datasets`' own: :data:`~rbmviz.datasets.SPLITS`)
DATASETS: dict[str, DatasetRule] = {
    **{name: DatasetRule("toy", size_knobs) for name, size_knobs in _datasets.DATA_KNOBS.items()},
    "digits": DatasetRule("bundled", ("binarize", "data_seed", "limit")),
    "mnist": _file_rule("mnist", ("binarize", "data_seed", "limit")),
    "binarized_mnist": _file_rule("binarized_mnist", ("limit",)),
    "omniglot": _file_rule("omniglot", ("binarize", "data_seed", "limit")),
    "cbcl": DatasetRule("file", ("binarize", "data_seed", "limit")),
}

#: fraction of the rows held out (the last ones) as the test set of data sets without an
#: official split (digits, CBCL): :data:`rbmviz.datasets.TEST_FRACTION`
TEST_FRACTION = _datasets.TEST_FRACTION


def _dataset_names() -> list[str]:
    return [n for n in _datasets.names() if n in DATASETS]


def dataset_knobs(dataset: str) -> list[str]:
    """The :class:`DataSettings` knobs data set ``dataset`` uses (besides ``dataset``).

    Parameters
    ----------
    dataset : str
        A registered data set (:func:`rbmviz.datasets.names`).

    Returns
    -------
    list of str
        The names of its own knobs, e.g. ``["D"]`` for Bars & Stripes.
    """
    return list(_rule(dataset).knobs)


def _rule(dataset: str) -> DatasetRule:
    try:
        return DATASETS[dataset]
    except KeyError:
        raise ValueError(f"no train/test rule for data set {dataset!r}; known: {sorted(DATASETS)} "
                         f"(add one to rbmviz.settings.DATASETS)") from None


def load_data(settings: DataSettings) -> tuple[np.ndarray, np.ndarray]:
    """Load (or generate) the training and test rows of ``settings.dataset``.

    Rule for the test set:

    * toy sets (``bars_and_stripes``, ``shifting_bar``, ``diag``, ``ball_1d``): the test set
      **is** the training set — both are the complete pattern set (the papers' ATLL);
    * ``mnist``, ``binarized_mnist``: the official ``train`` / ``test`` files;
      ``omniglot``: the ``background`` / ``evaluation`` alphabets;
    * ``digits`` (1797 images) and ``cbcl`` (2429 faces), which have no official split: a fixed
      deterministic split in file order, the last ``floor(0.2 n)`` rows are the test set and the
      rest the training set (digits: 1438 / 359).

    The real data sets' rows come from :func:`rbmviz.datasets.load_split`: grey-level data
    (mnist, omniglot, digits, cbcl) are binarised by ``settings.binarize`` (``"stochastic"``:
    one draw from ``settings.data_seed``); ``settings.limit`` keeps at most the first ``limit``
    rows of each split.

    Parameters
    ----------
    settings : DataSettings
        The data set and its size knobs.

    Returns
    -------
    train, test : numpy.ndarray
        Float64 0/1 rows, shape (n_rows, n_visible).

    Raises
    ------
    rbmviz.datasets.DatasetNotFoundError
        A data set file is missing (the message says where to put it).
    ValueError
        Bad sizes (e.g. ``B >= N``) or a corrupt data file.
    """
    s = settings
    name = s.dataset
    rule = _rule(name)
    if rule.kind == "toy":
        X = _datasets.load(name, **{k: getattr(s, k) for k in rule.knobs})
        return X, X
    kw = {"limit": s.limit, "binarize": s.binarize, "seed": s.data_seed}
    return _datasets.load_split(name, "train", **kw), _datasets.load_split(name, "test", **kw)
