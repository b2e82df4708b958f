"""Figures of the TAP studies beyond the RBM (Tramel et al. 2018, Figs. 10–12): adaTAP vs TAP,
deep TAP machines, and the TAP / AIS / pseudo-likelihood comparison.  Inputs are the tables
of :mod:`rbmviz.reproduce.tap_beyond` (pandas DataFrames)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..dbm import DBM
    import holoviews as hv

__all__ = ["fig10", "fig11", "fig12", "dbm_receptive_fields", "study_figure"]


def _hv():
    import holoviews as hv
    if not hv.Store.renderers:
        hv.extension("bokeh", logo=False)
    return hv


def fig10(tables: dict, *, width: int = 420, height: int = 320) -> hv.Layout:
    """Fig. 10: pseudo-likelihood along training for TAP and adaTAP at each iteration count
    (left) and the time of one inference iteration against the batch size (right, log–log).

    Parameters
    ----------
    tables : dict
        ``{name: pandas.DataFrame}``, the experiment's tables.
    width : int
        Width of a panel in pixels.
    height : int
        Height of a panel in pixels.

    Returns
    -------
    holoviews.Layout
        The figure.
    """
    hv = _hv()
    curves = tables["curves"]
    left = []
    for (method, iters), g in curves.groupby(["method", "iterations"], sort=True):
        dash = "solid" if method == "tap" else "dashed"
        left.append(hv.Curve(g, "updates", ("pl", "pseudo-likelihood (nats)"),
                             label=f"{'TAP' if method == 'tap' else 'adaTAP'} {iters} it").opts(
            line_dash=dash, tools=["hover"]))
    lp = hv.Overlay(left).opts(title="Fig. 10 left: pseudo-likelihood", legend_position="bottom_right",
                               width=width, height=height)
    t = tables["timing"]
    right = []
    for method, g in t.groupby("method", sort=True):
        label = {"tap": "TAP", "adatap": "adaTAP (VAMP, Schur)",
                 "adatap_direct": "adaTAP (VAMP, full inverse)"}.get(method, method)
        c = hv.Curve(g, "batch_size", ("seconds_per_iteration", "seconds per iteration"), label=label)
        right += [c.opts(logx=True, logy=True, tools=["hover"]), hv.Scatter(c).opts(size=6)]
    rp = hv.Overlay(right).opts(title="Fig. 10 right: time per iteration", logx=True, logy=True,
                                legend_position="top_left", width=width, height=height)
    return (lp + rp).cols(2)


def fig11(tables: dict, *, width: int = 420, height: int = 320) -> hv.Layout:
    """Fig. 11: TAP log-likelihood per unit of train and test images along joint training,
    one panel per DBM depth.

    Parameters
    ----------
    tables : dict
        ``{name: pandas.DataFrame}``, the experiment's tables.
    width : int
        Width of a panel in pixels.
    height : int
        Height of a panel in pixels.

    Returns
    -------
    holoviews.Layout
        The figure.
    """
    hv = _hv()
    curves = tables["curves"]
    panels = []
    for name, g in curves.groupby("model", sort=False):
        lines = [hv.Curve(g, "epoch", (col, "TAP LL per unit"), label=lab).opts(tools=["hover"])
                 for col, lab in (("train_ll_per_unit", "train"), ("test_ll_per_unit", "test"))]
        panels.append(hv.Overlay(lines).opts(title=f"Fig. 11: DBM {name}", width=width,
                                             height=height, legend_position="bottom_right"))
    return hv.Layout(panels).cols(2)


def fig12(tables: dict, *, width: int = 330, height: int = 280) -> hv.Layout:
    """Fig. 12: TAP log-likelihood, AIS log-likelihood and stochastic pseudo-likelihood at the
    same checkpoints of one TAP training run, one panel each, plus all three standardised
    (z-scores over the checkpoints) on one axis.

    Parameters
    ----------
    tables : dict
        ``{name: pandas.DataFrame}``, the experiment's tables.
    width : int
        Width of a panel in pixels.
    height : int
        Height of a panel in pixels.

    Returns
    -------
    holoviews.Layout
        The figure.
    """
    hv = _hv()
    c = tables["curves"]
    cols = (("tap_ll", "TAP log-likelihood"), ("ais_ll", "AIS log-likelihood"),
            ("spl", "pseudo-likelihood (100 sites)"))
    panels = []
    for col, lab in cols:
        cur = hv.Curve(c, "epoch", (col, lab)).opts(tools=["hover"])
        panels.append((cur * hv.Scatter(cur).opts(size=5)).opts(title=lab, width=width, height=height))
    z = []
    for col, lab in cols:
        v = np.asarray(c[col], dtype=float)
        sd = np.nanstd(v)
        z.append(hv.Curve((c["epoch"], (v - np.nanmean(v)) / (sd if sd > 0 else 1.0)), "epoch",
                          "standardised", label=lab))
    panels.append(hv.Overlay(z).opts(title="all three, standardised", width=width, height=height,
                                     legend_position="bottom_right"))
    return hv.Layout(panels).cols(4)


def dbm_receptive_fields(dbm: DBM, *, layer: int = 1, n: int = 16,
                         shape: tuple[int, int] = (28, 28), size: int = 80) -> hv.Layout:
    """Receptive fields of the units of hidden layer ``layer`` projected to the pixels
    (``W⁽¹⁾ W⁽²⁾ ⋯ W⁽ˡ⁾``, columns), the first ``n`` units, as images.

    Parameters
    ----------
    dbm : DBM
        The model.
    layer : int
        Hidden layer (1-based).
    n : int
        Units shown.
    shape : tuple of int
        Image shape (rows, columns).
    size : int
        Size of an image in pixels.

    Returns
    -------
    holoviews.Layout
        The figure.
    """
    hv = _hv()
    P = dbm.W[0]
    for l in range(1, layer):
        P = P @ dbm.W[l]
    imgs = []
    for j in range(min(n, P.shape[1])):
        f = P[:, j].reshape(shape)
        lim = float(np.abs(f).max()) or 1.0
        imgs.append(hv.Image(f[::-1], bounds=(0, 0, shape[1], shape[0])).opts(
            cmap="RdBu_r", clim=(-lim, lim), xaxis=None, yaxis=None, width=size, height=size,
            toolbar=None, title=f"{layer}:{j}"))
    return hv.Layout(imgs).cols(8)


def study_figure(name: str, tables: dict) -> hv.Layout:
    """The figure of study ``name`` ("adatap", "dbm", "fig12").

    Parameters
    ----------
    name : str
        The study: ``"adatap"``, ``"dbm"`` or ``"fig12"``.
    tables : dict
        ``{name: pandas.DataFrame}``, the experiment's tables.

    Returns
    -------
    holoviews.Layout
        The figure.
    """
    return {"adatap": fig10, "dbm": fig11, "fig12": fig12}[name](tables)
