"""Training rules behind one small interface (:class:`~rbmviz.algorithms.base.Algorithm`).

``get(name)`` returns the class for ``"cd"``, ``"pcd"``, ``"cg"``, ``"sdcp"``, ``"csdcp"``,
``"ssd"``, ``"tap"``; ``create(name, **settings)`` builds one and
names any setting it does not take.  Each class declares its knobs once in ``cls.Knobs``
(a ``param.Parameterized`` class) and the ones that may change between updates in
``cls.LIVE_KNOBS`` (:mod:`rbmviz.algorithms.knobs`).
"""
from __future__ import annotations

from typing import Any

from .._validation import check_choice
from . import knobs
from .base import Algorithm
from .cd import CD, PCD
from .centered import CG, CSDCP
from .dcp import SDCP
from .ssd import SSD
from .tap import TAP

_REGISTRY: dict[str, type[Algorithm]] = {}


def register(cls: type[Algorithm]) -> type[Algorithm]:
    """Add a rule to the registry under ``cls.name`` (usable as a class decorator).

    ``cls`` is a subclass of :class:`~rbmviz.algorithms.base.Algorithm` with a ``name``.

    Returns
    -------
    type
        ``cls`` itself.
    """
    _REGISTRY[cls.name] = cls
    return cls


for _cls in (CD, PCD, CG, SDCP, CSDCP, SSD, TAP):
    register(_cls)


def names() -> list[str]:
    """Names of the available algorithms, in registration order.

    Returns
    -------
    list of str
        The registered names (``"cd"``, ``"pcd"``, ...).
    """
    return list(_REGISTRY)


def get(name: str) -> type[Algorithm]:
    """The algorithm class registered as ``name``.

    Parameters
    ----------
    name : str
        The rule's registry name, e.g. ``"cd"`` or ``"tap"`` (:func:`names` lists them all).

    Returns
    -------
    type
        The :class:`~rbmviz.algorithms.base.Algorithm` subclass.

    Raises
    ------
    ValueError
        Naming the valid names, if ``name`` is not registered.
    """
    check_choice(name, "algorithm", tuple(_REGISTRY))
    return _REGISTRY[name]


def accepted_settings(name: str) -> list[str]:
    """Keyword arguments the algorithm's constructor takes: its knobs, in declaration order.

    Parameters
    ----------
    name : str
        The rule's registry name (see :func:`get`).

    Returns
    -------
    list of str
        The knobs of ``get(name).Knobs``.

    Raises
    ------
    ValueError
        If ``name`` is not registered.
    """
    return list(knobs.knob_params(get(name)))


def create(name: str, **settings: Any) -> Algorithm:
    """Build algorithm ``name`` with ``settings``.

    Parameters
    ----------
    name : str
        A name from :func:`names`.
    **settings
        Knobs of the algorithm (:func:`accepted_settings`).

    Returns
    -------
    Algorithm
        A new, not yet set-up instance.

    Raises
    ------
    TypeError
        Naming an unknown setting and listing the accepted ones.
    ValueError
        If ``name`` is not registered or a knob value is out of range.
    """
    cls = get(name)
    ok = accepted_settings(name)
    unknown = sorted(set(settings) - set(ok))
    if unknown:
        raise TypeError(f"algorithm {name!r} does not take setting(s) {unknown}; it accepts {ok}")
    return cls(**settings)


__all__ = ["knobs", "Algorithm", "CD", "PCD", "CG", "SDCP", "CSDCP", "SSD", "TAP", "register", "names", "get",
           "create", "accepted_settings"]
