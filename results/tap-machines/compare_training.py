"""Training with a fixed number of Alg. 1 iterations against training with every solve
iterated to convergence, epoch by epoch: the evaluations two paper-scale state directories
share (same data, seed, initial model and batches; only the training solves differ).

    python results/tap-machines/compare_training.py CONVERGED_STATE FIXED_STATE \
        --out results/tap-machines/paper-scale-fixed10/training-iterations.csv

Writes one row per N_h and epoch evaluated in both: the TAP log-likelihood per example and
per unit, the unique solutions, the evaluation rows that converged, the weight norm, and the
training time per epoch of each run; prints the table.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = ("tap_ll", "tap_ll_sem", "tap_ll_per_unit", "n_unique", "n_converged", "n_init",
           "weight_norm", "wall_time", "updates")


def evaluations(state: Path) -> pd.DataFrame:
    """Every saved evaluation row of a state directory."""
    rows = []
    for f in sorted(state.glob("nh*/eval_*.npz")):
        if not re.fullmatch(r"eval_\d+\.npz", f.name):
            continue
        with np.load(f, allow_pickle=False) as z:
            r = json.loads(str(z["row"]))
        rows.append({"n_hidden": r["n_hidden"], "epoch": r["epoch"],
                     **{k: r.get(k) for k in COLUMNS}})
    return pd.DataFrame(rows)


def compare(converged: Path, fixed: Path) -> pd.DataFrame:
    """The shared evaluations side by side (suffixes ``_converged`` and ``_fixed``)."""
    sc = json.loads((converged / "settings.json").read_text())
    sf = json.loads((fixed / "settings.json").read_text())
    same = {k for k in ("samples", "eval_samples", "batch_size", "n_solutions", "learning_rate",
                        "weight_decay", "momentum", "momentum_form", "init_scale", "damping",
                        "eval_tol", "unique_tol", "seed")}
    differ = sorted(k for k in same if sc.get(k) != sf.get(k))
    if differ:
        raise ValueError(f"the two runs differ in more than their training solves: {differ}")
    if sc.get("train_iter") is not None or sf.get("train_iter") is None:
        raise ValueError("expected CONVERGED_STATE without train_iter and FIXED_STATE with it")
    a, b = evaluations(converged), evaluations(fixed)
    m = a.merge(b, on=["n_hidden", "epoch"], suffixes=("_converged", "_fixed"))
    m.insert(2, "train_iter", sf["train_iter"])
    m["tap_ll_diff"] = m["tap_ll_fixed"] - m["tap_ll_converged"]
    return m.sort_values(["n_hidden", "epoch"]).reset_index(drop=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("converged")
    ap.add_argument("fixed")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    m = compare(Path(a.converged), Path(a.fixed))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        m.to_csv(a.out, index=False)
    show = m[["n_hidden", "epoch", "tap_ll_converged", "tap_ll_fixed", "tap_ll_diff",
              "n_unique_converged", "n_unique_fixed", "n_converged_converged",
              "n_converged_fixed"]]
    print(show.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()
