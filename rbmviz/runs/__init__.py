"""A training run as a stream of metric records — the one loop every front end uses.

``Run`` is an iterator: each ``next(run)`` trains up to the next evaluation point and
returns a record (a dict); the dashboard pushes records into a HoloViews ``Buffer``, the
CLI into a CSV file, notebooks into a DataFrame (:func:`train`), sweeps into Dask futures.

A record holds ``algorithm``, ``epoch`` (completed epochs; a float such as ``3.25`` for a
record made within an epoch), ``updates``, ``gibbs_steps`` (per chain, cumulative — the
compute axis of Upadhya & Sastry's equal-compute comparisons), ``wall_time`` (seconds spent
inside this run: training plus evaluation) and the chosen metrics, computed by the metrics
registry :data:`rbmviz.evaluate.metrics.METRICS` (``train_ll``, ``test_ll``, ``spl``,
``pseudo_ll``, ``recon_error``, ``weight_norm``, ``ais_train_ll``, ``ais_test_ll``,
``tap_ll`` and any registered later).

**Evaluation on a budget.**  By default (``eval_every="auto"``) the run measures what an
evaluation costs and what an update costs, and spaces the records so that evaluation takes at
most ``eval_budget`` (10 %) of the wall time.  Small models record at epoch ends; when the
budget allows more than one record per epoch (large models, many mini-batches) records are
made within the epoch.  An explicit ``eval_every`` (epochs) or ``record_every_updates`` fixes
the positions instead.  A record is always made at epoch 0 and at the last epoch.
``run.metric_seconds`` holds each metric's cost at the last record, ``run.eval_time`` the
evaluation share of ``wall_time``.

**Default metrics** (``metrics="auto"``): the exact log-likelihood where enumeration is cheap
(smaller layer ≤ ``exact_max_bits``) plus the all-sites pseudo-likelihood, reconstruction
error and weight norm (all cheap there); otherwise
the stochastic pseudo-likelihood ``spl`` (a fixed random subset of sites and rows),
reconstruction error and weight norm; the all-sites ``pseudo_ll`` of a large model and AIS
only when asked.

**Float type.**  ``dtype="auto"`` trains a float32 working copy of a float64 model when the
model is large and exactness is not at stake (:func:`rbmviz.presets.default_dtype`: the
smaller layer has more than ``exact_max_bits`` units and ``n_visible · n_hidden`` ≥
:data:`rbmviz.presets.LARGE_MODEL`; Gibbs-sampling rules only); the model passed in is updated
from it at every record and when the run ends, stops or fails.  Pass ``dtype=None`` to train
in the model's own dtype.

**Interruption.**  Training runs in chunks of at most ~``chunk_seconds`` (0.25 s): Ctrl-C
takes effect after the current Numba call (≤ one chunk; the fused kernels of small models) or
at once between the products of the BLAS path (large models, any ``k``); :func:`train` then
raises :class:`rbmviz.errors.Interrupted` (a ``KeyboardInterrupt``) whose ``records`` are the
records finished so far and whose ``run`` holds the model as trained (an interrupted run is
not meant to be continued).  A caller iterating a :class:`Run` itself gets the plain
``KeyboardInterrupt``; the finished records are in ``run.records`` (``run.stop()`` copies the
working parameters into the model).  With
``max_seconds``, each ``next(run)`` returns within about that time (a record made early,
within the epoch) — for live front ends.

**Divergence.**  A run stops by raising :class:`rbmviz.errors.RunDiverged` (which quantity,
its value, when; ``records`` holds the records so far) when a parameter becomes NaN/inf or
exceeds ``max_weight``, when a parameter sits near that limit (≥ 90 % of ``max_weight``:
saturated units whose gradient vanished), or when a log-likelihood collapses — falls
more than ``max_ll_drop`` nats (default ``n_visible · log 2``, the entropy of the uniform
model) below both its best value so far and the uniform model's value.  The parameters are
checked after every training chunk, the log-likelihoods at every evaluation: those of the
recorded likelihood metrics and, whatever the metrics, that of the guard rows (quantity
``"ll_guard"``; binary models): up to :data:`GUARD_ROWS` fixed training rows (the first 0/1
rows of the ``spl`` subset), with the exact ``log Z`` where enumerating the smaller layer costs
at most :data:`GUARD_EXACT_OPS`, otherwise with an upper bound of their log-likelihood (their
free energies against a lower bound of ``log Z`` from the most probable states that a few
deterministic sweeps and mean-field iterations find).  A bound that falls that far shows the
exact log-likelihood fell at least as far (while the best value is above the uniform model's);
on a diverged model the bound is within about a nat of the exact value.  The guard only reads
the model: seeded runs stay bit-identical.  ``max_ll_drop`` set very large turns the
likelihood checks off.

**Other models.**  An algorithm instance whose class names a ``model_type`` other than
:class:`~rbmviz.model.RBM` trains that kind of model through the same loop (the deep TAP
machine's joint phase, :class:`rbmviz.dbm.JointTAP` on a :class:`rbmviz.dbm.DBM`): the model
gives ``n_visible``, ``dtype``, ``params``, ``param_names``, ``layers``, ``units`` and
``copy()`` (what the loop reads of a model, :mod:`rbmviz.runs.models`); the records hold
the algorithm's fields (the registered metrics are an RBM's; with nothing to evaluate,
``eval_every="auto"`` records at epoch ends), the model is trained itself
(no working copy), its parameters are checked after every chunk (finite, below
``max_weight``) and :meth:`Run.state` / :meth:`Run.restore` continue it as an RBM's run.
``shuffle=`` (a caller's generator for the epochs' permutations) and ``remainder="drop"``
(batches of exactly ``batch_size`` rows) let a front door keep a stream of its own
(:func:`rbmviz.dbm.pretrain`, :class:`rbmviz.dbm.DBMTrainer`).

The package holds one job per module: :mod:`rbmviz.runs.loop` (:class:`Run`, :func:`train`:
set-up, training chunks, records), :mod:`rbmviz.runs.schedule` (mini-batch boundaries and
when the next record is due), :mod:`rbmviz.runs.guard` (the divergence checks and the
likelihood guard), :mod:`rbmviz.runs.state` (a run's state, to continue it later) and
:mod:`rbmviz.runs.models` (what they read of the model: layer sizes, unit types, parameter
names, couplings).
"""
from __future__ import annotations

from ..errors import Interrupted, RunDiverged
from ..evaluate.metrics import METRICS
from .guard import (GUARD_EXACT_OPS, GUARD_ROWS, GUARD_SWEEPS, PINNED_FRACTION,  # noqa: F401
                    _log_likelihood_upper_bound, _log_z_enumerated, _log_z_lower_bound)
from .loop import RECORD_KEYS, Run, train
from .schedule import FIRST_EVAL_SUSPECT, batch_bounds  # noqa: F401
from .state import STATE_VERSION  # noqa: F401

__all__ = ["Run", "RunDiverged", "Interrupted", "train", "batch_bounds", "METRICS", "RECORD_KEYS"]
