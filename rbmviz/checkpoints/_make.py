"""Writing the shipped checkpoints (maintainers): ``python -m rbmviz.checkpoints._make
tap STATE_DIR EPOCH [EPOCH ...]`` copies the TAP models that ``rbmviz reproduce tap --hidden
100 --state STATE_DIR --save-epochs ...`` saved, with the evaluation of that epoch;
``python -m rbmviz.checkpoints._make pcd MODEL.npz INFO.json`` copies a PCD model."""
from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np

from .. import _files
from ..model import RBM
from . import _DIR, MAX_BYTES

TAP_NAME = "tap-mnist-{nh}{series}-epoch{epoch}"


def _write(rbm, name, meta):
    p = rbm.save(_DIR / f"{name}.npz", overwrite=True)
    size = p.stat().st_size
    if size > MAX_BYTES:
        p.unlink()
        raise ValueError(f"{name}: {size} bytes is over the {MAX_BYTES}-byte limit")
    _files.write_json(_DIR / f"{name}.json", meta, indent=1, overwrite=True)
    return p


def tap(state_dir, epochs, nh=100):
    """Copy ``state_dir/nh<nh>/model_epoch<E>.npz`` for every E in ``epochs``.  A run on all
    60,000 images gives ``tap-mnist-<nh>-epoch<E>``; a shorter one (the quick form)
    ``tap-mnist-<nh>-short-epoch<E>``."""
    state_dir = Path(state_dir)
    settings = json.loads((state_dir / "settings.json").read_text())
    full = settings["samples"] >= 60_000
    fixed = settings.get("train_iter")
    series = ("" if full else "-short") + (f"-fixed{fixed}" if fixed else "")
    if full:
        regen = ("rbmviz reproduce tap --epochs 100 --hidden 100 "
                 + f"--train-iter {fixed or 0} "
                 + "--state DIR --save-epochs " + ",".join(str(x) for x in epochs))
    else:
        regen = (f"rbmviz reproduce tap --epochs {max(epochs)} --samples {settings['samples']} "
                 f"--hidden {nh} --test-samples 0 --train-iter {fixed or 0} --state DIR --save-epochs "
                 + ",".join(str(x) for x in epochs) + "  (the quick form: batch "
                 f"{settings['batch_size']}, learning rate {settings['learning_rate']:g})")
    out = []
    for e in epochs:
        saved = state_dir / f"nh{nh}" / f"model_epoch{e}.npz"
        if saved.exists():
            rbm = RBM.load(saved)
        else:                      # the latest epoch of a run still going: its training state
            # (rbmviz.reproduce._tap_state: {"run": Run.state(), ...}, a pickle this machine wrote)
            with open(state_dir / f"nh{nh}" / "run_state.pkl", "rb") as fh:
                run_state = pickle.load(fh)["run"]
            if int(run_state["epoch"]) != int(e):
                raise ValueError(f"no model of epoch {e} in {state_dir} (state at epoch "
                                 f"{int(run_state['epoch'])})")
            rbm = run_state["model"]
        measured, row = {}, {}
        ev = state_dir / f"nh{nh}" / f"eval_{int(e):04d}.npz"
        if ev.exists():
            with np.load(ev, allow_pickle=False) as z:
                row = json.loads(str(z["row"]))
            measured = {k: row[k] for k in ("tap_ll_per_unit", "tap_ll_per_unit_sem", "n_unique",
                                             "n_init", "mean_free_energy", "min_free_energy",
                                             "max_free_energy", "weight_norm", "updates")}
        meta = dict(
            title=(f"TAP-trained binary RBM 784x{nh}, binary-MNIST, epoch {e}"
                   + ("" if full else f" of a short run on {settings['samples']:,} images")
                   + (f", trained with {fixed} Alg. 1 iterations per update" if fixed else "")),
            dataset=f"binary-MNIST (the first {settings['samples']:,} training images, "
                    "threshold 0.5)",
            algorithm="tap", n_visible=rbm.n_visible, n_hidden=rbm.n_hidden, epoch=int(e),
            settings={k: settings[k] for k in ("samples", "batch_size", "n_solutions",
                                               "learning_rate", "weight_decay", "momentum",
                                               "momentum_form", "init_scale", "damping", "tol",
                                               "train_iter", "seed") if k in settings},
            **({"training_products": f"{row['train_products']} (the training solves' matrix "
                   f"products in the epochs before this one; earlier epochs may have used "
                   f"float64: --products)"} if row.get("train_products") else {}),
            measured=measured,
            measured_on=f"the first {settings.get('eval_samples')} training images "
                        "(TAP log-likelihood per unit, eq. 39; unique TAP solutions)",
            reference="Tramel et al. (2018) Table 1, Alg. 2; heavy-ball momentum"
                      + ("; a fixed number of Alg. 1 iterations as in App. D" if fixed else ""),
            regenerate=regen)
        out.append(_write(rbm, TAP_NAME.format(nh=nh, series=series, epoch=e), meta))
    return out


def pcd(model_path, info_path, name="pcd-mnist-500"):
    """Copy a PCD model with its training record (``info_path``: JSON from the training
    script — settings, seconds, final measurements)."""
    rbm = RBM.load(model_path)
    meta = json.loads(Path(info_path).read_text())
    meta.setdefault("title", f"PCD-trained binary RBM {rbm.n_visible}x{rbm.n_hidden}, "
                             f"binary-MNIST")
    meta.update(algorithm="pcd", n_visible=rbm.n_visible, n_hidden=rbm.n_hidden)
    return _write(rbm, name, meta)


if __name__ == "__main__":
    kind, *rest = sys.argv[1:]
    if kind == "tap":
        print(tap(rest[0], [int(e) for e in rest[1:]]))
    elif kind == "pcd":
        print(pcd(*rest))
    else:
        raise SystemExit("usage: python -m rbmviz.checkpoints._make tap STATE_DIR E [E ...] | "
                         "pcd MODEL.npz INFO.json")
