"""TAP training (Tramel et al. 2018, Alg. 2, eqs. 39–42; Gabrié et al. 2015 EMF orders 1–3)."""
import numpy as np
import pytest

import rbmviz
from rbmviz import units
from rbmviz.algorithms import tap as tap_alg
from rbmviz.tap import solve


def _model(nv, nh, visible="bernoulli", scale=0.5, seed=0, **kw):
    rng = np.random.default_rng(seed)
    rbm = rbmviz.RBM(nv, nh, init="zeros", visible=units.make(visible, nv, **kw))
    rbm.set_params(W=rng.normal(0, scale, (nv, nh)), b=rng.normal(0, scale, nv),
                   c=rng.normal(0, scale, nh))
    return rbm


def _data(rbm, n, seed=1):
    rng = np.random.default_rng(seed)
    vp = getattr(rbm, "visible_prior", None)
    if vp is None or vp.name == "bernoulli":
        return (rng.random((n, rbm.n_visible)) < 0.5).astype(float)
    X = rng.random((n, rbm.n_visible))
    if vp.name == "truncated_gauss_bernoulli":
        X[rng.random(X.shape) < 0.4] = 0.0
    return X


def _tap_ll(rbm, X, order, tol=1e-24):
    """Eq. (39) with all K = M data-anchored runs (multiplicity weighted), fixed point re-solved."""
    vp, hp = tap_alg._priors(rbm)
    sol = solve(rbm, X, order=order, damping=1.0, tol=tol, max_iter=20000)
    assert sol.converged.all()
    data = vp.log_prior(rbm.b, X).sum(1) + hp.log_z(rbm.c, X @ rbm.W, 0 * (X @ rbm.W)).sum(1)
    return float(data.mean() + sol.free_energy.mean())


def _flat_params(rbm):
    """(name, array, index) of every scalar parameter: W, b, c and the visible prior's V, rho."""
    out = [("W", rbm.W, i) for i in np.ndindex(rbm.W.shape)]
    out += [("b", rbm.b, i) for i in np.ndindex(rbm.b.shape)]
    out += [("c", rbm.c, i) for i in np.ndindex(rbm.c.shape)]
    vp = getattr(rbm, "visible_prior", None)
    for name in getattr(vp, "param_names", ()):
        out += [(name, None, i) for i in np.ndindex(getattr(vp, name).shape)]
    return out


def _shift(rbm, name, arr, idx, h):
    if arr is not None:
        arr[idx] += h
    else:
        vp = rbm.visible_prior
        val = getattr(vp, name).copy()
        val[idx] += h
        setattr(vp, name, val)


@pytest.mark.parametrize("visible,order,kw", [
    ("bernoulli", 1, {}), ("bernoulli", 2, {}), ("bernoulli", 3, {}),
    ("truncated_gaussian", 2, {"V": 2.0}),
    ("truncated_gauss_bernoulli", 2, {"V": 1.5, "rho": 0.3}),
])
def test_gradient_equals_finite_differences_of_tap_ll(visible, order, kw):
    """Eqs. (40)–(42) (and the EMF gradients of orders 1, 3) are the derivatives of eq. (39)
    with the fixed points re-solved (tap.md B.6: to ≤ 4e-10)."""
    rbm = _model(5, 4, visible, scale=0.4, seed=2, **kw)
    X = _data(rbm, 7)
    sol = solve(rbm, X, order=order, damping=1.0, tol=1e-24, max_iter=20000)
    assert sol.converged.all()
    g = tap_alg.tap_gradient(rbm, X, sol, order=order)
    h = 1e-5
    worst = 0.0
    for name, arr, idx in _flat_params(rbm):
        _shift(rbm, name, arr, idx, h)
        up = _tap_ll(rbm, X, order)
        _shift(rbm, name, arr, idx, -2 * h)
        down = _tap_ll(rbm, X, order)
        _shift(rbm, name, arr, idx, h)
        fd = (up - down) / (2 * h)
        an = g[name][idx] if name in ("W", "b", "c") else g["visible"][name][idx]
        worst = max(worst, abs(fd - an))
    # measured: ≤ 1e-10 (binary, TG); 1e-9 for TGB (FD truncation in ρ)
    assert worst < (4e-9 if visible == "truncated_gauss_bernoulli" else 4e-10), worst
    if visible == "bernoulli":
        assert g["visible"] == {} and g["hidden"] == {}
    else:
        assert set(g["visible"]) == set(rbm.visible_prior.param_names)


def test_one_update_from_zero_weights_closed_form():
    """W = 0: a^v = σ(b) (prior mean), a^h = σ(c); ΔW = (x̄ − σ(b)) σ(c)ᵀ, Δb = x̄ − σ(b), Δc = 0."""
    rbm = rbmviz.RBM(6, 3, init="zeros")
    rng = np.random.default_rng(0)
    rbm.set_params(b=rng.normal(0, 1, 6), c=rng.normal(0, 1, 3))
    X = _data(rbm, 10)
    b0, c0 = rbm.b.copy(), rbm.c.copy()
    alg = tap_alg.TAP(learning_rate=0.3, momentum=0.5, weight_decay=0.1, tol=1e-26, max_iter=500)
    alg.setup(rbm, X, 10)
    alg.update(rbm, X)
    s = lambda z: 1 / (1 + np.exp(-z))
    d = X.mean(0) - s(b0)
    assert np.allclose(rbm.W, 0.3 * np.outer(d, s(c0)), atol=1e-13, rtol=0)
    assert np.allclose(rbm.b, b0 + 0.3 * d, atol=1e-13, rtol=0)
    assert np.allclose(rbm.c, c0, atol=1e-13, rtol=0)
    assert alg.updates == 1 and alg.last_n_solutions == 10 and alg.last_not_converged == 0


def test_one_update_from_zero_weights_truncated_gaussian():
    """Same for truncated-Gaussian visibles: a^v, c^v = the prior's mean and variance; ΔV is
    −½(⟨x²⟩_data − ⟨x²⟩_prior) (tap-priors.md §1)."""
    rbm = _model(5, 3, "truncated_gaussian", V=2.0)
    rbm.W[:] = 0.0
    X = _data(rbm, 8)
    b0, c0, V0 = rbm.b.copy(), rbm.c.copy(), rbm.visible_prior.V.copy()
    m1, m2 = rbm.visible_prior.prior_moments(b0)
    alg = tap_alg.TAP(learning_rate=0.2, tol=1e-26, max_iter=500)
    alg.setup(rbm, X, 8)
    alg.update(rbm, X)
    s = 1 / (1 + np.exp(-c0))
    assert np.allclose(rbm.W, 0.2 * np.outer(X.mean(0) - m1, s), atol=1e-12, rtol=0)
    assert np.allclose(rbm.b, b0 + 0.2 * (X.mean(0) - m1), atol=1e-12, rtol=0)
    assert np.allclose(rbm.visible_prior.V, V0 - 0.1 * ((X * X).mean(0) - m2), atol=1e-12, rtol=0)
    assert np.allclose(rbm.c, c0, atol=1e-13, rtol=0)


@pytest.mark.parametrize("form", ["printed", "heavy_ball"])
def test_momentum_forms(form):
    """printed: W ← W + γ(ΔW_t − εW) + η ΔW_{t−1};  heavy ball: v ← ηv + γ(ΔW − εW), W ← W + v."""
    rbm = _model(6, 4, scale=0.3, seed=5)
    X = _data(rbm, 12)
    gam, eps, eta = 0.1, 0.05, 0.7
    alg = tap_alg.TAP(learning_rate=gam, weight_decay=eps, momentum=eta, momentum_form=form,
                      tol=1e-12)
    alg.setup(rbm, X, 12)
    prev_step = prev_g = np.zeros_like(rbm.W)
    for _ in range(3):
        sol = solve(rbm, X, damping=0.5, tol=1e-12, max_iter=1000)
        g = tap_alg.tap_gradient(rbm, X, sol)["W"]
        W0 = rbm.W.copy()
        alg.update(rbm, X)
        if form == "printed":
            expect = gam * (g - eps * W0) + eta * prev_g
        else:
            expect = eta * prev_step + gam * (g - eps * W0)
        assert np.allclose(rbm.W - W0, expect, atol=1e-14, rtol=1e-12)
        prev_step, prev_g = rbm.W - W0, g


def test_training_increases_exact_log_likelihood():
    X = rbmviz.datasets.bars_and_stripes(3)
    rbm = rbmviz.RBM(9, 6, seed=0, scale=0.1, data=X)
    df = rbmviz.train(rbm, X, "tap", epochs=60, batch_size=2, learning_rate=0.1,
                      momentum=0.5, momentum_form="printed", eval_every=20, metrics=["train_ll"])
    ll = df.train_ll.to_numpy()
    assert ll[-1] > ll[0] + 0.4, ll
    assert np.all(np.diff(ll) > 0), ll
    assert df.gibbs_steps.iloc[-1] > df.updates.iloc[-1]       # TAP iterations as compute axis


def test_seeds_reproduce_bit_for_bit_and_unique_option():
    X = rbmviz.datasets.bars_and_stripes(3)

    def run(seed, **kw):
        rbm = rbmviz.RBM(9, 5, seed=1, scale=0.1)
        rbmviz.train(rbm, X, "tap", epochs=8, batch_size=4, learning_rate=0.2, seed=seed,
                     momentum=0.5, n_solutions=3, metrics=["weight_norm"], **kw)
        return rbm
    a, b, c = run(3), run(3), run(4)
    assert a == b
    assert not np.array_equal(a.W, c.W)
    with pytest.warns(RuntimeWarning, match="counted many times"):   # unique at tol 1e-8
        u1, u2 = run(3, unique=True, order=3), run(3, unique=True, order=3)
    assert u1 == u2 and not np.array_equal(u1.W, a.W)


def test_non_converged_runs_counted_and_excluded():
    rbm = _model(6, 4, scale=1.5, seed=3)
    X = _data(rbm, 8)
    alg = tap_alg.TAP(learning_rate=0.01, max_iter=1, tol=1e-12)
    alg.setup(rbm, X, 8)
    alg.update(rbm, X)
    assert alg.last_not_converged == 8 and alg.not_converged_total == 8
    assert alg.fallback_updates == 1 and alg.gibbs_steps_per_update == 1
    alg2 = tap_alg.TAP(learning_rate=0.01, max_iter=500, tol=1e-10)
    alg2.setup(rbm, X, 8)
    sol = solve(rbm, X, tol=1e-10, max_iter=500)
    alg2.update(rbm, X)
    assert alg2.last_not_converged == int((~sol.converged).sum())
    assert alg2.last_n_solutions == int(sol.converged.sum())


def test_prior_parameters_stay_valid():
    rbm = _model(4, 3, "truncated_gauss_bernoulli", V=tap_alg.V_MIN * 1.01, rho=1e-5)
    X = _data(rbm, 6)
    X[:, 0] = 0.0                      # unit 0 is always zero: ρ₀ is pushed towards 0
    X[:, 1] = 0.5                      # a constant pixel: V₁ is pushed up, others may go down
    alg = tap_alg.TAP(learning_rate=5.0)
    alg.setup(rbm, X, 6)
    for _ in range(3):
        alg.update(rbm, X)
    vp = rbm.visible_prior
    assert np.all(vp.V >= tap_alg.V_MIN) and np.all((vp.rho >= tap_alg.RHO_MIN) & (vp.rho <= tap_alg.RHO_MAX))
    assert 0 < vp.rho[0] < 1e-5                      # moved towards the data's zero fraction


def test_rho_steps_on_the_logit_scale_and_rare_pixels_stay_put():
    """A pixel that is never non-zero gets ρ ~ 1e-300 from the data; its ρ-gradient
    (π_data − π_model)/(ρ(1 − ρ)) is then ~1e300.  The update takes its step in logit ρ
    (gradient π_data − π_model), so ρ barely moves and the TAP log-likelihood of the batch
    rises for a small step (a step in ρ itself threw it to 1 and cost ~320 nats per row)."""
    from rbmviz.reproduce.tap_run import evaluate_tap
    from rbmviz.tap.presets import init_priors_from_data
    rng = np.random.default_rng(3)
    X = np.where(rng.random((40, 12)) < 0.3, rng.uniform(0.2, 1.0, (40, 12)), 0.0)
    X[:, 0] = 0.0                                    # never non-zero (an MNIST border pixel)
    X[:, 1] = np.where(rng.random(40) < 0.95, 0.999, 0.0)    # nearly always near the top
    rbm = rbmviz.RBM(12, 4, visible="truncated_gauss_bernoulli", scale=0.05, seed=1)
    init_priors_from_data(rbm, X)
    vp = rbm.visible_prior
    rho0 = vp.rho.copy()
    assert rho0.min() < 1e-6                         # below the old guard (1e-6) already
    before = evaluate_tap(rbm, X)["ll"]
    sol = solve(rbm, X, damping=0.5, tol=1e-12)
    g = tap_alg.tap_gradient(rbm, X, sol)
    lr = 1e-3
    expect = rho0.copy()
    z = np.log(rho0) - np.log1p(-rho0) + lr * rho0 * (1 - rho0) * g["visible"]["rho"]
    expect = 1 / (1 + np.exp(-z))
    alg = tap_alg.TAP(learning_rate=lr, momentum=0.0, n_solutions=40)
    alg.setup(rbm, X, 40)
    alg.update(rbm, X)
    np.testing.assert_allclose(vp.rho, np.clip(expect, tap_alg.RHO_MIN, tap_alg.RHO_MAX), rtol=1e-6)
    assert np.all(np.abs(np.log(vp.rho) - np.log(rho0)) < 0.01)
    assert evaluate_tap(rbm, X)["ll"] > before


def test_bad_input():
    rbm = rbmviz.RBM(4, 3, seed=0)
    Xr = np.full((5, 4), 0.5)
    with pytest.raises(ValueError, match="binar|support"):
        tap_alg.TAP().setup(rbm, Xr, 5)
    tg = _model(4, 3, "truncated_gaussian")
    with pytest.raises(ValueError, match="outside"):
        tap_alg.TAP().setup(tg, np.full((5, 4), 1.5), 5)
    with pytest.raises(ValueError, match="order"):
        tap_alg.TAP(order=3).setup(tg, np.full((5, 4), 0.5), 5)
    X = (Xr > 0).astype(float)
    with pytest.raises(ValueError, match="n_solutions"):
        tap_alg.TAP(n_solutions=0)
    with pytest.raises(ValueError, match="batch"):
        tap_alg.TAP(n_solutions=6).setup(rbm, X, 5)
    with pytest.raises(ValueError, match="batch_size"):
        tap_alg.TAP().setup(rbm, X, 0)
    with pytest.raises(ValueError, match="momentum_form"):
        tap_alg.TAP(momentum_form="nesterov")
    with pytest.raises(ValueError, match="learning_rate_final"):
        tap_alg.TAP(learning_rate_final=1e-5)
    with pytest.raises(ValueError, match="damping"):
        tap_alg.TAP(damping=0.0)
    assert rbmviz.algorithms.get("tap") is tap_alg.TAP


def test_learning_rate_decay_is_geometric():
    rbm = rbmviz.RBM(4, 2, seed=0)
    X = (np.random.default_rng(0).random((20, 4)) < 0.5).astype(float)
    alg = tap_alg.TAP(learning_rate=1e-2, learning_rate_final=1e-5, decay_epochs=3)
    alg.setup(rbm, X, 10)                       # 2 batches per epoch
    rates = []
    for _ in range(10):
        rates.append(alg.current_learning_rate())
        alg.update(rbm, X[:10])
    assert np.allclose(rates, [1e-2, 1e-2, 1e-3, 1e-3, 1e-4, 1e-4, 1e-5, 1e-5, 1e-5, 1e-5], rtol=1e-12)


def test_run_records_tap_ll_metric():
    """The run loop's ``tap_ll`` is eq. (39) on the first ``pl_rows`` training rows; for weak
    couplings it is close to the exact log-likelihood (TAP error O(W³), tap.md B.3)."""
    import warnings
    from rbmviz import tap
    X = rbmviz.datasets.bars_and_stripes(3)
    rbm = rbmviz.RBM(9, 4, seed=0, scale=0.05, data=X)
    run = rbmviz.runs.Run(rbm, X, "tap", epochs=2, batch_size=7, learning_rate=0.05,
                          metrics=["train_ll", "tap_ll"], pl_rows=10, order=3,
                          eval_every=1)
    recs = list(run)
    assert [r["epoch"] for r in recs] == [0, 1, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = tap.log_likelihood(rbm, X[:10], order=3)
    assert recs[-1]["tap_ll"] == ref
    exact = rbmviz.evaluate.log_likelihood_exact(rbm, X[:10])
    assert abs(recs[-1]["tap_ll"] - exact) < 1e-4


@pytest.mark.parametrize("name,kw", [("truncated_gaussian", {"V": 1.7}),
                                     ("truncated_gauss_bernoulli", {"V": 0.8, "rho": 0.2}),
                                     ("bernoulli", {})])
def test_kernel_grad_log_z_matches_units(name, kw):
    """The kernel path of the negative phase equals rbmviz.units' numpy gradients (eqs. 85–86, 107)."""
    rng = np.random.default_rng(0)
    prior = units.make(name, 6, **kw)
    if name == "truncated_gauss_bernoulli":
        prior.rho = rng.uniform(0.05, 0.95, 6)
    U = rng.normal(0, 1, 6)
    B, A = rng.normal(0, 3, (9, 6)), -rng.uniform(0, 4, (9, 6))
    fast, ref = tap_alg.grad_log_z_rows(prior, U, B, A), prior.grad_log_z(U, B, A)
    assert set(fast) == set(ref)
    for k in ref:
        assert np.allclose(fast[k], ref[k], rtol=1e-11, atol=1e-12), k


# ---------------------------------------------------------------------------- Table 1 presets
def test_presets_table1_values():
    from rbmviz.tap import presets
    P = presets.PRESETS
    assert sorted(P) == sorted(["binary-mnist-25", "binary-mnist-50", "binary-mnist-100",
                                "binary-mnist-500", "real-mnist-100", "real-mnist-500", "cbcl-256"])
    b, r, c = P["binary-mnist-100"], P["real-mnist-500"], P["cbcl-256"]
    assert (b.n_visible, b.batch_size, b.n_solutions, b.learning_rate, b.weight_decay, b.momentum) == \
        (784, 100, 100, 0.005, 0.001, 0.5)
    assert (r.visible, r.learning_rate, r.learning_rate_final, r.weight_decay) == \
        ("truncated_gauss_bernoulli", 1e-2, 1e-5, 0.001)
    assert (c.n_visible, c.n_hidden, c.batch_size, c.n_solutions, c.visible, c.weight_decay) == \
        (361, 256, 20, 20, "truncated_gaussian", 0.01)
    alg = rbmviz.algorithms.create("tap", **r.algorithm_settings())
    assert alg.decay_epochs == r.epochs and alg.n_solutions == 100
    assert presets.get("cbcl-256", n_hidden=8).n_hidden == 8
    with pytest.raises(TypeError, match="no field"):
        presets.get("cbcl-256", hidden_units=8)
    with pytest.raises(ValueError, match="preset"):
        presets.get("cifar-10")


def test_init_priors_from_data_matches_the_data_moments():
    """The initial model (W = 0) has the data's mean and, for Gauss–Bernoulli units, the
    data's fraction of non-zero values: π₀ = σ(ln G(V, U) + logit ρ) (eq. 95), not ρ."""
    from rbmviz.tap.presets import init_priors_from_data
    rng = np.random.default_rng(0)
    X = rng.uniform(0.2, 0.6, (500, 3))
    X[:250, 2] = 0.0
    X[rng.random(500) < 0.8, 1] = 0.0          # 20 % non-zero, like MNIST's 20.8 %
    tg = rbmviz.RBM(3, 2, visible="truncated_gaussian")
    init_priors_from_data(tg, X)
    assert np.allclose(tg.visible_prior.V, 1 / X.var(0))
    m1, m2 = tg.visible_prior.prior_moments(tg.b)
    np.testing.assert_allclose(m1, X.mean(0), rtol=1e-9)       # the truncated mean, eq. (78)
    tgb = rbmviz.RBM(3, 2, visible="truncated_gauss_bernoulli")
    init_priors_from_data(tgb, X)
    vp = tgb.visible_prior
    frac = np.clip((X != 0).mean(0), 1e-3, 1 - 1e-3)
    np.testing.assert_allclose(vp._pi0(tgb.b), frac, rtol=1e-9)
    m1, _ = vp.prior_moments(tgb.b)
    nz_mean = np.array([X[X[:, j] != 0, j].mean() for j in range(3)])
    np.testing.assert_allclose(m1, frac * nz_mean, rtol=1e-9)
    np.testing.assert_allclose(m1[1:], X.mean(0)[1:], rtol=1e-9)
    # the slab is not the non-zero fraction: rho != frac, and setting rho = frac is far off
    assert not np.allclose(vp.rho, frac, atol=0.05)
    wrong = units.make("truncated_gauss_bernoulli", 3, rho=frac, V=vp.V)
    assert wrong._pi0(tgb.b)[1] > 0.5
    bern = rbmviz.RBM(3, 2)
    init_priors_from_data(bern, (X > 0.4).astype(float))
    m = np.clip((X > 0.4).mean(0), 1e-3, 1 - 1e-3)
    assert np.allclose(bern.b, np.log(m / (1 - m)))


def test_init_priors_real_mnist_moments():
    """Real-valued MNIST (20.8 % non-zero pixels in the issue's sample): the initial
    Gauss–Bernoulli model's non-zero fraction and mean are the data's (they were 1.0 and
    0.775 against 0.208 and 0.165 when ρ was set to the non-zero fraction)."""
    from rbmviz import datasets
    from rbmviz.tap.presets import init_priors_from_data
    if not datasets.available("mnist"):
        pytest.skip("MNIST files not available (RBMVIZ_DATA)")
    X = datasets.mnist("train", binarize=None, limit=1000)
    rbm = rbmviz.RBM(784, 5, visible="truncated_gauss_bernoulli")
    init_priors_from_data(rbm, X)
    vp = rbm.visible_prior
    m1, _ = vp.prior_moments(rbm.b)
    assert abs(m1.mean() - X.mean()) < 1e-3
    assert abs(vp._pi0(rbm.b).mean() - (X != 0).mean()) < 2e-3
    np.testing.assert_allclose(m1, X.mean(0), atol=2e-3)


@pytest.mark.parametrize("name", ["binary-mnist-25", "real-mnist-100", "cbcl-256"])
def test_build_preset_and_one_update(name):
    from rbmviz import datasets
    from rbmviz.tap import presets
    p = presets.get(name)
    if not datasets.available("cbcl" if p.dataset == "cbcl" else "mnist"):
        pytest.skip("data set files not available (RBMVIZ_DATA)")
    data, rbm, settings = presets.build(name, limit=2 * p.batch_size, n_hidden=10, seed=1)
    alg = rbmviz.algorithms.create("tap", **settings)
    assert data.shape == (2 * p.batch_size, p.n_visible) and rbm.n_hidden == 10
    assert rbm.visible == p.visible and rbm.hidden == "bernoulli"
    if p.dataset == "binary-mnist":
        assert set(np.unique(data)) == {0.0, 1.0}
    else:
        assert data.min() >= 0 and data.max() <= 1 and not np.all(np.isin(data, [0, 1]))
    assert abs(rbm.W.std() - p.init_scale) < 3e-4
    W0 = rbm.W.copy()
    alg.setup(rbm, data, p.batch_size)
    alg.update(rbm, data[: p.batch_size])
    assert alg.last_not_converged == 0 and not np.array_equal(rbm.W, W0)
    assert np.isfinite(rbm.W).all() and np.isfinite(rbm.b).all()


def test_diverging_tap_run_stops():
    X = rbmviz.datasets.bars_and_stripes(3)
    rbm = rbmviz.RBM(9, 4, seed=0, scale=0.5)
    with pytest.raises(rbmviz.runs.RunDiverged, match="max_weight") as err:
        rbmviz.train(rbm, X, "tap", epochs=50, batch_size=7, learning_rate=500.0, max_weight=50.0,
                     metrics=["weight_norm"], max_iter=50)
    assert err.value.epoch == 1                     # checked after every update, stops in epoch 1


def test_run_trains_real_valued_visibles_and_reports_tap_fields():
    """The run loop takes real data for truncated-Gaussian visibles (checked against the
    prior's support), defaults to the TAP metrics, and records TAP's convergence counters."""
    import rbmviz
    from rbmviz.runs import Run
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(40, 6))
    rbm = rbmviz.RBM(6, 3, visible="truncated_gaussian", seed=1)
    run = Run(rbm, X, "tap", epochs=2, batch_size=20, learning_rate=0.01, momentum=0.0)
    recs = list(run)
    assert run.metrics == ["tap_ll", "weight_norm"]
    assert all(np.isfinite(r["tap_ll"]) for r in recs)
    assert {"tap_not_converged", "tap_fallback_updates", "tap_solutions"} <= set(recs[-1])
    assert recs[-1]["tap_solutions"] >= 1
    with pytest.raises(ValueError, match="outside"):
        Run(rbmviz.RBM(6, 3, visible="truncated_gaussian"), X * 3, "tap", epochs=1)
    with pytest.raises(ValueError, match="Bernoulli"):
        Run(rbmviz.RBM(6, 3, visible="truncated_gaussian"), X, "tap", epochs=1,
            metrics=["pseudo_ll"])


def test_fixed_iterations_use_every_run_at_its_t_th_iterate():
    """``fixed_iter=T`` (App. D, Fig. 10): every run stops after exactly T iterations and all K
    runs enter the gradient, whatever tol/max_iter say; with T large on weak couplings it is
    the update of iterating to convergence."""
    rbm = _model(6, 4, scale=1.5, seed=3)
    X = _data(rbm, 8)

    def step(**kw):
        r = rbm.copy()
        alg = tap_alg.TAP(learning_rate=1.0, momentum=0.0, weight_decay=0.0, **kw)
        alg.setup(r, X, 8)
        alg.update(r, X)
        return r.W - rbm.W, alg
    for T in (1, 3):
        dW, alg = step(fixed_iter=T, tol=1e-3, max_iter=1)
        sol = solve(rbm, X, tol=np.finfo(float).tiny, max_iter=T)
        assert sol.n_iter.max() == T and not sol.converged.any()
        g = tap_alg.tap_gradient(rbm, X, sol, np.arange(8), order=2)
        np.testing.assert_allclose(dW, g["W"], rtol=1e-12, atol=1e-14)
        assert alg.last_n_solutions == 8 and alg.not_converged_total == 0
        assert alg.fallback_updates == 0 and alg.gibbs_steps_per_update == T
    one, _ = step(fixed_iter=1)
    three, _ = step(fixed_iter=3)
    assert np.abs(one - three).max() > 1e-3                  # T matters on strong couplings
    weak = _model(6, 4, scale=0.1, seed=3)
    rbm = weak
    conv, alg = step(tol=1e-24, max_iter=5000)
    assert alg.last_n_solutions == 8
    fixed, _ = step(fixed_iter=2000)
    np.testing.assert_allclose(fixed, conv, rtol=0, atol=1e-12)
    with pytest.raises(ValueError):
        tap_alg.TAP(fixed_iter=0)
