"""Shared test setup.

* ``RBMVIZ_DATA`` defaults to ``../shared/data`` beside the project root (where CI keeps the
  real MNIST/Omniglot/CBCL files), unless the environment sets it.
* ``rfc3987_syntax`` builds grammars at import (2.5–6 s) when nbformat/HoloViews are imported;
  tests do not need it (../shared/STACK.md).
"""
import os
import sys
from pathlib import Path

import pytest

sys.modules.setdefault("rfc3987_syntax", None)

_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if "RBMVIZ_DATA" not in os.environ and _SHARED_DATA.is_dir():
    os.environ["RBMVIZ_DATA"] = str(_SHARED_DATA)


@pytest.fixture
def rbm_factory():
    from brute import random_rbm
    return random_rbm
