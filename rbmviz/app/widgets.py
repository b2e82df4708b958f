"""Widgets derived from knob declarations: one rule for every tab.

A knob is declared once, as a ``param`` parameter (an algorithm's ``Knobs``, the data and
model settings, a tab's view settings); :func:`widget_for` turns the declaration into a Panel
widget — its label, bounds (soft bounds for the slider range), choices and doc (as the
tooltip) come from there, so no widget restates a default or a range.

Rules: a number that may be "none" (full batch, all rows, K = M) gets a number input (empty =
none); a bounded integer or number gets a slider over its soft bounds (else hard bounds),
unbounded ones a number input; a choice of at most four short options gets radio buttons, a
longer one a dropdown; a flag a checkbox; a list choice a checkbox group.
"""
from __future__ import annotations

import math

import panel as pn
import param

__all__ = ["widget_for", "slider_range", "autohide"]


def slider_range(p: param.Parameter) -> tuple[float, float] | None:
    """The range of a knob's slider in the sidebar: soft bounds, else hard bounds.

    Parameters
    ----------
    p : param.Parameter
        The knob's declaration (its ``softbounds`` and ``bounds``).

    Returns
    -------
    tuple of float or None
        ``(start, end)``, or None when a bound is missing or the range is empty (the knob
        then gets a number input).
    """
    soft = getattr(p, "softbounds", None) or (None, None)
    hard = getattr(p, "bounds", None) or (None, None)
    lo = soft[0] if soft[0] is not None else hard[0]
    hi = soft[1] if soft[1] is not None else hard[1]
    if lo is None or hi is None or not hi > lo:
        return None
    return lo, hi


def _step(lo, hi):
    """A round step giving ~200–2000 positions between ``lo`` and ``hi``."""
    return 10.0 ** math.floor(math.log10((hi - lo) / 200.0))


def widget_for(obj: param.Parameterized, name: str, *, kind: str | None = None,
               **overrides: object) -> pn.viewable.Viewable:
    """The widget of knob ``name`` of ``obj``, bound to it both ways.

    Parameters
    ----------
    obj : param.Parameterized
        Holds the knob (its declaration gives label, bounds, choices and doc).
    name : str
        The knob.
    kind : {"slider", "input", "radio", "select"}, optional
        Force a widget kind (e.g. a slider for a knob that allows None but should not be
        emptied in this tab).
    **overrides
        Passed to the widget (e.g. ``label=`` for a tab-specific title).

    Returns
    -------
    panel.widgets.Widget
        The widget, linked to ``obj.<name>`` (the widget kind follows the rules of this
        module's docstring).
    """
    p = obj.param[name]
    label = overrides.pop("label", None) or p.label or name
    kw = dict(label=label, **overrides)
    doc = (p.doc or "").strip()

    def make(cls, **extra):
        if doc and "description" in cls.param and "description" not in kw:
            extra["description"] = doc           # the declaration's doc as the tooltip
        return cls.from_param(p, **kw, **extra)
    if isinstance(p, param.ListSelector):
        return make(pn.widgets.CheckBoxGroup, inline=False)
    if isinstance(p, param.Boolean):
        return make(pn.widgets.Checkbox)
    if isinstance(p, param.Selector):
        objs = list(p.objects)
        if kind == "radio" or (kind is None and len(objs) <= 4
                               and all(len(str(o)) <= 12 for o in objs)):
            return make(pn.widgets.RadioButtonGroup)
        return make(pn.widgets.Select)
    if isinstance(p, param.Number):
        is_int = isinstance(p, param.Integer)
        rng = slider_range(p)
        # a slider cannot show "none": a knob that allows None gets a number input unless the
        # tab asks for a slider, and then only while it has a value
        if (kind == "input" or rng is None or (p.allow_None and kind != "slider")
                or getattr(obj, name) is None):
            cls = pn.widgets.IntInput if is_int else pn.widgets.FloatInput
            return make(cls)
        lo, hi = rng
        if is_int:
            return make(pn.widgets.IntSlider, start=int(lo), end=int(hi))
        return make(pn.widgets.FloatSlider, start=float(lo), end=float(hi), step=_step(lo, hi))
    return pn.panel(p)


def autohide(pane: pn.pane.Markdown) -> pn.pane.Markdown:
    """``pane`` visible only while it has text.

    The tabs' status and alert lines use it: an empty Markdown pane still takes ~40 px, and
    a few of them left a blank band above the plots.

    Parameters
    ----------
    pane : panel.pane.Markdown
        A text pane of a tab.

    Returns
    -------
    panel.pane.Markdown
        The same pane, now hidden whenever its text is empty.
    """
    pane.visible = bool(pane.object)
    pane.param.watch(lambda e: setattr(pane, "visible", bool(e.new)), "object")
    return pane
