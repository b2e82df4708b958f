"""Smoke tests of the benchmarks in bench/ (their cheapest correctness pieces, no timing).

The instrumented replica of ``CD.update`` in bench/bench_large.py must stay bit-identical
to ``alg.update``; if ``CD.update`` changes, this fails and the replica needs updating.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("threadpoolctl")
bench_large = pytest.importorskip("bench.bench_large")
bench_small = pytest.importorskip("bench.bench_small")


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return (rng.random((60, 784)) < 0.3).astype(np.float64)


@pytest.mark.parametrize("algorithm, k, dtype", [("pcd", 1, "float32"), ("pcd", 2, "float64"),
                                                 ("cd", 1, "float32")])
def test_replica_matches_cd_update(X, algorithm, k, dtype):
    res = bench_large.check_replica(X, n_hidden=50, batch=20, updates=3, algorithm=algorithm,
                                    k=k, dtype=dtype)
    assert res["match"], res


def test_replica_mismatch_is_reported_not_raised(X, monkeypatch):
    orig = bench_large.InstrumentedUpdate.__call__

    def off_by_a_bit(self, rbm, batch, sec=None):
        orig(self, rbm, batch, sec)
        rbm.params[0][0, 0] += 1e-3
    monkeypatch.setattr(bench_large.InstrumentedUpdate, "__call__", off_by_a_bit)
    res = bench_large.check_replica(X, n_hidden=50, batch=20, updates=2)
    assert not res["match"] and "max |diff| W" in res["detail"]


def test_gemm_count_matches_docstring():
    assert bench_large.rbmviz_gemms_per_update(k=1, persistent=True) == 6
    assert bench_large.rbmviz_gemms_per_update(k=1, persistent=False) == 5


def test_sklearn_float32_paths(X):
    pytest.importorskip("sklearn")
    Xs = np.tile(X, (2, 1))[:100]          # bench_large uses batch 100
    f, s = bench_large.make_sklearn_partial_fit(Xs, np.float32)
    f()
    assert s.components_.dtype == np.float64      # partial_fit casts to float64
    f, s = bench_large.make_sklearn_fit_loop(Xs, np.float32)
    f()
    assert s.components_.dtype == np.float32


def test_small_contenders_run():
    import rbmviz
    X = np.ascontiguousarray(rbmviz.datasets.bars_and_stripes(3), dtype=np.float64)
    for name in ("cd", "pcd"):
        bench_small.make_kernel(X, name, 5)()
        bench_small.make_numpy(X, name == "pcd", 5)()
    mod, why = bench_small.error_model_numpy_module()
    assert isinstance(why, str)


def test_dc_contenders_and_numpy_references():
    """bench_dc's contenders run; the numpy references are the rules they claim to be
    (S-DCP with d = 1 is CD draw for draw; exact_atll is the exact ATLL; every rule learns)."""
    import rbmviz
    from bench import bench_dc
    from bench import numpy_reference as npref
    X = bench_dc.datasets()["bars_and_stripes_3"]
    for name in bench_dc.RULES:
        bench_dc.make_fused(X, name, 3)()
        bench_dc.make_blas(X, name, 2)()
    rbm = rbmviz.RBM(9, 4, seed=0, data=X)
    assert npref.exact_atll(*rbm.params, X) == pytest.approx(
        rbmviz.evaluate.log_likelihood_exact(rbm, X), abs=1e-12)
    a, b = ([p.copy() for p in rbm.params] for _ in range(2))
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(5):
        npref.cd_epoch(*a, X, 4, 0.3, rng_a)
        npref.sdcp_epoch(*b, X, 1, 4, 0.3, rng_b)
    assert all(np.allclose(p, q, rtol=0, atol=1e-14) for p, q in zip(a, b))
    # CS-DCP with frozen zero offsets is S-DCP; SSD's step is the # of CD's direction
    c, rng_c = [p.copy() for p in rbm.params], np.random.default_rng(1)
    for _ in range(5):
        npref.csdcp_epoch(*c, X, 1, 4, 0.3, rng_c, np.zeros(9), np.zeros(4), 0.0, 0.0)
    assert all(np.allclose(p, q, rtol=0, atol=1e-12) for p, q in zip(a, c))
    from rbmviz.algorithms.ssd import sharp_matrix, sharp_vector
    cd, ssd = ([p.copy() for p in rbm.params] for _ in range(2))
    npref.cd_epoch(*cd, X, 3, 1.0, np.random.default_rng(2))
    npref.ssd_epoch(*ssd, X, 3, 0.01, np.random.default_rng(2), 0.02, 0.03)
    g = [x - y for x, y in zip(cd, rbm.params)]
    np.testing.assert_allclose(ssd[0] - rbm.W, 0.01 * sharp_matrix(g[0]), atol=1e-12)
    np.testing.assert_allclose(ssd[2] - rbm.c, 0.03 * sharp_vector(g[2]), atol=1e-12)
    start = npref.exact_atll(*rbm.params, X)
    for name in ("sdcp", "csdcp", "cg"):
        f = bench_dc.make_numpy(X, name, 600)
        f()
        assert npref.exact_atll(*f.params, X) > start + 1.0, name


def test_without_mnist_files_the_bench_uses_labelled_synthetic_rows(tmp_path, monkeypatch):
    """No MNIST files: synthetic 0/1 rows of MNIST's density, said so, instead of a traceback."""
    from bench import _common
    import rbmviz
    monkeypatch.setenv("RBMVIZ_DATA", str(tmp_path))

    def missing(**kw):
        raise FileNotFoundError("no mnist here")
    monkeypatch.setattr(rbmviz.datasets, "mnist", missing)
    X, source = _common.load_mnist_binary(200)
    assert source.startswith("SYNTHETIC") and "density" in source
    assert X.shape == (200, 784) and set(np.unique(X)) <= {0.0, 1.0}
    assert abs(X.mean() - _common.MNIST_DENSITY) < 0.01


def test_noisy_rounds_are_left_out_and_a_noisy_path_gets_no_ratio(monkeypatch):
    from bench import _common, bench_floors
    loads = iter([0.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    monkeypatch.setattr(_common.OtherLoad, "cores", lambda self: next(loads))
    res = _common.interleaved_checked({"a": lambda: None, "b": lambda: None}, rounds=3, reps=1,
                                      warmup=0)
    assert res["_noise"]["quiet_rounds"] == [True, False, True]
    assert res["a"]["median"] is not None and len(res["a"]["rounds"]) == 3
    ok, why = bench_floors.verdict(res, "a", "b", 3)
    assert ok or "spread" in why
    res = _common.interleaved_checked({"a": lambda: None, "b": lambda: None}, rounds=3, reps=1,
                                      warmup=0)
    ok, why = bench_floors.verdict(res, "a", "b", 3)
    assert not ok and "quiet rounds" in why and res["a"]["median"] is None


def test_numpy_enumeration_peer_is_the_exact_log_z():
    import rbmviz
    from bench import bench_floors
    from rbmviz.evaluate import log_partition_exact
    rbm = rbmviz.RBM(30, 9, seed=0, scale=0.5)
    lz = bench_floors.numpy_log_z_batched(rbm.W, rbm.b, rbm.c, batch=64)
    assert abs(lz - log_partition_exact(rbm)) < 1e-9


def test_cpu_model_names_a_simd_width():
    from bench import bench_floors
    assert "bit)" in bench_floors.cpu_model() or "CPU" in bench_floors.cpu_model()


def test_the_readmes_performance_tables_are_the_stored_quiet_run():
    """Every figure of the README's performance tables comes from bench/readme_results.json,
    a run whose noise checks passed (bench.readme refuses others)."""
    import json
    from bench import readme
    stored = json.loads(readme.STORED.read_text())
    assert readme.check_quiet(stored["bench"], stored["race"]) == []
    assert readme.block(ROOT / "README.md") == readme.render(stored["bench"], stored["race"],
                                                            stored["cpu"])


def test_bench_readme_refuses_a_noisy_run():
    import copy
    import json
    from bench import readme
    stored = json.loads(readme.STORED.read_text())
    noisy = copy.deepcopy(stored["bench"])
    noisy["other_cores"] = 0.6
    first = next(iter(noisy["floors"]["paths"]))
    noisy["floors"]["paths"][first].update(quiet=False, why_noisy="only 1/5 quiet rounds")
    why = readme.check_quiet(noisy, stored["race"])
    assert any("0.6 cores" in w for w in why) and any("1/5 quiet rounds" in w for w in why)
