"""S-DCP, CS-DCP, CG, SSD on the small data sets: rbmviz's fused kernel vs its BLAS path vs
plain numpy, and the cost of Upadhya & Sastry's full small-data reproduction.

(a) **Per algorithm** (3×3 bars & stripes, 14 rows, RBM 9×4 float64, full batch,
    K = 12 ↔ d = 3, K′ = 4, η = 0.3; SSD η = 0.01): epochs/s of

    * ``fused``: ``alg.train_epochs(rbm, X, order, bounds)`` — the kernel
      :func:`rbmviz.kernels.dc.dc_updates_serial_`, E epochs per call;
    * ``BLAS path``: the same algorithm's ``update`` per epoch (numpy matmuls + the fused
      sampling kernels, one Numba thread) — what the rule ran on before the fused kernel;
    * ``numpy``: bench/numpy_reference.py (``sdcp_epoch``, ``csdcp_epoch``, ``cg_epoch``,
      ``ssd_epoch``) — each rule written as a careful numpy user would (vectorised over the
      batch, one matmul per layer, ``Generator.random`` draws).

(b) **The full small reproduction** (the issue's target): Bars & Stripes 3×3 and Shifting Bar
    N = 9, B = 1; 4 hidden units; full batch; 50,000 epochs; CD-12, PCD-12, CG (K = 12),
    S-DCP and CS-DCP (d = 3, K′ = 4); η ∈ {0.3, 0.5}; 25 trials; exact ATLL every 500
    epochs — 500 runs.  One trial of each (algorithm × η × data set) = 20 runs is timed with
    the public API (``rbmviz.train(..., eval_every=500, metrics=["train_ll"])``, the run loop
    with its shuffles, records and exact log-likelihoods), 50,000 epochs each (``--quick``:
    5,000, scaled ×10).  numpy runs the same 20 runs for fewer epochs (training and the
    ``exact_atll`` evaluation timed separately) and is extrapolated to 50,000 epochs and
    101 evaluations per run.  Both are projected to 25 trials and divided by 2 processes
    (the 500 runs are independent; two worker processes on the two cores, one Numba thread
    each).

Clock: CPU time of this process (``time.process_time``) next to wall time.  The work is
single-threaded on both sides, so on an idle machine the two agree; on a shared machine CPU
time is the robust measure (a competitor stretches wall time, not CPU time) and the ratios
use it.  Contenders are interleaved round by round; medians.

Run: from the project root, ``python -m bench.bench_dc [--quick]`` (full ≈ 1–2 min,
``--quick`` < 1 min after the kernels are compiled).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):   # run as a script: make the project root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import RESULTS, OtherLoad, machine_info, table

import numpy as np  # noqa: E402

import rbmviz  # noqa: E402
from bench import numpy_reference as npref  # noqa: E402
from rbmviz.algorithms.base import Algorithm  # noqa: E402
from rbmviz.runs import batch_bounds  # noqa: E402

NH, K, D, K_INNER, LR = 4, 12, 3, 4, 0.3
NU = 0.01
TARGET_RATIO, TARGET_MINUTES = 20.0, 10.0
EPOCHS, TRIALS, EVAL_EVERY, PROCESSES = 50_000, 25, 500, 2
ETAS = (0.3, 0.5)
REPRO_ALGS = ("cd", "pcd", "cg", "sdcp", "csdcp")
RULES = ("sdcp", "csdcp", "cg", "ssd")


def datasets():
    return {"bars_and_stripes_3": np.ascontiguousarray(rbmviz.datasets.bars_and_stripes(3), float),
            "shifting_bar_9_1": np.ascontiguousarray(rbmviz.datasets.shifting_bar(9, 1), float)}


def settings(name, lr=LR):
    """The algorithm settings of the paper's small-data runs (K = 12 ↔ d = 3, K′ = 4)."""
    if name in ("sdcp", "csdcp"):
        return {"d": D, "k_inner": K_INNER, "learning_rate": lr}
    if name == "ssd":
        return {"k": K, "learning_rate": 0.01}
    return {"k": K, "learning_rate": lr}


# ------------------------------------------------------------------------ contenders (a)

def make_fused(X, name, epochs, seed=0):
    rbm = rbmviz.RBM(X.shape[1], NH, seed=0, data=X)
    alg = rbmviz.algorithms.create(name, seed=seed, **settings(name))
    alg.setup(rbm, X, X.shape[0])
    assert alg._serial, "expected the fused serial kernel for a tiny model"
    rng = np.random.default_rng(seed)
    order = np.stack([rng.permutation(X.shape[0]) for _ in range(epochs)]).astype(np.int64)
    bounds = batch_bounds(X.shape[0], X.shape[0])
    return lambda: alg.train_epochs(rbm, X, order, bounds)


def make_blas(X, name, epochs, seed=0):
    """The BLAS path: ``update`` once per epoch through the generic loop (the InnerLoop's
    own train_epochs would choose the fused kernel)."""
    import numba
    rbm = rbmviz.RBM(X.shape[1], NH, seed=0, data=X)
    alg = rbmviz.algorithms.create(name, seed=seed, **settings(name))
    alg.setup(rbm, X, X.shape[0])
    rng = np.random.default_rng(seed)
    order = np.stack([rng.permutation(X.shape[0]) for _ in range(epochs)]).astype(np.int64)
    bounds = batch_bounds(X.shape[0], X.shape[0])

    def f():
        before = numba.get_num_threads()
        numba.set_num_threads(1)            # as InnerLoop does for tiny batches
        try:
            Algorithm.train_epochs(alg, rbm, X, order, bounds)
        finally:
            numba.set_num_threads(before)
    return f


def make_numpy(X, name, epochs, seed=0, lr=LR):
    """``epochs`` full-batch updates of rule ``name`` with bench/numpy_reference.py."""
    rbm = rbmviz.RBM(X.shape[1], NH, seed=0, data=X)
    W, b, c = (np.array(a, dtype=np.float64) for a in rbm.params)
    rng = np.random.default_rng(seed)
    mu, lam = X.mean(0), np.full(NH, 0.5)
    chains = X[rng.integers(0, X.shape[0], X.shape[0])].copy()
    nv = X.shape[1]
    steps = {
        "cd": lambda: npref.cd_epoch(W, b, c, X, K, lr, rng),
        "pcd": lambda: npref.cd_epoch(W, b, c, X, K, lr, rng, persistent_chains=chains),
        "sdcp": lambda: npref.sdcp_epoch(W, b, c, X, D, K_INNER, lr, rng),
        "csdcp": lambda: npref.csdcp_epoch(W, b, c, X, D, K_INNER, lr, rng, mu, lam, NU, NU),
        "cg": lambda: npref.cg_epoch(W, b, c, X, K, lr, rng, mu, lam, NU, NU),
        "ssd": lambda: npref.ssd_epoch(W, b, c, X, K, 0.01, rng, 0.01 * NH / nv, 0.01 * nv / NH),
    }
    step = steps[name]

    def f():
        for _ in range(epochs):
            step()
    f.params = (W, b, c)
    return f


def _timed(f):
    w0, c0 = time.perf_counter(), time.process_time()
    f()
    return time.perf_counter() - w0, time.process_time() - c0


def interleaved_cpu(spec, rounds):
    """``spec``: name → (callable, units per call).  Each is called once to warm up, then
    ``rounds`` rounds (rotating order); per name the median wall and CPU seconds per unit."""
    names = list(spec)
    for n in names:
        spec[n][0]()
    wall = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            f, units = spec[n]
            w, c = _timed(f)
            wall[n].append(w / units)
            cpu[n].append(c / units)
    return {n: {"wall": statistics.median(wall[n]), "cpu": statistics.median(cpu[n]),
                "cpu_best": min(cpu[n])} for n in names}


def per_algorithm(quick):
    X = datasets()["bars_and_stripes_3"]
    E, E_blas, E_np = (2000, 100, 100) if quick else (10000, 400, 400)
    rounds = 3 if quick else 7
    spec = {}
    for name in RULES:
        spec[f"{name} fused"] = (make_fused(X, name, E), E)
        spec[f"{name} BLAS path"] = (make_blas(X, name, E_blas), E_blas)
        spec[f"{name} numpy"] = (make_numpy(X, name, E_np), E_np)
    res = interleaved_cpu(spec, rounds)
    eps = {k: 1.0 / v["cpu"] for k, v in res.items()}
    eps_wall = {k: 1.0 / v["wall"] for k, v in res.items()}
    ratios = {}
    for name in RULES:
        ratios[f"{name}: fused / numpy"] = eps[f"{name} fused"] / eps[f"{name} numpy"]
        ratios[f"{name}: fused / BLAS path"] = eps[f"{name} fused"] / eps[f"{name} BLAS path"]
        ratios[f"{name}: BLAS path / numpy"] = eps[f"{name} BLAS path"] / eps[f"{name} numpy"]
    return {"epochs_per_s_cpu": eps, "epochs_per_s_wall": eps_wall, "ratios": ratios,
            "setup": {"data": "bars_and_stripes(3), 14x9", "model": f"9x{NH} float64",
                      "budget": f"K={K} / d={D}, K'={K_INNER}", "learning_rate": LR,
                      "ssd_learning_rate": 0.01, "epochs_per_call": {"fused": E, "blas": E_blas,
                                                                     "numpy": E_np},
                      "rounds": rounds}}


# ------------------------------------------------------------------------ reproduction (b)

def repro_runs():
    """The 20 (data set, algorithm, η) combinations of one trial."""
    return [(ds, alg, eta) for ds in datasets() for alg in REPRO_ALGS for eta in ETAS]


def rbmviz_run(X, alg, eta, epochs, seed=0, eval_every=EVAL_EVERY):
    """One run through the public API; returns (wall s, CPU s, final ATLL, evaluations)."""
    rbm = rbmviz.RBM(X.shape[1], NH, seed=seed, data=X)
    kw = settings(alg, eta)
    w0, c0 = time.perf_counter(), time.process_time()
    df = rbmviz.train(rbm, X, alg, epochs=epochs, eval_every=eval_every, seed=seed,
                      metrics=["train_ll"], **kw)
    return time.perf_counter() - w0, time.process_time() - c0, float(df.train_ll.iloc[-1]), len(df)


def numpy_run(X, alg, eta, epochs):
    """A numpy run: training and evaluation timed apart (CPU s per epoch, per evaluation)."""
    f = make_numpy(X, alg, epochs, lr=eta)
    _, c_train = _timed(f)
    W, b, c = f.params
    evals = 20
    c0 = time.process_time()
    for _ in range(evals):
        ll = npref.exact_atll(W, b, c, X)
    c_eval = (time.process_time() - c0) / evals
    return c_train / epochs, c_eval, ll


def reproduction(quick):
    """Part (b).  Runs with one Numba thread: each of the two worker processes of the real
    sweep has one core (``NUMBA_NUM_THREADS=1`` per worker, STACK.md), and the run loop's
    exact evaluation would otherwise start a parallel region for a 16-state sum."""
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return _reproduction(quick)
    finally:
        numba.set_num_threads(before)


def _reproduction(quick):
    data = datasets()
    E_rb = 5000 if quick else EPOCHS
    E_np = 150 if quick else 1000
    n_evals = EPOCHS // EVAL_EVERY + 1
    rows, cpu_rb, wall_rb, cpu_np = [], 0.0, 0.0, 0.0
    for ds, alg, eta in repro_runs():
        X = data[ds]
        w, c, ll, n_rec = rbmviz_run(X, alg, eta, E_rb)
        scale = EPOCHS / E_rb
        t_np_epoch, t_np_eval, _ = numpy_run(X, alg, eta, E_np)
        np_run = EPOCHS * t_np_epoch + n_evals * t_np_eval
        cpu_rb += c * scale
        wall_rb += w * scale
        cpu_np += np_run
        rows.append({"data": ds, "algorithm": alg, "eta": eta, "rbmviz_cpu_s_per_run": c * scale,
                     "rbmviz_wall_s_per_run": w * scale, "numpy_cpu_s_per_run": np_run,
                     "ratio": np_run / (c * scale), "final_atll_rbmviz": ll,
                     "rbmviz_epochs_timed": E_rb, "numpy_epochs_timed": E_np})
    runs_total = len(rows) * TRIALS
    minutes = lambda s: s * TRIALS / PROCESSES / 60  # noqa: E731
    # cost of one more evaluation (record + exact ATLL) on each side, to project the denser
    # schedule of `rbmviz reproduce dc-small` (every 100 epochs, 501 per run)
    X = data["bars_and_stripes_3"]
    ev_rb = (rbmviz_run(X, "cd", 0.3, 1000, eval_every=1)[1]
             - rbmviz_run(X, "cd", 0.3, 1000, eval_every=1000)[1]) / 999
    _, ev_np, _ = numpy_run(X, "cd", 0.3, 1)
    extra = len(rows) * (EPOCHS // 100 + 1 - n_evals)
    out = {"runs": rows, "runs_total": runs_total, "epochs_per_run": EPOCHS,
           "evaluations_per_run": n_evals,
           "rbmviz_minutes_2proc": minutes(cpu_rb), "rbmviz_minutes_2proc_wall": minutes(wall_rb),
           "numpy_minutes_2proc": minutes(cpu_np), "ratio": cpu_np / cpu_rb,
           "evaluation_cpu_s": {"rbmviz": ev_rb, "numpy": ev_np},
           "eval_every_100": {"rbmviz_minutes_2proc": minutes(cpu_rb + extra * ev_rb),
                              "numpy_minutes_2proc": minutes(cpu_np + extra * ev_np),
                              "ratio": (cpu_np + extra * ev_np) / (cpu_rb + extra * ev_rb)},
           "slice": {"rbmviz_epochs_per_run": E_rb, "numpy_epochs_per_run": E_np,
                     "runs_timed": len(rows)}}
    out["pass_ratio"] = out["ratio"] >= TARGET_RATIO
    out["pass_minutes"] = out["rbmviz_minutes_2proc"] < TARGET_MINUTES
    return out


# ------------------------------------------------------------------------ driver

def run(quick=False, verbose=True):
    t0 = time.perf_counter()
    mon = OtherLoad()
    # warm-up: compile / load the kernels from cache
    X = datasets()["bars_and_stripes_3"]
    for name in RULES:
        make_fused(X, name, 5)()
    rbmviz_run(X, "cd", 0.3, 10)
    a = per_algorithm(quick)
    b = reproduction(quick)
    other = mon.cores()
    out = {"benchmark": "dc", "quick": quick, "per_algorithm": a, "reproduction": b,
           "other_processes_cores": other, "busy": (other or 0.0) > 0.25,
           "machine": machine_info(), "seconds": time.perf_counter() - t0}
    if verbose:
        print(f"== bench_dc (a): full batch, bars & stripes 3x3, RBM 9x{NH} float64, K={K} / "
              f"d={D},K'={K_INNER}, lr {LR} (SSD 0.01); CPU-time medians of "
              f"{a['setup']['rounds']} interleaved rounds")
        rows = [(k, f"{a['epochs_per_s_cpu'][k]:10.0f}", f"{a['epochs_per_s_wall'][k]:10.0f}")
                for k in a["epochs_per_s_cpu"]]
        print(table(rows, ["contender", "epochs/s (CPU)", "epochs/s (wall)"]))
        print()
        print(table([(k, f"{v:7.1f}x") for k, v in a["ratios"].items()], ["ratio", "value"]))
        print()
        print(f"== bench_dc (b): the full small reproduction — {b['runs_total']} runs x "
              f"{EPOCHS} epochs, exact ATLL every {EVAL_EVERY} epochs; timed slice: "
              f"{b['slice']['runs_timed']} runs (1 trial), rbmviz {b['slice']['rbmviz_epochs_per_run']} "
              f"epochs/run, numpy {b['slice']['numpy_epochs_per_run']} epochs/run, extrapolated")
        rows = [(r["data"], r["algorithm"], r["eta"], f"{r['rbmviz_cpu_s_per_run']:.2f}",
                 f"{r['numpy_cpu_s_per_run']:.1f}", f"{r['ratio']:.1f}x", f"{r['final_atll_rbmviz']:.3f}")
                for r in b["runs"]]
        print(table(rows, ["data", "alg", "eta", "rbmviz s/run", "numpy s/run", "ratio",
                           "ATLL end"], left=2))
        print()
        print(f"projected on {PROCESSES} processes: rbmviz {b['rbmviz_minutes_2proc']:.1f} min "
              f"(wall clock here {b['rbmviz_minutes_2proc_wall']:.1f} min), numpy "
              f"{b['numpy_minutes_2proc']:.0f} min; ratio {b['ratio']:.1f}x "
              f"(target >= {TARGET_RATIO:g}x: {'PASS' if b['pass_ratio'] else 'MISS'}; "
              f"< {TARGET_MINUTES:g} min: {'PASS' if b['pass_minutes'] else 'MISS'})")
        e100 = b["eval_every_100"]
        print(f"with an evaluation every 100 epochs (rbmviz reproduce dc-small's default; "
              f"{b['evaluation_cpu_s']['rbmviz'] * 1e6:.0f} us per rbmviz evaluation, "
              f"{b['evaluation_cpu_s']['numpy'] * 1e6:.0f} us numpy): rbmviz "
              f"{e100['rbmviz_minutes_2proc']:.1f} min, numpy {e100['numpy_minutes_2proc']:.0f} min, "
              f"ratio {e100['ratio']:.1f}x")
        if quick:
            print("(--quick: short slices; the projection is indicative — numbers of record come "
                  "from a full run)")
        if out["busy"]:
            print(f"NOTE: other processes used {other:.2f} cores meanwhile; wall-clock figures are "
                  "stretched, the CPU-time ratios are not.")
        print(f"(load avg {os.getloadavg()[0]:.2f}; bench_dc took {out['seconds']:.0f} s)")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short slices (< 1 min)")
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
