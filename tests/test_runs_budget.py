"""The run loop's budget, chunking, live knobs, float32 working copy, divergence guard,
Ctrl-C and thread-count independence (rbmviz/runs/, rbmviz/_blas.py)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import rbmviz
from rbmviz.errors import Interrupted, RunDiverged
from rbmviz.evaluate import metrics as M
from rbmviz.runs import Run

BS = rbmviz.datasets.bars_and_stripes(3)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_auto_spacing_keeps_evaluation_within_the_budget(monkeypatch):
    """On a fake clock (no dependence on the machine's load): an update costs 20 µs, an
    evaluation 10 ms; the records beyond the mandatory first and last take at most the
    budget's 10 % of the run's time."""
    import types
    clock = types.SimpleNamespace(t=0.0)
    monkeypatch.setattr(rbmviz.runs.loop, "time", types.SimpleNamespace(perf_counter=lambda: clock.t))

    def fn(rbm, ctx):
        clock.t += 0.01
        return float(np.abs(rbm.W).sum())
    M.register(M.Metric("clocked_test", fn, "a metric that takes 10 ms of the fake clock",
                        binary_only=False, cost="moderate"), replace=True)
    try:
        run = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=6000, learning_rate=0.1, k=12,
                  metrics=["clocked_test"], seed=0)
        alg, train_epochs = run.algorithm, run.algorithm.train_epochs

        def timed(*args):
            u0 = alg.updates
            done = train_epochs(*args)
            clock.t += 2e-5 * (alg.updates - u0)
            return done
        alg.train_epochs = timed
        recs = list(run)
    finally:
        M.METRICS.pop("clocked_test", None)
    assert run.wall_time == pytest.approx(6000 * 2e-5 + len(recs) * 0.01)
    assert len(recs) >= 3                              # spaced, not only the first and last
    extra = run.eval_time - 2 * 0.01
    assert extra <= 0.1 * run.wall_time + 0.01, (run.eval_time, run.wall_time, len(recs))
    assert extra >= 0.05 * run.wall_time                # and the budget is used, not wasted
    epochs = [r["epoch"] for r in recs]
    assert epochs[0] == 0 and epochs[-1] == 6000 and epochs == sorted(epochs)
    assert all(isinstance(e, (int, np.integer)) for e in epochs)   # full batch: epoch ends
    assert run.metric_seconds["clocked_test"] == pytest.approx(0.01)   # each metric's cost


def test_an_explicit_eval_every_wins_over_auto():
    df = rbmviz.train(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=20, eval_every=5, learning_rate=0.1)
    assert list(df.epoch) == [0, 5, 10, 15, 20]


def test_records_within_an_epoch_carry_fractional_epochs():
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "pcd", epochs=2, batch_size=2, learning_rate=0.1,
              record_every_updates=3, metrics=["weight_norm"])
    recs = list(run)
    assert [r["updates"] for r in recs] == [0, 3, 6, 9, 12, 14]     # 7 updates per epoch
    assert recs[1]["epoch"] == pytest.approx(3 / 7) and recs[-1]["epoch"] == 2


def _final_params(**kw):
    rbm = rbmviz.RBM(12, 5, seed=3)
    X = (np.random.default_rng(1).random((60, 12)) < 0.4).astype(float)
    run = Run(rbm, X, "pcd", epochs=4, batch_size=6, learning_rate=0.1, k=2, seed=5,
              metrics=["weight_norm"], **kw)
    for _ in run:
        pass
    return [p.copy() for p in rbm.params], run


@pytest.mark.parametrize("kw", [dict(chunk_seconds=1e-9), dict(record_every_updates=7),
                                dict(max_seconds=1e-6, eval_every=1)])
def test_results_do_not_depend_on_chunking_or_record_positions(kw):
    ref, _ = _final_params(eval_every=4)
    got, run = _final_params(**kw)
    assert all(np.array_equal(a, b) for a, b in zip(ref, got))


def test_max_seconds_bounds_each_next_for_live_use():
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=None, learning_rate=0.1, k=50,
              eval_every=10**6, max_seconds=0.05, metrics=["weight_norm"])
    next(run)
    updates = []
    for _ in range(5):
        t = time.perf_counter()
        rec = next(run)
        assert time.perf_counter() - t < 1.0           # not 10**6 epochs
        updates.append(rec["updates"])
    assert updates == sorted(updates) and updates[0] > 0


def test_yield_when_ends_a_point_after_the_chunk_it_is_asked_in():
    """``Run.yield_when`` (a live engine's Pause): asked after every chunk, True ends the point
    there — the record comes at once instead of after 10**6 epochs — and the training is
    the same as without it (chunking never changes results)."""
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=None, learning_rate=0.1, k=5,
              eval_every=10**6, chunk_seconds=1e-4, metrics=["weight_norm"])
    next(run)
    asked = []
    run.yield_when = lambda: asked.append(1) or len(asked) >= 3
    t = time.perf_counter()
    rec = next(run)
    assert time.perf_counter() - t < 5.0 and len(asked) == 3
    assert 0 < rec["updates"] < 10**6
    ref = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=None, learning_rate=0.1, k=5,
              eval_every=1, metrics=["weight_norm"])
    ref.step_updates(rec["updates"])
    assert all(np.array_equal(a, b) for a, b in zip(ref.rbm.params, run.rbm.params))


def test_large_float64_models_train_a_float32_copy_and_stay_float64():
    X = (np.random.default_rng(0).random((200, 250)) < 0.2).astype(np.float64)
    rbm = rbmviz.RBM(250, 200, seed=0)                 # 50,000 weights: large
    run = Run(rbm, X, "pcd", epochs=2, batch_size=50, learning_rate=0.05)
    recs = list(run)
    assert run.dtype == np.float32 and rbm.dtype == np.float64
    assert run.metrics == ["spl", "recon_error", "weight_norm"]
    assert np.array_equal(rbm.W, run._work.W.astype(np.float64))     # synced at the end
    assert recs[-1]["recon_error"] < recs[0]["recon_error"]
    # exactness at stake or asked for float64: no cast
    assert Run(rbmviz.RBM(250, 200, seed=0), X, "pcd", epochs=1, dtype=None).dtype == np.float64
    small = Run(rbmviz.RBM(250, 16, seed=0), X, "pcd", epochs=1)     # exact LL feasible
    assert small.dtype == np.float64 and "train_ll" in small.metrics


@pytest.mark.parametrize("algorithm", ["cd", "pcd", "cg", "sdcp", "csdcp", "ssd"])
def test_every_rule_stops_on_likelihood_collapse(algorithm):
    rbm = rbmviz.RBM(9, 4, seed=0)
    with pytest.raises(RunDiverged) as info:
        rbmviz.train(rbm, BS, algorithm, epochs=200, learning_rate=1e3, k=4, eval_every=20,
                     metrics=["train_ll", "weight_norm"])
    err = info.value
    assert err.quantity in ("train_ll", "W", "b", "c"), err
    assert err.quantity in str(err) and err.records and err.records[0]["epoch"] == 0
    assert err.epoch <= 20                             # caught at the first evaluation


def test_collapse_names_the_likelihood_and_when():
    run = Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=200, learning_rate=1e3, eval_every=20,
              metrics=["train_ll"], max_weight=1e9)    # no parameter limit: the LL must show it
    with pytest.raises(RunDiverged, match="train_ll collapsed") as info:
        list(run)
    assert info.value.quantity == "train_ll" and info.value.value < -100
    assert info.value.last_good_epoch == 0 and info.value.epoch == 20


def test_parameters_pinned_near_max_weight_count_as_divergence():
    with pytest.raises(RunDiverged, match="pinned near max_weight") as info:
        rbmviz.train(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=200, learning_rate=1e3,
                     eval_every=20, metrics=["weight_norm"])
    assert info.value.quantity in ("W", "b", "c")


def test_a_healthy_run_is_not_flagged():
    df = rbmviz.train(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=2000, learning_rate=0.5, k=12,
                      eval_every=100)
    assert df.train_ll.iloc[-1] > df.train_ll.iloc[0]


_SIGINT_CHILD = textwrap.dedent("""
    import sys, time, numpy as np, rbmviz
    from rbmviz.errors import Interrupted
    big = sys.argv[1] == "blas"
    if big:   # BLAS path: one update is 1000 Gibbs steps of products
        X = (np.random.default_rng(0).random((100, 400)) < 0.2).astype(float)
        rbm, kw = rbmviz.RBM(400, 300, seed=0), dict(batch_size=100, k=1000)
    else:     # fused serial kernel of a small model
        X, rbm, kw = rbmviz.datasets.bars_and_stripes(3), rbmviz.RBM(9, 4, seed=0), dict(k=12)
    rbmviz.train(rbm, X, "pcd", epochs=1, learning_rate=0.01, metrics=["weight_norm"], **kw)
    print("ready", flush=True)
    try:
        rbmviz.train(rbm, X, "pcd", epochs=1000000, learning_rate=0.01, metrics=["weight_norm"],
                     **kw)
    except Interrupted as exc:
        print("interrupted", len(exc.records), exc.records[0]["epoch"], flush=True)
        sys.exit(0)
    print("finished", flush=True)
""")


@pytest.mark.parametrize("path", ["serial", "blas"])
def test_ctrl_c_stops_train_within_a_second_and_keeps_the_records(path):
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.Popen([sys.executable, "-c", _SIGINT_CHILD, path], stdout=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        t = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        elapsed = time.perf_counter() - t
    finally:
        proc.kill()
    assert out.startswith("interrupted"), out
    n_records, first_epoch = out.split()[1:3]
    assert int(n_records) >= 1 and first_epoch == "0"
    assert elapsed < 3.0          # ~1 s target; generous for a loaded 2-core machine


_THREADS_CHILD = textwrap.dedent("""
    import hashlib, numpy as np, rbmviz
    X = (np.random.default_rng(0).random((300, 200)) < 0.2).astype(float)
    rbm = rbmviz.RBM(200, 120, seed=0, dtype="float32")
    run = rbmviz.Run(rbm, X, "pcd", epochs=2, batch_size=100, learning_rate=0.05, k=2,
                     metrics=["spl", "recon_error"])
    recs = list(run)
    assert not run.algorithm._serial
    h = hashlib.sha256(b"".join(p.tobytes() for p in rbm.params))
    small = rbmviz.RBM(16, 200, seed=1, scale=0.3)
    Z = rbmviz.evaluate.log_partition_exact(small)
    A = rbmviz.evaluate.ais_log_partition(rbm, n_chains=60, n_betas=100, seed=0).log_z
    print(h.hexdigest(), repr(recs[-1]["spl"]), repr(recs[-1]["recon_error"]), repr(Z), repr(A))
""")


def test_blas_path_is_bit_identical_for_any_thread_count():
    """The README's claim: CD/PCD runs on the BLAS path, the spl/recon metrics, exact log Z
    and AIS are bit-identical for OPENBLAS_NUM_THREADS / NUMBA_NUM_THREADS 1 and 2."""
    outs = []
    for n in ("1", "2"):
        env = {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": n,
               "NUMBA_NUM_THREADS": n, "OMP_NUM_THREADS": n}
        outs.append(subprocess.run([sys.executable, "-c", _THREADS_CHILD], env=env, cwd=ROOT,
                                   capture_output=True, text=True, timeout=300, check=True).stdout)
    assert outs[0] == outs[1]


def test_blocked_products_do_not_depend_on_the_pool_size():
    from rbmviz import _blas
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((200, 300)), rng.standard_normal((300, 70))
    before = _blas.get_threads()
    try:
        res = []
        for n in (1, 2, 3):
            _blas.set_threads(n)
            out = np.empty((200, 70))
            with _blas.single_threaded_blas():
                _blas.matmul(A, B, out)
            res.append(out)
    finally:
        _blas.set_threads(before)
    assert np.array_equal(res[0], res[1]) and np.array_equal(res[0], res[2])
    np.testing.assert_allclose(res[0], A @ B, rtol=1e-12, atol=1e-12)


def test_train_interrupted_in_process_keeps_records(monkeypatch):
    run_next = Run.__next__
    calls = {"n": 0}

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return run_next(self)

    monkeypatch.setattr(Run, "__next__", flaky)
    rbm = rbmviz.RBM(9, 4, seed=0)
    with pytest.raises(Interrupted) as info:
        rbmviz.train(rbm, BS, "cd", epochs=100, eval_every=10, learning_rate=0.1)
    assert [r["epoch"] for r in info.value.records] == [0, 10]
    assert isinstance(info.value, KeyboardInterrupt) and info.value.run.rbm is rbm


def test_bad_budget_knobs_are_named():
    for kw, name in ((dict(eval_every="sometimes"), "eval_every"), (dict(eval_every=0), "eval_every"),
                     (dict(eval_budget=0), "eval_budget"), (dict(max_seconds=-1), "max_seconds"),
                     (dict(record_every_updates=0), "record_every_updates"),
                     (dict(dtype="float16"), "dtype"), (dict(metrics="all"), "metrics")):
        with pytest.raises((ValueError, TypeError), match=name):
            Run(rbmviz.RBM(9, 4, seed=0), BS, "cd", epochs=1, **kw)
