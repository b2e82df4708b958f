"""Tests of rbmviz.datasets: toy generators, registry, and the real-data loaders.

Tests that read the real files use the data directory given by RBMVIZ_DATA,
else ``<project root>/../shared/data`` when it exists; otherwise they skip.
"""

import gzip
import os
from math import log
from pathlib import Path

import numpy as np
import pytest

from rbmviz import datasets as ds

_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = Path(os.environ["RBMVIZ_DATA"]) if os.environ.get("RBMVIZ_DATA") else _SHARED


@pytest.fixture(scope="module")
def data_root():
    """Directory holding the real data files, or skip."""
    if not DATA.is_dir():
        pytest.skip(f"real data files not found at {DATA}: set RBMVIZ_DATA to the data directory")
    return DATA


@pytest.fixture
def real_data(data_root, monkeypatch):
    """Point RBMVIZ_DATA at the real data; return a function that skips if a data set is absent."""
    monkeypatch.setenv("RBMVIZ_DATA", str(data_root))

    def need(name):
        if not ds.available(name):
            pytest.skip(f"files of {name!r} not found under {data_root}")

    return need


@pytest.fixture
def empty_data(tmp_path, monkeypatch):
    """An empty data directory."""
    monkeypatch.setenv("RBMVIZ_DATA", str(tmp_path))
    return tmp_path


def assert_binary_distinct(X, n_rows, n_cols):
    assert X.dtype == np.float64
    assert X.shape == (n_rows, n_cols)
    assert set(np.unique(X)) <= {0.0, 1.0}
    assert len(np.unique(X, axis=0)) == n_rows


# ---------------------------------------------------------------- toy sets


@pytest.mark.parametrize("D, n", [(2, 6), (3, 14), (4, 30)])
def test_bars_and_stripes_complete(D, n):
    X = ds.bars_and_stripes(D)
    assert_binary_distinct(X, n, D * D)
    images = X.reshape(-1, D, D)
    rows_constant = (images == images[:, :, :1]).all(axis=(1, 2))
    cols_constant = (images == images[:, :1, :]).all(axis=(1, 2))
    assert (rows_constant | cols_constant).all()
    assert (rows_constant & cols_constant).sum() == 2          # all-zero and all-one only
    assert (X.sum(1) == 0).sum() == 1 and (X.sum(1) == D * D).sum() == 1
    assert X[0].sum() == 0 and X[-1].sum() == D * D


def test_bars_and_stripes_default_order():
    X = ds.bars_and_stripes()
    assert X.shape == (14, 9)
    np.testing.assert_array_equal(X[1], [1, 0, 0, 1, 0, 0, 1, 0, 0])   # leftmost column
    np.testing.assert_array_equal(X[7], [1, 1, 1, 0, 0, 0, 0, 0, 0])   # top row


def test_bars_and_stripes_sample():
    X = ds.bars_and_stripes_sample(3, 40000, seed=1)
    assert X.shape == (40000, 9) and X.dtype == np.float64
    complete = {tuple(r) for r in ds.bars_and_stripes(3)}
    assert {tuple(r) for r in np.unique(X, axis=0)} == complete
    # all-zero and all-one have probability 1/8 each; sd of the frequency is 0.0017
    assert abs((X.sum(1) == 0).mean() - 1 / 8) < 0.008
    assert abs((X.sum(1) == 9).mean() - 1 / 8) < 0.008
    assert abs(ds.max_log_likelihood(X) - (-2.59930)) < 0.01
    np.testing.assert_array_equal(X, ds.bars_and_stripes_sample(3, 40000, seed=1))
    assert not np.array_equal(X, ds.bars_and_stripes_sample(3, 40000, seed=2))
    np.testing.assert_array_equal(ds.bars_and_stripes_sample(3, 5, None), ds.bars_and_stripes_sample(3, 5, 0))


def test_shifting_bar():
    X = ds.shifting_bar()
    assert_binary_distinct(X, 9, 9)
    np.testing.assert_array_equal(X, np.eye(9))                      # one-hot for B=1
    X = ds.shifting_bar(5, 2)
    assert_binary_distinct(X, 5, 5)
    np.testing.assert_array_equal(X[0], [1, 1, 0, 0, 0])
    np.testing.assert_array_equal(X[4], [1, 0, 0, 0, 1])             # wraps around
    assert (ds.shifting_bar(7, 6).sum(1) == 6).all()


def test_diag():
    X = ds.diag()
    assert_binary_distinct(X, 12, 6)
    rows = {tuple(r) for r in X.astype(int)}
    for v in [(0,) * 6, (1,) * 6, (1, 1, 1, 0, 0, 0), (0, 0, 0, 0, 0, 1), (0, 1, 1, 1, 1, 1)]:
        assert v in rows
    assert (np.abs(np.diff(X, axis=1)).sum(1) <= 1).all()         # at most one change of value
    assert ds.diag(1).shape == (2, 1)


def test_ball_1d():
    X = ds.ball_1d()
    assert_binary_distinct(X, 21, 6)
    rows = {tuple(r) for r in X.astype(int)}
    assert (0, 1, 1, 1, 0, 0) in rows and (1,) * 6 in rows and (0, 0, 0, 0, 0, 1) in rows
    assert (0,) * 6 not in rows and (1, 0, 0, 0, 0, 1) not in rows  # non-empty, no wrap-around
    padded = np.pad(X, ((0, 0), (1, 1)))
    assert (np.abs(np.diff(padded, axis=1)).sum(1) == 2).all()     # exactly one block
    np.testing.assert_array_equal(X[:6], np.eye(6))


def test_max_log_likelihood():
    assert ds.max_log_likelihood(ds.bars_and_stripes(3)) == -log(14)
    assert ds.max_log_likelihood(ds.shifting_bar(9, 1)) == -log(9)
    assert ds.max_log_likelihood([[0], [0], [1], [1]]) == pytest.approx(-log(2))
    assert ds.max_log_likelihood([[0], [0], [0], [1]]) == pytest.approx(0.75 * log(0.75) + 0.25 * log(0.25))
    with pytest.raises(ValueError, match="X"):
        ds.max_log_likelihood([0, 1])


@pytest.mark.parametrize(
    "func, kwargs, arg",
    [
        (ds.bars_and_stripes, {"D": 1}, "D"),
        (ds.bars_and_stripes, {"D": 2.0}, "D"),
        (ds.bars_and_stripes, {"D": True}, "D"),
        (ds.bars_and_stripes_sample, {"D": 3, "n": 0, "seed": 0}, "n"),
        (ds.bars_and_stripes_sample, {"D": 3, "n": 5, "seed": -1}, "seed"),
        (ds.shifting_bar, {"N": 9, "B": 9}, "B"),
        (ds.shifting_bar, {"N": 9, "B": 0}, "B"),
        (ds.shifting_bar, {"N": 1}, "N"),
        (ds.diag, {"d": 0}, "d"),
        (ds.ball_1d, {"d": "6"}, "d"),
        (ds.digits, {"binarize": "stochastic"}, "binarize"),
        (ds.mnist, {"split": "valid"}, "split"),
        (ds.mnist, {"binarize": "otsu"}, "binarize"),
        (ds.mnist, {"limit": 0}, "limit"),
        (ds.mnist, {"split": "test", "limit": 10001}, "limit"),
        (ds.mnist, {"binarize": "stochastic", "seed": "a"}, "seed"),
        (ds.binarized_mnist, {"split": "validation"}, "split"),
        (ds.omniglot, {"split": "train"}, "split"),
        (ds.omniglot, {"size": 106}, "size"),
        (ds.omniglot, {"binarize": 0.5}, "binarize"),
        (ds.cbcl, {"photographic": "yes"}, "photographic"),
        (ds.cbcl, {"limit": 2430}, "limit"),
    ],
)
def test_argument_validation(func, kwargs, arg, empty_data):
    # arguments are checked before any file is looked up
    with pytest.raises(ValueError, match=rf"^{arg} must be"):
        func(**kwargs)


# ---------------------------------------------------------------- digits and registry


def test_digits():
    X, y = ds.digits(return_labels=True)
    assert X.shape == (1797, 64) and X.dtype == np.float64 and y.shape == (1797,)
    assert set(np.unique(X)) == {0.0, 1.0} and set(np.unique(y)) == set(range(10))
    grey = ds.digits(binarize=None)
    assert grey.min() == 0.0 and grey.max() == 1.0
    np.testing.assert_array_equal(X, grey >= 0.5)


def test_registry(empty_data):
    assert ds.names() == ["bars_and_stripes", "shifting_bar", "diag", "ball_1d", "digits",
                          "mnist", "binarized_mnist", "omniglot", "cbcl"]
    np.testing.assert_array_equal(ds.load("bars_and_stripes", D=4), ds.bars_and_stripes(4))
    assert ds.load("diag").shape == (12, 6)
    with pytest.raises(ValueError, match="Did you mean 'bars_and_stripes'") as info:
        ds.load("bars_and_stripe")
    assert "binarized_mnist" in str(info.value)
    with pytest.raises(ValueError, match="^name must be one of"):
        ds.available("faces")
    assert ds.available("shifting_bar") and ds.available("digits")
    assert not ds.available("mnist") and not ds.available("cbcl")


def test_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("RBMVIZ_DATA", str(tmp_path / "d"))
    assert ds.data_dir() == tmp_path / "d"
    monkeypatch.delenv("RBMVIZ_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert ds.data_dir() == tmp_path / "cache" / "rbmviz" / "data"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ds.data_dir() == tmp_path / ".cache" / "rbmviz" / "data"


# ---------------------------------------------------------------- missing and corrupt files


def test_missing_file_message(empty_data):
    with pytest.raises(ds.DatasetNotFoundError) as info:
        ds.mnist()
    assert isinstance(info.value, FileNotFoundError)
    msg = str(info.value)
    assert "train-images-idx3-ubyte.gz" in msg
    assert str(empty_data / "mnist" / "train-images-idx3-ubyte.gz") in msg
    assert "RBMVIZ_DATA" in msg and "t10k-labels-idx1-ubyte.gz" in msg and "`mnist/`" in msg


def test_missing_file_default_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("RBMVIZ_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(ds.DatasetNotFoundError, match="RBMVIZ_DATA environment variable is not set") as info:
        ds.cbcl()
    assert str(tmp_path / "rbmviz" / "data" / "cbcl" / "CBCL_Face.mat") in str(info.value)


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.mark.parametrize(
    "relpath, data, call",
    [
        ("mnist/train-images-idx3-ubyte.gz", b"this is not gzip data" * 10, lambda: ds.mnist()),
        ("mnist/t10k-images-idx3-ubyte.gz",  # valid gzip, wrong magic number
         gzip.compress(np.array([2049, 10000, 28, 28], ">u4").tobytes() + bytes(784)),
         lambda: ds.mnist("test")),
        ("mnist/t10k-images-idx3-ubyte.gz",  # right header, truncated pixels
         gzip.compress(np.array([2051, 10000, 28, 28], ">u4").tobytes() + bytes(784)),
         lambda: ds.mnist("test")),
        ("binarized_mnist/binarized_mnist_test.amat.gz",
         gzip.compress(b"0 1 2\n" * 100), lambda: ds.binarized_mnist("test", limit=1)),
        ("omniglot/images_evaluation.npz", b"PK garbage", lambda: ds.omniglot("evaluation")),
        ("cbcl/CBCL_Face.mat", b"MATLAB 5.0 garbage", lambda: ds.cbcl()),
    ],
)
def test_corrupt_file(empty_data, relpath, data, call):
    _write(empty_data / relpath, data)
    with pytest.raises(ValueError, match=Path(relpath).name.replace(".", r"\.")) as info:
        call()
    assert isinstance(info.value, ds.DatasetCorruptError)


# ---------------------------------------------------------------- real files


def test_mnist_train(real_data):
    real_data("mnist")
    X, y = ds.mnist(return_labels=True)
    assert X.shape == (60000, 784) and X.dtype == np.float64 and y.shape == (60000,)
    np.testing.assert_array_equal(y[:6], [5, 0, 4, 1, 9, 2])
    counts = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    np.testing.assert_array_equal(np.bincount(y), counts)
    assert set(np.unique(X)) == {0.0, 1.0}
    assert 0.12 < X.mean() < 0.145


def test_mnist_test_and_limit(real_data):
    real_data("mnist")
    grey, y = ds.mnist("test", binarize=None, return_labels=True)
    assert grey.shape == (10000, 784) and np.bincount(y)[1] == 1135
    assert grey.min() == 0.0 and grey.max() == 1.0
    X = ds.mnist("test", limit=25)
    assert X.shape == (25, 784)
    np.testing.assert_array_equal(X, grey[:25] > 0.5)
    _, y6 = ds.mnist(limit=6, return_labels=True)
    np.testing.assert_array_equal(y6, [5, 0, 4, 1, 9, 2])


def test_mnist_stochastic(real_data):
    real_data("mnist")
    a = ds.mnist("test", binarize="stochastic", seed=7, limit=500)
    assert set(np.unique(a)) == {0.0, 1.0}
    np.testing.assert_array_equal(a, ds.mnist("test", binarize="stochastic", seed=7, limit=500))
    assert not np.array_equal(a, ds.mnist("test", binarize="stochastic", seed=8, limit=500))
    np.testing.assert_array_equal(a[:50], ds.mnist("test", binarize="stochastic", seed=7, limit=50))
    np.testing.assert_array_equal(ds.mnist("test", binarize="stochastic", limit=5),
                                  ds.mnist("test", binarize="stochastic", seed=0, limit=5))
    grey = ds.mnist("test", binarize=None, limit=500)
    assert (a[grey == 0] == 0).all() and (a[grey == 1] == 1).all()
    assert abs(a.mean() - grey.mean()) < 0.005


def test_binarized_mnist(real_data):
    real_data("binarized_mnist")
    X = ds.binarized_mnist("test")
    assert X.shape == (10000, 784) and X.dtype == np.float64
    assert set(np.unique(X)) == {0.0, 1.0}
    assert X.mean() == pytest.approx(0.1325, abs=5e-4)
    assert ds.binarized_mnist("train", limit=100).shape == (100, 784)


def test_omniglot(real_data):
    real_data("omniglot")
    fractions, y = ds.omniglot("evaluation", binarize=None, return_labels=True, limit=45)
    assert fractions.shape == (45, 784) and y.shape == (45,)
    np.testing.assert_array_equal(y, [0] * 20 + [1] * 20 + [2] * 5)
    assert fractions.min() >= 0 and fractions.max() <= 1
    ink = ds.omniglot("evaluation", size=105, binarize=None, limit=45)
    assert set(np.unique(ink)) == {0.0, 1.0}
    assert fractions.mean() == pytest.approx(ink.mean(), rel=1e-9)    # area averaging keeps the ink
    X = ds.omniglot("evaluation", limit=45)
    np.testing.assert_array_equal(X, fractions >= ds.OMNIGLOT_THRESHOLD)
    assert 0.06 < X.mean() < 0.2
    s = ds.omniglot("evaluation", size=14, binarize="stochastic", seed=3, limit=10)
    assert s.shape == (10, 196) and set(np.unique(s)) == {0.0, 1.0}
    again = ds.omniglot("evaluation", size=14, binarize="stochastic", seed=3, limit=10)
    np.testing.assert_array_equal(s, again)


def test_omniglot_background(real_data):
    real_data("omniglot")
    X, y = ds.omniglot(return_labels=True)
    assert X.shape == (19280, 784) and y.max() == 963
    assert 0.08 < X.mean() < 0.13


def test_cbcl(real_data):
    real_data("cbcl")
    X = ds.cbcl()
    assert X.shape == (2429, 361) and X.dtype == np.float64
    assert X.min() >= 1 / 256 and X.max() <= 1
    assert X.mean() == pytest.approx(0.503, abs=1e-3)
    np.testing.assert_array_equal(ds.cbcl(photographic=True), 1 - X)
    np.testing.assert_array_equal(ds.cbcl(limit=3), X[:3])
    # upright: the mean face is left-right symmetric, not top-bottom symmetric
    mean = X.mean(0).reshape(19, 19)
    assert np.abs(mean - mean[:, ::-1]).mean() < 0.5 * np.abs(mean - mean[::-1]).mean()


# ----------------------------------------------------------------------------- load_split


def test_load_split_rules_without_files(empty_data):
    """digits: 'all' / 'train' / 'test' by the held-out rule (last floor(0.2 n) rows, or
    test_rows), binarised as the digits loader does, labels following the rows."""
    X, y = ds.digits(return_labels=True)
    assert ds.split_rows("digits", "train") == 1438 and ds.split_rows("digits", "test") == 359
    assert ds.split_rows("cbcl", "all") == 2429 and ds.split_rows("cbcl", "test") == 485
    assert ds.split_rows("mnist", "train") == 60000 and ds.split_rows("omniglot", "test") == 13180
    np.testing.assert_array_equal(ds.load_split("digits", "all"), X)
    np.testing.assert_array_equal(ds.load_split("digits", "train"), X[:1438])
    tr, ytr = ds.load_split("digits", "test", test_rows=200, return_labels=True)
    np.testing.assert_array_equal(tr, X[-200:])
    np.testing.assert_array_equal(ytr, y[-200:])
    np.testing.assert_array_equal(ds.load_split("digits", "train", limit=5), X[:5])
    assert ds.load_split("digits", "test", limit=10**6).shape == (359, 64)     # at most
    grey = ds.load_split("digits", "all", binarize=None)
    np.testing.assert_array_equal(grey, ds.digits(binarize=None))


def test_load_split_seeded_subset_and_stochastic_draw(empty_data):
    """subset_seed keeps the first `limit` rows of a seeded permutation of the split; the
    stochastic draw of the digits covers every row before the split, from `seed`."""
    X, y = ds.digits(return_labels=True)
    order = np.random.default_rng(7).permutation(1597)[:30]
    sub, ysub = ds.load_split("digits", "train", limit=30, test_rows=200, subset_seed=7,
                              return_labels=True)
    np.testing.assert_array_equal(sub, X[:1597][order])
    np.testing.assert_array_equal(ysub, y[:1597][order])
    grey = ds.digits(binarize=None)
    draw = (np.random.default_rng(3).random(grey.shape) < grey).astype(np.float64)
    np.testing.assert_array_equal(ds.load_split("digits", "test", binarize="stochastic", seed=3),
                                  draw[1438:])
    assert not np.array_equal(ds.load_split("digits", "all", binarize="stochastic", seed=4), draw)


@pytest.mark.parametrize("kwargs, match", [
    (dict(name="faces"), "name must be one of"),
    (dict(name="digits", split="valid"), "split must be one of"),
    (dict(name="mnist", split="all"), "split must be one of"),
    (dict(name="digits", binarize="half"), "binarize must be one of"),
    (dict(name="digits", limit=0), "limit must be None or an integer >= 1"),
    (dict(name="digits", limit=2.5), "limit must be None or an integer >= 1"),
    (dict(name="digits", test_rows=1797), r"test_rows must be an integer in \[1, 1796\]"),
    (dict(name="cbcl", return_labels=True), "'cbcl' has no labels"),
])
def test_load_split_refuses_bad_arguments(kwargs, match, empty_data):
    with pytest.raises(ValueError, match=match):
        ds.load_split(**kwargs)


def test_load_split_of_the_files(real_data):
    """The file data sets: the official splits (Omniglot's also as train/test), the loaders'
    binarisation and seed, the first rows read alone; CBCL's faces binarised at 0.5."""
    real_data("mnist")
    X, y = ds.mnist("test", return_labels=True, limit=50)
    got, ygot = ds.load_split("mnist", "test", limit=50, return_labels=True)
    np.testing.assert_array_equal(got, X)
    np.testing.assert_array_equal(ygot, y)
    np.testing.assert_array_equal(
        ds.load_split("mnist", limit=40, binarize="stochastic", seed=2),
        ds.mnist(limit=40, binarize="stochastic", seed=2))
    np.testing.assert_array_equal(ds.load_split("mnist", limit=20, binarize=None),
                                  ds.mnist(limit=20, binarize=None))
    real_data("omniglot")
    np.testing.assert_array_equal(ds.load_split("omniglot", "test", limit=10),
                                  ds.omniglot("evaluation", limit=10))
    real_data("cbcl")
    faces = ds.cbcl()
    np.testing.assert_array_equal(ds.load_split("cbcl", "all", binarize=None, limit=30), faces[:30])
    np.testing.assert_array_equal(ds.load_split("cbcl", "test"),
                                  (faces[2429 - 485:] >= 0.5).astype(np.float64))


def test_the_front_ends_load_through_load_split(real_data, monkeypatch):
    """The settings, the TAP tab, the TAP presets and the TAP reproduction load their rows
    through rbmviz.datasets.load_split (one place for splits, binarisation and limits)."""
    from rbmviz import settings
    from rbmviz.live.tap import tap_data
    from rbmviz.reproduce import tap_run
    from rbmviz.tap import presets as tap_presets

    real_data("mnist")
    calls = []
    inner = ds.load_split

    def spy(name, split="train", **kw):
        calls.append((name, split))
        return inner(name, split, **kw)

    monkeypatch.setattr(ds, "load_split", spy)
    settings.load_data(settings.DataSettings(dataset="digits", limit=20))
    tap_data("mnist", 20)
    tap_presets.load_data("real-mnist-100", "test", 5)
    tap_run._load_data({"dataset": "binary-mnist", "samples": 10, "test_samples": 5}, None)
    assert calls == [("digits", "train"), ("digits", "test"), ("mnist", "train"),
                     ("mnist", "test"), ("mnist", "test"), ("mnist", "train"), ("mnist", "test")]
