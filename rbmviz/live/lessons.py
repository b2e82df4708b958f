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

No Panel import here.
"""
from __future__ import annotations

import json
import math
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import param

from .. import datasets as _datasets
from ..presets import for_dataset
from ..settings import (SETTINGS_CLASSES, DataSettings, ModelSettings, TrainSettings, from_dict,
                        knobs, parse_value)
from .bias import BiasRace, BiasSettings
from .race import Race, RaceSettings
from .tap import TapSettings

__all__ = ["Lesson", "LESSONS", "TABS", "RACE_VIEW_KNOBS", "get", "keys", "engine", "schedule",
           "query",
           "parse_query", "tab_knobs", "race_settings", "progress", "smoothness"]

#: the explorer's tabs a lesson can open
TABS = ("race", "bias", "tap")
#: the :class:`~rbmviz.live.race.RaceSettings` knobs a race lesson may set
RACE_VIEW_KNOBS = ("algorithms", "x_axis", "points_per_second")
#: the race tab's knobs a data set's preset sets when a link names the data set (as the
#: explorer's race tab applies :func:`rbmviz.presets.for_dataset` before the link's knobs)
_PRESET_KNOBS = ("n_hidden", "init", "init_scale", "visible_bias", "dtype", "limit", "batch_size",
                 "learning_rate", "k", "epochs")


@dataclass(frozen=True)
class Lesson:
    """One curated lesson: a link that sets a tab's knobs, its length and what to notice.

    Parameters
    ----------
    key : str
        URL-safe identifier (letters, digits and ``-``), the ``lesson=`` value of its link.
    title : str
        The menu entry.
    tab : {'race', 'bias', 'tap'}
        The explorer tab it opens.
    params : dict
        Knob name → value, named as the tab's settings objects name them: the race tab's
        :class:`~rbmviz.settings.DataSettings`, :class:`~rbmviz.settings.ModelSettings`,
        :class:`~rbmviz.settings.TrainSettings` knobs and ``algorithms``, ``x_axis``,
        ``points_per_second`` of :class:`~rbmviz.live.race.RaceSettings`; the bias tab's
        :class:`~rbmviz.live.bias.BiasSettings`; the TAP tab's
        :class:`~rbmviz.live.tap.TapSettings`.
    seconds : int
        Length of the lesson at lecture pace, 30 to 180 s.
    notice : tuple of str
        Two or three "what to notice" captions, in the words a student reads.
    figure : str
        The paper figure the lesson matches.
    changes : tuple of (float, dict)
        Knob changes the lesson makes while it runs: ``(at, {knob: value})`` applied after
        the first point at or beyond ``at`` (epochs on the race and TAP tabs, iterations on
        the bias tab), in order.  Only live knobs (the engine's ``update_settings``).
    summary : str
        One sentence for the menu's tooltip or the lesson's heading.
    predict : str
        The "predict, then watch" question a lecturer asks before pressing Start (the
        documentation's lesson pages show it above the captions).
    notebook : tuple of str
        ``(notebook, heading)``: the notebook in ``notebooks/`` (file name without
        ``.ipynb``) and the heading of its section that works through the same phenomenon.

    Raises
    ------
    ValueError
        For a key that is not URL-safe, an unknown tab, a length outside 30–180 s, other
        than two or three captions, a ``predict`` that is not a question, or a ``notebook``
        that is not ``(name, heading)``.
    """

    key: str
    title: str
    tab: str
    params: dict
    seconds: int
    notice: tuple
    figure: str
    changes: tuple = ()
    summary: str = ""
    predict: str = ""
    notebook: tuple = ()

    def __hash__(self) -> int:
        return hash(self.key)

    def __post_init__(self) -> None:
        if not self.key or any(not (ch.isalnum() or ch == "-") for ch in self.key):
            raise ValueError(f"lesson key must be letters, digits and '-', got {self.key!r}")
        if self.tab not in TABS:
            raise ValueError(f"lesson {self.key!r}: tab must be one of {TABS}, got {self.tab!r}")
        if not 30 <= self.seconds <= 180:
            raise ValueError(f"lesson {self.key!r}: seconds must be in [30, 180], got {self.seconds}")
        if not 2 <= len(self.notice) <= 3:
            raise ValueError(f"lesson {self.key!r}: 2 or 3 captions, got {len(self.notice)}")
        if self.predict and not self.predict.rstrip().endswith("?"):
            raise ValueError(f"lesson {self.key!r}: predict must be a question (ending in '?')")
        if self.notebook and (len(self.notebook) != 2 or not all(isinstance(s, str) for s in self.notebook)):
            raise ValueError(f"lesson {self.key!r}: notebook must be (notebook name, section heading), "
                             f"got {self.notebook!r}")

    @property
    def points(self) -> int | None:
        """Points the lesson's length covers at its pace (``seconds × points_per_second``),
        or ``None`` when the tab spaces points by time (``eval_every`` or
        ``updates_per_point`` none: large models, the TAP landscape).

        Returns
        -------
        int or None
            Number of points.
        """
        if self.tab == "race":
            if self.params.get("eval_every", 1) is None:
                return None
            pps = self.params.get("points_per_second", RaceSettings.param["points_per_second"].default)
        elif self.tab == "bias":
            pps = self.params.get("points_per_second", BiasSettings.param["points_per_second"].default)
        else:
            if self.params.get("updates_per_point") is None:
                return None
            pps = self.params.get("points_per_second", TapSettings.param["points_per_second"].default)
        return int(round(self.seconds * pps))

    def engine(self, sink: Callable | None = None, **kwargs: Any) -> Any:
        """The lesson's headless engine (see :func:`engine`).

        Parameters
        ----------
        sink : callable, optional
            The engine's sink (records, and a snapshot on the race and TAP tabs).
        **kwargs
            Further keyword arguments of the engine (``on_error``, ``threads``,
            ``max_speed`` ...) and ``on_change`` (see :func:`engine`).

        Returns
        -------
        Race or BiasRace or TapRace or DBMTapRace
            The engine, not started.
        """
        return engine(self, sink=sink, **kwargs)


# ---------------------------------------------------------------------- the lessons
def _mnist_available() -> bool:
    try:
        return bool(_datasets.available("mnist"))
    except Exception:   # pragma: no cover - a broken data directory: fall back to digits
        return False


def _fields_lesson() -> Lesson:
    """Receptive fields forming: MNIST when its files are there, else scikit-learn's digits."""
    if _mnist_available():
        params = dict(dataset="mnist", limit=10_000, n_hidden=500, batch_size=100,
                      learning_rate=0.01, k=1, epochs=15, eval_every=None, dtype="float32",
                      algorithms=["pcd"], x_axis="updates", points_per_second=1)
        title = "MNIST: receptive fields forming"
        notice = (
            "At the start every hidden unit's picture (its receptive field) is grey noise.",
            "Within the first few hundred updates the noise turns into pen strokes and blobs: "
            "each hidden unit becomes a detector for a piece of a digit.",
            "The pseudo-likelihood climbs from about −185 towards −110 nats while the fields "
            "sharpen.")
    else:
        params = dict(dataset="digits", n_hidden=100, batch_size=20, learning_rate=0.01, k=1,
                      epochs=30, eval_every=None, dtype="float32", algorithms=["pcd"],
                      x_axis="updates", points_per_second=1)
        title = "Digits: receptive fields forming (MNIST files not found)"
        notice = (
            "At the start every hidden unit's picture (its receptive field) is grey noise.",
            "After a few hundred updates the noise turns into strokes and blobs: each hidden "
            "unit becomes a detector for a piece of a digit.",
            "The pseudo-likelihood climbs while the fields sharpen.")
    return Lesson(
        key="mnist-fields", title=title, tab="race", params=params, seconds=90, notice=notice,
        figure="Tramel et al. 2018, Fig. 4 (receptive fields of a trained RBM)",
        summary="PCD-1 on 784×500: the hidden units' receptive fields go from noise to strokes.",
            predict=(
                "Each hidden unit's receptive field starts as grey noise. What will it look like "
                "after a few hundred updates on handwritten digits?"),
            notebook=("03_tap_machines", "Receptive fields (Fig. 4)"))


def _lessons() -> tuple[Lesson, ...]:
    bs = dict(dataset="bars_and_stripes", D=3, n_hidden=4, batch_size=None, init="normal",
              init_scale=0.01, visible_bias="base_rate", dtype="float64")
    sb = dict(dataset="shifting_bar", N=9, B=1, n_hidden=4, batch_size=None, init="normal",
              init_scale=0.01, visible_bias="base_rate", dtype="float64")
    tap_ck = "tap-mnist-100-short-epoch"
    return (
        Lesson(
            key="cd-pcd-bars", title="CD-1 vs PCD-1, then k = 12 (Bars & Stripes)", tab="race",
            params=dict(bs, learning_rate=0.3, k=1, epochs=3000, eval_every=10, seed=0,
                        init_seed=0, algorithms=["cd", "pcd"], x_axis="epoch",
                        points_per_second=3),
            changes=((1500, {"k": 12}),),
            seconds=100,
            notice=(
                "CD-1 levels off near −4.3 nats: one Gibbs step from the data gives a biased "
                "gradient, and more epochs do not fix it.",
                "PCD-1's curve zig-zags: its chains wander behind a model that keeps moving — "
                "its jumps from point to point are 5 to 8 times CD's.",
                "At epoch 1,500 the lesson sets k = 12: CD climbs by about half a nat (to near "
                "−3.8). The bias, not the number of epochs, held it back."),
            figure="Upadhya & Sastry 2017, Fig. 2 (Bars & Stripes); Fischer & Igel 2011, Fig. 1",
            summary="The bias of CD-1, PCD's oscillation, and what k = 12 changes.",
            predict=(
                "Both rules start from the same weights and take one Gibbs step per update. Which "
                "curve ends higher by epoch 1,500 — and when the lesson gives CD twelve steps per "
                "update instead of more epochs, does it climb?"),
            notebook=("quickstart", "CD-k and PCD-k from the same initial parameters")),
        Lesson(
            key="dc-escape", title="CD vs S-DCP vs CS-DCP at equal compute (Shifting Bar)",
            tab="race",
            params=dict(sb, learning_rate=0.5, k=12, k_inner=4, epochs=2400, eval_every=10,
                        seed=0, init_seed=0, algorithms=["cd", "sdcp", "csdcp"],
                        x_axis="gibbs_steps", points_per_second=2),
            seconds=120,
            notice=(
                "All three rules start on a plateau near −3.15 nats — a model that knows only "
                "how often each pixel is on — far below the best possible −2.197.",
                "CS-DCP leaves the plateau first (around epoch 1,300), then S-DCP (around "
                "1,800); both end above −2.8.",
                "CD-12 spends the same 12 Gibbs steps per update and never leaves it."),
            figure="Upadhya & Sastry 2017, Fig. 1",
            summary="Difference-of-convex steps escape the plateau that traps CD.",
            predict=(
                "All three rules spend the same 12 Gibbs steps per update and start on the same "
                "plateau. Which leaves the plateau first — and does CD ever leave it?"),
            notebook=("02_dc_programming", "Small data sets (Figs. 1–2)")),
        Lesson(
            key="centered-vs-csdcp", title="Centered gradient vs CS-DCP (Bars & Stripes)",
            tab="race",
            params=dict(bs, learning_rate=0.3, k=12, k_inner=4, epochs=3000, eval_every=10,
                        seed=0, init_seed=0, algorithms=["cg", "csdcp"], x_axis="epoch",
                        points_per_second=3),
            seconds=100,
            notice=(
                "At epoch 300 CS-DCP is already near −4.0 nats while the centered gradient is "
                "still near −6.0.",
                "CS-DCP gets within 90 % of its best in about 500 epochs, the centered "
                "gradient needs 1,100 to 1,600.",
                "By epoch 2,000 the centered gradient has caught up: both end near −3.55 "
                "(best possible −2.64 for 14 patterns)."),
            figure="Upadhya & Sastry 2017, Fig. 2",
            summary="Both rules centre the units; the DC steps get there first.",
            predict=(
                "Both rules centre the units. Which gets near its best first, and does the slower "
                "one catch up by epoch 2,000?"),
            notebook=("02_dc_programming", "How this compares with the paper")),
        Lesson(
            key="cd-bias-k", title="The CD-k bias and its bound as k grows", tab="bias",
            params=dict(dataset="bars_and_stripes_3", n_hidden=6, k=1, learning_rate=0.1,
                        weight_decay=0.0, init_scale=0.5, seed=0, iterations_per_point=100,
                        points_per_second=4),
            changes=((10_000, {"k": 2}), (20_000, {"k": 4}), (30_000, {"k": 8})),
            seconds=100,
            notice=(
                "With k = 1 the bias grows as the weights grow (to about 0.17), and it always "
                "stays under Fischer & Igel's bound.",
                "Each time the lesson doubles k (2, 4, then 8, every 10,000 iterations) the "
                "bias and the bound step down: the bias ends near 0.06.",
                "Less bias, better model: the log-likelihood rises at each step of k."),
            figure="Fischer & Igel 2011, Fig. 1",
            summary="Exact expected CD-k: its bias, Theorem 4's bound, and k = 1, 2, 4, 8.",
            predict=(
                "The bias is the gap between CD-1's expected update and the true gradient. As "
                "training makes the weights larger, does it grow or shrink — and what happens "
                "each time k doubles?"),
            notebook=("01_cd_bias", "Change k and watch the bound move")),
        Lesson(
            key="weight-decay-bias", title="Weight decay and the CD bias", tab="bias",
            params=dict(dataset="bars_and_stripes_3", n_hidden=6, k=1, learning_rate=0.1,
                        weight_decay=0.0, init_scale=0.5, seed=0, iterations_per_point=100,
                        points_per_second=4),
            changes=((20_000, {"weight_decay": 0.005}),),
            seconds=100,
            notice=(
                "Without weight decay CD-1's weights keep growing (norm near 37) and so does "
                "its bias (near 0.2).",
                "At iteration 20,000 the lesson turns on weight decay λ = 0.005: the weights "
                "shrink to about half and the bias falls about sevenfold.",
                "The price: the model fits worse — the log-likelihood drops by about 0.4 nats."),
            figure="Fischer & Igel 2011, Sec. 4 (the bias bound grows with the weights)",
            summary="Small weights mix fast: weight decay cuts the bias, and the fit.",
            predict=(
                "Weight decay keeps the weights small, and small weights let the Gibbs chain mix "
                "faster. When it is switched on, what happens to the bias — and to the "
                "log-likelihood?"),
            notebook=("01_cd_bias", "Weight decay")),
        Lesson(
            key="lr-too-large", title="Learning rate too large: divergence stopped and explained",
            tab="race",
            params=dict(bs, learning_rate=0.3, k=1, epochs=1200, eval_every=5, seed=0,
                        init_seed=0, algorithms=["cd", "pcd"], x_axis="epoch",
                        points_per_second=4),
            changes=((600, {"learning_rate": 10.0}),),
            seconds=60,
            notice=(
                "Until epoch 600 both rules learn at η = 0.3.",
                "Then the lesson sets η = 10: within about a hundred epochs PCD's likelihood "
                "collapses, and the explorer stops that run and says why (the likelihood fell "
                "far below its best; the learning rate may be too large).",
                "CD keeps running but gets worse: its chains restart at the data, so it "
                "degrades instead of blowing up."),
            figure="no paper figure: rbmviz's divergence check (rbmviz.runs.RunDiverged)",
            summary="Too large a step: PCD blows up and is stopped with a reason.",
            predict=(
                "At η = 10, which rule do you expect to blow up: CD, whose chains restart at the "
                "data at every update, or PCD, whose chains persist?"),
            notebook=("00_tour", "Changing a knob mid-race")),
        _fields_lesson(),
        Lesson(
            key="tap-landscape-1", title="TAP landscape 1/3: after 1 epoch", tab="tap",
            params=dict(start_from=f"{tap_ck}1", dataset="mnist", limit=2000, learning_rate=0.005,
                        landscape_rows=500, landscape_every=1),
            seconds=30,
            notice=(
                "A TAP machine after one epoch of training (binary MNIST, 100 hidden units).",
                "From 500 different digits, the TAP iteration always lands on the same single "
                "solution: the landscape has one valley."),
            figure="Tramel et al. 2018, Fig. 5 (and Fig. 6)",
            summary="One epoch in: a single TAP solution.",
            predict=(
                "After one epoch of training, started from 500 different digits, how many "
                "different TAP solutions will the iteration reach?"),
            notebook=("03_tap_machines", "Counting TAP solutions")),
        Lesson(
            key="tap-landscape-10", title="TAP landscape 2/3: after 10 epochs", tab="tap",
            params=dict(start_from=f"{tap_ck}10", dataset="mnist", limit=2000,
                        learning_rate=0.005, landscape_rows=500, landscape_every=1),
            seconds=45,
            notice=(
                "The same machine after 10 epochs.",
                "The 500 digits now reach about 90 different TAP solutions: the model has "
                "carved valleys for different kinds of digits."),
            figure="Tramel et al. 2018, Fig. 5 (and Fig. 6)",
            summary="Ten epochs in: the solutions multiply.",
            predict=(
                "Ten epochs in: still one solution, a handful, or one per digit?"),
            notebook=("03_tap_machines", "Longer-trained models: the shipped checkpoints")),
        Lesson(
            key="tap-landscape-100", title="TAP landscape 3/3: after 100 epochs", tab="tap",
            params=dict(start_from=f"{tap_ck}100", dataset="mnist", limit=2000,
                        learning_rate=0.005, landscape_rows=500, landscape_every=1),
            seconds=60,
            notice=(
                "After 100 epochs the 500 digits reach more than 200 distinct TAP solutions.",
                "Epoch 1 → 10 → 100: one solution, then about 90, then over 200 — training "
                "turns one valley into a rugged landscape of many (Fig. 5)."),
            figure="Tramel et al. 2018, Fig. 5 (and Fig. 6)",
            summary="A hundred epochs in: a rugged landscape.",
            predict=(
                "After 100 epochs, do the solutions keep multiplying, or merge back into a few "
                "valleys?"),
            notebook=("03_tap_machines", "Longer-trained models: the shipped checkpoints")),
        Lesson(
            key="tap-denoising", title="Denoising: TAP vs OPE vs 1-NN as the noise grows",
            tab="tap",
            params=dict(start_from="tap-mnist-100-fixed10-epoch100", dataset="mnist",
                        limit=2000, learning_rate=0.005, landscape_rows=500,
                        landscape_every=5),
            seconds=90,
            notice=(
                "Slide p (each pixel flipped with probability p) from 0.05 up to 0.4.",
                "At p = 0.1 the TAP machine restores the digit best: MCC about 0.9, against "
                "about 0.78 for the pixel-by-pixel guess (OPE) and 0.69 for the nearest "
                "training image (1-NN).",
                "As p grows to 0.3 the nearest training image catches up with TAP; OPE stays "
                "last."),
            figure="Tramel et al. 2018, Fig. 8",
            summary="A trained TAP machine as a denoiser, against two baselines.",
            predict=(
                "At low noise, which denoiser wins: the TAP machine, the per-pixel guess (OPE) or "
                "the nearest training image (1-NN)? And as the noise grows?"),
            notebook=("03_tap_machines", "Denoising")),
        Lesson(
            key="adatap-vs-tap", title="adaTAP vs TAP: the same training, a different cost",
            tab="tap",
            params=dict(dataset="digits", limit=1500, n_hidden=50, batch_size=100,
                        learning_rate=0.5, fixed_iter=10, inference="tap", updates_per_point=5,
                        points_per_second=2, seed=0),
            changes=((10.0, {"inference": "adatap"}),),
            seconds=60,
            notice=(
                "For 10 epochs the machine trains with TAP (Alg. 1, 10 iterations per update): "
                "the TAP log-likelihood climbs from −0.22 to about −0.16 per unit.",
                "Then the lesson switches to adaptive TAP (Alg. 3): the curve crawls — an "
                "adaTAP update takes tens of times longer, since every iteration solves a "
                "linear system for each digit.",
                "The likelihood gains nothing from the extra work: it wobbles a little below "
                "its level (it is measured with TAP's fixed points, not adaTAP's)."),
            figure="Tramel et al. 2018, Fig. 10",
            summary="Adaptive TAP's extra accuracy costs time and buys no better model here.",
            predict=(
                "Adaptive TAP solves a more accurate mean-field problem at every update. Will it "
                "learn a better model than plain TAP in the same epochs, and at what cost in "
                "time?"),
            notebook=("04_tap_beyond_rbm", "2. Fig. 10: training with TAP vs adaTAP")),
        Lesson(
            key="deep-tap", title="A deep TAP machine's two layers", tab="tap",
            params=dict(model="dbm-2", dataset="digits", limit=1500, n_hidden=100, n_hidden2=50,
                        pretrain_epochs=2, learning_rate=0.1, updates_per_point=10,
                        points_per_second=10, seed=0),
            seconds=90,
            notice=(
                "First each layer is trained alone as a TAP RBM (two epochs each), then the "
                "whole deep machine is trained jointly (App. E, Alg. 4).",
                "Two sets of pictures: layer 1's receptive fields (columns of W⁽¹⁾) and layer "
                "2's seen through layer 1 (W⁽¹⁾W⁽²⁾) — the pixel pattern each second-layer "
                "unit responds to.",
                "During joint training the TAP log-likelihood per unit climbs: from about "
                "−0.118 when it starts to about −0.105 by epoch 12."),
            figure="Tramel et al. 2018, Fig. 11",
            summary="Layer-wise pretraining, then joint TAP training of a 2-layer DBM.",
            predict=(
                "Each layer is first trained alone. Does training the two layers jointly then "
                "raise the TAP log-likelihood further?"),
            notebook=("04_tap_beyond_rbm", "3. Deep TAP machines (Appendix E)")),
    )


#: the lessons, in menu order
LESSONS: tuple[Lesson, ...] = _lessons()


def keys() -> list[str]:
    """The lessons' keys, in menu order.

    Returns
    -------
    list of str
        Keys of :data:`LESSONS`.
    """
    return [lesson.key for lesson in LESSONS]


def get(key: str) -> Lesson:
    """The lesson with key ``key``.

    Parameters
    ----------
    key : str
        A lesson key (``lesson=`` of a link).

    Returns
    -------
    Lesson
        The lesson.

    Raises
    ------
    ValueError
        For an unknown key, listing the valid ones.
    """
    for lesson in LESSONS:
        if lesson.key == key:
            return lesson
    raise ValueError(f"unknown lesson {key!r}; lessons: {', '.join(keys())}")


# ---------------------------------------------------------------------- knobs
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

    Race lessons: :class:`~rbmviz.live.race.Race` on :func:`race_settings` (the data set's
    preset, then the lesson's knobs), racing the lesson's ``algorithms`` at its
    ``points_per_second``.  Bias lessons: :class:`~rbmviz.live.bias.BiasRace` on
    :class:`~rbmviz.live.bias.BiasSettings` of the lesson's knobs.  TAP lessons: the TAP
    tab's engine of :class:`~rbmviz.live.tap.TapSettings` of the lesson's knobs
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
        from .tap_dbm import tap_engine
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


# ---------------------------------------------------------------------- URLs
def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), separators=(",", ":"))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def query(lesson: Lesson | str) -> str:
    """The URL query string of a lesson's link.

    Parameters
    ----------
    lesson : Lesson or str
        The lesson or its key.

    Returns
    -------
    str
        ``?lesson=<key>&tab=<tab>&<knob>=<value>...`` (the module docstring gives the
        format: lists as JSON arrays, ``None`` as ``none``; URL-encoded).
    """
    if isinstance(lesson, str):
        lesson = get(lesson)
    pairs = [("lesson", lesson.key), ("tab", lesson.tab)]
    pairs += [(k, _text(v)) for k, v in lesson.params.items()]
    return "?" + urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)


def parse_query(text: str) -> dict:
    """Read a lesson link's query string back into typed knob values.

    Parameters
    ----------
    text : str
        A query string as :func:`query` writes it (the leading ``?`` optional).  List knobs
        may be JSON arrays or comma-joined.

    Returns
    -------
    dict
        ``{"lesson": key or None, "tab": tab, "params": {knob: value}}``; ``tab`` is the link's
        or, when it has none, the named lesson's, or ``"race"``.

    Raises
    ------
    ValueError
        For an unknown lesson or tab, a knob the tab does not have, or a value the knob
        does not accept (naming the knob).
    """
    pairs = urllib.parse.parse_qsl(text[1:] if text.startswith("?") else text,
                                   keep_blank_values=True)
    values = dict(pairs)
    key = values.pop("lesson", None)
    tab = values.pop("tab", None)
    if tab is None:
        tab = get(key).tab if key is not None else "race"
    elif key is not None:
        get(key)
    all_knobs = tab_knobs(tab)
    params: dict[str, Any] = {}
    for name, raw in values.items():
        if name not in all_knobs:
            raise ValueError(f"the {tab} tab has no knob {name!r}")
        p = all_knobs[name]
        if isinstance(p, param.ListSelector):
            raw = raw.strip()
            items = json.loads(raw) if raw.startswith("[") else [s for s in raw.split(",") if s]
            bad = [v for v in items if v not in p.objects]
            if bad:
                raise ValueError(f"invalid value(s) {bad} for setting {name!r}: choose from "
                                 f"{', '.join(map(str, p.objects))}")
            params[name] = list(items)
            continue
        try:
            params[name] = parse_value(p, raw)
        except ValueError as exc:
            raise ValueError(f"invalid value {raw!r} for setting {name!r}: {exc}") from None
    return {"lesson": key, "tab": tab, "params": params}


# ---------------------------------------------------------------------- measurements
def smoothness(W: np.ndarray, shape: tuple[int, int]) -> float:
    """Median spatial smoothness of receptive fields: the correlation of each field's pixels
    with their right and lower neighbours.

    About 0 for the random initial weights, 0.5 to 0.8 for fields that show strokes.

    Parameters
    ----------
    W : numpy.ndarray
        Weights, ``(n_visible, n_hidden)``; column j is hidden unit j's receptive field.
    shape : tuple of int
        ``(rows, cols)`` of one field, ``rows · cols = n_visible``.

    Returns
    -------
    float
        The median over hidden units of the lag-1 spatial autocorrelation.

    Raises
    ------
    ValueError
        When ``shape`` does not match ``W``.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or int(np.prod(shape)) != W.shape[0] or min(shape) < 2:
        raise ValueError(f"shape {shape} does not fit weights of shape {W.shape} "
                         f"(need rows · cols = n_visible, both >= 2)")
    F = W.T.reshape(-1, *shape)
    F = F - F.mean(axis=(1, 2), keepdims=True)
    num = (F[:, 1:, :] * F[:, :-1, :]).sum(axis=(1, 2)) + (F[:, :, 1:] * F[:, :, :-1]).sum(axis=(1, 2))
    den = 2.0 * (F ** 2).sum(axis=(1, 2))
    r = num / np.where(den > 0, den, 1.0)
    return float(np.median(r)) if len(r) else math.nan
