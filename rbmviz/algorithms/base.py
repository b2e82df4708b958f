"""The small interface every training rule shares.

An :class:`Algorithm` owns its hyper-parameters and its state (persistent chains, velocity,
centering offsets, the position in its random stream).  The run loop (:mod:`rbmviz.runs`)
calls :meth:`Algorithm.setup` once, then :meth:`Algorithm.train_epochs` with the epochs'
row permutations; the default implementation calls :meth:`Algorithm.update` per mini-batch,
and rules with a fused kernel override it.  Nothing here knows about records, widgets or
files.
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._seeds import stream_seed  # noqa: F401  (re-exported: algorithms.base.stream_seed)
from .knobs import AlgorithmKnobs, check_knobs, knob_params

if TYPE_CHECKING:
    from ..model import RBM


def params_healthy(rbm, max_weight=np.inf) -> bool:
    """All parameters finite and at most ``max_weight`` in magnitude."""
    for arr in rbm.params:
        if arr.size and not (np.abs(arr).max() <= max_weight):   # False for NaN too
            return False
    return True


def _subclasses(cls) -> list:
    """Every (indirect) subclass of ``cls``."""
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


class Algorithm:
    """Base class of a training rule.

    The constructor takes the knobs of :attr:`Knobs` as keyword arguments (defaults, bounds
    and docs are declared there, once; see :mod:`rbmviz.algorithms.knobs`) and validates them
    through it: a bad value is a ``ValueError``/``TypeError`` naming the knob.

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
    **knobs
        The knobs above, and a subclass's own (its ``Knobs``), by keyword.

    Raises
    ------
    ValueError, TypeError
        Naming the knob, for a bad or unknown value.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    #: the update rule in LaTeX, shown next to the algorithm list in the explorer
    equation: ClassVar[str] = ""
    #: the paper or source of the rule
    reference: ClassVar[str] = ""
    #: unit types (:data:`rbmviz.units.PRIOR_NAMES`) the rule trains correctly; the Gibbs
    #: rules sample Bernoulli units only, so :meth:`setup` refuses other priors (H8 hook)
    unit_types: ClassVar[tuple] = ("bernoulli",)
    #: the rule's knobs (a ``param.Parameterized`` class; one declaration per knob)
    Knobs: ClassVar[type] = AlgorithmKnobs
    #: knobs that :meth:`set_settings` may change between updates of a running algorithm
    LIVE_KNOBS: ClassVar[tuple[str, ...]] = ("learning_rate", "momentum", "weight_decay")
    #: :meth:`train_epochs` also checks the parameters after every update, so that a
    #: diverging update stops the epoch at once (the run loop then reports the divergence)
    check_every_update: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # the constructor's signature (help(), inspect, docs) is the Knobs declaration
        params = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=p.default)
                  for n, p in knob_params(cls.Knobs).items()]
        cls.__signature__ = inspect.Signature(params)
        bad = sorted(set(cls.LIVE_KNOBS) - set(knob_params(cls.Knobs)))
        if bad:  # pragma: no cover - guards future edits
            raise TypeError(f"{cls.__name__}.LIVE_KNOBS names {bad}, which are not knobs")

    def __init__(self, **knobs: Any) -> None:
        self._set_knobs(check_knobs(self.Knobs, knobs, owner=f"algorithm {self.name!r}"))
        self.gibbs_seed = stream_seed(self.seed, "gibbs")
        self.counter = 0          # next unused position of the Gibbs stream
        self.updates = 0          # parameter updates done
        self.gibbs_steps = 0      # Gibbs steps (per chain) done
        self._ready = False

    def _set_knobs(self, values: dict) -> None:
        """Store the validated knobs as attributes (a rule may combine or cross-check them
        here, e.g. S-DCP's budget)."""
        for key, value in values.items():
            setattr(self, key, value)

    # ------------------------------------------------------------------ interface
    @property
    def gibbs_steps_per_update(self) -> int:
        """Block-Gibbs steps (v → h → v) per chain per parameter update."""
        return 0

    def settings(self) -> dict:
        """The knobs, as keyword arguments of the constructor.

        Returns
        -------
        dict
            ``{knob: value}`` in declaration order.
        """
        return {n: getattr(self, n) for n in knob_params(self.Knobs)}

    @property
    def ready(self) -> bool:
        """Whether :meth:`setup` has run (the algorithm holds training state)."""
        return self._ready

    def setup(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        """Allocate state for training ``rbm`` on ``data`` with mini-batches of ``batch_size`` rows.

        Called once by the run loop before the first update.

        Parameters
        ----------
        rbm : RBM
            The model trained (in place).
        data : numpy.ndarray, shape (n_samples, n_visible)
            Training rows (in the training dtype).
        batch_size : int
            Rows per update.

        Raises
        ------
        ValueError
            If the rule does not train the model's unit types (:meth:`check_units`).
        """
        self.check_units(rbm)
        self.vW = np.zeros_like(rbm.W)
        self.vb = np.zeros_like(rbm.b)
        self.vc = np.zeros_like(rbm.c)
        self.batch_size = batch_size
        self._dtype = rbm.dtype
        self._ready = True

    def resume(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        """Continue training with the state already held (chains, velocities, stream position).

        E.g. ``partial_fit`` on new data.  The model must have the shape and dtype the state was
        made for.

        Parameters
        ----------
        rbm, data, batch_size
            As in :meth:`setup`.

        Raises
        ------
        ValueError
            Before :meth:`setup`, or if the model's shape or dtype differs from the state's.
        """
        if not self._ready:
            raise ValueError(f"{type(self).__name__}.resume() before setup()")
        self.check_units(rbm)
        if self.vW.shape != rbm.W.shape or self._dtype != rbm.dtype:
            raise ValueError(f"cannot resume {self.name}: its state was made for a "
                             f"{self.vW.shape} {self._dtype} model, got {rbm.W.shape} {rbm.dtype}")
        self.batch_size = batch_size

    def check_units(self, rbm: RBM) -> None:
        """Refuse a model whose unit types this rule does not train (:attr:`unit_types`).

        The message names the layer, its unit type and the rules that do train it (e.g. a
        truncated-Gaussian layer with ``cd``: only ``tap``), instead of silently sampling
        real-valued units as if they were Bernoulli.

        Parameters
        ----------
        rbm : RBM
            The model to check.

        Raises
        ------
        ValueError
            If a layer's unit type is not in :attr:`unit_types`.
        """
        for layer in ("visible", "hidden"):
            prior = getattr(rbm, f"{layer}_prior", None)
            unit = getattr(prior, "name", "bernoulli")
            if unit in self.unit_types:
                continue
            able = sorted({cls.name for cls in _subclasses(Algorithm)
                           if cls.name and unit in cls.unit_types})
            which = (f"train it with algorithm {' or '.join(repr(a) for a in able)}"
                     if able else "no algorithm of rbmviz trains it")
            raise ValueError(
                f"algorithm {self.name!r} samples Bernoulli (binary) units only, but the "
                f"{layer} units of this model are {unit!r}: its Gibbs steps would treat them as "
                f"binary and train the wrong model; {which}")

    def _check_live(self, settings) -> None:
        """``TypeError`` for an unknown knob, ``ValueError`` for one that cannot change
        between updates (not in :attr:`LIVE_KNOBS`) and differs from its current value."""
        current = self.settings()
        unknown = sorted(set(settings) - set(current))
        if unknown:
            raise TypeError(f"algorithm {self.name!r} does not take setting(s) {unknown}; "
                            f"it accepts {list(current)}")
        fixed = sorted(k for k in settings if k not in self.LIVE_KNOBS and settings[k] != current[k])
        if fixed:
            what = ("the seed of a running algorithm cannot change" if fixed == ["seed"] else
                    f"setting(s) {fixed} of a running {self.name!r} cannot change")
            raise ValueError(f"{what}; start a new run (live settings: {list(self.LIVE_KNOBS)})")

    def set_settings(self, **settings: Any) -> None:
        """Change knobs of a running algorithm; they apply from the next update.

        Validated exactly as by the constructor.  Only :attr:`LIVE_KNOBS` may change.

        Parameters
        ----------
        **settings
            New knob values.

        Raises
        ------
        TypeError
            For an unknown knob.
        ValueError
            For a knob that cannot change between updates, or a value out of range.
        """
        self._check_live(settings)
        checked = type(self)(**{**self.settings(), **settings})
        for key in settings:
            setattr(self, key, getattr(checked, key))

    def update(self, rbm: RBM, batch: np.ndarray) -> None:  # pragma: no cover - abstract
        """One parameter update of ``rbm`` (in place) from the rows of ``batch``.

        Parameters
        ----------
        rbm : RBM
            The model trained (in place).
        batch : numpy.ndarray, shape (batch_size, n_visible)
            The mini-batch.

        Raises
        ------
        TypeError
            If the subclass does not implement it.
        """
        raise TypeError(f"{type(self).__name__} does not implement update()")

    def train_epochs(self, rbm: RBM, data: np.ndarray, order: np.ndarray, bounds: np.ndarray,
                     max_weight: float = np.inf) -> int:
        """Train over ``len(order)`` epochs.

        Epoch ``e`` visits ``data[order[e]]`` in mini-batches ``[bounds[i], bounds[i+1])``.  After
        every epoch (and after every update when :attr:`check_every_update`) the parameters are
        checked; training stops early after an epoch that leaves a non-finite parameter or one
        larger than ``max_weight`` in magnitude.

        Parameters
        ----------
        rbm : RBM
            The model trained (in place).
        data : numpy.ndarray, shape (n_samples, n_visible)
            Training rows.
        order : numpy.ndarray, shape (n_epochs, n_samples)
            One permutation of the rows per epoch.
        bounds : numpy.ndarray
            Batch boundaries (:func:`rbmviz.runs.batch_bounds`).
        max_weight : float
            Largest healthy ``|parameter|``.

        Returns
        -------
        int
            The number of epochs done (``len(order)`` unless stopped early).
        """
        for e, perm in enumerate(order):
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                self.update(rbm, data[perm[lo:hi]])
                if self.check_every_update and not params_healthy(rbm, max_weight):
                    return e + 1
            if not params_healthy(rbm, max_weight):
                return e + 1
        return len(order)

    # ------------------------------------------------------------------ helpers
    def _work_arrays(self, rbm, rows, extra):
        """The work arrays of the BLAS path for ``rows`` rows, kept in ``self._buf`` and made
        again only for more rows or another shape or dtype: the ones every Gibbs rule uses
        (pre-activations, hidden samples, the sigmoid scratch ``F``/``B``, the gradient
        ``G``, ``gb``, ``gc``) and ``extra(rows, n_visible, n_hidden, dtype)``."""
        buf = getattr(self, "_buf", None)
        key = (rows, rbm.n_visible, rbm.n_hidden, rbm.dtype)
        if buf is None or buf["key"][0] < rows or buf["key"][1:] != key[1:]:
            dt, nv, nh = rbm.dtype, rbm.n_visible, rbm.n_hidden
            m = max(nv, nh)
            buf = self._buf = {
                "key": key,
                "Pre": np.empty((rows, nh), dtype=dt),    # hidden pre-activations
                "H": np.empty((rows, nh), dtype=dt),      # hidden samples
                "PreV": np.empty((rows, nv), dtype=dt),   # visible pre-activations
                "F": np.empty((rows, m)), "B": np.empty((rows, m), dtype=np.int64),
                "G": np.empty((nv, nh), dtype=dt), "gb": np.empty(nv, dtype=dt),
                "gc": np.empty(nh, dtype=dt), **extra(rows, nv, nh, dt)}
        return buf

    def record_fields(self) -> dict:
        """Extra values the run loop copies into every record.

        E.g. TAP: runs that did not converge; plain numbers only.

        Returns
        -------
        dict
            ``{field: number}``; empty by default.
        """
        return {}

    def apply_gradient_(self, rbm: RBM, gW: np.ndarray, gb: np.ndarray, gc: np.ndarray) -> None:
        """θ ← θ + step for an ascent direction, with momentum and weight decay when set.

        Counts the update.

        Parameters
        ----------
        rbm : RBM
            The model trained (in place).
        gW, gb, gc : numpy.ndarray
            Ascent directions of ``W`` (n_visible, n_hidden), ``b`` (n_visible,) and ``c``
            (n_hidden,).
        """
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
