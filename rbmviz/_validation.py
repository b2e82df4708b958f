"""Up-front argument checks.  Every error names the argument and what was expected, so that
nothing bad reaches a Numba kernel (where it would crash or silently produce garbage)."""
from __future__ import annotations

import numbers

import numpy as np


def check_data(X, name: str = "data", *, n_visible: int | None = None, binary: bool = True,
               dtype=np.float64) -> np.ndarray:
    """Return ``X`` as a C-contiguous 2-D float array after checking it.

    Parameters
    ----------
    X : array-like, shape (n_samples, n_features)
    name : str
        The argument name used in error messages.
    n_visible : int, optional
        Required number of columns (the model's visible units).
    binary : bool
        Require every entry to be 0 or 1 (Bernoulli units).
    """
    if X is None:
        raise ValueError(f"{name} is None; expected a 2-D array of shape (n_samples, n_visible)")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim == 1 and n_visible is not None and arr.shape[0] == n_visible:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 rows); expected at least one sample")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 columns; expected n_visible features per row")
    if n_visible is not None and arr.shape[1] != n_visible:
        raise ValueError(f"{name} has {arr.shape[1]} columns but the model has n_visible={n_visible}")
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or inf (first at row {bad[0]}, column {bad[1]})")
    if binary:
        nonbin = (arr != 0) & (arr != 1)
        if nonbin.any():
            r, col = np.argwhere(nonbin)[0]
            raise ValueError(
                f"{name} must be binary (0/1) for Bernoulli visible units; found {float(arr[r, col])!r} "
                f"at row {r}, column {col} (binarise it first, e.g. datasets.mnist(binarize='threshold'))")
    return arr


def check_int(value, name: str, *, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


def check_float(value, name: str, *, low: float | None = None, high: float | None = None,
                low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


def check_seed(seed, name: str = "seed") -> int:
    """Seeds are non-negative integers < 2**63 (or None → 0 is NOT assumed: callers decide)."""
    return check_int(seed, name, low=0, high=2**63 - 1)


def check_choice(value, name: str, choices) -> str:
    if value not in choices:
        import difflib
        hint = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
        extra = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(f"unknown {name} {value!r}; expected one of {sorted(choices)}{extra}")
    return value
