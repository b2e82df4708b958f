"""The fused serial kernel of S-DCP, CS-DCP, CG and SSD (rbmviz/kernels/dc.py) against the
BLAS path of the same algorithms (``update`` per mini-batch): same random stream, same
parameters to rounding, the same divergence epoch; and what is bit-for-bit: against CD's
fused kernel (d = 1), table vs direct draws, one call vs several."""
import numpy as np
import pytest
from brute import random_rbm

import rbmviz
from rbmviz import algorithms
from rbmviz.algorithms.base import Algorithm
from rbmviz.algorithms.dcp import SDCP
from rbmviz.kernels import dc
from rbmviz.runs import Run, RunDiverged, batch_bounds

BS = rbmviz.datasets.bars_and_stripes(3)
RULES = {"sdcp": {"k": 12}, "csdcp": {"k": 12, "nu_mu": 0.2, "nu_lambda": 0.1},
         "cg": {"k": 5}, "ssd": {"k": 4}}


def _orders(epochs, n=14, seed=0):
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(n) for _ in range(epochs)]).astype(np.int64)


def _pair(name, rbm, batch, **kw):
    """Two identical algorithms set up on copies of ``rbm``."""
    out = []
    for _ in range(2):
        alg = algorithms.create(name, seed=5, **kw)
        r = rbm.copy()
        alg.setup(r, BS, batch)
        out.append((alg, r))
    return out


def _blas_epochs(alg, rbm, order, bounds, max_weight=np.inf):
    """The generic loop of :class:`Algorithm` (``update`` per batch, BLAS path)."""
    return Algorithm.train_epochs(alg, rbm, BS, order, bounds, max_weight)


def _max_diff(r1, r2):
    return max(float(np.abs(p - q).max()) for p, q in zip(r1.params, r2.params))


# ------------------------------------------------------------------ fused == BLAS path

@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize("bounds", [[0, 14], [0, 5, 9, 14]])
def test_fused_kernel_matches_the_blas_path(name, bounds):
    """Same seed ⇒ same draws and, to rounding, the same parameters, offsets and stream
    position after 40 epochs (the BLAS path sums its GEMM products in an order OpenBLAS
    chooses, so the last bits differ; a differing draw would move W by ~lr/|B|)."""
    kw = {"learning_rate": 0.05 if name == "ssd" else 0.3, **RULES[name]}
    (a1, r1), (a2, r2) = _pair(name, rbmviz.RBM(9, 4, seed=1, data=BS), 14, **kw)
    assert a1._serial
    order, bounds = _orders(40), np.array(bounds)
    assert a1.train_epochs(r1, BS, order, bounds) == 40          # fused
    assert _blas_epochs(a2, r2, order, bounds) == 40             # BLAS path
    assert _max_diff(r1, r2) < 1e-12
    assert a1.counter == a2.counter == 40 * (len(bounds) - 1) * 2 * a1.gibbs_steps_per_update
    assert (a1.updates, a1.gibbs_steps, a1.inner_steps) == (a2.updates, a2.gibbs_steps,
                                                            a2.inner_steps)
    if name in ("csdcp", "cg"):
        np.testing.assert_allclose(a1.mu, a2.mu, rtol=0, atol=1e-15)
        np.testing.assert_allclose(a1.lam, a2.lam, rtol=0, atol=1e-14)
        assert not np.allclose(a1.lam, 0.5)                       # the offsets did move


def test_fused_kernel_with_momentum_and_weight_decay():
    for name in ("sdcp", "csdcp"):
        kw = dict(learning_rate=0.2, momentum=0.5, weight_decay=0.01, d=2, k_inner=3)
        (a1, r1), (a2, r2) = _pair(name, random_rbm(9, 4, 0.5, seed=2), 7, **kw)
        order, bounds = _orders(30), batch_bounds(14, 7)
        a1.train_epochs(r1, BS, order, bounds)
        _blas_epochs(a2, r2, order, bounds)
        assert _max_diff(r1, r2) < 1e-12
        np.testing.assert_allclose(a1.vW, a2.vW, rtol=0, atol=1e-12)
        assert np.abs(a1.vW).max() > 1e-4


def test_float32_models_agree_to_float32_rounding():
    (a1, r1), (a2, r2) = _pair("csdcp", rbmviz.RBM(9, 4, seed=0, data=BS, dtype=np.float32), 14,
                               learning_rate=0.3, k=12)
    order = _orders(5)
    a1.train_epochs(r1, BS, order, np.array([0, 14]))
    _blas_epochs(a2, r2, order, np.array([0, 14]))
    assert r1.W.dtype == np.float32 and a1.mu.dtype == np.float32
    assert _max_diff(r1, r2) < 1e-5


# ------------------------------------------------------------------ bit-for-bit

@pytest.mark.parametrize("bounds", [[0, 14], [0, 7, 14]])
def test_sdcp_with_d_1_is_cd_bit_for_bit(bounds):
    """d = 1: S-DCP's fused kernel draws and computes exactly what CD's fused kernel does."""
    r_cd, r_dc = random_rbm(9, 4, 0.7, seed=3), random_rbm(9, 4, 0.7, seed=3)
    cd = algorithms.create("cd", k=4, learning_rate=0.3, seed=2)
    s = algorithms.create("sdcp", d=1, k_inner=4, learning_rate=0.3, seed=2)
    cd.setup(r_cd, BS, bounds[1])
    s.setup(r_dc, BS, bounds[1])
    assert cd._serial and s._serial
    order = _orders(50)
    cd.train_epochs(r_cd, BS, order, np.array(bounds))
    s.train_epochs(r_dc, BS, order, np.array(bounds))
    assert r_cd == r_dc and cd.counter == s.counter


def test_cg_with_frozen_zero_offsets_is_cd_bit_for_bit():
    r_cd, r_cg = random_rbm(9, 4, 0.7, seed=4), random_rbm(9, 4, 0.7, seed=4)
    cd = algorithms.create("cd", k=5, learning_rate=0.3, seed=9)
    cg = algorithms.create("cg", k=5, learning_rate=0.3, seed=9, nu_mu=0.0, nu_lambda=0.0)
    cd.setup(r_cd, BS, 14)
    cg.setup(r_cg, BS, 14)
    cg.mu[:] = 0.0
    cg.lam[:] = 0.0
    order = _orders(50)
    cd.train_epochs(r_cd, BS, order, np.array([0, 14]))
    cg.train_epochs(r_cg, BS, order, np.array([0, 14]))
    assert r_cd == r_cg


@pytest.mark.parametrize("rule", [dc.RULE_PLAIN, dc.RULE_CENTERED, dc.RULE_SSD])
def test_pattern_tables_give_the_same_draws(rule):
    """Drawing a layer from the table of all its input patterns or directly: bit-identical
    (a 5×3 model, where both tables are allowed)."""
    X = BS[:, :5].copy()
    res = []
    for th, tv in ((False, False), (True, True), (True, False)):
        rbm = random_rbm(5, 3, 0.8, seed=6)
        W, b, c = rbm.params
        mu, lam = X.mean(0), np.full(3, 0.5)
        vW, vb, vc = np.zeros_like(W), np.zeros_like(b), np.zeros_like(c)
        ctr, ep = dc.dc_updates_serial_(W, b, c, X, _orders(20), np.array([0, 6, 14]), 2, 3, rule,
                                        0.1, 0.0, 0.0, vW, vb, vc, mu, lam, 0.1, 0.1, 0.5, 2.0,
                                        123, 7, np.inf, th, tv)
        assert (ctr, ep) == (7 + 20 * 2 * 2 * 6, 20)
        res.append(np.concatenate([W.ravel(), b, c, mu, lam]))
    assert np.array_equal(res[0], res[1]) and np.array_equal(res[0], res[2])


@pytest.mark.parametrize("name", list(RULES))
def test_one_call_or_many_is_bit_for_bit(name):
    """The run loop calls ``train_epochs`` once per evaluation interval: splitting the epochs
    over several calls changes nothing."""
    (a1, r1), (a2, r2) = _pair(name, rbmviz.RBM(9, 4, seed=1, data=BS), 7,
                               learning_rate=0.1, **RULES[name])
    order, bounds = _orders(30), batch_bounds(14, 7)
    a1.train_epochs(r1, BS, order, bounds)
    for part in (order[:1], order[1:17], order[17:]):
        a2.train_epochs(r2, BS, part, bounds)
    assert r1 == r2 and a1.counter == a2.counter
    if name in ("csdcp", "cg"):
        assert np.array_equal(a1.lam, a2.lam) and np.array_equal(a1.mu, a2.mu)


# ------------------------------------------------------------------ divergence

@pytest.mark.parametrize("name", list(RULES))
def test_max_weight_stops_in_the_same_epoch_as_the_blas_path(name):
    kw = {"learning_rate": 4.0, **RULES[name]}
    (a1, r1), (a2, r2) = _pair(name, rbmviz.RBM(9, 4, seed=0, data=BS), 7, **kw)
    order, bounds = _orders(500), batch_bounds(14, 7)
    e1 = a1.train_epochs(r1, BS, order, bounds, max_weight=12.0)
    e2 = _blas_epochs(a2, r2, order, bounds, max_weight=12.0)
    assert 1 < e1 == e2 < 500
    assert max(np.abs(p).max() for p in r1.params) > 12.0
    assert a1.updates == a2.updates == 2 * e1 and a1.counter == a2.counter
    # the epoch before was healthy: a fresh run of e1 − 1 epochs stays within the bound
    (a3, r3), _ = _pair(name, rbmviz.RBM(9, 4, seed=0, data=BS), 7, **kw)
    assert a3.train_epochs(r3, BS, order[: e1 - 1], bounds, max_weight=12.0) == e1 - 1
    assert max(np.abs(p).max() for p in r3.params) <= 12.0


@pytest.mark.parametrize("name", list(RULES))
def test_nan_stops_in_the_same_epoch_as_the_blas_path(name):
    """A parameter that became inf (e.g. in a run with a huge learning rate) turns the
    chains' probabilities and the step into NaN: both paths stop after that epoch, without
    raising (SSD: no SVD of a NaN gradient)."""
    kw = {"learning_rate": 0.1, **RULES[name]}
    (a1, r1), (a2, r2) = _pair(name, rbmviz.RBM(9, 4, seed=0, data=BS), 7, **kw)
    order, bounds = _orders(50), batch_bounds(14, 7)
    assert a1.train_epochs(r1, BS, order[:3], bounds) == 3
    assert _blas_epochs(a2, r2, order[:3], bounds) == 3
    r1.W[4, 2] = r2.W[4, 2] = np.inf
    with np.errstate(all="ignore"):
        e1 = a1.train_epochs(r1, BS, order[3:], bounds)
        e2 = _blas_epochs(a2, r2, order[3:], bounds)
    assert e1 == e2 == 1
    for r in (r1, r2):
        assert np.isnan(r.W).any() or np.isinf(r.W).any()
    assert a1.updates == a2.updates == 8


@pytest.mark.parametrize("name, lr", [("sdcp", 4.0), ("csdcp", 4.0), ("ssd", 0.5)])
def test_run_reports_the_divergence_epoch(name, lr):
    def diverge(serial):
        run = Run(rbmviz.RBM(9, 4, seed=0, data=BS), BS, name, epochs=1000, batch_size=7,
                  eval_every=50, max_weight=6.0, learning_rate=lr, **RULES[name])
        assert run.algorithm._serial
        run.algorithm._serial = serial                        # False: the BLAS path
        with pytest.raises(RunDiverged) as info:
            list(run)
        return info.value
    err = diverge(True)
    assert err.epoch % 50 and err.last_good_epoch == err.epoch // 50 * 50
    assert f"in epoch {err.epoch} " in str(err)
    assert diverge(False).epoch == err.epoch


def test_nan_parameters_are_reported_by_the_run():
    rbm = rbmviz.RBM(9, 4, seed=0, data=BS)
    run = Run(rbm, BS, "csdcp", epochs=50, eval_every=50, k=12, record_initial=False)
    rbm.W[2, 1] = np.nan
    with pytest.raises(RunDiverged, match="W contains NaN or inf in epoch 1 "):
        list(run)


# ------------------------------------------------------------------ selection

def test_selection_rule_is_cds():
    for nv, nh, batch in ((9, 4, 14), (64, 32, 32), (64, 32, 33), (784, 500, 100)):
        rbm = rbmviz.RBM(nv, nh, seed=0)
        X = (np.random.default_rng(0).random((batch, nv)) < 0.5).astype(float)
        cd = algorithms.create("cd")
        cd.setup(rbm, X, batch)
        for name in RULES:
            alg = algorithms.create(name)
            alg.setup(rbm, X, batch)
            assert alg._serial == cd._serial == (nv * nh * batch <= 2**16)


def test_a_rule_without_a_fused_form_stays_on_the_blas_path():
    class HalfStep(SDCP):
        def _step(self, rbm, gW, gb, gc):
            self.apply_gradient_(rbm, gW / 2, gb / 2, gc / 2)
    alg = HalfStep(k=4, learning_rate=0.2, seed=1)
    rbm = rbmviz.RBM(9, 4, seed=0)
    alg.setup(rbm, BS, 14)
    assert not alg._serial
    ref = algorithms.create("sdcp", k=4, learning_rate=0.1, seed=1)
    r2 = rbmviz.RBM(9, 4, seed=0)
    ref.setup(r2, BS, 14)
    alg.train_epochs(rbm, BS, _orders(3), np.array([0, 14]))
    ref.train_epochs(r2, BS, _orders(3), np.array([0, 14]))
    assert _max_diff(rbm, r2) < 1e-12                 # half the step at twice the rate

    class CenteredHalfStep(algorithms.get("csdcp")):     # the mixin's fused form no longer
        def _step(self, rbm, gW, gb, gc):                # describes the step
            super()._step(rbm, gW / 2, gb / 2, gc / 2)
    alg = CenteredHalfStep(k=4)
    alg.setup(rbmviz.RBM(9, 4, seed=0), BS, 14)
    assert not alg._serial
    for name in RULES:
        alg = algorithms.create(name)
        alg.setup(rbmviz.RBM(9, 4, seed=0), BS, 14)
        assert alg._serial


# ------------------------------------------------------------------ the step kernels

def test_step_kernels_match_the_numpy_steps():
    from rbmviz.algorithms.ssd import sharp_matrix, sharp_vector
    rng = np.random.default_rng(0)
    gW, gb, gc = rng.normal(size=(9, 4)), rng.normal(size=9), rng.normal(size=4)
    A, a, z = gW.copy(), gb.copy(), gc.copy()
    dc.sharp_direction_(A, a, z, 0.5, 2.0)
    np.testing.assert_allclose(A, sharp_matrix(gW), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(a, 0.5 * sharp_vector(gb), rtol=1e-14)
    np.testing.assert_allclose(z, 2.0 * sharp_vector(gc), rtol=1e-14)
    A = np.full((9, 4), np.nan)
    dc.sharp_direction_(A, a, z, 1.0, 1.0)                        # no LinAlgError
    assert np.isnan(A).all()
    mu, lam, mub, lamb = rng.random(9), rng.random(4), rng.random(9), rng.random(4)
    A, a, z, m2, l2 = gW.copy(), gb.copy(), gc.copy(), mu.copy(), lam.copy()
    dc.centered_direction_(A, a, z, m2, l2, mub, lamb, 0.3, 0.2)
    m_ref, l_ref = 0.7 * mu + 0.3 * mub, 0.8 * lam + 0.2 * lamb
    Wc = gW - np.outer(gb, l_ref) - np.outer(m_ref, gc)
    np.testing.assert_allclose(m2, m_ref, atol=1e-15)
    np.testing.assert_allclose(A, Wc, atol=1e-14)
    np.testing.assert_allclose(a, gb - Wc @ l_ref, atol=1e-14)
    np.testing.assert_allclose(z, gc - Wc.T @ m_ref, atol=1e-14)
