"""`rbmviz sweep --scheduler` the way users run it: a `dask scheduler` and a `dask worker`
started as separate processes on the loopback address, one worker killed mid-sweep; and the
resumable run store (every finished run written at once, a re-run skips it)."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from rbmviz.sweep import load_store, plan, run_specs, store_path

ROOT = Path(__file__).resolve().parents[1]
# runs of a few seconds each (loaded 2-core machine: longer), so that a worker dies mid-run
LONG = {"dataset": "shifting_bar", "N": 12, "B": 3, "n_hidden": 10, "init_scale": 0.5,
        "epochs": 60000, "eval_every": 6000, "learning_rate": 0.1, "k": 10}
FLAGS = ["--dataset", "shifting_bar", "--N", "12", "--B", "3", "--n-hidden", "10",
         "--init-scale", "0.5", "--epochs", "60000", "--eval-every", "6000",
         "--learning-rate", "0.1", "--k", "10", "--algorithms", "cd,pcd", "--trials", "2"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    return dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
                OPENBLAS_NUM_THREADS="1",
                PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _stop(p):
    """End a process group this test started (by its id), then reap it."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait(timeout=30)


@pytest.fixture
def cluster(tmp_path):
    """A `dask scheduler` and a `dask worker --nworkers 2` as separate processes (loopback,
    free port); yields (address, client)."""
    distributed = pytest.importorskip("distributed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    try:
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--no-dashboard"], env=_env(), start_new_session=True,
            stdout=open(tmp_path / "scheduler.log", "w"), stderr=subprocess.STDOUT))
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "dask", "worker", address, "--nworkers", "2", "--nthreads", "1",
             "--no-dashboard"], env=_env(), start_new_session=True,
            stdout=open(tmp_path / "worker.log", "w"), stderr=subprocess.STDOUT))
        client = distributed.Client(address, timeout=60, set_as_default=False)
        try:
            client.wait_for_workers(2, timeout=120)
            yield address, client
        finally:
            client.close()
    finally:
        for p in reversed(procs):
            _stop(p)


def _wait(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


@pytest.mark.slow
def test_cli_sweep_on_a_cluster_survives_a_killed_worker_and_resumes(cluster, tmp_path):
    address, client = cluster
    out = tmp_path / "sweep.csv"
    cmd = [sys.executable, "-m", "rbmviz", "sweep", *FLAGS, "--scheduler", address,
           "--connect-timeout", "60", "--out", str(out)]
    sweep = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        # a worker busy with a run: kill its process (its nanny restarts it; the scheduler
        # hands the lost run to a worker again)
        busy = _wait(lambda: [w for w, keys in client.processing().items() if keys], 180,
                     "a worker to start a run")[0]
        time.sleep(0.5)
        pid = client.run(os.getpid, workers=[busy])[busy]
        lost = [k for k in client.processing()[busy]]
        assert lost, "the run ended before the worker could be killed; make LONG longer"
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = sweep.communicate(timeout=600)
    finally:
        _stop(sweep)
    assert sweep.returncode == 0, stderr
    assert "4 run(s): 4 ok" in stdout
    frame = pd.read_csv(out)
    # every run in the output once, with each of its records once, in order
    assert sorted(frame.run_id.unique()) == ["t0-cd", "t0-pcd", "t1-cd", "t1-pcd"]
    for rid, g in frame.groupby("run_id"):
        assert g.epoch.tolist() == list(range(0, 60001, 6000)), rid
    assert set(load_store(out)) == set(frame.run_id)
    # the same numbers as the same plan run serially in this process (the seeds fix them)
    serial = run_specs(plan(LONG, algorithms="cd,pcd", trials=2), workers=0, progress=False)
    pd.testing.assert_frame_equal(frame.drop(columns=["seconds", "error"]),
                                  serial.drop(columns=["seconds", "error"]), check_dtype=False)

    # a re-run skips every run: nothing recomputed, the stored files untouched
    stamps = {f: f.stat().st_mtime_ns for f in store_path(out).glob("*.json")}
    t0 = time.monotonic()
    again = subprocess.run(cmd + ["--resume"], env=_env(), capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr
    assert "4 run(s) resumed" in again.stdout
    assert {f: f.stat().st_mtime_ns for f in store_path(out).glob("*.json")} == stamps
    pd.testing.assert_frame_equal(pd.read_csv(out), frame)
    assert time.monotonic() - t0 < 120


def test_store_written_as_each_run_finishes_and_resume_skips_it(tmp_path):
    """A crash loses at most the run in progress: the store holds each finished run the
    moment it finishes; resume=True runs only what is missing and gives the full frame."""
    base = {"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "init_scale": 0.5,
            "epochs": 30, "eval_every": 10, "learning_rate": 0.3, "k": 1}
    specs = plan(base, algorithms="cd,pcd", trials=2)
    out = tmp_path / "s.csv"
    stored_at_start = []

    def on_record(spec, record):
        if record["epoch"] == 0:
            stored_at_start.append((spec.run_id, sorted(load_store(out))))
        if spec.run_id == "t1-cd" and record["epoch"] == 20:
            raise KeyboardInterrupt               # a crash in the middle of the third run
    with pytest.warns(RuntimeWarning, match="sweep interrupted: 2 of 4"):
        run_specs(specs, workers=0, progress=False, out=out, on_record=on_record,
                  checkpoints=[10, 30])
    assert stored_at_start == [("t0-cd", []), ("t0-pcd", ["t0-cd"]),
                               ("t1-cd", ["t0-cd", "t0-pcd"])]
    assert sorted(load_store(out)) == ["t0-cd", "t0-pcd"]
    with pytest.raises(FileExistsError, match="resume=True"):
        run_specs(specs, workers=0, progress=False, out=out)
    ran = []
    df = run_specs(specs, workers=0, progress=False, out=out, resume=True, checkpoints=[10, 30],
                   on_record=lambda s, r: ran.append(s.run_id))
    assert sorted(set(ran)) == ["t1-cd", "t1-pcd"] and df.attrs["resumed"] == 2
    full = run_specs(specs, workers=0, progress=False)
    pd.testing.assert_frame_equal(df.drop(columns="seconds"), full.drop(columns="seconds"))
    pd.testing.assert_frame_equal(pd.read_csv(out).drop(columns=["seconds", "error"]),
                                  full.drop(columns=["seconds", "error"]), check_dtype=False)
    content = json.loads((store_path(out) / "t1-pcd.json").read_text())
    assert content["status"] == "ok" and [r["epoch"] for r in content["rows"]] == [0, 10, 20, 30]


def test_checkpoints_hold_the_model_at_the_chosen_epochs(tmp_path):
    from rbmviz import RBM
    from rbmviz.sweep import checkpoints
    base = {"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "init_scale": 0.5,
            "epochs": 30, "eval_every": 10, "learning_rate": 0.3, "k": 1}
    specs = plan(base, algorithms="cd", trials=1)
    out = tmp_path / "c.csv"
    run_specs(specs, workers=0, progress=False, out=out, checkpoints=[0, 15, 30])
    got = checkpoints(out)["t0-cd"]
    assert sorted(got) == [0, 20, 30]        # 15 falls between records: the next one (20)
    # the epoch-30 checkpoint is the trained model: retraining the spec gives it bit for bit
    run = specs[0].make_run()
    for _ in run:
        pass
    for a, b in zip(RBM.load(got[30]).params, run.rbm.params):
        assert (a == b).all()
    first = RBM.load(got[0]).params[0]
    assert not (first == run.rbm.params[0]).all()
    # a different plan at the same place is refused on resume
    other = plan({**base, "learning_rate": 0.1}, algorithms="cd", trials=1)
    with pytest.raises(ValueError, match="stored run 't0-cd' has other settings"):
        run_specs(other, workers=0, progress=False, out=out, resume=True)


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(resume=True), ValueError, "resume=True needs out="),
    (dict(checkpoints=[10]), ValueError, "checkpoints need out="),
    (dict(checkpoints=10, out="x.csv"), TypeError, "checkpoints must be a list of epochs"),
    (dict(checkpoints=[-1], out="x.csv"), ValueError, "checkpoints must be >= 0"),
])
def test_resume_and_checkpoint_bad_input(kwargs, exc, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    specs = plan({"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "epochs": 2},
                 algorithms="cd", trials=1)
    with pytest.raises(exc, match=text):
        run_specs(specs, workers=0, progress=False, **kwargs)


def test_cli_resume_and_checkpoints(tmp_path, capsys):
    """`rbmviz sweep --out F --checkpoints E`, then the same with --trials 2 --resume: only
    the new trial runs; an existing --out without --resume is refused."""
    from rbmviz import cli
    from rbmviz.sweep import checkpoints
    out = tmp_path / "s.csv"
    args = ["sweep", "--dataset", "bars_and_stripes", "--D", "2", "--n-hidden", "3",
            "--epochs", "20", "--eval-every", "10", "--algorithms", "cd", "--workers", "0",
            "--checkpoints", "10", "--out", str(out)]
    assert cli.main(args + ["--trials", "1"]) == 0
    assert "1 run(s): 1 ok" in capsys.readouterr().out
    stamp = (store_path(out) / "t0-cd.json").stat().st_mtime_ns
    assert cli.main(args + ["--trials", "2"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert cli.main(args + ["--trials", "2", "--resume"]) == 0
    assert "2 run(s): 2 ok; 6 record(s)" in capsys.readouterr().out
    assert (store_path(out) / "t0-cd.json").stat().st_mtime_ns == stamp     # not rerun
    assert set(checkpoints(out)) == {"t0-cd", "t1-cd"}
    assert sorted(pd.read_csv(out).run_id.unique()) == ["t0-cd", "t1-cd"]
    assert cli.main(["sweep", "--algorithms", "cd", "--resume"]) == 2
    assert "--resume: needs --out" in capsys.readouterr().err
