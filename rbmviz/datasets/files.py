"""The data directory (:func:`data_dir`, the one data location), file names, where to get the
files, and the errors of a missing or unreadable file."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path



class DatasetNotFoundError(FileNotFoundError):
    """A data set file is missing from the data directory."""


class DatasetCorruptError(ValueError):
    """A data set file exists but cannot be read or has an unexpected format."""


def data_dir() -> Path:
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


__all__ = ["DatasetNotFoundError", "DatasetCorruptError", "data_dir"]
