"""A run's state, to continue it later in another process bit for bit (:meth:`Run.state
<rbmviz.runs.Run.state>`, :meth:`Run.restore <rbmviz.runs.Run.restore>`): the models, the
algorithm with its state, the shuffle's generator, the position, the records and the guard's
bests, checked against the run it is restored into by a fingerprint.
"""
from __future__ import annotations

import copy
import hashlib
from typing import TYPE_CHECKING

import numpy as np


if TYPE_CHECKING:
    from .loop import Run

__all__ = ["STATE_VERSION", "capture", "fingerprint", "restore"]

#: format version of :meth:`Run.state`
STATE_VERSION = 1


def capture(run: "Run") -> dict:
    """:meth:`Run.state <rbmviz.runs.Run.state>` of ``run``.

    Parameters
    ----------
    run : Run
        A run between records.

    Returns
    -------
    dict
        Picklable.

    Raises
    ------
    ValueError
        For a run that diverged.
    """
    if run.error is not None:
        raise ValueError("a diverged run has no state to continue")
    run._sync()
    return {"version": STATE_VERSION, "fingerprint": fingerprint(run),
            "model": run.rbm.copy(), "work": None if run._work is run.rbm else run._work.copy(),
            "algorithm": copy.deepcopy(run.algorithm),
            "shuffle": run._shuffle.bit_generator.state, "epoch": run.epoch, "pos": run._pos,
            "perm": None if run._perm is None else run._perm.copy(),
            "wall_time": run.wall_time, "eval_time": run.eval_time,
            "records": list(run.records), "last_good": run._last_good,
            "best": dict(run._best), "t_update": run._t_update,
            "eval_times": list(run._eval_times), "u_record": run._u_record,
            "stopped": run._stopped}


def fingerprint(run: "Run") -> dict:
    """What a state must agree on with the run it is restored into (the data by a digest of
    its rows, computed once: they do not change during a run).

    The model is described by its ``layers`` (``shape``) and ``units``, which every kind of
    model gives — for an RBM ``[n_visible, n_hidden]`` and ``[visible, hidden]``, as every
    state of format 1 holds them.

    Parameters
    ----------
    run : Run
        The run.

    Returns
    -------
    dict
        The algorithm and its settings, the model's layer sizes, dtype and unit types, the
        rows, the batch size, the seed, the data's digest and, when not the default
        ``"spread"``, the run's ``remainder``.
    """
    if run._data_digest is None:
        run._data_digest = hashlib.blake2b(np.ascontiguousarray(run.data).view(np.uint8),
                                            digest_size=16).hexdigest()
    fp = {"algorithm": run.algorithm.name,
          "settings": repr(sorted(run.algorithm.settings().items())),
          "shape": [int(n) for n in run.rbm.layers], "dtype": str(run._work.dtype),
          "units": [str(u) for u in run.rbm.units], "rows": int(run.data.shape[0]),
          "batch_size": run.batch_size, "seed": run.seed, "data": run._data_digest}
    if run.remainder != "spread":
        fp["remainder"] = run.remainder
    return fp


def restore(run: "Run", state: dict) -> None:
    """:meth:`Run.restore <rbmviz.runs.Run.restore>`: ``run`` continues from ``state``.

    Parameters
    ----------
    run : Run
        A run made with the same arguments, not started.
    state : dict
        From :func:`capture`.

    Raises
    ------
    ValueError
        As :meth:`Run.restore <rbmviz.runs.Run.restore>`.
    """
    if run.records or run._u:
        raise ValueError("restore() needs a run that has not started")
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        got = state.get("version") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"not a run state of format version {STATE_VERSION} (got {got!r})")
    mine, theirs = fingerprint(run), state["fingerprint"]
    diff = [k for k in [*mine, *(k for k in theirs if k not in mine)]
            if mine.get(k) != theirs.get(k)]
    if diff:
        k = diff[0]
        raise ValueError(f"the run state is of another run: its {k} is {theirs.get(k)!r}, "
                         f"this run's is {mine.get(k)!r}")
    model = state["model"]
    run.rbm.__dict__.update(model.copy().__dict__)
    if state["work"] is None:
        run._work = run.rbm
    else:
        run._work = state["work"].copy()
    run.algorithm = copy.deepcopy(state["algorithm"])
    run._ctx.algorithm = run.algorithm
    run._shuffle.bit_generator.state = state["shuffle"]
    run.epoch, run._pos = state["epoch"], state["pos"]
    run._perm = None if state["perm"] is None else state["perm"].copy()
    run.wall_time, run.eval_time = state["wall_time"], state["eval_time"]
    run.records = list(state["records"])
    run._last_good, run._best = state["last_good"], dict(state["best"])
    run._t_update, run._eval_times = state["t_update"], list(state["eval_times"])
    run._u_record, run._stopped = state["u_record"], state["stopped"]
