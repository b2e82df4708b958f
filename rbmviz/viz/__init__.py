"""Pure plotting functions: records and arrays in, HoloViews objects out.

Imports HoloViews (never Panel).  Every function takes plain data — a records DataFrame, a
weight matrix — so the dashboard, notebooks and the CLI draw the same pictures.
"""
from __future__ import annotations

import math

import numpy as np

METRIC_LABELS = {
    "train_ll": "train log-likelihood (nats, exact)",
    "test_ll": "test log-likelihood (nats, exact)",
    "pseudo_ll": "pseudo-log-likelihood (nats)",
    "recon_error": "reconstruction error (MSE per pixel)",
    "weight_norm": "‖W‖_F",
    "ais_test_ll": "test log-likelihood (nats, AIS)",
    "ais_train_ll": "train log-likelihood (nats, AIS)",
    "tap_ll": "TAP log-likelihood (nats, eq. 39)",
}
X_LABELS = {"epoch": "epoch", "updates": "parameter updates", "gibbs_steps": "Gibbs steps per chain",
            "wall_time": "seconds"}


def _hv():
    import holoviews as hv
    return hv


def _select_rows(df, where, *, atol, strict):
    """The rows of ``df`` whose columns hold ``where``'s values (a None value selects
    everything; floats match within ``atol``).  A column ``df`` lacks is passed over, or with
    ``strict`` refused; no matching row is a ``ValueError``."""
    for col, val in where.items():
        if val is None:
            continue
        if col not in df.columns:
            if strict:
                raise ValueError(f"records have no column {col!r} to select {col}={val!r}")
            continue
        if isinstance(val, float):
            df = df[np.isclose(df[col].astype(float), val, rtol=0, atol=atol)]
        else:
            df = df[df[col] == val]
    if df.empty:
        raise ValueError(f"no records match {where}")
    return df


def learning_curves(records, metric="train_ll", x="epoch", *, by="algorithm", bound=None,
                    title=None):
    """One curve of ``metric`` against ``x`` per value of ``by`` (e.g. per algorithm), with
    hover tooltips; ``bound`` (e.g. −ln 14) is drawn as a dashed horizontal line.

    Parameters
    ----------
    records : pandas.DataFrame
        Rows as produced by :class:`rbmviz.runs.Run`.
    """
    hv = _hv()
    if metric not in records.columns:
        raise ValueError(f"metric {metric!r} is not in the records (columns: {list(records.columns)})")
    if x not in records.columns:
        raise ValueError(f"x {x!r} is not in the records (columns: {list(records.columns)})")
    groups = records.groupby(by, sort=False) if by in records.columns else [("run", records)]
    curves = [hv.Curve(df, x, metric, label=str(name)).opts(tools=["hover"])
              for name, df in groups]
    overlay = hv.Overlay(curves)
    if bound is not None:
        overlay = overlay * hv.HLine(bound).opts(line_dash="dashed", color="black", line_width=1)
    return overlay.opts(hv.opts.Curve(xlabel=X_LABELS.get(x, x), ylabel=METRIC_LABELS.get(metric, metric),
                                      responsive=True, height=300, show_grid=True),
                        hv.opts.Overlay(title=title or METRIC_LABELS.get(metric, metric), legend_position="bottom_right"))


def image_shape(n_pixels):
    """A (rows, cols) shape for ``n_pixels`` — square when possible (784 → 28×28, 9 → 3×3),
    otherwise a single row."""
    side = int(round(math.sqrt(n_pixels)))
    return (side, side) if side * side == n_pixels else (1, n_pixels)


def tile_images(rows, shape=None, n_cols=None, pad=1, fill=np.nan):
    """Arrange the rows of a (n, n_pixels) array as a grid image (NaN padding)."""
    rows = np.asarray(rows, dtype=np.float64)
    n, npix = rows.shape
    h, w = shape or image_shape(npix)
    n_cols = n_cols or int(math.ceil(math.sqrt(n)))
    n_rows = int(math.ceil(n / n_cols))
    out = np.full((n_rows * (h + pad) - pad, n_cols * (w + pad) - pad), fill)
    for i in range(n):
        r, c = divmod(i, n_cols)
        out[r * (h + pad): r * (h + pad) + h, c * (w + pad): c * (w + pad) + w] = rows[i].reshape(h, w)
    return out


def _frame(w, h, size=300):
    """Plot frame of at most ``size`` pixels a side with the grid's aspect ratio (square
    pixels; array row 0 at the top, as HoloViews draws an Image)."""
    scale = size / max(w, h)
    return {"frame_width": max(40, int(round(w * scale))), "frame_height": max(40, int(round(h * scale)))}


def receptive_fields(W, shape=None, n_cols=None, max_fields=100, title="receptive fields"):
    """Columns of ``W`` (one per hidden unit) as images in a grid, with a diverging colour
    map centred at 0 (blue negative, red positive)."""
    hv = _hv()
    W = np.asarray(W, dtype=np.float64)
    fields = W[:, :max_fields].T
    grid = tile_images(fields, shape, n_cols)
    lim = float(np.nanmax(np.abs(grid))) or 1.0
    h, w = grid.shape
    return hv.Image(grid, bounds=(0, 0, w, h)).opts(
        cmap="RdBu_r", clim=(-lim, lim), colorbar=True, xaxis=None, yaxis=None,
        title=title, tools=["hover"], **_frame(w, h))


def samples_grid(V, shape=None, n_cols=None, title="samples"):
    """Binary (or probability) visible vectors as a grid of grey images."""
    hv = _hv()
    grid = tile_images(np.asarray(V)[:100], shape, n_cols, fill=0.5)   # grey gutters
    h, w = grid.shape
    return hv.Image(grid, bounds=(0, 0, w, h)).opts(
        cmap="gray_r", clim=(0, 1), xaxis=None, yaxis=None, title=title, **_frame(w, h))


def distribution_bars(p_model, p_data, labels=None, top=None, patterns=None, other=True,
                      title="p(v): model vs data"):
    """Bar chart of the model's distribution over visible patterns next to the data's
    (small models).

    ``patterns`` (indices into the ``2**n_visible`` states) fixes which patterns get a bar —
    keep it fixed while streaming so the axis does not change; by default the ``top``
    patterns by max(p_model, p_data) (all when ``top`` is None).  With ``other`` a last bar
    holds the probability of all remaining patterns (for the data it is 0)."""
    hv = _hv()
    import pandas as pd
    p_model, p_data = np.asarray(p_model, dtype=np.float64), np.asarray(p_data, dtype=np.float64)
    n_bits = int(round(math.log2(len(p_model))))
    labels = labels or [format(i, f"0{n_bits}b") for i in range(len(p_model))]
    if patterns is None:
        idx = np.arange(len(p_model))
        if top is not None:
            idx = np.sort(np.argsort(-np.maximum(p_model, p_data))[:top])
    else:
        idx = np.asarray(patterns, dtype=np.int64)
    names = [labels[i] for i in idx]
    pm, pd_ = list(p_model[idx]), list(p_data[idx])
    if other and len(idx) < len(p_model):
        names.append("other")
        pm.append(max(0.0, 1.0 - float(np.sum(p_model[idx]))))
        pd_.append(max(0.0, 1.0 - float(np.sum(p_data[idx]))))
    df = pd.DataFrame({"pattern": names * 2, "source": ["model"] * len(names) + ["data"] * len(names),
                       "p": np.concatenate([pm, pd_])})
    return hv.Bars(df, ["pattern", "source"], "p").opts(
        responsive=True, height=280, xrotation=90, tools=["hover"], title=title,
        multi_level=False, color="source", cmap=["#1f77b4", "#ff7f0e"], show_legend=True)
