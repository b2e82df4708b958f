"""TAP landscape analysis: free-energy distributions, Isomap maps, receptive-field rankings,
solution counting over epochs (Tramel et al. 2018, Figs. 4–7)."""
import numpy as np
import pytest

from rbmviz.tap import landscape as ls


# ---------------------------------------------------------------------------- free energies
def test_histogram_and_kde():
    rng = np.random.default_rng(0)
    fe = rng.normal(-50, 2, 400)
    edges, h = ls.free_energy_histogram(fe, bins=20)
    assert np.isclose((h * np.diff(edges)).sum(), 1.0)
    grid, dens = ls.free_energy_kde(fe, n_grid=2001)
    assert np.isclose(np.trapezoid(dens, grid), 1.0, atol=2e-3)
    assert abs(grid[np.argmax(dens)] + 50) < 1.0
    # against scipy's gaussian_kde with the same bandwidth (its factor × sd = our bandwidth)
    from scipy.stats import gaussian_kde
    bw = 1.0
    k = gaussian_kde(fe, bw_method=bw / fe.std(ddof=1))
    g, d = ls.free_energy_kde(fe, grid=np.linspace(-60, -40, 50), bandwidth=bw)
    assert np.allclose(d, k(g), rtol=1e-10)
    # a single distinct value still gives a (narrow) density and a histogram
    g1, d1 = ls.free_energy_kde([3.0, 3.0])
    assert np.isclose(np.trapezoid(d1, g1), 1.0, atol=1e-2)
    e1, h1 = ls.free_energy_histogram([3.0])
    assert e1[0] < 3.0 < e1[-1] and h1.sum() > 0
    with pytest.raises(ValueError, match="free_energy"):
        ls.free_energy_kde([np.nan])
    with pytest.raises(ValueError, match="empty"):
        ls.free_energy_histogram([])


# ---------------------------------------------------------------------------- Isomap
def test_isomap_transform_of_fit_epoch_reproduces_embedding():
    rng = np.random.default_rng(1)
    t = rng.uniform(0, 1.5 * np.pi, 80)
    X = np.column_stack([np.cos(t), np.sin(t), 0.3 * t])       # a helix arc: 1-D manifold
    m = ls.SolutionMap(n_neighbors=8).fit(X)
    assert m.embedding_.shape == (80, 2)
    assert np.allclose(m.transform(X), m.embedding_, atol=1e-9)
    # a shuffled copy of the fit points lands on the same coordinates
    perm = rng.permutation(80)
    assert np.allclose(m.transform(X[perm]), m.embedding_[perm], atol=1e-9)
    # the first coordinate unrolls the arc: monotone in t (geodesic, not Euclidean)
    from scipy.stats import spearmanr
    assert abs(spearmanr(m.embedding_[:, 0], t).statistic) > 0.99
    df = m.frame(X[:5], epoch=3, free_energy=np.arange(5.0))
    assert list(df.columns) == ["x", "y", "epoch", "free_energy"] and (df.epoch == 3).all()
    with pytest.raises(ValueError, match="features"):
        m.transform(X[:, :2])
    with pytest.raises(ValueError, match="before fit"):
        ls.SolutionMap().transform(X)
    with pytest.raises(ValueError, match="at least 3"):
        ls.SolutionMap().fit(X[:2])


def test_isomap_few_points_reduces_neighbourhood():
    X = np.random.default_rng(2).random((4, 6))
    m = ls.SolutionMap(n_neighbors=5).fit(X)
    assert m.isomap_.n_neighbors == 3
    assert np.allclose(m.transform(X), m.embedding_, atol=1e-9)


def test_data_solution_map():
    rng = np.random.default_rng(3)
    X = (rng.random((40, 10)) < 0.5).astype(float)
    av = np.clip(X * 0.9 + 0.05, 0, 1)
    m, df = ls.data_solution_map(X, av, labels=np.arange(40) % 3)
    assert len(df) == 40 and {"x", "y", "sol_x", "sol_y", "label"} <= set(df.columns)
    assert np.allclose(df[["x", "y"]].to_numpy(), m.embedding_)
    with pytest.raises(ValueError, match="shape"):
        ls.data_solution_map(X, av[:, :5])


# ---------------------------------------------------------------------------- receptive fields
def test_receptive_field_spread_and_ranking():
    W = np.zeros((4, 3))
    W[:, 0] = [1, 1, 1, 1]          # (4·1)^10 = 4^10
    W[0, 1] = 2.0                   # (2^0.1)^10 = 2
    W[:, 2] = [0.5, 0.5, 0, 0]      # (2·0.5^0.1)^10 = 2^10·0.5 = 512
    s = ls.receptive_field_spread(W)
    assert np.allclose(s, [4.0 ** 10, 2.0, 512.0], rtol=1e-12)
    direct = (np.abs(W) ** 0.1).sum(0) ** 10
    assert np.allclose(s, direct, rtol=1e-12)
    assert ls.receptive_field_spread(np.zeros((3, 1)))[0] == 0.0
    df = ls.rank_receptive_fields(W)
    assert list(df.unit) == [1, 2, 0] and list(df["rank"]) == [0, 1, 2]
    df = ls.rank_receptive_fields(W, by="activation", activation=[0.3, 0.1, 0.2])
    assert list(df.unit) == [1, 2, 0]
    with pytest.raises(ValueError, match="activation"):
        ls.rank_receptive_fields(W, by="activation")
    with pytest.raises(ValueError, match="by"):
        ls.rank_receptive_fields(W, by="size")


def test_mean_activation_binary(rbm_factory):
    rbm = rbm_factory(5, 3, seed=4)
    X = (np.random.default_rng(0).random((20, 5)) < 0.5).astype(float)
    ref = (1 / (1 + np.exp(-(X @ rbm.W + rbm.c)))).mean(0)
    assert np.allclose(ls.mean_activation(rbm, X), ref, atol=1e-14)
    with pytest.raises(ValueError, match="n_visible"):
        ls.mean_activation(rbm, X[:, :4])
