"""A run's state (:meth:`rbmviz.runs.Run.state` / :meth:`~rbmviz.runs.Run.restore`): a run cut
off at any record and continued in a fresh run (through pickle, as the sweeps keep it) ends
bit for bit where the uninterrupted run ends, for every algorithm, within epochs, with a
float32 working copy and with trained unit priors; a state is refused by another run."""
import pickle

import numpy as np
import pytest

import rbmviz
from rbmviz import algorithms, units

X = (np.random.default_rng(0).random((53, 12)) < 0.4).astype(float)


def _records(recs):
    return [{k: v for k, v in r.items() if k != "wall_time"} for r in recs]


def _cut_and_continue(make, cut):
    """(records and model of the uninterrupted run, the same of a run stopped after ``cut``
    records and continued from its pickled state in a fresh run)."""
    full_run = make()
    full = list(full_run)
    first = make()
    head = [next(first) for _ in range(cut)]
    state = pickle.loads(pickle.dumps(first.state()))
    second = make()
    second.restore(state)
    tail = list(second)
    assert _records(second.records) == _records(head + tail)
    return (full, full_run.rbm), (head + tail, second.rbm)


def _assert_same(a, b):
    (ra, ma), (rb, mb) = a, b
    assert _records(ra) == _records(rb)
    for pa, pb in zip(ma.params, mb.params):
        assert pa.dtype == pb.dtype and np.array_equal(pa, pb)
    assert ma.visible_prior.to_dict().keys() == mb.visible_prior.to_dict().keys()
    for k, v in ma.visible_prior.to_dict().items():
        assert np.array_equal(np.asarray(v), np.asarray(mb.visible_prior.to_dict()[k])), k


@pytest.mark.parametrize("name", algorithms.names())
def test_every_algorithm_continues_bit_for_bit(name):
    def make():
        return rbmviz.Run(rbmviz.RBM(12, 5, seed=1, scale=0.3), X, name, epochs=6,
                          batch_size=10, eval_every=1, learning_rate=0.1, momentum=0.5)
    a, b = _cut_and_continue(make, 3)
    _assert_same(a, b)
    assert len(a[0]) == 7


def test_records_within_epochs_continue_the_epoch_permutation():
    # 53 rows / 10 = 6 batches per epoch; a record every 4 updates falls inside epochs, so the
    # state carries the current epoch's permutation and the position in it
    def make():
        return rbmviz.Run(rbmviz.RBM(12, 5, seed=2, scale=0.3), X, "pcd", epochs=4,
                          batch_size=10, record_every_updates=4, learning_rate=0.1)
    for cut in (2, 4):
        a, b = _cut_and_continue(make, cut)
        _assert_same(a, b)
    first = make()
    for _ in range(2):
        next(first)
    assert first.state()["pos"] == 4 and first.state()["perm"] is not None


def test_float32_working_copy_and_the_model_passed_in():
    def make():
        return rbmviz.Run(rbmviz.RBM(12, 5, seed=3, scale=0.3), X, "cd", epochs=5,
                          batch_size=10, eval_every=1, dtype="float32", learning_rate=0.1)
    a, b = _cut_and_continue(make, 2)
    _assert_same(a, b)
    assert a[1].dtype == np.float64            # the model passed in keeps its dtype


def test_trained_unit_priors_continue():
    rng = np.random.default_rng(4)
    data = np.clip(rng.normal(0.4, 0.25, size=(40, 6)), 0.0, 1.0)

    def make():
        rbm = rbmviz.RBM(6, 3, seed=4, scale=0.1,
                         visible=units.make("truncated_gaussian", 6, V=2.0))
        return rbmviz.Run(rbm, data, "tap", epochs=4, batch_size=10, eval_every=1,
                          learning_rate=0.05, metrics=["weight_norm"])
    a, b = _cut_and_continue(make, 2)
    _assert_same(a, b)
    start = make().rbm.visible_prior.to_dict()["V"]
    assert not np.array_equal(np.asarray(start), np.asarray(a[1].visible_prior.to_dict()["V"]))


def test_a_state_restores_into_a_run_of_the_same_arguments_only():
    def make(**kw):
        args = {"epochs": 3, "batch_size": 10, "eval_every": 1, "learning_rate": 0.1, **kw}
        data = args.pop("data", X)
        name = args.pop("algorithm", "pcd")
        return rbmviz.Run(rbmviz.RBM(12, 5, seed=1, scale=0.3), data, name, **args)
    run = make()
    next(run)
    next(run)
    state = run.state()
    other = X.copy()
    other[0, 0] = 1 - other[0, 0]
    for kw, what in [({"algorithm": "cd"}, "algorithm"), ({"learning_rate": 0.2}, "settings"),
                     ({"data": other}, "data"), ({"batch_size": 5}, "batch_size"),
                     ({"seed": 9}, "settings")]:
        with pytest.raises(ValueError, match=f"another run: its {what} is"):
            make(**kw).restore(state)
    started = make()
    next(started)
    with pytest.raises(ValueError, match="has not started"):
        started.restore(state)
    with pytest.raises(ValueError, match="format version 1"):
        make().restore({"version": 0})
    # a state is a snapshot: training the run further does not change it
    W = state["algorithm"].vW.copy()
    list(run)
    assert np.array_equal(state["algorithm"].vW, W)
    fresh = make()
    fresh.restore(state)
    again = make()
    again.restore(state)
    assert _records(list(fresh)) == _records(list(again))


def test_a_diverged_run_has_no_state():
    run = rbmviz.Run(rbmviz.RBM(12, 5, seed=1, scale=0.3), X, "cd", epochs=50,
                     batch_size=10, eval_every=1, learning_rate=50.0, max_weight=5.0)
    with pytest.raises(rbmviz.RunDiverged):
        list(run)
    with pytest.raises(ValueError, match="diverged run has no state"):
        run.state()


def test_an_rbm_state_keeps_the_fingerprint_of_format_1():
    """The fingerprint describes any model through rbmviz.runs.models; an RBM's is the one
    states of format 1 always held (layer sizes [n_visible, n_hidden], unit types [visible,
    hidden], no remainder), so states saved before still restore."""
    import hashlib
    from rbmviz.runs import STATE_VERSION
    rbm = rbmviz.RBM(12, 5, seed=1, scale=0.3,
                     visible=units.make("truncated_gaussian", 12, V=2.0))
    data = np.clip(np.random.default_rng(1).normal(0.4, 0.25, size=(53, 12)), 0.0, 1.0)
    run = rbmviz.Run(rbm, data, "tap", epochs=2, batch_size=10, eval_every=1, seed=3,
                     metrics=["weight_norm"])
    next(run)
    state = run.state()
    assert STATE_VERSION == 1 and state["version"] == 1
    digest = hashlib.blake2b(np.ascontiguousarray(run.data).view(np.uint8),
                             digest_size=16).hexdigest()
    assert state["fingerprint"] == {
        "algorithm": "tap", "settings": repr(sorted(run.algorithm.settings().items())),
        "shape": [12, 5], "dtype": "float64", "units": ["truncated_gaussian", "bernoulli"],
        "rows": 53, "batch_size": 10, "seed": 3, "data": digest}


def test_a_state_with_a_key_this_run_lacks_is_refused():
    """Fingerprints are compared key by key both ways: a state of a run with
    remainder='drop' does not restore into a run with the default remainder."""
    def make(**kw):
        return rbmviz.Run(rbmviz.RBM(12, 5, seed=1, scale=0.3), X, "cd", epochs=2,
                          batch_size=10, eval_every=1, learning_rate=0.1, **kw)
    run = make(remainder="drop")
    next(run)
    state = run.state()
    assert state["fingerprint"]["remainder"] == "drop"
    with pytest.raises(ValueError, match="another run: its remainder is 'drop', this run's "
                                         "is None"):
        make().restore(state)
