"""S-DCP, CS-DCP, CG and SSD (reference/dc-programming.md, centering.md, ssd.md): identities
with CD, updates against independent reference implementations and exact expectations,
centering equivalences, the #-operator, learning on bars & stripes, equal-compute
accounting, reproducibility and validation."""
import math

import numba
import numpy as np
import pytest
from brute import random_rbm

import rbmviz
from rbmviz import algorithms
from rbmviz import evaluate as ev
from rbmviz.algorithms.centered import (centered_energy, reparameterise, to_centered,
                                        to_normal)
from rbmviz.algorithms.dcp import resolve_budget
from rbmviz.algorithms.ssd import bound_learning_rate, sharp_matrix, sharp_vector
from rbmviz.runs import Run

BS = rbmviz.datasets.bars_and_stripes(3)
NEW = ("sdcp", "csdcp", "cg", "ssd")


def _params(rbm):
    return np.concatenate([p.ravel() for p in rbm.params])


def _close(r1, r2, atol=1e-12):
    np.testing.assert_allclose(_params(r1), _params(r2), rtol=0, atol=atol)


# ---------------------------------------------------------------------------- identities

@pytest.mark.parametrize("batch", [14, 5])
def test_sdcp_with_one_inner_step_is_cd(batch):
    """d = 1: S-DCP's single inner step from the data is CD-K′ — same draws, same step."""
    r_cd, r_dc = random_rbm(9, 4, 0.7, seed=1), random_rbm(9, 4, 0.7, seed=1)
    cd = algorithms.create("cd", k=3, learning_rate=0.2, seed=7)
    dc = algorithms.create("sdcp", d=1, k_inner=3, learning_rate=0.2, seed=7)
    cd.setup(r_cd, BS, batch)
    dc.setup(r_dc, BS, batch)
    rng = np.random.default_rng(0)
    for _ in range(40):
        rows = rng.permutation(14)[:batch]
        cd.update(r_cd, BS[rows])          # CD's BLAS path
        dc.update(r_dc, BS[rows])
    assert cd.counter == dc.counter == 40 * 2 * 3
    _close(r_cd, r_dc, atol=1e-12)


def test_csdcp_with_frozen_zero_offsets_is_sdcp():
    r1, r2 = random_rbm(9, 4, 0.5, seed=2), random_rbm(9, 4, 0.5, seed=2)
    s = algorithms.create("sdcp", k=12, learning_rate=0.3, seed=3)
    c = algorithms.create("csdcp", k=12, learning_rate=0.3, seed=3, nu_mu=0.0, nu_lambda=0.0)
    s.setup(r1, BS, 14)
    c.setup(r2, BS, 14)
    c.mu[:] = 0.0
    c.lam[:] = 0.0
    order = np.tile(np.arange(14), (30, 1))
    s.train_epochs(r1, BS, order, np.array([0, 14]))
    c.train_epochs(r2, BS, order, np.array([0, 14]))
    _close(r1, r2)
    assert not np.any(c.mu) and not np.any(c.lam)


def test_cg_with_frozen_zero_offsets_is_cd():
    r1, r2 = random_rbm(9, 4, 0.5, seed=4), random_rbm(9, 4, 0.5, seed=4)
    cd = algorithms.create("cd", k=5, learning_rate=0.3, seed=9)
    cg = algorithms.create("cg", k=5, learning_rate=0.3, seed=9, nu_mu=0.0, nu_lambda=0.0)
    cd.setup(r1, BS, 7)
    cg.setup(r2, BS, 7)
    cg.mu[:] = 0.0
    cg.lam[:] = 0.0
    for e in range(30):
        perm = np.random.default_rng(e).permutation(14)
        for half in (perm[:7], perm[7:]):
            cd.update(r1, BS[half])
            cg.update(r2, BS[half])
    _close(r1, r2)


# ---------------------------------------------------------------------------- S-DCP update

def _reference_sdcp_update(rbm, X, d, k_inner, lr, seed, counter, accumulate=False):
    """Alg. 3 written out with the model's own Gibbs sampler (same counter convention):
    ∇g once at θ⁽ᵗ⁾, chains carried across inner steps, the step of each inner iteration
    computed afresh (``accumulate=True``: the printed listing, Δθ never reset)."""
    m = rbm.copy()
    n = len(X)
    P0 = m.hidden_probabilities(X)
    G = (X.T @ P0 / n, X.mean(0), P0.mean(0))
    V = X.copy()
    acc = [np.zeros_like(p) for p in m.params]
    for l in range(d):
        V = m.gibbs(V, k=k_inner, seed=seed, counter=counter + 2 * l * k_inner)
        Pn = m.hidden_probabilities(V)
        step = [G[0] - V.T @ Pn / n, G[1] - V.mean(0), G[2] - Pn.mean(0)]
        for a, s in zip(acc, step):
            a += s
        for p, s in zip(m.params, acc if accumulate else step):
            p += lr * s
    return m


def test_sdcp_update_matches_the_corrected_algorithm_3():
    rbm = random_rbm(9, 4, 0.8, seed=5)
    alg = algorithms.create("sdcp", d=3, k_inner=2, learning_rate=0.1, seed=11)
    alg.setup(rbm, BS, 14)
    alg.counter = 40                                   # anywhere in the stream
    before = rbm.copy()
    alg.update(rbm, BS)
    ref = _reference_sdcp_update(before, BS, 3, 2, 0.1, alg.gibbs_seed, 40)
    _close(rbm, ref, atol=1e-12)
    printed = _reference_sdcp_update(before, BS, 3, 2, 0.1, alg.gibbs_seed, 40, accumulate=True)
    assert np.abs(_params(printed) - _params(rbm)).max() > 1e-3   # the erratum matters
    assert alg.counter == 40 + 2 * 6 and alg.updates == 1 and alg.inner_steps == 3
    assert alg.gibbs_steps == 6


# ---------------------------------------------------------------------------- centering

def test_centered_energy_equals_normal_energy_up_to_a_constant():
    rng = np.random.default_rng(0)
    rbm = random_rbm(5, 3, 1.0, seed=6)
    mu, lam = rng.random(5), rng.random(3)
    W, bc, cc = to_centered(*rbm.params, mu, lam)
    V, H = ev.all_states(5), ev.all_states(3)
    VV, HH = np.repeat(V, len(H), 0), np.tile(H, (len(V), 1))
    diff = centered_energy(VV, HH, W, bc, cc, mu, lam) - rbm.energy(VV, HH)
    assert np.ptp(diff) < 1e-12
    # and the round trip
    W2, b2, c2 = to_normal(W, bc, cc, mu, lam)
    np.testing.assert_allclose(b2, rbm.b, atol=1e-14)
    np.testing.assert_allclose(c2, rbm.c, atol=1e-14)


def test_reparameterisation_keeps_the_model():
    """Errata #3 (corrected orientation): moving the offsets with b̃ += ν_λ W(λ_b − λ),
    c̃ += ν_μ Wᵀ(μ_b − μ) leaves p(v) unchanged to machine precision."""
    rng = np.random.default_rng(1)
    rbm = random_rbm(6, 4, 1.0, seed=7)
    mu, lam = rng.random(6), rng.random(4)
    W, bc, cc = to_centered(*rbm.params, mu, lam)
    bc2, cc2, mu2, lam2 = reparameterise(W, bc, cc, mu, lam, rng.random(6), rng.random(4), 0.3, 0.7)
    after = rbmviz.RBM(6, 4, init="zeros").set_params(*to_normal(W, bc2, cc2, mu2, lam2))
    np.testing.assert_allclose(ev.visible_distribution(after), ev.visible_distribution(rbm),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(after.b, rbm.b, atol=1e-13)   # normal params do not move
    # the printed form, in the paper's orientation w = Wᵀ (n_h × n_v), is b += ν w(λ_b − λ):
    # an (n_h × n_v) matrix times an n_h-vector — not even defined for a non-square W
    with pytest.raises(ValueError):
        W.T @ (rng.random(4) - lam)


@pytest.mark.parametrize("name, d, k_inner", [("csdcp", 3, 2), ("cg", 1, 4)])
def test_centered_update_matches_algorithm_4_in_centered_coordinates(name, d, k_inner):
    rbm = random_rbm(9, 4, 0.8, seed=8)
    kw = dict(d=d, k_inner=k_inner) if name == "csdcp" else dict(k=k_inner)
    alg = algorithms.create(name, learning_rate=0.2, seed=12, nu_mu=0.3, nu_lambda=0.2, **kw)
    alg.setup(rbm, BS, 14)
    np.testing.assert_allclose(alg.mu, BS.mean(0))           # μ starts at the data mean
    assert np.all(alg.lam == 0.5)                            # λ at 0.5
    alg.mu[:] = np.linspace(0.2, 0.8, 9)
    before, mu0, lam0 = rbm.copy(), alg.mu.copy(), alg.lam.copy()
    alg.update(rbm, BS)
    ref, mu_r, lam_r = _reference_csdcp_update(before, BS, mu0, lam0, d, k_inner, 0.2, 0.3, 0.2,
                                               alg.gibbs_seed, 0)
    _close(rbm, ref, atol=1e-12)
    np.testing.assert_allclose(alg.mu, mu_r, atol=1e-15)
    np.testing.assert_allclose(alg.lam, lam_r, atol=1e-15)


def _reference_csdcp_update(rbm, X, mu, lam, d, k_inner, lr, nu_mu, nu_lambda, seed, counter):
    """Alg. 4 in the *centered* parameters (W, b̃, c̃; μ, λ): Gibbs steps (sampled with the
    equivalent normal model, same conditionals), re-parameterisation and offsets, centered
    gradient with the current offsets, step.  Returns the normal model and the offsets."""
    W, bc, cc = to_centered(*[p.copy() for p in rbm.params], mu, lam)
    mu, lam = mu.copy(), lam.copy()
    n = len(X)
    Hp = 1 / (1 + np.exp(-(cc + (X - mu) @ W)))
    mu_b, lam_b = X.mean(0), Hp.mean(0)
    V = X.copy()
    for l in range(d):
        sampler = rbmviz.RBM(*W.shape, init="zeros").set_params(*to_normal(W, bc, cc, mu, lam))
        V = sampler.gibbs(V, k=k_inner, seed=seed, counter=counter + 2 * l * k_inner)
        Hn = 1 / (1 + np.exp(-(cc + (V - mu) @ W)))
        bc, cc, mu, lam = reparameterise(W, bc, cc, mu, lam, mu_b, lam_b, nu_mu, nu_lambda)
        gW = (X - mu).T @ (Hp - lam) / n - (V - mu).T @ (Hn - lam) / n
        W = W + lr * gW
        bc = bc + lr * (X.mean(0) - V.mean(0))
        cc = cc + lr * (Hp.mean(0) - Hn.mean(0))
    out = rbmviz.RBM(*W.shape, init="zeros").set_params(*to_normal(W, bc, cc, mu, lam))
    return out, mu, lam


def test_sampled_cg_update_averages_to_the_centered_expected_cd_update():
    """E[CG step] = the centered transform (with the moved offsets, which are deterministic)
    of the exact expected CD-k update (Fischer & Igel eq. 1.2)."""
    rbm0 = random_rbm(4, 3, 0.7, seed=3)
    X = np.array([[1, 0, 1, 0], [0, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]], float)
    k, lr, nu, reps = 2, 1e-3, 0.25, 5000
    alg = algorithms.create("cg", k=k, learning_rate=lr, seed=1, nu_mu=nu, nu_lambda=nu)
    alg.setup(rbm0, X, 4)
    mu0 = np.array([0.3, 0.6, 0.5, 0.9])
    lam0 = alg.lam.copy()
    samples = []
    for _ in range(reps):
        rbm = rbm0.copy()
        alg.mu[:], alg.lam[:] = mu0, lam0
        alg.update(rbm, X)
        samples.append((_params(rbm) - _params(rbm0)) / lr)
    samples = np.array(samples)
    mu = (1 - nu) * mu0 + nu * X.mean(0)
    lam = (1 - nu) * lam0 + nu * rbm0.hidden_probabilities(X).mean(0)
    gW, gb, gc = ev.expected_cd_update(rbm0, X, k)
    gWc = gW - np.outer(gb, lam) - np.outer(mu, gc)
    exact = np.concatenate([gWc.ravel(), gb - gWc @ lam, gc - gWc.T @ mu])
    se = samples.std(0) / math.sqrt(reps)
    z = np.abs(samples.mean(0) - exact) / np.maximum(se, 1e-12)
    assert z.max() < 4.5, z.max()


def test_offsets_persist_and_resume():
    rbm = rbmviz.RBM(9, 4, seed=0, data=BS)
    alg = algorithms.create("csdcp", k=12, learning_rate=0.3, seed=2)
    list(Run(rbm, BS, alg, epochs=20, eval_every=20))
    mu, lam = alg.mu.copy(), alg.lam.copy()
    assert not np.allclose(lam, 0.5)                          # moved towards the data means
    Run(rbm, BS, alg, epochs=1, record_initial=False)
    assert np.array_equal(alg.mu, mu) and np.array_equal(alg.lam, lam)
    W, bc, cc, mu2, lam2 = alg.centered_params(rbm)
    np.testing.assert_allclose(bc, rbm.b + rbm.W @ lam)


# ---------------------------------------------------------------------------- SSD

def test_sharp_operators_against_their_definition():
    rng = np.random.default_rng(0)
    for S in (rng.normal(size=(9, 4)), rng.normal(size=(5, 2)) @ rng.normal(size=(2, 7))):
        X = sharp_matrix(S)
        sig = np.linalg.svd(S, compute_uv=False)
        nuc = sig.sum()
        assert X.shape == S.shape
        assert np.linalg.norm(X, 2) == pytest.approx(nuc, rel=1e-12)          # ‖S#‖_S∞ = ‖S‖_S1
        assert np.sum(S * X) == pytest.approx(nuc ** 2, rel=1e-12)             # ⟨S, S#⟩ = ‖S‖²_S1
        best = np.sum(S * X) - 0.5 * np.linalg.norm(X, 2) ** 2                  # = ½‖S‖²_S1
        assert best == pytest.approx(0.5 * nuc ** 2, rel=1e-12)
        for _ in range(200):                                                    # it maximises
            Y = rng.normal(size=S.shape) * rng.uniform(0, 2 * nuc / 3)
            assert np.sum(S * Y) - 0.5 * np.linalg.norm(Y, 2) ** 2 <= best + 1e-9
        for t in (0.5, 0.9, 1.1, 2.0):
            assert np.sum(S * t * X) - 0.5 * np.linalg.norm(t * X, 2) ** 2 < best
    low_rank = rng.normal(size=(5, 2)) @ rng.normal(size=(2, 7))
    assert np.linalg.matrix_rank(sharp_matrix(low_rank)) == 2
    s = np.array([0.5, -2.0, 0.0, 1.5])
    np.testing.assert_array_equal(sharp_vector(s), 4.0 * np.array([1, -1, 0, 1]))
    assert np.sum(s * sharp_vector(s)) == pytest.approx(np.abs(s).sum() ** 2)
    assert not sharp_matrix(np.zeros((3, 2))).any()


def test_ssd_update_is_the_sharp_of_the_cd_gradient():
    """Same seed ⇒ same CD-k samples: the SSD step is ε_W·G#, ε_b·g_b#, ε_c·g_c# of the CD step."""
    r_cd, r_ssd = random_rbm(9, 4, 0.6, seed=9), random_rbm(9, 4, 0.6, seed=9)
    before = r_cd.copy()
    lr = 0.01
    cd = algorithms.create("cd", k=2, learning_rate=1.0, seed=5)
    ssd = algorithms.create("ssd", k=2, learning_rate=lr, seed=5)
    cd.setup(r_cd, BS, 14)
    ssd.setup(r_ssd, BS, 14)
    cd.update(r_cd, BS)
    ssd.update(r_ssd, BS)
    gW, gb, gc = (a - b for a, b in zip(r_cd.params, before.params))     # the CD ascent direction
    gb[np.abs(gb) < 1e-12] = 0.0        # exact zeros (equal means) carry CD's rounding noise
    eW, eb, ec = ssd.step_sizes(9, 4)
    assert (eW, eb, ec) == pytest.approx((lr, lr * 4 / 9, lr * 9 / 4))
    np.testing.assert_allclose(r_ssd.W - before.W, eW * sharp_matrix(gW), atol=1e-12)
    np.testing.assert_allclose(r_ssd.b - before.b, eb * sharp_vector(gb), atol=1e-12)
    np.testing.assert_allclose(r_ssd.c - before.c, ec * sharp_vector(gc), atol=1e-12)


def test_ssd_bound_step_on_the_exact_gradient_increases_the_likelihood():
    """With learning_rate = 1/(3JM) the "relative" rule takes the 1/L steps of the
    majorisation bound (ssd.md §3–4): for the exact gradient the log-likelihood must rise."""
    for seed in range(5):
        rbm = random_rbm(9, 4, 1.0, seed=seed)
        alg = algorithms.create("ssd", learning_rate=bound_learning_rate(9, 4))
        alg.setup(rbm, BS, 14)
        before = ev.log_likelihood_exact(rbm, BS)
        g = [x.copy() for x in ev.exact_gradient(rbm, BS)]
        alg._step(rbm, *g)
        assert ev.log_likelihood_exact(rbm, BS) > before


# ---------------------------------------------------------------------------- learning

@pytest.mark.parametrize("name, kw", [("sdcp", {"k": 12}), ("csdcp", {"k": 12}), ("cg", {"k": 12}),
                                      ("ssd", {"k": 12, "learning_rate": 0.05})])
def test_learning_on_bars_and_stripes(name, kw):
    rbm = rbmviz.RBM(9, 4, seed=0, data=BS)
    kw = {"learning_rate": 0.3, **kw}
    df = rbmviz.train(rbm, BS, name, epochs=1500, eval_every=500, **kw)
    assert (df.train_ll <= -math.log(14) + 1e-9).all()
    assert df.train_ll.iloc[-1] > df.train_ll.iloc[0] + 1.8        # from −6.24 (uniform-ish)
    assert list(df.gibbs_steps) == [12 * e for e in df.epoch]


# ---------------------------------------------------------------------------- accounting

@pytest.mark.parametrize("batch", [None, 7])
def test_equal_compute_accounting(batch):
    recs = {}
    for name in ("cd", "sdcp", "csdcp", "cg", "ssd"):
        run = Run(rbmviz.RBM(9, 4, seed=0), BS, name, epochs=30, batch_size=batch, k=12,
                  learning_rate=0.05, eval_every=10, metrics=["weight_norm"])
        recs[name] = [(r["epoch"], r["updates"], r["gibbs_steps"]) for r in run]
        assert run.algorithm.gibbs_steps_per_update == 12
    per_epoch = 1 if batch is None else 2
    for name, rows in recs.items():
        assert rows == [(e, e * per_epoch, e * per_epoch * 12) for e in (0, 10, 20, 30)], name
    alg = algorithms.create("sdcp", k=24)
    assert (alg.d, alg.k_inner, alg.gibbs_steps_per_update) == (6, 4, 24)


def test_inner_steps_count_d_per_update():
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "sdcp", epochs=5, batch_size=7, k=12,
              metrics=["weight_norm"])
    list(run)
    a = run.algorithm
    assert a.updates == 10 and a.inner_steps == 30 and a.gibbs_steps == 120
    assert a.counter == 10 * 2 * 12


# ---------------------------------------------------------------------------- reproducibility

@pytest.mark.parametrize("name", NEW)
def test_same_seed_reproduces_and_other_seeds_differ(name):
    def run(seed):
        rbm = rbmviz.RBM(9, 4, seed=1)
        df = rbmviz.train(rbm, BS, name, epochs=60, batch_size=5, learning_rate=0.1, k=4,
                          seed=seed, eval_every=30)
        return df.drop(columns="wall_time"), rbm
    (d1, m1), (d2, m2), (_, m3) = run(0), run(0), run(1)
    assert d1.equals(d2) and m1 == m2
    assert not np.array_equal(m1.W, m3.W)


@pytest.mark.parametrize("name", ["sdcp", "csdcp"])
def test_blas_path_is_identical_for_one_and_two_threads(name):
    X = rbmviz.datasets.digits()[:300]
    res = []
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            rbm = rbmviz.RBM(64, 32, seed=0)
            run = Run(rbm, X, name, epochs=2, batch_size=50, learning_rate=0.05, seed=3,
                      k=4, metrics=["recon_error"])
            list(run)
            res.append(rbm)
    finally:
        numba.set_num_threads(before)
    assert res[0] == res[1]


def test_tiny_models_restore_the_thread_count():
    before = numba.get_num_threads()
    rbmviz.train(rbmviz.RBM(9, 4, seed=0), BS, "sdcp", epochs=3, k=4)
    assert numba.get_num_threads() == before


# ---------------------------------------------------------------------------- settings

@pytest.mark.parametrize("kw, expected", [
    ({}, (3, 4)), ({"k": 12}, (3, 4)), ({"k": 24}, (6, 4)), ({"k": 24, "d": 8}, (8, 3)),
    ({"k": 24, "k_inner": 2}, (12, 2)), ({"d": 5}, (5, 4)), ({"k_inner": 1}, (3, 1)),
    ({"k": 12, "d": 3, "k_inner": 4}, (3, 4)), ({"k": 6, "k_inner": 1}, (6, 1)),
    # k not a multiple of 4: the largest divisor up to 4 (k = 1 is the settings' default)
    ({"k": 1}, (1, 1)), ({"k": 3}, (1, 3)), ({"k": 6}, (2, 3)), ({"k": 25}, (25, 1)),
])
def test_budget_rule(kw, expected):
    assert resolve_budget(**kw) == expected
    alg = algorithms.create("csdcp", **kw)
    assert (alg.d, alg.k_inner) == expected and alg.settings()["k"] == expected[0] * expected[1]


@pytest.mark.parametrize("name, kw, exc, match", [
    ("sdcp", {"k": 10, "k_inner": 4}, ValueError, r"k=10 is not divisible by k_inner=4"),
    ("sdcp", {"k": 12, "d": 5}, ValueError, r"k=12 is not divisible by d=5"),
    ("sdcp", {"k": 12, "d": 2, "k_inner": 4}, ValueError, r"k=12 must equal d \* k_inner"),
    ("sdcp", {"d": 0}, ValueError, r"d must be >= 1"),
    ("csdcp", {"k_inner": 2.5}, TypeError, r"k_inner must be an integer"),
    ("csdcp", {"nu_mu": 1.5}, ValueError, r"nu_mu must be <= 1"),
    ("cg", {"nu_lambda": -0.1}, ValueError, r"nu_lambda must be >= 0"),
    ("cg", {"k": 0}, ValueError, r"k must be >= 1"),
    ("ssd", {"step_rule": "bounded"}, ValueError, r"unknown step_rule 'bounded'"),
    ("ssd", {"learning_rate": 0.0}, ValueError, r"learning_rate must be > 0"),
    ("sdcp", {"n_chains": 3}, TypeError, r"does not take setting\(s\) \['n_chains'\]"),
    ("cg", {"d": 2}, TypeError, r"does not take setting\(s\) \['d'\]"),
])
def test_bad_settings_raise_clear_errors(name, kw, exc, match):
    with pytest.raises(exc, match=match):
        algorithms.create(name, **kw)


def test_set_settings_keeps_the_budget_consistent():
    alg = algorithms.create("csdcp", k=12, seed=1)
    alg.set_settings(k=24)                                   # split as by the constructor
    assert (alg.d, alg.k_inner, alg.k) == (6, 4, 24)
    alg.set_settings(d=2)                                    # keeps k_inner, changes k
    assert (alg.d, alg.k_inner, alg.k) == (2, 4, 8)
    alg.set_settings(k_inner=3, nu_mu=0.1)
    assert (alg.d, alg.k_inner, alg.nu_mu) == (2, 3, 0.1)
    with pytest.raises(ValueError, match="k=10 is not divisible by k_inner=3"):
        alg.set_settings(k=10, k_inner=3, learning_rate=0.5)
    with pytest.raises(ValueError, match="nu_lambda must be <= 1"):
        alg.set_settings(k=12, nu_lambda=2.0)
    assert (alg.d, alg.k_inner, alg.learning_rate, alg.nu_lambda) == (2, 3, 0.1, 0.01)
    alg.set_settings(k=10)                                   # any k is a budget
    assert (alg.d, alg.k_inner) == (5, 2)
    assert type(alg)(**alg.settings()).settings() == alg.settings()   # settings round trip
    with pytest.raises(TypeError, match=r"does not take setting"):
        alg.set_settings(n_chains=2)


def test_registry_and_settings_knobs():
    from rbmviz import settings as st
    assert set(NEW) <= set(algorithms.names())
    assert "k" in st.algorithm_knobs("sdcp") and "k" in st.algorithm_knobs("ssd")
    run = st.make_run(st.DataSettings(), st.ModelSettings(),
                      st.TrainSettings(algorithm="sdcp", k=12, epochs=2, learning_rate=0.3))
    assert (run.algorithm.d, run.algorithm.k_inner) == (3, 4)
    assert [r["gibbs_steps"] for r in run] == [0, 12, 24]
    for name in NEW:
        cls = algorithms.get(name)
        assert cls.label and cls.equation and cls.reference
