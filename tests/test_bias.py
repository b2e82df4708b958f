"""CD-k bias (Fischer & Igel 2011): exact bias, Δ, the bounds, exact expected-update
training, the reproduction and its command line (reference/cd-bias.md,
reference/reference-numbers.md §1)."""
import json

import numpy as np
import pytest
from brute import random_rbm

import rbmviz
from rbmviz import bias, cli, datasets
from rbmviz import evaluate as ev
from rbmviz.reproduce import cd_bias
from rbmviz.errors import RunDiverged


def _ref_rbm():
    """reference-numbers.md §1.2 (paper convention w = hidden x visible; W = wᵀ)."""
    rbm = rbmviz.RBM(2, 2, init="zeros")
    rbm.set_params(W=np.array([[1.0, -2.0], [0.5, 0.3]]).T, b=[0.1, -0.2], c=[0.3, 0.0])
    return rbm


def _random_data(rng, nv, n_max=6):
    n = int(rng.integers(1, n_max + 1))
    return rng.integers(0, 2, size=(n, nv)).astype(float)   # duplicates allowed


# ---------------------------------------------------------------------------- reference vector

def test_reference_vector_2x2():
    rbm = _ref_rbm()
    vartheta, xi = bias.delta_terms(rbm)
    np.testing.assert_allclose(vartheta, [1.6, 2.2], atol=1e-12)
    np.testing.assert_allclose(xi, [1.7, 0.8], atol=1e-12)
    assert bias.delta(rbm) == pytest.approx(2.2, abs=1e-12)
    assert bias.delta_brute_force(rbm) == pytest.approx(2.2, abs=1e-12)
    np.testing.assert_allclose(ev.visible_distribution(rbm),
                               [0.1879031137, 0.0909732335, 0.5464864375, 0.1746372154], atol=1e-9)
    v0 = np.array([1.0, 0.0])
    single = {1: (0.0659903254, 0.4534452031), 2: (0.0138911013, 0.4533768539),
              5: (0.0001255986, 0.4531718681)}
    batch = {1: (0.0517347523, 0.4089651126), 2: (0.0109047087, 0.4089034681),
             5: (0.0000986119, 0.4087185901)}
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert bias.bound_factors(rbm, v0, 1).distance == pytest.approx(0.4535135625, abs=1e-9)
    assert bias.bound_factors(rbm, V, 1).distance == pytest.approx(0.4090267665, abs=1e-9)
    for k in (1, 2, 5):
        assert bias.cd_bias_exact(rbm, v0, k) == pytest.approx(single[k][0], abs=1e-9)
        assert bias.cd_bias_bound(rbm, v0, k) == pytest.approx(single[k][1], abs=1e-9)
        assert bias.cd_bias_exact(rbm, V, k) == pytest.approx(batch[k][0], abs=1e-9)
        assert bias.cd_bias_bound(rbm, V, k) == pytest.approx(batch[k][1], abs=1e-9)
        # the per-pattern variants (Theorem 3 for every row) agree with the single pattern
        assert bias.cd_bias_exact(rbm, V, k, per_pattern=True)[0] == pytest.approx(single[k][0], abs=1e-9)
        assert bias.cd_bias_bound(rbm, V, k, per_pattern=True)[0] == pytest.approx(single[k][1], abs=1e-9)
        row = bias.bias_table(rbm, V, ks=[k]).iloc[0]
        assert (row.bias, row.bound) == (pytest.approx(batch[k][0], abs=1e-9),
                                         pytest.approx(batch[k][1], abs=1e-9))
    f = bias.bound_factors(rbm, V, 2)
    assert f.bound == pytest.approx(f.distance * f.mixing, rel=1e-15)
    assert f.mixing == pytest.approx((1 - np.exp(-4 * 2.2)) ** 2, rel=1e-14)
    # Bengio–Delalleau-type stand-in: α = max_s |c_s| + Σ_l |W_ls| = 3.3, β = 2.5
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    for k in (1, 5):
        want = 4 * (1 - 4 * sig(-3.3) ** 2 * sig(-2.5) ** 2) ** k
        assert bias.bengio_delalleau_bound(rbm, k) == pytest.approx(want, rel=1e-13)
    # ... which approaches 2**n_visible as the parameters grow
    assert bias.bengio_delalleau_bound(random_rbm(5, 5, scale=20.0), 1) == pytest.approx(32, rel=1e-6)


# ---------------------------------------------------------------------------- sanity checks

def test_zero_weights_give_zero_bias_for_every_k():
    """W = 0: v and h are independent, one Gibbs step samples the model exactly, so the bias
    is 0 for every k ≥ 1 (up to float64 rounding of p and of q_k = p_e Tᵏ)."""
    rng = np.random.default_rng(0)
    for nv, nh in [(3, 2), (4, 4), (6, 6)]:
        rbm = rbmviz.RBM(nv, nh, init="zeros")
        rbm.set_params(b=rng.normal(0, 2, nv), c=rng.normal(0, 2, nh))
        X = _random_data(rng, nv)
        for k in (1, 2, 3, 7):
            assert bias.cd_bias_exact(rbm, X, k) < 1e-14
            assert bias.cd_bias_exact(rbm, X, k, per_pattern=True).max() < 1e-14
            rec = bias.train_expected_cd(rbm.copy(), X, k=k, iterations=0, record_at=[0])
            assert rec.bias.iloc[0] < 1e-14
        assert bias.delta(rbm) == pytest.approx(max(np.abs(rbm.b).max(), np.abs(rbm.c).max()), abs=1e-14)
    # all-zero parameters: Δ = 0, so the bound is 0 as well
    rbm = rbmviz.RBM(3, 3, init="zeros")
    assert bias.delta(rbm) == 0.0 and bias.cd_bias_bound(rbm, [[1, 0, 1]], 1) == 0.0


@pytest.mark.parametrize("nv,nh,scale", [(1, 1, 1.0), (2, 3, 0.5), (3, 2, 2.0), (4, 5, 1.0),
                                         (5, 4, 3.0), (6, 6, 0.3)])
def test_delta_equals_brute_force_max_energy_change(nv, nh, scale):
    for seed in range(3):
        rbm = random_rbm(nv, nh, scale=scale, seed=seed)
        assert bias.delta(rbm) == pytest.approx(bias.delta_brute_force(rbm), rel=1e-12, abs=1e-12)


def test_bias_is_below_both_bounds_on_many_random_models():
    rng = np.random.default_rng(1)
    checked = 0
    for trial in range(40):
        nv, nh = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        rbm = random_rbm(nv, nh, scale=float(rng.choice([0.05, 0.3, 1.0, 3.0])), seed=trial)
        X = _random_data(rng, nv)
        table = bias.bias_table(rbm, X, ks=[1, 2, 3, 5, 10])
        assert (table.bias <= table.bound + 1e-12).all(), (trial, table)
        assert (table.bound <= table.bd_bound + 1e-12).all() or (table.bias <= table.bd_bound).all()
        assert (table.bias <= table.bd_bound + 1e-12).all()
        assert (table.bound < 1).all()
        for k in (1, 3):
            assert (bias.cd_bias_exact(rbm, X, k, per_pattern=True)
                    <= bias.cd_bias_bound(rbm, X, k, per_pattern=True) + 1e-12).all()
        checked += len(table)
    assert checked == 200


def test_exact_bias_equals_gradient_minus_expected_cd_update():
    """Two independent paths: Σ(q_k − p)φ̄ versus evaluate.exact_gradient − expected_cd_update."""
    rng = np.random.default_rng(2)
    for nv, nh, k in [(3, 4, 1), (5, 2, 3), (4, 4, 2)]:
        rbm = random_rbm(nv, nh, scale=1.0, seed=nv + nh)
        X = _random_data(rng, nv)
        g, cd = ev.exact_gradient(rbm, X), ev.expected_cd_update(rbm, X, k)
        signed = bias.cd_bias_parameters(rbm, X, k, signed=True)
        for a, b_, c_ in zip(signed, g, cd):
            np.testing.assert_allclose(a, b_ - c_, atol=1e-13)
        absolute = bias.cd_bias_parameters(rbm, X, k)
        assert absolute[0].shape == (nv, nh) and absolute[1].shape == (nv,) and absolute[2].shape == (nh,)
        assert max(x.max() for x in absolute) == pytest.approx(bias.cd_bias_exact(rbm, X, k), abs=1e-15)


def test_exact_bias_matches_sampled_cd_chains():
    """The exact bias equals E_{q_k}[φ̄] − E_p[φ̄] estimated from many sampled CD-k chains."""
    rbm = random_rbm(4, 3, scale=2.0, seed=2)
    X = np.array([[1, 0, 1, 0], [0, 1, 1, 1], [1, 1, 0, 0]], float)
    n_rep = 40_000                                   # chains per data row
    mW, mb, mc = ev.model_statistics(rbm)
    exact_model = np.concatenate([mW.ravel(), mb, mc])
    for k in (1, 3):
        V = rbm.gibbs(np.repeat(X, n_rep, axis=0), k=k, seed=11 + k)
        PH = rbm.hidden_probabilities(V)
        phi = np.concatenate([(V[:, :, None] * PH[:, None, :]).reshape(len(V), -1), V, PH], axis=1)
        estimate = phi.mean(axis=0) - exact_model
        se = phi.std(axis=0, ddof=1) / np.sqrt(len(V))
        exact = np.concatenate([a.ravel() for a in bias.cd_bias_parameters(rbm, X, k, signed=True)])
        z = np.abs(estimate - exact) / se
        assert z.max() < 5.0, (k, z)
        assert np.abs(estimate).max() == pytest.approx(bias.cd_bias_exact(rbm, X, k), abs=5 * se.max())
        assert bias.cd_bias_exact(rbm, X, k) > 20 * se.max()       # a bias the test can see


# ---------------------------------------------------------------------------- training kernel

@pytest.mark.parametrize("nv,nh,k,wd", [(6, 6, 1, 0.0), (4, 3, 3, 0.01), (3, 5, 2, 0.0),
                                        (1, 1, 1, 0.1), (2, 7, 10, 0.0)])
def test_kernel_step_and_records_match_the_library(nv, nh, k, wd):
    rng = np.random.default_rng(nv * 10 + nh)
    rbm = random_rbm(nv, nh, scale=1.0, seed=3)
    X = _random_data(rng, nv, 8)
    before = rbm.copy()
    df = bias.train_expected_cd(rbm, X, k=k, learning_rate=0.1, iterations=1, weight_decay=wd,
                                record_every=1)
    dW, db, dc = ev.expected_cd_update(before, X, k)
    np.testing.assert_allclose(rbm.W, before.W + 0.1 * (dW - wd * before.W), atol=1e-14)
    np.testing.assert_allclose(rbm.b, before.b + 0.1 * db, atol=1e-14)
    np.testing.assert_allclose(rbm.c, before.c + 0.1 * dc, atol=1e-14)
    assert list(df.iteration) == [0, 1]
    for row, model in zip(df.itertuples(), (before, rbm)):
        ref = bias.bias_table(model, X, ks=[k]).iloc[0]
        for col in ("bias", "bound", "distance", "mixing", "delta", "bd_bound"):
            assert getattr(row, col) == pytest.approx(ref[col], rel=1e-11, abs=1e-13), col
        assert row.log_likelihood == pytest.approx(ev.log_likelihood_exact(model, X), abs=1e-11)
        assert row.weight_norm == pytest.approx(np.linalg.norm(model.W), rel=1e-14)


def test_kernel_handles_huge_preactivations():
    """|pre-activation| > 700: sigmoids are computed one by one (no overflow of exp products)."""
    rbm = rbmviz.RBM(3, 3, init="zeros")
    rbm.set_params(W=np.array([[360.0, -300, 250], [-350, 330, 100], [250, 300, -400]]),
                   b=[-200.0, 10, 5], c=[50.0, -50, 0])
    assert np.abs(rbm.W).sum(axis=0).max() > 700          # the kernel's bound on |a| exceeds 700
    X = np.array([[1, 0, 1], [0, 1, 1]], float)
    df = bias.train_expected_cd(rbm.copy(), X, k=2, iterations=0, record_at=[0])
    ref = bias.bias_table(rbm, X, ks=[2]).iloc[0]
    for col in ("bias", "bound", "distance", "delta"):
        assert df[col].iloc[0] == pytest.approx(ref[col], abs=1e-12)


def test_training_is_deterministic_and_independent_of_batching_runs():
    X = datasets.diag(6)
    make = lambda: [rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=s) for s in range(3)]  # noqa: E731
    a, b = make(), make()
    da = bias.train_expected_cd(a, X, iterations=300, record_every=50, chunk=70)
    db = bias.train_expected_cd(b, X, iterations=300, record_every=50)
    assert da.equals(db)
    single = make()[2]
    ds = bias.train_expected_cd(single, X, iterations=300, record_every=50)
    assert np.array_equal(single.W, a[2].W)
    np.testing.assert_array_equal(ds.drop(columns="run").to_numpy(),
                                  da[da.run == 2].drop(columns="run").to_numpy())
    assert list(da.columns) == ["run", "iteration", "k", *bias.RECORD_COLUMNS]


def test_expected_cd_training_decreases_distance_on_diag():
    X = datasets.diag(6)
    rbm = rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=0)
    df = bias.train_expected_cd(rbm, X, k=1, learning_rate=0.1, iterations=3000, record_every=500)
    dist = df.distance.to_numpy()
    assert dist[-1] < 0.5 * dist[0]
    assert np.all(np.diff(dist) < 0)
    assert (df.bias <= df.bound).all() and (df.bound < 1).all()
    assert df.log_likelihood.iloc[-1] > df.log_likelihood.iloc[0]
    # weight decay keeps the weights (and Δ) smaller
    rbm_wd = rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=0)
    df_wd = bias.train_expected_cd(rbm_wd, X, iterations=3000, weight_decay=0.01, record_at=[3000])
    assert df_wd.delta.iloc[-1] < df.delta.iloc[-1]
    assert np.linalg.norm(rbm_wd.W) < np.linalg.norm(rbm.W)


def test_divergence_is_reported():
    rbm = random_rbm(3, 3, seed=0)
    with pytest.raises(RunDiverged, match="diverged"):
        bias.train_expected_cd(rbm, [[1, 0, 1]], learning_rate=1e308, iterations=5)
    assert np.all(np.isfinite(rbm.W))


def test_parameter_growth_stops_training_and_names_w():
    """η = 1e6 (issue 11: |W| reached 3e6 without a word): the first update that would push
    a weight past max_weight is not applied, RunDiverged names W, its value and the
    iteration, and the records made before it are kept."""
    X = datasets.diag(6)
    rbm = rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=0)
    start = rbm.copy()
    with pytest.raises(RunDiverged, match=r"update 1 would make an entry of W equal .*exceeds "
                                          r"max_weight=1000") as info:
        bias.train_expected_cd(rbm, X, learning_rate=1e6, iterations=50, record_every=1)
    err = info.value
    assert (err.quantity, err.epoch, err.last_good_epoch) == ("W", 1, 0)
    assert abs(err.value) > 1e3 and np.isfinite(err.value)
    assert rbm == start                                   # the healthy parameters are kept
    assert [r["iteration"] for r in err.records] == [0]
    assert err.records[0]["log_likelihood"] == pytest.approx(ev.log_likelihood_exact(start, X))
    # at η = 1e3 the weights reach max_weight in the second update (checked every
    # iteration) ...
    rbm = rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=0)
    with pytest.raises(RunDiverged) as info:
        bias.train_expected_cd(rbm, X, learning_rate=1e3, iterations=50, record_at=[0, 50])
    assert (info.value.quantity, info.value.epoch) == ("W", 2)
    assert np.abs(rbm.W).max() <= 1e3 and len(info.value.records) == 1
    # ... but the likelihood has already collapsed after the first one (when recorded)
    with pytest.raises(RunDiverged) as info:
        bias.train_expected_cd(rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=0), X,
                               learning_rate=1e3, iterations=50, record_every=1)
    assert (info.value.quantity, info.value.epoch) == ("log_likelihood", 1)


def test_likelihood_collapse_stops_training_and_names_the_log_likelihood():
    """With the weight bound lifted, the collapse of the recorded log-likelihood (more than
    max_ll_drop nats below its best) shows the divergence."""
    X = datasets.diag(6)
    rbm = rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=0)
    with pytest.raises(RunDiverged, match="mean log-likelihood collapsed") as info:
        bias.train_expected_cd(rbm, X, learning_rate=1e3, iterations=50, record_every=1,
                               max_weight=1e12)
    err = info.value
    assert err.quantity == "log_likelihood"
    best = max(r["log_likelihood"] for r in err.records)
    assert err.value < best - 10 * 6 * np.log(2)
    assert err.value == pytest.approx(ev.log_likelihood_exact(rbm, X), rel=1e-9)
    # a tighter allowed drop trips no later; a huge one lets the weight bound trip instead
    with pytest.raises(RunDiverged) as tight:
        bias.train_expected_cd(rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=0), X,
                               learning_rate=1e3, iterations=50, record_every=1,
                               max_weight=1e12, max_ll_drop=1.0)
    assert tight.value.quantity == "log_likelihood" and tight.value.epoch <= err.epoch


def test_guard_leaves_healthy_training_alone():
    """The paper's setting (η = 0.1) trains as before with the guard on: same records as with
    the guard lifted, weights far below max_weight."""
    X = datasets.ball_1d(6)
    a = [rbmviz.RBM(6, 6, init="uniform", scale=0.5, seed=s) for s in range(2)]
    b = [m.copy() for m in a]
    fa = bias.train_expected_cd(a, X, iterations=400, record_every=100)
    fb = bias.train_expected_cd(b, X, iterations=400, record_every=100, max_weight=np.inf,
                                max_ll_drop=np.inf, chunk=400)
    assert fa.equals(fb) and a == b


# ---------------------------------------------------------------------------- bad input

def test_bad_input_gives_clear_errors():
    rbm = random_rbm(3, 2, seed=0)
    X = np.array([[1, 0, 1]], float)
    with pytest.raises(ValueError, match="k must be >= 1"):
        bias.cd_bias_exact(rbm, X, 0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        bias.cd_bias_bound(rbm, X, -1)
    with pytest.raises(TypeError, match="k must be an integer"):
        bias.cd_bias_exact(rbm, X, 1.5)
    with pytest.raises(ValueError, match="binary"):
        bias.cd_bias_exact(rbm, [[0.5, 0, 1]], 1)
    with pytest.raises(ValueError, match="3 columns|columns but the model"):
        bias.cd_bias_exact(rbm, np.ones((2, 4)), 1)
    with pytest.raises(ValueError, match="NaN"):
        bias.cd_bias_bound(rbm, [[np.nan, 0, 1]], 1)
    with pytest.raises(TypeError, match="rbmviz.RBM"):
        bias.cd_bias_exact("model", X, 1)
    big = rbmviz.RBM(11, 3, init="zeros")
    for call in (lambda: bias.cd_bias_exact(big, np.zeros((1, 11)), 1),
                 lambda: bias.train_expected_cd(big, np.zeros((1, 11)), iterations=1)):
        with pytest.raises(ValueError, match=r"n_visible <= 10 and n_hidden <= 10.*n_visible=11"):
            call()
    # the bound and Δ only need p(v) on the data rows: fine for larger models
    assert 0 <= bias.cd_bias_bound(big, np.zeros((1, 11)), 1) < 1
    assert bias.bengio_delalleau_bound(rbmviz.RBM(30, 30, seed=0), 1) <= 2 ** 30
    with pytest.raises(ValueError, match="n_visible \\+ n_hidden"):
        bias.delta_brute_force(rbmviz.RBM(12, 12, init="zeros"))
    with pytest.raises(ValueError, match="record_at"):
        bias.train_expected_cd(rbm, X, iterations=10, record_at=[0, 11])
    with pytest.raises(ValueError, match="learning_rate"):
        bias.train_expected_cd(rbm, X, learning_rate=0.0)
    with pytest.raises(ValueError, match="same shape"):
        bias.train_expected_cd([rbm, random_rbm(3, 3)], X)
    for kw, exc, match in (({"max_weight": 0.0}, ValueError, "max_weight must be > 0"),
                           ({"max_ll_drop": -1.0}, ValueError, "max_ll_drop must be > 0"),
                           ({"max_ll_drop": "big"}, TypeError, "max_ll_drop must be a real"),
                           ({"chunk": "fast"}, TypeError, "chunk must be an integer"),
                           ({"chunk": 0}, ValueError, "chunk must be >= 1")):
        with pytest.raises(exc, match=match):
            bias.train_expected_cd(rbm, X, iterations=1, **kw)


# ---------------------------------------------------------------------------- reproduction, CLI

def test_reproduction_run_is_tidy_and_reproducible():
    kw = dict(reps=2, iterations=200, ks=(2,), weight_decays=(0.0, 0.01), record_every=50)
    df, summary = cd_bias.run(**kw)
    df2, _ = cd_bias.run(**kw)
    assert df.equals(df2)
    assert list(df.columns[:6]) == ["dataset", "k", "weight_decay", "run", "seed", "iteration"]
    configs = df[["dataset", "k", "weight_decay"]].drop_duplicates().to_records(index=False).tolist()
    assert configs == [("diag", 1, 0.0), ("diag", 2, 0.0), ("diag", 1, 0.01),
                       ("ball_1d", 1, 0.0), ("ball_1d", 2, 0.0), ("ball_1d", 1, 0.01)]
    assert len(summary["final"]) == 6
    first = summary["final"][0]
    assert first["paper_gap"] == 0.00138 and summary["final"][1]["paper_gap"] is None
    assert first["gap"] == pytest.approx(first["bound"] - first["bias"])
    assert all(r["bias_le_bound"] for r in summary["final"])
    text = cd_bias.format_summary(summary)
    assert "Diag" in text and "1DBall" in text and "0.02628" in text
    json.dumps(summary)                                  # serialisable


def test_cli_reproduce_cd_bias_writes_files_and_never_overwrites(tmp_path, capsys):
    out = tmp_path / "cdb"
    args = ["reproduce", "cd-bias", "--reps", "2", "--iterations", "120", "--ks", "1,3",
            "--weight-decay", "0.01", "--record-every", "40", "--quiet", "--out", str(out)]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "bound-bias" in text and "paper" in text and "0.00138" in text
    assert sorted(p.name for p in out.iterdir()) == ["curves.csv", "figure.html", "summary.json"]
    summary = json.loads((out / "summary.json").read_text())
    assert {(r["dataset"], r["k"], r["weight_decay"]) for r in summary["final"]} == {
        (d, k, w) for d in ("diag", "ball_1d") for k, w in ((1, 0.0), (3, 0.0), (1, 0.01))}
    import pandas as pd
    curves = pd.read_csv(out / "curves.csv")
    assert set(curves.iteration) >= {0, 40, 80, 120} and curves.run.nunique() == 2
    assert "<html" in (out / "figure.html").read_text()[:2000].lower()
    before = (out / "summary.json").read_bytes()
    # an existing output directory is refused before anything runs ...
    assert cli.main(args) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert (out / "summary.json").read_bytes() == before
    # ... unless --overwrite (which replaces only its own files)
    (out / "notes.txt").write_text("mine")
    assert cli.main(args[:-2] + ["--out", str(out), "--overwrite", "--no-html"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["curves.csv", "notes.txt", "summary.json"]


def test_cli_reproduce_bad_options(tmp_path, capsys):
    assert cli.main(["reproduce"]) == 2
    assert "cd-bias" in capsys.readouterr().out
    for bad, msg in [(["--ks", "0"], "k must be >= 1"), (["--ks", "a"], "comma-separated"),
                     (["--datasets", "mnist"], "unknown data set"),
                     (["--weight-decay", "-1"], "weight decay must be >= 0"),
                     (["--reps", "0"], "reps must be >= 1")]:
        assert cli.main(["reproduce", "cd-bias", "--quiet", *bad]) == 2
        assert msg in capsys.readouterr().err
    assert cli.main(["reproduce", "nope"]) == 2
