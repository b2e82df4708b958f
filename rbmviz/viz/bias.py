"""Plots for the CD-bias experiment of Fischer & Igel (2011): records in, HoloViews out.

Every function takes the tidy records of :func:`rbmviz.bias.train_expected_cd` or of
:func:`rbmviz.reproduce.cd_bias.run` (columns ``iteration``, ``run`` and the metrics
``bias``, ``bound``, ``distance``, ``mixing``, ``delta``, … ; optionally ``dataset``, ``k``,
``weight_decay``) and draws, over the iterations, the mean over the runs as a line and the
spread over the runs as a band (by default the 10th–90th percentile).

Imports HoloViews only (never Panel).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from . import _select_rows

if TYPE_CHECKING:
    import holoviews as hv
    import pandas

__all__ = ["curve_stats", "bias_bound_curves", "bound_factor_curves", "k_sweep_curves",
           "weight_decay_curves", "reproduction_figure", "DATASET_LABELS"]

DATASET_LABELS = {"diag": "Diag", "ball_1d": "1DBall"}
LABELS = {
    "bias": "bias of the expected CD-k update (max over parameters)",
    "bound": "Fischer–Igel bound (Theorem 4)",
    "distance": "½‖p_e − p‖₁",
    "mixing": "(1 − e^{−(m+n)Δ})^k",
    "one_minus_mixing": "1 − (1 − e^{−(m+n)Δ})^k",
    "delta": "Δ",
    "bd_bound": "Bengio–Delalleau-type bound",
    "log_likelihood": "log-likelihood (nats)",
    "weight_norm": "‖W‖_F",
}
COLORS = {"bias": "#d62728", "bound": "#1f77b4", "bd_bound": "#7f7f7f", "distance": "#2ca02c",
          "mixing": "#9467bd", "one_minus_mixing": "#9467bd", "delta": "#8c564b"}
#: one colour per k (or per weight decay) in the sweep plots
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def _hv():
    import holoviews as hv
    return hv


def _select(df, **where):
    return _select_rows(df, where, atol=1e-15, strict=False)


def curve_stats(records: "pandas.DataFrame", metrics: Sequence[str] = ("bias", "bound"), *,
                by: Sequence[str] = (),
                band: tuple[float, float] | None = (0.1, 0.9)) -> "pandas.DataFrame":
    """Mean and spread over the runs of each metric at every recorded iteration.

    Parameters
    ----------
    records : pandas.DataFrame
        One row per run and iteration.
    metrics : sequence of str
        metric columns to aggregate.
    by : sequence of str
        further grouping columns (e.g. ``("dataset", "k")``).
    band : tuple of float
        (lower, upper) quantiles of the spread, or None for means only.

    Returns
    -------
    pandas.DataFrame
        pandas.DataFrame with columns ``*by, iteration`` and, per metric ``m``, ``m`` (mean over
        runs), ``m_lo`` and ``m_hi`` (the band's quantiles; not with ``band=None``).
    """
    keys = [*by, "iteration"]
    g = records.groupby(keys, sort=True)[list(metrics)]
    mean = g.mean()
    if band is None:
        return mean.reset_index()
    lo = g.quantile(band[0]).add_suffix("_lo")
    hi = g.quantile(band[1]).add_suffix("_hi")
    return mean.join(lo).join(hi).reset_index()


def _line_band(stats, metric, label, color, *, dash="solid", band=True):
    hv = _hv()
    curve = hv.Curve(stats, "iteration", (metric, LABELS.get(metric, metric)), label=label).opts(
        color=color, line_dash=dash, line_width=2, tools=["hover"])
    if not band:
        return curve
    area = hv.Area(stats, "iteration", [(f"{metric}_lo", LABELS.get(metric, metric)),
                                         f"{metric}_hi"], label=label).opts(
        color=color, alpha=0.2, line_alpha=0)
    return area * curve


def _style(overlay, title, ylabel, logy, logx=False):
    hv = _hv()
    return overlay.opts(
        hv.opts.Curve(logy=logy, logx=logx, ylabel=ylabel, xlabel="iteration", show_grid=True,
                      frame_width=420, frame_height=260),
        hv.opts.Area(logy=logy, logx=logx),
        hv.opts.Overlay(title=title, legend_position="top_right", logy=logy, logx=logx))


def bias_bound_curves(records: "pandas.DataFrame", *, dataset: str | None = None,
                      k: int | None = None, weight_decay: float | None = None,
                      band: bool | tuple[float, float] | None = (0.1, 0.9), show_bd: bool = False,
                      logy: bool = True, title: str | None = None) -> hv.Overlay:
    """Bias of the expected CD-k update and the Fischer–Igel bound over the iterations
    (Fig. 1 of the paper): mean over runs (line) and spread (band), log scale.

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by the reproduction's ``run``);
        ``dataset``, ``k``, ``weight_decay`` select rows when those columns exist.
    dataset : str
        Data set to show (default: all).
    k : int
        The k shown (default: all).
    weight_decay : float
        The weight decay shown (default: all).
    band : bool or tuple of float
        Draw the spread over runs as a band (a pair of quantiles, or True for the default).
    show_bd : bool
        also draw the Bengio–Delalleau-type bound (:func:`rbmviz.bias.bengio_delalleau_bound`).
    logy : bool
        Logarithmic y axis.
    title : str
        Title of the plot.

    Returns
    -------
    holoviews.Overlay
        The mean bias and bound curves over the iterations, with their bands.
    """
    df = _select(records, dataset=dataset, k=k, weight_decay=weight_decay)
    metrics = ["bias", "bound"] + (["bd_bound"] if show_bd else [])
    stats = curve_stats(df, metrics, band=band)
    parts = [_line_band(stats, "bound", "bound (Thm 4)", COLORS["bound"]),
             _line_band(stats, "bias", "bias", COLORS["bias"])]
    if show_bd:
        parts.append(_line_band(stats, "bd_bound", "Bengio–Delalleau type", COLORS["bd_bound"],
                                dash="dashed"))
    if title is None:
        kk = k if k is not None else (int(df["k"].iloc[0]) if "k" in df else "k")
        title = f"{DATASET_LABELS.get(dataset, dataset or '')} CD-{kk}".strip()
        if weight_decay:
            title += f", weight decay {weight_decay:g}"
    return _style(_hv().Overlay(parts), title, "bias / bound", logy)


def bound_factor_curves(records: "pandas.DataFrame", *, dataset: str | None = None,
                        k: int | None = None, weight_decay: float | None = None,
                        band: bool | tuple[float, float] | None = (0.1, 0.9),
                        title: str | None = None) -> hv.Layout:
    """The two antagonistic factors of the bound over the iterations, and Δ.

    * the distance ``½‖p_e − p‖₁`` — shrinks as the model learns (log scale);
    * the mixing factor ``(1 − e^{−(m+n)Δ})^k`` — grows towards 1 with the weights.  It is
      within 1e-7 of 1 as soon as (m+n)Δ > 16, so the panel shows how far it is *below* 1,
      ``1 − mixing ≈ k e^{−(m+n)Δ}``, on a log scale (falling = mixing factor rising);
    * Δ itself.

    Parameters
    ----------
    records, dataset, k, weight_decay, band
        As in :func:`bias_bound_curves`.
    title : str
        Title of the plot.

    Returns
    -------
    holoviews.Layout
        Three panels.
    """
    hv = _hv()
    df = _select(records, dataset=dataset, k=k, weight_decay=weight_decay)
    stats = curve_stats(df, ["distance", "one_minus_mixing", "delta"], band=band)
    name = title or DATASET_LABELS.get(dataset, dataset or "")
    prefix = f"{name}: " if name else ""
    dist = _style(hv.Overlay([_line_band(stats, "distance", "distance", COLORS["distance"])]),
                  f"{prefix}distance ½‖p_e − p‖₁", "½‖p_e − p‖₁", True)
    mix = _style(hv.Overlay([_line_band(stats, "one_minus_mixing", "1 − mixing",
                                        COLORS["one_minus_mixing"])]),
                 f"{prefix}1 − mixing factor (≈ k e^(−(m+n)Δ))", "1 − (1 − e^(−(m+n)Δ))^k", True)
    dlt = _style(hv.Overlay([_line_band(stats, "delta", "Δ", COLORS["delta"])]),
                 f"{prefix}Δ", "Δ", False)
    return (dist + mix + dlt).cols(3)


def _sweep(records, column, values, label_fmt, title, band, logy=True):
    hv = _hv()
    parts = []
    for i, val in enumerate(values):
        sub = _select(records, **{column: val})
        stats = curve_stats(sub, ["bias", "bound"], band=band)
        color = PALETTE[i % len(PALETTE)]
        parts.append(_line_band(stats, "bias", f"bias, {label_fmt(val)}", color, band=band is not None))
        parts.append(_line_band(stats, "bound", f"bound, {label_fmt(val)}", color, dash="dashed",
                                band=False))
    return _style(hv.Overlay(parts), title, "bias (solid) / bound (dashed)", logy).opts(
        hv.opts.Overlay(legend_position="right"))


def k_sweep_curves(records: "pandas.DataFrame", *, dataset: str | None = None,
                   weight_decay: float = 0.0, ks: Sequence[int] | None = None,
                   band: bool | tuple[float, float] | None = None) -> hv.Overlay:
    """Bias (solid) and bound (dashed) for each k of CD-k training, means over runs.

    Parameters
    ----------
    records, dataset, band
        As in :func:`bias_bound_curves`.
    weight_decay : float
        The weight decay λ of the runs shown (default 0).
    ks : sequence of int
        Values of k (default: all in the records).

    Returns
    -------
    holoviews.Overlay
        A solid bias curve and a dashed bound curve per k.
    """
    df = _select(records, dataset=dataset, weight_decay=weight_decay)
    ks = sorted(df["k"].unique()) if ks is None else ks
    return _sweep(df, "k", [int(k) for k in ks], lambda k: f"k={k}",
                  f"{DATASET_LABELS.get(dataset, dataset or '')}: CD-k for k = "
                  f"{', '.join(map(str, ks))}".strip(": "), band)


def weight_decay_curves(records: "pandas.DataFrame", *, dataset: str | None = None, k: int = 1,
                        weight_decays: Sequence[float] | None = None,
                        band: bool | tuple[float, float] | None = None) -> hv.Overlay:
    """Bias (solid) and bound (dashed) with and without weight decay, means over runs.

    Parameters
    ----------
    records, dataset, band, k
        As in :func:`bias_bound_curves` (here ``k`` defaults to 1).
    weight_decays : sequence of float
        Weight decays λ (default: all in the records).

    Returns
    -------
    holoviews.Overlay
        A solid bias curve and a dashed bound curve per weight decay λ.
    """
    df = _select(records, dataset=dataset, k=k)
    wds = sorted(df["weight_decay"].unique()) if weight_decays is None else weight_decays
    return _sweep(df, "weight_decay", [float(w) for w in wds], lambda w: f"λ={w:g}",
                  f"{DATASET_LABELS.get(dataset, dataset or '')}: CD-{k}, weight decay λ".strip(": "),
                  band)


def reproduction_figure(records: "pandas.DataFrame", *,
                        band: bool | tuple[float, float] | None = (0.1, 0.9)) -> hv.Layout:
    """The whole CD-bias reproduction: per data set, bias and bound of CD-1 (with the
    Bengio–Delalleau-type bound), the bound's factors, the k sweep and the weight-decay
    variant (panels for sweeps only when the records hold more than one k / weight decay).

    Parameters
    ----------
    records, band
        The records and the spread's band, as in :func:`bias_bound_curves`; records without
        a ``k`` or ``weight_decay`` column count as CD-1 without weight decay.

    Returns
    -------
    holoviews.Layout
        The panels of every data set, two columns.
    """
    defaults = {"k": 1, "weight_decay": 0.0}
    records = records.assign(**{c: v for c, v in defaults.items() if c not in records})
    panels = []
    datasets = list(records["dataset"].unique()) if "dataset" in records else [None]
    for ds in datasets:
        sub = records if ds is None else records[records["dataset"] == ds]
        base = _select(sub, k=1, weight_decay=0.0)
        panels.append(bias_bound_curves(base, dataset=ds, k=1, weight_decay=0.0, band=band,
                                        show_bd=True))
        panels.extend(bound_factor_curves(base, dataset=ds, k=1, weight_decay=0.0, band=band))
        if sub[np.isclose(sub["weight_decay"], 0.0)]["k"].nunique() > 1:
            panels.append(k_sweep_curves(sub, dataset=ds))
        if sub[sub["k"] == 1]["weight_decay"].nunique() > 1:
            panels.append(weight_decay_curves(sub, dataset=ds))
    return _hv().Layout(panels).cols(2).opts(shared_axes=False)
