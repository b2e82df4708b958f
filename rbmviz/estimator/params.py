"""The estimator's knob parameters, derived from the algorithms' knob declarations
(:mod:`rbmviz.algorithms.knobs`), and their scikit-learn constraints; and the
pseudo-likelihood of rows of probabilities.

The constraints are plain types (:func:`interval`, :func:`options`, :data:`ALGORITHM_NAME`):
``isinstance(value, T)`` says whether ``T`` takes ``value``.  "Any type, meaning that any
instance of this type is valid" is one of the constraint forms scikit-learn's
``_parameter_constraints`` documents, so scikit-learn's own parameter check (and its
``InvalidParameterError`` naming the parameter) applies without rbmviz importing
scikit-learn's private constraint classes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import math
from collections.abc import Callable, Iterable
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from .. import algorithms as _algorithms
from .._numerics import softplus as _softplus
from ..algorithms import knobs as _knobs

if TYPE_CHECKING:
    import param

    from ..model import RBM

__all__ = ["KNOBS", "RULE_DEPENDENT", "ALGORITHM_NAME", "interval", "options", "constraint",
           "pseudo_log_likelihood_expected"]

#: every algorithm knob, copied from its one declaration (``seed`` is ``random_state`` here);
#: a knob the chosen algorithm does not take is an error only when it differs from the
#: declared default
KNOBS = _knobs.union_params([_algorithms.get(n) for n in _algorithms.names()], exclude=("seed",))


def _rule_dependent(knobs: dict) -> frozenset:
    """The knobs whose declared default differs between the rules that take them (e.g.
    ``learning_rate``: 0.1 for the sampling rules, 0.005 for ``tap``; ``k``: 1 for CD-k,
    d·K′ for S-DCP).  The estimator's default for them is None, "the chosen rule's own
    default", so that no rule is trained at another rule's value."""
    out = set()
    for name in knobs:
        seen = {repr(p.default) for p in (_knobs.knob_params(_algorithms.get(a)).get(name)
                                          for a in _algorithms.names()) if p is not None}
        if len(seen) > 1:
            out.add(name)
    return frozenset(out)


#: knobs whose default depends on the chosen rule: None in the estimator = the rule's default
RULE_DEPENDENT = _rule_dependent(KNOBS)
for _name in RULE_DEPENDENT:
    KNOBS[_name].default = None
    KNOBS[_name].allow_None = True


def _check_unit_interval(X, name="X"):
    """Raise a ``ValueError`` naming ``name`` unless every entry of ``X`` is in [0, 1]."""
    bad = (X < 0) | (X > 1)
    if bad.any():
        r, col = np.argwhere(bad)[0]
        neg = "Negative values in data: " if (X < 0).any() else ""
        raise ValueError(f"{neg}{name} must hold visible-unit states or probabilities in "
                         f"[0, 1]; found {X[r, col]!r} at row {r}, column {col}")
    return X


class _ValuesType(type):
    """Metaclass of the constraint types: ``isinstance(value, T)`` is ``T.accepts(value)``."""

    def __instancecheck__(cls, value) -> bool:
        return bool(cls.accepts(value))


def _values_type(description: str, accepts: Callable[[object], bool]) -> type:
    """A type whose instances are the values ``accepts`` takes, named ``description``.

    scikit-learn names a type constraint by its qualified name (its module left out for
    ``builtins``), so the error reads "The 'k' parameter of RBMEstimator must be an instance
    of 'int in the range [1, inf)' ...": the module is set to ``builtins`` for that message
    only.
    """
    return _ValuesType(description, (), {"accepts": staticmethod(accepts), "__module__": "builtins",
                                         "__doc__": f"Constraint type: {description}."})


def interval(kind: str, low: float | None, high: float | None, *, closed: str) -> type:
    """The constraint "a number of ``kind`` between ``low`` and ``high``".

    The same values as scikit-learn's ``Interval``: an ``"int"`` interval takes
    ``numbers.Integral`` values, a ``"float"`` interval any ``numbers.Real`` but NaN.

    Parameters
    ----------
    kind : {"int", "float"}
        The kind of number.
    low, high : float or None
        The bounds; None for no bound.
    closed : {"both", "left", "right", "neither"}
        Which bounds belong to the interval.

    Returns
    -------
    type
        A type for ``_parameter_constraints``: ``isinstance(value, T)`` tells whether the
        interval holds ``value``.

    Raises
    ------
    ValueError
        If ``kind`` or ``closed`` is not one of the values above.
    """
    if kind not in ("int", "float"):
        raise ValueError(f"kind must be 'int' or 'float', got {kind!r}")
    if closed not in ("both", "left", "right", "neither"):
        raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
    number = Integral if kind == "int" else Real
    inc_low, inc_high = closed in ("both", "left"), closed in ("both", "right")

    def accepts(value) -> bool:
        if not isinstance(value, number):
            return False
        if not isinstance(value, Integral) and math.isnan(value):
            return False
        if low is not None and (value < low if inc_low else value <= low):
            return False
        return not (high is not None and (value > high if inc_high else value >= high))

    def text(bound, default):
        if bound is None:
            return default
        return str(float(bound)) if kind == "float" else str(bound)

    return _values_type(f"{kind} in the range {'[' if inc_low else '('}{text(low, '-inf')}, "
                        f"{text(high, 'inf')}{']' if inc_high else ')'}", accepts)


def options(values: Iterable[str]) -> type:
    """The constraint "one of the strings ``values``".

    Parameters
    ----------
    values : iterable of str
        The accepted strings.

    Returns
    -------
    type
        A type for ``_parameter_constraints``: ``isinstance(value, T)`` tells whether
        ``value`` is one of ``values``.
    """
    accepted = frozenset(values)
    listed = ", ".join(repr(v) for v in sorted(accepted))
    return _values_type(f"str among {{{listed}}}", lambda value: isinstance(value, str)
                        and value in accepted)


#: the constraint "the name of a registered algorithm", read at every check, so that an
#: algorithm registered after import is accepted too
ALGORITHM_NAME = _values_type("str naming a registered algorithm (rbmviz.algorithms.names())",
                              lambda value: isinstance(value, str) and value in _algorithms.names())


def constraint(p: param.Parameter) -> list:
    """The scikit-learn constraints of a knob declaration (bounds, choices, None allowed).

    Parameters
    ----------
    p : param.Parameter
        A knob declaration (a value of :data:`KNOBS`).

    Returns
    -------
    list
        The knob's entry of ``_parameter_constraints``.
    """
    kind = _knobs.knob_kind(p)
    if kind == "choice":
        out = [options(str(o) for o in p.objects)]
    elif kind == "bool":
        out = ["boolean"]
    else:
        lo, hi = p.bounds
        inc_lo, inc_hi = p.inclusive_bounds
        closed = {(True, True): "both", (True, False): "left", (False, True): "right",
                  (False, False): "neither"}[(lo is not None and inc_lo, hi is not None and inc_hi)]
        out = [interval(kind, lo, hi, closed=closed)]
    return out + ([None] if p.allow_None else [])


def _knob_docs() -> str:
    """The Parameters entries of the knobs (``learning_rate`` excepted: the class docstring
    writes it out), from the declarations' docs, for :class:`RBMEstimator`'s docstring."""
    lines = []
    for n, p in KNOBS.items():
        if n == "learning_rate":
            continue
        kind = {"int": "int", "float": "float", "bool": "bool", "choice": "str"}[_knobs.knob_kind(p)]
        lines.append(f"    {n} : {kind}{' or None' if p.allow_None else ''}, default={p.default!r}")
        lines.append(f"        {(p.doc or '').strip()}")
        if n in RULE_DEPENDENT:
            lines.append("        None (default): the chosen rule's own declared default.")
    return "\n".join(lines)


def pseudo_log_likelihood_expected(rbm: RBM, X: ArrayLike) -> np.ndarray:
    """Pseudo-log-likelihood over all sites of rows ``X`` with entries in [0, 1] (nats).

    ``Σ_i [x_i log p_i + (1 − x_i) log(1 − p_i)]``, ``p_i = p(v_i = 1 | v_{−i} = x_{−i})``,

    the cross-entropy of each site's probability under the model's conditional (Besag's
    pseudo-likelihood with the data term as a mean-field value).  For 0/1 rows it is exactly
    the pseudo-log-likelihood ``Σ_i log p(v_i | v_{−i})`` of
    :func:`rbmviz.evaluate.pseudo_log_likelihood_rows`.  The logit of ``p_i`` is
    ``F(x with x_i = 0) − F(x with x_i = 1) = b_i + Σ_j [softplus(c_j + x_{−i}W_{·j} + W_ij)
    − softplus(c_j + x_{−i}W_{·j})]`` (free energy ``F(v) = −bᵀv − Σ_j softplus(c_j + vᵀW_{·j})``).
    Cost O(n_samples · n_features · n_components).

    Parameters
    ----------
    rbm : RBM
        A binary model.
    X : array_like, shape (n_samples, n_features)
        Rows with entries in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (n_samples,)
        The pseudo-log-likelihood of every row.
    """
    W, b, c = (np.asarray(a, dtype=np.float64) for a in rbm.params)
    X = np.asarray(X, dtype=np.float64)
    pre = X @ W + c
    out = np.zeros(X.shape[0])
    for i in range(X.shape[1]):
        pre0 = pre - X[:, i:i + 1] * W[i]
        logit = b[i] + (_softplus(pre0 + W[i]) - _softplus(pre0)).sum(axis=1)
        out -= X[:, i] * _softplus(-logit) + (1.0 - X[:, i]) * _softplus(logit)
    return out
