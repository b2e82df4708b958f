"""Which part of the evaluation moves the count of unique TAP solutions (issue: the paper's
"below 10 %" against rbmviz's 26.8 % at N_h = 100): one factor varied at a time on one model.

    python results/tap-machines/solution_count.py MODEL --label NAME \
        --out results/tap-machines/solution-count/evaluation-NAME.csv

``MODEL`` is a saved model (``RBM.save``) or the name of a shipped checkpoint
(``rbmviz.checkpoints.names()``, e.g. ``tap-mnist-100-fixed10-epoch100``).  From 2,000
initialisations (``--rows``) each protocol below solves Alg. 1 and counts the unique converged
solutions (two are one when both layers' means agree to ``unique_tol`` in max-abs):

``reference``
    the evaluation of ``rbmviz reproduce tap`` (:func:`rbmviz.reproduce.tap.evaluate_tap`):
    the first ``rows`` training images, undamped to an MSE change of 1e-12, then the damping
    ladder 0.5, 0.2, 0.1, 0.05 on the rows that oscillate; ``unique_tol`` 1e-4.
``paper-tol-damped``
    Alg. 1 as Fig. 3 states it: damping 0.5 (Table 1's) until the MSE change is below 1e-8,
    1,000 iterations at most; ``unique_tol`` 1e-4 and 1e-2.
``paper-tol-undamped``
    the same, undamped.
``undamped-only``
    the reference without the damped fallback (rows that oscillate are not counted).
``short-ladder``
    the reference with the ladder 0.5, 0.2 (the live explorer's).
``train-next``, ``test-images``, ``random-binary``, ``random-uniform``
    where the initialisations come from, each with the short ladder (the ``short-ladder``
    protocol is their reference; rows that converge nowhere cost 3,500 iterations instead of
    18,500): the next ``rows`` training images (the sampling variability of a count),
    ``rows`` held-out test images, random binary images (each pixel on with its training
    mean), and magnetisations drawn uniformly from [0, 1] (not data-anchored).

Besides the max-abs tolerances of ``--tols`` every protocol's solutions are also counted by
two coarser rules (column ``rule``): ``binary-pattern`` (one solution per pattern of both
layers' means thresholded at 1/2) and ``visible-pattern`` (the visible layer's pattern only).

Each row of the CSV holds the protocol, the counting rule, the rows, the converged rows, the unique count at the
tolerance, its share of the rows, and the seconds the solve took.  The file is never
overwritten.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from rbmviz import RBM, checkpoints, datasets
from rbmviz.reproduce.tap import evaluate_tap
from rbmviz.tap import solve, unique_solutions
from rbmviz.tap.inference import damping_ladder, solve_counted


def _model(spec: str) -> RBM:
    if spec in checkpoints.names():
        return checkpoints.load(spec)[0]
    return RBM.load(spec)


def _reference(rbm, V, ladder=None, first_only=False):
    kw = {}
    if ladder is not None:
        kw["fallback_damping"] = ladder
    if first_only:      # one undamped attempt with the whole budget, no damped fallback
        return solve_counted(rbm, V, order=2, damping=None, tol=1e-12, max_iter=1000,
                             first_damping=1.0)
    ev = evaluate_tap(rbm, V, **kw)
    return ev["sol"]


def _pattern_count(sol, visible_only=False):
    """Unique thresholded patterns among the converged rows (``a > 1/2``)."""
    ok = np.asarray(sol.converged, dtype=bool)
    pat = np.asarray(sol.av)[ok] > 0.5
    if not visible_only:
        pat = np.hstack([pat, np.asarray(sol.ah)[ok] > 0.5])
    return int(np.unique(np.packbits(pat, axis=1), axis=0).shape[0]) if ok.any() else 0


def _from_means(rbm, M, floor=0.05):
    """The reference protocol from means in [0, 1] rather than data points (``solve`` with
    ``data_anchored=False``): undamped for 200 iterations to 1e-12, then the damping ladder
    on the rows still unconverged, ``1,000 × 0.5 / d`` iterations at damping ``d``."""
    import dataclasses
    sol = solve(rbm, M, damping=1.0, tol=1e-12, max_iter=200, data_anchored=False)
    for d in damping_ladder(0.5, floor=floor):
        todo = sol.not_converged
        if not todo.size:
            break
        again = solve(rbm, M[todo], damping=d, tol=1e-12, max_iter=int(round(500 / d)),
                      data_anchored=False)
        fields = {}
        for f in sol._ROW_FIELDS:
            arr = np.array(getattr(sol, f), copy=True)
            arr[todo] = getattr(again, f)
            fields[f] = arr
        sol = dataclasses.replace(sol, **fields)
    return sol


def protocols(rows: int, seed: int):
    """``{name: (initialisations, solver)}``: each solver maps (rbm, V) to a TAPSolution."""
    X = datasets.mnist("train", limit=2 * rows)
    T = datasets.mnist("test", limit=rows)
    rng = np.random.default_rng(seed)
    means = X.mean(axis=0)
    rand_bin = (rng.random((rows, X.shape[1])) < means).astype(np.float64)
    rand_uni = rng.random((rows, X.shape[1]))
    short = damping_ladder(0.5, floor=0.2)

    def shortref(m, V):
        return _reference(m, V, ladder=short)
    return {
        "reference": (X[:rows], _reference),
        "paper-tol-damped": (X[:rows], lambda m, V: solve(m, V, damping=0.5, tol=1e-8,
                                                          max_iter=1000)),
        "paper-tol-undamped": (X[:rows], lambda m, V: solve(m, V, damping=1.0, tol=1e-8,
                                                            max_iter=1000)),
        "undamped-only": (X[:rows], lambda m, V: _reference(m, V, first_only=True)),
        "short-ladder": (X[:rows], shortref),
        "train-next": (X[rows:2 * rows], shortref),
        "test-images": (T, shortref),
        "random-binary": (rand_bin, shortref),
        "random-uniform": (rand_uni, lambda m, V: _from_means(m, V, floor=0.2)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a saved model (RBM.save) or a shipped checkpoint's name")
    ap.add_argument("--label", required=True, help="the model's name in the table")
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--tols", default="1e-4,1e-2", help="max-abs tolerances of the count")
    ap.add_argument("--only", default=None, help="comma-separated protocols (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random initialisations")
    ap.add_argument("--out", default=None, help="CSV to write (never overwritten)")
    a = ap.parse_args(argv)
    out = None if a.out is None else Path(a.out)
    if out is not None and out.exists():
        raise SystemExit(f"{out} exists; remove it or choose another --out")
    tols = [float(t) for t in a.tols.split(",")]
    rbm = _model(a.model)
    table = []
    todo = protocols(a.rows, a.seed)
    if a.only:
        unknown = set(a.only.split(",")) - set(todo)
        if unknown:
            raise SystemExit(f"--only: unknown protocols {sorted(unknown)}; "
                             f"choose from {sorted(todo)}")
        todo = {k: v for k, v in todo.items() if k in a.only.split(",")}
    for name, (V, solver) in todo.items():
        t0 = time.perf_counter()
        sol = solver(rbm, V)
        seconds = time.perf_counter() - t0
        counts = [("max-abs", tol, int(unique_solutions(sol, tol).n_unique)) for tol in tols]
        counts += [("binary-pattern", np.nan, _pattern_count(sol)),
                   ("visible-pattern", np.nan, _pattern_count(sol, visible_only=True))]
        for rule, tol, n in counts:
            row = {"model": a.label, "protocol": name, "rule": rule, "rows": len(V),
                   "converged": int(sol.n_converged), "unique_tol": tol,
                   "n_unique": n, "unique_percent": 100.0 * n / len(V),
                   "mean_iterations": float(np.mean(sol.n_iter)), "seconds": seconds}
            table.append(row)
            print(row, flush=True)
        if out is not None:       # keep what is done if a later protocol is interrupted
            out.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(table).to_csv(out.with_suffix(".partial.csv"), index=False)
    df = pd.DataFrame(table)
    df["count"] = df["rule"] + df["unique_tol"].map(lambda t: "" if t != t else f" {t:g}")
    print(df.pivot(index="protocol", columns="count", values="n_unique").to_string())
    if out is not None:
        df.to_csv(out, index=False)
        out.with_suffix(".partial.csv").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
