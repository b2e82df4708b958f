"""Hard limits on the sizes that could hang a run, a notebook or a browser session.

These are the *library's* bounds — every front end (the API constructors, the run settings,
the CLI, the estimator, the explorer's widgets) refuses values beyond them with a
``ValueError`` naming the argument.  A server can set tighter per-session caps on top
(:mod:`rbmviz.app.limits`).  This module imports nothing from rbmviz, so that the lowest
layers (model, kernels' callers, evaluate) can use it.

How the numbers were chosen (2 cores, OpenBLAS; see ``../shared/STACK.md``):

* :data:`K_MAX` — one block-Gibbs step v → h → v of a 784×500 model on a batch of 100 rows
  costs ~2.5 ms, so ``k = 1000`` keeps one parameter update of that size near 2.5 s, and the
  run loop hands control back between updates.  The papers use k ≤ 100 (Fischer & Igel 2011:
  k ≤ 100; Upadhya & Sastry 2017: K ≤ 25).
* :data:`EPOCHS_MAX` — an epoch count is never a hang by itself (the run loop stops on
  Ctrl-C), but a typo such as ``10**12`` would make a progress bar and a records estimate
  meaningless; ten million epochs of 3×3 bars & stripes take ~2 h at the fused kernel's
  ~1,300 epochs/s.
* :data:`UNITS_MAX`, :data:`WEIGHTS_MAX` — a layer of at most 16,384 units and at most 2²⁶
  weights (512 MB in float64, 256 MB in float32): beyond that an RBM does not fit the
  machines rbmviz targets, and numpy would fail late with a ``MemoryError``.
* :data:`EXACT_BITS_MAX` — exact enumeration (log Z, exact log-likelihood, exact CD bias)
  sums over ``2**m`` states of the smaller layer; at ``m = 24`` that is 16.8 M states, a few
  seconds on 2 cores for a 24×24 model, minutes above.
"""
from __future__ import annotations

import textwrap
from typing import Any

__all__ = ["K_MAX", "EPOCHS_MAX", "UNITS_MAX", "WEIGHTS_MAX", "EXACT_BITS_MAX", "SEED_MAX",
           "MEMORY_MAX", "TAP_ITER_MAX", "EXACT_BITS_DEFAULT", "MAX_WEIGHT_DEFAULT", "narrowed",
           "parameters_doc", "check_model_size", "check_memory"]

#: most Gibbs steps per parameter update (k, and d·K′ for S-DCP / CS-DCP)
K_MAX = 1000
#: most epochs of one run
EPOCHS_MAX = 10_000_000
#: most units in one layer
UNITS_MAX = 16_384
#: most weights n_visible · n_hidden of one model
WEIGHTS_MAX = 2**26
#: largest layer (bits) summed over by exact enumeration
EXACT_BITS_MAX = 24
#: the default of the run loop's ``exact_max_bits`` (:class:`rbmviz.runs.Run`, the metrics'
#: choice, the presets' float type): exact quantities are computed during a run when the
#: smaller layer has at most this many units (2**20 ≈ 10⁶ states, well under a second for
#: the small models), at most :data:`EXACT_BITS_MAX`
EXACT_BITS_DEFAULT = 20
#: the default of ``max_weight`` (:class:`rbmviz.runs.Run`, the run settings,
#: :func:`rbmviz.bias.train_expected_cd`): a run stops as diverged when a parameter grows
#: beyond this magnitude
MAX_WEIGHT_DEFAULT = 1000.0
#: seeds are integers in [0, SEED_MAX]
SEED_MAX = 2**63 - 1
#: most TAP iterations per solve of one training update (``max_iter`` and ``fixed_iter`` of
#: the TAP rule, the deep TAP machine's trainer): keeps a typo (``10**9``) from making one
#: update run for days, as :data:`K_MAX` does for Gibbs steps; the solver functions of
#: :mod:`rbmviz.tap` themselves take any count (:class:`rbmviz.tap.options.TAPSolverOptions`)
TAP_ITER_MAX = 100_000
#: most bytes one evaluation may allocate for its own work arrays (AIS chains and
#: temperatures, ...): 2 GiB, a quarter of the smallest machines rbmviz targets
MEMORY_MAX = 2**31


def check_model_size(n_visible: int, n_hidden: int, *, visible_name: str = "n_visible",
                     hidden_name: str = "n_hidden") -> None:
    """Refuse a model with too many units per layer or too many weights.

    Parameters
    ----------
    n_visible, n_hidden : int
        Layer sizes (assumed to be positive integers).
    visible_name, hidden_name : str
        Names of the sizes in the message (the caller's argument names).

    Raises
    ------
    ValueError
        Naming the argument, when a layer exceeds :data:`UNITS_MAX` units or the model
        :data:`WEIGHTS_MAX` weights.
    """
    for n, name in ((n_visible, visible_name), (n_hidden, hidden_name)):
        if n > UNITS_MAX:
            raise ValueError(f"{name}={n} is too large: at most {UNITS_MAX:,} units per layer "
                             f"(rbmviz.bounds.UNITS_MAX)")
    if n_visible * n_hidden > WEIGHTS_MAX:
        raise ValueError(f"{visible_name} · {hidden_name} = {n_visible} · {n_hidden} = "
                         f"{n_visible * n_hidden:,} weights is too large: at most {WEIGHTS_MAX:,} "
                         f"(rbmviz.bounds.WEIGHTS_MAX)")


def _human(nbytes: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:,.0f} {unit}" if unit == "bytes" else f"{nbytes:,.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes:.1f} PiB"  # pragma: no cover


def check_memory(nbytes: float, what: str, *, limit: int | None = None) -> None:
    """Refuse work whose arrays would take more than :data:`MEMORY_MAX` bytes.

    Parameters
    ----------
    nbytes : float
        The estimate of the bytes the work allocates.
    what : str
        What allocates them, naming the arguments that drive the size (e.g.
        ``"ais_log_partition with n_chains=10**9"``).
    limit : int, optional
        Another bound than :data:`MEMORY_MAX`.

    Raises
    ------
    ValueError
        Stating ``what``, the estimate and the bound.
    """
    bound = MEMORY_MAX if limit is None else limit
    if nbytes > bound:
        raise ValueError(f"{what} would allocate about {_human(nbytes)}, more than the bound of "
                         f"{_human(bound)} (rbmviz.bounds.MEMORY_MAX)")


_KEEP = object()


def narrowed(p: Any, *, default: Any = _KEEP, low: Any = _KEEP, high: Any = _KEEP,
             softbounds: Any = _KEEP, label: str | None = None, allow_None: Any = _KEEP,
             doc_prefix: str = "", doc_suffix: str = "") -> Any:
    """A copy of the declaration ``p`` (a ``param.Parameter``) for a front end that takes
    the same knob with its own default or a narrower range (a classroom tab, a training rule
    taking a solver option).

    The copy keeps the declaration's type, help text (``doc_prefix`` and ``doc_suffix`` put
    around it) and every bound not given; a bound given must lie inside the declared ones,
    so a front end can narrow a range, never widen it.

    Parameters
    ----------
    p : param.Parameter
        The declaration.
    default : object, optional
        The front end's default (inside the narrowed bounds).
    low, high : number or None, optional
        Narrower hard bounds (inclusive); omitted: the declared ones.
    softbounds : tuple, optional
        Slider range; omitted: the declared one clipped to the bounds.
    label : str, optional
        Widget label.
    allow_None : bool, optional
        Whether None is a value (e.g. a tab that needs a batch size refuses the run loop's
        None = full batch); omitted: the declaration's.
    doc_prefix, doc_suffix : str
        Text before and after the declared help text.

    Returns
    -------
    param.Parameter
        The copy.

    Raises
    ------
    ValueError
        Naming the knob, for a bound outside the declared ones or a default outside the
        bounds.
    """
    import copy

    q = copy.copy(p)
    name = p.name or "knob"
    if low is not _KEEP or high is not _KEEP:
        (lo, hi), (inc_lo, inc_hi) = p.bounds, getattr(p, "inclusive_bounds", (True, True))
        new_lo = lo if low is _KEEP else low
        new_hi = hi if high is _KEEP else high
        if lo is not None and (new_lo is None or new_lo < lo or (new_lo == lo and not inc_lo
                                                                  and low is not _KEEP)):
            raise ValueError(f"{name}: low={new_lo} is outside the declared bounds {p.bounds}")
        if hi is not None and (new_hi is None or new_hi > hi or (new_hi == hi and not inc_hi
                                                                  and high is not _KEEP)):
            raise ValueError(f"{name}: high={new_hi} is outside the declared bounds {p.bounds}")
        q.bounds = (new_lo, new_hi)
        if hasattr(q, "inclusive_bounds"):
            q.inclusive_bounds = (inc_lo if low is _KEEP else True, inc_hi if high is _KEEP else True)
        soft = getattr(p, "softbounds", None)
        if soft is not None and softbounds is _KEEP:
            s_lo, s_hi = soft
            s_lo = s_lo if s_lo is None or new_lo is None else max(s_lo, new_lo)
            s_hi = s_hi if s_hi is None or new_hi is None else min(s_hi, new_hi)
            q.softbounds = (s_lo, s_hi)
    if softbounds is not _KEEP:
        q.softbounds = softbounds
    if default is not _KEEP:
        lo, hi = getattr(q, "bounds", None) or (None, None)
        if default is not None and ((lo is not None and default < lo)
                                    or (hi is not None and default > hi)):
            raise ValueError(f"{name}: default {default} is outside the bounds {(lo, hi)}")
        q.default = default
    if label is not None:
        q.label = label
    if allow_None is not _KEEP:
        q.allow_None = bool(allow_None)
    q.doc = doc_prefix + (p.doc or "") + doc_suffix
    return q


def _type_text(p: Any) -> str:
    kind = type(p).__name__
    objects = getattr(p, "objects", None)
    if objects is not None and kind in ("Selector", "ObjectSelector"):
        text = "{" + ", ".join(repr(o) for o in objects) + "}"
    else:
        text = {"Integer": "int", "Number": "float", "Boolean": "bool", "String": "str",
                "NumericTuple": "tuple of float", "Tuple": "tuple"}.get(kind, "object")
    return text + (", optional" if p.allow_None and p.default is None else "")


def parameters_doc(declarations: Any, names: Any = None, *, indent: int = 4, width: int = 92) -> str:
    """The numpydoc ``Parameters`` section of a ``param.Parameterized`` class, written from
    its declarations (type from the parameter's kind and choices, text from its ``doc``), so
    that a settings class's docstring never restates a knob's help.

    Parameters
    ----------
    declarations : type
        A ``param.Parameterized`` class.
    names : iterable of str, optional
        The parameters, in this order; default all (``name`` excluded), in declaration order.
    indent : int
        Indentation of the section.
    width : int
        Line width the texts are wrapped to.

    Returns
    -------
    str
        The section, starting with ``Parameters`` and its underline.
    """
    params = declarations.param.objects("existing")
    names = [n for n in params if n != "name"] if names is None else list(names)
    pad = " " * indent
    lines = [pad + "Parameters", pad + "----------"]
    for n in names:
        p = params[n]
        lines.append(f"{pad}{n} : {_type_text(p)}")
        lines += textwrap.wrap(" ".join((p.doc or n).split()), width - indent - 4,
                               initial_indent=pad + "    ", subsequent_indent=pad + "    ",
                               break_on_hyphens=False)
    return "\n".join(lines) + "\n"
