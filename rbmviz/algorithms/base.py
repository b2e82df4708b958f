"""The small interface every training rule shares.

An :class:`Algorithm` owns its hyper-parameters and its state (persistent chains, velocity,
centering offsets, the position in its random stream).  The run loop (:mod:`rbmviz.runs`)
calls :meth:`Algorithm.setup` once, then :meth:`Algorithm.train_epochs` with the epochs'
row permutations; the default implementation calls :meth:`Algorithm.update` per mini-batch,
and rules with a fused kernel override it.  Nothing here knows about records, widgets or
files.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .._seeds import stream_seed  # noqa: F401  (re-exported: algorithms.base.stream_seed)
from .._validation import check_float, check_int, check_seed


def params_healthy(rbm, max_weight=np.inf) -> bool:
    """All parameters finite and at most ``max_weight`` in magnitude."""
    for arr in rbm.params:
        if arr.size and not (np.abs(arr).max() <= max_weight):   # False for NaN too
            return False
    return True


class Algorithm:
    """Base class of a training rule.

    Parameters
    ----------
    learning_rate : float
        Step size η > 0.
    momentum : float
        Heavy-ball momentum in [0, 1): ``v ← momentum·v + η(g − weight_decay·W)``,
        ``θ ← θ + v``.  Off (0) by default: the papers use none.
    weight_decay : float
        L2 penalty on W (≥ 0), off by default.
    seed : int
        Seed of the algorithm's Gibbs stream (counter-based; see :mod:`rbmviz.kernels.random`).
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    #: the update rule in LaTeX, shown next to the algorithm list in the explorer
    equation: ClassVar[str] = ""
    #: the paper or source of the rule
    reference: ClassVar[str] = ""

    def __init__(self, *, learning_rate=0.1, momentum=0.0, weight_decay=0.0, seed=0):
        self.learning_rate = check_float(learning_rate, "learning_rate", low=0.0, low_open=True)
        self.momentum = check_float(momentum, "momentum", low=0.0)
        if self.momentum >= 1.0:
            raise ValueError(f"momentum must be < 1, got {self.momentum}")
        self.weight_decay = check_float(weight_decay, "weight_decay", low=0.0)
        self.seed = check_seed(seed)
        self.gibbs_seed = stream_seed(self.seed, "gibbs")
        self.counter = 0          # next unused position of the Gibbs stream
        self.updates = 0          # parameter updates done
        self.gibbs_steps = 0      # Gibbs steps (per chain) done
        self._ready = False

    # ------------------------------------------------------------------ interface
    @property
    def gibbs_steps_per_update(self) -> int:
        """Block-Gibbs steps (v → h → v) per chain per parameter update."""
        return 0

    def settings(self) -> dict:
        """The hyper-parameters, as keyword arguments of the constructor."""
        return {"learning_rate": self.learning_rate, "momentum": self.momentum,
                "weight_decay": self.weight_decay, "seed": self.seed}

    @property
    def ready(self) -> bool:
        """Whether :meth:`setup` has run (the algorithm holds training state)."""
        return self._ready

    def setup(self, rbm, data, batch_size: int) -> None:
        """Allocate state for training ``rbm`` on ``data`` with mini-batches of
        ``batch_size`` rows.  Called once by the run loop before the first update."""
        self.vW = np.zeros_like(rbm.W)
        self.vb = np.zeros_like(rbm.b)
        self.vc = np.zeros_like(rbm.c)
        self.batch_size = batch_size
        self._dtype = rbm.dtype
        self._ready = True

    def resume(self, rbm, data, batch_size: int) -> None:
        """Continue training with the state already held (chains, velocities, stream
        position) — e.g. ``partial_fit`` on new data.  The model must have the shape and
        dtype the state was made for."""
        if not self._ready:
            raise ValueError(f"{type(self).__name__}.resume() before setup()")
        if self.vW.shape != rbm.W.shape or self._dtype != rbm.dtype:
            raise ValueError(f"cannot resume {self.name}: its state was made for a "
                             f"{self.vW.shape} {self._dtype} model, got {rbm.W.shape} {rbm.dtype}")
        self.batch_size = batch_size

    def set_settings(self, **settings) -> None:
        """Change hyper-parameters of a running algorithm (they apply from the next update),
        validated exactly as by the constructor."""
        unknown = sorted(set(settings) - set(self.settings()))
        if unknown:
            raise TypeError(f"algorithm {self.name!r} does not take setting(s) {unknown}; "
                            f"it accepts {sorted(self.settings())}")
        if "seed" in settings and settings["seed"] != self.seed:
            raise ValueError("the seed of a running algorithm cannot change; start a new run")
        checked = type(self)(**{**self.settings(), **settings})
        for key in settings:
            setattr(self, key, getattr(checked, key))

    def update(self, rbm, batch: np.ndarray) -> None:  # pragma: no cover - abstract
        """One parameter update of ``rbm`` (in place) from the rows of ``batch``."""
        raise TypeError(f"{type(self).__name__} does not implement update()")

    def train_epochs(self, rbm, data: np.ndarray, order: np.ndarray, bounds: np.ndarray,
                     max_weight: float = np.inf) -> int:
        """Train over ``len(order)`` epochs; epoch ``e`` visits ``data[order[e]]`` in
        mini-batches ``[bounds[i], bounds[i+1])``.

        After every epoch the parameters are checked; training stops early after an epoch
        that leaves a non-finite parameter or one larger than ``max_weight`` in magnitude.

        Returns
        -------
        int — the number of epochs done (``len(order)`` unless stopped early).
        """
        for e, perm in enumerate(order):
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                self.update(rbm, data[perm[lo:hi]])
            if not params_healthy(rbm, max_weight):
                return e + 1
        return len(order)

    # ------------------------------------------------------------------ helpers
    def record_fields(self) -> dict:
        """Extra values the run loop copies into every record (e.g. TAP: runs that did not
        converge); plain numbers only.  None by default."""
        return {}

    def apply_gradient_(self, rbm, gW, gb, gc) -> None:
        """θ ← θ + step for an ascent direction ``(gW, gb, gc)``, with momentum and weight
        decay when set; counts the update."""
        W, b, c = rbm.params
        lr = self._dtype.type(self.learning_rate)
        if self.momentum == 0.0 and self.weight_decay == 0.0:
            W += lr * gW
            b += lr * gb
            c += lr * gc
        else:
            m = self._dtype.type(self.momentum)
            self.vW *= m
            self.vW += lr * (gW - self._dtype.type(self.weight_decay) * W)
            self.vb *= m
            self.vb += lr * gb
            self.vc *= m
            self.vc += lr * gc
            W += self.vW
            b += self.vb
            c += self.vc

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings().items())
        return f"{type(self).__name__}({args})"
