"""TAP inference (rbmviz.tap): exactness at W = 0, weak-coupling error orders of the
extended mean field (tap.md A.1: O(ε²) naive MF, O(ε³) TAP2, O(ε⁴) TAP3), stationarity of
the free energies (A.1 and eq. 36), Alg. 1 = TAP2 with Bernoulli priors (B.8), the TAP
log-likelihood (eq. 39) against exact enumeration, unique-solution counting, bad input."""
import numpy as np
import pytest
from brute import random_rbm

import rbmviz
from rbmviz import tap
from rbmviz.evaluate import log_likelihood_exact, log_partition_exact, model_statistics
from rbmviz.tap import _iteration
from rbmviz.tap import inference as inf


def _sp(x):
    return np.logaddexp(0.0, x)


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _binary_rows(n_rows, n, seed):
    return (np.random.default_rng(seed).random((n_rows, n)) < 0.5).astype(np.float64)


def _scaled(rbm, eps):
    r = rbm.copy()
    r.W = rbm.W * eps
    return r


# ------------------------------------------------------------------ exactness, error orders
@pytest.mark.parametrize("order", [1, 2, 3])
def test_zero_weights_exact(order):
    rbm = random_rbm(6, 4, scale=1.0, seed=3)
    rbm.W[:] = 0.0
    X = _binary_rows(5, 6, 0)
    sol = tap.solve(rbm, X, order=order, tol=1e-20)
    assert sol.converged.all()
    np.testing.assert_allclose(sol.av, np.broadcast_to(_sig(rbm.b), sol.av.shape), atol=1e-12)
    np.testing.assert_allclose(sol.ah, np.broadcast_to(_sig(rbm.c), sol.ah.shape), atol=1e-12)
    exact = log_partition_exact(rbm)
    assert exact == pytest.approx(_sp(rbm.b).sum() + _sp(rbm.c).sum(), abs=1e-12)
    np.testing.assert_allclose(sol.log_z, exact, atol=1e-10)
    # the normalised-prior model has 𝒵 = 1 when W = 0
    np.testing.assert_allclose(sol.free_energy, 0.0, atol=1e-10)


@pytest.mark.parametrize("seed", [1, 2])
def test_weak_coupling_error_orders(seed):
    """|ln Z − ln Z_TAP| and the magnetisation errors scale like ε^(order+1) (tap.md A.1)."""
    rbm = random_rbm(5, 4, scale=1.0, seed=seed)
    eps = np.geomspace(0.004, 0.04, 5)
    X = np.zeros((1, 5))
    err = {o: [] for o in (1, 2, 3)}
    merr = {o: [] for o in (1, 2, 3)}
    for e in eps:
        r = _scaled(rbm, e)
        lz = log_partition_exact(r)
        _, Ev, Eh = model_statistics(r)
        for o in (1, 2, 3):
            s = tap.solve(r, X, order=o, damping=None, tol=1e-30, max_iter=5000)
            assert s.converged.all()
            err[o].append(abs(s.log_z[0] - lz))
            merr[o].append(max(np.abs(s.av[0] - Ev).max(), np.abs(s.ah[0] - Eh).max()))
    for o in (1, 2, 3):
        slope = np.polyfit(np.log(eps), np.log(err[o]), 1)[0]
        mslope = np.polyfit(np.log(eps), np.log(merr[o]), 1)[0]
        assert abs(slope - (o + 1)) < 0.15, (o, slope)
        assert abs(mslope - (o + 1)) < 0.15, (o, mslope)
    # higher orders are better at every ε
    assert all(err[1][k] > err[2][k] > err[3][k] for k in range(len(eps)))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_fixed_point_is_stationary(order):
    """The fixed point is a stationary point of −Γ (A.1): finite-difference gradient ≈ 0,
    while a perturbed point has a clearly non-zero gradient."""
    rbm = random_rbm(7, 5, scale=0.6, seed=4)
    sol = tap.solve(rbm, _binary_rows(1, 7, 1), order=order, tol=1e-28, max_iter=5000)
    assert sol.converged.all()
    av, ah = sol.av[0], sol.ah[0]

    def grad(av, ah):
        z = np.concatenate([av, ah])
        g = np.empty_like(z)
        h = 1e-6
        for k in range(z.size):
            zp, zm = z.copy(), z.copy()
            zp[k] += h
            zm[k] -= h
            fp = tap.free_energy_binary(rbm, zp[None, :7], zp[None, 7:], order=order)[0]
            fm = tap.free_energy_binary(rbm, zm[None, :7], zm[None, 7:], order=order)[0]
            g[k] = (fp - fm) / (2 * h)
        return g

    assert np.abs(grad(av, ah)).max() < 1e-7
    assert np.abs(grad(av + 0.01, ah)).max() > 1e-3
    np.testing.assert_allclose(tap.free_energy_binary(rbm, sol.av, sol.ah, order=order), sol.log_z)
    # a = f_a(B, A) at the solution: σ(U + B − A/2) with the returned fields
    np.testing.assert_allclose(_sig(rbm.b + sol.Bv - sol.Av / 2), sol.av, atol=1e-12)
    np.testing.assert_allclose(_sig(rbm.c + sol.Bh - sol.Ah / 2), sol.ah, atol=1e-12)


@pytest.mark.parametrize("damping", [1.0, 0.5, 0.3])
def test_tap2_equals_alg1_with_bernoulli_priors(damping):
    """Order-2 fast path = Alg. 1 (B.4) run with the Bernoulli prior kernels (B.8): the
    iterates agree to rounding after 1, 3 and 40 iterations, and the eq. (36) free energy
    equals −Γ_TAP2 − Σ softplus(U)."""
    rbm = random_rbm(12, 7, scale=1.0, seed=1)
    X = _binary_rows(20, 12, 0)
    vis, hid = inf._layers(rbm)
    ah0 = _sig(X @ rbm.W + rbm.c)
    for it in (1, 3, 40):
        a = inf._solve_binary(rbm.W, vis.U, hid.U, 2, damping, 1e-30, it, X, ah0, None)
        g = inf._solve_general(rbm.W, vis, hid, damping, 1e-30, it, X, None, None)
        for x, y in zip(a[:4], g[:4]):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-13)
    sol = tap.solve(rbm, X, damping=damping, tol=1e-24, max_iter=4000)
    assert sol.converged.all()
    F36 = inf._free_energy_eq36(rbm.W, vis, hid, sol.av, sol.cv, sol.ah, sol.ch,
                                sol.Bv, sol.Av, sol.Bh, sol.Ah, None)
    np.testing.assert_allclose(F36, sol.free_energy, atol=1e-11)
    np.testing.assert_allclose(sol.free_energy, -sol.log_z + _sp(rbm.b).sum() + _sp(rbm.c).sum())
    np.testing.assert_allclose(sol.cv, sol.av * (1 - sol.av), atol=1e-11)


# ------------------------------------------------------------------ likelihood
def test_tap_log_likelihood_close_to_exact():
    rbm = random_rbm(8, 5, scale=0.25, seed=5)
    V = _binary_rows(40, 8, 2)
    exact = log_likelihood_exact(rbm, V)
    errs = {}
    for order in (1, 2, 3):
        ll = tap.log_likelihood(rbm, V, order=order, tol=1e-24, max_iter=5000)
        errs[order] = abs(ll - exact)
    assert errs[2] < 2e-3 and errs[3] < errs[2] < errs[1]
    # eq. (39) with the binary data term is −F(v) + free energy term: check the pieces
    d = tap.log_likelihood(rbm, V, tol=1e-24, max_iter=5000, details=True)
    np.testing.assert_allclose(d.data_term, -rbm.free_energy(V) - _sp(rbm.b).sum() - _sp(rbm.c).sum())
    assert d.n_solutions == 1 and d.n_not_converged == 0 and float(d) == d.value
    assert rbmviz.evaluate.tap_log_likelihood(rbm, V, tol=1e-24, max_iter=5000) == pytest.approx(d.value)


def test_log_likelihood_options_and_nonconvergence():
    rbm = random_rbm(10, 6, scale=1.0, seed=6)
    V = _binary_rows(30, 10, 3)
    a = tap.log_likelihood(rbm, V, n_init=10, seed=1, details=True)
    b = tap.log_likelihood(rbm, V, n_init=10, seed=1, details=True)
    assert a.value == b.value and len(a.solution) == 10
    c = tap.log_likelihood(rbm, V, unique=False, details=True)
    assert c.n_solutions == 30
    with pytest.warns(RuntimeWarning, match="did not converge"):
        d = tap.log_likelihood(rbm, V, max_iter=1, details=True)
    assert d.n_not_converged == 30 and np.isnan(d.value)


# ------------------------------------------------------------------ solutions
def _pattern_model(n_rows=200, nv=30, nh=5, strength=3.0, seed=3):
    """Hidden unit j stores a random ±1 pattern (W_:j = strength·ξ_j, c_j = −strength·#{ξ_j = +1}/2),
    initialisations are the patterns with 10 % of the bits flipped: several TAP solutions."""
    rng = np.random.default_rng(seed)
    xi = 2.0 * (rng.random((nv, nh)) < 0.5) - 1.0
    rbm = rbmviz.RBM(nv, nh, init="zeros")
    rbm.set_params(W=strength * xi, b=np.zeros(nv), c=-0.5 * strength * (xi > 0).sum(axis=0))
    X = (xi.T > 0).astype(np.float64)[rng.integers(0, nh, n_rows)]
    return rbm, np.abs(X - (rng.random(X.shape) < 0.1))


def test_unique_solutions_invariant_to_permutation():
    rbm, X = _pattern_model()
    sol = tap.solve(rbm, X, tol=1e-14, max_iter=3000)
    u = tap.unique_solutions(sol)
    assert u.n_unique >= 3, u
    assert u.counts.sum() == sol.n_converged and (u.labels >= 0).sum() == sol.n_converged
    for seed in (0, 1):
        p = np.random.default_rng(seed).permutation(len(X))
        solp = tap.solve(rbm, X[p], tol=1e-14, max_iter=3000)
        up = tap.unique_solutions(solp)
        assert up.n_unique == u.n_unique
        np.testing.assert_array_equal(up.counts, u.counts)
        np.testing.assert_array_equal(up.labels, u.labels[p])
        np.testing.assert_array_equal(solp.av[up.representatives], sol.av[u.representatives])
        np.testing.assert_array_equal(up.free_energy, u.free_energy)
    # members of one solution agree within tol, different solutions do not
    for k in range(u.n_unique):
        m = u.labels == k
        assert np.abs(sol.av[m] - sol.av[u.representatives[k]]).max() < 1e-4 * 30
    reps = sol.av[u.representatives]
    d = np.abs(reps[:, None, :] - reps[None, :, :]).max(axis=2) + np.eye(u.n_unique)
    assert d.min() >= 1e-4


def test_unique_solutions_tolerance_on_constructed_solutions():
    """Clusters built by hand: members within tol merge (also by chaining), others do not;
    non-converged rows get label −1."""
    rng = np.random.default_rng(0)
    centres = rng.random((3, 6))
    rows, truth = [], []
    for k, c in enumerate(centres):
        for _ in range(5):
            rows.append(c + rng.uniform(-2e-5, 2e-5, 6))
            truth.append(k)
    av = np.array(rows)
    ah = np.repeat(np.array([[0.2, 0.4], [0.2, 0.4], [0.9, 0.1]]), 5, axis=0)
    R = len(av)
    conv = np.ones(R, bool)
    conv[4] = False
    sol = inf.TAPSolution(av=av, cv=av, ah=ah, ch=ah, Bv=av, Av=av, Bh=ah, Ah=ah, converged=conv,
                          n_iter=np.ones(R, int), free_energy=np.arange(R, dtype=float),
                          log_z=np.zeros(R), tol=tap.COUNT_TOL)
    u = tap.unique_solutions(sol, tol=1e-4)
    assert u.n_unique == 3 and u.labels[4] == -1 and sorted(u.counts) == [4, 5, 5]
    truth = np.array(truth)
    for k in range(3):
        assert len(set(truth[u.labels == k])) == 1
    assert tap.unique_solutions(sol, tol=1e-6).n_unique == 14
    # chaining: 0, 0.6e-4, 1.2e-4 are one solution at tol 1e-4
    ch = inf.TAPSolution(**{f: getattr(sol, f)[:3].copy() for f in inf.TAPSolution._ROW_FIELDS},
                         tol=tap.COUNT_TOL)
    ch.av[:] = 0.5 + np.array([0.0, 0.6e-4, 1.2e-4])[:, None]
    ch.ah[:] = 0.5
    ch.converged[:] = True
    assert tap.unique_solutions(ch, tol=1e-4).n_unique == 1


def test_solve_reproducible_and_batch_independent():
    rbm, X = _pattern_model(60)
    a, b = tap.solve(rbm, X), tap.solve(rbm, X)
    for f in inf.TAPSolution._ROW_FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    one = tap.solve(rbm, X[17:18])
    np.testing.assert_allclose(one.av[0], a.av[17], atol=1e-9)
    assert one.n_iter[0] == a.n_iter[17]
    sub = a.subset([17, 3])
    np.testing.assert_array_equal(sub.av, a.av[[17, 3]])
    np.testing.assert_array_equal(a.subset(a.converged).n_iter, a.n_iter[a.converged])


def test_nonconverged_rows_flagged():
    rbm = random_rbm(10, 6, scale=1.0, seed=2)
    X = _binary_rows(8, 10, 9)
    s = tap.solve(rbm, X, max_iter=1)
    assert not s.converged.any() and (s.n_iter == 1).all()
    np.testing.assert_array_equal(s.not_converged, np.arange(8))
    s = tap.solve(rbm, X, max_iter=2000)
    assert s.converged.all() and s.n_converged == 8 and s.not_converged.size == 0
    assert (s.n_iter < 2000).all()
    # n_iter is the first iteration that meets the criterion: one fewer is not enough
    k = int(s.n_iter.max())
    t = tap.solve(rbm, X, max_iter=k - 1)
    np.testing.assert_array_equal(t.converged, s.n_iter < k)
    np.testing.assert_array_equal(t.n_iter[t.converged], s.n_iter[t.converged])
    np.testing.assert_array_equal(tap.solve(rbm, X, max_iter=k).av, s.av)


def test_damping_and_init_hidden():
    rbm = random_rbm(10, 6, scale=1.0, seed=2)
    X = _binary_rows(6, 10, 4)
    ref = tap.solve(rbm, X, damping=None, tol=1e-24, max_iter=3000)
    for d in (1.0, 0.7, 0.5):
        s = tap.solve(rbm, X, damping=d, tol=1e-24, max_iter=3000)
        np.testing.assert_allclose(s.av, ref.av, atol=1e-10)
    # undamped: the initial hidden means never enter (tap.md B.4); damped they do
    H = np.full((6, 6), 0.9)
    u1 = tap.solve(rbm, X, damping=None, max_iter=3)
    u2 = tap.solve(rbm, X, damping=None, max_iter=3, init_hidden=H)
    np.testing.assert_array_equal(u1.av, u2.av)
    d1 = tap.solve(rbm, X, damping=0.5, max_iter=3)
    d2 = tap.solve(rbm, X, damping=0.5, max_iter=3, init_hidden=H)
    assert np.abs(d1.av - d2.av).max() > 1e-6


def test_visible_field_equals_shifted_biases():
    rbm = random_rbm(9, 5, scale=0.8, seed=12)
    D = np.random.default_rng(1).normal(0, 1.5, 9)
    X = _binary_rows(4, 9, 5)
    s = tap.solve(rbm, X, visible_field=np.tile(D, (4, 1)), tol=1e-24, max_iter=3000)
    s1 = tap.solve(rbm, X, visible_field=D, tol=1e-24, max_iter=3000)
    shifted = rbm.copy()
    shifted.b = rbm.b + D
    r = tap.solve(shifted, X, tol=1e-24, max_iter=3000)
    np.testing.assert_allclose(s.av, r.av, atol=1e-12)
    np.testing.assert_array_equal(s.av, s1.av)
    np.testing.assert_allclose(s.log_z, r.log_z, atol=1e-10)
    # the normalised-prior free energy keeps the ORIGINAL prior normalisers
    np.testing.assert_allclose(s.free_energy, -r.log_z + _sp(rbm.b).sum() + _sp(rbm.c).sum(),
                               atol=1e-10)
    # per-row fields; the caller's array is left alone (the active set compacts a copy)
    F = np.random.default_rng(3).normal(0, 1.0, (40, 9))
    F0 = F.copy()
    Xr = _binary_rows(40, 9, 6)
    sf = tap.solve(rbm, Xr, visible_field=F, tol=1e-20, max_iter=3000)
    np.testing.assert_array_equal(F, F0)
    for i in (0, 17, 39):
        one = tap.solve(rbm, Xr[i:i + 1], visible_field=F[i], tol=1e-20, max_iter=3000)
        np.testing.assert_allclose(one.av[0], sf.av[i], atol=1e-9)
    # means as initialisation (e.g. the OPE for denoising)
    m = tap.solve(rbm, np.full((2, 9), 0.3), data_anchored=False, visible_field=D)
    assert m.converged.all()


# ------------------------------------------------------------------ bad input
def test_bad_input():
    rbm = random_rbm(5, 3, seed=0)
    X = _binary_rows(4, 5, 0)
    with pytest.raises(ValueError, match="init_visible has 4 columns"):
        tap.solve(rbm, X[:, :4])
    with pytest.raises(ValueError, match="data_anchored=False"):
        tap.solve(rbm, X * 0.5)
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        tap.solve(rbm, X * 2.0, data_anchored=False)
    with pytest.raises(ValueError, match="NaN"):
        tap.solve(rbm, np.where(X > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match="tol must be > 0"):
        tap.solve(rbm, X, tol=0.0)
    with pytest.raises(ValueError, match="max_iter must be >= 1"):
        tap.solve(rbm, X, max_iter=0)
    for d in (0.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="damping"):
            tap.solve(rbm, X, damping=d)
    with pytest.raises(ValueError, match="unknown order"):
        tap.solve(rbm, X, order=4)
    with pytest.raises(ValueError, match="visible_field has 2 rows"):
        tap.solve(rbm, X, visible_field=np.zeros((2, 5)))
    with pytest.raises(ValueError, match="init_hidden"):
        tap.solve(rbm, X, init_hidden=np.full((4, 3), 1.5))
    with pytest.raises(TypeError, match="rbm must be an rbmviz.RBM"):
        tap.solve("rbm", X)
    with pytest.raises(TypeError, match="TAPSolution"):
        tap.unique_solutions(X)
    with pytest.raises(ValueError, match="tol must be > 0"):
        tap.unique_solutions(tap.solve(rbm, X), tol=-1.0)
    with pytest.raises(ValueError, match="V must be binary"):
        tap.log_likelihood(rbm, X + 0.5)
    with pytest.raises(ValueError, match="n_init must be >= 1"):
        tap.log_likelihood(rbm, X, n_init=0)


# ------------------------------------------------------------------ general priors (order 2)
def _general_rbm(visible, hidden="bernoulli", nv=6, nh=4, scale=0.5, seed=21):
    from rbmviz import units
    rng = np.random.default_rng(seed)
    vp = units.make(visible, nv, **({} if visible == "bernoulli" else {"V": rng.uniform(1.0, 3.0, nv)}))
    hp = units.make(hidden, nh, **({} if hidden == "bernoulli" else {"V": rng.uniform(1.0, 3.0, nh)}))
    rbm = rbmviz.RBM(nv, nh, visible=vp, hidden=hp, init="zeros")
    rbm.set_params(W=rng.normal(0, scale, (nv, nh)), b=rng.normal(0, 0.5, nv), c=rng.normal(0, 0.5, nh))
    X = rng.random((5, nv))
    if visible == "truncated_gauss_bernoulli":
        X[rng.random(X.shape) < 0.3] = 0.0
    return rbm, X


def _eq36(rbm, z, nv, nh, field=None):
    vis, hid = inf._layers(rbm)
    av, cv, Bv, Av = (z[k * nv:(k + 1) * nv][None] for k in range(4))
    o = 4 * nv
    ah, ch, Bh, Ah = (z[o + k * nh:o + (k + 1) * nh][None] for k in range(4))
    return inf._free_energy_eq36(rbm.W, vis, hid, av, cv, ah, ch, Bv, Av, Bh, Ah, field)[0]


@pytest.mark.parametrize("visible,hidden", [("truncated_gaussian", "bernoulli"),
                                            ("truncated_gauss_bernoulli", "bernoulli"),
                                            ("truncated_gaussian", "truncated_gaussian")])
def test_general_priors_stationary_free_energy(visible, hidden):
    """At converged Alg. 1 fixed points the finite-difference gradient of eq. (36) with
    respect to every (a, c, B, A) vanishes (tap.md B.3)."""
    rbm, X = _general_rbm(visible, hidden)
    sol = tap.solve(rbm, X, tol=1e-28, max_iter=5000)
    assert sol.converged.all()
    nv, nh = rbm.n_visible, rbm.n_hidden
    r = 2
    z0 = np.concatenate([sol.av[r], sol.cv[r], sol.Bv[r], sol.Av[r], sol.ah[r], sol.ch[r], sol.Bh[r], sol.Ah[r]])
    assert _eq36(rbm, z0, nv, nh) == pytest.approx(sol.free_energy[r], abs=1e-12)

    def grad(z):
        g = np.empty_like(z)
        for k in range(z.size):
            h = 1e-6
            zp, zm = z.copy(), z.copy()
            zp[k] += h
            zm[k] -= h
            g[k] = (_eq36(rbm, zp, nv, nh) - _eq36(rbm, zm, nv, nh)) / (2 * h)
        return g

    assert np.abs(grad(z0)).max() < 1e-7
    zp = z0.copy()
    zp[:nv] += 0.01
    assert np.abs(grad(zp)).max() > 1e-3
    # a = f_a(B, A), c = f_c(B, A) for both layers at the fixed point
    vis, hid = inf._layers(rbm)
    _, fa, fc = vis.moments(sol.Bv, sol.Av)
    np.testing.assert_allclose(fa, sol.av, atol=1e-12)
    np.testing.assert_allclose(fc, sol.cv, atol=1e-12)
    _, fa, fc = hid.moments(sol.Bh, sol.Ah)
    np.testing.assert_allclose(fa, sol.ah, atol=1e-12)


def test_general_priors_zero_weights_and_likelihood():
    """W = 0: the solution is the priors' own moments, 𝔽 = 0 (normalised priors), log Z the
    sum of the prior log-normalisers, and eq. (39) the exact factorised log-likelihood."""
    rbm, X = _general_rbm("truncated_gauss_bernoulli", "truncated_gaussian")
    rbm.W[:] = 0.0
    sol = tap.solve(rbm, X, tol=1e-24)
    vp, hp = rbm.visible_prior, rbm.hidden_prior
    mv, m2v = vp.prior_moments(rbm.b)
    mh, _ = hp.prior_moments(rbm.c)
    np.testing.assert_allclose(sol.av, np.broadcast_to(mv, sol.av.shape), atol=1e-12)
    np.testing.assert_allclose(sol.cv, np.broadcast_to(m2v - mv ** 2, sol.cv.shape), atol=1e-12)
    np.testing.assert_allclose(sol.ah, np.broadcast_to(mh, sol.ah.shape), atol=1e-12)
    np.testing.assert_allclose(sol.free_energy, 0.0, atol=1e-12)
    np.testing.assert_allclose(sol.log_z, vp.log_normaliser(rbm.b).sum() + hp.log_normaliser(rbm.c).sum())
    ll = tap.log_likelihood(rbm, X, tol=1e-24)
    assert ll == pytest.approx(vp.log_prior(rbm.b, X).sum(axis=1).mean(), abs=1e-10)


def test_general_priors_field_equals_shifted_bias():
    """A visible field D tilts the prior like the linear natural parameter U → U + D: the
    same means and the same log-partition estimate of that model."""
    rbm, X = _general_rbm("truncated_gaussian", "bernoulli", scale=0.8)
    D = np.random.default_rng(2).normal(0, 1.0, rbm.n_visible)
    s = tap.solve(rbm, X, visible_field=D, tol=1e-26, max_iter=5000)
    shifted = rbm.copy()
    shifted.b = rbm.b + D
    r = tap.solve(shifted, X, tol=1e-26, max_iter=5000)
    np.testing.assert_allclose(s.av, r.av, atol=1e-12)
    np.testing.assert_allclose(s.log_z, r.log_z, atol=1e-10)


def test_general_priors_bad_input():
    rbm, X = _general_rbm("truncated_gaussian")
    with pytest.raises(ValueError, match="order=2 only"):
        tap.solve(rbm, X, order=3)
    with pytest.raises(ValueError, match="outside the support"):
        tap.solve(rbm, X + 1.0)
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        tap.solve(rbm, X - 1.0, data_anchored=False)
    assert tap.solve(rbm, X * 0.5, data_anchored=False).converged.all()


def test_bench_numpy_peer_is_the_same_iteration():
    """bench/bench_tap.py times a plain-numpy TAP2 iteration against solve: same rows, same
    iterates, same convergence counts."""
    bench_tap = pytest.importorskip("bench.bench_tap")
    rbm = random_rbm(20, 7, scale=0.7, seed=8)
    X = _binary_rows(15, 20, 6)
    av, ah, done, n_iter = bench_tap.numpy_solve(rbm.W, rbm.b, rbm.c, X)
    sol = tap.solve(rbm, X)
    np.testing.assert_allclose(av, sol.av, atol=1e-13)
    np.testing.assert_allclose(ah, sol.ah, atol=1e-13)
    np.testing.assert_array_equal(done, sol.converged)
    np.testing.assert_array_equal(n_iter, sol.n_iter)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_chunked_iteration_equals_whole_batch(order, monkeypatch):
    """The binary iteration runs in row chunks; chunks of 7 rows (with the active set
    compacting underneath) give the same solutions as one chunk."""
    rbm, X = _pattern_model(60)
    field = np.random.default_rng(0).normal(0, 0.5, X.shape)
    whole = tap.solve(rbm, X, order=order, visible_field=field)
    monkeypatch.setattr(_iteration, "_CHUNK", 7)
    chunked = tap.solve(rbm, X, order=order, visible_field=field)
    np.testing.assert_array_equal(chunked.converged, whole.converged)
    ok = whole.converged          # (non-converged rows oscillate: their last iterate is arbitrary)
    assert ok.sum() >= 15
    np.testing.assert_allclose(chunked.av[ok], whole.av[ok], atol=1e-12)
    np.testing.assert_allclose(chunked.ah[ok], whole.ah[ok], atol=1e-12)
    np.testing.assert_array_equal(chunked.n_iter, whole.n_iter)


def test_counting_warns_for_loosely_solved_runs_and_log_likelihood_solves_tightly():
    """At tol 1e-8 a damped run stops ~1e-4 from its fixed point, so one solution is counted
    many times; unique_solutions warns, and log_likelihood(unique=True) solves to COUNT_TOL."""
    X = (np.random.default_rng(0).random((60, 40)) < 0.3).astype(float)
    rbm = rbmviz.RBM(40, 8, scale=1e-3, seed=0)
    loose = tap.solve(rbm, X, damping=0.5, tol=1e-8)
    with pytest.warns(RuntimeWarning, match="counted many times"):
        n_loose = tap.unique_solutions(loose).n_unique
    tight = tap.solve(rbm, X, damping=0.5, tol=tap.COUNT_TOL)
    assert n_loose > 1 and tap.unique_solutions(tight).n_unique == 1
    d = tap.log_likelihood(rbm, X, details=True)
    assert d.solution.tol == tap.COUNT_TOL and d.n_solutions == 1
    assert tap.log_likelihood(rbm, X, unique=False, details=True).solution.tol == 1e-8


def test_solve_counted_undamped_first_then_damped_where_it_fails():
    """solve_counted: undamped runs that converge are kept; the others are solved again with
    the damping, bit for bit as solve(damping) does; on weak couplings both reach the one
    fixed point, and the log-likelihood with undamped_first agrees with the damped one."""
    rbm = random_rbm(8, 5, scale=0.25, seed=5)
    V = _binary_rows(40, 8, 2)
    undamped = tap.solve(rbm, V, damping=1.0, tol=1e-12, max_iter=200)
    counted = tap.solve_counted(rbm, V, damping=0.5, tol=1e-12, max_iter=1000)
    assert undamped.not_converged.size == 0
    np.testing.assert_array_equal(counted.av, undamped.av)          # kept as they are
    np.testing.assert_array_equal(counted.n_iter, undamped.n_iter)
    damped = tap.solve(rbm, V, damping=0.5, tol=1e-12, max_iter=1000)
    assert np.median(counted.n_iter) < np.median(damped.n_iter)     # the point of it
    np.testing.assert_allclose(counted.av, damped.av, atol=1e-5)    # the same fixed point
    # one undamped iteration converges nowhere: every row is the damped solve's
    fallback = tap.solve_counted(rbm, V, damping=0.5, tol=1e-12, max_iter=1000, first_max_iter=1)
    for f in ("av", "ah", "cv", "ch", "n_iter", "converged"):
        np.testing.assert_array_equal(getattr(fallback, f), getattr(damped, f))
    a = tap.log_likelihood(rbm, V, tol=1e-12, undamped_first=True, details=True)
    b = tap.log_likelihood(rbm, V, tol=1e-12, details=True)
    assert a.n_solutions == b.n_solutions == 1
    assert a.value == pytest.approx(b.value, abs=1e-9)


def test_solve_counted_damping_ladder_reaches_rows_that_oscillate_at_half_damping():
    """damping=(0.5, 0.2): the rows still oscillating after the 0.5 attempt are solved again
    at 0.2 (bit for bit as solve(0.2) on them), the rows converged earlier are untouched, and
    the ladder converges every row where 0.5 alone leaves some."""
    rng = np.random.default_rng(17)
    rbm = rbmviz.RBM(12, 6, seed=17)
    rbm.W[:] = rng.normal(0, 3.0, rbm.W.shape)                 # strong couplings
    rbm.b[:] = rng.normal(0, 1, 12)
    rbm.c[:] = rng.normal(0, 1, 6)
    V = (rng.random((40, 12)) < 0.5).astype(float)
    kw = dict(tol=1e-12, max_iter=1000)
    half = tap.solve_counted(rbm, V, damping=0.5, **kw)
    ladder, first_bad = tap.solve_counted(rbm, V, damping=(0.5, 0.2), return_fallback=True, **kw)
    stuck = half.not_converged
    assert 0 < stuck.size < len(V) and ladder.not_converged.size == 0
    done = half.converged
    for f in ("av", "ah", "n_iter"):
        np.testing.assert_array_equal(getattr(ladder, f)[done], getattr(half, f)[done])
    again = tap.solve(rbm, V[stuck], damping=0.2, tol=1e-12, max_iter=2500)  # 1000 × 0.5/0.2
    np.testing.assert_array_equal(ladder.av[stuck], again.av)
    np.testing.assert_array_equal(ladder.n_iter[stuck], again.n_iter)
    assert set(stuck) <= set(first_bad)                    # the undamped attempt failed there
    with pytest.raises(ValueError, match="damping"):
        tap.solve_counted(rbm, V, damping=(0.5, 1.5))
    with pytest.raises(ValueError, match="empty"):
        tap.solve_counted(rbm, V, damping=())


def test_damping_ladder_descends_to_its_floor_and_the_budget_grows_as_the_damping_shrinks():
    """damping_ladder: the training damping, then the rungs below it down to the floor;
    solve_counted gives a later attempt at damping d max_iter × d₁/d iterations (bit for bit
    solve(d) with that budget), or max_iter each with scale_iter=False."""
    assert tap.damping_ladder() == (0.5, 0.2, 0.1, 0.05)
    assert tap.damping_ladder(0.5, floor=0.2) == (0.5, 0.2)
    assert tap.damping_ladder(0.15) == (0.15, 0.1, 0.05)
    assert tap.damping_ladder(0.05) == (0.05,)
    with pytest.raises(ValueError, match="floor"):
        tap.damping_ladder(0.5, floor=0.0)
    rng = np.random.default_rng(17)
    rbm = rbmviz.RBM(12, 6, seed=17)
    rbm.W[:] = rng.normal(0, 3.0, rbm.W.shape)
    rbm.b[:] = rng.normal(0, 1, 12)
    rbm.c[:] = rng.normal(0, 1, 6)
    V = (rng.random((40, 12)) < 0.5).astype(float)
    half = tap.solve_counted(rbm, V, damping=0.5, tol=1e-12, max_iter=60)
    stuck = half.not_converged
    assert stuck.size
    for scale, budget in ((True, 300), (False, 60)):           # 60 × 0.5 / 0.1 = 300
        sol = tap.solve_counted(rbm, V, damping=(0.5, 0.1), tol=1e-12, max_iter=60,
                                scale_iter=scale)
        again = tap.solve(rbm, V[stuck], damping=0.1, tol=1e-12, max_iter=budget)
        np.testing.assert_array_equal(sol.n_iter[stuck], again.n_iter)
        np.testing.assert_array_equal(sol.av[stuck], again.av)
        assert sol.n_iter[stuck].max() <= budget
    scaled = tap.solve_counted(rbm, V, damping=(0.5, 0.1), tol=1e-12, max_iter=60)
    assert scaled.n_iter[stuck].max() > 60           # the grown budget was used
    assert scaled.not_converged.size < half.not_converged.size


def test_float32_products_reach_the_same_fixed_points():
    """products="float32": the products in float32, the rest in float64 — the fixed points of
    a converged run move by far less than a run stopped at 1e-8 resolves, and the free
    energies agree; refused for non-binary priors."""
    rbm = random_rbm(30, 12, scale=0.3, seed=7)
    V = _binary_rows(50, 30, 3)
    a = tap.solve(rbm, V, tol=1e-12, max_iter=5000)
    b = tap.solve(rbm, V, tol=1e-12, max_iter=5000, products="float32")
    assert a.not_converged.size == b.not_converged.size == 0
    assert b.av.dtype == np.float64
    np.testing.assert_allclose(b.av, a.av, atol=1e-5)
    np.testing.assert_allclose(b.log_z, a.log_z, rtol=1e-6)
    assert not np.array_equal(b.av, a.av)             # the float32 path did run
    with pytest.raises(ValueError, match="products"):
        tap.solve(rbm, V, products="float16")
    gb = rbmviz.RBM(6, 3, visible="truncated_gauss_bernoulli", seed=0)
    with pytest.raises(ValueError, match="binary models"):
        tap.solve(gb, np.zeros((2, 6)), products="float32")


# ------------------------------------------------------------------ the solve's own shortcuts
@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("with_field", [False, True])
def test_returned_fields_and_free_energies_are_those_of_the_returned_moments(order, with_field):
    """The visible fields come from each row's last products (written when the row
    finishes, whether it converged or hit max_iter); they equal the fields recomputed from
    the returned moments, row by row — also with a per-row visible field while the active
    set compacts its rows — and so do the free energies."""
    rbm = random_rbm(30, 12, scale=0.6, seed=5)
    X = _binary_rows(120, 30, 4)
    field = np.random.default_rng(2).normal(0, 0.7, X.shape) if with_field else None
    for tol, max_iter in ((1e-10, 400), (1e-300, 6)):
        sol = tap.solve(rbm, X, order=order, tol=tol, max_iter=max_iter, visible_field=field)
        if tol > 1e-300:
            assert len(set(sol.n_iter.tolist())) > 3           # rows finish at different iterations
        W = np.ascontiguousarray(rbm.W)
        Bv, Av, Bh, Ah = _iteration._fields(W, sol.av, sol.cv, sol.ah, sol.ch, order, field)
        for got, want in ((sol.Bv, Bv), (sol.Av, Av), (sol.Bh, Bh), (sol.Ah, Ah)):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)
        log_z = tap.free_energy_binary(rbm, sol.av, sol.ah, order=order, visible_field=field)
        np.testing.assert_array_equal(sol.log_z, log_z)
        if order == 2:
            np.testing.assert_allclose(_sig(rbm.b + sol.Bv - sol.Av / 2)[sol.converged],
                                       sol.av[sol.converged], atol=1e-4)


def test_visible_field_rows_stay_with_their_solutions():
    """A per-row visible field is compacted with the active set; the fields and log Z of
    every row use that row's own field (the same as solving it alone with shifted biases)."""
    rbm = random_rbm(30, 12, scale=0.3, seed=1)
    rng = np.random.default_rng(0)
    X = _binary_rows(200, 30, 1)
    F = rng.normal(0, 0.5, X.shape)
    sol = tap.solve(rbm, X, visible_field=F, tol=1e-20, max_iter=3000)
    assert sol.converged.all() and len(set(sol.n_iter.tolist())) > 3
    np.testing.assert_allclose(_sig(rbm.b + sol.Bv - sol.Av / 2), sol.av, atol=1e-9)
    for i in (0, 57, 199):
        shifted = rbm.copy()
        shifted.b = rbm.b + F[i]
        one = tap.solve(shifted, X[i:i + 1], tol=1e-20, max_iter=3000)
        assert one.log_z[0] == pytest.approx(sol.log_z[i], abs=1e-9)


def test_entropy_rows_matches_math_log():
    """The branch-free binary entropy: every term within a few ulp of math.log's, 0 ln 0 = 0,
    subnormal and near-1 means included; row sums within rounding of the sequential sum."""
    import math

    from rbmviz.kernels import tap as kt
    rng = np.random.default_rng(0)
    special = [0.0, 1.0, 0.5, 5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 1e-17, 1e-5,
               0.29289321881345254, 0.2928932188134525, 0.7071067811865476, 0.999999, 1 - 1e-16]
    m = np.concatenate([rng.random(5000), 10.0 ** rng.uniform(-300, 0, 5000),
                        1 - 10.0 ** rng.uniform(-16, 0, 5000), special])

    def term(x):
        return -((x * math.log(x) if x > 0 else 0.0) + ((1 - x) * math.log1p(-x) if x < 1 else 0.0))
    want = np.array([term(x) for x in m])
    got = np.empty(m.size)
    kt.entropy_rows(m[:, None], got, np.empty((0, 1)))
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-300)
    X = rng.random((40, 784))
    rows, nu = np.empty(40), np.empty_like(X)
    kt.entropy_rows(X, rows, nu)
    np.testing.assert_allclose(rows, [sum(term(x) for x in r) for r in X], rtol=1e-14)
    np.testing.assert_allclose(nu, X - X * X, rtol=0, atol=1e-16)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_first_iteration_shortcuts_change_nothing(order):
    """The first iteration takes the hidden products a^v(0) W from the start's σ(c + Wᵀx)
    and knows c^v(0) W∘W = 0: the same iterates, bit for bit, as multiplying."""
    rbm = random_rbm(25, 9, scale=0.8, seed=7)
    X = _binary_rows(30, 25, 3)
    vis, hid = inf._layers(rbm)
    W = np.ascontiguousarray(rbm.W)
    ah0 = _sig(X @ W + rbm.c)
    for max_iter in (1, 2, 50):
        plain = inf._solve_binary(W, vis.U, hid.U, order, 0.5, 1e-12, max_iter, X, ah0, None)
        given = inf._solve_binary(W, vis.U, hid.U, order, 0.5, 1e-12, max_iter, X, ah0, None,
                                  "float64", None, X @ W)
        for a, b in zip(plain, given):
            np.testing.assert_array_equal(a, b)
