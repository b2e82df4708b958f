"""Up-front argument checks.  Every error names the argument and what was expected, so that
nothing bad reaches a Numba kernel (where it would crash or silently produce garbage)."""
from __future__ import annotations

import numbers

import numpy as np

from .bounds import SEED_MAX


def first_nonbinary(arr: np.ndarray) -> tuple[int, int] | None:
    """``(row, column)`` of the first entry of the 2-D ``arr`` that is neither 0 nor 1, or
    None when every entry is 0 or 1."""
    nonbin = (arr != 0) & (arr != 1)
    if not nonbin.any():
        return None
    r, col = np.argwhere(nonbin)[0]
    return int(r), int(col)


def check_data(X, name: str = "data", *, n_visible: int | None = None, binary: bool = True,
               dtype=np.float64) -> np.ndarray:
    """Return ``X`` as a C-contiguous 2-D float array after checking it.

    Parameters
    ----------
    X : array-like, shape (n_samples, n_features)
        The rows.
    name : str
        The argument name used in error messages.
    n_visible : int, optional
        Required number of columns (the model's visible units).
    binary : bool
        Require every entry to be 0 or 1 (Bernoulli units).
    dtype : numpy dtype
        dtype of the returned array.
    """
    if X is None:
        raise ValueError(f"{name} is None; expected a 2-D array of shape (n_samples, n_visible)")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must hold real numbers, got complex dtype {arr.dtype} (pass "
                        f"the real part explicitly, e.g. {name}.real, if that is what you mean)")
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
    at = first_nonbinary(arr) if binary else None
    if at is not None:
        r, col = at
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
    """Seeds are integers in [0, :data:`rbmviz.bounds.SEED_MAX`] (None → 0 is NOT assumed:
    callers decide)."""
    return check_int(seed, name, low=0, high=SEED_MAX)


def check_choice(value, name: str, choices) -> str:
    if value not in choices:
        import difflib
        hint = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
        extra = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(f"unknown {name} {value!r}; expected one of {sorted(choices)}{extra}")
    return value


def check_bool(value, name: str) -> bool:
    """``value`` as a ``bool``; anything but ``True``/``False`` (or a numpy bool) is a ``TypeError``.

    Parameters
    ----------
    value, name
        The value to check, and the argument name used in error messages.

    Returns
    -------
    bool
        ``bool(value)``.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_array(value, name: str, *, shape: tuple | None = None, ndim: int | None = None,
                low: float | None = None, high: float | None = None) -> np.ndarray:
    """``value`` as a C-contiguous float64 array of exactly the expected shape, all finite.

    Unlike :func:`check_data` nothing is reshaped: a 1-D array where a 2-D one is expected
    (or the transpose of the expected shape) is refused.

    Parameters
    ----------
    value : array_like
        The array to check.
    name : str
        The argument name used in error messages.
    shape : tuple of int, optional
        The required shape.
    ndim : int, optional
        The required number of dimensions (when the shape is not fixed).
    low, high : float, optional
        Inclusive range of every entry (e.g. 0 and 1 for magnetisations).

    Returns
    -------
    numpy.ndarray
        A float64 copy (or view) of ``value``.

    Raises
    ------
    TypeError
        If ``value`` is None or not numeric (strings, objects, complex numbers).
    ValueError
        For a different shape, NaN or inf, or an entry outside ``[low, high]``.
    """
    if value is None:
        raise TypeError(f"{name} is None; expected an array" + (f" of shape {shape}" if shape else ""))
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged nested sequences
        raise ValueError(f"{name} could not be converted to an array (ragged rows?): {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        bad = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise ValueError(f"{name} contains NaN or inf (first at index {bad})")
    if low is not None or high is not None:
        out = np.zeros(arr.shape, dtype=bool)
        if low is not None:
            out |= arr < low
        if high is not None:
            out |= arr > high
        if out.any():
            at = tuple(int(i) for i in np.argwhere(out)[0])
            raise ValueError(f"{name} has {float(arr[at])!r} at index {at}; expected values in "
                             f"[{'-inf' if low is None else f'{low:g}'}, "
                             f"{'inf' if high is None else f'{high:g}'}]")
    return arr


def check_unit_interval_data(X, name: str = "data", *, n_visible: int | None = None,
                             dtype=np.float64) -> np.ndarray:
    """:func:`check_data` for rows of probabilities or states: every entry in [0, 1].

    Parameters
    ----------
    X, name, n_visible, dtype
        As in :func:`check_data` (whose 0/1 check this one replaces by the range
        check).

    Returns
    -------
    numpy.ndarray
        ``X`` as a C-contiguous 2-D array.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_data`, and a ``ValueError`` naming ``name``, the first entry outside
        [0, 1] and its position.
    """
    arr = check_data(X, name, n_visible=n_visible, binary=False, dtype=dtype)
    outside = (arr < 0) | (arr > 1)
    if outside.any():
        r, col = np.argwhere(outside)[0]
        raise ValueError(f"{name} must hold probabilities or states in [0, 1]; found "
                         f"{float(arr[r, col])!r} at row {r}, column {col}")
    return arr


def check_real(value, name: str) -> float:
    """A finite real scalar (Python or numpy number, or a 0-d/size-1 array of one).

    Parameters
    ----------
    value : object
        The value.
    name : str
        The argument name used in error messages.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a string, a complex number, an array of several).
    ValueError
        If it is NaN or infinite.
    """
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        value = value.reshape(()).item()
    if isinstance(value, np.generic) and value.dtype.kind in "iuf":
        value = value.item()
    return check_float(value, name)


def check_indices(index, name: str, size: int, *, what: str = "rows") -> np.ndarray:
    """A non-empty 1-D array of integer indices into ``size`` items.

    Parameters
    ----------
    index : array-like of int
        The indices.
    name : str
        The argument name used in error messages.
    size : int
        Number of items indexed: every index must be in ``[0, size)``.
    what : str
        What the indices select, for the message (``"rows of V"``).

    Returns
    -------
    numpy.ndarray
        The indices as int64.

    Raises
    ------
    TypeError
        If the indices are not integers.
    ValueError
        If they are not 1-D, empty, or out of range (naming the first bad one).
    """
    try:
        arr = np.asarray(index)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"{name} must be an array of integer indices: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of indices of {what}, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; expected at least one index of {what}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) \
                and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{name} must hold integer indices of {what}, got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= size)
    if bad.any():
        first = int(arr[np.argmax(bad)])
        raise ValueError(f"{name} holds index {first}, outside the {size} {what} "
                         f"(expected 0 … {size - 1})")
    return arr.astype(np.int64)
