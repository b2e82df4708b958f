"""The served explorer under a long run: time to the first streamed point, plot updates per
second seen by the browser, and the server's memory over time.

Starts ``panel serve apps/explorer.py`` on a free port, opens it in headless Chromium
(Debian's ``/usr/bin/chromium``), presses Start with "Full speed" on (bars & stripes 3×3,
CD and PCD), counts how often the streamed curves change in the browser, and samples the
server's resident memory every ``--every`` seconds for ``--minutes`` minutes.

    python -m bench.bench_explorer --minutes 10

``--race DATASET`` drives the race tab in Chromium at a data set's preset (a fresh server with
the warm-up script, the data set picked in the sidebar as a lecturer does, Start) and reports
the points per second per curve that reach the page while the race runs (from 3 s after the
first point until the race ends or ``--seconds`` pass), beside the CPU that other processes
used meanwhile; ``--rounds`` repeats it on fresh pages and takes the median.

    python -m bench.bench_explorer --race mnist --rounds 3

``--tap SECONDS`` measures instead the TAP landscape engine headless, at the tab's defaults on
binary MNIST (784×100, M = K = 100, 2,000 images): mini-batch updates per second of
:class:`rbmviz.live.tap.TapRace` (training + the run loop's evaluation solves + landscape
snapshots), beside its peer in the same process, the bare ``TAP.update`` loop on the same
batches (the ratio is the share of time the live engine spends training).

    python -m bench.bench_explorer --tap 30

``--tap-browser SECONDS`` drives the TAP tab in Chromium at its defaults (a page opened on
``?tab=tap``, Start (TAP)) and reports the mini-batch updates per second that reach the page.

    python -m bench.bench_explorer --tap-browser 60
"""
from __future__ import annotations

import argparse
import contextlib
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COUNT_JS = """() => { let n = 0; for (const m of Bokeh.documents[0].all_models) {
  if (typeof m.name === 'string' && m.name.startsWith('curve:') && m.data) {
    const d = m.data; const v = (d instanceof Map) ? d.get('value') : d['value']; n += v ? v.length : 0; } }
  return n; }"""
#: the browser counts every change of the curves' data sources
HOOK_JS = """() => { window.__updates = 0; for (const m of Bokeh.documents[0].all_models) {
  if (typeof m.name === 'string' && m.name.startsWith('curve:')) {
    m.streaming.connect(() => { window.__updates += 1; });
    m.change.connect(() => { window.__updates += 1; }); } } }"""


@contextlib.contextmanager
def _served(setup: bool = False):
    """``panel serve apps/explorer.py`` on a free loopback port (with the warm-up script when
    ``setup``); yields ``(port, process)`` once ``/liveness`` answers, stops it afterwards."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [sys.executable, "-m", "panel", "serve", str(ROOT / "apps" / "explorer.py"),
            "--port", str(port), "--address", "127.0.0.1",
            f"--allow-websocket-origin=127.0.0.1:{port}", "--liveness"]
    if setup:
        args += ["--setup", str(ROOT / "apps" / "warmup.py")]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(10)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--every", type=float, default=30.0, help="seconds between memory samples")
    ap.add_argument("--tap", type=float, default=None, metavar="SECONDS",
                    help="measure the TAP landscape engine for SECONDS instead (headless)")
    ap.add_argument("--tap-browser", type=float, default=None, metavar="SECONDS",
                    help="measure the TAP tab in Chromium at its defaults for SECONDS: "
                         "mini-batch updates per second as the page shows them")
    ap.add_argument("--race", default=None, metavar="DATASET",
                    help="measure the race tab in Chromium at DATASET's preset: points per "
                         "second per curve as the page shows them")
    ap.add_argument("--seconds", type=float, default=40.0,
                    help="--race: the longest measuring window of a round")
    ap.add_argument("--rounds", type=int, default=3, help="--race: rounds (fresh pages)")
    args = ap.parse_args(argv)
    if args.race is not None:
        return bench_race_browser(args.race, args.seconds, args.rounds)
    if args.tap is not None:
        return bench_tap(args.tap)
    if args.tap_browser is not None:
        return bench_tap_browser(args.tap_browser)
    from playwright.sync_api import sync_playwright

    out = {"samples": []}
    with _served() as (port, proc):
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                  args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/explorer?max_speed=true&epochs=0")
            page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle",
                                   timeout=60_000)
            page.evaluate(HOOK_JS)
            t0 = time.time()
            page.get_by_role("button", name=re.compile("Start")).click()
            page.wait_for_function(f"() => ({COUNT_JS})() > 0", timeout=60_000)
            out["first_point_s"] = time.time() - t0
            start, last_u = time.time(), page.evaluate("() => window.__updates")
            while time.time() - start < args.minutes * 60:
                time.sleep(args.every)
                u = page.evaluate("() => window.__updates")
                sample = {"t_s": round(time.time() - start, 1), "server_rss_mb": round(rss_mb(proc.pid), 1),
                          "points": page.evaluate(COUNT_JS),
                          "curve_updates_per_s": round((u - last_u) / args.every, 2)}
                last_u = u
                out["samples"].append(sample)
                print(sample, flush=True)
            b.close()
    rss = [s["server_rss_mb"] for s in out["samples"]]
    out["summary"] = {"first_point_s": round(out["first_point_s"], 2),
                      "rss_first_mb": rss[0], "rss_last_mb": rss[-1], "rss_max_mb": max(rss),
                      "median_curve_updates_per_s": sorted(s["curve_updates_per_s"] for s in out["samples"])[len(rss) // 2]}
    print(json.dumps(out["summary"], indent=1))
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "explorer.json").write_text(json.dumps(out, indent=1))


#: the newest race's curves: {rule: [points, last update]}
RACE_JS = """() => { let best = -1; const out = {};
  for (const m of Bokeh.documents[0].all_models) {
    if (typeof m.name !== 'string' || !m.name.startsWith('curve:') || !m.data) continue;
    const id = parseInt(m.name.split(':')[1]); if (id > best) best = id; }
  for (const m of Bokeh.documents[0].all_models) {
    if (typeof m.name !== 'string' || !m.name.startsWith(`curve:${best}:`) || !m.data) continue;
    const d = m.data; const u = Array.from(((d instanceof Map) ? d.get('updates') : d['updates']) || []);
    out[m.name.split(':')[2]] = [u.length, u.length ? u[u.length - 1] : -1]; }
  return out; }"""
#: the sidebar's select titled ``Dataset`` set to a value (the race tab builds a new race)
PICK_JS = """(value) => { for (const m of Bokeh.documents[0].all_models) {
  if (m.title === 'Dataset' && 'options' in m) { m.value = value; return true; } }
  return false; }"""


def _busy_jiffies():
    """``(busy jiffies of the machine, jiffies of this process tree and of Chromium)``:
    their difference over a window is what other processes used."""
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    busy = sum(v) - v[3] - (v[4] if len(v) > 4 else 0)
    ours, me = 0, str(Path("/proc/self").resolve().name)
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            f = stat.rsplit(")", 1)[1].split()
            cmd = (d / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if d.name == me or f[1] == me or b"chromium" in cmd or b"playwright" in cmd \
                or b"panel\x00serve" in cmd \
                or name.startswith("chrom"):
            ours += int(f[11]) + int(f[12])
    return busy, ours


#: a race round counts only when other processes used at most this many cores meanwhile
MAX_OTHER_CORES = 0.25


def bench_race_browser(dataset: str, seconds: float = 40.0, rounds: int = 3) -> dict:
    """The race tab served and driven in Chromium at ``dataset``'s preset, ``rounds`` times
    on fresh pages of one server: points per second per curve while the race runs, and the
    cores other processes used meanwhile; the median round is printed and saved."""
    import os
    from playwright.sync_api import sync_playwright
    hz = os.sysconf("SC_CLK_TCK")
    res = []
    with _served(setup=True) as (port, _):
        time.sleep(20)                                   # the server's warm-up
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                  args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            for _ in range(rounds):
                page = b.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"http://127.0.0.1:{port}/explorer")
                page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0 && "
                                       "Bokeh.documents[0].is_idle", timeout=120_000)
                before = page.evaluate(RACE_JS)
                if not page.evaluate(PICK_JS, dataset):
                    raise RuntimeError("no select titled 'Dataset' on the page")
                page.wait_for_function(f"() => JSON.stringify(({RACE_JS})()) !== "
                                       f"{json.dumps(json.dumps(before))}", timeout=120_000)
                page.get_by_role("button", name=re.compile("Start")).first.click()
                page.wait_for_function(f"() => Object.values(({RACE_JS})()).every(v => v[0] >= 2)",
                                       timeout=120_000)
                time.sleep(3.0)
                t0, a, j0 = time.time(), page.evaluate(RACE_JS), _busy_jiffies()
                t1, z, j1 = t0, a, j0
                while time.time() - t0 < seconds:
                    time.sleep(1.0)
                    now, cur, j = time.time(), page.evaluate(RACE_JS), _busy_jiffies()
                    if cur == z:                         # no new point for a second: finished
                        break
                    t1, z, j1 = now, cur, j
                page.close()
                dt = t1 - t0
                if dt <= 0:
                    raise RuntimeError("the race streamed no point after its first ones")
                other = ((j1[0] - j0[0]) - (j1[1] - j0[1])) / hz / dt
                rnd = {"seconds": round(dt, 1),
                       "points_per_s": {k: round((z[k][0] - a[k][0]) / dt, 2) for k in z},
                       "updates_per_s": {k: round((z[k][1] - a[k][1]) / dt, 1) for k in z},
                       "other_cores": round(max(0.0, other), 2)}
                print(rnd, flush=True)
                res.append(rnd)
            b.close()
    quiet = [r for r in res if r["other_cores"] <= MAX_OTHER_CORES]
    per_round = sorted(min(r["points_per_s"].values()) for r in quiet)
    out = {"dataset": dataset, "rounds": res, "quiet_rounds": len(quiet),
           "median_points_per_s_per_curve": per_round[len(quiet) // 2] if quiet else None,
           "max_other_cores": max(r["other_cores"] for r in res), "target_points_per_s": 5.0}
    if not quiet:
        print(f"NOISY: every round saw other processes use more than {MAX_OTHER_CORES} cores; "
              "no rate reported (rerun on a quiet machine)")
    print(json.dumps({k: v for k, v in out.items() if k != "rounds"}, indent=1))
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / f"explorer_race_{dataset}.json").write_text(json.dumps(out, indent=1))
    return out


#: the newest TAP race's (updates, epoch) of its last streamed point
TAP_UPDATES_JS = """() => { let best = [-1, null];
  for (const m of Bokeh.documents[0].all_models) {
    if (typeof m.name !== 'string' || !m.name.startsWith('curve-tap:') || !m.data) continue;
    const id = parseInt(m.name.split(':')[1]); const d = m.data;
    const u = Array.from(((d instanceof Map) ? d.get('updates') : d['updates']) || []);
    if (id >= best[0] && u.length) best = [id, u[u.length - 1]]; }
  return best[1]; }"""


def bench_tap_browser(seconds: float, query: str = "") -> dict:
    """The TAP tab served and driven in Chromium at its defaults (a fresh server with the
    warm-up script): after Start (TAP), the mini-batch updates per second that reach the page's
    curves over ``seconds`` (after a 10 s lead-in), printed and saved."""
    from playwright.sync_api import sync_playwright
    with _served(setup=True) as (port, _):
        time.sleep(30)                                   # the server's warm-up
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                  args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = b.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"http://127.0.0.1:{port}/explorer?tab=tap" + query)
            start = page.get_by_role("button", name=re.compile(r"Start \(TAP\)"))
            start.wait_for(timeout=120_000)
            start.click()
            time.sleep(10)
            u0, t0 = page.evaluate(TAP_UPDATES_JS) or 0, time.time()
            time.sleep(seconds)
            u1, t1 = page.evaluate(TAP_UPDATES_JS) or 0, time.time()
            b.close()
        out = {"seconds": round(t1 - t0, 1), "updates": u1 - u0,
               "updates_per_s": round((u1 - u0) / (t1 - t0), 2)}
    print(json.dumps(out, indent=1))
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "explorer_tap_browser.json").write_text(json.dumps(out, indent=1))
    return out


def bench_tap(seconds: float) -> dict:
    """TAP updates per second of the live engine vs the bare TAP update (same process)."""
    from rbmviz import algorithms
    from rbmviz.live.tap import TapRace, TapSettings
    from rbmviz.model import RBM

    settings = TapSettings()                       # the tab's defaults: MNIST 784×100, M = 100
    race = TapRace(settings)
    race.step()                                    # the initial record and landscape
    u0, t0 = race.updates, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        race.step()
    live = (race.updates - u0) / (time.perf_counter() - t0)
    rbm = RBM(race.data.shape[1], settings.n_hidden, init="normal", scale=1e-3, seed=0,
              data=race.data)
    alg = algorithms.create("tap", **race._algorithm_settings())
    alg.setup(rbm, race.data, settings.batch_size)
    M, n, t0 = settings.batch_size, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds / 2:
        i = n % (len(race.data) // M)
        alg.update(rbm, race.data[i * M:(i + 1) * M])
        n += 1
    bare = n / (time.perf_counter() - t0)
    out = {"tap_live_updates_per_s": round(live, 2), "tap_bare_updates_per_s": round(bare, 2),
           "live_over_bare": round(live / bare, 3), "target_updates_per_s": 5.0,
           "n_hidden": settings.n_hidden, "batch": M, "rows": len(race.data)}
    print(json.dumps(out, indent=1))
    race.stop()
    return out


if __name__ == "__main__":
    main()
