"""Studies beyond the RBM part of Tramel et al. 2018 (Figs. 10–12) on tiny synthetic data:
table contents, agreement between methods, exact references, resuming bit for bit."""
import argparse
import json

import numpy as np
import pytest

from rbmviz.reproduce import tap_beyond as tb


def _data(n=60, nv=16, seed=0):
    rng = np.random.default_rng(seed)
    protos = (rng.random((3, nv)) < 0.4).astype(float)
    X = protos[rng.integers(0, 3, n)]
    return np.abs(X - (rng.random(X.shape) < 0.05))


ADA = dict(hidden=4, samples=60, epochs=10, learning_rate=0.5, batch_size=20, damping=0.5,
           iterations=(3, 100), pl_rows=60, eval_every=3, timing_hidden=8,
           timing_batches=(1, 4), timing_iters=(3, 2), timing_direct=True,
           timing_seconds=0.0)


def test_study_adatap_tables_and_agreement():
    X = _data()
    tables, s = tb.study_adatap(**ADA, data=X)
    c = tables["curves"]
    assert set(map(tuple, c[["method", "iterations"]].drop_duplicates().values)) == {
        ("tap", 3), ("tap", 100), ("adatap", 3), ("adatap", 100)}
    for _, g in c.groupby(["method", "iterations"]):
        assert list(g["updates"]) == list(range(0, 31, 3)) and np.isfinite(g["pl"]).all()
    pl = {k: g["pl"].to_numpy() for k, g in c.groupby(["method", "iterations"])}
    # same batches, weak coupling: converged TAP2 and adaTAP train alike and raise the PL
    a, b = pl[("tap", 100)], pl[("adatap", 100)]
    assert a[-1] > a[0] + 0.1
    assert np.abs(a - b).max() < 0.05 * (a[-1] - a[0])
    # adaTAP stopped after 3 iterations trains worst (Fig. 10)
    assert pl[("adatap", 3)][-1] == min(v[-1] for v in pl.values())
    assert s["claims"][0]["claim"].startswith("adaTAP stopped after 3") and s["claims"][0]["verdict"] == "agrees"
    t = tables["timing"]
    assert len(t) == 6 and (t["seconds_per_iteration"] >= 0).all()   # tiny: may time as 0
    assert set(t["method"]) == {"tap", "adatap", "adatap_direct"}
    assert set(s["time_ratio_adatap_over_tap"]) == set(s["time_ratio_adatap_full_inverse_over_tap"]) == {1, 4}
    # seeded: a second run repeats the curves exactly
    again, _ = tb.study_adatap(**ADA, data=X)
    np.testing.assert_array_equal(again["curves"]["pl"].to_numpy(), c["pl"].to_numpy())


DBM = dict(models=((16, 6, 4),), samples=60, test_samples=30, pretrain_epochs=2,
           pretrain_lr=0.05, learning_rate=0.05, batch_size=20, eval_every=1, eval_samples=30)


def test_study_dbm_resumes_bit_for_bit(tmp_path):
    X, Xt = _data(), _data(30, seed=1)
    whole, s = tb.study_dbm(**DBM, epochs=3, data=(X, Xt))
    tb.study_dbm(**DBM, epochs=1, data=(X, Xt), state=tmp_path)
    assert (tmp_path / "16-6-4" / "dbm.npz").exists()
    assert (tmp_path / "16-6-4" / "run_state.pkl").exists()
    rest, _ = tb.study_dbm(**DBM, epochs=3, data=(X, Xt), state=tmp_path)
    for col in ("epoch", "train_ll_per_unit", "test_ll_per_unit"):
        assert np.array_equal(rest["curves"][col].to_numpy(), whole["curves"][col].to_numpy())
    c = whole["curves"]
    assert list(c["epoch"]) == [0, 1, 2, 3]
    assert s["models"]["16-6-4"]["joint_epochs"] == 3
    assert np.isfinite(c[["train_ll_per_unit", "test_ll_per_unit"]].to_numpy()).all()
    # the stored model's TAP log-likelihood is the last recorded one
    from rbmviz.dbm import DBM as Model, log_likelihood
    dbm = Model.load(tmp_path / "16-6-4" / "dbm.npz")
    assert log_likelihood(dbm, X[:30], init=X[:30], tol=1e-8, max_iter=1000, per_unit=True) == \
        pytest.approx(rest["curves"]["train_ll_per_unit"].iloc[-1], rel=1e-12)


def test_study_dbm_continues_through_the_run_state_bit_for_bit(tmp_path):
    """Stopped after pretraining (epoch 0) or after a joint epoch, the study continues from
    run_state.pkl (Run.state()) to the straight study's curves and parameters exactly."""
    import pickle
    from rbmviz.dbm import DBM as Model
    X, Xt = _data(), _data(30, seed=1)
    kw = dict(DBM, models=((16, 6, 4), (16, 5, 4, 3)), batch_size=15, eval_every=2,
              data=(X, Xt))
    whole, s = tb.study_dbm(**kw, epochs=5, state=tmp_path / "whole")
    for stop in (0, 2):          # epochs with an evaluation in the straight study
        d = tmp_path / f"cut{stop}"
        tb.study_dbm(**kw, epochs=stop, state=d)
        with open(d / "16-6-4" / "run_state.pkl", "rb") as f:
            saved = pickle.load(f)
        assert saved["run"]["epoch"] == stop and len(saved["rows"]) == 1 + stop // 2
        rest, s2 = tb.study_dbm(**kw, epochs=5, state=d)
        for col in ("model", "epoch", "train_ll_per_unit", "test_ll_per_unit"):
            assert np.array_equal(rest["curves"][col].to_numpy(),
                                  whole["curves"][col].to_numpy()), (stop, col)
        assert s2["models"] == s["models"]
        for name in ("16-6-4", "16-5-4-3"):
            a, b = Model.load(tmp_path / "whole" / name / "dbm.npz"), Model.load(d / name / "dbm.npz")
            assert all(np.array_equal(p, q) for p, q in zip(a.params, b.params))


def test_study_dbm_refuses_an_old_state_or_another_study(tmp_path):
    X, Xt = _data(), _data(30, seed=1)
    old = tmp_path / "old" / "16-6-4"
    old.mkdir(parents=True)
    (old / "state.json").write_text("{}")
    with pytest.raises(ValueError, match=r"state\.json was written by an earlier version.*"
                                         r"delete the folder .*16-6-4"):
        tb.study_dbm(**DBM, epochs=1, data=(X, Xt), state=tmp_path / "old")
    tb.study_dbm(**DBM, epochs=1, data=(X, Xt), state=tmp_path / "new")
    with pytest.raises(ValueError, match=r"run_state\.pkl holds a study of DBM 16-6-4 with "
                                         r"other settings \(pretrain_lr: 0\.05 there, 0\.1 now"):
        tb.study_dbm(**dict(DBM, pretrain_lr=0.1), epochs=2, data=(X, Xt),
                     state=tmp_path / "new")
    with pytest.raises(ValueError, match=r"run_state\.pkl holds the state of another run "
                                         r"\(.*its batch_size is 20, this run's is 15"):
        tb.study_dbm(**dict(DBM, batch_size=15), epochs=2, data=(X, Xt),
                     state=tmp_path / "new")
    (tmp_path / "new" / "16-6-4" / "run_state.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match=r"run_state\.pkl is not a readable training state"):
        tb.study_dbm(**DBM, epochs=2, data=(X, Xt), state=tmp_path / "new")


FIG12 = dict(hidden=6, samples=60, learning_rate=0.05, batch_size=20, weight_decay=0.001,
             momentum=0.5, eval_samples=40, ais_chains=16, ais_thin=20, spl_sites=100)


def test_study_fig12_against_exact_and_resume(tmp_path):
    from rbmviz.evaluate import log_likelihood_exact
    from rbmviz.model import RBM
    X = _data()
    whole, s = tb.study_fig12(**FIG12, epochs=3, data=X)
    c = whole["curves"]
    assert list(c["epoch"]) == [0, 1, 2, 3]
    assert s["ais_betas"] == tb.sm_schedule(20).size
    tb.study_fig12(**FIG12, epochs=2, data=X, state=tmp_path)
    rest, _ = tb.study_fig12(**FIG12, epochs=3, data=X, state=tmp_path)
    for col in ("tap_ll", "ais_ll", "spl"):
        np.testing.assert_array_equal(rest["curves"][col].to_numpy(), c[col].to_numpy())
    # the final AIS log-likelihood agrees with exact enumeration (16 visible units)
    rbm = RBM.load(tmp_path / "rbm.npz")
    exact = log_likelihood_exact(rbm, X[:40])
    assert c["ais_ll"].iloc[-1] == pytest.approx(exact, abs=0.1)
    # with all 16 sites and all rows the SPL is the exact pseudo-likelihood
    from rbmviz.evaluate import pseudo_log_likelihood
    assert c["spl"].iloc[-1] == pytest.approx(pseudo_log_likelihood(rbm, X[:40]), rel=1e-12)
    assert set(s["spearman"]) == {"tap_ll~ais_ll", "tap_ll~spl", "ais_ll~spl"}


def _fig12_same(a, b):
    """Two fig12 studies' curves (all but the wall-clock seconds) and summaries are equal."""
    (ta, sa), (tb_, sb) = a, b
    ca, cb = (t["curves"].drop(columns=["seconds"]) for t in (ta, tb_))
    assert ca.equals(cb)
    strip = lambda s: json.dumps({**s, "first": {k: v for k, v in s["first"].items() if k != "seconds"},
                                  "last": {k: v for k, v in s["last"].items() if k != "seconds"}},
                                 sort_keys=True, default=str)
    assert strip(sa) == strip(sb)


def test_study_fig12_continues_through_the_run_state_bit_for_bit(tmp_path):
    """Stopped after epoch k (0: after the first evaluation only), the study continues from
    run_state.pkl (Run.state()) to the straight study's curves, summary and model exactly,
    also when the rows do not fill the last batch (remainder dropped)."""
    import pickle
    from rbmviz.model import RBM
    X = _data()
    kw = dict(FIG12, samples=55, data=X)
    whole = tb.study_fig12(**kw, epochs=4, state=tmp_path / "whole")
    assert list(whole[0]["curves"]["epoch"]) == [0, 1, 2, 3, 4]
    for stop in (0, 2):
        d = tmp_path / f"cut{stop}"
        tb.study_fig12(**kw, epochs=stop, state=d)
        with open(d / "run_state.pkl", "rb") as f:
            saved = pickle.load(f)
        assert saved["run"]["epoch"] == stop and len(saved["rows"]) == stop + 1
        assert not (d / "state.json").exists() and not (d / "alg.npz").exists()
        rest = tb.study_fig12(**kw, epochs=4, state=d)
        _fig12_same(rest, whole)
        a, b = RBM.load(tmp_path / "whole" / "rbm.npz"), RBM.load(d / "rbm.npz")
        assert all(np.array_equal(p, q) for p, q in zip(a.params, b.params)), stop
    # a state directory does not change the numbers
    _fig12_same(tb.study_fig12(**kw, epochs=4), whole)


def test_study_fig12_refuses_an_old_state_or_another_study(tmp_path):
    X = _data()
    for name in ("state.json", "alg.npz"):
        old = tmp_path / f"old_{name}"
        old.mkdir()
        (old / name).write_text("{}")
        with pytest.raises(ValueError, match=rf"state file .*{name.replace('.', '[.]')} was "
                                             rf"written by an earlier version.*delete the "
                                             rf"folder .*old_"):
            tb.study_fig12(**FIG12, epochs=1, data=X, state=old)
    new = tmp_path / "new"
    tb.study_fig12(**FIG12, epochs=1, data=X, state=new)
    with pytest.raises(ValueError, match=r"run_state\.pkl holds a study of the Fig\. 12 RBM "
                                         r"16x6 with other settings \(ais_chains: 16 there, 8 now"):
        tb.study_fig12(**dict(FIG12, ais_chains=8), epochs=2, data=X, state=new)
    with pytest.raises(ValueError, match=r"run_state\.pkl holds the state of another run "
                                         r"\(.*its batch_size is 20, this run's is 15"):
        tb.study_fig12(**dict(FIG12, batch_size=15), epochs=2, data=X, state=new)
    (new / "run_state.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match=r"run_state\.pkl is not a readable training state"):
        tb.study_fig12(**FIG12, epochs=2, data=X, state=new)


def test_sm_schedule():
    b = tb.sm_schedule()
    assert b.size == 14501 and b[0] == 0 and b[-1] == 1
    t = tb.sm_schedule(10)
    assert t[-1] == 1 and np.all(np.diff(t) > 0) and 1450 <= t.size <= 1452


def test_run_rejects_unknown_study():
    with pytest.raises(ValueError, match="study"):
        tb.run("fig13")


def test_save_and_run_study_refuses_to_overwrite(tmp_path):
    X = _data()
    tables, s = tb.run("adatap", quick=True, **{**ADA, "data": X, "epochs": 1,
                                                "iterations": (3,), "timing_batches": (1,)})
    paths = tb.save("adatap", tables, s, tmp_path / "out")
    assert {p.name for p in paths} == {"curves.csv", "timing.csv", "summary.json", "figure.html"}
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["study"] == "adatap"
    with pytest.raises(FileExistsError):
        tb.save("adatap", tables, s, tmp_path / "out")
    args = argparse.Namespace(out=str(tmp_path / "out"), overwrite=False, quiet=True, seed=0,
                              quick=True, state=None, no_html=True)
    with pytest.raises(FileExistsError):
        tb.run_study("adatap", args)


@pytest.mark.slow
@pytest.mark.parametrize("name", tb.STUDIES)
def test_quick_forms_from_the_command_line(name, tmp_path):
    """``rbmviz reproduce tap --study NAME --quick`` on binarised MNIST (a few minutes each)."""
    from rbmviz.datasets import available
    if not available("mnist"):
        pytest.skip("MNIST not available")
    args = argparse.Namespace(out=str(tmp_path / name), overwrite=False, quiet=True, seed=0,
                              quick=True, state=None, no_html=False)
    assert tb.run_study(name, args) == 0
    s = json.loads((tmp_path / name / "summary.json").read_text())
    assert s["form"] == "quick"
    if name == "adatap":
        assert min(s["time_ratio_adatap_over_tap"].values()) > 1


def test_fig12_claims_can_differ():
    """Fig. 12's agreement is judged past the knee (not on the rise from scratch, where it
    holds by construction) and by the TAP - AIS gap; each can fail."""
    import pandas as pd
    ep = np.arange(20.0)
    base = -200 + 100 * (1 - np.exp(-ep / 2))            # knee at about epoch 5
    late = np.linspace(0, 2, 20)

    def curves(tap, ais, spl):
        return pd.DataFrame(dict(epoch=ep, tap_ll=tap, ais_ll=ais, spl=spl))
    good = tb.fig12_claims(curves(base + late + 1, base + late, base + late - 5))
    assert [c["verdict"] for c in good] == ["agrees"] * 3
    assert all(c["criterion"] and c["judged"] is not None for c in good)
    # past the knee the pseudo-likelihood falls while the others rise: rising together
    # from scratch still holds, the agreement past the knee does not
    bad = tb.fig12_claims(curves(base + late + 1, base + late, base + 4 * np.exp(-ep / 2) - 2 * late))
    assert bad[0]["verdict"] == "agrees" and bad[1]["verdict"] == "differs" and bad[1]["judged"] < tb.FIG12_RHO
    gap = tb.fig12_claims(curves(base + late + 20, base + late, base + late))
    assert gap[2]["verdict"] == "differs" and gap[2]["judged"] == pytest.approx(20 / 98.0, rel=0.01)
    fall = tb.fig12_claims(curves(base[::-1], base, base))
    assert fall[0]["verdict"] == "differs"
    short = tb.fig12_claims(curves(base, base, base).iloc[:4])
    assert short[1]["verdict"].startswith("inconclusive")


def test_adatap_claims_can_differ():
    final = {"tap_3": -100.0, "tap_100": -99.5, "adatap_3": -105.0, "adatap_100": -99.8}
    good = tb.adatap_claims(final, {1: 800.0, 100: 1200.0}, 3)
    assert [c["verdict"] for c in good] == ["agrees"] * 3
    assert all(c["criterion"] and c["judged"] is not None for c in good)
    bad = tb.adatap_claims(dict(final, adatap_3=-99.0, tap_3=-101.0), {1: 800.0, 100: 20.0}, 3)
    assert [c["verdict"] for c in bad] == ["differs"] * 3
    assert bad[0]["judged"] == -2.0 and bad[2]["judged"] == 20.0


def _dbm_curves(train, test, epochs, models=("784-5-5", "784-5-5-5")):
    import pandas as pd
    rows = [dict(model=m, epoch=int(e), train_ll_per_unit=float(a), test_ll_per_unit=float(b))
            for m in models for e, a, b in zip(epochs, train, test)]
    return pd.DataFrame(rows)


def test_dbm_claims_can_differ():
    """Fig. 11: joint training after pretraining raises the train and the test TAP
    log-likelihood; each claim fails when its curve does not rise."""
    ep = np.arange(0, 101, 10)
    rise = -0.20 + 0.05 * (1 - np.exp(-ep / 30))
    fall = -0.20 - 0.01 * ep / 100
    good = tb.dbm_claims(_dbm_curves(rise, rise - 0.002, ep))
    assert len(good) == 4 and [c["verdict"] for c in good] == ["agrees"] * 4
    assert all(c["criterion"] and c["judged"] is not None for c in good)
    assert "2-hidden-layer" in good[0]["claim"] and "3-hidden-layer" in good[2]["claim"]
    assert good[0]["judged"] == pytest.approx(rise[-1] - rise[0])
    # over-fitting: the train curve rises, the test curve falls
    over = tb.dbm_claims(_dbm_curves(rise, fall, ep))
    assert [c["verdict"] for c in over] == ["agrees", "differs"] * 2
    assert over[1]["judged"] == pytest.approx(-0.01)
    # joint training that does not help: a flat (within DBM_RISE) or falling train curve
    flat = tb.dbm_claims(_dbm_curves(-0.2 + 0.5 * tb.DBM_RISE * ep / 100, fall, ep))
    assert [c["verdict"] for c in flat] == ["differs"] * 4
    assert 0 < flat[0]["judged"] < tb.DBM_RISE


def test_dbm_claims_inconclusive_on_short_runs():
    """A run of fewer than DBM_MIN_EPOCHS joint epochs (the quick form makes 3) is judged
    inconclusive whatever its curves do; so is pretraining alone (epochs = 0)."""
    ep = np.arange(4)
    for train in (-0.2 + 0.01 * ep, -0.2 - 0.01 * ep):
        short = tb.dbm_claims(_dbm_curves(train, train, ep))
        assert all(c["verdict"].startswith("inconclusive (3 joint epochs") for c in short)
        assert all(c["judged"] is not None for c in short)
    only = tb.dbm_claims(_dbm_curves([-0.2], [-0.21], [0], models=("16-6-4",)))
    assert [c["verdict"].split()[0] for c in only] == ["inconclusive"] * 2
    ep = np.array([0, tb.DBM_MIN_EPOCHS])
    assert tb.dbm_claims(_dbm_curves([-0.2, -0.1], [-0.2, -0.1], ep))[0]["verdict"] == "agrees"


def test_study_dbm_summary_has_claims():
    X, Xt = _data(), _data(30, seed=1)
    _, s = tb.study_dbm(**DBM, epochs=2, data=(X, Xt))
    assert [c["verdict"].split()[0] for c in s["claims"]] == ["inconclusive"] * 2
    assert "16-6-4" in s["claims"][0]["claim"]


def test_run_checks_the_settings():
    with pytest.raises(TypeError, match=r"no setting\(s\) \['ais_chains'\]"):
        tb.run("adatap", ais_chains=3)
    with pytest.raises(ValueError, match="hidden must be >= 1, got 0"):
        tb.run("fig12", hidden=0)
    with pytest.raises(ValueError, match="iterations items must be >= 1"):
        tb.run("adatap", iterations=(0, 3))
    with pytest.raises(ValueError, match="models"):
        tb.run("dbm", models=[(784,)])
    with pytest.raises(ValueError, match="not resumable"):
        tb.run("adatap", state="somewhere")


def test_run_records_the_settings_that_ran(tmp_path):
    X = _data()
    tables, s = tb.run("fig12", quick=True, data=X, state=tmp_path / "st",
                       **{**FIG12, "epochs": 1})
    assert s["form"] == "quick" and s["settings"]["hidden"] == 6
    assert s["settings"]["state"] == str(tmp_path / "st")
    assert set(tb.FULL["fig12"]) <= set(s["settings"])
    json.dumps(s["settings"])                     # JSON as it was
