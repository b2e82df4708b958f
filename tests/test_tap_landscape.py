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


def test_epoch_maps_share_the_fit_epoch_coordinates():
    rng = np.random.default_rng(5)
    late = rng.random((30, 8))
    early = late[:10] + 0.01 * rng.random((10, 8))
    m, df = ls.epoch_maps({1: (early, np.arange(10.0)), 100: (late, np.full(30, -3.0))}, 100)
    assert list(df.groupby("epoch").size()) == [10, 30]
    d100 = df[df.epoch == 100]
    assert np.allclose(d100[["x", "y"]].to_numpy(), m.embedding_)
    assert np.allclose(df[df.epoch == 1][["x", "y"]].to_numpy(), m.transform(early))
    assert np.allclose(df[df.epoch == 1].fe_scaled, np.arange(10) / 9) and (d100.fe_scaled == 0.5).all()
    with pytest.raises(ValueError, match="fit_epoch"):
        ls.epoch_maps({1: (early, np.zeros(10))}, 100)


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


# ---------------------------------------------------------------------------- counting solutions
def _two_solution_model(rbm_factory):
    """A 12×6 binary RBM with two TAP solutions reached from random data (converged tightly)."""
    rbm = rbm_factory(12, 6, scale=2.0, seed=3)
    X = (np.random.default_rng(0).random((200, 12)) < 0.5).astype(float)
    return rbm, X


def test_solution_statistics_and_order_invariance(rbm_factory):
    from rbmviz import tap
    rbm, X = _two_solution_model(rbm_factory)
    sol = tap.solve(rbm, X, tol=1e-20, max_iter=5000)
    st = ls.solution_statistics(sol)
    assert st["n_init"] == 200 and st["n_converged"] == int(sol.converged.sum())
    assert st["n_unique"] == 2 and st["counts"].sum() == st["n_converged"]
    assert np.all(st["labels"][~sol.converged] == -1)
    assert st["mean_free_energy"] == pytest.approx(st["free_energy"].mean())
    assert np.allclose(st["free_energy"], sol.free_energy[st["representatives"]])
    assert st["unique_fraction"] == 2 / 200
    # the same initialisations in another order: same solutions, counts and free energies
    perm = np.random.default_rng(1).permutation(200)
    st2 = ls.solution_statistics(tap.solve(rbm, X[perm], tol=1e-20, max_iter=5000))
    assert st2["n_unique"] == st["n_unique"]
    key = lambda s: sorted(zip(np.round(s["free_energy"], 9), s["counts"]))
    assert key(st2) == key(st)
    assert np.array_equal(st2["labels"], st["labels"][perm])     # canonical solution ids
    # epoch tables
    summary, sols = ls.epoch_statistics({1: st, 5: st2})
    assert list(summary.epoch) == [1, 5] and list(summary.n_unique) == [2, 2]
    assert len(sols) == 4 and sols.groupby("epoch")["count"].sum().tolist() == [st["n_converged"]] * 2
    # features of the unique solutions ([a^v, a^h], Fig. 6)
    F = ls.solution_features(sol, st["representatives"])
    assert F.shape == (2, 18) and np.array_equal(F[:, :12], sol.av[st["representatives"]])
    # Fig. 7 style: data next to their solutions
    _, df = ls.data_solution_map(X[:50], sol.av[:50], free_energy=sol.free_energy[:50])
    assert len(df) == 50 and np.isfinite(df[["sol_x", "sol_y"]].to_numpy()).all()


def test_viz_functions_build_holoviews_objects():
    import holoviews as hv
    import pandas as pd
    from rbmviz.viz import tap as vt
    rng = np.random.default_rng(0)
    stats = {e: {"n_init": 50, "n_converged": 50, "n_unique": k, "unique_fraction": k / 50,
                 "free_energy": rng.normal(-10, 1, k), "counts": np.full(k, 50 // k),
                 "mean_free_energy": -10.0} for e, k in ((1, 1), (5, 3), (10, 5))}
    summary, sols = ls.epoch_statistics(stats)
    assert isinstance(vt.solution_count_curves(summary), hv.Layout)
    assert len(vt.free_energy_distributions(sols)) == 3
    pts = {e: (rng.random((n, 6)), rng.normal(0, 1, n)) for e, n in ((1, 8), (3, 12))}
    _, frame = ls.epoch_maps(pts, 3)
    assert len(vt.solution_maps(frame)) == 2
    X = rng.random((12, 6))
    _, df = ls.data_solution_map(X, X * 0.5, labels=np.arange(12) % 3)
    assert isinstance(vt.data_solution_map(df), hv.Overlay)
    W = rng.normal(0, 1, (16, 8))
    assert isinstance(vt.ranked_receptive_fields(W, ls.rank_receptive_fields(W), n=3), hv.Layout)
    curve = pd.DataFrame({"p": [0, 0.1, 0, 0.1], "method": ["ope", "ope", "nn", "nn"],
                          "mcc": [1, 0.5, 1, 0.7], "mcc_sem": [0, 0.1, 0, 0.1]})
    assert len(vt.denoising_curves(curve)) == 4
