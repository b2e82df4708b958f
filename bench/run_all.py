"""Run every benchmark, print one compact table, write ``bench/results/latest.json``.

* ``bench_defaults.py`` — ``rbmviz.train`` at its defaults (no ``eval_every``, no ``metrics``) vs
  scikit-learn ``BernoulliRBM.fit`` (784×500 PCD-1 epoch) and vs a plain numpy CD-12 loop (3×3 bars &
  stripes), the 5-product PCD variant, explorer-style streaming on the MNIST preset.
* ``bench_floors.py`` — every hot path (the PCD-1 784×500 update in float32 and float64, AIS,
  one TAP2 iteration, exact enumeration) against its own GEMM floor measured in the same
  process, next to its peers, with a per-round noise check that refuses a ratio from a noisy
  round.
* ``bench_large.py`` — PCD-1 on MNIST 784×500 (batch 100): rbmviz ``CD.update`` vs
  scikit-learn's ``BernoulliRBM`` (updates/s), the share of the update its GEMMs account
  for, a breakdown of ``CD.update`` and a thread sweep.
* ``bench_tap_train.py`` — one TAP training epoch (Alg. 2, M = K = 100, N_h = 100) on
  60,000 binary-MNIST images: rbmviz vs a plain-numpy Alg. 2 (timed fraction, extrapolated).
* ``bench_tap.py`` — TAP inference (Alg. 1, TAP2) from 10,000 MNIST images on a 784×100 RBM
  to tol 1e-8 (target < 20 s), vs a plain-numpy iteration on a subset; unique solutions.
* ``bench_small.py`` — full-batch CD-12/PCD-12 on 3×3 bars & stripes: rbmviz's fused
  kernel vs plain numpy (epochs/s).
* ``bench_dc.py`` — S-DCP, CS-DCP, CG, SSD: fused kernel vs BLAS path vs plain numpy
  (epochs/s), and the projected cost of Upadhya & Sastry's full small-data reproduction
  (500 runs × 50,000 epochs with exact ATLL; target < 10 min on 2 processes, ≥ 20× numpy).

Both measure their contenders side by side in this one process (interleaved rounds,
medians).  ``--quick`` for a short run (~15 s); a full run takes about 30 s (both longer
the first time after a kernel edit, while Numba recompiles).

Run: from the project root, ``python -m bench [--quick]`` or
``python bench/run_all.py [--quick]``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):   # run as a script: make the project root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import RESULTS, OtherLoad, table


def floor_rows(floors):
    """One row per hot path of ``bench_floors``: its fraction of its own GEMM floor (``noisy``
    when the noise check refused the ratio)."""
    rows = []
    for title, rec in floors["paths"].items():
        f, t = rec["fraction_of_floor"], rec["target"]
        rows.append(("floor", f"{title}: of its GEMM floor", "noisy" if f is None else f"{100 * f:.0f}%",
                     "" if rec["quiet"] else rec["why_noisy"], f">= {100 * t:.0f}%" if t else "",
                     "" if t is None or f is None else ("PASS" if f >= t else "MISS")))
    v = floors.get("pcd_f32_vs_sklearn_f32")
    rows.append(("floor", "PCD-1 float32: sklearn float32 fit / rbmviz", "noisy" if v is None else f"{v:.2f}x",
                 "", ">= 1.5x", "" if v is None else ("PASS" if v >= 1.5 else "MISS")))
    v = floors.get("exact_vs_numpy")
    rows.append(("floor", "exact log Z: numpy in batches of states / rbmviz", "noisy" if v is None else f"{v:.1f}x",
                 "", ">= 10x", "" if v is None else ("PASS" if v >= 10 else "MISS")))
    return rows


def summary_rows(large, small):
    """One row per headline number; rows with a target end in PASS/MISS."""
    u = large["updates"]
    rows = []
    for name in ("rbmviz f32 (CD.update)", "rbmviz f64 (CD.update)", "sklearn partial_fit f64 (default)",
                 "sklearn partial_fit f32 input (casts to f64)", "sklearn _fit loop f32 (fit's per-batch body)"):
        rows.append(("large", name, f"{u[name]['ms_per_update']:.3f} ms",
                     f"{u[name]['updates_per_s']:.0f} upd/s", "", ""))
    for t in large["targets"]:
        pct = t["unit"] == "%"
        rows.append(("large", t["label"], f"{100 * t['value']:.0f}%" if pct else f"{t['value']:.2f}x", "",
                     f">= {100 * t['target']:.0f}%" if pct else f">= {t['target']:g}x",
                     "PASS" if t["pass"] else "MISS"))
    e, r2 = small["epochs_per_s"], small["ratios"]
    for alg in ("CD-12", "PCD-12"):
        rows.append(("small", f"rbmviz {alg} train_epochs", f"{e[f'rbmviz {alg} train_epochs']:.0f} ep/s", "", "", ""))
        rows.append(("small", f"numpy {alg} cd_epoch", f"{e[f'numpy {alg} cd_epoch']:.0f} ep/s", "", "", ""))
        v = r2[f"{alg}: rbmviz train_epochs / numpy"]
        rows.append(("small", f"{alg} rbmviz / numpy (kernel)", f"{v:.1f}x", "", ">= 20x",
                     "PASS" if v >= 20 else "MISS"))
        v = r2[f"{alg}: rbmviz train() / numpy"]
        rows.append(("small", f"{alg} rbmviz train() / numpy", f"{v:.1f}x", "", "", ""))
        key = f"{alg}: rbmviz error_model=numpy / numpy"
        if key in r2:
            rows.append(("small", f"{alg} kernel w/ error_model=numpy / numpy", f"{r2[key]:.1f}x", "", ">= 20x",
                         "PASS" if r2[key] >= 20 else "MISS"))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short run")
    ap.add_argument("--out", default=str(RESULTS / "latest.json"), help="JSON results file")
    a = ap.parse_args(argv)
    from bench import bench_defaults, bench_floors, bench_large, bench_small
    t0 = time.perf_counter()
    mon = OtherLoad()                            # other processes' CPU over the whole run
    floors = bench_floors.run(quick=a.quick)     # each hot path against its own floor
    print()
    defaults = bench_defaults.run(quick=a.quick)   # the front doors at their defaults
    print()
    small = bench_small.run(quick=a.quick)
    print()
    large = bench_large.run(quick=a.quick)
    print()
    from bench import bench_tap_train
    tap_train = bench_tap_train.run(quick=a.quick)
    print()
    from bench import bench_tap
    tap_inf = bench_tap.run(quick=a.quick)
    print()
    from bench import bench_dc
    dcb = bench_dc.run(quick=a.quick)
    rows = floor_rows(floors) + summary_rows(large, small)
    d = defaults["train_vs_sklearn"]
    rows.append(("defaults", f"rbmviz.train / sklearn BernoulliRBM.fit, 784x500 PCD-1 epoch of {defaults['rows']} rows",
                 f"{d['ratio']:.2f}x", "", f">= {bench_defaults.TARGETS['large']:g}x",
                 "PASS" if d["ratio"] >= bench_defaults.TARGETS["large"] else "MISS"))
    rp = dcb["reproduction"]
    for name in bench_dc.RULES:
        rows.append(("dc", f"{name} fused / numpy (kernel, CPU time)",
                     f"{dcb['per_algorithm']['ratios'][f'{name}: fused / numpy']:.1f}x", "", "", ""))
    rows.append(("dc", "small reproduction, 500 runs, 2 processes", f"{rp['rbmviz_minutes_2proc']:.1f} min",
                 f"numpy {rp['numpy_minutes_2proc']:.0f} min", f"< {bench_dc.TARGET_MINUTES:g} min",
                 "PASS" if rp["pass_minutes"] else "MISS"))
    rows.append(("dc", "small reproduction rbmviz / numpy", f"{rp['ratio']:.1f}x", "",
                 f">= {bench_dc.TARGET_RATIO:g}x", "PASS" if rp["pass_ratio"] else "MISS"))
    t = tap_inf["target"]
    rows.append(("tap", f"TAP solve {t['label']}, 784x100", f"{t['seconds']:.1f} s",
                 f"{tap_inf['subset']['ratio']:.1f}x numpy",
                 f"< {t['target_s']:.0f} s" if t["target_s"] else "", "" if t["pass"] is None
                 else ("PASS" if t["pass"] else "MISS")))
    rows.append(("tap", "TAP epoch 60k, 784x100 (" + ("full" if tap_train["full"] else "extrapolated") + ")",
                 f"{tap_train['rbmviz_epoch_s']:.1f} s", f"{tap_train['ratio']:.2f}x numpy",
                 f"< {tap_train['target_s']:.0f} s", "PASS" if tap_train["pass"] else "MISS"))
    print("\n== Summary")
    print(table(rows, ["bench", "what", "value", "", "target", ""], left=2))
    if a.quick:
        print("(--quick: few rounds; the ratios are indicative — PASS/MISS of record come from a full run)")
    if not large["replica_check"]["match"]:
        print("WARNING: the instrumented CD.update replica no longer matches CD.update: "
              + large["replica_check"]["detail"])
    if large["noise"]["busy"]:
        print("WARNING: the machine was busy during bench_large (see its warning); rerun when idle.")
    if small["noise"]["busy"]:
        print("WARNING: the machine was busy during bench_small (see its warning); rerun when idle.")
    other = mon.cores()
    if other is not None:
        print(f"other processes used {other:.2f} cores on average over the whole run"
              + (" — NOISY: rerun on a quiet machine before quoting these numbers" if other > 0.25 else ""))
    res = {"quick": a.quick, "seconds": time.perf_counter() - t0, "other_cores": other,
           "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "floors": floors, "defaults": defaults, "large": large, "small": small,
           "tap_train": tap_train, "tap_inference": tap_inf, "dc": dcb}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1, default=str))
    print(f"\nwrote {out} ({res['seconds']:.0f} s)")
    return res


if __name__ == "__main__":
    main()
