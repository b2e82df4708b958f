"""Reference models for ``tests/test_golden.py``: every training rule's seeded result.

    python tests/golden/make.py            # refuses to replace existing files
    python tests/golden/make.py --force    # after a deliberate change of the numerics

Each case trains a small model through the public front doors with every knob at its
declared default (only the seed, the epochs and the data are given) and stores its
parameters.  The test retrains and compares: a refactor that changes a default, a random
stream or the order of the arithmetic shows up as a difference.  Keep the cases small —
they run in the default test suite.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _bars():
    from rbmviz import datasets
    return datasets.bars_and_stripes(3)


def _digits():
    from rbmviz import datasets
    X = datasets.digits()
    return (X[:200] > 0.5).astype(np.float64)


def _rbm_case(rule, *, n_hidden=6, epochs=40, data=_bars, float32=False, **knobs):
    def build():
        import rbmviz
        X = data()
        rbm = rbmviz.RBM(X.shape[1], n_hidden, seed=3,
                         dtype="float32" if float32 else "float64")
        rbmviz.train(rbm, X, rule, epochs=epochs, seed=11, **knobs)
        return {"W": rbm.W, "b": rbm.b, "c": rbm.c}
    return build


def _dbm_case():
    from rbmviz import dbm
    X = _digits()[:100]
    m = dbm.DBM([X.shape[1], 12, 6], seed=5)
    dbm.pretrain(m, X, epochs=2, seed=7)
    tr = dbm.DBMTrainer(seed=9)
    for _ in range(2):
        tr.epoch(m, X)
    return {f"W{i}": w for i, w in enumerate(m.W)} | {
        f"theta{i}": t for i, t in enumerate(m.biases)}


CASES = {
    "cd": _rbm_case("cd"),
    "pcd": _rbm_case("pcd"),
    "cg": _rbm_case("cg"),
    "sdcp": _rbm_case("sdcp"),
    "csdcp": _rbm_case("csdcp"),
    "ssd": _rbm_case("ssd"),
    "tap": _rbm_case("tap", epochs=400),
    "pcd-digits-batch": _rbm_case("pcd", n_hidden=16, epochs=3, data=_digits, batch_size=20),
    "tap-digits-batch": _rbm_case("tap", n_hidden=16, epochs=3, data=_digits, batch_size=20),
    "dbm": _dbm_case,
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    force = "--force" in argv
    for name, build in CASES.items():
        path = HERE / f"{name}.npz"
        if path.exists() and not force:
            print(f"{path.name}: exists (use --force to replace)")
            continue
        arrays = build()
        np.savez(path, **arrays)
        print(f"{path.name}: {', '.join(f'{k}{v.shape}' for k, v in arrays.items())}")


if __name__ == "__main__":
    main()
