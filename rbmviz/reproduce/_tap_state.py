"""Resumable state of the TAP reproduction (:func:`rbmviz.reproduce.tap_run.run` with
``state_dir``): after every epoch the training state of each model, and every evaluation,
are written atomically under ``state_dir/nh<N_h>/``, so a paper-scale run (hours) can be
stopped and continued — a crash loses at most one epoch — and continued runs give the same
numbers, bit for bit, as uninterrupted ones.

The training state is the run loop's own (:meth:`rbmviz.runs.Run.state`, put back by
:meth:`rbmviz.runs.Run.restore`): the model with its priors, the TAP rule with its momentum,
counters and random-stream position, the epoch shuffle's generator and the position.

Layout::

    state_dir/settings.json            the run's settings (a continuation must match them)
    state_dir/nh<N_h>/run_state.pkl     the training state (Run.state(), a pickle)
    state_dir/nh<N_h>/eval_<E>.npz      the evaluation of epoch E (curve row, solutions, maps)
    state_dir/nh<N_h>/model_epoch<E>.npz  models saved at chosen epochs (RBM.save format)
    state_dir/nh<N_h>/denoising_<key>.csv the denoising curves of the trained model

The training state is a pickle, read back with :mod:`pickle`: keep state directories where
only you can write.  Earlier versions wrote it as ``state.npz`` (format 1, from private
attributes of the run and the rule); such a directory is refused with a message saying what
to do, never continued from a state this version cannot read exactly.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from .. import _files
from ._io import json_default
from ._run_state import RUN_STATE_FILE, differing_settings, load_run_state, restore_run, save_run_state

__all__ = ["RunState", "SETTINGS_FREE", "STATE_FORMAT"]

#: settings a continuation may change: how long to train, which models, the denoising grid,
#: the precision of the training solves' products, the evaluation's later damped attempts
#: (they reach only rows the earlier attempts left unconverged; each curve row records them)
SETTINGS_FREE = ("epochs", "hidden", "count_hidden", "ps", "test_samples", "products",
                 "eval_fallback_damping")
#: format of the training state file (``run_state.pkl``); format 1 was ``state.npz``
STATE_FORMAT = 2
_FORMAT_1_FILE = "state.npz"


def _atomic_savez(path, **arrays):
    """``arrays`` to ``path``, whole or not at all (:func:`rbmviz._files.savez`)."""
    _files.savez(path, arrays, overwrite=True)


#: the arrays every evaluation file (``eval_<E>.npz``) holds
_EVAL_ARRAYS = ("row", "scalars", "free_energy", "counts")


def _load(f, what, required, check=None):
    """The arrays of the state file ``f`` (``ValueError`` naming it when it is not a regular
    file, unreadable, or misses one of ``required``)."""
    arrays = _files.load_npz(f, "state file", what=what, check=check)
    missing = [k for k in required if k not in arrays]
    if missing:
        raise ValueError(f"state file {f} is missing arrays {missing}; expected {what} "
                         f"(delete it, or choose a new state_dir)")
    return arrays


def _canonical(settings):
    return json.loads(json.dumps({k: v for k, v in settings.items() if k not in SETTINGS_FREE},
                                 default=json_default, sort_keys=True))


class RunState:
    """The state directory of one resumable TAP reproduction.

    Parameters
    ----------
    path : path-like
        Created if missing.  A directory holding the state of a run with other settings
        (apart from :data:`SETTINGS_FREE`) is refused with a ``ValueError``.
    settings : dict
        The run's checked settings.
    """

    def __init__(self, path, settings):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise NotADirectoryError(f"state_dir {self.path} exists and is not a directory")
        _files.check_writable_dir(self.path, "state_dir")
        self.path.mkdir(parents=True, exist_ok=True)
        want = _canonical(settings)
        f = self.path / "settings.json"
        if os.path.lexists(f):
            _files.check_regular_file(f, "state_dir's settings file",
                                      what="the JSON settings of a TAP reproduction")
            try:
                have = json.loads(f.read_text(encoding="utf-8"))
                if not isinstance(have, dict):
                    raise ValueError(f"a JSON {type(have).__name__}, not an object")
            except (OSError, ValueError) as exc:
                raise ValueError(f"state_dir {self.path}: its settings.json is not readable "
                                 f"({exc}); choose a new state_dir") from None
            diff = differing_settings(have, want)
            if diff:
                raise ValueError(f"state_dir {self.path} holds a run with other settings ({diff}); "
                                 f"continue it with those settings or choose a new state_dir")
        else:
            _files.write_json(f, want, sort_keys=True, overwrite=True)

    def _dir(self, nh):
        d = self.path / f"nh{int(nh)}"
        d.mkdir(exist_ok=True)
        return d

    # ---------------------------------------------------------------- training state
    def save(self, nh, run_):
        """Write the training state of model ``nh``: :meth:`Run.state
        <rbmviz.runs.Run.state>` of ``run_`` (taken after a record, or before the first
        update) and the settings of its algorithm, atomically
        (:func:`._run_state.save_run_state`, format :data:`STATE_FORMAT`).

        Parameters
        ----------
        nh : int
            The model's number of hidden units (its folder ``nh<N_h>``).
        run_ : rbmviz.runs.Run
            Its training run.
        """
        save_run_state(self._dir(nh), run_, fmt=STATE_FORMAT, algorithm=run_.algorithm.settings())

    def restore(self, nh, run_) -> int:
        """Continue ``run_`` (made with this run's settings, not started) from the saved
        training state of model ``nh`` (:meth:`Run.restore <rbmviz.runs.Run.restore>`: its
        model, algorithm and position are replaced; use ``run_.algorithm`` afterwards).

        Algorithm settings a continuation may change (:data:`SETTINGS_FREE`, e.g. the
        training solves' ``products``) are those of the saved run while it is restored and
        this run's from then on.

        Parameters
        ----------
        nh : int
            The model's number of hidden units.
        run_ : rbmviz.runs.Run
            The model's new training run.

        Returns
        -------
        int
            The epoch reached (0 when nothing was saved).

        Raises
        ------
        ValueError
            Naming the file and what to do: a state of format 1 (``state.npz``, written by an
            earlier version), an unreadable file, or the state of another run (other model
            shape, unit types, data, settings, ...).
        """
        d = self.path / f"nh{int(nh)}"
        what = f"N_h={int(nh)}"
        got = load_run_state(d, older=(_FORMAT_1_FILE,), what=what, fmt=STATE_FORMAT)
        if got is None:
            return 0
        if not isinstance(got.get("algorithm"), dict):
            raise ValueError(f"state file {d / RUN_STATE_FILE} holds no algorithm settings; "
                             f"delete it ({what} is trained again from the start), or choose a "
                             f"new state_dir")
        now = run_.algorithm.settings()
        saved = got["algorithm"]
        free = {k: now[k] for k in SETTINGS_FREE if k in now and k in saved and saved[k] != now[k]}
        if free:                                # restored as saved, then continued as now
            run_.algorithm.set_settings(**{k: saved[k] for k in free})
        restore_run(d, run_, got, what=what)
        if free:
            run_.algorithm.set_settings(**free)
        return run_.epoch

    def save_model(self, nh, epoch, rbm):
        """The model at ``epoch`` as ``model_epoch<E>.npz`` (:meth:`rbmviz.RBM.save`)."""
        return rbm.save(self._dir(nh) / f"model_epoch{int(epoch)}.npz", overwrite=True)

    # ---------------------------------------------------------------- evaluations
    def save_eval(self, nh, epoch, ev):
        """Write an evaluation (``row``, ``stats``, optional ``iso`` and ``map`` points)."""
        st = ev["stats"]
        arrays = dict(row=np.array(json.dumps(ev["row"], default=json_default)),
                      scalars=np.array(json.dumps({k: v for k, v in st.items()
                                                   if k not in ("free_energy", "counts")},
                                                  default=json_default)),
                      free_energy=st["free_energy"], counts=st["counts"])
        if "iso" in ev:
            arrays.update(iso_features=ev["iso"][0], iso_fe=ev["iso"][1],
                          iso_counts=ev["iso"][2])
        if "map" in ev:
            arrays.update(map_av=ev["map"][0], map_fe=ev["map"][1], map_converged=ev["map"][2])
        _atomic_savez(self._dir(nh) / f"eval_{int(epoch):04d}.npz", **arrays)

    def load_eval(self, nh, epoch):
        """The saved evaluation of ``epoch``, or None."""
        f = self.path / f"nh{int(nh)}" / f"eval_{int(epoch):04d}.npz"
        if not os.path.lexists(f):
            return None
        z = _load(f, "an evaluation of a TAP reproduction", _EVAL_ARRAYS)
        try:
            stats = json.loads(str(z["scalars"]))
            stats["free_energy"] = z["free_energy"]
            stats["counts"] = z["counts"]
            out = {"row": json.loads(str(z["row"])), "stats": stats}
            if "iso_features" in z:
                out["iso"] = (z["iso_features"], z["iso_fe"], z["iso_counts"])
            if "map_av" in z:
                out["map"] = (z["map_av"], z["map_fe"], z["map_converged"])
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"state file {f} is not a readable evaluation ({type(exc).__name__}: "
                             f"{exc}); delete it, or choose a new state_dir") from None
        return out

    # ---------------------------------------------------------------- denoising
    def _den_path(self, nh, key):
        h = hashlib.sha1(json.dumps(key, default=json_default).encode()).hexdigest()[:12]
        return self._dir(nh) / f"denoising_{h}.csv"

    def load_denoising(self, nh, key):
        """The denoising table saved under ``key`` (any JSON-able value), or None."""
        import pandas as pd
        f = self._den_path(nh, key)
        if not os.path.lexists(f):
            return None
        _files.check_regular_file(f, "state file", what="a denoising table (CSV)")
        return pd.read_csv(f)

    def save_denoising(self, nh, key, table):
        with _files.atomic_path(self._den_path(nh, key), overwrite=True) as tmp:
            table.to_csv(tmp, index=False)
