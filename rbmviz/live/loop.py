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
            import numba
            numba.set_num_threads(max(1, min(self.threads, numba.config.NUMBA_NUM_THREADS)))
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
    """A :class:`BackgroundLoop` paced by its ``settings.points_per_second`` that reports a
    failed thread through ``on_error(message)`` — the hooks the bias tab's and the TAP tab's
    engines share (the race reports ``on_error(algorithm, message)`` and may run unpaced)."""

    def _pace(self) -> float | None:
        return 1.0 / max(self.settings.points_per_second, 1)

    def _report_failure(self, message: str) -> None:
        if self.on_error:
            self.on_error(message)
