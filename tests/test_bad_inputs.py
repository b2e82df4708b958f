"""A catalogue of bad inputs across rbmviz (issue 11): the API (RBM, train/Run, evaluate,
bias, tap, datasets), the command line, load/save and the scikit-learn estimator.

Every case asserts the exception type, that the message names the argument (a regex), and
that the error was raised by rbmviz's own checks — the innermost frame of the traceback is in
the ``rbmviz`` package (scikit-learn's parameter validation for the estimator, which is its
contract) — never a raw traceback from numpy, Numba, pandas or the standard library.  The
command-line cases assert exit status 2 (bad option), the option's name in the message and
no Python traceback.

The section "unit types" is the "silently wrong" case of issue 11: Gibbs-sampling rules
refuse models whose units are not Bernoulli instead of training them as if they were.
"""
import os
import traceback

import numpy as np
import pytest

import rbmviz
from rbmviz import bias, cli, datasets, tap
from rbmviz import evaluate as ev
from rbmviz.runs import Run

PKG = os.path.dirname(rbmviz.__file__)
SKLEARN = os.path.dirname(__import__("sklearn").__file__)
X = datasets.bars_and_stripes(2)                   # (6, 4) binary
GIBBS_RULES = ("cd", "pcd", "sdcp", "csdcp", "cg", "ssd")


def _rbm():
    return rbmviz.RBM(4, 3, seed=0)


def RBMEstimator(**kw):     # imported when a case runs (one broken import fails only those)
    from rbmviz.estimator import RBMEstimator as cls
    return cls(**kw)


def _tg(hidden="bernoulli", visible="truncated_gaussian"):
    return rbmviz.RBM(4, 3, visible=visible, hidden=hidden, seed=0)


def _train(**kw):
    kw = {"epochs": 1, "metrics": ["weight_norm"], **kw}
    data = kw.pop("data", X)
    return rbmviz.train(kw.pop("rbm", _rbm()), data, kw.pop("algorithm", "cd"), **kw)


def _saved(tmp_path, **replace):
    """Path of a saved model with some arrays replaced."""
    path = _rbm().save(tmp_path / "good.npz", overwrite=True)
    with np.load(path) as z:
        arrays = dict(z)
    arrays.update(replace)
    np.savez(tmp_path / "bad.npz", **arrays)
    return tmp_path / "bad.npz"


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# (id, call(tmp_path), exception type, regex that names the argument)
API_CASES = [
    # ------------------------------------------------------------------ RBM
    ("rbm-n_visible-zero", lambda t: rbmviz.RBM(0, 3), ValueError, "n_visible must be >= 1"),
    ("rbm-hidden_probabilities-above-1", lambda t: _rbm().hidden_probabilities(np.full((2, 4), 1.5)),
     ValueError, r"V must hold probabilities or states in \[0, 1\]; found 1.5"),
    ("rbm-hidden_probabilities-negative", lambda t: _rbm().hidden_probabilities(-np.ones((1, 4))),
     ValueError, r"V must hold probabilities or states in \[0, 1\]"),
    ("rbm-visible_probabilities-above-1", lambda t: _rbm().visible_probabilities(np.full((2, 3), 2.0)),
     ValueError, r"H must hold probabilities or states in \[0, 1\]; found 2.0"),
    ("rbm-n_hidden-negative", lambda t: rbmviz.RBM(3, -1), ValueError, "n_hidden must be >= 1"),
    ("rbm-n_visible-float", lambda t: rbmviz.RBM(2.5, 3), TypeError, "n_visible must be an integer"),
    ("rbm-n_visible-str", lambda t: rbmviz.RBM("4", 3), TypeError, "n_visible must be an integer"),
    ("rbm-n_visible-huge", lambda t: rbmviz.RBM(20000, 3), ValueError, "n_visible=20000 is too large"),
    ("rbm-weights-huge", lambda t: rbmviz.RBM(10000, 10000), ValueError, "n_visible · n_hidden"),
    ("rbm-visible-unknown", lambda t: rbmviz.RBM(3, 3, visible="gaussian"), ValueError, "visible unit type"),
    ("rbm-hidden-type", lambda t: rbmviz.RBM(3, 3, hidden=3), TypeError, "hidden unit type"),
    ("rbm-dtype", lambda t: rbmviz.RBM(3, 3, dtype="float16"), ValueError, "dtype 'float16'"),
    ("rbm-init", lambda t: rbmviz.RBM(3, 3, init="xavier"), ValueError, "init 'xavier'"),
    ("rbm-scale-negative", lambda t: rbmviz.RBM(3, 3, scale=-1), ValueError, "scale must be >= 0"),
    ("rbm-scale-nan", lambda t: rbmviz.RBM(3, 3, scale=float("nan")), ValueError, "scale must be finite"),
    ("rbm-seed-negative", lambda t: rbmviz.RBM(3, 3, seed=-1), ValueError, "seed must be >= 0"),
    ("rbm-seed-str", lambda t: rbmviz.RBM(3, 3, seed="a"), TypeError, "seed must be an integer"),
    ("rbm-data-columns", lambda t: rbmviz.RBM(3, 3, data=np.ones((2, 4))), ValueError, "data has 4 columns"),
    ("rbm-data-nonbinary", lambda t: rbmviz.RBM(3, 3, data=np.full((2, 3), .5)), ValueError, "data must be binary"),
    ("set_params-shape", lambda t: _rbm().set_params(W=np.ones((3, 3))), ValueError, r"W must have shape \(4, 3\)"),
    ("set_params-nan", lambda t: _rbm().set_params(b=[np.nan] * 4), ValueError, "b contains NaN"),
    ("astype-int", lambda t: _rbm().astype("int8"), ValueError, "dtype 'int8'"),
    ("free_energy-columns", lambda t: _rbm().free_energy(np.ones((2, 5))), ValueError, "V has 5 columns"),
    ("free_energy-3d", lambda t: _rbm().free_energy(np.ones((2, 2, 4))), ValueError, "V must be 2-D"),
    ("free_energy-strings", lambda t: _rbm().free_energy([["a"] * 4]), TypeError, "V must be numeric"),
    ("free_energy-empty", lambda t: _rbm().free_energy(np.ones((0, 4))), ValueError, "V is empty"),
    ("hidden_probabilities-inf", lambda t: _rbm().hidden_probabilities([[np.inf, 0, 0, 0]]), ValueError,
     "V contains NaN or inf"),
    ("gibbs-k-zero", lambda t: _rbm().gibbs(np.ones((1, 4)), k=0), ValueError, "k must be >= 1"),
    ("sample_hidden-seed", lambda t: _rbm().sample_hidden(np.ones((1, 4)), seed=-2), ValueError, "seed must be >= 0"),
    ("energy-rows", lambda t: _rbm().energy(np.ones((2, 4)), np.ones((3, 3))), ValueError, "V and H must have the same number of rows"),
    ("free_energy-truncated", lambda t: _tg().free_energy(np.full((1, 4), .5)), ValueError, "RBM.free_energy needs Bernoulli"),
    # ------------------------------------------------------------------ save / load
    ("save-path-type", lambda t: _rbm().save(3.5), TypeError, "path must be a file path"),
    ("save-exists", lambda t: (_rbm().save(t / "m.npz"), _rbm().save(t / "m.npz")), FileExistsError, "overwrite=True"),
    ("load-path-type", lambda t: rbmviz.RBM.load(None), TypeError, "path must be a file path"),
    ("load-missing", lambda t: rbmviz.RBM.load(t / "nope.npz"), FileNotFoundError, "nope.npz"),
    ("load-directory", lambda t: rbmviz.RBM.load(t), ValueError, "is a directory"),
    ("load-text-file", lambda t: rbmviz.RBM.load(_write(t, "t.npz", b"hello")), ValueError, r"t\.npz is not a readable"),
    ("load-foreign-npz", lambda t: (np.savez(t / "f.npz", a=np.ones(2)), rbmviz.RBM.load(t / "f.npz")), ValueError,
     "not an rbmviz RBM file"),
    ("load-nan-W", lambda t: rbmviz.RBM.load(_saved(t, W=np.full((4, 3), np.nan))), ValueError, "array 'W' contains NaN"),
    ("load-int-c", lambda t: rbmviz.RBM.load(_saved(t, c=np.zeros(3, dtype=np.int64))), ValueError, "array 'c' has dtype int64"),
    ("load-mixed-float", lambda t: rbmviz.RBM.load(_saved(t, b=np.zeros(4, dtype=np.float32))), ValueError,
     "'W', 'b', 'c' must share one float dtype"),
    ("load-bad-shape", lambda t: rbmviz.RBM.load(_saved(t, b=np.zeros(5))), ValueError, "array 'b' has shape"),
    ("load-version-text", lambda t: rbmviz.RBM.load(_saved(t, format_version=np.array("2"))), ValueError,
     "'format_version' must be a single integer"),
    ("load-version-newer", lambda t: rbmviz.RBM.load(_saved(t, format_version=np.array(99))), ValueError,
     "format version 99, newer"),
    # ------------------------------------------------------------------ train / Run
    ("train-data-none", lambda t: _train(data=None), ValueError, "data is None"),
    ("train-data-nonbinary", lambda t: _train(data=X * 0.5), ValueError, "data must be binary"),
    ("train-data-columns", lambda t: _train(data=np.ones((3, 5))), ValueError, "data has 5 columns"),
    ("train-rbm-type", lambda t: _train(rbm="model"), TypeError, "rbm must be an rbmviz.RBM"),
    ("train-algorithm", lambda t: _train(algorithm="cdd"), ValueError, "algorithm 'cdd'.*did you mean 'cd'"),
    ("train-epochs-negative", lambda t: _train(epochs=-1), ValueError, "epochs must be >= 0"),
    ("train-epochs-float", lambda t: _train(epochs=1.5), TypeError, "epochs must be an integer"),
    ("train-epochs-huge", lambda t: _train(epochs=10**12), ValueError, "epochs must be <="),
    ("train-exact-max-bits-huge", lambda t: _train(exact_max_bits=40), ValueError,
     "exact_max_bits must be <="),
    ("train-batch_size-zero", lambda t: _train(batch_size=0), ValueError, "batch_size must be >= 1"),
    ("train-batch_size-large", lambda t: _train(batch_size=100), ValueError, "batch_size=100 is larger than the data"),
    ("train-learning_rate-zero", lambda t: _train(learning_rate=0), ValueError, "learning_rate"),
    ("train-learning_rate-str", lambda t: _train(learning_rate="0.1"), TypeError, "learning_rate"),
    ("train-k-zero", lambda t: _train(k=0), ValueError, r"\bk\b"),
    ("train-k-huge", lambda t: _train(k=10**9), ValueError, r"\bk\b"),
    ("train-unknown-setting", lambda t: _train(kk=3), TypeError, "kk"),
    ("train-metric", lambda t: _train(metrics=["loss"]), ValueError, "metric 'loss'"),
    ("train-test_ll-without-test", lambda t: _train(metrics=["test_ll"]), ValueError, "'test_ll' needs test_data"),
    ("train-momentum-one", lambda t: _train(momentum=1.0), ValueError, "momentum"),
    ("train-weight_decay", lambda t: _train(weight_decay=-1), ValueError, "weight_decay"),
    ("train-test_data-columns", lambda t: _train(test_data=np.ones((2, 3))), ValueError, "test_data has 3 columns"),
    ("train-eval_every", lambda t: _train(eval_every=0), ValueError, "eval_every"),
    ("train-max_weight", lambda t: _train(max_weight=-1), ValueError, "max_weight must be > 0"),
    ("train-metric_options", lambda t: _train(metric_options={"foo": 1}), ValueError, r"metric_options \['foo'\]"),
    ("train-pcd-n_chains", lambda t: _train(algorithm="pcd", n_chains=0), ValueError, "n_chains"),
    ("train-seed-huge", lambda t: _train(seed=2**64), ValueError, "seed"),
    ("run-binary-metric-truncated", lambda t: Run(_tg(), np.full((3, 4), .5), "tap", metrics=["pseudo_ll"]), ValueError,
     r"metric\(s\) \['pseudo_ll'\] needs Bernoulli"),
    # ------------------------------------------------------------------ evaluate
    ("log_partition-type", lambda t: ev.log_partition_exact("x"), TypeError, "rbm must be an rbmviz.RBM"),
    ("log_partition-too-large", lambda t: ev.log_partition_exact(rbmviz.RBM(40, 40)), ValueError, "2\\*\\*40 states"),
    ("log_partition-truncated", lambda t: ev.log_partition_exact(_tg()), ValueError, "needs Bernoulli"),
    ("log_likelihood-columns", lambda t: ev.log_likelihood_exact(_rbm(), np.ones((1, 5))), ValueError, "V has 5 columns"),
    ("log_likelihood-nonbinary", lambda t: ev.log_likelihood_exact(_rbm(), np.full((1, 4), .3)), ValueError,
     "V must be binary"),
    ("ais-n_chains", lambda t: ev.ais_log_partition(_rbm(), n_chains=0), ValueError, "n_chains must be >= 1"),
    ("ais-n_betas", lambda t: ev.ais_log_partition(_rbm(), n_betas=1), ValueError, "n_betas"),
    ("ais-betas-order", lambda t: ev.ais_log_partition(_rbm(), betas=[0, .5, .4, 1]), ValueError, "betas must be strictly increasing"),
    ("ais-dtype", lambda t: ev.ais_log_partition(_rbm(), dtype="float16"), ValueError, "dtype must be"),
    ("ais-data-columns", lambda t: ev.ais_log_partition(_rbm(), data=np.ones((2, 3))), ValueError, "data has 3 columns"),
    ("ais-threads", lambda t: ev.ais_log_partition(_rbm(), threads=0), ValueError, "threads must be >= 1"),
    ("pseudo_ll-nan", lambda t: ev.pseudo_log_likelihood(_rbm(), [[np.nan, 0, 0, 1]]), ValueError, "V contains NaN"),
    ("spl-rows", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, rows=0), ValueError, "rows"),
    ("spl-sites", lambda t: ev.stochastic_pseudo_log_likelihood(_rbm(), X, sites=-1), ValueError, "sites"),
    ("reconstruction-columns", lambda t: ev.reconstruction_error(_rbm(), np.ones((2, 2))), ValueError, "V has 2 columns"),
    ("all_states-negative", lambda t: ev.all_states(-1), ValueError, "n must be >= 0"),
    ("expected_cd_update-k", lambda t: ev.expected_cd_update(_rbm(), X, 0), ValueError, "k must be >= 1"),
    # ------------------------------------------------------------------ bias
    ("cd_bias-k", lambda t: bias.cd_bias_exact(_rbm(), X, 0), ValueError, "k must be >= 1"),
    ("cd_bias-data-columns", lambda t: bias.cd_bias_exact(_rbm(), np.ones((1, 3)), 1), ValueError, "data has 3 columns"),
    ("cd_bias-too-large", lambda t: bias.cd_bias_exact(rbmviz.RBM(12, 3), np.ones((1, 12)), 1), ValueError,
     "n_visible=12"),
    ("cd_bias_bound-k", lambda t: bias.cd_bias_bound(_rbm(), X, -2), ValueError, "k must be >= 1"),
    ("bengio_delalleau-k", lambda t: bias.bengio_delalleau_bound(_rbm(), 0), ValueError, "k must be >= 1"),
    ("bias_table-ks", lambda t: bias.bias_table(_rbm(), X, ks=[]), ValueError, "ks is empty"),
    ("train_expected_cd-lr", lambda t: bias.train_expected_cd(_rbm(), X, learning_rate=-1), ValueError, "learning_rate"),
    ("train_expected_cd-iterations", lambda t: bias.train_expected_cd(_rbm(), X, iterations=-1), ValueError,
     "iterations must be >= 0"),
    ("train_expected_cd-record_every", lambda t: bias.train_expected_cd(_rbm(), X, iterations=5, record_every=0),
     ValueError, "record_every must be >= 1"),
    ("train_expected_cd-rbms-empty", lambda t: bias.train_expected_cd([], X), ValueError, "rbms is empty"),
    ("train_expected_cd-rbms-type", lambda t: bias.train_expected_cd(["a"], X), TypeError, "rbm must be an rbmviz.RBM"),
    ("train_expected_cd-max_weight", lambda t: bias.train_expected_cd(_rbm(), X, max_weight=0), ValueError,
     "max_weight must be > 0"),
    ("train_expected_cd-max_ll_drop", lambda t: bias.train_expected_cd(_rbm(), X, max_ll_drop="lots"), TypeError,
     "max_ll_drop must be a real number"),
    ("train_expected_cd-chunk", lambda t: bias.train_expected_cd(_rbm(), X, chunk="fast"), TypeError,
     "chunk must be an integer"),
    ("cd_bias-truncated", lambda t: bias.cd_bias_exact(_tg(visible="bernoulli", hidden="truncated_gaussian"),
                                                       np.ones((1, 4)), 1), ValueError, "needs Bernoulli"),
    # ------------------------------------------------------------------ tap
    ("tap-order", lambda t: tap.solve(_rbm(), X, order=4), ValueError, "order"),
    ("tap-damping", lambda t: tap.solve(_rbm(), X, damping=0), ValueError, "damping"),
    ("tap-tol", lambda t: tap.solve(_rbm(), X, tol=-1), ValueError, "tol"),
    ("tap-max_iter", lambda t: tap.solve(_rbm(), X, max_iter=0), ValueError, "max_iter must be >= 1"),
    ("tap-init-columns", lambda t: tap.solve(_rbm(), np.ones((2, 3))), ValueError, "init_visible has 3 columns"),
    ("tap-init-nonbinary", lambda t: tap.solve(_rbm(), np.full((2, 4), .5)), ValueError, "init_visible must be binary"),
    ("tap-visible_field", lambda t: tap.solve(_rbm(), X, visible_field=np.ones((2, 2))), ValueError, "visible_field"),
    ("tap-unique-tol", lambda t: tap.unique_solutions(tap.solve(_rbm(), X), tol=-1), ValueError, "tol"),
    ("tap-unique-type", lambda t: tap.unique_solutions("x"), TypeError, "sol"),
    ("tap-log_likelihood-n_init", lambda t: tap.log_likelihood(_rbm(), X, n_init=0), ValueError, "n_init must be >= 1"),
    ("tap-denoise-method", lambda t: tap.denoise(_rbm(), X, 0.1, method="magic"), ValueError, "method 'magic'"),
    ("tap-denoise-p", lambda t: tap.denoise(_rbm(), X, 1.5), ValueError, r"\bp\b"),
    ("tap-corrupt-p", lambda t: tap.corrupt(X, -0.1), ValueError, r"\bp\b"),
    ("tap-mcc-shapes", lambda t: tap.mcc(X, X[:2]), ValueError, "estimate.*truth|truth.*estimate"),
    # ------------------------------------------------------------------ datasets
    ("bars_and_stripes-D-zero", lambda t: datasets.bars_and_stripes(0), ValueError, r"\bD\b"),
    ("bars_and_stripes-D-float", lambda t: datasets.bars_and_stripes(2.5), ValueError, r"D must be an integer"),
    ("bars_and_stripes-D-huge", lambda t: datasets.bars_and_stripes(100), ValueError, r"D must be an integer in \[2, 16\]"),
    ("shifting_bar-N", lambda t: datasets.shifting_bar(0), ValueError, r"\bN\b"),
    ("shifting_bar-B", lambda t: datasets.shifting_bar(5, 6), ValueError, r"\bB\b"),
    ("diag-d", lambda t: datasets.diag(0), ValueError, r"\bd\b"),
    ("ball_1d-d", lambda t: datasets.ball_1d(-2), ValueError, r"\bd\b"),
    ("load-unknown-dataset", lambda t: datasets.load("mnistt"), ValueError, "(?i)name must be one of.*'mnistt'.*did you mean 'mnist'"),
    ("mnist-split", lambda t: datasets.mnist(split="validation"), ValueError, "split"),
    ("mnist-binarize", lambda t: datasets.mnist(binarize="otsu"), ValueError, "binarize"),
    ("mnist-limit", lambda t: datasets.mnist(limit=0), ValueError, "limit"),
    ("omniglot-size", lambda t: datasets.omniglot(size=0), ValueError, "size"),
    ("cbcl-limit", lambda t: datasets.cbcl(limit=-5), ValueError, "limit"),
    ("bars_and_stripes_sample-n", lambda t: datasets.bars_and_stripes_sample(3, 0, 0), ValueError, r"\bn\b"),
    # ------------------------------------------------------------------ estimator
    ("estimator-n_components", lambda t: RBMEstimator(n_components=0).fit(X), ValueError, "n_components"),
    ("estimator-algorithm", lambda t: RBMEstimator(algorithm="foo").fit(X), ValueError, "algorithm"),
    ("estimator-learning_rate", lambda t: RBMEstimator(learning_rate=-1).fit(X), ValueError, "learning_rate"),
    ("estimator-batch_size", lambda t: RBMEstimator(batch_size=0).fit(X), ValueError, "batch_size"),
    ("estimator-n_iter", lambda t: RBMEstimator(n_iter=-1).fit(X), ValueError, "n_iter"),
    ("estimator-k", lambda t: RBMEstimator(k=0).fit(X), ValueError, r"'k'"),
    ("estimator-dtype", lambda t: RBMEstimator(dtype="float16").fit(X), ValueError, "dtype"),
    ("estimator-init_visible_bias", lambda t: RBMEstimator(init_visible_bias="x").fit(X), ValueError,
     "init_visible_bias"),
    ("estimator-random_state", lambda t: RBMEstimator(random_state="x").fit(X), ValueError, "random_state"),
    ("estimator-X-nan", lambda t: RBMEstimator(n_components=2).fit(np.full((3, 3), np.nan)), ValueError,
     "X contains NaN"),
    ("estimator-X-range", lambda t: RBMEstimator(n_components=2).fit(np.full((3, 3), 2.0)), ValueError, r"\bX\b"),
    ("estimator-transform-columns", lambda t: RBMEstimator(n_components=2, n_iter=1).fit(X).transform(np.ones((1, 3))),
     ValueError, "X has 3 features"),
    ("estimator-X-strings", lambda t: RBMEstimator(n_components=2).fit([["a", "b"]]), ValueError, r"\bX\b"),
]


def _innermost_file(excinfo) -> str:
    frames = traceback.extract_tb(excinfo.tb)
    return frames[-1].filename if frames else ""


def _case_params():
    out = []
    for case in API_CASES:
        if not hasattr(case, "marks"):
            out.append(pytest.param(*case[1:], id=case[0]))
        else:
            out.append(pytest.param(*case.values[1:], id=case.values[0], marks=case.marks))
    return out


@pytest.mark.parametrize("call,exc,match", _case_params())
def test_bad_api_input_gets_a_clear_error(tmp_path, call, exc, match):
    with pytest.raises(exc, match=match) as info:
        call(tmp_path)
    origin = _innermost_file(info)
    # the estimator's parameter and X checks are scikit-learn's contract (as BernoulliRBM's)
    allowed = (PKG, SKLEARN) if "RBMEstimator" in call.__code__.co_names else (PKG,)
    assert origin.startswith(allowed), (
        f"raised from {origin}, not by rbmviz's checks: {type(info.value).__name__}: {info.value}")


def test_estimator_errors_come_from_rbmviz_or_its_sklearn_contract(tmp_path):
    """The estimator validates its parameters through scikit-learn's ``_parameter_constraints``
    (the estimator contract, as ``BernoulliRBM``): those errors originate in sklearn, every
    other one in rbmviz."""
    with pytest.raises(ValueError) as info:
        RBMEstimator(n_components=0).fit(X)
    assert _innermost_file(info).startswith(SKLEARN) and "n_components" in str(info.value)


def test_catalogue_size():
    assert len(API_CASES) + len(CLI_CASES) >= 60


# ---------------------------------------------------------------------------- command line
CLI_CASES = [
    ("train-learning-rate", ["train", "--learning-rate", "-1"], "--learning-rate"),
    ("train-learning-rate-text", ["train", "--learning-rate", "fast"], "--learning-rate"),
    ("train-k", ["train", "--k", "0"], "--k"),
    ("train-epochs", ["train", "--epochs", "-3"], "--epochs"),
    ("train-dataset", ["train", "--dataset", "mnistt"], "--dataset"),
    ("train-algorithm", ["train", "--algorithm", "cdd"], "--algorithm"),
    ("train-batch-size", ["train", "--batch-size", "0"], "--batch-size"),
    ("train-n-hidden", ["train", "--n-hidden", "0"], "--n-hidden"),
    ("train-seed", ["train", "--seed", "-1"], "--seed"),
    ("train-eval-every", ["train", "--eval-every", "0"], "--eval-every"),
    ("train-momentum", ["train", "--momentum", "1.5"], "--momentum"),
    ("train-out-not-empty", ["train", "--out", "{full}"], "--out"),
    ("train-out-is-a-file", ["train", "--out", "{file}"], "--out"),
    ("train-out-under-a-file", ["train", "--out", "{file}/sub"], "--out"),
    ("train-settings-missing", ["train", "--settings", "{tmp}/none.json"], "--settings"),
    ("train-settings-not-json", ["train", "--settings", "{bad_json}"], "--settings"),
    ("train-unknown-option", ["train", "--frob"], "--frob"),
    ("train-D-too-large", ["train", "--D", "50"], "--D"),
    ("sweep-algorithms", ["sweep", "--algorithms", "foo"], "--algorithms"),
    ("reproduce-experiment", ["reproduce", "nothing"], "experiment"),
    ("reproduce-cd-bias-reps", ["reproduce", "cd-bias", "--reps", "0"], "reps"),
    ("unknown-command", ["frobnicate"], "command"),
]


def _cli_params():
    out = []
    for case in CLI_CASES:
        if not hasattr(case, "marks"):
            out.append(pytest.param(*case[1:], id=case[0]))
        else:
            out.append(pytest.param(*case.values[1:], id=case.values[0], marks=case.marks))
    return out


@pytest.mark.parametrize("argv,flag", _cli_params())
def test_bad_command_line_gets_exit_status_2_naming_the_option(tmp_path, capsys, argv, flag):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    (tmp_path / "file").write_text("x")
    (tmp_path / "bad.json").write_text("{not json")
    fill = {"tmp": tmp_path, "full": tmp_path / "full", "file": tmp_path / "file",
            "bad_json": tmp_path / "bad.json"}
    argv = [a.format(**fill) for a in argv]
    if argv[0] in ("train", "sweep", "reproduce") and "--out" not in argv and len(argv) > 1:
        argv += ["--out", str(tmp_path / "out")]
    if argv[0] == "sweep":
        argv += ["--epochs", "1"]
    rc = cli.main(argv + (["--quiet"] if argv[0] == "train" else []))
    err = capsys.readouterr().err
    assert rc == 2, f"exit status {rc}: {err}"
    assert flag in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ---------------------------------------------------------------------------- unit types
@pytest.mark.parametrize("algorithm", GIBBS_RULES)
@pytest.mark.parametrize("visible,hidden,layer,unit", [
    ("truncated_gaussian", "bernoulli", "visible", "truncated_gaussian"),
    ("truncated_gauss_bernoulli", "bernoulli", "visible", "truncated_gauss_bernoulli"),
    ("bernoulli", "truncated_gaussian", "hidden", "truncated_gaussian"),
    ("bernoulli", "truncated_gauss_bernoulli", "hidden", "truncated_gauss_bernoulli"),
])
def test_gibbs_rules_refuse_non_bernoulli_units(algorithm, visible, hidden, layer, unit):
    """Issue 11: these rules sample Bernoulli units; a truncated-Gaussian or Gauss–Bernoulli
    layer used to be trained as if binary, silently.  The refusal names the rule, the layer,
    the unit type and the rule that does train it (tap), and the model is left untouched."""
    rbm = rbmviz.RBM(4, 3, visible=visible, hidden=hidden, seed=0)
    before = rbm.copy()
    data = X if visible == "bernoulli" else np.random.default_rng(0).random((6, 4)) * (X > 0)
    with pytest.raises(ValueError, match=rf"algorithm '{algorithm}' samples Bernoulli .*the {layer} "
                                         rf"units of this model are '{unit}'.*algorithm 'tap'") as info:
        rbmviz.train(rbm, data, algorithm, epochs=1, metrics=["weight_norm"])
    assert _innermost_file(info).startswith(PKG)
    assert rbm == before


def test_a_ready_gibbs_rule_refuses_to_resume_on_non_bernoulli_units():
    algo = rbmviz.algorithms.create("pcd", learning_rate=0.1)
    rbmviz.train(_rbm(), X, algo, epochs=1, metrics=["weight_norm"])
    with pytest.raises(ValueError, match="hidden units of this model are 'truncated_gaussian'"):
        Run(_tg(visible="bernoulli", hidden="truncated_gaussian"), X, algo, epochs=1, metrics=["weight_norm"])


@pytest.mark.parametrize("visible,hidden", [("truncated_gaussian", "bernoulli"),
                                            ("bernoulli", "truncated_gauss_bernoulli")])
def test_tap_trains_the_units_the_gibbs_rules_refuse(visible, hidden):
    rbm = rbmviz.RBM(4, 3, visible=visible, hidden=hidden, seed=0, scale=0.1)
    data = X if visible == "bernoulli" else np.random.default_rng(0).random((6, 4))
    before = rbm.copy()
    rbmviz.train(rbm, data, "tap", epochs=2, batch_size=3, learning_rate=0.05, metrics=["weight_norm"])
    assert not np.array_equal(rbm.W, before.W) and np.all(np.isfinite(rbm.W))
