"""Tests of :mod:`rbmviz.sweep`: the plan (seeds, grid, dropped knobs), the three backends
(serial, process pool, Dask LocalCluster) giving identical frames, streaming, the output file,
interruption, divergence and a scheduler that cannot be reached."""
import math
import socket
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from rbmviz import sweep as sw
from rbmviz.sweep import RunSpec, derive_seed, plan, run_specs, summarize, sweep

# 4 visible units, 3 hidden: exact LLs; init_scale 0.5 so that the chains of different
# algorithms do not couple (with tiny weights all Gibbs chains share their samples)
TINY = {"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "init_scale": 0.5, "epochs": 30,
        "eval_every": 10, "learning_rate": 0.3, "k": 1}
# long enough (~0.2 s of training per run, idle machine) to see records arrive while a run
# goes on
STREAM = {"dataset": "shifting_bar", "N": 12, "B": 3, "n_hidden": 10, "init_scale": 0.5,
          "epochs": 8000, "eval_every": 1000, "learning_rate": 0.1, "k": 10}


def _same(a, b):
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------- plan

def test_plan_seeds_shared_within_a_trial_and_distinct_across():
    specs = plan(TINY, algorithms="cd,pcd,sdcp", trials=3, grid={"learning_rate": [0.1, 0.5]},
                 seed=7)
    assert len(specs) == 3 * 3 * 2
    assert [s.trial for s in specs] == [t for t in range(3) for _ in range(6)]
    for t in range(3):
        trial = [s for s in specs if s.trial == t]
        assert {s.settings["init_seed"] for s in trial} == {derive_seed(7, t, "init")}
        for a in ("cd", "pcd", "sdcp"):   # each rule its own stream, shared over the grid
            assert {s.settings["seed"] for s in trial if s.algorithm == a} == {
                derive_seed(7, t, f"chain/{a}")}
        assert {(s.algorithm, s.labels["learning_rate"]) for s in trial} == {
            (a, lr) for a in ("cd", "pcd", "sdcp") for lr in (0.1, 0.5)}
    init = [derive_seed(7, t, "init") for t in range(3)]
    chain = [derive_seed(7, t, f"chain/{a}") for t in range(3) for a in ("cd", "pcd", "sdcp")]
    assert len(set(init + chain)) == 12
    # long purposes are hashed whole (no truncation collisions)
    assert derive_seed(7, 0, "chain/csdcp") != derive_seed(7, 0, "chain/csdcx")
    paired = plan(TINY, algorithms="cd,pcd,sdcp", trials=3, grid={"learning_rate": [0.1, 0.5]},
                  seed=7, paired_chains=True)
    for t in range(3):
        assert {s.settings["seed"] for s in paired if s.trial == t} == {derive_seed(7, t, "chain")}
    assert derive_seed(8, 0, "init") != init[0]                    # the sweep seed matters
    assert len({s.run_id for s in specs}) == len(specs)
    assert specs[0].run_id == "t0-cd-learning_rate=0.1"
    # the plan is a pure function of its arguments
    assert plan(TINY, algorithms="cd,pcd,sdcp", trials=3, grid={"learning_rate": [0.1, 0.5]},
                seed=7) == specs


def test_plan_settings_are_complete_and_algorithm_knobs_dropped():
    base = {**TINY, "k": 4, "k_inner": 2, "n_chains": 3}
    specs = plan(base, algorithms=["cd", "pcd", "sdcp"], trials=1)
    by = {s.algorithm: s.settings for s in specs}
    from rbmviz.settings import SETTINGS_CLASSES, knobs
    every = [n for cls in SETTINGS_CLASSES for n in knobs(cls)]
    for a, flat in by.items():
        assert list(flat) == every and flat["algorithm"] == a
        assert flat["k"] == 4 and flat["learning_rate"] == 0.3
    assert by["cd"]["k_inner"] is None and by["cd"]["n_chains"] is None
    assert by["pcd"]["n_chains"] == 3 and by["pcd"]["k_inner"] is None
    assert by["sdcp"]["k_inner"] == 2 and by["sdcp"]["n_chains"] is None
    assert specs[2].make_run().algorithm.k_inner == 2


def test_plan_grid_product_text_values_and_dict_points():
    specs = plan(TINY, algorithms="sdcp", trials=2,
                 grid={"learning_rate": ["0.3", "0.5"],
                       "budget": [{"k": 4}, {"k": 8, "k_inner": "2"}]})
    assert len(specs) == 2 * 2 * 2
    labels = [s.labels for s in specs[:4]]
    assert labels == [{"learning_rate": lr, "budget": b} for lr in (0.3, 0.5)
                      for b in ("k=4", "k=8,k_inner=2")]
    assert [(s.settings["learning_rate"], s.settings["k"], s.settings["k_inner"]) for s in specs[:4]] == [
        (0.3, 4, None), (0.3, 8, 2), (0.5, 4, None), (0.5, 8, 2)]
    assert specs[1].run_id == "t0-sdcp-learning_rate=0.3-budget=k=8,k_inner=2"


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(algorithms="cd,nope"), ValueError, "unknown algorithm 'nope'"),
    (dict(algorithms=[]), ValueError, "algorithms is empty"),
    (dict(algorithms="cd,cd"), ValueError, "more than once"),
    (dict(trials=0), ValueError, "trials must be >= 1"),
    (dict(grid={"learnin_rate": [0.1]}), ValueError, "did you mean 'learning_rate'"),
    (dict(grid={"learning_rate": []}), ValueError, "grid['learning_rate'] is empty"),
    (dict(grid={"learning_rate": 0.1}), TypeError, "must be a list of values"),
    (dict(grid={"learning_rate": [0.1, "x"]}), ValueError, "setting 'learning_rate'"),
    (dict(grid={"learning_rate": [0.1, 0.1]}), ValueError, "repeats a value"),
    (dict(grid={"seed": [1, 2]}), ValueError, "set per trial"),
    (dict(grid={"algorithm": ["cd"]}), ValueError, "use algorithms="),
    (dict(grid={"epoch": [1]}), ValueError, "column of the sweep frame"),
    (dict(grid={"budget": [{"k": 1}, 3]}), TypeError, "mixes dicts"),
    (dict(grid={"budget": [{"kk": 1}]}), ValueError, "not sweepable"),
    (dict(grid={"learning_rate": [0.1, -1.0]}), ValueError, "learning_rate"),   # out of bounds
    (dict(algorithms="sdcp", grid={"k_inner": [3]}), ValueError, "at grid point k_inner=3"),
    (dict(run_overrides={"metrics": [lambda: 0]}), TypeError, "picklable"),
])
def test_plan_bad_input(kwargs, exc, text):
    args = dict(algorithms="cd", trials=1) | kwargs
    with pytest.raises(exc) as info:
        plan(TINY, **args)
    assert text in str(info.value)


def test_plan_bad_base():
    with pytest.raises(ValueError, match="did you mean 'n_hidden'"):
        plan({"n_hiden": 3}, algorithms="cd", trials=1)
    with pytest.raises(TypeError, match="base must be a flat settings dict"):
        plan([("k", 1)], algorithms="cd", trials=1)


def test_trial_runs_start_from_identical_parameters():
    specs = plan(TINY, algorithms="cd,pcd,sdcp", trials=2, grid={"k": [1, 2]}, seed=3)
    params = {s.run_id: [p.copy() for p in s.make_run().rbm.params] for s in specs}
    for t in range(2):
        ids = [s.run_id for s in specs if s.trial == t]
        for rid in ids[1:]:
            for p, q in zip(params[ids[0]], params[rid]):
                np.testing.assert_array_equal(p, q)
    W0, W1 = params[specs[0].run_id][0], params[specs[6].run_id][0]
    assert not np.allclose(W0, W1)
    # and in the frame: identical initial records within a trial, different after training
    df = run_specs(specs, workers=0, progress=False)
    first = df[df.epoch == 0].set_index("run_id")
    metrics = ["train_ll", "pseudo_ll", "recon_error", "weight_norm"]
    for t, sub in first.groupby("trial"):
        assert (sub[metrics].nunique() == 1).all(), sub[metrics]
    assert first.groupby("trial").train_ll.first().nunique() == 2
    last = df[df.epoch == 30].set_index("run_id")
    assert last.loc["t0-cd-k=1", "train_ll"] != last.loc["t0-pcd-k=1", "train_ll"]
    assert last.loc["t0-cd-k=1", "train_ll"] != last.loc["t0-cd-k=2", "train_ll"]


# ---------------------------------------------------------------------------- frame

def test_serial_frame_layout_and_reproducibility():
    df = sweep(TINY, algorithms="cd,pcd", trials=2, grid={"learning_rate": [0.1, 0.5]}, seed=1,
               workers=0, progress=False)
    assert list(df.columns[:8]) == ["run_id", "trial", "algorithm", "learning_rate", "epoch",
                                    "updates", "gibbs_steps", "seconds"]
    assert list(df.columns[-2:]) == ["status", "error"]
    assert {"train_ll", "test_ll", "pseudo_ll", "recon_error", "weight_norm"} <= set(df.columns)
    assert len(df) == 2 * 2 * 2 * 4                          # runs × (epochs 0, 10, 20, 30)
    assert df.groupby("run_id").epoch.apply(list).map(tuple).unique().tolist() == [(0, 10, 20, 30)]
    assert (df.status == "ok").all() and df.error.isna().all()
    assert df.epoch.dtype == np.int64 and (df.gibbs_steps == df.updates * 1).all()
    # one run, made by hand, gives the same numbers as its row block
    spec = plan(TINY, algorithms="cd,pcd", trials=2, grid={"learning_rate": [0.1, 0.5]}, seed=1)[5]
    by_hand = pd.DataFrame.from_records(list(spec.make_run()))
    block = df[df.run_id == spec.run_id]
    np.testing.assert_array_equal(block.train_ll.to_numpy(), by_hand.train_ll.to_numpy())
    # same seeds → same frame; another seed → other numbers
    _same(df, sweep(TINY, algorithms="cd,pcd", trials=2, grid={"learning_rate": [0.1, 0.5]},
                    seed=1, workers=1, progress=False))
    other = sweep(TINY, algorithms="cd,pcd", trials=2, grid={"learning_rate": [0.1, 0.5]}, seed=2,
                  workers=0, progress=False)
    assert not np.allclose(df.train_ll, other.train_ll)


def test_summarize_matches_a_direct_computation():
    df = sweep(TINY, algorithms="cd,pcd", trials=3, grid={"k": [1, 3]}, workers=0, progress=False)
    s = summarize(df)
    assert list(s.columns) == ["algorithm", "k", "metric", "mean", "se", "n", "not_ok"]
    assert len(s) == 4 and (s.metric == "test_ll").all() and (s.n == 3).all()
    for _, row in s.iterrows():
        vals = [df[(df.run_id == f"t{t}-{row.algorithm}-k={row.k}")].test_ll.iloc[-1]
                for t in range(3)]
        assert row["mean"] == pytest.approx(np.mean(vals), rel=1e-12)
        assert row["se"] == pytest.approx(np.std(vals, ddof=1) / math.sqrt(3), rel=1e-12)
    assert summarize(df, "weight_norm").metric.unique().tolist() == ["weight_norm"]
    with pytest.raises(ValueError, match="metric 'bogus'"):
        summarize(df, "bogus")


# ---------------------------------------------------------------------------- backends

@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None,
                                           env={"NUMBA_NUM_THREADS": "1"})
        client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _arrivals():
    times = {}

    def on_record(spec, record):
        assert isinstance(spec, RunSpec) and "epoch" in record
        times.setdefault(spec.run_id, []).append((record["epoch"], time.monotonic()))
    return times, on_record


def _assert_streamed(times, frame):
    """Records of each run arrived spread over the run's training time, not in one batch at
    its end: from the first record after epoch 0 to the last one, the arrival times span
    at least half the run's own time between them."""
    for rid, got in times.items():
        assert [e for e, _ in got] == frame[frame.run_id == rid].epoch.tolist()
        sec = frame[frame.run_id == rid].seconds.to_numpy()
        run_span = sec[-1] - sec[1]
        arrival_span = got[-1][1] - got[1][1]
        assert run_span > 0.05
        assert arrival_span > 0.5 * run_span, (rid, arrival_span, run_span)


def test_serial_pool_and_dask_give_identical_frames_and_stream(dask_client):
    specs = plan(STREAM, algorithms="cd,pcd", trials=1)
    serial = run_specs(specs, workers=0, progress=False)

    times, on_record = _arrivals()
    pool = run_specs(specs, workers=2, progress=False, on_record=on_record)
    _same(serial, pool)
    _assert_streamed(times, pool)

    times, on_record = _arrivals()
    dask = run_specs(specs, scheduler=dask_client, progress=False, on_record=on_record)
    _same(serial, dask)
    _assert_streamed(times, dask)

    by_address = sweep(TINY, algorithms="cd,sdcp", trials=2, seed=5,
                       scheduler=dask_client.scheduler.address, progress=False)
    _same(by_address, sweep(TINY, algorithms="cd,sdcp", trials=2, seed=5, workers=0, progress=False))
    assert dask_client.status == "running"          # a client passed in is left open


def test_unreachable_scheduler_is_a_clear_error_within_the_timeout():
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    ran = []
    t0 = time.monotonic()
    with pytest.raises(ConnectionError) as info:
        sweep(TINY, algorithms="cd", trials=1, scheduler=address, connect_timeout=1.5,
              progress=False, on_record=lambda s, r: ran.append(r))
    assert time.monotonic() - t0 < 10
    assert address in str(info.value) and "connect_timeout=1.5" in str(info.value)
    assert ran == []


def test_scheduler_without_workers_is_a_clear_error():
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None)
    try:
        t0 = time.monotonic()
        with pytest.raises(ConnectionError, match="has no workers.*start workers with: dask worker"):
            sweep(TINY, algorithms="cd", trials=1, scheduler=cluster.scheduler_address,
                  connect_timeout=1.0, progress=False)
        assert time.monotonic() - t0 < 10
    finally:
        cluster.close()


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(scheduler="tcp://127.0.0.1:1", workers=2), ValueError, "workers applies to the local"),
    (dict(scheduler="localhost"), ValueError, "expected an address such as 'tcp://host:8786'"),
    (dict(scheduler=8786), TypeError, "scheduler must be an address"),
    (dict(workers=-1), ValueError, "workers must be >= 0"),
    (dict(connect_timeout=0), ValueError, "connect_timeout must be > 0"),
    (dict(on_record=3), TypeError, "on_record must be callable"),
    (dict(out="results.txt"), ValueError, "expected a file name ending in .csv or .parquet"),
])
def test_run_specs_bad_input(kwargs, exc, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    specs = plan(TINY, algorithms="cd", trials=1)
    with pytest.raises(exc) as info:
        run_specs(specs, progress=False, **kwargs)
    assert text in str(info.value)
    with pytest.raises(ValueError, match="duplicate run_id"):
        run_specs(specs + specs, workers=0, progress=False)


# ---------------------------------------------------------------------------- output

def test_out_written_as_runs_finish_and_never_overwritten(tmp_path):
    out = tmp_path / "sub" / "sweep.csv"
    seen_on_disk = []

    def on_record(spec, record):
        if spec.trial == 1 and record["epoch"] == 0:      # trial 0's runs have finished
            seen_on_disk.append(pd.read_csv(out).run_id.unique().tolist())
    df = sweep(TINY, algorithms="cd", trials=2, workers=0, progress=False, out=out,
               on_record=on_record)
    assert seen_on_disk == [["t0-cd"]]
    back = pd.read_csv(out)
    pd.testing.assert_frame_equal(back.drop(columns="error"), df.drop(columns="error"),
                                  check_dtype=False)
    assert not list(out.parent.glob(".*tmp"))              # no temporary file left behind

    before = out.read_bytes()
    ran = []
    with pytest.raises(FileExistsError, match="exists; choose another file, pass resume=True.* or "
                                              "overwrite=True"):
        sweep(TINY, algorithms="pcd", trials=1, workers=0, progress=False, out=out,
              on_record=lambda s, r: ran.append(r))
    assert ran == [] and out.read_bytes() == before
    assert sorted(sw.load_store(out)) == ["t0-cd", "t1-cd"]
    sweep(TINY, algorithms="pcd", trials=1, workers=0, progress=False, out=out, overwrite=True)
    assert pd.read_csv(out).algorithm.unique().tolist() == ["pcd"]
    assert sorted(sw.load_store(out)) == ["t0-pcd"]         # the old run store went too
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(FileExistsError, match="is a directory"):
        sweep(TINY, algorithms="cd", trials=1, workers=0, progress=False, out=tmp_path / "d.csv",
              overwrite=True)


def test_parquet_needs_pyarrow(tmp_path, monkeypatch):
    monkeypatch.setattr(sw._store, "_pyarrow_available", lambda: False)
    with pytest.raises(ImportError, match=r"pip install pyarrow"):
        sweep(TINY, algorithms="cd", trials=1, workers=0, progress=False, out=tmp_path / "s.parquet")
    assert not (tmp_path / "s.parquet").exists()


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "s.parquet"
    df = sweep(TINY, algorithms="cd", trials=2, workers=0, progress=False, out=out)
    pd.testing.assert_frame_equal(pd.read_parquet(out), df)


# ---------------------------------------------------------------------------- failures

def test_interrupted_sweep_keeps_the_records_so_far(tmp_path):
    out = tmp_path / "sweep.csv"
    calls = []

    def on_record(spec, record):
        calls.append((spec.run_id, record["epoch"]))
        if spec.run_id == "t1-cd" and record["epoch"] == 10:
            raise KeyboardInterrupt
    with pytest.warns(RuntimeWarning, match="sweep interrupted: 2 of 4 run"):
        df = sweep(TINY, algorithms="cd,pcd", trials=2, workers=0, progress=False, out=out,
                   on_record=on_record)
    assert df.attrs["interrupted"] is True
    assert df.run_id.unique().tolist() == ["t0-cd", "t0-pcd", "t1-cd"]
    assert (df[df.run_id != "t1-cd"].status == "ok").all()
    part = df[df.run_id == "t1-cd"]
    assert part.epoch.tolist() == [0, 10] and (part.status == "interrupted").all()
    assert calls[-1] == ("t1-cd", 10) and len(calls) == len(df)
    back = pd.read_csv(out)                           # the file holds the same partial rows
    assert back.run_id.tolist() == df.run_id.tolist() and back.status.tolist() == df.status.tolist()
    np.testing.assert_array_equal(back.train_ll.to_numpy(), df.train_ll.to_numpy())


def test_interrupted_process_pool_returns_promptly():
    specs = plan({**STREAM, "epochs": 200_000, "eval_every": 1000}, algorithms="cd,pcd", trials=1)

    def on_record(spec, record):
        if record["epoch"] >= 1000:
            raise KeyboardInterrupt
    t0 = time.monotonic()
    with pytest.warns(RuntimeWarning, match="sweep interrupted: 0 of 2"):
        df = run_specs(specs, workers=2, progress=False, on_record=on_record)
    assert time.monotonic() - t0 < 30                  # the runs would take much longer
    assert df.attrs["interrupted"] and len(df) >= 2
    assert set(df.status) == {"interrupted"} and df.epoch.max() == 1000


def test_diverging_run_is_recorded_and_the_sweep_goes_on():
    base = {**TINY, "max_weight": 4.0, "epochs": 200, "eval_every": 50}
    df = sweep(base, algorithms="cd,pcd", trials=2, grid={"learning_rate": [0.05, 10.0]},
               workers=0, progress=False)
    status = df.drop_duplicates("run_id", keep="last").set_index("run_id").status
    bad = status[status == "diverged"].index.tolist()
    assert bad and all("learning_rate=10" in r for r in bad)
    assert (status[[r for r in status.index if "learning_rate=0.05" in r]] == "ok").all()
    for rid in bad:
        rows = df[df.run_id == rid]
        assert "run diverged" in rows.error.iloc[0] and "max_weight=4" in rows.error.iloc[0]
        assert rows.epoch.max() < 200 and rows.epoch.iloc[0] == 0       # records before it kept
    ok = df[df.status == "ok"]
    assert ok.groupby("run_id").epoch.max().eq(200).all()
    s = summarize(df).set_index(["algorithm", "learning_rate"])
    assert s.loc[("cd", 0.05), "n"] == 2 and s.loc[("cd", 10.0), "not_ok"] >= 1


def test_failing_run_is_recorded_with_its_error():
    # plan refuses run_overrides a run refuses; specs made by hand reach the runs
    import dataclasses
    specs = [dataclasses.replace(s, run_overrides={"metrics": ["train_ll"], "exact_max_bits": 2})
             for s in plan(TINY, algorithms="cd", trials=2)]
    with pytest.warns(RuntimeWarning, match="2 of 2 run.s. failed.*exact log-likelihood needs"):
        df = run_specs(specs, workers=0, progress=False)
    assert df.run_id.tolist() == ["t0-cd", "t1-cd"]           # one row each, no records
    assert (df.status == "failed").all() and df.epoch.isna().all()
    assert df.error.str.startswith("ValueError: exact log-likelihood needs").all()


@pytest.mark.slow
def test_ctrl_c_on_the_command_line_keeps_the_records(tmp_path):
    """A real SIGINT to the process group (what Ctrl-C in a terminal sends) of `rbmviz sweep`
    on a process pool: exit 130, the records so far in the file, no worker left behind."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "s.csv"
    cmd = [sys.executable, "-m", "rbmviz", "sweep", "--dataset", "shifting_bar", "--N", "12",
           "--B", "3", "--n-hidden", "10", "--init-scale", "0.5", "--k", "10", "--epochs", "2000000",
           "--eval-every", "2000", "--algorithms", "cd,pcd", "--workers", "2", "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(15)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted: 0 of 2 run(s) finished" in err
    back = pd.read_csv(out)
    assert len(back) > 2 and set(back.status) == {"interrupted"}
    deadline = time.monotonic() + 10              # the workers are gone too
    while time.monotonic() < deadline:
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        left = subprocess.run(["ps", "-o", "pid,cmd", "-g", str(p.pid)], capture_output=True,
                              text=True).stdout
        os.killpg(p.pid, signal.SIGKILL)
        pytest.fail(f"processes left in the sweep's process group:\n{left}")


def test_plan_algorithm_settings_apply_to_one_algorithm_and_show_in_its_labels():
    specs = plan(TINY, algorithms="cd,pcd", trials=2, grid={"learning_rate": [0.1]},
                 algorithm_settings={"pcd": {"learning_rate": 0.05, "k": 3}})
    cd = [s for s in specs if s.algorithm == "cd"]
    pcd = [s for s in specs if s.algorithm == "pcd"]
    assert [s.settings["learning_rate"] for s in cd] == [0.1, 0.1]
    assert {s.settings["learning_rate"] for s in pcd} == {0.05} and {s.settings["k"] for s in pcd} == {3}
    assert {s.settings["k"] for s in cd} == {1}
    assert {s.labels["learning_rate"] for s in pcd} == {0.05}
    assert all(s.run_id.endswith("learning_rate=0.05") for s in pcd)
    for bad, exc, text in [({"ssd": {"k": 2}}, ValueError, "not among the sweep's algorithms"),
                           ({"cd": {"nope": 1}}, ValueError, "not sweepable"),
                           ({"cd": {"seed": 1}}, ValueError, "not sweepable"),
                           ({"cd": 3}, TypeError, "must be a dict"),
                           ([("cd", {})], TypeError, "must be a dict"),
                           ({"cd": {"k": "x"}}, ValueError, "invalid value")]:
        with pytest.raises(exc, match=text):
            plan(TINY, algorithms="cd,pcd", trials=1, algorithm_settings=bad)
    with pytest.raises(ValueError, match="which the grid varies"):
        plan(TINY, algorithms="cd,pcd", trials=1, grid={"learning_rate": [0.1, 0.5]},
             algorithm_settings={"pcd": {"learning_rate": 0.05}})


def test_out_file_rewrites_take_a_bounded_share_of_the_time(tmp_path, monkeypatch):
    """The ``out`` file is rewritten whole; a rewrite that takes long (a large sweep) makes the
    next one wait ``duration / _WRITE_SHARE``, never less than ``_WRITE_EVERY``."""
    st = sw._store
    clock = [1000.0]
    monkeypatch.setattr(st.time, "monotonic", lambda: clock[0])
    out = st._Output(tmp_path / "r.csv", overwrite=False)
    calls = []

    def frame(cost):
        def make():
            calls.append(cost)
            clock[0] += cost                  # building and writing the frame takes `cost` s
            return pd.DataFrame({"epoch": [1, 2]})
        return make

    out.write(frame(0.01))                   # fast: the floor applies
    assert out._gap == st._WRITE_EVERY
    clock[0] += st._WRITE_EVERY - 0.001
    out.write(frame(0.01))
    assert len(calls) == 1                    # too early
    clock[0] += 0.002
    out.write(frame(3.0))                     # slow: 3 s -> wait 3 / share
    assert len(calls) == 2 and out._gap == pytest.approx(3.0 / st._WRITE_SHARE)
    clock[0] += 3.0 / st._WRITE_SHARE - 1.0
    out.write(frame(0.01))
    assert len(calls) == 2
    out.write(frame(0.01), force=True)        # the final write is never skipped
    assert len(calls) == 3
    assert pd.read_csv(tmp_path / "r.csv")["epoch"].tolist() == [1, 2]
