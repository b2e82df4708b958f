"""CD/PCD training: sampled updates against their exact expectation, persistence of PCD
chains, the two code paths sharing one random stream, reproducibility, divergence."""
import math

import numba
import numpy as np
import pytest
from brute import random_rbm

import rbmviz
from rbmviz import algorithms, evaluate as ev
from rbmviz.runs import Run, RunDiverged, batch_bounds

BS = rbmviz.datasets.bars_and_stripes(3)


def _one_update(alg, rbm, X, path):
    """One update of ``alg`` on the batch ``X`` via the serial kernel or the BLAS path."""
    if path == "serial":
        alg.train_epochs(rbm, X, np.arange(len(X))[None, :], np.array([0, len(X)]))
    else:
        alg.update(rbm, X)


@pytest.mark.parametrize("path", ["serial", "blas"])
@pytest.mark.parametrize("k", [1, 3])
def test_sampled_cd_update_averages_to_exact_expected_update(k, path):
    rbm0 = random_rbm(4, 3, scale=0.7, seed=k)
    X = np.array([[1, 0, 1, 0], [0, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]], float)
    lr, reps = 1e-3, 6000
    alg = algorithms.create("cd", k=k, learning_rate=lr, seed=1)
    alg.setup(rbm0, X, len(X))
    assert alg._serial  # tiny model: the fused serial kernel is the default
    samples = []
    for _ in range(reps):
        rbm = rbm0.copy()
        _one_update(alg, rbm, X, path)           # the algorithm's counter advances each time
        samples.append(np.concatenate([(rbm.W - rbm0.W).ravel(), rbm.b - rbm0.b, rbm.c - rbm0.c]) / lr)
    samples = np.array(samples)
    exact = np.concatenate([a.ravel() for a in ev.expected_cd_update(rbm0, X, k)])
    mean, se = samples.mean(0), samples.std(0) / math.sqrt(reps)
    z = np.abs(mean - exact) / np.maximum(se, 1e-12)
    assert z.max() < 4.5, (z.max(), mean, exact)
    # and the sampled update is not trivially equal to the exact gradient (it is biased)
    assert alg.updates == reps and alg.gibbs_steps == reps * k


def test_serial_and_blas_paths_share_the_random_stream():
    X = BS
    for name in ("cd", "pcd"):
        r1, r2 = random_rbm(9, 4, 0.5, seed=3), random_rbm(9, 4, 0.5, seed=3)
        a1 = algorithms.create(name, k=5, learning_rate=0.1, seed=8)
        a2 = algorithms.create(name, k=5, learning_rate=0.1, seed=8)
        a1.setup(r1, X, 14)
        a2.setup(r2, X, 14)
        order = np.stack([np.random.default_rng(e).permutation(14) for e in range(30)])
        a1.train_epochs(r1, X, order, np.array([0, 7, 14]))       # serial kernel
        for perm in order:                                          # BLAS path
            a2.update(r2, X[perm[:7]])
            a2.update(r2, X[perm[7:]])
        assert a1.counter == a2.counter == 30 * 2 * 2 * 5
        np.testing.assert_allclose(r1.W, r2.W, atol=1e-10)
        np.testing.assert_allclose(r1.b, r2.b, atol=1e-10)
        if name == "pcd":
            assert np.array_equal(a1.chains, a2.chains)


@pytest.mark.parametrize("path", ["serial", "blas"])
def test_pcd_chains_persist_across_updates(path):
    rbm = random_rbm(9, 4, 1.0, seed=5)
    alg = algorithms.create("pcd", k=2, learning_rate=0.05, seed=2)
    alg.setup(rbm, BS, 14)
    start = (np.arange(14 * 9).reshape(14, 9) % 3 == 0).astype(float)
    alg.chains[:] = start
    before, counter = rbm.copy(), alg.counter
    _one_update(alg, rbm, BS, path)
    # the chains moved exactly as k Gibbs steps of the *pre-update* model from `start`
    expected = before.gibbs(start, k=2, seed=alg.gibbs_seed, counter=counter)
    assert np.array_equal(alg.chains, expected)
    # and the next update continues from them, not from the data
    chains1, counter1, before1 = alg.chains.copy(), alg.counter, rbm.copy()
    _one_update(alg, rbm, BS, path)
    assert np.array_equal(alg.chains, before1.gibbs(chains1, k=2, seed=alg.gibbs_seed, counter=counter1))


def test_cd_on_bars_and_stripes_learns_and_respects_the_bound():
    rbm = rbmviz.RBM(9, 4, seed=0, data=BS)
    df = rbmviz.train(rbm, BS, "cd", epochs=3000, learning_rate=0.3, k=12, eval_every=300)
    uniform = -9 * math.log(2)
    best = -math.log(14)
    assert df.train_ll.iloc[0] == pytest.approx(ev.log_likelihood_exact(rbmviz.RBM(9, 4, seed=0, data=BS), BS))
    assert (df.train_ll <= best + 1e-9).all()            # no model beats the data's entropy
    assert df.train_ll.iloc[-1] > uniform + 2.0          # well above the uniform model (−6.24)
    assert list(df.epoch) == list(range(0, 3001, 300))
    assert list(df.gibbs_steps) == [e * 12 for e in df.epoch]
    assert (np.diff(df.wall_time) >= 0).all()


def test_same_seed_reproduces_bit_for_bit_and_other_seeds_differ():
    def run(seed, alg="pcd", batch=5):
        rbm = rbmviz.RBM(9, 4, seed=1)
        df = rbmviz.train(rbm, BS, alg, epochs=200, batch_size=batch, learning_rate=0.2, k=3,
                          seed=seed, eval_every=50)
        return df.drop(columns="wall_time"), rbm
    (d1, m1), (d2, m2), (d3, m3) = run(0), run(0), run(1)
    assert d1.equals(d2) and m1 == m2
    assert not np.array_equal(m1.W, m3.W)


def test_blas_path_is_identical_for_one_and_two_threads():
    X = rbmviz.datasets.digits()[:400]
    res = []
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            rbm = rbmviz.RBM(64, 32, seed=0)
            run = Run(rbm, X, "pcd", epochs=2, batch_size=50, learning_rate=0.05, seed=3, k=2,
                      metrics=["recon_error"])
            assert not run.algorithm._serial
            list(run)
            res.append((rbm, run.algorithm.chains.copy()))
    finally:
        numba.set_num_threads(before)
    assert res[0][0] == res[1][0] and np.array_equal(res[0][1], res[1][1])


def test_float32_training_keeps_dtype_and_learns():
    X = rbmviz.datasets.digits()[:300]
    rbm = rbmviz.RBM(64, 16, seed=0, dtype="float32")
    df = rbmviz.train(rbm, X, "cd", epochs=10, batch_size=30, learning_rate=0.1, eval_every=10)
    assert rbm.W.dtype == np.float32 and rbm.b.dtype == np.float32
    assert df.recon_error.iloc[-1] < df.recon_error.iloc[0]
    assert df.pseudo_ll.iloc[-1] > df.pseudo_ll.iloc[0]


def test_batch_bounds_cover_the_data_evenly():
    b = batch_bounds(10, 3)
    assert list(b) == [0, 4, 7, 10]
    assert list(batch_bounds(14, 14)) == [0, 14]
    assert list(np.diff(batch_bounds(60000, 100))) == [100] * 600


def test_minibatches_are_reshuffled_every_epoch():
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=3, batch_size=7, learning_rate=0.1)
    seen = []
    real = run.algorithm.train_epochs
    run.algorithm.train_epochs = lambda rbm, data, order, bounds, mw: (seen.append(order.copy()),
                                                                        real(rbm, data, order, bounds, mw))[1]
    list(run)
    orders = np.unique(np.concatenate(seen), axis=0)   # an epoch may be trained in pieces
    assert orders.shape == (3, 14)
    assert all(sorted(o) == list(range(14)) for o in orders)
    assert len({tuple(o) for o in orders}) == 3


def test_momentum_and_weight_decay():
    def final(**kw):
        rbm = rbmviz.RBM(9, 4, seed=0)
        rbmviz.train(rbm, BS, "cd", epochs=300, learning_rate=0.1, k=1, eval_every=300, **kw)
        return rbm
    plain, zero = final(), final(momentum=0.0, weight_decay=0.0)
    assert plain == zero
    decayed = final(weight_decay=0.05)
    assert np.linalg.norm(decayed.W) < np.linalg.norm(plain.W)
    fast = final(momentum=0.9)
    assert not np.array_equal(fast.W, plain.W)
    assert np.isfinite(fast.W).all()


def test_diverging_run_stops_and_says_why():
    rbm = rbmviz.RBM(9, 4, seed=0)
    run = Run(rbm, BS, "cd", epochs=1000, learning_rate=50.0, eval_every=10, max_weight=10.0)
    with pytest.raises(RunDiverged, match=r"max \|\w\| = .* exceeds max_weight=10.*epoch \d+") as info:
        list(run)
    err = info.value
    assert err.quantity in ("W", "b", "c") and err.value > 10 and err.epoch > err.last_good_epoch
    assert run.records and run.records[-1]["epoch"] == err.last_good_epoch
    with pytest.raises(StopIteration):
        next(run)                                   # the run is over


@pytest.mark.parametrize("n_hidden,batch,serial", [(4, 14, True), (4, 2, True), (64, 100, False)])
def test_divergence_is_caught_in_the_epoch_it_happens(n_hidden, batch, serial):
    # evaluation only every 100 epochs, but the parameters are checked after every epoch
    # (inside the serial kernel and in the BLAS loop alike)
    X = BS if batch == 14 else rbmviz.datasets.digits()[:200]
    rbm = rbmviz.RBM(X.shape[1], n_hidden, seed=0)
    run = Run(rbm, X, "cd", epochs=1000, batch_size=batch, learning_rate=50.0,
              eval_every=100, max_weight=10.0)
    assert run.algorithm._serial == serial
    with pytest.raises(RunDiverged) as info:
        list(run)
    err = info.value
    assert err.last_good_epoch == 0 and 0 < err.epoch < 100
    assert f"in epoch {err.epoch} " in str(err)
    # the epoch before the reported one was still healthy: replay up to it
    rbm2 = rbmviz.RBM(X.shape[1], n_hidden, seed=0)
    list(Run(rbm2, X, "cd", epochs=err.epoch - 1, batch_size=batch, learning_rate=50.0,
             eval_every=1000, max_weight=10.0))
    assert max(np.abs(p).max() for p in rbm2.params) <= 10.0


def test_set_settings_validates_and_applies_mid_run():
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "pcd", epochs=None, learning_rate=0.1, k=1)
    next(run)
    run.algorithm.set_settings(learning_rate=0.5, k=3)
    assert run.algorithm.learning_rate == 0.5 and run.algorithm.k == 3
    rec = run.step(2)
    assert rec["gibbs_steps"] == 2 * 3
    with pytest.raises(ValueError, match="k must be >= 1"):
        run.algorithm.set_settings(k=0)
    with pytest.raises(TypeError, match=r"does not take setting\(s\) \['d'\]"):
        run.algorithm.set_settings(d=3)
    assert run.algorithm.k == 3


def test_a_ready_algorithm_resumes_its_state_in_a_new_run():
    rbm = rbmviz.RBM(9, 4, seed=0)
    alg = algorithms.create("pcd", k=2, learning_rate=0.1, seed=4)
    list(Run(rbm, BS, alg, epochs=5))
    chains, counter = alg.chains.copy(), alg.counter
    run = Run(rbm, BS[:7], alg, epochs=1, record_initial=False)
    assert np.array_equal(alg.chains, chains) and alg.counter == counter   # not re-initialised
    recs = list(run)
    assert [r["epoch"] for r in recs] == [1] and alg.updates == 6
    with pytest.raises(ValueError, match="cannot resume pcd"):
        Run(rbmviz.RBM(9, 5), BS, alg, epochs=1)


def test_nan_parameters_are_reported():
    rbm = rbmviz.RBM(9, 4, seed=0)
    run = Run(rbm, BS, "cd", epochs=5, learning_rate=0.1)
    next(run)
    rbm.W[0, 0] = np.nan
    with pytest.raises(RunDiverged, match="W contains NaN or inf"):
        run.step(1)


def test_open_ended_run_and_stop():
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "pcd", epochs=None, learning_rate=0.1, eval_every=5)
    recs = [next(run) for _ in range(4)]
    assert [r["epoch"] for r in recs] == [0, 5, 10, 15]
    run.stop()
    with pytest.raises(StopIteration):
        next(run)
    assert run.done


def test_pattern_tables_draw_exactly_the_direct_samples():
    # the serial kernel may draw a tiny layer from a table of all input patterns; the
    # table is summed in the same order as the direct computation: identical results
    from rbmviz.kernels.gibbs import cd_updates_serial_, use_pattern_table
    assert use_pattern_table(4, 14, 12) and not use_pattern_table(9, 14, 12)
    out = []
    for table_h, table_v in [(False, False), (True, True)]:
        rbm = random_rbm(6, 4, 1.0, seed=2)
        v = [np.zeros_like(p) for p in rbm.params]
        chains = BS[:10, :6].copy()
        order = np.stack([np.random.default_rng(e).permutation(14) for e in range(20)])
        ctr, epochs = cd_updates_serial_(*rbm.params, BS[:, :6].copy(), order, np.array([0, 14]), 7,
                                         True, chains, 0.2, 0.0, 0.0, *v, 5, 0, 1e3, table_h, table_v)
        out.append((rbm, chains, ctr, epochs))
    assert out[0][0] == out[1][0] and np.array_equal(out[0][1], out[1][1])
    assert out[0][2:] == out[1][2:] == (20 * 2 * 7, 20)


def test_keep_records_false_keeps_only_the_latest_record():
    full = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=30, eval_every=10, learning_rate=0.1)
    lean = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=30, eval_every=10, learning_rate=0.1,
               keep_records=False)
    a, b = list(full), list(lean)
    assert [r["epoch"] for r in b] == [0, 10, 20, 30]                 # the stream is the same
    assert [{k: v for k, v in r.items() if k != "wall_time"} for r in a] == \
           [{k: v for k, v in r.items() if k != "wall_time"} for r in b]
    assert len(full.records) == 4 and [r["epoch"] for r in lean.records] == [30]
