"""Upadhya & Sastry (2017) reproductions: ``rbmviz reproduce dc-small`` / ``dc-mnist``, their
summaries and figures, and the AIS log-likelihood metric of :class:`rbmviz.runs.Run`
(reference/dc-programming.md, reference/ais.md)."""
import numpy as np
import pytest

import rbmviz
from brute import log_z as brute_log_z
from rbmviz import datasets
from rbmviz.runs import Run


# ---------------------------------------------------------------------------- AIS metric

def test_ais_metric_agrees_with_the_exact_log_likelihood():
    """ais_test_ll / ais_train_ll of a Run match the exact ATLL (log Z by enumeration, checked
    against the brute-force joint sum) on a small trained model, along the whole curve."""
    X = datasets.bars_and_stripes(3)
    rbm = rbmviz.RBM(9, 4, seed=0)
    run = Run(rbm, X, "cd", k=5, learning_rate=0.5, epochs=600, eval_every=300, test_data=X[:7],
              metrics=["train_ll", "test_ll", "ais_train_ll", "ais_test_ll"],
              metric_options=dict(n_chains=200, n_betas=3000, seed=3))
    recs = list(run)
    assert [r["epoch"] for r in recs] == [0, 300, 600]
    assert rbmviz.evaluate.log_partition_exact(rbm) == pytest.approx(brute_log_z(rbm), abs=1e-10)
    for r in recs:
        assert r["ais_train_ll"] == pytest.approx(r["train_ll"], abs=0.02)
        assert r["ais_test_ll"] == pytest.approx(r["test_ll"], abs=0.02)
        # one log Z estimate serves both: the difference is exactly that of the free energies
        assert r["ais_train_ll"] - r["ais_test_ll"] == pytest.approx(r["train_ll"] - r["test_ll"], abs=1e-10)
    assert recs[-1]["train_ll"] > recs[0]["train_ll"] + 0.3          # it learned something
    # reproducible from metric_options' seed, and the seed matters
    again = Run(rbmviz.RBM(9, 4, seed=0), X, "cd", k=5, learning_rate=0.5, epochs=600,
                eval_every=300, test_data=X[:7], metrics=["ais_test_ll"],
                metric_options=dict(n_chains=200, n_betas=3000, seed=3))
    assert [r["ais_test_ll"] for r in again] == [r["ais_test_ll"] for r in recs]
    other = Run(rbmviz.RBM(9, 4, seed=0), X, "cd", epochs=0, test_data=X, metrics=["ais_test_ll"],
                metric_options=dict(n_chains=20, n_betas=50, seed=4))
    assert next(other)["ais_test_ll"] != recs[0]["ais_test_ll"]


def test_ais_metric_bad_options():
    X = datasets.shifting_bar(9, 1)
    rbm = rbmviz.RBM(9, 4, seed=0)
    with pytest.raises(ValueError, match="unknown metric_options.*n_chain"):
        Run(rbm, X, metrics=["ais_train_ll"], metric_options={"n_chain": 10})
    with pytest.raises(TypeError, match="metric_options must be a dict"):
        Run(rbm, X, metrics=["ais_train_ll"], metric_options=[("n_chains", 10)])
    with pytest.raises(ValueError, match="n_betas"):
        Run(rbm, X, metrics=["ais_train_ll"], metric_options={"n_betas": 1})
    with pytest.raises(ValueError, match="'ais_test_ll' needs test_data"):
        Run(rbm, X, metrics=["ais_test_ll"])
