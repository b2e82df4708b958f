"""The URL of a lesson's link: :func:`query` writes it, :func:`parse_query` reads it back.

The format is given in :mod:`rbmviz.live.lessons` (*URL format*)::

    ?lesson=<key>&tab=<tab>&<knob>=<value>&...

lists as JSON arrays (comma-joined ones are read too), ``None`` as ``none``, booleans
``true``/``false``; values URL-encoded.
"""
from __future__ import annotations

import json
import urllib.parse
from typing import Any

import param

from ...settings import parse_value
from .catalogue import get
from .knobs import tab_knobs
from .lesson import Lesson

__all__ = ["query", "parse_query"]


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
        ``?lesson=<key>&tab=<tab>&<knob>=<value>...`` (:mod:`rbmviz.live.lessons` gives the
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
