"""Training rules behind one small interface (:class:`~rbmviz.algorithms.base.Algorithm`).

``get(name)`` returns the class for ``"cd"``, ``"pcd"``, ``"cg"``, ``"sdcp"``, ``"csdcp"``,
``"ssd"``, ``"tap"``; ``create(name, **settings)`` builds one and
names any setting it does not take.  Each class declares its knobs once in ``cls.Knobs``
(a ``param.Parameterized`` class) and the ones that may change between updates in
``cls.LIVE_KNOBS`` (:mod:`rbmviz.algorithms.knobs`).
"""
from __future__ import annotations

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
    """Add a rule to the registry under ``cls.name`` (usable as a class decorator)."""
    _REGISTRY[cls.name] = cls
    return cls


for _cls in (CD, PCD, CG, SDCP, CSDCP, SSD, TAP):
    register(_cls)


def names() -> list[str]:
    """Names of the available algorithms, in registration order."""
    return list(_REGISTRY)


def get(name: str) -> type[Algorithm]:
    """The algorithm class registered as ``name`` (``ValueError`` naming the valid ones)."""
    check_choice(name, "algorithm", tuple(_REGISTRY))
    return _REGISTRY[name]


def accepted_settings(name: str) -> list[str]:
    """Keyword arguments the algorithm's constructor takes: its knobs (``get(name).Knobs``),
    in declaration order."""
    return list(knobs.knob_params(get(name)))


def create(name: str, **settings) -> Algorithm:
    """Build algorithm ``name`` with ``settings``; an unknown setting is a ``TypeError`` that
    names it and lists the accepted ones."""
    cls = get(name)
    ok = accepted_settings(name)
    unknown = sorted(set(settings) - set(ok))
    if unknown:
        raise TypeError(f"algorithm {name!r} does not take setting(s) {unknown}; it accepts {ok}")
    return cls(**settings)


__all__ = ["knobs", "Algorithm", "CD", "PCD", "CG", "SDCP", "CSDCP", "SSD", "TAP", "register", "names", "get",
           "create", "accepted_settings"]
