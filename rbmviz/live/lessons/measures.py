"""Measures of what a lesson shows, for the tests that check each lesson's phenomenon.

:func:`smoothness` tells receptive fields that show strokes from the noise they start as
(the ``mnist-fields`` lesson).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["smoothness"]


def smoothness(W: np.ndarray, shape: tuple[int, int]) -> float:
    """Median spatial smoothness of receptive fields: the correlation of each field's pixels
    with their right and lower neighbours.

    About 0 for the random initial weights, 0.5 to 0.8 for fields that show strokes.

    Parameters
    ----------
    W : numpy.ndarray
        Weights, ``(n_visible, n_hidden)``; column j is hidden unit j's receptive field.
    shape : tuple of int
        ``(rows, cols)`` of one field, ``rows · cols = n_visible``.

    Returns
    -------
    float
        The median over hidden units of the lag-1 spatial autocorrelation.

    Raises
    ------
    ValueError
        When ``shape`` does not match ``W``.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or int(np.prod(shape)) != W.shape[0] or min(shape) < 2:
        raise ValueError(f"shape {shape} does not fit weights of shape {W.shape} "
                         f"(need rows · cols = n_visible, both >= 2)")
    F = W.T.reshape(-1, *shape)
    F = F - F.mean(axis=(1, 2), keepdims=True)
    num = (F[:, 1:, :] * F[:, :-1, :]).sum(axis=(1, 2)) + (F[:, :, 1:] * F[:, :, :-1]).sum(axis=(1, 2))
    den = 2.0 * (F ** 2).sum(axis=(1, 2))
    r = num / np.where(den > 0, den, 1.0)
    return float(np.median(r)) if len(r) else math.nan
