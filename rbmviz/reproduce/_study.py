"""The settings of a reproduction, declared once as a ``param`` class.

Each study of :mod:`rbmviz.reproduce` declares its settings as a subclass of
:class:`StudySettings`: one parameter per setting of its ``run``, whose default is the
paper's setting (or the study's), whose ``doc`` is the help of its ``rbmviz reproduce``
option and whose hard ``bounds`` are the ones its run checks.  Training knobs are copies of
the training rules' declarations (:func:`rbmviz.algorithms.knobs.derive_knobs`), so that a
study and ``rbmviz train`` cannot disagree on a knob's type or bounds.

Everything else is derived from the class:

* its docstring's ``Parameters`` section (from each setting's ``doc``);
* the study's command-line options (:func:`rbmviz.cli.reproduce.add_settings_options`,
  through :func:`option` and :func:`argument_kwargs`): ``--kebab-case`` of the setting's
  name (or of :attr:`StudySettings.FLAGS`), ``INT`` / ``X`` / ``--flag`` / ``--no-flag`` /
  comma-separated lists (``none`` for an empty one; a list of layer sizes is written
  ``784-500-1000,784-500-500-1000``), the default and the ``--quick`` preset
  (:attr:`StudySettings.QUICK`) in the help; a setting with a negative ``precedence`` has
  no option;
* the settings of a run (:func:`resolve`): the declared defaults, the ``--quick`` preset,
  then the values given, each checked against its declaration (a list's items against
  :attr:`StudySettings.ITEM_BOUNDS`; errors name the setting).

This module imports param (and, to check a value, :mod:`rbmviz.algorithms.knobs`).
"""
from __future__ import annotations

import numbers
from typing import Any, ClassVar, Mapping

import param

__all__ = ["StudySettings", "ListOf", "LayerSizes", "settings", "list_kind", "resolve", "values",
           "option", "argument_kwargs", "format_value", "parse_text"]


class LayerSizes(tuple):
    """The layer sizes of one deep model, ``(N_0, N_1, ...)``: at least two sizes, each an
    integer >= 1; from a sequence or from text ``"784-500-1000"``.

    Parameters
    ----------
    sizes : str or sequence of int
        ``"N-N-..."`` or the sizes.

    Raises
    ------
    ValueError
        For fewer than two sizes or a size that is not an integer >= 1.
    """

    def __new__(cls, sizes: Any) -> "LayerSizes":
        if isinstance(sizes, str):
            parts = [x.strip() for x in sizes.strip().split("-")]
        elif isinstance(sizes, (bytes, dict, set)) or not hasattr(sizes, "__iter__"):
            raise ValueError(f"layer sizes must be 'N-N-...' or a sequence of int, got {sizes!r}")
        else:
            parts = list(sizes)
        try:
            out = [int(x) for x in parts]
        except (TypeError, ValueError):
            raise ValueError(f"layer sizes must be integers, got {sizes!r}") from None
        if any(isinstance(x, float) and x != int(x) for x in parts):
            raise ValueError(f"layer sizes must be integers, got {sizes!r}")
        if len(out) < 2 or min(out) < 1:
            raise ValueError(f"layer sizes need the visible size and at least one hidden layer, "
                             f"each >= 1, got {sizes!r}")
        return super().__new__(cls, out)

    def __str__(self) -> str:
        return "-".join(map(str, self))


def parse_text(text: str, kind: type, name: str) -> list:
    """A list setting's command-line text as a list: ``"0.3,0.5"``, ``"none"`` (empty),
    ``"784-500-1000,784-500-500-1000"`` (layer sizes).

    Parameters
    ----------
    text : str
        The text.
    kind : type
        The item type (:func:`list_kind`).
    name : str
        The option or setting, named in errors.

    Returns
    -------
    list
        The items.

    Raises
    ------
    ValueError
        For an item that does not convert, naming ``name``.
    """
    if kind is LayerSizes:
        text = str(text).strip()
        items = [] if text.lower() == "none" else [x for x in text.split(",") if x.strip()]
        try:
            return [LayerSizes(x) for x in items]
        except ValueError:
            raise ValueError(f"{name} must be a comma-separated list of layer sizes "
                             f"N-N-... (e.g. 784-500-1000,784-500-500-1000), got {text!r}") from None
    from ._io import parse_list
    return parse_list(text, kind, name, allow_empty=True)


def ListOf(kind: type, default: list, *, doc: str, **kw: Any) -> param.List:
    """A list-valued setting (a comma-separated list on the command line).

    Parameters
    ----------
    kind : {int, float, str, LayerSizes}
        The type of the items (``float`` accepts any real number).
    default : list or None
        The default list (None, with ``allow_None=True``: decided by another setting).
    doc : str
        The help text.
    **kw
        Further arguments of :class:`param.List` (e.g. ``precedence``).

    Returns
    -------
    param.List
        The declaration.
    """
    item_type = numbers.Real if kind is float else kind
    if default is None:                     # "the study's" (with allow_None=True)
        return param.List(None, item_type=item_type, doc=doc, **kw)
    if kind is LayerSizes:
        default = [LayerSizes(x) for x in default]
    return param.List(list(default), item_type=item_type, doc=doc, **kw)


def list_kind(p: param.Parameter) -> type | None:
    """The item type of a list setting (``int``, ``float`` or ``str``), None for a scalar.

    Parameters
    ----------
    p : param.Parameter
        A setting's declaration.

    Returns
    -------
    type or None
        The type each item of the option's comma-separated text is converted with
        (:class:`LayerSizes` for a list of layer sizes).
    """
    if not isinstance(p, param.List):
        return None
    return float if p.item_type is numbers.Real else (p.item_type or str)


def _type_name(p: param.Parameter) -> str:
    kind = list_kind(p)
    if kind is LayerSizes:
        return "list of layer sizes (tuples of int)"
    if kind is not None:
        return f"list of {kind.__name__}"
    for cls, name in ((param.Boolean, "bool"), (param.Integer, "int"), (param.Number, "float"),
                      (param.Selector, "str")):
        if isinstance(p, cls):
            return name + (" or None" if p.allow_None else "")
    return "object"


def settings(cls: type) -> dict[str, param.Parameter]:
    """The settings of a settings class, in declaration order (``name`` excluded).

    Parameters
    ----------
    cls : type
        A :class:`StudySettings` subclass.

    Returns
    -------
    dict
        ``{setting: param.Parameter}``.
    """
    return {n: p for n, p in cls.param.objects("existing").items() if n != "name"}


def _document(cls: type) -> None:
    """Append a ``Parameters`` section generated from the settings' docs to ``cls.__doc__``."""
    import inspect
    head = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
    params = settings(cls)
    if not head or not params or "\nParameters\n" in head:
        return
    lines = ["", "", "Parameters", "----------"]
    for name, p in params.items():
        lines.append(f"{name} : {_type_name(p)}")
        shown = getattr(cls, "DEFAULTS_SHOWN", {}).get(name)
        lines.append(f"    {(p.doc or '').strip()} (default: "
                     f"{shown if shown is not None else repr(p.default)})")
    cls.__doc__ = head + "\n".join(lines) + "\n"


class _Documented(type(param.Parameterized)):
    """The metaclass of :class:`StudySettings`: documents every subclass once param has
    collected its parameters."""

    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        _document(cls)


class StudySettings(param.Parameterized, metaclass=_Documented):
    """Base of the settings of a reproduction (see the module docstring).

    Class attributes (not settings): ``QUICK`` the ``--quick`` preset (``{setting:
    value}``; empty: no ``--quick`` option), ``QUICK_HELP`` the help of ``--quick``,
    ``FLAGS`` option strings that differ from ``--kebab-case`` of the setting's name,
    ``METAVARS`` the placeholders shown in the help, ``ITEM_BOUNDS`` ``{list setting: (low,
    high)}`` the inclusive bounds of a list's items (None: unbounded), ``DEFAULTS_SHOWN``
    ``{setting: text}`` the default as the help and the docstring state it, for a setting
    whose default another setting decides (declared None; the text replaces the declared
    default and the ``--quick`` value), ``TITLE`` the title of the group of options.
    """

    QUICK: ClassVar[dict] = {}
    QUICK_HELP: ClassVar[str] = ""
    FLAGS: ClassVar[dict] = {}
    METAVARS: ClassVar[dict] = {}
    ITEM_BOUNDS: ClassVar[dict] = {}
    DEFAULTS_SHOWN: ClassVar[dict] = {}
    TITLE: ClassVar[str] = "experiment"

    @classmethod
    def quick_presets(cls, given: Mapping) -> list[dict]:
        """The presets ``--quick`` applies, in order (default: ``[QUICK]``); a study whose
        quick form depends on a setting given (e.g. dc-mnist's study) overrides it.

        Parameters
        ----------
        given : mapping
            The settings given.

        Returns
        -------
        list of dict
            The presets.
        """
        return [cls.QUICK]


def _checked(p: param.Parameter, name: str, value: Any,
             item_bounds: tuple | None = None) -> Any:
    from ..algorithms.knobs import check_knob, knob_kind
    if isinstance(p, param.List):
        if value is None and p.allow_None:
            return None
        kind = list_kind(p)
        if isinstance(value, str):          # "0.3,0.5", "none": as on the command line
            value = parse_text(value, kind, name)
        if isinstance(value, (tuple, range)) or type(value).__module__ == "numpy":
            value = list(value)
        if not isinstance(value, list):
            raise TypeError(f"{name} must be a list, got {value!r}")
        if kind is LayerSizes:
            try:
                value = [LayerSizes(x) for x in value]
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        elif kind is int:
            bad = [x for x in value if isinstance(x, bool) or not isinstance(x, numbers.Integral)]
            if bad:
                raise TypeError(f"{name} must be a list of int, got {bad[0]!r}")
            value = [int(x) for x in value]
        if p.bounds is not None:            # the list's length
            lo, hi = p.bounds
            if (lo is not None and len(value) < lo) or (hi is not None and len(value) > hi):
                want = f"exactly {lo}" if lo == hi else f"between {lo} and {hi}"
                raise ValueError(f"{name} must have {want} items, got {len(value)}")
        if item_bounds is not None and kind in (int, float):
            lo, hi = item_bounds
            for x in value:
                if (lo is not None and x < lo) or (hi is not None and x > hi):
                    side = f">= {lo}" if lo is not None and x < lo else f"<= {hi}"
                    raise ValueError(f"{name} items must be {side}, got {x!r}")
        return value
    if knob_kind(p) == "other":
        return value
    return check_knob(p, value, name)


def resolve(cls: type, given: Any = None, overrides: Mapping | None = None, *,
            quick: bool = False) -> StudySettings:
    """The settings of one run: the declared defaults, the ``--quick`` presets (when
    ``quick``: :meth:`StudySettings.quick_presets`), then the values of ``given`` (an
    instance, or a mapping) updated with ``overrides``.

    Parameters
    ----------
    cls : type
        The study's :class:`StudySettings` subclass.
    given : StudySettings or mapping, optional
        Settings to start from.
    overrides : mapping, optional
        ``{setting: value}`` replacing those.
    quick : bool
        Start from the ``QUICK`` preset.

    Returns
    -------
    StudySettings
        An instance of ``cls``.

    Raises
    ------
    TypeError
        Naming a setting the study does not have (and listing those it has), or a value of
        the wrong type.
    ValueError
        For a value outside the setting's bounds (``"reps must be >= 1, got 0"``).
    """
    params = settings(cls)
    given = values(given) if isinstance(given, StudySettings) else dict(given or {})
    given.update(overrides or {})
    chosen: dict = {}
    for preset in (cls.quick_presets(given) if quick else ()):
        chosen.update(preset)
    chosen.update(given)
    unknown = sorted(set(chosen) - set(params))
    if unknown:
        raise TypeError(f"{cls.__name__} has no setting(s) {unknown}; it has {list(params)}")
    return cls(**{n: _checked(params[n], n, v, cls.ITEM_BOUNDS.get(n))
                  for n, v in chosen.items()})


def values(obj: StudySettings) -> dict:
    """The settings of an instance as a plain dict.

    Parameters
    ----------
    obj : StudySettings
        The settings.

    Returns
    -------
    dict
        ``{setting: value}``, in declaration order (lists copied; a list setting may be
        None where declared).
    """
    out = {}
    for n, p in settings(type(obj)).items():
        v = getattr(obj, n)
        out[n] = list(v) if isinstance(p, param.List) and v is not None else v
    return out


def format_value(value: Any) -> str:
    """A setting's value as written on the command line (``none``, comma-separated lists,
    ``784-500-1000`` layer sizes, thousands separated).

    Parameters
    ----------
    value : object
        The value.

    Returns
    -------
    str
        The text.
    """
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, LayerSizes):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ",".join("-".join(map(str, v)) if isinstance(v, tuple) else format_value(v)
                        for v in value) if value else "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:,}"
    return str(value)


def option(cls: type, name: str) -> str:
    """The option string of setting ``name``: :attr:`StudySettings.FLAGS`, or
    ``--kebab-case`` of the name.

    Parameters
    ----------
    cls : type
        The settings class.
    name : str
        The setting.

    Returns
    -------
    str
        E.g. ``"--eval-samples"``.
    """
    return cls.FLAGS.get(name, "--" + name.replace("_", "-"))


def argument_kwargs(cls: type, name: str) -> dict:
    """The keyword arguments of ``argparse``'s ``add_argument`` for setting ``name`` (its
    default is None: not given; ``type``, ``choices``, ``action`` and ``metavar`` from the
    declaration; no ``help``, no ``dest``).

    Parameters
    ----------
    cls : type
        The settings class.
    name : str
        The setting.

    Returns
    -------
    dict
        The keyword arguments.
    """
    import argparse
    p = settings(cls)[name]
    kind = list_kind(p)
    kw: dict = {"default": None}
    if kind is LayerSizes:
        kw["metavar"] = cls.METAVARS.get(name, "N-N-...,N-N-...")
    elif kind is not None:
        kw["metavar"] = cls.METAVARS.get(name, f"{kind.__name__.upper()},...")
    elif isinstance(p, param.Boolean):
        kw["action"] = argparse.BooleanOptionalAction
    elif isinstance(p, param.Selector):
        kw["choices"] = list(p.objects)
    elif isinstance(p, param.Integer):
        kw.update(type=int, metavar=cls.METAVARS.get(name, "INT"))
    else:
        kw.update(type=float, metavar=cls.METAVARS.get(name, "X"))
    return kw
