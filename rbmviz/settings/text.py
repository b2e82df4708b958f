"""Settings as one flat ``dict`` of all knobs and as text: :func:`to_dict`, :func:`from_dict`,
:func:`parse_value` (a knob's value from a command line, URL query or JSON), :func:`set_knob`
and :func:`clean_param_error` (param's message without its prefix).
"""
from __future__ import annotations

import difflib
import math
import re
from typing import Any

import numpy as np
import param

from ..algorithms import knobs as _knobs
from .classes import SETTINGS_CLASSES, DataSettings, ModelSettings, TrainSettings, knobs

__all__ = ["to_dict", "from_dict", "parse_value", "set_knob", "clean_param_error"]

#: a knob's kind ("choice", "bool", "int", "float" or "other"), as the command line reads it
_param_kind = _knobs.knob_kind

_NONE_WORDS = ("none", "null", "")


def parse_value(p: param.Parameter, value: Any) -> Any:
    """Convert ``value`` (a Python value, or text) to the type of knob ``p``.

    Text from a command line / URL query / JSON: ``"12"`` → 12 for Integer knobs, ``"0.3"`` →
    0.3 for Number knobs, ``"none"`` → None where None is allowed.  Bounds are not checked
    here: param checks them when the value is assigned.

    Parameters
    ----------
    p : param.Parameter
        The knob's declaration: its kind and whether None is allowed.
    value : object
        A Python value, or its text.

    Returns
    -------
    object
        ``value`` in the knob's type (its bounds unchecked).

    Raises
    ------
    ValueError
        Saying what was expected.
    """
    kind = _knobs.knob_kind(p)
    if value is None or (isinstance(value, str) and value.strip().lower() in _NONE_WORDS
                         and kind != "choice"):
        if p.allow_None:
            return None
        raise ValueError(f"expected {_expected(p)}, got {value!r}")
    if kind == "int":
        if isinstance(value, str):
            try:
                value = int(value.strip().replace("_", ""))
            except ValueError:
                raise ValueError(f"expected {_expected(p)}, got {value!r}") from None
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"expected {_expected(p)}, got {value!r}")
        return int(value)
    if kind == "float":
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise ValueError(f"expected {_expected(p)}, got {value!r}") from None
        elif isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"expected {_expected(p)}, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"expected a finite number, got {value!r}")
        return value
    if kind == "bool" and isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _expected(p: param.Parameter) -> str:
    kind = _knobs.knob_kind(p)
    what = {"int": "an integer", "float": "a number", "bool": "true or false"}.get(kind, "a value")
    if kind == "choice":
        what = "one of " + ", ".join(map(str, p.objects))
    return what + (" or none" if p.allow_None else "")


def clean_param_error(exc: Exception) -> str:
    """param's message without its ``"Integer parameter 'TrainSettings.k' "`` prefix.

    E.g. ``"must be at least 1, not 0."`` (for messages that name the knob another way).

    Parameters
    ----------
    exc : Exception
        An error raised by param.

    Returns
    -------
    str
        The message.
    """
    return re.sub(r"^\w+ parameter '[\w.]+' ", "", str(exc))


def to_dict(data_settings: DataSettings, model_settings: ModelSettings,
            train_settings: TrainSettings, *, changed_only: bool = False) -> dict:
    """One flat ``{knob: value}`` dict of the three settings objects (JSON-ready values).

    In declaration order: data knobs, model knobs, training knobs.

    Parameters
    ----------
    data_settings : DataSettings
        The data settings.
    model_settings : ModelSettings
        The model settings.
    train_settings : TrainSettings
        The training settings.
    changed_only : bool
        Keep only the values that differ from the defaults (short URLs).

    Returns
    -------
    dict
        ``{knob: value}``.

    Raises
    ------
    TypeError
        If an argument is not the settings class it should be.
    """
    out = {}
    for obj, cls in zip((data_settings, model_settings, train_settings), SETTINGS_CLASSES):
        if not isinstance(obj, cls):
            raise TypeError(f"expected a {cls.__name__}, got {type(obj).__name__}")
        for n, p in knobs(cls).items():
            v = getattr(obj, n)
            if changed_only and v == p.default:
                continue
            out[n] = v
    return out


def from_dict(values: dict) -> tuple[DataSettings, ModelSettings, TrainSettings]:
    """Settings objects from a flat dict as written by :func:`to_dict`.

    Missing knobs keep their defaults.  Values may be text (URL query strings): see
    :func:`parse_value`.

    Parameters
    ----------
    values : dict
        ``{knob: value}``.

    Returns
    -------
    tuple
        ``(DataSettings, ModelSettings, TrainSettings)``.

    Raises
    ------
    TypeError
        If ``values`` is not a dict.
    ValueError
        For an unknown knob (with the closest known name) or a bad value (naming the knob and
        what it accepts).
    """
    if not isinstance(values, dict):
        raise TypeError(f"settings must be a dict, got {type(values).__name__}")
    all_knobs = [n for cls in SETTINGS_CLASSES for n in knobs(cls)]
    unknown = [k for k in values if k not in all_knobs]
    if unknown:
        hints = []
        for k in unknown:
            close = difflib.get_close_matches(str(k), all_knobs, n=1)
            hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ValueError(f"unknown setting(s) {', '.join(hints)}; known settings: {', '.join(all_knobs)}")
    objs = tuple(cls() for cls in SETTINGS_CLASSES)
    for obj, cls in zip(objs, SETTINGS_CLASSES):
        for n, p in knobs(cls).items():
            if n in values:
                set_knob(obj, n, values[n])
    return objs


def set_knob(obj: param.Parameterized, name: str, value: Any) -> None:
    """Parse (:func:`parse_value`) and assign one knob.

    Parameters
    ----------
    obj : param.Parameterized
        A settings object.
    name : str
        The knob.
    value : object
        The value or its text.

    Raises
    ------
    ValueError
        Naming the knob, for a value it does not accept.
    """
    p = obj.param[name]
    try:
        setattr(obj, name, parse_value(p, value))
    except ValueError as exc:
        raise ValueError(f"invalid value {value!r} for setting {name!r}: {clean_param_error(exc)}") from None
