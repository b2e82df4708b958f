"""The explorer's page: the tabs and a sidebar that shows the controls of the active tab only.

:func:`build` makes one page per browser session (every tab has its own session object and
background engine); :func:`serve_app` is what the served scripts (``apps/explorer.py``,
``rbmviz/app/explorer.py``) call.
"""
from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

import holoviews as hv
import panel as pn

from . import limits
from ..live import warmup
from . import links
from .bias_tab import make_bias_tab
from .race_tab import ExplorerSession
from .tap_tab import make_tap_tab

__all__ = ["TABS", "build", "serve_app"]

#: (title, factory(race session) -> tab session) of the tabs after "Training race"; a tab
#: session has ``panel()`` (the tab) and ``sidebar()`` (its controls)
TABS = [("CD bias", make_bias_tab), ("TAP landscape", make_tap_tab)]
#: what a tab whose kernels are still compiling says will happen
OPENS = "The tab opens by itself when they are ready."
#: the warm-up stage (rbmviz.live.warmup.STAGES) whose kernels each lazy tab needs
TAB_STAGES = {"CD bias": "bias", "TAP landscape": "tap"}
_LOG = logging.getLogger("rbmviz.app")
TITLE = "rbmviz explorer — watch restricted Boltzmann machines learn"


class _RaceTab:
    """Adapter: the race session's tab and sidebar under the names the other tabs use."""

    def __init__(self, session):
        self.session = session

    def panel(self):
        return self.session.race_tab()

    def sidebar(self):
        return self.session.sidebar()


class _LazyTab:
    """A tab whose session is made the first time the tab is shown (or its session asked
    for): a lecture hall's sessions that never open the TAP tab neither load its data nor
    build its engine (~3 s and tens of MB per session on a 2-core server).  While the
    server's warm-up (:mod:`rbmviz.live.warmup`) still compiles the tab's kernels, showing
    the tab says so and builds the session once they are ready, instead of compiling on the
    server's event loop (20–30 s of a frozen page)."""

    def __init__(self, make, race_session, stage=None, settings=None, lesson=None):
        self._make, self._race, self.stage = make, race_session, stage
        self._link_settings = dict(settings or {})
        self._lesson = lesson
        self._session = None
        self._watch = None
        self.note = pn.pane.Markdown("*Loading…*", sizing_mode="stretch_width")
        self.tab = pn.Column(self.note, sizing_mode="stretch_width")
        self.side = pn.Column(sizing_mode="stretch_width")

    @property
    def built(self) -> bool:
        return self._session is not None

    def show(self, defer: bool = False) -> bool:
        """Build the session now if its kernels are ready (True), else show what is being
        prepared and build it when they are (False).  ``defer``: the page itself is still
        being made (a link that opens this tab): build once it has loaded — a TAP session
        made inside the page's creation kept the page from ever becoming idle."""
        if defer and pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            pn.state.onload(lambda: self.built or self.show())
            return False
        message = None if self.stage is None else warmup.status().message(self.stage, OPENS)
        if message is None:
            self.session                         # noqa: B018 - made on first show
            return True
        warmup.prefer(self.stage)                # what the page shows now compiles next
        self.note.object = message
        if self._watch is None:
            self._watch = pn.state.add_periodic_callback(self._tick, period=1000)
        return False

    def _tick(self):
        message = warmup.status().message(self.stage, OPENS)
        if message is not None:
            self.note.object = message
            return
        if self._watch is not None:
            self._watch.stop()
            self._watch = None
        if not self.built:
            try:
                self.session                     # noqa: B018
            except Exception as exc:
                self.note.object = f"⚠ This tab could not start: {exc}"

    @property
    def session(self):
        if self._session is None:
            self._session = self._make(self._race)
            self._session.lesson = self._lesson  # every Reset schedules its knob changes
            if getattr(self._race, "view", None) is not None and self._race.view.classroom:
                self._session.set_classroom(True)
            if self._link_settings:          # a lesson link's settings for this tab
                self._session.settings.param.update(**self._link_settings)
                self._session.reset()
            self.tab.objects = [self._session.panel()]
            self.side.objects = list(self._session.sidebar())
        return self._session


class _TabSessions(dict):
    """title → tab session; a lazy tab's session is made on first access."""

    def __getitem__(self, title):
        value = super().__getitem__(title)
        return value.session if isinstance(value, _LazyTab) else value

    def get(self, title, default=None):
        return self[title] if title in self else default

    def values(self):
        return [self[t] for t in self]

    def items(self):
        return [(t, self[t]) for t in self]

    def made(self) -> list:
        """The tab sessions made so far (what a teardown stops), without making the others."""
        out = []
        for title in self:
            value = super().__getitem__(title)
            if not isinstance(value, _LazyTab):
                out.append(value)
            elif value.built:
                out.append(value.session)
        return out


def build(*, threads: int = 1, sync_url: bool = True,
          extra_tabs: Sequence[tuple[str, Callable[[Any], Any]]] | None = None,
          template: bool = True) -> pn.viewable.Viewable:
    """The explorer's layout for this session.

    Parameters
    ----------
    threads : int
        Numba threads of each tab's background engine.
    sync_url : bool
        Mirror the race's knobs in the page URL (``?dataset=mnist&n_hidden=500``).
    extra_tabs : sequence of (title, factory), optional
        The tabs after "Training race" (default :data:`TABS`): ``factory(session)`` returns an
        object with ``panel()`` and ``sidebar()``.
    template : bool
        A ``FastListTemplate`` when served; ``False`` gives a plain ``Row`` (sidebar, tabs)
        that displays in a notebook cell.

    Returns
    -------
    panel.template.FastListTemplate or panel.Row
        The layout, with ``layout.session`` (the race's
        :class:`~rbmviz.app.race_tab.ExplorerSession`), ``layout.tab_sessions`` (title → tab
        session; the tabs after the first are made when first shown or first looked up
        here), ``layout.tabs`` and ``layout.sidebars`` (title → the sidebar column of that
        tab; only the active tab's is visible).
    """
    link = read_link() if sync_url else Link()
    here = link.tab == "race"
    session = ExplorerSession(threads=threads, sync_url=sync_url and here,
                              settings=link.settings if here else None,
                              lesson=link.lesson if here else None)
    race = _RaceTab(session)
    lazy = {title: _LazyTab(make, session, TAB_STAGES.get(title),
                            *((link.settings, link.lesson) if links.TABS.get(link.tab) == title
                              else ()))
            for title, make in (TABS if extra_tabs is None else extra_tabs)}
    tabs = pn.Tabs(("Training race", race.panel()), *((t, lz.tab) for t, lz in lazy.items()),
                   dynamic=True, sizing_mode="stretch_width")
    sidebars = {"Training race": pn.Column(*race.sidebar(), sizing_mode="stretch_width")}
    for title, lz in lazy.items():
        sidebars[title] = pn.Column(lz.side, sizing_mode="stretch_width", visible=False)
    titles = list(sidebars)

    building = [True]

    def show_active(event):
        title = titles[event.new]
        if title in lazy and not lazy[title].built:
            try:
                lazy[title].show(defer=building[0])   # made on first show (kernels ready)
            except Exception as exc:            # e.g. a classroom cap the tab cannot meet
                _LOG.error("tab %r could not start: %s", title, exc, exc_info=True)
                lazy[title].tab.objects = [pn.pane.Markdown(
                    f"⚠ **{title}** could not start: {exc}", sizing_mode="stretch_width")]
        for t in titles:
            sidebars[t].visible = t == title
    tabs.param.watch(show_active, "active")
    if link.tab != "race" and links.TABS[link.tab] in titles:
        tabs.active = titles.index(links.TABS[link.tab])
    building[0] = False
    classroom = pn.widgets.Toggle.from_param(
        session.view.param.classroom, name="Classroom mode (projector)",
        button_type="default", sizing_mode="stretch_width")

    def classroom_everywhere(event):        # every tab made so far follows the race's toggle
        for tab in layout.tab_sessions.made():
            if tab is not session:
                tab.set_classroom(event.new)
    session.view.param.watch(classroom_everywhere, "classroom")
    column = [classroom, lessons_menu(), *sidebars.values()]
    main = [*link.panes(), tabs]
    if template:
        layout = pn.template.FastListTemplate(title=TITLE, sidebar=column, main=main,
                                              sidebar_width=330)
    else:
        layout = pn.Row(pn.Column(*column, width=320), pn.Column(*main, sizing_mode="stretch_width"),
                        sizing_mode="stretch_width")
    layout.session = session
    layout.tab_sessions = _TabSessions({"Training race": session, **lazy})
    layout.tabs, layout.sidebars = tabs, sidebars
    layout.link = link
    return layout


class Link:
    """What the page URL asks for, checked (:func:`read_link`): the tab to open, the lesson,
    the settings that can run, and one message for the values that cannot."""

    def __init__(self, tab: str = "race", lesson=None, settings: dict | None = None,
                 problems: list | None = None):
        self.tab, self.lesson = tab, lesson
        self.settings = dict(settings or {})
        self.problems = list(problems or [])

    def panes(self) -> list:
        """The panes above the tabs: the lesson's captions and, for a bad link, one message
        naming every value that could not run."""
        out = []
        if self.problems:
            out.append(pn.pane.Alert(
                "**This link has settings that cannot run; the explorer uses the defaults "
                "for them instead:**\n\n" + "\n".join(f"* {p}" for p in self.problems),
                alert_type="warning", sizing_mode="stretch_width", name="link-problems"))
        if self.lesson is not None:
            lesson = self.lesson
            notice = "\n".join(f"* {line}" for line in lesson.notice)
            predict = f"*Predict first:* {lesson.predict} " if lesson.predict else ""
            out.append(pn.pane.Alert(
                f"**Lesson: {lesson.title}** (about {lesson.seconds} s; {lesson.figure}). "
                f"{predict}Press Start, then notice:\n\n{notice}",
                alert_type="info", sizing_mode="stretch_width", name="lesson"))
        return out


def _race_objects():
    from ..live.race import RaceSettings
    from ..settings import DataSettings, ModelSettings, TrainSettings
    return [DataSettings(), ModelSettings(), TrainSettings(), RaceSettings()]


def _tab_objects(tab: str):
    if tab == "bias":
        from ..live.bias import BiasSettings
        return [BiasSettings()]
    if tab == "tap":
        from ..live.tap import TapSettings
        return [TapSettings()]
    return _race_objects()


def _option_labels(tab: str) -> dict:
    if tab != "race":
        return {}
    from .. import algorithms, datasets
    return {"dataset": dict(datasets.LABELS),
            "algorithms": {n: algorithms.get(n).label or n for n in algorithms.names()}}


def read_link(query: dict | None = None) -> Link:
    """Check the page URL once: its tab, lesson and settings (:mod:`rbmviz.app.links`).

    A lesson's settings come first and the URL's own values override them.  Bad values are
    left out (the page runs the declared defaults for them), named in one message, and the
    URL is rewritten to what runs.

    Parameters
    ----------
    query : dict, optional
        The parsed query; default: this session's URL (``pn.state.location``).

    Returns
    -------
    Link
    """
    loc = pn.state.location
    if query is None:
        query = dict(getattr(loc, "query_params", {}) or {}) if loc is not None else {}
    problems = []
    tab = query.pop("tab", None)
    lesson_key = query.pop("lesson", None)
    lesson = None
    if lesson_key is not None:
        from ..live import lessons
        try:
            lesson = lessons.get(str(lesson_key))
        except ValueError:
            problems.append(f"`lesson={lesson_key}` is not a lesson; the Lessons menu lists "
                            f"them ({', '.join(lessons.keys())})")
        else:
            query = {**lesson.params, **query}
            tab = tab or lesson.tab
    if tab is None:
        tab = "race"
    elif tab not in links.TABS:
        problems.append(f"`tab={tab}` is not a tab; tabs: {', '.join(links.TABS)}")
        tab = "race"
    raw = (dict(urllib.parse.parse_qsl(str(loc.search or "").lstrip("?")))
           if loc is not None else {})
    good, bad = links.check_query(query, _tab_objects(tab), labels=_option_labels(tab), raw=raw)
    problems += bad
    link = Link(tab, lesson, good, problems)
    if loc is not None and (problems or lesson is not None or query != good):
        # the URL shows what runs: the lesson's knobs spelled out, the bad values gone
        page = {**({"lesson": lesson.key} if lesson is not None else {}),
                **({"tab": tab} if tab != "race" or lesson is not None else {}), **good}
        search = links.encode_query(page)
        loc.search = search                  # what the tab's URL sync reads now ...

        def show_in_browser():               # ... and, once the page has loaded (the browser
            loc.search = search              # sends its own URL on load), in the address bar
            loc.param.trigger("search")
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            pn.state.onload(show_in_browser)
    return link


def lessons_menu():
    """The sidebar's Lessons menu: each lesson a link (its settings in the URL) with its
    length and the paper figure it matches."""
    from ..live import lessons
    items = "\n".join(f"* [{les.title}]({lessons.query(les)}) — {les.seconds} s"
                       for les in lessons.LESSONS)
    return pn.Card(pn.pane.Markdown(items, sizing_mode="stretch_width"), title="Lessons",
                   collapsed=True, sizing_mode="stretch_width", name="lessons-menu")


def serve_app(threads: int = 1) -> pn.viewable.Viewable:
    """Load the Panel/HoloViews extensions and mark this session's explorer servable (called
    by the script that ``panel serve`` runs, once per page).

    It also starts the kernel warm-up (once per process) and, under classroom caps, refuses
    a page beyond the class size with a "class is full" page.

    Parameters
    ----------
    threads : int
        Not read: each engine's Numba threads are the classroom caps' per-session threads
        (:mod:`rbmviz.app.limits`, 1 without caps).

    Returns
    -------
    panel.viewable.Viewable
        The servable page: the explorer, or the "class is full" page.
    """
    pn.extension("katex", notifications=True, sizing_mode="stretch_width")
    hv.extension("bokeh")
    # Without a handler Panel re-raises an exception of any pending change callback inside the
    # coroutine that then dispatches the next browser event, and that event (a button click)
    # is lost; log the exception instead, so that one failing update cannot swallow Pause.
    pn.config.exception_handler = _log_exception
    warmup.start()                          # once per process: compile the kernels in the background
    caps = limits.current()                 # classroom caps (rbmviz.app.limits, H4)
    if not limits.claim_place(caps):
        return limits.full_page(caps).servable(title="rbmviz explorer — the class is full")
    layout = build(threads=max(1, caps.session_threads))
    if caps.any and template_sidebar(layout) is not None:
        template_sidebar(layout).insert(0, pn.pane.Markdown(caps.describe(),
                                                            sizing_mode="stretch_width"))
    return layout.servable()


def _log_exception(exc: BaseException) -> None:
    """Panel's exception handler for the served explorer: log with the traceback."""
    _LOG.error("explorer callback failed: %s", exc,
               exc_info=(type(exc), exc, exc.__traceback__))


def template_sidebar(layout):
    """The sidebar list of a template layout (``None`` for a plain ``Row``)."""
    return getattr(layout, "sidebar", None)
