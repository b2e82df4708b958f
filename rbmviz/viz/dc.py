"""Plots for the experiments of Upadhya & Sastry (2017): sweep records in, HoloViews out.

Every function takes the tidy frame of :func:`rbmviz.sweep.sweep` (columns ``trial``,
``algorithm``, the grid labels such as ``dataset`` / ``learning_rate`` / ``k_inner`` /
``batch_size`` / ``initialisation``, ``epoch``, ``updates``, ``gibbs_steps`` and an ATLL
column: ``test_ll`` exact or ``ais_test_ll`` AIS) and draws, per algorithm, the mean ATLL
over the trials as a line (optionally the 10–90 % spread over trials as a band), as the
paper's Figs. 1–7 do.  The theoretical bound (−ln 14, −ln 9) is a dashed black line, the
Shifting Bar local optimum (−3.15) a dotted grey one, and the epoch at which each mean
curve reaches 90 % of its maximum gain a dotted vertical line in the algorithm's colour.

Figures take plain data: the legend texts (``labels``, ``dataset_labels``), the bounds and
local optima are arguments (:mod:`rbmviz.reproduce.dc_small` passes the paper's); the
curve statistics come from :mod:`rbmviz.sweep`.  Imports HoloViews only (never Panel).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..sweep import curve_means, time_to_fraction
from . import _select_rows

if TYPE_CHECKING:
    import holoviews as hv
    import pandas

__all__ = ["ALGORITHM_COLORS", "atll_curves", "small_figure", "sensitivity_curves",
           "large_figure", "metric_column"]

ALGORITHM_COLORS = {"cd": "#1f77b4", "pcd": "#ff7f0e", "cg": "#2ca02c", "sdcp": "#d62728",
                    "csdcp": "#9467bd", "ssd": "#8c564b"}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
DASHES = {"sdcp": "solid", "csdcp": "dashed", "cd": "dotted", "pcd": "dashdot", "cg": "dotdash"}
Y_LABELS = {"test_ll": "ATLL (nats, exact)", "ais_test_ll": "ATLL (nats, AIS)",
            "train_ll": "average train LL (nats, exact)", "ais_train_ll": "average train LL (nats, AIS)"}
X_LABELS = {"epoch": "epoch", "updates": "parameter updates", "gibbs_steps": "Gibbs steps per chain"}


def _hv():
    import holoviews as hv
    if not hv.Store.renderers:            # options need a plotting backend
        hv.extension("bokeh", logo=False)
    return hv


def metric_column(records: "pandas.DataFrame") -> str:
    """The ATLL column of ``records``: ``test_ll`` if present, else ``ais_test_ll``, else
    ``train_ll`` / ``ais_train_ll`` (ValueError if none).

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by the reproduction's ``run``).

    Returns
    -------
    str
        The column name.

    Raises
    ------
    ValueError
        If ``records`` has no log-likelihood column.
    """
    for m in ("test_ll", "ais_test_ll", "train_ll", "ais_train_ll"):
        if m in records.columns and records[m].notna().any():
            return m
    raise ValueError(f"records have no log-likelihood column (test_ll, ais_test_ll, train_ll, "
                     f"ais_train_ll); columns: {list(records.columns)}")


def _select(records, **where):
    return _select_rows(records, where, atol=1e-12, strict=True)


def atll_curves(records: "pandas.DataFrame", metric: str | None = None, *, x: str = "epoch",
                by: str = "algorithm", band: bool = True, bound: float | None = None,
                local_optimum: float | None = None, mark_fraction: float | None = 0.9,
                title: str | None = None, logx: bool = False, colors: dict | None = None,
                labels: dict | None = None, width: int = 440, height: int = 280) -> hv.Overlay:
    """Mean ATLL over the trials against ``x``, one curve per value of ``by``.

    Parameters
    ----------
    records : pandas.DataFrame
        tidy sweep frame (already restricted to one data set / setting).
    metric : str
        ATLL column (default :func:`metric_column`).
    x : ``"epoch"``, ``"updates"`` or ``"gibbs_steps"`` (equal compute: the same for every
        algorithm at K = d·K′).
    by : str
        column separating the curves (``"algorithm"`` or a grid label).
    band : bool
        draw the 10–90 % spread over trials.
    bound : float
        horizontal dashed line (e.g. −ln 9); ``local_optimum``: dotted grey line.
    local_optimum : float
        A horizontal line at a known local optimum.
    mark_fraction : draw a vertical line where each mean curve first covers this fraction
        of its gain from the start to its maximum (None: no lines).
    title : str
        Title of the plot (default: none).
    logx : bool
        Logarithmic x axis.
    colors, labels : dicts value of ``by`` → colour / legend text (default: the value, or
        ``by=value`` for a grid column).
    width, height : int
        Size of a panel in pixels.

    Returns
    -------
    holoviews.Overlay
        One mean curve per value of ``by``, with its band when ``band``.

    Raises
    ------
    ValueError
        If ``records`` lacks a column or has no finite values of ``metric``.
    """
    hv = _hv()
    metric = metric or metric_column(records)
    for col in (metric, x, by):
        if col not in records.columns:
            raise ValueError(f"records have no column {col!r}; columns: {list(records.columns)}")
    df = records.dropna(subset=[metric])
    if df.empty:
        raise ValueError(f"no finite {metric!r} values to plot")
    stats = curve_means(df, metric, by=(by,), x=x)
    parts, vlines = [], []
    values = list(dict.fromkeys(df[by]))
    for i, val in enumerate(values):
        st = stats[stats[by] == val]
        color = (colors or {}).get(val) or ALGORITHM_COLORS.get(val) or PALETTE[i % len(PALETTE)]
        name = (labels or {}).get(val) or (f"{by}={val}" if by != "algorithm" else str(val))
        if band and st["n"].max() > 1:
            parts.append(hv.Area(st, x, ["lo", "hi"], label=name).opts(color=color, alpha=0.15,
                                                                        line_alpha=0))
        parts.append(hv.Curve(st, x, ("mean", Y_LABELS.get(metric, metric)), label=name).opts(
            color=color, line_width=2, tools=["hover"]))
        if mark_fraction:
            t = time_to_fraction(st[x].to_numpy(), st["mean"].to_numpy(), mark_fraction)
            if t is not None:
                vlines.append(hv.VLine(t).opts(color=color, line_dash="dotted", line_width=1.5))
    if bound is not None:
        parts.append(hv.HLine(bound).opts(color="black", line_dash="dashed", line_width=1))
    if local_optimum is not None:
        parts.append(hv.HLine(local_optimum).opts(color="grey", line_dash="dotted", line_width=1))
    overlay = hv.Overlay(parts + vlines)
    return overlay.opts(
        hv.opts.Curve(xlabel=X_LABELS.get(x, x), ylabel=Y_LABELS.get(metric, metric),
                      show_grid=True, frame_width=width, frame_height=height, logx=logx),
        hv.opts.Area(logx=logx),
        hv.opts.Overlay(title=title or "", legend_position="bottom_right", logx=logx))


def small_figure(records: "pandas.DataFrame", *, metric: str | None = None, x: str = "epoch",
                 band: bool = True, logx: bool = False, labels: dict | None = None,
                 dataset_labels: dict | None = None, bounds: dict | None = None,
                 local_optima: dict | None = None) -> hv.Layout:
    """Figs. 1–2 of the paper: one panel per data set × learning rate with the mean ATLL of
    every algorithm, the 90 % marks, and per data set its bound (``bounds``, e.g. −ln 14,
    −ln 9) and local optimum (``local_optima``, e.g. Shifting Bar −3.15).

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by the reproduction's ``run``).
    metric : str
        The ATLL column (default: :func:`metric_column`).
    x : str
        The x axis: ``epoch``, ``updates`` or ``gibbs_steps``.
    band : bool
        Draw the standard error as a band.
    logx : bool
        Logarithmic x axis.
    labels : dict algorithm → legend text. dataset_labels : dict data set → panel title.
        Display names of the algorithms.
    dataset_labels : dict
        Display names of the data sets.
    bounds : dicts data set → ATLL level drawn dashed / dotted.
        Best achievable ATLL per data set.
    local_optima : dicts data set → ATLL level drawn dashed / dotted.
        Known local optima per data set.

    Returns
    -------
    holoviews.Layout
        One panel per data set.
    """
    hv = _hv()
    panels = []
    datasets = list(dict.fromkeys(records["dataset"])) if "dataset" in records else [None]
    for ds in datasets:
        sub = records if ds is None else records[records["dataset"] == ds]
        etas = sorted(sub["learning_rate"].unique()) if "learning_rate" in sub else [None]
        for eta in etas:
            part = sub if eta is None else _select(sub, learning_rate=float(eta))
            name = (dataset_labels or {}).get(ds, ds or "")
            title = f"{name}, η = {eta:g}" if eta is not None else name
            panels.append(atll_curves(
                part, metric, x=x, band=band, bound=(bounds or {}).get(ds),
                local_optimum=(local_optima or {}).get(ds), labels=labels,
                title=title, logx=logx))
    return hv.Layout(panels).cols(2).opts(shared_axes=False)


def _value_label(column, value, k=None):
    if column == "k_inner":
        v = int(value)
        return f"d={k // v}, K′={v}" if k else f"K′={v}"
    if column == "learning_rate":
        return f"η={float(value):g}"
    if column == "batch_size":
        return f"batch {int(value)}"
    if column == "initialisation":
        return str(value)
    return f"{column}={value}"


def sensitivity_curves(records: "pandas.DataFrame", column: str, *, metric: str | None = None,
                       x: str = "epoch", algorithms: Sequence[str] | None = None,
                       k: int | None = None, title: str | None = None, band: bool = False,
                       width: int = 440, height: int = 280,
                       algorithm_labels: dict | None = None) -> hv.Layout:
    """Figs. 6–7: mean ATLL for each value of a sensitivity knob ``column``
    (``learning_rate``, ``k_inner`` — with d = k / K′ —, ``batch_size``,
    ``initialisation``), one panel per algorithm, one colour per value.

    ``algorithm_labels``: dict algorithm → panel title text.

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by the reproduction's ``run``).
    column : str
        The sensitivity knob (a column of ``records``).
    metric : str
        The ATLL column (default: :func:`metric_column`).
    x : str
        The x axis: ``epoch``, ``updates`` or ``gibbs_steps``.
    algorithms : sequence of str
        Algorithm names.
    k : int
        The Gibbs budget shown (default: all).
    title : str
        Title of the plot.
    band : bool
        Draw the standard error as a band.
    width, height : int
        Size of a panel in pixels.
    algorithm_labels : dict
        Display names of the algorithms.

    Returns
    -------
    holoviews.Layout
        One panel per algorithm.

    Raises
    ------
    ValueError
        If ``records`` has no column ``column``.
    """
    hv = _hv()
    if column not in records.columns:
        raise ValueError(f"records have no column {column!r}; columns: {list(records.columns)}")
    algorithms = algorithms or list(dict.fromkeys(records["algorithm"]))
    values = sorted(records[column].dropna().unique(), key=lambda v: (str(type(v)), v))
    colors = {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(values)}
    labels = {v: _value_label(column, v, k) for v in values}
    panels = []
    for alg in algorithms:
        sub = _select(records, algorithm=alg)
        panels.append(atll_curves(sub, metric, x=x, by=column, band=band, colors=colors,
                                  labels=labels, width=width, height=height,
                                  title=title or f"{(algorithm_labels or {}).get(alg, alg)}: "
                                                 f"{column.replace('_', ' ')}"))
    return hv.Layout(panels).cols(2).opts(shared_axes=False)


def _ssd_steps(records) -> str:
    """``", η = 0.01, SSD step 0.003"``: the other rules' rates and SSD's own step."""
    if "learning_rate" not in records:
        return ""
    ssd = records["algorithm"] == "ssd"
    fmt = ", ".join
    other = fmt(f"{e:g}" for e in sorted(records.loc[~ssd, "learning_rate"].unique()))
    own = fmt(f"{e:g}" for e in sorted(records.loc[ssd, "learning_rate"].unique()))
    return (f", η = {other}" if other else "") + (f", SSD step {own}" if own else "")


def large_figure(records: "pandas.DataFrame", *, study: str = "main", metric: str | None = None,
                 x: str = "epoch", k: int | None = None, band: bool = True,
                 labels: dict | None = None, dataset_labels: dict | None = None) -> hv.Layout:
    """The figure of a ``dc-mnist`` study: ``"main"`` (Figs. 3–4: one panel per data set ×
    learning rate, every algorithm), or a sensitivity study ``"eta"`` (Fig. 6a), ``"budget"``
    (Fig. 6b, d·K′ fixed), ``"batch"`` (Fig. 7a), ``"init"`` (Fig. 7b).  ``labels``: dict
    algorithm → legend text; ``dataset_labels``: dict data set → panel title.

    Parameters
    ----------
    records : pandas.DataFrame
        Tidy records of the experiment (as returned by the reproduction's ``run``).
    study : str
        The study: ``"main"``, a sensitivity study or ``"ssd"`` (every rule in one panel per
        data set, SSD at its own step).
    metric : str
        The ATLL column (default: :func:`metric_column`).
    x : str
        The x axis: ``epoch``, ``updates`` or ``gibbs_steps``.
    k : int
        The Gibbs budget shown (default: all).
    band : bool
        Draw the standard error as a band.
    labels : dict
        Display names of the algorithms.
    dataset_labels : dict
        Display names of the data sets.

    Returns
    -------
    holoviews.Layout
        The study's panels.

    Raises
    ------
    ValueError
        For an unknown study.
    """
    hv = _hv()
    column = {"eta": "learning_rate", "budget": "k_inner", "batch": "batch_size",
              "init": "initialisation"}.get(study)
    if study in ("main", "ssd"):
        panels = []
        for ds in dict.fromkeys(records["dataset"]) if "dataset" in records else [None]:
            sub = records if ds is None else records[records["dataset"] == ds]
            name = (dataset_labels or {}).get(ds, ds or "")
            if study == "ssd":      # every rule in one panel, SSD at its own step
                panels.append(atll_curves(sub, metric, x=x, band=band, labels=labels,
                                          title=name + _ssd_steps(sub)))
                continue
            etas = sorted(sub["learning_rate"].unique()) if "learning_rate" in sub else [None]
            for eta in etas:
                part = sub if eta is None else _select(sub, learning_rate=float(eta))
                panels.append(atll_curves(part, metric, x=x, band=band, labels=labels,
                                          title=f"{name}, η = {eta:g}" if eta is not None else name))
        return hv.Layout(panels).cols(2).opts(shared_axes=False)
    if column is None:
        raise ValueError(f"unknown study {study!r}; expected 'main', 'eta', 'budget', 'batch', "
                         f"'init' or 'ssd'")
    return sensitivity_curves(records, column, metric=metric, x=x, k=k,
                              algorithm_labels=labels)
