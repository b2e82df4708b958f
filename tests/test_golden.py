"""Seeded training is unchanged by refactoring: every rule, at its declared defaults, gives
the model stored in ``tests/golden/`` (made by ``tests/golden/make.py``).

The comparison allows 1e-12 absolute: a changed default, random stream or order of the
arithmetic moves the weights by far more (the smallest such change, one extra Gibbs sweep,
moves them by ~1e-2), while a different CPU's vector width may change the last bits of
``exp`` and ``log1p`` in the Numba kernels.  On the machine that made the files the match is
exact.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"


def _make_module():
    spec = importlib.util.spec_from_file_location("golden_make", GOLDEN / "make.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MAKE = _make_module()


@pytest.mark.parametrize("name", sorted(MAKE.CASES))
def test_seeded_training_matches_the_stored_model(name):
    stored = np.load(GOLDEN / f"{name}.npz")
    got = MAKE.CASES[name]()
    assert sorted(got) == sorted(stored.files)
    for key in stored.files:
        np.testing.assert_allclose(got[key], stored[key], rtol=0, atol=1e-12,
                                   err_msg=f"{name}: {key} differs from tests/golden/{name}.npz")


def test_every_rule_has_a_golden_case():
    from rbmviz import algorithms
    assert set(algorithms.names()) <= set(MAKE.CASES)


def test_the_cases_have_trained():
    """A stored model that equals its initial state would make the comparison empty."""
    import rbmviz
    X = MAKE._bars()
    init = rbmviz.RBM(X.shape[1], 6, seed=3)
    for rule in ("cd", "tap"):
        stored = np.load(GOLDEN / f"{rule}.npz")
        assert np.max(np.abs(stored["W"] - init.W)) > 1e-3, rule


def test_the_comparison_can_fail(tmp_path):
    """One more epoch of CD is a different model: the tolerance is far below that change."""
    import rbmviz
    X = MAKE._bars()
    rbm = rbmviz.RBM(X.shape[1], 6, seed=3)
    rbmviz.train(rbm, X, "cd", epochs=41, seed=11)
    stored = np.load(GOLDEN / "cd.npz")
    assert np.max(np.abs(rbm.W - stored["W"])) > 1e-6
