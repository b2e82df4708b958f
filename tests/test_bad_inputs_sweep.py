"""A catalogue of bad inputs to sweeps (:mod:`rbmviz.sweep`) and to the scikit-learn estimator
(:mod:`rbmviz.estimator`), in the style of ``tests/test_bad_inputs.py``.

Every case asserts the exception type, that the message names the argument, knob, environment
variable or file (a regex), and that the error was raised by rbmviz's own checks (the innermost
frame of the traceback is in the ``rbmviz`` package; for the estimator, scikit-learn's parameter
validation is its contract).  A sweep refuses each of these before any run starts: a knob
that none of the sweep's rules takes, a ``batch_size`` larger than the data, checkpoints past
the last epoch, an environment variable with a bad value, ``run_overrides`` a run refuses.
The estimator refuses, at the ``partial_fit`` call, a parameter changed with ``set_params``
that the current model cannot take on.
"""
import contextlib
import os
import warnings

import numpy as np
import pytest

import rbmviz
from rbmviz import datasets
from rbmviz.sweep import Plan, SweepNote, plan, run_specs, summarize, sweep
from test_bad_inputs import _innermost_file  # the catalogue's check: raised inside rbmviz

PKG = os.path.dirname(rbmviz.__file__)
SKLEARN = os.path.dirname(__import__("sklearn").__file__)
X = datasets.bars_and_stripes(2)                   # (6, 4) binary
BASE = {"dataset": "bars_and_stripes", "D": 2, "n_hidden": 3, "epochs": 2, "eval_every": 1}


def _base(base):
    """``BASE`` updated with ``base``; another data set drops Bars & Stripes' ``D``."""
    if base is None:
        return BASE
    out = {**BASE, **base}
    if out["dataset"] != "bars_and_stripes":
        out.pop("D")
    return out


def _plan(base=None, **kw):
    kw = {"algorithms": "cd", "trials": 1, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SweepNote)
        return plan(_base(base), **kw)


def _sweep(t, base=None, **kw):
    kw = {"algorithms": "cd", "trials": 1, "workers": 0, "progress": False, **kw}
    return sweep(_base(base), **kw)


def _env(name, value, call):
    """``call()`` with the environment variable ``name`` set to ``value`` (restored after)."""
    @contextlib.contextmanager
    def setting():
        old = os.environ.get(name)
        os.environ[name] = value
        try:
            yield
        finally:
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
    with setting():
        return call()


def _file(t):
    path = t / "not-a-dir"
    path.write_text("x")
    return str(path)


def _est(**kw):
    from rbmviz.estimator import RBMEstimator
    return RBMEstimator(**{"n_components": 3, "n_iter": 1, "random_state": 0, **kw})


def _refit(change, first="partial_fit", **kw):
    """An estimator trained once (``first``), then ``set_params(**change)`` and partial_fit."""
    est = _est(**kw)
    getattr(est, first)(X)
    est.set_params(**change)
    return est.partial_fit(X)


# (id, call(tmp_path), exception type, regex that names the argument)
SWEEP_CASES = [
    # --------------------------------------------------------- knobs no listed rule takes
    ("grid-damping-cd", lambda t: _plan(grid={"damping": [0.3, 0.5]}), ValueError,
     r"grid sets 'damping', which none of the sweep's algorithms cd takes.*tap"),
    ("grid-damping-cd-sweep", lambda t: _sweep(t, grid={"damping": [0.3, 0.5]}), ValueError,
     r"'damping'.*rules that take it: tap"),
    ("grid-tol-cd-pcd", lambda t: _plan(algorithms="cd,pcd", grid={"tol": [1e-6, 1e-8]}),
     ValueError, r"'tol'.*cd, pcd.*tap"),
    ("grid-n_chains-cd-sdcp", lambda t: _plan(algorithms="cd,sdcp", grid={"n_chains": [2, 3]}),
     ValueError, r"'n_chains'.*pcd"),
    ("grid-k_inner-cd-pcd", lambda t: _plan(algorithms="cd,pcd", grid={"k_inner": [1, 2]}),
     ValueError, r"'k_inner'.*sdcp, csdcp"),
    ("grid-step_rule-cd", lambda t: _plan(grid={"step_rule": ["plain", "relative"]}), ValueError,
     r"'step_rule'.*ssd"),
    ("grid-nu_mu-pcd", lambda t: _plan(algorithms="pcd", grid={"nu_mu": [0.1, 0.2]}), ValueError,
     r"'nu_mu'.*cg"),
    ("grid-dict-damping-cd", lambda t: _plan(grid={"tap": [{"damping": 0.3}, {"damping": 0.5}]}),
     ValueError, r"grid\['tap'\] sets 'damping'"),
    ("grid-dict-mixed-order", lambda t: _plan(grid={"b": [{"k": 2, "order": 3}]}), ValueError,
     r"grid\['b'\] sets 'order'.*tap"),
    ("base-damping-cd", lambda t: _plan({"damping": 0.3}), ValueError,
     r"base damping=0.3 sets 'damping'.*tap"),
    ("base-damping-sweep", lambda t: _sweep(t, {"damping": 0.3}), ValueError, r"'damping'"),
    ("base-step_rule-cd", lambda t: _plan({"step_rule": "plain"}), ValueError, r"'step_rule'.*ssd"),
    ("base-order-pcd", lambda t: _plan({"order": 3}, algorithms="pcd"), ValueError, r"'order'.*tap"),
    ("base-n_chains-cd", lambda t: _plan({"n_chains": 4}), ValueError, r"'n_chains'.*pcd"),
    ("base-k_inner-cd-text", lambda t: _plan({"k_inner": "2"}), ValueError, r"'k_inner'.*sdcp"),
    ("base-unique-cd", lambda t: _plan({"unique": True}), ValueError, r"'unique'.*tap"),
    ("base-inference-cd", lambda t: _plan({"inference": "adatap"}), ValueError, r"'inference'.*tap"),
    ("base-N-bars", lambda t: _plan({"N": 5}), ValueError,
     r"base N=5 sets 'N', which the sweep's data set\(s\) bars_and_stripes do not use.*shifting_bar"),
    ("base-limit-bars", lambda t: _plan({"limit": 10}), ValueError, r"'limit'.*mnist"),
    ("grid-N-bars", lambda t: _plan(grid={"N": [5, 6]}), ValueError, r"grid sets 'N'.*shifting_bar"),
    ("algorithm_settings-cd-damping", lambda t: _plan(algorithm_settings={"cd": {"damping": 0.3}}),
     ValueError, r"algorithm_settings\['cd'\] sets 'damping', which cd does not take.*tap"),
    ("algorithm_settings-pcd-k_inner",
     lambda t: _plan(algorithms="cd,pcd", algorithm_settings={"pcd": {"k_inner": 2}}),
     ValueError, r"algorithm_settings\['pcd'\] sets 'k_inner'"),
    # --------------------------------------------------------- batch size and the data
    ("batch_size-larger-than-data", lambda t: _plan({"batch_size": 100}), ValueError,
     r"batch_size=100 is larger than the training set of 'bars_and_stripes' \(6 rows\)"),
    ("batch_size-larger-sweep", lambda t: _sweep(t, {"batch_size": 7}), ValueError,
     r"batch_size=7 is larger"),
    ("batch_size-grid-point", lambda t: _plan(grid={"batch_size": [2, 100]}), ValueError,
     r"batch_size=100 is larger.*at grid point batch_size=100"),
    ("batch_size-shifting_bar", lambda t: _plan({"dataset": "shifting_bar", "N": 5, "B": 2,
                                                "batch_size": 6}), ValueError,
     r"batch_size=6 is larger.*'shifting_bar' \(5 rows\)"),
    ("batch_size-limit", lambda t: _plan({"dataset": "mnist", "limit": 10, "batch_size": 20}),
     ValueError, r"batch_size=20 is larger.*'mnist' \(10 rows at most \(limit\)\)"),
    ("batch_size-digits", lambda t: _plan({"dataset": "digits", "limit": 5, "batch_size": 6}),
     ValueError, r"batch_size=6 is larger.*'digits'"),
    ("batch_size-run_overrides", lambda t: _plan(run_overrides={"batch_size": 100}), ValueError,
     r"batch_size=100 is larger"),
    ("batch_size-algorithm_settings",
     lambda t: _plan(algorithms="cd,pcd", algorithm_settings={"pcd": {"batch_size": 9}}),
     ValueError, r"batch_size=9 is larger"),
    # --------------------------------------------------------- run_overrides
    ("run_overrides-unknown", lambda t: _plan(run_overrides={"foo": 1}), ValueError,
     r"run_overrides has the unknown key 'foo'"),
    ("run_overrides-typo", lambda t: _plan(run_overrides={"metric": ["train_ll"]}), ValueError,
     r"'metric' \(did you mean 'metrics'\?\)"),
    ("run_overrides-rule-knob", lambda t: _plan(run_overrides={"k": 3}), ValueError,
     r"run_overrides\['k'\]: k is a knob of the rules.*base, grid"),
    ("run_overrides-rule-knob-damping", lambda t: _plan(run_overrides={"damping": 0.3}), ValueError,
     r"run_overrides\['damping'\]"),
    ("run_overrides-key-type", lambda t: _plan(run_overrides={1: 2}), TypeError,
     r"run_overrides keys must be"),
    ("run_overrides-not-dict", lambda t: _plan(run_overrides=[("metrics", "auto")]), TypeError,
     r"run_overrides must be a dict"),
    ("run_overrides-metric-name", lambda t: _plan(run_overrides={"metrics": ["nope"]}), ValueError,
     r"run_overrides \['metrics'\] refused.*unknown metric 'nope'"),
    ("run_overrides-exact_max_bits", lambda t: _plan(run_overrides={"exact_max_bits": 99}),
     ValueError, r"run_overrides.*exact_max_bits must be <= 24"),
    ("run_overrides-eval_budget", lambda t: _plan(run_overrides={"eval_budget": 2.0}), ValueError,
     r"run_overrides.*eval_budget"),
    ("run_overrides-metric_options", lambda t: _plan(run_overrides={"metric_options": {"x": 1}}),
     ValueError, r"run_overrides.*metric_options"),
    ("run_overrides-max_seconds", lambda t: _plan(run_overrides={"max_seconds": -1}), ValueError,
     r"run_overrides.*max_seconds"),
    ("run_overrides-spl_rows-text", lambda t: _plan(run_overrides={"spl_rows": "many"}), TypeError,
     r"run_overrides.*spl_rows must be an integer"),
    ("run_overrides-exact-too-small", lambda t: _sweep(t, run_overrides={"metrics": ["train_ll"],
                                                                        "exact_max_bits": 2}),
     ValueError, r"run_overrides \['exact_max_bits', 'metrics'\] refused"),
    ("run_overrides-second-algorithm", lambda t: _plan(algorithms="cd,tap",
                                                       run_overrides={"metrics": ["spl", "tap_ll"],
                                                                      "dtype": "int8"}),
     ValueError, r"run_overrides.*dtype"),
    # --------------------------------------------------------- checkpoints
    ("checkpoints-past-last-epoch", lambda t: _sweep(t, out=t / "s.csv", checkpoints=[1, 50]),
     ValueError, r"checkpoints \[50\] are past the last epoch of run 't0-cd' \(epochs=2\)"),
    ("checkpoints-past-override-epochs",
     lambda t: _sweep(t, out=t / "s.csv", checkpoints=[2], run_overrides={"epochs": 1}),
     ValueError, r"checkpoints \[2\] are past.*epochs=1"),
    ("checkpoints-past-grid-epochs",
     lambda t: _sweep(t, out=t / "s.csv", checkpoints=[3], grid={"epochs": [2, 4]}),
     ValueError, r"checkpoints \[3\].*t0-cd-epochs=2"),
    ("checkpoints-negative", lambda t: _sweep(t, out=t / "s.csv", checkpoints=[-1]), ValueError,
     r"checkpoints must be >= 0"),
    ("checkpoints-text", lambda t: _sweep(t, out=t / "s.csv", checkpoints="10"), TypeError,
     r"checkpoints must be a list"),
    # --------------------------------------------------------- environment variables
    ("env-partial-every-text", lambda t: _env("RBMVIZ_PARTIAL_EVERY", "soon", lambda: _sweep(t)),
     ValueError, r"RBMVIZ_PARTIAL_EVERY='soon'"),
    ("env-partial-every-negative",
     lambda t: _env("RBMVIZ_PARTIAL_EVERY", "-5", lambda: _sweep(t, out=t / "s.csv")),
     ValueError, r"RBMVIZ_PARTIAL_EVERY='-5'"),
    ("env-data-not-a-directory",
     lambda t: _env("RBMVIZ_DATA", _file(t), lambda: _sweep(t, {"dataset": "mnist", "limit": 20})),
     ValueError, r"RBMVIZ_DATA='.*not-a-dir' is not a directory.*mnist"),
    ("env-data-missing-files",
     lambda t: _env("RBMVIZ_DATA", str(t), lambda: _sweep(t, {"dataset": "omniglot", "limit": 20})),
     datasets.DatasetNotFoundError, r"omniglot not found.*RBMVIZ_DATA="),
    # --------------------------------------------------------- the other arguments
    ("plan-trials-text", lambda t: _plan(trials="2"), TypeError, r"trials must be an integer"),
    ("plan-seed-negative", lambda t: _plan(seed=-1), ValueError, r"seed must be >= 0"),
    ("plan-algorithms-int", lambda t: _plan(algorithms=3), TypeError, r"algorithms must be a list"),
    ("plan-algorithm_settings-other", lambda t: _plan(algorithm_settings={"pcd": {"k": 2}}),
     ValueError, r"algorithm_settings names 'pcd'"),
    ("plan-base-type", lambda t: plan("k=3", algorithms="cd", trials=1), TypeError,
     r"base must be a flat settings dict"),
    ("plan-grid-type", lambda t: _plan(grid=[("k", [1])]), TypeError, r"grid must be a dict"),
    ("run_specs-type", lambda t: run_specs(3), TypeError, r"specs must be a list of RunSpec"),
    ("run_specs-items", lambda t: run_specs([1]), TypeError, r"specs must hold RunSpec"),
    ("run_specs-workers", lambda t: run_specs(_plan(), workers=-1), ValueError, r"workers must be >= 0"),
    ("run_specs-connect_timeout", lambda t: run_specs(_plan(), connect_timeout=0), ValueError,
     r"connect_timeout must be > 0"),
    ("run_specs-on_record", lambda t: run_specs(_plan(), on_record=3), TypeError,
     r"on_record must be callable"),
    ("summarize-type", lambda t: summarize([1, 2]), TypeError, r"frame must be a sweep DataFrame"),
    ("summarize-metric", lambda t: summarize(_sweep(t), "nope"), ValueError, r"metric 'nope'"),
]


ESTIMATOR_CASES = [
    # --------------------------------------------------------- set_params after partial_fit
    ("partial_fit-n_components", lambda t: _refit({"n_components": 5}), ValueError,
     r"n_components=3 -> 5 .*call fit"),
    ("partial_fit-algorithm", lambda t: _refit({"algorithm": "cd"}), ValueError,
     r"algorithm='pcd' -> 'cd'.*call fit"),
    ("partial_fit-algorithm-tap", lambda t: _refit({"algorithm": "tap"}), ValueError,
     r"algorithm='pcd' -> 'tap'"),
    ("partial_fit-dtype", lambda t: _refit({"dtype": "float32"}), ValueError, r"dtype='float64' -> 'float32'"),
    ("partial_fit-init_scale", lambda t: _refit({"init_scale": 0.5}), ValueError, r"init_scale=0.01 -> 0.5"),
    ("partial_fit-init_visible_bias", lambda t: _refit({"init_visible_bias": "base_rate"}),
     ValueError, r"init_visible_bias='zeros' -> 'base_rate'"),
    ("partial_fit-random_state", lambda t: _refit({"random_state": 3}), ValueError,
     r"random_state=0 -> 3"),
    ("partial_fit-n_chains", lambda t: _refit({"n_chains": 2}), ValueError, r"n_chains=None -> 2"),
    ("partial_fit-knob-not-taken", lambda t: _refit({"damping": 0.3}), ValueError,
     r"damping=0.5 -> 0.3"),
    ("partial_fit-k_inner-not-taken", lambda t: _refit({"k_inner": 2}), ValueError, r"k_inner=None -> 2"),
    ("partial_fit-after-fit-n_components", lambda t: _refit({"n_components": 4}, first="fit"),
     ValueError, r"n_components=3 -> 4"),
    ("partial_fit-after-fit-algorithm", lambda t: _refit({"algorithm": "sdcp"}, first="fit"),
     ValueError, r"algorithm='pcd' -> 'sdcp'"),
    ("partial_fit-cd-order", lambda t: _refit({"order": 3}, algorithm="cd"), ValueError,
     r"order=2 -> 3"),
    # --------------------------------------------------------- data and knobs
    ("fit-weights-too-many", lambda t: _est(n_components=16_000).fit(np.zeros((2, 5000))),
     ValueError, r"the features of X · n_components = 5000 · 16000.*WEIGHTS_MAX"),
    ("partial_fit-weights-too-many",
     lambda t: _est(n_components=16_000).partial_fit(np.zeros((2, 5000))), ValueError,
     r"n_components.*WEIGHTS_MAX"),
    ("fit-knob-not-taken", lambda t: _est(algorithm="cd", damping=0.3).fit(X), ValueError,
     r"algorithm 'cd' does not take the setting 'damping'"),
    ("fit-X-complex", lambda t: _est().fit(X + 0j), ValueError, r"X: Complex data not supported"),
    ("transform-X-complex", lambda t: _est().fit(X).transform(X + 1j), ValueError, r"\bX\b.*real"),
    ("partial_fit-X-complex", lambda t: _est().partial_fit(X + 0j), ValueError, r"\bX\b.*real"),
    ("score_samples-X-range", lambda t: _est().fit(X).score_samples(X * 2), ValueError, r"\bX\b"),
    ("gibbs-v-range", lambda t: _est().fit(X).gibbs(X * 3), ValueError, r"\bv\b"),
]

CASES = SWEEP_CASES + ESTIMATOR_CASES


@pytest.mark.parametrize("call,exc,match", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_bad_sweep_or_estimator_input_gets_a_clear_error(tmp_path, call, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SweepNote)
        with pytest.raises(exc, match=match) as info:
            call(tmp_path)
    origin = _innermost_file(info)
    allowed = (PKG, SKLEARN) if "_est" in call.__code__.co_names or "_refit" in call.__code__.co_names \
        else (PKG,)
    assert origin.startswith(allowed), (
        f"raised from {origin}, not by rbmviz's checks: {type(info.value).__name__}: {info.value}")
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "s.runs").exists(), \
        "a refused sweep wrote its output"


def test_catalogue_size():
    assert len(CASES) >= 70


# ---------------------------------------------------------------------------- what is accepted

def test_a_grid_over_a_knob_some_rules_take_applies_to_those_and_says_so():
    """``damping`` is a knob of tap only: a grid over it varies the tap runs; cd runs once per
    trial with an empty label, and the plan says so (a SweepNote and Plan.notes)."""
    with pytest.warns(SweepNote, match=r"grid\['damping'\] applies to tap only.*cd runs once"):
        specs = plan(BASE, algorithms="cd,tap", trials=2, grid={"damping": [0.3, 0.5]})
    assert isinstance(specs, Plan) and len(specs.notes) == 1 and "tap only" in specs.notes[0]
    assert [s.run_id for s in specs] == ["t0-cd", "t0-tap-damping=0.3", "t0-tap-damping=0.5",
                                         "t1-cd", "t1-tap-damping=0.3", "t1-tap-damping=0.5"]
    assert [s.labels["damping"] for s in specs[:3]] == [None, 0.3, 0.5]
    assert [s.settings["damping"] for s in specs[1:3]] == [0.3, 0.5]
    # with another axis, the rule that does not take the knob runs once per point of the other
    with pytest.warns(SweepNote):
        specs = plan(BASE, algorithms="pcd,tap", trials=1,
                     grid={"learning_rate": [0.01, 0.1], "damping": [0.3, 0.5]})
    assert [s.run_id for s in specs] == [
        "t0-pcd-learning_rate=0.01", "t0-pcd-learning_rate=0.1",
        "t0-tap-learning_rate=0.01-damping=0.3", "t0-tap-learning_rate=0.01-damping=0.5",
        "t0-tap-learning_rate=0.1-damping=0.3", "t0-tap-learning_rate=0.1-damping=0.5"]


def test_a_partial_grid_sweep_runs_and_reports_its_note():
    with pytest.warns(SweepNote):
        df = sweep({**BASE, "k": 4}, algorithms="cd,sdcp", trials=1, grid={"k_inner": [1, 2]},
                   workers=0, progress=False)
    assert sorted(df.run_id.unique()) == ["t0-cd", "t0-sdcp-k_inner=1", "t0-sdcp-k_inner=2"]
    assert (df.status == "ok").all()
    assert df.attrs["notes"] and "applies to sdcp only" in df.attrs["notes"][0]
    s = summarize(df, "train_ll")
    assert len(s) == 3 and s.n.tolist() == [1, 1, 1]


def test_a_base_knob_at_its_declared_default_is_accepted():
    """A full settings dict (a settings.json) names every knob: those at their defaults ask
    for nothing and are accepted even when no rule of the sweep takes them."""
    from rbmviz.settings import DataSettings, ModelSettings, TrainSettings, to_dict
    full = to_dict(DataSettings(dataset="bars_and_stripes", D=2), ModelSettings(n_hidden=3),
                   TrainSettings(algorithm="tap", epochs=2))
    full = {k: v for k, v in full.items() if k not in ("algorithm", "seed", "init_seed")}
    specs = plan(full, algorithms="cd", trials=1)
    assert len(specs) == 1 and "damping" not in specs[0].labels


def test_valid_run_overrides_pass_the_plan():
    specs = plan(BASE, algorithms="cd,pcd", trials=1,
                 run_overrides={"metrics": ["train_ll", "weight_norm"], "exact_max_bits": 10,
                                "epochs": 1})
    assert all(s.run_overrides["epochs"] == 1 for s in specs)


def test_the_command_line_refuses_a_checkpoint_past_the_last_epoch(tmp_path, capsys):
    from rbmviz import cli
    out = tmp_path / "s.csv"
    rc = cli.main(["sweep", "--algorithms", "cd", "--trials", "1", "--epochs", "2",
                   "--D", "2", "--n-hidden", "3", "--out", str(out), "--checkpoints", "5",
                   "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "--checkpoints" in err and "past the last epoch" in err
    assert "Traceback" not in err and not out.exists()


def test_the_command_line_refuses_a_bad_environment_variable(tmp_path, capsys, monkeypatch):
    from rbmviz import cli
    monkeypatch.setenv("RBMVIZ_PARTIAL_EVERY", "soon")
    rc = cli.main(["sweep", "--algorithms", "cd", "--trials", "1", "--epochs", "2",
                   "--D", "2", "--n-hidden", "3", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "RBMVIZ_PARTIAL_EVERY='soon'" in err and "Traceback" not in err


# ---------------------------------------------------------------------------- the estimator

def test_live_knobs_and_batch_size_changed_between_partial_fits_are_applied():
    est = _est(algorithm="pcd", learning_rate=0.1, batch_size=6)
    est.partial_fit(X)
    est.set_params(learning_rate=0.01, batch_size=2, n_iter=7, verbose=0)
    est.partial_fit(X)
    assert est.run_.algorithm.learning_rate == 0.01
    assert est.run_.batch_size == 2
    assert est.get_params()["learning_rate"] == 0.01


def test_after_a_refused_partial_fit_the_model_is_unchanged_and_fit_starts_afresh():
    est = _est()
    est.partial_fit(X)
    W = est.rbm_.W.copy()
    est.set_params(n_components=5)
    with pytest.raises(ValueError, match="call fit"):
        est.partial_fit(X)
    assert np.array_equal(est.rbm_.W, W) and est.n_iter_ == 1
    est.set_params(n_components=3)                  # set back: partial_fit continues
    est.partial_fit(X)
    assert est.n_iter_ == 2
    est.set_params(n_components=5, algorithm="cd")
    est.fit(X)                                      # fit applies the new parameters
    assert est.components_.shape == (5, 4) and est.run_.algorithm.name == "cd"
    est.partial_fit(X)
    assert est.n_iter_ == 2
