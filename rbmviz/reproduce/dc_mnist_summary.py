"""Summary and claims of the large-data reproduction of Upadhya & Sastry (2017) (``rbmviz
reproduce dc-mnist``): the numbers to set beside the paper's (:func:`summarize`), the paper's
statements judged on a run (:func:`claims`) and the printed summary (:func:`format_summary`).

Pure functions of the records of :func:`rbmviz.reproduce.dc_mnist.run`, plus the constants the
run and the summary share (:data:`STUDIES`, :data:`PAPER`, :data:`NOTES`); the run, the
figure and the command line are :mod:`rbmviz.reproduce.dc_mnist`, which re-exports these names.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from . import _dc
from . import report
from .report import make_claim

if TYPE_CHECKING:
    import pandas

__all__ = ["STUDIES", "PAPER", "PAPER_EPOCHS", "NOTES", "SAME_NATS", "PAPER_DATASETS", "summarize", "claims",
           "format_summary"]

#: study name → (grid column, default algorithms, the paper's figure)
STUDIES = {"main": (None, _dc.ALGORITHMS, "Figs. 3-4"),
           "eta": ("learning_rate", ("sdcp", "csdcp"), "Fig. 6a"),
           "budget": ("k_inner", ("sdcp", "csdcp"), "Fig. 6b"),
           "batch": ("batch_size", ("sdcp", "csdcp"), "Fig. 7a"),
           "init": ("initialisation", ("sdcp", "csdcp"), "Fig. 7b (Table 1)"),
           "ssd": (None, ("cd", "pcd", "cg", "ssd", "sdcp", "csdcp"), "Sec. 4.2.2 (SSD comparison)")}
#: the length of the paper's runs (Sec. 4.2.2: 200 epochs)
PAPER_EPOCHS = 200
PAPER = {"cs_dcp_lead_over_cg_epochs": 100, "final_atll": "almost the same for all algorithms "
         "after 200 epochs (value not stated)", "sm2008_cd25_500_mnist": -86.34,
         "ais": {"n_chains": 100, "n_betas": 10000, "schedule": "linear"}}
NOTES = [
    "ATLL = average test log-likelihood with an AIS estimate of log Z (base-rate model from the "
    "training rows); AIS tends to under-estimate log Z, i.e. over-estimate the ATLL.",
    "t90 = first epoch at which the trial-mean ATLL covers 90% of its gain from epoch 0 to its "
    "maximum.",
    "Statistical binarisation: one fixed Bernoulli draw per image (data_seed 0).",
]


def _increasing_fraction(g, metric):
    curve = g.groupby("epoch", sort=True)[metric].mean().to_numpy()
    steps = curve[1:] - curve[:-1]
    return float((steps > 0).mean()) if steps.size else None


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
        ``final`` (:func:`._dc.summarize` rows per data set, learning rate, study value and
        algorithm, with ``increasing``: the fraction of evaluation steps at which the
        trial-mean ATLL rose — the paper's observation for η = 0.01 in Fig. 6a),
        ``first_to_90``, ``claims``, ``paper``, ``settings``, ``elapsed_seconds``, ``notes``.
    """
    metric = "ais_test_ll"
    study = (settings or {}).get("study", "main")
    column = STUDIES.get(study, (None,))[0]
    by = ["dataset", "learning_rate"] + ([column] if column and column != "learning_rate" else [])
    ok = records.dropna(subset=[metric]) if metric in records else records.iloc[0:0].assign(**{metric: []})
    rows = _dc.summarize(ok, metric, by=by) if len(ok) else []
    for r in rows:
        sel = ok
        for c in by:
            sel = sel[sel[c] == r[c]]
        r["increasing"] = _increasing_fraction(sel[sel.algorithm == r["algorithm"]], metric)
        r["dataset_label"] = _dc.DATASET_LABELS.get(r["dataset"], r["dataset"])
        if "k_inner" in r:
            r["d"] = int(settings["k"] // r["k_inner"]) if settings else None
    if study == "ssd":
        _common_level_epochs(rows, ok, metric)
    return dict(final=rows, first_to_90=_dc.first_to_fraction(rows, by=by),
                claims=claims(rows, study, by), paper=PAPER, settings=settings,
                elapsed_seconds=elapsed, notes=NOTES,
                not_ok=int(records.loc[records["status"] != "ok", "run_id"].nunique())
                if "status" in records else 0)


def _common_level_epochs(rows, records, metric):
    """Study "ssd": on each data set, the first epoch at which SSD's and CS-DCP's trial-mean
    curves reach the lower of their two maxima (``reach``, with that ``common_level``) — who
    gets to a level both reach first, a speed measure that still means something while both
    curves rise (their times to 90 % of their own maxima then do not)."""
    import numpy as np
    for ds in {r["dataset"] for r in rows}:
        pair = {r["algorithm"]: r for r in rows if r["dataset"] == ds
                and r["algorithm"] in ("ssd", "csdcp")}
        if len(pair) < 2:
            continue
        sel = records[records["dataset"] == ds]
        curves = {a: sel[sel.algorithm == a].groupby("epoch", sort=True)[metric].mean()
                  for a in pair}
        level = min(float(c.max()) for c in curves.values())
        if not all(level > float(c.iloc[0]) for c in curves.values()):
            continue                    # one of them never gains: nothing to race for
        for a, c in curves.items():
            hit = np.flatnonzero(c.to_numpy() >= level)
            pair[a]["reach"] = float(c.index[hit[0]])
            pair[a]["common_level"] = level


#: "almost the same ATLL" of the large-data claims: within this many nats
SAME_NATS = 2.0


def claims(rows: list[dict], study: str = "main",
           by: Sequence[str] = ("dataset", "learning_rate")) -> list[dict]:
    """The paper's statements for ``study`` against the measured rows.

    Every time-to-90 % claim is judged only when the curves it compares have levelled off
    (:func:`._dc.still_rising`), every "same final ATLL" claim only on a run of the paper's
    length or with levelled curves (:func:`_final_verdict`); otherwise "inconclusive".

    Parameters
    ----------
    rows : list of dict
        The ``final`` rows of :func:`summarize`.
    study : str
        One of :data:`STUDIES`.
    by : sequence of str
        The grouping columns of the rows.

    Returns
    -------
    list of dict
        Claim rows (:func:`rbmviz.reproduce.report.make_claim`).
    """
    return _on_the_papers_data(_ssd_claims(rows) if study == "ssd" else _claims(rows, study), rows)


#: the data sets the paper's large-data statements are about (Sec. 4.2.2 and 5)
PAPER_DATASETS = ("mnist", "binarized_mnist", "omniglot")


def _on_the_papers_data(out: list[dict], rows: list[dict]) -> list[dict]:
    """Claims judged on a data set the paper did not use become "not comparable": a statement
    about MNIST and Omniglot is not confirmed (or refuted) by 8×8 digits."""
    labels = {_dc.DATASET_LABELS.get(r["dataset"], r["dataset"]): r["dataset"] for r in rows}
    for c in out:
        ds = next((d for label, d in labels.items() if c["claim"].startswith(label + ":")
                   or c["claim"].startswith(label + ",")), None)
        if ds is not None and ds not in PAPER_DATASETS and not c["verdict"].startswith("not run"):
            c["verdict"] = (f"not comparable (the paper states it for MNIST and Omniglot at "
                            f"784×500; this run: {_dc.DATASET_LABELS.get(ds, ds)})")
    return out


def _claims(rows, study):
    out = []
    groups = {}
    # study "eta" compares the learning rates with each other: one group per data set
    keys = ("dataset",) if study == "eta" else ("dataset", "learning_rate")
    for r in rows:
        groups.setdefault(tuple(r[c] for c in keys), []).append(r)
    same_crit = (f"largest minus smallest final ATLL ≤ {SAME_NATS:g} nats; 'differs' only on a "
                 f"run of the paper's {PAPER_EPOCHS} epochs whose curves have levelled off, "
                 f"else inconclusive (judged: the spread)")
    for key, rs in groups.items():
        ds = key[0]
        where = _dc.DATASET_LABELS.get(ds, ds) + (f", η={key[1]:g}" if len(key) > 1 else "")
        finals = [r["final"] for r in rs if r["final"] is not None]
        if not finals:
            continue
        spread = max(finals) - min(finals)
        if study == "main":
            out.append(make_claim(
                f"{where}: all algorithms reach almost the same ATLL at the end (within "
                f"{SAME_NATS:g} nats here)", _final_verdict(spread, rs), criterion=same_crit,
                judged=spread, paper="almost the same after 200 epochs (value not stated)",
                measured=", ".join(f"{r['label']} {r['final']:.2f}" for r in rs if r["final"] is not None)
                + f" (spread {spread:.2f})"))
            cg = [r for r in rs if r["algorithm"] == "cg"]
            cs = [r for r in rs if r["algorithm"] == "csdcp"]
            if cg and cs and cg[0]["t90"] is not None and cs[0]["t90"] is not None:
                lead = cg[0]["t90"] - cs[0]["t90"]
                rising = [r["label"] for r in (cs[0], cg[0]) if _rising(r)]
                verdict = ((f"inconclusive ({' and '.join(rising)} still rising at the last "
                            f"evaluation)") if rising else "agrees" if lead > 0 else "differs")
                out.append(make_claim(
                    f"{where}: CS-DCP reaches 90 % of its maximum ATLL before CG",
                    verdict, criterion="t90(CG) − t90(CS-DCP) > 0, judged only when both "
                    "curves have levelled off (peak before the last evaluation)",
                    judged=lead, paper=f"≈ {PAPER['cs_dcp_lead_over_cg_epochs']} epochs before "
                    f"(η = 0.01)",
                    measured=f"t90 CS-DCP {cs[0]['t90']:g}, CG {cg[0]['t90']:g} (lead {lead:g} epochs)"))
        else:
            column = STUDIES[study][0]
            for alg in dict.fromkeys(r["algorithm"] for r in rs):
                ra = [r for r in rs if r["algorithm"] == alg and r["final"] is not None]
                if len(ra) < 2:
                    continue
                vals = [r["final"] for r in ra]
                label = _dc.ALGORITHM_LABELS.get(alg, alg)
                if study == "eta":
                    inc = [(r["learning_rate"], r["increasing"]) for r in ra]
                    small = [f for e, f in inc if e <= 0.01 and f is not None]
                    out.append(make_claim(
                        f"{where}: {label} with a small learning rate raises the ATLL at most "
                        f"evaluations (Fig. 6a)",
                        ("agrees" if min(small) > 0.5 else "differs") if small else "not run",
                        criterion="for every η ≤ 0.01, the trial-mean ATLL rises at more than "
                                  "half of the evaluation steps (judged: the smallest fraction)",
                        judged=min(small) if small else None, paper="Fig. 6a",
                        measured=", ".join(f"η={e:g}: {f:.0%}" for e, f in inc if f is not None)))
                    continue
                claim = {"budget": "converges to the same ATLL whatever d and K′ (d·K′ fixed)",
                         "batch": "reaches almost the same ATLL whatever the batch size",
                         "init": "is insensitive to the initialisation"}[study]
                measured = ", ".join(f"{_value(r, column)}: {r['final']:.2f}" for r in ra) + \
                    f" (spread {max(vals) - min(vals):.2f})"
                out.append(make_claim(
                    f"{where}: {label} {claim} (within {SAME_NATS:g} nats here)",
                    _final_verdict(max(vals) - min(vals), ra), criterion=same_crit,
                    judged=max(vals) - min(vals), measured=measured,
                    paper=STUDIES[study][2]))
    return out


def _ssd_claims(rows):
    """Sec. 4.2.2's SSD comparison, per data set (SSD runs at its own step, so its rows form
    their own learning-rate group: the claims compare across groups)."""
    out = []
    by_ds: dict = {}
    for r in rows:
        if r["final"] is not None:
            by_ds.setdefault(r["dataset"], {})[r["algorithm"]] = r
    for ds, fin in by_ds.items():
        where = _dc.DATASET_LABELS.get(ds, ds)
        ssd, cs = fin.get("ssd"), fin.get("csdcp")
        if ssd is None or cs is None:
            continue
        others = [r for a, r in fin.items() if a not in ("ssd", "csdcp")]
        best = max(others, key=lambda r: r["final"]) if others else None
        gap = abs(ssd["final"] - cs["final"])
        above = best is None or min(ssd["final"], cs["final"]) > best["final"]
        still = all(_rising(r) for r in fin.values())
        out.append(make_claim(
            f"{where}: CS-DCP and SSD reach about the same ATLL (within {SAME_NATS:g} nats "
            f"here), both above the other rules",
            "agrees" if gap <= SAME_NATS and above else (
                "inconclusive (every curve still rising at the last evaluation)" if still
                else "differs"),
            criterion=f"|SSD − CS-DCP| final ATLL ≤ {SAME_NATS:g} nats and both above every "
                      f"other rule; inconclusive while every curve still rises (judged: "
                      f"|SSD − CS-DCP|)",
            judged=gap, paper="CS-DCP ≈ SSD, both better than the rest",
            measured=f"SSD {ssd['final']:.2f}, CS-DCP {cs['final']:.2f}"
                     + (f"; best other {best['label']} {best['final']:.2f}" if best else "")))
        rising = _rising(ssd) and _rising(cs)
        if ssd.get("reach") is not None and cs.get("reach") is not None and rising:
            # both still rising: who first reaches a level both reach
            a, b = ssd["reach"], cs["reach"]
            out.append(make_claim(
                f"{where}: SSD is slightly faster than CS-DCP (first to an ATLL both reach)",
                "agrees" if a < b else "differs" if a > b else
                "inconclusive (both reach it at the same evaluation)",
                criterion="SSD first reaches the lower of the two curves' maxima at an earlier "
                          "evaluation than CS-DCP (used while both still rise; judged: "
                          "CS-DCP's epoch − SSD's)",
                judged=b - a, paper="SSD slightly faster",
                measured=f"ATLL {ssd['common_level']:.2f} (the lower maximum) first reached at "
                         f"epoch {a:g} by SSD, {b:g} by CS-DCP; both curves still rising"))
        elif ssd["t90"] is not None and cs["t90"] is not None:
            out.append(make_claim(
                f"{where}: SSD is slightly faster than CS-DCP (reaches 90 % of its maximum "
                f"ATLL first)",
                ("inconclusive (a curve still rises at the last evaluation)"
                 if _rising(ssd) or _rising(cs) else
                 "agrees" if ssd["t90"] < cs["t90"] else "differs"),
                criterion="t90(SSD) < t90(CS-DCP), judged only when both curves have levelled "
                          "off (judged: t90(CS-DCP) − t90(SSD))",
                judged=cs["t90"] - ssd["t90"], paper="SSD slightly faster",
                measured=f"t90 SSD {ssd['t90']:g}, CS-DCP {cs['t90']:g} epochs"))
        drop = ssd["best"] - ssd["final"] if ssd["best"] is not None else None
        if drop is not None:
            out.append(make_claim(
                f"{where}: SSD shows divergence by the end of the run (its ATLL falls from its "
                f"best; paper: visible by 250 epochs)",
                "agrees" if drop > 0.5 or ssd.get("incomplete") else (
                    "inconclusive (run shorter than the paper's 250 epochs)"
                    if (ssd.get("epochs") or 0) < 250 else "differs"),
                criterion="SSD's last trial-mean ATLL is more than 0.5 nats below its best, or a "
                          "trial diverged; 'differs' only on a run of 250 epochs (judged: the "
                          "drop, nats)",
                judged=drop, paper="divergence by the end of 250 epochs",
                measured=f"best {ssd['best']:.2f} at epoch {ssd['best_at']:g}, last "
                         f"{ssd['final']:.2f} (drop {drop:.2f} nats)"
                         + (f"; {ssd['incomplete']} trial(s) diverged" if ssd.get("incomplete") else "")))
    return out


def _final_verdict(spread, rs):
    """Verdict of a claim that the rules (or settings) ``rs`` end within 2 nats of each other
    after the paper's 200 epochs: judged "differs" only on a run of that length whose curves
    have levelled off; earlier it is inconclusive (the curves meet late in the paper)."""
    if spread <= SAME_NATS:
        return "agrees"
    if all(_rising(r) for r in rs):
        return "inconclusive (every curve still rising at the last evaluation)"
    if any((r.get("epochs") or 0) < PAPER_EPOCHS for r in rs):
        return f"inconclusive (run shorter than the paper's {PAPER_EPOCHS} epochs)"
    return "differs"


_rising = _dc.still_rising


def _value(r, column):
    if column == "k_inner" and r.get("d"):
        return f"d={r['d']},K'={r['k_inner']}"
    return str(r.get(column))


def _summary_lines(summary: dict) -> list[str]:
    """The lines of the printed summary before its claims (:func:`format_summary`)."""
    s = summary.get("settings") or {}
    lines = []
    if s:
        lines.append(
            f"Upadhya & Sastry (2017), large data, study '{s['study']}' "
            f"({STUDIES[s['study']][2]}): {s['n_hidden']} hidden units, batch {s['batch_size']}, "
            f"{s['epochs']:,} epochs, K={s['k']} vs S-DCP d={s['d']}/K'={s['k_inner']}, "
            f"{s['trials']} trial(s), AIS ATLL ({s['ais_chains']} chains x {s['ais_betas']:,} "
            f"temperatures) every {s['eval_every']} epochs"
            + (f", first {s['limit']:,} rows of each split" if s.get("limit") else ""))
    column = STUDIES.get(s.get("study", "main"), (None,))[0]
    extra = column if column and column != "learning_rate" else None
    lines.append("")
    head = (f"  {'data':<14} {'eta':>6} " + (f"{extra:>16} " if extra else "")
            + f"{'algorithm':<9} {'final ATLL':>10} {'(s.e.)':>8} {'best':>9} {'90% at':>7} {'rising':>7}")
    lines += [head, "  " + "-" * (len(head) - 2)]
    f = (lambda x, spec=".2f": "-" if x is None else format(x, spec))
    for r in summary["final"]:
        ev = _value(r, extra) if extra else ""
        lines.append(
            f"  {r['dataset_label'][:14]:<14} {r['learning_rate']:>6g} " + (f"{ev:>16} " if extra else "")
            + f"{r['label']:<9} {f(r['final']):>10} "
            + f"{('(' + f(r['final_sem']) + ')') if r['final_sem'] is not None else '':>8} "
            + f"{f(r['best']):>9} {f(r['t90'], 'g'):>7} "
            + f"{'-' if r['increasing'] is None else format(r['increasing'], '.0%'):>7}")
    if s.get("study", "main") == "main":
        lines.append(f"  (orientation: CD-25 with 500 hidden units reaches "
                     f"{PAPER['sm2008_cd25_500_mnist']} nats on MNIST, Salakhutdinov & Murray 2008)")
    lines.append("")
    lines.append("first to 90% of the maximum ATLL (epoch):")
    for g in summary["first_to_90"]:
        head = ", ".join(f"{k} {v}" for k, v in g.items() if k != "order")
        lines.append(f"  {head}: " + ", ".join(
            f"{lab} {'-' if t is None else f'{t:g}'}" for lab, t in g["order"]))
    return lines


def _not_ok(summary):
    return ([f"{summary['not_ok']} run(s) diverged or failed (status column of the records)"]
            if summary.get("not_ok") else [])


format_summary = report.study_summary(_summary_lines, command="rbmviz reproduce dc-mnist",
                                      module=__name__,
                                      before_time=_not_ok)
