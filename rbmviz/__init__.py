"""rbmviz — see how restricted Boltzmann machines learn.

The package is importable without Panel.  Numba kernels live in :mod:`rbmviz.kernels`,
the model in :mod:`rbmviz.model`, training rules in :mod:`rbmviz.algorithms`, the one
training loop in :mod:`rbmviz.runs`.

Parameter layout (everywhere in rbmviz): ``W`` has shape ``(n_visible, n_hidden)``,
``b`` are the visible biases, ``c`` the hidden biases, and the energy of the binary RBM is
``E(v, h) = -v^T W h - b^T v - c^T h``.  Log-likelihoods are in nats, averaged per example.
"""
import os as _os

# OpenMP workers that spin after a parallel Numba region steal the cores from OpenBLAS
# (a 2.5 ms Gibbs step becomes 16 ms).  This only has an effect before the first parallel
# Numba call, so it is set at import time (see ../shared/STACK.md).
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Not at once, though: an update runs a dozen short parallel kernels back to back, and on a
# virtual machine a core whose worker went to sleep halts and takes ~0.1 ms to wake, at every
# kernel.  libgomp's workers spin 3,000 times (tens of microseconds) before they sleep: an idle
# process still frees its cores, and a 784×500 PCD-1 epoch of 2,000 MNIST rows run after a
# pause takes ~58 ms instead of ~84 ms.  Ten times more spinning already slows the TAP solve,
# whose multi-threaded OpenBLAS products alternate with Numba passes.
_os.environ.setdefault("GOMP_SPINCOUNT", "3000")
# The other direction: after each product OpenBLAS's worker threads spin for 2**28 cycles
# (~0.1 s) and take a core from the Numba pass that follows (AIS's sampling between its two
# products per temperature, TAP's elementwise half-steps: 1.1 ms became 2.9 ms).  Waiting
# 2**16 cycles keeps back-to-back products as fast.  OpenBLAS reads the setting when numpy
# loads it, so it takes effect when rbmviz is imported before numpy (or when it is set in the
# environment).
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "16")

import numba as _numba  # noqa: E402

# Two dashboard sessions call kernels from two threads at once: the default ``workqueue``
# layer is not thread-safe.  "threadsafe" picks TBB or OpenMP.
if _numba.config.THREADING_LAYER == "default":
    _numba.config.THREADING_LAYER = "threadsafe"

from .model import RBM  # noqa: E402
from .runs import Run, RunDiverged, train  # noqa: E402
from . import algorithms, bias, datasets, evaluate, tap, units  # noqa: E402,F401

__version__ = "0.1.0"

__all__ = ["RBM", "Run", "RunDiverged", "train", "algorithms", "bias", "datasets", "evaluate", "tap", "units",
           "__version__"]
