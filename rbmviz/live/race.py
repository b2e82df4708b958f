"""Several algorithms racing on a background thread — the engine of the explorer.

:class:`Race` trains one :class:`~rbmviz.runs.Run` per algorithm, all from the same initial
parameters and the same data, on a thread of its own, and hands batches of records plus a
snapshot of the models (receptive fields, chain samples, the distribution over patterns) to
a sink callback at most ``max_updates_per_second`` times per second.  It knows nothing of
Panel or Bokeh: the app's sink schedules the update on the document's event loop.

Controls: :meth:`Race.start`, :meth:`Race.pause`, :meth:`Race.step`, :meth:`Race.stop`;
hyper-parameters that an algorithm can change between updates (learning rate, k, momentum,
weight decay) apply at the next update via :meth:`Race.update_settings`; everything else
(data, model size, seeds, the set of algorithms) needs a new race.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import param

from .. import algorithms as _algorithms
from .. import evaluate as _evaluate
from ..runs import Run, RunDiverged
from ..evaluate.metrics import METRICS
from ..bounds import parameters_doc
from ..presets import for_dataset
from ..settings import (DataSettings, ModelSettings, TrainSettings, algorithm_knobs, build_model,
                        dataset_knobs, from_dict, live_knobs, load_data, to_dict)
from .loop import BackgroundLoop

#: records kept as dicts before they are compacted into a DataFrame chunk
RECORD_CHUNK = 2000
#: seconds of training per algorithm and point for large models (``Run(max_seconds=...)``):
#: a point of every running algorithm takes about ``POINT_SECONDS`` in all, so Pause acts
#: within a second and the curves move several times a second
POINT_SECONDS = 0.15
#: share of the wall time a large model's race spends evaluating (``Run(eval_budget=...)``;
#: more than a batch run's 10 %: a live curve needs points).  On binary MNIST, 784×500, CD-1
#: and PCD-1 in Chromium on 2 cores (``python -m bench.bench_explorer --race mnist``): 0.15
#: streams ~7 points/s per curve at ~140 updates/s per rule; 0.25 ~9.6 points/s at ~100
#: updates/s; 0.10 ~5 points/s
LIVE_EVAL_BUDGET = 0.15


def live_knob_names(algorithms: Iterable[str]) -> tuple[str, ...]:
    """The knobs at least one of ``algorithms`` accepts while running.

    The race tab keeps these widgets live (a change reaches the running rules at their next
    update) and marks every other knob "press Reset".

    Parameters
    ----------
    algorithms : iterable of str
        Names of training rules (:func:`rbmviz.algorithms.names`).

    Returns
    -------
    tuple of str
        The union of the rules' ``LIVE_KNOBS``, in the order first met.
    """
    out: dict[str, None] = {}
    for name in algorithms:
        out.update(dict.fromkeys(live_knobs(name)))
    return tuple(out)


#: the rules that split their Gibbs budget k into d inner steps of K′ Gibbs steps (k = d·K′)
DC_RULES = ("sdcp", "csdcp")


def rule_title(algorithm: _algorithms.Algorithm) -> str:
    """The name a student reads for a running rule, with its Gibbs budget.

    The race tab's legends and plot titles use it: ``"CD-12"``, ``"PCD-1"``,
    ``"centered gradient (k = 12)"``, ``"S-DCP (k = d·K′ = 3·4)"``, ``"TAP"``.

    Parameters
    ----------
    algorithm : rbmviz.algorithms.Algorithm
        A built rule (its current settings are read).

    Returns
    -------
    str
        The rule's label with its current ``k`` (and ``d``, ``K′`` for the S-DCP rules).
    """
    label = algorithm.label or algorithm.name
    k = getattr(algorithm, "k", None)
    if k is None:
        return label
    if label.endswith("-k"):
        return f"{label[:-2]}-{k}"
    d, inner = getattr(algorithm, "d", None), getattr(algorithm, "k_inner", None)
    if algorithm.name in DC_RULES and d is not None and inner is not None:
        return f"{label} (k = d·K′ = {d}·{inner})"
    return f"{label} (k = {k})"


#: hyper-parameters some running algorithm accepts between updates (Algorithm.set_settings)
LIVE_KNOBS = live_knob_names(_algorithms.names())


class RaceSettings(param.Parameterized):
    """What the race tab shows and how fast it goes: knobs of the explorer, not of a run.

    The race tab's sidebar holds them next to the run settings
    (:class:`rbmviz.settings.DataSettings`, ``ModelSettings``, ``TrainSettings``); a
    :class:`Race` is built with their values.
    """

    algorithms = param.ListSelector(
        default=["cd", "pcd"], objects=_algorithms.names(),
        doc="The training rules that race each other from the same initial parameters.")
    x_axis = param.Selector(
        default="epoch", objects=["epoch", "gibbs_steps", "updates", "wall_time"],
        label="x axis", doc="Plot the curves against epochs, Gibbs steps per chain (compute), "
                            "parameter updates or seconds.")
    points_per_second = param.Integer(
        10, bounds=(1, 1000), softbounds=(1, 200), label="Points per second",
        doc="Evaluation points per algorithm per second at most (the pace of the race).  Small "
            "models: each point is `eval_every` epochs further on; large models: points are "
            "spaced so that evaluation takes at most 15 % of the time.")
    max_speed = param.Boolean(False, label="Full speed",
                              doc="Train as fast as the machine can (ignore the pace).")
    classroom = param.Boolean(False, label="Classroom mode",
                              doc="Hide advanced controls.")


RaceSettings.__doc__ = RaceSettings.__doc__.rstrip() + "\n\n" + parameters_doc(RaceSettings) + "\n"


class Race(BackgroundLoop):
    """Train one run per algorithm side by side on a background thread.

    The engine of the explorer's race tab (:mod:`rbmviz.app.race_tab`): every rule starts
    from the same initial parameters on the same data, and the tab draws the records and
    snapshots the race hands to its ``sink``.

    Parameters
    ----------
    data, model, train : DataSettings, ModelSettings, TrainSettings
        Copied at construction (later edits of these objects do not reach the race, except
        through :meth:`update_settings`).  ``train.algorithm`` is ignored: ``algorithms``
        says which rules race; each takes the knobs it accepts.
    algorithms : sequence of str
        The racing rules (names of :func:`rbmviz.algorithms.names`; duplicates dropped).
    sink : callable(records, snapshot), optional
        Called from the training thread with the new records (list of dicts, each with an
        ``algorithm`` key) and a :meth:`snapshot` dict.  Must be quick and thread-safe (the
        app schedules the real work on its event loop).
    on_error : callable(algorithm, message), optional
        Called when a run diverges (that run stops; the others go on) or the thread fails.
    threads : int
        Numba threads for this race's thread (cap it so several sessions share 2 cores).
    points_per_second : int
        Evaluation points per algorithm per second at most (the pace).
    max_speed : bool
        Ignore the pace: train as fast as the machine can.
    max_updates_per_second : float
        Upper bound on sink calls per second.
    focus : str, optional
        The rule whose weights and chains :meth:`snapshot` shows (default: the last one).

    Raises
    ------
    ValueError
        If ``algorithms`` is empty or names an unknown rule, or the settings cannot make a
        model and data (the message names the setting).
    """

    thread_name = "rbmviz-race"

    def __init__(self, data: DataSettings, model: ModelSettings, train: TrainSettings,
                 algorithms: Sequence[str] = ("cd", "pcd"), *,
                 sink: Callable[[list[dict], dict], None] | None = None,
                 on_error: Callable[[str | None, str], None] | None = None, threads: int = 1,
                 points_per_second: int = 40, max_speed: bool = False,
                 max_updates_per_second: float = 10.0, focus: str | None = None) -> None:
        if not algorithms:
            raise ValueError("algorithms is empty: choose at least one training rule to race")
        for name in algorithms:
            _algorithms.get(name)
        # plain copies of the values (not deepcopy: widgets may be watching the originals)
        self.data_settings, self.model_settings, self.train_settings = from_dict(
            to_dict(data, model, train))
        self.algorithms = list(dict.fromkeys(algorithms))
        self.sink, self.on_error = sink, on_error
        self._init_loop(threads=threads, max_updates_per_second=max_updates_per_second)
        self.points_per_second = points_per_second
        self.max_speed = max_speed
        self.focus = focus if focus in self.algorithms else self.algorithms[-1]
        self.train_data, self.test_data = load_data(self.data_settings)
        rbm0 = build_model(self.model_settings, self.train_data)
        d = self.data_settings
        preset = for_dataset(d.dataset, **{k: getattr(d, k) for k in dataset_knobs(d.dataset)
                                           if k in ("D", "N", "B", "d")})
        self.image_shape = tuple(preset["image_shape"])
        if int(np.prod(self.image_shape)) != rbm0.n_visible:
            self.image_shape = (1, rbm0.n_visible)
        self.exact = _evaluate.exact_feasible(rbm0, 20)
        toy = self.test_data is self.train_data or np.array_equal(self.test_data, self.train_data)
        if self.exact:
            self.metric = "train_ll" if toy else "test_ll"
        else:
            self.metric = "spl"
        self.metric_label = METRICS[self.metric].label
        if self.metric == "train_ll":
            self.metric_label = "exact log-likelihood of the complete pattern set (nats)"
        metrics = [self.metric, "recon_error", "weight_norm"]
        t = self.train_settings
        # small models: a point every `eval_every` epochs (exact evaluation is cheap); large
        # ones: spacing on a time budget, records within epochs, each next() time-bounded
        self.auto_spacing = not self.exact
        spacing = (dict(eval_every="auto", eval_budget=LIVE_EVAL_BUDGET,
                        max_seconds=POINT_SECONDS / len(self.algorithms))
                   if self.auto_spacing else dict(eval_every=t.eval_every))
        self.runs: dict[str, Run] = {}
        for name in self.algorithms:
            kw = {n: getattr(t, n) for n in algorithm_knobs(name)}
            self.runs[name] = Run(rbm0.copy(), self.train_data, name, epochs=None,
                                  batch_size=t.batch_size, max_weight=t.max_weight,
                                  metrics=metrics, pl_rows=500,
                                  test_data=None if self.metric != "test_ll" else self.test_data,
                                  keep_records=False, **spacing, **kw)   # the race keeps the stream
        self.n_batches = self.runs[self.algorithms[0]].n_batches
        self._progress: dict[str, float] = {name: 0.0 for name in self.algorithms}
        self.failed: dict[str, str] = {}
        self._recent: list[dict] = []       # newest records, as dicts
        self._chunks: list = []             # older records, compacted into DataFrames
        self._snapshot_seed = 0
        p_data = None
        if rbm0.n_visible <= 16:
            idx = (self.train_data.astype(np.int64) << np.arange(rbm0.n_visible - 1, -1, -1)).sum(1)
            p_data = np.bincount(idx, minlength=2 ** rbm0.n_visible) / len(idx)
        self.p_data = p_data

    # ------------------------------------------------------------------ state
    @property
    def epoch(self) -> float:
        """Epochs of the furthest run at its latest record (a fraction within an epoch)."""
        return max(self._progress.values())

    @property
    def active(self) -> list[str]:
        """The racing rules that have not diverged, in race order."""
        return [n for n in self.algorithms if n not in self.failed]

    @property
    def finished(self) -> bool:
        """All runs diverged, or the target ``epochs`` of the train settings is reached."""
        target = self.train_settings.epochs
        return not self.active or (target is not None and target > 0 and self.epoch >= target)

    # ------------------------------------------------------------------ controls
    def update_settings(self, **changes: object) -> dict:
        """Apply live knobs to every running algorithm that takes them.

        The race tab calls it when a student moves a live widget (each rule's
        ``LIVE_KNOBS``: learning rate, k, momentum, weight decay, S-DCP's ``k_inner`` ...);
        the changes take effect at the next update.

        Parameters
        ----------
        **changes
            New knob values by name.

        Returns
        -------
        dict
            ``{algorithm: {knob: value}}``: the changes applied per algorithm.

        Raises
        ------
        ValueError
            If a knob is one no racing rule changes while running (it needs a new race).
        """
        allowed = live_knob_names(self.algorithms)
        bad = sorted(set(changes) - set(allowed))
        if bad:
            raise ValueError(f"{bad} cannot change during this race (press Reset); live knobs: "
                             f"{list(allowed)}")
        applied = {}
        with self._lock:
            for name, run in self.runs.items():
                ok = {k: v for k, v in changes.items() if k in live_knobs(name)}
                if ok:
                    run.algorithm.set_settings(**ok)
                    applied[name] = ok
            for key, value in changes.items():
                if key in self.train_settings.param:
                    setattr(self.train_settings, key, value)
        return applied

    # ------------------------------------------------------------------ the loop
    def _pace(self):
        return None if self.max_speed else 1.0 / max(self.points_per_second, 1)

    def _report_failure(self, message: str) -> None:
        if self.on_error:
            self.on_error(None, message)

    def _deliver(self, batch) -> None:
        with self._lock:
            snap = self.snapshot()
        if self.sink:
            self.sink(batch, snap)

    def _advance(self) -> list[dict]:
        new = []
        with self._lock:
            for name in self.active:
                run = self.runs[name]
                try:
                    rec = next(run)
                except RunDiverged as err:
                    self.failed[name] = str(err)
                    if self.on_error:
                        self.on_error(name, str(err))
                    continue
                rec = dict(rec, algorithm=name)
                self._progress[name] = float(rec["epoch"])
                new.append(rec)
            self._recent.extend(new)
            if len(self._recent) >= RECORD_CHUNK:   # ~100 bytes a record instead of ~1 kB
                self._chunks.append(pd.DataFrame.from_records(self._recent))
                self._recent = []
            self._pending.extend(new)
        return new

    # ------------------------------------------------------------------ views
    def snapshot(self, n_samples: int = 36) -> dict:
        """Copies of what the race tab's views show.

        Parameters
        ----------
        n_samples : int
            Chain samples to include at most.

        Returns
        -------
        dict
            ``focus`` (the rule shown), ``W`` of the focus rule, ``samples`` of its Gibbs
            chains (persistent chains, or ``k`` steps from training rows for CD), ``epoch``
            and ``failed`` per rule; for models with at most 16 visible units also
            ``p_data`` and every running rule's ``p_models[name]`` over all patterns
            (``p_model`` is the focus rule's).
        """
        name = self.focus if self.focus in self.runs else self.algorithms[0]
        run = self.runs[name]
        rbm = run.rbm
        chains = getattr(run.algorithm, "chains", None)
        if chains is not None and len(chains):
            samples = np.array(chains[:n_samples], dtype=np.float64)
        else:
            rows = self.train_data[: n_samples]
            self._snapshot_seed += 1
            samples = rbm.gibbs(rows, k=max(1, getattr(run.algorithm, "k", 1)),
                                seed=self._snapshot_seed)
        snap = {"focus": name, "W": rbm.W.astype(np.float64), "samples": samples,
                "epoch": {n: r.epoch for n, r in self.runs.items()},
                "failed": dict(self.failed)}
        if self.p_data is not None and name not in self.failed:
            # every racing rule's distribution over all patterns, next to the data's
            snap["p_models"] = {n: _evaluate.visible_distribution(r.rbm)
                                for n, r in self.runs.items() if n not in self.failed}
            snap["p_model"] = snap["p_models"][name]
            snap["p_data"] = self.p_data
        return snap

    @property
    def n_records(self) -> int:
        """Records kept so far, over all rules."""
        return sum(len(c) for c in self._chunks) + len(self._recent)

    def frame(self) -> pd.DataFrame:
        """All records so far, for the race tab's download and summary table.

        Returns
        -------
        pandas.DataFrame
            One row per record (an ``algorithm`` column names the rule); empty before the
            first record.
        """
        with self._lock:
            parts = self._chunks + ([pd.DataFrame.from_records(self._recent)] if self._recent else [])
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
