"""``rbmviz reproduce tap --dataset real-mnist|cbcl``: Table 1's real-valued data sets — the
settings each one takes, the TAP log-likelihood of real-valued models against the exact one,
and tiny runs of the whole protocol (tables, data map of Fig. 7c, resumable state)."""
import itertools

import numpy as np
import pytest

import rbmviz
from rbmviz import datasets, units
from rbmviz.reproduce import tap as rt
from rbmviz.reproduce import tap_run
from rbmviz.units import tg_log_g_moments


def _exact_log_lik(rbm, X):
    """ln p(x) of a truncated-Gaussian-visible, binary-hidden RBM by summing over every hidden
    state: p(x, h) ∝ Π_i P_i(x_i) Π_j P_j(h_j) e^{xᵀWh} with normalised priors, so
    ln p(x) = Σ_i ln P_i(x_i) + Σ_j [softplus(c_j + (xᵀW)_j) − softplus(c_j)] − ln Ẑ,
    Ẑ = Σ_h P(h) Π_i G(V_i, U_i + (Wh)_i) / G(V_i, U_i)."""
    vp = rbm.visible_prior
    _, U, V, _, lo, hi, _ = vp.kernel_args(rbm.b)
    lg0, _, _ = tg_log_g_moments(V, U, lo, hi)
    terms = []
    for h in itertools.product((0.0, 1.0), repeat=rbm.n_hidden):
        h = np.array(h)
        lg, _, _ = tg_log_g_moments(V, U + rbm.W @ h, lo, hi)
        log_ph = float(h @ rbm.c - np.logaddexp(0.0, rbm.c).sum())
        terms.append(log_ph + float((lg - lg0).sum()))
    log_zhat = np.logaddexp.reduce(terms)
    pre = X @ rbm.W + rbm.c
    data = (vp.log_prior(rbm.b, X).sum(axis=1)
            + (np.logaddexp(0.0, pre) - np.logaddexp(0.0, rbm.c)).sum(axis=1))
    return data - log_zhat


def _tg_rbm(scale, nv=10, nh=5, seed=4):
    rng = np.random.default_rng(seed)
    vp = units.make("truncated_gaussian", nv, V=rng.uniform(1.0, 3.0, nv))
    rbm = rbmviz.RBM(nv, nh, visible=vp, init="zeros")
    rbm.set_params(W=rng.normal(0.0, 1.0, (nv, nh)) * scale, b=rng.normal(0.0, 0.5, nv),
                   c=rng.normal(0.0, 0.5, nh))
    return rbm, rng.random((30, nv))


def test_real_valued_tap_ll_against_the_exact_one_on_weak_couplings():
    """evaluate_tap on a truncated-Gaussian model equals ln p(x) summed over the hidden states
    up to the second-order expansion's error, which shrinks as O(W³): at W → W/2 by ≳ 6×.
    At W = 0 both are the factorised prior, exactly."""
    errs = []
    for scale in (0.0, 0.1, 0.05):
        rbm, X = _tg_rbm(scale)
        ev = tap_run.evaluate_tap(rbm, X)
        exact = _exact_log_lik(rbm, X)
        assert ev["stats"]["n_unique"] == 1
        errs.append(np.max(np.abs(ev["ll_rows"] - exact)))
    assert errs[0] < 1e-10
    assert errs[1] < 2e-3
    assert errs[2] < errs[1] / 6


def test_dataset_defaults_follow_table_1():
    s = tap_run._check_settings(**{**rt._DEFAULTS, **dict(
        dataset="cbcl", epochs=None, samples=None, eval_samples=None, test_samples=None,
        hidden=None, count_hidden=None, eval_every=10, ps=(), learning_rate=None, seed=0)})
    assert (s["epochs"], s["samples"], s["eval_samples"], s["hidden"], s["count_hidden"]) == (
        500, 2429, 2400, [256], 256)
    assert (s["batch_size"], s["n_solutions"], s["learning_rate"], s["weight_decay"]) == (
        20, 20, 0.005, 0.01)
    assert s["isomap_epochs"] == [5, 100, 200, 500] and s["dataset"] == "cbcl"
    r = tap_run._check_settings(**{**rt._DEFAULTS, **dict(
        dataset="real-mnist", epochs=3, samples=None, eval_samples=None, test_samples=None,
        hidden=None, count_hidden=None, eval_every=1, ps=(), learning_rate=None, seed=0)})
    # γ decays 1e-2 -> 1e-5 over the paper's 100 epochs, whatever this run's length
    assert (r["learning_rate"], r["learning_rate_final"], r["decay_epochs"]) == (1e-2, 1e-5, 100)
    assert r["hidden"] == [100, 500] and r["test_samples"] == 0
    alg = tap_run._algorithm(r, 0)
    assert (alg.learning_rate_final, alg.decay_epochs) == (1e-5, 100)
    # binary-MNIST keeps the settings of earlier runs (no new keys: their state continues)
    b = tap_run._check_settings(**{**rt._DEFAULTS, **dict(
        epochs=None, samples=None, eval_samples=None, test_samples=None, hidden=None,
        count_hidden=None, eval_every=1, ps=(), learning_rate=None, seed=0)})
    assert not {"dataset", "learning_rate_final", "decay_epochs"} & set(b)
    assert (b["batch_size"], b["n_solutions"], b["hidden"], b["epochs"]) == (100, 100, [25, 50, 100, 500], 100)
    with pytest.raises(ValueError, match="denoising .* binary-MNIST"):
        tap_run.run(dataset="cbcl", test_samples=10)
    with pytest.raises(ValueError, match="dataset"):
        tap_run.run(dataset="faces")
    with pytest.raises(ValueError, match="samples"):
        tap_run.run(dataset="cbcl", samples=3000)
    with pytest.raises(ValueError, match="decay_epochs needs learning_rate_final"):
        tap_run.run(decay_epochs=10)


def _settings(argv):
    """The settings ``rbmviz reproduce tap ARGV`` gives (before the quick form), a dict."""
    from rbmviz.cli import build_parser
    from rbmviz.cli.reproduce import settings_from_args
    from rbmviz.reproduce._study import values
    args = build_parser().parse_args(["reproduce", "tap", *argv])
    return values(settings_from_args(rt.Settings, args, args._experiment_parser))


def test_command_line_dataset_defaults():
    a = _settings(["--dataset", "cbcl"])
    assert rt.resolve_defaults(a) is None
    assert (a["epochs"], a["samples"], a["hidden"], a["batch_size"], a["eval_samples"],
            a["test_samples"], a["ps"]) == (500, 2429, [256], 20, 2400, 0, [])
    a = _settings(["--dataset", "cbcl", "--epochs", "10"])
    note = rt.resolve_defaults(a)
    assert "M=20" in note and "60,500" in note and (a["hidden"], a["learning_rate"]) == ([64], 0.05)
    assert (_settings(["--dataset", "cbcl", "--quick"])              # CBCL's quick form
            == _settings(["--dataset", "cbcl", "--epochs", "10"]))
    a = _settings(["--dataset", "real-mnist", "--epochs", "2", "--samples", "500"])
    assert "quick form" in rt.resolve_defaults(a) and a["test_samples"] == 0


def _faces(n=48, nv=16, seed=0):
    """Faces-like rows in [0, 1]: two smooth prototypes plus noise, clipped."""
    rng = np.random.default_rng(seed)
    P = np.stack([np.linspace(0.1, 0.9, nv), np.linspace(0.9, 0.1, nv)])
    return np.clip(P[rng.integers(0, 2, n)] + rng.normal(0, 0.08, (n, nv)), 0.0, 1.0)


@pytest.fixture(scope="module")
def cbcl_tiny():
    X = _faces()
    kw = dict(dataset="cbcl", epochs=3, samples=48, eval_samples=30, hidden=(4,),
              batch_size=8, learning_rate=0.05, isomap_epochs=(1, 3), seed=2,
              data=(X, None, None))
    return kw, tap_run.run(**kw)


def test_cbcl_protocol_tables(cbcl_tiny):
    kw, (tables, summary) = cbcl_tiny
    c = tables["curves"]
    assert list(c["epoch"]) == [0, 1, 2, 3] and (c["n_init"] == 30).all()
    assert (c["updates"] == 6 * c["epoch"]).all()               # 48 rows / M = 8
    assert c["exact_ll"].isna().all()                           # real-valued: no exact LL here
    assert c.loc[0, "n_unique"] == 1                            # one solution at the start
    # Fig. 7c: every evaluation face (one class) in the data map, at each Isomap epoch
    m = tables["data_map"]
    assert sorted(set(m["epoch"])) == [1, 3] and (m.groupby("epoch").size() == 30).all()
    assert set(m["label"]) == {0} and np.isfinite(m[["x", "y", "sol_x", "sol_y"]]).all().all()
    assert len(tables["denoising"]) == 0
    s = summary["settings"]
    assert (s["dataset"], s["data"], s["weight_decay"]) == ("cbcl", "user data", 0.01)
    explosion = [x for x in summary["claims"] if x["claim"] == "no explosion of solutions"][0]
    assert explosion["holds"] is None and "CBCL" in explosion["paper"]


def test_cbcl_state_resumes_bit_for_bit_and_refuses_other_data_sets(cbcl_tiny, tmp_path):
    kw, (tables, _) = cbcl_tiny
    tap_run.run(**{**kw, "epochs": 1}, state_dir=tmp_path)
    resumed, _ = tap_run.run(**kw, state_dir=tmp_path)
    cols = ["epoch", "tap_ll", "n_unique", "mean_free_energy", "weight_norm"]
    assert resumed["curves"][cols].equals(tables["curves"][cols])
    with pytest.raises(ValueError, match="dataset"):
        tap_run.run(**{**kw, "dataset": "real-mnist"}, state_dir=tmp_path)


def test_real_cbcl_faces_start_with_priors_matching_the_data():
    """On the real CBCL faces the model starts from priors fitted to the data, one TAP
    solution, and a TAP log-likelihood equal to the factorised prior's."""
    try:
        X = datasets.cbcl(limit=200)
    except datasets.DatasetNotFoundError:
        pytest.skip("CBCL faces not in the data directory")
    s = tap_run._check_settings(**{**rt._DEFAULTS, **dict(
        dataset="cbcl", epochs=1, samples=200, eval_samples=100, test_samples=None,
        hidden=(8,), count_hidden=None, eval_every=1, ps=(), learning_rate=None, seed=0)})
    rbm, _, _ = tap_run._new_model(s, 0, 8, X)
    assert rbm.visible == "truncated_gaussian"
    mean, _ = rbm.visible_prior.prior_moments(rbm.b)
    np.testing.assert_allclose(mean, X.mean(axis=0), atol=1e-6)
    ev = tap_run.evaluate_tap(rbm, X[:100])
    assert ev["stats"]["n_unique"] == 1
    factorised = rbm.visible_prior.log_prior(rbm.b, X[:100]).sum(axis=1).mean()
    assert ev["ll"] == pytest.approx(factorised, abs=0.05)


def test_cbcl_figure_draws_the_faces_in_one_colour(cbcl_tiny):
    """Fig. 7c: one class, so one colour (a colour map over a single value drew nothing)."""
    import holoviews as hv
    _, (tables, _) = cbcl_tiny
    fig = rt.figure(tables, parts=("data_map",))
    panels = list(fig) if isinstance(fig, hv.Layout) else [fig]
    assert [p.opts.get().kwargs.get("title") for p in panels] == [
        "Fig. 7: training images, epoch 1", "Fig. 7: training images, epoch 3"]
    data = panels[0].get(0)
    assert len(data) == 30 and data.opts.get().kwargs["color"] == "#1f77b4"
