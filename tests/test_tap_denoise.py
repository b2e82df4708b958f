"""Denoising a binary symmetric channel (Tramel et al. 2018 Sec. VII.4.1): channel, OPE, 1-NN,
MCC and the TAP denoiser."""
import numpy as np
import pytest

from rbmviz.tap import denoising as dn


def _images(n=40, N=16, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, N)) < rng.uniform(0.1, 0.9, N)).astype(float)


# ---------------------------------------------------------------------------- channel
def test_corrupt_flip_rate_nested_and_reproducible():
    X = _images(400, 50)
    Y1 = dn.corrupt(X, 0.1, seed=3)
    Y2 = dn.corrupt(X, 0.3, seed=3)
    assert np.array_equal(Y1, dn.corrupt(X, 0.1, seed=3))
    f1, f2 = Y1 != X, Y2 != X
    assert abs(f1.mean() - 0.1) < 0.01 and abs(f2.mean() - 0.3) < 0.015
    assert not np.any(f1 & ~f2)                         # nested noise (common random numbers)
    assert np.array_equal(dn.corrupt(X, 0.0, seed=1), X)
    assert not np.array_equal(dn.corrupt(X, 0.1, seed=4), Y1)


@pytest.mark.parametrize("p", [-0.01, 0.51, 1.0, float("nan")])
def test_bad_p(p):
    X = _images(3, 4)
    for fn in (lambda: dn.corrupt(X, p), lambda: dn.channel_field(X, p),
               lambda: dn.ope(X, p, np.full(4, 0.5)),
               lambda: dn.denoise(None, X, p, method="ope", train=X)):
        with pytest.raises(ValueError, match="p"):
            fn()
    with pytest.raises(TypeError, match="p"):
        dn.corrupt(X, "0.1")


def test_bad_input():
    with pytest.raises(ValueError, match="binary"):
        dn.corrupt(np.full((2, 3), 0.5), 0.1)
    X = _images(5, 4)
    with pytest.raises(ValueError, match="method"):
        dn.denoise(None, X, 0.1, method="median", train=X)
    with pytest.raises(ValueError, match="train"):
        dn.denoise(None, X, 0.1, method="nn")
    with pytest.raises(ValueError, match="marginals"):
        dn.ope(X, 0.1, np.full(3, 0.5))
    with pytest.raises(ValueError, match="inside"):
        dn.ope(X, 0.1, np.array([0.0, 0.5, 0.5, 0.5]))


def test_channel_field_sign_and_bayes():
    """D_i = (2y−1) ln((1−p)/p) (errata: eq. 44 sign): P(y|x) ∝ exp(D·x) for every x."""
    p = 0.2
    y = np.array([1.0, 0.0, 1.0])
    D = dn.channel_field(y, p)
    assert D[0] > 0 > D[1]
    xs = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], float)
    lik = np.prod(np.where(xs == y, 1 - p, p), axis=1)
    ratio = lik / np.exp(xs @ D)
    assert np.allclose(ratio, ratio[0], rtol=1e-13)
    assert np.all(dn.channel_field(y, 0.5) == 0)


# ---------------------------------------------------------------------------- OPE
def test_ope_limits_and_bayes_rule():
    X = _images(50, 12)
    m = dn.data_marginals(X)
    Y = dn.corrupt(X, 0.15, seed=1)
    assert np.array_equal(dn.ope(Y, 0.0, m), Y)                       # p = 0: the observation
    assert np.allclose(dn.ope(Y, 0.5, m), np.broadcast_to(m, Y.shape), atol=0)   # p = 0.5: marginals
    # direct Bayes rule per pixel
    p = 0.15
    post = m * np.where(Y == 1, 1 - p, p)
    post = post / (post + (1 - m) * np.where(Y == 1, p, 1 - p))
    assert np.allclose(dn.ope(Y, p, m), post, atol=1e-14)


def test_data_marginals_clipped():
    X = np.array([[1, 0, 1], [1, 0, 0]], float)
    assert np.allclose(dn.data_marginals(X, eps=1e-3), [1 - 1e-3, 1e-3, 0.5])


# ---------------------------------------------------------------------------- 1-NN
def test_nearest_neighbour_hamming_brute_force():
    rng = np.random.default_rng(2)
    T = (rng.random((300, 30)) < 0.4).astype(float)
    Y = (rng.random((37, 30)) < 0.4).astype(float)
    est, idx = dn.nearest_neighbour(Y, T, chunk=8, return_index=True)
    d = np.abs(Y[:, None, :] - T[None, :, :]).sum(-1)
    assert np.array_equal(idx, d.argmin(axis=1))                     # first index on ties
    assert np.array_equal(est, T[idx])
    assert np.array_equal(dn.nearest_neighbour(T[:5], T), T[:5])      # training images map to themselves


# ---------------------------------------------------------------------------- MCC
def test_mcc_hand_computed():
    truth = np.array([1, 1, 1, 0, 0, 0, 0, 0], float)
    est = np.array([1, 1, 0, 1, 0, 0, 0, 0], float)
    # TP=2 TN=4 FP=1 FN=1: (8 − 1)/sqrt(3·3·5·5) = 7/15
    assert dn.mcc(est, truth) == pytest.approx(7 / 15, abs=1e-15)
    assert dn.mcc(truth, truth) == 1.0
    assert dn.mcc(1 - truth, truth) == -1.0
    assert dn.mcc(np.zeros(8), truth) == 0.0                          # undefined → 0
    from sklearn.metrics import matthews_corrcoef
    rng = np.random.default_rng(0)
    E = (rng.random((20, 30)) < 0.5).astype(float)
    T = (rng.random((20, 30)) < 0.5).astype(float)
    ref = [matthews_corrcoef(T[i], E[i]) for i in range(20)]
    assert np.allclose(dn.mcc(E, T), ref, atol=1e-14)
    with pytest.raises(ValueError, match="shape|columns"):
        dn.mcc(E[:, :5], T)


# ---------------------------------------------------------------------------- baselines' curve
def test_denoise_baselines_at_p0_and_curve():
    X = _images(60, 16, seed=5)
    Xtest = _images(20, 16, seed=6)
    for method in ("ope",):
        assert np.array_equal(dn.denoise(None, Xtest, 0.0, method=method, train=X), Xtest)
    df = dn.denoising_curve(None, Xtest, [0.0, 0.1, 0.3, 0.5], train=X, methods=("ope", "nn"),
                            seed=1)
    assert list(df.columns[:3]) == ["p", "method", "mcc"]
    ope = df[df.method == "ope"].set_index("p").mcc
    assert ope[0.0] == 1.0
    assert ope[0.1] > ope[0.3] > ope[0.5] - 1e-12                    # degrades with noise
    assert set(df.n_images) == {20}


# ---------------------------------------------------------------------------- TAP denoiser
def test_tap_denoise_p0_returns_input_and_bad_model(rbm_factory):
    rbm = rbm_factory(16, 5, seed=0)
    X = _images(10, 16)
    for method in ("tap", "ope"):
        assert np.array_equal(dn.denoise(rbm, X, 0.0, method=method, train=X), X)
    import rbmviz
    tg = rbmviz.RBM(16, 3, visible="truncated_gaussian")
    with pytest.raises(ValueError, match="Bernoulli"):
        dn.denoise(tg, X, 0.1, train=X)
    with pytest.raises(ValueError, match="RBM"):
        dn.denoise(None, X, 0.1, train=X)


def test_tap_denoiser_without_couplings_is_the_ope():
    """W = 0 and b = logit(m): the TAP fixed point is a^v = σ(b + D) — exactly the OPE (eq. 46)."""
    import rbmviz
    X = _images(80, 16, seed=3)
    m = dn.data_marginals(X)
    rbm = rbmviz.RBM(16, 4, init="zeros")
    rbm.b[:] = np.log(m) - np.log1p(-m)
    Y = dn.corrupt(X[:20], 0.2, seed=0)
    means = dn.tap_means(rbm, Y, 0.2, m, tol=1e-28, max_iter=200)
    assert np.allclose(means, dn.ope(Y, 0.2, m), atol=1e-12, rtol=0)


def test_tap_beats_ope_on_bars_and_stripes():
    """A model of bars & stripes 4×4 denoises better than the factorised prior at small p (Fig. 8)."""
    import rbmviz
    X = rbmviz.datasets.bars_and_stripes(4)
    rbm = rbmviz.RBM(16, 16, seed=0, scale=0.1, data=X)
    rbmviz.train(rbm, X, "pcd", epochs=400, batch_size=10, learning_rate=0.1, k=1,
                 metrics=["weight_norm"], eval_every=400)
    Xt = np.repeat(X, 4, axis=0)
    df = dn.denoising_curve(rbm, Xt, [0.05, 0.1], train=X, seed=0).set_index(["p", "method"])
    for p in (0.05, 0.1):
        assert df.loc[(p, "tap"), "mcc"] > df.loc[(p, "ope"), "mcc"] + 0.02, df
        assert df.loc[(p, "tap"), "bit_error"] < df.loc[(p, "ope"), "bit_error"], df
        assert df.loc[(p, "tap"), "not_converged"] == 0
    # same noise for every method: bit errors of the identity would be equal; OPE < noise level
    assert df.loc[(0.1, "ope"), "bit_error"] <= 0.1 + 0.02
