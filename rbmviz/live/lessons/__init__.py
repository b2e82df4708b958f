"""Curated lessons of the explorer: settings, a lecture length and what to notice.

A :class:`Lesson` is one link of the explorer's Lessons menu: the tab it opens (``"race"``,
``"bias"`` or ``"tap"``), the knobs it sets (``params``, named exactly as the tab's settings
objects name them), how long it runs at lecture pace (``seconds``), two or three captions a
student reads ("what to notice"), the paper figure it matches, and, for some, knob changes the
lesson makes itself while it runs (``changes``, e.g. "at epoch 1,500 set k = 12").  Every
lesson's phenomenon is checked by a test that runs its engine headless
(``tests/test_lessons.py``); the numbers quoted in the captions are the robust ones of those
runs.

>>> from rbmviz.live import lessons
>>> lesson = lessons.get("dc-escape")
>>> lesson.tab, lesson.params["algorithms"]
('race', ['cd', 'sdcp', 'csdcp'])
>>> lessons.query(lesson)[:48]
'?lesson=dc-escape&tab=race&dataset=shifting_bar&'

:func:`engine` builds the lesson's headless engine (:class:`~rbmviz.live.race.Race`,
:class:`~rbmviz.live.bias.BiasRace`, or the TAP tab's :class:`~rbmviz.live.tap.TapRace` /
:class:`~rbmviz.live.tap_dbm.DBMTapRace`) with the lesson's settings on top of the defaults
the tab starts from (the race tab: the data set's preset, :func:`rbmviz.presets.for_dataset`,
then the lesson's knobs — as the explorer does when a link names a data set).  The engine
applies the lesson's ``changes`` itself, after the point that reaches each one.

**URL format** (:func:`query`, read back by :func:`parse_query`)::

    ?lesson=<key>&tab=<tab>&<knob>=<value>&...

one ``knob=value`` per entry of ``params`` in its order, values URL-encoded: numbers as
Python writes them (``0.3``, ``12``), booleans ``true``/``false``, ``None`` as ``none``
(:func:`rbmviz.settings.parse_value` reads it), strings as they are, and lists
(``algorithms``) as JSON arrays, ``algorithms=["cd","pcd"]`` encoded
``algorithms=%5B%22cd%22%2C%22pcd%22%5D`` — the form ``pn.state.location.sync`` writes and
reads for a ``param.ListSelector`` (Panel's ``parse_query`` JSON-decodes a value starting
with ``[``; a comma-joined ``cd,pcd`` stays one string there).  :func:`parse_query` accepts
both forms.

The package, one job a module:

* :mod:`~rbmviz.live.lessons.lesson` — the :class:`Lesson` type and its checks, the tabs a
  lesson can open (:data:`~rbmviz.live.lessons.lesson.TABS`);
* :mod:`~rbmviz.live.lessons.catalogue` — the curated lessons
  (:data:`~rbmviz.live.lessons.catalogue.LESSONS`, :func:`keys`, :func:`get`);
* :mod:`~rbmviz.live.lessons.knobs` — the knobs a lesson may set per tab (:func:`tab_knobs`,
  :data:`~rbmviz.live.lessons.knobs.RACE_VIEW_KNOBS`) and a race lesson's settings
  (:func:`race_settings`);
* :mod:`~rbmviz.live.lessons.engines` — a lesson's engine and its knob changes
  (:func:`engine`, :func:`schedule`, :func:`progress`);
* :mod:`~rbmviz.live.lessons.links` — the URL of a lesson's link (:func:`query`,
  :func:`parse_query`);
* :mod:`~rbmviz.live.lessons.measures` — :func:`smoothness` of receptive fields, which the
  lesson tests measure.

Import the names from here (``lessons.get``, ``lessons.engine``, ``lessons.query`` ...): the
modules are where they are written.

No Panel import here.
"""
from .catalogue import LESSONS, get, keys
from .engines import engine, progress, schedule
from .knobs import RACE_VIEW_KNOBS, race_settings, tab_knobs
from .lesson import TABS, Lesson
from .links import parse_query, query
from .measures import smoothness

# the class's public name is rbmviz.live.lessons.Lesson (as the explorer's docstrings and the
# API reference name it), not that of the module it is written in
Lesson.__module__ = __name__

__all__ = ["Lesson", "LESSONS", "TABS", "RACE_VIEW_KNOBS", "get", "keys", "engine", "schedule",
           "query", "parse_query", "tab_knobs", "race_settings", "progress", "smoothness"]
