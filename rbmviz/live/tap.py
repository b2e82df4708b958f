"""A TAP machine trained live on binary digits, streaming its TAP log-likelihood, its number of
unique TAP solutions and, every few epochs, a snapshot of its free-energy landscape — the
engine of the explorer's "TAP landscape" tab (Tramel et al. 2018, Sec. VII; Figs. 3, 5, 6, 8).

:class:`TapRace` follows :class:`rbmviz.live.bias.BiasRace` (a
:class:`~rbmviz.live.loop.BackgroundLoop`): it owns one binary RBM trained with
``algorithm="tap"`` (Alg. 2, tap.md B.7: mini-batches of M rows, K TAP solutions per batch,
gradients eqs. 40–42, ℓ2 regulariser ε, momentum η), advances it by ``updates_per_point``
mini-batch updates per point and hands batches of records

    {epoch, updates, tap_ll, n_unique, n_not_converged, n_eval}

to ``sink(records, snapshot)`` at most ``max_updates_per_second`` times a second.
``tap_ll`` is the per-unit TAP log-likelihood, eq. (39) divided by ``N_v + N_h``, on a fixed
evaluation subset of ``eval_rows`` training rows (solutions started from those rows,
eqs. 37–38, uniform average over the unique converged ones, as in Fig. 3); ``n_unique`` and
``n_not_converged`` count the TAP solutions of that same solve.  No Panel import.

Every ``landscape_every`` epochs (and once for the initial model) the race takes a
:meth:`landscape snapshot <TapRace.snapshot>`: Alg. 1 from ``landscape_rows`` data
initialisations, the unique solutions, their free energies 𝔽_RBM (eq. 36) and histogram
(Fig. 5), and a 2-D Isomap embedding of the unique solutions (Fig. 6/7).  ``sink`` always
receives the latest snapshot (a dict with an ``id``; the receiver redraws when the id changes).

Isomap — fitted once, on the data, then only ``transform``: the map is fitted at the first
snapshot on the ``landscape_rows`` initialisation images (Fig. 7's construction) and every
snapshot embeds its unique solutions' visible means ``a^v`` with that same fitted map.  Why:
comparable maps across epochs are the point of Fig. 6, and live we cannot fit on "the last
epoch" as the paper does; the data are fixed, always give enough distinct points (at the first
epochs there is often a single TAP solution, on which no Isomap can be fitted), and do not move
while the model learns, so a point's position means the same thing at every epoch.  On demand,
:meth:`TapRace.refit_map` refits it the paper's way (Fig. 6: on the current unique solutions'
``[a^v, a^h]``); later snapshots then use that map, again fitted once.

Counting tolerance: the solves whose solutions are counted or averaged (the evaluation solve
and the landscape) stop when the MSE between successive iterates is below
:data:`COUNT_TOL` = 1e-12, not the paper's 1e-8.  With damping 0.5 a run stopped at 1e-8 can
still be ~1e-3 away from its fixed point in some units — more than the 1e-4 de-duplication
tolerance of ``rbmviz.tap.unique_solutions`` — so one solution reached from 300 images was
counted as ~290 (measured on the digits at initialisation; 1 at 1e-10 and below).  Those solves
run undamped first and damped only where the undamped iteration does not converge
(:func:`rbmviz.tap.solve_counted`, as the paper-scale reproduction does): to 1e-12 that took
7 iterations instead of 22 on a 784×100 machine, and the evaluation's share of the tab's time
fell from ~37 % to ~13 % (with :data:`LIVE_EVAL_BUDGET` 0.1).  Training keeps Alg. 2's 1e-8 (:data:`TOL`) and its damping.

Defaults: Table 1's binary-MNIST settings (M = K = 100, ε = 0.001, η = 0.5), except
γ = 0.1 (Table 1's 0.005 is meant for 600 updates an epoch over 100 epochs; a live run of a
few thousand images needs a larger step to move within a minute) and heavy-ball momentum
(``momentum_form``; the momentum exactly as Alg. 2 prints it, ``+ η ΔW(t−1)`` without γ, is
a knob: at η = 0.5 it made the weights jump and the TAP log-likelihood stall in our runs),
and the training solves' matrix products in float32 (``products``: ~1.5× faster solves,
fixed points moved by ~1e-4, below what a run stopped at 1e-8 resolves; the counted solves
stay float64).

Denoising (Fig. 8–9) is a pure function of ``(p, digit index)`` and the *current* model,
computed on demand by :meth:`TapRace.denoise` on the caller's thread (the model parameters
are copied under the race's lock, so the training thread only waits for the copy): one held-out
digit, its noisy version through a binary symmetric channel (nested noise in ``p`` for a fixed
digit), and the OPE, 1-NN and TAP estimates with their MCC.

Controls: :meth:`start`, :meth:`pause`, :meth:`step`, :meth:`stop`; :data:`LIVE_TAP_KNOBS`
change between points via :meth:`update_settings`; the data, the model size, M, the seed and
the evaluation/landscape sets need a new race.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import algorithms as _algorithms
from .. import checkpoints as _checkpoints
from .._seeds import stream_seed
from ..errors import RunDiverged
from ..model import RBM
from ..runs import Run
from ..tap.denoising import corrupt, data_marginals, mcc, nearest_neighbour, ope, tap_means
from ..tap.inference import damping_ladder, solve_counted, unique_solutions
from ..tap.landscape import SolutionMap, free_energy_histogram, solution_features
from .tap_base import (COUNT_TOL, LIVE_DEFAULTS, LIVE_EVAL_BUDGET, LIVE_FLOOR,  # noqa: F401
                       LIVE_METRICS, LIVE_TAP_KNOBS, MAX_ITER, MAX_WEIGHT, N_TEST, PACE_KNOBS,
                       POINT_SECONDS, RECORD_FIELDS, TAP_CHECKPOINTS, TAP_DATASETS, TAP_MODELS,
                       TOL, TapLoop, TapSettings, mnist_available, refuse_model_change, tap_data)

# TapSettings stays importable from here but is documented once, in tap_base (and rbmviz.live)
__all__ = ["TapRace", "TAP_DATASETS", "TAP_MODELS", "LIVE_TAP_KNOBS", "PACE_KNOBS",
           "RECORD_FIELDS", "tap_data", "mnist_available"]


class TapRace(TapLoop):
    """Train one binary TAP machine (Alg. 2) on a background thread; stream its TAP
    log-likelihood, solution counts and landscape snapshots.

    Parameters
    ----------
    settings : TapSettings, optional
        ``model="rbm"``; copied at construction (the live knobs change through
        :meth:`update_settings`); default ``TapSettings()``.
    sink : callable, optional
        ``sink(records, snapshot)``, called from the thread with a list of record dicts
        (:data:`RECORD_FIELDS`) and the latest landscape snapshot (or None); must be quick and
        thread-safe (it may block briefly for back-pressure).
    on_error, threads, max_updates_per_second, max_points
        As for :class:`~rbmviz.live.bias.BiasRace`: the failure callback, the Numba threads,
        the most sink calls per second and the records after which the race idles.

    Raises
    ------
    ValueError
        For inconsistent settings: a model other than ``"rbm"``, K > M, M larger than the
        training set, or a ``start_from`` checkpoint whose size does not fit the images.
    rbmviz.datasets.DatasetNotFoundError
        When the MNIST files are missing (a ``FileNotFoundError``).
    """

    thread_name = "rbmviz-tap"

    def __init__(self, settings: TapSettings | None = None, *,
                 sink: Callable[[list[dict], dict | None], None] | None = None,
                 on_error: Callable[[str], None] | None = None, threads: int = 1,
                 max_updates_per_second: float = 10.0, max_points: int = 100_000) -> None:
        model = (settings if settings is not None else TapSettings()).model
        if model != "rbm":
            raise ValueError(f"TapRace trains the TAP RBM (model 'rbm'); model {model!r} is "
                             f"rbmviz.live.tap_dbm.DBMTapRace (tap_engine picks the right one)")
        rng, eval_idx = self._init_tap(settings, sink=sink, on_error=on_error, threads=threads,
                                       max_updates_per_second=max_updates_per_second,
                                       max_points=max_points)
        s, n = self.settings, len(self.data)
        self.landscape_data = self.data[np.sort(rng.permutation(n)[: min(s.landscape_rows, n)])]
        self.start_info = None
        if s.start_from != "none":
            rbm, self.start_info = _checkpoints.load(s.start_from)
            if rbm.n_visible != self.data.shape[1]:
                raise ValueError(f"start_from {s.start_from!r} is a {rbm.n_visible}-pixel model; "
                                 f"the {s.dataset} images have {self.data.shape[1]} pixels "
                                 f"(choose binary MNIST)")
            s.n_hidden = rbm.n_hidden
            self.rbm = RBM(rbm.n_visible, rbm.n_hidden, init="zeros")
            self.rbm.W[...], self.rbm.b[...], self.rbm.c[...] = rbm.W, rbm.b, rbm.c
        else:
            self.rbm = RBM(self.data.shape[1], s.n_hidden, init="normal", scale=1e-3,
                           seed=stream_seed(s.seed, "init"), data=self.data)
        # the run loop measures the first `pl_rows` rows: the evaluation rows go first (the
        # epochs are shuffled, so the order of the array does not matter for training)
        rest = np.setdiff1d(np.arange(n), eval_idx)
        ordered = self.data[np.concatenate([eval_idx, rest])]
        self.run = Run(self.rbm, ordered, "tap", epochs=None, batch_size=s.batch_size,
                       seed=s.seed, metrics=[m.name for m in LIVE_METRICS],
                       pl_rows=len(eval_idx), max_weight=MAX_WEIGHT, dtype=None,
                       keep_records=False, eval_budget=LIVE_EVAL_BUDGET,
                       max_seconds=POINT_SECONDS, **self._spacing(), **self._algorithm_settings())
        # Pause (or Stop) ends the loop thread's point at the next training chunk, not after
        # POINT_SECONDS (a Step, from another thread while paused, trains a whole point)
        self.run.yield_when = self._pause_asked
        self.algorithm = self.run.algorithm
        self.n_batches = self.run.n_batches
        self.updates = 0
        self._epoch = 0.0
        self.snapshots: list[dict] = []
        self.snapshot: dict | None = None
        self.solution_map = None          # rbmviz.tap.landscape.SolutionMap, fitted once
        self.map_kind: str | None = None  # "data" (Fig. 7 fit set) or "solutions" (Fig. 6)
        self.map_epoch: float | None = None
        self._refit_requested = False
        self._next_landscape = 0.0
        self._marginals = None

    # ------------------------------------------------------------------ state
    @property
    def epoch(self) -> float:
        """Passes over the training rows at the latest record (updates / batches per epoch)."""
        return self._epoch

    def _spacing(self) -> dict:
        """Record spacing of the run: every ``updates_per_point`` updates, or by time."""
        upp = self.settings.updates_per_point
        return {"record_every_updates": upp} if upp is not None else {"eval_every": "auto"}

    def _algorithm_settings(self) -> dict:
        s = self.settings
        wanted = {n: getattr(s, n) for n in LIVE_DEFAULTS}
        wanted.update(tol=TOL, max_iter=MAX_ITER)
        ok = set(_algorithms.accepted_settings("tap"))
        return {k: v for k, v in wanted.items() if k in ok}

    # ------------------------------------------------------------------ controls
    def _settings_changed(self, changes: dict) -> None:
        algo = {k: v for k, v in self._algorithm_settings().items()
                if k in changes and k != "seed"}
        if algo:
            self.algorithm.set_settings(**algo)
        if "updates_per_point" in changes:
            upp = changes["updates_per_point"]
            self.run.record_every_updates = upp
            self.run.eval_every = "auto" if upp is None else self.run.eval_every

    def refit_map(self) -> None:
        """Refit the Isomap on the unique solutions (``[a^v, a^h]``, Fig. 6) of the next
        snapshot, which is taken at the next point; later snapshots reuse that map.

        An Isomap needs at least 3 points: with fewer unique solutions the request stays
        pending (the snapshot says ``refit_pending``) until a snapshot has enough.
        """
        with self._lock:
            self._refit_requested = True
            self._next_landscape = self.epoch

    # ------------------------------------------------------------------ the loop
    def _advance_point(self) -> list[dict]:
        """One point: ``next(self.run)`` — training for at most :data:`POINT_SECONDS` (or
        ``updates_per_point`` updates), then the run loop's evaluation (the metrics
        :data:`LIVE_METRICS`: one TAP solve of the evaluation rows) — and a landscape
        snapshot when one is due.  The lock ``_lock`` is held while the run advances
        (:meth:`model_copy` waits for it, at most about a point)."""
        s = self.settings
        with self._lock:
            if self.failed is not None:
                return []
            try:
                rec = next(self.run)
            except RunDiverged as err:
                return self._fail(f"TAP training diverged: {err}; lower the learning rate "
                                  f"γ and press Reset")
            except (FloatingPointError, ArithmeticError, ValueError) as err:
                return self._fail(f"TAP training diverged at update {self.updates + 1}: {err}")
            self.updates = int(rec["updates"])
            self._epoch = self.updates / self.n_batches
            rec = {"epoch": self._epoch, "updates": self.updates,
                   "tap_ll": float(rec["tap_ll_per_unit"]),
                   "n_unique": int(rec["tap_unique"]),
                   "n_not_converged": int(rec["tap_not_converged"]),
                   "n_eval": len(self.eval_data)}
        if not np.isfinite(rec["tap_ll"]):
            return self._fail(f"TAP log-likelihood is {rec['tap_ll']} at update "
                              f"{self.updates}: the run diverged; press Reset")
        if self.epoch >= self._next_landscape:
            self._take_snapshot()
            every = s.landscape_every
            self._next_landscape = (np.floor(self.epoch / every + 1e-9) + 1) * every
        with self._lock:
            self.records.append(rec)
            self._pending.append(rec)
        return [rec]

    # ------------------------------------------------------------------ landscape
    def _take_snapshot(self) -> dict:
        """Alg. 1 from the ``landscape_rows`` data initialisations; unique solutions, their free
        energies (eq. 36) and histogram (Fig. 5), and their Isomap embedding (Fig. 6/7)."""
        s = self.settings
        sol = solve_counted(self.rbm, self.landscape_data, order=s.order,
                            damping=damping_ladder(s.damping, floor=LIVE_FLOOR), tol=COUNT_TOL, max_iter=MAX_ITER)
        uniq = unique_solutions(sol)
        reps = np.asarray(uniq.representatives, dtype=np.int64)
        fe = np.asarray(uniq.free_energy, dtype=np.float64)
        if self._refit_requested and len(reps) >= 3:
            self.solution_map = SolutionMap().fit(solution_features(sol, reps))
            self.map_kind, self.map_epoch = "solutions", self.epoch
            self._refit_requested = False
        elif self.solution_map is None:
            self.solution_map = SolutionMap().fit(self.landscape_data)
            self.map_kind, self.map_epoch = "data", self.epoch
        if self.map_kind == "solutions":
            feats = solution_features(sol, reps)
        else:
            feats = np.asarray(sol.av, dtype=np.float64)[reps]
        if len(reps):
            xy = self.solution_map.transform(feats)
        else:
            xy = np.zeros((0, 2))
        bg = self.solution_map.embedding_
        if len(fe):
            edges, heights = free_energy_histogram(fe, bins=min(30, max(5, len(fe))), density=False)
        else:
            edges, heights = np.zeros(0), np.zeros(0)
        snap = {"id": len(self.snapshots) + 1, "epoch": self.epoch, "updates": self.updates,
                "n_init": len(sol), "n_converged": int(sol.n_converged),
                "n_unique": int(uniq.n_unique), "free_energy": fe,
                "counts": np.asarray(uniq.counts),
                "mean_free_energy": float(fe.mean()) if len(fe) else float("nan"),
                "x": np.asarray(xy[:, 0], dtype=np.float64),
                "y": np.asarray(xy[:, 1] if xy.shape[1] > 1 else np.zeros(len(xy))),
                "background_x": np.asarray(bg[:, 0], dtype=np.float64),
                "background_y": np.asarray(bg[:, 1] if bg.shape[1] > 1 else np.zeros(len(bg))),
                "hist_edges": np.asarray(edges), "hist_heights": np.asarray(heights, dtype=float),
                "map": self.map_kind, "map_epoch": self.map_epoch,
                "refit_pending": self._refit_requested,
                "solutions": np.asarray(sol.av, dtype=np.float64)[reps[:16]]}
        self.snapshots.append({k: v for k, v in snap.items() if k != "solutions"})
        self.snapshot = snap
        return snap

    # ------------------------------------------------------------------ denoising
    def model_copy(self) -> RBM:
        """A consistent copy of the current model (taken under the training lock).

        Returns
        -------
        RBM
            A new machine with copies of the current ``W``, ``b`` and ``c``.
        """
        with self._lock:
            W, b, c = (a.copy() for a in self.rbm.params)
            rbm = RBM(self.rbm.n_visible, self.rbm.n_hidden, init="zeros")
        rbm.W[...], rbm.b[...], rbm.c[...] = W, b, c
        return rbm

    def denoise(self, p: float, index: int, *, noise_seed: int = 0) -> dict:
        """Denoise held-out digit ``index`` seen through a binary symmetric channel with flip
        probability ``p`` (Sec. VII.4.1, eqs. 43–47 corrected, errata seed 002 #3–4) with the
        current model.

        The noise of a digit is fixed by ``(noise_seed, index)`` and nested in ``p`` (a bit
        flipped at ``p`` is flipped at every larger ``p``), so moving a p slider adds flips.
        The estimates: OPE, the pixel-by-pixel posterior from the training marginals (eq. 46,
        corrected); 1-NN, the closest training image; TAP, Alg. 1 with the channel's evidence
        added to the visible field (eq. 47), thresholded at 0.5.

        Parameters
        ----------
        p : float
            Flip probability of the channel, in [0, 0.5].
        index : int
            Row of the held-out images ``test``.
        noise_seed : int
            Seed of the channel's noise (with ``index``).

        Returns
        -------
        dict
            ``clean``, ``noisy``, ``ope``, ``nn``, ``tap`` (binary images of
            ``image_shape``), ``tap_means`` (posterior means), ``mcc`` (method → Matthews
            correlation coefficient against the clean digit), ``p``, ``index``, ``label``,
            ``tap_converged``, ``epoch``.

        Raises
        ------
        ValueError
            For an ``index`` that is not a row of ``test``.
        """
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
                or not 0 <= index < len(self.test):
            raise ValueError(f"index must be an integer in [0, {len(self.test)}), got {index!r}")
        if self._marginals is None:
            self._marginals = data_marginals(self.data)
        x = self.test[index:index + 1]
        y = corrupt(x, p, seed=np.random.default_rng([int(noise_seed), int(index)]))
        m = self._marginals
        rbm = self.model_copy()
        epoch = self.epoch
        s = self.settings
        means_ope = ope(y, p, m)
        est_nn = nearest_neighbour(y, self.data)
        means_tap, sol = tap_means(rbm, y, p, m, order=s.order, damping=s.damping, tol=TOL,
                                   max_iter=MAX_ITER, details=True)
        if p == 0.0:
            est_ope, est_tap = y.copy(), y.copy()
        else:
            est_ope = (means_ope > 0.5).astype(np.float64)
            est_tap = (means_tap > 0.5).astype(np.float64)
        shape = self.image_shape
        out = {"p": float(p), "index": int(index), "label": int(self.test_labels[index]),
               "epoch": epoch, "clean": x[0].reshape(shape), "noisy": y[0].reshape(shape),
               "ope": est_ope[0].reshape(shape), "nn": est_nn[0].reshape(shape),
               "tap": est_tap[0].reshape(shape), "tap_means": means_tap[0].reshape(shape),
               "tap_converged": bool(sol is None or np.all(sol.converged))}
        out["mcc"] = {k: float(mcc(out[k].ravel(), x[0])) for k in ("noisy", "ope", "nn", "tap")}
        return out
