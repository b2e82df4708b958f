"""One declaration per knob (issue 10 item 4): every knob of every algorithm is declared once in
``cls.Knobs`` and the constructors, the run settings, the CLI flags, the estimator's
parameters and the explorer's settings classes agree with that declaration.  No browser: the
widgets are built by ``pn.Param`` from the settings' param objects, which are checked here."""
import argparse
import math

import numpy as np
import param
import pytest
from pathlib import Path
from sklearn.utils._param_validation import InvalidParameterError

import rbmviz
from rbmviz import algorithms, bounds, cli, settings
from rbmviz.algorithms import knobs
from rbmviz.estimator import KNOBS as ESTIMATOR_KNOBS
from rbmviz.estimator import PARAMETERS, RBMEstimator

ALL = [(name, knob) for name in algorithms.names()
       for knob in knobs.knob_params(algorithms.get(name))]


def _decl(name, knob):
    return knobs.knob_params(algorithms.get(name))[knob]


def _same(a: param.Parameter, b: param.Parameter):
    assert type(a) is type(b)
    for slot in ("bounds", "inclusive_bounds", "softbounds", "objects", "doc", "label"):
        if hasattr(a, slot) or hasattr(b, slot):
            assert getattr(a, slot, None) == getattr(b, slot, None), slot


def _outside(p):
    """Values just outside the declared hard bounds (empty when unbounded)."""
    if knobs.knob_kind(p) not in ("int", "float"):
        return []
    lo, hi = p.bounds
    inc_lo, inc_hi = p.inclusive_bounds
    is_int = knobs.knob_kind(p) == "int"
    out = []
    if lo is not None:
        out.append(lo - 1 if is_int else (lo if not inc_lo else lo - abs(lo) * 0.5 - 0.5))
    if hi is not None and hi < bounds.SEED_MAX:
        out.append(hi + 1 if is_int else (hi if not inc_hi else hi * 1.5 + 0.5))
    return out


def _train_parser():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["train"]


# ---------------------------------------------------------------------------- declarations

def test_every_algorithm_declares_its_knobs_and_the_signature_is_derived():
    import inspect
    for name in algorithms.names():
        cls = algorithms.get(name)
        params = knobs.knob_params(cls)
        assert issubclass(cls.Knobs, param.Parameterized) and params
        sig = inspect.signature(cls)
        assert list(sig.parameters) == list(params)
        assert all(sig.parameters[n].default == p.default for n, p in params.items())
        assert set(cls.LIVE_KNOBS) <= set(params) and "seed" not in cls.LIVE_KNOBS
        for n, p in params.items():
            assert p.doc and p.doc.strip(), f"{name}.{n} has no doc"


def test_shared_knobs_are_declared_once_and_inherited():
    # one parameter object per declaration: inherited knobs are the base's object
    base = knobs.AlgorithmKnobs.param
    for name in algorithms.names():
        own = algorithms.get(name).Knobs.param
        for n in ("momentum", "weight_decay", "seed"):
            _same(own[n], base[n])
    for name in ("cd", "pcd", "cg", "ssd"):
        _same(algorithms.get(name).Knobs.param["k"], knobs.GibbsKnobs.param["k"])


def test_union_refuses_two_declarations_of_one_knob():
    class A(param.Parameterized):
        k = param.Integer(1, bounds=(1, 10))

    class B(param.Parameterized):
        k = param.Integer(1, bounds=(1, 20))

    with pytest.raises(TypeError, match="'k' is declared differently"):
        knobs.union_params([A, B])


@pytest.mark.parametrize("name,knob", ALL)
def test_constructor_validates_through_the_declaration(name, knob):
    cls = algorithms.get(name)
    p = _decl(name, knob)
    alg = cls()                                        # every default is valid
    if knob not in ("k", "d", "k_inner", "n_chains"):  # resolved / derived values
        assert alg.settings()[knob] == p.default
    for bad in _outside(p):
        with pytest.raises(ValueError, match=rf"^{knob} must be"):
            cls(**{knob: bad})
    if knobs.knob_kind(p) == "choice":
        with pytest.raises(ValueError, match=knob):
            cls(**{knob: "no-such-choice"})
    if knobs.knob_kind(p) in ("int", "float"):
        with pytest.raises(TypeError, match=rf"^{knob} must be"):
            cls(**{knob: "3"})


# ---------------------------------------------------------------------------- front ends

@pytest.mark.parametrize("name,knob", ALL)
def test_run_settings_cli_and_estimator_agree_with_the_declaration(name, knob):
    p = _decl(name, knob)
    if knob in settings.ALGORITHM_KNOBS_EXCLUDED:
        assert knob not in settings.knobs(settings.TrainSettings)
    else:
        # run settings: the same declaration (bounds, softbounds -> widget sliders, doc, label)
        s = settings.TrainSettings.param[knob]
        assert type(s) is type(p)
        assert getattr(s, "bounds", None) == getattr(p, "bounds", None)
        assert getattr(s, "inclusive_bounds", None) == getattr(p, "inclusive_bounds", None)
        assert (s.doc, s.label, getattr(s, "softbounds", None), getattr(s, "objects", None)) == \
               (p.doc, p.label, getattr(p, "softbounds", None), getattr(p, "objects", None))
        assert s.allow_None or not p.allow_None
        # ... and the algorithm's own default when that algorithm is chosen
        t = settings.TrainSettings(algorithm=name)
        if knob != "seed":
            assert getattr(t, knob) == p.default
        assert settings.algorithm_kwargs(t)[knob] == p.default
        for bad in _outside(p):
            with pytest.raises(ValueError, match=knob):
                setattr(t, knob, bad)
        # CLI: one option per knob, its range and doc in the help, parsed like the settings
        option = "--" + knob.replace("_", "-")
        action = next(a for a in _train_parser()._actions if option in a.option_strings)
        assert action.default is argparse.SUPPRESS
        flat = " ".join(action.help.split())
        assert " ".join(p.doc.split()).replace("%", "%%") in flat
        if knobs.knob_kind(p) in ("int", "float"):
            assert cli._core._range_text(s) in flat
            for bad in _outside(p):
                assert cli.main(["train", "--out", "unused", "--algorithm", name,
                                 option, str(bad), "--quiet"]) == 2
        elif knobs.knob_kind(p) == "choice":
            assert [str(o) for o in p.objects] == action.choices
    # estimator: a parameter with the declared default and the declared bounds
    if knob == "seed":
        assert "seed" not in PARAMETERS and "random_state" in PARAMETERS
        return
    e = RBMEstimator(n_components=2)
    assert e.get_params()[knob] == ESTIMATOR_KNOBS[knob].default
    for bad in _outside(p):
        with pytest.raises(InvalidParameterError, match=knob):
            RBMEstimator(**{knob: bad})._validate_params()
    RBMEstimator(**{knob: ESTIMATOR_KNOBS[knob].default})._validate_params()


def test_tap_tab_settings_are_the_tap_declarations():
    """The TAP landscape tab's settings (rbmviz.live.tap.TapSettings) share TAP's knobs:
    same type, bounds, softbounds and doc (their defaults may be the tab's own)."""
    from rbmviz.live.tap import TapSettings
    tap = knobs.knob_params(algorithms.get("tap"))
    shared = [n for n in settings.knobs(TapSettings) if n in tap and n != "seed"]
    assert {"learning_rate", "momentum", "momentum_form", "weight_decay", "n_solutions", "order",
            "damping"} <= set(shared)
    for n in shared:
        p, s = tap[n], TapSettings.param[n]
        assert type(s) is type(p), n
        assert getattr(s, "bounds", None) == getattr(p, "bounds", None), n
        assert getattr(s, "objects", None) == getattr(p, "objects", None), n
        assert s.doc == p.doc, n
        knobs.check_knob(p, s.default, n)               # the tab's default is valid for TAP


def test_other_tab_settings_stay_inside_the_declared_bounds():
    """Tabs may narrow a knob's range (e.g. the exact CD-bias tab's k), never widen it."""
    from rbmviz.live.bias import BiasSettings
    union = knobs.union_params([algorithms.get(n) for n in algorithms.names()])
    for n, s in settings.knobs(BiasSettings).items():
        if n not in union or n == "seed":
            continue
        p = union[n]
        assert type(s) is type(p), n
        (lo, hi), (plo, phi) = s.bounds, p.bounds
        assert plo is None or (lo is not None and lo >= plo), n
        assert phi is None or (hi is not None and hi <= phi), n


# ---------------------------------------------------------------------------- live knobs

@pytest.mark.parametrize("name", algorithms.names())
def test_live_knobs_change_between_updates_and_the_others_do_not(name):
    X = rbmviz.datasets.bars_and_stripes(2)
    rbm = rbmviz.RBM(4, 3, seed=0)
    run = rbmviz.Run(rbm, X, name, epochs=2, batch_size=2, learning_rate=0.05)
    next(run)
    alg = run.algorithm
    assert settings.live_knobs(name) == alg.LIVE_KNOBS
    alg.set_settings(learning_rate=0.02)
    assert alg.learning_rate == 0.02
    if "k" in alg.LIVE_KNOBS:
        alg.set_settings(k=2)
        assert alg.k == 2 and alg.gibbs_steps_per_update == 2
    with pytest.raises(ValueError, match="seed"):
        alg.set_settings(seed=alg.seed + 1)
    with pytest.raises(TypeError, match="does not take"):
        alg.set_settings(no_such_knob=1)
    fixed = [n for n in knobs.knob_params(alg) if n not in alg.LIVE_KNOBS and n != "seed"]
    for n in fixed:   # e.g. PCD's chain count: the chains' shape is fixed
        p = knobs.knob_params(alg)[n]
        other = (p.default or 0) + 1 if knobs.knob_kind(p) == "int" else None
        if other is not None:
            with pytest.raises(ValueError, match="cannot change"):
                alg.set_settings(**{n: other})
    for rec in run:
        assert math.isfinite(rec["weight_norm"])


def test_a_live_change_is_validated_like_the_constructor():
    alg = algorithms.create("cd", k=1)
    with pytest.raises(ValueError, match=rf"k must be <= {bounds.K_MAX}"):
        alg.set_settings(k=bounds.K_MAX + 1)
    assert alg.k == 1


# ---------------------------------------------------------------------------- hang bounds

def test_k_is_bounded_in_every_front_end(tmp_path, capsys):
    X = rbmviz.datasets.bars_and_stripes(2)
    with pytest.raises(ValueError, match=rf"k must be <= {bounds.K_MAX}"):
        rbmviz.train(rbmviz.RBM(4, 2), X, "cd", epochs=1, k=10**9)
    with pytest.raises(ValueError, match=r"k must be <= 1000"):
        algorithms.create("sdcp", d=100, k_inner=20)
    with pytest.raises(ValueError, match="k"):
        settings.TrainSettings(k=bounds.K_MAX + 1)
    with pytest.raises(InvalidParameterError, match="'k'"):
        RBMEstimator(k=bounds.K_MAX + 1).fit(X)
    assert cli.main(["train", "--k", str(bounds.K_MAX + 1), "--out", str(tmp_path / "o")]) == 2
    assert "--k" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_epochs_and_model_size_are_bounded(capsys, tmp_path):
    with pytest.raises(ValueError, match="epochs"):
        settings.TrainSettings(epochs=bounds.EPOCHS_MAX + 1)
    with pytest.raises(ValueError, match="n_hidden"):
        settings.ModelSettings(n_hidden=bounds.UNITS_MAX + 1)
    with pytest.raises(InvalidParameterError, match="n_components"):
        RBMEstimator(n_components=bounds.UNITS_MAX + 1)._validate_params()
    with pytest.raises(InvalidParameterError, match="n_iter"):
        RBMEstimator(n_iter=bounds.EPOCHS_MAX + 1)._validate_params()
    with pytest.raises(ValueError, match="n_hidden=20000 is too large"):
        bounds.check_model_size(784, 20000)
    with pytest.raises(ValueError, match="weights is too large"):
        bounds.check_model_size(10000, 10000)
    assert cli.main(["train", "--epochs", str(bounds.EPOCHS_MAX + 1), "--out", str(tmp_path)]) == 2
    assert "--epochs" in capsys.readouterr().err


def test_derive_knobs_keeps_the_declaration_and_checks_front_end_defaults():
    tap = algorithms.get("tap")
    K = knobs.derive_knobs("K", [tap], include=["learning_rate", "damping"],
                           defaults={"learning_rate": 0.1}, labels={"damping": "δ"})
    assert K().learning_rate == 0.1 and K.param.damping.label == "δ"
    assert K.param.damping.bounds == tap.Knobs.param.damping.bounds
    assert tap.Knobs.param.learning_rate.default == 0.005      # the declaration is untouched
    with pytest.raises(ValueError, match="damping must be <= 1"):
        knobs.derive_knobs("K", [tap], defaults={"damping": 2.0})
    with pytest.raises(ValueError, match="include"):
        knobs.derive_knobs("K", [tap], include=["nope"])
    with pytest.raises(ValueError):
        K(damping=0.0)                                          # (0, 1]: param checks it too


def test_switching_algorithm_moves_defaults_but_keeps_explicit_values():
    t = settings.TrainSettings()
    t.algorithm = "tap"
    assert t.learning_rate == algorithms.get("tap").Knobs.param.learning_rate.default
    t.learning_rate = 0.3
    t.algorithm = "cd"
    assert t.learning_rate == 0.3                               # set by hand: kept
    t = settings.TrainSettings(algorithm="sdcp")
    alg = algorithms.create("sdcp", **settings.algorithm_kwargs(t))
    assert (alg.d, alg.k_inner) == (3, 4)                       # S-DCP's own default budget
    assert np.isclose(settings.TrainSettings(algorithm="tap", learning_rate=0.2).learning_rate, 0.2)


# ---------------------------------------------------------------------------- widgets

@pytest.mark.parametrize("name,knob", [(n, k) for n, k in ALL if k != "seed"
                                       and k not in settings.ALGORITHM_KNOBS_EXCLUDED])
def test_explorer_widgets_are_built_from_the_declaration(name, knob):
    """The explorer's widget of a knob (rbmviz.app.widgets.widget_for over TrainSettings, no
    browser): label and tooltip from the declaration, slider range = its soft bounds (else
    hard bounds), choices = its objects, and a value the widget sets reaches the settings
    checked against the declared bounds."""
    pytest.importorskip("panel")
    from rbmviz.app.widgets import slider_range, widget_for
    p = _decl(name, knob)
    t = settings.TrainSettings(algorithm=name)
    w = widget_for(t, knob)
    assert w.name == (p.label or knob)
    if getattr(w, "description", None) is not None:
        assert w.description == p.doc.strip()
    kind = knobs.knob_kind(p)
    if kind == "choice":
        assert list(w.options) == list(p.objects)
    elif kind in ("int", "float") and hasattr(w, "start") and "Slider" in type(w).__name__:
        assert (w.start, w.end) == pytest.approx(slider_range(p))
        lo, hi = p.bounds
        assert lo is None or w.start >= lo
        assert hi is None or w.end <= hi
    if kind in ("int", "float"):
        for bad in _outside(p):
            with pytest.raises(ValueError):
                w.value = bad                  # the widget is bound to the checked knob


# A knob whose declared default differs between rules (learning_rate: 0.1 vs TAP's γ = 0.005;
# k: 1 for CD-k vs d·K′ for S-DCP) must run at *the chosen rule's* default from every front
# door when it is not given: Run, train and the estimator.
RULE_DEPENDENT_CASES = sorted(
    (name, knob) for name in algorithms.names()
    for knob, p in knobs.knob_params(algorithms.get(name)).items()
    if knob != "seed" and len({repr(knobs.knob_params(algorithms.get(o))[knob].default)
                               for o in algorithms.names()
                               if knob in knobs.knob_params(algorithms.get(o))}) > 1)


def test_rule_dependent_knobs_are_found():
    found = {knob for _, knob in RULE_DEPENDENT_CASES}
    assert {"learning_rate", "k"} <= found
    from rbmviz.estimator import RULE_DEPENDENT
    assert found == set(RULE_DEPENDENT)


@pytest.mark.parametrize("name,knob", RULE_DEPENDENT_CASES)
def test_front_doors_run_the_rules_own_default(name, knob):
    X = rbmviz.datasets.bars_and_stripes(2)
    declared = algorithms.create(name).settings()[knob]   # the rule built from its Knobs alone
    run = rbmviz.runs.Run(rbmviz.RBM(4, 3, seed=0), X, name, epochs=1, metrics=[])
    assert run.algorithm.settings()[knob] == declared
    df = rbmviz.train(rbmviz.RBM(4, 3, seed=0), X, name, epochs=1, metrics=[])
    assert len(df) == 2
    est = RBMEstimator(n_components=3, algorithm=name, n_iter=1, random_state=0).fit(X)
    assert est.run_.algorithm.settings()[knob] == declared
    assert est._algorithm_knobs[knob] == declared


def test_tap_trains_at_gamma_0005_with_no_other_argument():
    X = rbmviz.datasets.bars_and_stripes(2)
    assert algorithms.get("tap").Knobs.param.learning_rate.default == 0.005
    assert rbmviz.runs.Run(rbmviz.RBM(4, 3, seed=0), X, "tap", epochs=1).algorithm.learning_rate == 0.005
    est = RBMEstimator(n_components=3, algorithm="tap", n_iter=1, random_state=0).fit(X)
    assert est.run_.algorithm.learning_rate == 0.005
    # and a given value still wins
    assert rbmviz.runs.Run(rbmviz.RBM(4, 3, seed=0), X, "tap", epochs=1,
                           learning_rate=0.02).algorithm.learning_rate == 0.02


# ---------------------------------------------------------------------------- TAP solver options
# rbmviz.tap.options.TAPSolverOptions declares the TAP solver's options once; every signature
# that takes one reads its default there and checks values against its bounds.

import dataclasses  # noqa: E402
import inspect  # noqa: E402

from rbmviz import dbm as _dbm  # noqa: E402
from rbmviz import tap  # noqa: E402
from rbmviz.tap import denoising, presets as tap_presets  # noqa: E402
from rbmviz.tap.options import DeepLikelihoodOptions, TAPSolverOptions, check_option  # noqa: E402

_MISSING = object()


def _option(name, options=TAPSolverOptions):
    return options.param[name]


def _front_end_defaults(front_end):
    """``{argument: default}`` of a function, a class's constructor or a dataclass."""
    if dataclasses.is_dataclass(front_end):
        return {f.name: f.default for f in dataclasses.fields(front_end)}
    return {n: p.default for n, p in inspect.signature(front_end).parameters.items()}


def _default_disagreements(front_end, declared):
    """``[(argument, front end's default, declared default)]`` where they differ (or the
    front end lacks the argument); ``declared`` maps argument → ``param.Parameter``."""
    defaults = _front_end_defaults(front_end)
    return [(arg, defaults.get(arg, _MISSING), p.default) for arg, p in declared.items()
            if defaults.get(arg, _MISSING) is _MISSING or defaults[arg] != p.default
            or type(defaults[arg]) is not type(p.default)]


def _inside(p):
    """Values a front end must accept: the default and the bounds that are inclusive."""
    good = [p.default]
    if knobs.knob_kind(p) in ("int", "float"):
        (lo, hi), (inc_lo, inc_hi) = p.bounds, p.inclusive_bounds
        good += [b for b, inc in ((lo, inc_lo), (hi, inc_hi))
                 if b is not None and inc and b < bounds.SEED_MAX]
    return good


def _bound_problems(call, arg, p, *, inside=True):
    """What a front end gets wrong about the declaration ``p`` of its argument ``arg``: a value
    just outside the declared bounds that is not refused with a ValueError naming ``arg``, or
    (with ``inside``) a value inside them (the default, an inclusive bound) that is refused."""
    problems = []
    for bad in _outside(p):
        try:
            call(**{arg: bad})
        except ValueError as e:
            if arg not in str(e):
                problems.append(f"{arg}={bad!r}: the error does not name {arg}: {e}")
        else:
            problems.append(f"{arg}={bad!r} is accepted, outside the declared {p.bounds}")
    for good in (_inside(p) if inside else []):
        try:
            call(**{arg: good})
        except (TypeError, ValueError) as e:
            problems.append(f"{arg}={good!r} is refused, inside the declared {p.bounds}: {e}")
    return problems


@pytest.fixture(scope="module")
def small():
    """A 4×3 binary RBM, its data, a solution to count, a 4-3-2 DBM."""
    X = rbmviz.datasets.bars_and_stripes(2)
    rbm = rbmviz.RBM(4, 3, seed=0)
    sol = tap.solve(rbm, X, tol=tap.COUNT_TOL)
    return {"X": X, "rbm": rbm, "sol": sol, "dbm": _dbm.DBM([4, 3, 2], seed=0)}


def _solver_front_ends(s):
    """Every front end taking solver options: ``(id, front end, call(**kw), {argument:
    declaration})``."""
    O, DL = TAPSolverOptions, DeepLikelihoodOptions
    X, rbm, d = s["X"], s["rbm"], s["dbm"]
    five = lambda *names, o=O: {n: _option(n, o) for n in names}  # noqa: E731
    return [
        ("tap.solve", tap.solve, lambda **kw: tap.solve(rbm, X, **kw),
         five("order", "damping", "tol", "max_iter", "products")),
        ("tap.solve_counted", tap.solve_counted, lambda **kw: tap.solve_counted(rbm, X, **kw),
         {**five("order", "damping", "max_iter", "first_max_iter", "first_damping"),
          "tol": _option("count_tol")}),
        ("tap.log_likelihood", tap.log_likelihood, lambda **kw: tap.log_likelihood(rbm, X, **kw),
         five("order", "damping", "max_iter", "unique_tol")),
        ("tap.unique_solutions", tap.unique_solutions,
         lambda **kw: tap.unique_solutions(s["sol"], **kw), {"tol": _option("unique_tol")}),
        ("tap.damping_ladder", tap.damping_ladder, lambda **kw: tap.damping_ladder(**kw),
         {"damping": _option("damping"), "floor": _option("ladder_floor")}),
        ("tap.free_energy_binary", tap.free_energy_binary,
         lambda **kw: tap.free_energy_binary(rbm, s["sol"].av, s["sol"].ah, **kw),
         five("order")),
        ("denoising.tap_means", denoising.tap_means,
         lambda **kw: denoising.tap_means(rbm, X, 0.1, X.mean(axis=0), **kw),
         five("order", "damping", "tol", "max_iter")),
        ("denoising.denoise", denoising.denoise,
         lambda **kw: denoising.denoise(rbm, X, 0.1, train=X, **kw),
         five("order", "damping", "tol", "max_iter")),
        ("denoising.denoising_curve", denoising.denoising_curve,
         lambda **kw: denoising.denoising_curve(rbm, X, [0.1], train=X, methods=("tap",), **kw),
         five("order", "damping", "tol", "max_iter")),
        ("dbm.tap_solve", _dbm.tap_solve, lambda **kw: _dbm.tap_solve(d, X, **kw),
         five("damping", "tol", "max_iter")),
        ("dbm.log_likelihood", _dbm.log_likelihood, lambda **kw: _dbm.log_likelihood(d, X, **kw),
         five("damping", "tol", "max_iter", o=DL)),
        # the trainers take DBMKnobs: the TAP rule's knobs (copies of the options, max_iter
        # narrowed) with App. E's defaults
        ("dbm.DBMTrainer", _dbm.DBMTrainer, lambda **kw: _dbm.DBMTrainer(**{"batch_size": 4, **kw}),
         {n: _dbm.DBMKnobs.param[n] for n in knobs.knob_params(_dbm.DBMKnobs) if n != "epochs"}),
        ("dbm.JointTAP", _dbm.JointTAP, lambda **kw: _dbm.JointTAP(**kw),
         {n: _dbm.DBMKnobs.param[n] for n in knobs.knob_params(_dbm.JointTAP)}),
        ("dbm.pretrain", _dbm.pretrain,
         lambda **kw: _dbm.pretrain(_dbm.DBM([4, 3, 2], seed=0), np.tile(X, (20, 1)),
                                    **{"epochs": 0, "batch_size": 4, **kw}),
         {n: _dbm.DBMKnobs.param[n] for n in knobs.knob_params(_dbm.DBMKnobs)
          if n != "n_solutions"}),
        ("TAPPreset", tap_presets.TAPPreset, None, five("order", "damping", "tol", "max_iter")),
        ("TAPSolution", tap.TAPSolution, None, five("order", "damping", "tol")),
    ]


def test_every_solver_front_end_takes_the_declared_defaults(small):
    for name, front_end, _, declared in _solver_front_ends(small):
        assert _default_disagreements(front_end, declared) == [], name
    # the trainers' options are the TAP rule's, whose defaults are the solver options'
    for n in ("damping", "tol", "max_iter"):
        assert algorithms.get("tap").Knobs.param[n].default == TAPSolverOptions.param[n].default
        assert _dbm.DBMKnobs.param[n].default == TAPSolverOptions.param[n].default
    # the module constants are read from the declaration
    assert tap.COUNT_TOL == TAPSolverOptions.count_tol
    assert tap.inference.FIRST_MAX_ITER == TAPSolverOptions.first_max_iter
    assert tap.LADDER_RUNGS == tuple(TAPSolverOptions.ladder_rungs)
    assert tap.damping_ladder() == (TAPSolverOptions.damping, *TAPSolverOptions.ladder_rungs)
    # log_likelihood's tol=None: the counting tolerance for unique solutions, else tol
    X, rbm = small["X"], small["rbm"]
    assert tap.log_likelihood(rbm, X, details=True).solution.tol == TAPSolverOptions.count_tol
    assert tap.log_likelihood(rbm, X, unique=False, details=True).solution.tol == TAPSolverOptions.tol


@pytest.mark.parametrize("front_end", [
    "tap.solve", "tap.solve_counted", "tap.log_likelihood", "tap.unique_solutions",
    "tap.damping_ladder", "tap.free_energy_binary", "denoising.tap_means", "denoising.denoise",
    "dbm.tap_solve", "dbm.log_likelihood", "dbm.DBMTrainer", "dbm.JointTAP", "dbm.pretrain"])
def test_every_solver_front_end_checks_the_declared_bounds(small, front_end):
    (_, _, call, declared), = [f for f in _solver_front_ends(small) if f[0] == front_end]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # non-converged runs at max_iter=1
        for arg, p in declared.items():
            # (pretrain at the largest epoch count would train for days: outside values only)
            inside = not (front_end == "dbm.pretrain" and arg == "epochs")
            assert _bound_problems(call, arg, p, inside=inside) == [], (front_end, arg)


def test_the_tap_rules_solver_knobs_are_copies_of_the_options():
    tap_knobs = knobs.knob_params(algorithms.get("tap"))
    for n in ("order", "damping", "tol", "max_iter", "unique_tol", "products"):
        p, o = tap_knobs[n], TAPSolverOptions.param[n]
        assert type(p) is type(o) and p is not o, n
        assert p.default == o.default and p.label == o.label, n
        assert getattr(p, "softbounds", None) == getattr(o, "softbounds", None), n
        assert getattr(p, "objects", None) == getattr(o, "objects", None), n
        assert p.doc.startswith("tap only: " + o.doc), n          # the help text written once
        if n == "max_iter":                                      # narrowed for training ...
            assert p.bounds == (o.bounds[0], bounds.TAP_ITER_MAX)
        else:
            assert getattr(p, "bounds", None) == getattr(o, "bounds", None), n
    assert tap_knobs["fixed_iter"].bounds[1] == bounds.TAP_ITER_MAX


def test_the_solver_checks_read_the_declaration(small, monkeypatch):
    """A narrower declared bound is enforced at once by every check (they read it)."""
    monkeypatch.setattr(TAPSolverOptions.param.damping, "bounds", (0.0, 0.9))
    with pytest.raises(ValueError, match="damping must be <= 0.9"):
        tap.solve(small["rbm"], small["X"], damping=0.95)
    with pytest.raises(ValueError, match="damping must be <= 0.9"):
        _dbm.tap_solve(small["dbm"], small["X"], damping=0.95)
    assert check_option("damping", 0.5) == 0.5


def test_a_solver_default_or_bound_written_twice_is_caught(small, monkeypatch):
    """The checks above fail on a wrong copy: a default differing from its declaration, in the
    front end or in the declaration, and a bound checked by hand."""
    from rbmviz._validation import check_float

    def wrong_solve(rbm, X, *, damping=0.5, tol=1e-9, max_iter=1000):   # a copy of tol
        check_float(damping, "damping", low=0.0, high=2.0, low_open=True)  # and of a bound
        return tap.solve(rbm, X, damping=min(damping, 1.0), tol=tol, max_iter=max_iter)

    declared = {n: _option(n) for n in ("damping", "tol", "max_iter")}
    assert _default_disagreements(wrong_solve, declared) == [("tol", 1e-9, 1e-8)]
    problems = _bound_problems(lambda **kw: wrong_solve(small["rbm"], small["X"], **kw),
                               "damping", declared["damping"])
    assert problems == ["damping=2.0 is accepted, outside the declared (0.0, 1.0)"]
    # a declaration changed while a front end keeps the old value
    monkeypatch.setattr(TAPSolverOptions.param.max_iter, "default", 999)
    failing = [name for name, f, _, d in _solver_front_ends(small)
               if "max_iter" in d and d["max_iter"].owner is TAPSolverOptions
               and _default_disagreements(f, {"max_iter": d["max_iter"]})]
    assert set(failing) == {"tap.solve", "tap.solve_counted", "tap.log_likelihood",
                            "denoising.tap_means", "denoising.denoise",
                            "denoising.denoising_curve", "dbm.tap_solve", "TAPPreset"}


# ---------------------------------------------------------------------------- other copies
# A front end that takes a declared knob (a tab's settings, the data knobs of the run
# settings) holds a copy of the declaration (rbmviz.bounds.narrowed): same type and help,
# bounds inside the declared ones (a tab may narrow, never widen), its default inside them.

from rbmviz import presets  # noqa: E402
from rbmviz.bounds import narrowed  # noqa: E402


def _copy_problems(copy_p, decl):
    """What a front end's copy ``copy_p`` of the declaration ``decl`` gets wrong."""
    problems = []
    if type(copy_p) is not type(decl):
        problems.append(f"type {type(copy_p).__name__}, declared {type(decl).__name__}")
    if knobs.knob_kind(decl) in ("int", "float"):
        (lo, hi), (dlo, dhi) = copy_p.bounds, decl.bounds
        if dlo is not None and (lo is None or lo < dlo):
            problems.append(f"low bound {lo} below the declared {dlo}")
        if dhi is not None and (hi is None or hi > dhi):
            problems.append(f"high bound {hi} above the declared {dhi}")
        if copy_p.default is not None and not ((lo is None or copy_p.default >= lo)
                                               and (hi is None or copy_p.default <= hi)):
            problems.append(f"default {copy_p.default} outside its bounds {copy_p.bounds}")
    elif getattr(copy_p, "objects", None) != getattr(decl, "objects", None):
        problems.append("other choices")
    if not (copy_p.doc or "").startswith(decl.doc):
        problems.append("help text is not the declared one")
    return problems


def _tab_copies():
    from rbmviz.live.bias import BiasSettings
    from rbmviz.live.tap import TapSettings
    M, T, G = settings.ModelSettings.param, settings.TrainSettings.param, knobs.GibbsKnobs.param
    tap_knob = algorithms.get("tap").Knobs.param
    out = [(BiasSettings, "n_hidden", M.n_hidden), (BiasSettings, "k", G.k),
           (BiasSettings, "learning_rate", G.learning_rate),
           (BiasSettings, "weight_decay", G.weight_decay),
           (BiasSettings, "init_scale", M.init_scale), (BiasSettings, "seed", G.seed),
           (TapSettings, "n_hidden", M.n_hidden), (TapSettings, "batch_size", T.batch_size),
           (TapSettings, "seed", G.seed)]
    out += [(TapSettings, n, tap_knob[n]) for n in ("learning_rate", "momentum", "weight_decay",
                                                   "n_solutions", "order", "damping",
                                                   "momentum_form", "products", "fixed_iter")]
    out += [(settings.DataSettings, n, presets.DataKnobs.param[n]) for n in ("D", "N", "B", "d")]
    return out


@pytest.mark.parametrize("i", range(len(_tab_copies())))
def test_tab_settings_are_copies_of_the_declarations(i):
    cls, name, decl = _tab_copies()[i]
    assert _copy_problems(cls.param[name], decl) == [], (cls.__name__, name)


def test_a_tab_knob_declared_anew_is_caught():
    class Wrong(param.Parameterized):       # a tab re-declaring k with its own bound and help
        k = param.Integer(1, bounds=(1, 2 * bounds.K_MAX), doc="k of CD-k (live).")
        n_hidden = narrowed(settings.ModelSettings.param.n_hidden, default=6, low=2, high=8)

    assert _copy_problems(Wrong.param.k, knobs.GibbsKnobs.param.k) == [
        f"high bound {2 * bounds.K_MAX} above the declared {bounds.K_MAX}",
        "help text is not the declared one"]
    assert _copy_problems(Wrong.param.n_hidden, settings.ModelSettings.param.n_hidden) == []
    with pytest.raises(ValueError, match="outside the declared bounds"):
        narrowed(knobs.GibbsKnobs.param.k, high=2 * bounds.K_MAX)      # narrowed refuses widening
    with pytest.raises(ValueError, match="default 9 is outside"):
        narrowed(settings.ModelSettings.param.n_hidden, default=9, high=8)


def test_the_data_knobs_are_declared_once():
    for name, size_knobs in presets.DATA_KNOBS.items():
        assert settings.dataset_knobs(name) == list(size_knobs)
        assert presets.for_dataset(name)["data"] == {k: presets.DataKnobs.param[k].default
                                                     for k in size_knobs}
        for k in size_knobs:
            _same(settings.DataSettings.param[k], presets.DataKnobs.param[k])
            assert getattr(settings.DataSettings(), k) == presets.DataKnobs.param[k].default
            assert _bound_problems(lambda **kw: presets.for_dataset(name, **kw), k,
                                   presets.DataKnobs.param[k]) == [], (name, k)
    assert not any(n in presets.DATA_KNOBS for n in ("digits", "mnist", "cbcl"))


def test_the_seed_bound_is_declared_once():
    from rbmviz._validation import check_seed
    assert check_seed(bounds.SEED_MAX) == bounds.SEED_MAX
    with pytest.raises(ValueError, match="seed must be <="):
        check_seed(bounds.SEED_MAX + 1)
    declared = knobs.AlgorithmKnobs.param.seed.bounds
    assert declared == (0, bounds.SEED_MAX)
    for p in (settings.DataSettings.param.data_seed, settings.ModelSettings.param.init_seed):
        assert p.bounds == declared


def test_exact_max_bits_has_one_default():
    from rbmviz.evaluate.metrics import choose_metrics
    assert bounds.EXACT_BITS_DEFAULT <= bounds.EXACT_BITS_MAX
    for front_end in (rbmviz.runs.Run, choose_metrics, presets.default_dtype):
        assert _front_end_defaults(front_end)["exact_max_bits"] == bounds.EXACT_BITS_DEFAULT, \
            front_end


def test_max_weight_has_one_default_and_one_bound():
    from rbmviz.bias import train_expected_cd
    from rbmviz.live.tap import MAX_WEIGHT
    p = settings.TrainSettings.param.max_weight
    for front_end in (rbmviz.runs.Run, train_expected_cd):
        assert _front_end_defaults(front_end)["max_weight"] == p.default, front_end
    assert MAX_WEIGHT == p.default == bounds.MAX_WEIGHT_DEFAULT
    X = rbmviz.datasets.bars_and_stripes(2)
    run = lambda **kw: rbmviz.runs.Run(rbmviz.RBM(4, 3, seed=0), X, "cd", epochs=0, **kw)  # noqa: E731
    assert _bound_problems(run, "max_weight", p) == []


def _literal_defaults(pattern):
    import re
    root = Path(rbmviz.__file__).resolve().parent
    rx = re.compile(pattern)
    return [f"{f.relative_to(root.parent)}:{i}" for f in sorted(root.rglob("*.py"))
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
            if rx.search(line)]


def test_max_weight_and_exact_max_bits_defaults_are_not_written_as_numbers():
    """Every signature reads bounds.MAX_WEIGHT_DEFAULT / EXACT_BITS_DEFAULT; a number
    written as a default is a second declaration that can drift."""
    pattern = r"(max_weight|exact_max_bits)\s*(:\s*[\w.| ]+)?=\s*[0-9]"
    import re
    assert re.search(pattern, "max_weight: float = 1e3, pl_rows")       # the scan can fail
    assert re.search(pattern, "exact_max_bits: int = 20,")
    assert _literal_defaults(pattern) == []


def test_the_race_tabs_budget_is_the_rules():
    pytest.importorskip("panel")
    from rbmviz.algorithms.dcp import DEFAULT_D
    from rbmviz.app.race_tab import BudgetKnobs
    assert BudgetKnobs().d == DEFAULT_D
    assert _copy_problems(BudgetKnobs.param.d, algorithms.get("sdcp").Knobs.param.d) == []


def test_the_estimators_init_scale_is_the_model_settings():
    p = settings.ModelSettings.param.init_scale
    assert RBMEstimator().get_params()["init_scale"] == p.default
    for bad in _outside(p):
        with pytest.raises(InvalidParameterError, match="init_scale"):
            RBMEstimator(init_scale=bad)._validate_params()


def test_the_deep_tap_machines_knobs_are_the_tap_rules():
    tap_knobs = knobs.knob_params(algorithms.get("tap"))
    for n, p in knobs.knob_params(_dbm.DBMKnobs).items():
        if n in tap_knobs:
            assert _copy_problems(p, tap_knobs[n]) == [], n
            assert p.bounds == tap_knobs[n].bounds, n
    assert _dbm.DBMKnobs.learning_rate == 0.001 and _dbm.DBMKnobs.epochs == 50


def test_the_deep_tap_machines_front_doors_take_the_declared_knobs():
    """The joint rule the run loop drives (JointTAP) declares the knobs DBMKnobs holds besides
    the run's (batch size, pretraining epochs); DBMTrainer's and pretrain's signatures carry
    their defaults, and every front door refuses momentum = 1 as every rule does."""
    import inspect
    joint = knobs.knob_params(_dbm.JointTAP)
    deep = knobs.knob_params(_dbm.DBMKnobs)
    assert list(joint) == [n for n in deep if n not in ("batch_size", "epochs")]
    for n, p in joint.items():
        assert _copy_problems(p, deep[n]) == [], n
        assert p.default == deep[n].default and p.bounds == deep[n].bounds, n
    for front_door, skip in ((_dbm.DBMTrainer, "epochs"), (_dbm.pretrain, "n_solutions"),
                             (_dbm.JointTAP, "")):
        sig = inspect.signature(front_door)
        for n, p in deep.items():
            if n in sig.parameters:
                assert sig.parameters[n].default == p.default, (front_door, n)
            else:
                assert n in (skip, "batch_size", "epochs"), (front_door, n)
    X = np.tile(rbmviz.datasets.bars_and_stripes(2), (5, 1))
    d = _dbm.DBM([4, 3, 2], seed=0)
    for call in (lambda: _dbm.DBMTrainer(momentum=1.0),
                 lambda: _dbm.pretrain(d, X, epochs=0, batch_size=4, momentum=1.0),
                 lambda: _dbm.JointTAP(momentum=1.0),
                 lambda: _dbm.JointTAP().set_settings(momentum=1.0)):
        with pytest.raises(ValueError, match="momentum must be < 1"):
            call()


def test_ais_chains_and_temperatures_have_one_default():
    """The run loop's AIS options and the AIS functions read evaluate.ais's declaration."""
    import inspect
    from rbmviz.evaluate import ais
    for f in (ais.ais_log_partition, ais.ais_log_likelihood):
        sig = inspect.signature(f).parameters
        assert sig["n_chains"].default == ais.AIS_CHAINS_DEFAULT, f
        assert sig["n_betas"].default == ais.AIS_BETAS_DEFAULT, f
    assert inspect.signature(ais.ais_betas).parameters["n_betas"].default == ais.AIS_BETAS_DEFAULT
    X = rbmviz.datasets.bars_and_stripes(2)
    run = rbmviz.runs.Run(rbmviz.RBM(4, 3, seed=0), X, "cd", epochs=0)
    assert run.metric_options["n_chains"] == ais.AIS_CHAINS_DEFAULT
    assert run.metric_options["n_betas"] == ais.AIS_BETAS_DEFAULT
    pattern = r"(n_chains|n_betas)\s*:\s*[\w.| ]+=\s*[0-9]"       # in signatures
    import re
    assert re.search(pattern, "n_chains: int = 100,")                     # the scan can fail
    assert [h for h in _literal_defaults(pattern) if "reproduce" not in h] == []
