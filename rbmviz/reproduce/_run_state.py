"""A study's resumable training state — the run loop's own (:meth:`rbmviz.runs.Run.state`,
put back by :meth:`rbmviz.runs.Run.restore`) with the study's own values, one pickle per
model written atomically (:func:`save_run_state`), read back checked (:func:`load_run_state`,
:func:`check_study`, :func:`restore_run`): the deep TAP and Fig. 12 studies
(:mod:`.tap_dbm`, :mod:`.tap_fig12`) and the TAP reproduction (:mod:`._tap_state`).

A state file is a pickle: keep state directories where only you can write.
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .. import _files

if TYPE_CHECKING:
    from ..runs import Run

__all__ = ["RUN_STATE_FILE", "RUN_STATE_FORMAT", "save_run_state", "load_run_state",
           "differing_settings", "check_study", "restore_run"]

#: the file of a study's run state, in the state directory of one model
RUN_STATE_FILE = "run_state.pkl"
#: format of :data:`RUN_STATE_FILE`: ``{"format", "run": Run.state(), **the study's values}``
#: (a study whose earlier versions wrote another file numbers its format on: ``fmt``)
RUN_STATE_FORMAT = 1
#: what reading a pickle that is not (whole) ours raises
_PICKLE_ERRORS = (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError,
                  IndexError, TypeError, ValueError, KeyError, MemoryError)


def save_run_state(directory: str | os.PathLike, run: "Run", *, fmt: int = RUN_STATE_FORMAT,
                   **study: Any) -> Path:
    """Write ``directory/run_state.pkl``: :meth:`Run.state <rbmviz.runs.Run.state>` of
    ``run`` (taken after a record) and the study's own values, whole or not at all.

    Parameters
    ----------
    directory : str or os.PathLike
        The state directory of one model (created if missing).
    run : rbmviz.runs.Run
        Its training run.
    fmt : int
        The format number written (:data:`RUN_STATE_FORMAT` unless the study numbers its own).
    **study : Any
        Picklable values the study continues with (its evaluation rows, its settings).

    Returns
    -------
    pathlib.Path
        The file written.
    """
    blob = pickle.dumps({"format": fmt, "run": run.state(), **study},
                        protocol=pickle.HIGHEST_PROTOCOL)
    return _files.write_bytes(Path(directory) / RUN_STATE_FILE, blob, overwrite=True)


def load_run_state(directory: str | os.PathLike, *, older: Sequence[str] = (),
                   what: str = "the model", fmt: int = RUN_STATE_FORMAT) -> dict | None:
    """The run state in ``directory`` (:func:`save_run_state`), or None when there is none.

    Parameters
    ----------
    directory : str or os.PathLike
        The state directory of one model.
    older : sequence of str
        Files that earlier versions of the study wrote there instead: their presence is
        refused (this version cannot continue from them exactly).
    what : str
        What the directory holds, for the messages (e.g. ``"DBM 784-500-1000"``).
    fmt : int
        The format the state must have (as :func:`save_run_state` wrote it).

    Returns
    -------
    dict or None
        ``{"format", "run", ...}``: the run's state and the study's values.

    Raises
    ------
    ValueError
        Naming the file and what to do: a file of an earlier version (``older``), a file that
        is not a readable pickle, or a state of another format.
    """
    d = Path(directory)
    for name in older:
        old = d / name
        if os.path.lexists(old):
            raise ValueError(
                f"state file {old} was written by an earlier version of rbmviz, which this "
                f"version does not continue; delete the folder {d} to train {what} again from "
                f"the start, finish the study with the version that wrote it, or choose a new "
                f"state directory")
    f = d / RUN_STATE_FILE
    if not os.path.lexists(f):
        return None
    _files.check_regular_file(f, "state file", what=f"the training state of {what} (a pickle)")
    try:
        with open(f, "rb") as fh:
            got = pickle.load(fh)
    except _PICKLE_ERRORS as exc:
        raise ValueError(f"state file {f} is not a readable training state "
                         f"({type(exc).__name__}: {exc}); delete it ({what} is trained again "
                         f"from the start), or choose a new state directory") from None
    if (not isinstance(got, dict) or got.get("format") != fmt
            or not isinstance(got.get("run"), dict)):
        have = got.get("format") if isinstance(got, dict) else type(got).__name__
        raise ValueError(f"state file {f} is not a training state of format {fmt} "
                         f"(got {have!r}); delete it ({what} is trained again from the start), "
                         f"or choose a new state directory")
    return got


def check_study(directory: str | os.PathLike, state: dict, own: dict, *,
                what: str = "the model") -> None:
    """Check that ``state`` (:func:`load_run_state`) is of a study with the settings ``own``:
    those the run's state does not compare (initial weights, evaluation rows ...), saved with
    it as ``study=`` together with its evaluation rows as ``rows=``.

    Parameters
    ----------
    directory : str or os.PathLike
        The state directory the state was read from (for the messages).
    state : dict
        From :func:`load_run_state`.
    own : dict
        The study's values now, as saved (``save_run_state(..., study=own)``).
    what : str
        What the directory holds, for the messages.

    Raises
    ------
    ValueError
        Naming the file and what to do: a state without the study's settings and evaluation
        rows, or one of a study with other settings (each difference named).
    """
    f = Path(directory) / RUN_STATE_FILE
    have = state.get("study")
    if not isinstance(have, dict) or not isinstance(state.get("rows"), list):
        raise ValueError(f"state file {f} holds no study settings and evaluations of {what}; "
                         f"delete it ({what} is trained again from the start), or choose a new "
                         f"state directory")
    diff = differing_settings(have, own)
    if diff:
        raise ValueError(f"state file {f} holds a study of {what} with other settings ({diff}); "
                         f"continue it with those settings, delete it, or choose a new state "
                         f"directory")


def differing_settings(have: dict, want: dict) -> str:
    """The settings on which a stored run (``have``) and this one (``want``) differ, as
    ``"key: stored there, given now"`` items joined by commas (empty when none differ)."""
    diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
    return ", ".join(f"{k}: {have.get(k)!r} there, {want.get(k)!r} now" for k in diff)


def restore_run(directory: str | os.PathLike, run: "Run", state: dict, *,
                what: str = "the model") -> None:
    """Continue ``run`` (made with the study's settings, not started) from ``state``
    (:func:`load_run_state`; :meth:`Run.restore <rbmviz.runs.Run.restore>`: its model,
    algorithm, shuffle and position are replaced).

    Parameters
    ----------
    directory : str or os.PathLike
        The state directory the state was read from (for the message).
    run : rbmviz.runs.Run
        The model's new training run.
    state : dict
        From :func:`load_run_state`.
    what : str
        What the directory holds, for the message.

    Raises
    ------
    ValueError
        Naming the file, when the state is of another run (another model, data, batch size,
        seed, algorithm settings ...).
    """
    try:
        run.restore(state["run"])
    except (ValueError, TypeError, KeyError) as exc:
        f = Path(directory) / RUN_STATE_FILE
        raise ValueError(f"state file {f} holds the state of another run ({exc}); run with "
                         f"the settings it was written with, delete it ({what} is trained "
                         f"again from the start), or choose a new state directory") from None
