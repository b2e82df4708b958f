"""The entry points of a sweep: :func:`run_specs`, :func:`sweep` and :func:`summarize`."""
from __future__ import annotations

import math
import os
import warnings
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .._validation import check_float, check_int
from ._execute import _dask_client, _run_dask, _run_pool, _run_serial
from ._plan import RECORD_COLUMNS, RunSpec, plan
from . import _store
from ._store import _FINAL, _Collector, _Output, _Progress, _spec_key

if TYPE_CHECKING:
    import pandas

__all__ = ["run_specs", "sweep", "summarize"]


# ---------------------------------------------------------------------------- entry points

def run_specs(specs: list[RunSpec], *, scheduler: Any = None, workers: int | None = None,
              out: str | os.PathLike | None = None, overwrite: bool = False, progress: bool = True,
              on_record: Callable[[RunSpec, dict], Any] | None = None,
              connect_timeout: float = 10.0, resume: bool = False,
              checkpoints: Sequence[int] | None = None) -> "pandas.DataFrame":
    """Run the :class:`RunSpec` list ``specs`` and return the tidy frame.

    Parameters
    ----------
    specs : list of RunSpec
        Usually from :func:`plan`.
    scheduler : None, str or distributed.Client
        None: locally.  ``"tcp://host:8786"``: the Dask scheduler at that address (connected
        for this call, closed after); a ``distributed.Client``: used as is.  Each Dask task
        sets Numba to (cores of its host) / (worker threads on its host) threads.
    workers : int, optional
        Local only: processes of the pool (default: the number of cores); 0 or 1 runs in this
        process, serially (deterministic order, no start-up cost — tests and notebooks).
        Each pool process uses cores / workers Numba threads.
    out : path, optional
        ``.csv`` (always) or ``.parquet`` (needs pyarrow) file, rewritten atomically as runs
        finish and at the end (or at an interruption).  Beside it, the run store
        (:func:`store_path`: ``sweep.csv`` → ``sweep.runs/``) receives one JSON file per run
        the moment the run finishes (``ok`` or ``diverged``), so that a crash or a kill loses
        only the runs in progress.  An existing file or store is never replaced unless
        ``overwrite=True`` or continued with ``resume=True`` (``FileExistsError``, before
        anything runs).
    resume : bool
        Continue the sweep stored at ``out``: runs found in its store with the same settings
        are not run again (their rows are read back, ``on_record`` is not called for them);
        failed, interrupted and missing runs run.  A stored run whose settings differ from
        the plan's is a ``ValueError`` (a different sweep at the same place).  The runs of a
        plan are independent, so the store may be filled over several sittings and backends.
        A run under way keeps its state in the store (``<run_id>.partial``, written at a
        record at most once a minute, :meth:`rbmviz.runs.Run.state`), and a resumed sweep
        continues it from there, bit for bit, instead of from epoch 0: a paper-scale run of
        many hours survives being stopped (with Dask, where the worker sees the store: the
        same machine or a shared file system).
    checkpoints : sequence of int, optional
        Epochs at which each run's model is saved (needs ``out``), as
        ``sweep.runs/<run_id>/epoch-<E>.npz`` (:meth:`rbmviz.RBM.load`; list them with
        :func:`checkpoints`).  A checkpoint is taken at the first record at or after the
        epoch (records come every ``eval_every`` epochs and at the last one); with Dask the
        models travel back to this process, which writes them.
    progress : bool
        A tqdm bar over the sweep's epochs with its estimated time left (stderr); when
        stderr is not a terminal, one line per finished run with the time left instead.
    on_record : callable, optional
        ``on_record(spec, record)`` in the caller's process for every record as it arrives
        (``record``: the row's record columns, a dict).  Records of one run arrive in order.
    overwrite : bool
        Replace an existing results file and store at ``out``.
    connect_timeout : float
        Seconds to wait for a Dask scheduler given by address (``ConnectionError`` after).

    Returns
    -------
    pandas.DataFrame
        One row per run × evaluation point in plan order (whatever the backend): ``run_id``,
        ``trial``, ``algorithm``, the labels, ``epoch``, ``updates``, ``gibbs_steps``,
        ``seconds`` (the run's own training + evaluation time), the metrics, ``status``
        and ``error``.  A run with no record gets one row with empty record columns.
        ``df.attrs["continued"]`` maps the runs continued from a kept state to the epoch
        they continued from.  ``df.attrs["interrupted"]`` tells whether Ctrl-C (KeyboardInterrupt, also from
        ``on_record``) ended the sweep early; then the frame holds what arrived so far,
        unfinished runs with ``status="interrupted"``.  Same seeds give the same numbers
        on every backend (``seconds`` aside).

    Raises
    ------
    TypeError
        If ``specs`` is not a list of :class:`RunSpec`, ``on_record`` is not callable or
        ``checkpoints`` is not a list of epochs.
    ValueError
        For duplicate run ids, ``workers`` with a Dask scheduler, ``checkpoints`` without
        ``out`` or past the last epoch of a run, an environment variable the runs read with
        a bad value (``RBMVIZ_PARTIAL_EVERY``, ``RBMVIZ_DATA``), or a stored run
        (``resume``) whose settings differ from the plan's — all before any run starts.
    rbmviz.datasets.DatasetNotFoundError
        If a data set the runs read from files is missing.
    FileExistsError
        If ``out`` or its store exists and neither ``overwrite`` nor ``resume`` is set.
    """
    if isinstance(specs, RunSpec) or not hasattr(specs, "__iter__"):
        raise TypeError("specs must be a list of RunSpec (see rbmviz.sweep.plan)")
    specs = list(specs)
    for s in specs:
        if not isinstance(s, RunSpec):
            raise TypeError(f"specs must hold RunSpec objects, got {type(s).__name__}")
    ids = [s.run_id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"specs have duplicate run_id(s): {sorted({i for i in ids if ids.count(i) > 1})}")
    if on_record is not None and not callable(on_record):
        raise TypeError(f"on_record must be callable(spec, record), got {type(on_record).__name__}")
    connect_timeout = check_float(connect_timeout, "connect_timeout", low=0.0, low_open=True)
    if workers is not None:
        workers = check_int(workers, "workers", low=0)
        if scheduler is not None:
            raise ValueError("workers applies to the local process pool; with a Dask scheduler "
                             "the cluster's workers run the sweep (drop workers= or scheduler=)")
    if checkpoints is not None:
        if isinstance(checkpoints, (str, bytes)) or not hasattr(checkpoints, "__iter__"):
            raise TypeError(f"checkpoints must be a list of epochs, got {checkpoints!r}")
        checkpoints = tuple(sorted({check_int(e, "checkpoints", low=0) for e in checkpoints}))
        if checkpoints and out is None:
            raise ValueError("checkpoints need out= (they are written to the run store beside it)")
        _check_checkpoints(specs, checkpoints)
    checkpoints = checkpoints or ()
    _check_environment(specs)
    output = _Output(out, overwrite, resume)
    stored = output.store.load() if resume else {}
    col = _Collector(specs, on_record, None, output)
    for i, spec in enumerate(specs):
        got = stored.get(spec.run_id)
        if got is None or got.get("status") not in _FINAL:
            continue
        if got.get("key") != _spec_key(spec):
            raise ValueError(f"out={str(output.path)!r}: the stored run {spec.run_id!r} has other "
                             f"settings than this sweep's; resume a sweep with the same plan, or "
                             f"write to another out (or overwrite=True)")
        col.preload(i, got["rows"], got["status"], got.get("error"))
    todo = [i for i in range(len(specs)) if i not in col.status]
    store = None if output.store is None else output.store.path
    client = own = None
    if scheduler is not None and todo:
        client, own = _dask_client(scheduler, connect_timeout)
    elif workers is None:
        workers = os.cpu_count() or 1
    bar = None
    if progress:
        done_epochs = sum(int(specs[i].settings.get("epochs") or 1) for i in col.resumed)
        bar = col.bar = _Progress(specs, done_epochs, len(col.resumed))
    try:
        if not todo:
            pass
        elif client is not None:
            _run_dask(specs, todo, col, client, checkpoints, store)
        elif workers <= 1 or len(todo) <= 1:
            _run_serial(specs, todo, col, checkpoints, store)
        else:
            _run_pool(specs, todo, col, workers, checkpoints, store)
    except KeyboardInterrupt:
        col.interrupted = True
        done = len(col.status)
        warnings.warn(f"sweep interrupted: {done} of {len(specs)} run(s) finished; the records so "
                      f"far are kept" + (f" in {output.path}" if output.path else ""),
                      RuntimeWarning, stacklevel=2)
    finally:
        if bar is not None:
            bar.close()
        if own:
            client.close()
    frame = col.frame()
    output.write(lambda: frame, force=True)
    failed = [(specs[i].run_id, e) for i, (s, e) in sorted(col.status.items()) if s == "failed"]
    if failed:
        warnings.warn(f"{len(failed)} of {len(specs)} run(s) failed (status 'failed' in the frame); "
                      f"first: {failed[0][0]}: {failed[0][1]}", RuntimeWarning, stacklevel=2)
    return frame


def _run_epochs(spec: RunSpec):
    """The last epoch of ``spec``'s run (None: open-ended)."""
    return spec.run_overrides.get("epochs", spec.settings.get("epochs"))


def _check_checkpoints(specs, checkpoints) -> None:
    """A checkpoint past the last epoch of a run would never be written: refused."""
    for spec in specs:
        last = _run_epochs(spec)
        if last is None or not checkpoints:
            continue
        late = [e for e in checkpoints if e > int(last)]
        if late:
            raise ValueError(f"checkpoints {late} are past the last epoch of run "
                             f"{spec.run_id!r} (epochs={last}) and would never be written; "
                             f"choose checkpoints <= {last}")


def _check_environment(specs) -> None:
    """The environment variables the runs read, checked before any run starts (a bad value
    would otherwise fail every run): ``RBMVIZ_PARTIAL_EVERY`` (seconds between two writes of
    a running run's state) and, for data sets read from files, ``RBMVIZ_DATA``."""
    _store.partial_every()                 # ValueError naming RBMVIZ_PARTIAL_EVERY
    from .. import datasets as _datasets
    from .. import settings as _settings
    files = sorted({s.settings.get("dataset") for s in specs
                    if _settings.DATASETS.get(s.settings.get("dataset")) is not None
                    and _settings.DATASETS[s.settings.get("dataset")].kind == "file"})
    if not files:
        return
    env = os.environ.get("RBMVIZ_DATA")
    if env and not os.path.isdir(os.path.expanduser(env)):
        raise ValueError(f"RBMVIZ_DATA={env!r} is not a directory; the sweep reads the data "
                         f"set(s) {', '.join(files)} from the data directory (unset RBMVIZ_DATA "
                         f"to use the default, see `rbmviz info`)")
    missing = [d for d in files if not _datasets.available(d)]
    if missing:
        where = (f"RBMVIZ_DATA={env!r}" if env else
                 f"the default {_datasets.data_dir()}, as RBMVIZ_DATA is not set")
        raise _datasets.DatasetNotFoundError(
            f"data set(s) {', '.join(missing)} not found in the data directory ({where}); "
            f"no run was started (`rbmviz info` says where to put the files)")


def sweep(base: dict, *, algorithms: str | Sequence[str], trials: int, grid: dict | None = None,
          seed: int = 0, scheduler: Any = None, workers: int | None = None,
          run_overrides: dict | None = None, out: str | os.PathLike | None = None,
          overwrite: bool = False, progress: bool = True,
          on_record: Callable[[RunSpec, dict], Any] | None = None,
          connect_timeout: float = 10.0, paired_chains: bool = False, resume: bool = False,
          checkpoints: Sequence[int] | None = None,
          algorithm_settings: dict | None = None) -> "pandas.DataFrame":
    """:func:`plan` the runs and :func:`run_specs` them.

    Parameters
    ----------
    base, algorithms, trials, grid, seed, run_overrides, paired_chains, algorithm_settings
        The plan: see :func:`plan`.
    scheduler, workers, out, overwrite, progress, on_record, connect_timeout, resume, checkpoints
        The execution: see :func:`run_specs`.

    Returns
    -------
    pandas.DataFrame
        The tidy frame of :func:`run_specs`; ``attrs["notes"]`` holds the plan's notes
        (:class:`Plan`), e.g. a grid knob that only some of the algorithms take.

    Raises
    ------
    ValueError, TypeError
        As :func:`plan` and :func:`run_specs`, before any run starts.

    Examples
    --------

    >>> df = sweep({"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "epochs": 10,
    ...             "eval_every": 10}, algorithms="cd,pcd", trials=3,
    ...            grid={"learning_rate": [0.1, 0.5]}, workers=0, progress=False)
    >>> df.groupby(["algorithm", "learning_rate"]).run_id.nunique().tolist()
    [3, 3, 3, 3]
    """
    specs = plan(base, algorithms=algorithms, trials=trials, grid=grid, seed=seed,
                 run_overrides=run_overrides, paired_chains=paired_chains,
                 algorithm_settings=algorithm_settings)
    frame = run_specs(specs, scheduler=scheduler, workers=workers, out=out, overwrite=overwrite,
                      progress=progress, on_record=on_record, connect_timeout=connect_timeout,
                      resume=resume, checkpoints=checkpoints)
    frame.attrs["notes"] = list(specs.notes)
    return frame


def summarize(frame: "pandas.DataFrame", metric: str | None = None) -> "pandas.DataFrame":
    """The final value of ``metric`` per run, as mean ± standard error over trials.

    For each algorithm × grid point.  A run's final value is that of its last record; only
    runs with ``status == "ok"`` enter the mean.

    Parameters
    ----------
    frame : pandas.DataFrame
        A sweep's tidy frame (:func:`run_specs`).
    metric : str, optional
        Defaults to the first of ``test_ll``, ``train_ll``, ``pseudo_ll``, ``recon_error``
        in the frame.

    Returns
    -------
    pandas.DataFrame
        The group columns (``algorithm`` and the labels), ``metric``, ``mean``, ``se``
        (sample standard deviation / √n; NaN for n = 1), ``n`` (runs that finished) and
        ``not_ok`` (diverged, failed or interrupted runs).

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame.
    ValueError
        If it lacks the sweep's columns or ``metric``.
    """
    import pandas as pd
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a sweep DataFrame, got {type(frame).__name__}")
    missing = [c for c in ("run_id", "algorithm", "status", "epoch") if c not in frame]
    if missing:
        raise ValueError(f"frame lacks column(s) {missing}; expected a frame from rbmviz.sweep")
    if metric is None:
        metric = next((m for m in ("test_ll", "train_ll", "pseudo_ll", "recon_error")
                       if m in frame), None)
        if metric is None:
            raise ValueError("frame has no metric column (test_ll, train_ll, pseudo_ll, recon_error)")
    elif metric not in frame:
        raise ValueError(f"metric {metric!r} is not a column of the frame; columns: {list(frame.columns)}")
    fixed = {"run_id", "trial", "status", "error", *RECORD_COLUMNS}
    start = list(frame.columns).index("algorithm")
    stop = list(frame.columns).index("epoch")
    groups = [c for c in frame.columns[start:stop] if c not in fixed]
    last = frame.sort_values(["run_id", "epoch"], kind="stable").groupby("run_id", sort=False).tail(1)
    out = []
    for key, sub in last.groupby(groups, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        ok = sub[sub.status == "ok"][metric].astype(float)
        n = int(ok.size)
        out.append({**dict(zip(groups, key)), "metric": metric,
                    "mean": float(ok.mean()) if n else math.nan,
                    "se": float(ok.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan,
                    "n": n, "not_ok": int((sub.status != "ok").sum())})
    return pd.DataFrame(out, columns=[*groups, "metric", "mean", "se", "n", "not_ok"])
