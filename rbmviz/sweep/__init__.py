"""Sweeps: many training runs (trials × algorithms × settings), locally or on a Dask cluster.

The experiments of Upadhya & Sastry (2017) compare training rules over repeated trials — 25
trials on the small data sets, 10 on the large ones — every rule starting, within a trial,
from the *same* initial parameters, so that the comparison is paired.  A sweep is

1. a **plan** (:func:`plan`): the list of :class:`RunSpec` — one per trial × algorithm ×
   grid point, each a complete flat settings dict (:func:`rbmviz.settings.to_dict`), with
   ``init_seed`` (initial parameters) derived from ``(seed, trial)`` only — equal within a
   trial, different across trials — and ``seed`` (mini-batch shuffles, Gibbs chains) derived
   from ``(seed, trial, algorithm)``: each rule draws its own random numbers unless
   ``paired_chains=True`` (common random numbers, see :func:`plan`);
2. its **execution** (:func:`run_specs`): serially in this process (``workers=0`` or 1), on a
   local process pool (default, one process per core), or on a Dask distributed cluster
   (``scheduler="tcp://host:8786"`` or a ``distributed.Client``).  Each run is the one
   training loop :class:`rbmviz.runs.Run`; its records stream back to the caller while runs
   progress (``on_record(spec, record)``), and every backend gives the same numbers;
3. a **tidy** :class:`pandas.DataFrame` — one row per run × evaluation point, columns
   ``run_id, trial, algorithm``, the grid labels, then ``epoch, updates, gibbs_steps, seconds``
   and the metrics (``train_ll``, ``test_ll`` … the exact ATLL of the papers, Eq. (2) of
   the conventions of the documentation's theory pages), then ``status`` (``"ok"``, ``"diverged"``, ``"failed"``,
   ``"interrupted"``) and ``error`` — saved, if asked, to CSV or Parquet.

**Resumable.**  With ``out="sweep.csv"`` every run is stored the moment it finishes, as
``sweep.runs/<run_id>.json`` (its settings, records and status; model checkpoints at
chosen epochs beside it, ``checkpoints=[10, 100]``), and a run under way keeps its state
there too (``sweep.runs/<run_id>.partial``, :meth:`rbmviz.runs.Run.state`, written at a record
at most once a minute), so a crash or a kill loses at most the training since a run's latest
kept record; ``resume=True`` continues such a sweep — in another sitting, with another
backend or from another machine sharing the directory — skipping every stored run and
continuing the cut-off ones bit for bit.  A paper-scale run of many hours (dc-mnist: ~5 h of
one core each) is thus spread over as many sittings as it takes.  The
progress bar counts epochs and shows the estimated time left.

**Refused before any run starts.**  What a run would refuse or silently ignore is an error
of the plan or of :func:`run_specs`, naming the knob: a base setting or grid knob that none
of the listed rules (or data sets) takes, with the rules that take it; a ``batch_size``
larger than the training set; ``run_overrides`` that are not run arguments or that a run
refuses; checkpoints past a run's last epoch; a bad ``RBMVIZ_PARTIAL_EVERY`` or
``RBMVIZ_DATA``.  A grid over a knob that only some of the rules take varies their runs
only; the plan says so (:class:`SweepNote`, :attr:`Plan.notes`).

A diverging run (:class:`rbmviz.runs.RunDiverged`) does not stop the sweep: its records up
to the divergence are kept with ``status="diverged"`` and the error message.  An interrupted
sweep (Ctrl-C) returns — and writes — what arrived so far.  :func:`summarize` turns a frame
into the final metric's mean ± standard error per algorithm × grid point.

>>> from rbmviz.sweep import sweep, summarize
>>> df = sweep({"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "epochs": 20,
...             "eval_every": 10, "learning_rate": 0.3},
...            algorithms=["cd", "pcd"], trials=2, workers=0, progress=False)
>>> sorted(df.algorithm.unique()), len(df)
(['cd', 'pcd'], 12)
"""
from __future__ import annotations

from ._api import run_specs, summarize, sweep
from ._curves import curve_means, time_to_fraction
from ._plan import (RECORD_COLUMNS, RESERVED_COLUMNS, STATUSES, Plan, RunSpec, SweepNote,
                    derive_seed, plan)
from ._store import checkpoints, load_store, store_path

__all__ = ["RunSpec", "Plan", "SweepNote", "plan", "sweep", "run_specs", "summarize", "derive_seed",
           "RESERVED_COLUMNS", "RECORD_COLUMNS", "STATUSES", "store_path", "load_store",
           "checkpoints", "curve_means", "time_to_fraction"]
