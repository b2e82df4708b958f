"""SSD's step on MNIST (Upadhya & Sastry 2017, Sec. 4.2.2, with Carlson et al. 2015's SSD):
the table behind ``rbmviz.reproduce.dc_mnist.SSD_ETA``.

Neither paper gives SSD's step, which is not on the scale of a gradient step (SSD moves
along ‖G‖_S1 · U Vᵀ).  This runs the SSD study's setting — 784×500, batch 1000, SSD with
CD-25 — on the first 5,000 binary-MNIST training images for 20 epochs (100 updates) at
three steps, beside CS-DCP at the paper's η = 0.01 (d = 6, K′ = 4), and records the AIS
test ATLL (100 chains × 2,000 temperatures) at epochs 0, 10 and 20 and ‖W‖ at epoch 20.

    python results/dc-programming/ssd_step.py --out results/dc-programming/investigation/ssd-step.csv
"""
from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

import numpy as np

from rbmviz import RBM
from rbmviz.reproduce import dc_mnist
from rbmviz.sweep import checkpoints

#: (rule, step): SSD at three steps, CS-DCP at the paper's η
VARIANTS = (("ssd", 1e-3), ("ssd", 3e-3), ("ssd", 1e-2), ("csdcp", 0.01))


def measure(rule: str, step: float, *, limit: int = 5000, epochs: int = 20,
            ais_betas: int = 2000) -> list[dict]:
    """One row per evaluation of one variant (``weight_norm`` at the last)."""
    with tempfile.TemporaryDirectory() as tmp:
        kw = dict(ssd_eta=step) if rule == "ssd" else dict(etas=(step,))
        records, _ = dc_mnist.run(study="ssd", trials=1, epochs=epochs, eval_every=epochs // 2,
                                  limit=limit, algorithms=[rule], ais_betas=ais_betas,
                                  checkpoints=[epochs], out=tmp, workers=1, **kw)
        (model,) = [p[epochs] for p in checkpoints(Path(tmp) / "records.csv").values()]
        norm = float(np.linalg.norm(RBM.load(model).W))
    rows = []
    for _, r in records.sort_values("epoch").iterrows():
        rows.append({"rule": rule, "step": step, "epoch": int(r["epoch"]),
                     "ais_test_ll": float(r["ais_test_ll"]),
                     "weight_norm": norm if int(r["epoch"]) == epochs else None})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="CSV file to write")
    args = ap.parse_args(argv)
    rows = [row for rule, step in VARIANTS for row in measure(rule, step)]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(out.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
