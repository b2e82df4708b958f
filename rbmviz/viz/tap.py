"""Plots of TAP machines (Tramel et al. 2018, Figs. 4–8): pure functions from the tables of
:mod:`rbmviz.tap.landscape` / :mod:`rbmviz.tap.denoising` to HoloViews objects.

* :func:`solution_count_curves` — unique solutions and mean TAP free energy per epoch (Fig. 5);
* :func:`free_energy_distributions` — KDE of the unique solutions' free energies per epoch (Fig. 5);
* :func:`solution_maps` — one Isomap, every epoch, coloured by free energy (Fig. 6);
* :func:`data_solution_map` — data points and the solutions they converge to (Fig. 7);
* :func:`ranked_receptive_fields` — the extremes of a ranking of receptive fields (Fig. 4);
* :func:`denoising_curves` — MCC against the flip probability per method (Fig. 8);
* :func:`solution_gallery` — TAP solutions (or any images) tiled at a readable size;
* :func:`reproduction_figure` — the figure of ``rbmviz reproduce tap`` (Figs. 3, 5–8).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from . import receptive_fields as _receptive_fields

if TYPE_CHECKING:
    import holoviews as hv
    import pandas

__all__ = ["solution_count_curves", "free_energy_distributions", "solution_maps",
           "data_solution_map", "ranked_receptive_fields", "denoising_curves", "PARTS",
           "solution_gallery",
           "reproduction_figure"]


def _hv():
    import holoviews as hv
    if not hv.Store.renderers:            # options need a plotting backend
        hv.extension("bokeh", logo=False)
    return hv


def solution_count_curves(summary: dict, *, title: str | None = "TAP solutions") -> hv.Overlay:
    """``summary`` from :func:`rbmviz.tap.landscape.epoch_statistics`: the number of unique
    solutions (left) and their mean TAP free energy (right) against the epoch.

    Parameters
    ----------
    summary : dict
        The summary (as returned by ``summarize``): per epoch ``n_unique`` and
        ``mean_free_energy``.
    title : str or None
        Title of the plot.

    Returns
    -------
    holoviews.Overlay
        Two curves against the epoch: the number of unique solutions (left) and their mean
        TAP free energy (right).
    """
    hv = _hv()
    n = hv.Curve(summary, "epoch", ("n_unique", "unique TAP solutions")).opts(
        color="green", tools=["hover"], title=title)
    f = hv.Curve(summary, "epoch", ("mean_free_energy", "mean TAP free energy")).opts(
        color="red", tools=["hover"], title="mean free energy of the unique solutions")
    return (n * hv.Scatter(n).opts(color="green") + f * hv.Scatter(f).opts(color="red")).cols(2)


def free_energy_distributions(solutions: "pandas.DataFrame", *, epochs: Sequence[int] | None = None,
                              n_grid: int = 200,
                              title: str | None = "TAP free energies") -> hv.Overlay:
    """``solutions`` (the second table of ``epoch_statistics``): a Gaussian KDE of the unique
    solutions' free energies for each epoch (``epochs`` selects some).

    Parameters
    ----------
    solutions : pandas.DataFrame
        The second table of :func:`rbmviz.tap.landscape.epoch_statistics`.
    epochs : sequence of int
        Epochs shown (default: all).
    n_grid : int
        Points of the density grid.
    title : str
        Title of the plot.

    Returns
    -------
    holoviews.Overlay
        One density curve (Gaussian KDE) per epoch, overlaid.
    """
    from ..tap.landscape import free_energy_kde

    hv = _hv()
    curves = {}
    for epoch, grp in solutions.groupby("epoch"):
        if epochs is not None and epoch not in epochs:
            continue
        g, d = free_energy_kde(grp["free_energy"].to_numpy(), n_grid=n_grid)
        curves[epoch] = hv.Curve((g, d), "free energy", "density").opts(tools=["hover"])
    return hv.NdOverlay(curves, kdims="epoch").opts(title=title, legend_position="right")


def solution_maps(frame: "pandas.DataFrame", *, cols: int = 4, size: int = 240) -> hv.Layout:
    """``frame`` from :func:`rbmviz.tap.landscape.epoch_maps`: one panel per epoch in the
    shared Isomap coordinates, coloured by the free energy scaled to [0, 1] within the epoch
    (Fig. 6).

    Parameters
    ----------
    frame : pandas.DataFrame
        The frame to draw.
    cols : int
        Panels (or images) per row.
    size : int
        Size of a panel in pixels.

    Returns
    -------
    holoviews.Layout
        One map per epoch, ``cols`` a row.
    """
    hv = _hv()
    panels = {e: hv.Points(g, ["x", "y"], ["fe_scaled", "free_energy"]).opts(
        color="fe_scaled", cmap="viridis", size=5, tools=["hover"], frame_width=size,
        frame_height=size, colorbar=False) for e, g in frame.groupby("epoch")}
    return hv.NdLayout(panels, kdims="epoch").cols(cols)


def data_solution_map(frame: "pandas.DataFrame", *, title: str | None = "data → TAP solutions",
                      size: int = 360) -> hv.Overlay:
    """``frame`` from :func:`rbmviz.tap.landscape.data_solution_map`: data points (grey),
    the solutions they reach (coloured by ``label`` when present) and a segment joining each
    pair (Fig. 7).

    Parameters
    ----------
    frame : pandas.DataFrame
        The frame to draw.
    title : str
        Title of the plot.
    size : int
        Size of a panel in pixels.

    Returns
    -------
    holoviews.Overlay
        The data points and the TAP solutions they reach, on one map.
    """
    hv = _hv()
    seg = hv.Segments(frame, ["x", "y", "sol_x", "sol_y"]).opts(color="lightgray", line_width=0.5)
    data = hv.Points(frame, ["x", "y"]).opts(color="gray", size=3, alpha=0.6)
    vdims = ["label"] if "label" in frame else []
    sols = hv.Points(frame, ["sol_x", "sol_y"], vdims).opts(
        size=7, marker="diamond", tools=["hover"],
        **({"color": "label", "cmap": "Category10"} if vdims else {"color": "black"}))
    return (seg * data * sols).opts(title=title, frame_width=size, frame_height=size)


def ranked_receptive_fields(W: np.ndarray, ranking: "pandas.DataFrame", *, n: int = 10,
                            shape: tuple[int, int] | None = None, title: str | None = None,
                            cols: int = 5, pixel: int = 3) -> hv.Layout:
    """The ``n`` first and ``n`` last receptive fields of a ranking (``ranking`` from
    :func:`rbmviz.tap.landscape.rank_receptive_fields`): e.g. the most localised and the most
    spread-out fields (Fig. 4), ``cols`` per row at ``pixel`` screen pixels per weight.

    Parameters
    ----------
    W : numpy.ndarray
        Weights, shape (n_visible, n_hidden).
    ranking : pandas.DataFrame
        From :func:`rbmviz.tap.landscape.rank_receptive_fields`.
    n : int
        Fields shown from each end of the ranking.
    shape : tuple of int
        Image shape (rows, columns).
    title : str
        Title of the plot.
    cols : int
        Panels (or images) per row.
    pixel : int
        Screen pixels per image pixel.

    Returns
    -------
    holoviews.Layout
        The first and last ``n`` fields of the ranking as images, ``cols`` a row.
    """
    _hv()                                 # loads the plotting backend if needed
    W = np.asarray(W, dtype=np.float64)
    units = ranking["unit"].to_numpy()
    n = min(n, len(units) // 2 or 1)
    cols = max(1, min(cols, n))

    def panel(idx, label):
        img = _receptive_fields(W[:, idx], shape, n_cols=cols, title=label)
        h, w = img.dimension_values(2, flat=False).shape
        width = max(w * pixel, 7 * len(label) + 60)
        return img.opts(frame_width=width, frame_height=int(round(h * width / w)))
    low = panel(units[:n], f"lowest {n}" + (f" — {title}" if title else ""))
    high = panel(units[-n:], f"highest {n}" + (f" — {title}" if title else ""))
    return (low + high).cols(2)


def denoising_curves(df: "pandas.DataFrame", *,
                     title: str | None = "denoising a binary symmetric channel") -> hv.Overlay:
    """``df`` from :func:`rbmviz.tap.denoising.denoising_curve`: mean MCC ± standard error
    against the flip probability, one curve per method (Fig. 8).

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`rbmviz.tap.denoising.denoising_curve`.
    title : str
        Title of the plot.

    Returns
    -------
    holoviews.Overlay
        One MCC curve per estimator against the flip probability p.
    """
    hv = _hv()
    names = {"tap": "TAP", "ope": "OPE", "nn": "1-NN"}
    layers = []
    for method, g in df.groupby("method", sort=False):
        g = g.sort_values("p")
        label = names.get(method, method)
        layers.append(hv.Curve(g, "p", "mcc", label=label).opts(tools=["hover"]))
        layers.append(hv.ErrorBars(g, "p", ["mcc", "mcc_sem"], label=label))
    return hv.Overlay(layers).opts(title=title, legend_position="top_right", xlabel="flip probability p",
                                   ylabel="MCC")


def solution_gallery(images: np.ndarray, shape: tuple[int, int], *, cols: int = 10, pixel: int = 3,
                     title: str | None = "TAP solutions", gap: int = 2) -> hv.RGB:
    """Images (the rows of ``images``, e.g. the visible magnetisations ``a^v`` of unique TAP
    solutions) tiled ``cols`` per row at ``pixel`` screen pixels per image pixel — big
    enough to read, with room for the title.

    Parameters
    ----------
    images : array (n, h * w) with values in [0, 1]
        Images as rows.
    shape : tuple of int
        (h, w)
    cols : int
        Images per row.
    pixel : int
        Screen pixels per image pixel.
    title : str
        Title of the plot.
    gap : int
        Blank image pixels between tiles.

    Returns
    -------
    holoviews.RGB
        The gallery image.

    Raises
    ------
    ValueError
        If ``images`` is empty or its rows do not match ``shape``.
    """
    hv = _hv()
    A = np.asarray(images, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != shape[0] * shape[1]:
        raise ValueError(f"images must have shape (n, {shape[0] * shape[1]}), got {A.shape}")
    n = A.shape[0]
    if n == 0:
        raise ValueError("images is empty")
    cols = max(1, min(int(cols), n))
    rows = -(-n // cols)
    h, w = shape
    grid = np.full((rows * (h + gap) + gap, cols * (w + gap) + gap), np.nan)
    for k in range(n):
        r, c = divmod(k, cols)
        grid[gap + r * (h + gap): gap + r * (h + gap) + h,
             gap + c * (w + gap): gap + c * (w + gap) + w] = A[k].reshape(shape)
    H, Wd = grid.shape
    width = max(Wd * pixel, 8 * len(title) + 40)
    return hv.Image(grid, bounds=(0, 0, Wd, H)).opts(            # row 0 drawn at the top
        cmap="gray_r", clim=(0, 1), frame_width=width, frame_height=int(H * pixel * width / (Wd * pixel)),
        xaxis=None, yaxis=None, title=title, clipping_colors={"NaN": "white"}, toolbar=None)


#: the panels :func:`figure` can draw
PARTS = ("curves", "counts", "free_energy", "isomap", "data_map", "denoising")


def reproduction_figure(tables: dict, parts: Sequence[str] = PARTS, *, cols: int = 3) -> hv.Layout:
    """The figure of ``rbmviz reproduce tap`` (HoloViews Layout) from the tables of
    :func:`rbmviz.reproduce.tap_run.run`, panels in the order of ``parts``:

    * ``"curves"`` — TAP log-likelihood per unit with its standard error band (Fig. 3);
    * ``"counts"`` — number of unique TAP solutions over epochs (Fig. 5, green);
    * ``"free_energy"`` — TAP free energies 𝔽_RBM of the unique solutions (dots) and their
      unweighted mean (line) over epochs (Fig. 5);
    * ``"isomap"`` — one panel per mapped epoch: the unique solutions in the shared Isomap,
      coloured by free energy rescaled within the epoch (Fig. 6);
    * ``"data_map"`` — per mapped epoch, the digits 3, 6, 7 (coloured by class; the CBCL faces
      in one colour) and the visible magnetisations they converge to (black crosses) in the
      data's Isomap (Fig. 7);
    * ``"denoising"`` — MCC against the flip probability, TAP per N_h, OPE, 1-NN (Fig. 8).

    Panels without data are left out.

    Parameters
    ----------
    tables : dict
        ``{name: pandas.DataFrame}``: the tables of the TAP reproduction (``curves``,
        ``counts``, ``solutions``, ...).
    parts : sequence of str
        Panels of the figure, in order (a subset of :data:`PARTS`).
    cols : int
        Panels (or images) per row.

    Returns
    -------
    holoviews.Layout
        The panels of ``parts`` that have data, ``cols`` a row.

    Raises
    ------
    ValueError
        For an unknown part.
    """
    hv = _hv()
    for part in parts:
        if part not in PARTS:
            raise ValueError(f"unknown figure part {part!r}; expected some of {list(PARTS)}")
    curves = tables["curves"]
    opts = dict(width=430, height=300, show_grid=True, tools=["hover"])
    by_part = {}
    ll = []
    for nh, g in curves.groupby("n_hidden", sort=False):
        g = g.sort_values("epoch")
        ll.append(hv.Spread((g["epoch"], g["tap_ll_per_unit"], g["tap_ll_per_unit_sem"]),
                            "epoch", ["TAP LL per unit", "s.e."], label=f"N_h={nh}").opts(alpha=0.3))
        ll.append(hv.Curve((g["epoch"], g["tap_ll_per_unit"]), "epoch", "TAP LL per unit",
                           label=f"N_h={nh}").opts(**opts))
    by_part["curves"] = [hv.Overlay(ll).opts(title="TAP log-likelihood per unit (Fig. 3)",
                                             legend_position="bottom_right")]
    cnt = [hv.Curve((g["epoch"], g["n_unique"]), "epoch", "unique TAP solutions",
                    label=f"N_h={nh}").opts(**opts)
           for nh, g in curves.groupby("n_hidden", sort=False)]
    by_part["counts"] = [hv.Overlay(cnt).opts(title="unique TAP solutions (Fig. 5, green)",
                                              legend_position="top_left")]
    sols = tables["solutions"]
    fe = []
    for nh, g in sols.groupby("n_hidden", sort=False):
        pts = hv.Scatter(g, "epoch", ["free_energy", "count", "solution"], label=f"N_h={nh}")
        fe.append(pts.opts(size=5, alpha=0.5, tools=["hover"]))
        m = curves[curves["n_hidden"] == nh].sort_values("epoch")
        fe.append(hv.Curve((m["epoch"], m["mean_free_energy"]), "epoch", "free_energy",
                           label=f"N_h={nh} mean").opts(line_width=2))
    by_part["free_energy"] = [hv.Overlay(fe).opts(hv.opts.Overlay(
        title="TAP free energies of unique solutions (Fig. 5)", legend_position="top_left",
        width=430, height=300, show_grid=True))] if fe else []
    iso = tables["isomap"]
    by_part["isomap"] = [
        hv.Scatter(g, "x", ["y", "fe_scaled", "free_energy", "count", "solution"]).opts(
            color="fe_scaled", cmap="viridis", size=6, colorbar=True, tools=["hover"],
            width=320, height=270, title=f"Fig. 6: {len(g)} solutions, epoch {ep}")
        for ep, g in iso.groupby("epoch")] if len(iso) else []
    dm = tables["data_map"]
    by_part["data_map"] = []
    for ep, g in (dm.groupby("epoch") if len(dm) else []):
        classes = sorted(set(g["label"]))
        data = hv.Scatter(g, "x", ["y", "label"], label="data")
        if len(classes) > 1:          # the digits 3, 6, 7 (Fig. 7a-b), coloured by class
            data = data.opts(color="label", cmap="Category10", size=3, alpha=0.35)
            what = "digits " + ", ".join(str(c) for c in classes)
        else:                         # one class (the CBCL faces, Fig. 7c): one colour
            data = data.opts(color="#1f77b4", size=3, alpha=0.35)
            what = "training images"
        sol = hv.Scatter(g, "sol_x", ["sol_y", "free_energy"], label="TAP solutions").opts(
            color="black", marker="x", size=8)
        by_part["data_map"].append((data * sol).opts(hv.opts.Overlay(
            title=f"Fig. 7: {what}, epoch {ep}", width=320, height=270,
            show_legend=False)))
    den = tables["denoising"]
    by_part["denoising"] = []
    if len(den):
        dc = []
        for (nh, method), g in den.groupby(["n_hidden", "method"], sort=False):
            name = f"TAP N_h={nh}" if method == "tap" else ("1-NN" if method == "nn" else "OPE")
            dc.append(hv.Curve((g["p"], g["mcc"]), "p", "MCC", label=name).opts(**opts))
        by_part["denoising"] = [hv.Overlay(dc).opts(
            title="denoising a binary symmetric channel (Fig. 8)", legend_position="top_right")]
    panels = [p for part in parts for p in by_part[part]]
    return hv.Layout(panels).cols(cols)


