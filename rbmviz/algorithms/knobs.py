"""Every knob of every training rule, declared once.

Each algorithm class carries ``Knobs``, a ``param.Parameterized`` class whose parameters are
its constructor's keyword arguments: default, hard ``bounds``, slider ``softbounds``,
``doc`` (and a widget ``label``).  Knobs shared by several rules are declared once in a base
(:class:`AlgorithmKnobs`: ``learning_rate``, ``momentum``, ``weight_decay``, ``seed``;
:class:`GibbsKnobs`: ``k``) and inherited; a rule that needs another default re-declares only
that (param inherits the rest, e.g. TAP's ``learning_rate = param.Number(0.005)``).
``Algorithm.LIVE_KNOBS`` names the knobs a running algorithm accepts between updates
(:meth:`~rbmviz.algorithms.base.Algorithm.set_settings`).

Everything else is derived from these declarations:

* the constructors validate through them (:func:`check_knobs`; errors name the knob);
* :class:`rbmviz.settings.TrainSettings` holds the union of all rules' knobs
  (:func:`union_params`) and switches to a rule's own defaults when the rule changes;
* the ``rbmviz train`` options, :class:`rbmviz.estimator.RBMEstimator`'s parameters and
  the explorer's widgets (``pn.Param`` over the settings; :func:`derive_knobs` builds a tab's
  own settings class from a rule's knobs with tab-specific defaults).

``tests/test_knobs.py`` walks every knob of every rule and checks that all front ends agree.

This module imports param only.
"""
from __future__ import annotations

import copy
import numbers
import sys
from typing import Any, Iterable, Mapping

import numpy as np
import param

from .._validation import check_choice
from ..bounds import K_MAX, SEED_MAX

__all__ = ["AlgorithmKnobs", "GibbsKnobs", "knob_params", "knob_kind", "check_knob", "check_knobs",
           "union_params", "derive_knobs", "defaults"]


class AlgorithmKnobs(param.Parameterized):
    """Knobs every training rule takes.

    Parameters
    ----------
    learning_rate : float
        Step size η > 0 of each update (the gradient is a mean over the mini-batch).
    momentum : float
        Heavy-ball momentum in [0, 1): v ← momentum·v + η(g − weight_decay·W), θ ← θ + v; 0
        = plain gradient steps (as in the papers).
    weight_decay : float
        L2 penalty on the weights W (>= 0); 0 = none.
    seed : int
        Seed of the training randomness (Gibbs stream; the run loop's mini-batch shuffles).
    """

    learning_rate = param.Number(
        0.1, bounds=(0.0, None), inclusive_bounds=(False, True), softbounds=(0.001, 1.0),
        label="Learning rate η",
        doc="Step size η > 0 of each update (the gradient is a mean over the mini-batch).")
    momentum = param.Number(
        0.0, bounds=(0.0, 1.0), inclusive_bounds=(True, False), softbounds=(0.0, 0.99),
        label="Momentum",
        doc="Heavy-ball momentum in [0, 1): v ← momentum·v + η(g − weight_decay·W), θ ← θ + v; "
            "0 = plain gradient steps (as in the papers).")
    weight_decay = param.Number(
        0.0, bounds=(0.0, None), softbounds=(0.0, 0.01), label="Weight decay",
        doc="L2 penalty on the weights W (>= 0); 0 = none.")
    seed = param.Integer(
        0, bounds=(0, SEED_MAX), softbounds=(0, 100), label="Seed",
        doc="Seed of the training randomness (Gibbs stream; the run loop's mini-batch shuffles).")


class GibbsKnobs(AlgorithmKnobs):
    """Knobs of the rules that run Gibbs chains.

    Parameters
    ----------
    learning_rate, momentum, weight_decay, seed
        See :class:`AlgorithmKnobs`.
    k : int
        Block-Gibbs steps per parameter update, 1 to 1000 (one step of a 784x500 model on
        100 rows costs ~2.5 ms).  sdcp/csdcp: the Gibbs budget k = d·K′ (equal compute with
        CD-k); none = d·K′ from d and K′ (default d = 3, K′ = 4), given alone it is split
        with K′ = 4 when 4 divides k.
    """

    k = param.Integer(
        1, bounds=(1, K_MAX), softbounds=(1, 50), label="Gibbs steps k",
        doc=f"Block-Gibbs steps per parameter update, 1 to {K_MAX} (one step of a 784x500 model "
            f"on 100 rows costs ~2.5 ms).  sdcp/csdcp: the Gibbs budget k = d·K′ (equal compute "
            f"with CD-k); none = d·K′ from d and K′ (default d = 3, K′ = 4), given alone it is "
            f"split with K′ = 4 when 4 divides k.")


def knob_params(knobs: Any) -> dict[str, param.Parameter]:
    """The parameters of a ``Knobs`` class, in declaration order, ``name`` excluded.

    Parameters
    ----------
    knobs : type or object
        A ``Knobs`` class or instance, or an algorithm class or instance.

    Returns
    -------
    dict
        ``{knob: param.Parameter}``.
    """
    knobs = getattr(knobs, "Knobs", knobs)
    return {n: p for n, p in knobs.param.objects("existing").items() if n != "name"}


def knob_kind(p: param.Parameter) -> str:
    """The kind of widget a knob needs.

    Parameters
    ----------
    p : param.Parameter
        A knob declaration.

    Returns
    -------
    str
        ``"choice"``, ``"bool"``, ``"int"``, ``"float"`` (or ``"other"``).
    """
    if isinstance(p, param.Selector):
        return "choice"
    if isinstance(p, param.Boolean):
        return "bool"
    if isinstance(p, param.Integer):
        return "int"
    if isinstance(p, param.Number):
        return "float"
    return "other"


def _bound_text(op: str, bound) -> str:
    return f"{op} {bound:g}" if isinstance(bound, float) else f"{op} {bound}"


def check_knob(p: param.Parameter, value: Any, name: str | None = None) -> Any:
    """``value`` checked against the declaration ``p`` (type, bounds, choices) and converted.

    ``3.0`` becomes ``3`` for an integer knob, numpy scalars become Python numbers.

    Parameters
    ----------
    p : param.Parameter
        The knob's declaration.
    value : object
        The value to check.
    name : str, optional
        The knob's name in messages (default ``p.name``).

    Returns
    -------
    object
        The converted value.

    Raises
    ------
    TypeError
        For a value of the wrong type; the message starts with the knob's name.
    ValueError
        For a value out of bounds, not finite, or an unknown choice, e.g.
        ``"k must be <= 1000, got 5000"``.
    """
    name = name or p.name
    if value is None:
        if p.allow_None:
            return None
        raise TypeError(f"{name} must not be None")
    kind = knob_kind(p)
    if kind == "choice":
        return check_choice(value, name, tuple(p.objects))
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {value!r}")
        return bool(value)
    if kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                value = int(value)
            else:
                raise TypeError(f"{name} must be an integer, got {value!r}")
        value = int(value)
    elif kind == "float":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {value!r}")
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value}")
    else:  # pragma: no cover - no such knob today
        return value
    lo, hi = p.bounds or (None, None)
    inc_lo, inc_hi = getattr(p, "inclusive_bounds", (True, True))
    if lo is not None and (value < lo or (value == lo and not inc_lo)):
        raise ValueError(f"{name} must be {_bound_text('>=' if inc_lo else '>', lo)}, got {value}")
    if hi is not None and (value > hi or (value == hi and not inc_hi)):
        raise ValueError(f"{name} must be {_bound_text('<=' if inc_hi else '<', hi)}, got {value}")
    return value


def defaults(knobs: Any) -> dict:
    """The knobs' defaults.

    Parameters
    ----------
    knobs : type or object
        A ``Knobs`` class (or an algorithm class).

    Returns
    -------
    dict
        ``{knob: default}``, in declaration order.
    """
    return {n: p.default for n, p in knob_params(knobs).items()}


def check_knobs(knobs: Any, given: Mapping, *, owner: str = "algorithm") -> dict:
    """All knobs of ``knobs``: the defaults updated with ``given``, each checked by :func:`check_knob`.

    Parameters
    ----------
    knobs : type
        A ``Knobs`` class or an algorithm class.
    given : mapping
        Values given, ``{knob: value}``.
    owner : str
        What takes the knobs, named in messages.

    Returns
    -------
    dict
        ``{knob: checked value}`` for every knob, in declaration order.

    Raises
    ------
    TypeError
        Naming an unknown knob and listing the accepted ones, or a value of the wrong type.
    ValueError
        For a value out of bounds.
    """
    params = knob_params(knobs)
    unknown = sorted(set(given) - set(params))
    if unknown:
        raise TypeError(f"{owner} does not take setting(s) {unknown}; it accepts {list(params)}")
    return {n: check_knob(p, given[n] if n in given else p.default, n) for n, p in params.items()}


def _same_declaration(a: param.Parameter, b: param.Parameter) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, param.Selector):
        return list(a.objects) == list(b.objects)
    return (getattr(a, "bounds", None) == getattr(b, "bounds", None)
            and getattr(a, "inclusive_bounds", None) == getattr(b, "inclusive_bounds", None))


def union_params(algorithm_classes: Iterable, *, exclude: Iterable[str] = ()) -> dict[str, param.Parameter]:
    """One copy of every knob of ``algorithm_classes``, ``exclude`` left out.

    The first declaration in the order given wins; ``allow_None`` if any rule allows None.
    Rules that declare a knob of the same name must agree on its type and hard bounds (or
    choices) — it guards the one declaration per knob.

    Parameters
    ----------
    algorithm_classes : iterable of type
        Algorithm classes.
    exclude : iterable of str
        Knobs left out.

    Returns
    -------
    dict
        ``{knob: param.Parameter}`` (copies).

    Raises
    ------
    TypeError
        Naming the knob and the two rules, when two declarations disagree.
    """
    out: dict[str, param.Parameter] = {}
    first: dict[str, str] = {}
    exclude = set(exclude)
    for cls in algorithm_classes:
        for n, p in knob_params(cls).items():
            if n in exclude:
                continue
            if n not in out:
                out[n] = copy.copy(p)
                first[n] = cls.__name__
            elif not _same_declaration(out[n], p):
                raise TypeError(f"knob {n!r} is declared differently by {first[n]} and "
                                f"{cls.__name__} (type, bounds or choices); declare it once")
            elif p.allow_None:
                out[n].allow_None = True
    return out


def derive_knobs(name: str, algorithms: Iterable, *, include: Iterable[str] | None = None,
                 exclude: Iterable[str] = (), defaults: Mapping | None = None,
                 labels: Mapping | None = None, bases: tuple = (param.Parameterized,),
                 doc: str | None = None) -> type:
    """A new ``param.Parameterized`` class whose parameters are copies of the knobs of
    ``algorithms`` (algorithm classes; see :func:`union_params`) — for a front end that needs
    its own settings class, e.g. the TAP tab's ``TapSettings``.

    Parameters
    ----------
    name : str
        Name of the new class.
    algorithms : iterable of type
        Algorithm classes whose knobs are copied.
    include : iterable of str, optional
        Only these knobs (in this order); default all.
    exclude : iterable of str
        Knobs left out.
    defaults : mapping, optional
        Front-end defaults, ``{knob: value}``; each is checked against the knob's bounds
        (``ValueError`` naming it) — the bounds, doc and type stay those of the declaration.
    labels : mapping, optional
        Widget labels to replace.
    bases : tuple of classes
        Base classes of the new class (``param.Parameterized`` subclasses).
    doc : str, optional
        Docstring of the new class.

    Returns
    -------
    type
        The new ``param.Parameterized`` subclass.

    Raises
    ------
    ValueError
        If ``include``, ``defaults`` or ``labels`` name a knob the algorithms do not have, or
        a default is out of the knob's bounds.
    TypeError
        If two algorithms declare a knob differently (:func:`union_params`).

    Examples
    --------
    >>> from rbmviz.algorithms import TAP
    >>> Knobs = derive_knobs("TapKnobs", [TAP], include=["learning_rate", "damping"],
    ...                      defaults={"learning_rate": 0.1})
    >>> Knobs().learning_rate, Knobs.param.damping.bounds == TAP.Knobs.param.damping.bounds
    (0.1, True)
    """
    algorithms = list(algorithms)
    params = union_params(algorithms, exclude=exclude)
    if include is not None:
        include = list(include)
        missing = [n for n in include if n not in params]
        if missing:
            raise ValueError(f"include names knob(s) {missing} that {[a.__name__ for a in algorithms]} "
                             f"do not declare; known: {list(params)}")
        params = {n: params[n] for n in include}
    for n, value in (defaults or {}).items():
        if n not in params:
            raise ValueError(f"defaults: {n!r} is not one of the knobs {list(params)}")
        params[n].default = check_knob(params[n], value, n)
    for n, text in (labels or {}).items():
        if n not in params:
            raise ValueError(f"labels: {n!r} is not one of the knobs {list(params)}")
        params[n].label = text
    cls = param.parameterized_class(name, params, bases=bases)
    if doc:
        cls.__doc__ = doc
    # the class belongs to the module that derives it (not to param), so that documentation
    # and pickling find it there
    caller = sys._getframe(1).f_globals.get("__name__")
    if caller:
        cls.__module__ = caller
    return cls
