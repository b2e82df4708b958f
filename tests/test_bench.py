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
