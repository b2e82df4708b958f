"""Resumable state of the TAP reproduction (:func:`rbmviz.reproduce.tap_run.run` with
``state_dir``): after every epoch the training state of each model, and every evaluation,
are written atomically under ``state_dir/nh<N_h>/``, so a paper-scale run (hours) can be
stopped and continued — a crash loses at most one epoch — and continued runs give the same
numbers, bit for bit, as uninterrupted ones.

Layout::

    state_dir/settings.json            the run's settings (a continuation must match them)
    state_dir/nh<N_h>/state.npz         parameters, momentum, counters, shuffle stream, epoch
    state_dir/nh<N_h>/eval_<E>.npz      the evaluation of epoch E (curve row, solutions, maps)
    state_dir/nh<N_h>/model_epoch<E>.npz  models saved at chosen epochs (RBM.save format)
    state_dir/nh<N_h>/denoising_<key>.csv the denoising curves of the trained model
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from .. import _files
from ._io import json_default

__all__ = ["RunState", "SETTINGS_FREE"]

#: settings a continuation may change: how long to train, which models, the denoising grid,
#: the precision of the training solves' products, the evaluation's later damped attempts
#: (they reach only rows the earlier attempts left unconverged; each curve row records them)
SETTINGS_FREE = ("epochs", "hidden", "count_hidden", "ps", "test_samples", "products",
                 "eval_fallback_damping")
_COUNTERS = ("updates", "gibbs_steps", "tap_iterations", "not_converged_total",
             "fallback_updates", "counter")


def _atomic_savez(path, **arrays):
    """``arrays`` to ``path``, whole or not at all (:func:`rbmviz._files.savez`)."""
    _files.savez(path, arrays, overwrite=True)


#: the arrays of a training state (``state.npz``) besides the priors'
_STATE_ARRAYS = ("W", "b", "c", "vW", "vb", "vc", "prev_gW", "counters", "shuffle", "epoch",
                 "wall_time")
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


_PRIOR_PREFIXES = ("visible_", "hidden_")


def _prior_arrays(rbm):
    """``{"<layer>_<param>": array}`` for the array parameters of real-valued unit priors
    (``V``, ``rho``; the bias is the model's ``b`` / ``c``), empty for Bernoulli units."""
    out = {}
    for layer in ("visible", "hidden"):
        prior = getattr(rbm, f"{layer}_prior")
        for k, v in prior.to_dict().items():
            if k not in ("name", "n", "interval"):
                out[f"{layer}_{k}"] = np.asarray(v, dtype=np.float64)
    return out


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
            diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
            if diff:
                raise ValueError(
                    f"state_dir {self.path} holds a run with other settings ("
                    + ", ".join(f"{k}: {have.get(k)!r} there, {want.get(k)!r} now" for k in diff)
                    + "); continue it with those settings or choose a new state_dir")
        else:
            _files.write_json(f, want, sort_keys=True, overwrite=True)

    def _dir(self, nh):
        d = self.path / f"nh{int(nh)}"
        d.mkdir(exist_ok=True)
        return d

    # ---------------------------------------------------------------- training state
    def save(self, nh, rbm, alg, run_):
        """Write the training state of model ``nh`` (after ``run_.epoch`` epochs): also the
        trained parameters of real-valued unit priors (``V``, ``ρ``)."""
        _atomic_savez(
            self._dir(nh) / "state.npz", W=rbm.W, b=rbm.b, c=rbm.c, vW=alg.vW, vb=alg.vb,
            vc=alg.vc, prev_gW=alg.prev_gW, **_prior_arrays(rbm),
            counters=np.array([getattr(alg, k) for k in _COUNTERS], dtype=np.int64),
            shuffle=np.array(json.dumps(run_._shuffle.bit_generator.state)),
            epoch=np.array(run_.epoch), wall_time=np.array(run_.wall_time))

    def restore(self, nh, rbm, alg, run_) -> int:
        """Load the training state of model ``nh`` into ``rbm``, ``alg`` and ``run_`` (set
        up, untrained); returns the epoch reached (0 when nothing was saved)."""
        f = self.path / f"nh{int(nh)}" / "state.npz"
        if not os.path.lexists(f):
            return 0

        def check(headers):
            if "W" in headers and headers["W"][0] != rbm.W.shape:
                raise ValueError(f"{f} holds a {headers['W'][0]} model, expected {rbm.W.shape}")
        z = _load(f, "the training state of a TAP reproduction", _STATE_ARRAYS, check)
        want = set(_prior_arrays(rbm))
        if want != {k for k in z if k.startswith(_PRIOR_PREFIXES)}:
            raise ValueError(f"{f} holds the state of a model with other unit priors")
        try:
            for name in ("W", "b", "c"):
                getattr(rbm, name)[...] = z[name]
            for key in want:
                layer, name = key.split("_", 1)
                setattr(getattr(rbm, f"{layer}_prior"), name, z[key])
            for name in ("vW", "vb", "vc", "prev_gW"):
                getattr(alg, name)[...] = z[name]
            for k, v in zip(_COUNTERS, z["counters"]):
                setattr(alg, k, int(v))
            run_._shuffle.bit_generator.state = json.loads(str(z["shuffle"]))
            run_.epoch = int(z["epoch"])
            run_.wall_time = float(z["wall_time"])
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"state file {f} holds arrays of the wrong shape or type for this "
                             f"run ({type(exc).__name__}: {exc}); delete it, or choose a new "
                             f"state_dir") from None
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
