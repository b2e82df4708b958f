"""The background-thread loop shared by the live engines (:mod:`rbmviz.live.race`,
:mod:`rbmviz.live.bias`, :mod:`rbmviz.live.tap`).

A live engine advances a computation by one *point* at a time on its own thread, paced to a
number of points per second, and hands the new records to a ``sink`` at most
``max_updates_per_second`` times a second.  Start / Pause / Step / Stop are the same for
every engine; subclasses say only how to advance, when they are finished, how to deliver a
batch and whom to tell about a failure.  No Panel here: the app's sink schedules the real
work on its event loop (see :mod:`rbmviz.app.feed`).
"""
from __future__ import annotations

import threading
import time
import traceback
from typing import TYPE_CHECKING

from .._blas import set_numba_threads

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BackgroundLoop", "SettingsLoop"]


class BackgroundLoop:
    """Mix-in: a paced, pausable, steppable training loop on one daemon thread.

    Subclasses call :meth:`_init_loop` in their ``__init__`` and implement

    * :meth:`_advance` → list of new record dicts (also append them to ``self._pending``,
      under ``self._lock``);
    * :attr:`finished` → whether the loop should idle (target reached, everything failed);
    * :meth:`_deliver` (batch) → hand a batch of pending records to the sink;
    * :meth:`_report_failure` (message) → tell the user the thread failed;
    * optionally :meth:`_pace` → seconds per point, or ``None`` for "as fast as possible".
    """

    thread_name = "rbmviz-loop"

    def _init_loop(self, *, threads: int = 1, max_updates_per_second: float = 10.0) -> None:
        if max_updates_per_second <= 0:
            raise ValueError(f"max_updates_per_second must be > 0, got {max_updates_per_second}")
        self.threads = int(threads)
        self.min_interval = 1.0 / max_updates_per_second
        self._pending: list[dict] = []
        self._lock = threading.RLock()
        self._running = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_emit = 0.0

    # ------------------------------------------------------------------ hooks
    @property
    def finished(self) -> bool:  # pragma: no cover - abstract
        """Whether the loop should idle: its target is reached or everything failed (the tab
        then says "press Reset" at Start)."""
        raise NotImplementedError

    def _advance(self) -> list[dict]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _deliver(self, batch: list[dict]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _report_failure(self, message: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _pace(self) -> float | None:
        """Seconds per point (``None``: no pacing)."""
        return None

    # ------------------------------------------------------------------ state
    def _pause_asked(self) -> bool:
        """Whether Pause or Stop came while the loop thread trains a point (False on any
        other thread: a Step while paused trains a whole point)."""
        return (threading.current_thread() is self._thread
                and (not self._running.is_set() or self._stopped.is_set()))

    @property
    def running(self) -> bool:
        """Whether the loop trains now (started, not paused, not stopped)."""
        return self._running.is_set() and not self._stopped.is_set()

    # ------------------------------------------------------------------ controls
    def start(self) -> None:
        """Start (or resume) on the background thread (a tab's Start button).

        Raises
        ------
        RuntimeError
            If the loop was stopped: a stopped engine cannot restart (build a new one).
        """
        if self._stopped.is_set():
            raise RuntimeError(f"this {type(self).__name__} was stopped; build a new one")
        self._running.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
            self._thread.start()

    def pause(self) -> None:
        """Pause after the current point (pending records are still delivered)."""
        self._running.clear()

    def stop(self, timeout: float = 5.0) -> None:
        """End the loop and its thread (e.g. when the browser tab closes, or at Reset).

        Parameters
        ----------
        timeout : float
            Seconds to wait for the thread to finish its point (0: do not wait).
        """
        self._stopped.set()
        self._running.set()            # wake the thread so it can exit
        th = self._thread
        if th is not None and th is not threading.current_thread():
            th.join(timeout)

    def discard_pending(self) -> list[dict]:
        """Drop the records not yet handed to the sink, and return them.

        For a view that has drawn an engine's records itself: the bias tab draws a new
        engine's point at iteration 0 from ``records`` at Reset, and discards it from the
        stream so the first batch does not draw it twice.

        Returns
        -------
        list of dict
            The dropped records, oldest first (empty when every record was delivered).
        """
        with self._lock:
            dropped, self._pending = self._pending, []
        return dropped

    def step(self) -> list[dict]:
        """Advance by one point and deliver at once (the "Step" button; use while paused).

        Returns
        -------
        list of dict
            The new records of that point.
        """
        recs = self._advance()
        self._emit(force=True)
        return recs

    # ------------------------------------------------------------------ the loop
    def _loop(self) -> None:
        try:
            set_numba_threads(self.threads)
            while not self._stopped.is_set():
                if not self._running.is_set() or self.finished:
                    self._running.clear()
                    self._emit(force=True)
                    self._running.wait(0.5)
                    continue
                t0 = time.perf_counter()
                self._advance()
                self._emit()
                pace = self._pace()
                if pace is not None:
                    rest = pace - (time.perf_counter() - t0)
                    if rest > 0:
                        self._stopped.wait(rest)
        except Exception:  # the thread must never die silently
            self._running.clear()
            self._report_failure(f"training thread failed: {traceback.format_exc(limit=3)}")

    def _emit(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not self._pending or (not force and now - self._last_emit < self.min_interval):
            return
        with self._lock:
            batch, self._pending = self._pending, []
        self._last_emit = now
        self._deliver(batch)


class SettingsLoop(BackgroundLoop):
    """A :class:`BackgroundLoop` driven by one settings object — the base the bias tab's and
    the TAP tab's engines share (the race reports ``on_error(algorithm, message)`` and may run
    unpaced).

    It is paced by ``settings.points_per_second``, reports a failed thread or a diverged run
    through ``on_error(message)``, is finished once it failed or holds ``max_points``
    records, refuses at :meth:`update_settings` every knob that is not live, and gives its
    records as a table (:meth:`frame`).  A subclass sets the class attributes below and calls
    :meth:`_init_engine` first in its ``__init__``.
    """

    #: the ``param.Parameterized`` class of the engine's settings
    settings_class: type
    #: keyword arguments of ``settings_class`` for the engine's default settings
    default_settings: dict = {}
    #: knobs the running engine accepts between points (applied by :meth:`_settings_changed`)
    live_knobs: tuple = ()
    #: knobs of the view (pace), applied at once
    pace_knobs: tuple = ()
    #: the fields of a record: the columns of :meth:`frame`
    record_fields: tuple = ()

    def _init_engine(self, settings, *, sink, on_error, threads, max_updates_per_second,
                     max_points):
        """Copy ``settings`` (default: :attr:`default_settings`), keep the callbacks, set up
        the loop; the engine then holds no record and no failure.  Returns the copy."""
        cls = self.settings_class
        s = settings if settings is not None else cls(**self.default_settings)
        self.settings = cls(**{n: getattr(s, n) for n in s.param if n != "name"})
        self.sink, self.on_error = sink, on_error
        self._init_loop(threads=threads, max_updates_per_second=max_updates_per_second)
        self.max_points = int(max_points)
        self.failed: str | None = None
        self.records: list[dict] = []
        return self.settings

    # ------------------------------------------------------------------ hooks
    def _pace(self) -> float | None:
        return 1.0 / max(self.settings.points_per_second, 1)

    def _report_failure(self, message: str) -> None:
        if self.on_error:
            self.on_error(message)

    def _fail(self, message: str) -> list[dict]:
        """Stop this engine with ``message`` (kept in ``failed``, told to ``on_error``);
        returns no records."""
        self.failed = message
        self._running.clear()
        if self.on_error:
            self.on_error(message)
        return []

    def _check_changes(self, changes: dict) -> None:
        """Refuse ``changes`` that the running engine cannot take (``ValueError``); the base
        refuses every knob outside :attr:`live_knobs` and :attr:`pace_knobs`."""
        bad = sorted(set(changes) - set(self.live_knobs) - set(self.pace_knobs))
        if bad:
            raise ValueError(f"{bad} cannot change during a run (press Reset); live knobs: "
                             f"{list(self.live_knobs + self.pace_knobs)}")

    def _settings_changed(self, changes: dict) -> None:
        """Hand the live knobs just set on ``settings`` to the computation (under the lock);
        the base has nothing to hand on (the engine reads its settings at every point)."""

    # ------------------------------------------------------------------ state and controls
    @property
    def finished(self) -> bool:
        """Whether the engine idles: it failed, or it holds ``max_points`` records."""
        return self.failed is not None or len(self.records) >= self.max_points

    def update_settings(self, **changes: object) -> dict:
        """Apply live knobs (from the next point or update on) and pace knobs (at once).

        Parameters
        ----------
        **changes
            New values of the engine's :attr:`live_knobs` and :attr:`pace_knobs`, by name.

        Returns
        -------
        dict
            The changes applied (all of ``changes``).

        Raises
        ------
        ValueError
            For a knob the running engine cannot take (it needs a new engine: Reset), or a
            value the engine refuses (e.g. the TAP engines' K larger than the batch M).
        """
        self._check_changes(changes)
        with self._lock:
            self.settings.param.update(**changes)
            self._settings_changed(changes)
        return dict(changes)

    def frame(self) -> pd.DataFrame:
        """The records so far as a table.

        Returns
        -------
        pandas.DataFrame
            One row per point, the columns :attr:`record_fields`.
        """
        import pandas as pd
        with self._lock:
            return pd.DataFrame.from_records(self.records, columns=list(self.record_fields))
