"""Shared test setup.

* ``RBMVIZ_DATA`` defaults to ``../shared/data`` beside the project root (where CI keeps the
  real MNIST/Omniglot/CBCL files), unless the environment sets it.
* ``rfc3987_syntax`` builds grammars at import (2.5–6 s) when nbformat/HoloViews are imported;
  tests do not need it (../shared/STACK.md).
"""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.modules.setdefault("rfc3987_syntax", None)

_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if "RBMVIZ_DATA" not in os.environ and _SHARED_DATA.is_dir():
    os.environ["RBMVIZ_DATA"] = str(_SHARED_DATA)


def random_rbm(n_visible, n_hidden, scale=1.0, seed=0, dtype="float64"):
    """An RBM with N(0, scale²) weights and biases."""
    import rbmviz
    rng = np.random.default_rng(seed)
    rbm = rbmviz.RBM(n_visible, n_hidden, init="zeros", dtype=dtype)
    rbm.set_params(W=rng.normal(0, scale, (n_visible, n_hidden)),
                   b=rng.normal(0, scale, n_visible), c=rng.normal(0, scale, n_hidden))
    return rbm


@pytest.fixture
def rbm_factory():
    return random_rbm
