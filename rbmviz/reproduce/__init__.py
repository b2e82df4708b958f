"""Reproductions of the source papers' experiments.

Each experiment is a module of this package with

* ``run(**settings) -> (records: pandas.DataFrame, summary: dict)`` — the experiment;
* ``figure(records)`` — its HoloViews figure;
* ``format_summary(summary) -> str`` — the printed summary;
* ``add_arguments(parser)`` and ``main(args, parser) -> exit code`` — its
  ``rbmviz reproduce <name>`` command line.

and is registered in :data:`EXPERIMENTS` under its command-line name.  Modules are
imported only when used (see :func:`get`).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

__all__ = ["Experiment", "EXPERIMENTS", "get", "names"]


@dataclass(frozen=True)
class Experiment:
    """A registered reproduction.

    Parameters
    ----------
    name : str
        Name on the command line.
    module : str
        The module implementing it (imported lazily).
    help : str
        One line of help.
    """

    name: str
    module: str
    help: str


EXPERIMENTS: dict[str, Experiment] = {}


def register(name: str, module: str, help: str) -> Experiment:
    """Add an experiment to :data:`EXPERIMENTS` (``module`` is imported lazily)."""
    EXPERIMENTS[name] = exp = Experiment(name, module, help)
    return exp


register("cd-bias", "rbmviz.reproduce.cd_bias",
         "Fischer & Igel 2011: exact CD-k bias vs its bound on 6x6 RBMs (Diag, 1DBall)")
register("tap", "rbmviz.reproduce.tap",
         "Tramel et al. 2018: TAP machines on binary-MNIST (TAP LL curves, solution counts, "
         "Isomap, denoising)")
register("dc-small", "rbmviz.reproduce.dc_small",
         "Upadhya & Sastry 2017: CD/PCD/CG/S-DCP/CS-DCP on Bars & Stripes and Shifting Bar (exact ATLL)")
register("dc-mnist", "rbmviz.reproduce.dc_mnist",
         "Upadhya & Sastry 2017: MNIST/Omniglot with AIS ATLL, and the sensitivity studies "
         "(learning rate, d and K', batch size, initialisation)")


def names() -> list[str]:
    """The registered experiment names.

    Returns
    -------
    list of str
        Names as on the command line.
    """
    return list(EXPERIMENTS)


def get(name: str) -> ModuleType:
    """The module implementing experiment ``name``.

    Parameters
    ----------
    name : str
        One of :func:`names`.

    Returns
    -------
    module
        The module (imported on first use).

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; expected one of {names()}")
    return importlib.import_module(EXPERIMENTS[name].module)
