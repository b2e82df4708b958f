"""What :class:`rbmviz.runs.Run` reads of the model it trains, whatever its kind: its layer
sizes and unit types (the state's fingerprint, :mod:`rbmviz.runs.state`), the names of its
parameter arrays (the divergence guard's messages, :mod:`rbmviz.runs.guard`) and its number
of couplings (the first chunk's cost guess, :mod:`rbmviz.runs.schedule`, and the default
``pl_rows``).

A model gives ``n_visible``, ``dtype``, ``params`` (its arrays themselves), ``copy()``,
``param_names``, ``layers`` (sizes, visible first) and ``units`` (unit type names, one per
layer), as :class:`rbmviz.model.RBM` (``W, b, c``; ``[n_visible, n_hidden]``;
``[visible, hidden]``, the values its runs' states have always held) and
:class:`rbmviz.dbm.DBM` do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["layers", "units", "param_names", "couplings"]



def layers(model: Any) -> list[int]:
    """The layer sizes of ``model``, visible first.

    Parameters
    ----------
    model : RBM or DBM
        The model a run trains.

    Returns
    -------
    list of int
        ``model.layers`` (an RBM: ``[n_visible, n_hidden]``).
    """
    return [int(n) for n in model.layers]


def units(model: Any) -> list[str]:
    """The unit type of each layer of ``model``, visible first.

    Parameters
    ----------
    model : RBM or DBM
        The model a run trains.

    Returns
    -------
    list of str
        ``model.units`` (an RBM: ``[visible, hidden]``, the priors' names).
    """
    return [str(u) for u in model.units]


def param_names(model: Any) -> tuple[str, ...]:
    """The names of ``model.params``, as messages name them.

    Parameters
    ----------
    model : RBM or DBM
        The model a run trains.

    Returns
    -------
    tuple of str
        ``model.param_names`` (an RBM: ``("W", "b", "c")``).
    """
    return tuple(model.param_names)


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
