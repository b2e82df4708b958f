"""The README's performance tables, written from a bench run's results.

Reads ``bench/results/latest.json`` (``python -m bench [--quick]``) and, when present,
``bench/results/explorer_race_mnist.json`` (``python -m bench.bench_explorer --race mnist``),
and prints the tables, or with ``--write README.md`` replaces the block between
``<!-- generated: bench -->`` and ``<!-- end generated -->`` there.  It refuses a run whose
noise checks did not pass (other processes above 0.25 cores over the run, a hot path without
enough quiet rounds, a race without a quiet round): every figure in the tables comes from a
quiet run.  The results it wrote from are kept beside it as ``bench/readme_results.json``
(``tests/test_bench.py`` checks that the README's tables are theirs).

    python -m bench --quick && python -m bench.bench_explorer --race mnist
    python -m bench.readme --write README.md
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if __package__ in (None, ""):   # run as a script: make the project root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import RESULTS  # noqa: E402

BEGIN, END = "<!-- generated: bench -->", "<!-- end generated -->"
#: the results the README's tables were written from
STORED = Path(__file__).resolve().parent / "readme_results.json"
#: a run counts as quiet when other processes used at most this many cores over it
MAX_OTHER_CORES = 0.25


def _pct(x):
    return f"{100 * x:.0f} %"


def _ms(s):
    return f"{1e3 * s:.2f} ms" if s < 1 else f"{s:.2f} s"


def _verdict(value, target):
    return f"≥ {target} ({'met' if value else 'missed'})"


def floors_table(fl: dict) -> list[str]:
    """One row per hot path of ``bench_floors``: rbmviz, its floor, the fraction, its peers."""
    rows = ["| hot path | rbmviz | its GEMM floor | of floor | peers (their time ÷ rbmviz's) | target |",
            "|---|---|---|---|---|---|"]
    for title, rec in fl["paths"].items():
        names = list(rec["times_s"])
        path, floor, peers = names[0], names[1], names[2:]
        med = {n: rec["times_s"][n]["median"] for n in names}
        peer_txt = "; ".join(f"{p} {_ms(med[p])} ({rec['peers'][p]:.2f}×)" for p in peers
                             if rec["peers"].get(p) is not None)
        target = ""
        if rec.get("target") is not None:
            target = _verdict(rec.get("pass"), _pct(rec["target"]))
        if title == "PCD-1 float32" and fl.get("pcd_f32_vs_sklearn_f32") is not None:
            v = fl["pcd_f32_vs_sklearn_f32"]
            target += f"; ≥ 1.5× scikit-learn's float32 path ({'met' if v >= 1.5 else 'missed'}: {v:.2f}×)"
        if title == "exact log Z" and fl.get("exact_vs_numpy") is not None:
            v = fl["exact_vs_numpy"]
            target = f"≥ 10× numpy in batches of states ({'met' if v >= 10 else 'missed'}: {v:.1f}×)"
        rows.append(f"| {title}, {rec['what']} | {_ms(med[path])} | {_ms(med[floor])} | "
                    f"**{_pct(rec['fraction_of_floor'])}** | {peer_txt} | {target} |")
    return rows


def front_table(res: dict, race: dict | None) -> list[str]:
    """The front doors and the whole-job benchmarks, each against its target."""
    d, small, dc = res["defaults"], res["small"], res["dc"]
    tv, sv = d["train_vs_sklearn"], d["small_train_vs_numpy"]
    rows = ["| benchmark | rbmviz | peer | ratio | target |", "|---|---|---|---|---|"]
    rows.append(f"| `rbmviz.train` at its defaults, one 784×500 PCD-1 epoch of {d['rows']:,} binary "
                f"MNIST rows, batch 100, float64 input (`bench_defaults`) | {_ms(tv['rbmviz_s'])} | "
                f"scikit-learn `BernoulliRBM.fit` at its defaults: {_ms(tv['sklearn_s'])} | "
                f"**{tv['ratio']:.2f}×** | {_verdict(tv['ratio'] >= 2, '2×')} |")
    e, r = small["epochs_per_s"], small["ratios"]
    for alg in ("CD-12", "PCD-12"):
        v = r[f"{alg}: rbmviz train_epochs / numpy"]
        rows.append(f"| full-batch {alg}, 3×3 bars & stripes, 9×4 (`bench_small`) | "
                    f"{e[f'rbmviz {alg} train_epochs']:,.0f} epochs/s (through `train()`: "
                    f"{r[f'{alg}: rbmviz train() / numpy']:.1f}× numpy) | plain numpy: "
                    f"{e[f'numpy {alg} cd_epoch']:,.0f} epochs/s | **{v:.1f}×** | "
                    f"{_verdict(v >= 20, '20×')} |")
    rows.append(f"| `rbmviz.train` at its defaults, full-batch CD-12, bars & stripes, {sv['epochs']:,} "
                f"epochs with {sv['records']} records of the exact log-likelihood (`bench_defaults`) | "
                f"{_ms(sv['rbmviz_s'])} | plain numpy CD-12, no evaluation: {_ms(sv['numpy_s'])} | "
                f"{sv['ratio']:.1f}× | |")
    rows.append(f"| explorer-style `Run`, MNIST preset, `max_seconds=0.5` (`bench_defaults`) | "
                f"{d['stream']['records_per_s']:.1f} records/s, slowest `next` "
                f"{d['stream']['slowest_next_s']:.2f} s | | | ≥ 2 records/s |")
    if race is not None and race.get("median_points_per_s_per_curve") is not None:
        v = race["median_points_per_s_per_curve"]
        ups = sorted(min(x["updates_per_s"].values()) for x in race["rounds"])[len(race["rounds"]) // 2]
        rows.append(f"| the explorer's MNIST race in Chromium at its preset, CD-1 and PCD-1, 784×500 "
                    f"(`bench_explorer --race mnist`, median of {race['quiet_rounds']} quiet rounds) | "
                    f"**{v:.2f} points/s per curve** ({ups:.0f} updates/s per rule) | | | "
                    f"{_verdict(v >= 5, '5 points/s')} |")
    rp = dc["reproduction"]
    for name in ("sdcp", "csdcp", "cg", "ssd"):
        v = dc["per_algorithm"]["ratios"][f"{name}: fused / numpy"]
        rows.append(f"| full-batch {name}, same model, CPU time (`bench_dc`) | fused kernel | plain "
                    f"numpy, same rule | {v:.1f}× | |")
    rows.append(f"| Upadhya & Sastry's small-data reproduction (500 runs × 50,000 epochs, exact ATLL "
                f"every 500), projected on 2 processes (`bench_dc`) | {rp['rbmviz_minutes_2proc']:.1f} min | "
                f"plain numpy: {rp['numpy_minutes_2proc']:.0f} min | **{rp['ratio']:.1f}×** | "
                f"< 10 min ({'met' if rp['pass_minutes'] else 'missed'}), "
                f"{_verdict(rp['pass_ratio'], '20×')} |")
    t, tt = res["tap_inference"], res["tap_train"]
    tg = t["target"]
    rows.append(f"| TAP solve, 784×100, {tg['label']} (`bench_tap`) | {tg['seconds']:.1f} s | plain "
                f"numpy, same iteration, on a subset | {t['subset']['ratio']:.1f}× | |")
    rows.append(f"| one TAP training epoch, 60,000 binary MNIST images, M = K = 100, N_h = 100 "
                f"(`bench_tap_train`, {'measured' if tt['full'] else 'extrapolated from a timed fraction'}) | "
                f"{tt['rbmviz_epoch_s']:.1f} s | plain-numpy Alg. 2: {tt['numpy_epoch_s']:.1f} s | "
                f"{tt['ratio']:.2f}× | < {tt['target_s']:.0f} s ({'met' if tt['pass'] else 'missed'}) |")
    return rows


def check_quiet(res: dict, race: dict | None) -> list[str]:
    """Why the results cannot go into the README (empty when every noise check passed)."""
    why = []
    if res.get("other_cores") is None or res["other_cores"] > MAX_OTHER_CORES:
        why.append(f"other processes used {res.get('other_cores')} cores over the bench run")
    for title, rec in res["floors"]["paths"].items():
        if not rec["quiet"]:
            why.append(f"bench_floors {title}: {rec['why_noisy']}")
    if not res["defaults"].get("quiet"):
        why.append("bench_defaults: other processes used the cores")
    if race is not None and race.get("median_points_per_s_per_curve") is None:
        why.append("bench_explorer --race: no quiet round")
    return why


def render(res: dict, race: dict | None, cpu: str) -> str:
    """The block the README holds between :data:`BEGIN` and :data:`END`."""
    fl = res["floors"]
    mode = "`python -m bench --quick`" if res["quick"] else "`python -m bench`"
    lines = [BEGIN,
             f"From one run of {mode} ({res['time'][:10]}; {cpu}; 2 cores; other processes "
             f"{res['other_cores']:.2f} cores on average over the run, and each hot path's "
             f"rounds passed the noise check). Hot paths against their floors:", ""]
    lines += floors_table(fl)
    lines += ["", "The front doors and whole jobs:", ""]
    lines += front_table(res, race)
    lines.append(END)
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(RESULTS / "latest.json"))
    ap.add_argument("--race", default=str(RESULTS / "explorer_race_mnist.json"))
    ap.add_argument("--write", metavar="README", help="replace the generated block of this file")
    a = ap.parse_args(argv)
    res = json.loads(Path(a.results).read_text())
    race = json.loads(Path(a.race).read_text()) if Path(a.race).exists() else None
    why = check_quiet(res, race)
    if why:
        sys.exit("not quiet enough for the README:\n  " + "\n  ".join(why))
    from bench.bench_floors import cpu_model
    cpu = cpu_model()
    text = render(res, race, cpu)
    if not a.write:
        print(text)
        return
    path = Path(a.write)
    doc = path.read_text()
    if BEGIN not in doc or END not in doc:
        sys.exit(f"{path} has no {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(head + text + tail)
    STORED.write_text(json.dumps({"cpu": cpu, "bench": res, "race": race}, indent=1, default=str))
    print(f"wrote the performance tables into {path} (from {STORED.name})")


def block(path: str | Path) -> str:
    """The generated block of ``path`` (the README), markers included."""
    doc = Path(path).read_text()
    return BEGIN + doc.split(BEGIN, 1)[1].split(END, 1)[0] + END


if __name__ == "__main__":
    main()
