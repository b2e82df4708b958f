"""Unit priors of TAP machines: log partition function and first two moments of the tilted
distribution, scalar and row-parallel (Numba).

Convention (the TAP theory page of the documentation B.2, the TAP theory page of the documentation (unit priors)): for a unit with NORMALISED prior
``P(x; θ)`` and the TAP fields ``B`` (linear) and ``A`` (quadratic),

    Z(B, A; θ) = ∫ P(x; θ) e^{B x − A x²/2} dx,   f_a = ∂_B ln Z,   f_c = ∂²_B ln Z,

i.e. ``f_a`` and ``f_c`` are the mean and the variance of the tilted distribution
``Q(x) ∝ P(x; θ) e^{B x − A x²/2}``.  The prior's linear natural parameter is ``U`` (the RBM
bias of the unit); ``V`` (precision), ``rho`` (weight of the continuous part) and the support
``[lo, hi]`` are the other prior parameters.  Kinds:

* ``KIND_BERNOULLI`` — ``P(x) = e^{Ux}/(1 + e^U)`` on {0, 1} (Tramel et al. 2018, eqs.
  110–114): ``ln Z = softplus(U + B − A/2) − softplus(U)``, ``f_a = σ(U + B − A/2)``,
  ``f_c = f_a (1 − f_a)`` (evaluated as ``σ(t)σ(−t)``, accurate for large ``|t|``).
  (Eqs. 113/116 label these as ``∂_U ln Z_B``; they are ``∂_B ln Z`` — the errata of the theory pages.)
* ``KIND_TG`` — truncated Gaussian ``P(x) = e^{−Vx²/2 + Ux} 1[lo ≤ x ≤ hi] / G(V, U)``
  (eqs. 71–75) with ``G(a, b) = ∫_lo^hi e^{−a x²/2 + b x} dx``:
  ``ln Z = ln G(A + V, B + U) − ln G(V, U)``, ``f_a``/``f_c`` the mean/variance of the
  truncated Gaussian with ``a = A + V``, ``b = B + U`` (eqs. 78, 81).
* ``KIND_TGB`` — truncated Gauss–Bernoulli in the parameterisation of eq. (94) (adopted
  throughout; eq. (93) uses a different one — the errata of the theory pages):
  ``P(x) = [(1 − ρ) δ(x) + ρ e^{−Vx²/2 + Ux} 1[lo ≤ x ≤ hi]] / Z_TGB``,
  ``Z_TGB = (1 − ρ) + ρ G(V, U)``; with ``π_Q = σ(ln G_Q + logit ρ)`` (the tilted
  probability of ``x ≠ 0``, eq. 95 at ``(B, A)``): ``f_a = π_Q f_a^TG`` (eq. 97),
  ``f_c = π_Q f_c^TG + π_Q(1 − π_Q)(f_a^TG)²`` (eq. 98 with the square that the printed
  second line drops — the errata of the theory pages), all in log form (no ``G`` is ever exponentiated).

Numerics of the truncated Gaussian (the TAP theory page of the documentation (unit priors)).  The closed forms of
eqs. (75)–(81) with erf/erfi cancel catastrophically when the centre ``b/a`` lies far
outside the interval (eq. 91), overflow for large fields, and are undefined at ``a = 0``;
the printed eq. (78) also has the wrong sign for ``a < 0`` (the errata of the theory pages) and the printed
eq. (82) is ``−ln Z_TG`` (the errata of the theory pages).  They are used here, in the
standard-normal form of :func:`_tg_closed`, only where nothing cancels: ``a > 0``, an interval
at least two standard deviations wide and the centre ``b/a`` at most half a standard deviation
outside it — where the TAP fields of the CBCL and real-MNIST models lie; there they agree with
50-digit values to ~1e-15 and are ~4× cheaper.  Everywhere else every quantity
comes from Gauss–Legendre quadrature on the effective support, valid for any sign of ``a``
(including 0) and any ``b``:

1. split ``[lo, hi]`` at ``b/a`` when it lies inside (``φ(x) = −a x²/2 + b x`` is then
   monotone on each piece);
2. on each piece start at the end ``x*`` with the larger ``φ`` and keep only the points
   within ``d = 2T/(s + √(s² + 2aT))`` of it, ``s = |φ'(x*)|``, ``T = 40`` (where ``φ`` has
   dropped by ``T``; the discarded mass is below ``e^{−40}`` relative), or the whole piece
   if ``φ`` never drops by ``T``;
3. 32 Gauss–Legendre nodes per piece (the reference recipe uses 64 and notes that 32 gives the
   same accuracy; measured here: 32 vs 64 vs 128 nodes differ by rounding only); ``φ(x) − φ(x*) = −s u − a u²/2`` (``u`` the distance
   from ``x*``) is evaluated without cancellation, the weights are exponentiated relative to
   their maximum (``ln G`` is kept, never ``G``), and the variance is a two-pass sum of
   squared deviations.

Checked in tests/test_units.py against adaptive quadrature and the 50-digit values of
the TAP theory page (errors ~1e-13 in ``ln G`` and ~1e-15 in the moments).
"""
import math

import numpy as np
from numba import njit, prange

from .exact import _sigmoid, _softplus

KIND_BERNOULLI = 0
KIND_TG = 1
KIND_TGB = 2

#: Gauss–Legendre nodes/weights on [−1, 1] (32 points) and the log-mass cut of step 2.
GL_NODES, GL_WEIGHTS = np.polynomial.legendre.leggauss(32)
GL_CUT = 40.0

_NODES = np.ascontiguousarray(GL_NODES)
_WEIGHTS = np.ascontiguousarray(GL_WEIGHTS)


@njit(cache=True, inline="always")
def _logaddexp(x, y):
    if x == -math.inf:
        return y
    if y == -math.inf:
        return x
    if x > y:
        return x + math.log1p(math.exp(y - x))
    return y + math.log1p(math.exp(x - y))


@njit(cache=True)
def _piece(a, b, p0, p1, ref, out):
    """Gauss–Legendre sums of one monotone piece ``[p0, p1]`` of ``φ(x) = −a x²/2 + b x``.

    Writes into ``out``: ``[0]`` the log-mass offset ``φ(x*) + max_k Δφ_k`` (the log scale of
    the weights), ``[1]`` ``Σ e_k``, ``[2]`` ``Σ e_k y_k`` with ``y = x − ref``, and returns the
    nodes' ``y`` and weights in ``out[3:3+n]``/``out[3+n:3+2n]`` (``n`` nodes) for the two-pass variance."""
    f0 = p0 * (b - 0.5 * a * p0)
    f1 = p1 * (b - 0.5 * a * p1)
    if f1 >= f0:
        xs, sgn, fs = p1, -1.0, f1
    else:
        xs, sgn, fs = p0, 1.0, f0
    s = abs(b - a * xs)
    length = p1 - p0
    disc = s * s + 2.0 * a * GL_CUT
    if disc > 0.0:
        d = 2.0 * GL_CUT / (s + math.sqrt(disc))
        if d < length:
            length = d
    half = 0.5 * length
    n = _NODES.shape[0]
    mx = -math.inf
    for k in range(n):
        u = half * (1.0 + _NODES[k])
        dphi = -u * (s + 0.5 * a * u)
        out[3 + n + k] = dphi
        out[3 + k] = (xs - ref) + sgn * u
        if dphi > mx:
            mx = dphi
    s0 = 0.0
    s1 = 0.0
    for k in range(n):
        e = _WEIGHTS[k] * half * math.exp(out[3 + n + k] - mx)
        out[3 + n + k] = e
        s0 += e
        s1 += e * out[3 + k]
    out[0] = fs + mx
    out[1] = s0
    out[2] = s1


def _scratch():
    return np.empty(3 + 2 * _NODES.shape[0]), np.empty(3 + 2 * _NODES.shape[0])


_scratch = njit(cache=True)(_scratch)


@njit(cache=True)
def tg_log_g_moments(a, b, lo, hi):
    """``(ln G(a, b), mean, variance)`` of ``e^{−a x²/2 + b x}`` on ``[lo, hi]`` (finite,
    ``lo < hi``), for any real ``a`` (either sign, or 0) and ``b``: the Gauss–Legendre recipe
    of the TAP theory page (see the module docstring).  ``G`` is eq. (75)'s integral; the
    mean and variance are the corrected eqs. (78) and (81)."""
    w1, w2 = _scratch()
    return _tg_core(a, b, lo, hi, w1, w2)


#: the closed form of :func:`_tg_closed` is used where the interval is at least
#: ``CLOSED_MIN_WIDTH`` standard deviations wide and the centre ``b/a`` lies at most
#: ``CLOSED_MAX_OUT`` standard deviations outside it (then every term is O(1))
CLOSED_MIN_WIDTH = 2.0
CLOSED_MAX_OUT = 0.5
_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)


@njit(cache=True, inline="always")
def _tg_closed(a, b, lo, hi):
    """``(ok, ln G, mean, variance)`` of the truncated Gaussian from the normal CDF, where that
    is well conditioned (``ok``), else ``ok`` is False and the caller integrates.

    With ``a > 0``, ``μ = b/a``, ``σ = a^{−1/2}``, ``α = (lo − μ)/σ``, ``β = (hi − μ)/σ`` and
    ``D = Φ(β) − Φ(α)``: ``ln G = ln(σ√(2π)) + aμ²/2 + ln D``, mean ``μ + σ(φ(α) − φ(β))/D``,
    variance ``σ²[1 + (αφ(α) − βφ(β))/D − ((φ(α) − φ(β))/D)²]`` — eqs. (75), (78), (81) in
    their standard-normal form.  Used only for ``β − α ≥ 1`` (an interval at least one σ wide)
    with ``α ≤ 1`` and ``β ≥ −1`` (the centre within one σ of it): then ``D ≥ 0.13`` and
    every term is O(1), so nothing cancels (the TAP fields of the CBCL and real-MNIST models
    fall there: measured α ∈ [−4.4, −1], β ∈ [1.6, 3.7]); agreement with the quadrature is
    checked to ~1e-14 in tests/test_units.py.  About 4× cheaper than the quadrature of two
    pieces."""
    if not a > 0.0:
        return False, 0.0, 0.0, 0.0
    sa = math.sqrt(a)
    mu = b / a
    al = (lo - mu) * sa
    be = (hi - mu) * sa
    if be - al < CLOSED_MIN_WIDTH or al > CLOSED_MAX_OUT or be < -CLOSED_MAX_OUT:
        return False, 0.0, 0.0, 0.0
    d = 0.5 * (math.erfc(-be * _INV_SQRT2) - math.erfc(-al * _INV_SQRT2))
    pa = _INV_SQRT_2PI * math.exp(-0.5 * al * al)
    pb = _INV_SQRT_2PI * math.exp(-0.5 * be * be)
    lam = (pa - pb) / d
    sig = 1.0 / sa
    lg = _LN_SQRT_2PI - math.log(sa) + 0.5 * b * mu + math.log(d)
    m = mu + sig * lam
    v = sig * sig * (1.0 + (al * pa - be * pb) / d - lam * lam)
    return True, lg, m, v


@njit(cache=True)
def _tg_core(a, b, lo, hi, w1, w2):
    """:func:`tg_log_g_moments` with caller-provided scratch ``w1, w2`` (see :func:`_piece`):
    the closed form of :func:`_tg_closed` where it is well conditioned, else quadrature."""
    ok, lg, m, v = _tg_closed(a, b, lo, hi)
    if ok:
        return lg, m, v
    return _tg_quadrature(a, b, lo, hi, w1, w2)


@njit(cache=True)
def _tg_quadrature(a, b, lo, hi, w1, w2):
    """The Gauss–Legendre recipe of the module docstring (any ``a``, ``b``)."""
    n = _NODES.shape[0]
    split = False
    if a != 0.0:
        mu = b / a
        split = lo < mu < hi
    if not split:
        f0 = lo * (b - 0.5 * a * lo)
        f1 = hi * (b - 0.5 * a * hi)
        ref = hi if f1 >= f0 else lo
        _piece(a, b, lo, hi, ref, w1)
        lg = w1[0] + math.log(w1[1])
        m = w1[2] / w1[1]
        v = 0.0
        for k in range(n):
            dy = w1[3 + k] - m
            v += w1[3 + n + k] * dy * dy
        v /= w1[1]
        return lg, ref + m, v
    mu = b / a
    _piece(a, b, lo, mu, mu, w1)
    _piece(a, b, mu, hi, mu, w2)
    # combine the two pieces on the common log scale
    l1 = w1[0] + math.log(w1[1])
    l2 = w2[0] + math.log(w2[1])
    top = max(l1, l2)
    c1 = math.exp(w1[0] - top)
    c2 = math.exp(w2[0] - top)
    s0 = c1 * w1[1] + c2 * w2[1]
    m = (c1 * w1[2] + c2 * w2[2]) / s0
    v = 0.0
    for k in range(n):
        dy = w1[3 + k] - m
        v += c1 * w1[3 + n + k] * dy * dy
        dy = w2[3 + k] - m
        v += c2 * w2[3 + n + k] * dy * dy
    v /= s0
    return top + math.log(s0), mu + m, v


@njit(cache=True)
def log_normaliser_scalar(kind, U, V, rho, lo, hi):
    """Log-normaliser of the prior: ``softplus(U)`` (Bernoulli, eq. 110), ``ln G(V, U)``
    (truncated Gaussian, eq. 73 / corrected eq. 82) or ``ln((1 − ρ) + ρ G(V, U))``
    (Gauss–Bernoulli, eq. 94), computed in log form."""
    if kind == KIND_BERNOULLI:
        return _softplus(U)
    lg, _, _ = tg_log_g_moments(V, U, lo, hi)
    if kind == KIND_TG:
        return lg
    return _logaddexp(math.log1p(-rho), math.log(rho) + lg)


@njit(cache=True)
def moments_scalar(kind, U, V, rho, lo, hi, logz0, B, A):
    """``(ln Z(B, A; θ), f_a, f_c)`` of one unit (see the module docstring for the formulas);
    ``logz0`` is :func:`log_normaliser_scalar` of the same unit."""
    if kind == KIND_BERNOULLI:
        t = U + B - 0.5 * A
        fa = _sigmoid(t)
        return _softplus(t) - logz0, fa, fa * _sigmoid(-t)
    w1, w2 = _scratch()
    return _moments_core(kind, U, V, rho, lo, hi, logz0, B, A, w1, w2)


@njit(cache=True)
def _moments_core(kind, U, V, rho, lo, hi, logz0, B, A, w1, w2):
    if kind == KIND_BERNOULLI:
        t = U + B - 0.5 * A
        fa = _sigmoid(t)
        return _softplus(t) - logz0, fa, fa * _sigmoid(-t)
    lg, m, v = _tg_core(A + V, B + U, lo, hi, w1, w2)
    if kind == KIND_TG:
        return lg - logz0, m, v
    z = lg + (math.log(rho) - math.log1p(-rho))
    pq = _sigmoid(z)
    logz = _logaddexp(math.log1p(-rho), math.log(rho) + lg) - logz0
    return logz, pq * m, pq * v + pq * _sigmoid(-z) * m * m


@njit(cache=True)
def log_normaliser_vector(kind, U, V, rho, lo, hi, out):
    """:func:`log_normaliser_scalar` for every unit (arrays of shape (n,)), into ``out``."""
    for i in range(U.shape[0]):
        out[i] = log_normaliser_scalar(kind, U[i], V[i], rho[i], lo, hi)


@njit(parallel=True, cache=True)
def moments_rows(kind, U, V, rho, lo, hi, logz0, B, A, out_logz, out_fa, out_fc):
    """:func:`moments_scalar` for a batch, parallel over rows.

    ``U, V, rho, logz0``: (n,); ``B, A, out_*``: (R, n); ``lo, hi``: floats."""
    R, n = B.shape
    for r in prange(R):
        w1, w2 = _scratch()
        for i in range(n):
            lz, fa, fc = _moments_core(kind, U[i], V[i], rho[i], lo, hi, logz0[i], B[r, i], A[r, i],
                                       w1, w2)
            out_logz[r, i] = lz
            out_fa[r, i] = fa
            out_fc[r, i] = fc
