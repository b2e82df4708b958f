"""Unit priors for TAP machines (Tramel et al. 2018, Appendix B.3 and C; the TAP theory page of the documentation (unit priors)).

Every unit type is a NORMALISED prior ``P(x; θ)`` whose linear natural parameter ``U`` is the
RBM's bias of that unit (``rbm.b`` for visible units, ``rbm.c`` for hidden units; it is passed
to every method rather than stored, so the prior object holds only the *extra* parameters).
The TAP quantities of a unit with fields ``B`` (linear) and ``A`` (quadratic) are
(the TAP theory page of the documentation)

    Z(B, A; θ) = ∫ P(x; θ) e^{B x − A x²/2} dx,   f_a = ∂_B ln Z,   f_c = ∂²_B ln Z,

i.e. the log-normaliser, mean and variance of the tilted distribution
``Q(x) ∝ P(x; θ) e^{B x − A x²/2}``; ``∂_A ln Z = −⟨x²⟩_Q / 2``.

Types (``make(name, n, **kw)``):

* :class:`Bernoulli` — ``P(x) = e^{Ux} / (1 + e^U)``, ``x ∈ {0, 1}`` (eqs. 110–118).
* :class:`TruncatedGaussian` — ``P(x) = e^{−Vx²/2 + Ux} / G(V, U)`` on ``[lo, hi]`` (eqs.
  71–90), ``G(a, b) = ∫_lo^hi e^{−a x²/2 + b x} dx``.
* :class:`TruncatedGaussBernoulli` — ``P(x) = [(1 − ρ) δ(x) + ρ e^{−Vx²/2 + Ux} 1[lo ≤ x ≤ hi]]
  / ((1 − ρ) + ρ G(V, U))`` (eq. 94; a density with respect to ``δ_0`` + Lebesgue measure;
  requires ``lo ≤ 0 ≤ hi``) (eqs. 93–109).

Corrections of the printed formulas (the errata noted on the TAP theory page):

* eq. (78), ``a = A + V < 0``: the printed mean has the wrong sign (#5); eq. (82) prints
  ``−ln Z_TG`` up to a constant (#6).  Neither closed form is used: all truncated-Gaussian
  quantities come from a Gauss–Legendre recipe (:func:`tg_log_g_moments`; stable for every
  sign of ``a``, ``a = 0``, and centres far outside the interval, eq. 91), in log form —
  ``ln G`` is kept, never ``G``;
* eq. (94) is used throughout for the Gauss–Bernoulli prior (eqs. 93 and 104–106 use another
  parameterisation, #8, #17); eq. (98)'s second line gains its missing square (#9);
  ``∂_ρ ln P = (1[x ≠ 0] − π_0)/(ρ(1 − ρ))`` replaces eqs. (104)–(106), (108) (#10, #17);
* eqs. (113)/(116) label ``∂_B ln Z`` as ``∂_U ln Z_B``; ``∂_U ln Z(B, A) = f_a − σ(U)`` (#11).

The methods here are numpy (vectorised, independent of the Numba kernels of
:mod:`rbmviz.kernels.priors`, which implement the same formulas for the TAP iteration;
:meth:`Prior.kernel_args` packs the arguments for them).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._numerics import sigmoid as _sigmoid, softplus as _softplus
from ._validation import check_choice, check_data as _check_array, check_int
from .kernels import priors as _k

__all__ = ["Prior", "Bernoulli", "TruncatedGaussian", "TruncatedGaussBernoulli", "make",
           "from_dict", "PRIOR_NAMES", "tg_log_g_moments"]

_CHUNK = 4096  # elements per block of the numpy Gauss–Legendre evaluation


# ---------------------------------------------------------------------------- numerics
def _tg_block(a, b, lo, hi):
    """Gauss–Legendre recipe of :func:`tg_log_g_moments` on 1-D arrays ``a, b`` (same length)."""
    T = _k.GL_CUT
    t = _k.GL_NODES
    w = _k.GL_WEIGHTS
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu = np.where(a != 0.0, b / np.where(a != 0.0, a, 1.0), np.nan)
    split = (a != 0.0) & (mu > lo) & (mu < hi)
    mu_s = np.where(split, mu, hi)
    # piece 0: [lo, hi] (no split) or [lo, mu]; piece 1: [mu, hi] (split) or empty
    p0 = np.stack([np.full_like(a, lo), mu_s])
    p1 = np.stack([mu_s, np.full_like(a, hi)])
    active = np.stack([np.ones_like(split), split])
    f0 = p0 * (b - 0.5 * a * p0)
    f1 = p1 * (b - 0.5 * a * p1)
    top = f1 >= f0
    xs = np.where(top, p1, p0)             # the end with the larger φ
    sgn = np.where(top, -1.0, 1.0)         # direction into the piece
    fs = np.where(active, np.where(top, f1, f0), -np.inf)
    s = np.abs(b - a * xs)
    length = p1 - p0
    disc = s * s + 2.0 * a * T
    with np.errstate(divide="ignore", invalid="ignore"):
        d = 2.0 * T / (s + np.sqrt(np.maximum(disc, 0.0)))
    length = np.where((disc > 0.0) & (d < length), d, length)
    half = 0.5 * length
    u = half[..., None] * (1.0 + t)                              # (2, N, k)
    dphi = -u * (s[..., None] + 0.5 * a[None, :, None] * u)
    fmax = fs.max(axis=0)                                        # (N,)
    with np.errstate(invalid="ignore"):
        logw = (fs - fmax)[..., None] + dphi
    logw = np.where(active[..., None], logw, -np.inf)
    m = logw.max(axis=(0, 2))
    e = np.exp(logw - m[None, :, None]) * (w * half[..., None])  # (2, N, k)
    S = e.sum(axis=(0, 2))
    ref = np.where(split, mu_s, xs[0])
    y = (xs - ref)[..., None] + sgn[..., None] * u
    mean = (e * y).sum(axis=(0, 2)) / S
    var = (e * (y - mean[None, :, None]) ** 2).sum(axis=(0, 2)) / S
    return fmax + m + np.log(S), ref + mean, var


def tg_log_g_moments(a: ArrayLike, b: ArrayLike, lo: float,
                     hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ln G(a, b), mean, variance)`` of the truncated Gaussian ``∝ e^{−a x²/2 + b x}`` on ``[lo, hi]``.

    ``G`` is the integral of Tramel et al. (2018), eq. (75); mean and variance are eqs. (78)
    (sign-corrected for ``a < 0``) and (81), all evaluated by a Gauss–Legendre recipe that is
    stable for any real ``a`` (including ``a ≤ 0``) and ``b``.

    Parameters
    ----------
    a : array_like
        Precisions (any real value).
    b : array_like
        Linear coefficients, broadcast with ``a``.
    lo, hi : float
        The finite interval.

    Returns
    -------
    log_g : numpy.ndarray
        ``ln G(a, b)``.
    mean : numpy.ndarray
        Mean of the truncated Gaussian.
    variance : numpy.ndarray
        Its variance.
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    shape = a.shape
    a, b = a.ravel(), b.ravel()
    out = [np.empty(a.size) for _ in range(3)]
    for start in range(0, a.size, _CHUNK):
        sl = slice(start, start + _CHUNK)
        for o, r in zip(out, _tg_block(a[sl], b[sl], float(lo), float(hi))):
            o[sl] = r
    return tuple(o.reshape(shape) for o in out)


def _param_array(value, n, name, *, low=None, high=None):
    """A per-unit float64 array of shape (n,) from a scalar or an array (checked)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a real number or an array of shape ({n},), got {value!r}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real number or an array of shape ({n},), got {value!r}") from exc
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},) (one value per unit), "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    if low is not None and np.any(arr <= low):
        raise ValueError(f"{name} must be > {low} for every unit, got min {arr.min()!r}")
    if high is not None and np.any(arr >= high):
        raise ValueError(f"{name} must be < {high} for every unit, got max {arr.max()!r}")
    return np.ascontiguousarray(arr)


def _check_interval(interval, *, contains_zero=False):
    try:
        lo, hi = interval
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"interval must be a pair (lo, hi) of real numbers, got {interval!r}") from exc
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"interval bounds must be finite (the truncation keeps every TAP message "
                         f"normalisable), got {(lo, hi)}")
    if not lo < hi:
        raise ValueError(f"interval must have lo < hi, got {(lo, hi)}")
    if contains_zero and not lo <= 0.0 <= hi:
        raise ValueError(f"interval must contain 0 for the Gauss–Bernoulli prior (its point mass "
                         f"sits at x = 0, eq. 94), got {(lo, hi)}")
    return lo, hi


# ---------------------------------------------------------------------------- priors
class Prior:
    """Base class of the unit priors; ``n`` units with per-unit parameters.

    Parameters
    ----------
    n : int
        Number of units (>= 1).
    """

    name = ""
    kind = -1
    param_names: tuple = ()

    def __init__(self, n: int) -> None:
        self.n = check_int(n, "n", low=1)

    # -------------------------------------------------------------- argument checks
    def _U(self, U):
        return _param_array(U, self.n, "U (the bias of this layer)")

    def _fields(self, B, A):
        out = []
        for name, X in (("B", B), ("A", A)):
            try:
                arr = np.asarray(X, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{name} must be a numeric array, got {type(X).__name__}") from exc
            if arr.ndim == 0:
                arr = np.full(self.n, float(arr))
            if arr.ndim not in (1, 2) or arr.shape[-1] != self.n:
                raise ValueError(f"{name} must have shape ({self.n},) or (R, {self.n}), got {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} contains NaN or inf")
            out.append(arr)
        try:
            return np.broadcast_arrays(*out)
        except ValueError:
            raise ValueError(f"B and A must have the same shape, got {out[0].shape} and {out[1].shape}") from None

    def check_data(self, X: ArrayLike, name: str = "data") -> np.ndarray:
        """``X`` checked to be numeric, finite, with ``n`` columns and values in the prior's support.

        Parameters
        ----------
        X : array_like, shape (R, n)
            Rows of unit values.
        name : str
            The argument's name in messages.

        Returns
        -------
        numpy.ndarray, shape (R, n)
            ``X`` as float64.

        Raises
        ------
        TypeError
            If ``X`` is not numeric.
        ValueError
            Naming the first bad entry: wrong number of columns, NaN or inf, or a value outside
            the support.
        """
        arr = np.asarray(X) if X is not None else X
        if arr is not None and getattr(arr, "ndim", 0) == 1 and arr.shape[0] == self.n:
            arr = arr[None, :]
        arr = _check_array(arr, name, binary=False)
        if arr.shape[1] != self.n:
            raise ValueError(f"{name} has {arr.shape[1]} columns but the {self.name} layer has n={self.n} units")
        bad = self._outside_support(arr)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(f"{name} has {float(arr[r, c])!r} at row {r}, column {c}, outside the "
                             f"support of {self.name} units ({self._support_text()})")
        return arr

    # -------------------------------------------------------------- interface
    def _moments(self, U, B, A):
        """``(log_z, f_a, f_c, extra)`` on checked, broadcast arrays."""
        raise NotImplementedError

    def moments(self, U: ArrayLike, B: ArrayLike,
                A: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The TAP quantities ``(ln Z(B, A; θ), f_a, f_c)`` elementwise.

        ``Z(B, A; θ) = ∫ P(x; θ) e^{B x − A x²/2} dx``, ``f_a = ∂_B ln Z``, ``f_c = ∂²_B ln Z``
        (Tramel et al. 2018, eqs. 32 (sign corrected) and 35).

        Parameters
        ----------
        U : array_like, shape (n,)
            The layer's bias (the prior's linear natural parameter).
        B : array_like, shape (n,) or (R, n)
            Linear fields.
        A : array_like, shape of ``B``
            Quadratic fields.

        Returns
        -------
        log_z : numpy.ndarray
            ``ln Z``, shape of ``B``.
        f_a : numpy.ndarray
            Mean of the tilted distribution.
        f_c : numpy.ndarray
            Its variance.
        """
        U = self._U(U)
        B, A = self._fields(B, A)
        return self._moments(U, B, A)[:3]

    def log_z(self, U: ArrayLike, B: ArrayLike, A: ArrayLike) -> np.ndarray:
        """``ln Z(B, A; θ)`` elementwise: the first of :meth:`moments`.

        Parameters
        ----------
        U, B, A : array_like
            As in :meth:`moments`.

        Returns
        -------
        numpy.ndarray
            ``ln Z``, shape of ``B``.
        """
        return self.moments(U, B, A)[0]

    def log_normaliser(self, U: ArrayLike) -> np.ndarray:
        """The prior's own log-normaliser (the ``logz0`` of the kernels).

        Parameters
        ----------
        U : array_like, shape (n,)
            The layer's bias (the prior's linear natural parameter).

        Returns
        -------
        numpy.ndarray, shape (n,)
            ``ln`` of the normaliser of ``P(x; θ)``.
        """
        raise NotImplementedError

    def prior_moments(self, U: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """The moments ``(⟨x⟩_P, ⟨x²⟩_P)`` of the prior itself.

        That is ``f_a`` and ``f_c + f_a²`` at ``B = A = 0``.

        Parameters
        ----------
        U : array_like, shape (n,)
            The layer's bias (the prior's linear natural parameter).

        Returns
        -------
        mean : numpy.ndarray, shape (n,)
            ``⟨x⟩_P``.
        second_moment : numpy.ndarray, shape (n,)
            ``⟨x²⟩_P``.
        """
        U = self._U(U)
        zero = np.zeros(self.n)
        _, fa, fc, _ = self._moments(U, zero, zero)
        return fa, fc + fa * fa

    def log_prior(self, U: ArrayLike, X: ArrayLike) -> np.ndarray:
        """``ln P(x; θ)`` elementwise for rows ``X`` of the support.

        Parameters
        ----------
        U : array_like, shape (n,)
            The layer's bias (the prior's linear natural parameter).
        X : array_like, shape (R, n)
            Rows of values in the prior's support.

        Returns
        -------
        numpy.ndarray, shape (R, n)
            The log-densities.
        """
        raise NotImplementedError

    def grad_log_prior(self, U: ArrayLike, X: ArrayLike) -> dict:
        """Mean over the rows of ``X`` of ``∂_θ ln P(x; θ)``.

        Tramel et al. (2018), eqs. 83–84, 100–101, 117 and the corrected 106.

        Parameters
        ----------
        U, X : array_like
            As in :meth:`log_prior`.

        Returns
        -------
        dict
            ``{"U": (n,), <param>: (n,)}`` — one float64 array per parameter (``"V"``, ``"rho"``
            for truncated priors).
        """
        raise NotImplementedError

    def grad_log_z(self, U: ArrayLike, B: ArrayLike, A: ArrayLike) -> dict:
        """Mean over rows of ``∂_θ ln Z(B, A; θ)``.

        Tramel et al. (2018), eqs. 85–86, 102–103, 107, 118; ``∂_U ln Z = f_a − ⟨x⟩_P``.

        Parameters
        ----------
        U, B, A : array_like
            As in :meth:`moments`.

        Returns
        -------
        dict
            One float64 array per parameter, as :meth:`grad_log_prior` returns.
        """
        raise NotImplementedError

    def kernel_args(self, U: ArrayLike) -> tuple:
        """The arguments of the prior kernels.

        For :func:`rbmviz.kernels.priors.moments_rows` and
        :func:`~rbmviz.kernels.priors.moments_scalar`.

        Parameters
        ----------
        U : array_like, shape (n,)
            The layer's bias (the prior's linear natural parameter).

        Returns
        -------
        tuple
            ``(kind, U, V, rho, lo, hi, logz0)``: float64 arrays of shape (n,), floats
            ``lo``/``hi``; unused parameters are zeros.
        """
        U = self._U(U)
        V, rho = self._kernel_params()
        lo, hi = self._kernel_interval()
        logz0 = np.empty(self.n)
        _k.log_normaliser_vector(self.kind, U, V, rho, lo, hi, logz0)
        return self.kind, U, V, rho, lo, hi, logz0

    def _kernel_params(self):
        return np.zeros(self.n), np.zeros(self.n)

    def _kernel_interval(self):
        return 0.0, 1.0

    # -------------------------------------------------------------- bookkeeping
    def _kwargs(self):
        return {}

    def copy(self) -> "Prior":
        """A copy with its own parameter arrays.

        Returns
        -------
        Prior
            A prior equal to this one.
        """
        return type(self)(self.n, **{k: (v.copy() if isinstance(v, np.ndarray) else v)
                                     for k, v in self._kwargs().items()})

    def to_dict(self) -> dict:
        """Plain values for saving.

        Returns
        -------
        dict
            ``{"name", "n", <params as arrays>, "interval"}``.
        """
        d = {"name": self.name, "n": self.n}
        for k, v in self._kwargs().items():
            d[k] = np.asarray(v, dtype=np.float64).copy()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Prior":
        """Inverse of :meth:`to_dict`: the prior that ``d`` describes.

        Parameters
        ----------
        d : dict
            ``{"kind": ..., <its parameters>}``, as :meth:`to_dict` writes it.

        Returns
        -------
        Prior
            A new prior of that kind, equal to the one written.
        """
        return from_dict(d)

    def __eq__(self, other):
        if type(self) is not type(other) or self.n != other.n:
            return False
        a, b = self._kwargs(), other._kwargs()
        return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)

    def __repr__(self):
        parts = [f"n={self.n}"]
        for k, v in self._kwargs().items():
            if isinstance(v, np.ndarray):
                parts.append(f"{k}=[{v.min():.3g}..{v.max():.3g}]" if v.size > 1 else f"{k}={v[0]:.3g}")
            else:
                parts.append(f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


class Bernoulli(Prior):
    """Binary units ``x ∈ {0, 1}``, ``P(x) = e^{Ux}/(1 + e^U)`` (Tramel et al. 2018, eqs. 110–111).

    ``ln Z = softplus(U + B − A/2) − softplus(U)`` (eq. 112; ``x² = x`` gives the ``−A/2``
    shift), ``f_a = σ(U + B − A/2)``, ``f_c = f_a(1 − f_a)`` (eqs. 113–114, which mislabel the
    derivative as ``∂_U``); ``∂_U ln P(x) = x − σ(U)``, ``∂_U ln Z = f_a − σ(U)``
    (eqs. 117–118).

    Parameters
    ----------
    n : int
        Number of units.
    """

    name = "bernoulli"
    kind = _k.KIND_BERNOULLI
    param_names = ()

    def _outside_support(self, X):
        return (X != 0) & (X != 1)

    def _support_text(self):
        return "values 0 or 1; binarise the data first"

    def _moments(self, U, B, A):
        t = U + B - 0.5 * A
        fa = _sigmoid(t)
        return _softplus(t) - _softplus(U), fa, fa * _sigmoid(-t), None

    def log_normaliser(self, U: ArrayLike) -> np.ndarray:
        return _softplus(self._U(U))

    def log_prior(self, U: ArrayLike, X: ArrayLike) -> np.ndarray:
        U = self._U(U)
        X = self.check_data(X, "X")
        return X * U - _softplus(U)

    def grad_log_prior(self, U: ArrayLike, X: ArrayLike) -> dict:
        U = self._U(U)
        X = self.check_data(X, "X")
        return {"U": X.mean(axis=0) - _sigmoid(U)}

    def grad_log_z(self, U: ArrayLike, B: ArrayLike, A: ArrayLike) -> dict:
        U = self._U(U)
        B, A = self._fields(B, A)
        fa = self._moments(U, B, A)[1]
        return {"U": np.atleast_2d(fa).mean(axis=0) - _sigmoid(U)}


class TruncatedGaussian(Prior):
    """Truncated Gaussian units on ``[lo, hi]``: ``P(x) ∝ e^{−Vx²/2 + Ux}`` (eqs. 71–73).

    Parameters
    ----------
    n : int
        Number of units.
    V : float or array (n,)
        Precision ``1/σ²`` of the untruncated Gaussian (eq. 71).  Any finite value: on a
        bounded interval the prior is proper also for ``V ≤ 0``.
    interval : (lo, hi)
        Finite support, ``lo < hi``.

    Notes
    -----
    ``ln Z(B, A) = ln G(A + V, B + U) − ln G(V, U)`` (eqs. 74–75), ``f_a``/``f_c`` the mean and
    variance of the tilted truncated Gaussian (eq. 78 with the sign of the ``a < 0`` branch
    corrected, eq. 81), ``ln Z_TG = ln G(V, U)`` (the printed eq. 82 is its negative up to a
    constant).  Gradients: ``∂_U ln P = x − ⟨x⟩_P``, ``∂_V ln P = −(x² − ⟨x²⟩_P)/2``,
    ``∂_U ln Z = f_a − ⟨x⟩_P``, ``∂_V ln Z = −(f_c + f_a² − ⟨x²⟩_P)/2`` (eqs. 83–86).
    """

    name = "truncated_gaussian"
    kind = _k.KIND_TG
    param_names = ("V",)

    def __init__(self, n: int, V: ArrayLike = 1.0,
                 interval: tuple[float, float] = (0.0, 1.0)) -> None:
        super().__init__(n)
        self.V = V
        self.interval = _check_interval(interval, contains_zero=self._needs_zero)

    _needs_zero = False

    @property
    def V(self) -> np.ndarray:
        """Precision ``1/σ²`` of the untruncated Gaussian, one value per unit.

        Returns
        -------
        numpy.ndarray, shape (n,)
            ``V`` (set it with a scalar or an array of shape (n,)).
        """
        return self._V

    @V.setter
    def V(self, value):
        self._V = _param_array(value, self.n, "V")

    def _kwargs(self):
        return {"V": self.V, "interval": self.interval}

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["interval"] = np.array(self.interval, dtype=np.float64)
        return d

    def _outside_support(self, X):
        lo, hi = self.interval
        return (X < lo) | (X > hi)

    def _support_text(self):
        return f"interval [{self.interval[0]!r}, {self.interval[1]!r}]"

    def _kernel_params(self):
        return self.V.copy(), np.zeros(self.n)

    def _kernel_interval(self):
        return self.interval

    def _tg(self, a, b):
        return tg_log_g_moments(a, b, *self.interval)

    def _moments(self, U, B, A):
        lg, m, v = self._tg(A + self.V, B + U)
        return lg - self._tg(self.V, U)[0], m, v, None

    def log_normaliser(self, U: ArrayLike) -> np.ndarray:
        return self._tg(self.V, self._U(U))[0]

    def log_prior(self, U: ArrayLike, X: ArrayLike) -> np.ndarray:
        U = self._U(U)
        X = self.check_data(X, "X")
        return X * (U - 0.5 * self.V * X) - self.log_normaliser(U)

    def grad_log_prior(self, U: ArrayLike, X: ArrayLike) -> dict:
        U = self._U(U)
        X = self.check_data(X, "X")
        m1, m2 = self.prior_moments(U)
        return {"U": X.mean(axis=0) - m1, "V": -0.5 * ((X * X).mean(axis=0) - m2)}

    def grad_log_z(self, U: ArrayLike, B: ArrayLike, A: ArrayLike) -> dict:
        U = self._U(U)
        B, A = self._fields(B, A)
        _, fa, fc, _ = self._moments(U, B, A)
        fa, fc = np.atleast_2d(fa), np.atleast_2d(fc)
        m1, m2 = self.prior_moments(U)
        return {"U": fa.mean(axis=0) - m1, "V": -0.5 * ((fc + fa * fa).mean(axis=0) - m2)}


class TruncatedGaussBernoulli(TruncatedGaussian):
    """Truncated Gauss–Bernoulli (spike-and-slab) units, eq. (94):
    ``P(x) = [(1 − ρ) δ(x) + ρ e^{−Vx²/2 + Ux} 1[lo ≤ x ≤ hi]] / ((1 − ρ) + ρ G(V, U))``.

    Parameters
    ----------
    n : int
        Number of units.
    rho : float or array (n,)
        Weight of the continuous part, in (0, 1).  Under (94) ``ρ`` is NOT ``P[x ≠ 0]``; that is
        ``π_0 = σ(ln G(V, U) + logit ρ)`` (eq. 95).  (Eq. 93's parameterisation, where it is,
        is not used — see the errata.)
    V : float or array (n,)
        Precision of the continuous part, as for :class:`TruncatedGaussian`.
    interval : (lo, hi)
        Finite support of the continuous part, with ``lo ≤ 0 ≤ hi``.

    Notes
    -----
    ``f_a = π_Q f_a^TG`` (eq. 97), ``f_c = π_Q f_c^TG + π_Q(1 − π_Q)(f_a^TG)²`` (eq. 98, square
    restored — see the errata), ``π_Q = σ(ln G(A + V, B + U) + logit ρ)``; ``ln Z`` by log-add-exp.
    ``ln P`` is a density with respect to ``δ_0`` + Lebesgue measure:
    ``ln(1 − ρ) − ln Z_TGB`` at ``x = 0``.  Gradients as for :class:`TruncatedGaussian` in ``U``
    and ``V`` (eqs. 100–103) and ``∂_ρ ln P = (1[x ≠ 0] − π_0)/(ρ(1 − ρ))``,
    ``∂_ρ ln Z = (π_Q − π_0)/(ρ(1 − ρ))`` (eq. 107 plus the normaliser term; replaces the
    printed eqs. 104–106, 108 — see the errata).
    """

    name = "truncated_gauss_bernoulli"
    kind = _k.KIND_TGB
    param_names = ("V", "rho")
    _needs_zero = True

    def __init__(self, n: int, rho: ArrayLike = 0.5, V: ArrayLike = 1.0,
                 interval: tuple[float, float] = (0.0, 1.0)) -> None:
        super().__init__(n, V=V, interval=interval)
        self.rho = rho

    @property
    def rho(self) -> np.ndarray:
        """Weight ``ρ`` of the continuous part, one value per unit, in (0, 1).

        Returns
        -------
        numpy.ndarray, shape (n,)
            ``ρ`` (set it with a scalar or an array of shape (n,)).
        """
        return self._rho

    @rho.setter
    def rho(self, value):
        self._rho = _param_array(value, self.n, "rho", low=0.0, high=1.0)

    def _kwargs(self):
        return {"rho": self.rho, "V": self.V, "interval": self.interval}

    def _kernel_params(self):
        return self.V.copy(), self.rho.copy()

    def _logit_rho(self):
        return np.log(self.rho) - np.log1p(-self.rho)

    def _mix(self, lg):
        """``(ln((1 − ρ) + ρ e^{lg}), π = σ(lg + logit ρ), 1 − π)``."""
        z = lg + self._logit_rho()
        return np.logaddexp(np.log1p(-self.rho), np.log(self.rho) + lg), _sigmoid(z), _sigmoid(-z)

    def _moments(self, U, B, A):
        lg, m, v = self._tg(A + self.V, B + U)
        lq, pq, qq = self._mix(lg)
        fa = pq * m
        fc = pq * v + pq * qq * m * m
        return lq - self.log_normaliser(U), fa, fc, pq

    def log_normaliser(self, U: ArrayLike) -> np.ndarray:
        return self._mix(self._tg(self.V, self._U(U))[0])[0]

    def log_prior(self, U: ArrayLike, X: ArrayLike) -> np.ndarray:
        U = self._U(U)
        X = self.check_data(X, "X")
        slab = np.log(self.rho) + X * (U - 0.5 * self.V * X)
        return np.where(X != 0, slab, np.log1p(-self.rho)) - self.log_normaliser(U)

    def _pi0(self, U):
        return self._mix(self._tg(self.V, U)[0])[1]

    def grad_log_prior(self, U: ArrayLike, X: ArrayLike) -> dict:
        g = super().grad_log_prior(U, X)
        U, X = self._U(U), self.check_data(X, "X")
        r = self.rho
        g["rho"] = ((X != 0).mean(axis=0) - self._pi0(U)) / (r * (1.0 - r))
        return g

    def grad_log_z(self, U: ArrayLike, B: ArrayLike, A: ArrayLike) -> dict:
        g = super().grad_log_z(U, B, A)
        U = self._U(U)
        B, A = self._fields(B, A)
        pq = np.atleast_2d(self._moments(U, B, A)[3])
        r = self.rho
        g["rho"] = (pq.mean(axis=0) - self._pi0(U)) / (r * (1.0 - r))
        return g


_CLASSES = {c.name: c for c in (Bernoulli, TruncatedGaussian, TruncatedGaussBernoulli)}
PRIOR_NAMES = tuple(_CLASSES)


def make(name: str, n: int, **kw: Any) -> Prior:
    """A prior by name.

    Parameters
    ----------
    name : {"bernoulli", "truncated_gaussian", "truncated_gauss_bernoulli"}
        The unit type.
    n : int
        Number of units.
    **kw
        The class's keyword parameters (``V``, ``rho``, ``interval``).

    Returns
    -------
    Prior
        The new prior.

    Raises
    ------
    TypeError
        If parameters are given for Bernoulli units, or are unknown to the class.
    ValueError
        For an unknown ``name`` or invalid parameters.
    """
    check_choice(name, "unit type", PRIOR_NAMES)
    if name == "bernoulli" and kw:
        raise TypeError(f"Bernoulli units take no parameters, got {sorted(kw)}")
    return _CLASSES[name](n, **kw)


def from_dict(d: dict) -> Prior:
    """Inverse of :meth:`Prior.to_dict`.

    Parameters
    ----------
    d : dict
        ``{"name", "n", <params>, "interval"}``.

    Returns
    -------
    Prior
        The prior.
    """
    d = dict(d)
    name = str(d.pop("name"))
    n = int(d.pop("n"))
    if "interval" in d:
        d["interval"] = tuple(float(x) for x in np.asarray(d["interval"]).ravel())
    return make(name, n, **d)


def as_prior(spec, n, name="unit type") -> Prior:
    """A prior from a name or an existing instance (checked to have ``n`` units; copied)."""
    if isinstance(spec, Prior):
        if spec.n != n:
            raise ValueError(f"{name} prior has n={spec.n} units, expected {n}")
        return spec.copy()
    if isinstance(spec, str):
        check_choice(spec, name, PRIOR_NAMES)
        return make(spec, n)
    raise TypeError(f"{name} must be one of {list(PRIOR_NAMES)} or an rbmviz.units prior, got {spec!r}")

