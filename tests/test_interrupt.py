"""Ctrl-C stops every long computation within about a second (issue 11, "stoppable").

Each case runs in a subprocess: it warms up (compiles or loads the Numba kernels), prints
``started``, then starts a computation that would run for minutes; the test sends SIGINT
shortly after and asserts that ``KeyboardInterrupt`` reached Python within
:data:`LATENCY` seconds (the child prints the wall-clock time at which it caught it) and that
the process then ended.  Numba kernels cannot be interrupted mid-call, so this holds only
because the long loops return to Python every ~0.25 s (exact enumeration in ranges of chunks,
AIS workers checking a stop event per temperature, TAP solves per iteration, the bias
training in time-bounded kernel calls).
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

#: seconds from SIGINT to KeyboardInterrupt in Python (the issue asks for ~1 s; the margin
#: is for a busy 2-core CI machine)
LATENCY = 1.5
#: seconds the child may take to start (imports, compiling on a fresh machine)
START_BUDGET = 240
#: seconds the uninterrupted computation would at least run (the child is killed after it)
RUN_BUDGET = 20

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")

_PRELUDE = """
import sys, time
import numpy as np
import rbmviz

def interruptible(fn):
    print("started", flush=True)
    try:
        fn()
    except KeyboardInterrupt:
        print(f"interrupted {time.time():.6f}", flush=True)
        sys.exit(3)
    print("finished", flush=True)
    sys.exit(0)
"""


def _interrupt(body, delay=0.5):
    """Run ``body`` (which calls ``interruptible(fn)`` after its warm-up) in a child; send SIGINT
    ``delay`` s after it printed ``started``; return (latency of the KeyboardInterrupt, output)."""
    code = textwrap.dedent(_PRELUDE) + textwrap.dedent(body)
    env = dict(os.environ, PYTHONUNBUFFERED="1", NUMBA_NUM_THREADS="2", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.time() + START_BUDGET
        line = ""
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line or line.startswith("started"):
                break
        assert line.startswith("started"), f"child did not start: {line!r} {proc.stderr.read()}"
        time.sleep(delay)
        sent = time.time()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=RUN_BUDGET)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"Ctrl-C had no effect within {RUN_BUDGET} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "finished" not in out, "the computation finished before the interrupt; make it longer"
    caught = [ln for ln in out.splitlines() if ln.startswith("interrupted")]
    assert proc.returncode == 3 and caught, f"no KeyboardInterrupt: rc={proc.returncode}\n{out}\n{err}"
    return float(caught[0].split()[1]) - sent, out


def test_exact_log_partition_of_a_large_enumeration_stops():
    """2**30 states (minutes on 2 cores) in kernel calls of ~0.25 s."""
    latency, _ = _interrupt("""
        from rbmviz.evaluate import exact
        exact._ONE_CALL_STATES = 1            # warm the chunked path on a small model
        exact.log_partition_exact(rbmviz.RBM(12, 12, seed=0))
        interruptible(lambda: exact.log_partition_exact(rbmviz.RBM(30, 30, seed=0), max_bits=30))
    """)
    assert latency < LATENCY


def test_exact_model_statistics_of_a_large_enumeration_stops():
    latency, _ = _interrupt("""
        from rbmviz.evaluate import exact
        exact._ONE_CALL_STATES = 1
        exact.model_statistics(rbmviz.RBM(12, 12, seed=0))
        rbm = rbmviz.RBM(30, 30, seed=0)
        interruptible(lambda: exact.model_statistics(rbm, log_z=0.0, max_bits=30))
    """)
    assert latency < LATENCY


def test_ais_with_worker_threads_stops():
    """The workers stop after their current temperature; the pool does not wait for the
    whole annealing run."""
    latency, _ = _interrupt("""
        from rbmviz.evaluate import ais_log_partition
        ais_log_partition(rbmviz.RBM(12, 12, seed=0), n_chains=10, n_betas=10, threads=2)
        rbm = rbmviz.RBM(200, 100, seed=0)
        interruptible(lambda: ais_log_partition(rbm, n_chains=400, n_betas=200_000, threads=2))
    """)
    assert latency < LATENCY


def test_ais_in_one_thread_stops():
    latency, _ = _interrupt("""
        from rbmviz.evaluate import ais_log_partition
        ais_log_partition(rbmviz.RBM(12, 12, seed=0), n_chains=10, n_betas=10, threads=1)
        rbm = rbmviz.RBM(200, 100, seed=0)
        interruptible(lambda: ais_log_partition(rbm, n_chains=200, n_betas=200_000, threads=1))
    """)
    assert latency < LATENCY


@pytest.mark.parametrize("visible,hidden", [("bernoulli", "bernoulli"),
                                            ("truncated_gaussian", "truncated_gauss_bernoulli")])
def test_tap_solve_stops(visible, hidden):
    """A TAP solve that never converges (tol below any reachable change) on many rows; the
    truncated-Gaussian moments of one iteration take seconds, so they run in row blocks."""
    latency, _ = _interrupt(f"""
        from rbmviz import tap
        rng = np.random.default_rng(0)
        def model(nv, nh):
            return rbmviz.RBM(nv, nh, visible="{visible}", hidden="{hidden}", seed=0, scale=0.3)
        def data(n, nv):
            X = rng.random((n, nv))
            return (X < 0.5).astype(float) if "{visible}" == "bernoulli" else X
        tap.solve(model(12, 8), data(5, 12), max_iter=3)
        rbm, X = model(400, 300), data(4000, 400)   # truncated: ~3.5 s per layer's moments
        interruptible(lambda: tap.solve(rbm, X, max_iter=10**7, tol=1e-300, damping=0.5))
    """)
    assert latency < LATENCY


def test_expected_cd_training_stops_and_keeps_records():
    """The bias module's exact training (10x10) in ~0.25 s calls; Ctrl-C raises
    rbmviz.errors.Interrupted (a KeyboardInterrupt) carrying the finished records."""
    latency, out = _interrupt("""
        from rbmviz import bias, datasets
        X = datasets.diag(10)
        bias.train_expected_cd(rbmviz.RBM(3, 3, seed=0), X[:, :3], iterations=3)
        rbm = rbmviz.RBM(10, 10, init="uniform", scale=0.5, seed=0)
        start = rbm.copy()
        def go():
            try:
                bias.train_expected_cd(rbm, X, iterations=20_000, record_every=1)
            except rbmviz.errors.Interrupted as exc:
                # the finished records and the parameters reached are kept
                its = [r["iteration"] for r in exc.records]
                assert its == list(range(len(its))) and len(its) >= 2, its
                assert rbm != start
                print("kept", len(its), flush=True)
                raise
        interruptible(go)
    """, delay=1.0)
    assert latency < LATENCY
    assert "kept" in out


# ---------------------------------------------------------------- the chunked paths are exact
def test_time_bounded_enumeration_equals_one_call_to_the_bit(monkeypatch):
    """Splitting the enumeration into many kernel calls (one chunk or one block row each)
    changes nothing: the same sums in the same order."""
    import numpy as np

    import rbmviz
    from rbmviz.evaluate import exact
    from rbmviz.kernels import exact as kx
    rbm = rbmviz.RBM(16, 17, seed=3, scale=1.0)
    rbm.b[:] = np.linspace(-1, 1, 16)
    M, a, o, _ = exact._enum_args(rbm)
    whole = kx.log_sum_states(M, a, o)
    stats = kx.expected_stats(M, a, o, whole)
    calls = []
    real = kx.log_sum_chunks_
    monkeypatch.setattr(exact, "_ONE_CALL_STATES", 1)
    monkeypatch.setattr(exact, "CALL_SECONDS", 1e-12)          # one chunk per call
    monkeypatch.setattr(kx, "log_sum_chunks_", lambda *args: (calls.append(args[3:5]), real(*args)))
    assert exact.log_partition_exact(rbm) == whole
    assert len(calls) == kx.n_chunks(16)[0] - 7                # the first call takes 8
    got = exact.model_statistics(rbm)
    assert all(np.array_equal(x, y) for x, y in zip(got, stats))


def test_row_blocks_of_truncated_moments_equal_one_call():
    import numpy as np

    import rbmviz
    from rbmviz.kernels import priors as kp
    from rbmviz.tap import inference
    rbm = rbmviz.RBM(7, 5, visible="truncated_gaussian", hidden="truncated_gauss_bernoulli", seed=1)
    rng = np.random.default_rng(0)
    for layer, n in zip(inference._layers(rbm), (7, 5)):
        B, A = rng.normal(size=(50, n)), rng.normal(size=(50, n))
        whole = [np.empty((50, n)) for _ in range(3)]
        kp.moments_rows(*layer.args, B, A, *whole)
        layer._rows_per_call = 3
        parts = layer.moments(B, A)
        assert all(np.array_equal(x, y) for x, y in zip(parts, whole))


def test_clustering_in_row_ranges_equals_one_call(monkeypatch):
    import numpy as np

    from rbmviz.kernels import tap as kt
    from rbmviz.tap import _iteration, inference
    rng = np.random.default_rng(0)
    protos = rng.random((30, 12))
    X = protos[rng.integers(0, 30, 2000)] + rng.normal(0, 1e-6, (2000, 12))
    s = X.sum(axis=1)
    order = np.argsort(s, kind="stable")
    X, s = X[order], s[order]
    whole = kt.cluster_sorted(X, s, 7, 12 * 1e-4, 1e-4, 1e-4)
    assert whole.max() == 29                                   # 30 clusters found
    monkeypatch.setattr(_iteration, "CALL_SECONDS", 1e-12)     # one row per call
    assert np.array_equal(inference._cluster_sorted(X, s, 7, 12 * 1e-4, 1e-4, 1e-4), whole)


def test_counting_many_tap_solutions_stops():
    """Clustering 80,000 solutions with one free-energy value (every pair compared: ~6 s on
    this 2-core machine; 20,000 took 0.44 s, shorter than the 0.5 s before the interrupt)
    runs in ranges of rows."""
    latency, _ = _interrupt("""
        from rbmviz.tap import inference
        rng = np.random.default_rng(0)
        inference._cluster_sorted(rng.random((50, 30)), np.zeros(50), 20, 1.0, 1e-4, 1e-4)
        X = rng.random((80_000, 100))
        interruptible(lambda: inference._cluster_sorted(X, np.zeros(80_000), 600, 1.0, 1e-4, 1e-4))
    """)
    assert latency < LATENCY
