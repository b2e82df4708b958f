"""The knobs a lesson may set on each tab, and the race tab's settings for a race lesson.

A lesson's ``params`` are named as the tab's settings objects name them (:func:`tab_knobs`
gives every one with its declaration); :func:`race_settings` turns a race lesson into the
race tab's settings as the explorer makes them for a link that names a data set: the data
set's preset (:func:`rbmviz.presets.for_dataset`), then the lesson's knobs.
"""
from __future__ import annotations

from typing import Any

import param

from ...presets import for_dataset
from ...settings import (SETTINGS_CLASSES, DataSettings, ModelSettings, TrainSettings, from_dict,
                         knobs)
from ..bias import BiasSettings
from ..race import RaceSettings
from ..tap import TapSettings
from .lesson import TABS, Lesson

__all__ = ["RACE_VIEW_KNOBS", "tab_knobs", "race_settings"]

#: the :class:`~rbmviz.live.race.RaceSettings` knobs a race lesson may set
RACE_VIEW_KNOBS = ("algorithms", "x_axis", "points_per_second")
#: the race tab's knobs a data set's preset sets when a link names the data set (as the
#: explorer's race tab applies :func:`rbmviz.presets.for_dataset` before the link's knobs)
_PRESET_KNOBS = ("n_hidden", "init", "init_scale", "visible_bias", "dtype", "limit", "batch_size",
                 "learning_rate", "k", "epochs")


def tab_knobs(tab: str) -> dict[str, param.Parameter]:
    """Every knob a lesson of tab ``tab`` may set, with its declaration.

    Parameters
    ----------
    tab : {'race', 'bias', 'tap'}
        The tab.

    Returns
    -------
    dict
        ``{knob: param.Parameter}``.

    Raises
    ------
    ValueError
        For an unknown tab.
    """
    if tab == "race":
        out = {}
        for cls in SETTINGS_CLASSES:
            out.update(knobs(cls))
        out.update({n: RaceSettings.param[n] for n in RACE_VIEW_KNOBS})
        return out
    if tab == "bias":
        return knobs(BiasSettings)
    if tab == "tap":
        return knobs(TapSettings)
    raise ValueError(f"tab must be one of {TABS}, got {tab!r}")


def race_settings(lesson: Lesson) -> tuple[DataSettings, ModelSettings, TrainSettings, dict]:
    """The race tab's settings for a race lesson: the data set's preset, then the lesson's knobs.

    Parameters
    ----------
    lesson : Lesson
        A lesson of the race tab.

    Returns
    -------
    (DataSettings, ModelSettings, TrainSettings, dict)
        The three settings objects and the view knobs (``algorithms``, ``x_axis``,
        ``points_per_second``; defaults of :class:`~rbmviz.live.race.RaceSettings` where the
        lesson does not set them).

    Raises
    ------
    ValueError
        For a lesson of another tab, or a knob or value the settings refuse.
    """
    if lesson.tab != "race":
        raise ValueError(f"lesson {lesson.key!r} is a {lesson.tab!r} lesson, not a race lesson")
    p = dict(lesson.params)
    view = {n: p.pop(n) for n in RACE_VIEW_KNOBS if n in p}
    bad = sorted(set(view) - set(RACE_VIEW_KNOBS))
    if bad:  # pragma: no cover - guarded above
        raise ValueError(f"unknown view knobs {bad}")
    rs = RaceSettings(**view)          # checks the values
    view = {n: getattr(rs, n) for n in RACE_VIEW_KNOBS}
    values: dict[str, Any] = {}
    ds = p.get("dataset", DataSettings.param["dataset"].default)
    if ds in [n for n in DataSettings.param["dataset"].objects]:
        shape_knobs = {k: p[k] for k in ("D", "N", "B", "d") if k in p
                       and k in for_dataset(ds)["data"]}
        pre = for_dataset(ds, **shape_knobs)
        values.update({k: pre[k] for k in _PRESET_KNOBS})
        values["k_inner"] = None
    values.update(p)
    data, model, train = from_dict(values)
    return data, model, train, view
