"""Fig. 9's question for the TAP denoiser: do the outputs of a large model collapse (to
near-empty images or a few localised modes) at high noise?  For each model and flip
probability p, the same 1,000 test images and noise realisation as Fig. 8
(``denoising_curve``: one uniform draw from the seed, nested across p) go through the TAP
denoiser; reported per (model, p): the MCC (as in ``denoising.csv``), the mean fraction of
"on" pixels of the estimate and of the clean image, the share of images whose estimate has
fewer than a fifth of the clean image's on pixels ("collapsed"), the number of distinct
estimates among the 1,000, and the TAP runs that did not converge.

    python results/tap-machines/denoising_collapse.py \
        nh100=checkpoint:tap-mnist-100-fixed10-epoch100 nh500=runs/tap-nh500/nh500/model_epoch50.npz \
        --out results/tap-machines/paper-scale-nh500/denoising-collapse.csv
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from rbmviz import RBM, checkpoints, datasets
from rbmviz.tap.denoising import data_marginals, mcc, tap_means


def load(spec):
    name, _, where = spec.partition("=")
    if where.startswith("checkpoint:"):
        return name, where, checkpoints.load(where[len("checkpoint:"):])[0]
    return name, where.rsplit("/", 2)[-1] if "/" in where else where, RBM.load(where)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="LABEL=path.npz or LABEL=checkpoint:NAME")
    ap.add_argument("--ps", default="0.1,0.2,0.3,0.4,0.5")
    ap.add_argument("--test-samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    ps = [float(p) for p in a.ps.split(",")]
    train = datasets.mnist("train", binarize="threshold")
    X = datasets.mnist("test", binarize="threshold", limit=a.test_samples)
    prior = data_marginals(train)
    U = np.random.default_rng(a.seed).random(X.shape)
    on_truth = X.sum(axis=1)
    rows = []
    for spec in a.models:
        label, source, rbm = load(spec)
        for p in ps:
            Y = np.where(U < p, 1.0 - X, X)
            means, sol = tap_means(rbm, Y, p, prior, details=True)
            est = (means > 0.5).astype(np.float64)
            on = est.sum(axis=1)
            rows.append({
                "model": label, "n_hidden": rbm.n_hidden, "source": source, "p": p,
                "mcc": float(np.mean(mcc(est, X))),
                "on_fraction_estimate": float(on.mean() / X.shape[1]),
                "on_fraction_clean": float(on_truth.mean() / X.shape[1]),
                "collapsed_share": float(np.mean(on < 0.2 * on_truth)),
                "distinct_estimates": int(np.unique(est, axis=0).shape[0]),
                "n_images": int(X.shape[0]),
                "not_converged": int((~np.asarray(sol.converged)).sum())})
            print(rows[-1], flush=True)
    pd.DataFrame(rows).to_csv(a.out, index=False)


if __name__ == "__main__":
    sys.exit(main())
