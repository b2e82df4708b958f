"""Runs cut off mid-way continue where they were: the sweep keeps a running run's state in its
store (``<run_id>.partial``) and a resumed sweep continues from it instead of from epoch 0 —
interrupted in-process (Ctrl-C in a callback) and killed outright (SIGKILL of a process-pool
sweep); the result equals the uninterrupted sweep's, bit for bit."""
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

import rbmviz
from rbmviz import sweep as sw
from rbmviz.sweep import sweep

TINY = {"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "init_scale": 0.5, "epochs": 30,
        "eval_every": 10, "learning_rate": 0.3, "k": 1}
# ~1–2 s of training per run on an idle core: long enough to kill mid-way
LONG = {"dataset": "shifting_bar", "N": 12, "B": 3, "n_hidden": 10, "init_scale": 0.5,
        "epochs": 40000, "eval_every": 2000, "learning_rate": 0.1, "k": 10}


def _same(a, b, **kw):
    pd.testing.assert_frame_equal(a.drop(columns=["seconds", "error"]).reset_index(drop=True),
                                  b.drop(columns=["seconds", "error"]).reset_index(drop=True), **kw)
    assert a.error.isna().all() and b.error.isna().all()


def _count_evaluations(monkeypatch):
    n = []
    original = rbmviz.runs.Run._evaluate_and_record

    def counted(self):
        n.append(self.epoch)
        return original(self)
    monkeypatch.setattr(rbmviz.runs.Run, "_evaluate_and_record", counted)
    return n


def test_interrupted_run_continues_from_its_state(tmp_path, monkeypatch):
    monkeypatch.setattr(sw._store, "PARTIAL_EVERY", 0.0)
    reference = sweep(TINY, algorithms="cd,pcd", trials=2, workers=0, progress=False)
    out = tmp_path / "sweep.csv"

    def on_record(spec, record):
        if spec.run_id == "t1-cd" and record["epoch"] == 10:
            raise KeyboardInterrupt
    with pytest.warns(RuntimeWarning, match="sweep interrupted"):
        sweep(TINY, algorithms="cd,pcd", trials=2, workers=0, progress=False, out=out,
              on_record=on_record)
    store = sw.store_path(out)
    partial = store / "t1-cd.partial"
    assert partial.exists() and not (store / "t1-cd.json").exists()
    kept = pickle.loads(partial.read_bytes())
    assert [r["epoch"] for r in kept["rows"]] == [0, 10]
    # no partial is left for a finished run
    assert sorted(p.name for p in store.iterdir()) == ["t0-cd.json", "t0-pcd.json", "t1-cd.partial"]

    evaluations = _count_evaluations(monkeypatch)
    seen = []
    resumed = sweep(TINY, algorithms="cd,pcd", trials=2, workers=0, progress=False, out=out,
                    resume=True, on_record=lambda s, r: seen.append((s.run_id, r["epoch"])))
    _same(resumed, reference)
    assert resumed.attrs["continued"] == {"t1-cd": 10} and resumed.attrs["resumed"] == 2
    _same(pd.read_csv(out), reference, check_dtype=False)
    # t1-cd continued after epoch 10 (records 20, 30), t1-pcd ran whole (0, 10, 20, 30)
    assert evaluations == [20, 30, 0, 10, 20, 30]
    assert seen[:2] == [("t1-cd", 0), ("t1-cd", 10)]     # its earlier rows arrive again
    assert sorted(p.name for p in store.iterdir()) == [f"t{t}-{a}.json" for t in (0, 1)
                                                       for a in ("cd", "pcd")]


def test_a_partial_of_other_settings_or_torn_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setattr(sw._store, "PARTIAL_EVERY", 0.0)
    out = tmp_path / "sweep.csv"
    specs = sw.plan(TINY, algorithms="cd", trials=1)
    other = sw.plan({**TINY, "learning_rate": 0.2}, algorithms="cd", trials=1)
    run = other[0].make_run()
    next(run)
    next(run)
    store = sw.store_path(out)
    store.mkdir()
    sw._store.write_partial(store / "t0-cd.partial", other[0], run.state(), [], {})
    assert sw._store.read_partial(store / "t0-cd.partial", specs[0]) is None
    (tmp_path / "torn.partial").write_bytes(b"\x80\x05not a pickle")
    assert sw._store.read_partial(tmp_path / "torn.partial", specs[0]) is None
    evaluations = _count_evaluations(monkeypatch)
    df = sw.run_specs(specs, workers=0, progress=False, out=out, resume=True)
    assert evaluations == [0, 10, 20, 30]               # started from epoch 0
    _same(df, sw.run_specs(specs, workers=0, progress=False))


def test_storing_a_run_removes_what_a_killed_writer_left(tmp_path):
    """SIGKILL while a kept state or a run file is written leaves its temporary file (the
    writer's clean-up never runs); storing the run removes them, and only that run's."""
    out = tmp_path / "sweep.csv"
    store = sw.store_path(out)
    store.mkdir()
    left = [store / ".t0-cd.partial.12345.tmp", store / ".t0-cd.json.777.tmp"]
    other = store / ".t0-pcd.partial.12345.tmp"
    for f in (*left, other):
        f.write_bytes(b"torn")
    sweep(TINY, algorithms="cd", trials=1, workers=0, progress=False, out=out, resume=True)
    assert not any(f.exists() for f in left) and other.exists()


def test_partial_needs_the_store_directory_to_exist_here(tmp_path):
    spec = sw.plan(TINY, algorithms="cd", trials=1)[0]
    run = spec.make_run()
    next(run)
    where = tmp_path / "elsewhere" / "sweep.runs" / "t0-cd.partial"
    sw._store.write_partial(where, spec, run.state(), [], {})   # a remote worker: nothing
    assert not where.parent.parent.exists()


def test_killed_process_pool_sweep_continues_its_runs(tmp_path):
    """SIGKILL of the whole sweep (parent and pool workers) while both runs are under way; the
    resumed sweep continues both from their kept states and ends as the uninterrupted one."""
    out = tmp_path / "sweep.csv"
    script = textwrap.dedent(f"""
        from rbmviz.sweep import sweep
        sweep({LONG!r}, algorithms="cd,pcd", trials=1, workers=2, progress=False,
              out={str(out)!r})
    """)
    env = dict(os.environ, RBMVIZ_PARTIAL_EVERY="0")    # the pool's workers inherit it
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    store = sw.store_path(out)
    deadline = time.monotonic() + 180
    rows = {}
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            for rid in ("t0-cd", "t0-pcd"):
                got = sw._store.read_partial(store / f"{rid}.partial",
                                             sw.plan(LONG, algorithms=rid[3:], trials=1)[0])
                if got is not None:
                    rows[rid] = len(got["rows"])
            if len(rows) == 2 and min(rows.values()) >= 3:
                break
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    err = proc.stderr.read().decode()
    assert len(rows) == 2 and min(rows.values()) >= 3, (rows, err[-2000:])
    assert not (store / "t0-cd.json").exists() and not (store / "t0-pcd.json").exists()
    done_before = {rid: pickle.loads((store / f"{rid}.partial").read_bytes())["rows"][-1]["epoch"]
                   for rid in rows}
    assert all(0 < e < LONG["epochs"] for e in done_before.values()), done_before
    kept = {rid: pickle.loads((store / f"{rid}.partial").read_bytes())["rows"] for rid in rows}
    resumed = sweep(LONG, algorithms="cd,pcd", trials=1, workers=2, progress=False, out=out,
                    resume=True)
    reference = sweep(LONG, algorithms="cd,pcd", trials=1, workers=0, progress=False)
    _same(resumed, reference)
    # continued, not restarted: the rows made before the kill come back with their own
    # measured times, and the later ones count on from them
    for rid, before in kept.items():
        got = resumed[resumed.run_id == rid]
        assert got.seconds.tolist()[:len(before)] == [r["seconds"] for r in before]
        assert got.seconds.is_monotonic_increasing
    assert sorted(p.name for p in store.iterdir()) == ["t0-cd.json", "t0-pcd.json"]


def test_partial_every_from_the_environment(monkeypatch):
    monkeypatch.delenv("RBMVIZ_PARTIAL_EVERY", raising=False)
    assert sw._store.partial_every() == sw._store.PARTIAL_EVERY == 60.0
    monkeypatch.setenv("RBMVIZ_PARTIAL_EVERY", "600")
    assert sw._store.partial_every() == 600.0
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv("RBMVIZ_PARTIAL_EVERY", bad)
        with pytest.raises(ValueError, match="RBMVIZ_PARTIAL_EVERY=.*seconds"):
            sw._store.partial_every()


def test_replayed_epochs_do_not_count_towards_the_time_left():
    """A continued run's earlier rows arrive at once: they fill the bar but not the rate."""
    specs = sw.plan(TINY, algorithms="cd,pcd", trials=1)       # 2 runs × 30 epochs
    bar = sw._store._Progress(specs, 0, 0)
    try:
        col = sw._store._Collector(specs, None, bar, sw._store._Output(None, False))
        col.record(0, 0, {"epoch": 0})
        col.record(0, 1, {"epoch": 20}, True)                  # replayed from a kept state
        assert bar.n == 20 and bar.eta() == float("inf")      # nothing trained in this sitting
        time.sleep(0.05)
        col.record(0, 2, {"epoch": 30})
        left = bar.eta()
        elapsed = time.monotonic() - bar.start
        assert left == pytest.approx((60 - 30) / (10 / elapsed), rel=0.2)
    finally:
        bar.close()


def test_command_line_says_which_runs_continued(tmp_path, capsys, monkeypatch):
    """``rbmviz sweep --resume`` names the runs it continued and the epoch they continued from."""
    from rbmviz import cli
    monkeypatch.setenv("RBMVIZ_PARTIAL_EVERY", "0")
    out = tmp_path / "sweep.csv"
    args = ["sweep", "--dataset", "bars_and_stripes", "--D", "2", "--n-hidden", "3",
            "--init-scale", "0.5", "--epochs", "30", "--eval-every", "10", "--k", "1",
            "--learning-rate", "0.3", "--algorithms", "cd", "--trials", "1", "--workers", "0",
            "--out", str(out)]
    spec = sw.plan(TINY, algorithms="cd", trials=1)[0]
    run = spec.make_run()
    rows = [sw._execute._row(next(run)) for _ in range(3)]          # epochs 0, 10, 20
    store = sw.store_path(out)
    store.mkdir()
    sw._store.write_partial(store / f"{spec.run_id}.partial", spec, run.state(), rows, {})
    assert cli.main(args + ["--resume"]) == 0
    text = capsys.readouterr().out
    assert "1 run(s) continued from their kept state (t0-cd from epoch 20)" in text
    ref = sweep(TINY, algorithms="cd", trials=1, workers=0, progress=False)
    _same(pd.read_csv(out), ref, check_dtype=False)


def test_a_kept_state_that_cannot_be_restored_fails_the_run_with_a_way_out(tmp_path):
    spec = sw.plan(TINY, algorithms="cd", trials=1)[0]
    run = spec.make_run()
    next(run)
    state = run.state()
    state["fingerprint"] = dict(state["fingerprint"], settings="[('k', 99)]")   # another version
    path = tmp_path / "sweep.runs" / "t0-cd.partial"
    path.parent.mkdir()
    sw._store.write_partial(path, spec, state, [], {})
    rows, status, error, _ = sw._execute._execute(spec, partial=path)
    assert status == "failed" and rows == []
    assert "cannot continue t0-cd from its kept state" in error
    assert "delete that file to run it from epoch 0" in error
