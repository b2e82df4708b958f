"""Argument checks and random helpers shared by the data set modules."""
from __future__ import annotations

import numbers

import numpy as np


# --------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------


def _check_int(value, name, low, high=None):
    """Return ``int(value)`` if it is an integer in ``[low, high]``, else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {bounds}, got {value!r}")
    return int(value)


def _check_choice(value, name, choices):
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if not any(value is c or (isinstance(value, str) and value == c) for c in choices):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def _check_limit(limit, n_max):
    """Number of rows to load: ``n_max`` for ``limit=None``, else ``limit`` in [1, n_max]."""
    return n_max if limit is None else _check_int(limit, "limit", 1, n_max)


def _rng(seed):
    """``np.random.default_rng(seed)``, with ``seed=None`` meaning 0."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        seed = 0
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be None, a non-negative integer or a numpy Generator; got {seed!r}")
    return np.random.default_rng(int(seed))


def _bernoulli(values, scale, rng, chunk=4096):
    """0/1 float64 array: entry is 1 with probability ``values / scale``.

    Drawn ``chunk`` rows at a time to bound the temporaries; the uniform
    numbers come out in the same order as one ``rng.random(values.shape)``
    call, so the first rows do not depend on how many rows there are.
    """
    out = np.empty(values.shape)
    for start in range(0, len(values), chunk):
        block = values[start:start + chunk]
        out[start:start + chunk] = rng.random(block.shape) < block / scale
    return out
