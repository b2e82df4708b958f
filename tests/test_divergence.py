"""The divergence guard does not depend on the chosen metrics.

Every evaluation of a binary model also checks the log-likelihood of a few fixed training rows
(exact where enumerating the smaller layer is cheap, otherwise an upper bound from free energies
and the most probable states found): a run recording only ``weight_norm`` stops with
:class:`rbmviz.errors.RunDiverged` when that log-likelihood collapses, healthy runs never trip
it, and the guard only reads (seeded runs stay bit-identical).
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest

import rbmviz
from rbmviz import runs
from rbmviz.errors import RunDiverged
from rbmviz.evaluate import log_likelihood_exact, log_partition_exact
from rbmviz.runs import Run
from test_bad_inputs import _innermost_file  # the catalogue's check: raised inside rbmviz

RULES = ("cd", "pcd", "cg", "sdcp", "csdcp", "ssd", "tap")
BS3 = rbmviz.datasets.bars_and_stripes(3)       # 14 rows, 9 visible: exact log Z
BS4 = rbmviz.datasets.bars_and_stripes(4)       # 30 rows, 16 visible: with 64 hidden, a bound

COLLAPSE = r"run diverged: the log-likelihood of {rows} training rows collapsed to {bound}-?\d"


def _diverge(rule, X, n_hidden, learning_rate, **kw):
    rbm = rbmviz.RBM(X.shape[1], n_hidden, seed=0)
    run = Run(rbm, X, rule, epochs=40, learning_rate=learning_rate, eval_every=5,
              metrics=["weight_norm"], **kw)
    with pytest.raises(RunDiverged) as info:
        list(run)
    return run, info


@pytest.mark.parametrize("rule", RULES)
def test_a_collapse_is_caught_with_only_weight_norm_recorded(rule):
    # issue: CD at learning_rate=50 finished "successfully" with |W| = 44 and a log-likelihood
    # 58 nats below the uniform model's; every rule collapses at this rate
    run, info = _diverge(rule, BS3, 16, 50.0)
    err = info.value
    assert run._guard_exact
    assert err.quantity == "ll_guard"
    assert err.value < -2 * 9 * math.log(2.0)             # more than max_ll_drop below uniform
    msg = str(err)
    assert re.search(COLLAPSE.format(rows=14, bound=""), msg), msg
    assert "(exact log Z;" in msg and "learning_rate=50 may be too large" in msg
    assert re.search(r"at the evaluation after \d+ updates \(epoch \d+\)", msg)
    # the records made before are kept, and the run is over
    assert err.records and err.records[0]["epoch"] == 0
    assert err.records[-1]["epoch"] == err.last_good_epoch < err.epoch
    assert set(err.records[-1]) >= {"epoch", "weight_norm"}
    with pytest.raises(StopIteration):
        next(run)
    assert _innermost_file(info).endswith(os.path.join("runs", "guard.py"))


@pytest.mark.parametrize("rule,learning_rate", [(r, 10.0 if r == "ssd" else 50.0) for r in RULES])
def test_a_collapse_is_caught_by_the_bound_where_log_z_is_not_enumerated(rule, learning_rate):
    # 16 × 64: the guard bounds the log-likelihood instead of enumerating 2^16 states (SSD at
    # learning_rate=50 pushes a bias beyond max_weight first, so it is checked at 10)
    run, info = _diverge(rule, BS4, 64, learning_rate)
    assert not run._guard_exact
    err = info.value
    assert err.quantity == "ll_guard"
    msg = str(err)
    assert f"collapsed to at most {err.value:.4g} nats" in msg
    assert "upper bound from their free energies" in msg and "training stopped" in msg
    assert err.records and err.records[-1]["epoch"] == err.last_good_epoch


def test_the_train_function_raises_it_with_the_records():
    rbm = rbmviz.RBM(9, 16, seed=0)
    with pytest.raises(RunDiverged, match=COLLAPSE.format(rows=14, bound="")) as info:
        rbmviz.train(rbm, BS3, "cd", learning_rate=50, epochs=100, metrics=["weight_norm"])
    assert info.value.records[0]["epoch"] == 0
    # the model holds the parameters reached (as for every divergence)
    assert np.abs(rbm.W).max() > 10


@pytest.mark.parametrize("rule", RULES)
def test_healthy_runs_at_the_default_learning_rate_do_not_trip_it(rule):
    for X, n_hidden, batch in ((BS3, 16, None), (BS3, 16, 2), (BS4, 64, 10)):
        rbm = rbmviz.RBM(X.shape[1], n_hidden, seed=0)
        epochs = 10 if rule == "tap" else 60
        recs = list(Run(rbm, X, rule, epochs=epochs, batch_size=batch, eval_every=5,
                        metrics=["weight_norm"]))
        assert recs[-1]["epoch"] == epochs


def test_a_long_healthy_run_does_not_trip_it():
    # 2,000 epochs of CD at learning_rate=0.3: the log-likelihood rises and stays up
    rbm = rbmviz.RBM(9, 16, seed=0)
    run = Run(rbm, BS3, "cd", epochs=2000, learning_rate=0.3, eval_every=100,
              metrics=["weight_norm"])
    recs = list(run)
    assert recs[-1]["epoch"] == 2000
    assert log_likelihood_exact(rbm, BS3) > -9 * math.log(2.0)


def test_a_model_that_starts_bad_is_judged_against_its_own_start():
    # as a likelihood metric: below min(best so far, uniform model) by max_ll_drop
    rbm = rbmviz.RBM(9, 16, seed=0)
    rbm.W[...] = np.random.default_rng(1).normal(0.0, 8.0, rbm.W.shape)
    assert log_likelihood_exact(rbm, BS3) < -2 * 9 * math.log(2.0)
    run = Run(rbm, BS3, "cd", epochs=5, learning_rate=0.01, eval_every=1, metrics=["weight_norm"])
    assert [r["epoch"] for r in run] == [0, 1, 2, 3, 4, 5]


def test_the_guard_agrees_with_a_recorded_likelihood_metric():
    # with train_ll recorded its own collapse check speaks first (same message as before)
    rbm = rbmviz.RBM(9, 16, seed=0)
    with pytest.raises(RunDiverged, match=r"train_ll collapsed to -\d") as info:
        list(Run(rbm, BS3, "cd", epochs=40, learning_rate=50.0, eval_every=5,
                 metrics=["train_ll", "weight_norm"]))
    run_only_norm, info2 = _diverge("cd", BS3, 16, 50.0)
    assert info.value.epoch == info2.value.epoch
    assert info.value.value == pytest.approx(info2.value.value, abs=1e-9)


def test_max_ll_drop_sets_the_guards_threshold():
    rbm = rbmviz.RBM(9, 16, seed=0)
    run = Run(rbm, BS3, "cd", epochs=20, learning_rate=50.0, eval_every=5,
              metrics=["weight_norm"], max_ll_drop=1e6)
    assert [r["epoch"] for r in run][-1] == 20


def _records_and_params(monkeypatch, guard, rule, **kw):
    with monkeypatch.context() as m:
        if not guard:
            m.setattr(Run, "_check_likelihood_bound", lambda self: None)
        rbm = rbmviz.RBM(kw.pop("n_visible", 9), kw.pop("n_hidden", 16), seed=3)
        X = kw.pop("data", BS3)
        run = Run(rbm, X, rule, epochs=30, eval_every=3, seed=5, **kw)
        recs = [{k: v for k, v in r.items() if k != "wall_time"} for r in run]
        state = run.algorithm.__dict__.get("counter")
        return recs, [p.copy() for p in rbm.params], state


@pytest.mark.parametrize("rule,kw", [
    ("cd", {}), ("pcd", {"batch_size": 2}), ("csdcp", {}), ("tap", {"learning_rate": 0.05}),
    ("cd", {"n_visible": 16, "n_hidden": 64, "data": BS4, "batch_size": 10}),
])
def test_the_guard_only_reads_seeded_runs_stay_bit_identical(monkeypatch, rule, kw):
    on1 = _records_and_params(monkeypatch, True, rule, metrics=["weight_norm"], **dict(kw))
    on2 = _records_and_params(monkeypatch, True, rule, metrics=["weight_norm"], **dict(kw))
    off = _records_and_params(monkeypatch, False, rule, metrics=["weight_norm"], **dict(kw))
    for other in (on2, off):
        assert on1[0] == other[0]
        assert all(np.array_equal(a, b) for a, b in zip(on1[1], other[1]))
        assert on1[2] == other[2]


def test_the_bound_is_an_upper_bound_and_tight_on_a_diverged_model():
    rng = np.random.default_rng(0)
    for scale in (0.01, 0.5, 2.0, 10.0):
        rbm = rbmviz.RBM(9, 6, seed=0)
        rbm.W[...] = rng.normal(0.0, scale, rbm.W.shape)
        rbm.b[...] = rng.normal(0.0, scale, rbm.b.shape)
        rbm.c[...] = rng.normal(0.0, scale, rbm.c.shape)
        exact = log_likelihood_exact(rbm, BS3)
        assert runs._log_z_lower_bound(rbm, BS3) <= log_partition_exact(rbm) + 1e-9
        assert runs._log_likelihood_upper_bound(rbm, BS3) >= exact - 1e-9
        assert runs._log_likelihood_upper_bound(
            rbm, BS3, log_z=log_partition_exact(rbm)) == pytest.approx(exact, abs=1e-9)
    # no weights: the mean-field start m = 1/2 gives log Z exactly
    flat = rbmviz.RBM(9, 6, seed=0)
    flat.W[...] = 0.0
    assert runs._log_z_lower_bound(flat, BS3) == pytest.approx(log_partition_exact(flat))
    # a diverged model: the bound is within a nat of the exact value
    rbm = rbmviz.RBM(9, 16, seed=0)
    with pytest.raises(RunDiverged):
        rbmviz.train(rbm, BS3, "cd", learning_rate=50, epochs=10, metrics=["weight_norm"],
                     max_ll_drop=1e-3)
    assert runs._log_likelihood_upper_bound(rbm, BS3) - log_likelihood_exact(rbm, BS3) < 1.0


def test_models_the_guard_cannot_watch_still_train():
    # real-valued visibles: no log-likelihood to watch; probability rows: only 0/1 rows watched
    X = np.random.default_rng(0).uniform(size=(20, 5))
    rbm = rbmviz.RBM(5, 3, visible="truncated_gaussian", seed=0)
    run = Run(rbm, X, "tap", epochs=2, eval_every=1, metrics=["weight_norm"])
    assert run._guard_rows is None and len(list(run)) == 3
    P = np.clip(BS3 + 0.25 * (np.arange(14) % 2)[:, None], 0, 1)   # odd rows not binary
    run = Run(rbmviz.RBM(9, 4, seed=0), P, "cd", epochs=3, eval_every=1,
              data_probabilities=True, metrics=["weight_norm"])
    binary_rows = P[np.all((P == 0) | (P == 1), axis=1)]
    assert 0 < len(binary_rows) < len(P)
    assert np.array_equal(run._guard_rows, binary_rows) and len(list(run)) == 4
