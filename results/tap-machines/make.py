"""Tidy results, figures and the numbers of README.md from the state directory of the
paper-scale TAP runs — usable while the runs are still going (it reads what has been
evaluated and trains nothing).

    rbmviz reproduce tap --epochs 100 --hidden 100 --state STATE --save-epochs 1,10,25,50,100
    rbmviz reproduce tap --epochs 100 --hidden 25,50 --count-hidden 50 --state STATE \
        --save-epochs 1,10,100
    python results/tap-machines/make.py STATE --out results/tap-machines/paper-scale [--png]

and for the CBCL faces (``rbmviz reproduce tap --dataset cbcl --eval-every 10 --state STATE``)
the same with ``--out results/tap-machines/paper-scale-cbcl``;

writes curves.csv, solutions.csv, isomap.csv, data_map.csv, denoising.csv, summary.json,
figure.html (Figs. 3, 5, 6, 7, 8) and fig4.html (receptive fields of the last saved model),
and PNG snapshots of both with --png (headless chromium through playwright).

``make.py claims DIR`` and ``make.py png DIR`` write ``claims.md`` and ``figure.png`` (cropped
to what is drawn) of a run the command line saved to ``DIR`` (the appendices' studies).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from rbmviz import RBM, datasets
from rbmviz.reproduce import tap as rt
from rbmviz.reproduce import _io
from rbmviz.tap.denoising import denoising_curve

HERE = Path(__file__).resolve().parent
RUN_KEYS = ("samples", "eval_samples", "eval_every", "isomap_epochs", "batch_size",
            "n_solutions", "learning_rate", "weight_decay", "momentum", "momentum_form",
            "init_scale", "damping", "eval_damping", "tol", "eval_tol", "max_iter",
            "unique_tol", "n_neighbors", "seed")
#: settings only some runs have (the real-valued data sets; fixed-iteration training; extra recorded epochs)
OPTIONAL_KEYS = ("dataset", "learning_rate_final", "decay_epochs", "train_iter", "eval_epochs")
#: image shape of each data set (Fig. 4)
SHAPES = {"binary-mnist": (28, 28), "real-mnist": (28, 28), "cbcl": (19, 19)}


def _dataset(settings):
    return settings.get("dataset", "binary-mnist")


def _train_rows(settings, limit):
    from rbmviz.tap.presets import load_data, of_dataset
    return load_data(of_dataset(_dataset(settings)), "train", limit=limit)


def evaluated(state, nh):
    """Epochs evaluated so far for N_h = nh."""
    return sorted(int(m.group(1)) for p in (state / f"nh{nh}").glob("eval_*.npz")
                  if (m := re.match(r"eval_(\d+)\.npz", p.name)))


def tables_for(state, settings, nh, count_hidden):
    """The tables of N_h = ``nh`` up to its last evaluated epoch (no training, no denoising)."""
    done = evaluated(state, nh)
    last = done[-1]
    kw = {k: settings[k] for k in RUN_KEYS + OPTIONAL_KEYS if k in settings}
    kw.setdefault("train_iter", 0)          # (no key: every training solve ran to tol)
    tables, _ = rt.run(epochs=last, hidden=(nh,), count_hidden=nh, test_samples=0, ps=(),
                       state_dir=state, **kw)
    if nh != count_hidden:
        tables["isomap"] = tables["isomap"].iloc[0:0]
        tables["data_map"] = tables["data_map"].iloc[0:0]
    return tables, last


def denoising_for(state, settings, models, n_test=1000, ps=rt.DEFAULT_PS):
    """Fig. 8 from the latest saved model of each N_h (``models``: nh -> epoch)."""
    X = datasets.mnist("train", binarize="threshold", limit=settings["samples"])
    Xt = datasets.mnist("test", binarize="threshold", limit=n_test)
    frames = []
    for i, (nh, ep) in enumerate(sorted(models.items())):
        rbm = RBM.load(state / f"nh{nh}" / f"model_epoch{ep}.npz")
        methods = ("tap", "ope", "nn") if i == 0 else ("tap",)
        d = denoising_curve(rbm, Xt, list(ps), train=X, methods=methods, seed=settings["seed"],
                            damping=settings["damping"], tol=settings["tol"],
                            max_iter=settings["max_iter"])
        d.insert(0, "n_hidden", np.where(d["method"] == "tap", nh, 0))
        d["model_epoch"] = ep
        frames.append(d)
    return pd.concat(frames, ignore_index=True) if frames else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state")
    ap.add_argument("--count-hidden", type=int, default=None,
                    help="the N_h whose solutions are mapped (default: the data set's, 100 / 256)")
    ap.add_argument("--no-denoising", action="store_true")
    ap.add_argument("--png", action="store_true")
    ap.add_argument("--out", default=str(HERE))
    ap.add_argument("--test-samples", type=int, default=1000)
    a = ap.parse_args(argv)
    state = Path(a.state)
    settings = json.loads((state / "settings.json").read_text())
    if a.count_hidden is None:
        a.count_hidden = rt.DATASETS[_dataset(settings)]["count_hidden"]
    if _dataset(settings) != "binary-mnist":
        a.no_denoising = True                       # Fig. 8 is a binary-MNIST experiment
    hidden = sorted(int(p.name[2:]) for p in state.glob("nh*") if evaluated(state, int(p.name[2:])))
    parts, lasts = [], {}
    for nh in hidden:
        t, lasts[nh] = tables_for(state, settings, nh, a.count_hidden)
        parts.append(t)
    # (an empty table of one N_h has object columns: without infer_objects the concatenation
    # keeps them, and Bokeh refuses an object 'label' as colours: a blank figure)
    tables = {name: pd.concat([t[name] for t in parts], ignore_index=True).infer_objects()
              for name in rt.TABLES}
    saved = {}
    for nh in hidden:
        eps = sorted(int(p.stem.split("epoch")[1]) for p in (state / f"nh{nh}").glob("model_epoch*.npz"))
        if eps:
            saved[nh] = eps[-1]
    den = None if a.no_denoising else denoising_for(state, settings, saved, a.test_samples)
    tables["denoising"] = den if den is not None else tables["denoising"]
    s = {**settings, "hidden": hidden, "count_hidden": a.count_hidden,
         "epochs": max(lasts.values()), "test_samples": 1000 if den is not None else 0,
         "last_epoch_per_model": lasts, "denoising_model_epochs": saved}
    s["test_samples"] = a.test_samples if den is not None else 0
    summary = rt.summarize(tables, settings=s)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in rt.TABLES:
        tables[name].to_csv(out / f"{name}.csv", index=False)
    _io.write_json(out / "summary.json", summary)
    import holoviews as hv
    hv.extension("bokeh", logo=False)
    hv.save(rt.figure(tables), out / "figure.html", backend="bokeh", resources="inline",
            title=f"Tramel et al. 2018: TAP machines on {rt.DATASETS[_dataset(settings)]['label']} "
                  f"({settings['samples']:,} images)")
    figs = ["figure"]
    if a.count_hidden in saved:
        hv.save(fig4(state, a.count_hidden, saved[a.count_hidden], settings), out / "fig4.html",
                backend="bokeh", resources="inline", title="Fig. 4: receptive fields")
        figs.append("fig4")
    text = rt.format_summary(summary)
    (out / "summary.txt").write_text(text + "\n", encoding="utf-8")
    (out / "claims.md").write_text(claims_markdown(summary), encoding="utf-8")
    print(text)
    if a.png:
        for f in figs:
            snapshot(out / f"{f}.html", out / f"{f}.png")


def claims_markdown(summary):
    """The claims of ``summary`` as a Markdown table (:mod:`rbmviz.reproduce.report`: claim,
    paper, ours, verdict, criterion)."""
    from rbmviz.reproduce import report
    return report.claims_markdown(report.claim_rows(summary))


def fig4(state, nh, epoch, settings):
    """Fig. 4: the 10 most localised / spread-out and least / most active receptive fields."""
    from rbmviz.tap import landscape
    from rbmviz.viz import tap as vt
    rbm = RBM.load(state / f"nh{nh}" / f"model_epoch{epoch}.npz")
    X = _train_rows(settings, min(settings["samples"], 10_000))
    shape = SHAPES[_dataset(settings)]
    act = landscape.mean_activation(rbm, X)
    by_spread = landscape.rank_receptive_fields(rbm.W, by="spread")
    by_act = landscape.rank_receptive_fields(rbm.W, by="activation", activation=act)
    return (vt.ranked_receptive_fields(rbm.W, by_spread, n=10, shape=shape,
                                       title=f"l_0.1 spread, N_h={nh}, epoch {epoch}")
            + vt.ranked_receptive_fields(rbm.W, by_act, n=10, shape=shape,
                                         title=f"mean activation, N_h={nh}, epoch {epoch}")).cols(1)


def snapshot(html, png, width=1400, wait_ms=None):
    """PNG of an HTML figure through headless chromium (playwright, system browser); a large
    figure (thousands of points) is given longer to draw."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        import shutil
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = b.new_page(viewport={"width": width, "height": 900})
        page.goto(Path(html).resolve().as_uri())
        if wait_ms is None:
            wait_ms = 3000 + 4000 * Path(html).stat().st_size // 5_000_000
        page.wait_for_timeout(wait_ms)
        page.screenshot(path=str(png), full_page=True)
        b.close()


def trimmed_snapshot(html, png, margin=10):
    """:func:`snapshot` of ``html`` cropped to what is drawn (the page's white margins off)."""
    from PIL import Image, ImageChops
    snapshot(html, png)
    im = Image.open(png).convert("RGB")
    box = ImageChops.difference(im, Image.new("RGB", im.size, (255, 255, 255))).getbbox()
    if box:
        l, t, r, b = box
        im.crop((max(0, l - margin), max(0, t - margin), min(im.width, r + margin),
                 min(im.height, b + margin))).save(png)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "claims":       # claims.md of a CLI run's summary
        d = Path(sys.argv[2])
        (d / "claims.md").write_text(claims_markdown(json.loads((d / "summary.json").read_text())))
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "png":          # figure.png of a CLI run's figure
        d = Path(sys.argv[2])
        trimmed_snapshot(d / "figure.html", d / "figure.png")
        sys.exit(0)
    sys.exit(main())
