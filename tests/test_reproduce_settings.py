"""The reproductions' settings classes, the options derived from them, and the one report writer
(rbmviz.reproduce._study, rbmviz.cli.reproduce, rbmviz.reproduce.report)."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import param
import pytest

from rbmviz import algorithms, cli
from rbmviz.reproduce import _study, cd_bias, dc_mnist, dc_small, report

ROOT = Path(__file__).resolve().parents[1]
STUDIES = {"cd-bias": cd_bias, "dc-small": dc_small, "dc-mnist": dc_mnist}


@pytest.mark.parametrize("name", list(STUDIES))
def test_help_lists_one_option_per_setting(name, capsys):
    cls = STUDIES[name].Settings
    assert cli.main(["reproduce", name, "--help"]) == 0
    text = capsys.readouterr().out
    flat, bare = " ".join(text.split()), "".join(text.split())      # argparse wraps at hyphens
    for setting, p in _study.settings(cls).items():
        option = cls.FLAGS.get(setting, "--" + setting.replace("_", "-"))
        if p.precedence is not None and p.precedence < 0:
            assert f"[{option} " not in flat               # no option of its own
            continue
        assert option in flat, option
        assert "".join((p.doc or "").split()) in bare           # the help is the declaration's
    if cls.QUICK:
        assert "--quick" in flat


def test_training_knobs_are_copies_of_the_rules_declarations():
    for study, rule, knobs in ((cd_bias, "cd", ("learning_rate",)),
                               (dc_small, "sdcp", ("k", "k_inner", "seed")),
                               (dc_mnist, "sdcp", ("k", "k_inner", "seed"))):
        declared = algorithms.get(rule).Knobs.param
        for knob in knobs:
            mine = study.Settings.param[knob]
            assert (mine.bounds, type(mine)) == (declared[knob].bounds, type(declared[knob]))
    assert cd_bias.Settings.param.learning_rate.default == algorithms.get("cd").Knobs.param.learning_rate.default


def test_only_the_chosen_experiment_is_imported():
    code = ("import sys\nfrom rbmviz import cli\ncli.main(['reproduce', 'cd-bias', '--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('rbmviz.reproduce.')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    loaded = res.stdout.strip().splitlines()[-1]
    assert "rbmviz.reproduce.cd_bias" in loaded
    for other in ("dc_small", "dc_mnist", "tap", "tap_beyond"):
        assert f"'rbmviz.reproduce.{other}'" not in loaded


def test_resolve_checks_each_setting_against_its_declaration():
    s = _study.resolve(cd_bias.Settings, {"reps": 3, "ks": (1, 5)})
    assert (s.reps, s.ks, s.iterations) == (3, [1, 5], 50_000)
    assert _study.resolve(cd_bias.Settings, quick=True).ks == [1]
    assert _study.resolve(cd_bias.Settings, {"ks": [2]}, quick=True).ks == [2]   # given wins
    assert _study.resolve(cd_bias.Settings, {"weight_decays": "none"}).weight_decays == []
    with pytest.raises(ValueError, match="reps must be >= 1, got 0"):
        _study.resolve(cd_bias.Settings, {"reps": 0})
    with pytest.raises(TypeError, match=r"no setting\(s\) \['rep'\]"):
        _study.resolve(cd_bias.Settings, {"rep": 2})
    assert "Parameters\n----------\n" in cd_bias.Settings.__doc__         # generated
    assert "record_every : int" in cd_bias.Settings.__doc__


@pytest.mark.parametrize("argv, message", [
    (["--reps", "0"], "argument --reps: reps must be >= 1"),
    (["--learning-rate", "0"], "argument --learning-rate: learning_rate must be > 0"),
    (["--ks", "x"], "--ks must be a comma-separated list of int values"),
])
def test_bad_option_is_a_usage_error_naming_it(argv, message, capsys):
    assert cli.main(["reproduce", "cd-bias", "--quiet", *argv]) == 2
    assert message in capsys.readouterr().err


def test_summary_tail_forms():
    claim = report.make_claim("c", "agrees", criterion="crit", judged=0.5, measured="m")
    lines = report.summary_tail({"claims": [claim], "elapsed_seconds": 2.0},
                                before_time=["between"])
    assert lines == ["", "the paper's claims:", "  [agrees] c", "      measured: m",
                     "      criterion: crit (judged: 0.5)", "between", "run time: 2.0 s"]
    held = dict(claim="c", paper="p", observed="o", holds=False)
    lines = report.summary_tail({"claims": [held]}, heading="H", form="holds")
    assert lines == ["", "H", "  [ NO] c — paper: p", "        this run: o"]
    with pytest.raises(ValueError, match="form"):
        report.summary_tail({}, form="table")


def test_save_writes_whole_files_and_refuses_to_replace(tmp_path):
    frame = pd.DataFrame({"a": [1, 2]})
    out = tmp_path / "out"
    files = ("t.csv", "summary.json", "figure.html")
    paths = report.save(out, {"x": 1.5}, {"t": frame}, files=files, require_empty=True)
    assert [p.name for p in paths] == ["t.csv", "summary.json"]
    assert json.loads((out / "summary.json").read_text()) == {"x": 1.5}
    with pytest.raises(FileExistsError):
        report.save(out, {"x": 2}, {"t": frame}, files=files, require_empty=True)
    (out / "figure.html").write_text("old")
    report.save(out, {"x": 2}, {"t": frame}, files=files, require_empty=True, overwrite=True,
                clean=True)
    assert not (out / "figure.html").exists()           # not redrawn: removed
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    # a table the study streamed there is kept unless overwrite
    (out / "t.csv").write_text("streamed\n")
    report.save(out, {}, {"t": frame}, streamed=("t",))
    assert (out / "t.csv").read_text() == "streamed\n"
    report.save(out, {}, {"t": frame}, streamed=("t",), overwrite=True)
    assert (out / "t.csv").read_text() != "streamed\n"


# ------------------------------------------------- rbmviz reproduce tap --study adatap|dbm|fig12

#: the settings each study ran with before its settings became a class (the old FULL / QUICK
#: dicts with the study functions' defaults and the command line's seed): unchanged
_OLD = {
    "adatap": (dict(hidden=500, samples=5000, epochs=10, learning_rate=0.001, batch_size=100,
                    damping=0.5, iterations=[3, 10, 100], pl_rows=1000, eval_every=10,
                    timing_hidden=500, timing_batches=[1, 10, 100], timing_iters=[10, 2],
                    timing_direct=True, timing_seconds=0.2, init_scale=0.001, seed=0),
               dict(hidden=16, samples=500, epochs=2, learning_rate=0.05, batch_size=20,
                    damping=0.5, iterations=[3, 10, 100], pl_rows=500, eval_every=5,
                    init_scale=0.01, timing_hidden=100, timing_batches=[1, 10, 100],
                    timing_iters=[10, 2], timing_direct=False, timing_seconds=0.2, seed=0)),
    "dbm": (dict(models=[[784, 500, 1000], [784, 500, 500, 1000]], samples=60_000,
                 test_samples=10_000, pretrain_epochs=50, pretrain_lr=0.001, epochs=3000,
                 learning_rate=0.001, batch_size=100, eval_every=10, eval_samples=1000,
                 init_scale=0.001, seed=0),
            dict(models=[[784, 50, 25], [784, 50, 25, 25]], samples=1000, test_samples=200,
                 pretrain_epochs=3, pretrain_lr=0.05, epochs=3, learning_rate=0.02,
                 batch_size=20, eval_every=1, eval_samples=200, init_scale=0.01, seed=0)),
    "fig12": (dict(hidden=500, samples=60_000, epochs=100, learning_rate=0.005, batch_size=100,
                   weight_decay=0.001, momentum=0.5, eval_samples=1000, ais_chains=100,
                   ais_thin=1, spl_sites=100, init_scale=0.001, seed=0),
              dict(hidden=100, samples=2000, epochs=4, learning_rate=0.05, batch_size=20,
                   weight_decay=0.001, momentum=0.5, eval_samples=300, ais_chains=20,
                   ais_thin=10, spl_sites=100, init_scale=0.01, seed=0)),
}


def _plain(d):
    return json.loads(json.dumps(d))


@pytest.fixture
def ran(monkeypatch):
    """``rbmviz reproduce tap --study ...`` with the studies replaced by a recorder of the
    settings they receive."""
    from rbmviz.reproduce import tap_beyond
    calls = {}

    def fake(name):
        def study(*, progress=False, **kw):
            calls[name] = kw
            return {"curves": pd.DataFrame({"epoch": [0]})}, {"claims": []}
        return study
    monkeypatch.setattr(tap_beyond, "_STUDY", {n: fake(n) for n in tap_beyond.STUDIES})
    return calls


@pytest.mark.parametrize("name", ["adatap", "dbm", "fig12"])
def test_tap_study_defaults_and_quick_preset_are_the_old_settings(name, ran, capsys):
    from rbmviz.reproduce import tap_beyond
    full, quick = _OLD[name]
    assert _plain(tap_beyond.FULL[name]) == full and _plain(tap_beyond.QUICK[name]) == quick
    assert cli.main(["reproduce", "tap", "--study", name, "--quick", "--quiet"]) == 0
    assert _plain(ran[name]) == quick                       # the preset reaches the run
    summary = json.loads(capsys.readouterr().out)
    assert summary["form"] == "quick" and summary["study"] == name
    assert cli.main(["reproduce", "tap", "--study", name, "--quiet"]) == 0
    assert _plain(ran[name]) == full
    _, s = tap_beyond.run(name, quick=True)
    assert _plain(s["settings"]) == quick                   # the summary's settings, as before


@pytest.mark.parametrize("argv, name, expected", [
    (["--study", "fig12", "--hidden", "200", "--samples", "20000", "--epochs", "30",
      "--eval-samples", "500", "--ais-chains", "100", "--ais-thin", "1"], "fig12",
     dict(hidden=200, samples=20000, epochs=30, eval_samples=500, ais_chains=100, ais_thin=1,
          batch_size=100)),
    (["--study", "adatap", "--hidden", "100", "--samples", "5000", "--epochs", "10",
      "--iterations", "3,10", "--timing-batches", "1,10", "--no-timing-direct", "--seed", "4"],
     "adatap", dict(hidden=100, samples=5000, epochs=10, iterations=[3, 10],
                    timing_batches=[1, 10], timing_direct=False, seed=4)),
    (["--study", "dbm", "--models", "784-200-200,784-200-200-200", "--epochs", "100",
      "--eval-every", "5", "--pretrain-lr", "0.01"], "dbm",
     dict(models=[[784, 200, 200], [784, 200, 200, 200]], epochs=100, eval_every=5,
          pretrain_lr=0.01, pretrain_epochs=50)),
    (["--study", "fig12", "--quick", "--hidden", "50"], "fig12",
     dict(hidden=50, samples=2000, ais_thin=10)),               # explicit options win
])
def test_tap_study_options_parse(argv, name, expected, ran):
    assert cli.main(["reproduce", "tap", *argv, "--quiet"]) == 0
    got = _plain(ran[name])
    assert {k: got[k] for k in expected} == expected


def test_tap_study_state_reaches_the_resumable_studies(ran, tmp_path):
    from rbmviz.reproduce import tap_beyond
    assert cli.main(["reproduce", "tap", "--study", "fig12", "--quick", "--quiet", "--state",
                     str(tmp_path)]) == 0
    assert ran["fig12"]["state"] == str(tmp_path)
    assert tap_beyond.RESUMABLE == ("dbm", "fig12")


@pytest.mark.parametrize("argv, message", [
    (["--study", "fig12", "--hidden", "0"], "argument --hidden: hidden must be >= 1, got 0"),
    (["--study", "fig12", "--hidden", "25,100"], "--hidden takes one int value with --study"),
    (["--study", "fig12", "--momentum", "1"], "argument --momentum: momentum must be < 1"),
    (["--study", "fig12", "--ais-thin", "0"], "argument --ais-thin: ais_thin must be >= 1"),
    (["--study", "adatap", "--iterations", "3,0"], "argument --iterations: iterations items "
                                                   "must be >= 1, got 0"),
    (["--study", "adatap", "--timing-iters", "5"], "argument --timing-iters: timing_iters must "
                                                   "have exactly 2 items, got 1"),
    (["--study", "adatap", "--damping", "2"], "argument --damping: damping must be <= 1"),
    (["--study", "dbm", "--models", "784-x"], "--models must be a comma-separated list of "
                                              "layer sizes"),
    (["--study", "dbm", "--models", "784"], "--models must be a comma-separated list of "
                                            "layer sizes"),
    (["--study", "dbm", "--pretrain-lr", "0"], "argument --pretrain-lr: pretrain_lr must be > 0"),
])
def test_tap_study_bad_value_is_a_usage_error_naming_the_option(argv, message, ran, capsys):
    assert cli.main(["reproduce", "tap", *argv, "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert not ran                                           # nothing ran


@pytest.mark.parametrize("argv, message", [
    (["--study", "fig12", "--ps", "0.1"], "--ps does not apply to --study fig12"),
    (["--study", "fig12", "--eval-every", "1"], "--eval-every does not apply to --study fig12"),
    (["--study", "fig12", "--dataset", "binary-mnist"], "--dataset does not apply"),
    (["--study", "fig12", "--models", "784-5-5"], "--models does not apply to --study fig12"),
    (["--study", "adatap", "--state", "somewhere"], "--state does not apply to --study adatap"),
    (["--study", "adatap", "--eval-samples", "10"], "--eval-samples does not apply"),
    (["--study", "dbm", "--hidden", "10"], "--hidden does not apply to --study dbm"),
    (["--models", "784-5-5", "--epochs", "1"], "--models applies only with --study (dbm)"),
    (["--init-scale", "0.1"], "--init-scale applies only with --study (adatap|dbm|fig12)"),
])
def test_tap_study_refuses_an_option_it_does_not_take(argv, message, ran, capsys):
    assert cli.main(["reproduce", "tap", *argv, "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert not ran


def test_tap_help_lists_every_study_setting(capsys):
    from rbmviz.reproduce import _study as study, tap_beyond
    assert cli.main(["reproduce", "tap", "--help"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    for name in tap_beyond.STUDIES:
        cls = tap_beyond.settings_class(name)
        for setting in study.settings(cls):
            assert f"[{study.option(cls, setting)}" in flat, (name, setting)
    assert "784-500-1000,784-500-500-1000" in flat and "--no-timing-direct" in flat


def test_tap_study_training_knobs_are_the_rules_declarations():
    from rbmviz.reproduce import tap_adatap, tap_dbm, tap_fig12
    declared = algorithms.get("tap").Knobs.param
    for study, knobs in ((tap_adatap, ("learning_rate", "damping", "seed")),
                         (tap_dbm, ("learning_rate", "seed")),
                         (tap_fig12, ("learning_rate", "weight_decay", "momentum", "seed"))):
        for knob in knobs:
            mine = study.Settings.param[knob]
            assert (mine.bounds, type(mine)) == (declared[knob].bounds, type(declared[knob]))
    assert tap_dbm.Settings.param.pretrain_lr.bounds == declared["learning_rate"].bounds


def test_layer_sizes():
    assert _study.LayerSizes("784-500-1000") == (784, 500, 1000)
    assert str(_study.LayerSizes([16, 6])) == "16-6"
    for bad in ("784", "784-0", "a-b", [3.5, 2]):
        with pytest.raises(ValueError):
            _study.LayerSizes(bad)
    assert _study.format_value([(784, 50, 25), (784, 50, 25, 25)]) == "784-50-25,784-50-25-25"


# ---------------------------------------------------------------------------- Sec. VII (tap)

#: the defaults of ``rbmviz reproduce tap`` and of ``tap_run.run`` before they were derived from
#: ``tap.Settings`` (None: the data set's, Table 1)
_OLD_TAP_DEFAULTS = dict(
    dataset="binary-mnist", epochs=None, samples=None, eval_samples=None, test_samples=None,
    hidden=None, count_hidden=None, eval_every=1, eval_epochs=[], isomap_epochs=None,
    batch_size=None, n_solutions=None, learning_rate=None, learning_rate_final=None,
    decay_epochs=None, weight_decay=None, momentum=0.5, momentum_form="heavy_ball",
    init_scale=0.001, damping=0.5, eval_damping=1.0, tol=1e-8, max_iter=1000, unique_tol=1e-4,
    n_neighbors=5, seed=0, eval_tol=1e-12, eval_max_iter=None, products="float64",
    train_iter=10, eval_fallback_damping=None,
    ps=None)            # (the command line's; run's was DEFAULT_PS, what None means there)
#: the options of ``rbmviz reproduce tap`` written by hand before (all kept)
_OLD_TAP_OPTIONS = ("--dataset", "--epochs", "--samples", "--eval-samples", "--test-samples",
                    "--hidden", "--count-hidden", "--eval-every", "--eval-epochs", "--ps",
                    "--learning-rate", "--batch-size", "--momentum-form", "--eval-max-iter",
                    "--eval-fallback-damping", "--products", "--train-iter", "--seed",
                    "--study", "--state", "--save-epochs", "--out", "--overwrite", "--no-html",
                    "--quiet", "--quick")
#: ``summary["settings"]`` of ``rbmviz reproduce tap`` (and the key of its state directory)
#: before: the paper's settings and the README's quick form
_OLD_TAP_SUMMARY_SETTINGS = {
    (): dict(epochs=100, samples=60000, eval_samples=10000, test_samples=1000,
             hidden=[25, 50, 100, 500], count_hidden=100, eval_every=1,
             isomap_epochs=[1, 3, 25, 100],
             ps=[0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5], batch_size=100,
             n_solutions=100, learning_rate=0.005, weight_decay=0.001, momentum=0.5,
             momentum_form="heavy_ball", init_scale=0.001, damping=0.5, eval_damping=1.0,
             tol=1e-08, eval_tol=1e-12, max_iter=1000, unique_tol=0.0001, n_neighbors=5, seed=0,
             eval_fallback_damping=[0.5, 0.2, 0.1, 0.05], train_iter=10),
    ("--epochs", "5", "--samples", "2000"): dict(
        epochs=5, samples=2000, eval_samples=1000, test_samples=200, hidden=[25, 100],
        count_hidden=100, eval_every=1, isomap_epochs=[1, 3, 25, 100],
        ps=[0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5], batch_size=20, n_solutions=20,
        learning_rate=0.05, weight_decay=0.001, momentum=0.5, momentum_form="heavy_ball",
        init_scale=0.001, damping=0.5, eval_damping=1.0, tol=1e-08, eval_tol=1e-12,
        max_iter=1000, unique_tol=0.0001, n_neighbors=5, seed=0,
        eval_fallback_damping=[0.5, 0.2, 0.1, 0.05], train_iter=10),
}


@pytest.fixture
def tap_ran(monkeypatch):
    """``rbmviz reproduce tap`` (Sec. VII) with its run replaced by a recorder of the keyword
    arguments it receives (the command then stops as if interrupted, exit code 130)."""
    from rbmviz.reproduce import tap
    calls = []

    def fake(**kw):
        calls.append(kw)
        raise KeyboardInterrupt
    monkeypatch.setattr(tap, "run", fake)
    return calls


def _tap_settings(kw):
    """``summary["settings"]`` of a run given ``kw`` (before the data are loaded)."""
    from rbmviz.reproduce import tap_settings
    return tap_settings.check_settings(**{k: v for k, v in kw.items()
                                          if k not in ("progress", "state_dir", "save_epochs")})


def test_tap_defaults_are_the_old_ones():
    import inspect

    from rbmviz.reproduce import tap, tap_run
    assert _plain(_study.values(tap.Settings())) == _plain(_OLD_TAP_DEFAULTS)
    sig = inspect.signature(tap_run.run).parameters
    for name, old in _OLD_TAP_DEFAULTS.items():
        if name == "ps":
            continue
        got = sig[name].default
        assert (list(got) if isinstance(got, tuple) else got) == old, name
    assert sig["ps"].default is None                        # None: DEFAULT_PS, as before
    assert _tap_settings({**tap._DEFAULTS, "ps": None})["ps"] == list(tap.DEFAULT_PS)


def test_tap_options_are_derived_and_keep_their_names(capsys):
    from rbmviz.reproduce import tap
    assert cli.main(["reproduce", "tap", "--help"]) == 0
    text = capsys.readouterr().out
    flat, bare = " ".join(text.split()), "".join(text.split())
    for option in _OLD_TAP_OPTIONS:
        assert f"[{option}" in flat, option
    for name, p in _study.settings(tap.Settings).items():
        if p.precedence is not None and p.precedence < 0:
            continue
        assert f"[{_study.option(tap.Settings, name)} " in flat, name
        assert "".join((p.doc or "").split()) in bare, name
    for shown in tap.Settings.DEFAULTS_SHOWN.values():      # the data set's defaults, stated
        assert "".join(shown.split()) in bare


@pytest.mark.parametrize("argv", list(_OLD_TAP_SUMMARY_SETTINGS))
def test_tap_summary_settings_are_the_old_ones(argv, tap_ran):
    assert cli.main(["reproduce", "tap", "--quiet", *argv]) == 130
    assert _plain(_tap_settings(tap_ran[-1])) == _OLD_TAP_SUMMARY_SETTINGS[argv]


def test_tap_options_parse(tap_ran, tmp_path):
    argv = ["--dataset", "binary-mnist", "--hidden", "25,50", "--count-hidden", "50",
            "--epochs", "100", "--eval-every", "25", "--eval-epochs", "1,2,3",
            "--train-iter", "0", "--products", "float32", "--eval-max-iter", "4000",
            "--eval-fallback-damping", "0.5,0.2", "--momentum-form", "printed", "--seed", "2",
            "--state", str(tmp_path), "--save-epochs", "1,10"]
    assert cli.main(["reproduce", "tap", "--quiet", *argv]) == 130
    kw = tap_ran[-1]
    assert (kw["hidden"], kw["count_hidden"], kw["epochs"], kw["eval_every"]) == (
        [25, 50], 50, 100, 25)
    assert (kw["eval_epochs"], kw["train_iter"], kw["products"], kw["eval_max_iter"]) == (
        [1, 2, 3], 0, "float32", 4000)
    assert (kw["eval_fallback_damping"], kw["momentum_form"], kw["seed"]) == (
        [0.5, 0.2], "printed", 2)
    assert (kw["state_dir"], kw["save_epochs"]) == (str(tmp_path), [1, 10])
    s = _tap_settings(kw)
    assert "train_iter" not in s and s["eval_epochs"] == [1, 2, 3]
    assert s["products"] == "float32" and s["eval_max_iter"] == 4000
    # --quick: the README's quick form (CBCL: 10 epochs), explicit options win
    assert cli.main(["reproduce", "tap", "--quiet", "--quick"]) == 130
    assert _plain(_tap_settings(tap_ran[-1])) == _OLD_TAP_SUMMARY_SETTINGS[
        ("--epochs", "5", "--samples", "2000")]
    assert cli.main(["reproduce", "tap", "--quiet", "--quick", "--epochs", "3"]) == 130
    assert (tap_ran[-1]["epochs"], tap_ran[-1]["samples"]) == (3, 2000)
    assert cli.main(["reproduce", "tap", "--quiet", "--quick", "--dataset", "cbcl"]) == 130
    assert (tap_ran[-1]["epochs"], tap_ran[-1]["samples"], tap_ran[-1]["hidden"]) == (
        10, 2429, [64])
    assert cli.main(["reproduce", "tap", "--quiet", "--eval-fallback-damping", "none"]) == 130
    assert tap_ran[-1]["eval_fallback_damping"] is None       # the default ladder


@pytest.mark.parametrize("argv, message", [
    (["--epochs", "-1"], "argument --epochs: epochs must be >= 0, got -1"),
    (["--samples", "1"], "argument --samples: samples must be >= 2, got 1"),
    (["--test-samples", "20000"], "argument --test-samples: test_samples must be <= 10000"),
    (["--hidden", "25,0"], "argument --hidden: hidden items must be >= 1, got 0"),
    (["--count-hidden", "0"], "argument --count-hidden: count_hidden must be >= 1"),
    (["--eval-every", "0"], "argument --eval-every: eval_every must be >= 1"),
    (["--eval-epochs", "-1"], "argument --eval-epochs: eval_epochs items must be >= 0"),
    (["--learning-rate", "0"], "argument --learning-rate: learning_rate must be > 0"),
    (["--batch-size", "0"], "argument --batch-size: batch_size must be >= 1"),
    (["--eval-max-iter", "0"], "argument --eval-max-iter: eval_max_iter must be >= 1"),
    (["--train-iter", "-1"], "argument --train-iter: train_iter must be >= 0"),
    (["--seed", "-1"], "argument --seed: seed must be >= 0"),
    (["--save-epochs", "1"], "--save-epochs needs --state"),
    (["--dataset", "cbcl", "--samples", "3000"], "samples must be <= 2429"),
    (["--dataset", "cbcl", "--products", "float32"], "products='float32' is for binary"),
])
def test_tap_bad_value_is_a_usage_error_naming_the_option(argv, message, tap_ran, capsys):
    assert cli.main(["reproduce", "tap", "--quiet", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not tap_ran


def test_tap_training_knobs_are_the_rules_declarations():
    from rbmviz.reproduce import tap
    from rbmviz.tap.options import TAPSolverOptions
    declared = algorithms.get("tap").Knobs.param
    for knob in ("learning_rate", "weight_decay", "momentum", "momentum_form", "n_solutions",
                 "learning_rate_final", "decay_epochs", "damping", "tol", "max_iter",
                 "unique_tol", "products", "seed"):
        mine = tap.Settings.param[knob]
        assert type(mine) is type(declared[knob]), knob
        if isinstance(mine, param.Number):
            assert (mine.bounds, mine.inclusive_bounds) == (declared[knob].bounds,
                                                            declared[knob].inclusive_bounds)
        else:
            assert mine.objects == declared[knob].objects
    assert tap.Settings.param.eval_max_iter.bounds == declared["max_iter"].bounds
    assert tap.Settings.param.train_iter.bounds[1] == declared["fixed_iter"].bounds[1]
    solver = TAPSolverOptions.param
    assert tap.Settings.param.eval_tol.default == solver.count_tol.default
    assert tap.Settings.param.eval_damping.default == solver.first_damping.default
