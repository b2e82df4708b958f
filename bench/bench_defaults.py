"""The front door at its defaults: ``rbmviz.train`` with no extra knobs against its peers.

Printed side by side (ONE process, interleaved rounds, median over rounds):

1. **Large** — ``rbmviz.train(RBM(784, 500), X, "pcd", epochs=1, batch_size=100,
   learning_rate=0.01, k=1)`` on float64 rows (its defaults: ``eval_every="auto"``, metrics
   ``spl``/``recon_error``/``weight_norm``, float32 working copy) against scikit-learn's
   ``BernoulliRBM(n_components=500, batch_size=100, learning_rate=0.01, n_iter=1).fit`` of the
   same epoch.  Target ≥ 3×; the records must still show learning (reconstruction error falls).
2. **PCD variants** — the bare PCD-1 update (6 products: the chains' hidden step is recomputed
   with the current weights) with every product by BLAS, as rbmviz runs it (the products of
   the 0/1 visible layer as sums of rows of W, :mod:`rbmviz.kernels.binary`), and a variant
   that reuses the last negative-phase hidden sample as the next chain state, as
   scikit-learn does (5 products), float32, ms/update.
3. **Small** — ``rbmviz.train(RBM(9, 4), bars_and_stripes(3), "cd", epochs=E,
   learning_rate=0.3, k=12)`` (full batch, defaults: exact log-likelihood recorded on the
   time budget) against the plain numpy CD-12 loop of bench/numpy_reference.py without any
   evaluation.  Target ≥ 20×.
4. **Streaming** — a ``Run`` with the MNIST preset (784×500, batch 100, float32) and
   ``max_seconds=0.5`` as the explorer drives it: records per second and the change of the
   reconstruction error.  Target ≥ 2 records/s.

Data: MNIST from the data directory when present (threshold-binarised), else random rows
with MNIST's mean (0.13) — said in the output.

Run: ``python bench/bench_defaults.py [--quick]``.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

if __package__ in (None, ""):   # run as a script: make the project root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import OtherLoad, interleaved, load_mnist_binary, table  # noqa: E402

import numpy as np  # noqa: E402

import rbmviz  # noqa: E402
from bench.numpy_reference import cd_epoch  # noqa: E402
from rbmviz import _blas  # noqa: E402
from rbmviz._blas import (binary_matmul, binary_matmul_T, binary_rows, matmul,  # noqa: E402
                          single_threaded_blas)
import rbmviz.algorithms.cd as _cd  # noqa: E402
from rbmviz.algorithms.cd import PCD  # noqa: E402
from rbmviz.kernels.gibbs import sample_rows_, sigmoid_rows_scaled_  # noqa: E402

#: ``rbmviz.train`` at its defaults ≥ 2× scikit-learn's default ``BernoulliRBM.fit`` on the same
#: epoch; the full-batch CD-12 loop ≥ 20× plain numpy; ≥ 2 records/s of an explorer-style run
TARGETS = {"large": 2.0, "small": 20.0, "stream": 2.0}
#: a run counts as quiet when other processes used at most this many cores while it timed
MAX_OTHER_CORES = 0.25


def mnist_rows(n):
    """``n`` threshold-binarised MNIST rows, or synthetic rows of MNIST's density when the
    files are missing (:func:`bench._common.load_mnist_binary`); returns ``(X, source)``."""
    return load_mnist_binary(n)


class PCDReuseHidden(PCD):
    """PCD-1 as scikit-learn runs it: the chains' state is the hidden sample of the previous
    negative phase (drawn with the previous weights), so an update needs 5 products."""

    def _update(self, rbm, batch):
        W, b, c = rbm.params
        dt = W.dtype
        nb, n = batch.shape[0], self.n_chains
        rows = n + nb
        buf = self._buffers(rbm, rows)
        S, Pre, Y, H, PreV, F, B = (buf[x] for x in ("S", "Pre", "Y", "H", "PreV", "F", "B"))
        seed, ctr = self.gibbs_seed, self.counter
        if not hasattr(self, "hchain"):
            self.hchain = np.empty((n, rbm.n_hidden), dtype=dt)
            matmul(np.ascontiguousarray(self.chains), W, Pre[:n])
            sample_rows_(Pre[:n], c, self.hchain, seed, ctr, F, B)
            ctr += 1
        V = S[:n]
        Xb = S[n:rows]
        Xb[...] = batch
        idx, cnt = buf["idx"], buf["cnt"]
        matmul(self.hchain, W.T, PreV[:n])                    # 1: visible step from h
        sample_rows_(PreV[:n], b, V, seed, ctr, F, B)
        d = binary_rows(S[:rows], idx[:rows], cnt[:rows])      # 0/1 rows: sums of rows of W
        binary_matmul(S[:rows], W, Pre[:rows], idx[:rows], cnt[:rows], d)   # 2-3: neg + pos
        eta = self.learning_rate
        sigmoid_rows_scaled_(Pre[:n], c, Y[:n], dt.type(-eta / n), F, B)
        sigmoid_rows_scaled_(Pre[n:rows], c, Y[n:rows], dt.type(eta / nb), F, B)
        sample_rows_(Pre[:n], c, self.hchain, seed, ctr + 1, F, B)   # next chain state
        self.counter = ctr + 2
        G = buf["G"]
        binary_matmul_T([(S[:rows], Y[:rows], idx[:rows], cnt[:rows], d)], G)   # 4-5: weight step
        W += G
        b += (-eta / n) * V.sum(axis=0) + (eta / nb) * S[n:rows].sum(axis=0)
        c += Y[:rows].sum(axis=0)
        self.updates += 1
        self.gibbs_steps += 1


def large(X, rounds):
    from sklearn.neural_network import BernoulliRBM

    def ours():
        return rbmviz.train(rbmviz.RBM(784, 500, seed=0), X, "pcd", epochs=1, batch_size=100,
                            learning_rate=0.01, k=1)

    def theirs():
        BernoulliRBM(n_components=500, batch_size=100, learning_rate=0.01, n_iter=1,
                     random_state=0).fit(X)

    df = ours()
    res = interleaved({"rbmviz.train (defaults)": ours, "sklearn BernoulliRBM.fit": theirs},
                      rounds=rounds, reps=1, warmup=1)
    return res, df


class _AllBlas:
    """Every product by BLAS (the 0/1 visible layer not used): the update before the
    sums of rows."""

    def __enter__(self):
        self.saved = _blas.BINARY_DENSITY_MAX, _cd.BINARY_DENSITY_MAX
        _blas.BINARY_DENSITY_MAX = _cd.BINARY_DENSITY_MAX = -1.0

    def __exit__(self, *exc):
        _blas.BINARY_DENSITY_MAX, _cd.BINARY_DENSITY_MAX = self.saved


def pcd_variant(X, rounds, reps, warm=30):
    """ms per PCD-1 update, each variant after ``warm`` updates (the chains leave their
    random start and become as sparse as the data)."""
    import contextlib
    out = {}
    for name, cls, ctx in (("PCD-1, 6 products, all BLAS", PCD, _AllBlas),
                           ("PCD-1, 6 products (rbmviz default)", PCD, contextlib.nullcontext),
                           ("PCD-1, reuse hidden (5)", PCDReuseHidden, contextlib.nullcontext)):
        rbm = rbmviz.RBM(784, 500, seed=0, dtype="float32")
        alg = cls(k=1, learning_rate=0.01, seed=0)
        Xf = X.astype(np.float32)
        alg.setup(rbm, Xf, 100)
        it = iter(range(10**9))

        def step(alg=alg, rbm=rbm, Xf=Xf, it=it, ctx=ctx):
            i = next(it) % (Xf.shape[0] // 100)
            with single_threaded_blas(), ctx():
                alg._update(rbm, Xf[i * 100:(i + 1) * 100])
        for _ in range(warm):
            step()
        out[name] = step
    return interleaved(out, rounds=rounds, reps=reps)


def small(epochs, rounds):
    X = rbmviz.datasets.bars_and_stripes(3)

    def ours():
        return rbmviz.train(rbmviz.RBM(9, 4, seed=0), X, "cd", epochs=epochs, learning_rate=0.3, k=12)

    def numpy_loop():
        rbm = rbmviz.RBM(9, 4, seed=0)
        W, b, c = rbm.params
        rng = np.random.default_rng(0)
        for _ in range(epochs // 10):        # a tenth of the epochs (numpy is slow), scaled below
            cd_epoch(W, b, c, X, 12, 0.3, rng)

    df = ours()
    res = interleaved({"rbmviz.train (defaults)": ours, "numpy CD-12 loop (1/10 epochs)": numpy_loop},
                      rounds=rounds, reps=1, warmup=1)
    res["numpy CD-12 loop (1/10 epochs)"] = {k: (v * 10 if k != "rounds" else v)
                                             for k, v in res["numpy CD-12 loop (1/10 epochs)"].items()}
    return res, df


def stream(X, seconds):
    p = rbmviz.presets.for_dataset("mnist")
    rbm = rbmviz.RBM(784, p["n_hidden"], seed=0, dtype=p["dtype"])
    run = rbmviz.Run(rbm, X, p["algorithm"], epochs=None, batch_size=p["batch_size"],
                     learning_rate=p["learning_rate"], k=p["k"], metrics=p["metrics"],
                     max_seconds=0.5)
    recs, gaps = [next(run)], []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        t = time.perf_counter()
        recs.append(next(run))
        gaps.append(time.perf_counter() - t)
    return len(recs) - 1, time.perf_counter() - t0, max(gaps), recs


def run(quick=False):
    warnings.simplefilter("ignore")
    rounds = 3 if quick else 5
    X, source = mnist_rows(2000 if quick else 5000)
    mon = OtherLoad()
    print(f"data: {source}, {X.shape[0]} rows; float64 input")
    out = {"benchmark": "defaults", "quick": quick, "data": source, "rows": int(X.shape[0]),
           "rounds": rounds, "targets": dict(TARGETS)}
    res, df = large(X, rounds)
    a, b = res["rbmviz.train (defaults)"]["median"], res["sklearn BernoulliRBM.fit"]["median"]
    out["train_vs_sklearn"] = {"rbmviz_s": a, "sklearn_s": b, "ratio": b / a,
                               "records": int(len(df))}
    print("\n1. 784x500 PCD-1, one epoch, batch 100 (s per epoch, median of rounds)")
    print(table([(k, f"{v['median']:.3f}", f"{v['min']:.3f}") for k, v in res.items()],
                ["contender", "median s", "best s"]))
    first, last = df.iloc[0], df.iloc[-1]
    print(f"ratio sklearn / rbmviz.train: {b / a:.2f}x (target >= {TARGETS['large']}x); records "
          f"{len(df)}: recon_error {first.recon_error:.4f} -> {last.recon_error:.4f}, spl "
          f"{first.spl:.1f} -> {last.spl:.1f}")

    v = pcd_variant(X, rounds, 5 if quick else 10)
    names = list(v)
    print("\n2. PCD-1 update, float32 (ms per update)")
    print(table([(k, f"{d['median'] * 1e3:.2f}", f"{d['min'] * 1e3:.2f}") for k, d in v.items()],
                ["variant", "median ms", "best ms"]))
    print(f"sums of rows for the 0/1 visible layer: {v[names[0]]['median'] / v[names[1]]['median']:.2f}x "
          f"faster per update; reusing the last hidden sample on top: "
          f"{v[names[1]]['median'] / v[names[2]]['median']:.2f}x")

    epochs = 3000
    res_s, df_s = small(epochs, rounds)
    a, b = res_s["rbmviz.train (defaults)"]["median"], res_s["numpy CD-12 loop (1/10 epochs)"]["median"]
    out["small_train_vs_numpy"] = {"rbmviz_s": a, "numpy_s": b, "ratio": b / a, "epochs": epochs,
                                   "records": int(len(df_s))}
    print(f"\n3. bars & stripes 9x4, full-batch CD-12, {epochs} epochs (s)")
    print(table([(k, f"{d['median']:.3f}") for k, d in res_s.items()], ["contender", "median s"]))
    print(f"ratio numpy / rbmviz.train: {b / a:.1f}x (target >= {TARGETS['small']}x); epochs/s "
          f"{epochs / a:,.0f} vs {epochs / b:,.0f}; {len(df_s)} records of the exact log-likelihood, "
          f"{df_s.train_ll.iloc[0]:.3f} -> {df_s.train_ll.iloc[-1]:.3f}")

    out["pcd_variants_ms"] = {k: d["median"] * 1e3 for k, d in v.items()}
    n, secs, worst, recs = stream(X, 6 if quick else 15)
    out["stream"] = {"records_per_s": n / secs, "slowest_next_s": worst}
    print(f"\n4. explorer-style Run, MNIST preset, max_seconds=0.5: {n / secs:.1f} records/s "
          f"(target >= {TARGETS['stream']}), slowest next() {worst:.2f} s, recon_error "
          f"{recs[0]['recon_error']:.4f} -> {recs[-1]['recon_error']:.4f} after {recs[-1]['updates']} updates")
    oc = mon.cores()
    if oc is not None:
        print(f"\n(other processes used {oc:.2f} of the cores meanwhile; ratios are in-process, "
              "absolute times inflate on a busy machine)")
        if oc > MAX_OTHER_CORES:
            print(f"NOISY: more than {MAX_OTHER_CORES} cores used by other processes; rerun on a "
                  "quiet machine before quoting these ratios")
    out["other_cores"] = oc
    out["quiet"] = oc is not None and oc <= MAX_OTHER_CORES
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds and rows")
    run(quick=ap.parse_args(argv).quick)


if __name__ == "__main__":
    main()
