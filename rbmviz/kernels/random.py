"""Counter-based random numbers (splitmix64 finaliser).

A draw is addressed by ``(seed, counter, index)``: ``key = stream_key(seed, counter)`` fixes a
stream for one sampling call and ``uniform(key, index)`` gives the uniform in [0, 1) for one
element.  Nothing depends on which thread handles which row, so parallel kernels reproduce
bit for bit whatever ``numba.set_num_threads`` says.
"""
import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def mix64(z):
    """splitmix64 finaliser: a bijective avalanche hash of a uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def stream_key(seed, counter):
    """The key of sampling call number ``counter`` of the stream ``seed``."""
    return mix64(mix64(np.uint64(seed) + _GOLDEN) ^ (np.uint64(counter) * _GOLDEN))


@njit(cache=True, inline="always")
def uniform(key, index):
    """Uniform double in [0, 1) for element ``index`` of the call with ``key`` (53 random bits)."""
    return np.float64(mix64(key + np.uint64(index) * _GOLDEN) >> _S11) * _INV53


@njit(cache=True)
def uniform_array(seed, counter, n):
    """``n`` uniforms of one call, for tests and for seeding chains reproducibly."""
    key = stream_key(seed, counter)
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = uniform(key, i)
    return out
