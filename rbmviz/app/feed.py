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

import collections
import threading
import time

from typing import Any

import panel as pn

from . import limits
from .widgets import autohide

#: the share of the server's event loop that streamed updates may take, summed over all
#: sessions of the process; beyond it each session spaces its updates further apart, so a
#: click (a websocket message, read between two callbacks) still gets through at once
LOOP_SHARE = 0.5
#: seconds of update history the share is measured over
LOOP_WINDOW = 2.0
#: the longest a training thread waits for its turn (then it delivers anyway)
MAX_SPACING = 1.0


class LoopShare:
    """How long each session's updates took on the event loop, over all sessions of a
    process, and the spacing that keeps them within ``share`` of the loop's time.

    With one session nothing changes (a 20 ms update every 0.1 s is 20 %); with a lecture
    hall of 30 sessions at 20 ms each, every session updates about once a second instead of
    all of them queueing on the loop, where a Pause clicked by one student waited behind
    everybody's plots.

    Parameters
    ----------
    share : float
        The fraction of the loop's time that updates may take (0 < share ≤ 1).
    window : float
        Seconds of history.

    Raises
    ------
    ValueError
        When ``share`` is not in (0, 1] or ``window`` is not positive.
    """

    def __init__(self, share: float = LOOP_SHARE, window: float = LOOP_WINDOW):
        if not 0 < share <= 1:
            raise ValueError(f"share must be in (0, 1], got {share}")
        if window <= 0:
            raise ValueError(f"window must be > 0 seconds, got {window}")
        self.share, self.window = share, window
        self._lock = threading.Lock()
        self._drains: collections.deque = collections.deque()   # (end time, seconds, session)

    def record(self, session: int, seconds: float, now: float | None = None) -> None:
        """Note that one update of ``session`` took ``seconds`` of the loop.

        Parameters
        ----------
        session : int
            Identifies the session (any hashable id; the feed uses ``id(self)``).
        seconds : float
            How long the update held the event loop.
        now : float, optional
            ``time.perf_counter()`` when it ended (default: now).
        """
        now = time.perf_counter() if now is None else now
        with self._lock:
            self._drains.append((now, seconds, session))
            self._prune(now)

    def _prune(self, now):
        while self._drains and self._drains[0][0] < now - self.window:
            self._drains.popleft()

    def spacing(self, now: float | None = None) -> float:
        """Seconds between two updates of one session, so the updates keep within ``share``.

        Parameters
        ----------
        now : float, optional
            ``time.perf_counter()`` to measure the window back from (default: now).

        Returns
        -------
        float
            (sessions updating in the window) × (mean update seconds) / ``share``; 0
            without history.
        """
        now = time.perf_counter() if now is None else now
        with self._lock:
            self._prune(now)
            if not self._drains:
                return 0.0
            sessions = len({d[2] for d in self._drains})
            mean = sum(d[1] for d in self._drains) / len(self._drains)
        return sessions * mean / self.share


#: the loop of this process (Bokeh serves all of a process's sessions on one event loop)
LOOP = LoopShare()


class DocumentFeed:
    """Mix-in of every tab's session object: hands the engine's records from its training
    thread to the tab's Bokeh document (see the module docstring).

    ``self.doc`` and ``self.race`` (with ``stop``) are set by the subclass, which implements
    ``_apply_batch(records, state)`` and calls :meth:`_init_feed` first.
    """

    #: apply each batch under ``doc.models.freeze()`` and ``pn.io.hold`` (for tabs whose
    #: HoloViews streams create models on every update); tabs that only feed plain Bokeh
    #: sources (:mod:`rbmviz.app.live_plots`) set it False, so every event leaves in order
    #: (``"collect"``: hold the events without freezing and send them in order, for tabs that
    #: only feed sources; ``False``: every event leaves on its own)
    hold_document = True

    def _init_feed(self):
        self._inbox, self._inbox_state, self._update_scheduled = [], None, False
        self._inbox_lock = threading.Lock()
        self._applied = threading.Event()
        self._applied.set()
        self._generation = 0
        self._last_drain = 0.0

    def _clear_feed(self):
        """Forget queued records and refuse late ones from engines made before this call
        (call it after stopping the old engine, before making the new one)."""
        with self._inbox_lock:
            self._inbox, self._inbox_state = [], None
            self._generation += 1

    def _current_sink(self):
        """The sink to give a new engine: it feeds this session only while no newer engine
        replaced it (a stopped race's last batch must not land in the next race's curves:
        it once put a point at update 11 before the new race's update 0)."""
        generation = self._generation

        def sink(records, state=None):
            self._feed(records, state, generation=generation)
        return sink

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

    def _feed(self, records, state=None, generation=None):
        """From the training thread: queue ``records`` (and the latest ``state``); dropped
        when ``generation`` is older than the session's current one."""
        self._applied.wait(1.0)                  # back-pressure: one batch in flight at most
        if self.doc is not None:                 # fair share of the server's loop
            wait = LOOP.spacing() - (time.perf_counter() - self._last_drain)
            if wait > 0:
                time.sleep(min(wait, MAX_SPACING))
        with self._inbox_lock:
            if generation is not None and generation != self._generation:
                return
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
        t0 = time.perf_counter()
        try:
            if self.doc is not None and self.hold_document == "collect":
                with pn.io.hold(self.doc, policy="collect"):    # one message, in order
                    self._apply_batch(records, state)
            elif self.doc is not None and self.hold_document:
                with self.doc.models.freeze(), pn.io.hold(self.doc):
                    self._apply_batch(records, state)
            else:
                self._apply_batch(records, state)
        finally:
            self._last_drain = time.perf_counter()
            if self.doc is not None:
                LOOP.record(id(self), self._last_drain - t0, self._last_drain)
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


def change_text(changes: dict) -> str:
    """The label of a live knob change on a tab's curves, e.g. ``"k 1 → 4, inference tap →
    adatap"``.

    Parameters
    ----------
    changes : dict
        ``{knob: (old, new)}``.

    Returns
    -------
    str
        One ``knob old → new`` per knob (numbers in ``:g`` format).
    """
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return ", ".join(f"{k} {o:g} → {n:g}" if number(n) and number(o) else f"{k} {o} → {n}"
                     for k, (o, n) in changes.items())


class SessionControls:
    """Mix-in of every tab's session object: its Start / Pause / Step buttons, the knob
    watcher, the classroom style and a lesson's scheduled changes.

    The tab's engine is a :class:`rbmviz.live.loop.BackgroundLoop` (``self.race``).  The
    subclass implements ``reset()`` and ``_refresh_state()`` and sets the class attributes
    below; it has ``settings_text`` and :meth:`DocumentFeed._notify`.
    """

    #: shown when Start is pressed on a finished run
    finished_message = "This run stopped: press Reset."
    #: run Step on a worker thread (the sink may wait for the browser: back-pressure)
    step_in_thread = True
    #: knobs the running engine takes between points (``race.update_settings``)
    live_knobs: tuple = ()
    #: knobs that need a new engine
    reset_knobs: frozenset = frozenset()
    #: the label of the tab's Reset button, and when a live change applies
    reset_label = "Reset"
    applies_from = "the next update"
    #: what a failure of the engine's thread is reported as (a toast and the alert line)
    error_prefix = "training"
    #: what the "Cannot start" message adds after a missing data file's
    missing_file_hint: str | None = None

    def _make_controls(self, suffix: str = "", widths: tuple = (120, 120, 100, 100)) -> None:
        """The Start / Pause / Step / Reset buttons (labels ending in ``suffix``, wired to
        :meth:`start`, :meth:`pause`, :meth:`step` and ``reset``) and the status, settings
        and alert lines (``text_panes``, restyled by :meth:`set_classroom`)."""
        labels = (("▶ Start", {"color": "primary"}), ("❚❚ Pause", {}), ("Step", {}),
                  ("Reset", {"color": "danger"}))
        buttons = [pn.widgets.Button(label=label + suffix, width=width, **style)
                   for (label, style), width in zip(labels, widths)]
        self.start_button, self.pause_button, self.step_button, self.reset_button = buttons
        for button, action in zip(buttons, (self.start, self.pause, self.step, self.reset)):
            button.on_click(lambda event, action=action: action())
        self.state_text = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.settings_text = autohide(pn.pane.Markdown("", sizing_mode="stretch_width"))
        self.alert_text = autohide(pn.pane.Markdown("", sizing_mode="stretch_width",
                                                    styles={"color": "#b00020"}))
        self.text_panes = (self.state_text, self.settings_text, self.alert_text)

    def _new_engine(self, make) -> bool:
        """Replace the tab's engine (a Reset): stop the running one, forget its queued
        records, make the new one with ``make()`` and refuse it beyond the classroom caps
        (:meth:`rbmviz.app.limits.Limits.check_engine`).  A refused or impossible engine
        (``ValueError``, ``TypeError``, a missing data file) leaves none, with a "Cannot
        start" notification (:attr:`missing_file_hint` after a missing file's message).
        Returns whether there is a new engine."""
        if self.race is not None:
            self.race.stop(timeout=2)
        self._clear_feed()
        try:
            self.race = make()
            self.limits.check_engine(self.race)     # refused beyond the caps (H4)
        except (ValueError, TypeError, FileNotFoundError) as exc:
            self.race = None
            if isinstance(exc, FileNotFoundError) and self.missing_file_hint:
                self._notify(f"Cannot start: a data file is missing — {exc}  "
                             f"{self.missing_file_hint}")
            else:
                self._notify(f"Cannot start: {exc}")
            return False
        self.race_id += 1
        return True

    def _error_from_thread(self, message: str) -> None:
        """The engine's ``on_error``, called from its thread: the message is shown on the
        document's event loop (:attr:`error_prefix`: message)."""
        def show():
            self._notify(f"{self.error_prefix}: {message}")
            self._refresh_state()
        self._schedule(show)

    def start(self) -> None:
        """The Start button: train on the engine's thread (a new engine if there is none; a
        warning instead when the engine is finished)."""
        if self.race is None:
            self.reset()
        if self.race is not None:
            if self.race.finished:
                self._notify(self.finished_message, "warning")
                return
            self.race.start()
            self._refresh_state()

    def pause(self) -> None:
        """The Pause button: the engine stops after its current point."""
        if self.race is not None:
            self.race.pause()
            self._refresh_state()

    def step(self) -> None:
        """The Step button: pause, then advance the engine by one point (on a worker thread
        when ``step_in_thread``, since delivering may wait for the browser)."""
        if self.race is None:
            return
        if self.race.running:
            self.race.pause()
        if self.step_in_thread:
            threading.Thread(target=self.race.step, daemon=True).start()
        else:
            self.race.step()

    #: projector fonts and trimmed controls (classroom mode) are on
    classroom = False
    #: the lesson whose scheduled knob changes every new engine of this tab applies
    lesson = None

    def _after_reset(self) -> None:
        """Called by a tab's ``reset`` once its new engine exists: the figures take the
        classroom style, and a lesson's knob changes are scheduled on the engine
        (:func:`rbmviz.live.lessons.schedule`), the tab's widgets following them."""
        self.set_classroom(self.classroom)
        if self.lesson is not None and self.lesson.changes and self.race is not None:
            from ..live import lessons
            lessons.schedule(self.race, self.lesson.changes, on_change=self._follow_lesson)

    def _follow_lesson(self, at, changes) -> None:
        """From the engine's thread: move the tab's knobs to a lesson change it applied."""
        settings = self.settings
        self._schedule(lambda: settings.param.update(
            **{k: v for k, v in changes.items() if k in settings.param}))

    def figures(self) -> list:
        """The tab's live Bokeh figures (restyled by :meth:`set_classroom`).

        Returns
        -------
        list of bokeh.plotting.figure
            None here; tabs with figures override it.
        """
        return []

    def set_classroom(self, on: bool) -> None:
        """Classroom mode: projector fonts and thick curves on every figure of the tab, and
        only the lesson knobs in its sidebar (``self.advanced``, a box of the other controls,
        is hidden).

        Parameters
        ----------
        on : bool
            Switch classroom mode on (True) or back to the normal style (False).
        """
        from .live_plots import projector_style
        self.classroom = bool(on)
        for fig in self.figures():
            projector_style(fig, self.classroom)
        box = getattr(self, "advanced", None)
        if box is not None:
            box.visible = not self.classroom
        for pane in getattr(self, "text_panes", ()):
            pane.styles = {**(pane.styles or {}), "font-size": "1.3em" if self.classroom else "1em"}

    def _mark_change(self, changes: dict) -> None:
        """Mark live knob changes ``{knob: (old, new)}`` on the tab's curves (a labelled
        line); tabs with curves override it."""

    def _on_knob(self, *events):
        live = {e.name: e.new for e in events if e.name in self.live_knobs}
        if live and self.race is not None:
            try:
                self.race.update_settings(**live)
            except (ValueError, TypeError) as exc:
                self._notify(str(exc))
            else:
                what = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                                 for k, v in live.items())
                self.settings_text.object = f"✔ {what} — applies from {self.applies_from}."
                olds = {e.name: e.old for e in events}
                self._mark_change({k: (olds.get(k), v) for k, v in live.items()})
        needs_reset = sorted({e.name for e in events} & set(self.reset_knobs))
        if needs_reset:
            self.settings_text.object = (f"⟳ Changed {', '.join(needs_reset)}: press "
                                         f"**{self.reset_label}** to apply.")
        self._refresh_state()


class SettingsSession(SessionControls, DocumentFeed):
    """A tab whose one engine is made from one settings object (the CD-bias and TAP tabs):
    the session's settings, document, engine, widget ranges ended at the classroom caps, a
    first engine, and the engine stopped when the session ends.

    The subclass sets :attr:`engine_class` and :attr:`tag` and implements
    ``_knob_widgets(settings)`` (knob name → widget), ``_build_views()`` (its panes),
    ``_controls(widgets)`` (the sidebar's lesson knobs and the others), ``_status(race,
    last_record)`` (the status line after the state) and ``reset()``.

    Parameters
    ----------
    doc : bokeh.document.Document, optional
        The session's document (default: Panel's current one; None outside a server, e.g.
        in a test or a notebook, where batches apply at once).
    """

    #: the engine (a :class:`rbmviz.live.loop.SettingsLoop`): its settings class, live and
    #: pace knobs are the tab's
    engine_class: type
    #: the tab's name in its controls' labels ("Reset (bias)")
    tag: str
    #: knobs whose change the tab handles itself (not :meth:`_on_knob`)
    unwatched: tuple = ()
    hold_document = False          # plain Bokeh sources only (rbmviz.app.live_plots)

    def __init__(self, doc: Any = None) -> None:
        self.settings = self._new_settings()
        self.doc = doc if doc is not None else pn.state.curdoc
        self.race = None
        self.race_id = 0
        self._init_feed()
        self._build_widgets()
        self.limits = limits.current()     # classroom caps (H4): widget ranges end at them
        self.limits.apply(self.settings, self.widgets)
        self.reset()
        pn.state.on_session_destroyed(self._destroyed)

    def _new_settings(self):
        """The session's settings at the start: the declared defaults."""
        return self.engine_class.settings_class()

    def _build_widgets(self):
        s = self.settings
        self.widgets = self._knob_widgets(s)
        self._make_controls(f" ({self.tag})")
        self._build_views()
        s.param.watch(self._on_knob, [n for n in s.param if n not in ("name", *self.unwatched)])

    def _refresh_state(self):
        race = self.race
        if race is None:
            return
        state = ("running" if race.running else
                 "stopped (diverged)" if race.failed else "paused")
        last = race.records[-1] if race.records else None
        text = f"**{state}** · {self._status(race, last)}"
        if race.failed:
            text += f"\n\n⚠ {race.failed}"
        self.state_text.object = text

    def sidebar(self) -> list:
        """The controls of this tab (shown in the sidebar while the tab is active).

        Returns
        -------
        list
            Panel objects: the lesson knobs first (the data and the live training knobs), then
            ``self.advanced``, a box of the other controls that classroom mode hides.
        """
        first, rest = self._controls(self.widgets)
        self.advanced = pn.Column(*rest, sizing_mode="stretch_width", visible=not self.classroom)
        return [*first, self.advanced]

    def _page(self, intro, views, *, name, buttons=()):
        """The tab's main area: the ``intro`` panes, the buttons (Start, Pause, Step, Reset,
        then ``buttons``), the status lines, then ``views``."""
        row = pn.Row(self.start_button, self.pause_button, self.step_button, self.reset_button,
                     *buttons)
        return pn.Column(pn.Column(*intro, sizing_mode="stretch_width"), row, *self.text_panes,
                         *views, name=name, sizing_mode="stretch_width")

    @property
    def live_knobs(self) -> tuple:
        """The engine's live and pace knobs (applied to the running engine)."""
        return self.engine_class.live_knobs + self.engine_class.pace_knobs

    @property
    def reset_label(self) -> str:
        """The label of the tab's Reset button."""
        return f"Reset ({self.tag})"

    @property
    def finished_message(self) -> str:
        """What Start says on a finished engine."""
        return (f"This run stopped (diverged or reached its point limit): press "
                f"{self.reset_label}.")
