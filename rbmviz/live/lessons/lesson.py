"""The :class:`Lesson` type: one curated link of the explorer, checked when it is made.

A lesson names the tab it opens (one of :data:`TABS`), the knobs it sets, its length at lecture
pace, its captions and the knob changes it makes while it runs; :attr:`Lesson.points` is the
number of points its length covers.  The lessons themselves are in
:mod:`rbmviz.live.lessons.catalogue`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..bias import BiasSettings
from ..race import RaceSettings
from ..tap import TapSettings

__all__ = ["Lesson", "TABS"]

#: the explorer's tabs a lesson can open
TABS = ("race", "bias", "tap")


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
