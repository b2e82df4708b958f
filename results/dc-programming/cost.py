"""What Upadhya & Sastry's large-data protocol costs on this machine (Sec. 4.2.2): the
seconds of one parameter update of each rule and of one AIS evaluation, measured, and the
hours of the paper's protocol computed from them.

Each rule's update is timed as the difference of two runs of :func:`rbmviz.reproduce.
dc_mnist.run` that differ only in the number of rows (so set-up, data loading and the
evaluations cancel): ``--updates`` extra updates of 784×500 (float32, batch 200, K = 24;
S-DCP/CS-DCP d = 6, K′ = 4) on one thread.  AIS is timed the same way (100 chains ×
10,000 temperatures against 2 temperatures, two evaluations per run).  Rounds are
interleaved across rules and the median is kept; run it on a quiet machine.

    python results/dc-programming/cost.py --out results/dc-programming/cost.csv
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from rbmviz import datasets  # noqa: E402
from rbmviz.reproduce import dc_mnist  # noqa: E402

RULES = ("cd", "pcd", "cg", "sdcp", "csdcp")
#: the paper's protocol: epochs, evaluations (every 10 epochs and at 0), trials, learning rates
EPOCHS, EVALS, TRIALS, RATES, BATCH = 200, 21, 10, 2, 200


def _seconds(**kw) -> float:
    t = time.perf_counter()
    dc_mnist.run(trials=1, epochs=1, eval_every=1, ais_chains=100, workers=1, **kw)
    return time.perf_counter() - t


def measure(updates: int = 30, rounds: int = 3) -> dict:
    """``{"update": {rule: seconds}, "ais": seconds}`` (medians of ``rounds``)."""
    base = dict(ais_betas=2)
    per = {r: [] for r in RULES}
    ais = []
    _seconds(algorithms=["cd"], limit=BATCH, **base)                     # compile, load data
    for _ in range(rounds):
        for r in RULES:
            small = _seconds(algorithms=[r], limit=BATCH, **base)
            large = _seconds(algorithms=[r], limit=BATCH * (updates + 1), **base)
            per[r].append((large - small) / updates)
        small = _seconds(algorithms=["cd"], limit=BATCH, **base)
        ais.append((_seconds(algorithms=["cd"], limit=BATCH, ais_betas=10_000) - small) / 2)
    return {"update": {r: statistics.median(v) for r, v in per.items()},
            "ais": statistics.median(ais)}


def table(m: dict) -> list[dict]:
    """One row per rule and data set (the full protocol's rows: ``rule = "all"``)."""
    rows = []
    sizes = {ds: len(datasets.load(ds)) for ds in ("mnist", "omniglot") if datasets.available(ds)}
    for ds, n in sizes.items():
        per_epoch = n // BATCH
        total = 0.0
        for r in RULES:
            run = EPOCHS * per_epoch * m["update"][r] + EVALS * m["ais"]
            total += run
            rows.append({"dataset": ds, "rule": r, "train_rows": n, "updates_per_epoch": per_epoch,
                         "seconds_per_update": m["update"][r],
                         "seconds_per_epoch": per_epoch * m["update"][r],
                         "ais_seconds": m["ais"], "run_hours": run / 3600})
        rows.append({"dataset": ds, "rule": "all", "train_rows": n, "updates_per_epoch": per_epoch,
                     "seconds_per_update": None, "seconds_per_epoch": None,
                     "ais_seconds": m["ais"], "run_hours": total / 3600 * TRIALS * RATES})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="CSV file to write")
    ap.add_argument("--updates", type=int, default=30, help="timed updates per rule and round")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median kept)")
    args = ap.parse_args(argv)
    rows = table(measure(args.updates, args.rounds))
    with open(args.out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(Path(args.out).read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
