"""Judge the paper's claims again on the stored outputs of every results directory, with the
current checks, and render what is derived from each summary (claims tables, printed
summaries, the READMEs' generated blocks and numbers) — without training anything.

    python results/rejudge.py            # rewrite summaries' claims and derived files
    python results/rejudge.py --check    # list what would change; exit status 1 if anything

Per study, from what each directory keeps:

* cd-bias: the ``final`` rows of ``summary.json``;
* dc-small: ``records.csv`` (the quick form: the whole summary again) or the stored rows
  plus the trial-mean ``curves.csv`` (the full run, whose per-run records are not kept);
* dc-mnist: ``records.csv`` (the whole summary again);
* tap: the stored ``models`` / ``denoising`` rows and the run's ``solutions.csv`` and
  ``denoising.csv``; ``claims.md`` and ``summary.txt`` are rendered from the summary;
* the TAP-beyond studies (``rbmviz reproduce tap --study``): adatap (Fig. 10) from the
  summary's final pseudo-likelihoods and time ratios, dbm (Fig. 11) and fig12 (Fig. 12)
  from ``curves.csv``.

Then the results READMEs, the notebooks' Markdown cells and the documentation's own pages
are rendered again from their sources (:mod:`rbmviz.reproduce.report`).

Old and new verdicts are printed side by side.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from rbmviz.reproduce import (_io, cd_bias, dc_mnist, dc_small, report, tap_adatap, tap_dbm,
                               tap_fig12, tap_summary)

HERE = Path(__file__).resolve().parent


def _cd_bias(d, s):
    s["claims"] = cd_bias.claims(s["final"])
    return s


def _dc_small(d, s):
    if (d / "records.csv").is_file():
        new = dc_small.summarize(pd.read_csv(d / "records.csv"), settings=s.get("settings"),
                                 elapsed=s.get("elapsed_seconds"))
        return {**s, **{k: new[k] for k in ("final", "first_to_90", "claims", "paper", "notes")}}
    rows = s["final"]
    dc_small.curve_measures(rows, pd.read_csv(d / "curves.csv"))
    s["claims"] = dc_small.claims(rows)
    return s


def _dc_mnist(d, s):
    new = dc_mnist.summarize(pd.read_csv(d / "records.csv"), settings=s.get("settings"),
                             elapsed=s.get("elapsed_seconds"))
    return {**s, **{k: new[k] for k in ("final", "first_to_90", "claims", "paper", "notes")}}


def _tap(d, s):
    tables = {n: pd.read_csv(d / f"{n}.csv") for n in ("solutions", "denoising")
              if (d / f"{n}.csv").is_file()}
    curves = pd.read_csv(d / "curves.csv")
    for m in s["models"]:               # summaries older than the free-energy turn measures
        if "free_energy_turn_epoch" not in m:
            g = curves[curves["n_hidden"] == m["n_hidden"]].sort_values("epoch")
            m.update(tap_summary._free_energy_turns(g["epoch"].to_numpy(),
                                                    g["mean_free_energy"].to_numpy()))
    s["claims"] = tap_summary.claims(s, tables)
    return s


def _adatap(d, s):
    ratio = {int(b): r for b, r in s["time_ratio_adatap_over_tap"].items()}
    s["claims"] = tap_adatap.adatap_claims(s["final_pl"], ratio, min(s["settings"]["iterations"]))
    return s


def _dbm(d, s):
    s["claims"] = tap_dbm.dbm_claims(pd.read_csv(d / "curves.csv"))
    return s


def _fig12(d, s):
    s["claims"] = tap_fig12.fig12_claims(pd.read_csv(d / "curves.csv"))
    return s


def study(d: Path, s: dict) -> str:
    if "final_pl" in s:
        return "adatap"
    if "spearman" in s:
        return "fig12"
    if isinstance(s.get("models"), dict):       # the deep machines, by name
        return "dbm"
    if "models" in s:
        return "tap"
    settings = s.get("settings") or {}
    if "reps" in settings:
        return "cd-bias"
    if "study" in settings:
        return "dc-mnist"
    return "dc-small"


JUDGE = {"cd-bias": _cd_bias, "dc-small": _dc_small, "dc-mnist": _dc_mnist, "tap": _tap,
         "adatap": _adatap, "dbm": _dbm, "fig12": _fig12}


def _verdicts(s):
    return {c["claim"]: c.get("verdict") or {True: "agrees", False: "differs", None: "cannot tell"}[c["holds"]]
            for c in s.get("claims", [])}


def rejudge(d: Path, write: bool) -> list[str]:
    """Judge one directory again; returns what changed (and writes it when ``write``)."""
    path = d / "summary.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    kind = study(d, old)
    new = JUDGE[kind](d, json.loads(path.read_text(encoding="utf-8")))
    changes = []
    before, after = _verdicts(old), _verdicts(new)
    for claim, v in after.items():
        if before.get(claim) != v:
            changes.append(f"{d.relative_to(HERE)}: {claim}: {before.get(claim, '(new claim)')} -> {v}")
    for claim in before:
        if claim not in after:
            changes.append(f"{d.relative_to(HERE)}: {claim}: {before[claim]} -> (claim removed)")
    derived = {"summary.json": json.dumps(new, indent=2, default=_io.json_default) + "\n"}
    if (d / "claims.md").is_file():
        derived["claims.md"] = report.claims_markdown(report.claim_rows(new))
    if (d / "summary.txt").is_file() and kind == "tap":
        derived["summary.txt"] = tap_summary.format_summary(new) + "\n"
    for name, text in derived.items():
        if (d / name).read_text(encoding="utf-8") != text:
            if name != "summary.json" or not changes:
                changes.append(f"{d.relative_to(HERE)}/{name} rendered again")
            if write:
                (d / name).write_text(text, encoding="utf-8")
    return changes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only list what would change")
    ap.add_argument("dirs", nargs="*", help="results directories (default: every one)")
    a = ap.parse_args(argv)
    dirs = [Path(x).resolve() for x in a.dirs] or sorted(p.parent for p in HERE.glob("**/summary.json"))
    changes = []
    for d in dirs:
        changes += rejudge(d, write=not a.check)
    pages = [p for p in sorted((HERE.parent / "docs").rglob("*.md"))
             if not {"results", "notebooks", "_build", "jupyter_execute", "generated"}
             & set(p.relative_to(HERE.parent / "docs").parts)]
    docs = [*sorted(HERE.glob("*/README.md")), *sorted(HERE.parent.glob("notebooks/*.ipynb")),
            *pages]
    for doc in docs:
        out = report.check(doc) if a.check else report.render(doc)
        changes += [f"{doc.relative_to(HERE.parent)}: {x}" for x in out]
    print("\n".join(changes) if changes else "nothing to change")
    return 1 if (a.check and changes) else 0


if __name__ == "__main__":
    sys.exit(main())
