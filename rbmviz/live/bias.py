"""A small RBM trained with the exact expected CD-k update on a background thread, streaming
its CD bias and the bounds on it — the engine of the explorer's "CD bias" tab.

:class:`BiasRace` follows :class:`rbmviz.live.race.Race`: it owns one tiny RBM (at most 10 visible
and 10 hidden units, as :mod:`rbmviz.bias` requires), advances it by
``iterations_per_point`` exact expected-CD-k iterations per point (no sampling:
:func:`rbmviz.bias.train_expected_cd`), and hands batches of records

    {iteration, k, bias, bound, bd_bound, distance, mixing, one_minus_mixing, delta,
     log_likelihood, weight_norm}

to ``sink(records)`` at most ``max_updates_per_second`` times per second.  ``bias`` is the
exact maximal bias over all parameters of the batch update, ``bound`` Fischer & Igel's
Theorem 4 (``distance · mixing``), ``bd_bound`` the Bengio–Delalleau-type stand-in of
:func:`rbmviz.bias.bengio_delalleau_bound`.  No Panel import.

**Why not** :class:`rbmviz.runs.Run`: the other engines drive the run loop; this one is its
documented equivalent for the CD-bias experiment.  There is no sampling and no mini-batch:
each iteration is the exact expected CD-k update over the full data set, done inside one
fused Numba kernel (:func:`rbmviz.bias.train_expected_cd`) that also computes, at the
iterations asked for, the exact quantities of the record (bias, bounds, log-likelihood, weight
norm) — a metrics registry cannot reach inside it.  It honours the same contract as ``Run``
in a live engine: records as dicts, time-bounded points (``chunk="auto"`` bounds each kernel
call to ~0.25 s, so Pause acts within a second), divergence raised as
:class:`rbmviz.errors.RunDiverged` naming the quantity and stopping this race only, and the
same background loop (:class:`~rbmviz.live.loop.BackgroundLoop`).

Controls: :meth:`start`, :meth:`pause`, :meth:`step`, :meth:`stop`; ``k``, ``learning_rate``
and ``weight_decay`` change between points via :meth:`update_settings`; the dataset, the
hidden units and the seed need a new race.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import param

from .. import datasets
from ..algorithms.knobs import GibbsKnobs as _GibbsKnobs
from ..bounds import narrowed, parameters_doc
from ..settings import ModelSettings as _ModelSettings
from ..bias import train_expected_cd
from ..model import RBM
from ..runs import RunDiverged
from .loop import SettingsLoop


#: knobs the running race accepts between points
LIVE_BIAS_KNOBS = ("k", "learning_rate", "weight_decay")
#: knobs of the view (pace), applied at once
PACE_KNOBS = ("iterations_per_point", "points_per_second")
#: the fields of a record
RECORD_FIELDS = ("iteration", "k", "bias", "bound", "bd_bound", "distance", "mixing",
                 "one_minus_mixing", "delta", "log_likelihood", "weight_norm")

#: dataset name → (label, builder); all with at most 10 visible units
BIAS_DATASETS = {
    "diag": ("Diag (d = 6)", lambda: datasets.diag(6)),
    "ball_1d": ("1DBall (d = 6)", lambda: datasets.ball_1d(6)),
    "bars_and_stripes_2": ("Bars & Stripes 2×2", lambda: datasets.bars_and_stripes(2)),
    "bars_and_stripes_3": ("Bars & Stripes 3×3", lambda: datasets.bars_and_stripes(3)),
    "shifting_bar": ("Shifting Bar (N = 6, B = 1)", lambda: datasets.shifting_bar(6, 1)),
}


def bias_data(name: str) -> np.ndarray:
    """The training set of a :data:`BIAS_DATASETS` entry, as 0/1 float64 rows.

    Parameters
    ----------
    name : str
        The data set's key in :data:`BIAS_DATASETS`, e.g. ``"diag"``.

    Returns
    -------
    numpy.ndarray
        The patterns, shape (n_patterns, n_visible), float64 zeros and ones; their empirical
        distribution is the p_e of the bias and its bounds.

    Raises
    ------
    ValueError
        For a name that is not in :data:`BIAS_DATASETS`.
    """
    if name not in BIAS_DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose from {list(BIAS_DATASETS)}")
    return np.asarray(BIAS_DATASETS[name][1](), dtype=np.float64)


class BiasSettings(param.Parameterized):
    """The knobs of the CD-bias experiment (Fischer & Igel 2011, exact expected CD-k).

    ``n_hidden``, ``k``, ``learning_rate``, ``weight_decay``, ``init_scale`` and ``seed`` are
    copies of their one declaration (:class:`rbmviz.settings.ModelSettings`,
    :class:`rbmviz.algorithms.knobs.GibbsKnobs`) with the tab's defaults and a narrower
    range (:func:`rbmviz.bounds.narrowed`; the sliders span that range): exact enumeration
    of both layers (2**(n_v + n_h) states) keeps the model at most 8 hidden units and k
    small, and the full-batch exact update takes steps η from 0.001 to 2.
    """

    dataset = param.Selector(default="diag", objects=list(BIAS_DATASETS),
                             doc="Training set (its empirical distribution p_e).")
    n_hidden = narrowed(_ModelSettings.param.n_hidden, default=6, low=2, high=8, softbounds=None,
                        doc_suffix=" Here 2 to 8: both layers are enumerated exactly.")
    k = narrowed(_GibbsKnobs.param.k, high=10, softbounds=None, doc_suffix=" Here 1 to 10 (live).")
    learning_rate = narrowed(_GibbsKnobs.param.learning_rate, low=0.001, high=2.0, softbounds=None,
                             doc_suffix=" Here the full-batch expected CD update, η in "
                                        "[0.001, 2] (live).")
    weight_decay = narrowed(_GibbsKnobs.param.weight_decay, high=0.1, softbounds=None,
                            label="Weight decay λ",
                            doc_suffix=" Here at most 0.1 (live).")
    init_scale = narrowed(_ModelSettings.param.init_scale, default=0.5, high=5.0, softbounds=None,
                          label="Initial weights U[−a, a]",
                          doc_suffix=" Here uniform weights U[−a, a], biases 0 (Fischer & "
                                     "Igel: a = 0.5), a at most 5.")
    seed = narrowed(_GibbsKnobs.param.seed, label="Seed",
                    doc_suffix=" Here the seed of the initial weights.")
    iterations_per_point = param.Integer(50, bounds=(1, 10_000), softbounds=(1, 500),
                                         label="Iterations per point",
                                         doc="Expected-CD iterations between two plotted points.")
    points_per_second = param.Integer(20, bounds=(1, 200), label="Points per second",
                                      doc="Pace of the stream.")


BiasSettings.__doc__ = BiasSettings.__doc__.rstrip() + "\n\n" + parameters_doc(BiasSettings)


class BiasRace(SettingsLoop):
    """Train one small RBM with exact expected CD-k on a background thread and stream the
    bias and its bounds.

    Parameters
    ----------
    settings : BiasSettings, optional
        The experiment's knobs, copied at construction (the live ones change through
        :meth:`update_settings`); default ``BiasSettings()``.
    sink : callable, optional
        ``sink(records)``, called from the thread with a list of record dicts
        (:data:`RECORD_FIELDS`); must be quick and thread-safe (it may block briefly for
        back-pressure).
    on_error : callable, optional
        ``on_error(message)``, called when training diverges or the thread fails.
    threads : int
        Numba threads of the training thread.
    max_updates_per_second : float
        Upper bound on sink calls per second.
    max_points : int
        The race idles after this many records.
    """

    thread_name = "rbmviz-bias"
    settings_class = BiasSettings
    live_knobs = LIVE_BIAS_KNOBS
    pace_knobs = PACE_KNOBS
    record_fields = RECORD_FIELDS

    def __init__(self, settings: BiasSettings | None = None, *,
                 sink: Callable[[list[dict]], None] | None = None,
                 on_error: Callable[[str], None] | None = None, threads: int = 1,
                 max_updates_per_second: float = 10.0, max_points: int = 100_000) -> None:
        self._init_engine(settings, sink=sink, on_error=on_error, threads=threads,
                          max_updates_per_second=max_updates_per_second, max_points=max_points)
        self.data = bias_data(self.settings.dataset)
        self.rbm = RBM(self.data.shape[1], self.settings.n_hidden, init="uniform",
                       scale=self.settings.init_scale, seed=self.settings.seed)
        self.iteration = 0
        # the point at iteration 0 (the initial model), delivered with the first batch
        self._record_point(0)

    # ------------------------------------------------------------------ the loop
    def _deliver(self, batch) -> None:
        if self.sink:
            self.sink(batch)

    def _record_point(self, n) -> list[dict]:
        """Run ``n`` iterations (0: only measure) and record the parameters after them."""
        s = self.settings
        with self._lock:
            if self.failed is not None:
                return []
            try:
                frame = train_expected_cd(self.rbm, self.data, k=s.k, learning_rate=s.learning_rate,
                                          iterations=n, weight_decay=s.weight_decay,
                                          record_at=[n], chunk="auto" if n else 1)
            except RunDiverged as err:
                return self._fail(str(err))
            row = frame.iloc[-1]
            self.iteration += n
            rec = {"iteration": self.iteration, "k": int(s.k)}
            rec.update({f: float(row[f]) for f in RECORD_FIELDS[2:]})
            self.records.append(rec)
            self._pending.append(rec)
            return [rec]

    def _advance(self) -> list[dict]:
        return self._record_point(self.settings.iterations_per_point)
