"""The deep TAP machine's model: the :class:`DBM` (layer sizes, couplings ``W⁽ˡ⁾`` and
biases ``θ⁽ˡ⁾``, eq. 119), its checked ``.npz`` file format and exact enumeration for small
models.  The TAP inference is :mod:`rbmviz.dbm.inference`, the training
:mod:`rbmviz.dbm.training`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .. import _files
from .. import bounds as _bounds
from .._validation import check_array, check_bool, check_data, check_float, check_int, check_seed
from ..evaluate import all_states

__all__ = ["DBM", "EXACT_MAX_UNITS"]

#: exact enumeration (log Z, marginals) is offered up to this many units in total
EXACT_MAX_UNITS = 22
#: the format tag of the files :meth:`DBM.save` writes
_FORMAT_TAG = "rbmviz.DBM"
_FORMAT_VERSION = 1


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

    @property
    def n_visible(self) -> int:
        """Number of visible units ``N_0`` (the columns of the data).

        Returns
        -------
        int
            ``layers[0]``.
        """
        return self.layers[0]

    @property
    def dtype(self) -> np.dtype:
        """The parameters' dtype (float64: the TAP solutions and gradients are float64).

        Returns
        -------
        numpy.dtype
            ``float64``.
        """
        return np.dtype(np.float64)

    @property
    def params(self) -> tuple[np.ndarray, ...]:
        """The parameter arrays themselves (not copies), as the run loop reads them
        (:class:`rbmviz.runs.Run`'s divergence checks): the weights, then the biases.

        Returns
        -------
        tuple of numpy.ndarray
            ``(*W, *biases)``, named by :attr:`param_names`.
        """
        return (*self.W, *self.biases)

    @property
    def units(self) -> tuple[str, ...]:
        """The unit type of each layer, visible first, as the run loop describes a model
        (:mod:`rbmviz.runs.models`, the fingerprint of :meth:`rbmviz.runs.Run.state`).

        Returns
        -------
        tuple of str
            ``"bernoulli"`` for every layer (the units are binary).
        """
        return ("bernoulli",) * len(self.layers)

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of :attr:`params`, as messages name them.

        Returns
        -------
        tuple of str
            ``("W[0]", …, "biases[0]", …)``.
        """
        return (*(f"W[{l}]" for l in range(len(self.W))),
                *(f"biases[{l}]" for l in range(len(self.biases))))

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
