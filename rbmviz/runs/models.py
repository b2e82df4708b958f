"""What :class:`rbmviz.runs.Run` reads of the model it trains, whatever its kind: its layer
sizes and unit types (the state's fingerprint, :mod:`rbmviz.runs.state`), the names of its
parameter arrays (the divergence guard's messages, :mod:`rbmviz.runs.guard`) and its number
of couplings (the first chunk's cost guess, :mod:`rbmviz.runs.schedule`, and the default
``pl_rows``).

A model gives ``n_visible``, ``dtype``, ``params`` (its arrays themselves), ``copy()`` and,
to be named and described here, ``param_names``, ``layers`` (sizes, visible first) and
``units`` (unit type names, one per layer), as :class:`rbmviz.dbm.DBM` does.  An
:class:`~rbmviz.model.RBM` has none of the last three: it is described by its own attributes
(``W``, ``b``, ``c``; ``[n_visible, n_hidden]``; ``[visible, hidden]``), the values its runs'
states have always held.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["layers", "units", "param_names", "couplings"]

#: the names of an RBM's ``params`` (``W, b, c``)
_RBM_PARAM_NAMES = ("W", "b", "c")


def layers(model: Any) -> list[int]:
    """The layer sizes of ``model``, visible first.

    Parameters
    ----------
    model : RBM or a model with ``layers``
        The model a run trains.

    Returns
    -------
    list of int
        ``model.layers``; for an RBM ``[n_visible, n_hidden]``.
    """
    sizes = getattr(model, "layers", None)
    if sizes is None:
        return [int(model.n_visible), int(model.n_hidden)]
    return [int(n) for n in sizes]


def units(model: Any) -> list[str]:
    """The unit type of each layer of ``model``, visible first.

    Parameters
    ----------
    model : RBM or a model with ``units``
        The model a run trains.

    Returns
    -------
    list of str
        ``model.units``; for an RBM ``[visible, hidden]`` (the priors' names).
    """
    names = getattr(model, "units", None)
    if names is None:
        return [model.visible, model.hidden]
    return [str(u) for u in names]


def param_names(model: Any) -> tuple[str, ...]:
    """The names of ``model.params``, as messages name them.

    Parameters
    ----------
    model : RBM or a model with ``param_names``
        The model a run trains.

    Returns
    -------
    tuple of str
        ``model.param_names``; for an RBM ``("W", "b", "c")``.
    """
    names = getattr(model, "param_names", None)
    return _RBM_PARAM_NAMES if names is None else tuple(names)


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
