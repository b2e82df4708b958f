"""Tests of rbmviz.settings: bounds, algorithm filtering, data rules, flat dicts."""
import json

import numpy as np
import pytest

import rbmviz
from rbmviz import algorithms, datasets
from rbmviz.bounds import K_MAX, UNITS_MAX
from rbmviz.settings import (DATASETS, SETTINGS_CLASSES, DataSettings, ModelSettings,
                             TrainSettings, algorithm_kwargs, algorithm_knobs, build_model,
                             dataset_knobs, from_dict, knobs, load_data, make_run, parse_value,
                             to_dict)


# ---------------------------------------------------------------------------- bounds

@pytest.mark.parametrize("cls, name, bad", [
    (ModelSettings, "n_hidden", 0),
    (ModelSettings, "n_hidden", UNITS_MAX + 1),
    (ModelSettings, "init_scale", -0.1),
    (ModelSettings, "init", "gaussian"),
    (ModelSettings, "dtype", "float16"),
    (ModelSettings, "init_seed", -1),
    (TrainSettings, "algorithm", "nope"),
    (TrainSettings, "k", 0),
    (TrainSettings, "k", 1.5),
    (TrainSettings, "learning_rate", 0.0),     # exclusive lower bound
    (TrainSettings, "learning_rate", -1.0),
    (TrainSettings, "k", K_MAX + 1),
    (TrainSettings, "batch_size", 0),
    (TrainSettings, "epochs", -1),
    (TrainSettings, "eval_every", 0),
    (TrainSettings, "momentum", 1.0),           # [0, 1)
    (TrainSettings, "weight_decay", -0.1),
    (TrainSettings, "seed", -1),
    (TrainSettings, "n_chains", 0),
    (TrainSettings, "max_weight", 0.0),
    (DataSettings, "dataset", "nope"),
    (DataSettings, "D", 1),
    (DataSettings, "binarize", "otsu"),
    (DataSettings, "limit", 0),
])
def test_bounds_reject_bad_values(cls, name, bad):
    obj = cls()
    with pytest.raises(ValueError, match=name):
        setattr(obj, name, bad)
    with pytest.raises(ValueError, match=name):
        cls(**{name: bad})


@pytest.mark.parametrize("cls, name, good", [
    (TrainSettings, "learning_rate", 10.0),     # inclusive upper bound
    (TrainSettings, "momentum", 0.0),
    (TrainSettings, "momentum", 0.99),
    (TrainSettings, "batch_size", None),        # full batch
    (TrainSettings, "n_chains", None),
    (TrainSettings, "epochs", 0),
    (DataSettings, "limit", None),
    (ModelSettings, "init_scale", 0.0),
])
def test_bounds_accept_edge_values(cls, name, good):
    assert getattr(cls(**{name: good}), name) == good


def test_defaults_and_docs():
    m, t, d = ModelSettings(), TrainSettings(), DataSettings()
    assert (m.n_hidden, m.init, m.init_scale, m.visible_bias, m.dtype) == (
        4, "normal", 0.01, "base_rate", "float64")
    assert (t.algorithm, t.k, t.learning_rate, t.batch_size, t.epochs, t.eval_every, t.seed) == (
        "cd", 1, 0.1, None, 100, 1, 0)
    assert (d.dataset, d.D, d.N, d.B, d.d) == ("bars_and_stripes", 3, 9, 1, 6)
    assert set(TrainSettings.param["algorithm"].objects) == set(algorithms.names())
    names = [n for cls in SETTINGS_CLASSES for n in knobs(cls)]
    assert len(names) == len(set(names)), "knob names must be unique across the classes"
    for cls in SETTINGS_CLASSES:
        for n, p in knobs(cls).items():
            assert p.doc and len(p.doc) > 15, f"{cls.__name__}.{n} needs a doc string"


def test_no_panel_import():
    import subprocess
    import sys
    code = "import sys, rbmviz.settings; assert 'panel' not in sys.modules, 'panel imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------- algorithms

def test_algorithm_kwargs_filters_by_algorithm():
    t = TrainSettings(algorithm="cd", k=5, learning_rate=0.3, seed=7, n_chains=10)
    kw = algorithm_kwargs(t)
    assert kw == {"k": 5, "learning_rate": 0.3, "momentum": 0.0, "weight_decay": 0.0, "seed": 7}
    assert "n_chains" not in kw and "epochs" not in kw and "batch_size" not in kw
    t.algorithm = "pcd"
    kw = algorithm_kwargs(t)
    assert kw["n_chains"] == 10 and kw["learning_rate"] == 0.3 and kw["seed"] == 7
    assert algorithm_knobs("pcd") == [*algorithm_knobs("cd"), "n_chains"]


@pytest.mark.parametrize("name", algorithms.names())
def test_algorithm_kwargs_are_accepted(name):
    t = TrainSettings(algorithm=name)
    assert set(algorithm_kwargs(t)) <= set(algorithms.accepted_settings(name))
    algo = algorithms.create(name, **algorithm_kwargs(t))
    assert algo.learning_rate == t.learning_rate


# ---------------------------------------------------------------------------- data

def test_every_dataset_has_a_rule():
    assert set(DataSettings.param["dataset"].objects) == set(DATASETS) == set(datasets.names())
    assert dataset_knobs("shifting_bar") == ["N", "B"]


@pytest.mark.parametrize("name, kw, n_visible", [
    ("bars_and_stripes", {"D": 3}, 9),
    ("shifting_bar", {"N": 5, "B": 2}, 5),
    ("diag", {"d": 4}, 4),
    ("ball_1d", {"d": 4}, 4),
])
def test_toy_test_set_is_the_training_set(name, kw, n_visible):
    train, test = load_data(DataSettings(dataset=name, **kw))
    assert train.shape[1] == n_visible
    np.testing.assert_array_equal(train, test)
    np.testing.assert_array_equal(train, datasets.load(name, **kw))


def test_digits_fixed_split_and_binarisation():
    train, test = load_data(DataSettings(dataset="digits"))
    assert train.shape == (1438, 64) and test.shape == (359, 64)
    full = datasets.digits()
    np.testing.assert_array_equal(np.vstack([train, test]), full)   # last 20% held out
    s1 = load_data(DataSettings(dataset="digits", binarize="stochastic", data_seed=1))
    s1b = load_data(DataSettings(dataset="digits", binarize="stochastic", data_seed=1))
    s2 = load_data(DataSettings(dataset="digits", binarize="stochastic", data_seed=2))
    np.testing.assert_array_equal(s1[0], s1b[0])
    assert not np.array_equal(s1[0], s2[0])
    assert set(np.unique(s1[0])) == {0.0, 1.0}
    lim = load_data(DataSettings(dataset="digits", limit=100))
    assert lim[0].shape == (100, 64) and lim[1].shape == (100, 64)
    np.testing.assert_array_equal(lim[1], test[:100])


def test_the_data_knobs_are_the_datasets_declarations():
    """DataSettings' data knobs have the default, bounds, choices and help of their one
    declaration, rbmviz.datasets.DataKnobs (rbmviz.presets reads the same class), and the
    splits and held-out fraction of DATASETS are rbmviz.datasets' own."""
    from rbmviz import presets
    from rbmviz.settings import TEST_FRACTION
    assert presets.DataKnobs is datasets.DataKnobs and presets.DATA_KNOBS is datasets.DATA_KNOBS
    for name in ("D", "N", "B", "d", "binarize", "data_seed", "limit"):
        mine, decl = DataSettings.param[name], datasets.DataKnobs.param[name]
        assert type(mine) is type(decl), name
        for slot in ("default", "bounds", "softbounds", "objects", "doc", "allow_None"):
            assert getattr(mine, slot, None) == getattr(decl, slot, None), (name, slot)
    assert TEST_FRACTION == datasets.TEST_FRACTION
    for name, rule in DATASETS.items():
        if rule.splits is not None:
            assert set(rule.splits) <= set(datasets.SPLITS[name])
            assert rule.test_rows == datasets.split_rows(name, rule.splits[1])


def test_a_limit_beyond_a_split_keeps_the_whole_split():
    """``limit`` is "at most this many rows of each split": the digits' test split has 359."""
    train, test = load_data(DataSettings(dataset="digits", limit=1000))
    assert train.shape == (1000, 64) and test.shape == (359, 64)


def test_missing_file_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("RBMVIZ_DATA", str(tmp_path))
    with pytest.raises(datasets.DatasetNotFoundError, match="RBMVIZ_DATA"):
        load_data(DataSettings(dataset="mnist", limit=10))


# ---------------------------------------------------------------------------- model and run

def test_build_model():
    X = datasets.bars_and_stripes(3)
    rbm = build_model(ModelSettings(n_hidden=5, init_seed=3), X)
    assert rbm == rbmviz.RBM(9, 5, seed=3, data=X)
    rbm0 = build_model(ModelSettings(visible_bias="zeros", dtype="float32", init="uniform",
                                     init_scale=0.5), X)
    assert rbm0.dtype == np.float32 and not rbm0.b.any() and np.abs(rbm0.W).max() <= 0.5


def test_make_run_matches_train():
    t = TrainSettings(algorithm="pcd", k=3, learning_rate=0.3, epochs=20, eval_every=10, seed=4)
    run = make_run(DataSettings(), ModelSettings(init_seed=2), t)
    recs = list(run)
    assert [r["epoch"] for r in recs] == [0, 10, 20]
    assert "test_ll" in recs[0] and recs[0]["test_ll"] == recs[0]["train_ll"]
    X = datasets.bars_and_stripes(3)
    rbm = rbmviz.RBM(9, 4, seed=2, data=X)
    rbmviz.train(rbm, X, "pcd", epochs=20, learning_rate=0.3, seed=4, k=3, eval_every=10)
    assert run.rbm == rbm


def test_make_run_overrides():
    run = make_run(DataSettings(), ModelSettings(), TrainSettings(), epochs=None,
                   metrics=["weight_norm"], eval_every=2)
    assert run.epochs is None and run.metrics == ["weight_norm"] and run.eval_every == 2


# ---------------------------------------------------------------------------- flat dicts

def test_to_dict_from_dict_round_trip():
    objs = (DataSettings(dataset="shifting_bar", N=7, B=2),
            ModelSettings(n_hidden=6, dtype="float32", init_seed=5),
            TrainSettings(algorithm="pcd", k=12, learning_rate=0.25, batch_size=3, n_chains=20))
    flat = to_dict(*objs)
    assert list(flat)[:2] == ["dataset", "D"] and "name" not in flat
    assert len(flat) == sum(len(knobs(c)) for c in SETTINGS_CLASSES)
    again = from_dict(json.loads(json.dumps(flat)))
    assert to_dict(*again) == flat
    assert [type(o) for o in again] == list(SETTINGS_CLASSES)
    changed = to_dict(*objs, changed_only=True)
    assert changed == {"dataset": "shifting_bar", "N": 7, "B": 2, "n_hidden": 6, "dtype": "float32",
                       "init_seed": 5, "algorithm": "pcd", "k": 12, "learning_rate": 0.25,
                       "batch_size": 3, "n_chains": 20}
    assert to_dict(*from_dict(changed)) == flat


def test_from_dict_parses_text_values():
    data, model, train = from_dict({"k": "12", "learning_rate": "0.3", "batch_size": "none",
                                    "n_hidden": "8", "algorithm": "pcd", "limit": ""})
    assert (train.k, train.learning_rate, train.batch_size, model.n_hidden, data.limit) == (
        12, 0.3, None, 8, None)


def test_from_dict_unknown_key():
    with pytest.raises(ValueError, match=r"unknown setting.*'learnig_rate'.*did you mean 'learning_rate'"):
        from_dict({"learnig_rate": 0.1})


@pytest.mark.parametrize("values, match", [
    ({"k": 0}, r"'k'.*at least 1"),
    ({"k": "three"}, r"'k'.*expected an integer"),
    ({"learning_rate": "nan"}, r"'learning_rate'.*finite"),
    ({"learning_rate": 0}, r"'learning_rate'.*greater than 0"),
    ({"epochs": None}, r"'epochs'.*expected an integer"),
    ({"algorithm": "nope"}, r"'algorithm'"),
    ({"k": True}, r"'k'.*expected an integer"),
])
def test_from_dict_bad_values(values, match):
    with pytest.raises(ValueError, match=match):
        from_dict(values)


def test_eval_every_none_is_the_runs_time_budget():
    data, model, _ = (cls() for cls in SETTINGS_CLASSES)
    run = rbmviz.settings.make_run(data, model, TrainSettings(eval_every=None, epochs=5))
    assert run.eval_every == "auto"
    assert from_dict(to_dict(data, model, TrainSettings(eval_every=None)))[2].eval_every is None


def test_parse_value():
    p = TrainSettings.param
    assert parse_value(p["k"], "1_000") == 1000
    assert parse_value(p["k"], 3.0) == 3
    assert parse_value(p["batch_size"], "None") is None
    assert parse_value(p["learning_rate"], 1) == 1.0
    with pytest.raises(ValueError):
        parse_value(p["epochs"], None)
