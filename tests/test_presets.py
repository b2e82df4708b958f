"""rbmviz.presets: every data set brings consistent defaults; the paper presets restate the papers."""
import numpy as np
import pytest

import rbmviz
from rbmviz import presets, settings
from rbmviz.evaluate.metrics import METRICS


@pytest.mark.parametrize("name", sorted(settings.DATASETS))
def test_every_dataset_has_a_consistent_preset(name):
    p = presets.for_dataset(name)
    assert set(presets.KEYS) <= set(p)
    rows, cols = p["image_shape"]
    assert rows * cols == p["n_visible"]
    assert p["dtype"] == presets.default_dtype(p["n_visible"], p["n_hidden"])
    assert p["eval_every"] == "auto"
    assert all(m in METRICS for m in p["metrics"])
    assert p["algorithm"] in rbmviz.algorithms.names()
    exact = min(p["n_visible"], p["n_hidden"]) <= 20
    # exact log-likelihoods where enumeration is cheap, cheap stochastic metrics elsewhere
    assert ("train_ll" in p["metrics"]) == exact
    assert p["x_axis"] == ("epoch" if exact else "updates")


@pytest.mark.parametrize("name", [n for n in ("bars_and_stripes", "shifting_bar", "diag", "ball_1d", "digits")])
def test_preset_matches_the_generated_data(name):
    p = presets.for_dataset(name)
    X = rbmviz.datasets.load(name, **{k: v for k, v in p["data"].items()})
    assert X.shape[1] == p["n_visible"]


def test_one_dimensional_data_are_drawn_as_a_row_and_follow_their_knobs():
    assert presets.for_dataset("shifting_bar")["image_shape"] == (1, 9)
    assert presets.for_dataset("shifting_bar", N=12, B=3)["image_shape"] == (1, 12)
    assert presets.for_dataset("bars_and_stripes", D=4)["image_shape"] == (4, 4)
    assert presets.for_dataset("bars_and_stripes", D=4)["n_visible"] == 16


def test_large_models_train_in_float32_and_small_or_exact_ones_in_float64():
    m = presets.for_dataset("mnist")
    assert (m["n_visible"], m["n_hidden"], m["batch_size"], m["dtype"]) == (784, 500, 100, "float32")
    assert presets.default_dtype(784, 20) == "float64"          # exact LL feasible
    assert presets.default_dtype(64, 100) == "float64"          # small
    assert presets.default_dtype(784, 100) == "float32"


def test_presets_are_fresh_copies():
    a = presets.for_dataset("mnist")
    a["metrics"].append("pseudo_ll")
    assert "pseudo_ll" not in presets.for_dataset("mnist")["metrics"]


def test_bad_names_and_knobs_are_named():
    with pytest.raises(ValueError, match="name.*mnst|mnist"):
        presets.for_dataset("mnst")
    with pytest.raises(TypeError, match="D"):
        presets.for_dataset("mnist", D=3)
    with pytest.raises(ValueError, match="N"):
        presets.for_dataset("shifting_bar", N=0)


def test_paper_presets_restate_the_papers():
    assert presets.tramel2018["binary-mnist-100"]["learning_rate"] == 0.005
    assert presets.tramel2018["cbcl-256"]["batch_size"] == 20
    u = presets.upadhya2017
    assert u["mnist"]["k"] == u["mnist"]["d"] * u["mnist"]["k_inner"] == 24
    assert u["bars_and_stripes"]["k"] == u["bars_and_stripes"]["d"] * u["bars_and_stripes"]["k_inner"] == 12
    f = presets.fischer2011["diag"]
    assert (f["n_hidden"], f["learning_rate"], f["init_scale"], f["iterations"]) == (6, 0.1, 0.5, 50_000)


def test_the_toy_preset_trains_to_a_better_exact_likelihood():
    p = presets.for_dataset("bars_and_stripes")
    X = rbmviz.datasets.bars_and_stripes(3)
    rbm = rbmviz.RBM(p["n_visible"], p["n_hidden"], seed=0)
    df = rbmviz.train(rbm, X, p["algorithm"], epochs=2000, batch_size=p["batch_size"],
                      learning_rate=p["learning_rate"], k=p["k"], metrics=p["metrics"],
                      eval_every=500)
    assert df.train_ll.iloc[-1] > df.train_ll.iloc[0] + 1.5
    assert np.isfinite(df.recon_error).all()
