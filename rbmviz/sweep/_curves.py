"""Learning curves of a sweep frame: the mean over trials at each evaluation point
(:func:`curve_means`) and the time a curve needs to cover a fraction of its gain
(:func:`time_to_fraction`, the speed measure of Upadhya & Sastry 2017, Sec. 4.2.1)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import pandas

__all__ = ["time_to_fraction", "curve_means"]


def time_to_fraction(x: ArrayLike, values: ArrayLike, fraction: float = 0.9, *,
                     of: str = "max") -> float | None:
    """The paper's speed measure: the first ``x`` (epoch) at which a learning curve has
    covered ``fraction`` of its way from its start to its maximum (``of="max"``, the
    paper's "90 % of the maximum ATLL") or to its final value (``of="final"``).

    Log-likelihoods are negative, so "90 % of the ATLL" is read as 90 % of the *gain*:
    the threshold is ``values[0] + fraction · (target − values[0])``.

    Parameters
    ----------
    x : array_like, shape (n,)
        Increasing evaluation points (epochs, updates or Gibbs steps).
    values : array_like, shape (n,)
        The curve, e.g. the mean ATLL over trials.  NaN entries are ignored.
    fraction : float
        In (0, 1].
    of : {"max", "final"}
        The target.

    Returns
    -------
    float or None
        The first ``x`` at which ``values >= threshold``; ``None`` if the curve never gains
        (target ≤ start) or has no finite values.

    Raises
    ------
    ValueError
        If ``x`` and ``values`` differ in length, ``fraction`` is outside (0, 1] or ``of`` is
        unknown.

    Examples
    --------

    >>> time_to_fraction([0, 10, 20, 30], [-6.0, -4.0, -3.0, -2.9])
    20.0
    """
    x = np.asarray(x, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if x.shape != v.shape or x.ndim != 1:
        raise ValueError(f"x and values must be 1-D of the same length, got shapes {x.shape} "
                         f"and {v.shape}")
    if not 0.0 < float(fraction) <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    if of not in ("max", "final"):
        raise ValueError(f"of must be 'max' or 'final', got {of!r}")
    ok = np.isfinite(v)
    x, v = x[ok], v[ok]
    if v.size == 0:
        return None
    target = v.max() if of == "max" else v[-1]
    gain = target - v[0]
    if not gain > 0:
        return None
    hit = np.nonzero(v >= v[0] + fraction * gain - 1e-12 * abs(gain))[0]
    return float(x[hit[0]])


def curve_means(records: "pandas.DataFrame", metric: str, *, by: Sequence[str] = ("algorithm",),
                x: str = "epoch") -> "pandas.DataFrame":
    """Mean, standard error and 10/90 % quantiles of ``metric`` over the trials at each point.

    Parameters
    ----------
    records : pandas.DataFrame
        A sweep's tidy frame.
    metric : str
        The metric column.
    by : sequence of str
        Group columns.
    x : str
        The evaluation-point column (``epoch``, ``updates``, ``gibbs_steps``).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, x, mean, sem, lo, hi, n``.
    """
    keys = [*by, x]
    g = records.groupby(keys, sort=True)[metric]
    out = g.agg(["mean", "std", "count"]).rename(columns={"count": "n"})
    out["sem"] = out["std"] / np.sqrt(out["n"].clip(lower=1))
    out["lo"] = g.quantile(0.1)
    out["hi"] = g.quantile(0.9)
    return out.drop(columns="std").reset_index()
