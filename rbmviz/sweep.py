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
   ``reference/notation.md``), then ``status`` (``"ok"``, ``"diverged"``, ``"failed"``,
   ``"interrupted"``) and ``error`` — saved, if asked, to CSV or Parquet.

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

import hashlib

import concurrent.futures as _cf
import difflib
import importlib.util
import math
import os
import pickle
import queue as _queue
import sys
import time
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import algorithms as _algorithms
from . import settings as _settings
from ._validation import check_float, check_int, check_seed
from .runs import METRICS as _METRICS

__all__ = ["RunSpec", "plan", "sweep", "run_specs", "summarize", "derive_seed",
           "RESERVED_COLUMNS", "RECORD_COLUMNS", "STATUSES"]

#: the per-record columns, in frame order (metrics follow)
RECORD_COLUMNS = ("epoch", "updates", "gibbs_steps", "seconds")
#: the values of the ``status`` column
STATUSES = ("ok", "diverged", "failed", "interrupted")
#: column names a grid label may not take
RESERVED_COLUMNS = ("run_id", "trial", "algorithm", *RECORD_COLUMNS, "status", "error",
                    "wall_time", *_METRICS)

#: knobs that a trial sets (derived from the sweep seed) and a grid may therefore not vary
_TRIAL_KNOBS = ("init_seed", "seed")
#: seconds between two rewrites of the ``out`` file while the sweep runs
_WRITE_EVERY = 2.0


# ---------------------------------------------------------------------------- the plan

@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep.

    Attributes
    ----------
    run_id : str
        Unique within the plan, e.g. ``"t03-pcd-learning_rate=0.3"``.
    trial : int
        Trial index (0-based); runs of one trial share their initial parameters.
    algorithm : str
        Training rule (:func:`rbmviz.algorithms.names`).
    settings : dict
        The complete flat settings dict (:func:`rbmviz.settings.to_dict` form).
    run_overrides : dict
        Extra :class:`~rbmviz.runs.Run` keyword arguments (``metrics=[...]``,
        ``exact_max_bits`` ...), passed to :func:`rbmviz.settings.make_run`; picklable.
    labels : dict
        The grid values of this run, copied onto every row of the frame.
    """

    run_id: str
    trial: int
    algorithm: str
    settings: dict
    run_overrides: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)

    def make_run(self):
        """Load the data, build the model (from ``settings["init_seed"]``) and return the
        :class:`~rbmviz.runs.Run` of this spec, not started."""
        objs = _settings.from_dict(self.settings)
        return _settings.make_run(*objs, **self.run_overrides)


def derive_seed(seed: int, trial: int, purpose: str) -> int:
    """The 63-bit seed of ``purpose`` (``"init"``: initial parameters; ``"chain/<algorithm>"``
    or, paired, ``"chain"``: shuffles and Gibbs chains) in trial ``trial`` of a sweep seeded
    with ``seed``; a function of these three only (the whole ``purpose`` string is hashed)."""
    tag = int.from_bytes(hashlib.blake2b(purpose.encode(), digest_size=8).digest(), "little")
    state = np.random.SeedSequence([int(seed), int(trial), tag]).generate_state(1, np.uint64)[0]
    return int(state) & (2**63 - 1)


def _algorithm_list(algorithms) -> list[str]:
    if isinstance(algorithms, str):
        algorithms = [a.strip() for a in algorithms.split(",") if a.strip()]
    try:
        algorithms = list(algorithms)
    except TypeError:
        raise TypeError(f"algorithms must be a list of names or a comma-separated string, "
                        f"got {type(algorithms).__name__}") from None
    if not algorithms:
        raise ValueError(f"algorithms is empty; expected one or more of {_algorithms.names()}")
    for a in algorithms:
        if not isinstance(a, str):
            raise TypeError(f"algorithms must hold names (str), got {a!r}")
        _algorithms.get(a)                         # ValueError naming the valid ones
    dup = sorted({a for a in algorithms if algorithms.count(a) > 1})
    if dup:
        raise ValueError(f"algorithms lists {dup} more than once")
    return algorithms


def _all_knobs() -> dict:
    return {n: p for cls in _settings.SETTINGS_CLASSES for n, p in _settings.knobs(cls).items()}


def _label_text(values: dict) -> str:
    return ",".join(f"{k}={_fmt(v)}" for k, v in values.items())


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _grid_points(grid) -> list[tuple[dict, dict]]:
    """``grid`` → list of (labels, knob values), the product over the grid's keys in order."""
    if grid is None:
        return [({}, {})]
    if not isinstance(grid, dict):
        raise TypeError(f"grid must be a dict {{knob: [values, ...]}}, got {type(grid).__name__}")
    known = _all_knobs()
    axes = []
    for key, values in grid.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"grid keys must be non-empty strings, got {key!r}")
        if key in RESERVED_COLUMNS:
            raise ValueError(f"grid key {key!r} is a column of the sweep frame; choose another "
                             f"name" + (" (use algorithms= for algorithms)" if key == "algorithm" else ""))
        if key in _TRIAL_KNOBS:
            raise ValueError(f"grid key {key!r}: {' and '.join(_TRIAL_KNOBS)} are set per trial from "
                             f"the sweep seed (vary trials= or seed= instead)")
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
            raise TypeError(f"grid[{key!r}] must be a list of values, got {values!r}")
        values = list(values)
        if not values:
            raise ValueError(f"grid[{key!r}] is empty; expected at least one value")
        n_dict = sum(isinstance(v, dict) for v in values)
        axis = []
        if n_dict == len(values):              # several knobs per point, labelled by the key
            for v in values:
                if not v:
                    raise ValueError(f"grid[{key!r}] holds an empty dict")
                bad = [k for k in v if k not in known or k in _TRIAL_KNOBS or k == "algorithm"]
                if bad:
                    ok = ", ".join(n for n in known if n not in _TRIAL_KNOBS and n != "algorithm")
                    raise ValueError(f"grid[{key!r}] sets {bad}, which are not sweepable settings; "
                                     f"sweepable settings: {ok}")
                parsed = {k: _parse(k, x, known, f"grid[{key!r}]") for k, x in v.items()}
                axis.append(({key: _label_text(parsed)}, parsed))
        elif n_dict:
            raise TypeError(f"grid[{key!r}] mixes dicts and plain values; use one or the other")
        else:
            if key not in known:
                close = difflib.get_close_matches(key, list(known), n=1)
                raise ValueError(f"grid key {key!r} is not a setting"
                                 + (f" (did you mean {close[0]!r}?)" if close else "")
                                 + "; a key that is not a setting needs dict values, e.g. "
                                   "{'budget': [{'k': 12}, {'k': 24, 'k_inner': 4}]}")
            parsed = [_parse(key, v, known, "grid") for v in values]
            axis = [({key: p}, {key: p}) for p in parsed]
        labels = [lab[key] for lab, _ in axis]
        if len(set(map(repr, labels))) != len(labels):
            raise ValueError(f"grid[{key!r}] repeats a value: {values}")
        axes.append(axis)
    points = [({}, {})]
    for axis in axes:
        points = [({**lab, **l2}, {**kv, **k2}) for lab, kv in points for l2, k2 in axis]
    return points


def _parse(name, value, known, where):
    try:
        return _settings.parse_value(known[name], value)
    except ValueError as exc:
        raise ValueError(f"{where}: invalid value {value!r} for setting {name!r}: {exc}") from None


def plan(base: dict, *, algorithms, trials: int, grid: dict | None = None, seed: int = 0,
         run_overrides: dict | None = None, paired_chains: bool = False) -> list[RunSpec]:
    """The runs of a sweep: trials × algorithms × grid points, in that nesting order.

    Parameters
    ----------
    base : dict
        Flat settings (:func:`rbmviz.settings.to_dict` form; missing knobs keep their
        defaults; values may be text).  ``algorithm``, ``init_seed`` and ``seed`` are set by
        the sweep.
    algorithms : list of str or "cd,pcd,sdcp"
    trials : int >= 1
        Independent repetitions (the papers: 25 on small data, 10 on large).
    grid : dict, optional
        ``{knob: [values, ...]}``, e.g. ``{"learning_rate": [0.3, 0.5], "k": [12, 24]}``; or
        ``{name: [dict, ...]}`` to vary several knobs together, e.g.
        ``{"budget": [{"k": 12}, {"k": 24, "k_inner": 4}]}`` (column ``budget`` holds
        ``"k=12"``, ``"k=24,k_inner=4"``).  The product of all keys is taken.
    seed : int
        Sweep seed.  Trial ``t`` uses ``init_seed = derive_seed(seed, t, "init")`` for every
        algorithm and grid point: the runs of a trial start from identical parameters (a
        paired comparison); trials differ.  The chain seed is
        ``derive_seed(seed, t, "chain/<algorithm>")``: the same for all grid points of an
        algorithm, different between algorithms.
    paired_chains : bool
        Give every algorithm of a trial the *same* chain seed ``derive_seed(seed, t, "chain")``
        (common random numbers).  Then rules that coincide mathematically give identical
        curves (S-DCP with d = 1 and CD-K′), but so can rules that merely *couple*: with the
        same uniforms, PCD's persistent chains and CD's restarted ones meet within a few
        steps while the model mixes fast, and the two curves coincide — an artefact of the
        shared stream, not a property of the rules.  Off by default.
    run_overrides : dict, optional
        Extra :class:`~rbmviz.runs.Run` keyword arguments for every run (picklable).

    Algorithm-specific knobs an algorithm does not take (``k_inner`` for ``cd``,
    ``n_chains`` for all but ``pcd``) are reset to their defaults in its settings.

    Raises
    ------
    ValueError, TypeError
        An unknown algorithm or knob, a bad value (naming it), or a combination an algorithm
        refuses (e.g. ``k_inner`` not dividing ``k``), found before anything runs.
    """
    if not isinstance(base, dict):
        raise TypeError(f"base must be a flat settings dict, got {type(base).__name__}")
    algorithms = _algorithm_list(algorithms)
    trials = check_int(trials, "trials", low=1)
    seed = check_seed(seed)
    run_overrides = {} if run_overrides is None else run_overrides
    if not isinstance(run_overrides, dict):
        raise TypeError(f"run_overrides must be a dict of Run keyword arguments, "
                        f"got {type(run_overrides).__name__}")
    try:
        pickle.dumps(run_overrides)
    except Exception as exc:
        raise TypeError(f"run_overrides must be picklable (runs may execute in other processes): "
                        f"{exc}") from None
    base_objs = _settings.from_dict(dict(base))        # unknown knob / bad value: ValueError
    base_flat = _settings.to_dict(*base_objs)
    points = _grid_points(grid)
    defaults = {n: p.default for n, p in _all_knobs().items()}
    specific = {n for a in _algorithms.names() for n in _settings.algorithm_knobs(a)}
    specific -= set.intersection(*(set(_settings.algorithm_knobs(a)) for a in _algorithms.names()))
    width = len(str(trials - 1))
    specs, checked = [], set()
    for trial in range(trials):
        for algorithm in algorithms:
            trial_seeds = {"init_seed": derive_seed(seed, trial, "init"),
                           "seed": derive_seed(seed, trial, "chain" if paired_chains
                                               else f"chain/{algorithm}")}
            takes = set(_settings.algorithm_knobs(algorithm))
            for labels, values in points:
                flat = {**base_flat, **values, "algorithm": algorithm, **trial_seeds}
                for n in specific - takes:
                    flat[n] = defaults[n]
                try:
                    objs = _settings.from_dict(flat)
                except ValueError as exc:
                    where = f" at grid point {_label_text(labels)}" if labels else ""
                    raise ValueError(f"{exc}{where}") from None
                flat = _settings.to_dict(*objs)
                key = repr(sorted((k, v) for k, v in flat.items() if k not in _TRIAL_KNOBS))
                if key not in checked:            # the algorithm's own checks, before running
                    checked.add(key)
                    try:
                        _algorithms.create(algorithm, **_settings.algorithm_kwargs(objs[2]))
                    except (ValueError, TypeError) as exc:
                        where = f" at grid point {_label_text(labels)}" if labels else ""
                        raise type(exc)(f"algorithm {algorithm!r}{where}: {exc}") from None
                run_id = f"t{trial:0{width}d}-{algorithm}" + "".join(
                    f"-{k}={_fmt(v)}" for k, v in labels.items())
                specs.append(RunSpec(run_id, trial, algorithm, flat, dict(run_overrides),
                                     dict(labels)))
    return specs


# ---------------------------------------------------------------------------- one run

def _plain(v):
    """numpy scalars → Python scalars (records travel through pickles and msgpack)."""
    return v.item() if isinstance(v, np.generic) else v


def _row(rec: dict) -> dict:
    """A Run record → the record columns of a frame row (``wall_time`` → ``seconds``; the
    algorithm is a column of the spec)."""
    row = {k: _plain(rec[k]) for k in ("epoch", "updates", "gibbs_steps")}
    row["seconds"] = float(rec["wall_time"])
    for k, v in rec.items():
        if k not in row and k not in ("algorithm", "wall_time"):
            row[k] = _plain(v)
    return row


def _set_threads(threads):
    if threads is None:
        return
    import numba
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))


def _execute(spec: RunSpec, emit=None, threads=None) -> tuple[list, str, str | None]:
    """Run ``spec`` to the end; ``emit(seq, row)`` after every record.  Returns
    ``(rows, status, error)``; a divergence or any other exception of the run is a status,
    not an exception (KeyboardInterrupt propagates)."""
    from .runs import RunDiverged
    _set_threads(threads)
    rows: list[dict] = []
    try:
        run = spec.make_run()
        for rec in run:
            row = _row(rec)
            rows.append(row)
            if emit is not None:
                emit(len(rows) - 1, row)
    except RunDiverged as exc:
        return rows, "diverged", str(exc)
    except Exception as exc:  # noqa: BLE001 - one broken run must not end the sweep
        return rows, "failed", f"{type(exc).__name__}: {exc}"
    return rows, "ok", None


# process-pool workers: the queue records stream through, set by the pool's initializer
_POOL_QUEUE = None


def _pool_init(q):
    global _POOL_QUEUE
    _POOL_QUEUE = q
    # Ctrl-C reaches the whole process group: the parent alone handles it (keeps the records
    # so far, terminates the workers); a worker must not report it as a failed run
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool_task(spec, index, threads):
    q = _POOL_QUEUE
    emit = None if q is None else (lambda seq, row: q.put((index, seq, row)))
    return _execute(spec, emit, threads)


def _dask_task(spec, index, topic, host_threads):
    from distributed import get_worker
    worker = get_worker()
    host = worker.address.rsplit(":", 1)[0]
    threads = max(1, (os.cpu_count() or 1) // max(1, host_threads.get(host, worker.state.nthreads)))

    def emit(seq, row):
        try:
            worker.log_event(topic, {"i": index, "seq": seq, "row": row})
        except Exception:  # noqa: BLE001 - streaming is best effort; the result has every row
            pass
    return _execute(spec, emit, threads)


# ---------------------------------------------------------------------------- output file

def _pyarrow_available() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


class _Output:
    """The ``out`` file: checked before the sweep, rewritten atomically as runs finish."""

    def __init__(self, out, overwrite):
        self.path = None
        if out is None:
            return
        if not isinstance(out, (str, os.PathLike)):
            raise TypeError(f"out must be a path (str or os.PathLike), got {type(out).__name__}")
        path = Path(out)
        suffix = path.suffix.lower()
        if suffix not in (".csv", ".parquet"):
            raise ValueError(f"out={str(path)!r}: expected a file name ending in .csv or .parquet")
        if suffix == ".parquet" and not _pyarrow_available():
            raise ImportError(f"out={str(path)!r}: writing Parquet needs pyarrow, which is not "
                              f"installed (pip install pyarrow), or use a .csv file")
        if path.exists() and (path.is_dir() or not overwrite):
            what = "is a directory" if path.is_dir() else "exists"
            raise FileExistsError(f"out={str(path)!r} {what}; choose another file"
                                  + ("" if path.is_dir() else " or pass overwrite=True"))
        self.path, self.suffix, self._last = path, suffix, -math.inf

    def write(self, frame_fn, *, force=False):
        if self.path is None or (not force and time.monotonic() - self._last < _WRITE_EVERY):
            return
        frame = frame_fn()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            if self.suffix == ".csv":
                frame.to_csv(tmp, index=False)
            else:
                frame.to_parquet(tmp, index=False)
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)
        self._last = time.monotonic()


# ---------------------------------------------------------------------------- collecting

class _Collector:
    """Rows and statuses as they arrive, from any backend, in the caller's process."""

    def __init__(self, specs, on_record, bar, output):
        self.specs, self.on_record, self.bar, self.output = specs, on_record, bar, output
        self.rows: dict[int, dict[int, dict]] = {}
        self.status: dict[int, tuple[str, str | None]] = {}
        self.interrupted = False

    def record(self, index, seq, row):
        got = self.rows.setdefault(index, {})
        if seq in got or index in self.status:     # already delivered (stream and result)
            return
        got[seq] = row
        if self.on_record is not None:
            self.on_record(self.specs[index], dict(row))

    def finish(self, index, rows, status, error):
        for seq, row in enumerate(rows):
            self.record(index, seq, row)
        self.status[index] = (status, error)
        if self.bar is not None:
            n_bad = sum(s != "ok" for s, _ in self.status.values())
            self.bar.set_postfix({"records": sum(map(len, self.rows.values())),
                                  **({"not ok": n_bad} if n_bad else {})}, refresh=False)
            self.bar.update(1)
        self.output.write(self.frame)

    def fail(self, index, exc):
        self.finish(index, [], "failed", f"{type(exc).__name__}: {exc}")

    def frame(self):
        import pandas as pd
        label_keys = []
        for spec in self.specs:
            label_keys += [k for k in spec.labels if k not in label_keys]
        rows, metrics = [], []
        for i, spec in enumerate(self.specs):
            got = self.rows.get(i, {})
            if i in self.status:
                status, error = self.status[i]
            elif got:
                status, error = "interrupted", "the sweep was interrupted before this run ended"
            else:
                continue
            head = {"run_id": spec.run_id, "trial": spec.trial, "algorithm": spec.algorithm,
                    **{k: spec.labels.get(k) for k in label_keys}}
            tail = {"status": status, "error": error}
            for seq in sorted(got) or [None]:
                rec = {} if seq is None else got[seq]
                metrics += [k for k in rec if k not in RECORD_COLUMNS and k not in metrics]
                rows.append({**head, **rec, **tail})
        columns = ["run_id", "trial", "algorithm", *label_keys, *RECORD_COLUMNS, *metrics,
                   "status", "error"]
        df = pd.DataFrame.from_records(rows, columns=columns)
        for col in ("epoch", "updates", "gibbs_steps"):
            if len(df) and df[col].notna().all():
                df[col] = df[col].astype("int64")
        df.attrs["interrupted"] = self.interrupted
        df.attrs["runs"] = len(self.specs)
        return df


# ---------------------------------------------------------------------------- backends

def _run_serial(specs, col):
    for i, spec in enumerate(specs):
        rows, status, error = _execute(spec, lambda seq, row, i=i: col.record(i, seq, row))
        col.finish(i, rows, status, error)


def _drain(q, col, block=0.0):
    try:
        msg = q.get(timeout=block) if block else q.get_nowait()
        while True:
            col.record(*msg)
            msg = q.get_nowait()
    except (_queue.Empty, EOFError, OSError):
        pass


def _run_pool(specs, col, workers):
    import multiprocessing as mp
    ctx = mp.get_context("spawn")   # no fork of a process whose Numba/OpenMP threads run
    q = ctx.Queue()
    n = min(workers, len(specs))
    threads = max(1, (os.cpu_count() or 1) // n)
    ex = _cf.ProcessPoolExecutor(n, mp_context=ctx, initializer=_pool_init, initargs=(q,))
    clean = False
    try:
        futures = {ex.submit(_pool_task, spec, i, threads): i for i, spec in enumerate(specs)}
        pending = set(futures)
        while pending:
            _drain(q, col, block=0.05)
            done, pending = _cf.wait(pending, timeout=0, return_when=_cf.FIRST_COMPLETED)
            for f in sorted(done, key=futures.get):
                _drain(q, col)
                if f.exception() is not None:
                    col.fail(futures[f], f.exception())
                else:
                    col.finish(futures[f], *f.result())
        clean = True
    finally:
        if clean:
            ex.shutdown(wait=True)
        else:                       # interrupted: stop the workers now, keep what arrived
            _stop_pool(ex)
        q.cancel_join_thread()
        q.close()


def _stop_pool(ex):
    """Shut ``ex`` down without waiting for its running tasks: cancel the queued ones and
    terminate the worker processes (``ProcessPoolExecutor.terminate_workers`` from Python
    3.14; its process table before)."""
    terminate = getattr(ex, "terminate_workers", None)
    if terminate is not None:  # pragma: no cover - Python >= 3.14
        terminate()
        return
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)


def _dask_client(scheduler, connect_timeout):
    try:
        import distributed
    except ImportError:
        raise ImportError("a Dask scheduler needs dask and distributed "
                          "(pip install 'rbmviz[dask]')") from None
    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address such as 'tcp://host:8786' or a "
                        f"distributed.Client, got {type(scheduler).__name__}")
    if "://" not in scheduler:
        raise ValueError(f"scheduler={scheduler!r}: expected an address such as 'tcp://host:8786'")
    try:
        client = distributed.Client(scheduler, timeout=connect_timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(f"could not reach the Dask scheduler at {scheduler} within "
                              f"connect_timeout={connect_timeout:g} s ({exc}); is it running and "
                              f"is the address right?") from None
    try:
        client.wait_for_workers(1, timeout=connect_timeout)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise ConnectionError(f"the Dask scheduler at {scheduler} has no workers (none joined "
                              f"within connect_timeout={connect_timeout:g} s: {exc}); start "
                              f"workers with: dask worker {scheduler}") from None
    return client, True


def _run_dask(specs, col, client):
    from distributed import as_completed
    topic = f"rbmviz-sweep-{uuid.uuid4().hex}"
    stream: _queue.Queue = _queue.Queue()
    client.subscribe_topic(topic, lambda event: stream.put(event[1]))
    host_threads: dict[str, int] = {}
    for addr, info in client.scheduler_info().get("workers", {}).items():
        host = addr.rsplit(":", 1)[0]
        host_threads[host] = host_threads.get(host, 0) + int(info.get("nthreads", 1))
    futures, index = [], {}
    clean = False
    try:
        for i, spec in enumerate(specs):
            f = client.submit(_dask_task, spec, i, topic, host_threads, pure=False,
                              key=f"rbmviz-sweep-{spec.run_id}-{topic[-8:]}")
            futures.append(f)
            index[f.key] = i
        ac = as_completed(futures)

        def drain(block):
            try:
                msg = stream.get(timeout=block) if block else stream.get_nowait()
                while True:
                    col.record(msg["i"], msg["seq"], msg["row"])
                    msg = stream.get_nowait()
            except _queue.Empty:
                pass
        while not ac.is_empty():
            drain(0.05)
            for f in sorted(ac.next_batch(block=False), key=lambda f: index[f.key]):
                drain(0)
                try:
                    col.finish(index[f.key], *f.result())
                except Exception as exc:  # noqa: BLE001 - a lost worker, a bad environment
                    col.fail(index[f.key], exc)
        clean = True
    finally:
        if not clean:
            client.cancel(futures)
        try:
            client.unsubscribe_topic(topic)
        except Exception:  # noqa: BLE001 - the connection may be gone
            pass


# ---------------------------------------------------------------------------- entry points

def run_specs(specs, *, scheduler=None, workers=None, out=None, overwrite=False, progress=True,
              on_record=None, connect_timeout=10.0):
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
        finish and at the end (or at an interruption).  An existing file is never replaced
        unless ``overwrite=True`` (``FileExistsError``, before anything runs).
    progress : bool
        A tqdm bar over runs (stderr).
    on_record : callable, optional
        ``on_record(spec, record)`` in the caller's process for every record as it arrives
        (``record``: the row's record columns, a dict).  Records of one run arrive in order.
    connect_timeout : float
        Seconds to wait for a Dask scheduler given by address (``ConnectionError`` after).

    Returns
    -------
    pandas.DataFrame
        One row per run × evaluation point in plan order (whatever the backend): ``run_id``,
        ``trial``, ``algorithm``, the labels, ``epoch``, ``updates``, ``gibbs_steps``,
        ``seconds`` (the run's own training + evaluation time), the metrics, ``status``
        and ``error``.  A run with no record gets one row with empty record columns.
        ``df.attrs["interrupted"]`` tells whether Ctrl-C (KeyboardInterrupt, also from
        ``on_record``) ended the sweep early; then the frame holds what arrived so far,
        unfinished runs with ``status="interrupted"``.  Same seeds give the same numbers
        on every backend (``seconds`` aside).
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
    output = _Output(out, overwrite)
    client = own = None
    if scheduler is not None:
        client, own = _dask_client(scheduler, connect_timeout)
    elif workers is None:
        workers = os.cpu_count() or 1
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(specs), unit="run", desc="sweep", file=sys.stderr, dynamic_ncols=True)
    col = _Collector(specs, on_record, bar, output)
    try:
        if client is not None:
            _run_dask(specs, col, client)
        elif workers <= 1 or len(specs) <= 1:
            _run_serial(specs, col)
        else:
            _run_pool(specs, col, workers)
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


def sweep(base: dict, *, algorithms, trials: int, grid: dict | None = None, seed: int = 0,
          scheduler=None, workers=None, run_overrides: dict | None = None, out=None,
          overwrite: bool = False, progress: bool = True, on_record=None,
          connect_timeout: float = 10.0, paired_chains: bool = False):
    """:func:`plan` the runs and :func:`run_specs` them; see those two for every argument.

    >>> df = sweep({"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "epochs": 10,
    ...             "eval_every": 10}, algorithms="cd,pcd", trials=3,
    ...            grid={"learning_rate": [0.1, 0.5]}, workers=0, progress=False)
    >>> df.groupby(["algorithm", "learning_rate"]).run_id.nunique().tolist()
    [3, 3, 3, 3]
    """
    specs = plan(base, algorithms=algorithms, trials=trials, grid=grid, seed=seed,
                 run_overrides=run_overrides, paired_chains=paired_chains)
    return run_specs(specs, scheduler=scheduler, workers=workers, out=out, overwrite=overwrite,
                     progress=progress, on_record=on_record, connect_timeout=connect_timeout)


def summarize(frame, metric: str | None = None):
    """The final value of ``metric`` per run, as mean ± standard error over trials, for each
    algorithm × grid point.

    ``metric`` defaults to the first of ``test_ll``, ``train_ll``, ``pseudo_ll``,
    ``recon_error`` in the frame.  A run's final value is that of its last record; only
    runs with ``status == "ok"`` enter the mean.  Returns a DataFrame with the group columns
    (``algorithm`` and the labels), ``metric``, ``mean``, ``se`` (sample standard deviation
    / √n; NaN for n = 1), ``n`` (runs that finished) and ``not_ok`` (diverged, failed or
    interrupted runs).
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
