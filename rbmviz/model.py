"""The RBM's parameters, its energies and conditionals, and saving/loading.

Layout (the one convention of rbmviz; the three papers disagree with each other, see
the conventions of the documentation's theory pages):

* ``W`` — weights, shape ``(n_visible, n_hidden)``: row = visible unit, column = hidden unit;
* ``b`` — visible biases, shape ``(n_visible,)``;
* ``c`` — hidden biases, shape ``(n_hidden,)``.

Energy of the binary RBM, ``E(v, h) = −vᵀWh − bᵀv − cᵀh``; free energy
``F(v) = −bᵀv − Σ_j softplus(c_j + (vW)_j)`` so that ``p(v) = exp(−F(v)) / Z``.

Unit types (Tramel et al. 2018, App. C; :mod:`rbmviz.units`): each layer has a prior object,
``rbm.visible_prior`` / ``rbm.hidden_prior``, whose linear natural parameter is the layer's bias
(``b`` / ``c``) and which holds the extra parameters (``V``, ``rho``, the interval).  Only
Bernoulli layers have the energies, conditionals and samplers below; models with other
priors are handled by :mod:`rbmviz.tap`.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from . import _files
from . import bounds as _bounds
from . import units as _units
from ._numerics import sigmoid as _sigmoid, softplus as _softplus
from ._validation import (check_choice, check_data, check_float, check_int, check_seed,
                          check_unit_interval_data)

#: 1: W, b, c (Bernoulli units only); 2: adds the unit priors' parameters
#: (``<layer>_prior_<param>`` arrays).  Version-1 files load as Bernoulli/Bernoulli models.
FORMAT_VERSION = 2
_FORMAT_TAG = "rbmviz.RBM"
UNIT_TYPES = _units.PRIOR_NAMES
_DTYPES = {"float64": np.float64, "float32": np.float32}


def _as_rng(seed, name="seed"):
    """A Generator from ``seed``: None (fresh entropy), an integer in [0, 2**63), or a
    Generator (used as is); anything else is a ValueError/TypeError naming ``name``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None:
        seed = check_seed(seed, name)
    return np.random.default_rng(seed)


class RBM:
    """A restricted Boltzmann machine (binary units by default).

    Parameters
    ----------
    n_visible, n_hidden : int
        Layer sizes (>= 1; at most :data:`rbmviz.bounds.UNITS_MAX` units per layer and
        :data:`rbmviz.bounds.WEIGHTS_MAX` weights, ValueError otherwise).
    visible, hidden : str or rbmviz.units.Prior
        Unit types: ``"bernoulli"`` ({0, 1} units), ``"truncated_gaussian"`` or
        ``"truncated_gauss_bernoulli"`` (the TAP paper's priors, App. C; default parameters
        ``V = 1``, ``rho = 0.5``, interval ``[0, 1]``), or a prior instance from
        :mod:`rbmviz.units` with that layer's size (copied), e.g.
        ``units.TruncatedGaussian(784, V=2.0, interval=(0, 1))``.  Stored as
        ``rbm.visible_prior`` / ``rbm.hidden_prior``; ``rbm.visible`` / ``rbm.hidden`` are their
        names.  Energies, conditionals, samplers and exact enumeration need Bernoulli units
        (ValueError otherwise).
    seed : int or numpy.random.Generator, optional
        Seed of the weight initialisation.
    init : {"normal", "uniform", "zeros"}
        ``"normal"``: W_ij ~ N(0, scale²) (Upadhya & Sastry: scale = 0.01);
        ``"uniform"``: W_ij ~ U[−scale, scale] (Fischer & Igel: scale = 0.5);
        ``"zeros"``: W = 0.
    scale : float
        Standard deviation (normal) or half-width (uniform) of the weights.
    data : array (n_samples, n_visible), optional
        If given, the visible biases start at the data's base rate,
        ``b_i = logit(mean_i)`` with the mean clipped to [1e-3, 1 − 1e-3] (Hinton's practical
        guide; Upadhya & Sastry); otherwise ``b = 0``.  Hidden biases start at 0.  For
        non-Bernoulli visible units the data are only checked against the prior's support
        and ``b`` stays 0.
    dtype : {"float64", "float32"}
        float64 by default (exact computations); float32 for large-model training.

    Examples
    --------
    >>> from rbmviz import RBM
    >>> rbm = RBM(9, 4, seed=0)
    >>> rbm.W.shape, rbm.b.shape, rbm.c.shape
    ((9, 4), (9,), (4,))
    """

    def __init__(self, n_visible: int, n_hidden: int, *, visible: str | _units.Prior = "bernoulli",
                 hidden: str | _units.Prior = "bernoulli", seed: int | np.random.Generator | None = None,
                 init: str = "normal", scale: float = 0.01, data: ArrayLike | None = None,
                 dtype: str | np.dtype = "float64") -> None:
        self.n_visible = check_int(n_visible, "n_visible", low=1)
        self.n_hidden = check_int(n_hidden, "n_hidden", low=1)
        _bounds.check_model_size(self.n_visible, self.n_hidden)
        self.visible_prior = _units.as_prior(visible, self.n_visible, "visible unit type")
        self.hidden_prior = _units.as_prior(hidden, self.n_hidden, "hidden unit type")
        dtype = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
        check_choice(dtype, "dtype", tuple(_DTYPES))
        check_choice(init, "init", ("normal", "uniform", "zeros"))
        scale = check_float(scale, "scale", low=0.0)
        rng = _as_rng(seed)
        shape = (self.n_visible, self.n_hidden)
        if init == "normal":         # rng.normal(0.0, scale, size=shape), bit for bit, faster
            W = rng.standard_normal(size=shape)
            W *= scale
            W += 0.0                 # 0.0 + scale·z, as numpy's normal: no negative zeros
        elif init == "uniform":
            W = rng.uniform(-scale, scale, size=shape)
        else:
            W = np.zeros(shape)
        self.W = np.ascontiguousarray(W, dtype=_DTYPES[dtype])
        self.b = np.zeros(self.n_visible, dtype=_DTYPES[dtype])
        self.c = np.zeros(self.n_hidden, dtype=_DTYPES[dtype])
        if data is not None:
            if self.visible == "bernoulli":
                self.b[:] = base_rate_bias(check_data(data, "data", n_visible=self.n_visible))
            else:
                self.visible_prior.check_data(data, "data")

    # ------------------------------------------------------------------ basics
    @property
    def visible(self) -> str:
        """Name of the visible unit type (``rbm.visible_prior.name``)."""
        return self.visible_prior.name

    @property
    def hidden(self) -> str:
        """Name of the hidden unit type (``rbm.hidden_prior.name``)."""
        return self.hidden_prior.name

    @property
    def is_binary(self) -> bool:
        """True if both layers have Bernoulli units."""
        return self.visible == "bernoulli" and self.hidden == "bernoulli"

    def require_binary(self, what: str) -> None:
        """Raise unless both layers have Bernoulli units.

        Parameters
        ----------
        what : str
            What needs binary units, named in the message (e.g. ``"RBM.energy"``).

        Raises
        ------
        ValueError
            If the visible or the hidden units are not Bernoulli; the message names the layer and
            points to :mod:`rbmviz.tap`.
        """
        if self.is_binary:
            return
        bad = [f"{layer} units are {p.name!r}" for layer, p in
               (("visible", self.visible_prior), ("hidden", self.hidden_prior)) if p.name != "bernoulli"]
        raise ValueError(f"{what} needs Bernoulli (binary) units, but the {' and the '.join(bad)}; "
                         f"models with other unit priors are handled by rbmviz.tap")

    @property
    def dtype(self) -> np.dtype:
        """The float dtype of the parameters (float64 or float32).

        Returns
        -------
        numpy.dtype
            ``rbm.W.dtype``, shared by ``b`` and ``c``.
        """
        return self.W.dtype

    @property
    def params(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(W, b, c)`` — the arrays themselves (not copies)."""
        return self.W, self.b, self.c

    #: the names of :attr:`params`, as messages name them
    param_names: tuple[str, ...] = ("W", "b", "c")

    @property
    def layers(self) -> list[int]:
        """The layer sizes, visible first, as the run loop describes a model
        (:mod:`rbmviz.runs.models`, the fingerprint of :meth:`rbmviz.runs.Run.state`).

        Returns
        -------
        list of int
            ``[n_visible, n_hidden]``.
        """
        return [self.n_visible, self.n_hidden]

    @property
    def units(self) -> list[str]:
        """The unit type of each layer, visible first, as the run loop describes a model.

        Returns
        -------
        list of str
            ``[visible, hidden]``, the priors' names.
        """
        return [self.visible, self.hidden]

    def copy(self) -> "RBM":
        """A deep copy: new parameter arrays and new prior objects.

        Returns
        -------
        RBM
            A model equal to this one that shares no array with it.
        """
        new = object.__new__(RBM)
        new.__dict__.update(self.__dict__)
        new.W, new.b, new.c = self.W.copy(), self.b.copy(), self.c.copy()
        new.visible_prior, new.hidden_prior = self.visible_prior.copy(), self.hidden_prior.copy()
        return new

    def astype(self, dtype: str | np.dtype) -> "RBM":
        """A copy with parameters of another float dtype.

        Parameters
        ----------
        dtype : {"float64", "float32"} or numpy.dtype
            The new dtype of ``W``, ``b`` and ``c``.

        Returns
        -------
        RBM
            A copy of the model in ``dtype``.

        Raises
        ------
        ValueError
            If ``dtype`` is neither float64 nor float32.
        """
        new = self.copy()
        name = np.dtype(dtype).name
        check_choice(name, "dtype", tuple(_DTYPES))
        new.W, new.b, new.c = (np.ascontiguousarray(a, dtype=name) for a in self.params)
        return new

    def set_params(self, W: ArrayLike | None = None, b: ArrayLike | None = None,
                   c: ArrayLike | None = None) -> "RBM":
        """Replace parameters, shape-checked and converted to the model's dtype.

        Parameters
        ----------
        W : array_like, shape (n_visible, n_hidden), optional
            New weights; unchanged if None.
        b : array_like, shape (n_visible,), optional
            New visible biases; unchanged if None.
        c : array_like, shape (n_hidden,), optional
            New hidden biases; unchanged if None.

        Returns
        -------
        RBM
            The model itself (changed in place), for chaining.

        Raises
        ------
        ValueError
            If an array has the wrong shape or contains NaN or inf.
        """
        for name, val, shape in (("W", W, self.W.shape), ("b", b, self.b.shape),
                                 ("c", c, self.c.shape)):
            if val is None:
                continue
            arr = np.asarray(val, dtype=self.dtype)
            if arr.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} contains NaN or inf")
            setattr(self, name, np.ascontiguousarray(arr))
        return self

    def __repr__(self):
        types = "" if self.is_binary else f"visible={self.visible_prior!r}, hidden={self.hidden_prior!r}, "
        return (f"RBM(n_visible={self.n_visible}, n_hidden={self.n_hidden}, {types}"
                f"dtype={self.dtype.name}, |W|_F={np.linalg.norm(self.W):.4g})")

    def __eq__(self, other):
        return (isinstance(other, RBM) and self.visible_prior == other.visible_prior
                and self.hidden_prior == other.hidden_prior and self.dtype == other.dtype
                and all(np.array_equal(x, y) for x, y in zip(self.params, other.params)))

    # ------------------------------------------------------------------ energies
    def _check_v(self, V, name="V", binary=True):
        if not binary:                      # probabilities or states: every entry in [0, 1]
            return check_unit_interval_data(V, name, n_visible=self.n_visible)
        return check_data(V, name, n_visible=self.n_visible)

    def _check_h(self, H, name="H", binary=True):
        if not binary:
            return check_unit_interval_data(H, name, n_visible=self.n_hidden)
        return check_data(H, name, n_visible=self.n_hidden)

    def energy(self, V: ArrayLike, H: ArrayLike) -> np.ndarray:
        """Energy ``E(v, h) = −vᵀWh − bᵀv − cᵀh`` of paired rows.

        The energy of the binary RBM (Tramel et al. 2018, eq. 1, with binary units).

        Parameters
        ----------
        V : array_like, shape (n_samples, n_visible)
            Visible states, 0/1.
        H : array_like, shape (n_samples, n_hidden)
            Hidden states, 0/1, one row per row of ``V``.

        Returns
        -------
        numpy.ndarray, shape (n_samples,)
            The energies, float64.

        Raises
        ------
        ValueError
            If the model is not binary, the states are not 0/1 with the layers' widths, or ``V``
            and ``H`` have different numbers of rows.
        """
        self.require_binary("RBM.energy")
        V, H = self._check_v(V), self._check_h(H)
        if V.shape[0] != H.shape[0]:
            raise ValueError(f"V and H must have the same number of rows, got {V.shape[0]} and {H.shape[0]}")
        W, b, c = (a.astype(np.float64) for a in self.params)
        return -np.einsum("ni,ij,nj->n", V, W, H) - V @ b - H @ c

    def free_energy(self, V: ArrayLike) -> np.ndarray:
        """Free energy ``F(v) = −bᵀv − Σ_j softplus(c_j + (vW)_j)``, so that ``p(v) = exp(−F(v)) / Z``.

        Parameters
        ----------
        V : array_like, shape (n_samples, n_visible)
            Visible states, 0/1.

        Returns
        -------
        numpy.ndarray, shape (n_samples,)
            The free energies, float64.

        Raises
        ------
        ValueError
            If the model is not binary or ``V`` is not 0/1 data of width ``n_visible``.
        """
        return self._free_energy(V, visible=True)

    def hidden_free_energy(self, H: ArrayLike) -> np.ndarray:
        """Free energy of the hidden layer, ``F(h) = −cᵀh − Σ_i softplus(b_i + (Wh)_i)``.

        The visible layer is summed out, so that ``p(h) = exp(−F(h)) / Z``.

        Parameters
        ----------
        H : array_like, shape (n_samples, n_hidden)
            Hidden states, 0/1.

        Returns
        -------
        numpy.ndarray
            ``F(h)`` of every row of ``H`` (float64), as :meth:`free_energy` for the visible
            layer.

        Raises
        ------
        ValueError
            As :meth:`free_energy` does, for ``H`` of width ``n_hidden``.
        """
        return self._free_energy(H, visible=False)

    def _free_energy(self, X, *, visible):
        """``F`` of the rows ``X`` of one layer (float64): its own bias term and the softplus
        of the other layer's fields, summed out."""
        self.require_binary("RBM.free_energy" if visible else "RBM.hidden_free_energy")
        W, b, c = (a.astype(np.float64) for a in self.params)
        if visible:
            X = self._check_v(X)
            return -(X @ b) - _softplus(X @ W + c).sum(axis=1)
        X = self._check_h(X)
        return -(X @ c) - _softplus(X @ W.T + b).sum(axis=1)

    # ------------------------------------------------------------------ conditionals
    def hidden_probabilities(self, V: ArrayLike) -> np.ndarray:
        """Conditional probabilities ``p(h_j = 1 | v) = σ(c_j + (vW)_j)``.

        Parameters
        ----------
        V : array_like, shape (n_samples, n_visible)
            Visible states; may hold probabilities in [0, 1] (mean-field inputs) as well as 0/1.

        Returns
        -------
        numpy.ndarray, shape (n_samples, n_hidden)
            The probabilities, float64.

        Raises
        ------
        ValueError
            If the model is not binary or ``V`` is not data in [0, 1] of width ``n_visible``.
        """
        self.require_binary("RBM.hidden_probabilities")
        V = self._check_v(V, binary=False)
        return _sigmoid(V @ self.W.astype(np.float64) + self.c)

    def visible_probabilities(self, H: ArrayLike) -> np.ndarray:
        """Conditional probabilities ``p(v_i = 1 | h) = σ(b_i + (W h)_i)``.

        Parameters
        ----------
        H : array_like, shape (n_samples, n_hidden)
            Hidden states; may hold probabilities in [0, 1] as well as 0/1.

        Returns
        -------
        numpy.ndarray
            ``p(v = 1 | h)`` of every row, shape (n_samples, n_visible), float64.

        Raises
        ------
        ValueError
            As :meth:`hidden_probabilities` does, for ``H`` of width ``n_hidden``.
        """
        self.require_binary("RBM.visible_probabilities")
        H = self._check_h(H, binary=False)
        return _sigmoid(H @ self.W.T.astype(np.float64) + self.b)

    def sample_hidden(self, V: ArrayLike,
                      seed: int | np.random.Generator | None = None) -> np.ndarray:
        """One draw of ``h ~ p(h | v)`` per row.

        Parameters
        ----------
        V : array_like, shape (n_samples, n_visible)
            Visible states (or probabilities in [0, 1]).
        seed : int or numpy.random.Generator, optional
            Random stream; fresh entropy if None.

        Returns
        -------
        numpy.ndarray, shape (n_samples, n_hidden)
            Hidden states as 0/1 floats.
        """
        P = self.hidden_probabilities(V)
        return (_as_rng(seed).random(P.shape) < P).astype(np.float64)

    def sample_visible(self, H: ArrayLike,
                       seed: int | np.random.Generator | None = None) -> np.ndarray:
        """One draw of ``v ~ p(v | h)`` per row.

        Parameters
        ----------
        H : array_like, shape (n_samples, n_hidden)
            Hidden states (or probabilities in [0, 1]).
        seed
            As in :meth:`sample_hidden`.

        Returns
        -------
        numpy.ndarray
            Visible states as 0/1 floats, shape (n_samples, n_visible).
        """
        P = self.visible_probabilities(H)
        return (_as_rng(seed).random(P.shape) < P).astype(np.float64)

    def gibbs(self, V: ArrayLike, k: int = 1, *, seed: int = 0, counter: int = 0,
              return_probabilities: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Run ``k`` block-Gibbs steps v → h → v from every row of ``V``.

        A parallel Numba kernel with a counter-based random stream: the same ``seed`` and
        ``counter`` give bit-identical chains for any thread count.

        Parameters
        ----------
        V : array_like, shape (n_samples, n_visible)
            Start states of the chains, 0/1.
        k : int
            Number of Gibbs steps (>= 1).
        seed : int
            Seed of the random stream.
        counter : int
            Position in the random stream; step ``t`` uses ``counter + 2 t`` and ``counter + 2 t + 1``.
        return_probabilities : bool
            Also return ``p(v = 1 | h)`` of the last step.

        Returns
        -------
        V : numpy.ndarray, shape (n_samples, n_visible)
            The sampled visible states, in the model's dtype.
        PV : numpy.ndarray, shape (n_samples, n_visible)
            Their probabilities; only if ``return_probabilities``.
        """
        from .kernels.gibbs import sample_layer_
        self.require_binary("RBM.gibbs")
        k = check_int(k, "k", low=1)
        seed = check_seed(seed)
        V = self._check_v(V).astype(self.dtype)
        n = V.shape[0]
        H = np.empty((n, self.n_hidden), dtype=self.dtype)
        PH = np.empty_like(H)
        PV = np.empty_like(V)
        for t in range(k):
            sample_layer_(V @ self.W, self.c, PH, H, seed, counter + 2 * t)
            sample_layer_(H @ self.W.T, self.b, PV, V, seed, counter + 2 * t + 1)
        return (V, PV) if return_probabilities else V

    # ------------------------------------------------------------------ persistence
    def _prior_arrays(self) -> dict:
        """The priors' parameters as ``<layer>_prior_<param>`` float64 arrays (format v2)."""
        out = {}
        for layer, prior in (("visible", self.visible_prior), ("hidden", self.hidden_prior)):
            for k, v in prior.to_dict().items():
                if k not in ("name", "n"):
                    out[f"{layer}_prior_{k}"] = np.asarray(v, dtype=np.float64)
        return out

    def _write_npz(self, fh) -> None:
        """The model's ``.npz`` archive (format :data:`FORMAT_VERSION`) into the open binary
        file ``fh``; :meth:`save` gives it a temporary file that is renamed when complete."""
        np.savez(fh, format=np.array(_FORMAT_TAG), format_version=np.array(FORMAT_VERSION),
                 visible=np.array(self.visible), hidden=np.array(self.hidden),
                 W=self.W, b=self.b, c=self.c, **self._prior_arrays())

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Save to ``path`` (``.npz`` appended if missing) with a format version.

        Written atomically (:mod:`rbmviz._files`): to a temporary file in the same directory,
        unique to the process and call, then renamed, so a crash never leaves a half-written
        model and a temporary file left by a killed process never blocks the next save.

        Parameters
        ----------
        path : str or os.PathLike
            File name of the model.
        overwrite : bool
            Replace an existing file.

        Returns
        -------
        pathlib.Path
            The path written (with ``.npz``).

        Raises
        ------
        FileExistsError
            If the file exists and ``overwrite`` is False.
        IsADirectoryError
            If ``path`` is a directory.
        ValueError
            If ``path`` exists and is a FIFO, socket or device.
        TypeError
            If ``path`` is not a path.
        """
        path = _files._as_path(path, "path")
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        with _files.atomic_write(path, overwrite=overwrite, name="path",
                                 what="a file name for the model") as fh:
            self._write_npz(fh)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "RBM":
        """Load a model written by :meth:`save` (``allow_pickle=False``).

        Everything is checked before a model is built, so that a bad file fails here, with a
        message naming the file and the array, rather than later inside a Numba kernel.  Arrays
        stored big-endian (e.g. written on another machine) are converted to the native byte
        order, which keeps every value exactly (the kernels need native order).  Version-1 files
        (before unit priors) load as Bernoulli/Bernoulli models.  A path that is not a regular
        file (a FIFO, a device) is refused without being opened, and the arrays' declared
        shapes are checked (against each other and :func:`rbmviz.bounds.check_model_size`)
        before any array is read.

        Parameters
        ----------
        path : str or os.PathLike
            The ``.npz`` file; ``path`` without ``.npz`` also finds ``path.npz``, as :meth:`save`
            names it.

        Returns
        -------
        RBM
            The model, in the dtype it was saved in.

        Raises
        ------
        FileNotFoundError
            For a missing file.
        TypeError
            If ``path`` is not a path.
        ValueError
            For a path that is not a regular file, a corrupt or truncated file, declared shapes
            beyond the bounds, a file that is not an rbmviz model, a missing, unreadable or newer
            format version; unless ``W``, ``b``, ``c`` all have one float dtype (float64 or
            float32), consistent shapes (``W`` 2-D with at least one unit per layer, ``b`` of shape
            ``(n_visible,)``, ``c`` of shape ``(n_hidden,)``) and finite values; for unknown unit
            types or invalid prior parameters.
        """
        path = _files._as_path(path, "path")
        if not path.exists() and path.suffix != ".npz" and path.with_name(path.name + ".npz").exists():
            path = path.with_name(path.name + ".npz")
        if not path.exists():
            raise FileNotFoundError(f"no saved model at {path}")
        if path.is_dir():
            raise ValueError(f"{path} is a directory, not a saved model (.npz file)")
        arrays = _files.load_npz(path, "path", what="a model written by RBM.save (.npz)",
                                 check=lambda headers: _check_headers(path, headers))
        if "format" not in arrays or _text(arrays["format"]) != _FORMAT_TAG:
            raise ValueError(f"{path} is not an rbmviz RBM file (no '{_FORMAT_TAG}' format tag); "
                             f"it holds arrays {sorted(arrays)}")
        version = _format_version(path, arrays)
        missing = {"W", "b", "c", "visible", "hidden"} - set(arrays)
        if missing:
            raise ValueError(f"{path} is missing arrays {sorted(missing)}")
        W, b, c = (_param_array(path, arrays, key) for key in ("W", "b", "c"))
        if W.ndim != 2 or 0 in W.shape:
            raise ValueError(f"{path}: array 'W' must be 2-D (n_visible, n_hidden) with at least one "
                             f"unit per layer, got shape {W.shape}")
        for key, arr, n, layer in (("b", b, W.shape[0], "n_visible"), ("c", c, W.shape[1], "n_hidden")):
            if arr.shape != (n,):
                raise ValueError(f"{path}: inconsistent shapes: array {key!r} has shape {arr.shape} "
                                 f"but W{W.shape} needs ({n},) ({layer})")
        dtypes = {key: arr.dtype.name for key, arr in (("W", W), ("b", b), ("c", c))}
        if len(set(dtypes.values())) > 1:
            raise ValueError(f"{path}: arrays 'W', 'b', 'c' must share one float dtype, got {dtypes} "
                             f"(convert them all to float64 or float32)")
        priors = {}
        for layer, n in (("visible", W.shape[0]), ("hidden", W.shape[1])):
            name = _text(arrays[layer])
            if name not in UNIT_TYPES:
                raise ValueError(f"{path}: array {layer!r} names an unknown {layer} unit type {name!r}; "
                                 f"expected one of {list(UNIT_TYPES)}")
            prefix = f"{layer}_prior_"
            d = {k[len(prefix):]: arrays[k] for k in arrays if k.startswith(prefix)}
            if version == 1 and name != "bernoulli":
                raise ValueError(f"{path} is a version-1 file with {layer} units {name!r}; "
                                 f"version 1 stores Bernoulli units only")
            for key, arr in d.items():
                if arr.dtype.kind not in "fiu" or not np.all(np.isfinite(arr)):
                    raise ValueError(f"{path}: array '{prefix}{key}' must hold finite numbers, got "
                                     f"dtype {arr.dtype}" + ("" if arr.dtype.kind not in "fiu" else
                                                             " with NaN or inf"))
            try:
                priors[layer] = _units.from_dict({"name": name, "n": n, **d})
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path} has invalid {layer} prior parameters: {exc}") from exc
        rbm = cls(W.shape[0], W.shape[1], visible=priors["visible"], hidden=priors["hidden"],
                  init="zeros", dtype=W.dtype.name)
        rbm.W, rbm.b, rbm.c = (np.ascontiguousarray(a) for a in (W, b, c))
        return rbm


def _check_headers(path, headers) -> None:
    """The declared shapes of a model file, checked before any array is read: ``W`` 2-D with
    at least one unit per layer and within :func:`rbmviz.bounds.check_model_size`, ``b`` and
    ``c`` matching it, every other array at most :data:`rbmviz.bounds.WEIGHTS_MAX` values."""
    if "W" in headers:
        shape = headers["W"][0]
        if len(shape) != 2 or 0 in shape:
            raise ValueError(f"{path}: array 'W' must be 2-D (n_visible, n_hidden) with at least "
                             f"one unit per layer, got shape {shape}")
        try:
            _bounds.check_model_size(*shape, visible_name="n_visible", hidden_name="n_hidden")
        except ValueError as exc:
            raise ValueError(f"{path}: array 'W' of shape {shape} is too large: {exc}") from None
        for key, n, layer in (("b", shape[0], "n_visible"), ("c", shape[1], "n_hidden")):
            if key in headers and headers[key][0] != (n,):
                raise ValueError(f"{path}: inconsistent shapes: array {key!r} has shape "
                                 f"{headers[key][0]} but W{shape} needs ({n},) ({layer})")
    for key, (shape, _) in headers.items():
        size = int(np.prod(shape, dtype=object))
        if key != "W" and size > _bounds.WEIGHTS_MAX:
            raise ValueError(f"{path}: array {key!r} declares shape {shape} ({size:,} values), "
                             f"more than a model file holds (at most "
                             f"{_bounds.WEIGHTS_MAX:,}, rbmviz.bounds.WEIGHTS_MAX)")


def _text(arr) -> str:
    """A 0-d string array as ``str`` (anything else gives a string that matches nothing)."""
    return str(arr) if isinstance(arr, np.ndarray) and arr.ndim == 0 and arr.dtype.kind == "U" else repr(arr)


def _format_version(path, arrays) -> int:
    """The file's format version, checked to be an integer this rbmviz reads."""
    raw = arrays.get("format_version")
    if raw is None:
        raise ValueError(f"{path} has no 'format_version' array; expected an integer from 1 to "
                         f"{FORMAT_VERSION}")
    if raw.ndim != 0 or raw.dtype.kind not in "iu":
        raise ValueError(f"{path}: array 'format_version' must be a single integer, got "
                         f"{raw.dtype} of shape {raw.shape}")
    version = int(raw)
    if version > FORMAT_VERSION:
        raise ValueError(f"{path} was saved with model format version {version}, newer than this "
                         f"rbmviz understands ({FORMAT_VERSION}); upgrade rbmviz to load it")
    if version < 1:
        raise ValueError(f"{path} has an invalid format version {version}")
    return version


def _param_array(path, arrays, key) -> np.ndarray:
    """Parameter array ``key``: float64/float32, native byte order, all finite."""
    arr = arrays[key]
    if arr.dtype.name not in _DTYPES:
        raise ValueError(f"{path}: array {key!r} has dtype {arr.dtype} ({arr.dtype.name}); model "
                         f"parameters must be float64 or float32")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))    # exact: same values, native order
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0] if arr.ndim else ()
        raise ValueError(f"{path}: array {key!r} contains NaN or inf (first at index "
                         f"{tuple(int(i) for i in bad)}); the model cannot be used")
    return arr


def base_rate_bias(X: ArrayLike, eps: float = 1e-3) -> np.ndarray:
    """Visible biases at the data's base rate: ``logit`` of the clipped column means of ``X``.

    The visible-bias initialisation of Hinton (2010, §8) and Upadhya & Sastry (2017, Sec. 4.1).

    Parameters
    ----------
    X : array_like, shape (n_samples, n_visible)
        Training data.
    eps : float
        The means are clipped to ``[eps, 1 − eps]``.

    Returns
    -------
    numpy.ndarray, shape (n_visible,)
        ``log(p) − log(1 − p)`` of the clipped means, float64.
    """
    p = np.clip(np.asarray(X, dtype=np.float64).mean(axis=0), eps, 1 - eps)
    return np.log(p) - np.log1p(-p)
