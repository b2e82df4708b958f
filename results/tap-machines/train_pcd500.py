"""784x500 PCD model on MNIST for the shipped classroom checkpoint (float32); saved after
every epoch (so a stop loses at most one)."""
import json, sys, time
from pathlib import Path
import numpy as np
import rbmviz
from rbmviz import datasets
from rbmviz.runs import Run
X = datasets.mnist("train", binarize="threshold", limit=60000).astype(np.float32)
rbm = rbmviz.RBM(784, 500, seed=0, scale=0.01, data=X, dtype="float32")
t0 = time.time()
settings = dict(batch_size=100, learning_rate=0.01, k=1, momentum=0.5, weight_decay=1e-4,
                n_chains=100, seed=0)
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
OUT = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("runs/pcd500")
OUT.mkdir(parents=True, exist_ok=True)
run = Run(rbm, X, "pcd", epochs=epochs, metrics=["pseudo_ll", "recon_error", "weight_norm"],
          eval_every=1, **settings)
recs = []
for e in range(epochs):
    rec = run.step(1)
    recs.append({k: v for k, v in rec.items() if isinstance(v, (int, float, str))})
    rbm.save(OUT / "pcd_784x500.npz", overwrite=True)
    info = {"title": f"PCD-1 binary RBM 784x500 (float32), binary-MNIST, epoch {run.epoch}",
            "dataset": "binary-MNIST (60,000 training images, threshold 0.5)",
            "epoch": run.epoch, "settings": settings,
            "measured": {k: recs[-1].get(k) for k in ("pseudo_ll", "recon_error", "weight_norm", "updates")},
            "measured_on": "pseudo-likelihood and reconstruction error on the first 1,000 training images",
            "cpu_seconds": time.process_time(),
            "regenerate": "python results/tap-machines/train_pcd500.py EPOCHS (then python -m rbmviz.checkpoints._make pcd ...)"}
    json.dump(info, open(OUT / "info.json", "w"), indent=1)
    print(e + 1, recs[-1], time.time() - t0, flush=True)
