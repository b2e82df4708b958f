"""The training factors of the solution-count question, side by side: one table from the
``curves.csv`` of the runs in ``solution-count/`` (one factor changed per run).

    python results/tap-machines/solution_count_training.py

Each run is ``rbmviz reproduce tap`` at Table 1's settings for N_h = 100 (seed 2), trained
25 epochs on all 60,000 binary-MNIST images and evaluated from the first 2,000 training
images at epochs 0, 1, 3, 5, 10 and 25; the README's *Regenerating* section has the commands.
Writes ``solution-count/training-factors.csv`` (replaced: it is derived from the runs).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent / "solution-count"

#: run folder -> (factor, value) in the order of the table
RUNS = {
    "baseline": ("reference", "10 Alg. 1 iterations per training solve, heavy-ball momentum"),
    "train-iter-3": ("training solve", "3 iterations"),
    "train-iter-30": ("training solve", "30 iterations"),
    "printed-momentum": ("momentum", "Alg. 2 as printed (previous gradient, unscaled)"),
}

COLUMNS = ["epoch", "n_init", "n_converged", "n_unique", "unique_fraction", "tap_ll",
           "tap_ll_per_unit", "mean_free_energy", "weight_norm"]


def table() -> pd.DataFrame:
    parts = []
    for run, (factor, value) in RUNS.items():
        path = HERE / run / "curves.csv"
        if not path.exists():
            continue
        df = pd.read_csv(path)[COLUMNS]
        df.insert(0, "value", value)
        df.insert(0, "factor", factor)
        df.insert(0, "run", run)
        parts.append(df)
    if not parts:
        raise SystemExit(f"no runs in {HERE}")
    return pd.concat(parts, ignore_index=True)


def main():
    df = table()
    df.to_csv(HERE / "training-factors.csv", index=False)
    print(df.pivot(index="epoch", columns="run", values="n_unique").to_string())


if __name__ == "__main__":
    main()
