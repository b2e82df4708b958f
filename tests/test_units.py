"""Unit priors of TAP machines (rbmviz.units, rbmviz.kernels.priors) against numerical
integration, the 50-digit values of reference/tap-priors.md §5, finite differences, the
corrected closed forms, and each other (numpy methods vs Numba kernels)."""
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, special

from rbmviz import units
from rbmviz.kernels import priors as K

# --------------------------------------------------------------------------- helpers
# (B, A, U, V, G, mean, var) on [0, 1] — tap-priors.md §5, first table
TABLE = [
    (0.3, 0.5, 0.2, 1.0, 1.004026817930645, 0.480208040249030, 0.079018070213579),
    (0.3, -2.0, 0.2, 1.0, 1.584173909603884, 0.584654795816385, 0.081749993796335),
    (1.5, -1.3, -0.4, 0.5, 2.177605746653863, 0.623576346802028, 0.076336345953914),
    (-0.7, -3.0, 0.1, 1.0, 1.044214226334254, 0.535499902815841, 0.088218676240631),
]
# (B, A, U, V, ln G, mean, var) on [0, 1] — far-tail and near-a=0 rows
FAR = [
    (50, -0.5, 0, 1, 45.8478233736126, 0.979806216279589, 4.07622778406036e-4),
    (-200, 1, 0, 1, -5.29836736029958, 0.00499950012495377, 2.49925031233822e-5),
    (0.3, -0.999999, 0, 1, 0.153747012238411, 0.524962537867142, 0.0829596669114397),
    (-2, -1.001, 0, 1, -0.838467149022944, 0.343512214691201, 0.0689922681674624),
    (1000, -3, 0.2, 1, 994.290049128713, 0.999002191196869, 9.95626372700458e-7),
    (0.7, -1, 0, 1, 0.370333941130347, 0.557862435063035, 0.0813306955713340),
]


def quad_tg(a, b, lo, hi):
    """(ln G, mean, var) by adaptive quadrature, integrand scaled by its maximum."""
    xs = np.linspace(lo, hi, 2001)
    if a != 0 and lo < b / a < hi:
        xs = np.append(xs, b / a)
    top = np.max(xs * (b - 0.5 * a * xs))
    pts = [b / a] if a != 0 and lo < b / a < hi else None

    def mom(k):
        f = lambda x: x ** k * math.exp(x * (b - 0.5 * a * x) - top)  # noqa: E731
        with warnings.catch_warnings():   # "roundoff error detected" at the requested 1e-13
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            return integrate.quad(f, lo, hi, points=pts, epsabs=0, epsrel=1e-13, limit=200)[0]

    I0, I1, I2 = mom(0), mom(1), mom(2)
    m = I1 / I0
    return top + math.log(I0), m, I2 / I0 - m * m


def quad_prior(prior, U, B, A, i):
    """(ln Z, f_a, f_c) of unit i of `prior` by direct summation/integration of the definition
    Z = ∫ P(x) e^{Bx − Ax²/2} dx with the normalised prior."""
    u = U[i]
    if prior.name == "bernoulli":
        w = np.array([1.0, math.exp(u + B - 0.5 * A)]) / (1 + math.exp(u))
        Z = w.sum()
        m = w[1] / Z
        return math.log(Z), m, m - m * m
    v = prior.V[i]
    lo, hi = prior.interval
    g0 = quad_tg(v, u, lo, hi)[0]
    lg, m, var = quad_tg(v + A, u + B, lo, hi)
    if prior.name == "truncated_gaussian":
        return lg - g0, m, var
    r = prior.rho[i]
    zt = (1 - r) + r * math.exp(g0)
    zq = (1 - r) + r * math.exp(lg)
    pi = r * math.exp(lg) / zq
    m1 = pi * m
    m2 = pi * (var + m * m)
    return math.log(zq / zt), m1, m2 - m1 * m1


def make_priors(n, rng):
    return [
        units.Bernoulli(n),
        units.TruncatedGaussian(n, V=rng.uniform(-1.0, 3.0, n), interval=(-0.5, 1.5)),
        units.TruncatedGaussBernoulli(n, rho=rng.uniform(0.1, 0.9, n), V=rng.uniform(-1.0, 3.0, n),
                                      interval=(-0.5, 1.5)),
    ]


RNG_SEED = 7
N = 4


@pytest.fixture(params=["bernoulli", "truncated_gaussian", "truncated_gauss_bernoulli"])
def prior(request):
    rng = np.random.default_rng(RNG_SEED)
    return {p.name: p for p in make_priors(N, rng)}[request.param]


@pytest.fixture
def fields():
    rng = np.random.default_rng(11)
    U = rng.normal(0, 1.5, N)
    B = rng.normal(0, 2.0, (3, N))
    A = rng.normal(0, 1.0, (3, N))
    return U, B, A


# --------------------------------------------------------------------------- truncated Gaussian core
@pytest.mark.parametrize("row", TABLE)
def test_reference_table(row):
    B, A, U, V, G, mean, var = row
    for lg, m, v in (units.tg_log_g_moments(A + V, B + U, 0.0, 1.0),
                     K.tg_log_g_moments(A + V, B + U, 0.0, 1.0)):
        assert float(lg) == pytest.approx(math.log(G), abs=2e-15)
        assert float(m) == pytest.approx(mean, abs=2e-15)
        assert float(v) == pytest.approx(var, rel=2e-14)


@pytest.mark.parametrize("row", FAR)
def test_far_tail_rows(row):
    B, A, U, V, lgref, mean, var = row
    for lg, m, v in (units.tg_log_g_moments(A + V, B + U, 0.0, 1.0),
                     K.tg_log_g_moments(A + V, B + U, 0.0, 1.0)):
        assert float(lg) == pytest.approx(lgref, rel=2e-14, abs=1e-14)
        assert float(m) == pytest.approx(mean, rel=2e-14)
        assert float(v) == pytest.approx(var, rel=2e-12)


GRID = [(a, b) for a in (-30.0, -2.0, -1e-6, 0.0, 1e-9, 0.5, 3.0, 80.0)
        for b in (-40.0, -3.0, 0.0, 0.7, 5.0, 60.0)]


@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-1.0, 2.0)])
def test_truncated_gaussian_against_quadrature(lo, hi):
    a = np.array([g[0] for g in GRID])
    b = np.array([g[1] for g in GRID])
    lg, m, v = units.tg_log_g_moments(a, b, lo, hi)
    for k, (ak, bk) in enumerate(GRID):
        qlg, qm, qv = quad_tg(ak, bk, lo, hi)
        assert lg[k] == pytest.approx(qlg, abs=1e-11 * max(1, abs(qlg))), (ak, bk)
        assert m[k] == pytest.approx(qm, abs=1e-11), (ak, bk)
        assert v[k] == pytest.approx(qv, rel=1e-9), (ak, bk)


def test_closed_forms_with_corrected_signs_agree_and_printed_eq78_does_not():
    """In the well-conditioned region the erf/erfi closed forms (eqs. 75, 78, 81) with the
    corrected a<0 sign (errata #5) agree; the printed sign gives −1.58… for row 2."""
    lo, hi = 0.0, 1.0
    for B, A, U, V, G, mean, var in TABLE:
        a, b = A + V, B + U
        h = lambda x: math.sqrt(abs(a) / 2) * (x - b / a)  # noqa: E731
        ha, hw = h(lo), h(hi)
        if a > 0:
            d = special.erf(hw) - special.erf(ha)
            fa = b / a + math.sqrt(2 / (math.pi * a)) * (math.exp(-ha ** 2) - math.exp(-hw ** 2)) / d
            tail = (ha * math.exp(-ha ** 2) - hw * math.exp(-hw ** 2)) / d
        else:
            d = special.erfi(hw) - special.erfi(ha)
            fa = b / a + math.sqrt(2 / (math.pi * -a)) * (math.exp(hw ** 2) - math.exp(ha ** 2)) / d
            printed = b / a + math.sqrt(2 / (math.pi * -a)) * (math.exp(ha ** 2) - math.exp(hw ** 2)) / d
            assert abs(printed - mean) > 0.4   # −1.585, −3.374, 0.0645 (tap-priors.md §5)
            tail = (ha * math.exp(ha ** 2) - hw * math.exp(hw ** 2)) / d
        fc = 1 / a - (fa - b / a) ** 2 + 2 / (math.sqrt(math.pi) * a) * tail
        Gc = math.sqrt(math.pi / (2 * abs(a))) * math.exp(b * b / (2 * a)) * d
        lg, m, v = K.tg_log_g_moments(a, b, lo, hi)
        assert (Gc, fa, fc) == pytest.approx((math.exp(lg), m, v), rel=1e-12)
    # eq. (82) corrected: ln Z_TG = U²/2V − ½ ln V + ln d₊ + ½ ln(π/2)
    U, V = 0.3, 2.0
    h = lambda x: math.sqrt(V / 2) * (x - U / V)  # noqa: E731
    ref = U * U / (2 * V) - 0.5 * math.log(V) + math.log(special.erf(h(1)) - special.erf(h(0))) \
        + 0.5 * math.log(math.pi / 2)
    assert K.log_normaliser_scalar(K.KIND_TG, U, V, 0.0, 0.0, 1.0) == pytest.approx(ref, abs=1e-14)


def test_stability_extreme_fields():
    """Large |B|, very negative A, A + V ≈ 0, huge A: finite, in-support, monotone in B."""
    p = units.TruncatedGaussian(1, V=1.0, interval=(-1.0, 2.0))
    B = np.concatenate([-np.logspace(4, -3, 60), [0.0], np.logspace(-3, 4, 60)])
    for Aval in (-300.0, -1.0 - 1e-12, -1.0, -1.0 + 1e-12, 0.0, 1e4, 1e7):
        lz, fa, fc = p.moments([0.0], B[:, None], np.full((B.size, 1), Aval))
        assert np.all(np.isfinite(lz)) and np.all(np.isfinite(fa)) and np.all(np.isfinite(fc))
        assert np.all((fa >= -1.0) & (fa <= 2.0)) and np.all(fc >= 0)
        assert np.all(np.diff(fa[:, 0]) >= -1e-15)      # f_a = ∂_B ln Z is non-decreasing
        # convexity of ln Z in B: each secant slope lies between f_a at its two ends
        slope = np.diff(lz[:, 0]) / np.diff(B)
        tol = 1e-12 * np.abs(lz[1:, 0]).clip(1) / np.diff(B)
        assert np.all(slope >= fa[:-1, 0] - tol) and np.all(slope <= fa[1:, 0] + tol)
    # a = A + V = 0, b = 1e4: an exponential law on the boundary, mean hi − 1/b, variance 1/b²
    lz, fa, fc = p.moments([0.0], [[1e4]], [[-1.0]])
    assert fa[0, 0] == pytest.approx(2.0 - 1e-4, rel=1e-12) and fc[0, 0] == pytest.approx(1e-8, rel=1e-9)
    b = units.Bernoulli(1)
    lz, fa, fc = b.moments([0.0], [[800.0], [-700.0]], [[0.0], [0.0]])
    assert lz[:, 0] == pytest.approx([800.0 - math.log(2), -math.log(2)], rel=1e-15)
    assert fa[:, 0] == pytest.approx([1.0, 0.0])
    assert fc[1, 0] == pytest.approx(math.exp(-700.0), rel=1e-12)   # not 0 from 1 − f_a


# --------------------------------------------------------------------------- the three priors
def test_moments_against_integration(prior, fields):
    U, B, A = fields
    lz, fa, fc = prior.moments(U, B, A)
    for r in range(B.shape[0]):
        for i in range(N):
            q = quad_prior(prior, U, B[r, i], A[r, i], i)
            assert (lz[r, i], fa[r, i], fc[r, i]) == pytest.approx(q, rel=1e-10, abs=1e-12)
    assert np.array_equal(prior.log_z(U, B, A), lz)
    # Z(0, 0) = 1 because the prior is normalised
    assert np.allclose(prior.log_z(U, np.zeros(N), np.zeros(N)), 0.0, atol=1e-14)


def test_derivatives_in_the_fields(prior, fields):
    """f_a = ∂_B ln Z, f_c = ∂_B f_a, ∂_A ln Z = −½⟨x²⟩_Q = −½(f_c + f_a²) (central differences)."""
    U, B, A = fields
    h = 1e-5
    lz, fa, fc = prior.moments(U, B, A)
    dB = (prior.log_z(U, B + h, A) - prior.log_z(U, B - h, A)) / (2 * h)
    dfa = (prior.moments(U, B + h, A)[1] - prior.moments(U, B - h, A)[1]) / (2 * h)
    dA = (prior.log_z(U, B, A + h) - prior.log_z(U, B, A - h)) / (2 * h)
    assert np.allclose(dB, fa, atol=1e-8)
    assert np.allclose(dfa, fc, atol=1e-8)
    assert np.allclose(dA, -0.5 * (fc + fa * fa), atol=1e-8)


def _perturbed(prior, key, U, i_eps):
    """(U', prior') with parameter `key` moved by the per-unit vector i_eps."""
    q = prior.copy()
    if key == "U":
        return U + i_eps, q
    setattr(q, key, getattr(prior, key) + i_eps)
    return U, q


def _sample_support(prior, rng, R):
    if prior.name == "bernoulli":
        return (rng.random((R, N)) < 0.4).astype(float)
    lo, hi = prior.interval
    X = rng.uniform(lo, hi, (R, N))
    if prior.name == "truncated_gauss_bernoulli":
        X[rng.random((R, N)) < 0.3] = 0.0
    X[0, 0] = lo
    X[1, 0] = hi
    return X


def test_log_prior_is_a_normalised_density(prior, fields):
    U = fields[0]
    rng = np.random.default_rng(3)
    X = _sample_support(prior, rng, 6)
    lp = prior.log_prior(U, X)
    assert lp.shape == X.shape
    for i in range(N):
        if prior.name == "bernoulli":
            total = sum(math.exp(prior.log_prior(U, np.full((1, N), x))[0, i]) for x in (0.0, 1.0))
        else:
            lo, hi = prior.interval
            f = lambda x: math.exp(prior.log_prior(U, np.full((1, N), x))[0, i])  # noqa: E731
            total = integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
            if prior.name == "truncated_gauss_bernoulli":   # slab integral + point mass at 0
                zero = np.zeros((1, N))
                total = total + math.exp(prior.log_prior(U, zero)[0, i])
        assert total == pytest.approx(1.0, abs=1e-11)
    # the prior moments agree with f_a, f_c at B = A = 0 and with the density itself
    m1, m2 = prior.prior_moments(U)
    if prior.name == "truncated_gaussian":
        for i in range(N):
            lo, hi = prior.interval
            f = lambda x, k: x ** k * math.exp(prior.log_prior(U, np.full((1, N), x))[0, i])  # noqa: E731
            assert m1[i] == pytest.approx(integrate.quad(f, lo, hi, args=(1,), epsrel=1e-12)[0], abs=1e-11)
            assert m2[i] == pytest.approx(integrate.quad(f, lo, hi, args=(2,), epsrel=1e-12)[0], abs=1e-11)


def test_grad_log_prior_against_finite_differences(prior, fields):
    U = fields[0]
    X = _sample_support(prior, np.random.default_rng(5), 8)
    g = prior.grad_log_prior(U, X)
    assert set(g) == {"U", *prior.param_names}
    h = 1e-6
    for key in g:
        assert g[key].shape == (N,)
        up, qp = _perturbed(prior, key, U, np.full(N, h))
        um, qm = _perturbed(prior, key, U, np.full(N, -h))
        fd = (qp.log_prior(up, X).mean(axis=0) - qm.log_prior(um, X).mean(axis=0)) / (2 * h)
        assert np.allclose(g[key], fd, rtol=1e-6, atol=1e-7), key


def test_grad_log_z_against_finite_differences(prior, fields):
    U, B, A = fields
    g = prior.grad_log_z(U, B, A)
    assert set(g) == {"U", *prior.param_names}
    h = 1e-6
    for key in g:
        up, qp = _perturbed(prior, key, U, np.full(N, h))
        um, qm = _perturbed(prior, key, U, np.full(N, -h))
        fd = (qp.log_z(up, B, A).mean(axis=0) - qm.log_z(um, B, A).mean(axis=0)) / (2 * h)
        assert np.allclose(g[key], fd, rtol=1e-6, atol=1e-7), key
    # a single row (n,) is the same as a (1, n) batch
    g1 = prior.grad_log_z(U, B[0], A[0])
    g2 = prior.grad_log_z(U, B[:1], A[:1])
    assert all(np.allclose(g1[k], g2[k], rtol=0, atol=1e-15) for k in g)


def test_gauss_bernoulli_rho_is_not_the_spike_probability():
    """Under eq. (94) P[x ≠ 0] = π₀ = ρG/((1−ρ)+ρG) (eq. 95); the ρ-gradient of the prior
    vanishes exactly when the data's non-zero fraction equals π₀ (errata #10, #17)."""
    p = units.TruncatedGaussBernoulli(1, rho=0.2, V=2.0, interval=(-1.0, 1.0))
    U = np.array([0.4])
    z_tgb = math.exp(p.log_normaliser(U)[0])          # (1 − ρ) + ρ G(V, U)
    lg = units.tg_log_g_moments(2.0, 0.4, -1.0, 1.0)[0]
    pi0 = 0.2 * math.exp(lg) / (0.8 + 0.2 * math.exp(lg))
    assert z_tgb == pytest.approx(0.8 + 0.2 * math.exp(lg), rel=1e-14)
    # a zero and a non-zero point weighted so that the non-zero fraction is pi0
    X = np.array([[0.0], [0.5]])
    lp = p.grad_log_prior(U, X[:1])["rho"] * (1 - pi0) + p.grad_log_prior(U, X[1:])["rho"] * pi0
    assert lp[0] == pytest.approx(0.0, abs=1e-12)
    # the printed eq. (104) value at rho = 0.2, x = 0 (−0.79 in errata #17) differs from ours
    assert p.grad_log_prior(U, X[:1])["rho"][0] == pytest.approx(-pi0 / (0.2 * 0.8), rel=1e-14)


def test_rho_gradient_matches_eq107_plus_normaliser_term():
    p = units.TruncatedGaussBernoulli(2, rho=[0.05, 0.7], V=[1.0, -0.5], interval=(-1.0, 2.0))
    U = np.array([0.3, -1.0])
    B = np.array([[1.0, -2.0]])
    A = np.array([[-0.5, 3.0]])
    g = p.grad_log_z(U, B, A)["rho"]
    lg = units.tg_log_g_moments(A + p.V, B + U, -1.0, 2.0)[0][0]
    lg0 = units.tg_log_g_moments(p.V, U, -1.0, 2.0)[0]
    r = p.rho
    piq = r * np.exp(lg) / ((1 - r) + r * np.exp(lg))
    zt = (1 - r) + r * np.exp(lg0)
    ref = (piq - r) / (r * (1 - r)) - (np.exp(lg0) - 1) / zt
    assert np.allclose(g, ref, rtol=1e-12)


def test_gauss_bernoulli_in_log_form_beyond_overflow():
    """ln G_Q ≈ 1000 (G_Q overflows float64): π_Q → 1, the moments become the slab's and
    ln Z = ln ρ + ln G_Q − ln Z_TGB; for B → −∞ on [0, 1] the spike wins (π_Q → 0)."""
    p = units.TruncatedGaussBernoulli(1, rho=0.3, V=1.0, interval=(0.0, 1.0))
    U = np.array([0.2])
    B, A = np.array([[1000.0], [-1000.0]]), np.array([[-3.0], [0.0]])
    lz, fa, fc = p.moments(U, B, A)
    out = [np.empty((2, 1)) for _ in range(3)]
    K.moments_rows(*p.kernel_args(U), B, A, *out)
    assert all(np.array_equal(np.isfinite(o), [[True], [True]]) for o in out)
    lg, m, v = units.tg_log_g_moments(-2.0, 1000.2, 0.0, 1.0)
    assert lg == pytest.approx(994.290049128713, rel=1e-14)         # tap-priors.md §5 row 5
    assert lz[0, 0] == pytest.approx(math.log(0.3) + lg - p.log_normaliser(U)[0], rel=1e-15)
    assert (fa[0, 0], fc[0, 0]) == pytest.approx((float(m), float(v)), rel=1e-12)
    lg2, m2, _ = units.tg_log_g_moments(1.0, -999.8, 0.0, 1.0)     # G_Q ≈ 1/b, mean ≈ 1/b
    assert lz[1, 0] == pytest.approx(math.log(0.7 + 0.3 * math.exp(lg2)) - p.log_normaliser(U)[0],
                                     rel=1e-13)
    pi_q = 0.3 * math.exp(lg2) / (0.7 + 0.3 * math.exp(lg2))
    assert fa[1, 0] == pytest.approx(pi_q * m2, rel=1e-13) and fa[1, 0] < 1e-6
    for o, r in zip(out, (lz, fa, fc)):
        assert np.allclose(o, r, rtol=1e-13, atol=0)


# --------------------------------------------------------------------------- kernels = numpy
def test_kernels_equal_numpy_methods(prior):
    rng = np.random.default_rng(2)
    R = 40
    U = rng.normal(0, 3, N)
    B = rng.normal(size=(R, N)) * 10.0 ** rng.uniform(-3, 3, (R, N))
    A = rng.normal(size=(R, N)) * 10.0 ** rng.uniform(-3, 3, (R, N))
    if prior.name != "bernoulli":
        A[0] = -prior.V            # a = A + V = 0 exactly
        A[1] = -prior.V + 1e-9
    kind, Uk, Vk, rk, lo, hi, logz0 = args = prior.kernel_args(U)
    assert kind == prior.kind and Uk.shape == Vk.shape == rk.shape == logz0.shape == (N,)
    assert isinstance(lo, float) and isinstance(hi, float)
    assert np.allclose(logz0, prior.log_normaliser(U), rtol=1e-14, atol=1e-14)
    if prior.name == "bernoulli":
        assert (Vk == 0).all() and (rk == 0).all() and (lo, hi) == (0.0, 1.0)
    out = [np.empty((R, N)) for _ in range(3)]
    K.moments_rows(*args, B, A, *out)
    ref = prior.moments(U, B, A)
    for o, r in zip(out, ref):
        assert np.allclose(o, r, rtol=1e-13, atol=1e-13 * np.abs(r).max())
    for r_, i in ((0, 0), (1, 3), (R - 1, 2)):
        s = K.moments_scalar(kind, Uk[i], Vk[i], rk[i], lo, hi, logz0[i], B[r_, i], A[r_, i])
        assert s == (out[0][r_, i], out[1][r_, i], out[2][r_, i])
        assert K.log_normaliser_scalar(kind, Uk[i], Vk[i], rk[i], lo, hi) == logz0[i]


def test_row_kernel_is_bit_identical_across_thread_counts():
    import numba
    p = units.TruncatedGaussBernoulli(5, rho=0.3, V=0.5, interval=(-1.0, 1.0))
    rng = np.random.default_rng(0)
    args = p.kernel_args(rng.normal(size=5))
    B, A = rng.normal(size=(64, 5)), rng.normal(size=(64, 5))
    res = []
    for t in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(t)
        out = [np.empty((64, 5)) for _ in range(3)]
        K.moments_rows(*args, B, A, *out)
        res.append(out)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert all(np.array_equal(x, y) for x, y in zip(*res))


# --------------------------------------------------------------------------- construction & bad input
def test_make_copy_and_round_trip():
    for name, kw in (("bernoulli", {}), ("truncated_gaussian", {"V": [1.0, 2.0, 3.0], "interval": (-1, 2)}),
                     ("truncated_gauss_bernoulli", {"rho": 0.1, "V": 0.5, "interval": (-2, 0)})):
        p = units.make(name, 3, **kw)
        assert p.name == name and p.n == 3
        assert units.from_dict(p.to_dict()) == p and type(p).from_dict(p.to_dict()) == p
        q = p.copy()
        assert q == p
        if p.param_names:
            q.V[0] += 1.0
            assert q != p             # deep copy
    p = units.TruncatedGaussBernoulli(3, rho=0.25)
    assert p.rho.dtype == np.float64 and p.rho.shape == (3,) and isinstance(p.interval, tuple)
    assert units.PRIOR_NAMES == ("bernoulli", "truncated_gaussian", "truncated_gauss_bernoulli")


@pytest.mark.parametrize("call, exc, match", [
    (lambda: units.make("gaussian", 3), ValueError, "unknown unit type"),
    (lambda: units.make("bernoulli", 3, V=1.0), TypeError, "no parameters"),
    (lambda: units.TruncatedGaussian(0), ValueError, "n must be >= 1"),
    (lambda: units.TruncatedGaussian(3, V=[1.0, 2.0]), ValueError, r"V must be a scalar or have shape \(3,\)"),
    (lambda: units.TruncatedGaussian(3, V=np.nan), ValueError, "V contains NaN"),
    (lambda: units.TruncatedGaussian(3, V="x"), TypeError, "V must be a real number"),
    (lambda: units.TruncatedGaussian(3, interval=(1.0, 1.0)), ValueError, "lo < hi"),
    (lambda: units.TruncatedGaussian(3, interval=(2.0, 1.0)), ValueError, "lo < hi"),
    (lambda: units.TruncatedGaussian(3, interval=(0.0, np.inf)), ValueError, "finite"),
    (lambda: units.TruncatedGaussian(3, interval=5.0), TypeError, "pair"),
    (lambda: units.TruncatedGaussBernoulli(3, interval=(0.5, 1.0)), ValueError, "must contain 0"),
    (lambda: units.TruncatedGaussBernoulli(3, rho=1.0), ValueError, "rho must be < 1"),
    (lambda: units.TruncatedGaussBernoulli(3, rho=[0.5, 0.0, 0.5]), ValueError, "rho must be > 0"),
])
def test_bad_parameters_name_the_problem(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_bad_data_and_fields_name_the_problem():
    b = units.Bernoulli(3)
    tg = units.TruncatedGaussian(3, interval=(-1.0, 1.0))
    U = np.zeros(3)
    with pytest.raises(ValueError, match=r"0\.5 at row 1, column 2, outside the support of bernoulli"):
        b.check_data([[0, 1, 1], [1, 0, 0.5]])
    with pytest.raises(ValueError, match=r"X has 1\.5 at row 0, column 0.*interval \[-1\.0, 1\.0\]"):
        tg.log_prior(U, [[1.5, 0, 0]])
    with pytest.raises(ValueError, match="NaN"):
        tg.check_data([[np.nan, 0, 0]])
    with pytest.raises(ValueError, match="has 2 columns but the truncated_gaussian layer has n=3"):
        tg.check_data(np.zeros((4, 2)))
    assert tg.check_data([0.1, -1.0, 1.0]).shape == (1, 3)
    with pytest.raises(ValueError, match=r"B must have shape \(3,\) or \(R, 3\)"):
        tg.moments(U, np.zeros((2, 4)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="A contains NaN"):
        tg.moments(U, np.zeros(3), [0.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="same shape"):
        tg.moments(U, np.zeros((2, 3)), np.zeros((5, 3)))
    with pytest.raises(ValueError, match=r"U \(the bias of this layer\) must be a scalar or have shape \(3,\)"):
        tg.moments(np.zeros(4), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="V must be a scalar or have shape"):
        tg.V = np.ones(5)
    with pytest.raises(TypeError, match="must be one of"):
        units.as_prior(3.0, 3)
    with pytest.raises(ValueError, match="n=3 units, expected 4"):
        units.as_prior(tg, 4)


# (a, b, ln G, mean, var) on [0, 1] where the closed form applies — 50-digit mpmath quadrature
CLOSED = [
    (25.0, 12.0, 2.1765585078092996, 0.48178526848687784, 0.036387903134466776),
    (6.0, -1.2, -1.0266454373399203, 0.25830371604729611, 0.041307958687793383),
    (400.0, 210.0, 53.048206259650682, 0.525, 0.0025),
    (1e4, 3e3, 446.31376834721658, 0.3, 1e-4),
]


@pytest.mark.parametrize("a,b,lg,m,v", CLOSED)
def test_truncated_gaussian_closed_form_against_50_digit_values(a, b, lg, m, v):
    ok, lg_, m_, v_ = K._tg_closed(a, b, 0.0, 1.0)
    assert ok
    assert lg_ == pytest.approx(lg, rel=1e-15, abs=1e-15)
    assert m_ == pytest.approx(m, rel=1e-15, abs=1e-15)
    assert v_ == pytest.approx(v, rel=3e-15)
    assert K.tg_log_g_moments(a, b, 0.0, 1.0) == (lg_, m_, v_)     # the kernels take it


def test_truncated_gaussian_closed_form_region_agrees_with_quadrature():
    """Where the closed form is used (interval ≥ 2σ wide, centre within σ/2 of it) it agrees
    with the Gauss–Legendre recipe to rounding; outside it the recipe is used unchanged."""
    rng = np.random.default_rng(5)
    n_closed = 0
    for a, mu, lo, hi in zip(np.exp(rng.uniform(-2.0, 11.5, 4000)), rng.uniform(-2.0, 3.0, 4000),
                             rng.uniform(-1.0, 0.5, 4000), rng.uniform(0.6, 2.0, 4000)):
        b = a * mu
        w1, w2 = K._scratch()
        q = K._tg_quadrature(a, b, lo, hi, w1, w2)
        ok, lg, m, v = K._tg_closed(a, b, lo, hi)
        sa = math.sqrt(a)
        inside = (hi - lo) * sa >= K.CLOSED_MIN_WIDTH and (lo - mu) * sa <= K.CLOSED_MAX_OUT \
            and (hi - mu) * sa >= -K.CLOSED_MAX_OUT
        assert ok == inside
        got = K.tg_log_g_moments(a, b, lo, hi)
        if not ok:
            assert got == q
            continue
        n_closed += 1
        assert lg == pytest.approx(q[0], rel=1e-14, abs=1e-14)
        assert m == pytest.approx(q[1], rel=1e-14, abs=1e-14)
        assert v == pytest.approx(q[2], rel=1e-12)        # (the quadrature's error, at large a)
    assert n_closed > 1000
    assert K._tg_closed(-3.0, 0.5, 0.0, 1.0)[0] is False and K._tg_closed(0.0, 0.5, 0.0, 1.0)[0] is False
