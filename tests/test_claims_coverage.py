"""Every claim check of every study can return "differs", and a test shows it doing so.

The claims are enumerated from the claims functions themselves, not from a list typed here:

* the claims functions are every public ``claims`` / ``*_claims`` function defined in a
  module of :mod:`rbmviz.reproduce` (a new one without inputs here fails
  :func:`test_claims_functions_all_have_inputs`);
* a function's claims are every claim it gives on its inputs below (the synthetic rows,
  tables and curves of the studies' own tests, and the variants of them that break one
  property each) and every claim the stored summaries of ``results/`` carry for that study.

A claim is named by its id (:func:`claim_id`): its text, less the "MNIST, η=0.01: " where
the same check runs per data set and rate, and with ``<rule>`` for the rule's name where it
runs per update rule.  For every id, :data:`DIFFERS` names the input on which that claim's
check returns "differs"; :func:`test_claims_check_can_differ` runs it, one test per claim
(``pytest -k claims`` lists them all) and asserts the verdict, the criterion and the
number judged (for a check made per rule, one rule differing is enough).
:func:`test_claims_check_can_agree` asserts that the same check agrees on some input, and
:func:`test_claims_check_can_be_inconclusive` that a check able to say "inconclusive" (every
claim found so on an input here or in a stored summary, :data:`INCONCLUSIVE`) does so on its
input.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import json
import pkgutil
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rbmviz.reproduce
from rbmviz.reproduce import (_dc, cd_bias, dc_mnist, dc_small, tap_adatap, tap_dbm, tap_fig12,
                               tap_summary)
from rbmviz.reproduce import report
from rbmviz.reproduce.report import status
from test_reproduce_cd_bias import _row, _wd_row            # the studies' own synthetic inputs
from test_reproduce_dc import _small_rows
from test_reproduce_tap import _tap_case

RESULTS = Path(__file__).resolve().parents[1] / "results"


# ---------------------------------------------------------------------------- inputs
def _cd_bias():
    return {
        "paper-like": lambda: [_row("diag", 0.00138 * 1.2), _row("ball_1d", 0.02628 * 0.6)],
        # off the paper's numbers; a bias above the bound, a bound ≥ 1 and a large start
        "off": lambda: [_row("diag", 0.00138 * 1.3),
                        _row("ball_1d", 0.02628 * 0.4, le=False, peak=1.2),
                        _row("diag", 0.001, k=5, start=0.04)],
        "k and λ paper-like": lambda: [_wd_row("diag", 1, 0.0, 0.02, 10.0),
                                       _wd_row("diag", 2, 0.0, 0.01, 10.0),
                                       _wd_row("diag", 1, 0.001, 0.045, 8.0)],
        # k > 1 with a larger bound than k = 1, weight decay with a larger Δ
        "k and λ off": lambda: [_wd_row("diag", 1, 0.0, 0.02, 10.0),
                                _wd_row("diag", 2, 0.0, 0.03, 10.0),
                                _wd_row("diag", 1, 0.001, 0.025, 12.0)],
        "none": lambda: [],
    }


def _small(*changes, epochs=50_000.0):
    rows = _small_rows(epochs)
    for r in rows:
        for change in changes:
            change(r)
    return dc_small.claims(rows)


def _set(dataset, alg, eta=None, **kw):
    """A change of the rows of one data set and rule (at one rate, or every rate)."""
    def f(r):
        if r["dataset"] == dataset and r["algorithm"] == alg and eta in (None, r["learning_rate"]):
            r.update(kw)
    return f


def _dc_small():
    sb, bas = "shifting_bar", "bars_and_stripes"
    return {
        "paper-like": lambda: _small(),
        "short": lambda: _small(epochs=5000.0),
        "none": lambda: dc_small.claims([]),
        "CD leaves early": lambda: _small(_set(sb, "cd", 0.5, escape=5100.0)),
        "CD leaves before the DC rules": lambda: _small(_set(sb, "cd", escape=1000.0)),
        "CG matches early": lambda: _small(_set(sb, "cg", 0.5, reach_match=6200.0)),
        "CG escapes at 0.3": lambda: _small(_set(sb, "cg", 0.3, escape=6200.0)),
        "S-DCP depends on the rate": lambda: _small(_set(sb, "sdcp", 0.5, final=-2.6)),
        "CG ends far from the DC rules": lambda: _small(_set(bas, "cg", final=-3.9)),
        "CG 700 epochs later": lambda: _small(_set(bas, "cg", t90=1000.0)),
        "CD above the DC rules": lambda: _small(_set(bas, "cd", final=-3.4)),
        "no curve leaves": lambda: _small(*(_set(sb, a, escape=None)
                                            for a in ("cd", "pcd", "cg", "sdcp", "csdcp"))),
        "CG still rising": lambda: _small(_set(bas, "cg", best_at=50_000.0)),
    }


def _mnist_main(spread=True, lead=True, rising=False):
    """Study "main" on rows of the paper's length whose curves levelled off (or all rise)."""
    rows = [dict(dataset="mnist", learning_rate=0.01, algorithm=a, label=a, final=f, t90=t,
                 best_at=200.0 if a == "cd" or rising else 120.0, epochs=200.0)
            for a, f, t in [("cd", -203.8, 10.0), ("cg", -203.8, 10.0), ("csdcp", -198.7, 10.0)]]
    if not spread:
        rows = [dict(r, final=-200.0) for r in rows]
    if not lead:
        rows[2]["t90"] = 4.0
    return dc_mnist.claims(rows)


def _mnist_eta(slow=False):
    rows = [dict(dataset="mnist", learning_rate=e, algorithm=a, label=_dc.ALGORITHM_LABELS[a],
                 final=-200.0, t90=8.0, best_at=10.0, epochs=10.0, increasing=inc)
            for a in ("sdcp", "csdcp") for e, inc in [(0.001, 1.0), (0.01, 0.9), (0.1, 0.3)]]
    if slow:
        rows[1]["increasing"] = 0.4                   # S-DCP at 0.01 falls at most evaluations
    return dc_mnist.claims(rows, study="eta")


def _mnist_setting(study, finals=(-100.0, -105.0), best_at=100.0):
    """Studies "budget", "batch", "init": one rule at two values of the varied setting."""
    col, vals = {"budget": ("k_inner", (24, 2)), "batch": ("batch_size", (100, 1000)),
                 "init": ("initialisation", ("Init 1", "Init 4"))}[study]
    rows = [dict(dataset="mnist", learning_rate=0.01, algorithm="sdcp", label="S-DCP", final=f,
                 t90=10.0, best_at=best_at, epochs=200.0, **{col: v},
                 **({"d": 24 // v} if study == "budget" else {}))
            for v, f in zip(vals, finals)]
    return dc_mnist.claims(rows, study=study)


def _mnist_ssd(agree=True, epochs=250.0, rising=False):
    def row(a, final, t90=100.0, best=None, best_at=200.0):
        return dict(dataset="mnist", learning_rate=1e-4 if a == "ssd" else 0.01, algorithm=a,
                    label=_dc.ALGORITHM_LABELS[a], final=final, t90=t90,
                    best=final if best is None else best,
                    best_at=epochs if rising else min(best_at, epochs), epochs=epochs,
                    incomplete=0)
    rows = [row("cd", -95.0), row("cg", -93.0), row("csdcp", -88.0, t90=120.0),
            row("ssd", -89.0, t90=100.0, best=-87.0, best_at=180.0)]
    if not agree:
        rows[1]["final"] = -88.5                  # CG between SSD and CS-DCP: not "above the rest"
        rows[3].update(t90=130.0, best=-89.0)     # slower, no drop
    return dc_mnist.claims(rows, study="ssd")


def _mnist_ssd_rising(ssd_first=True, tie=False):
    """Study "ssd" while SSD and CS-DCP still rise: who first reaches the lower maximum."""
    first, second = (32.0, 32.0) if tie else (28.0, 36.0) if ssd_first else (36.0, 28.0)
    rows = [dict(dataset="mnist", learning_rate=lr, algorithm=a, label=_dc.ALGORITHM_LABELS[a],
                 final=f, t90=30.0, best=f, best_at=36.0, epochs=36.0, incomplete=0,
                 reach=reach, common_level=-180.0)
            for a, lr, f, reach in [("ssd", 0.003, -170.0, first),
                                    ("csdcp", 0.01, -180.0, second)]]
    return dc_mnist.claims(rows, study="ssd")


def _dc_mnist():
    return {
        "main, paper-like": lambda: _mnist_main(spread=False, lead=False),
        "main, spread and CG first": lambda: _mnist_main(),
        "eta, paper-like": lambda: _mnist_eta(),
        "eta, S-DCP falls at 0.01": lambda: _mnist_eta(slow=True),
        **{f"{s}, paper-like": functools.partial(_mnist_setting, s, (-100.0, -101.0))
           for s in ("budget", "batch", "init")},
        **{f"{s}, 5 nats apart": functools.partial(_mnist_setting, s)
           for s in ("budget", "batch", "init")},
        "ssd, paper-like": lambda: _mnist_ssd(),
        "ssd, off": lambda: _mnist_ssd(agree=False),
        "ssd rising, SSD first": lambda: _mnist_ssd_rising(),
        "ssd rising, CS-DCP first": lambda: _mnist_ssd_rising(ssd_first=False),
        "main, rising": lambda: _mnist_main(rising=True),
        **{f"{s}, rising": functools.partial(_mnist_setting, s, best_at=200.0)
           for s in ("budget", "batch", "init")},
        "ssd, off and rising": lambda: _mnist_ssd(agree=False, rising=True),
        "ssd, off and short": lambda: _mnist_ssd(agree=False, epochs=150.0),
        "ssd rising, a tie": lambda: _mnist_ssd_rising(tie=True),
    }


def _tap(model=None, den=None, sol=None):
    s, t = _tap_case()
    s["models"][0].update(model or {})
    if den is not None:
        den(t["denoising"])
    if sol is not None:
        t["solutions"] = sol(t["solutions"])
    return tap_summary.claims(s, t)


def _lower(method, p, by):
    def f(d):
        d.loc[(d.method == method) & np.isclose(d.p, p), "mcc"] -= by
    return f


def _one_band(t):
    return t.assign(free_energy=np.random.default_rng(1).normal(size=len(t)))


def _tap_summary():
    return {
        "paper-like": lambda: _tap(),
        "falls": lambda: _tap(dict(gain=-0.01)),
        "late gain": lambda: _tap(dict(gain_by_epoch_20=0.3)),
        "three at the start": lambda: _tap(dict(n_unique_first=3)),
        "no growth": lambda: _tap(dict(n_unique_last=1)),
        "explosion": lambda: _tap(dict(max_unique_fraction=0.268)),
        "free energy rises again": lambda: _tap(dict(free_energy_rises_again=True)),
        "one band": lambda: _tap(sol=_one_band),
        "poor recovery": lambda: _tap(den=_lower("tap", 0.05, 0.3)),
        "OPE better at 0.5": lambda: _tap(den=_lower("tap", 0.5, 0.4)),
        "far from 1-NN": lambda: _tap(den=_lower("tap", 0.45, 0.2)),
        "1-NN below the OPE": lambda: _tap(den=_lower("nn", 0.3, 0.3)),
        "untrained": lambda: _tap(dict(last_epoch=0)),
        "30 epochs": lambda: _tap(dict(last_epoch=30)),
        "epoch 0 not recorded": lambda: _tap(dict(first_epoch=1)),
        "two solutions": lambda: _tap(dict(n_unique_last=2)),
        "free energy falls little": lambda: _tap(dict(free_energy_last=19.5,
                                                      free_energy_trough=19.5)),
        "few solutions per epoch": lambda: _tap(sol=lambda t: t.iloc[:5]),
    }


def _fig12(kind):
    ep = np.arange(20.0)
    base = -200 + 100 * (1 - np.exp(-ep / 2))            # knee at about epoch 5
    late = np.linspace(0, 2, 20)
    tap, ais, spl = {
        "paper-like": (base + late + 1, base + late, base + late - 5),
        # past the knee the pseudo-likelihood falls while the others rise
        "apart past the knee": (base + late + 1, base + late,
                                base + 4 * np.exp(-ep / 2) - 2 * late),
        "TAP far from AIS": (base + late + 20, base + late, base + late),
        "TAP falls": (base[::-1], base, base),
        "short": (base[:4], base[:4], base[:4]),
    }[kind]
    ep = ep[:len(tap)]
    return tap_fig12.fig12_claims(pd.DataFrame(dict(epoch=ep, tap_ll=tap, ais_ll=ais, spl=spl)))


def _adatap(agree=True):
    final = {"tap_3": -100.0, "tap_100": -99.5, "adatap_3": -105.0, "adatap_100": -99.8}
    if agree:
        return tap_adatap.adatap_claims(final, {1: 800.0, 100: 1200.0}, 3)
    return tap_adatap.adatap_claims(dict(final, adatap_3=-99.0, tap_3=-101.0),
                                    {1: 800.0, 100: 20.0}, 3)


def _dbm(train=1e-2, test=1e-2, epochs=40):
    """Fig. 11's curves of a 2- and a 3-hidden-layer machine: the train and test TAP
    log-likelihoods per unit rise by ``train`` and ``test`` over ``epochs`` joint epochs."""
    ep = np.arange(0, epochs + 1, 10.0)
    t = ep / epochs
    curves = pd.DataFrame([dict(model=m, epoch=e, train_ll_per_unit=-0.2 + train * x,
                                test_ll_per_unit=-0.21 + test * x)
                           for m in ("784-500-1000", "784-500-500-1000")
                           for e, x in zip(ep, t)])
    return tap_dbm.dbm_claims(curves)


#: per claims function (``module.function``): named inputs, each a call returning its claims
INPUTS = {
    "cd_bias.claims": {k: (lambda f=f: cd_bias.claims(f())) for k, f in _cd_bias().items()},
    "dc_small.claims": _dc_small(),
    "dc_mnist_summary.claims": _dc_mnist(),
    "tap_summary.claims": _tap_summary(),
    "tap_fig12.fig12_claims": {k: functools.partial(_fig12, k) for k in
                               ("paper-like", "apart past the knee", "TAP far from AIS",
                                "TAP falls", "short")},
    "tap_adatap.adatap_claims": {"paper-like": lambda: _adatap(),
                                 "off": lambda: _adatap(agree=False)},
}
if hasattr(tap_dbm, "dbm_claims"):
    INPUTS["tap_dbm.dbm_claims"] = {"paper-like": lambda: _dbm(),
                                    "train falls": lambda: _dbm(train=-1e-2),
                                    "test flat": lambda: _dbm(test=1e-4),
                                    "20 joint epochs": lambda: _dbm(epochs=20)}

#: per claims function: for every claim id, the input on which its check returns "differs"
DIFFERS = {
    "cd_bias.claims": {
        "Diag: bound − bias after 50,000 iterations of CD-1 ≈ 0.00138 (within 25% here)": "off",
        "1DBall: bound − bias after 50,000 iterations of CD-1 ≈ 0.02628 (within 50% here)":
            "off",
        "Theorem 4: the bias never exceeds the bound (every run, every recorded iteration, "
        "every k and λ)": "off",
        "the bound is loose in the initial phase but always below one": "off",
        "the bias is small at the start (near-zero weights mix fast) and grows as the weights "
        "grow": "off",
        "the bound decreases with increasing k (Sec. 4)": "k and λ off",
        "weight decay keeps the parameters, and so Δ, small (Sec. 4)": "k and λ off",
    },
    "dc_small.claims": {
        "Shifting Bar: CD and PCD become stuck in a local optimum with ATLL ≈ −3.15 "
        "(η = 0.3 and 0.5)": "CD leaves early",
        "Shifting Bar: S-DCP and CS-DCP leave the local optimum before CD and PCD":
            "CD leaves before the DC rules",
        "Shifting Bar: CD, PCD and CG need more than 30,000 updates to reach an ATLL "
        "comparable to S-DCP/CS-DCP": "CG matches early",
        "Shifting Bar: CG escapes the local optimum only with η = 0.5": "CG escapes at 0.3",
        "Shifting Bar: S-DCP and CS-DCP reach almost the same ATLL for every learning rate "
        "(within 0.1 nats here)": "S-DCP depends on the rate",
        "Bars & Stripes: CS-DCP/S-DCP and CG reach almost the same ATLL (within 0.1 nats here)":
            "CG ends far from the DC rules",
        "Bars & Stripes: CG reaches 90 % of its maximum ATLL ≈ 2,500 epochs after CS-DCP":
            "CG 700 epochs later",
        "Bars & Stripes: CD and PCD end below S-DCP and CS-DCP (final ATLL)":
            "CD above the DC rules",
    },
    "dc_mnist_summary.claims": {
        "all algorithms reach almost the same ATLL at the end (within 2 nats here)":
            "main, spread and CG first",
        "CS-DCP reaches 90 % of its maximum ATLL before CG": "main, spread and CG first",
        "<rule> with a small learning rate raises the ATLL at most evaluations (Fig. 6a)":
            "eta, S-DCP falls at 0.01",
        "<rule> converges to the same ATLL whatever d and K′ (d·K′ fixed) (within 2 nats "
        "here)": "budget, 5 nats apart",
        "<rule> reaches almost the same ATLL whatever the batch size (within 2 nats here)":
            "batch, 5 nats apart",
        "<rule> is insensitive to the initialisation (within 2 nats here)": "init, 5 nats apart",
        "CS-DCP and SSD reach about the same ATLL (within 2 nats here), both above the other "
        "rules": "ssd, off",
        "SSD is slightly faster than CS-DCP (reaches 90 % of its maximum ATLL first)": "ssd, off",
        "SSD is slightly faster than CS-DCP (first to an ATLL both reach)":
            "ssd rising, CS-DCP first",
        "SSD shows divergence by the end of the run (its ATLL falls from its best; paper: "
        "visible by 250 epochs)": "ssd, off",
    },
    "tap_summary.claims": {
        "TAP log-likelihood rises during training": "falls",
        "most of the improvement comes by about epoch 20, then a steady, slower rate": "late gain",
        "one TAP solution at the start of training": "three at the start",
        "the number of unique solutions grows with training": "no growth",
        "no explosion of solutions": "explosion",
        "TAP free energy first increases, then slowly decreases": "free energy rises again",
        "two distinct free-energy bands at all epochs (binary-MNIST)": "one band",
        "(near-)exact recovery at small noise": "poor recovery",
        "TAP denoising beats the OPE at every noise level (N_h <= 100)": "OPE better at 0.5",
        "TAP approaches the 1-NN curve as p → 0.5 (N_h <= 100)": "far from 1-NN",
        "1-NN beats the OPE for p > 0.2": "1-NN below the OPE",
    },
    "tap_fig12.fig12_claims": {
        "TAP log-likelihood, AIS log-likelihood and pseudo-likelihood all increase during "
        "training": "TAP falls",
        "the three metrics move together past the knee": "apart past the knee",
        "the TAP log-likelihood is close to the AIS one": "TAP far from AIS",
    },
    "tap_dbm.dbm_claims": {
        "joint TAP training after pretraining raises the training images' TAP log-likelihood":
            "train falls",
        "joint TAP training after pretraining raises the test images' TAP log-likelihood":
            "test flat",
    },
    "tap_adatap.adatap_claims": {
        "adaTAP stopped after 3 iterations trains worst (Fig. 10)": "off",
        "every other solver trains comparably (Fig. 10)": "off",
        "adaTAP's time per iteration is about three orders of magnitude above TAP's (App. D)":
            "off",
    },
}


#: per claims function: for every claim whose check can be "inconclusive" (the run cannot
#: tell), the input on which it is
INCONCLUSIVE = {
    "dc_small.claims": {
        "Shifting Bar: CD and PCD become stuck in a local optimum with ATLL ≈ −3.15 "
        "(η = 0.3 and 0.5)": "short",
        "Shifting Bar: S-DCP and CS-DCP leave the local optimum before CD and PCD":
            "no curve leaves",
        "Shifting Bar: CD, PCD and CG need more than 30,000 updates to reach an ATLL "
        "comparable to S-DCP/CS-DCP": "short",
        "Shifting Bar: CG escapes the local optimum only with η = 0.5": "no curve leaves",
        "Bars & Stripes: CG reaches 90 % of its maximum ATLL ≈ 2,500 epochs after CS-DCP":
            "CG still rising",
    },
    "dc_mnist_summary.claims": {
        "all algorithms reach almost the same ATLL at the end (within 2 nats here)":
            "main, rising",
        "CS-DCP reaches 90 % of its maximum ATLL before CG": "main, rising",
        "<rule> converges to the same ATLL whatever d and K′ (d·K′ fixed) (within 2 nats "
        "here)": "budget, rising",
        "<rule> reaches almost the same ATLL whatever the batch size (within 2 nats here)":
            "batch, rising",
        "<rule> is insensitive to the initialisation (within 2 nats here)": "init, rising",
        "CS-DCP and SSD reach about the same ATLL (within 2 nats here), both above the other "
        "rules": "ssd, off and rising",
        "SSD is slightly faster than CS-DCP (reaches 90 % of its maximum ATLL first)":
            "ssd, off and rising",
        "SSD is slightly faster than CS-DCP (first to an ATLL both reach)": "ssd rising, a tie",
        "SSD shows divergence by the end of the run (its ATLL falls from its best; paper: "
        "visible by 250 epochs)": "ssd, off and short",
    },
    "tap_summary.claims": {
        "TAP log-likelihood rises during training": "untrained",
        "most of the improvement comes by about epoch 20, then a steady, slower rate":
            "30 epochs",
        "one TAP solution at the start of training": "epoch 0 not recorded",
        "the number of unique solutions grows with training": "two solutions",
        "TAP free energy first increases, then slowly decreases": "free energy falls little",
        "two distinct free-energy bands at all epochs (binary-MNIST)": "few solutions per epoch",
    },
    "tap_fig12.fig12_claims": {"the three metrics move together past the knee": "short"},
    "tap_dbm.dbm_claims": {
        "joint TAP training after pretraining raises the training images' TAP log-likelihood":
            "20 joint epochs",
        "joint TAP training after pretraining raises the test images' TAP log-likelihood":
            "20 joint epochs",
    },
}


# ---------------------------------------------------------------------------- enumeration
_LABELS = "|".join(re.escape(v) for v in sorted(_dc.ALGORITHM_LABELS.values(), key=len,
                                                 reverse=True))
_PER_RULE = re.compile(rf"^(?:{_LABELS}) (?=with a small learning rate|converges to the same"
                       rf"|reaches almost the same ATLL whatever|is insensitive)")


_PER_MODEL = re.compile(r" \(\d+-hidden-layer machine [^)]*\)$")


def claim_id(function: str, claim: str) -> str:
    """The id of a claim: its text, for the large-data claims (judged per data set and rate,
    and for a study's varied setting per rule) without the "MNIST, η=0.01: " in front and with
    ``<rule>`` for the rule's name; for the deep machines' claims (judged per model) without
    the model."""
    if function == "tap_dbm.dbm_claims":
        return _PER_MODEL.sub("", claim)
    if function != "dc_mnist_summary.claims":
        return claim
    return _PER_RULE.sub("<rule> ", claim.split(": ", 1)[1])


def claims_functions() -> list[str]:
    """``module.function`` of every public ``claims`` / ``*_claims`` function defined in a
    module of :mod:`rbmviz.reproduce`."""
    found = []
    for m in pkgutil.iter_modules(rbmviz.reproduce.__path__):
        mod = importlib.import_module(f"rbmviz.reproduce.{m.name}")
        for name, f in inspect.getmembers(mod, inspect.isfunction):
            if (name == "claims" or name.endswith("_claims")) and not name.startswith("_") \
                    and f.__module__ == mod.__name__:
                found.append(f"{m.name}.{name}")
    return sorted(found)


def _rejudge():
    spec = importlib.util.spec_from_file_location("rejudge", RESULTS / "rejudge.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: the study of a stored summary (``results/rejudge.py``'s names) -> its claims function
_STORED = {"cd-bias": "cd_bias.claims", "dc-small": "dc_small.claims",
           "dc-mnist": "dc_mnist_summary.claims", "tap": "tap_summary.claims",
           "adatap": "tap_adatap.adatap_claims", "dbm": "tap_dbm.dbm_claims",
           "fig12": "tap_fig12.fig12_claims"}


@functools.lru_cache(maxsize=None)
def stored_verdicts() -> dict:
    """``{function: {(claim id, status of its verdict), ...}}`` of the claims stored in
    ``results/**/summary.json``."""
    study = _rejudge().study
    out: dict = {}
    for path in sorted(RESULTS.glob("**/summary.json")):
        s = json.loads(path.read_text(encoding="utf-8"))
        fn = _STORED[study(path.parent, s)]
        out.setdefault(fn, set()).update((claim_id(fn, c["claim"]), report.status(v))
                                         for c, v in zip(s.get("claims", []),
                                                         rejudge_verdicts(s)))
    return out


def rejudge_verdicts(summary: dict) -> list[str]:
    """The verdicts of a stored summary's claims (older TAP rows carry ``holds``)."""
    return [r["verdict"] for r in report.claim_rows(summary)]


def stored_claims() -> dict:
    """``{function: {claim id, ...}}`` of the claims stored in ``results/**/summary.json``."""
    return {fn: {c for c, _ in v} for fn, v in stored_verdicts().items()}


@functools.lru_cache(maxsize=None)
def outputs(function: str, name: str) -> tuple:
    """The claims ``function`` gives on its input ``name``."""
    return tuple(INPUTS[function][name]())


def claim_ids(function: str) -> list[str]:
    """Every claim id ``function`` gives on its inputs or carries in a stored summary."""
    ids = set(stored_claims().get(function, ()))
    for name in INPUTS.get(function, {}):
        ids.update(claim_id(function, c["claim"]) for c in outputs(function, name))
    return sorted(ids)


ALL = [(f, c) for f in sorted(INPUTS) for c in claim_ids(f)]


# ---------------------------------------------------------------------------- tests
def test_claims_functions_all_have_inputs():
    """A claims function added to rbmviz.reproduce gets its inputs and differs cases here."""
    assert claims_functions() == sorted(INPUTS)


def test_claims_stored_in_results_are_all_enumerated():
    """Every study whose summaries results/ keeps is one of the functions enumerated here."""
    assert set(stored_claims()) <= set(INPUTS)


@pytest.mark.parametrize("function", sorted(INPUTS))
def test_claims_differs_cases_name_a_claim_the_function_gives(function):
    """No stale entry: every claim of DIFFERS is one the function gives (else its text
    changed and the case tests nothing)."""
    assert set(DIFFERS[function]) <= set(claim_ids(function))
    assert set(DIFFERS[function].values()) <= set(INPUTS[function])


@pytest.mark.parametrize(("function", "claim"), ALL, ids=[f"{f}: {c}" for f, c in ALL])
def test_claims_check_can_differ(function, claim):
    """The claim's check returns "differs" on its input, stating its criterion and the
    number it judged."""
    assert claim in DIFFERS[function], f"no input on which {function} says '{claim}' differs"
    case = DIFFERS[function][claim]
    rows = [c for c in outputs(function, case) if claim_id(function, c["claim"]) == claim]
    differs = [c for c in rows if status(c["verdict"]) == "differs"]
    assert differs, f"input {case!r} gives {[c['verdict'] for c in rows]} for {claim!r}"
    assert all(str(c["criterion"]).strip() and c["judged"] is not None for c in differs)


@pytest.mark.parametrize(("function", "claim"), ALL, ids=[f"{f}: {c}" for f, c in ALL])
def test_claims_check_can_agree(function, claim):
    """The same check returns "agrees" on some input: it tells cases apart rather than
    always saying "differs"."""
    assert any(status(c["verdict"]) == "agrees" for name in INPUTS[function]
               for c in outputs(function, name) if claim_id(function, c["claim"]) == claim)


INCONCLUSIVE_ALL = [(f, c) for f in sorted(INPUTS) for c in sorted(INCONCLUSIVE.get(f, {}))]


@pytest.mark.parametrize(("function", "claim"), INCONCLUSIVE_ALL,
                         ids=[f"{f}: {c}" for f, c in INCONCLUSIVE_ALL])
def test_claims_check_can_be_inconclusive(function, claim):
    """Where a run cannot tell (too short, still rising, too few solutions), the check says
    so: "inconclusive" on its input, with its criterion."""
    case = INCONCLUSIVE[function][claim]
    rows = [c for c in outputs(function, case) if claim_id(function, c["claim"]) == claim]
    assert any(status(c["verdict"]) == "inconclusive" for c in rows), \
        f"input {case!r} gives {[c['verdict'] for c in rows]} for {claim!r}"


@pytest.mark.parametrize("function", sorted(INPUTS))
def test_claims_seen_inconclusive_have_an_inconclusive_case(function):
    """Every claim found inconclusive on some input here or in a stored summary has its
    case in INCONCLUSIVE, and no entry there names a claim the function does not give."""
    seen = {c for c, v in stored_verdicts().get(function, ()) if v == "inconclusive"}
    seen |= {claim_id(function, c["claim"]) for name in INPUTS[function]
             for c in outputs(function, name) if status(c["verdict"]) == "inconclusive"}
    assert seen <= set(INCONCLUSIVE.get(function, {}))
    assert set(INCONCLUSIVE.get(function, {})) <= set(claim_ids(function))
