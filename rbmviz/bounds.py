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

__all__ = ["K_MAX", "EPOCHS_MAX", "UNITS_MAX", "WEIGHTS_MAX", "EXACT_BITS_MAX", "SEED_MAX",
           "MEMORY_MAX", "TAP_ITER_MAX", "check_model_size", "check_memory"]

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
