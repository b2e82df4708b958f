"""A deep TAP machine (a binary DBM with two hidden layers) trained live with TAP — the
engine of the explorer's "TAP landscape" tab when its ``model`` knob is ``"dbm-2"``
(Tramel et al. 2018, Appendix E, Alg. 4; :mod:`rbmviz.dbm`).

:class:`DBMTapRace` trains as :func:`rbmviz.reproduce.tap_beyond.study_dbm` (Fig. 11) does,
one point at a time on a :class:`~rbmviz.live.loop.BackgroundLoop` thread, through the run
loop every training rule uses (:class:`rbmviz.runs.Run`, the runs the library's front doors
make, driven a point at a time):

1. greedy layer-wise pretraining (Alg. 4, first phase): the runs of
   :func:`rbmviz.dbm.layer_runs`, the loop of :func:`rbmviz.dbm.pretrain` (same random
   stream, so ``pretrain_epochs`` whole epochs give the same weights) — layer 1 a TAP RBM
   (Alg. 2, heavy-ball momentum) on the images, layer 2 a TAP RBM on binary samples of layer
   1 given the images;
2. joint TAP training of the whole DBM (eqs. 126–129): the run of
   :class:`rbmviz.dbm.JointTAP` that :meth:`rbmviz.dbm.DBMTrainer.run` makes (same batches
   as :meth:`DBMTrainer.epoch <rbmviz.dbm.DBMTrainer.epoch>`).

A point trains ``updates_per_point`` updates (``Run.step_updates``), or for a time
(``next(run)`` bounded by the run's ``max_seconds``) that keeps the evaluation at about
:data:`~rbmviz.live.tap_base.LIVE_EVAL_BUDGET` of the point, at most
:data:`~rbmviz.live.tap_base.POINT_SECONDS`; a point that reaches the end of a layer's
pretraining goes on with the next phase.  The runs check the parameters after every
training chunk (finite, below :data:`~rbmviz.live.tap_base.MAX_WEIGHT`): a divergence stops
the race with a message.

The DBM always holds the current weights (during pretraining, the layer being trained is
copied into it after every point), and every point measures its TAP log-likelihood per unit
(App. E: mean clamped Φ of the evaluation rows minus the mean Φ of the converged free
solutions started from them, ÷ ``N_0 + N_1 + N_2``; :func:`rbmviz.dbm.log_likelihood`, tol
1e-8 as the Fig. 11 study).  Records:

    {epoch, updates, tap_ll, n_not_converged, n_free, n_eval, phase}

``epoch`` and ``updates`` count every mini-batch update since the start (pretraining of both
layers, then joint training), so the curve's x axis runs through the phases.  The snapshot
handed to the sink with each batch (refreshed at most :data:`FIELDS_EVERY` seconds apart) has
the receptive fields of both layers: the columns of ``W⁽¹⁾`` and of ``W⁽¹⁾W⁽²⁾`` (pixels ×
units, as :func:`rbmviz.viz.tap_beyond.dbm_receptive_fields`), the first :data:`MAX_FIELDS`
units of each.

Not here: the RBM tab's landscape (unique solutions, Isomap, free-energy histogram) and
denoising; :mod:`rbmviz.dbm` has no de-duplication of DBM solutions nor a channel-evidence
denoiser.  TAP2 iterated to convergence only (``order = 2``, ``inference = "tap"``,
``fixed_iter = None``): other settings are refused.
The ``products`` knob is the RBM's (:func:`rbmviz.tap.solve`); the deep machine's
mean-field iteration (:mod:`rbmviz.dbm`) computes in float64 whatever it says.  Pause ends a
point at the end of the runs' current training chunk (:data:`CHUNK_SECONDS`, or one update
when an update takes longer).
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._seeds import stream_seed
from ..algorithms.tap import TAP
from ..dbm import DBM, DBMTrainer, copy_layer, layer_runs, log_likelihood
from ..errors import RunDiverged
from ..model import RBM
from ..runs import Run
from .tap import (LIVE_EVAL_BUDGET, MAX_ITER, MAX_WEIGHT, POINT_SECONDS, TOL, TapLoop, TapRace,
                  TapSettings, refuse_model_change)

__all__ = ["DBMTapRace", "DBM_RECORD_FIELDS", "tap_engine", "MAX_FIELDS"]

#: the fields of a record
DBM_RECORD_FIELDS = ("epoch", "updates", "tap_ll", "n_not_converged", "n_free", "n_eval", "phase")
#: receptive fields shown per layer
MAX_FIELDS = 100
#: seconds between two receptive-field snapshots
FIELDS_EVERY = 0.5
#: the runs' training chunks (s): Pause ends a point after the current chunk
CHUNK_SECONDS = 0.05
#: knobs of the RBM rule that the deep TAP machine has no use for (TAP2 only)
_RBM_ONLY = {"order": 2, "inference": "tap", "fixed_iter": None}


def tap_engine(settings: TapSettings | None = None, **kwargs: Any) -> TapRace | DBMTapRace:
    """The live engine of ``settings.model``: :class:`~rbmviz.live.tap.TapRace` for ``"rbm"``,
    :class:`DBMTapRace` for ``"dbm-2"``.

    Parameters
    ----------
    settings : TapSettings, optional
        The tab's knobs; default ``TapSettings()`` (an RBM).
    **kwargs
        Keyword arguments of the engine (``sink``, ``on_error``, ``threads``, ...).

    Returns
    -------
    TapRace or DBMTapRace
        The engine, built (not started).
    """
    s = settings if settings is not None else TapSettings()
    return (TapRace if s.model == "rbm" else DBMTapRace)(s, **kwargs)


def _base_rate(X, eps=1e-3):
    m = np.clip(X.mean(axis=0), eps, 1 - eps)
    return np.log(m) - np.log1p(-m)


class DBMTapRace(TapLoop):
    """Train a 2-hidden-layer deep TAP machine on a background thread (module docstring);
    stream its TAP log-likelihood and both layers' receptive fields.

    Parameters
    ----------
    settings : TapSettings
        ``model="dbm-2"``; ``n_hidden`` and ``n_hidden2`` are the layer sizes,
        ``pretrain_epochs`` the pretraining per layer; γ, η, ε, K and the damping serve both
        phases (live, as in the RBM race).  Copied at construction.
    sink : callable, optional
        ``sink(records, snapshot)``, called from the thread with a list of records
        (:data:`DBM_RECORD_FIELDS`) and the latest snapshot.
    on_error, threads, max_updates_per_second, max_points
        As in :class:`~rbmviz.live.tap.TapRace`.

    Raises
    ------
    ValueError
        For a model other than ``"dbm-2"``, ``order`` ≠ 2 or ``inference`` ≠ ``"tap"`` (TAP2
        only), K > M, or M larger than the training set.
    rbmviz.datasets.DatasetNotFoundError
        When the MNIST files are missing.
    """

    thread_name = "rbmviz-tap-dbm"
    default_settings = {"model": "dbm-2"}
    record_fields = DBM_RECORD_FIELDS

    def __init__(self, settings: TapSettings | None = None, *,
                 sink: Callable[[list[dict], dict | None], None] | None = None,
                 on_error: Callable[[str], None] | None = None, threads: int = 1,
                 max_updates_per_second: float = 10.0, max_points: int = 100_000) -> None:
        s = settings if settings is not None else TapSettings(**self.default_settings)
        if s.model != "dbm-2":
            raise ValueError(f"DBMTapRace trains the 2-layer deep TAP machine (model 'dbm-2'), "
                             f"got model {s.model!r}")
        for name, want in _RBM_ONLY.items():
            if getattr(s, name) != want:
                raise ValueError(f"the deep TAP machine uses TAP2 (Alg. 1 on the block matrix "
                                 f"of eq. 125): {name} must be {want!r}, got "
                                 f"{getattr(s, name)!r} (that choice is for the RBM)")
        if s.start_from != "none":
            raise ValueError(f"start_from {s.start_from!r} is a shipped TAP RBM; the deep TAP "
                             f"machine starts fresh (choose start_from 'none')")
        self._init_tap(settings, sink=sink, on_error=on_error, threads=threads,
                       max_updates_per_second=max_updates_per_second, max_points=max_points)
        s, n = self.settings, len(self.data)
        self.layers = (self.data.shape[1], int(s.n_hidden), int(s.n_hidden2))
        self.dbm = DBM(self.layers, seed=stream_seed(s.seed, "init"), scale=0.01)
        self.dbm.biases[0][:] = _base_rate(self.data)
        self.start_info = None
        self.rbm = None                     # no RBM here (rbmviz.app.limits checks self.layers)
        self.batch_size = min(int(s.batch_size), n)
        self.n_batches = n // self.batch_size
        # pretraining: the runs of rbmviz.dbm.pretrain(seed=pretrain_seed), one per layer
        self.pretrain_seed = stream_seed(s.seed, "pretrain")
        self._pre_rng = np.random.default_rng(self.pretrain_seed)
        self.trainer = DBMTrainer(**self._trainer_settings(), batch_size=self.batch_size,
                                  seed=stream_seed(s.seed, "joint"))
        self._layer: int | None = None       # hidden layer being pretrained (0-based), or None
        self._pretraining: Iterator[Run] | None = None
        if s.pretrain_epochs > 0:
            self._pretraining = layer_runs(self.dbm, self.data, epochs=s.pretrain_epochs,
                                           batch_size=self.batch_size, seed=self.pretrain_seed,
                                           rng=self._pre_rng, algorithm=self._layer_algorithm,
                                           **self._run_options())
            self._layer = -1
        #: the run of the current phase (a layer's pretraining, or the joint training)
        self.run: Run = self._next_phase()
        self.updates = 0
        self.snapshot: dict | None = None
        self._n_snapshots = 0
        self._fields_due = 0.0
        self._eval_seconds = 0.0

    # ------------------------------------------------------------------ state
    @property
    def epoch(self) -> float:
        """Passes over the training rows since the start (pretraining included)."""
        return self.updates / self.n_batches

    @property
    def phase(self) -> str:
        """``"pretrain layer 1"``, ``"pretrain layer 2"`` or ``"joint"``."""
        return "joint" if self._layer is None else f"pretrain layer {self._layer + 1}"

    def _trainer_settings(self) -> dict:
        s = self.settings
        return dict(learning_rate=s.learning_rate, momentum=s.momentum,
                    weight_decay=s.weight_decay, n_solutions=s.n_solutions, damping=s.damping,
                    tol=TOL, max_iter=MAX_ITER)

    @property
    def _layer_alg(self) -> TAP | None:
        """The rule of the layer being pretrained (None in the joint phase)."""
        return None if self._layer is None else self.run.algorithm

    @property
    def _layer_rbm(self) -> RBM | None:
        """The TAP RBM of the layer being pretrained (None in the joint phase)."""
        return None if self._layer is None else self.run.rbm

    def _layer_algorithm(self) -> TAP:
        """A layer's rule, made when its run starts: the TAP rule with heavy-ball momentum
        and the live γ, η, ε, K and damping (as :func:`rbmviz.dbm.pretrain`'s, plus K)."""
        tr = self._trainer_settings()
        return TAP(learning_rate=tr["learning_rate"], momentum=tr["momentum"],
                   weight_decay=tr["weight_decay"], damping=tr["damping"],
                   n_solutions=tr["n_solutions"], tol=TOL, max_iter=MAX_ITER,
                   momentum_form="heavy_ball")

    @staticmethod
    def _run_options() -> dict:
        """Options of every phase's run: short training chunks (Pause) and the tab's
        divergence bound."""
        return {"chunk_seconds": CHUNK_SECONDS, "max_weight": MAX_WEIGHT}

    def _next_phase(self) -> Run:
        """The run of the next phase: the next layer's pretraining (the layer before is put
        into the DBM and sampled by :func:`rbmviz.dbm.layer_runs`), or the joint training."""
        run = None
        if self._pretraining is not None:
            run = next(self._pretraining, None)
            if run is None:
                self._pretraining = None
        if run is None:
            self._layer = None
            run = self.trainer.run(self.dbm, self.data, **self._run_options())
        else:
            self._layer += 1
        # Pause (or Stop) ends the loop thread's point at the next training chunk (a Step,
        # from another thread while paused, trains a whole point)
        run.yield_when = self._pause_asked
        return run

    # ------------------------------------------------------------------ controls
    def _check_changes(self, changes: dict) -> None:
        """Refuse a change of machine, ``order``, ``inference`` and ``fixed_iter`` away from
        TAP2 iterated to convergence, then what every TAP engine refuses."""
        refuse_model_change(changes)
        for name, want in _RBM_ONLY.items():
            if name in changes and changes[name] != want:
                raise ValueError(f"the deep TAP machine uses TAP2 only: {name} stays {want!r} "
                                 f"(that knob is for the RBM)")
        super()._check_changes(changes)

    def _settings_changed(self, changes: dict) -> None:
        """γ, η, ε, K and the damping go to both phases from the next update on."""
        tr = self._trainer_settings()
        live = {k: tr[k] for k in ("learning_rate", "momentum", "weight_decay",
                                   "n_solutions", "damping")}
        for k, v in live.items():
            setattr(self.trainer, k, v)
        if self._layer_alg is not None:
            self._layer_alg.set_settings(**live)

    # ------------------------------------------------------------------ the loop
    def _advance_point(self) -> list[dict]:
        """One point: mini-batch updates (``updates_per_point`` of them, or for a time that
        keeps the evaluation at about :data:`LIVE_EVAL_BUDGET` of the point, at most
        :data:`POINT_SECONDS`; none at the first point), then the TAP log-likelihood of the
        evaluation rows, and the receptive fields when due."""
        s = self.settings
        with self._lock:
            if self.failed is not None:
                return []
            if self.records:
                try:
                    self._train_point()
                except RunDiverged as err:
                    return self._fail(f"deep TAP training diverged at update {self.updates}: "
                                      f"{err}; lower the learning rate γ and press Reset")
                except (FloatingPointError, ArithmeticError, ValueError) as err:
                    return self._fail(f"deep TAP training diverged at update {self.updates}: "
                                      f"{err}; lower the learning rate γ and press Reset")
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ll = log_likelihood(self.dbm, self.eval_data, init=self.eval_data,
                                    damping=s.damping, tol=TOL, max_iter=MAX_ITER,
                                    per_unit=True, details=True)
            self._eval_seconds = time.perf_counter() - t0
            rec = {"epoch": self.epoch, "updates": self.updates, "tap_ll": float(ll["value"]),
                   "n_not_converged": int(ll["n_not_converged"]), "n_free": int(ll["n_free"]),
                   "n_eval": len(self.eval_data), "phase": self.phase}
            if not np.isfinite(rec["tap_ll"]):
                return self._fail(f"TAP log-likelihood is {rec['tap_ll']} at update "
                                  f"{self.updates} (no free TAP run converged, or the run "
                                  f"diverged); press Reset")
            now = time.perf_counter()
            if self.snapshot is None or now >= self._fields_due:
                self._take_snapshot()
                self._fields_due = now + FIELDS_EVERY
            self.records.append(rec)
            self._pending.append(rec)
            return [rec]

    def _train_point(self) -> None:
        """The updates of one point through the phases' runs: ``Run.step_updates`` for
        ``updates_per_point`` updates (at most to the end of a layer's pretraining, then on
        with the next phase), else ``next(run)`` bounded by the point's remaining time (the
        run's ``max_seconds``); Pause ends the point after the runs' current chunk."""
        upp = self.settings.updates_per_point
        deadline = None
        if upp is None:
            budget = min(POINT_SECONDS, max(0.05, self._eval_seconds
                                            * (1 - LIVE_EVAL_BUDGET) / LIVE_EVAL_BUDGET))
            deadline = time.perf_counter() + budget
        done = 0
        while True:
            run = self.run
            u0 = run.algorithm.updates
            try:
                if upp is not None:
                    n = upp - done
                    if run.epochs is not None:          # a layer: up to its last epoch
                        n = min(n, run.epochs * run.n_batches - u0)
                    run.step_updates(n)
                else:
                    run.max_seconds = max(deadline - time.perf_counter(), 1e-3)
                    next(run)
            finally:
                k = run.algorithm.updates - u0
                done += k
                self.updates += k
                if self._layer is not None:             # the DBM holds the current weights
                    copy_layer(self.dbm, self._layer, run.rbm)
                else:
                    self.trainer.epochs = run.epoch
            if run.done:                                # a layer's pretraining ended
                self.run = self._next_phase()
            if (done >= upp) if upp is not None else (time.perf_counter() >= deadline):
                return
            if self._pause_asked():                     # Pause ends the point at once
                return

    # ------------------------------------------------------------------ fields
    def receptive_fields(self) -> dict:
        """Receptive fields (pixels × units) of both hidden layers.

        Returns
        -------
        dict
            ``{1: W⁽¹⁾, 2: W⁽¹⁾W⁽²⁾}``, copies of shape (N_0, units), the first
            :data:`MAX_FIELDS` units of each layer.
        """
        with self._lock:
            W1, W2 = self.dbm.W[0], self.dbm.W[1]
            return {1: np.array(W1[:, :MAX_FIELDS]), 2: (W1 @ W2[:, :MAX_FIELDS])}

    def _take_snapshot(self) -> dict:
        f = self.receptive_fields()
        self._n_snapshots += 1
        self.snapshot = {"id": self._n_snapshots, "kind": "dbm", "epoch": self.epoch,
                         "updates": self.updates, "phase": self.phase, "fields1": f[1],
                         "fields2": f[2]}
        return self.snapshot

    def model_copy(self) -> DBM:
        """A consistent copy of the current DBM (taken under the training lock).

        Returns
        -------
        DBM
            A copy of the machine as it is now (during pretraining: the layers trained so far).
        """
        with self._lock:
            return self.dbm.copy()
