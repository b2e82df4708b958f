"""Exact enumeration: log Z, log-likelihood, model statistics, gradients, transition matrix
and the expected CD-k update, all against brute-force sums over every joint state."""
import numba
import numpy as np
import pytest
from brute import log_z, model_stats, visible_marginal
from brute import random_rbm

import rbmviz
from rbmviz import evaluate as ev
from rbmviz.kernels import exact as kx

SHAPES = [(1, 1), (2, 3), (5, 3), (3, 7), (7, 7), (9, 4), (4, 9), (13, 2)]


@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("nv,nh", SHAPES)
def test_log_partition_matches_brute_force(nv, nh, scale):
    rbm = random_rbm(nv, nh, scale=scale, seed=nv * 100 + nh)
    assert ev.log_partition_exact(rbm) == pytest.approx(log_z(rbm), rel=1e-12, abs=1e-10)


@pytest.mark.parametrize("nv,nh", [(5, 3), (3, 5), (6, 6), (14, 3)])
def test_enumerating_either_layer_gives_the_same_log_z(nv, nh):
    rbm = random_rbm(nv, nh, scale=2.0, seed=7)
    W, b, c = rbm.params
    via_visible = kx.log_sum_states(np.ascontiguousarray(W), b, c)
    via_hidden = kx.log_sum_states(np.ascontiguousarray(W.T), c, b)
    assert via_visible == pytest.approx(via_hidden, rel=1e-12)


def test_reference_2x2_model():
    # reference-numbers.md §1.2 (paper convention w = Wᵀ)
    rbm = rbmviz.RBM(2, 2, init="zeros")
    rbm.set_params(W=np.array([[1.0, -2.0], [0.5, 0.3]]).T, b=[0.1, -0.2], c=[0.3, 0.0])
    assert ev.log_partition_exact(rbm) == pytest.approx(3.2193312267864718, abs=1e-14)
    np.testing.assert_allclose(ev.visible_distribution(rbm),
                               [0.1879031137, 0.0909732335, 0.5464864375, 0.1746372154], atol=1e-10)


def test_zero_weights_log_z_is_sum_of_softplus():
    rbm = random_rbm(6, 5, scale=3.0, seed=1)
    rbm.W[:] = 0
    expected = np.logaddexp(0, rbm.b).sum() + np.logaddexp(0, rbm.c).sum()
    assert ev.log_partition_exact(rbm) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("nv,nh", [(6, 4), (4, 6)])
def test_log_likelihood_matches_brute_force_marginal(nv, nh):
    rbm = random_rbm(nv, nh, scale=1.5, seed=3)
    p = visible_marginal(rbm)
    V = ev.all_states(nv)[[0, 5, 9, 13]]
    idx = [0, 5, 9, 13]
    assert ev.log_likelihood_exact(rbm, V) == pytest.approx(np.mean(np.log(p[idx])), rel=1e-12)
    np.testing.assert_allclose(ev.visible_distribution(rbm), p, rtol=1e-11, atol=1e-15)
    assert ev.visible_distribution(rbm).sum() == pytest.approx(1.0, abs=1e-12)


def test_many_chunks_and_thread_count_do_not_change_results():
    # smaller layer of 15 units → 8 chunks of 4096 states, several blocks
    rbm = random_rbm(40, 15, scale=0.5, seed=11)
    V = ev.all_states(15)
    W, b, c = rbm.params
    vals = V @ c + np.logaddexp(0, V @ W.T + b).sum(1)     # hidden enumeration in numpy
    m = vals.max()
    ref = m + np.log(np.exp(vals - m).sum())
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ev.log_partition_exact(rbm), ev.model_statistics(rbm)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = ev.log_partition_exact(rbm), ev.model_statistics(rbm)
    finally:
        numba.set_num_threads(before)
    assert one[0] == pytest.approx(ref, rel=1e-12)
    assert one[0] == two[0]                                   # bit-identical
    for a, b2 in zip(one[1], two[1]):
        assert np.array_equal(a, b2)


@pytest.mark.parametrize("nv,nh", [(5, 3), (3, 5)])
def test_model_statistics_match_brute_force(nv, nh):
    rbm = random_rbm(nv, nh, scale=1.0, seed=5)
    for got, want in zip(ev.model_statistics(rbm), model_stats(rbm)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def test_exact_gradient_matches_finite_differences():
    rbm = random_rbm(5, 4, scale=0.8, seed=2)
    V = rbmviz.datasets.bars_and_stripes(2)[:, :4]
    V = np.hstack([V, V[:, :1]])
    dW, db, dc = ev.exact_gradient(rbm, V)
    eps = 1e-6
    for name, grad in (("W", dW), ("b", db), ("c", dc)):
        arr = getattr(rbm, name)
        for idx in [np.unravel_index(i, arr.shape) for i in range(0, arr.size, 3)]:
            old = arr[idx]
            arr[idx] = old + eps
            up = ev.log_likelihood_exact(rbm, V)
            arr[idx] = old - eps
            down = ev.log_likelihood_exact(rbm, V)
            arr[idx] = old
            assert grad[idx] == pytest.approx((up - down) / (2 * eps), abs=1e-7), (name, idx)


def test_refuses_more_than_2_to_the_30_states():
    rbm = rbmviz.RBM(31, 40, init="zeros")
    with pytest.raises(ValueError, match=r"2\*\*31"):
        ev.log_partition_exact(rbm)
    assert not ev.exact_feasible(rbm)


def test_transition_matrix_is_stochastic_and_leaves_p_invariant():
    rbm = random_rbm(4, 3, scale=1.5, seed=9)
    T = ev.transition_matrix(rbm)
    np.testing.assert_allclose(T.sum(axis=1), 1.0, atol=1e-12)
    p = ev.visible_distribution(rbm)
    np.testing.assert_allclose(p @ T, p, atol=1e-12)


def test_expected_cd_update_tends_to_exact_gradient_as_k_grows():
    rbm = random_rbm(4, 3, scale=0.5, seed=4)
    V = np.array([[1, 0, 1, 0], [0, 1, 1, 1], [1, 1, 0, 0]], float)
    g = ev.exact_gradient(rbm, V)
    cd1 = ev.expected_cd_update(rbm, V, 1)
    cd50 = ev.expected_cd_update(rbm, V, 50)
    err = lambda u: max(np.abs(a - b).max() for a, b in zip(u, g))  # noqa: E731
    assert err(cd50) < 1e-10 < err(cd1)


def test_expected_cd_update_matches_reference_bias_2x2():
    # reference-numbers.md §1.2: batch bias for p_e = ½δ(1,0) + ½δ(0,1)
    rbm = rbmviz.RBM(2, 2, init="zeros")
    rbm.set_params(W=np.array([[1.0, -2.0], [0.5, 0.3]]).T, b=[0.1, -0.2], c=[0.3, 0.0])
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    g = ev.exact_gradient(rbm, V)
    for k, want in [(1, 0.0517347523), (2, 0.0109047087), (5, 0.0000986119)]:
        cd = ev.expected_cd_update(rbm, V, k)
        bias = max(np.abs(a - b).max() for a, b in zip(g, cd))
        assert bias == pytest.approx(want, abs=1e-10)


@pytest.mark.parametrize("layer", ["visible", "hidden"])
def test_exact_measures_refuse_non_binary_units(layer):
    from rbmviz import RBM
    from rbmviz import evaluate as ev
    rbm = RBM(3, 2, **{layer: "truncated_gaussian"})
    for fn in (ev.log_partition_exact, ev.model_statistics):
        with pytest.raises(ValueError, match=f"{layer} units are 'truncated_gaussian'"):
            fn(rbm)
