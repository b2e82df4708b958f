"""The explorer's page: the tabs and a sidebar that shows the controls of the active tab only.

:func:`build` makes one page per browser session (every tab has its own session object and
background engine); :func:`serve_app` is what the served scripts (``apps/explorer.py``,
``rbmviz/app/explorer.py``) call.
"""
from __future__ import annotations

import logging

import holoviews as hv
import panel as pn

from . import limits
from .bias_tab import make_bias_tab
from .race_tab import ExplorerSession
from .tap_tab import make_tap_tab

__all__ = ["TABS", "build", "serve_app"]

#: (title, factory(race session) -> tab session) of the tabs after "Training race"; a tab
#: session has ``panel()`` (the tab) and ``sidebar()`` (its controls)
TABS = [("CD bias", make_bias_tab), ("TAP landscape", make_tap_tab)]
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
    build its engine (~3 s and tens of MB per session on a 2-core server)."""

    def __init__(self, make, race_session):
        self._make, self._race = make, race_session
        self._session = None
        self.tab = pn.Column(pn.pane.Markdown("*Loading…*"), sizing_mode="stretch_width")
        self.side = pn.Column(sizing_mode="stretch_width")

    @property
    def built(self) -> bool:
        return self._session is not None

    @property
    def session(self):
        if self._session is None:
            self._session = self._make(self._race)
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


def build(*, threads: int = 1, sync_url: bool = True, extra_tabs=None, template: bool = True):
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
    The layout, with ``layout.session`` (the race's :class:`~rbmviz.app.race_tab.ExplorerSession`),
    ``layout.tab_sessions`` (title → tab session; the tabs after the first are made when
    first shown or first looked up here), ``layout.tabs`` and ``layout.sidebars`` (title →
    the sidebar column of that tab; only the active tab's is visible).
    """
    session = ExplorerSession(threads=threads, sync_url=sync_url)
    race = _RaceTab(session)
    lazy = {title: _LazyTab(make, session)
            for title, make in (TABS if extra_tabs is None else extra_tabs)}
    tabs = pn.Tabs(("Training race", race.panel()), *((t, lz.tab) for t, lz in lazy.items()),
                   dynamic=True, sizing_mode="stretch_width")
    sidebars = {"Training race": pn.Column(*race.sidebar(), sizing_mode="stretch_width")}
    for title, lz in lazy.items():
        sidebars[title] = pn.Column(lz.side, sizing_mode="stretch_width", visible=False)
    titles = list(sidebars)

    def show_active(event):
        title = titles[event.new]
        if title in lazy and not lazy[title].built:
            try:
                lazy[title].session             # made on first show
            except Exception as exc:            # e.g. a classroom cap the tab cannot meet
                _LOG.error("tab %r could not start: %s", title, exc, exc_info=True)
                lazy[title].tab.objects = [pn.pane.Markdown(
                    f"⚠ **{title}** could not start: {exc}", sizing_mode="stretch_width")]
        for t in titles:
            sidebars[t].visible = t == title
    tabs.param.watch(show_active, "active")
    column = list(sidebars.values())
    if template:
        layout = pn.template.FastListTemplate(title=TITLE, sidebar=column, main=[tabs],
                                              sidebar_width=330)
    else:
        layout = pn.Row(pn.Column(*column, width=320), tabs, sizing_mode="stretch_width")
    layout.session = session
    layout.tab_sessions = _TabSessions({"Training race": session, **lazy})
    layout.tabs, layout.sidebars = tabs, sidebars
    return layout


def serve_app(threads: int = 1):
    """Load the Panel/HoloViews extensions and mark this session's explorer servable (called
    by the script that ``panel serve`` runs)."""
    pn.extension("katex", notifications=True, sizing_mode="stretch_width")
    hv.extension("bokeh")
    # Without a handler Panel re-raises an exception of any pending change callback inside the
    # coroutine that then dispatches the next browser event, and that event (a button click)
    # is lost; log the exception instead, so that one failing update cannot swallow Pause.
    pn.config.exception_handler = _log_exception
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
