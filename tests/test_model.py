"""The RBM object: energies against brute force, conditionals, initialisation, save/load,
pseudo-likelihood, and every documented bad input."""
import math
import os

import numpy as np
import pytest
from brute import joint_log_weights, logsumexp, visible_marginal
from brute import random_rbm

import rbmviz
from rbmviz import evaluate as ev
from rbmviz.runs import Run

BS = rbmviz.datasets.bars_and_stripes(3)


def test_shapes_and_dtypes():
    rbm = rbmviz.RBM(784, 20, seed=0)
    assert rbm.W.shape == (784, 20) and rbm.b.shape == (784,) and rbm.c.shape == (20,)
    assert rbm.W.dtype == np.float64
    assert rbmviz.RBM(5, 3, dtype="float32").W.dtype == np.float32
    assert rbm.W.std() == pytest.approx(0.01, rel=0.05)


def test_initialisations():
    u = rbmviz.RBM(6, 6, seed=0, init="uniform", scale=0.5)
    assert np.abs(u.W).max() <= 0.5 and np.abs(u.W).max() > 0.4
    assert (u.b == 0).all() and (u.c == 0).all()
    z = rbmviz.RBM(6, 6, init="zeros")
    assert (z.W == 0).all()
    X = np.array([[1, 0, 1], [1, 0, 0], [1, 1, 0], [1, 0, 0]], float)
    r = rbmviz.RBM(3, 2, data=X)
    p = np.clip(X.mean(0), 1e-3, 1 - 1e-3)
    np.testing.assert_allclose(r.b, np.log(p / (1 - p)))
    assert rbmviz.RBM(4, 2, seed=3) == rbmviz.RBM(4, 2, seed=3)
    assert rbmviz.RBM(4, 2, seed=3) != rbmviz.RBM(4, 2, seed=4)


def test_free_energy_and_energy_match_brute_force():
    rbm = random_rbm(4, 3, scale=2.0, seed=1)
    L = joint_log_weights(rbm)                      # −E(v, h)
    V, H = ev.all_states(4), ev.all_states(3)
    np.testing.assert_allclose(-rbm.free_energy(V), logsumexp(L, axis=1), rtol=1e-12)
    vi, hi = np.meshgrid(np.arange(16), np.arange(8), indexing="ij")
    E = rbm.energy(V[vi.ravel()], H[hi.ravel()])
    np.testing.assert_allclose(-E, L.ravel(), rtol=1e-12, atol=1e-12)
    # the hidden free energy sums out the visible layer
    np.testing.assert_allclose(-rbm.hidden_free_energy(H), logsumexp(L, axis=0), rtol=1e-12)


def test_conditionals_match_brute_force():
    rbm = random_rbm(3, 2, scale=1.5, seed=2)
    L = joint_log_weights(rbm)
    V, H = ev.all_states(3), ev.all_states(2)
    P_h_given_v = np.exp(L - logsumexp(L, axis=1)[:, None])           # (8, 4)
    np.testing.assert_allclose(rbm.hidden_probabilities(V), P_h_given_v @ H, rtol=1e-12)
    P_v_given_h = np.exp(L - logsumexp(L, axis=0)[None, :])           # (8, 4)
    np.testing.assert_allclose(rbm.visible_probabilities(H), P_v_given_h.T @ V, rtol=1e-12)


def test_samplers_are_reproducible_and_unbiased():
    rbm = random_rbm(5, 4, scale=1.0, seed=3)
    V = np.ones((20000, 5))
    H1, H2 = rbm.sample_hidden(V, seed=1), rbm.sample_hidden(V, seed=1)
    assert np.array_equal(H1, H2)
    np.testing.assert_allclose(H1.mean(0), rbm.hidden_probabilities(V[:1])[0], atol=0.02)
    G1 = rbm.gibbs(V[:50], k=3, seed=5)
    assert np.array_equal(G1, rbm.gibbs(V[:50], k=3, seed=5))
    assert not np.array_equal(G1, rbm.gibbs(V[:50], k=3, seed=6))


def test_long_gibbs_chains_sample_the_model_distribution():
    rbm = random_rbm(3, 2, scale=1.0, seed=4)
    S = rbm.gibbs(np.zeros((40000, 3)), k=30, seed=0)
    idx = (S.astype(int) << np.array([2, 1, 0])).sum(1)
    freq = np.bincount(idx, minlength=8) / len(S)
    np.testing.assert_allclose(freq, visible_marginal(rbm), atol=0.01)


def test_pseudo_likelihood_matches_brute_force_over_all_sites():
    rbm = random_rbm(5, 3, scale=1.5, seed=6)
    p = visible_marginal(rbm)
    V = ev.all_states(5)[[1, 6, 17, 30]]
    idx = (V.astype(int) << np.arange(4, -1, -1)).sum(1)
    brute = []
    for row, i in zip(V, idx):
        total = 0.0
        for site in range(5):
            j = i ^ (1 << (4 - site))
            total += math.log(p[i] / (p[i] + p[j]))
        brute.append(total)
    assert ev.pseudo_log_likelihood(rbm, V) == pytest.approx(np.mean(brute), rel=1e-12)


def test_reconstruction_error_is_zero_for_a_perfect_autoencoder():
    rbm = rbmviz.RBM(2, 2, init="zeros")
    rbm.set_params(W=np.eye(2) * 40, b=[-20, -20], c=[-20, -20])
    assert ev.reconstruction_error(rbm, np.array([[1.0, 0.0], [0.0, 1.0]])) < 1e-12
    assert ev.reconstruction_error(rbmviz.RBM(2, 2, init="zeros"), np.eye(2)) == pytest.approx(0.25)


# ---------------------------------------------------------------- save / load
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_save_load_round_trip_is_exact(tmp_path, dtype):
    rbm = random_rbm(7, 5, scale=3.0, seed=7, dtype=dtype)
    path = rbm.save(tmp_path / "m")
    assert path.name == "m.npz"
    back = rbmviz.RBM.load(path)
    assert back == rbm and back.W.dtype == np.dtype(dtype)
    assert os.listdir(tmp_path) == ["m.npz"]                 # no temp file left behind


def test_save_never_overwrites_silently(tmp_path):
    a, b = random_rbm(3, 2, seed=1), random_rbm(3, 2, seed=2)
    a.save(tmp_path / "m.npz")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        b.save(tmp_path / "m.npz")
    assert rbmviz.RBM.load(tmp_path / "m.npz") == a
    b.save(tmp_path / "m.npz", overwrite=True)
    assert rbmviz.RBM.load(tmp_path / "m.npz") == b


def test_load_rejects_corrupt_foreign_and_newer_files(tmp_path):
    (tmp_path / "corrupt.npz").write_bytes(b"PK\x03\x04 definitely not a zip")
    with pytest.raises(ValueError, match="corrupt.npz.*not a readable"):
        rbmviz.RBM.load(tmp_path / "corrupt.npz")
    np.savez(tmp_path / "foreign.npz", weights=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="not an rbmviz RBM file"):
        rbmviz.RBM.load(tmp_path / "foreign.npz")
    rbm = random_rbm(3, 2)
    path = rbm.save(tmp_path / "new.npz")
    with np.load(path) as z:
        arrays = dict(z)
    arrays["format_version"] = np.array(99)
    np.savez(tmp_path / "newer.npz", **arrays)
    with pytest.raises(ValueError, match="format version 99, newer"):
        rbmviz.RBM.load(tmp_path / "newer.npz")
    arrays["format_version"] = np.array(1)
    arrays["b"] = np.zeros(5)
    np.savez(tmp_path / "shapes.npz", **arrays)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        rbmviz.RBM.load(tmp_path / "shapes.npz")
    with pytest.raises(FileNotFoundError):
        rbmviz.RBM.load(tmp_path / "missing.npz")


def test_load_never_unpickles(tmp_path):
    rbm = random_rbm(3, 2)
    path = rbm.save(tmp_path / "m.npz")
    with np.load(path) as z:
        arrays = dict(z)
    arrays["W"] = np.array([{"evil": 1}], dtype=object)
    np.savez(tmp_path / "pickled.npz", **arrays)
    with pytest.raises(ValueError):
        rbmviz.RBM.load(tmp_path / "pickled.npz")


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("data,match", [
    (np.array([[0.0, 0.5, 1.0] * 3]), r"data must be binary .* 0\.5 at row 0, column 1"),
    (np.array([[0.0, np.nan, 1.0] * 3]), r"data contains NaN"),
    (np.zeros((4, 8)), r"data has 8 columns but the model has n_visible=9"),
    (np.zeros((0, 9)), r"data is empty"),
    (np.zeros(9 * 4), r"data must be 2-D"),
])
def test_bad_data_is_refused_before_any_kernel(data, match):
    with pytest.raises(ValueError, match=match):
        rbmviz.train(rbmviz.RBM(9, 4), data, "cd", epochs=1)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(k=0), ValueError, r"k must be >= 1"),
    (dict(k=1.5), TypeError, r"k must be an integer"),
    (dict(learning_rate=0.0), ValueError, r"learning_rate must be > 0"),
    (dict(learning_rate=-1), ValueError, r"learning_rate must be > 0"),
    (dict(learning_rate=float("nan")), ValueError, r"learning_rate must be finite"),
    (dict(batch_size=0), ValueError, r"batch_size must be >= 1"),
    (dict(batch_size=15), ValueError, r"batch_size=15 is larger than the data \(14 rows\)"),
    (dict(momentum=1.0), ValueError, r"momentum must be < 1"),
    (dict(weight_decay=-0.1), ValueError, r"weight_decay must be >= 0"),
    (dict(seed=-1), ValueError, r"seed must be >= 0"),
    (dict(epochs=-1), ValueError, r"epochs must be >= 0"),
    (dict(eval_every=0), ValueError, r"eval_every must be >= 1"),
    (dict(n_chains=4), TypeError, r"algorithm 'cd' does not take setting\(s\) \['n_chains'\]"),
    (dict(algorithm="cdd"), ValueError, r"unknown algorithm 'cdd'.*did you mean 'cd'"),
    (dict(metrics=["atll"]), ValueError, r"unknown metric 'atll'"),
])
def test_bad_settings_name_the_argument(kwargs, exc, match):
    kwargs = {"epochs": 1, **kwargs}
    with pytest.raises(exc, match=match):
        Run(rbmviz.RBM(9, 4), BS, **kwargs)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="n_visible must be >= 1"):
        rbmviz.RBM(0, 3)
    with pytest.raises(ValueError, match="unknown visible unit type 'gaussian'"):
        rbmviz.RBM(3, 3, visible="gaussian")
    with pytest.raises(ValueError, match="unknown dtype 'float16'"):
        rbmviz.RBM(3, 3, dtype="float16")
    with pytest.raises(ValueError, match="unknown init 'xavier'"):
        rbmviz.RBM(3, 3, init="xavier")
    with pytest.raises(ValueError, match="name must be one of .*Did you mean 'mnist'"):
        rbmviz.datasets.load("mnsit")
    with pytest.raises(ValueError, match="W must have shape"):
        rbmviz.RBM(3, 2).set_params(W=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="exact log-likelihood needs"):
        Run(rbmviz.RBM(40, 30), np.zeros((5, 40)), metrics=["train_ll"], epochs=1)
    with pytest.raises(ValueError, match="'test_ll' needs test_data"):
        Run(rbmviz.RBM(9, 4), BS, metrics=["test_ll"], epochs=1)


# ---------------------------------------------------------------- unit priors (rbmviz.units)
def _tap_models():
    tg = rbmviz.units.TruncatedGaussian(4, V=[0.5, 1.0, 2.0, 3.0], interval=(-1.0, 2.0))
    return [
        rbmviz.RBM(4, 3, visible="truncated_gaussian", seed=0),
        rbmviz.RBM(4, 3, visible=tg, hidden="truncated_gauss_bernoulli", seed=1),
        rbmviz.RBM(4, 3, hidden=rbmviz.units.TruncatedGaussBernoulli(3, rho=[0.1, 0.5, 0.9], V=-0.5,
                                                                      interval=(-2.0, 0.5)), seed=2),
    ]


def test_unit_types_construct_and_keep_their_parameters():
    rbm = rbmviz.RBM(5, 3)
    assert rbm.visible == rbm.hidden == "bernoulli" and rbm.is_binary
    assert isinstance(rbm.visible_prior, rbmviz.units.Bernoulli) and rbm.hidden_prior.n == 3
    tg, tgb, mixed = _tap_models()
    assert tg.visible == "truncated_gaussian" and tg.hidden == "bernoulli" and not tg.is_binary
    assert tg.visible_prior.interval == (0.0, 1.0) and np.array_equal(tg.visible_prior.V, np.ones(4))
    assert tgb.hidden_prior.rho.shape == (3,) and tgb.visible_prior.V[2] == 2.0
    assert mixed.visible == "bernoulli" and mixed.hidden_prior.interval == (-2.0, 0.5)
    # a prior instance is copied, not shared
    prior = rbmviz.units.TruncatedGaussian(4)
    m = rbmviz.RBM(4, 2, visible=prior)
    prior.V[:] = 7.0
    assert np.array_equal(m.visible_prior.V, np.ones(4))
    # copy() is deep, == compares the priors
    c = tgb.copy()
    assert c == tgb
    c.hidden_prior.rho[0] = 0.3
    assert c != tgb and tgb.hidden_prior.rho[0] == 0.5
    assert "TruncatedGaussian" in repr(tg)
    # the bias is the prior's U: kernel arguments come from (prior, bias)
    assert np.array_equal(tg.visible_prior.kernel_args(tg.b)[1], tg.b)


@pytest.mark.parametrize("k", range(3))
def test_save_load_round_trips_the_priors(tmp_path, k):
    rbm = _tap_models()[k]
    rbm.b[:] = np.linspace(-1, 1, 4)
    path = rbm.save(tmp_path / "tap")
    with np.load(path) as z:
        assert int(z["format_version"]) == rbmviz.model.FORMAT_VERSION == 2
    back = rbmviz.RBM.load(path)
    assert back == rbm
    for layer in ("visible_prior", "hidden_prior"):
        a, b = getattr(back, layer), getattr(rbm, layer)
        assert type(a) is type(b) and a.to_dict().keys() == b.to_dict().keys()
        assert all(np.array_equal(a.to_dict()[key], b.to_dict()[key]) for key in a.to_dict())


def test_version_1_files_still_load_as_bernoulli(tmp_path):
    rbm = random_rbm(4, 3, seed=3)
    np.savez(tmp_path / "v1.npz", format=np.array("rbmviz.RBM"), format_version=np.array(1),
             visible=np.array("bernoulli"), hidden=np.array("bernoulli"), W=rbm.W, b=rbm.b, c=rbm.c)
    back = rbmviz.RBM.load(tmp_path / "v1.npz")
    assert back == rbm and back.is_binary
    assert isinstance(back.visible_prior, rbmviz.units.Bernoulli)


def test_load_rejects_bad_prior_parameters(tmp_path):
    rbm = _tap_models()[1]
    path = rbm.save(tmp_path / "m")
    with np.load(path) as z:
        arrays = dict(z)
    bad = dict(arrays, hidden_prior_rho=np.array([0.5, 1.5, 0.5]))
    np.savez(tmp_path / "rho.npz", **bad)
    with pytest.raises(ValueError, match="invalid hidden prior parameters: rho must be < 1"):
        rbmviz.RBM.load(tmp_path / "rho.npz")
    bad = dict(arrays, visible_prior_V=np.ones(5))
    np.savez(tmp_path / "v.npz", **bad)
    with pytest.raises(ValueError, match=r"invalid visible prior parameters: V must .* shape \(4,\)"):
        rbmviz.RBM.load(tmp_path / "v.npz")
    bad = dict(arrays, visible=np.array("gaussian"))
    np.savez(tmp_path / "name.npz", **bad)
    with pytest.raises(ValueError, match="unknown visible unit type 'gaussian'"):
        rbmviz.RBM.load(tmp_path / "name.npz")


def test_binary_only_methods_refuse_other_unit_types():
    tg, tgb, mixed = _tap_models()
    V = np.full((2, 4), 0.5)
    with pytest.raises(ValueError, match=r"RBM.free_energy needs Bernoulli.*visible units are 'truncated_gaussian'"):
        tg.free_energy(V)
    with pytest.raises(ValueError, match="hidden units are 'truncated_gauss_bernoulli'"):
        mixed.free_energy(np.zeros((2, 4)))
    for call in (lambda m: m.energy(np.zeros((1, 4)), np.zeros((1, 3))),
                 lambda m: m.hidden_free_energy(np.zeros((1, 3))),
                 lambda m: m.hidden_probabilities(V), lambda m: m.visible_probabilities(np.zeros((1, 3))),
                 lambda m: m.sample_hidden(V, seed=0), lambda m: m.gibbs(np.zeros((1, 4)))):
        with pytest.raises(ValueError, match="needs Bernoulli"):
            call(tgb)


def test_unit_type_bad_inputs():
    with pytest.raises(ValueError, match="unknown hidden unit type 'gauss'"):
        rbmviz.RBM(3, 3, hidden="gauss")
    with pytest.raises(ValueError, match="visible unit type prior has n=5 units, expected 3"):
        rbmviz.RBM(3, 2, visible=rbmviz.units.TruncatedGaussian(5))
    with pytest.raises(TypeError, match="hidden unit type must be one of"):
        rbmviz.RBM(3, 2, hidden=1.0)
    with pytest.raises(ValueError, match=r"data has 1\.5 at row 0, column 1, outside the support"):
        rbmviz.RBM(3, 2, visible="truncated_gaussian", data=[[0.5, 1.5, 0.0]])
    m = rbmviz.RBM(3, 2, visible="truncated_gaussian", data=[[0.5, 0.25, 0.0]])
    assert (m.b == 0).all()


# ---------------------------------------------------------------- load validation (issue 11)
def _saved_arrays(tmp_path, rbm=None):
    rbm = random_rbm(4, 3, seed=5) if rbm is None else rbm
    with np.load(rbm.save(tmp_path / "good.npz")) as z:
        return rbm, dict(z)


@pytest.mark.parametrize("key,value,match", [
    ("W", lambda a: np.where(np.eye(4, 3, dtype=bool), np.nan, a["W"]), r"'W' contains NaN or inf .*index \(0, 0\)"),
    ("b", lambda a: np.r_[a["b"][:-1], np.inf], r"'b' contains NaN or inf .*index \(3,\)"),
    ("c", lambda a: np.r_[-np.inf, a["c"][1:]], r"'c' contains NaN or inf"),
    ("c", lambda a: np.zeros(3, dtype=np.int64), r"'c' has dtype int64.*float64 or float32"),
    ("W", lambda a: a["W"].astype(np.float16), r"'W' has dtype float16"),
    ("b", lambda a: a["b"].astype(np.float32), r"share one float dtype.*'b': 'float32'"),
    ("b", lambda a: np.array(["x"] * 4), r"'b' has dtype <U1"),
    ("W", lambda a: np.zeros((4, 0)), r"'W' must be 2-D .*at least one unit.*\(4, 0\)"),
    ("W", lambda a: np.zeros(4), r"'W' must be 2-D"),
    ("c", lambda a: np.zeros((3, 1)), r"inconsistent shapes: array 'c' has shape \(3, 1\)"),
    ("format_version", lambda a: np.array("two"), r"'format_version' must be a single integer"),
    ("format_version", lambda a: np.array([1, 2]), r"'format_version' must be a single integer"),
    ("format_version", lambda a: np.array(2.0), r"'format_version' must be a single integer"),
    ("format_version", lambda a: np.array(0), r"invalid format version 0"),
    ("format", lambda a: np.array(b"rbmviz.RBM"), r"not an rbmviz RBM file"),
    ("visible", lambda a: np.array(["bernoulli"]), r"array 'visible' names an unknown visible unit type"),
    ("hidden_prior_V", lambda a: np.array(["a", "b", "c"]), r"'hidden_prior_V' must hold finite numbers"),
])
def test_load_validates_every_array_and_names_file_and_array(tmp_path, key, value, match):
    """A model file with a bad array fails in RBM.load with a ValueError naming the file and
    the array — not later inside a kernel (today NaN, an int64 ``c`` and a float16 ``W``
    load silently)."""
    _, arrays = _saved_arrays(tmp_path)
    arrays[key] = value(arrays)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=match) as info:
        rbmviz.RBM.load(tmp_path / "bad.npz")
    assert "bad.npz" in str(info.value)


def test_load_reports_a_missing_format_version(tmp_path):
    _, arrays = _saved_arrays(tmp_path)
    del arrays["format_version"]
    np.savez(tmp_path / "nover.npz", **arrays)
    with pytest.raises(ValueError, match="nover.npz has no 'format_version'"):
        rbmviz.RBM.load(tmp_path / "nover.npz")


def test_big_endian_files_load_exactly_in_native_order_and_train(tmp_path):
    """Arrays written big-endian (another machine) load with the same values in native byte
    order; the Numba kernels then run on them (today they fail inside Numba)."""
    rbm, arrays = _saved_arrays(tmp_path)
    for key in ("W", "b", "c"):
        arrays[key] = arrays[key].astype(arrays[key].dtype.newbyteorder(">"))
    np.savez(tmp_path / "be.npz", **arrays)
    back = rbmviz.RBM.load(tmp_path / "be.npz")
    assert all(a.dtype.isnative and a.dtype == np.float64 for a in back.params)
    assert back == rbm
    assert ev.log_partition_exact(back) == ev.log_partition_exact(rbm)
    X = rbmviz.datasets.bars_and_stripes(2)
    r1 = rbmviz.train(back, X, "cd", epochs=3, batch_size=2, seed=1, metrics=["weight_norm"], eval_every=1)
    r2 = rbmviz.train(rbm, X, "cd", epochs=3, batch_size=2, seed=1, metrics=["weight_norm"], eval_every=1)
    assert back == rbm and list(r1.weight_norm) == list(r2.weight_norm)


def test_load_path_checks(tmp_path):
    rbm = random_rbm(3, 2, seed=1)
    rbm.save(tmp_path / "m")
    assert rbmviz.RBM.load(tmp_path / "m") == rbm            # the name save() was given
    with pytest.raises(TypeError, match="path must be a file path"):
        rbmviz.RBM.load(123)
    with pytest.raises(ValueError, match="is a directory"):
        rbmviz.RBM.load(tmp_path)
    with pytest.raises(TypeError, match="path must be a file path"):
        rbm.save(None)
    np.save(tmp_path / "plain.npy", np.zeros(3))
    with pytest.raises(ValueError, match="plain.npy"):
        rbmviz.RBM.load(tmp_path / "plain.npy")
