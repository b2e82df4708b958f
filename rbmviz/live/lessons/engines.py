"""A lesson's headless engine, and the knob changes the lesson makes while it runs.

:func:`engine` builds the engine of a lesson's tab with the lesson's settings;
:func:`schedule` makes an engine apply the lesson's ``changes`` after the point that reaches
each one (the explorer's tabs call it on every engine they make for a lesson), and
:func:`progress` is how far an engine is, in the unit of those changes.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..bias import BiasRace, BiasSettings
from ..race import Race
from ..tap import TapSettings
from ..tap_dbm import tap_engine
from .catalogue import get
from .knobs import race_settings
from .lesson import Lesson

__all__ = ["engine", "schedule", "progress"]


def progress(eng: Any) -> float:
    """How far an engine is, in the unit of a lesson's ``changes``.

    Parameters
    ----------
    eng : Race or BiasRace or TapRace or DBMTapRace
        An engine.

    Returns
    -------
    float
        Epochs (race and TAP tabs) or iterations (bias tab).
    """
    if isinstance(eng, BiasRace):
        return float(eng.iteration)
    return float(eng.epoch)


def engine(lesson: Lesson | str, sink: Callable | None = None, *,
           on_change: Callable | None = None, **kwargs: Any) -> Any:
    """Build the headless engine of a lesson with the lesson's settings (not started).

    Race lessons: :class:`~rbmviz.live.race.Race` on
    :func:`~rbmviz.live.lessons.knobs.race_settings` (the data set's preset, then the lesson's
    knobs), racing the lesson's ``algorithms`` at its ``points_per_second``.  Bias lessons:
    :class:`~rbmviz.live.bias.BiasRace` on :class:`~rbmviz.live.bias.BiasSettings` of the
    lesson's knobs.  TAP lessons: the TAP tab's engine of
    :class:`~rbmviz.live.tap.TapSettings` of the lesson's knobs
    (:func:`rbmviz.live.tap_dbm.tap_engine`: a TAP RBM, or a deep TAP machine for
    ``model="dbm-2"``).

    The engine applies the lesson's ``changes`` itself: after each point (on its thread, or
    a Step) every change whose ``at`` has been reached is passed to the engine's
    ``update_settings``; the applied ones are listed in ``engine.lesson_changes`` (dicts
    ``{"at", "progress", "changes"}``) and reported to ``on_change``.

    Parameters
    ----------
    lesson : Lesson or str
        The lesson or its key.
    sink : callable, optional
        The engine's sink: ``sink(records, snapshot)`` (race, TAP) or ``sink(records)``
        (bias).
    on_change : callable(at, changes), optional
        Called (on the engine's thread) after the engine applied one of the lesson's
        changes, with its ``at`` and the ``{knob: value}`` dict — e.g. to move the widget and
        mark the curves.
    **kwargs
        Further keyword arguments of the engine (``on_error``, ``threads``,
        ``max_updates_per_second``; the race's ``max_speed``, ``focus``; ``max_points``).

    Returns
    -------
    Race or BiasRace or TapRace or DBMTapRace
        The engine.

    Raises
    ------
    ValueError
        For an unknown lesson key, or settings the engine refuses.
    rbmviz.datasets.DatasetNotFoundError
        When a lesson needs data files (MNIST) that are missing.
    """
    if isinstance(lesson, str):
        lesson = get(lesson)
    if lesson.tab == "race":
        data, model, train, view = race_settings(lesson)
        eng = Race(data, model, train, view["algorithms"], sink=sink,
                   points_per_second=view["points_per_second"], **kwargs)
    elif lesson.tab == "bias":
        eng = BiasRace(BiasSettings(**lesson.params), sink=sink, **kwargs)
    else:
        eng = tap_engine(TapSettings(**lesson.params), sink=sink, **kwargs)
    schedule(eng, lesson.changes, on_change)
    return eng


def schedule(eng: Any, changes: Sequence[tuple[float, dict]],
             on_change: Callable[[float, dict], None] | None = None) -> None:
    """Make ``eng`` apply ``changes`` after the point that reaches each ``at``.

    The explorer's tabs call it on every engine they make for a lesson (each Reset), so the
    lesson's knob changes happen on the page as in the headless tests.

    Parameters
    ----------
    eng : Race or BiasRace or TapRace or DBMTapRace
        A new engine (not yet advanced past the first change).
    changes : sequence of (float, dict)
        ``(at, {knob: value})`` in the unit of :func:`progress`.
    on_change : callable(at, changes), optional
        Called on the engine's thread after each applied change.
    """
    pending = sorted(changes, key=lambda c: c[0])
    eng.lesson_changes = []
    if not pending:
        return
    advance = eng._advance

    def _advance_with_changes():
        recs = advance()
        while pending and progress(eng) >= pending[0][0] - 1e-9:
            at, change = pending.pop(0)
            eng.update_settings(**change)
            eng.lesson_changes.append({"at": at, "progress": progress(eng),
                                       "changes": dict(change)})
            if on_change is not None:
                on_change(at, dict(change))
        return recs

    eng._advance = _advance_with_changes
