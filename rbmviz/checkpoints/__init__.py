"""Trained models shipped with rbmviz, for lectures and notebooks that should not wait for
training: ``names()`` lists them, ``load(name)`` returns ``(RBM, info)``.

Each model is an ``<name>.npz`` file in the :meth:`rbmviz.RBM.save` format (at most 2 MB)
with an ``<name>.json`` beside it: what it is, how it was trained (data, algorithm,
settings, epoch), numbers measured on it, and the command that regenerates it.

* ``tap-mnist-100-fixed10-epoch<E>`` (E = 1, 10, 100) — 784×100 binary RBM trained by TAP
  (Tramel et al. 2018, Alg. 2, Table 1 settings with heavy-ball momentum; every training
  solve stopped after 10 iterations of Alg. 1, as in App. D) on the 60,000 binary-MNIST
  training images, after E epochs of the paper-scale run (``rbmviz reproduce tap --hidden
  100 --train-iter 10 --state DIR --save-epochs 1,10,100``); the TAP landscape grows from
  one solution (epoch 0) to 2 (epoch 1), 260 (epoch 10) and 2,628 (epoch 100) unique
  solutions from 10,000 data-anchored initialisations.
* ``tap-mnist-100-short-epoch<E>`` (E = 1, 2, 5, 10, 100) — the same model size trained on
  the first 2,000 images with mini-batches of 20 and a 10× larger step (the quick form of
  ``rbmviz reproduce tap``, run longer).
* ``pcd-mnist-500`` — 784×500 binary RBM (float32) trained by PCD-1 on the same images;
  structured receptive fields.

>>> from rbmviz import checkpoints
>>> rbm, info = checkpoints.load(checkpoints.names()[0])     # doctest: +SKIP
"""
from __future__ import annotations

import json
from pathlib import Path

from ..model import RBM

__all__ = ["names", "info", "load", "path", "MAX_BYTES"]

#: largest shipped model file
MAX_BYTES = 2 * 1024 * 1024
_DIR = Path(__file__).resolve().parent


def names() -> list[str]:
    """The shipped models, sorted (TAP checkpoints by epoch).

    Returns
    -------
    list of str
        Checkpoint names.
    """
    found = [p.stem for p in _DIR.glob("*.npz") if p.with_suffix(".json").exists()]

    def key(name):
        head, _, tail = name.rpartition("-epoch")
        return (head, int(tail)) if head and tail.isdigit() else (name, -1)
    return sorted(found, key=key)


def path(name: str) -> Path:
    """The ``.npz`` file of model ``name``.

    Parameters
    ----------
    name : str
        A shipped model's name, e.g. ``"tap-mnist-100-short-epoch1"`` (:func:`names` lists
        them).

    Returns
    -------
    pathlib.Path
        The file inside the installed package.

    Raises
    ------
    TypeError
        If ``name`` is not a str.
    ValueError
        For an unknown name.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    known = names()
    if name not in known:
        raise ValueError(f"unknown checkpoint name {name!r}; the shipped ones are {known}")
    return _DIR / f"{name}.npz"


def info(name: str) -> dict:
    """What model ``name`` is.

    Parameters
    ----------
    name : str
        As in :func:`path` (an unknown one is refused there).

    Returns
    -------
    dict
        ``title``, ``dataset``, ``algorithm``, ``n_visible``, ``n_hidden``, ``epoch``,
        ``settings``, ``measured`` (numbers at that epoch), ``regenerate`` (the command),
        ``bytes``, ``name``.
    """
    p = path(name)
    out = json.loads(p.with_suffix(".json").read_text(encoding="utf-8"))
    out["name"] = name
    out["bytes"] = p.stat().st_size
    return out


def load(name: str) -> tuple[RBM, dict]:
    """Load shipped model ``name``.

    Parameters
    ----------
    name : str
        The shipped model, as :func:`path` names it.

    Returns
    -------
    (RBM, dict)
        The model (a fresh copy: training it does not change the file) and :func:`info`.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the shipped ones).
    """
    return RBM.load(path(name)), info(name)
