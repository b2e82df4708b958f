"""Executing the runs of a sweep: one run (:func:`_execute`, with its model checkpoints),
and the three backends — serially in this process, a local process pool, a Dask cluster."""
from __future__ import annotations

import concurrent.futures as _cf
import os
import queue as _queue
import time
import uuid

import numpy as np

from . import _store
from ._plan import RunSpec

__all__: list[str] = []


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


def _execute(spec: RunSpec, emit=None, threads=None, checkpoints=(), partial=None):
    """Run ``spec`` to the end; ``emit(seq, row)`` after every record.

    ``checkpoints``: epochs at which to keep a copy of the model — taken at the first record
    at or after each of them (records come every ``eval_every`` epochs and at the end).

    ``partial``: the file where the run's state is kept while it runs (written at a record
    at most every :func:`~rbmviz.sweep._store.partial_every` seconds); if it holds the state
    of this very run, the run continues from there (its rows so far are emitted again), bit
    for bit as if it had not been cut off.

    Returns ``(rows, status, error, models)`` with ``models`` a dict {requested epoch:
    (epoch of the record, RBM copy)}; a divergence or any other exception of the run is a
    status, not an exception (KeyboardInterrupt propagates)."""
    from .._blas import limit_threads
    from ..runs import RunDiverged
    limit_threads(threads)             # a worker given `threads` cores uses no more
    rows: list[dict] = []
    models: dict[int, tuple[int, object]] = {}
    pending = sorted(set(int(e) for e in checkpoints))
    try:
        run = spec.make_run()
        kept = None if partial is None else _store.read_partial(partial, spec)
        if kept is not None:
            try:
                run.restore(kept["state"])
            except ValueError as exc:      # e.g. kept by a version whose algorithm differs
                raise RuntimeError(f"cannot continue {spec.run_id} from its kept state "
                                   f"{partial}: {exc}; delete that file to run it from epoch 0"
                                   ) from None
            rows, models = list(kept["rows"]), dict(kept["models"])
            pending = [e for e in pending if e not in models]
            if emit is not None:
                for seq, row in enumerate(rows):
                    emit(seq, row, True)
        saved, every = time.monotonic(), _store.partial_every()
        for rec in run:
            row = _row(rec)
            rows.append(row)
            while pending and pending[0] <= row["epoch"]:
                models[pending.pop(0)] = (int(row["epoch"]), run.rbm.copy())
            if (partial is not None and not run.done
                    and time.monotonic() - saved >= every):
                _store.write_partial(partial, spec, run.state(), rows, models)
                saved = time.monotonic()
            if emit is not None:
                emit(len(rows) - 1, row)
    except RunDiverged as exc:
        return rows, "diverged", str(exc), models
    except Exception as exc:  # noqa: BLE001 - one broken run must not end the sweep
        return rows, "failed", f"{type(exc).__name__}: {exc}", models
    return rows, "ok", None, models


# process-pool workers: the queue records stream through, set by the pool's initializer
_POOL_QUEUE = None


def _pool_init(q):
    global _POOL_QUEUE
    _POOL_QUEUE = q
    # Ctrl-C reaches the whole process group: the parent alone handles it (keeps the records
    # so far, terminates the workers); a worker must not report it as a failed run
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _partial(store, spec):
    return None if store is None else _store.partial_file(store, spec.run_id)


def _pool_task(spec, index, threads, checkpoints=(), store=None):
    q = _POOL_QUEUE
    emit = None if q is None else (lambda seq, row, replayed=False: q.put((index, seq, row, replayed)))
    return _execute(spec, emit, threads, checkpoints, _partial(store, spec))


def _dask_task(spec, index, topic, host_threads, checkpoints=(), store=None):
    from distributed import get_worker
    worker = get_worker()
    host = worker.address.rsplit(":", 1)[0]
    threads = max(1, (os.cpu_count() or 1) // max(1, host_threads.get(host, worker.state.nthreads)))

    def emit(seq, row, replayed=False):
        try:
            worker.log_event(topic, {"i": index, "seq": seq, "row": row, "replayed": replayed})
        except Exception:  # noqa: BLE001 - streaming is best effort; the result has every row
            pass
    return _execute(spec, emit, threads, checkpoints, _partial(store, spec))


# ---------------------------------------------------------------------------- backends

def _run_serial(specs, todo, col, checkpoints=(), store=None):
    for i in todo:
        col.start(i)
        result = _execute(specs[i], lambda seq, row, replayed=False, i=i: col.record(i, seq, row, replayed),
                          checkpoints=checkpoints, partial=_partial(store, specs[i]))
        col.finish(i, *result)


def _drain(q, col, block=0.0):
    try:
        msg = q.get(timeout=block) if block else q.get_nowait()
        while True:
            col.record(*msg)
            msg = q.get_nowait()
    except (_queue.Empty, EOFError, OSError):
        pass


def _run_pool(specs, todo, col, workers, checkpoints=(), store=None):
    import multiprocessing as mp
    ctx = mp.get_context("spawn")   # no fork of a process whose Numba/OpenMP threads run
    q = ctx.Queue()
    n = min(workers, len(todo))
    threads = max(1, (os.cpu_count() or 1) // n)
    ex = _cf.ProcessPoolExecutor(n, mp_context=ctx, initializer=_pool_init, initargs=(q,))
    clean = False
    try:
        futures = {ex.submit(_pool_task, specs[i], i, threads, checkpoints, store): i for i in todo}
        # finished futures arrive here (a callback per future): checking them costs O(1) per
        # wake-up, where concurrent.futures.wait(pending) costs O(pending) -- with a record
        # every few milliseconds and 500 runs (the full dc-small) that polling alone kept
        # the caller's process busy next to the workers
        finished: _queue.SimpleQueue = _queue.SimpleQueue()
        for f in futures:
            f.add_done_callback(finished.put)
        left = len(futures)
        while left:
            _drain(q, col, block=0.05)
            done = []
            try:
                while True:
                    done.append(finished.get_nowait())
            except _queue.Empty:
                pass
            left -= len(done)
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


def _run_dask(specs, todo, col, client, checkpoints=(), store=None):
    """Submit the runs ``todo`` to ``client``'s cluster and collect them as they finish.

    A worker that dies takes its running tasks with it; the scheduler re-runs them on
    another worker (``distributed.scheduler.allowed-failures`` times), and their records,
    streamed again from the start, are de-duplicated by the collector.  ``as_completed``
    gets the client's own event loop: the client is not made the default one (a caller's
    other client must not be replaced), and ``as_completed`` would otherwise look for a
    default client and fail with "No clients found"."""
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
        for i in todo:
            spec = specs[i]
            f = client.submit(_dask_task, spec, i, topic, host_threads, tuple(checkpoints), store,
                              pure=False, key=f"rbmviz-sweep-{spec.run_id}-{topic[-8:]}")
            futures.append(f)
            index[f.key] = i
        ac = as_completed(futures, loop=client.loop)

        def drain(block):
            try:
                msg = stream.get(timeout=block) if block else stream.get_nowait()
                while True:
                    col.record(msg["i"], msg["seq"], msg["row"], msg.get("replayed", False))
                    msg = stream.get_nowait()
            except _queue.Empty:
                pass
        while not ac.is_empty():
            drain(0.05)
            for f in sorted(ac.next_batch(block=False), key=lambda f: index[f.key]):
                drain(0)
                try:
                    result = f.result()
                except Exception as exc:  # noqa: BLE001 - a lost worker, a bad environment
                    col.fail(index[f.key], exc)
                else:
                    col.finish(index[f.key], *result)
        clean = True
    finally:
        if not clean:
            client.cancel(futures)
        try:
            client.unsubscribe_topic(topic)
        except Exception:  # noqa: BLE001 - the connection may be gone
            pass
