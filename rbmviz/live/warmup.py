"""Compile the explorer's Numba kernels in the background when the server starts.

A freshly started server with an empty Numba cache compiles each kernel the first time a page
uses it: 10–25 s of silence after the first Start of a large race, 20–30 s before the CD-bias
tab opens.  :func:`start` (run when the server starts: ``rbmviz explore`` passes
:mod:`rbmviz.app.warm_start` to ``panel serve --setup``, as the README's command does with the
checkout's copy; the served script calls it too, for a server started without it) runs tiny versions of every engine the tabs
use, on one daemon thread, in the order a page needs them — the race tab's default, then the
large data sets' float32 race, the other training rules, the CD-bias tab, the TAP tab.  The
compiled kernels stay in the process (and in the on-disk cache, ``cache=True``), so the
first real run only pays for its own training.  :func:`status` tells a page what is being
prepared and how long it is expected to take, so that it never looks hung.

No Panel here: the tabs read :func:`status` and show it.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from .._blas import set_numba_threads

__all__ = ["STAGES", "WarmupStatus", "start", "status", "wait", "run_stage", "prefer"]

_LOG = logging.getLogger("rbmviz.warmup")


def _race(dataset, algorithms, *, dtype=None, n_hidden=4, steps=3, limit=None, **train):
    from ..settings import DataSettings, ModelSettings, TrainSettings
    from .race import Race
    model = ModelSettings(n_hidden=n_hidden, **({} if dtype is None else {"dtype": dtype}))
    data = DataSettings(dataset=dataset, **({} if limit is None else {"limit": limit}))
    race = Race(data, model, TrainSettings(**train), list(algorithms), max_speed=True)
    for _ in range(steps):
        race.step()
    race.snapshot()


def _small_race():
    _race("bars_and_stripes", ["cd", "pcd"], k=5, eval_every=2)


def _file_dataset():
    """MNIST when its files are in the data directory (its sparse 0/1 rows take the
    sum-of-rows products), else None."""
    from .. import datasets
    return "mnist" if datasets.available("mnist") else None


def _binary_products():
    """The 0/1 products as sums of rows (:mod:`rbmviz.kernels.binary`) in both float types: a
    race switches to them when its chains turn sparse, mid-run (digits trains float64, and
    a 3 s compile there once delayed its first training point); and the blocked dense
    products (:mod:`rbmviz.kernels.gemm`)."""
    import numpy as np
    from .. import _blas
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        A = (rng.random((8, 16)) < 0.1).astype(dtype)
        idx, cnt = np.empty(A.shape, np.int32), np.empty(A.shape[0], np.int32)
        density = _blas.binary_rows(A, idx, cnt)
        _blas.binary_matmul(A, np.ones((16, 4), dtype), np.empty((8, 4), dtype), idx, cnt, density)
        _blas.binary_matmul_T([(A, np.ones((8, 4), dtype), idx, cnt, density)],
                              np.empty((16, 4), dtype))
        # a dense product of 96 rows or more: row blocks on Numba's threads (kernels.gemm)
        _blas.matmul(rng.random((96, 8)).astype(dtype), np.ones((8, 4), dtype), np.empty((96, 4), dtype))


def _preset_race(dataset, *, limit, steps=4):
    """A short race at the data set's own preset (model size, float type, batch, k), as the
    explorer starts it: the kernels compiled are the ones its first Start needs."""
    from ..presets import for_dataset
    pre = for_dataset(dataset)
    _race(dataset, ["cd", "pcd"], dtype=pre["dtype"], n_hidden=pre["n_hidden"], steps=steps,
          k=pre["k"], batch_size=pre["batch_size"], learning_rate=pre["learning_rate"],
          limit=limit)


def _large_race():
    # the large data sets' models train a float32 working copy; digits trains float64
    _binary_products()
    mnist = _file_dataset()
    if mnist is not None:
        _preset_race(mnist, limit=300)
    _preset_race("digits", limit=400)
    for dtype in ("float32", "float64"):
        _race("digits", ["cd", "pcd"], dtype=dtype, n_hidden=30, steps=4, k=1, batch_size=20,
              limit=200)


def _other_rules():
    _race("shifting_bar", ["cg", "sdcp", "csdcp", "ssd"], k=4, eval_every=2, steps=2)


def _bias_tab():
    from .bias import BiasRace, BiasSettings
    race = BiasRace(BiasSettings(iterations_per_point=2))
    race.step()
    race.step()


def _tap_tab():
    from .tap import TapRace, TapSettings
    race = TapRace(TapSettings(dataset=_file_dataset() or "digits", limit=200, n_hidden=10,
                               landscape_rows=20, eval_rows=20, updates_per_point=1))
    race.step()
    race.step()


@dataclass(frozen=True)
class _Stage:
    key: str
    what: str            # what the page says is being prepared
    seconds: float       # typical compile time with an empty cache on 2 cores
    run: object = field(repr=False)


#: the warm-up, in the order a page needs it (what a fresh page starts first comes first)
STAGES = (
    _Stage("race", "the small-model race (CD, PCD, exact likelihood)", 20.0, _small_race),
    _Stage("large", "the large-model race (float32 Gibbs sampling, pseudo-likelihood)", 20.0,
           _large_race),
    _Stage("rules", "the other training rules (centered gradient, S-DCP, CS-DCP, SSD)", 25.0,
           _other_rules),
    _Stage("bias", "the CD-bias tab (exact expected CD-k update and its bound)", 25.0, _bias_tab),
    _Stage("tap", "the TAP tab (TAP fixed points, TAP training)", 25.0, _tap_tab),
)


@dataclass
class WarmupStatus:
    """Where the warm-up stands: what the explorer's tabs read to say "preparing ..." while
    a kernel they need compiles (:func:`status` returns a copy).  Every parameter is kept as
    the attribute of the same name.

    Parameters
    ----------
    started : bool
        Whether :func:`start` has been called in this process.
    done : tuple of str
        Keys of the finished stages (:data:`STAGES`).
    current : str or None
        Key of the stage compiling now.
    seconds : dict
        Measured seconds of each finished stage.
    failed : dict
        ``{key: message}`` of stages that raised (the tab then compiles on first use).
    stage_started : float
        ``time.perf_counter()`` when the current stage started.
    """

    started: bool = False
    done: tuple = ()
    current: str | None = None
    seconds: dict = field(default_factory=dict)
    failed: dict = field(default_factory=dict)
    stage_started: float = 0.0

    def ready(self, key: str) -> bool:
        """Whether stage ``key`` is compiled (or failed: then waiting does not help).

        Parameters
        ----------
        key : str
            The stage, one of the ``key`` values of :data:`STAGES` (e.g. ``"race"``).

        Returns
        -------
        bool
            True once the stage finished or failed.
        """
        return key in self.done or key in self.failed

    def message(self, key: str, then: str = "Start now and training begins as soon as they "
                                           "are ready.") -> str | None:
        """What a page whose tab needs stage ``key`` should say, or None when it is ready.

        Parameters
        ----------
        key : str
            A key of :data:`STAGES`.
        then : str
            What happens next, in the page's words (e.g. "The tab opens by itself.").

        Returns
        -------
        str or None
            E.g. "Preparing the TAP tab (TAP fixed points, TAP training): compiling its
            kernels, about 20 s left. …".
        """
        if not self.started or self.ready(key):
            return None
        by_key = {s.key: s for s in STAGES}
        left = 0.0
        for k in [*((self.current,) if self.current else ()), *_pending_before(key)]:
            stage = by_key[k]
            if k == self.current:
                left += max(2.0, stage.seconds - (time.perf_counter() - self.stage_started))
            else:
                left += stage.seconds
        return (f"Preparing {by_key[key].what}: compiling its kernels, about {left:.0f} s "
                f"left (a new server compiles once; later runs start at once). {then}")


_STATUS = WarmupStatus()
_LOCK = threading.Lock()
_DONE = threading.Event()
#: keys of the stages not started yet, in the order they will run
_PENDING = [s.key for s in STAGES]


def _pending_before(key: str) -> list[str]:
    """The pending stages up to and including ``key`` (empty when it is not pending)."""
    with _LOCK:
        if key not in _PENDING:
            return []
        return _PENDING[: _PENDING.index(key) + 1]


def prefer(key: str) -> None:
    """Compile stage ``key`` next (a page needs it now: kernels a page needs first compile
    first).  Does nothing when it is running or done.

    Parameters
    ----------
    key : str
        A key of :data:`STAGES`.

    Raises
    ------
    ValueError
        For an unknown key.
    """
    if key not in {s.key for s in STAGES}:
        raise ValueError(f"key must be one of {[s.key for s in STAGES]}, got {key!r}")
    with _LOCK:
        if key in _PENDING:
            _PENDING.remove(key)
            _PENDING.insert(0, key)


def run_stage(stage: _Stage) -> float:
    """Run one warm-up stage on this thread.

    The warm-up thread runs every stage in turn; a test or a benchmark runs one to compile
    its kernels on purpose.

    Parameters
    ----------
    stage : one of :data:`STAGES`
        The stage (its ``run`` trains a tiny version of a tab's engine).

    Returns
    -------
    float
        Its seconds.
    """
    t0 = time.perf_counter()
    stage.run()
    return time.perf_counter() - t0


def _work():
    set_numba_threads(1)        # this thread only: the server keeps a core for its pages
    by_key = {s.key: s for s in STAGES}
    while True:
        with _LOCK:
            if not _PENDING:
                break
            stage = by_key[_PENDING.pop(0)]
            _STATUS.current, _STATUS.stage_started = stage.key, time.perf_counter()
        try:
            _STATUS.seconds[stage.key] = run_stage(stage)
        except Exception as exc:        # a missing optional file must not stop the rest
            _STATUS.failed[stage.key] = f"{type(exc).__name__}: {exc}"
            _LOG.warning("warm-up stage %s failed: %s", stage.key, exc)
        else:
            _STATUS.done = (*_STATUS.done, stage.key)
        _STATUS.current = None
    _LOG.info("explorer kernels ready in %.1f s (%s)", sum(_STATUS.seconds.values()),
              ", ".join(f"{k} {v:.1f} s" for k, v in _STATUS.seconds.items()))
    _DONE.set()


def start() -> WarmupStatus:
    """Start the warm-up thread of this process (once; later calls return the status).

    Returns
    -------
    WarmupStatus
        The live status object (:func:`status`).
    """
    with _LOCK:
        if not _STATUS.started:
            _STATUS.started = True
            threading.Thread(target=_work, name="rbmviz-warmup", daemon=True).start()
    return _STATUS


def status() -> WarmupStatus:
    """The warm-up's status in this process (``started`` False before :func:`start`).

    Returns
    -------
    WarmupStatus
    """
    return _STATUS


def wait(timeout: float | None = None) -> bool:
    """Block until the warm-up has finished (True) or ``timeout`` seconds passed (False).

    Parameters
    ----------
    timeout : float, optional
        Seconds to wait at most (None: no limit).

    Returns
    -------
    bool
    """
    return _DONE.wait(timeout)
