"""What :class:`rbmviz.runs.Run` reads of the model it trains, whatever its kind.

A model gives ``n_visible``, ``dtype``, ``params`` (its arrays themselves), ``copy()``,
``param_names``, ``layers`` (sizes, visible first) and ``units`` (unit type names, one per
layer), as :class:`rbmviz.model.RBM` (``W, b, c``; ``[n_visible, n_hidden]``;
``[visible, hidden]``, the values its runs' states have always held) and
:class:`rbmviz.dbm.DBM` do: the state's fingerprint (:mod:`rbmviz.runs.state`) reads the
layer sizes and unit types, the divergence guard's messages (:mod:`rbmviz.runs.guard`) the
parameter names, and :func:`couplings` counts the couplings (the first chunk's cost guess,
:mod:`rbmviz.runs.schedule`, and the default ``pl_rows``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["couplings"]


def couplings(model: Any) -> int:
    """The number of couplings of ``model``: the entries of its 2-D parameter arrays.

    Parameters
    ----------
    model : RBM or another model
        The model a run trains.

    Returns
    -------
    int
        ``n_visible · n_hidden`` for an RBM, ``Σ_l N_{l−1} N_l`` for a DBM.
    """
    return int(sum(np.size(a) for a in model.params if np.ndim(a) == 2))
