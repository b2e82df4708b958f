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
from typing import TYPE_CHECKING, Any, Sequence

import param

from ..algorithms import get as _rule
from ..algorithms.knobs import derive_knobs
from . import _dc
from ._dc_cli import add_run_arguments, execute
from . import report
from ._study import ListOf, StudySettings, resolve, values
from .report import make_claim

if TYPE_CHECKING:
    import holoviews as hv
    import pandas

__all__ = ["DATASETS", "PAPER", "Settings", "run", "base_settings", "summarize", "claims", "curve_measures",
           "mean_curves",
           "format_summary", "figure", "save", "add_arguments", "main", "QUICK"]

#: data sets of the experiment → the paper's label
DATASETS = {"bars_and_stripes": "Bars & Stripes", "shifting_bar": "Shifting Bar"}
#: the paper's numbers (Upadhya & Sastry 2017, Sec. 4.2.1)
PAPER = {"bound": {"bars_and_stripes": -math.log(14), "shifting_bar": -math.log(9)},
         "bound_quoted": {"bars_and_stripes": -2.6, "shifting_bar": -2.2},
         "local_optimum": _dc.LOCAL_OPTIMUM, "cg_extra_epochs_bas": 2500,
         "updates_to_match_sb": 30000}


class Settings(derive_knobs("_DCKnobs", [_rule("sdcp")], include=["k", "k_inner", "seed"],
                            defaults={"k": 12, "k_inner": 4}, bases=(StudySettings,))):
    """The settings of ``rbmviz reproduce dc-small`` (defaults: the paper's, Sec. 4.2.1); the
    Gibbs budget, S-DCP's inner steps and the seed are the training rules' knobs
    (:mod:`rbmviz.algorithms.knobs`)."""

    k = param.Integer(doc="Gibbs steps per update K of every algorithm (S-DCP/CS-DCP: the "
                          "budget K = d·K′)")
    k_inner = param.Integer(doc="S-DCP/CS-DCP Gibbs steps per inner step K′; d = K/K′")
    seed = param.Integer(doc="sweep seed; trial t's parameters and chains come from (seed, t)")
    trials = param.Integer(25, bounds=(1, None),
                           doc="trials (all algorithms of a trial start from the same "
                               "parameters)")
    epochs = param.Integer(50_000, bounds=(1, None), doc="epochs per run")
    etas = ListOf(float, [0.3, 0.5], doc="learning rates")
    datasets = ListOf(str, list(DATASETS), doc="data sets")
    algorithms = ListOf(str, list(_dc.ALGORITHMS), doc="algorithms")
    n_hidden = param.Integer(4, bounds=(1, 20), precedence=-1, doc="hidden units")
    eval_every = param.Integer(None, bounds=(1, None), allow_None=True,
                               doc="epochs between ATLL evaluations (none: about 500 "
                                   "evaluations per run)")

    #: the ``--quick`` preset (a few minutes on 2 cores)
    QUICK = {"trials": 3, "epochs": 5000, "eval_every": 50}
    QUICK_HELP = "a short preset (trials 3, epochs 5,000, eval_every 50)"
    FLAGS = {"etas": "--eta"}
    METAVARS = {"etas": "X,X,...", "datasets": "NAME,...", "algorithms": "NAME,...",
                "k": "K", "k_inner": "K'"}


#: the ``--quick`` preset (:attr:`Settings.QUICK`)
QUICK = Settings.QUICK
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


def run(settings: Settings | None = None, /, *, workers: int | None = None,
        scheduler: Any = None, out: str | os.PathLike | None = None, overwrite: bool = False,
        progress: bool = False, resume: bool = False, checkpoints: Sequence[int] | None = None,
        paired_chains: bool = False, **overrides: Any) -> tuple[pandas.DataFrame, dict]:
    """Run the experiment (trials × algorithms × data sets × learning rates).

    Parameters
    ----------
    settings : Settings, optional
        The settings (default: the paper's, :class:`Settings`).
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
    **overrides
        Settings of :class:`Settings` by name, replacing those of ``settings`` (e.g.
        ``trials=3, datasets=["shifting_bar"]``).

    Returns
    -------
    records : pandas.DataFrame
        The sweep's tidy frame: ``run_id, trial, algorithm, dataset, learning_rate, epoch,
        updates, gibbs_steps, seconds, test_ll, status, error``; ``updates`` equals the
        epoch (full batch) and ``gibbs_steps = K · updates`` for every algorithm.
    summary : dict
        See :func:`summarize`.
    """
    s = _check(**values(resolve(Settings, settings, overrides)))
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

#: "comparable to S-DCP or CS-DCP" (Sec. 4.2.1): within this many nats of the lower of their
#: two final ATLLs at the same rate
MATCH_TOL = 0.1
#: "almost the same ATLL" (Sec. 4.2.1): within this many nats
SAME_TOL = 0.1
#: tolerance of the paper's "around 2,500 epochs more" (Bars & Stripes, CG against CS-DCP)
LAG_TOL = 0.5


def _escape(curve, stuck_below=_dc.STUCK_BELOW, near=0.15):
    """``(escape, plateau)`` of a trial-mean ATLL curve (a Series indexed by epoch) of one
    data set / rate / algorithm: ``escape`` is the first epoch at which it rises above
    ``stuck_below`` (−3.0; None if never), ``plateau`` the median of the curve from the first
    epoch within ``near`` of the local optimum (above −3.3) up to the escape — the level at
    which it stalls (None if it never comes near)."""
    above = curve[curve > stuck_below]
    first = None if above.empty else float(above.index[0])
    close = curve[curve > _dc.LOCAL_OPTIMUM - near]
    if close.empty:
        return first, None
    window = curve[(curve.index >= close.index[0])
                   & ((curve.index < first) if first is not None else True)]
    return first, (float(window.median()) if len(window) else None)


def curve_measures(rows: list[dict], curves: "pandas.DataFrame") -> list[dict]:
    """Add the Shifting Bar measures that need the trial-mean curves to the summary rows.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`._dc.summarize` (changed in place).
    curves : pandas.DataFrame
        Trial-mean curves: columns ``dataset``, ``learning_rate``, ``algorithm``, ``epoch``,
        ``mean`` (the ATLL).

    Returns
    -------
    list of dict
        ``rows``, each Shifting Bar row with ``escape`` and ``plateau`` (:func:`_escape`),
        ``escaped`` (fraction of its complete trials ending above −3.0) and, for CD, PCD and
        CG, ``match_level`` (the lower of S-DCP's and CS-DCP's final ATLL at the same rate
        minus :data:`MATCH_TOL`) and ``reach_match`` (the first epoch at which its curve
        reaches that level; None if never).
    """
    for r in rows:
        if r["dataset"] != "shifting_bar":
            continue
        sel = curves[(curves.dataset == "shifting_bar") & (curves.algorithm == r["algorithm"])
                     & (curves.learning_rate.sub(r["learning_rate"]).abs() < 1e-12)]
        curve = sel.set_index("epoch")["mean"].sort_index()
        r["escape"], r["plateau"] = _escape(curve)
        done = r["trials"] - r["incomplete"]
        r["escaped"] = (done - r["stuck"]) / done if done else None
        if r["algorithm"] in ("cd", "pcd", "cg"):
            dc = [q["final"] for a in ("sdcp", "csdcp")
                  for q in _get(rows, "shifting_bar", a, r["learning_rate"]) if q["final"] is not None]
            if dc:
                level = min(dc) - MATCH_TOL
                hit = curve[curve >= level]
                r["match_level"] = level
                r["reach_match"] = float(hit.index[0]) if len(hit) else None
    return rows


def mean_curves(records: "pandas.DataFrame", metric: str = "test_ll") -> "pandas.DataFrame":
    """Trial-mean curves of the records (the ``curves`` of :func:`curve_measures`).

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment.
    metric : str
        The ATLL column.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset``, ``learning_rate``, ``algorithm``, ``epoch``, ``mean``.
    """
    keys = ["dataset", "learning_rate", "algorithm", "epoch"]
    return records.groupby(keys, sort=False)[metric].mean().rename("mean").reset_index()


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
        for Shifting Bar the measures of :func:`curve_measures`;
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
    curve_measures(rows, mean_curves(ok))
    return dict(final=rows, first_to_90=_dc.first_to_fraction(rows), claims=claims(rows),
                paper=PAPER, settings=settings, elapsed_seconds=elapsed, notes=NOTES)


def _get(rows, ds, alg, eta=None):
    return [r for r in rows if r["dataset"] == ds and r["algorithm"] == alg
            and (eta is None or math.isclose(r["learning_rate"], eta))]


def _fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def claims(rows: list[dict]) -> list[dict]:
    """The paper's statements (Sec. 4.2.1) against the measured rows.

    Parameters
    ----------
    rows : list of dict
        The measured rows (``summary["final"]``, with the measures of
        :func:`curve_measures`).

    Returns
    -------
    list of dict
        Claim rows (:func:`rbmviz.reproduce.report.make_claim`) with verdict ``"agrees"``,
        ``"differs"``, ``"inconclusive ..."`` (the runs were too short to tell) or ``"not run"``
        (a needed data set / algorithm / rate is missing).
    """
    out = []
    etas = sorted({r["learning_rate"] for r in rows})
    updates = PAPER["updates_to_match_sb"]
    epochs = max((r["epochs"] or 0 for r in rows), default=0)
    # 1. Shifting Bar: CD and PCD become stuck near -3.15
    sub = [r for a in ("cd", "pcd") for r in _get(rows, "shifting_bar", a)]
    claim = ("Shifting Bar: CD and PCD become stuck in a local optimum with ATLL ≈ −3.15 "
             "(η = 0.3 and 0.5)")
    crit = (f"every CD/PCD plateau within 0.1 nats of −3.15, and no trial-mean curve leaves it "
            f"(rises above −3.0) before epoch {updates:,} (the paper: more than {updates:,} "
            f"updates to match the DC rules); inconclusive when the run is shorter than "
            f"{updates:,} epochs and no curve has left; the fraction of trials ending above "
            f"−3.0 is reported")
    if sub:
        measured = "; ".join(f"{r['label']} η={r['learning_rate']:g}: plateau {_fmt(r['plateau'])}, "
                             f"mean curve leaves at {_fmt(r['escape'], ',.0f')}, "
                             f"{_fmt(r.get('escaped'), '.0%')} of trials end above −3.0"
                             for r in sub)
        judged = {f"{r['label']} η={r['learning_rate']:g}":
                  f"plateau {_fmt(r['plateau'])}, leaves at {_fmt(r['escape'], ',.0f')}, "
                  f"escaped {_fmt(r.get('escaped'), '.0%')}" for r in sub}
        off = [r for r in sub if r["plateau"] is None or abs(r["plateau"] - _dc.LOCAL_OPTIMUM) > 0.1]
        early = [r for r in sub if r["escape"] is not None and r["escape"] < updates]
        if off or early:
            verdict = "differs"
        elif epochs < updates:
            verdict = f"inconclusive (run of {epochs:,.0f} epochs, shorter than {updates:,})"
        else:
            verdict = "agrees"
        out.append(make_claim(claim, verdict, criterion=crit, judged=judged, measured=measured,
                              paper="stuck near −3.15 for both rates"))
    else:
        out.append(make_claim(claim, "not run", criterion=crit, judged=None,
                              paper="stuck near −3.15 for both rates"))
    # 2. ... and S-DCP / CS-DCP leave it first
    dcp = [r for a in ("sdcp", "csdcp") for r in _get(rows, "shifting_bar", a)]
    claim = "Shifting Bar: S-DCP and CS-DCP leave the local optimum before CD and PCD"
    crit = ("at each rate, every CD/PCD curve that leaves −3.0 does so later than S-DCP or "
            "CS-DCP at that rate; inconclusive when no curve leaves")
    if sub and dcp:
        def first_dc(eta):
            e = [d["escape"] for d in dcp if math.isclose(d["learning_rate"], eta)
                 and d["escape"] is not None]
            return min(e) if e else None
        bad = [r for r in sub if r["escape"] is not None
               and (first_dc(r["learning_rate"]) is None or first_dc(r["learning_rate"]) >= r["escape"])]
        any_escape = any(r["escape"] is not None for r in sub + dcp)
        verdict = "differs" if bad else ("agrees" if any_escape
                                         else "inconclusive (no curve leaves the optimum)")
        out.append(make_claim(
            claim, verdict, criterion=crit,
            judged={f"η={e:g}": f"DC first {_fmt(first_dc(e), ',.0f')}, CD/PCD "
                    + "/".join(_fmt(r["escape"], ",.0f") for r in sub
                               if math.isclose(r["learning_rate"], e)) for e in etas},
            measured="; ".join(f"{r['label']} η={r['learning_rate']:g} leaves at "
                               f"{_fmt(r['escape'], ',.0f')}" for r in dcp),
            paper="the DC rules escape; CD/PCD stay stuck"))
    else:
        out.append(make_claim(claim, "not run", criterion=crit, judged=None,
                              paper="the DC rules escape; CD/PCD stay stuck"))
    # 3. CD, PCD, CG need more than 30,000 updates to match S-DCP / CS-DCP
    sub3 = [r for a in ("cd", "pcd", "cg") for r in _get(rows, "shifting_bar", a)
            if r.get("match_level") is not None]
    claim = (f"Shifting Bar: CD, PCD and CG need more than {updates:,} updates to reach an "
             f"ATLL comparable to S-DCP/CS-DCP")
    crit = (f"no CD/PCD/CG trial-mean curve comes within {MATCH_TOL:g} nats of the lower of "
            f"S-DCP's and CS-DCP's final ATLL (same rate) before epoch {updates:,} (full batch: "
            f"one update per epoch); inconclusive when the run is shorter and none has")
    if sub3:
        early = [r for r in sub3 if r["reach_match"] is not None and r["reach_match"] <= updates]
        verdict = ("differs" if early else "agrees" if epochs >= updates else
                   f"inconclusive (run of {epochs:,.0f} epochs, shorter than {updates:,})")
        out.append(make_claim(
            claim, verdict, criterion=crit,
            judged={f"{r['label']} η={r['learning_rate']:g}": r["reach_match"] for r in sub3},
            measured="; ".join(f"{r['label']} η={r['learning_rate']:g} reaches "
                               f"{r['match_level']:.3f} at epoch {_fmt(r['reach_match'], ',.0f')}"
                               for r in sub3),
            paper=f"more than {updates:,} updates"))
    else:
        out.append(make_claim(claim, "not run", criterion=crit, judged=None,
                              paper=f"more than {updates:,} updates"))
    # 4. CG escapes only with eta = 0.5
    cg = {r["learning_rate"]: r for r in _get(rows, "shifting_bar", "cg")}
    claim = "Shifting Bar: CG escapes the local optimum only with η = 0.5"
    crit = ("CG's trial-mean curve leaves −3.0 with η = 0.5, and with η = 0.3 never or more "
            "than twice as late")
    if 0.3 in cg and 0.5 in cg:
        a, b = cg[0.3], cg[0.5]
        if b["escape"] is None and a["escape"] is None:
            verdict = f"inconclusive (no escape within {b['epochs']:,.0f} epochs)"
        elif b["escape"] is not None and (a["escape"] is None or a["escape"] > 2 * b["escape"]):
            verdict = "agrees"
        else:
            verdict = "differs"
        out.append(make_claim(
            claim, verdict, criterion=crit,
            judged={"η=0.3": a["escape"], "η=0.5": b["escape"]},
            measured=f"CG leaves at epoch {_fmt(a['escape'], ',.0f')} (η=0.3) and "
                     f"{_fmt(b['escape'], ',.0f')} (η=0.5); final {_fmt(a['final'])} / {_fmt(b['final'])}",
            paper="escapes with η = 0.5 only"))
    else:
        out.append(make_claim(claim, "not run", criterion=crit, judged=None,
                              paper="escapes with η = 0.5 only"))
    # 5. S-DCP / CS-DCP reach nearly the same ATLL for both rates
    parts, spreads = [], []
    for alg in ("sdcp", "csdcp"):
        rs = {r["learning_rate"]: r for r in _get(rows, "shifting_bar", alg)}
        if len(rs) >= 2 and all(r["final"] is not None for r in rs.values()):
            vals = [rs[e]["final"] for e in sorted(rs)]
            parts.append(f"{_dc.ALGORITHM_LABELS[alg]}: " + " / ".join(_fmt(v) for v in vals))
            spreads.append(max(vals) - min(vals))
    out.append(make_claim(
        f"Shifting Bar: S-DCP and CS-DCP reach almost the same ATLL for every learning rate "
        f"(within {SAME_TOL:g} nats here)",
        ("agrees" if max(spreads) <= SAME_TOL else "differs") if spreads else "not run",
        criterion=f"for S-DCP and for CS-DCP, the final ATLLs of the rates differ by at most "
                  f"{SAME_TOL:g} nats (judged: the larger spread)",
        judged=max(spreads) if spreads else None, measured="; ".join(parts),
        paper="almost the same, independent of the rate"))
    # 6. Bars & Stripes: CS-DCP / S-DCP and CG end almost the same
    parts, diffs = [], []
    for eta in etas:
        fin = {a: (_get(rows, "bars_and_stripes", a, eta) or [{}])[0].get("final")
               for a in ("cg", "sdcp", "csdcp")}
        if all(v is not None for v in fin.values()):
            parts.append(f"η={eta:g}: " + ", ".join(f"{_dc.ALGORITHM_LABELS[a]} {v:.3f}"
                                                     for a, v in fin.items()))
            diffs.append(max(abs(fin["sdcp"] - fin["cg"]), abs(fin["csdcp"] - fin["cg"])))
    out.append(make_claim(
        f"Bars & Stripes: CS-DCP/S-DCP and CG reach almost the same ATLL (within {SAME_TOL:g} "
        f"nats here)",
        ("agrees" if max(diffs) <= SAME_TOL else "differs") if diffs else "not run",
        criterion=f"at every rate, the final ATLL of S-DCP and of CS-DCP within {SAME_TOL:g} "
                  f"nats of CG's (judged: the largest difference)",
        judged=max(diffs) if diffs else None, measured="; ".join(parts),
        paper="almost the same ATLL"))
    # 7. Bars & Stripes: CG needs ~2,500 more epochs than CS-DCP to reach 90 %
    lag = PAPER["cg_extra_epochs_bas"]
    lo, hi = lag * (1 - LAG_TOL), lag * (1 + LAG_TOL)
    parts, lags, rising = [], [], False
    for eta in etas:
        c, s = _get(rows, "bars_and_stripes", "cg", eta), _get(rows, "bars_and_stripes", "csdcp", eta)
        if c and s and c[0]["t90"] is not None and s[0]["t90"] is not None:
            diff = c[0]["t90"] - s[0]["t90"]
            rising |= _dc.still_rising(c[0]) or _dc.still_rising(s[0])
            parts.append(f"η={eta:g}: t90 CG {c[0]['t90']:,.0f}, CS-DCP {s[0]['t90']:,.0f} "
                         f"(CG later by {diff:,.0f} epochs)")
            lags.append(diff)
    if not lags:
        verdict = "not run"
    elif rising:
        verdict = "inconclusive (a curve still rises at the last evaluation)"
    else:
        verdict = "agrees" if all(lo <= d <= hi for d in lags) else "differs"
    out.append(make_claim(
        f"Bars & Stripes: CG reaches 90 % of its maximum ATLL ≈ {lag:,} epochs after CS-DCP",
        verdict,
        criterion=f"at every rate, t90(CG) − t90(CS-DCP) between {lo:,.0f} and {hi:,.0f} epochs "
                  f"({lag:,} ± {LAG_TOL:.0%}); judged only when both curves have levelled off "
                  f"(peak before the last evaluation)",
        judged=lags or None, measured="; ".join(parts), paper=f"≈ {lag:,} epochs later"))
    # 8. Bars & Stripes: CD/PCD fail to reach the ATLL of S-DCP/CS-DCP
    parts, margins = [], []
    for eta in etas:
        fin = {a: (_get(rows, "bars_and_stripes", a, eta) or [{}])[0].get("final")
               for a in ("cd", "pcd", "sdcp", "csdcp")}
        if all(v is not None for v in fin.values()):
            parts.append(f"η={eta:g}: " + ", ".join(f"{_dc.ALGORITHM_LABELS[a]} {v:.3f}" for a, v in fin.items()))
            margins.append(min(fin["sdcp"], fin["csdcp"]) - max(fin["cd"], fin["pcd"]))
    out.append(make_claim(
        "Bars & Stripes: CD and PCD end below S-DCP and CS-DCP (final ATLL)",
        ("agrees" if min(margins) > 0 else "differs") if margins else "not run",
        criterion="at every rate, the better of CD and PCD ends below the worse of S-DCP and "
                  "CS-DCP (judged: the smallest margin min(DC) − max(CD, PCD), nats)",
        judged=min(margins) if margins else None, measured="; ".join(parts),
        paper="CD and PCD fail to reach the DC rules' ATLL"))
    return out


def _summary_lines(summary: dict) -> list[str]:
    """The lines of the printed summary before its claims (:func:`format_summary`)."""
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
    return lines


format_summary = report.study_summary(_summary_lines, command="rbmviz reproduce dc-small",
                                      module=__name__)


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


save = report.study_saver(
    tables=lambda records: {"records": records}, figure=lambda records, summary: figure(records),
    title="Upadhya & Sastry 2017: small data sets", module=__name__,
    what="Tidy records of the experiment (as returned by ``run``), written as records.csv.",
    streamed=("records",))


# ---------------------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``rbmviz reproduce dc-small`` that are not settings (those come from
    :class:`Settings`, :func:`rbmviz.cli.reproduce.add_settings_options`).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    add_run_arguments(parser)


def main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``rbmviz reproduce dc-small`` from parsed ``args``; returns the exit code (0 done,
    2 bad option or existing output, 3 some run diverged or failed, 130 interrupted).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command-line arguments; ``args.study_settings`` the :class:`Settings`
        they give (:func:`rbmviz.cli.reproduce.settings_from_args`).
    parser : argparse.ArgumentParser
        The subcommand's parser.

    Returns
    -------
    int
        The exit code.
    """
    kw = values(args.study_settings)
    return execute(sys.modules[__name__], args, parser, kw, _check)
