"""Tests of the ``rbmviz`` command.  All but two call ``rbmviz.cli.main`` in-process (so the
Numba kernels compile once); two run ``python -m rbmviz`` in a subprocess."""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rbmviz
from rbmviz import cli
from rbmviz.bounds import K_MAX
from rbmviz.settings import SETTINGS_CLASSES, from_dict, knobs, to_dict

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["algorithm", "epoch", "updates", "gibbs_steps", "train_ll", "test_ll", "pseudo_ll",
           "recon_error", "weight_norm", "wall_time"]
TINY = ["--dataset", "bars_and_stripes", "--algorithm", "pcd", "--k", "3", "--learning-rate", "0.3",
        "--epochs", "20", "--eval-every", "5", "--seed", "1", "--quiet"]


def _read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _subprocess(*args, **env):
    e = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    return subprocess.run([sys.executable, "-m", "rbmviz", *args], capture_output=True, text=True,
                          env=e, timeout=120)


# ---------------------------------------------------------------------------- help

def test_python_m_rbmviz_help():
    res = _subprocess("--help")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "usage: rbmviz" in out and "train" in out and "info" in out
    assert "examples:" in out and "rbmviz train --dataset bars_and_stripes" in out


def test_train_help_lists_every_knob(capsys):
    assert cli.main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    for cls in SETTINGS_CLASSES:
        for name, p in knobs(cls).items():
            assert "--" + name.replace("_", "-") in out
    flat = " ".join(out.split())                       # independent of the terminal width
    # a knob the data set's preset sets shows what runs (the preset's value), then the plain
    # default under --preset none (the rule's own where rules differ: TAP's gamma = 0.005)
    from rbmviz import presets
    pre = presets.for_dataset("bars_and_stripes")
    assert (f"> 0; default: the data set's preset, {pre['learning_rate']:g} for bars_and_stripes; "
            f"--preset none: the rule's own (0.005 for tap, else 0.1))") in flat
    assert (f"[1, {K_MAX}]; default: the data set's preset, {pre['k']} for bars_and_stripes; "
            f"--preset none: the rule's own (none for sdcp, none for csdcp, else 1))") in flat
    assert "(>= 0; default: 0)" in flat                # a knob no preset sets: its declaration
    assert "examples:" in out and "--out runs/bs_pcd" in out
    assert "Test set:" in out                          # the description paragraph


def test_no_command_prints_help(capsys):
    assert cli.main([]) == 2
    assert "commands:" in capsys.readouterr().out


# ---------------------------------------------------------------------------- train

def test_train_writes_records_model_and_settings(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", *TINY, "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""               # --quiet
    rows = _read_csv(out / "records.csv")
    assert [int(r["epoch"]) for r in rows] == [0, 5, 10, 15, 20]
    assert list(rows[0]) == COLUMNS
    assert {r["algorithm"] for r in rows} == {"pcd"}

    # the same run in-process: bit-identical model and metrics
    X = rbmviz.datasets.bars_and_stripes(3)
    rbm = rbmviz.RBM(9, 4, seed=0, data=X)
    df = rbmviz.train(rbm, X, "pcd", epochs=20, learning_rate=0.3, seed=1, k=3, eval_every=5,
                      test_data=X)
    saved = rbmviz.RBM.load(out / "model.npz")
    assert saved == rbm
    np.testing.assert_array_equal([float(r["train_ll"]) for r in rows], df["train_ll"].to_numpy())

    settings = json.loads((out / "settings.json").read_text())
    assert settings["algorithm"] == "pcd" and settings["k"] == 3 and settings["epochs"] == 20
    assert to_dict(*from_dict(settings)) == settings

    # --settings reproduces the run; an option overrides the file
    again = tmp_path / "again"
    assert cli.main(["train", "--settings", str(out / "settings.json"), "--quiet",
                     "--out", str(again)]) == 0
    assert rbmviz.RBM.load(again / "model.npz") == saved
    other = tmp_path / "other"
    assert cli.main(["train", "--settings", str(out / "settings.json"), "--seed", "2", "--quiet",
                     "--out", str(other)]) == 0
    assert json.loads((other / "settings.json").read_text())["seed"] == 2
    assert rbmviz.RBM.load(other / "model.npz") != saved


def test_train_progress_bar_and_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", "--epochs", "4", "--eval-every", "2", "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert "train_ll=" in cap.err and "epoch" in cap.err          # tqdm bar with postfix
    assert "trained 4 epochs" in cap.out and "records.csv" in cap.out


def test_python_m_rbmviz_train(tmp_path):
    out = tmp_path / "sub"
    res = _subprocess("train", "--dataset", "shifting_bar", "--N", "5", "--epochs", "3",
                      "--eval-every", "1", "--quiet", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert [int(r["epoch"]) for r in _read_csv(out / "records.csv")] == [0, 1, 2, 3]
    assert rbmviz.RBM.load(out / "model.npz").n_visible == 5


def test_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert cli.main(["train", "--epochs", "2", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not empty" in err and "--overwrite" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]

    assert cli.main(["train", "--epochs", "2", "--quiet", "--overwrite", "--out", str(out)]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert cli.main(["train", "--epochs", "3", "--eval-every", "1", "--quiet", "--overwrite",
                     "--out", str(out)]) == 0
    assert [int(r["epoch"]) for r in _read_csv(out / "records.csv")] == [0, 1, 2, 3]


def _files(out):
    return {p.name: p.read_bytes() for p in out.iterdir()}


def test_overwrite_replaces_only_after_the_new_run_finished(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert cli.main(["train", *TINY, "--out", str(out)]) == 0
    old = _files(out)
    assert set(old) == {"records.csv", "model.npz", "settings.json"}

    # an interrupted overwrite (Ctrl-C after the first record) keeps the old files
    real_next = rbmviz.runs.Run.__next__
    calls = []

    def interrupted_next(run):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real_next(run)

    monkeypatch.setattr(rbmviz.runs.Run, "__next__", interrupted_next)
    args = ["train", *TINY, "--seed", "2", "--overwrite", "--out", str(out)]
    assert cli.main(args) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "previous" in err and "kept" in err
    now = _files(out)
    assert {k: now[k] for k in old} == old                          # old model, records, settings
    assert [int(r["epoch"]) for r in _read_csv(out / "records.new.csv")] == [0]
    assert json.loads(now["settings.new.json"])["seed"] == 2

    # the same overwrite, finished: the new files replace the old ones, no staging left behind
    monkeypatch.setattr(rbmviz.runs.Run, "__next__", real_next)
    assert cli.main(args) == 0
    now = _files(out)
    assert set(now) == {"records.csv", "model.npz", "settings.json"}
    assert now["model.npz"] != old["model.npz"]
    assert json.loads(now["settings.json"])["seed"] == 2
    assert [int(r["epoch"]) for r in _read_csv(out / "records.csv")] == [0, 5, 10, 15, 20]


def test_diverged_overwrite_keeps_the_old_model(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", *TINY, "--out", str(out)]) == 0
    old = _files(out)
    assert cli.main(["train", "--learning-rate", "10", "--dtype", "float32", "--max-weight", "1",
                     "--epochs", "50", "--quiet", "--overwrite", "--out", str(out)]) == 3
    assert "previous" in capsys.readouterr().err
    assert {k: v for k, v in _files(out).items() if k in old} == old


@pytest.mark.parametrize("command", ["train", "sweep"])
def test_unwritable_out_is_refused_before_any_work(tmp_path, capsys, monkeypatch, command):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    monkeypatch.setattr(rbmviz.runs.Run, "__init__", lambda *a, **k: pytest.fail("trained"))
    if command == "train":
        args = ["train", "--epochs", "1", "--quiet", "--out", str(blocker / "run")]
    else:
        args = ["sweep", "--algorithms", "cd", "--epochs", "1", "--quiet", "--workers", "0",
                "--out", str(blocker / "sweep.csv")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "argument --out:" in err and "not a directory" in err and "Traceback" not in err


def test_out_directory_check_probes_without_leaving_files(tmp_path):
    assert cli.writable_dir_problem(tmp_path / "new" / "deeper") is None
    assert not (tmp_path / "new").exists() and list(tmp_path.iterdir()) == []
    (tmp_path / "f").write_text("x")
    assert "exists and is not a directory" in cli.writable_dir_problem(tmp_path / "f")
    assert "is a directory" in cli.writable_file_problem(tmp_path)
    assert cli.writable_file_problem(tmp_path / "a" / "b.csv") is None


def test_unexpected_errors_are_one_line_without_traceback(tmp_path, capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(rbmviz.settings, "make_run", boom)
    assert cli.main(["train", "--epochs", "1", "--quiet", "--out", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "RuntimeError: boom" in err and "RBMVIZ_DEBUG" in err and "Traceback" not in err
    monkeypatch.setenv("RBMVIZ_DEBUG", "1")
    assert cli.main(["train", "--epochs", "1", "--quiet", "--out", str(tmp_path / "r2")]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_presets_size_the_defaults_to_the_data(tmp_path):
    from rbmviz import presets
    out = tmp_path / "digits"
    assert cli.main(["train", "--dataset", "digits", "--epochs", "1", "--quiet",
                     "--out", str(out)]) == 0
    saved = json.loads((out / "settings.json").read_text())
    want = presets.for_dataset("digits")
    assert saved["eval_every"] is None                      # auto: evaluation on a time budget
    for key in ("n_hidden", "batch_size", "learning_rate", "k", "algorithm", "dtype"):
        assert saved[key] == want[key], key
    assert rbmviz.RBM.load(out / "model.npz").n_hidden == want["n_hidden"]
    plain = tmp_path / "plain"
    assert cli.main(["train", "--dataset", "digits", "--preset", "none", "--epochs", "1",
                     "--quiet", "--out", str(plain)]) == 0
    assert json.loads((plain / "settings.json").read_text())["n_hidden"] == 4
    # an option given wins over the preset; a data-size option reaches the preset
    assert cli.main(["train", "--dataset", "bars_and_stripes", "--D", "4", "--n-hidden", "7",
                     "--epochs", "1", "--quiet", "--out", str(tmp_path / "bs")]) == 0
    saved = json.loads((tmp_path / "bs" / "settings.json").read_text())
    assert (saved["D"], saved["n_hidden"]) == (4, 7)


def test_explore_hands_its_arguments_to_the_app_server(monkeypatch):
    import rbmviz.app.serve as serve
    seen = []
    monkeypatch.setattr(serve, "main", lambda argv: seen.append(argv) or 7)
    argv = ["--port", "0", "--show", "--num-procs", "2", "--max-k", "50"]
    assert cli.main(["explore", *argv]) == 7
    assert seen == [argv]


def test_commands_other_than_explore_do_not_load_panel():
    code = ("import sys, rbmviz.cli; rbmviz.cli.main(['train', '--help']); "
            "print('PANEL', 'panel' in sys.modules, 'bokeh' in sys.modules)")
    e = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                         timeout=120)
    assert "PANEL False False" in res.stdout, res.stderr


def test_ctrl_c_stops_a_long_run_quickly_and_keeps_the_records(tmp_path):
    """SIGINT to `rbmviz train` during a run that would take hours: exit 130 soon after, the
    finished records in records.csv, one line on stderr."""
    import signal
    import time
    out = tmp_path / "long"
    e = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "rbmviz", "train", "--k", "1000",
                             "--epochs", "10000000", "--eval-every", "1000000", "--quiet",
                             "--out", str(out)], stderr=subprocess.PIPE, text=True, env=e)
    try:
        deadline = time.monotonic() + 120
        while not (out / "records.csv").exists() or len(_read_csv(out / "records.csv")) < 1:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.2)
        time.sleep(1.0)                                   # inside the long block now
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        code = proc.wait(timeout=30)
        waited = time.monotonic() - sent
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert len(_read_csv(out / "records.csv")) >= 1
    assert waited < 10, waited        # ~1 s on an idle machine; generous for a busy one


def test_empty_out_dir_is_used(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    assert cli.main(["train", "--epochs", "1", "--quiet", "--out", str(out)]) == 0
    assert (out / "model.npz").exists()


@pytest.mark.parametrize("args, option, text", [
    (["--k", "0"], "--k", "at least 1"),
    (["--learning-rate", "-1"], "--learning-rate", "greater than 0"),
    (["--learning-rate", "0"], "--learning-rate", "greater than 0"),
    (["--algorithm", "nope"], "--algorithm", "invalid choice"),
    (["--k", "three"], "--k", "expected an integer"),
    (["--momentum", "1"], "--momentum", "less than 1"),
    (["--n-hidden", "20000"], "--n-hidden", "at most 16384"),
    (["--n-chains", "5"], "--n-chains", "not used by algorithm 'cd'"),
    (["--N", "5"], "--N", "not used by data set 'bars_and_stripes'"),
    (["--batch-size", "100"], "--batch-size", "larger than the data"),
    (["--dataset", "shifting_bar", "--N", "4", "--B", "4"], "--B", "B must be"),
])
def test_bad_options_exit_2(tmp_path, capsys, args, option, text):
    out = tmp_path / "run"
    assert cli.main(["train", *args, "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "usage: rbmviz train" in err
    assert f"argument {option}:" in err and text in err
    assert not out.exists()


def test_missing_out_is_a_usage_error(capsys):
    assert cli.main(["train", "--epochs", "1"]) == 2
    assert "--out" in capsys.readouterr().err


def test_bad_settings_file(tmp_path, capsys):
    bad = tmp_path / "settings.json"
    bad.write_text(json.dumps({"learnig_rate": 0.1}))
    assert cli.main(["train", "--settings", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "did you mean 'learning_rate'" in capsys.readouterr().err


def test_diverging_run_exits_3_and_keeps_records(tmp_path, capsys):
    out = tmp_path / "div"
    code = cli.main(["train", "--learning-rate", "10", "--dtype", "float32", "--max-weight", "1",
                     "--epochs", "50", "--quiet", "--out", str(out)])
    assert code == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "diverged" in err and "records.csv" in err
    rows = _read_csv(out / "records.csv")
    assert len(rows) >= 1 and rows[0]["epoch"] == "0" and list(rows[0]) == COLUMNS
    assert not (out / "model.npz").exists()
    assert (out / "settings.json").exists()


def test_missing_dataset_file_exits_2(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("RBMVIZ_DATA", str(empty))
    out = tmp_path / "run"
    assert cli.main(["train", "--dataset", "mnist", "--limit", "10", "--quiet",
                     "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "RBMVIZ_DATA" in err and str(empty) in err and "mnist" in err
    assert not out.exists()


# ---------------------------------------------------------------------------- info

def test_info(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RBMVIZ_DATA", str(tmp_path))
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert f"rbmviz {rbmviz.__version__}" in out
    assert "threading layer:" in out and "threads:" in out
    assert str(tmp_path) in out and "from RBMVIZ_DATA" in out
    assert "mnist" in out and "missing" in out and "bars_and_stripes" in out


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert rbmviz.__version__ in capsys.readouterr().out


# ---------------------------------------------------------------------------- sweep

SWEEP = ["sweep", "--dataset", "bars_and_stripes", "--D", "2", "--n-hidden", "3", "--init-scale", "0.5",
         "--epochs", "20", "--eval-every", "10", "--k", "1", "--algorithms", "cd,pcd", "--trials", "2",
         "--grid", "learning_rate=0.1,0.5", "--workers", "0"]


def test_sweep_writes_the_frame_and_prints_the_summary(tmp_path, capsys):
    import pandas as pd

    from rbmviz.sweep import summarize, sweep
    out = tmp_path / "sweep.csv"
    assert cli.main(SWEEP + ["--out", str(out)]) == 0
    captured = capsys.readouterr()
    direct = sweep({"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "init_scale": 0.5,
                    "epochs": 20, "eval_every": 10, "k": 1}, algorithms="cd,pcd", trials=2,
                   grid={"learning_rate": ["0.1", "0.5"]}, workers=0, progress=False)
    back = pd.read_csv(out)
    assert list(back.columns) == list(direct.columns)
    np.testing.assert_array_equal(back.test_ll.to_numpy(), direct.test_ll.to_numpy())
    assert back.run_id.tolist() == direct.run_id.tolist()
    lines = captured.out.splitlines()
    assert lines[0].split() == ["algorithm", "learning_rate", "final", "test_ll", "(mean", "±",
                                "s.e.)", "runs", "ok", "not", "ok"]
    s = summarize(direct)
    for i, r in s.iterrows():
        assert lines[2 + i].split() == [r.algorithm, f"{r.learning_rate:g}", f"{r['mean']:.4f}", "±",
                                        f"{r['se']:.4f}", "2", "0"]
    assert f"8 run(s): 8 ok; 24 record(s); wrote {out}" in captured.out
    assert "sweep:" in captured.err                         # the tqdm bar

    assert cli.main(SWEEP + ["--out", str(out)]) == 2        # never overwritten
    assert "--overwrite" in capsys.readouterr().err
    assert cli.main(SWEEP + ["--out", str(out), "--overwrite", "--quiet", "--trials", "1"]) == 0
    assert capsys.readouterr().out == ""
    assert pd.read_csv(out).trial.unique().tolist() == [0]


@pytest.mark.parametrize("args, text", [
    (["--grid", "k"], "argument --grid: expected KNOB=V1,V2"),
    (["--grid", "seed=1,2"], "set by the sweep itself"),
    (["--grid", "learnin_rate=1"], "did you mean 'learning_rate'"),
    (["--grid", "k_inner=1,2"], "k_inner is not used by any of the algorithms cd, pcd"),
    (["--grid", "k=1,x"], "setting 'k'"),
    (["--algorithms", "cd,nope"], "argument --algorithms: unknown algorithm 'nope'"),
    (["--algorithms", "cd", "--k-inner", "1"], "argument --k-inner: not used by any of the algorithms cd"),
    (["--N", "5"], "argument --N: not used by data set 'bars_and_stripes'"),
    (["--trials", "0"], "argument --trials: must be at least 1"),
    (["--out", "x.txt"], "expected a file name ending in .csv or .parquet"),
    (["--scheduler", "tcp://127.0.0.1:1"], "argument --workers: only for local runs"),
    (["--metric", "nope"], "argument --metric"),
])
def test_sweep_bad_options_exit_2(tmp_path, monkeypatch, capsys, args, text):
    monkeypatch.chdir(tmp_path)
    assert cli.main(SWEEP + args) == 2
    assert text in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_sweep_unreachable_scheduler_exits_1(capsys):
    pytest.importorskip("distributed")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [a for a in SWEEP if a not in ("--workers", "0")]
    assert cli.main(args + ["--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert f"could not reach the Dask scheduler at tcp://127.0.0.1:{port}" in err


def test_sweep_diverged_runs_are_reported(tmp_path, capsys):
    out = tmp_path / "s.csv"
    args = SWEEP[:-4] + ["--grid", "learning_rate=0.05,10", "--max-weight", "1.5", "--epochs", "200",
                         "--eval-every", "50", "--workers", "0", "--out", str(out)]
    assert cli.main(args) == 0
    printed = capsys.readouterr().out
    assert "diverged" in printed and "ok" in printed
    rows = _read_csv(out)
    assert {r["status"] for r in rows} == {"ok", "diverged"}


# ---------------------------------------------------------------------------- bench

def test_bench_help(capsys):
    assert cli.main(["bench", "--help"]) == 0
    out = capsys.readouterr().out
    assert "source checkout" in out and "small" in out and "large" in out and "--quick" in out


def test_bench_runs_the_source_checkout_scripts(monkeypatch):
    calls = []

    class Done:
        returncode = 0
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append((cmd, kw)) or Done())
    assert cli.main(["bench", "--quick"]) == 0
    assert cli.main(["bench", "large", "small"]) == 0
    assert [c[0] for c in calls] == [
        [sys.executable, str(ROOT / "bench" / "run_all.py"), "--quick"],
        [sys.executable, str(ROOT / "bench" / "bench_large.py")],
        [sys.executable, str(ROOT / "bench" / "bench_small.py")]]
    assert all(kw["cwd"] == ROOT and str(ROOT) in kw["env"]["PYTHONPATH"] for _, kw in calls)
    assert cli.main(["bench", "huge"]) == 2


def test_bench_without_a_source_checkout(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli.bench, "_bench_dir", lambda: tmp_path / "bench")
    assert cli.main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "need a source checkout" in err and str(tmp_path / "bench" / "run_all.py") in err


def test_sweep_records_about_100_times_per_run_unless_told(tmp_path):
    """Without --eval-every a sweep records every epochs/100 epochs, at the same epochs in
    every run (the knob's default, every epoch, spent ~90 % of a small sweep evaluating);
    --eval-every and a settings file still decide when given."""
    import pandas as pd
    from rbmviz.cli.sweep import default_eval_every
    assert [default_eval_every(e) for e in (1, 100, 149, 150, 5000)] == [1, 1, 1, 2, 50]
    base = ["sweep", "--dataset", "bars_and_stripes", "--D", "2", "--n-hidden", "3",
            "--algorithms", "cd", "--trials", "2", "--epochs", "400", "--workers", "0", "--quiet"]
    assert cli.main(base + ["--out", str(tmp_path / "a.csv")]) == 0
    a = pd.read_csv(tmp_path / "a.csv")
    assert sorted(set(a.epoch)) == list(range(0, 401, 4))
    assert (a.groupby("run_id").epoch.apply(list).map(tuple).nunique()) == 1   # aligned runs
    assert cli.main(base + ["--eval-every", "100", "--out", str(tmp_path / "b.csv")]) == 0
    assert sorted(set(pd.read_csv(tmp_path / "b.csv").epoch)) == [0, 100, 200, 300, 400]
    (tmp_path / "s.json").write_text('{"eval_every": 200}')
    assert cli.main(base + ["--settings", str(tmp_path / "s.json"), "--out", str(tmp_path / "c.csv")]) == 0
    assert sorted(set(pd.read_csv(tmp_path / "c.csv").epoch)) == [0, 200, 400]


def test_reproduce_records_the_options_written():
    """``rbmviz reproduce <experiment>`` says which options were written on the command line
    (not those left at their default), so that an experiment can refuse one that does not
    apply: ``--opt=value`` counts, arguments after ``--`` do not."""
    from rbmviz.cli import build_parser
    from rbmviz.cli.reproduce import given_options
    args = build_parser().parse_args(["reproduce", "tap", "--study=fig12", "--seed", "0",
                                      "--ais-chains", "3", "--quiet"])
    assert args._given_options == {"study": "--study", "seed": "--seed",
                                   "study_ais_chains": "--ais-chains", "quiet": "--quiet"}
    assert args.save_epochs == "none" and "save_epochs" not in args._given_options  # a default
    assert args.eval_every is None and "eval_every" not in args._given_options  # a setting's
    parser = args._experiment_parser
    assert given_options(parser, ["--seed", "1", "--", "--quiet"]) == {"seed": "--seed"}
    assert given_options(parser, ["--no-timing-direct", "-h"]) == {
        "study_timing_direct": "--no-timing-direct", "help": "-h"}
