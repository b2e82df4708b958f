"""Where the runs of a sweep go: the ``out`` file (CSV/Parquet, rewritten as runs finish),
the run store beside it (one JSON file per finished run, written the moment it finishes,
and the model checkpoints), and the collector that gathers rows from any backend."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import pickle
import re
import shutil
import sys
import time
from pathlib import Path

from .. import _files
from ._plan import RECORD_COLUMNS, RunSpec

__all__ = ["store_path", "load_store", "checkpoints"]

#: seconds between two rewrites of the ``out`` file while the sweep runs (at least; see
#: :data:`_WRITE_SHARE`)
_WRITE_EVERY = 2.0
#: the rewrites take at most about this share of the sweep's wall time: the next one waits
#: ``duration / _WRITE_SHARE`` when that is longer than :data:`_WRITE_EVERY` (the whole file is
#: rewritten, so with 250,000 records -- the full dc-small -- one rewrite takes seconds and a
#: fixed 2 s interval kept the caller's process rewriting all the time, next to the workers)
_WRITE_SHARE = 0.05
#: statuses of a finished run that a resumed sweep keeps (failed and interrupted runs rerun)
_FINAL = ("ok", "diverged")
#: seconds between two progress lines in a log (stderr not a terminal)
_SAY_EVERY = 60.0
#: format version of a run file
_VERSION = 1
#: a running run's state is written at a record once this many seconds passed since the last
#: write (so a run cut off continues from a record at most this old, plus one evaluation span);
#: the environment variable ``RBMVIZ_PARTIAL_EVERY`` (seconds) overrides it, also in pool and
#: Dask worker processes started with it
PARTIAL_EVERY = 60.0


def partial_every() -> float:
    """Seconds between two writes of a running run's state (:data:`PARTIAL_EVERY`)."""
    env = os.environ.get("RBMVIZ_PARTIAL_EVERY")
    if env is None:
        return PARTIAL_EVERY
    try:
        value = float(env)
    except ValueError:
        raise ValueError(f"RBMVIZ_PARTIAL_EVERY={env!r}: expected a number of seconds") from None
    if not value >= 0:
        raise ValueError(f"RBMVIZ_PARTIAL_EVERY={env!r}: expected a number of seconds >= 0")
    return value


def _pyarrow_available() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def store_path(out: str | os.PathLike) -> Path:
    """The run store of the results file ``out``: ``sweep.csv`` → ``sweep.runs/`` beside it.

    It holds ``<run_id>.json`` per finished run (its settings, records, status),
    ``<run_id>/epoch-<E>.npz`` model checkpoints (:meth:`rbmviz.RBM.load`) and, while a run
    is under way, ``<run_id>.partial``: its state at a recent record (:meth:`rbmviz.runs.Run.state`),
    from which a resumed sweep continues it.

    Parameters
    ----------
    out : str or os.PathLike
        The sweep's results file.

    Returns
    -------
    pathlib.Path
        The store's directory.
    """
    out = Path(out)
    return out.with_name(out.stem + ".runs")


def _safe(run_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=,+-]", "_", run_id)


def _spec_key(spec: RunSpec) -> str:
    """What makes a stored run the same run: its trial, algorithm, labels, complete
    settings (seeds included) and Run overrides."""
    return json.dumps({"trial": spec.trial, "algorithm": spec.algorithm,
                       "labels": spec.labels, "settings": spec.settings,
                       "run_overrides": spec.run_overrides}, sort_keys=True, default=repr)


def _atomic_write(path: Path, data: str | bytes):
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file unique to the
    process and call, renamed when complete (:mod:`rbmviz._files`): a kill while writing
    leaves the previous file, and its temporary file never blocks a later write."""
    _files.write_bytes(path, data.encode("utf-8") if isinstance(data, str) else data,
                       overwrite=True)


def partial_file(store: Path, run_id: str) -> Path:
    """Where a running run's state is kept: ``<store>/<run_id>.partial``."""
    return Path(store) / f"{_safe(run_id)}.partial"


def write_partial(path: Path, spec: RunSpec, state: dict, rows: list, models: dict) -> None:
    """Keep a running run's state (:meth:`rbmviz.runs.Run.state`), its rows and model
    checkpoints so far, atomically (a kill while writing leaves the previous file).  Skipped
    when the run store's parent directory does not exist here (a Dask worker on another
    machine without the shared file system)."""
    path = Path(path)
    if not path.parent.parent.is_dir():
        return
    path.parent.mkdir(exist_ok=True)
    _atomic_write(path, pickle.dumps({"version": _VERSION, "key": _spec_key(spec), "state": state,
                                      "rows": rows, "models": models},
                                     protocol=pickle.HIGHEST_PROTOCOL))


def read_partial(path: Path, spec: RunSpec) -> dict | None:
    """The kept state of ``spec``'s run, or None (no file, an unreadable one, or one of
    other settings: the run then starts from epoch 0).  The file is a pickle the sweep wrote
    itself into its own run store; keep run stores where only you can write."""
    path = Path(path)
    try:
        _files.check_regular_file(path, "partial")       # a FIFO would block the open
        with open(path, "rb") as fh:
            got = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError,
            ValueError):
        return None
    if not isinstance(got, dict) or got.get("version") != _VERSION or got.get("key") != _spec_key(spec):
        return None
    return got


class _RunStore:
    """One JSON file per finished run; a resumed sweep reads them back."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def file(self, run_id) -> Path:
        return self.path / f"{_safe(run_id)}.json"

    def load(self) -> dict:
        """``{run_id: content}`` of every readable run file (a torn file, or anything that is
        not a regular file, is ignored)."""
        got = {}
        if not self.path.is_dir():
            return got
        for f in sorted(self.path.glob("*.json")):
            try:
                _files.check_regular_file(f, "run file")     # a FIFO would block the read
                content = json.loads(f.read_text(encoding="utf-8"))
                got[content["run_id"]] = content
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return got

    def save(self, spec: RunSpec, rows, status, error, models):
        self.path.mkdir(parents=True, exist_ok=True)
        saved = {}
        for requested, (epoch, rbm) in sorted(models.items()):
            d = self.path / _safe(spec.run_id)
            d.mkdir(exist_ok=True)
            p = d / f"epoch-{epoch}.npz"
            rbm.save(p, overwrite=True)
            saved[str(requested)] = {"epoch": epoch, "file": str(p.relative_to(self.path))}
        content = {"version": _VERSION, "run_id": spec.run_id, "key": _spec_key(spec),
                   "status": status, "error": error, "rows": rows, "checkpoints": saved,
                   "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        _atomic_write(self.file(spec.run_id), json.dumps(content, default=float))
        partial_file(self.path, spec.run_id).unlink(missing_ok=True)
        # temporary files of this run left by a process killed while writing (SIGKILL skips
        # the clean-up of _atomic_write): the run is stored, nothing writes them any more
        for name in (f"{_safe(spec.run_id)}.json", partial_file(self.path, spec.run_id).name):
            _files.remove_stale_temps(self.path / name, finished=True)


def _tidy(store: "_RunStore") -> None:
    """Remove what a sweep killed just after storing a run left of it: the run's kept state
    (``.partial``) and temporary files (a resumed sweep skips the run, so nothing else would)."""
    for run_id, content in store.load().items():
        if content.get("status") in _FINAL:
            partial = partial_file(store.path, run_id)
            partial.unlink(missing_ok=True)
            for name in (store.file(run_id).name, partial.name):
                _files.remove_stale_temps(store.path / name, finished=True)


def load_store(out: str | os.PathLike) -> dict:
    """The finished runs stored beside the results file ``out`` (see :func:`store_path`).

    Parameters
    ----------
    out
        As in :func:`store_path`.

    Returns
    -------
    dict
        ``{run_id: {"status", "error", "rows", "checkpoints", ...}}``.
    """
    return _RunStore(store_path(out)).load()


def checkpoints(out: str | os.PathLike) -> dict:
    """The model checkpoints of a sweep written to ``out``.

    Parameters
    ----------
    out : str or os.PathLike
        The sweep's results file; the checkpoints are in its store (:func:`store_path`),
        ``<run_id>/epoch-<E>.npz``.

    Returns
    -------
    dict
        ``{run_id: {epoch: path}}`` (load one with :meth:`rbmviz.RBM.load`).
    """
    root = store_path(out)
    return {rid: {int(c["epoch"]): root / c["file"] for c in content.get("checkpoints", {}).values()}
            for rid, content in load_store(out).items()}


class _Output:
    """The ``out`` file and its run store: checked before the sweep; each finished run is
    stored at once, the file rewritten atomically (at most every ``_WRITE_EVERY`` s, and
    spending at most about ``_WRITE_SHARE`` of the time on it)."""

    def __init__(self, out, overwrite, resume=False):
        self.path = self.store = None
        if out is None:
            if resume:
                raise ValueError("resume=True needs out= (the results file whose runs to skip)")
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
        if path.is_dir():
            raise FileExistsError(f"out={str(path)!r} is a directory; choose another file")
        # before any run: a file (or run store) that could not be written is refused now
        _files.check_not_special(path, f"out={str(path)!r}:", what="a results file (.csv or .parquet)")
        problem = _files.writable_dir_problem(path.parent)
        if problem:
            raise ValueError(f"out={str(path)!r}: {problem}")
        store = store_path(path)
        if not (resume or overwrite) and (path.exists() or store.exists()):
            what = path if path.exists() else store
            raise FileExistsError(f"out={str(path)!r}: {str(what)!r} exists; choose another file, "
                                  f"pass resume=True to continue that sweep (its finished runs "
                                  f"are skipped) or overwrite=True")
        if overwrite and not resume and store.is_dir():
            shutil.rmtree(store)
        self.path, self.suffix, self._last, self._gap = path, suffix, -math.inf, _WRITE_EVERY
        self.store = _RunStore(store)
        if resume:
            _tidy(self.store)

    def write(self, frame_fn, *, force=False):
        if self.path is None or (not force and time.monotonic() - self._last < self._gap):
            return
        began = time.monotonic()
        frame = frame_fn()
        with _files.atomic_path(self.path, overwrite=True) as tmp:
            if self.suffix == ".csv":
                frame.to_csv(tmp, index=False)
            else:
                frame.to_parquet(tmp, index=False)
        self._last = time.monotonic()
        self._gap = max(_WRITE_EVERY, (self._last - began) / _WRITE_SHARE)


# ---------------------------------------------------------------------------- progress

def _fmt_seconds(s):
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class _Progress:
    """A tqdm bar over the sweep's *epochs* (so that its estimated time left moves within
    long runs), with the runs done in its postfix; on a terminal it redraws, otherwise (a log
    file) it prints one line per finished run with the estimated time left."""

    def __init__(self, specs, done_epochs, n_done):
        from tqdm.auto import tqdm
        self.total = sum(int(s.settings.get("epochs") or 1) for s in specs)
        self.n_runs, self.n_done = len(specs), n_done
        # a terminal or a notebook (tqdm.auto draws a widget there) redraws the bar; a log
        # file gets one line per finished run (and at most one a minute in between)
        self.tty = sys.stderr.isatty() or "ipykernel" in sys.modules
        self.bar = tqdm(total=self.total, initial=done_epochs, unit="epoch", desc="sweep",
                        file=sys.stderr, dynamic_ncols=True, disable=not self.tty)
        self.start, self.start_n, self.n = time.monotonic(), done_epochs, done_epochs
        self._said = self.start
        self.bar.set_postfix_str(f"runs {n_done}/{self.n_runs}", refresh=False)

    def advance(self, n, replayed=False):
        """``n`` more epochs done; ``replayed`` ones (a run continued from its kept state)
        were done in an earlier sitting and do not count towards the rate."""
        if n > 0:
            self.n += n
            if replayed:
                self.start_n += n
            self.bar.update(n)
            if not self.tty and time.monotonic() - self._said >= _SAY_EVERY:
                self._say(f"runs {self.n_done}/{self.n_runs}")

    def _say(self, what):
        self._said = time.monotonic()
        print(f"sweep: {what}; epochs {self.n:,}/{self.total:,}; elapsed "
              f"{_fmt_seconds(self._said - self.start)}, left ~{_fmt_seconds(self.eta())}",
              file=sys.stderr, flush=True)

    def eta(self):
        rate = (self.n - self.start_n) / max(time.monotonic() - self.start, 1e-9)
        return (self.total - self.n) / rate if rate > 0 else math.inf

    def run_done(self, spec, status, n_bad):
        self.n_done += 1
        post = f"runs {self.n_done}/{self.n_runs}" + (f", not ok {n_bad}" if n_bad else "")
        self.bar.set_postfix_str(post, refresh=self.tty)
        if not self.tty:
            self._say(f"{spec.run_id} {status}; {post}")

    def close(self):
        self.bar.close()


# ---------------------------------------------------------------------------- collecting

class _Collector:
    """Rows and statuses as they arrive, from any backend, in the caller's process."""

    def __init__(self, specs, on_record, bar, output):
        self.specs, self.on_record, self.bar, self.output = specs, on_record, bar, output
        self.rows: dict[int, dict[int, dict]] = {}
        self.status: dict[int, tuple[str, str | None]] = {}
        self.resumed: set[int] = set()
        self.continued: dict[int, float] = {}      # runs continued from a kept state: epoch
        self.epoch: dict[int, int] = {}
        self.interrupted = False

    def preload(self, index, rows, status, error):
        """A run finished by an earlier sweep (read from the run store)."""
        self.rows[index] = dict(enumerate(rows))
        self.status[index] = (status, error)
        self.resumed.add(index)

    def start(self, index):
        pass

    def record(self, index, seq, row, replayed=False):
        got = self.rows.setdefault(index, {})
        if seq in got or index in self.status:     # already delivered (stream and result)
            return
        got[seq] = row
        if replayed and row.get("epoch") is not None:
            self.continued[index] = max(self.continued.get(index, 0), row["epoch"])
        if self.bar is not None and row.get("epoch") is not None:
            last = self.epoch.get(index, 0)
            if row["epoch"] > last:
                self.bar.advance(int(row["epoch"]) - last, replayed)
                self.epoch[index] = int(row["epoch"])
        if self.on_record is not None:
            self.on_record(self.specs[index], dict(row))

    def finish(self, index, rows, status, error, models=None):
        for seq, row in enumerate(rows):
            self.record(index, seq, row)
        self.status[index] = (status, error)
        spec = self.specs[index]
        if self.output.store is not None and status in _FINAL:
            self.output.store.save(spec, [self.rows[index][s] for s in sorted(self.rows.get(index, {}))],
                                   status, error, models or {})
        if self.bar is not None:
            epochs = int(spec.settings.get("epochs") or 1)
            self.bar.advance(epochs - self.epoch.get(index, 0))
            self.epoch[index] = epochs
            n_bad = sum(s != "ok" for s, _ in self.status.values())
            self.bar.run_done(spec, status, n_bad)
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
        df.attrs["resumed"] = len(self.resumed)
        df.attrs["continued"] = {self.specs[i].run_id: e for i, e in sorted(self.continued.items())}
        return df
