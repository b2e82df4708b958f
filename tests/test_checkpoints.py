"""Shipped checkpoints (rbmviz.checkpoints): every file loads, is small, says what it is, and
the TAP models show the landscape they are shipped for."""
import json

import numpy as np
import pytest

import rbmviz
from rbmviz import checkpoints, datasets, tap


def test_names_and_files():
    names = checkpoints.names()
    assert names, "no shipped checkpoints"
    for name in names:
        p = checkpoints.path(name)
        assert p.stat().st_size <= checkpoints.MAX_BYTES
        rbm, info = checkpoints.load(name)
        assert isinstance(rbm, rbmviz.RBM)
        assert (rbm.n_visible, rbm.n_hidden) == (info["n_visible"], info["n_hidden"])
        assert info["name"] == name and info["bytes"] == p.stat().st_size
        for key in ("title", "dataset", "algorithm", "regenerate"):
            assert info[key], (name, key)
        assert np.isfinite(rbm.W).all()
        rbm.W[0, 0] += 1.0                       # a copy: the file does not change
        assert checkpoints.load(name)[0].W[0, 0] != rbm.W[0, 0]


def test_tap_checkpoints_ordered_by_epoch():
    taps = [n for n in checkpoints.names() if n.startswith("tap-")]
    for series in {n.rpartition("-epoch")[0] for n in taps}:
        epochs = [checkpoints.info(n)["epoch"] for n in taps if n.startswith(series + "-epoch")]
        assert epochs == sorted(epochs) and len(set(epochs)) == len(epochs)
    for n in taps:
        info = checkpoints.info(n)
        assert info["algorithm"] == "tap" and info["n_hidden"] == 100
        assert info["measured"]["n_init"] in (1_000, 10_000)


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown checkpoint name 'nope'"):
        checkpoints.load("nope")
    with pytest.raises(TypeError, match="name must be a str"):
        checkpoints.load(3)


def test_latest_tap_checkpoint_has_a_landscape():
    """The recorded number of unique TAP solutions is reproduced from the first training
    images (a subset: fewer initialisations reach fewer solutions, but more than one)."""
    taps = [n for n in checkpoints.names() if n.startswith("tap-")]
    if not taps:
        pytest.skip("no TAP checkpoint shipped")
    try:
        X = datasets.mnist("train", binarize="threshold", limit=300)
    except datasets.DatasetNotFoundError:
        pytest.skip("MNIST not available")
    rbm, info = checkpoints.load(taps[-1])
    if info["measured"]["n_unique"] < 2:
        pytest.skip("the latest shipped TAP model still has one solution")
    from rbmviz.reproduce.tap_run import evaluate_tap
    ev = evaluate_tap(rbm, X)
    assert 1 < ev["stats"]["n_unique"] <= info["measured"]["n_unique"]


def test_pcd_checkpoint_reconstructs_mnist_as_recorded():
    """The shipped PCD model is float32 and reconstructs the first 1,000 training images
    with about the error recorded when it was saved (deterministic reconstruction), far better
    than a model of the pixel means alone."""
    if "pcd-mnist-500" not in checkpoints.names():
        pytest.skip("no PCD checkpoint shipped")
    rbm, info = checkpoints.load("pcd-mnist-500")
    assert rbm.dtype == np.float32 and (rbm.n_visible, rbm.n_hidden) == (784, 500)
    try:
        X = datasets.mnist("train", binarize="threshold", limit=1000)
    except datasets.DatasetNotFoundError:
        pytest.skip("MNIST not available")
    from rbmviz.evaluate import reconstruction_error
    err = reconstruction_error(rbm, X.astype(np.float32))
    assert abs(err - info["measured"]["recon_error"]) < 2e-3    # (the run may score other rows)
    blank = rbmviz.RBM(784, 500, init="zeros", dtype="float32")   # pixel means, no weights
    m = np.clip(X.mean(0), 1e-3, 1 - 1e-3)
    blank.b[:] = np.log(m / (1 - m))
    assert err < 0.7 * reconstruction_error(blank, X.astype(np.float32))
