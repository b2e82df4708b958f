"""Deep TAP machines: binary deep Boltzmann machines trained with the TAP equations —
Tramel et al. (2018), Appendix E (eqs. 119–129, Alg. 4; restated and checked in
the TAP-beyond theory page of the documentation).

Layers ``x⁽⁰⁾ = v, x⁽¹⁾, …, x⁽ᴸ⁾`` of binary units, couplings ``W⁽ˡ⁾`` (shape
``(N_{l−1}, N_l)``) between consecutive layers and biases ``θ⁽ˡ⁾``:

    ``−E = Σ_l θ⁽ˡ⁾·x⁽ˡ⁾ + Σ_{l≥1} x⁽ˡ⁻¹⁾ᵀ W⁽ˡ⁾ x⁽ˡ⁾``     (eq. 119, binary priors).

TAP inference is Alg. 1 on the block weight matrix of eq. (125): second-order (TAP2)
magnetisations, with ``s⁽ˡ⁾ = m⁽ˡ⁾ − (m⁽ˡ⁾)²``::

    m⁽ˡ⁾ = σ(θ⁽ˡ⁾ + W⁽ˡ⁾ᵀ m⁽ˡ⁻¹⁾ + W⁽ˡ⁺¹⁾ m⁽ˡ⁺¹⁾
             − (m⁽ˡ⁾ − ½) ⊙ [(W⁽ˡ⁾∘²)ᵀ s⁽ˡ⁻¹⁾ + W⁽ˡ⁺¹⁾∘² s⁽ˡ⁺¹⁾]),

updated odd layers first, then even layers (the graph is bipartite, so each half-step is
exact block Gauss–Seidel, as Alg. 1's hidden-then-visible order), each new value damped.
At a fixed point the TAP estimate of the log-partition function is::

    Φ(m) = Σ_l Σ_i H(m_i⁽ˡ⁾) + Σ_l θ⁽ˡ⁾·m⁽ˡ⁾ + Σ_l m⁽ˡ⁻¹⁾ᵀ W⁽ˡ⁾ m⁽ˡ⁾
           + ½ Σ_l s⁽ˡ⁻¹⁾ᵀ (W⁽ˡ⁾∘²) s⁽ˡ⁾     (≈ ln Z).

Clamped solutions (the data term of eq. 121, "Alg. 1(X^B, …)" in Alg. 4) keep ``m⁽⁰⁾ = x``
fixed (``s⁽⁰⁾ = 0``, so layer 1 gets the field ``W⁽¹⁾ᵀx`` and no Onsager term from below);
``Φ`` at a clamped solution estimates ``b·x + ln Σ_h e^{−E(x, h)}``.  The TAP log-likelihood
of ``x`` is ``Φ(clamped on x) − ⟨Φ(free)⟩`` (free solutions averaged uniformly), per unit
÷ ``Σ_l N_l`` in Fig. 11.

Its gradients are the explicit partial derivatives at the fixed points (eqs. 126–129):

    ``ΔW⁽ˡ⁾ = ⟨ā⁽ˡ⁻¹⁾ā⁽ˡ⁾ᵀ + W⁽ˡ⁾ ∘ s̄⁽ˡ⁻¹⁾s̄⁽ˡ⁾ᵀ⟩_M − ⟨m⁽ˡ⁻¹⁾m⁽ˡ⁾ᵀ + W⁽ˡ⁾ ∘ s⁽ˡ⁻¹⁾s⁽ˡ⁾ᵀ⟩_K``,
    ``Δθ⁽ˡ⁾ = ⟨ā⁽ˡ⁾⟩_M − ⟨m⁽ˡ⁾⟩_K``

(bars: clamped solutions over the mini-batch, ``ā⁽⁰⁾ = x``, ``s̄⁽⁰⁾ = 0``).  Training (Alg. 4):
greedy layer-wise pretraining with TAP RBMs (:func:`pretrain`), then joint TAP training
(:class:`DBMTrainer`).
"""
from __future__ import annotations

import dataclasses
import numbers
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike
import param

from . import _files
from . import bounds as _bounds
from ._numerics import sigmoid as _sigmoid
from ._validation import (check_array, check_bool, check_data, check_float, check_int,
                          check_seed)
from .algorithms.knobs import check_knob, derive_knobs
from .algorithms.tap import TAP
from .errors import RunDiverged
from .evaluate import all_states
from .model import RBM
from .tap.options import DeepLikelihoodOptions as _DL, TAPSolverOptions as _O, check_option

__all__ = ["DBM", "DBMSolution", "tap_solve", "tap_log_z", "log_likelihood", "gradient",
           "DBMTrainer", "pretrain", "DBMKnobs", "EXACT_MAX_UNITS"]

#: exact enumeration (log Z, marginals) is offered up to this many units in total
EXACT_MAX_UNITS = 22
_EPS = 1e-12
#: the format tag of the files :meth:`DBM.save` writes
_FORMAT_TAG = "rbmviz.DBM"
_FORMAT_VERSION = 1


class _DBMRunKnobs(param.Parameterized):
    batch_size = param.Integer(
        100, bounds=(1, None), softbounds=(10, 500), label="Batch M",
        doc="Rows per update M (Table 1: 100).")
    epochs = param.Integer(
        50, bounds=(0, _bounds.EPOCHS_MAX), softbounds=(0, 100), label="Pretraining epochs",
        doc="Epochs of each layer's greedy TAP-RBM pretraining (Alg. 4: 50).")


#: the training knobs of a deep TAP machine (Alg. 4), read by :class:`DBMTrainer` and
#: :func:`pretrain`: the TAP rule's declarations (bounds, help) with App. E's defaults γ =
#: 0.001 and Table 1's η = 0.5, ε = 0.001, plus the batch size and the pretraining epochs
DBMKnobs = derive_knobs(
    "DBMKnobs", [TAP],
    include=["learning_rate", "momentum", "weight_decay", "n_solutions", "damping", "tol",
             "max_iter", "seed"],
    defaults={"learning_rate": 0.001, "momentum": 0.5, "weight_decay": 0.001},
    bases=(_DBMRunKnobs,),
    doc="The training knobs of a deep TAP machine (Tramel et al. 2018, Alg. 4): the TAP "
        "rule's declarations with App. E's defaults.")
DBMKnobs.__doc__ = DBMKnobs.__doc__ + "\n\n" + _bounds.parameters_doc(DBMKnobs)


def _knob(name: str, value, knobs=DBMKnobs):
    """``value`` checked as the deep TAP machine's knob ``name`` (the TAP rule's bounds, the
    same message as every training rule: e.g. ``momentum`` in [0, 1), ``max_iter`` in
    [1, 100000])."""
    return check_knob(knobs.param[name], value, name)


def _check_layers(layers) -> list[int]:
    """Layer sizes: a sequence of at least 2 integers ≥ 1, each layer within
    :data:`rbmviz.bounds.UNITS_MAX` and the weights within :data:`rbmviz.bounds.WEIGHTS_MAX`."""
    if isinstance(layers, (str, bytes, dict, set, frozenset)) or not hasattr(layers, "__len__"):
        raise TypeError(f"layers must be a sequence of layer sizes (N_0, N_1, …), got "
                        f"{type(layers).__name__} {layers!r}")
    if np.ndim(layers) != 1:
        raise ValueError(f"layers must be a flat sequence of layer sizes, got shape {np.shape(layers)}")
    sizes = [check_int(n, f"layers[{i}]", low=1) for i, n in enumerate(layers)]
    if len(sizes) < 2:
        raise ValueError(f"layers needs the visible size and at least one hidden layer, got {sizes}")
    for i, n in enumerate(sizes):
        if n > _bounds.UNITS_MAX:
            raise ValueError(f"layers[{i}]={n} is too large: at most {_bounds.UNITS_MAX:,} units "
                             f"per layer (rbmviz.bounds.UNITS_MAX)")
    total = sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    if total > _bounds.WEIGHTS_MAX:
        raise ValueError(f"layers={sizes} has {total:,} weights: too large, at most "
                         f"{_bounds.WEIGHTS_MAX:,} (rbmviz.bounds.WEIGHTS_MAX)")
    return sizes


def _check_sequence(value, name: str, n: int | None, what: str):
    """A list of ``n`` items (one per layer / coupling matrix), else a clear error (any
    length if ``n`` is None)."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)) and not (
            isinstance(value, np.ndarray) and value.ndim >= 1):
        count = "" if n is None else f"{n} "
        raise TypeError(f"{name} must be a list of {count}arrays ({what}), got {type(value).__name__}")
    value = list(value)
    if n is not None and len(value) != n:
        raise ValueError(f"{name} must have {n} arrays ({what}), got {len(value)}")
    return value


def _entropy(m):
    mc = np.clip(m, _EPS, 1.0 - _EPS)
    return -(m * np.log(mc) + (1.0 - m) * np.log1p(-mc))


def _check_dbm_headers(path, headers) -> None:
    """The declared arrays of a DBM file, checked before any array is read: the format tag
    (an RBM file is named as such), ``layers`` (1-D integers), ``W1 … WL`` (float, 2-D,
    chained, within the bounds) and ``theta0 … thetaL`` (float, matching the weights)."""
    if "layers" not in headers:
        if "W" in headers and "b" in headers and "c" in headers:
            raise ValueError(f"{path} is an rbmviz RBM file, not a DBM (no 'layers' array); load "
                             f"it with rbmviz.RBM.load, or save a DBM with DBM.save")
        raise ValueError(f"{path} is not a DBM written by DBM.save: it has no 'layers' array "
                         f"(it holds arrays {sorted(headers)})")
    shape, dtype = headers["layers"]
    if len(shape) != 1 or dtype.kind not in "iu":
        raise ValueError(f"{path}: array 'layers' must be a 1-D integer array of layer sizes, got "
                         f"{dtype} of shape {shape}")
    n_layers = shape[0]
    if n_layers < 2:
        raise ValueError(f"{path}: array 'layers' has {n_layers} entries; a DBM has the visible "
                         f"layer and at least one hidden layer")
    if 2 * n_layers - 1 > len(headers):
        raise ValueError(f"{path} declares {n_layers} layers but holds only {len(headers)} arrays; "
                         f"a DBM of L + 1 layers stores W1 … WL and theta0 … thetaL")
    want = [f"W{l + 1}" for l in range(n_layers - 1)] + [f"theta{l}" for l in range(n_layers)]
    missing = [k for k in want if k not in headers]
    if missing:
        raise ValueError(f"{path} declares {n_layers} layers but is missing arrays {missing}")
    sizes = []
    for l in range(n_layers - 1):
        key = f"W{l + 1}"
        shape, dtype = headers[key]
        if dtype.kind != "f":
            raise ValueError(f"{path}: array {key!r} has dtype {dtype}; DBM parameters must be "
                             f"float64 or float32")
        if len(shape) != 2 or 0 in shape:
            raise ValueError(f"{path}: array {key!r} must be 2-D (N_{l}, N_{l + 1}) with at least "
                             f"one unit per layer, got shape {shape}")
        if sizes and shape[0] != sizes[-1]:
            raise ValueError(f"{path}: array {key!r} has shape {shape} but 'W{l}' ends with "
                             f"{sizes[-1]} units")
        if not sizes:
            sizes.append(shape[0])
        sizes.append(shape[1])
    try:
        _check_layers(sizes)
    except ValueError as exc:
        raise ValueError(f"{path}: the declared weight shapes are too large: {exc}") from None
    for l, n in enumerate(sizes):
        key = f"theta{l}"
        shape, dtype = headers[key]
        if dtype.kind != "f":
            raise ValueError(f"{path}: array {key!r} has dtype {dtype}; DBM parameters must be "
                             f"float64 or float32")
        if shape != (n,):
            raise ValueError(f"{path}: array {key!r} has shape {shape} but the weights need ({n},)")
    for key, (shape, _) in headers.items():
        size = int(np.prod(shape, dtype=object))
        if key not in want and size > _bounds.WEIGHTS_MAX:
            raise ValueError(f"{path}: array {key!r} declares shape {shape} ({size:,} values), "
                             f"more than a DBM file holds (at most {_bounds.WEIGHTS_MAX:,}, "
                             f"rbmviz.bounds.WEIGHTS_MAX)")


class DBM:
    """A binary deep Boltzmann machine with ``L = len(layers) − 1`` hidden layers (eq. 119).

    Parameters
    ----------
    layers : sequence of int
        ``(N_0, N_1, …, N_L)``: visible units, then each hidden layer (at least 2 entries).
    seed : int, optional
        Seed of the initial weights ``W⁽ˡ⁾ ~ N(0, scale²)``; biases start at 0.
    scale : float ≥ 0
        Standard deviation of the initial weights.

    Attributes
    ----------
    W : list of ndarray
        ``W[l-1]`` is ``W⁽ˡ⁾``, shape ``(N_{l−1}, N_l)``.
    biases : list of ndarray
        ``biases[l]`` is ``θ⁽ˡ⁾`` (``biases[0]`` the visible biases ``b``).

    Raises
    ------
    TypeError
        If ``layers`` is not a sequence of integer sizes.
    ValueError
        If it has fewer than 2 entries, a size below 1, a layer above
        :data:`rbmviz.bounds.UNITS_MAX` units or more than :data:`rbmviz.bounds.WEIGHTS_MAX`
        weights in all.
    """

    def __init__(self, layers: Sequence[int], *, seed: int = 0, scale: float = 0.01) -> None:
        layers = _check_layers(layers)
        scale = check_float(scale, "scale", low=0.0)
        rng = np.random.default_rng(check_seed(seed))
        self.layers = tuple(layers)
        self.W = [rng.normal(0.0, scale, (a, b)) for a, b in zip(layers[:-1], layers[1:])]
        self.biases = [np.zeros(n) for n in layers]

    @property
    def n_hidden_layers(self) -> int:
        """Number of hidden layers ``L``.

        Returns
        -------
        int
            ``len(layers) − 1``.
        """
        return len(self.layers) - 1

    @property
    def n_units(self) -> int:
        """Total number of units over all layers.

        Returns
        -------
        int
            ``Σ_l N_l``.
        """
        return int(sum(self.layers))

    def copy(self) -> "DBM":
        """A copy with its own arrays.

        Returns
        -------
        DBM
            An equal model that shares no array with this one.
        """
        new = DBM.__new__(DBM)
        new.layers = self.layers
        new.W = [w.copy() for w in self.W]
        new.biases = [t.copy() for t in self.biases]
        return new

    def set_params(self, W: Sequence[ArrayLike] | None = None,
                   biases: Sequence[ArrayLike] | None = None) -> "DBM":
        """Replace the weights and/or the biases (shape-checked, copied as float64).

        Parameters
        ----------
        W : sequence of array_like, optional
            ``W[l-1]`` of shape ``(N_{l−1}, N_l)``; unchanged if None.
        biases : sequence of array_like, optional
            ``biases[l]`` of size ``N_l``; unchanged if None.

        Returns
        -------
        DBM
            The model itself, for chaining.

        Raises
        ------
        TypeError
            If ``W`` or ``biases`` is not a list of numeric arrays.
        ValueError
            If a shape does not match the layers (nothing is reshaped) or an entry is NaN or
            inf; the model is unchanged then.
        """
        want = [(a, b) for a, b in zip(self.layers[:-1], self.layers[1:])]
        if W is not None:
            W = _check_sequence(W, "W", None, "one per coupling matrix")
            shapes = [np.shape(w) for w in W]
            if shapes != want:
                raise ValueError(f"W must have shapes {want}, got {shapes}")
            W = [check_array(w, f"W[{l}]", shape=want[l]).copy() for l, w in enumerate(W)]
        if biases is not None:
            biases = _check_sequence(biases, "biases", None, "one per layer")
            shapes = [np.shape(t) for t in biases]
            if shapes != [(n,) for n in self.layers]:
                raise ValueError(f"biases must have shapes {[(n,) for n in self.layers]}, got {shapes}")
            biases = [check_array(t, f"biases[{l}]", shape=(n,)).copy()
                      for l, (t, n) in enumerate(zip(biases, self.layers))]
        if W is not None:
            self.W = W
        if biases is not None:
            self.biases = biases
        return self

    def _check_params(self) -> None:
        """Refuse a model whose parameters were made unusable in place (NaN or inf, or an
        array of the wrong shape assigned to ``W`` or ``biases``).

        Raises
        ------
        ValueError
            Naming the array.
        """
        want = [(a, b) for a, b in zip(self.layers[:-1], self.layers[1:])]
        if len(self.W) != len(want) or len(self.biases) != len(self.layers):
            raise ValueError(f"the DBM has {len(self.W)} weight matrices and {len(self.biases)} "
                             f"bias vectors for layers {list(self.layers)}")
        for name, arrays, shapes in (("W", self.W, want),
                                     ("biases", self.biases, [(n,) for n in self.layers])):
            for l, (a, shape) in enumerate(zip(arrays, shapes)):
                if np.shape(a) != shape:
                    raise ValueError(f"the DBM's {name}[{l}] has shape {np.shape(a)}; expected {shape}")
                if not np.all(np.isfinite(a)):
                    raise ValueError(f"the DBM's {name}[{l}] contains NaN or inf; the model "
                                     f"cannot be used")

    def __repr__(self):
        return f"DBM(layers={list(self.layers)})"

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write the parameters to ``path`` (``.npz`` appended if missing), atomically, as
        :meth:`RBM.save <rbmviz.model.RBM.save>` does.

        Parameters
        ----------
        path, overwrite
            As in :meth:`RBM.save <rbmviz.model.RBM.save>`.

        Returns
        -------
        pathlib.Path
            The path written: ``path``, with ``.npz`` appended when it had another
            suffix.

        Raises
        ------
        FileExistsError, IsADirectoryError, ValueError, TypeError
            As :meth:`RBM.save <rbmviz.model.RBM.save>` does (a ``ValueError`` also when the
            directory cannot be created or written, a ``TypeError`` for an ``overwrite``
            that is not a bool).
        """
        path = _files.check_not_special(path, "path", what="a file name for the DBM")
        overwrite = check_bool(overwrite, "overwrite")
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        _files.check_writable_dir(path.parent, "path")
        arrays = {"format": np.array(_FORMAT_TAG), "format_version": np.array(_FORMAT_VERSION),
                  "layers": np.array(self.layers, dtype=np.int64)}
        arrays.update({f"W{l + 1}": np.asarray(w, dtype=np.float64) for l, w in enumerate(self.W)})
        arrays.update({f"theta{l}": np.asarray(t, dtype=np.float64) for l, t in enumerate(self.biases)})
        _files.savez(path, arrays, overwrite=overwrite, name="path", what="a file name for the DBM")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "DBM":
        """Load a model written by :meth:`save` (``allow_pickle=False``).

        The path must be a regular file (a FIFO or device is refused without being opened);
        the arrays' declared shapes and dtypes are checked against each other and the bounds
        (:data:`rbmviz.bounds.UNITS_MAX`, :data:`rbmviz.bounds.WEIGHTS_MAX`) before any array
        is read, and the parameters are checked to be finite.

        Parameters
        ----------
        path : str or os.PathLike
            The ``.npz`` file; ``path`` without ``.npz`` also finds ``path.npz``, as
            :meth:`save` names it.

        Returns
        -------
        DBM
            The model, in float64.

        Raises
        ------
        FileNotFoundError, TypeError
            As :meth:`RBM.load <rbmviz.model.RBM.load>` does.
        ValueError
            Naming the file: not a regular file, not a readable ``.npz`` archive (corrupt or
            truncated), not a DBM file (e.g. an RBM's), a missing array, a shape that does not
            match ``layers`` or is beyond the bounds, a non-float parameter, NaN or inf.
        """
        path = _files._as_path(path, "path")
        if not os.path.lexists(path) and path.suffix != ".npz" and \
                os.path.lexists(path.with_name(path.name + ".npz")):
            path = path.with_name(path.name + ".npz")
        what = "a DBM written by DBM.save (.npz)"
        arrays = _files.load_npz(path, "path", what=what,
                                 check=lambda headers: _check_dbm_headers(path, headers))
        layers = [int(n) for n in arrays["layers"]]
        if any(n < 1 for n in layers):
            raise ValueError(f"{path}: array 'layers' holds {layers}; layer sizes must be >= 1")
        for l in range(len(layers) - 1):
            if arrays[f"W{l + 1}"].shape != (layers[l], layers[l + 1]):
                raise ValueError(f"{path}: array 'W{l + 1}' has shape {arrays[f'W{l + 1}'].shape} "
                                 f"but layers={layers} needs {(layers[l], layers[l + 1])}")
        params = {}
        for key in [f"W{l + 1}" for l in range(len(layers) - 1)] + \
                   [f"theta{l}" for l in range(len(layers))]:
            arr = arrays[key]
            if not np.all(np.isfinite(arr)):
                bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
                raise ValueError(f"{path}: array {key!r} contains NaN or inf (first at index {bad}); "
                                 f"the model cannot be used")
            params[key] = np.ascontiguousarray(arr, dtype=np.float64)
        dbm = cls(layers, scale=0.0)
        dbm.W = [params[f"W{l + 1}"] for l in range(len(layers) - 1)]
        dbm.biases = [params[f"theta{l}"] for l in range(len(layers))]
        return dbm

    # ------------------------------------------------------------------ exact (tiny models)
    def _check_exact(self, units):
        self._check_params()
        if units > EXACT_MAX_UNITS:
            raise ValueError(f"exact enumeration needs at most {EXACT_MAX_UNITS} units, this "
                             f"model has {units}")

    def _neg_energy(self, states):
        """``−E`` of the rows of ``states`` (lists of per-layer arrays)."""
        out = sum(s @ t for s, t in zip(states, self.biases))
        for l, w in enumerate(self.W):
            out = out + np.einsum("ri,ij,rj->r", states[l], w, states[l + 1])
        return out

    def _enumerate(self, first):
        sizes = self.layers[first:]
        S = all_states(sum(sizes))
        return np.split(S, np.cumsum(sizes)[:-1], axis=1)

    def exact(self) -> tuple[float, list[np.ndarray]]:
        """Exact ``(ln Z, marginals)`` by enumerating all joint states (tiny models).

        Returns
        -------
        log_z : float
            ``ln Z``.
        marginals : list of numpy.ndarray
            Per-layer ``P(x_i = 1)``.

        Raises
        ------
        ValueError
            If the model has more than :data:`EXACT_MAX_UNITS` units.
        """
        self._check_exact(self.n_units)
        states = self._enumerate(0)
        le = self._neg_energy(states)
        lz = float(np.logaddexp.reduce(le))
        p = np.exp(le - lz)
        return lz, [p @ s for s in states]

    def exact_clamped(self, X: ArrayLike) -> tuple[np.ndarray, list[np.ndarray]]:
        """Exact clamped ``(Φ*, marginals)`` per row ``x`` of ``X``.

        ``Φ* = b·x + ln Σ_h e^{−E(x, h)}``, and the hidden marginals ``P(h⁽ˡ⁾_i = 1 | x)``.

        Parameters
        ----------
        X : array_like, shape (R, N_0)
            Binary data rows.

        Returns
        -------
        phi : numpy.ndarray, shape (R,)
            ``Φ*`` of every row.
        marginals : list of numpy.ndarray
            Per hidden layer, shape (R, N_l).

        Raises
        ------
        ValueError
            If the hidden layers have more than :data:`EXACT_MAX_UNITS` units.
        """
        self._check_exact(self.n_units - self.layers[0])
        X = check_data(X, "X", n_visible=self.layers[0])
        H = self._enumerate(1)
        le = self._neg_energy([np.zeros((H[0].shape[0], self.layers[0]))] + H)   # hidden part
        field = X @ self.W[0] @ H[0].T + le[None, :]                               # (R, S)
        lz = np.logaddexp.reduce(field, axis=1)
        p = np.exp(field - lz[:, None])
        return X @ self.biases[0] + lz, [p @ h for h in H]

    def exact_log_likelihood(self, X: ArrayLike) -> float:
        """Exact average log-likelihood of the rows of ``X`` (tiny models).

        Parameters
        ----------
        X : array_like, shape (R, N_0)
            Binary data rows; the hidden layers must be tiny, as for :meth:`exact_clamped`.

        Returns
        -------
        float
            Mean ``ln P(x)`` in nats.
        """
        lz, _ = self.exact()
        return float(np.mean(self.exact_clamped(X)[0]) - lz)


# ---------------------------------------------------------------------------- TAP inference
@dataclasses.dataclass
class DBMSolution:
    """TAP2 fixed points of a DBM, one per initialisation.

    Parameters
    ----------
    m : list of numpy.ndarray
        Per-layer magnetisations, shape (R, N_l) (``m[0]`` the data when clamped).
    converged : numpy.ndarray, shape (R,)
        Whether each run converged.
    n_iter : numpy.ndarray, shape (R,)
        Iterations done.
    phi : numpy.ndarray, shape (R,)
        The TAP value ``Φ(m)`` (≈ ln Z, or the clamped ``b·x + ln Z(x)``).
    clamped : bool
        Whether the visible layer was clamped.
    damping, tol : float
        The settings used.
    """

    m: list
    converged: np.ndarray
    n_iter: np.ndarray
    phi: np.ndarray
    clamped: bool
    damping: float
    tol: float

    @property
    def s(self) -> list[np.ndarray]:
        """Variances ``s⁽ˡ⁾ = m⁽ˡ⁾ − (m⁽ˡ⁾)²`` (0 for a clamped visible layer).

        Returns
        -------
        list of numpy.ndarray
            One array per layer.
        """
        out = [m - m * m for m in self.m]
        if self.clamped:
            out[0] = np.zeros_like(self.m[0])
        return out

    def __len__(self):
        return int(self.converged.shape[0])


def _check_dbm(dbm):
    """``dbm`` is a :class:`DBM` with usable (finite, right-shaped) parameters."""
    if not isinstance(dbm, DBM):
        raise TypeError(f"dbm must be an rbmviz.dbm.DBM, got {type(dbm).__name__}")
    dbm._check_params()


def _check_solution(sol, name: str, dbm: DBM, clamped: bool) -> None:
    """``sol`` is a :class:`DBMSolution` of ``dbm``'s layer sizes, free or clamped as asked."""
    if not isinstance(sol, DBMSolution):
        raise TypeError(f"{name} must be a DBMSolution (from rbmviz.dbm.tap_solve), got "
                        f"{type(sol).__name__}")
    if sol.clamped != clamped:
        raise ValueError(f"{name} must hold {'clamped' if clamped else 'free'} solutions "
                         f"(tap_solve(..., clamped={clamped})), got "
                         f"{'clamped' if sol.clamped else 'free'} ones")
    sizes = [np.shape(m)[1] if np.ndim(m) == 2 else None for m in sol.m]
    if sizes != list(dbm.layers) or len({np.shape(m)[0] for m in sol.m}) != 1:
        raise ValueError(f"{name} does not match the model: its magnetisations have shapes "
                         f"{[np.shape(m) for m in sol.m]}, the DBM has layers {list(dbm.layers)}")


def _check_magnetisations(m, name: str, dbm: DBM) -> list[np.ndarray]:
    """Per-layer magnetisations: one (R, N_l) array per layer, finite, in [0, 1]."""
    m = _check_sequence(m, name, len(dbm.layers), "one (R, N_l) array per layer")
    R = np.shape(m[0])[0] if np.ndim(m[0]) == 2 else None
    if R is None:
        raise ValueError(f"{name}[0] must be 2-D (R, {dbm.layers[0]}), got shape {np.shape(m[0])}")
    return [check_array(x, f"{name}[{l}]", shape=(R, n), low=0.0, high=1.0)
            for l, (x, n) in enumerate(zip(m, dbm.layers))]


def tap_log_z(dbm: DBM, m: Sequence[np.ndarray], *, clamped: bool = False) -> np.ndarray:
    """``Φ(m)`` per row (module docstring; Tramel et al. 2018, App. E).

    The TAP2 estimate of ``ln Z`` at free fixed points, of ``b·x + ln Σ_h e^{−E(x,h)}`` at
    clamped ones (``m[0] = x``, ``s⁽⁰⁾ = 0``).

    Parameters
    ----------
    dbm : DBM
        The model.
    m : sequence of numpy.ndarray
        Per-layer magnetisations, shape (R, N_l).
    clamped : bool
        Whether the visible layer is clamped.

    Returns
    -------
    numpy.ndarray, shape (R,)
        ``Φ(m)``.

    Raises
    ------
    TypeError
        If ``dbm`` is not a :class:`DBM`, ``m`` not a list of arrays or ``clamped`` not a bool.
    ValueError
        If ``m`` does not have one (R, N_l) array per layer with values in [0, 1].
    """
    _check_dbm(dbm)
    m = _check_magnetisations(m, "m", dbm)
    clamped = check_bool(clamped, "clamped")
    return _tap_log_z(dbm, m, clamped)


def _tap_log_z(dbm, m, clamped):
    s = [x - x * x for x in m]
    if clamped:
        s[0] = np.zeros_like(m[0])
    out = 0.0
    for l, x in enumerate(m):
        if not (clamped and l == 0):
            out = out + _entropy(x).sum(axis=1)
        out = out + x @ dbm.biases[l]
    for l, w in enumerate(dbm.W):
        out = out + np.einsum("ri,ri->r", m[l] @ w, m[l + 1])
        out = out + 0.5 * np.einsum("ri,ri->r", s[l] @ (w * w), s[l + 1])
    return out


def tap_solve(dbm: DBM, init: ArrayLike, *, clamped: bool = False, damping: float = _O.damping,
              tol: float = _O.tol, max_iter: int = _O.max_iter,
              init_hidden: Sequence[ArrayLike] | None = None) -> DBMSolution:
    """TAP2 fixed points of a DBM from ``R`` data-anchored initialisations (App. E, Alg. 1
    on the block matrix of eq. 125).

    Parameters
    ----------
    dbm : DBM
        The model.
    init : array (R, N_0)
        Binary data rows.  Free runs start at ``m⁽⁰⁾ = x`` (``s⁽⁰⁾ = 0``, eqs. 37–38);
        clamped runs keep ``m⁽⁰⁾ = x`` throughout.  Hidden layers start at the bottom-up pass
        ``m⁽ˡ⁾ = σ(θ⁽ˡ⁾ + W⁽ˡ⁾ᵀ m⁽ˡ⁻¹⁾)`` unless ``init_hidden`` (list of (R, N_l)) is given.
    clamped : bool
        Keep the visible layer at the data.
    damping : float in (0, 1]
        Weight of the new iterate (1 = undamped).
    tol : float > 0
        Convergence: mean squared change of all non-clamped magnetisations between
        iterations below ``tol``.
    max_iter : int ≥ 1
        Largest number of iterations.
    init_hidden : list of array, optional
        Initial hidden magnetisations, one (R, N_l) array per hidden layer.

    Returns
    -------
    DBMSolution
        The fixed points.

    Raises
    ------
    TypeError
        If ``dbm`` is not a :class:`DBM`, ``clamped`` is not a bool or an argument is not
        numeric.
    ValueError
        If the model's parameters are not finite, ``init`` is not binary data of ``N_0``
        columns, ``init_hidden`` does not have one array of shape (R, N_l) with values in
        [0, 1] per hidden layer, or a setting is out of range.
    """
    _check_dbm(dbm)
    X = check_data(init, "init", n_visible=dbm.layers[0])
    clamped = check_bool(clamped, "clamped")
    damping = check_option("damping", damping)
    tol = check_option("tol", tol)
    max_iter = check_option("max_iter", max_iter)
    L = dbm.n_hidden_layers
    W = dbm.W
    if init_hidden is not None:
        init_hidden = _check_sequence(init_hidden, "init_hidden", L, "one (R, N_l) array per "
                                      "hidden layer")
        m = [X.copy()] + [check_array(h, f"init_hidden[{l}]", shape=(X.shape[0], dbm.layers[l + 1]),
                                      low=0.0, high=1.0).copy()
                          for l, h in enumerate(init_hidden)]
    else:
        m = [X.copy()]
        for l in range(1, L + 1):
            m.append(_sigmoid(dbm.biases[l] + m[l - 1] @ W[l - 1]))
    W2 = [w * w for w in W]
    R = X.shape[0]
    n_free = dbm.n_units - (dbm.layers[0] if clamped else 0)
    free_layers = list(range(0 if not clamped else 1, L + 1))
    order = [l for l in free_layers if l % 2 == 1] + [l for l in free_layers if l % 2 == 0]
    converged = np.zeros(R, dtype=bool)
    n_iter = np.full(R, max_iter, dtype=np.int64)
    out = [x.copy() for x in m]
    live = np.arange(R)
    keep = 1.0 - damping
    for it in range(1, max_iter + 1):
        diff = np.zeros(live.size)
        for l in order:
            s_of = (lambda k: np.zeros_like(m[0]) if (clamped and k == 0) else m[k] - m[k] * m[k])
            field = np.broadcast_to(dbm.biases[l], m[l].shape).copy()
            ons = np.zeros_like(m[l])
            if l >= 1:
                field += m[l - 1] @ W[l - 1]
                ons += s_of(l - 1) @ W2[l - 1]
            if l < L:
                field += m[l + 1] @ W[l].T
                ons += s_of(l + 1) @ W2[l].T
            new = damping * _sigmoid(field - (m[l] - 0.5) * ons) + keep * m[l]
            diff += np.square(new - m[l]).sum(axis=1)
            m[l] = new
        done = diff < tol * n_free
        if done.any() or it == max_iter:
            stop = done | (it == max_iter)
            rows = live[stop]
            for l in range(L + 1):
                out[l][rows] = m[l][stop]
            converged[live[done]] = True
            n_iter[live[done]] = it
            live = live[~stop]
            if live.size == 0:
                break
            m = [x[~stop] for x in m]
    phi = _tap_log_z(dbm, out, clamped)
    return DBMSolution(m=out, converged=converged, n_iter=n_iter, phi=phi, clamped=bool(clamped),
                       damping=damping, tol=tol)


def log_likelihood(dbm: DBM, X: ArrayLike, *, init: ArrayLike | None = None,
                   n_init: int | None = None, seed: int = 0, damping: float = _DL.damping,
                   tol: float = _DL.tol, max_iter: int = _DL.max_iter, per_unit: bool = False,
                   details: bool = False) -> float | dict:
    """TAP log-likelihood of the rows of ``X`` (Tramel et al. 2018, App. E).

    ``mean_x Φ(clamped on x) − mean_k Φ(free solution k)``, free solutions from data-anchored
    starts, converged runs averaged uniformly (non-converged ones left out; NaN if none
    converged).

    Parameters
    ----------
    dbm : DBM
        The model.
    X : array_like, shape (R, N_0)
        Binary data rows.
    init : array_like, shape (R, N_0), optional
        Starts of the free runs; default ``X``.
    n_init : int, optional
        Draw this many rows of ``init`` with ``seed``.
    seed : int
        Seed of that draw.
    damping, tol, max_iter
        TAP iteration settings (:func:`tap_solve`); defaults and bounds
        :class:`rbmviz.tap.options.DeepLikelihoodOptions` (tol 1e-10, 2,000 iterations:
        tighter than training's).
    per_unit : bool
        Divide by ``Σ_l N_l`` (Fig. 11).
    details : bool
        Return a dict instead of a float.

    Returns
    -------
    float or dict
        The value; with ``details=True`` a dict with ``value``, ``clamped`` (per-row Φ),
        ``log_z`` (mean free Φ), ``n_free``, ``n_not_converged``.

    Raises
    ------
    TypeError
        If ``dbm`` is not a :class:`DBM`, ``per_unit``/``details`` not bools or a setting not
        numeric.
    ValueError
        For data that is not binary with ``N_0`` columns or a setting out of range.
    """
    _check_dbm(dbm)
    X = check_data(X, "X", n_visible=dbm.layers[0])
    I = X if init is None else check_data(init, "init", n_visible=dbm.layers[0])
    seed = check_seed(seed)
    per_unit = check_bool(per_unit, "per_unit")
    details = check_bool(details, "details")
    damping = check_option("damping", damping, options=_DL)
    tol = check_option("tol", tol, options=_DL)
    max_iter = check_option("max_iter", max_iter, options=_DL)
    if n_init is not None:
        n_init = check_int(n_init, "n_init", low=1)
        if n_init < I.shape[0]:
            I = I[np.sort(np.random.default_rng(seed).choice(I.shape[0], n_init, replace=False))]
    free = tap_solve(dbm, I, damping=damping, tol=tol, max_iter=max_iter)
    cl = tap_solve(dbm, X, clamped=True, damping=damping, tol=tol, max_iter=max_iter)
    log_z = float(np.mean(free.phi[free.converged])) if free.converged.any() else np.nan
    value = float(np.mean(cl.phi) - log_z)
    if per_unit:
        value /= dbm.n_units
    if not details:
        return value
    return {"value": value, "clamped": cl.phi, "log_z": log_z, "n_free": int(free.converged.sum()),
            "n_not_converged": int((~free.converged).sum() + (~cl.converged).sum())}


def gradient(dbm: DBM, X: ArrayLike, free: DBMSolution, clamped: DBMSolution,
             rows: ArrayLike | None = None) -> dict:
    """Ascent directions of the TAP log-likelihood (eqs. 126–129, binary units).

    Parameters
    ----------
    dbm : DBM
        The model.
    X : array (M, N_0)
        The mini-batch.
    free : DBMSolution
        Free solutions (``clamped=False``).
    clamped : DBMSolution
        Clamped solutions of the rows of ``X``.
    rows : int array, optional
        The free solutions to average over (default all).

    Returns
    -------
    dict
        ``"W"`` (list, one per coupling matrix) and ``"biases"`` (list, one per layer).

    Raises
    ------
    TypeError
        If ``free``/``clamped`` are not :class:`DBMSolution` s or ``rows`` does not hold
        integers.
    ValueError
        If ``free``/``clamped`` are not free/clamped solutions of this model's layer sizes,
        ``clamped`` does not have one row per row of ``X``, a row index is out of range, or
        there is no free solution to average over.
    """
    _check_dbm(dbm)
    X = check_data(X, "X", n_visible=dbm.layers[0])
    _check_solution(free, "free", dbm, clamped=False)
    _check_solution(clamped, "clamped", dbm, clamped=True)
    if len(clamped) != X.shape[0]:
        raise ValueError(f"clamped has {len(clamped)} rows for {X.shape[0]} rows of X")
    sel = slice(None) if rows is None else _check_rows(rows, "rows", len(free))
    mf = [x[sel] for x in free.m]
    sf = [x[sel] for x in free.s]
    K, M = mf[0].shape[0], X.shape[0]
    if K == 0:
        raise ValueError("no free solutions to average over")
    mc = [X] + [x for x in clamped.m[1:]]
    sc = [np.zeros_like(X)] + [x - x * x for x in clamped.m[1:]]
    gW, gb = [], []
    for l, w in enumerate(dbm.W):
        pos = mc[l].T @ mc[l + 1] / M + w * (sc[l].T @ sc[l + 1]) / M
        neg = mf[l].T @ mf[l + 1] / K + w * (sf[l].T @ sf[l + 1]) / K
        gW.append(pos - neg)
    for l in range(len(dbm.layers)):
        gb.append(mc[l].mean(axis=0) - mf[l].mean(axis=0))
    return {"W": gW, "biases": gb}


def _check_rows(rows, name: str, n: int) -> np.ndarray:
    """Row indices into ``n`` rows: a 1-D integer array with entries in [−n, n)."""
    if isinstance(rows, numbers.Integral) and not isinstance(rows, bool):
        rows = [rows]
    arr = np.asarray(rows)
    if arr.size == 0 and arr.dtype.kind not in "iub":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(f"{name} must be a 1-D array of integer row indices, got dtype {arr.dtype} "
                        f"of shape {arr.shape}")
    if arr.size and (arr.min() < -n or arr.max() >= n):
        bad = int(arr[(arr < -n) | (arr >= n)][0])
        raise ValueError(f"{name} holds index {bad}, out of range for {n} solutions (0 to {n - 1})")
    return arr.astype(np.int64)


# ---------------------------------------------------------------------------- training
class DBMTrainer:
    """Joint TAP training of a DBM (Alg. 4, joint phase): per mini-batch of ``M`` rows, the
    free solutions from the first ``K`` rows and the clamped solutions of all rows, then
    ``W ← W + v``, ``v ← η v + γ(ΔW − εW)`` (heavy-ball momentum, ℓ2 strength ε) and
    ``θ ← θ + γΔθ``.  Every default and bound is :data:`DBMKnobs`'.

    Parameters
    ----------
    learning_rate, momentum, weight_decay : float
        γ, η and ε; checked as every training rule checks them (:data:`DBMKnobs`, the
        declarations of :class:`rbmviz.algorithms.tap.TAP`'s knobs: γ > 0, η in [0, 1),
        ε ≥ 0).
    batch_size : int
        Rows per update ``M``.
    n_solutions : int or None
        K (default: the batch size).
    damping, tol, max_iter
        TAP iteration settings (:func:`tap_solve`; the TAP rule's knobs, whose defaults are
        :class:`rbmviz.tap.options.TAPSolverOptions`' and whose ``max_iter`` is at most
        :data:`rbmviz.bounds.TAP_ITER_MAX`).
    seed : int
        Shuffles of the training rows.

    Raises
    ------
    TypeError, ValueError
        Naming the setting, for a value of the wrong type or out of range, or
        ``n_solutions`` above ``batch_size``.
    """

    def __init__(self, *, learning_rate: float = DBMKnobs.learning_rate,
                 momentum: float = DBMKnobs.momentum, weight_decay: float = DBMKnobs.weight_decay,
                 batch_size: int = DBMKnobs.batch_size,
                 n_solutions: int | None = DBMKnobs.n_solutions, damping: float = DBMKnobs.damping,
                 tol: float = DBMKnobs.tol, max_iter: int = DBMKnobs.max_iter,
                 seed: int = DBMKnobs.seed) -> None:
        self.learning_rate = _knob("learning_rate", learning_rate)
        self.momentum = _knob("momentum", momentum)
        self.weight_decay = _knob("weight_decay", weight_decay)
        self.batch_size = _knob("batch_size", batch_size)
        self.n_solutions = _knob("n_solutions", n_solutions)
        if self.n_solutions is not None and self.n_solutions > self.batch_size:
            raise ValueError(f"n_solutions (K={self.n_solutions}) must be at most the batch size "
                             f"(batch_size={self.batch_size}): the free runs start from rows of "
                             f"the mini-batch")
        self.damping = _knob("damping", damping)
        self.tol = _knob("tol", tol)
        self.max_iter = _knob("max_iter", max_iter)
        self.rng = np.random.default_rng(_knob("seed", seed))
        self.velocity = None
        self.epochs = 0
        self.updates = 0
        self.not_converged = 0

    def _check_velocity(self, dbm):
        """The momentum state belongs to a model of ``dbm``'s layer sizes."""
        if self.velocity is not None and [np.shape(v) for v in self.velocity] != \
                [np.shape(w) for w in dbm.W]:
            raise ValueError(f"this DBMTrainer's momentum state has shapes "
                             f"{[np.shape(v) for v in self.velocity]} but dbm has layers "
                             f"{list(dbm.layers)}; use a new DBMTrainer for another model")

    def update(self, dbm: DBM, batch: ArrayLike) -> None:
        """One joint TAP update of ``dbm`` (in place) from the rows of ``batch``.

        Parameters
        ----------
        dbm : DBM
            The model trained.
        batch : array_like, shape (M, N_0)
            The mini-batch, 0/1.

        Raises
        ------
        TypeError
            If ``dbm`` is not a :class:`DBM`.
        ValueError
            If its parameters are not finite, ``batch`` is not binary with ``N_0`` columns or
            has fewer rows than ``n_solutions``.
        """
        _check_dbm(dbm)
        self._check_velocity(dbm)
        batch = check_data(batch, "batch", n_visible=dbm.layers[0])
        K = self.n_solutions or batch.shape[0]
        if K > batch.shape[0]:
            raise ValueError(f"n_solutions (K={K}) is larger than the batch ({batch.shape[0]} rows)")
        kw = dict(damping=self.damping, tol=self.tol, max_iter=self.max_iter)
        free = tap_solve(dbm, batch[:K], **kw)
        cl = tap_solve(dbm, batch, clamped=True, **kw)
        self.not_converged += int((~free.converged).sum() + (~cl.converged).sum())
        rows = np.flatnonzero(free.converged) if free.converged.any() else None
        g = gradient(dbm, batch, free, cl, rows)
        if self.velocity is None:
            self.velocity = [np.zeros_like(w) for w in dbm.W]
        lr = self.learning_rate
        for w, v, gw in zip(dbm.W, self.velocity, g["W"]):
            v *= self.momentum
            v += lr * (gw - self.weight_decay * w)
            w += v
        for t, gt in zip(dbm.biases, g["biases"]):
            t += lr * gt
        self.updates += 1

    def epoch(self, dbm: DBM, X: ArrayLike) -> None:
        """One pass over the rows of ``X`` in shuffled mini-batches.

        Parameters
        ----------
        dbm : DBM
            The model trained (in place).
        X : array_like, shape (R, N_0)
            Binary data rows.

        Raises
        ------
        TypeError
            If ``dbm`` is not a :class:`DBM`.
        ValueError
            If its parameters are not finite, ``X`` is not binary with ``N_0`` columns or has
            fewer rows than ``batch_size``.
        rbmviz.errors.RunDiverged
            If the weights become non-finite.
        """
        _check_dbm(dbm)
        self._check_velocity(dbm)
        X = check_data(X, "X", n_visible=dbm.layers[0])
        if self.batch_size > X.shape[0]:
            raise ValueError(f"batch_size={self.batch_size} is larger than the data "
                             f"({X.shape[0]} rows of X)")
        perm = self.rng.permutation(X.shape[0])
        M = self.batch_size
        for lo in range(0, X.shape[0] - M + 1, M):
            self.update(dbm, X[perm[lo:lo + M]])
        self.epochs += 1
        if not all(np.isfinite(w).all() for w in dbm.W):
            raise RunDiverged("DBM weights became non-finite", epoch=self.epochs,
                              last_good_epoch=self.epochs - 1, quantity="W", value=float("nan"))


def pretrain(dbm: DBM, X: ArrayLike, *, epochs: int = DBMKnobs.epochs,
             learning_rate: float = DBMKnobs.learning_rate, batch_size: int = DBMKnobs.batch_size,
             momentum: float = DBMKnobs.momentum, weight_decay: float = DBMKnobs.weight_decay,
             damping: float = DBMKnobs.damping, tol: float = DBMKnobs.tol,
             max_iter: int = DBMKnobs.max_iter, seed: int = DBMKnobs.seed, callback: Callable[[int, int], Any] | None = None) -> DBM:
    """Greedy layer-wise pretraining (Tramel et al. 2018, Alg. 4, first phase), in place.

    Layer 1 is a TAP RBM (Alg. 2, :class:`rbmviz.algorithms.tap.TAP`, heavy-ball momentum)
    trained on ``X``; layer ``l ≥ 2`` a TAP RBM trained on binary samples of layer ``l − 1``
    drawn bottom-up given the data (``H⁽ˡ⁻¹⁾ ~ P(h⁽ˡ⁻¹⁾ | H⁽ˡ⁻²⁾)``).  Each RBM gives ``W⁽ˡ⁾``
    and the hidden biases ``θ⁽ˡ⁾`` (layer 1 also the visible biases).  Every default and bound
    is :data:`DBMKnobs`' (those of :class:`DBMTrainer`).

    Parameters
    ----------
    dbm : DBM
        The model (changed in place).
    X : array_like, shape (R, N_0)
        Binary data rows, the first layer's training set.
    epochs : int
        Epochs per layer.
    learning_rate, batch_size, momentum, weight_decay
        Settings of the TAP RBMs.
    damping, tol, max_iter
        TAP iteration settings (as :class:`DBMTrainer`'s).
    seed : int
        Seed of the shuffles and samples.
    callback : callable, optional
        ``callback(layer, epoch)`` is called after every epoch.

    Returns
    -------
    DBM
        ``dbm``.

    Raises
    ------
    TypeError, ValueError
        Naming the argument, before any work: ``dbm`` not a :class:`DBM` with finite
        parameters, ``X`` not binary with ``N_0`` columns or fewer rows than ``batch_size``,
        a setting of the TAP RBMs out of
        the TAP rule's bounds (e.g. ``momentum`` in [0, 1)), ``epochs`` beyond
        :data:`rbmviz.bounds.EPOCHS_MAX`, ``callback`` not callable.
    """
    _check_dbm(dbm)
    X = check_data(X, "X", n_visible=dbm.layers[0])
    epochs = _knob("epochs", epochs)
    batch_size = _knob("batch_size", batch_size)
    if batch_size > X.shape[0]:
        raise ValueError(f"batch_size={batch_size} is larger than the data ({X.shape[0]} rows of X)")
    learning_rate = _knob("learning_rate", learning_rate)
    momentum = _knob("momentum", momentum)
    weight_decay = _knob("weight_decay", weight_decay)
    damping = _knob("damping", damping)
    tol = _knob("tol", tol)
    max_iter = _knob("max_iter", max_iter)
    seed = _knob("seed", seed)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable (layer, epoch) or None, got {type(callback).__name__}")
    rng = np.random.default_rng(check_seed(seed))
    data = X
    for l in range(dbm.n_hidden_layers):
        rbm = RBM(dbm.layers[l], dbm.layers[l + 1])
        rbm.set_params(W=dbm.W[l], b=dbm.biases[l], c=dbm.biases[l + 1])
        M = batch_size
        alg = TAP(learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay,
                  damping=damping, tol=tol, max_iter=max_iter, momentum_form="heavy_ball")
        alg.setup(rbm, data, M)
        for e in range(epochs):
            perm = rng.permutation(data.shape[0])
            for lo in range(0, data.shape[0] - M + 1, M):
                alg.update(rbm, data[perm[lo:lo + M]])
            if callback is not None:
                callback(l + 1, e + 1)
        dbm.W[l] = np.array(rbm.W, dtype=np.float64)
        dbm.biases[l + 1] = np.array(rbm.c, dtype=np.float64)
        if l == 0:
            dbm.biases[0] = np.array(rbm.b, dtype=np.float64)
        p = _sigmoid(dbm.biases[l + 1] + data @ dbm.W[l])
        data = (rng.random(p.shape) < p).astype(np.float64)
    return dbm
