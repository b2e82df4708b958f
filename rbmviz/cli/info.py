"""``rbmviz info``: version, Numba threading, data directory and data sets."""
from __future__ import annotations

import os
import sys

import numba
import numpy as np

from .. import __version__, datasets
from .. import settings as _settings
from ..kernels.gibbs import sigmoid_
from ._core import EXIT_OK, command


@command("info", help="show the version, the Numba threading set-up and the data sets",
         examples=("rbmviz info",))
def _setup_info(parser):
    """Show rbmviz's version, the Numba threading layer and thread count, the data
    directory and which data sets can be loaded.

    The data directory is $RBMVIZ_DATA if set, else ~/.cache/rbmviz/data; `rbmviz train
    --dataset NAME` on a missing data set explains which files to put there."""
    return _run_info


def _run_info(args, parser) -> int:
    # the threading layer is chosen at the first parallel kernel call
    x = np.zeros((2, 2))
    sigmoid_(x, np.zeros(2), np.empty_like(x))
    try:
        layer = numba.threading_layer()
    except ValueError:  # pragma: no cover - no parallel region ran
        layer = "not initialised"
    print(f"rbmviz {__version__} (Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"numba {numba.__version__})")
    print(f"numba threading layer: {layer} (requested: {numba.config.THREADING_LAYER}); "
          f"threads: {numba.get_num_threads()} of NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}")
    root = datasets.data_dir()
    source = "from RBMVIZ_DATA" if os.environ.get("RBMVIZ_DATA") else "default; set RBMVIZ_DATA to change"
    print(f"data directory: {root} ({source}{'' if root.is_dir() else '; does not exist'})")
    print("data sets:")
    width = max(map(len, datasets.names()))
    for name in datasets.names():
        rule = _settings.DATASETS.get(name)
        kind = rule.kind if rule else "file"
        if kind == "toy":
            status = "generated"
        elif kind == "bundled":
            status = "bundled (scikit-learn)"
        else:
            status = ("available" if datasets.available(name)
                      else f"missing (files go in {root / name}/)")
        print(f"  {name:<{width}}  {status}")
    return EXIT_OK
