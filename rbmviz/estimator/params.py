"""The estimator's parameters, derived from the algorithms' knob declarations
(:mod:`rbmviz.algorithms.knobs`), their scikit-learn constraints and the generated
``__init__``; and the pseudo-likelihood of rows of probabilities."""
from __future__ import annotations

from typing import TYPE_CHECKING

import collections.abc
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from .. import algorithms as _algorithms
from .._numerics import softplus as _softplus
from ..algorithms import knobs as _knobs

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["KNOBS", "PARAMETERS", "RULE_DEPENDENT", "pseudo_log_likelihood_expected"]

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


class _AlgorithmNames(collections.abc.Set):
    """The live set of registered algorithm names (an algorithm registered after import is
    accepted too), usable as the options of a ``StrOptions`` constraint."""

    def __contains__(self, name):
        return name in _algorithms.names()

    def __iter__(self):
        return iter(_algorithms.names())

    def __len__(self):
        return len(_algorithms.names())

    @classmethod
    def _from_iterable(cls, it):
        return frozenset(it)


def _check_unit_interval(X, name="X"):
    """Raise a ``ValueError`` naming ``name`` unless every entry of ``X`` is in [0, 1]."""
    bad = (X < 0) | (X > 1)
    if bad.any():
        r, col = np.argwhere(bad)[0]
        neg = "Negative values in data: " if (X < 0).any() else ""
        raise ValueError(f"{neg}{name} must hold visible-unit states or probabilities in "
                         f"[0, 1]; found {X[r, col]!r} at row {r}, column {col}")
    return X


def _constraint(p) -> list:
    """The scikit-learn constraint of a knob declaration (bounds, choices, None allowed)."""
    kind = _knobs.knob_kind(p)
    if kind == "choice":
        out = [StrOptions({str(o) for o in p.objects})]
    elif kind == "bool":
        out = ["boolean"]
    else:
        lo, hi = p.bounds
        inc_lo, inc_hi = p.inclusive_bounds
        closed = {(True, True): "both", (True, False): "left", (False, True): "right",
                  (False, False): "neither"}[(lo is not None and inc_lo, hi is not None and inc_hi)]
        out = [Interval(Integral if kind == "int" else Real, lo, hi, closed=closed)]
    return out + ([None] if p.allow_None else [])


#: the estimator's parameters in signature order, with their defaults: the BernoulliRBM ones,
#: then every algorithm knob (its declared default), then the model's
_LEADING = (("n_components", 256), ("algorithm", "pcd"), ("learning_rate", KNOBS["learning_rate"].default),
            ("batch_size", 10), ("n_iter", 10))
_TRAILING = (("init_scale", 0.01), ("init_visible_bias", "zeros"), ("dtype", "float64"),
             ("random_state", None), ("verbose", 0))
PARAMETERS = dict((*_LEADING, *((n, p.default) for n, p in KNOBS.items() if n != "learning_rate"),
                   *_TRAILING))


def _make_init():
    """``__init__(self, n_components=256, *, algorithm="pcd", ..., verbose=0)`` storing every
    parameter unchanged (scikit-learn's rule), generated from :data:`PARAMETERS` so that the
    signature lists every knob with its declared default."""
    names = list(PARAMETERS)
    args = ", ".join([f"{names[0]}=_d[{names[0]!r}]", "*"]
                     + [f"{n}=_d[{n!r}]" for n in names[1:]])
    body = "\n".join(f"    self.{n} = {n}" for n in names)
    ns = {"_d": PARAMETERS}
    exec(f"def __init__(self, {args}):\n{body}\n", ns)   # noqa: S102 - names are identifiers
    init = ns["__init__"]
    init.__doc__ = "Store the parameters (see the class docstring)."
    init.__annotations__ = {**_annotations(), "return": "None"}
    return init


def _annotations() -> dict:
    """The type of every parameter of :data:`PARAMETERS` (as text), for the generated signature."""
    out = {"n_components": "int", "algorithm": "str", "learning_rate": "float",
           "batch_size": "int", "n_iter": "int", "init_scale": "float",
           "init_visible_bias": "str", "dtype": "str",
           "random_state": "int | numpy.random.RandomState | None", "verbose": "int"}
    for n, p in KNOBS.items():
        if n not in out:
            kind = {"int": "int", "float": "float", "bool": "bool", "choice": "str"}.get(
                _knobs.knob_kind(p), "object")
            out[n] = kind + (" | None" if p.allow_None else "")
    return {n: out[n] for n in PARAMETERS}


def _knob_docs() -> str:
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
