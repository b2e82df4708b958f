"""A CLI training run and a sweep killed (SIGKILL) while they write: the same command, rerun
with --overwrite / --resume, succeeds, and nothing the user had before is lost.

The processes are real ``rbmviz`` commands in subprocesses.  Some kill themselves at an exact
point of a write (half of a model on disk, or every byte written but not yet renamed), which a
poll from outside cannot hit reliably; a sweep is also killed from outside at a moment found by
polling its files.  No assertion depends on how fast the machine is."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rbmviz
from rbmviz import cli

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

#: seconds a subprocess may take (generous: the machine may be loaded)
TIMEOUT = 180

#: ``python -c`` program: the rbmviz command of its arguments, which SIGKILLs itself at the
#: point named by RBMVIZ_TEST_KILL_AT:
#:   "model-half"      -- half of the model's archive written to its temporary file
#:   "commit:SUFFIX:N" -- the N-th file ending in SUFFIX completely written, before its rename
_RUNNER = r"""
import os, signal, sys
from rbmviz import _files, model

def die():
    os.kill(os.getpid(), signal.SIGKILL)

kill_at = os.environ.get("RBMVIZ_TEST_KILL_AT", "")
if kill_at == "model-half":
    import io
    write = model.RBM._write_npz
    def half(self, fh):
        buf = io.BytesIO()
        write(self, buf)
        data = buf.getvalue()
        fh.write(data[: len(data) // 2])
        fh.flush()
        os.fsync(fh.fileno())
        die()
    model.RBM._write_npz = half
elif kill_at.startswith("commit:"):
    _, suffix, nth = kill_at.split(":")
    seen = []
    commit = _files._commit
    def dying_commit(tmp, path, *args):
        if path.name.endswith(suffix):
            seen.append(path)
            if len(seen) == int(nth):
                die()
        return commit(tmp, path, *args)
    _files._commit = dying_commit
from rbmviz.cli import main
sys.exit(main(sys.argv[1:]))
"""

TRAIN = ["train", "--dataset", "bars_and_stripes", "--algorithm", "pcd", "--k", "3",
         "--learning-rate", "0.3", "--epochs", "20", "--eval-every", "5", "--quiet"]
SWEEP = ["sweep", "--algorithms", "cd,pcd", "--trials", "2", "--workers", "0",
         "--dataset", "bars_and_stripes", "--epochs", "200", "--eval-every", "20", "--quiet",
         "--checkpoints", "100,200"]


def _env(**extra):
    return {**os.environ, "RBMVIZ_DEBUG": "1", **extra}


def _killed_by_itself(args, kill_at, **env):
    """Run ``args`` until it SIGKILLs itself at ``kill_at``."""
    res = subprocess.run([sys.executable, "-c", _RUNNER, *args], capture_output=True, text=True,
                         timeout=TIMEOUT, env=_env(RBMVIZ_TEST_KILL_AT=kill_at, **env))
    assert res.returncode == -signal.SIGKILL, (res.returncode, res.stderr[-2000:])


def _killed_from_outside(args, ready, **env):
    """Start ``python -m rbmviz args``, SIGKILL it as soon as ``ready()`` holds; its exit code
    (-SIGKILL, or 0 if it finished before the poll saw ``ready``)."""
    proc = subprocess.Popen([sys.executable, "-m", "rbmviz", *args], env=_env(**env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while proc.poll() is None and not ready():
            assert time.monotonic() < deadline, "the command never reached the kill point"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (-signal.SIGKILL, 0), err[-2000:]
    return proc.returncode


def _rerun(args, **env):
    res = subprocess.run([sys.executable, "-m", "rbmviz", *args], capture_output=True, text=True,
                         timeout=TIMEOUT, env=_env(**env))
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def _snapshot(d: Path) -> dict:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _temps(d: Path) -> list:
    return [p for p in d.rglob("*.tmp")]


def _rows(path: Path) -> list:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _whole_run_files(out: Path, old: dict) -> None:
    """Each of a run's files is the old one, byte for byte, or a complete new one."""
    for name in ("model.npz", "settings.json", "records.csv"):
        data = (out / name).read_bytes()
        if data == old[name]:
            continue
        if name == "model.npz":
            rbmviz.RBM.load(out / name)
        elif name == "settings.json":
            assert json.loads(data)["seed"] == 2
        else:
            assert [int(r["epoch"]) for r in _rows(out / name)] == [0, 5, 10, 15, 20]


def test_a_killed_overwrite_run_never_blocks_the_next_one_and_loses_nothing(tmp_path):
    keep, out, clean = tmp_path / "keep", tmp_path / "run", tmp_path / "clean"
    assert cli.main([*TRAIN, "--seed", "1", "--out", str(keep)]) == 0     # the user's model
    assert cli.main([*TRAIN, "--seed", "1", "--out", str(out)]) == 0      # a previous run
    kept, old = _snapshot(keep), _snapshot(out)
    again = [*TRAIN, "--seed", "2", "--overwrite", "--out", str(out)]

    # killed with half of the new model on disk: the old files are untouched, the torn model
    # is a temporary file; then killed with all of it written but not yet renamed
    _killed_by_itself(again, "model-half")
    assert {k: v for k, v in _snapshot(out).items() if k in old} == old
    assert [p.name.startswith(".model.npz.") for p in _temps(out)] == [True]
    _killed_by_itself(again, "commit:model.npz:1")
    _whole_run_files(out, old)

    # the same command as the first kills, rerun: it succeeds, with nothing stale left over
    res = _rerun(again)
    assert "error" not in res.stderr.lower()
    assert sorted(p.name for p in out.iterdir()) == ["model.npz", "records.csv", "settings.json"]
    assert _temps(out) == []
    assert cli.main([*TRAIN, "--seed", "2", "--out", str(clean)]) == 0
    assert rbmviz.RBM.load(out / "model.npz") == rbmviz.RBM.load(clean / "model.npz")
    new, fresh = _snapshot(out), _snapshot(clean)
    assert new["settings.json"] == fresh["settings.json"]
    drop = lambda rows: [{k: v for k, v in r.items() if k != "wall_time"} for r in rows]  # noqa: E731
    assert drop(_rows(out / "records.csv")) == drop(_rows(clean / "records.csv"))
    assert _snapshot(keep) == kept                                        # never touched


def _frame(path: Path) -> pd.DataFrame:
    return pd.read_csv(path).drop(columns=["seconds"])


def test_a_killed_sweep_resumes_to_the_same_results_and_keeps_its_stored_runs(tmp_path):
    keep = tmp_path / "keep.npz"
    rbmviz.RBM(4, 3, seed=0).save(keep)
    kept = keep.read_bytes()
    out = tmp_path / "sw" / "sweep.csv"
    store = rbmviz.sweep.store_path(out)
    args = [*SWEEP, "--out", str(out)]
    env = {"RBMVIZ_PARTIAL_EVERY": "0"}          # a kept state at every record

    # killed with the second run's file written but not renamed: the first run is stored
    _killed_by_itself(args, "commit:.json:2", **env)
    stored = {p.name: p.read_bytes() for p in store.glob("*.json")}
    assert len(stored) == 1 and _temps(store)
    assert out.exists() and len(_frame(out))                    # a whole CSV (the first run)

    # resumed, and killed from outside once another run is stored
    code = _killed_from_outside([*args, "--resume"], lambda: len(list(store.glob("*.json"))) >= 2,
                                **env)
    assert code in (-signal.SIGKILL, 0)
    assert {p.name: p.read_bytes() for p in store.glob("*.json") if p.name in stored} == stored

    # the same command, resumed again: it completes every run
    _rerun([*args, "--resume"], **env)
    got = _frame(out)
    assert set(got["status"]) == {"ok"} and got["run_id"].nunique() == 4
    assert got.groupby("run_id")["epoch"].max().tolist() == [200] * 4
    for run_id, epochs in rbmviz.sweep.checkpoints(out).items():
        assert sorted(epochs) == [100, 200], run_id
        for path in epochs.values():
            rbmviz.RBM.load(path)
    assert {p.name: p.read_bytes() for p in store.glob("*.json") if p.name in stored} == stored
    assert _temps(out.parent) == [] and not list(store.glob("*.partial"))
    assert keep.read_bytes() == kept

    # the results are those of a sweep that was never killed
    clean = tmp_path / "clean" / "sweep.csv"
    assert cli.main([*SWEEP, "--out", str(clean)]) == 0
    pd.testing.assert_frame_equal(got, _frame(clean))
