"""Reproduction of Upadhya & Sastry (2017), "Learning RBM with a DC programming approach",
Sec. 4.2.1 / Figs. 1–2: the small data sets (the DC-programming theory page of the documentation).

Protocol (confirmed from the paper unless marked): Bars & Stripes (D = 3, the 14 distinct
patterns) and Shifting Bar (N = 9, B = 1, 9 patterns); RBMs with 4 hidden units; full-batch
training for 50,000 epochs; 25 trials, every algorithm of a trial starting from the same
parameters (W ~ N(0, 0.01²), hidden biases 0, visible biases logit(data mean)); CD-K and
PCD-K with K = 12 against S-DCP and CS-DCP with d = 3 inner steps of K′ = 4 Gibbs steps
(equal compute, K = d·K′, Sec. 3.1); centered gradient (CG) and CS-DCP with
ν_μ = ν_λ = 0.01; learning rates η = 0.3 and 0.5 (named for Shifting Bar; the grid used
for Bars & Stripes is UNCONFIRMED).  The ATLL (eq. 9 with its 1/N, errata #1) is computed
exactly over the complete pattern set, which is both training and test set.

The paper's statements checked by the summary: the theoretical bounds −2.6 (= −ln 14) and
−2.2 (= −ln 9); on Shifting Bar CD and PCD stall near ATLL ≈ −3.15 for both rates, CG
escapes only with η = 0.5, S-DCP/CS-DCP reach nearly the same ATLL for both rates; on
Bars & Stripes CG needs ≈ 2,500 more epochs than CS-DCP to reach 90 % of its maximum ATLL.

Choices the paper leaves open: CG uses K = 12 here (the paper writes K = 24 for CG without
naming the data sets; 12 is the equal-compute value); "90 % of the maximum ATLL" is read
as 90 % of the gain from the initial to the maximal mean ATLL (:func:`._dc.time_to_fraction`).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from . import _dc

if TYPE_CHECKING:
    import holoviews as hv
    import pandas

__all__ = ["DATASETS", "PAPER", "run", "base_settings", "summarize", "claims",
           "format_summary", "figure", "save", "add_arguments", "main", "QUICK"]

#: data sets of the experiment → the paper's label
DATASETS = {"bars_and_stripes": "Bars & Stripes", "shifting_bar": "Shifting Bar"}
#: the paper's numbers (Upadhya & Sastry 2017, Sec. 4.2.1)
PAPER = {"bound": {"bars_and_stripes": -math.log(14), "shifting_bar": -math.log(9)},
         "bound_quoted": {"bars_and_stripes": -2.6, "shifting_bar": -2.2},
         "local_optimum": _dc.LOCAL_OPTIMUM, "cg_extra_epochs_bas": 2500,
         "updates_to_match_sb": 30000}
#: the ``--quick`` preset (a few minutes on 2 cores)
QUICK = {"trials": 3, "epochs": 5000, "eval_every": 50}
DEFAULTS = {"trials": 25, "epochs": 50_000, "etas": (0.3, 0.5),
            "datasets": tuple(DATASETS), "algorithms": _dc.ALGORITHMS, "k": 12, "k_inner": 4,
            "n_hidden": 4, "seed": 0}
NOTES = [
    "ATLL = exact average log-likelihood of the complete pattern set (training set = test set).",
    "CG uses K = 12 (equal compute); the paper states K = 24 for CG without naming the data set.",
    "t90 = first epoch at which the trial-mean ATLL covers 90% of its gain from epoch 0 to its "
    "maximum (the paper: 'the epoch at which the model achieves 90% of the maximum ATLL').",
    "Every algorithm of a trial starts from the same parameters; each draws its own Gibbs "
    "stream (with one shared stream, paired_chains=True, PCD's persistent chains couple with "
    "CD's restarted ones within K steps while the model mixes fast and the curves coincide).",
]


def default_eval_every(epochs):
    """About 500 evaluations per run (every 100 epochs for 50,000), at least every epoch."""
    return max(1, int(epochs) // 500)


def base_settings(*, epochs: int, eval_every: int, k: int = 12, k_inner: int = 4,
                  n_hidden: int = 4) -> dict:
    """The flat settings dict (:func:`rbmviz.settings.to_dict` form) shared by every run.

    Parameters
    ----------
    epochs : int
        Training epochs.
    eval_every : int
        Epochs between evaluations.
    k : int
        Gibbs budget per update.
    k_inner : int
        Gibbs steps per inner step of S-DCP/CS-DCP.
    n_hidden : int
        Hidden units.

    Returns
    -------
    dict
        Flat settings (:func:`rbmviz.settings.to_dict` form).
    """
    return dict(dataset="bars_and_stripes", D=3, N=9, B=1, n_hidden=n_hidden, init="normal",
                init_scale=0.01, visible_bias="base_rate", dtype="float64", k=k,
                k_inner=k_inner, batch_size=None, epochs=epochs, eval_every=eval_every,
                momentum=0.0, weight_decay=0.0)


def _check(trials, epochs, etas, datasets, algorithms, k, k_inner, n_hidden, seed, eval_every):
    from .._validation import check_float, check_int
    from ..algorithms import names
    from ..algorithms.dcp import resolve_budget
    trials = check_int(trials, "trials", low=1)
    epochs = check_int(epochs, "epochs", low=1)
    etas = [check_float(e, "eta", low=0.0, low_open=True) for e in _dc.parse_list(etas, float, "eta")]
    datasets = list(dict.fromkeys(_dc.parse_list(datasets, str, "datasets")))
    for ds in datasets:
        if ds not in DATASETS:
            raise ValueError(f"unknown data set {ds!r} for dc-small; expected some of {list(DATASETS)}")
    algorithms = list(dict.fromkeys(_dc.parse_list(algorithms, str, "algorithms")))
    for a in algorithms:
        if a not in names():
            raise ValueError(f"unknown algorithm {a!r}; expected some of {names()}")
    k = check_int(k, "k", low=1)
    d, k_inner = resolve_budget(k, None, k_inner)
    eval_every = default_eval_every(epochs) if eval_every is None else check_int(eval_every, "eval_every", low=1)
    return dict(trials=trials, epochs=epochs, etas=etas, datasets=datasets, algorithms=algorithms,
                k=k, d=d, k_inner=k_inner, n_hidden=check_int(n_hidden, "n_hidden", low=1, high=20),
                seed=check_int(seed, "seed", low=0), eval_every=eval_every)


def run(*, trials: int = 25, epochs: int = 50_000, etas: Sequence[float] = (0.3, 0.5),
        datasets: Sequence[str] = tuple(DATASETS), algorithms: Sequence[str] = _dc.ALGORITHMS,
        k: int = 12, k_inner: int = 4, n_hidden: int = 4, seed: int = 0,
        eval_every: int | None = None, workers: int | None = None, scheduler: Any = None,
        out: str | os.PathLike | None = None, overwrite: bool = False, progress: bool = False,
        resume: bool = False, checkpoints: Sequence[int] | None = None,
        paired_chains: bool = False) -> tuple[pandas.DataFrame, dict]:
    """Run the experiment (trials × algorithms × data sets × learning rates).

    Parameters
    ----------
    trials : int
        Independent repetitions.
    epochs : int
        Training epochs.
    etas : sequence of float
        learning rates η (0.3 and 0.5).
    datasets : sequence of str
        some of ``"bars_and_stripes"``, ``"shifting_bar"``.
    algorithms : sequence of str
        names from :func:`rbmviz.algorithms.names` (cd, pcd, cg, sdcp, csdcp).
    k : int
        Gibbs budget per update.
    k_inner : int
        Gibbs steps per inner step of S-DCP/CS-DCP.
    n_hidden : int
        4.
    seed : int
        sweep seed; trial t's parameters and chains come from (seed, t).
    eval_every : int
        epochs between exact ATLL evaluations (default: epochs / 500).
    workers, scheduler : see :func:`rbmviz.sweep.run_specs` (default: a local process
        pool, one process per core; ``workers=0`` runs serially in this process).
    out : str or os.PathLike
        directory; the records stream into ``out/records.csv``.
    overwrite : bool
        Replace the files of an existing, non-empty ``out``.
    progress : bool
        a tqdm bar over runs.
    resume : bool
        Continue a sweep stored at ``out``.
    checkpoints : sequence of int
        Epochs at which models are saved (:func:`rbmviz.sweep.run_specs`).
    paired_chains : all algorithms of a trial share one Gibbs stream (common random numbers;
        see :func:`rbmviz.sweep.plan`).  Default: each algorithm its own stream.

    Returns
    -------
    records : pandas.DataFrame
        The sweep's tidy frame: ``run_id, trial, algorithm, dataset, learning_rate, epoch,
        updates, gibbs_steps, seconds, test_ll, status, error``; ``updates`` equals the
        epoch (full batch) and ``gibbs_steps = K · updates`` for every algorithm.
    summary : dict
        See :func:`summarize`.
    """
    s = _check(trials, epochs, etas, datasets, algorithms, k, k_inner, n_hidden, seed, eval_every)
    base = base_settings(epochs=s["epochs"], eval_every=s["eval_every"], k=s["k"],
                         k_inner=s["k_inner"], n_hidden=s["n_hidden"])
    t0 = time.perf_counter()
    records = _dc.run_grid(base, algorithms=s["algorithms"], trials=s["trials"],
                           grid={"dataset": s["datasets"], "learning_rate": s["etas"]},
                           seed=s["seed"], workers=workers, scheduler=scheduler, out=out,
                           overwrite=overwrite, progress=progress,
                           resume=resume, checkpoints=checkpoints,
                           run_overrides={"metrics": ["test_ll"]},
                           paired_chains=paired_chains)
    return records, summarize(records, settings=s, elapsed=time.perf_counter() - t0)


# ---------------------------------------------------------------------------- summary

def _escape(g, stuck_below=_dc.STUCK_BELOW, near=0.15):
    """``(escape, plateau)`` of the trial-mean ATLL curve of one data set / rate / algorithm:
    ``escape`` is the first epoch at which it rises above ``stuck_below`` (−3.0; None if
    never), ``plateau`` the median of the curve from the first epoch within ``near`` of the
    local optimum (above −3.3) up to the escape — the level at which it stalls (None if it
    never comes near)."""
    curve = g.groupby("epoch", sort=True)["test_ll"].mean()
    above = curve[curve > stuck_below]
    first = None if above.empty else float(above.index[0])
    close = curve[curve > _dc.LOCAL_OPTIMUM - near]
    if close.empty:
        return first, None
    window = curve[(curve.index >= close.index[0])
                   & ((curve.index < first) if first is not None else True)]
    return first, (float(window.median()) if len(window) else None)


def summarize(records: "pandas.DataFrame", *, settings: dict | None = None,
              elapsed: float | None = None) -> dict:
    """The numbers to compare with the paper.

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by ``run``).
    settings : dict
        The settings the experiment ran with (stored in the summary).
    elapsed : float
        Wall-clock seconds of the run (stored in the summary).

    Returns
    -------
    dict
        ``final``: :func:`._dc.summarize` rows per (dataset, learning_rate, algorithm), plus
        for Shifting Bar ``escape`` (first epoch at which the trial-mean ATLL exceeds −3.0)
        and ``plateau`` (the median mean ATLL while it stalls near −3.15, see :func:`_escape`);
        ``first_to_90``: per data set and rate, the algorithms ordered by ``t90``;
        ``claims``: :func:`claims`; ``paper``; ``settings``; ``elapsed_seconds``; ``notes``.
    """
    ok = records.dropna(subset=["test_ll"])
    rows = _dc.summarize(ok, "test_ll", by=("dataset", "learning_rate"))
    for r in rows:
        r["dataset_label"] = DATASETS.get(r["dataset"], r["dataset"])
        r["not_ok"] = int(records[(records.dataset == r["dataset"])
                                  & (records.learning_rate == r["learning_rate"])
                                  & (records.algorithm == r["algorithm"])
                                  & (records.status != "ok")]["run_id"].nunique())
        if r["dataset"] == "shifting_bar":
            g = ok[(ok.dataset == "shifting_bar") & (ok.learning_rate == r["learning_rate"])
                   & (ok.algorithm == r["algorithm"])]
            r["escape"], r["plateau"] = _escape(g)
    return dict(final=rows, first_to_90=_dc.first_to_fraction(rows), claims=claims(rows),
                paper=PAPER, settings=settings, elapsed_seconds=elapsed, notes=NOTES)


def _get(rows, ds, alg, eta=None):
    return [r for r in rows if r["dataset"] == ds and r["algorithm"] == alg
            and (eta is None or math.isclose(r["learning_rate"], eta))]


def claims(rows: list[dict]) -> list[dict]:
    """The paper's qualitative statements (Sec. 4.2.1) against the measured rows.

    Parameters
    ----------
    rows : list of dict
        The measured rows (``summary["rows"]``).

    Returns
    -------
    list of dict
        ``{"claim", "measured", "verdict"}`` with verdict ``"agrees"``,
        ``"differs"``, ``"inconclusive ..."`` (the runs were too short to tell) or ``"not run"``
        (a needed data set / algorithm / rate is missing).
    """
    out = []
    etas = sorted({r["learning_rate"] for r in rows})

    def fmt(x, spec=".3f"):
        return "-" if x is None else format(x, spec)

    # 1. Shifting Bar: CD and PCD stall near -3.15
    sub = [r for a in ("cd", "pcd") for r in _get(rows, "shifting_bar", a)]
    if sub:
        measured = "; ".join(f"{r['label']} η={r['learning_rate']:g}: plateau {fmt(r['plateau'])}, "
                             f"escape {fmt(r['escape'], ',.0f')}, "
                             f"{r['stuck']}/{r['trials'] - r['incomplete']} trials end below -3.0"
                             for r in sub)
        stall = all(r["plateau"] is not None and abs(r["plateau"] - _dc.LOCAL_OPTIMUM) <= 0.1 for r in sub)
        dcp = [r for a in ("sdcp", "csdcp") for r in _get(rows, "shifting_bar", a)]
        later = all(r["escape"] is None or any(d["escape"] is not None and d["escape"] < r["escape"]
                                               for d in dcp) for r in sub) if dcp else True
        out.append(dict(claim="Shifting Bar: CD and PCD stall at a local optimum with ATLL ≈ −3.15 "
                              "(η = 0.3 and 0.5) and leave it later than S-DCP/CS-DCP, if at all",
                        measured=measured, verdict="agrees" if stall and later else "differs"))
    else:
        out.append(dict(claim="Shifting Bar: CD/PCD stall at ≈ −3.15", measured="",
                        verdict="not run"))
    # 2. CG escapes only with eta = 0.5
    cg = {r["learning_rate"]: r for r in _get(rows, "shifting_bar", "cg")}
    if 0.3 in cg and 0.5 in cg:
        a, b = cg[0.3], cg[0.5]
        if b["escape"] is None and a["escape"] is None:
            verdict = f"inconclusive (no escape within {b['epochs']:,.0f} epochs)"
        elif b["escape"] is not None and (a["escape"] is None or a["escape"] > 2 * b["escape"]):
            verdict = "agrees"
        else:
            verdict = "differs"
        out.append(dict(claim="Shifting Bar: CG escapes the local optimum only with η = 0.5",
                        measured=f"CG escapes at epoch {fmt(a['escape'], ',.0f')} (η=0.3) and "
                                 f"{fmt(b['escape'], ',.0f')} (η=0.5); final {fmt(a['final'])} / {fmt(b['final'])}",
                        verdict=verdict))
    else:
        out.append(dict(claim="Shifting Bar: CG escapes only with η = 0.5", measured="",
                        verdict="not run"))
    # 3. S-DCP / CS-DCP reach nearly the same ATLL for both rates
    parts, same = [], []
    for alg in ("sdcp", "csdcp"):
        rs = {r["learning_rate"]: r for r in _get(rows, "shifting_bar", alg)}
        if len(rs) >= 2 and all(r["final"] is not None for r in rs.values()):
            vals = [rs[e]["final"] for e in sorted(rs)]
            parts.append(f"{_dc.ALGORITHM_LABELS[alg]}: " + " / ".join(fmt(v) for v in vals))
            same.append(max(vals) - min(vals) <= 0.1)
    out.append(dict(claim="Shifting Bar: S-DCP and CS-DCP reach almost the same ATLL for every "
                          "learning rate (within 0.1 nats here)",
                    measured="; ".join(parts), verdict=("agrees" if all(same) else "differs")
                    if same else "not run"))
    # 4. Bars & Stripes: CG needs ~2,500 more epochs than CS-DCP to reach 90 %
    parts, verdicts = [], []
    for eta in etas:
        c, s = _get(rows, "bars_and_stripes", "cg", eta), _get(rows, "bars_and_stripes", "csdcp", eta)
        if c and s and c[0]["t90"] is not None and s[0]["t90"] is not None:
            diff = c[0]["t90"] - s[0]["t90"]
            parts.append(f"η={eta:g}: t90 CG {c[0]['t90']:,.0f}, CS-DCP {s[0]['t90']:,.0f} "
                         f"(CG later by {diff:,.0f} epochs)")
            verdicts.append(diff > 0)
    out.append(dict(claim="Bars & Stripes: CG reaches 90 % of its maximum ATLL later than CS-DCP "
                          "(paper: ≈ 2,500 epochs later)",
                    measured="; ".join(parts),
                    verdict=("agrees" if all(verdicts) else "differs") if verdicts else "not run"))
    # 5. Bars & Stripes: CD/PCD fail to reach the ATLL of S-DCP/CS-DCP
    parts, verdicts = [], []
    for eta in etas:
        fin = {a: (_get(rows, "bars_and_stripes", a, eta) or [{}])[0].get("final")
               for a in ("cd", "pcd", "sdcp", "csdcp")}
        if all(v is not None for v in fin.values()):
            parts.append(f"η={eta:g}: " + ", ".join(f"{_dc.ALGORITHM_LABELS[a]} {v:.3f}" for a, v in fin.items()))
            verdicts.append(max(fin["cd"], fin["pcd"]) < min(fin["sdcp"], fin["csdcp"]))
    out.append(dict(claim="Bars & Stripes: CD and PCD end below S-DCP and CS-DCP (final ATLL)",
                    measured="; ".join(parts),
                    verdict=("agrees" if all(verdicts) else "differs") if verdicts else "not run"))
    return out


def format_summary(summary: dict) -> str:
    """The summary as text (printed by ``rbmviz reproduce dc-small``).

    Parameters
    ----------
    summary : dict
        The summary (as returned by ``summarize``).

    Returns
    -------
    str
        The text.
    """
    s = summary.get("settings") or {}
    lines = []
    if s:
        lines.append(
            f"Upadhya & Sastry (2017), small data sets: {s['n_hidden']} hidden units, full batch, "
            f"{s['epochs']:,} epochs, K={s['k']} vs S-DCP d={s['d']}/K'={s['k_inner']}, "
            f"{s['trials']} trial(s), exact ATLL every {s['eval_every']} epochs")
    groups = {}
    for r in summary["final"]:
        groups.setdefault((r["dataset"], r["learning_rate"]), []).append(r)
    for (ds, eta), rs in groups.items():
        bound = PAPER["bound"].get(ds)
        lines.append("")
        lines.append(f"{DATASETS.get(ds, ds)}, eta {eta:g}"
                     + (f"  (bound {bound:.3f}, paper {PAPER['bound_quoted'][ds]})" if bound else ""))
        sb = ds == "shifting_bar"
        head = (f"  {'algorithm':<9} {'final ATLL':>10} {'(s.e.)':>8} {'min':>8} {'max':>8} "
                f"{'bound-final':>11} {'90% at':>8}" + (f" {'escape':>8} {'end<-3':>6}" if sb else ""))
        lines += [head, "  " + "-" * (len(head) - 2)]
        for r in rs:
            f = (lambda x, spec=".3f": "-" if x is None else format(x, spec))
            line = (f"  {r['label']:<9} {f(r['final']):>10} {('(' + f(r['final_sem']) + ')') if r['final_sem'] is not None else '':>8} "
                    f"{f(r['final_min']):>8} {f(r['final_max']):>8} {f(r['gap']):>11} "
                    f"{f(r['t90'], ',.0f'):>8}")
            if sb:
                n = r["trials"] - r["incomplete"]
                line += f" {f(r.get('escape'), ',.0f'):>8} {str(r['stuck']) + '/' + str(n):>6}"
            if r.get("not_ok"):
                line += f"  ({r['not_ok']} run(s) diverged/failed)"
            lines.append(line)
    lines.append("")
    lines.append("first to 90% of the maximum ATLL (epoch):")
    for g in summary["first_to_90"]:
        order = ", ".join(f"{lab} {'-' if t is None else f'{t:,.0f}'}" for lab, t in g["order"])
        lines.append(f"  {DATASETS.get(g['dataset'], g['dataset'])}, eta {g['learning_rate']:g}: {order}")
    lines.append("")
    lines.append("the paper's claims:")
    for c in summary["claims"]:
        lines.append(f"  [{c['verdict']}] {c['claim']}")
        if c["measured"]:
            lines.append(f"      measured: {c['measured']}")
    if summary.get("elapsed_seconds") is not None:
        lines.append(f"run time: {summary['elapsed_seconds']:.1f} s")
    return "\n".join(lines)


def figure(records: "pandas.DataFrame", *, band: bool = True) -> hv.Layout:
    """The figure of the reproduction (:func:`rbmviz.viz.dc.small_figure`).

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by ``run``).
    band : bool
        Draw the standard error as a band.

    Returns
    -------
    holoviews.Layout
        The figure.
    """
    from ..viz.dc import small_figure
    return small_figure(records, band=band, labels=_dc.ALGORITHM_LABELS,
                        dataset_labels=_dc.DATASET_LABELS, bounds=_dc.BOUNDS,
                        local_optima={"shifting_bar": _dc.LOCAL_OPTIMUM})


def save(records: "pandas.DataFrame", summary: dict, out: str | os.PathLike, *,
         overwrite: bool = False, html: bool = True) -> list[Path]:
    """Write ``records.csv`` (unless the sweep streamed it there), ``summary.json`` and
    ``figure.html`` to directory ``out``; returns the paths.

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by ``run``).
    summary : dict
        The summary (as returned by ``summarize``).
    out : str or os.PathLike
        Output directory.
    overwrite : bool
        Replace the files of an existing, non-empty ``out``.
    html : bool
        Also write ``figure.html`` (HoloViews, Bokeh resources inline so it opens offline).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    fig = figure(records) if html else None
    return _dc.save(records, summary, out, figure=fig, overwrite=overwrite,
                    title="Upadhya & Sastry 2017: small data sets")


# ---------------------------------------------------------------------------- command line

def add_common_arguments(parser, defaults, quick):
    """Options shared by dc-small and dc-mnist."""
    g = parser.add_argument_group("experiment")
    g.add_argument("--trials", type=int, metavar="INT",
                   help=f"trials (all algorithms of a trial start from the same parameters) "
                        f"(default: {defaults['trials']}; --quick: {quick['trials']})")
    g.add_argument("--epochs", type=int, metavar="INT",
                   help=f"epochs per run (default: {defaults['epochs']:,}; --quick: {quick['epochs']:,})")
    g.add_argument("--eta", metavar="X,X,...",
                   help=f"learning rates (default: {','.join(map(str, defaults['etas']))})")
    g.add_argument("--datasets", metavar="NAME,...",
                   help=f"data sets (default: {','.join(defaults['datasets'])})")
    g.add_argument("--algorithms", metavar="NAME,...",
                   help=f"algorithms (default: {','.join(defaults['algorithms'])})")
    g.add_argument("--k", type=int, metavar="K",
                   help=f"Gibbs steps per update K of every algorithm (default: {defaults['k']})")
    g.add_argument("--k-inner", type=int, metavar="K'",
                   help=f"S-DCP/CS-DCP Gibbs steps per inner step K'; d = K/K' "
                        f"(default: {defaults['k_inner']})")
    g.add_argument("--eval-every", type=int, metavar="INT",
                   help="epochs between ATLL evaluations (default: about 500 evaluations per run)")
    g.add_argument("--seed", type=int, default=0, metavar="INT", help="sweep seed (default: 0)")
    g.add_argument("--quick", action="store_true",
                   help="a short preset (" + ", ".join(f"{k} {v:,}" for k, v in quick.items())
                        + "); explicit options override it")
    r = parser.add_argument_group("execution")
    r.add_argument("--workers", type=int, metavar="INT",
                   help="local processes (default: one per core; 0 = serial in this process)")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on the Dask scheduler at ADDRESS (tcp://host:8786) instead")
    o = parser.add_argument_group("output")
    o.add_argument("--out", metavar="DIR",
                   help="write records.csv (streamed while the runs progress), summary.json and "
                        "figure.html here; refused if DIR already holds them (unless --overwrite)")
    o.add_argument("--overwrite", action="store_true", help="replace those files in DIR")
    o.add_argument("--resume", action="store_true",
                   help="continue an interrupted run into the same DIR: the runs stored in "
                        "DIR/records.runs/ (one file per finished run) are skipped, a run cut "
                        "off mid-way continues from its kept state (<run_id>.partial, written at "
                        "a record at most once a minute)")
    o.add_argument("--checkpoints", metavar="E,E,...",
                   help="save each run's model at these epochs in DIR/records.runs/<run>/")
    o.add_argument("--no-html", action="store_true", help="do not write figure.html")
    o.add_argument("--quiet", action="store_true", help="no progress bar")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``rbmviz reproduce dc-small``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    add_common_arguments(parser, DEFAULTS, QUICK)


def options(args, defaults, quick):
    """The experiment's keyword arguments from parsed ``args`` (quick preset, then explicit
    options)."""
    kw = {"trials": defaults["trials"], "epochs": defaults["epochs"], "eval_every": None}
    if args.quick:
        kw.update(quick)
    for name in ("trials", "epochs", "eval_every"):
        if getattr(args, name) is not None:
            kw[name] = getattr(args, name)
    kw["etas"] = args.eta if args.eta is not None else defaults["etas"]
    kw["datasets"] = args.datasets if args.datasets is not None else defaults["datasets"]
    kw["algorithms"] = args.algorithms if args.algorithms is not None else defaults["algorithms"]
    kw["k"] = args.k if args.k is not None else defaults["k"]
    kw["k_inner"] = args.k_inner if args.k_inner is not None else defaults["k_inner"]
    kw["seed"] = args.seed
    return kw


def execute(module, args, parser, kw, check):
    """Shared body of the two commands' ``main``: validate, check ``--out``, run, print,
    save.  Returns the exit code."""
    try:
        check(**kw)
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
    if args.workers is not None and args.scheduler is not None:
        parser.error("--workers and --scheduler exclude each other")
    if (args.resume or args.checkpoints) and not args.out:
        parser.error(f"argument {'--resume' if args.resume else '--checkpoints'}: needs --out")
    if args.resume and args.overwrite:
        parser.error("argument --resume: not with --overwrite (which starts afresh)")
    checkpoints = None
    if args.checkpoints:
        try:
            checkpoints = _dc.parse_list(args.checkpoints, int, "checkpoints")
        except ValueError as exc:
            parser.error(f"argument --checkpoints: {exc}")
    if args.out:
        try:
            _dc.check_out_dir(args.out, args.overwrite or args.resume)
        except (FileExistsError, NotADirectoryError) as exc:
            parser.error(f"argument --out: {exc}" + ("" if args.resume else
                                                     " (or --resume to continue it)"))
    try:
        records, summary = module.run(**kw, workers=args.workers, scheduler=args.scheduler,
                                      out=args.out, overwrite=args.overwrite,
                                      progress=not args.quiet, resume=args.resume,
                                      checkpoints=checkpoints)
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError) as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    print(module.format_summary(summary))
    continued = records.attrs.get("continued") or {}
    if continued:
        print(f"{len(continued)} run(s) continued from their kept state: "
              + ", ".join(f"{rid} from epoch {e:g}" for rid, e in continued.items()))
    if args.out:
        paths = module.save(records, summary, args.out, overwrite=args.overwrite or args.resume,
                            html=not args.no_html)
        print("wrote " + ", ".join(str(p) for p in paths))
    if records.attrs.get("interrupted"):
        return 130
    return 3 if (records["status"] != "ok").any() else 0


def main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``rbmviz reproduce dc-small`` from parsed ``args``; returns the exit code (0 done,
    2 bad option or existing output, 3 some run diverged or failed, 130 interrupted).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command-line arguments.
    parser : argparse.ArgumentParser
        The subcommand's parser.

    Returns
    -------
    int
        The exit code.
    """
    kw = options(args, DEFAULTS, QUICK)
    kw.update(n_hidden=DEFAULTS["n_hidden"])
    return execute(sys.modules[__name__], args, parser, kw, _check)
