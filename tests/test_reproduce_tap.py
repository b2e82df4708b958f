"""Tramel et al. (2018) reproduction: ``rbmviz reproduce tap`` — its tables, summary, figure
and command line (reference/tap-experiments.md), on tiny runs."""
import json

import numpy as np
import pytest

import rbmviz
from rbmviz import cli, datasets, tap
from rbmviz.datasets import DatasetNotFoundError
from rbmviz.reproduce import tap as rt
from rbmviz.reproduce import tap_summary

CURVE_COLUMNS = {"n_hidden", "n_visible", "epoch", "updates", "wall_time", "tap_ll", "tap_ll_sem",
                 "tap_ll_per_unit", "tap_ll_per_unit_sem", "exact_ll", "tap_log_z", "n_init",
                 "n_converged", "n_unique", "unique_fraction", "mean_free_energy",
                 "min_free_energy", "max_free_energy", "weight_norm", "eval_iterations",
                 "n_fallback", "train_not_converged"}


def _toy_data():
    """40 rows of 16 pixels: two prototypes (first / second half on) with 5 % of the bits
    flipped; labels 0..9 cyclically (3, 6, 7 present); every third row as test images."""
    rng = np.random.default_rng(0)
    P = np.zeros((2, 16))
    P[0, :8] = P[1, 8:] = 1
    X = np.abs(P[rng.integers(0, 2, 40)] - (rng.random((40, 16)) < 0.05))
    return X, np.arange(40) % 10, X[::3]


@pytest.fixture(scope="module")
def tiny():
    X, y, Xt = _toy_data()
    tables, summary = rt.run(epochs=4, samples=40, eval_samples=40, hidden=(3, 6),
                             count_hidden=6, batch_size=10, n_solutions=10, learning_rate=0.3,
                             isomap_epochs=(1, 3), ps=(0.0, 0.1, 0.3, 0.5), seed=1,
                             data=(X, y, Xt))
    return tables, summary


def test_tiny_reproduction_tables(tiny):
    tables, summary = tiny
    assert set(tables) == set(rt.TABLES)
    c = tables["curves"]
    assert CURVE_COLUMNS <= set(c.columns)
    # every N_h recorded at epochs 0..4 (eval_every 1), in order
    assert c.groupby("n_hidden")["epoch"].apply(list).to_dict() == {3: [0, 1, 2, 3, 4],
                                                                    6: [0, 1, 2, 3, 4]}
    assert (c["n_init"] == 40).all() and (c["n_converged"] == 40).all()
    assert (c["updates"] == 4 * c["epoch"]).all()             # 40 rows / batch 10
    # per-unit values are the per-example ones divided by N_v + N_h
    np.testing.assert_allclose(c["tap_ll_per_unit"], c["tap_ll"] / (16 + c["n_hidden"]))
    # weights start at N(0, 1e-3^2): one TAP solution, TAP LL = exact LL to O(W^2)
    first = c[c["epoch"] == 0]
    assert (first["n_unique"] == 1).all()
    np.testing.assert_allclose(first["tap_ll"], first["exact_ll"], atol=1e-4)
    # small models: the exact LL is there and TAP stays close to it; training improves it
    assert c["exact_ll"].notna().all()
    assert (abs(c["tap_ll"] - c["exact_ll"]) < 0.3).all()
    last = c[c["epoch"] == 4].set_index("n_hidden")
    assert (last["exact_ll"] > first.set_index("n_hidden")["exact_ll"] + 0.5).all()
    # solutions: one row per unique solution, counts add up to the converged runs
    s = tables["solutions"]
    assert set(s.columns) == {"n_hidden", "epoch", "solution", "free_energy", "count"}
    per = s.groupby(["n_hidden", "epoch"]).agg(n=("solution", "size"), runs=("count", "sum"))
    cc = c.set_index(["n_hidden", "epoch"])
    assert (per["n"] == cc["n_unique"]).all() and (per["runs"] == cc["n_converged"]).all()
    means = s.groupby(["n_hidden", "epoch"])["free_energy"].mean()
    np.testing.assert_allclose(means, cc["mean_free_energy"].loc[means.index], rtol=1e-12)
    # Isomap: the counting model only, the requested epochs plus the last
    iso = tables["isomap"]
    if len(iso):
        assert set(iso["n_hidden"]) == {6} and set(iso["epoch"]) <= {1, 3, 4}
        assert {"x", "y", "free_energy", "count", "fitted"} <= set(iso.columns)
    dm = tables["data_map"]
    assert set(dm["epoch"]) == {1, 3, 4} and set(dm["label"]) == {3, 6, 7}
    assert len(dm) == 3 * 12                    # rows with labels 3, 6, 7 among 40, per epoch
    assert dm[["x", "y", "sol_x", "sol_y"]].notna().all().all()
    # denoising: the baselines once (n_hidden 0), TAP per model, the same images
    d = tables["denoising"]
    assert sorted(set(zip(d["method"], d["n_hidden"]))) == [("nn", 0), ("ope", 0), ("tap", 3),
                                                            ("tap", 6)]
    assert (d["n_images"] == 14).all() and sorted(set(d["p"])) == [0.0, 0.1, 0.3, 0.5]
    p0 = d[(d["p"] == 0.0) & (d["method"] != "nn")]
    assert (p0["mcc"] == 1.0).all()                             # exact recovery at p = 0
    assert summary["settings"]["hidden"] == [3, 6]


def test_tap_ll_matches_library_log_likelihood():
    """evaluate_tap's ``−F(v) − log_z`` equals rbmviz.tap.log_likelihood's eq. (39) form
    (data term + mean 𝔽 over unique solutions) on the same solutions."""
    X, _, _ = _toy_data()
    rbm = rbmviz.RBM(16, 5, scale=0.8, seed=3)
    ev = rt.evaluate_tap(rbm, X, damping=0.5, tol=1e-10, fallback_damping=None)
    ref = tap.log_likelihood(rbm, X, damping=0.5, tol=1e-10, details=True)
    assert ev["ll"] == pytest.approx(ref.value, abs=1e-10)
    assert ev["stats"]["n_unique"] == ref.n_solutions
    ll_rows = ref.data_term + ref.mean_free_energy
    np.testing.assert_allclose(ev["ll_rows"], ll_rows, atol=1e-10)
    assert ev["ll_sem"] == pytest.approx(np.std(ll_rows, ddof=1) / np.sqrt(len(X)), rel=1e-9)


def test_evaluation_counts_one_solution_at_initialisation():
    """Why the evaluation iterates undamped: a damped run stopped at an MSE change of 1e-8 is
    still ~1e-4 from its fixed point, so at initialisation (a single TAP solution) every run
    looks "unique"; the undamped iteration (Alg. 1 as printed) merges them."""
    X = (np.random.default_rng(0).random((60, 40)) < 0.3).astype(float)
    rbm = rbmviz.RBM(40, 8, scale=1e-3, seed=0)
    with pytest.warns(RuntimeWarning, match="counted many times"):
        damped = rt.evaluate_tap(rbm, X, damping=0.5, tol=1e-8, fallback_damping=None)
    assert damped["stats"]["n_unique"] > 1
    # solved to the default 1e-12 (rbmviz.tap.COUNT_TOL) the damped runs merge too
    tight = rt.evaluate_tap(rbm, X, damping=0.5, fallback_damping=None)
    assert tight["stats"]["n_unique"] == 1
    ev = rt.evaluate_tap(rbm, X)
    assert ev["stats"]["n_unique"] == 1 and ev["n_fallback"] == 0
    assert ev["ll"] == pytest.approx(damped["ll"], abs=1e-6)


def test_fallback_resolves_non_converged_rows():
    """Rows the undamped pass cannot converge (cut off after one iteration here) are solved
    again with damping; the result is the damped solution of those rows."""
    X, _, _ = _toy_data()
    rbm = rbmviz.RBM(16, 5, scale=0.8, seed=3)
    ev = rt.evaluate_tap(rbm, X, first_max_iter=1, fallback_damping=0.5, fallback_tol=1e-12)
    assert ev["n_fallback"] == len(X) and ev["sol"].converged.all()
    ref = tap.solve(rbm, X, damping=0.5, tol=1e-12)
    np.testing.assert_allclose(ev["sol"].av, ref.av, atol=1e-14)
    np.testing.assert_allclose(ev["sol"].log_z, ref.log_z, atol=1e-12)


def test_reproducible_from_seed():
    X, y, Xt = _toy_data()
    kw = dict(epochs=2, samples=40, eval_samples=20, hidden=(4,), batch_size=10,
              n_solutions=5, learning_rate=0.05, ps=(0.2,), data=(X, y, Xt))
    recs, models = [], {}
    a, _ = rt.run(seed=5, callback=recs.append, models=models, **kw)
    b, _ = rt.run(seed=5, **kw)
    # the callback saw every curve row as it was made; the trained model is handed back
    assert [r["epoch"] for r in recs] == list(a["curves"]["epoch"])
    assert recs[-1]["tap_ll"] == a["curves"]["tap_ll"].iloc[-1]
    assert list(models) == [4]
    assert rt.evaluate_tap(models[4], X[:20])["ll"] == pytest.approx(recs[-1]["tap_ll"], abs=1e-12)
    c, _ = rt.run(seed=6, **kw)
    for name in rt.TABLES:
        cols = [k for k in a[name].columns if k != "wall_time"]
        assert a[name][cols].equals(b[name][cols]), name
    assert not np.allclose(a["curves"]["tap_ll"].iloc[1:], c["curves"]["tap_ll"].iloc[1:])


def test_summary_claims_and_figure(tiny):
    tables, summary = tiny
    json.dumps(summary)                                       # serialisable
    text = rt.format_summary(summary)
    assert "The paper's claims and this run" in text and "TAP LL/unit" in text
    claims = {c["claim"]: c for c in summary["claims"]}
    assert claims["one TAP solution at the start of training"]["holds"] is True
    assert "(near-)exact recovery at small noise" not in claims          # no p in (0, 0.05]
    assert all(c["holds"] in (True, False, None) for c in summary["claims"])
    assert all(c["criterion"] and "judged" in c for c in summary["claims"])
    by = {m["n_hidden"]: m for m in summary["models"]}
    c = tables["curves"]
    assert by[6]["n_unique_first"] == 1
    assert by[6]["tap_ll_per_unit_last"] == pytest.approx(
        c[(c.n_hidden == 6) & (c.epoch == 4)]["tap_ll_per_unit"].iloc[0])
    import holoviews as hv
    hv.extension("bokeh", logo=False)
    fig = rt.figure(tables)
    assert isinstance(fig, hv.Layout)
    n_iso = tables["isomap"]["epoch"].nunique()
    n_map = tables["data_map"]["epoch"].nunique()
    assert len(fig) == 4 + n_iso + n_map                     # LL, counts, energies, denoising
    hv.render(fig, backend="bokeh")                           # builds
    assert len(rt.figure(tables, ("denoising", "curves"))) == 2
    with pytest.raises(ValueError, match="unknown figure part 'fig3'"):
        rt.figure(tables, ("fig3",))


@pytest.mark.parametrize("kw, msg", [
    (dict(hidden=(5,), count_hidden=7), "count_hidden=7 must be one of"),
    (dict(hidden=()), "hidden is empty"),
    (dict(samples=50, batch_size=100), "batch_size=100 is larger than samples=50"),
    (dict(ps=(0.6,)), "p (flip probability) must be <= 0.5"),
    (dict(eval_damping=0.0), "eval_damping must be > 0"),
    (dict(epochs=-1), "epochs must be >= 0"),
    (dict(momentum_form="nesterov"), "unknown momentum_form 'nesterov'"),
])
def test_bad_settings(kw, msg):
    X, y, Xt = _toy_data()
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        rt.run(**{"samples": 40, "data": (X, y, Xt), "batch_size": 10, **kw})


def test_bad_data():
    X, y, _ = _toy_data()
    with pytest.raises(TypeError, match="data must be a tuple"):
        rt.run(samples=40, batch_size=10, data=X)
    with pytest.raises(ValueError, match="binary"):
        rt.run(samples=40, batch_size=10, data=(X * 0.5, y, None))
    with pytest.raises(ValueError, match="labels"):
        rt.run(samples=40, batch_size=10, data=(X, y[:5], None))


def _mnist_or_skip():
    try:
        datasets.mnist(limit=1)
    except DatasetNotFoundError as exc:      # pragma: no cover - data not installed
        pytest.skip(f"MNIST not available: {exc}")


def test_cli_reproduce_tap_writes_outputs_and_never_overwrites(tmp_path, capsys):
    _mnist_or_skip()
    out = tmp_path / "tap"
    args = ["reproduce", "tap", "--epochs", "1", "--samples", "200", "--eval-samples", "100",
            "--test-samples", "20", "--hidden", "5", "--ps", "0,0.2", "--quiet",
            "--out", str(out)]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "Tramel et al. (2018)" in text and "The paper's claims and this run" in text
    assert sorted(p.name for p in out.iterdir()) == sorted(rt.FILES)
    import pandas as pd
    curves = pd.read_csv(out / "curves.csv")
    assert list(curves.epoch) == [0, 1] and set(curves.n_hidden) == {5}
    assert (curves.n_init == 100).all() and curves.exact_ll.notna().all()
    den = pd.read_csv(out / "denoising.csv")
    assert set(den.method) == {"tap", "ope", "nn"} and (den.n_images == 20).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["samples"] == 200 and summary["settings"]["epochs"] == 1
    assert "<html" in (out / "figure.html").read_text()[:2000].lower()
    before = (out / "summary.json").read_bytes()
    assert cli.main(args) == 2                                # refused before anything runs
    assert "exists and is not empty" in capsys.readouterr().err
    assert (out / "summary.json").read_bytes() == before
    (out / "notes.txt").write_text("mine")
    assert cli.main(args[:-2] + ["--out", str(out), "--overwrite", "--no-html"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f for f in rt.FILES if f != "figure.html"] + ["notes.txt"])


def test_cli_reproduce_tap_bad_options(capsys):
    for bad, msg in [(["--hidden", "a"], "comma-separated"),
                     (["--hidden", "5", "--count-hidden", "9"], "count_hidden=9"),
                     (["--ps", "0.7"], "flip probability"),
                     (["--samples", "0"], "samples must be >= 2"),
                     (["--epochs", "-2"], "epochs must be >= 0"),
                     (["--train-iter", "-1"], "train_iter must be >= 0"),
                     (["--eval-epochs", "1,x"], "--eval-epochs"),
                     (["--eval-fallback-damping", "0.5,2"], "eval_fallback_damping must be <= 1")]:
        assert cli.main(["reproduce", "tap", "--quiet", *bad]) == 2
        assert msg in capsys.readouterr().err


@pytest.mark.slow
def test_short_mnist_run_shows_the_papers_trends():
    """The quick form of the command line (2,000 rows, 5 epochs, N_h = 25 and 100, M = K = 20,
    γ = 0.05; about 3 min of CPU with one BLAS thread): the TAP log-likelihood rises, the
    solution count starts at 1 and grows (to 57 of 1,000 for N_h = 100, measured: below the
    paper's 10 %), the mean TAP free energy rises then falls, and TAP denoising beats the
    OPE at p = 0.1–0.3."""
    _mnist_or_skip()
    tables, summary = rt.run(epochs=5, samples=2000, eval_samples=1000, test_samples=200,
                             hidden=(25, 100), batch_size=20, n_solutions=20,
                             learning_rate=0.05, ps=(0.0, 0.1, 0.2, 0.3))
    print(rt.format_summary(summary))
    claims = {c["claim"]: c for c in summary["claims"]}
    for claim in ("TAP log-likelihood rises during training",
                  "one TAP solution at the start of training",
                  "the number of unique solutions grows with training",
                  "TAP free energy first increases, then slowly decreases",
                  "TAP denoising beats the OPE at every noise level (N_h <= 100)",
                  "no explosion of solutions"):
        assert claims[claim]["holds"], claims[claim]


def test_bench_numpy_peer_is_the_same_update():
    """bench/bench_tap_train.py times rbmviz's TAP update against a plain-numpy Alg. 2; the
    comparison is fair only if both compute the same update (to round-off)."""
    import sys
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from bench import bench_tap_train as bt
    rng = np.random.default_rng(0)
    X = (rng.random((300, 784)) < 0.2).astype(float)
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):   # small GEMMs
        res = bt.check_agreement(X, rng.permutation(300), n_batches=2)
    assert res["match"], res["detail"]


def _frames_equal(a, b, skip=("wall_time",)):
    import pandas as pd
    cols = [c for c in a.columns if c not in skip]
    pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True),
                                  check_dtype=False, check_exact=True)


def test_resumed_run_equals_uninterrupted_run(tmp_path):
    """A run stopped after 2 epochs and continued to 4 from its state directory gives the
    tables of an uninterrupted 4-epoch run, bit for bit; models are saved at chosen epochs."""
    X, y, Xt = _toy_data()
    kw = dict(samples=40, eval_samples=40, hidden=(3, 6), count_hidden=6, batch_size=10,
              n_solutions=10, learning_rate=0.3, isomap_epochs=(1, 3), ps=(0.0, 0.3), seed=1,
              data=(X, y, Xt))
    full, _ = rt.run(epochs=4, **kw)
    state = tmp_path / "state"
    models = {}
    rt.run(epochs=2, state_dir=state, save_epochs=(1, 4), **kw)
    assert (state / "nh6" / "model_epoch1.npz").exists()
    assert not (state / "nh6" / "model_epoch4.npz").exists()
    resumed, _ = rt.run(epochs=4, state_dir=state, save_epochs=(1, 4), models=models, **kw)
    for name in rt.TABLES:
        _frames_equal(full[name], resumed[name])
    m4 = rbmviz.RBM.load(state / "nh6" / "model_epoch4.npz")
    np.testing.assert_array_equal(m4.W, models[6].W)
    # a third call trains nothing: every evaluation is read back
    again, _ = rt.run(epochs=4, state_dir=state, **kw)
    _frames_equal(again["curves"], resumed["curves"], skip=())


def test_a_run_cut_off_between_evaluations_continues_bit_for_bit(tmp_path, monkeypatch):
    """The training state is written after every epoch (Run.state): a run stopped at epoch 4,
    after the evaluation of epoch 3 and before that of epoch 5, continues from epoch 4 and
    gives the tables of an uninterrupted run; the state file restores into a fresh Run."""
    import pickle

    from rbmviz.reproduce import tap_run

    X, y, Xt = _toy_data()
    kw = dict(epochs=5, eval_every=3, samples=40, eval_samples=40, hidden=(3,), batch_size=10,
              n_solutions=10, learning_rate=0.3, isomap_epochs=(), ps=(), seed=1,
              data=(X, y, None))
    full, _ = rt.run(**kw)
    evaluate = tap_run._evaluate_epoch

    def crash_at_5(s, nh, ep, *args):
        if ep == 5:
            raise KeyboardInterrupt
        return evaluate(s, nh, ep, *args)

    monkeypatch.setattr(tap_run, "_evaluate_epoch", crash_at_5)
    with pytest.raises(KeyboardInterrupt):
        rt.run(state_dir=tmp_path, **kw)
    monkeypatch.setattr(tap_run, "_evaluate_epoch", evaluate)
    got = pickle.loads((tmp_path / "nh3" / "run_state.pkl").read_bytes())
    s = tap_run._check_settings(**{**rt._DEFAULTS, **{k: v for k, v in kw.items() if k != "data"},
                                   "test_samples": 0})
    _, _, fresh = tap_run._new_model(s, 0, 3, X)
    fresh.restore(got["run"])
    assert fresh.epoch == 4 and fresh.algorithm.updates == 16
    resumed, _ = rt.run(state_dir=tmp_path, **kw)
    for name in rt.TABLES:
        _frames_equal(full[name], resumed[name])


def test_a_state_directory_that_cannot_be_continued_is_refused_by_name(tmp_path):
    """Never a silent mis-resume: a training state of the earlier format (state.npz), an
    unreadable one and one of another model are refused, naming the file and what to do."""
    import shutil

    X, y, Xt = _toy_data()
    kw = dict(samples=40, eval_samples=40, batch_size=10, n_solutions=10, learning_rate=0.3,
              isomap_epochs=(), ps=(), seed=1, data=(X, y, None))
    rt.run(epochs=1, hidden=(3,), state_dir=tmp_path, **kw)
    nh3 = tmp_path / "nh3"
    saved = (nh3 / "run_state.pkl").read_bytes()
    (nh3 / "state.npz").write_bytes(b"PK")
    with pytest.raises(ValueError, match=r"state file .*nh3/state\.npz was written by an earlier "
                                         r"version .*delete the folder .*nh3 to train N_h=3"):
        rt.run(epochs=2, hidden=(3,), state_dir=tmp_path, **kw)
    (nh3 / "state.npz").unlink()
    (nh3 / "run_state.pkl").write_bytes(saved[: len(saved) // 2])
    with pytest.raises(ValueError, match=r"state file .*run_state\.pkl is not a readable "
                                         r"training state .*delete it"):
        rt.run(epochs=2, hidden=(3,), state_dir=tmp_path, **kw)
    (nh3 / "run_state.pkl").write_bytes(saved)
    (tmp_path / "nh6").mkdir()
    shutil.copy(nh3 / "run_state.pkl", tmp_path / "nh6" / "run_state.pkl")
    with pytest.raises(ValueError, match=r"nh6/run_state\.pkl holds the state of another run "
                                         r"\(.*shape.*\);.* delete it"):
        rt.run(epochs=2, hidden=(6,), state_dir=tmp_path, **kw)


def test_resume_refuses_other_settings(tmp_path):
    X, y, Xt = _toy_data()
    kw = dict(samples=40, eval_samples=40, hidden=(3,), batch_size=10, n_solutions=10,
              isomap_epochs=(), ps=(), seed=1, data=(X, y, None))
    rt.run(epochs=1, learning_rate=0.3, state_dir=tmp_path, **kw)
    with pytest.raises(ValueError, match="learning_rate"):
        rt.run(epochs=2, learning_rate=0.1, state_dir=tmp_path, **kw)
    with pytest.raises(ValueError, match="save_epochs needs state_dir"):
        rt.run(epochs=1, learning_rate=0.3, save_epochs=(1,), **kw)
    # the evaluation's iteration budget: the training's by default, and then not a new
    # setting (state directories made before it continue); another value is another run
    rt.run(epochs=1, learning_rate=0.3, state_dir=tmp_path, eval_max_iter=1000, **kw)
    with pytest.raises(ValueError, match="eval_max_iter"):
        rt.run(epochs=2, learning_rate=0.3, state_dir=tmp_path, eval_max_iter=4000, **kw)


def test_training_products_in_float32_continue_a_float64_state(tmp_path):
    """A state directory trained with float64 products continues with float32 ones (a
    precision, not a setting of the experiment): the rows trained so are marked, the others
    stay bit for bit, and the result stays close to an all-float64 run."""
    X, y, Xt = _toy_data()
    kw = dict(samples=40, eval_samples=40, hidden=(6,), batch_size=10, n_solutions=10,
              learning_rate=0.3, isomap_epochs=(), ps=(), seed=1, data=(X, y, None))
    ref, _ = rt.run(epochs=4, **kw)
    rt.run(epochs=2, state_dir=tmp_path, **kw)
    mixed, _ = rt.run(epochs=4, state_dir=tmp_path, products="float32", **kw)
    a, b = ref["curves"], mixed["curves"]
    assert b["train_products"].isna().tolist() == [True, True, True, False, False]
    assert (b["train_products"].iloc[3:] == "float32").all()
    _frames_equal(a.iloc[:3], b.iloc[:3].drop(columns="train_products"))
    np.testing.assert_allclose(b["tap_ll"], a["tap_ll"], rtol=1e-4)
    assert not np.array_equal(b["tap_ll"].iloc[3:], a["tap_ll"].iloc[3:])   # float32 really ran
    with pytest.raises(ValueError, match="products='float32' is for binary models"):
        rt._check_settings(**{**rt._DEFAULTS, "dataset": "cbcl", "epochs": 1, "samples": None,
                              "eval_samples": None, "test_samples": 0, "hidden": None,
                              "count_hidden": None, "eval_every": 1, "ps": (),
                              "learning_rate": None, "products": "float32", "seed": 0})


def test_eval_max_iter_reaches_the_evaluation(monkeypatch):
    from rbmviz.reproduce import tap_run
    X, y, Xt = _toy_data()
    seen = []
    real = tap_run.evaluate_tap

    def spy(rbm, V, **kw):
        seen.append(kw["max_iter"])
        return real(rbm, V, **kw)
    monkeypatch.setattr(tap_run, "evaluate_tap", spy)
    kw = dict(samples=40, eval_samples=40, hidden=(3,), batch_size=10, n_solutions=10,
              isomap_epochs=(), ps=(), seed=1, data=(X, y, None), epochs=1, learning_rate=0.3)
    rt.run(eval_max_iter=4000, **kw)
    rt.run(**kw)
    assert seen == [4000, 4000, 1000, 1000]
    with pytest.raises(ValueError, match="eval_max_iter"):
        rt.run(eval_max_iter=0, **kw)


def _settings(argv):
    """The settings ``rbmviz reproduce tap ARGV`` gives (before the quick form), a dict."""
    from rbmviz.cli import build_parser
    from rbmviz.cli.reproduce import settings_from_args
    from rbmviz.reproduce._study import values
    args = build_parser().parse_args(["reproduce", "tap", *argv])
    return values(settings_from_args(rt.Settings, args, args._experiment_parser))


def test_quick_form_defaults():
    """A short run gets more, smaller updates (stated); the paper's settings otherwise; an
    option the user set is never replaced."""
    a = _settings(["--epochs", "5", "--samples", "2000"])
    note = rt.resolve_defaults(a)
    assert (a["batch_size"], a["learning_rate"], a["hidden"]) == (20, 0.05, [25, 100])
    assert (a["eval_samples"], a["test_samples"]) == (1000, 200)
    assert "quick form" in note and "100 updates" in note and "batch-size 20" in note
    assert "hidden 25,100" in note
    a = _settings(["--epochs", "5", "--samples", "2000", "--batch-size", "50", "--hidden", "7"])
    note = rt.resolve_defaults(a)
    assert (a["batch_size"], a["learning_rate"], a["hidden"]) == (50, 0.05, [7])
    assert "batch-size" not in note
    a = _settings([])
    assert rt.resolve_defaults(a) is None
    assert (a["batch_size"], a["learning_rate"], a["hidden"], a["eval_samples"],
            a["test_samples"]) == (100, 0.005, [25, 50, 100, 500], 10_000, 1_000)
    assert _settings(["--quick"]) == _settings(["--epochs", "5", "--samples", "2000"])


def test_cli_study_dispatches_to_tap_beyond(monkeypatch):
    """``rbmviz reproduce tap --study NAME`` hands the parsed options to
    rbmviz.reproduce.tap_beyond.run_study and returns its exit code."""
    from rbmviz.reproduce import tap_beyond
    seen = {}

    def fake(name, args):
        seen.update(name=name, quick=args.quick, seed=args.seed)
        return 7
    monkeypatch.setattr(tap_beyond, "run_study", fake)
    assert cli.main(["reproduce", "tap", "--study", "fig12", "--quick", "--seed", "3"]) == 7
    assert seen == {"name": "fig12", "quick": True, "seed": 3}


def test_train_iter_and_eval_epochs(tmp_path):
    """``train_iter`` trains with fixed-iteration solves (another run than iterating to tol,
    ``train_iter=0``, and a setting of the state directory: a state trained to tol is not
    continued at the default 10); ``eval_epochs`` adds recorded epochs to the sparse
    ``eval_every`` schedule."""
    X, y, Xt = _toy_data()
    kw = dict(samples=40, eval_samples=40, hidden=(6,), batch_size=10, n_solutions=10,
              learning_rate=0.3, isomap_epochs=(), ps=(), seed=1, data=(X, y, None))
    conv, _ = rt.run(epochs=5, eval_every=4, train_iter=0, state_dir=tmp_path / "c", **kw)
    assert conv["curves"]["epoch"].tolist() == [0, 4, 5]
    assert "train_iter" not in json.loads((tmp_path / "c" / "settings.json").read_text())
    with pytest.raises(ValueError, match="train_iter"):
        rt.run(epochs=6, eval_every=4, state_dir=tmp_path / "c", **kw)
    default, _ = rt.run(epochs=5, eval_every=4, **kw)
    _frames_equal(default["curves"], rt.run(epochs=5, eval_every=4, train_iter=10, **kw)[0]["curves"])
    fixed, _ = rt.run(epochs=5, eval_every=4, eval_epochs=(1, 2, 9), train_iter=2,
                      state_dir=tmp_path / "s", **kw)
    assert fixed["curves"]["epoch"].tolist() == [0, 1, 2, 4, 5]
    assert (fixed["curves"]["train_not_converged"] == 0).all()
    a = conv["curves"].set_index("epoch")["tap_ll"]
    b = fixed["curves"].set_index("epoch")["tap_ll"]
    assert a[0] == b[0] and a[5] != b[5]
    again, _ = rt.run(epochs=5, eval_every=4, eval_epochs=(1, 2, 9), train_iter=2,
                      state_dir=tmp_path / "s", **kw)
    _frames_equal(fixed["curves"], again["curves"])
    with pytest.raises(ValueError, match="train_iter"):
        rt.run(epochs=5, eval_every=4, eval_epochs=(1, 2, 9), train_iter=3,
               state_dir=tmp_path / "s", **kw)
    with pytest.raises(ValueError, match="train_iter"):
        rt.run(epochs=1, train_iter=-1, **kw)
    with pytest.raises(ValueError, match="eval_epochs"):
        rt.run(epochs=1, eval_epochs=(-1,), **kw)


def test_restored_steps_stay_out_of_the_progress_rate():
    """After a resume the time left is estimated from the steps actually run: 50 restored steps
    at the start do not make the rate look 10x faster than the 5 steps done since."""
    import io
    import time

    from tqdm.auto import tqdm

    from rbmviz.reproduce.tap_run import _skip

    bar = tqdm(total=100, file=io.StringIO(), mininterval=0)
    _skip(bar, 50)
    t0 = time.perf_counter()
    for _ in range(5):
        time.sleep(0.02)
        bar.update(1)
    observed = 5 / (time.perf_counter() - t0)
    d = bar.format_dict
    bar.close()
    assert d["n"] == 55 and d["initial"] == 50
    assert d["rate"] < 3 * observed          # with the 50 restored steps counted: > 10x


def test_a_continuation_may_add_a_damping_to_the_evaluation(tmp_path):
    """eval_fallback_damping reaches only rows the attempts before it left unconverged, so a
    state directory continues with another ladder; every curve row records its own."""
    X, y, Xt = _toy_data()
    kw = dict(samples=40, eval_samples=40, hidden=(6,), batch_size=10, n_solutions=10,
              learning_rate=0.3, isomap_epochs=(), ps=(), seed=1, data=(X, y, None))
    rt.run(epochs=1, state_dir=tmp_path, eval_fallback_damping=(0.5,), **kw)
    tables, _ = rt.run(epochs=2, state_dir=tmp_path, **kw)
    assert list(tables["curves"]["eval_fallback_damping"]) == ["0.5", "0.5", "0.5,0.2,0.1,0.05"]
    with pytest.raises(ValueError, match="eval_fallback_damping: an empty sequence"):
        rt.run(epochs=1, eval_fallback_damping=(), **kw)


def test_free_energy_claim_reads_the_first_turn_and_a_rise_after_it():
    """Fig. 5's 'first increases, then slowly decreases': the first local maximum is the
    turn; a curve that falls and then climbs back by more than a quarter of its fall (the
    paper-scale N_h = 100 run: 8.89 at epoch 2, -40.06 at 25, 11.43 at 100) rises again."""
    from rbmviz.reproduce.tap_summary import _free_energy_turns
    ep = np.array([0, 1, 2, 3, 5, 10, 25, 50, 100])
    up_down = _free_energy_turns(ep, np.array([0, 30, 36, 25, 20, 15, 12, 13, 14.0]))
    assert (up_down["free_energy_turn_epoch"], up_down["free_energy_trough_epoch"]) == (2, 25)
    assert up_down["free_energy_rises_again"] is False
    again = _free_energy_turns(ep, np.array([0, 5, 8.9, 5, -1, -18, -40, -37, 11.4]))
    assert again["free_energy_turn"] == 8.9 and again["free_energy_rises_again"] is True
    rising = _free_energy_turns(ep, np.arange(9.0))
    assert rising["free_energy_turn_epoch"] is None


def _tap_case():
    """A summary and tables shaped like the paper's Sec. VII (every claim agrees)."""
    import pandas as pd
    model = dict(n_hidden=100, first_epoch=0, last_epoch=100, gain=0.1,
                 tap_ll_per_unit_first=-0.25, tap_ll_per_unit_last=-0.15, gain_by_epoch_20=0.8,
                 n_unique_first=1, n_unique_last=60, n_unique_max=70, n_init=1000,
                 max_unique_fraction=0.07, free_energy_first=0.0, free_energy_peak=20.0,
                 free_energy_peak_epoch=5, free_energy_last=5.0, free_energy_turn=20.0,
                 free_energy_turn_epoch=5, free_energy_trough=5.0, free_energy_trough_epoch=100,
                 free_energy_rises_again=False)
    rng = np.random.default_rng(0)
    sol = pd.DataFrame([dict(n_hidden=100, epoch=ep, solution=i, count=1,
                             free_energy=(-50 if i % 2 else 50) + rng.normal())
                        for ep in (10, 50, 100) for i in range(20)])
    ps = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5]
    ope = {p: 1 - 1.8 * p for p in ps}
    nn = {p: 0.7 - 0.6 * p for p in ps}
    den = pd.DataFrame(
        [dict(n_hidden=0, p=p, method="ope", mcc=ope[p]) for p in ps]
        + [dict(n_hidden=0, p=p, method="nn", mcc=nn[p]) for p in ps]
        + [dict(n_hidden=100, p=p, method="tap", mcc=max(ope[p], nn[p]) + 0.02) for p in ps])
    summary = dict(models=[model], denoising=[dict(n_hidden=0, method="ope")],
                   settings=dict(count_hidden=100, dataset="binary-mnist"))
    return summary, dict(solutions=sol, denoising=den)


def test_tap_claims_each_can_differ():
    """Each claim of Sec. VII agrees on a hand-made run shaped like the paper's and differs
    (or is inconclusive) when the one property it judges is broken; each records its
    criterion and the number it judged."""
    summary, tables = _tap_case()
    good = {c["claim"]: c for c in tap_summary.claims(summary, tables)}
    assert len(good) == 11 and all(c["verdict"] == "agrees" for c in good.values()), \
        [(k, c["verdict"]) for k, c in good.items() if c["verdict"] != "agrees"]
    assert all(c["criterion"] and c["judged"] is not None for c in good.values())

    def judge(claim, model=None, den=None, sol=None):
        s, t = _tap_case()
        s["models"][0].update(model or {})
        if den is not None:
            den(t["denoising"])
        if sol is not None:
            t["solutions"] = sol(t["solutions"])
        return {c["claim"]: c for c in tap_summary.claims(s, t)}[claim]
    assert judge("TAP log-likelihood rises during training", dict(gain=-0.01))["verdict"] == "differs"
    taper = "most of the improvement comes by about epoch 20, then a steady, slower rate"
    c = judge(taper, dict(gain_by_epoch_20=0.3))
    assert c["verdict"] == "differs" and c["judged"] == 0.3
    assert judge(taper, dict(last_epoch=30))["verdict"].startswith("inconclusive")
    assert judge("one TAP solution at the start of training",
                 dict(n_unique_first=3))["verdict"] == "differs"
    assert judge("the number of unique solutions grows with training",
                 dict(n_unique_last=1))["verdict"] == "differs"
    small = judge("the number of unique solutions grows with training", dict(n_unique_last=2))
    assert small["verdict"].startswith("inconclusive (fewer than 10") and small["judged"] == 2
    c = judge("no explosion of solutions", dict(max_unique_fraction=0.268))
    assert c["verdict"] == "differs" and c["judged"] == 0.268
    assert judge("TAP free energy first increases, then slowly decreases",
                 dict(free_energy_rises_again=True))["verdict"] == "differs"
    tiny_fall = judge("TAP free energy first increases, then slowly decreases",   # 20 -> 19.5
                      dict(free_energy_last=19.5, free_energy_trough=19.5))
    assert tiny_fall["verdict"].startswith("inconclusive (it falls by 0.50 from its peak")
    bands = "two distinct free-energy bands at all epochs (binary-MNIST)"
    one_band = (lambda t: t.assign(free_energy=np.random.default_rng(1).normal(size=len(t))))
    c = judge(bands, sol=one_band)
    assert c["verdict"] == "differs" and c["judged"] == 0.0
    assert judge(bands, sol=lambda t: t.iloc[:5])["verdict"].startswith("inconclusive")

    def lower(method, p, by):
        def f(d):
            d.loc[(d.method == method) & np.isclose(d.p, p), "mcc"] -= by
        return f
    c = judge("(near-)exact recovery at small noise", den=lower("tap", 0.05, 0.3))
    assert c["verdict"] == "differs" and c["judged"] == pytest.approx(1 - 0.09 + 0.02 - 0.3)
    assert judge("(near-)exact recovery at small noise",           # the OPE is not an RBM
                 den=lower("ope", 0.05, 0.3))["verdict"] == "agrees"
    c = judge("TAP denoising beats the OPE at every noise level (N_h <= 100)",
              den=lower("tap", 0.5, 0.4))                 # one p is enough (N_h = 25 at p = 0.5)
    assert c["verdict"] == "differs" and c["judged"] == pytest.approx(-0.08)
    c = judge("TAP approaches the 1-NN curve as p → 0.5 (N_h <= 100)", den=lower("tap", 0.45, 0.2))
    assert c["verdict"] == "differs" and c["judged"] == pytest.approx(0.18)
    c = judge("1-NN beats the OPE for p > 0.2", den=lower("nn", 0.3, 0.3))
    assert c["verdict"] == "differs"


def test_bimodality_coefficient():
    rng = np.random.default_rng(0)
    two = np.concatenate([rng.normal(-5, 1, 200), rng.normal(5, 1, 200)])
    assert tap_summary.bimodality(two) > 5 / 9 > tap_summary.bimodality(rng.normal(size=400))
    assert tap_summary.bimodality([1.0, 2.0]) is None and tap_summary.bimodality([3.0] * 10) is None
