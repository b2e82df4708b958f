"""adaTAP (Tramel et al. 2018, App. D, Alg. 3 via VAMP): exact linear algebra, the algorithm
as printed, fixed points against exact enumeration and TAP2 (tap-appendices.md §1, §3)."""
import numpy as np
import pytest

from rbmviz import RBM
from rbmviz.evaluate import all_states
from rbmviz.tap import adatap
from rbmviz.tap import solve as tap_solve

from brute import joint_log_weights, logsumexp


def _model(nv, nh, scale, seed, bias=0.3):
    rng = np.random.default_rng(seed)
    rbm = RBM(nv, nh)
    rbm.set_params(W=rng.normal(0.0, scale, (nv, nh)), b=rng.normal(0, bias, nv),
                   c=rng.normal(0, bias, nh))
    return rbm


def _exact(rbm):
    L = joint_log_weights(rbm)
    lz = logsumexp(L)
    P = np.exp(L - lz)
    V, H = all_states(rbm.n_visible), all_states(rbm.n_hidden)
    return np.concatenate([V.T @ P.sum(1), H.T @ P.sum(0)]), lz


def _alg3_printed(W, b, c, A1, B1, damping, n_iter):
    """Alg. 3 literally: full inverse of diag(A2) − J, one row, a Python loop."""
    nv, nh = W.shape
    J = np.block([[np.zeros((nv, nv)), W], [W.T, np.zeros((nh, nh))]])
    H = np.concatenate([b, c])
    for _ in range(n_iter):
        a1 = 1 / (1 + np.exp(-(B1 - A1 / 2)))
        c1 = np.maximum(a1 * (1 - a1), 1e-12)
        A2 = 1 / c1 - A1
        B2 = a1 / c1 - B1
        C2 = np.linalg.inv(np.diag(A2) - J)
        a2 = C2 @ (B2 + H)
        A1n = 1 / np.diag(C2) - A2
        B1n = a2 / np.diag(C2) - B2
        A1 = damping * A1n + (1 - damping) * A1
        B1 = damping * B1n + (1 - damping) * B1
    return a1, a2


@pytest.mark.parametrize("shape", [(7, 4), (3, 6), (5, 5)])
def test_interaction_step_schur_equals_inverse(shape):
    nv, nh = shape
    rng = np.random.default_rng(1)
    W = rng.normal(size=shape)
    A2 = rng.uniform(2.0, 6.0, (9, nv + nh))
    y = rng.normal(size=(9, nv + nh))
    J = np.block([[np.zeros((nv, nv)), W], [W.T, np.zeros((nh, nh))]])
    for method, table in (("schur", None), ("schur", False), ("direct", None)):
        x, d, ld = adatap.interaction_step(W, A2, y, method=method, logdet=True, table=table)
        for r in range(9):
            M = np.diag(A2[r]) - J
            C = np.linalg.inv(M)
            np.testing.assert_allclose(x[r], C @ y[r], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(d[r], np.diag(C), rtol=1e-10, atol=1e-12)
            assert ld[r] == pytest.approx(np.linalg.slogdet(M)[1], rel=1e-10, abs=1e-10)


def test_iterates_match_alg3_as_printed():
    rbm = _model(6, 4, 0.7, 3)
    X = (np.random.default_rng(0).random((5, 6)) < 0.5).astype(float)
    m = np.clip(np.hstack([X, 1 / (1 + np.exp(-(X @ rbm.W + rbm.c)))]), 0.01, 0.99)
    for n_iter in (1, 2, 7):
        for method in adatap.METHODS:
            sol = adatap.solve(rbm, X, damping=0.5, tol=0.0, max_iter=n_iter, method=method)
            assert not sol.converged.any() and (sol.n_iter == n_iter).all()
            for r in range(5):
                a1, a2 = _alg3_printed(rbm.W, rbm.b, rbm.c, np.zeros(10),
                                       np.log(m[r] / (1 - m[r])), 0.5, n_iter)
                np.testing.assert_allclose(np.concatenate([sol.av[r], sol.ah[r]]), a1,
                                           rtol=1e-10, atol=1e-13)
                np.testing.assert_allclose(sol.a2[r], a2, rtol=1e-9, atol=1e-12)


def test_zero_coupling_is_exact():
    rbm = _model(5, 3, 0.0, 0, bias=1.0)
    sol = adatap.solve(rbm, None, tol=1e-26)
    assert sol.converged.all()
    np.testing.assert_allclose(sol.av[0], 1 / (1 + np.exp(-rbm.b)), atol=1e-12)
    np.testing.assert_allclose(sol.ah[0], 1 / (1 + np.exp(-rbm.c)), atol=1e-12)
    lz = np.logaddexp(0, rbm.b).sum() + np.logaddexp(0, rbm.c).sum()
    assert sol.log_z[0] == pytest.approx(lz, abs=1e-10)
    assert sol.free_energy[0] == pytest.approx(0.0, abs=1e-10)


def test_strong_iid_coupling_beats_tap2_and_converges():
    """8×5, W ~ N(0, 1), b, c ~ N(0, 0.3²): 20 models (reference medians 9.6e-3 vs 1.3e-2)."""
    err_ada, err_tap = [], []
    for seed in range(20):
        rbm = _model(8, 5, 1.0, seed)
        m, _ = _exact(rbm)
        sol = adatap.solve(rbm, None, damping=0.5, tol=1e-24, max_iter=5000)
        assert sol.converged.all(), seed
        # at convergence the two halves agree: a₁ = a₂, v₁ = diag C₂
        assert sol.residual_a.max() < 1e-6 and sol.residual_v.max() < 1e-6
        np.testing.assert_allclose(np.concatenate([sol.av, sol.ah], axis=1), sol.a2, atol=1e-6)
        np.testing.assert_allclose(np.concatenate([sol.cv, sol.ch], axis=1), sol.d, atol=1e-6)
        t = tap_solve(rbm, np.full((1, 8), 0.5), data_anchored=False, damping=0.5, tol=1e-24,
                      max_iter=5000)
        assert t.converged.all()
        err_ada.append(np.abs(np.concatenate([sol.av[0], sol.ah[0]]) - m).max())
        err_tap.append(np.abs(np.concatenate([t.av[0], t.ah[0]]) - m).max())
    med_ada, med_tap = np.median(err_ada), np.median(err_tap)
    assert med_ada < med_tap
    assert 5e-3 < med_ada < 1.3e-2 and 9e-3 < med_tap < 1.8e-2
    assert np.mean(np.array(err_ada) <= np.array(err_tap)) >= 0.75


@pytest.mark.parametrize("kind", ["weak", "strong", "rank1"])
def test_converges_on_every_test_model_data_anchored(kind):
    rng = np.random.default_rng(5)
    X = (rng.random((12, 8)) < 0.4).astype(float)
    for seed in range(10):
        if kind in ("weak", "strong"):
            rbm = _model(8, 5, 0.5 if kind == "weak" else 1.0, 100 + seed)
        else:
            r = np.random.default_rng(seed)
            rbm = RBM(8, 5)
            rbm.set_params(W=0.3 * np.outer(r.normal(size=8), r.normal(size=5)),
                           b=r.normal(0, .3, 8), c=r.normal(0, .3, 5))
        m, _ = _exact(rbm)
        sol = adatap.solve(rbm, X, tol=1e-22, max_iter=5000)
        assert sol.converged.all(), seed
        assert sol.residual_a.max() < 1e-6 and sol.residual_v.max() < 1e-6
        err = np.abs(np.hstack([sol.av, sol.ah]) - m).max()
        assert err < (3e-2 if kind != "strong" else 1e-1)
        assert len(sol.history["max_da"]) == sol.n_iter.max()


def test_log_z_error_shrinks_with_coupling():
    rng = np.random.default_rng(0)
    W0 = rng.normal(size=(6, 4))
    b, c = rng.normal(0, .5, 6), rng.normal(0, .5, 4)
    errs = []
    for eps in (0.05, 0.1, 0.2):
        rbm = RBM(6, 4)
        rbm.set_params(W=eps * W0, b=b, c=c)
        sol = adatap.solve(rbm, None, tol=1e-26, max_iter=5000)
        errs.append(abs(sol.log_z[0] - _exact(rbm)[1]))
    slopes = np.diff(np.log(errs)) / np.log(2)
    assert (slopes > 2.7).all(), slopes          # O(ε³) like TAP2, measured 3.2–3.3


def test_fixed_iteration_count_and_history():
    rbm = _model(8, 5, 1.0, 2)
    X = np.eye(8)[:4]
    sol = adatap.solve(rbm, X, tol=0.0, max_iter=3)
    assert (sol.n_iter == 3).all() and not sol.converged.any()
    assert list(sol.history["active"]) == [4, 4, 4]
    assert np.isfinite(sol.free_energy).all()
    sub = sol.subset([1, 3])
    np.testing.assert_array_equal(sub.a2, sol.a2[[1, 3]])


def test_bad_inputs():
    rbm = _model(4, 3, 0.5, 0)
    with pytest.raises(ValueError, match="damping"):
        adatap.solve(rbm, None, damping=0.0)
    with pytest.raises(ValueError, match="method"):
        adatap.solve(rbm, None, method="qr")
    with pytest.raises(ValueError, match="init"):
        adatap.solve(rbm, np.full((2, 4), 0.5))
    with pytest.raises(ValueError, match="init_clip"):
        adatap.solve(rbm, None, init_clip=0.5)
    with pytest.raises(TypeError, match="rbm"):
        adatap.solve("model", None)
    with pytest.raises(ValueError, match="binary"):
        adatap.solve(RBM(4, 3, visible="truncated_gaussian"), None)


def test_tap_training_with_adatap_inference():
    """``TAP(inference="adatap")`` runs Alg. 2 with Alg. 3's solutions; at weak coupling its
    update is close to Alg. 1's (both solutions agree to O(ε³))."""
    from rbmviz.algorithms.tap import TAP, tap_gradient
    rng = np.random.default_rng(0)
    X = (rng.random((20, 8)) < 0.3).astype(float)
    rbm = _model(8, 5, 0.1, 4)
    grads = {}
    for inf in ("tap", "adatap"):
        alg = TAP(learning_rate=0.05, inference=inf, tol=1e-14, max_iter=2000)
        sol, rows = alg.solutions(rbm, X)
        assert len(rows) == 20 and alg.last_not_converged == 0
        assert isinstance(sol, adatap.AdaTAPSolution) == (inf == "adatap")
        grads[inf] = tap_gradient(rbm, X, sol, rows)
    for k in ("W", "b", "c"):
        np.testing.assert_allclose(grads["adatap"][k], grads["tap"][k], atol=2e-3)
    assert np.abs(grads["adatap"]["W"] - grads["tap"]["W"]).max() > 0      # not the same code
    alg = TAP(learning_rate=0.05, inference="adatap", tol=1e-12)
    model = rbm.copy()
    alg.setup(model, X, 10)
    before = model.W.copy()
    alg.update(model, X[:10])
    assert not np.allclose(model.W, before) and alg.updates == 1
    with pytest.raises(ValueError, match="adatap"):
        TAP(inference="adatap", order=3).setup(rbm.copy(), X, 10)


@pytest.mark.parametrize("nv,nh,rows,method", [
    (120, 80, 7, "direct"), (200, 120, 7, "schur"),           # product table
    (60, 90, 50, "schur"), (3400, 100, 3, "schur"),           # many rows; stacked products
])
def test_work_bytes_bounds_what_numpy_allocates(nv, nh, rows, method):
    """The memory check of the Gaussian step is made against an estimate that is at least
    what numpy allocates (traced by tracemalloc; LAPACK's own buffers are not traced)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    W = rng.normal(0, 0.1, (nv, nh))
    A2, y = 4 + rng.random((rows, nv + nh)), rng.normal(size=(rows, nv + nh))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with adatap._blas_threads(1):
            adatap.interaction_step(W, A2, y, method=method, logdet=True)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    estimate = adatap.work_bytes(nv, nh, rows, method)
    assert peak <= estimate < 4 * peak


def test_direct_solve_beyond_the_memory_bound_is_refused_before_any_work():
    from rbmviz import bounds

    rbm = RBM(8000, 10, init="zeros")
    with pytest.raises(ValueError, match=r"method='direct'.*about 2\.\d GiB.*bound of 2\.0 GiB"
                                         r".*MEMORY_MAX.*method='schur'"):
        adatap.solve(rbm, None, method="direct")
    assert adatap.work_bytes(8000, 10, 1, "direct") > bounds.MEMORY_MAX
    assert adatap.work_bytes(8000, 10, 1, "schur") < bounds.MEMORY_MAX
