"""How the count of unique TAP solutions depends on the de-duplication tolerance and on the
number of initialisations (the paper states neither its criterion nor a dependence on the
number of points; reference/tap-experiments.md §3 asks for the sensitivity).

    python results/tap-machines/count_sensitivity.py STATE/nh100/model_epoch100.npz \
        --out results/tap-machines/paper-scale-fixed10/count-sensitivity.csv

Solves Alg. 1 from the first N binary-MNIST training images (one data-anchored
initialisation each, as the evaluation does: undamped to 1e-12, then damped 0.5 and 0.2 for
the rows that oscillate) for N in ``--rows``, and counts the unique converged solutions at
each tolerance of ``--tols`` (max-abs difference of both layers' means).  Prints the table.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from rbmviz import RBM, datasets
from rbmviz.tap import COUNT_TOL
from rbmviz.tap.inference import damping_ladder, solve_counted, unique_solutions


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a saved model (RBM.save), e.g. STATE/nh100/model_epoch100.npz")
    ap.add_argument("--rows", default="1000,2000,5000,10000")
    ap.add_argument("--tols", default="1e-5,1e-4,1e-3,1e-2,1e-1")
    ap.add_argument("--out", default=None, help="write the table as CSV (never overwritten)")
    a = ap.parse_args(argv)
    rows = sorted(int(r) for r in a.rows.split(","))
    tols = [float(t) for t in a.tols.split(",")]
    out = None if a.out is None else Path(a.out)
    if out is not None and out.exists():
        raise SystemExit(f"{out} exists; remove it or choose another --out")
    rbm = RBM.load(a.model)
    X = datasets.mnist("train", limit=rows[-1])
    t0 = time.perf_counter()
    sol = solve_counted(rbm, X, damping=damping_ladder(0.5), tol=COUNT_TOL, max_iter=1000)
    seconds = time.perf_counter() - t0
    table = []
    for n in rows:
        part = sol.subset(np.arange(n))
        for tol in tols:
            u = unique_solutions(part, tol)
            table.append({"rows": n, "converged": int(part.n_converged), "unique_tol": tol,
                          "n_unique": int(u.n_unique),
                          "unique_percent": 100.0 * u.n_unique / n})
    df = pd.DataFrame(table)
    print(f"{a.model}: {sol.n_converged} of {len(sol)} rows converged ({seconds:.0f} s)")
    print(df.pivot(index="unique_tol", columns="rows", values="n_unique").to_string())
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out, index=False)


if __name__ == "__main__":
    main()
