"""Summary and claims of the TAP-machines reproduction (Tramel et al. 2018, Sec. VII):
the numbers to set beside the paper's (:func:`summarize`), the paper's qualitative claims
judged on a run (:func:`claims`), and the printed table (:func:`format_summary`).

Pure functions of the tables of :func:`rbmviz.reproduce.tap_run.run`, plus the constants
the run and the figures share."""
from __future__ import annotations

import math

import numpy as np

from ..datasets import split_rows
from ._io import finite_or_none as _f
from . import report
from .report import make_claim, status

__all__ = ["PAPER", "NOTES", "TABLES", "DATASETS", "DEFAULT_PS", "DATA_MAP_DIGITS", "EXACT_MAX_HIDDEN",
           "summarize", "claims", "format_summary", "bimodality", "free_energy_bands"]

#: what the paper reports (Tramel et al. 2018, Sec. V; the TAP theory page)
PAPER = {
    "epochs": 100,
    "train_samples": 60_000,
    "eval_samples": 10_000,
    "test_images": 1_000,
    "hidden": (25, 50, 100, 500),
    "count_hidden": 100,
    "ll_tapers_by_epoch": 20,
    "unique_at_start": 1,
    "unique_fraction_max": 0.10,
    "isomap_epochs": (1, 3, 25, 100),
}
def _dataset_settings(dataset, **experiment):
    """Table 1's column of ``dataset`` (:mod:`rbmviz.tap.presets`) with the experiment's own
    settings (data rows, evaluation rows, counting model, Isomap epochs, run length)."""
    from ..tap.presets import PRESETS, of_dataset
    p = of_dataset(dataset)
    return dict(hidden=tuple(q.n_hidden for q in PRESETS.values() if q.dataset == dataset),
                batch_size=p.batch_size, learning_rate=p.learning_rate,
                learning_rate_final=p.learning_rate_final, weight_decay=p.weight_decay,
                visible=p.visible, **experiment)


#: the data sets of Table 1 and what each one's run uses where the caller leaves a setting
#: unset (None): the paper's settings (Table 1, Figs. 3, 5 and 7; reference numbers of the TAP
#: theory page).  Denoising (Fig. 8) is a binary-MNIST experiment.
DATASETS = {
    "binary-mnist": _dataset_settings(
        "binary-mnist", label="binary-MNIST", rows=split_rows("mnist", "train"), epochs=100,
        eval_samples=10_000, test_samples=1_000, count_hidden=100, isomap_epochs=(1, 3, 25, 100)),
    "real-mnist": _dataset_settings(
        "real-mnist", label="real-MNIST", rows=split_rows("mnist", "train"), epochs=100,
        eval_samples=10_000, test_samples=0, count_hidden=100, isomap_epochs=(1, 3, 25, 100)),
    "cbcl": _dataset_settings(
        "cbcl", label="CBCL faces", rows=split_rows("cbcl", "all"), epochs=500,
        eval_samples=2_400, test_samples=0, count_hidden=256, isomap_epochs=(5, 100, 200, 500)),
}
#: the tables returned by :func:`run` and written by :func:`save` (as ``<name>.csv``)
TABLES = ("curves", "solutions", "isomap", "data_map", "denoising")
#: flip probabilities of the denoising curves (the paper's grid on [0, 0.5] is not given)
DEFAULT_PS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
#: digit classes of the Fig. 7 data map
DATA_MAP_DIGITS = (3, 6, 7)
#: exact log-likelihood alongside the TAP one when the hidden layer has at most this many units
EXACT_MAX_HIDDEN = 16
NOTES = [
    "Momentum: heavy-ball (v <- eta v + gamma (dW - eps W)) by default. Alg. 2 as printed adds "
    "eta dW(t-1), the previous gradient not scaled by gamma; on binary-MNIST (784x10, 1,000 "
    "rows, gamma 0.005, M=K=20 or 100) that form drove |W| to ~12 within one epoch and the "
    "exact log-likelihood did not improve (-202.72 -> -202.72 nats), while heavy-ball with "
    "gamma 0.05, M=K=20 raised it to -191.4 in 4 epochs. Which form the authors used is "
    "unconfirmed; --momentum-form printed runs the literal one.",
    "Uniqueness criterion of TAP solutions (not given in the paper): max |Δa^v| and "
    "max |Δa^h| both below unique_tol (1e-4).",
    "The TAP log-likelihood is eq. (39) with the unique converged solutions averaged "
    "uniformly; its standard error is over the evaluation samples (the TAP term is shared).",
    "Isomap: scikit-learn Isomap(n_components=2, n_neighbors=5) (hyper-parameters not given "
    "in the paper); Fig. 6 falls back to the unique solutions of all recorded epochs when the "
    "last epoch has fewer than 3.",
    "Denoising: p grid, per-image MCC average and 1-NN by Hamming distance are project "
    "choices (the TAP theory page); eqs. (43), (44), (46) with their errata fixed.",
]



# ---------------------------------------------------------------------------- summary

def _free_energy_turns(ep, fe):
    """Where the mean TAP free energy first turns down (its first local maximum), its lowest
    value after that, and whether it rises again by more than a quarter of that fall by the
    end (the paper's Fig. 5: up, then slowly down)."""
    out = dict(free_energy_turn=None, free_energy_turn_epoch=None, free_energy_trough=None,
               free_energy_trough_epoch=None, free_energy_rises_again=None)
    ok = np.isfinite(fe)
    ep, fe = ep[ok], fe[ok]
    down = np.flatnonzero(fe[1:] < fe[:-1])
    if fe.size < 3 or down.size == 0:
        return out
    i = int(down[0])
    j = i + int(np.argmin(fe[i:]))
    fall = fe[i] - fe[j]
    out.update(free_energy_turn=_f(fe[i]), free_energy_turn_epoch=int(ep[i]),
               free_energy_trough=_f(fe[j]), free_energy_trough_epoch=int(ep[j]),
               free_energy_rises_again=bool(fe[-1] - fe[j] > 0.25 * fall))
    return out


def summarize(tables: dict, *, settings: dict | None = None, elapsed: float | None = None) -> dict:
    """The numbers to compare with the paper.

    Parameters
    ----------
    tables : dict
        The experiment's tables (:func:`rbmviz.reproduce.tap_run.run`).
    settings : dict
        The settings the experiment ran with (stored in the summary).
    elapsed : float
        Wall-clock seconds of the run (stored in the summary).

    Returns
    -------
    dict with
        ``models``: one entry per N_h — ``tap_ll_per_unit`` at the first and last recorded
        epochs, the gain over training, ``gain_by_epoch_20`` (fraction of the total gain
        reached by epoch 20 or the nearest earlier record), ``late_slope`` / ``early_slope``
        (per-epoch gain over the last / first half of the records), ``n_unique`` first and
        last, ``max_unique_fraction``, ``free_energy_first`` / ``_peak`` / ``_last``
        (mean over unique solutions), ``not_converged`` (evaluation rows that hit max_iter,
        summed over epochs), ``train_not_converged`` (training TAP runs that hit max_iter and
        were left out of their update), ``eval_fallback`` (evaluation runs re-solved with
        damping, summed over epochs), ``exact_ll_last`` and ``tap_minus_exact_last`` when available;
        ``denoising``: per method and N_h the mean MCC at p = 0, over 0.1 ≤ p ≤ 0.3 and at the
        largest p;
        ``claims``: :func:`claims`;  ``paper``: :data:`PAPER`; ``settings``;
        ``elapsed_seconds``; ``notes``.
    """
    curves = tables["curves"]
    models = []
    for nh, g in curves.groupby("n_hidden", sort=False):
        g = g.sort_values("epoch")
        ep = g["epoch"].to_numpy()
        ll = g["tap_ll_per_unit"].to_numpy()
        gain = ll[-1] - ll[0]
        by20 = g[g["epoch"] <= PAPER["ll_tapers_by_epoch"]]
        frac20 = (by20["tap_ll_per_unit"].iloc[-1] - ll[0]) / gain if gain else float("nan")
        half = len(ep) // 2
        early = late = float("nan")
        if len(ep) >= 3:
            early = (ll[half] - ll[0]) / max(ep[half] - ep[0], 1)
            late = (ll[-1] - ll[half]) / max(ep[-1] - ep[half], 1)
        fe = g["mean_free_energy"].to_numpy()
        m = dict(
            n_hidden=int(nh), n_units=int(g["n_visible"].iloc[0]) + int(nh),
            first_epoch=int(ep[0]), last_epoch=int(ep[-1]),
            tap_ll_per_unit_first=_f(ll[0]), tap_ll_per_unit_last=_f(ll[-1]),
            tap_ll_last=_f(g["tap_ll"].iloc[-1]), tap_ll_sem_last=_f(g["tap_ll_sem"].iloc[-1]),
            gain=_f(gain), gain_by_epoch_20=_f(frac20) if ep[-1] > PAPER["ll_tapers_by_epoch"] else None,
            early_slope=_f(early), late_slope=_f(late),
            n_unique_first=int(g["n_unique"].iloc[0]), n_unique_last=int(g["n_unique"].iloc[-1]),
            n_unique_max=int(g["n_unique"].max()),
            max_unique_fraction=_f(g["unique_fraction"].max()),
            n_init=int(g["n_init"].iloc[-1]),
            not_converged=int((g["n_init"] - g["n_converged"]).sum()),
            train_not_converged=int(g["train_not_converged"].iloc[-1]),
            eval_fallback=int(g["n_fallback"].sum()),
            free_energy_first=_f(fe[0]), free_energy_peak=_f(np.nanmax(fe)),
            free_energy_peak_epoch=int(ep[int(np.nanargmax(fe))]), free_energy_last=_f(fe[-1]),
            **_free_energy_turns(ep, fe),
            exact_ll_last=_f(g["exact_ll"].iloc[-1]),
            tap_minus_exact_last=_f(g["tap_ll"].iloc[-1] - g["exact_ll"].iloc[-1]))
        models.append(m)
    den = []
    d = tables["denoising"]
    if len(d):
        for (nh, method), g in d.groupby(["n_hidden", "method"], sort=False):
            mid = g[(g["p"] >= 0.1 - 1e-12) & (g["p"] <= 0.3 + 1e-12)]
            den.append(dict(
                n_hidden=int(nh), method=method,
                mcc_p0=_f(g.loc[g["p"] == 0.0, "mcc"].mean()) if (g["p"] == 0.0).any() else None,
                mcc_moderate=_f(mid["mcc"].mean()) if len(mid) else None,
                p_max=_f(g["p"].max()), mcc_p_max=_f(g.loc[g["p"].idxmax(), "mcc"]),
                not_converged=int(g["not_converged"].sum())))
    out = dict(models=models, denoising=den, paper={k: (list(v) if isinstance(v, tuple) else v)
                                                     for k, v in PAPER.items()},
               settings=settings, elapsed_seconds=elapsed, notes=NOTES)
    out["claims"] = claims(out, tables)
    return out


def _method_name(r):
    return f"TAP N_h={r['n_hidden']}" if r["method"] == "tap" else (
        "1-NN" if r["method"] == "nn" else "OPE")


def bimodality(values: np.ndarray) -> float | None:
    """Sarle's bimodality coefficient (g² + 1) / (κ + 3(n−1)²/((n−2)(n−3))) of a sample
    (g its skewness, κ its excess kurtosis, both bias-corrected): above 5/9 (the value of a
    uniform distribution) suggests two modes.

    Parameters
    ----------
    values : numpy.ndarray
        The sample (at least 4 finite values).

    Returns
    -------
    float or None
        The coefficient; None for fewer than 4 finite values or a constant sample.
    """
    from scipy.stats import kurtosis, skew
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    n = x.size
    if n < 4 or np.ptp(x) == 0:
        return None
    g = skew(x, bias=False)
    k = kurtosis(x, bias=False)
    return float((g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))


#: Sarle's coefficient above this suggests two modes (the uniform distribution's value)
BIMODAL_ABOVE = 5 / 9
#: an epoch's free energies are judged for two bands when it has at least this many solutions
BANDS_MIN_SOLUTIONS = 10
#: "most of the gain by about epoch 20": at least this fraction of the run's gain
TAPER_FRACTION = 0.5
#: the tapering is judged on runs reaching at least this epoch (twice the paper's 20)
TAPER_MIN_EPOCH = 40
#: "the solutions multiply" (Fig. 5: from one to hundreds) is judged "agrees" once the count at
#: the last record is at least this many; a rise to fewer is too small to call growth
GROW_MIN_SOLUTIONS = 10
#: "the free energy first increases, then slowly decreases": the fall from the first peak to the
#: last record must be at least this fraction of the rise to that peak to count as a decrease
FALL_MIN_FRACTION = 0.1
#: "approaches the 1-NN curve as p → 0.5": MCC within this of 1-NN at the largest p < 0.5
NN_CLOSE = 0.05
#: near-exact recovery at small noise: MCC at least this at the smallest p > 0 (p ≤ 0.05)
RECOVERY_MCC = 0.9


def free_energy_bands(solutions: "pandas.DataFrame", n_hidden: int) -> list[dict]:
    """Per epoch, the bimodality of the unique solutions' TAP free energies of one model.

    Parameters
    ----------
    solutions : pandas.DataFrame
        The ``solutions`` table (``n_hidden``, ``epoch``, ``free_energy``).
    n_hidden : int
        The model.

    Returns
    -------
    list of dict
        ``epoch``, ``n`` (unique solutions), ``bc`` (:func:`bimodality`, None below 4).
    """
    if solutions is None or not len(solutions):
        return []
    g = solutions[solutions["n_hidden"] == n_hidden]
    return [dict(epoch=int(ep), n=int(len(e)), bc=bimodality(e["free_energy"].to_numpy()))
            for ep, e in g.groupby("epoch", sort=True)]


def _c(claim, paper, observed, verdict, criterion, judged):
    """A claim row (:func:`rbmviz.reproduce.report.make_claim`) with the TAP tables' older
    keys ``observed`` and ``holds`` (True / False / None) beside it."""
    row = make_claim(claim, verdict, criterion=criterion, judged=judged, measured=observed,
                     paper=paper)
    row["observed"] = observed
    row["holds"] = {"agrees": True, "differs": False}.get(status(verdict))
    return row


def _v(holds, why="this run cannot tell"):
    return "agrees" if holds is True else "differs" if holds is False else f"inconclusive ({why})"


def claims(summary: dict, tables: dict) -> list[dict]:
    """The paper's qualitative claims (Sec. VII) judged on a run.

    Parameters
    ----------
    summary : dict
        From :func:`summarize`.
    tables : dict
        The experiment's tables (``solutions`` and ``denoising`` are read).

    Returns
    -------
    list of dict
        Claim rows (:func:`rbmviz.reproduce.report.make_claim`: ``claim``, ``paper``,
        ``measured``, ``verdict``, ``criterion``, ``judged``) with ``observed`` (=
        ``measured``) and ``holds`` (True / False / None = this run cannot tell).
    """
    out = []
    ms = summary["models"]
    s = summary.get("settings") or {}
    short = any(m["last_epoch"] < 2 for m in ms)
    ep20 = PAPER["ll_tapers_by_epoch"]
    # 1. rapid rise, then a steady, slower improvement
    rises = [m["gain"] is not None and m["gain"] > 0 for m in ms]
    out.append(_c(
        "TAP log-likelihood rises during training", "rapid rise for every N_h (Fig. 3)",
        "; ".join(f"N_h={m['n_hidden']}: {m['tap_ll_per_unit_first']:.4f} -> "
                  f"{m['tap_ll_per_unit_last']:.4f} per unit (epoch {m['last_epoch']})" for m in ms),
        _v(all(rises) if not all(m["last_epoch"] == 0 for m in ms) else None, "no training"),
        "the TAP LL per unit at the last record is above the first for every N_h (judged: "
        "the smallest gain per unit)",
        min((m["gain"] for m in ms if m["gain"] is not None), default=None)))
    fr = [m for m in ms if m.get("gain_by_epoch_20") is not None]
    obs = "; ".join(f"N_h={m['n_hidden']}: {m['gain_by_epoch_20']:.0%} of the gain to epoch "
                    f"{m['last_epoch']} reached by epoch {ep20}" for m in fr)
    long_ = [m for m in fr if m["last_epoch"] >= TAPER_MIN_EPOCH]
    if short or not long_:
        verdict = f"inconclusive (no run reaches epoch {TAPER_MIN_EPOCH})"
        obs = obs or "too few recorded epochs to see the rate of improvement"
        judged = None
    else:
        judged = min(m["gain_by_epoch_20"] for m in long_)
        verdict = "agrees" if judged >= TAPER_FRACTION else "differs"
    out.append(_c(
        f"most of the improvement comes by about epoch {ep20}, then a steady, slower rate",
        f"rapid rise, then a constant rate of improvement by about epoch {ep20} (Fig. 3)", obs,
        verdict, f"for every N_h whose run reaches epoch {TAPER_MIN_EPOCH}, at least "
                 f"{TAPER_FRACTION:.0%} of the TAP LL gain over the run is reached by epoch {ep20} "
                 f"(judged: the smallest fraction)", judged))
    # 2. solution counts
    cnt = [m for m in ms if m["n_hidden"] == s.get("count_hidden")] or ms
    c = cnt[0]
    out.append(_c("one TAP solution at the start of training",
                  "1 unique solution at initialisation (Sec. VII.3)",
                  f"N_h={c['n_hidden']}: {c['n_unique_first']} at epoch {c['first_epoch']}",
                  _v(c["n_unique_first"] == 1 if c["first_epoch"] == 0 else None,
                     "epoch 0 not recorded"),
                  "exactly one unique solution at epoch 0 (judged: the count)", c["n_unique_first"]))
    out.append(_c("the number of unique solutions grows with training", "starts at 1 and increases",
                  f"N_h={c['n_hidden']}: {c['n_unique_first']} -> {c['n_unique_last']} "
                  f"(max {c['n_unique_max']}) from {c['n_init']} initialisations",
                  ("inconclusive (no training)" if c["last_epoch"] <= 0
                   else "differs" if c["n_unique_last"] <= c["n_unique_first"]
                   else "agrees" if c["n_unique_last"] >= GROW_MIN_SOLUTIONS
                   else f"inconclusive (fewer than {GROW_MIN_SOLUTIONS} solutions at the last record)"),
                  f"more unique solutions at the last record than at the first, and at least "
                  f"{GROW_MIN_SOLUTIONS} of them (a rise to fewer is inconclusive; judged: the count "
                  f"at the last record)", c["n_unique_last"]))
    mnist = s.get("dataset", "binary-mnist") != "cbcl"
    frac = c["max_unique_fraction"]
    out.append(_c("no explosion of solutions",
                  (f"unique / initialisations below {PAPER['unique_fraction_max']:.0%} (N_h=100)"
                   if mnist else "stated for both MNIST variants (N_h=100), not for CBCL"),
                  f"N_h={c['n_hidden']}: max fraction {frac:.2%}",
                  _v(frac < PAPER["unique_fraction_max"]) if mnist
                  else "not comparable (stated for MNIST only)",
                  f"the largest ratio unique solutions / initialisations over all recorded epochs "
                  f"is below {PAPER['unique_fraction_max']:.0%} (judged: that ratio)", frac))
    fe_up_down, fe_note, why = None, "", "the run is too short"
    turn = c.get("free_energy_turn_epoch")
    if c["last_epoch"] >= 2 and c["free_energy_peak"] is not None:
        if c["free_energy_peak"] <= c["free_energy_first"]:
            fe_up_down = False
        elif turn is None:
            fe_note = " (still rising at the end of the run: the first phase only)"
            why = "still rising at the end of the run"
        elif c["free_energy_rises_again"]:
            fe_up_down = False
            fe_note = (f" (after falling to {c['free_energy_trough']:.2f} at epoch "
                       f"{c['free_energy_trough_epoch']} it rises again)")
        else:
            rise = c["free_energy_turn"] - c["free_energy_first"]
            fall = c["free_energy_turn"] - c["free_energy_last"]
            if rise > 0 and fall < FALL_MIN_FRACTION * rise:
                why = (f"it falls by {fall:.2f} from its peak, less than {FALL_MIN_FRACTION:.0%} of "
                       f"its rise of {rise:.2f}: too little to call a decrease")
            else:
                fe_up_down = True
    peak_text = (f"first peak {c['free_energy_turn']:.2f} at epoch {turn}" if turn is not None
                 else f"peak {c['free_energy_peak']:.2f} at epoch {c['free_energy_peak_epoch']}")
    out.append(_c("TAP free energy first increases, then slowly decreases", "Fig. 5 (red line)",
                  f"N_h={c['n_hidden']}: {c['free_energy_first']:.2f} -> {peak_text} "
                  f"-> {c['free_energy_last']:.2f}{fe_note}", _v(fe_up_down, why),
                  "the mean free energy of the unique solutions rises above its first value, "
                  "turns down, falls by at least "
                  f"{FALL_MIN_FRACTION:.0%} of that rise and does not rise again by more than a "
                  "quarter of that fall (judged: the epoch it first turns down)", turn))
    if s.get("dataset", "binary-mnist") == "binary-mnist":
        bands = [b for b in free_energy_bands(tables.get("solutions"), c["n_hidden"])
                 if b["n"] >= BANDS_MIN_SOLUTIONS and b["bc"] is not None]
        two = [b for b in bands if b["bc"] > BIMODAL_ABOVE]
        out.append(_c(
            "two distinct free-energy bands at all epochs (binary-MNIST)", "Fig. 5a",
            (f"N_h={c['n_hidden']}: bimodal at {len(two)} of {len(bands)} epochs with at least "
             f"{BANDS_MIN_SOLUTIONS} solutions (coefficient {min(b['bc'] for b in bands):.2f} … "
             f"{max(b['bc'] for b in bands):.2f})") if bands
            else f"N_h={c['n_hidden']}: no epoch with {BANDS_MIN_SOLUTIONS} unique solutions",
            (("agrees" if len(two) == len(bands) else "differs") if bands
             else f"inconclusive (no epoch with {BANDS_MIN_SOLUTIONS} unique solutions)"),
            f"Sarle's bimodality coefficient of the unique solutions' free energies above 5/9 "
            f"at every epoch with at least {BANDS_MIN_SOLUTIONS} of them (judged: the fraction "
            f"of those epochs)", len(two) / len(bands) if bands else None))
    # 3. denoising
    den = summary["denoising"]
    d = tables.get("denoising")
    if den and d is not None and len(d):
        taps = sorted({int(n) for n in d.loc[d["method"] == "tap", "n_hidden"]})
        small_nh = [n for n in taps if n <= 100]

        def curve(method, nh=0):
            sel = d[(d["method"] == method) & ((d["n_hidden"] == nh) if method == "tap" else True)]
            return sel.groupby("p")["mcc"].mean()
        ope, nn = curve("ope"), curve("nn")
        tap = {n: curve("tap", n) for n in taps}
        ps = sorted(p for p in d["p"].unique() if p > 0)
        tiny = [p for p in ps if p <= 0.05 + 1e-12]
        if tiny:
            p0 = tiny[0]
            vals = {f"TAP N_h={n}": tap[n].get(p0) for n in taps}
            vals = {k: v for k, v in vals.items() if v is not None and np.isfinite(v)}
            low = min(vals.values()) if vals else None
            out.append(_c(
                "(near-)exact recovery at small noise", "every RBM recovers the signal at p = 0",
                f"p={p0:g}: " + ", ".join(f"{k} {v:.3f}" for k, v in vals.items())
                + (f" (OPE {ope[p0]:.3f})" if p0 in ope.index else ""),
                ("agrees" if low >= RECOVERY_MCC else "differs") if vals else "not run",
                f"MCC ≥ {RECOVERY_MCC:g} for every TAP machine (the paper's 'every RBM') at the "
                f"smallest p > 0 of the grid (≤ 0.05); p = 0 returns the input by construction "
                f"and is not judged (judged: the smallest MCC)", low))
        if len(ope) and small_nh:
            margins = {(n, p): tap[n][p] - ope[p] for n in small_nh for p in ps
                       if p in tap[n].index and p in ope.index}
            worst = min(margins, key=margins.get) if margins else None
            out.append(_c(
                "TAP denoising beats the OPE at every noise level (N_h <= 100)",
                "TAP inference always outperforms the OPE for N_h in {25, 50, 100}",
                "; ".join(f"TAP N_h={n}: beats the OPE at "
                          f"{sum(margins[n, p] > 0 for p in ps if (n, p) in margins)} of "
                          f"{sum((n, p) in margins for p in ps)} p" for n in small_nh)
                + (f"; worst N_h={worst[0]} at p={worst[1]:g}: {tap[worst[0]][worst[1]]:.3f} vs "
                   f"OPE {ope[worst[1]]:.3f}" if worst else ""),
                ("agrees" if margins[worst] > 0 else "differs") if worst else "not run",
                "TAP MCC above the OPE's at every p in (0, 0.5] for every N_h ≤ 100 (judged: "
                "the smallest margin TAP − OPE)", margins[worst] if worst else None))
        if len(nn) and small_nh:
            hi = [p for p in ps if 0.4 - 1e-12 <= p < 0.5 - 1e-12]
            if hi:
                ph = hi[-1]
                gaps = {n: abs(tap[n][ph] - nn[ph]) for n in small_nh if ph in tap[n].index}
                out.append(_c(
                    "TAP approaches the 1-NN curve as p → 0.5 (N_h <= 100)",
                    "approaches the 1-NN curve as p → 0.5",
                    f"p={ph:g}: 1-NN {nn[ph]:.3f}, " + ", ".join(
                        f"TAP N_h={n} {tap[n][ph]:.3f}" for n in gaps),
                    ("agrees" if max(gaps.values()) <= NN_CLOSE else "differs") if gaps
                    else "not run",
                    f"|TAP − 1-NN| MCC ≤ {NN_CLOSE:g} for every N_h ≤ 100 at the largest p "
                    f"below 0.5 of the grid (≥ 0.4; judged: the largest difference)",
                    max(gaps.values()) if gaps else None))
            over = [p for p in ps if 0.2 + 1e-12 < p < 0.5 - 1e-12 and p in ope.index]
            if over and len(ope):
                m = {p: nn[p] - ope[p] for p in over}
                out.append(_c("1-NN beats the OPE for p > 0.2", "Sec. VII.4.1",
                              "; ".join(f"p={p:g}: 1-NN {nn[p]:.3f} vs OPE {ope[p]:.3f}" for p in over),
                              "agrees" if min(m.values()) > 0 else "differs",
                              "1-NN MCC above the OPE's at every p of the grid in (0.2, 0.5) "
                              "(judged: the smallest margin)", min(m.values())))
    return out


def _summary_lines(summary: dict) -> list[str]:
    """The lines of the printed summary before its claims (:func:`format_summary`)."""
    s = summary.get("settings") or {}
    lines = []
    if summary.get("quick_form"):
        lines.append(summary["quick_form"])
    if s:
        d = DATASETS.get(s.get("dataset", "binary-mnist"), DATASETS["binary-mnist"])
        lines.append(
            f"Tramel et al. (2018) TAP machines on {s.get('data', 'binary-MNIST')}: "
            f"{s['samples']:,} training rows, {s['epochs']} epochs, N_h in "
            f"{','.join(map(str, s['hidden']))}, M={s['batch_size']}, K={s['n_solutions']}, "
            f"lr {s['learning_rate']:g}, l2 {s['weight_decay']:g}, momentum {s['momentum']:g}; "
            f"evaluation on {s['eval_samples']:,} training rows (paper: {d['rows']:,} rows, "
            f"{d['epochs']} epochs, {d['eval_samples']:,} evaluation rows)")
    head = (f"{'N_h':>4} {'epochs':>6} {'TAP LL/unit first':>17} {'last':>9} {'(s.e.)':>9} "
            f"{'exact-TAP':>9} {'unique first':>12} {'last':>5} {'max frac':>8} "
            f"{'F mean first':>12} {'peak':>9} {'last':>9} {'not conv.':>9} {'train n.c.':>10}")
    lines += [head, "-" * len(head)]
    for m in summary["models"]:
        sem = m["tap_ll_sem_last"]
        nunits = m["n_units"]
        ex = m["tap_minus_exact_last"]
        lines.append(
            f"{m['n_hidden']:>4} {m['last_epoch']:>6} {m['tap_ll_per_unit_first']:>17.5f} "
            f"{m['tap_ll_per_unit_last']:>9.5f} "
            f"{'(%.5f)' % (sem / nunits) if sem is not None and nunits else '':>9} "
            f"{'' if ex is None else '%.3f' % -ex:>9} {m['n_unique_first']:>12} "
            f"{m['n_unique_last']:>5} {m['max_unique_fraction']:>8.2%} "
            f"{m['free_energy_first']:>12.2f} {m['free_energy_peak']:>9.2f} "
            f"{m['free_energy_last']:>9.2f} {m['not_converged']:>9} "
            f"{m['train_not_converged']:>10}")
    if summary["denoising"]:
        lines.append("")
        lines.append(f"{'denoising':<14} {'MCC p=0':>8} {'0.1<=p<=0.3':>12} {'p max':>6} "
                     f"{'MCC there':>9}")
        for r in summary["denoising"]:
            name = r["method"] if r["method"] != "tap" else f"tap N_h={r['n_hidden']}"
            lines.append(f"{name:<14} {'' if r['mcc_p0'] is None else '%.3f' % r['mcc_p0']:>8} "
                         f"{'' if r['mcc_moderate'] is None else '%.3f' % r['mcc_moderate']:>12} "
                         f"{r['p_max']:>6.2f} {r['mcc_p_max']:>9.3f}")
    return lines


format_summary = report.study_summary(_summary_lines, command="rbmviz reproduce tap",
                                      module=__name__,
                                      heading="The paper's claims and this run:", form="holds")


