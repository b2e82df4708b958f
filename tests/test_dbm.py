"""Deep TAP machines (Tramel et al. 2018, App. E): TAP2 on a DBM against exact enumeration,
clamped solutions, gradients (eqs. 126–129) against finite differences, training."""
import numpy as np
import pytest

from rbmviz.dbm import DBM, DBMTrainer, gradient, log_likelihood, pretrain, tap_log_z, tap_solve


def _dbm(layers, eps, seed, bias=0.5):
    rng = np.random.default_rng(seed)
    d = DBM(layers, scale=0.0)
    d.set_params([eps * rng.normal(size=(a, b)) for a, b in zip(layers[:-1], layers[1:])],
                 [rng.normal(0, bias, n) for n in layers])
    return d


def _objective(d, X, I, tol=1e-26):
    free = tap_solve(d, I, tol=tol, max_iter=20000)
    cl = tap_solve(d, X, clamped=True, tol=tol, max_iter=20000)
    assert free.converged.all() and cl.converged.all()
    return np.mean(cl.phi) - np.mean(free.phi), free, cl


def test_exact_enumeration_is_consistent():
    d = _dbm([3, 2, 2], 0.7, 0)
    lz, marg = d.exact()
    X = np.array([[0, 1, 1], [1, 0, 0.0]])
    phi, _ = d.exact_clamped(X)
    # p(x) sums to one over all visible states, and the marginals agree
    from rbmviz.evaluate import all_states
    V = all_states(3)
    pv = np.exp(d.exact_clamped(V)[0] - lz)
    assert pv.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(pv @ V, marg[0], atol=1e-12)
    np.testing.assert_allclose(pv @ d.exact_clamped(V)[1][1], marg[2], atol=1e-12)
    assert d.exact_log_likelihood(X) == pytest.approx(np.mean(phi) - lz)


def test_zero_coupling_exact():
    d = _dbm([4, 3, 2], 0.0, 1)
    lz, marg = d.exact()
    sol = tap_solve(d, np.eye(4)[:2], tol=1e-26)
    assert sol.converged.all()
    np.testing.assert_allclose(sol.phi, lz, atol=1e-10)
    for l in range(3):
        np.testing.assert_allclose(sol.m[l], np.broadcast_to(marg[l], sol.m[l].shape), atol=1e-10)


def test_log_z_error_falls_like_eps4_on_6_4_3():
    """Median |ln Z_TAP2 − ln Z| over 10 6–4–3 DBMs, W = ε·N(0, 1), θ ~ N(0, 0.5²)
    (reference: 5.3e-6, 7.9e-5, 1.9e-3 at ε = 0.1, 0.2, 0.4; ×15 per halving)."""
    med_z, med_m = [], []
    for eps in (0.1, 0.2, 0.4):
        ez, em = [], []
        for s in range(10):
            d = _dbm([6, 4, 3], eps, s)
            lz, marg = d.exact()
            x0 = (np.random.default_rng(s).random((1, 6)) < 0.5).astype(float)
            sol = tap_solve(d, x0, tol=1e-28, max_iter=5000)
            assert sol.converged.all()
            ez.append(abs(sol.phi[0] - lz))
            em.append(max(np.abs(sol.m[l][0] - marg[l]).max() for l in range(3)))
        med_z.append(np.median(ez))
        med_m.append(np.median(em))
    slopes = np.diff(np.log(med_z)) / np.log(2)
    assert (slopes > 3.3).all(), (med_z, slopes)
    assert 1e-6 < med_z[0] < 3e-5 and med_z[2] < 5e-3
    assert med_m[0] < 1e-4 and med_m[2] < 5e-3


def test_clamped_marginals_and_log_likelihood_vs_exact():
    d = _dbm([6, 4, 3], 0.2, 7)
    X = (np.random.default_rng(1).random((8, 6)) < 0.5).astype(float)
    phi, hm = d.exact_clamped(X)
    cl = tap_solve(d, X, clamped=True, tol=1e-26)
    assert cl.converged.all()
    np.testing.assert_array_equal(cl.m[0], X)
    assert np.abs(cl.phi - phi).max() < 5e-4          # measured 1.6e-4
    for l in (1, 2):
        assert np.abs(cl.m[l] - hm[l - 1]).max() < 2e-3
    ll = log_likelihood(d, X, tol=1e-20)
    assert ll == pytest.approx(d.exact_log_likelihood(X), abs=5e-4)
    assert log_likelihood(d, X, tol=1e-20, per_unit=True) == pytest.approx(ll / 13)


@pytest.mark.parametrize("layers", [(6, 4, 3), (5, 3, 3, 2)])
def test_gradient_matches_finite_differences(layers):
    d = _dbm(list(layers), 0.4, 3)
    rng = np.random.default_rng(2)
    X = (rng.random((5, layers[0])) < 0.5).astype(float)
    I = X[:3]
    _, free, cl = _objective(d, X, I)
    g = gradient(d, X, free, cl)
    h = 1e-5
    for l in range(len(d.W)):
        for (i, j) in [(0, 0), (layers[l] - 1, layers[l + 1] - 1), (1, 1)]:
            plus, minus = d.copy(), d.copy()
            plus.W[l][i, j] += h
            minus.W[l][i, j] -= h
            fd = (_objective(plus, X, I)[0] - _objective(minus, X, I)[0]) / (2 * h)
            assert g["W"][l][i, j] == pytest.approx(fd, abs=1e-7), (l, i, j)
    for l in range(len(layers)):
        plus, minus = d.copy(), d.copy()
        plus.biases[l][0] += h
        minus.biases[l][0] -= h
        fd = (_objective(plus, X, I)[0] - _objective(minus, X, I)[0]) / (2 * h)
        assert g["biases"][l][0] == pytest.approx(fd, abs=1e-7), l


def test_tap_log_z_matches_solution_phi():
    d = _dbm([5, 4, 3], 0.5, 4)
    X = np.eye(5)[:3]
    sol = tap_solve(d, X, tol=1e-20)
    np.testing.assert_allclose(tap_log_z(d, sol.m), sol.phi)


def test_joint_training_raises_exact_likelihood_and_pretraining():
    rng = np.random.default_rng(0)
    proto = (rng.random((2, 6)) < 0.5).astype(float)
    X = proto[rng.integers(0, 2, 120)]
    X = np.abs(X - (rng.random(X.shape) < 0.05))
    d = DBM([6, 4, 3], seed=0, scale=0.01)
    before = d.exact_log_likelihood(X)
    pretrain(d, X, epochs=3, learning_rate=0.05, batch_size=20)
    after_pre = d.exact_log_likelihood(X)
    assert after_pre > before + 0.5
    tr = DBMTrainer(learning_rate=0.05, batch_size=20, seed=0)
    for _ in range(5):
        tr.epoch(d, X)
    assert tr.updates == 30
    assert d.exact_log_likelihood(X) > after_pre
    # a seed reproduces the run bit for bit
    d2 = DBM([6, 4, 3], seed=0, scale=0.01)
    pretrain(d2, X, epochs=3, learning_rate=0.05, batch_size=20)
    tr2 = DBMTrainer(learning_rate=0.05, batch_size=20, seed=0)
    for _ in range(5):
        tr2.epoch(d2, X)
    for a, b in zip(d.W, d2.W):
        np.testing.assert_array_equal(a, b)


def test_save_load_roundtrip(tmp_path):
    d = _dbm([5, 3, 2], 0.3, 0)
    d2 = DBM.load(d.save(tmp_path / "m.npz"))
    assert d2.layers == d.layers
    for a, b in zip(d.W + d.biases, d2.W + d2.biases):
        np.testing.assert_array_equal(a, b)


def test_bad_inputs():
    with pytest.raises(ValueError, match="layers"):
        DBM([5])
    with pytest.raises(ValueError, match="layers"):
        DBM([5, 0])
    d = DBM([4, 3, 2])
    with pytest.raises(ValueError, match="init"):
        tap_solve(d, np.ones((2, 5)))
    with pytest.raises(ValueError, match="damping"):
        tap_solve(d, np.ones((2, 4)), damping=0)
    with pytest.raises(TypeError, match="dbm"):
        tap_solve("x", np.ones((2, 4)))
    with pytest.raises(ValueError, match="exact"):
        DBM([20, 5, 3]).exact()
    with pytest.raises(ValueError, match="W must have shapes"):
        d.set_params(W=[np.zeros((4, 3))])


# ---------------------------------------------------------------------- the run loop
def _three_protos(n=50, seed=42):
    rng = np.random.default_rng(seed)
    proto = (rng.random((3, 16)) < 0.5).astype(float)
    X = proto[rng.integers(0, 3, n)]
    return np.abs(X - (rng.random(X.shape) < 0.1))


#: sums and absolute sums (``float.hex``) of W[0], W[1], W[2], biases[0..3] of the case in
#: test_seeded_training_is_the_one_from_before_the_run_loop, computed with the loops
#: pretrain and DBMTrainer had before they ran through rbmviz.runs.Run (commit 7ade64a)
_BEFORE_PRETRAIN = [
    ('0x1.4d343fff8cfd4p-2', '0x1.0a9971a723ba2p+2'), ('-0x1.232bdbd845998p-4', '0x1.40e46a476d189p-1'),
    ('0x1.b88bdc39b299cp-4', '0x1.2f3e24dd423c8p-1'), ('-0x1.eb96706281700p-7', '0x1.7bf906be1254ap-1'),
    ('0x1.1402ad2d75cc8p-4', '0x1.659ab2e6f4c38p-4'), ('-0x1.8732e433e9406p-6', '0x1.8732e433e9406p-6'),
    ('-0x1.f5b86f31e64d2p-14', '0x1.a6b9838c37acep-12')]
_BEFORE_JOINT = [
    ('0x1.5da7366381060p+0', '0x1.214173fe47896p+3'), ('0x1.18b15f9c987f0p-2', '0x1.472db16de59b0p-1'),
    ('0x1.b9f0c11dc9ee4p-4', '0x1.2e9a50e0cda18p-1'), ('-0x1.9bbcbf8f05dbcp-5', '0x1.3aedba1a8bb58p+0'),
    ('0x1.d54d31b017e60p-4', '0x1.d54d31b017e60p-4'), ('-0x1.8425846087ab7p-6', '0x1.8853a084c293cp-6'),
    ('-0x1.2939dd0d8922dp-13', '0x1.aa2450e2dcf91p-12')]


def _sums(d):
    return np.array([(a.sum(), np.abs(a).sum()) for a in d.W + d.biases])


def test_seeded_training_is_the_one_from_before_the_run_loop():
    """Three hidden layers, 50 rows in batches of 15 (5 rows left over each epoch), K < M and
    momentum: pretrain and DBMTrainer through rbmviz.runs.Run give the parameters their own
    loops gave (tests/golden/dbm.npz holds the defaults' case)."""
    X = _three_protos()
    d = DBM([16, 5, 4, 3], seed=2, scale=0.05)
    calls = []
    pretrain(d, X, epochs=2, learning_rate=0.05, batch_size=15, momentum=0.3, weight_decay=0.01,
             seed=6, callback=lambda l, e: calls.append((l, e)))
    assert calls == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]
    want = np.array([[float.fromhex(a), float.fromhex(b)] for a, b in _BEFORE_PRETRAIN])
    np.testing.assert_allclose(_sums(d), want, rtol=0, atol=1e-12)
    tr = DBMTrainer(learning_rate=0.03, momentum=0.9, weight_decay=0.0, batch_size=15,
                    n_solutions=6, damping=0.7, seed=8)
    for _ in range(3):
        tr.epoch(d, X)
    assert (tr.updates, tr.epochs, tr.not_converged) == (9, 3, 0)
    want = np.array([[float.fromhex(a), float.fromhex(b)] for a, b in _BEFORE_JOINT])
    np.testing.assert_allclose(_sums(d), want, rtol=0, atol=1e-12)


def test_the_joint_phase_is_an_algorithm_the_run_loop_drives():
    """A Run of JointTAP on a DBM with the trainer's shuffle stream and batches is
    DBMTrainer.epoch bit for bit; its records carry the algorithm's fields."""
    from rbmviz.dbm import JointTAP
    from rbmviz.runs import Run
    X = _three_protos()
    d1, d2 = DBM([16, 5, 3], seed=1, scale=0.1), DBM([16, 5, 3], seed=1, scale=0.1)
    tr = DBMTrainer(learning_rate=0.05, batch_size=15, n_solutions=5, seed=3)
    for _ in range(3):
        tr.epoch(d1, X)
    run = Run(d2, X, JointTAP(learning_rate=0.05, n_solutions=5, seed=3), epochs=3,
              batch_size=15, eval_every=1, shuffle=np.random.default_rng(3), remainder="drop")
    recs = list(run)
    assert [r["epoch"] for r in recs] == [0, 1, 2, 3]
    assert [r["updates"] for r in recs] == [0, 3, 6, 9]
    assert recs[-1]["algorithm"] == "dbm-tap" and recs[-1]["tap_not_converged"] == 0
    assert run.metrics == [] and run.rbm is d2
    for a, b in zip(d1.W + d1.biases, d2.W + d2.biases):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(tr.velocity, run.algorithm.velocity):
        np.testing.assert_array_equal(a, b)
    assert tr.rng.bit_generator.state == run._shuffle.bit_generator.state


def test_a_dbm_run_continues_from_its_state_bit_for_bit():
    """Run.state() / restore() of a DBM run: the model, the momentum state and the shuffle
    continue where they were, in a run made afresh."""
    import pickle
    from rbmviz.dbm import JointTAP
    from rbmviz.runs import Run
    X = _three_protos(40)

    def make(d):
        return Run(d, X, JointTAP(learning_rate=0.05, momentum=0.5), epochs=4, batch_size=20,
                   eval_every=1, seed=5)

    whole = DBM([16, 4, 3], seed=0, scale=0.1)
    list(make(whole))
    first = make(DBM([16, 4, 3], seed=0, scale=0.1))
    for _ in range(3):                                   # epoch 0, 1, 2
        next(first)
    state = pickle.loads(pickle.dumps(first.state()))
    fp = state["fingerprint"]            # the model described as rbmviz.runs.models reads it
    assert (fp["shape"], fp["units"], fp["dtype"]) == ([16, 4, 3], ["bernoulli"] * 3, "float64")
    d = DBM([16, 4, 3], seed=9)                          # replaced by the state's
    later = make(d)
    later.restore(state)
    assert [r["epoch"] for r in later] == [3, 4]
    for a, b in zip(whole.W + whole.biases, d.W + d.biases):
        np.testing.assert_array_equal(a, b)
    other = make(DBM([16, 3, 3], seed=0))
    with pytest.raises(ValueError, match="its shape is"):
        other.restore(state)


def test_pretraining_runs_the_tap_rule_per_layer(monkeypatch):
    """pretrain trains each layer with a Run of the TAP rule (heavy-ball momentum), one
    shuffle generator for all layers, batches of exactly batch_size rows."""
    import rbmviz.dbm.training as training
    seen = []
    real = training.Run

    def spy(model, data, algorithm, **kw):
        seen.append((type(model).__name__, model.n_visible, algorithm.name,
                     algorithm.momentum_form, kw["remainder"], id(kw["shuffle"])))
        return real(model, data, algorithm, **kw)

    monkeypatch.setattr(training, "Run", spy)
    pretrain(DBM([16, 5, 3], seed=0), _three_protos(), epochs=1, batch_size=15, seed=1)
    assert [s[:5] for s in seen] == [("RBM", 16, "tap", "heavy_ball", "drop"),
                                     ("RBM", 5, "tap", "heavy_ball", "drop")]
    assert seen[0][5] == seen[1][5]


def test_a_diverging_joint_epoch_stops_with_run_diverged():
    from rbmviz.errors import RunDiverged
    X = _three_protos(30)
    d = DBM([16, 4, 3], seed=0, scale=0.1)
    tr = DBMTrainer(learning_rate=1e6, batch_size=10, seed=0)
    with pytest.raises(RunDiverged, match="joint DBM training diverged in epoch 1") as err:
        tr.epoch(d, X)
    assert err.value.epoch == 1 and err.value.last_good_epoch == 0
    assert err.value.quantity.startswith(("W[", "biases["))


def test_train_records_a_dbm_run_at_epoch_ends():
    """With nothing to evaluate, eval_every="auto" records at epoch ends (not after every
    update); record_every_updates still places records within epochs."""
    import rbmviz
    from rbmviz.dbm import JointTAP
    from rbmviz.runs import Run
    X = _three_protos(60)
    df = rbmviz.train(DBM([16, 4, 3], seed=0), X, JointTAP(learning_rate=0.05), epochs=3,
                      batch_size=20)
    assert df[["epoch", "updates"]].values.tolist() == [[0, 0], [1, 3], [2, 6], [3, 9]]
    assert list(df.columns) == ["algorithm", "epoch", "updates", "gibbs_steps",
                                "tap_not_converged", "wall_time"]
    run = Run(DBM([16, 4, 3], seed=0), X, JointTAP(), epochs=2, batch_size=20,
              record_every_updates=2)
    assert [r["updates"] for r in run] == [0, 2, 4, 6]


def test_layer_runs_driven_in_pieces_pretrain_as_pretrain_does():
    """The runs of layer_runs, driven a few updates at a time across epoch ends (as the live
    engine drives them), give pretrain's parameters; DBMTrainer.run is the run
    DBMTrainer.epoch drives."""
    from rbmviz.algorithms.tap import TAP
    from rbmviz.dbm import JointTAP, layer_runs
    from rbmviz.runs import Run
    X = _three_protos()
    a, b = DBM([16, 5, 3], seed=4, scale=0.05), DBM([16, 5, 3], seed=4, scale=0.05)
    pretrain(a, X, epochs=2, learning_rate=0.05, batch_size=15, seed=7)
    rng = np.random.default_rng(7)

    def tap():
        return TAP(learning_rate=0.05, momentum=0.5, weight_decay=0.001,
                   momentum_form="heavy_ball")

    for run in layer_runs(b, X, epochs=2, batch_size=15, seed=7, rng=rng, algorithm=tap):
        assert isinstance(run, Run) and run.n_batches == 3
        while not run.done:
            run.step_updates(min(2, 2 * run.n_batches - run.algorithm.updates))
    for p, q in zip(a.params, b.params):
        np.testing.assert_array_equal(p, q)
    d1, d2 = DBM([16, 5, 3], seed=1, scale=0.1), DBM([16, 5, 3], seed=1, scale=0.1)
    t1, t2 = (DBMTrainer(learning_rate=0.05, batch_size=15, seed=3) for _ in range(2))
    for _ in range(2):
        t1.epoch(d1, X)
    run = t2.run(d2, X, chunk_seconds=1e-4)
    assert isinstance(run.algorithm, JointTAP) and run.epochs is None
    run.step_updates(4)
    run.step_updates(2)
    for p, q in zip(d1.params, d2.params):
        np.testing.assert_array_equal(p, q)
