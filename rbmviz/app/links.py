"""Lesson links: the explorer's settings in the page URL, checked once, explained once.

A lecture is a link — ``…/explorer?tab=race&dataset=shifting_bar&k=12&algorithms=["cd","csdcp"]``.
:func:`check_query` reads such a query against the settings objects of the tab it names and
splits it into the values that can run and one message per value that cannot, naming the
setting and what it accepts (its bounds or choices, from the knob's one declaration).  The
page then shows one message for the whole link, drops the bad values from the URL, and the
widgets and URL show what actually runs (the declared defaults where the link was wrong).

Query values arrive as Panel parses them (:func:`panel.util.parse_query`: numbers, JSON lists,
``true``/``false``, else strings).  Keys every tab understands: ``tab`` (``race``, ``bias``,
``tap``) and ``lesson`` (a key of :data:`rbmviz.live.lessons.catalogue.LESSONS`).
"""
from __future__ import annotations

import json
import math
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import param

__all__ = ["TABS", "PAGE_KEYS", "check_query", "encode_query", "allowed_text"]

#: the ``tab=`` values and the explorer tab titles they open
TABS = {"race": "Training race", "bias": "CD bias", "tap": "TAP landscape"}
#: keys of the URL that are not settings
PAGE_KEYS = ("tab", "lesson")


def _fmt(x) -> str:
    if isinstance(x, float) and (x == 0 or 1e-3 <= abs(x) < 1e6):
        return f"{x:g}"
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def allowed_text(p: param.Parameter, labels: Mapping[str, str] | None = None) -> str:
    """What knob ``p`` accepts, in words: "a whole number from 1 to 1,000", "one of …".

    Parameters
    ----------
    p : param.Parameter
        The knob's declaration.
    labels : mapping, optional
        Display names of a selector's options (``{value: label}``).

    Returns
    -------
    str
    """
    labels = labels or {}
    if isinstance(p, param.Boolean):
        return "true or false"
    if isinstance(p, (param.ListSelector, param.Selector)):
        opts = ", ".join(f"{labels[o]} ({o})" if o in labels else str(o) for o in p.objects)
        kind = "a list of" if isinstance(p, param.ListSelector) else "one of"
        return f"{kind}: {opts}"
    if isinstance(p, param.Number):
        whole = isinstance(p, param.Integer)
        lo, hi = p.bounds if p.bounds is not None else (None, None)
        inc_lo, inc_hi = p.inclusive_bounds
        noun = "a whole number" if whole else "a number"
        parts = []
        if lo is not None:
            parts.append(f"{'at least' if inc_lo else 'above'} {_fmt(lo)}")
        if hi is not None:
            parts.append(f"{'at most' if inc_hi else 'below'} {_fmt(hi)}")
        none = " (or empty for none)" if p.allow_None else ""
        return f"{noun} {' and '.join(parts)}{none}".strip() if parts else f"{noun}{none}"
    return "a value of its kind"


def _coerce(p: param.Parameter, value: Any) -> Any:
    """The URL's value in the type the knob wants (``4.0`` → 4 for an integer, ``"cd,pcd"`` →
    a list); left as it is when it cannot be converted (validation then names it)."""
    if isinstance(value, str) and value.strip().lower() in ("none", "null", "") and p.allow_None:
        return None                      # "empty": full batch, all rows, K = M ...
    if isinstance(p, param.Integer) and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(p, param.Number) and not isinstance(p, param.Integer) and isinstance(value, int) \
            and not isinstance(value, bool):
        return float(value)
    if isinstance(p, param.ListSelector) and isinstance(value, str):
        return [v for v in value.split(",") if v]
    if isinstance(value, str) and not isinstance(p, (param.String, param.Selector)):
        try:
            return p.deserialize(value)
        except Exception:
            return value
    return value


def check_query(query: Mapping[str, Any], objects: Sequence[param.Parameterized], *,
                labels: Mapping[str, Mapping[str, str]] | None = None,
                also: Sequence[str] = (), raw: Mapping[str, str] | None = None
                ) -> tuple[dict, list[str]]:
    """Split a URL query into the settings that can run and one message per bad value.

    Parameters
    ----------
    query : mapping
        The parsed query (``pn.state.location.query_params``), without :data:`PAGE_KEYS`.
    objects : sequence of param.Parameterized
        The settings objects of the tab the link opens (a key belongs to the first that
        declares it).
    labels : mapping, optional
        ``{knob: {value: label}}`` display names of selectors' options, for the messages.
    also : sequence of str
        Further keys that are accepted as they are (e.g. the race tab's ``d_budget``).
    raw : mapping, optional
        The values as the URL spells them (shown in the messages; default: the parsed ones).

    Returns
    -------
    good : dict
        ``{key: value}`` (coerced to the knob's type) of the values that pass the knob's
        own validation (bounds, choices, type).
    problems : list of str
        One Markdown line per bad key: the value given, what the knob accepts.
    """
    labels = labels or {}
    good, problems = {}, []
    for key, value in query.items():
        if key in also:
            good[key] = value
            continue
        owner = next((o for o in objects if key in o.param and key != "name"), None)
        if owner is None:
            problems.append(f"`{key}` is not a setting of this tab")
            continue
        p = owner.param[key]
        v = _coerce(p, value)
        ok = not (isinstance(v, float) and not math.isfinite(v))
        try:
            if ok:
                p._validate(v)          # the declaration's own check (type, bounds, choices)
        except Exception:
            ok = False
        if not ok:
            shown = (raw or {}).get(key)
            if shown is None:
                shown = value if isinstance(value, str) else json.dumps(value)
            name = p.label or key
            problems.append(f"`{key}={shown}` — {name} must be "
                            f"{allowed_text(p, labels.get(key))}")
            continue
        good[key] = v
    return good, problems


def encode_query(query: Mapping[str, Any]) -> str:
    """The URL query of a tab's settings, for the links a lesson or a shared page opens.

    Parameters
    ----------
    query : mapping
        ``{key: value}`` of parsed values (lists, booleans, None, numbers, strings).

    Returns
    -------
    str
        ``?a=1&b=["x","y"]`` (lists as JSON, as Panel's location sync writes them), or
        ``""`` when ``query`` is empty.
    """
    if not query:
        return ""
    parts = {}
    for k, v in query.items():
        if isinstance(v, (list, tuple, dict)):
            parts[k] = json.dumps(list(v) if isinstance(v, tuple) else v)
        elif isinstance(v, bool):
            parts[k] = "true" if v else "false"
        elif v is None:
            parts[k] = "none"
        else:
            parts[k] = str(v)
    return "?" + urllib.parse.urlencode(parts)
