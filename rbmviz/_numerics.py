"""Overflow-free logistic functions on numpy arrays, shared by the model, the unit priors
and TAP inference (the Numba twins live in :mod:`rbmviz.kernels.exact`)."""
from __future__ import annotations

import numpy as np

__all__ = ["sigmoid", "softplus"]


def sigmoid(x):
    """``1 / (1 + e^{−x})`` without overflow; floating dtype kept (float64 otherwise)."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def softplus(x):
    """``log(1 + e^x)`` without overflow."""
    return np.logaddexp(0.0, x)
