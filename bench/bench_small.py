"""Full-batch CD-12 / PCD-12 on 3×3 bars & stripes (14 rows), RBM 9×4, lr 0.3: rbmviz vs numpy.

What is measured (ONE process, interleaved rounds, median over rounds → epochs/s):

* **rbmviz kernel**: ``alg.train_epochs(rbm, X, order, bounds)`` with ``order`` = E row
  permutations and ``bounds = batch_bounds(14, 14)`` (one full batch) — the fused serial
  Numba loop of rbmviz/algorithms/cd.py (``cd_updates_serial_``), after a warm-up call
  (compile / cache load).  One unit = E epochs in one call.
* **rbmviz train()**: the public ``rbmviz.train(rbm, X, alg, epochs=E, eval_every=E, k=12,
  learning_rate=0.3)``: the same kernel plus the run loop (``Run`` set-up, the E epoch
  permutations drawn in Python, two evaluations with exact log-likelihood at epochs 0 and
  E, the DataFrame) — what a user calling the API gets.
* **numpy**: ``bench/numpy_reference.py: cd_epoch`` once per epoch — the same update
  written as a careful numpy user would (vectorised over the batch, one matmul per layer,
  ``Generator.random`` for the draws).  float64 like rbmviz's default model.

Why the peer is fair: same data, model size, k, learning rate, full batch, float64, one
thread of useful work each (the sizes are far too small for BLAS threads or Numba
parallelism to matter); numpy pays Python/ufunc dispatch per operation, which is exactly
what a fused kernel removes — that is the point of the comparison.  Target: rbmviz
kernel ≥ 20× numpy in epochs/s.

Also measured, to show what would speed rbmviz up:

* **rbmviz kernel, error_model="numpy"**: the current rbmviz/kernels/gibbs.py with
  ``error_model="numpy"`` added to every ``@njit`` that lacks it (a copy generated at run
  time into bench/results/, git-ignored, swapped in for ``cd_updates_serial_`` only while it
  runs).  Skipped, with a note, once gibbs.py sets ``error_model`` everywhere itself (it
  does since the BLAS-path rewrite).
  Numba's default ``error_model="python"`` guards every float division with a
  ZeroDivisionError check, which stops LLVM from vectorising the ``1 / (1 + e)`` loop of
  ``sigmoid_flat_``.  The results are bit-identical (checked).
* **run-loop overhead** of ``train()``: ``Run.step`` draws the epochs' row orders with one
  ``Generator.permutation`` call per epoch; ``Generator.permuted(..., axis=1)`` does the
  same job in one call (a different stream, so not a drop-in for existing seeds).

Run from the project root: ``PYTHONPATH=. python bench/bench_small.py [--quick]``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

if __package__ in (None, ""):   # run as a script: make the project root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import RESULTS, OtherLoad, interleaved, machine_info, table

import numpy as np  # noqa: E402

import rbmviz  # noqa: E402
from bench.numpy_reference import cd_epoch  # noqa: E402
from rbmviz.runs import batch_bounds  # noqa: E402

K, LR, NH = 12, 0.3, 4
TARGET = 20.0


def make_kernel(X, name, epochs, seed=0):
    rbm = rbmviz.RBM(X.shape[1], NH, seed=0)
    alg = rbmviz.algorithms.create(name, k=K, learning_rate=LR, seed=seed)
    alg.setup(rbm, X, X.shape[0])
    assert alg._serial, "expected the fused serial path for a 9x4 model"
    rng = np.random.default_rng(seed)
    order = np.stack([rng.permutation(X.shape[0]) for _ in range(epochs)]).astype(np.int64)
    bounds = batch_bounds(X.shape[0], X.shape[0])
    return lambda: alg.train_epochs(rbm, X, order, bounds)


def error_model_numpy_module():
    """Import a copy of the current rbmviz/kernels/gibbs.py with ``error_model="numpy"``
    added to every ``@njit``; None (with the reason) if that cannot be done."""
    src_path = Path(rbmviz.__file__).parent / "kernels" / "gibbs.py"
    src = src_path.read_text().replace("from .random import", "from rbmviz.kernels.random import")
    dst = RESULTS / "_gibbs_error_model_numpy.py"
    if "def cd_updates_serial_" not in src:
        return None, "gibbs.py has no cd_updates_serial_ to patch"
    n = 0

    def patch(m):
        nonlocal n
        if "error_model" in m.group(1):
            return m.group(0)
        n += 1
        return f"@njit(error_model='numpy', {m.group(1)})"
    src = re.sub(r"@njit\(([^)]*)\)", patch, src)
    if n == 0:
        dst.unlink(missing_ok=True)          # stale copy from before the change upstream
        return None, "already integrated: every @njit in gibbs.py sets error_model"
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not dst.exists() or dst.read_text() != src:
        dst.write_text(src)
    spec = importlib.util.spec_from_file_location("bench_gibbs_error_model_numpy", dst)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod       # Numba's cache re-imports the module by name
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001
        del sys.modules[spec.name]
        return None, f"{type(exc).__name__}: {exc}"
    return mod, f"{n} decorators patched"


def with_serial_kernel(kernel, f):
    """``f`` run with ``rbmviz.algorithms.cd.cd_updates_serial_`` swapped for ``kernel``."""
    import rbmviz.algorithms.cd as cdmod

    def g():
        stock = cdmod.cd_updates_serial_
        cdmod.cd_updates_serial_ = kernel
        try:
            return f()
        finally:
            cdmod.cd_updates_serial_ = stock
    return g


def same_result(X, name, kernel, epochs=500):
    """Parameters after ``epochs`` epochs with the stock kernel and with ``kernel``."""
    a, b = rbmviz.RBM(X.shape[1], NH, seed=0), rbmviz.RBM(X.shape[1], NH, seed=0)
    for rbm, use in ((a, None), (b, kernel)):
        alg = rbmviz.algorithms.create(name, k=K, learning_rate=LR, seed=0)
        alg.setup(rbm, X, X.shape[0])
        rng = np.random.default_rng(0)
        order = np.stack([rng.permutation(X.shape[0]) for _ in range(epochs)]).astype(np.int64)
        f = lambda: alg.train_epochs(rbm, X, order, batch_bounds(X.shape[0], X.shape[0]))  # noqa: E731
        (with_serial_kernel(use, f) if use is not None else f)()
    return a == b


def make_train(X, name, epochs):
    def f():
        rbm = rbmviz.RBM(X.shape[1], NH, seed=0)
        rbmviz.train(rbm, X, name, epochs=epochs, learning_rate=LR, k=K, eval_every=epochs)
    return f


def make_numpy(X, persistent, epochs, seed=0):
    rbm = rbmviz.RBM(X.shape[1], NH, seed=0)
    W, b, c = (np.array(a, dtype=np.float64) for a in rbm.params)
    rng = np.random.default_rng(seed)
    chains = X[rng.integers(0, X.shape[0], X.shape[0])].copy() if persistent else None

    def f():
        for _ in range(epochs):
            cd_epoch(W, b, c, X, K, LR, rng, persistent_chains=chains)
    return f


def run(quick=False, verbose=True):
    X = np.ascontiguousarray(rbmviz.datasets.bars_and_stripes(3), dtype=np.float64)
    E = 5000 if quick else 12000           # epochs per unit for rbmviz
    E_np = 300 if quick else 800           # epochs per unit for numpy (much slower)
    rounds = 3 if quick else 9
    t_start = time.perf_counter()
    spec = {
        "rbmviz CD-12 train_epochs": (make_kernel(X, "cd", E), E),
        "rbmviz CD-12 train()": (make_train(X, "cd", E), E),
        "numpy CD-12 cd_epoch": (make_numpy(X, False, E_np), E_np),
        "rbmviz PCD-12 train_epochs": (make_kernel(X, "pcd", E), E),
        "rbmviz PCD-12 train()": (make_train(X, "pcd", E), E),
        "numpy PCD-12 cd_epoch": (make_numpy(X, True, E_np), E_np),
    }
    patched, why = error_model_numpy_module()
    if patched is not None:
        for alg in ("cd", "pcd"):
            spec[f"rbmviz {alg.upper()}-12 train_epochs, error_model=numpy"] = (
                with_serial_kernel(patched.cd_updates_serial_, make_kernel(X, alg, E)), E)
    # warm-up: compile / load from cache, first calls
    make_kernel(X, "cd", 10)(), make_kernel(X, "pcd", 10)()
    make_train(X, "cd", 10)(), make_train(X, "pcd", 10)()
    mon = OtherLoad()
    res = interleaved({k: (f, 1) for k, (f, _) in spec.items()}, rounds=rounds, reps=1, warmup=1)
    other = mon.cores()
    eps = {k: spec[k][1] / r["median"] for k, r in res.items()}
    eps_best = {k: spec[k][1] / r["min"] for k, r in res.items()}
    out = {"benchmark": "small", "quick": quick,
           "setup": {"data": "bars_and_stripes(3), 14x9", "model": f"9x{NH} float64", "k": K,
                     "learning_rate": LR, "batch": "full (14)", "epochs_per_unit_rbmviz": E,
                     "epochs_per_unit_numpy": E_np, "rounds": rounds},
           "epochs_per_s": eps, "epochs_per_s_best_round": eps_best,
           "us_per_epoch": {k: 1e6 / v for k, v in eps.items()}}
    ratios = {}
    for alg in ("CD-12", "PCD-12"):
        npk = f"numpy {alg} cd_epoch"
        ratios[f"{alg}: rbmviz train_epochs / numpy"] = eps[f"rbmviz {alg} train_epochs"] / eps[npk]
        ratios[f"{alg}: rbmviz train() / numpy"] = eps[f"rbmviz {alg} train()"] / eps[npk]
        ratios[f"{alg}: best rounds, train_epochs / numpy"] = (eps_best[f"rbmviz {alg} train_epochs"]
                                                               / eps_best[npk])
    if patched is not None:
        for alg in ("CD-12", "PCD-12"):
            ratios[f"{alg}: rbmviz error_model=numpy / numpy"] = (
                eps[f"rbmviz {alg} train_epochs, error_model=numpy"] / eps[f"numpy {alg} cd_epoch"])
            ratios[f"{alg}: error_model=numpy speed-up over current kernel"] = (
                eps[f"rbmviz {alg} train_epochs, error_model=numpy"] / eps[f"rbmviz {alg} train_epochs"])
        out["error_model_numpy_bit_identical"] = {
            alg: same_result(X, alg, patched.cd_updates_serial_) for alg in ("cd", "pcd")}
    out["error_model_numpy_patch"] = why
    spread = max(r["median"] / r["min"] for r in res.values())
    out["noise"] = {"worst_median_over_best": spread, "other_processes_cores": other,
                    "busy": spread > 1.15 or (other or 0.0) > 0.25}
    out["ratios"] = ratios
    # run-loop overhead of train() (shuffles, records) per epoch
    out["train_overhead_us_per_epoch"] = {
        "train() - train_epochs, CD-12": 1e6 / eps["rbmviz CD-12 train()"] - 1e6 / eps["rbmviz CD-12 train_epochs"]}
    out["targets"] = {k: v >= TARGET for k, v in ratios.items() if "train_epochs / numpy" in k
                      and "best" not in k}
    out["machine"] = machine_info()
    out["seconds"] = time.perf_counter() - t_start
    if verbose:
        print(f"== bench_small: full-batch CD-12/PCD-12, bars&stripes 3x3 (14 rows), RBM 9x{NH} float64, "
              f"lr {LR} ({rounds} interleaved rounds; rbmviz {E} epochs/unit, numpy {E_np})")
        rows = [(k, f"{eps[k]:11.0f}", f"{1e6 / eps[k]:9.2f}", f"{eps_best[k]:11.0f}") for k in eps]
        print(table(rows, ["contender", "epochs/s", "us/epoch", "best round"]))
        print()
        rrows = []
        for k, v in ratios.items():
            tgt = "train_epochs / numpy" in k and "best" not in k
            rrows.append((k, f"{v:7.1f}x", f">= {TARGET:g}x" if tgt else "",
                          ("PASS" if v >= TARGET else "MISS") if tgt else ""))
        print(table(rrows, ["ratio", "value", "target", ""]))
        if patched is None:
            print(f"(error_model=numpy variant skipped: {why})")
        else:
            print(f"error_model=numpy kernel gives bit-identical parameters: {out['error_model_numpy_bit_identical']}")
        print("train() overhead, us/epoch: " + ", ".join(
            f"{k} {v:.2f}" for k, v in out["train_overhead_us_per_epoch"].items()))
        if out["noise"]["busy"]:
            print(f"WARNING: busy machine — other processes used {other if other is None else round(other, 2)} "
                  f"cores while timing; a contender's median round is {spread:.2f}x its best round; "
                  "ratios are unreliable (compare the 'best round' column), rerun when idle.")
        print(f"(load avg {os.getloadavg()[0]:.2f}; bench_small took {out['seconds']:.0f} s)")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer epochs and rounds")
    ap.add_argument("--json", help="also write the results to this JSON file")
    a = ap.parse_args(argv)
    out = run(quick=a.quick)
    if a.json:
        RESULTS.mkdir(parents=True, exist_ok=True)
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1, default=str)
    return out


if __name__ == "__main__":
    main()
