"""Fig. 8 across runs: the denoising MCC of every N_h beside each other, read from the
committed ``denoising.csv`` of two (or more) rendered runs — e.g. N_h = 25, 50, 100 of
``paper-scale-fixed10/`` and N_h = 500 of ``paper-scale-nh500/``.

    python results/tap-machines/denoising_by_nh.py results/tap-machines/paper-scale-fixed10 \
        results/tap-machines/paper-scale-nh500 --out results/tap-machines/paper-scale-nh500 --png

Writes ``denoising-by-nh.csv`` (one row per p: the OPE, the 1-NN and the TAP MCC of every
N_h, with the epoch of each TAP model in the column name) and ``denoising-by-nh.html`` (and
``.png`` with --png), and prints the table as Markdown.  The OPE and 1-NN curves are taken
from the first directory; those of the others must agree with them (the same 1,000 test
images and noise realisation: ``denoising_curve`` draws the noise from the run's seed).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def table(dirs):
    """Wide table: p, ope, nn, tap_nh<N>_epoch<E> for every TAP model of ``dirs``."""
    frames = [pd.read_csv(Path(d) / "denoising.csv") for d in dirs]
    base = frames[0]
    wide = pd.DataFrame({"p": np.sort(base["p"].unique())})
    for m in ("ope", "nn"):
        ref = base[base["method"] == m].set_index("p")["mcc"]
        for d, f in zip(dirs[1:], frames[1:]):
            other = f[f["method"] == m].set_index("p")["mcc"]
            common = ref.index.intersection(other.index)
            if len(common) and not np.allclose(ref[common], other[common], atol=1e-12):
                raise ValueError(f"{m} differs between {dirs[0]} and {d}: "
                                 f"not the same test images or noise")
        wide[m] = wide["p"].map(ref)
    for f in frames:
        tap = f[f["method"] == "tap"]
        for nh, g in tap.groupby("n_hidden"):
            ep = int(g["model_epoch"].iloc[0]) if "model_epoch" in g else -1
            wide[f"tap_nh{int(nh)}_epoch{ep}"] = wide["p"].map(g.set_index("p")["mcc"])
    return wide


def markdown(wide):
    cols = [c for c in wide.columns if c != "p"]

    def head(c):
        if c.startswith("tap_nh"):
            nh, ep = c[len("tap_nh"):].split("_epoch")
            return f"TAP N_h = {nh} (epoch {ep})"
        return {"ope": "OPE", "nn": "1-NN"}[c]
    lines = ["| p | " + " | ".join(head(c) for c in cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    for _, r in wide.iterrows():
        vals = [r[c] for c in cols]
        best = max(vals)
        cells = [f"**{v:.3f}**" if v == best else f"{v:.3f}" for v in vals]
        lines.append(f"| {r['p']:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def figure(wide):
    import holoviews as hv
    curves = []
    for c in wide.columns[1:]:
        label = c.replace("tap_nh", "TAP N_h=").replace("_epoch", ", epoch ") \
            if c.startswith("tap") else {"ope": "OPE", "nn": "1-NN"}[c]
        dash = "dashed" if not c.startswith("tap") else "solid"
        curves.append(hv.Curve((wide["p"], wide[c]), "flip probability p", "MCC", label=label)
                      .opts(line_dash=dash, line_width=2)
                      * hv.Scatter((wide["p"], wide[c]), "flip probability p", "MCC",
                                   label=label).opts(size=5))
    return hv.Overlay(curves).opts(
        width=800, height=500, legend_position="bottom_left", show_grid=True,
        title="Fig. 8: denoising MCC (1,000 test images) by N_h")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", help="rendered runs, each with a denoising.csv")
    ap.add_argument("--out", required=True)
    ap.add_argument("--png", action="store_true")
    a = ap.parse_args(argv)
    wide = table(a.dirs)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    wide.to_csv(out / "denoising-by-nh.csv", index=False)
    import holoviews as hv
    hv.extension("bokeh", logo=False)
    hv.save(figure(wide), out / "denoising-by-nh.html", backend="bokeh", resources="inline",
            title="Denoising MCC by N_h")
    print(markdown(wide), end="")
    if a.png:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from make import snapshot
        snapshot(out / "denoising-by-nh.html", out / "denoising-by-nh.png", width=900)


if __name__ == "__main__":
    sys.exit(main())
