"""The settings of a reproduction, declared once as a ``param`` class.

Each study of :mod:`rbmviz.reproduce` declares its settings as a subclass of
:class:`StudySettings`: one parameter per setting of its ``run``, whose default is the
paper's setting (or the study's), whose ``doc`` is the help of its ``rbmviz reproduce``
option and whose hard ``bounds`` are the ones its run checks.  Training knobs are copies of
the training rules' declarations (:func:`rbmviz.algorithms.knobs.derive_knobs`), so that a
study and ``rbmviz train`` cannot disagree on a knob's type or bounds.

Everything else is derived from the class:

* its docstring's ``Parameters`` section (from each setting's ``doc``);
* the study's command-line options (:func:`rbmviz.cli.reproduce.add_settings_options`):
  ``--kebab-case`` of the setting's name (or of :attr:`StudySettings.FLAGS`), ``INT`` / ``X``
  / comma-separated lists (``none`` for an empty one), the default and the ``--quick``
  preset (:attr:`StudySettings.QUICK`) in the help; a setting with a negative
  ``precedence`` has no option;
* the settings of a run (:func:`resolve`): the declared defaults, the ``--quick`` preset,
  then the values given, each scalar checked against its declaration (errors name it).

This module imports param (and, to check a value, :mod:`rbmviz.algorithms.knobs`).
"""
from __future__ import annotations

import numbers
from typing import Any, ClassVar, Mapping

import param

__all__ = ["StudySettings", "ListOf", "settings", "list_kind", "resolve", "values"]


def ListOf(kind: type, default: list, *, doc: str, **kw: Any) -> param.List:
    """A list-valued setting (a comma-separated list on the command line).

    Parameters
    ----------
    kind : {int, float, str}
        The type of the items (``float`` accepts any real number).
    default : list
        The default list.
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
        The type each item of the option's comma-separated text is converted with.
    """
    if not isinstance(p, param.List):
        return None
    return float if p.item_type is numbers.Real else (p.item_type or str)


def _type_name(p: param.Parameter) -> str:
    kind = list_kind(p)
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
        lines.append(f"    {(p.doc or '').strip()} (default: {p.default!r})")
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
    ``METAVARS`` the placeholders shown in the help.
    """

    QUICK: ClassVar[dict] = {}
    QUICK_HELP: ClassVar[str] = ""
    FLAGS: ClassVar[dict] = {}
    METAVARS: ClassVar[dict] = {}

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


def _checked(p: param.Parameter, name: str, value: Any) -> Any:
    from ..algorithms.knobs import check_knob, knob_kind
    if isinstance(p, param.List):
        if value is None and p.allow_None:
            return None
        if isinstance(value, str):          # "0.3,0.5", "none": as on the command line
            from ._io import parse_list
            return parse_list(value, list_kind(p), name, allow_empty=True)
        if isinstance(value, (tuple, range)) or type(value).__module__ == "numpy":
            value = list(value)
        if not isinstance(value, list):
            raise TypeError(f"{name} must be a list, got {value!r}")
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
    return cls(**{n: _checked(params[n], n, v) for n, v in chosen.items()})


def values(obj: StudySettings) -> dict:
    """The settings of an instance as a plain dict.

    Parameters
    ----------
    obj : StudySettings
        The settings.

    Returns
    -------
    dict
        ``{setting: value}``, in declaration order (lists copied).
    """
    return {n: (list(getattr(obj, n)) if isinstance(p, param.List) else getattr(obj, n))
            for n, p in settings(type(obj)).items()}
