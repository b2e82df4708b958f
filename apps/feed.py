"""Handing work from a training thread to a Bokeh document — shared by the explorer's tabs.

:class:`DocumentFeed` is a mix-in for per-session objects.  The training thread calls
:meth:`_feed` with new records (and optionally a state snapshot); the feed coalesces them so
at most one update waits on the event loop (``doc.add_next_tick_callback``, the only
thread-safe entry to a document), applies back-pressure (the thread waits up to a second
while the browser has not taken the previous batch, so Pause is prompt and nothing piles up),
and runs the subclass's :meth:`_apply_batch` once per batch under
``doc.models.freeze()`` and ``pn.io.hold`` (unfrozen, every stream update re-walks the whole
document: ~0.3 s each with the template).  Without a document (a notebook) it applies
directly.
"""
from __future__ import annotations

import threading

import panel as pn


class DocumentFeed:
    """Mix-in: ``self.doc`` and ``self.race`` (with ``stop``) are set by the subclass, which
    implements ``_apply_batch(records, state)`` and calls :meth:`_init_feed` first."""

    def _init_feed(self):
        self._inbox, self._inbox_state, self._update_scheduled = [], None, False
        self._inbox_lock = threading.Lock()
        self._applied = threading.Event()
        self._applied.set()

    def _clear_feed(self):
        with self._inbox_lock:
            self._inbox, self._inbox_state = [], None

    def _schedule(self, fn):
        doc = self.doc
        if doc is None:          # a notebook: no server document, apply directly
            fn()
            return
        try:
            doc.add_next_tick_callback(fn)
        except (AttributeError, RuntimeError):   # the document is gone: the tab closed
            if self.race is not None:
                self.race.stop(timeout=0)

    def _feed(self, records, state=None):
        """From the training thread: queue ``records`` (and the latest ``state``)."""
        self._applied.wait(1.0)                  # back-pressure: one batch in flight at most
        with self._inbox_lock:
            self._inbox.extend(records)
            self._inbox_state = state
            if self._update_scheduled:
                return
            self._update_scheduled = True
            self._applied.clear()
        self._schedule(self._drain)

    def _drain(self):
        with self._inbox_lock:
            records, self._inbox = self._inbox, []
            state, self._update_scheduled = self._inbox_state, False
        try:
            if self.doc is not None:
                with self.doc.models.freeze(), pn.io.hold(self.doc):
                    self._apply_batch(records, state)
            else:
                self._apply_batch(records, state)
        finally:
            self._applied.set()

    def _notify(self, message, level="error"):
        """A visible notification (toast) plus the message in ``self.alert_text``."""
        notes = pn.state.notifications
        if notes is not None:
            getattr(notes, level)(message, duration=0 if level == "error" else 6000)
        self.alert_text.object = f"⚠ {message}"

    def _destroyed(self, session_context):
        if self.race is not None:
            self.race.stop(timeout=0)
