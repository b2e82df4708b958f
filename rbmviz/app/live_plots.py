"""Plain-Bokeh figures that the explorer's tabs update while a run streams.

Why not HoloViews ``Buffer``/``Pipe`` streams here: each ``send`` re-runs a HoloViews plot
update (element construction, range computation, a document-wide model recompute), about
0.1 s per stream on a 2-core machine, so a race with two curves and three images kept the
server's event loop busy ~0.3 s per batch, back to back.  The loop then read a browser's
click only between batches, several loop iterations per websocket message: a Pause clicked
while the race streamed reached the server 2–10 s later, or not within a test's wait.
Here a new point is one ``ColumnDataSource.stream`` (~1 ms) and a new image one
``source.data`` assignment; no model is created while a run streams, so the document needs
no freeze and no event hold (whose ``combine`` policy could reorder a data replacement and a
stream of the same source: a curve's ``updates`` column once arrived as ``[1, 0, 1, 2, …]``).

The figures are made once per run (Reset); :mod:`rbmviz.viz` keeps the HoloViews versions of
the same views for notebooks and static pages.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    FactorRange,
    HoverTool,
    Label,
    LinearColorMapper,
    Range1d,
    Span,
)
from bokeh.palettes import Greys256, RdBu, Viridis256, interp_palette
from bokeh.plotting import figure

from ..viz import X_LABELS, tile_images

__all__ = ["DIVERGING", "GREYS", "VIRIDIS", "LiveBars", "LiveCurves", "LiveHistogram",
           "LiveImage", "LiveScatter", "projector_style"]

#: negative weights blue, positive red (matplotlib's ``RdBu_r``)
DIVERGING = tuple(interp_palette(RdBu[11], 256))
#: 0 white, 1 black (matplotlib's ``gray_r``)
GREYS = tuple(reversed(Greys256))
#: a sequential palette for values without a natural zero (e.g. free energies)
VIRIDIS = tuple(Viridis256)


class LiveCurves:
    """Learning curves of several runs in one figure, fed point by point.

    The race tab's and the CD-bias tab's curves.  The legend sits to the right of the plot
    area (it never covers the newest points); clicking an entry hides that curve.

    Parameters
    ----------
    names : sequence of str
        One curve (and one ``ColumnDataSource``) per name, e.g. the racing algorithms.
    columns : sequence of str
        The columns each point carries; ``x`` and ``y`` must be among them, the others
        are kept for the hover tool and for switching the x axis.
    x, y : str
        Columns drawn on the axes.
    source_prefix : str
        Each source is named ``f"{source_prefix}{name}"`` (the browser tests find the
        streamed data by these names).
    colors : sequence of str
        Line colours, cycled.
    title, y_label : str
        Figure title and y-axis label.
    max_points : int
        Points kept per curve: beyond, the curve keeps every other old point (the whole
        history at half the resolution; bounded memory and bounded work per update).
    reference : float, optional
        A horizontal dashed line (e.g. the best log-likelihood possible), always inside the
        y range and named in the legend.
    dashed : iterable of str
        Names drawn with a dashed line (e.g. bounds next to the quantity they bound).
    height : int
        Minimum height in pixels (the figure stretches to the width of its pane).
    labels : mapping of str to str, optional
        Legend labels by name (default: the names).
    y_axis_type : {"linear", "log"}
        The y axis scale.
    x_label : str, optional
        The x-axis label (default: :data:`rbmviz.viz.X_LABELS` of ``x``).
    tooltips : sequence of str, optional
        Columns shown by the hover tool (default: all).
    reference_label : str, optional
        The legend entry of ``reference`` (default "best possible <value>").

    Raises
    ------
    ValueError
        When ``names`` is empty or ``x``/``y`` is not one of ``columns``.
    """

    def __init__(self, names: Sequence[str], columns: Sequence[str], *, x: str, y: str,
                 source_prefix: str, colors: Sequence[str], title: str = "",
                 y_label: str = "", max_points: int = 4000, reference: float | None = None,
                 dashed: Iterable[str] = (), height: int = 360,
                 labels: Mapping[str, str] | None = None, y_axis_type: str = "linear",
                 x_label: str | None = None, tooltips: Sequence[str] | None = None,
                 reference_label: str | None = None):
        names = list(names)
        if not names:
            raise ValueError("LiveCurves needs at least one curve name")
        for col in (x, y):
            if col not in columns:
                raise ValueError(f"column {col!r} is not among the curve columns {list(columns)}")
        self.columns, self.y, self.max_points = list(columns), y, int(max_points)
        self._x = x
        #: (position by x column, Span, Label) of every knob-change marker (:meth:`mark`)
        self.markers: list = []
        self.figure = figure(title=title, sizing_mode="stretch_width", min_height=height,
                             height=height, tools="pan,wheel_zoom,box_zoom,reset,save",
                             x_axis_label=x_label or X_LABELS.get(x, x),
                             y_axis_label=y_label or y, y_axis_type=y_axis_type)
        self.figure.grid.grid_line_alpha = 0.5
        self.sources: dict[str, ColumnDataSource] = {}
        self.renderers = {}
        dashed = set(dashed)
        for i, name in enumerate(names):
            src = ColumnDataSource({c: np.zeros(0) for c in self.columns},
                                   name=f"{source_prefix}{name}")
            self.sources[name] = src
            self.renderers[name] = self.figure.line(
                x=x, y=y, source=src, color=colors[i % len(colors)], line_width=2,
                line_dash="dashed" if name in dashed else "solid",
                legend_label=(labels or {}).get(name, name))
        if reference is not None:
            self.figure.add_layout(Span(location=float(reference), dimension="width",
                                        line_color="black", line_dash="dashed", line_width=1))
        shown = self.columns if tooltips is None else list(tooltips)
        self.hover = HoverTool(tooltips=[(c, f"@{{{c}}}{{0.[0000]}}") for c in shown],
                               renderers=list(self.renderers.values()))
        self.figure.add_tools(self.hover)
        if reference is not None:
            # the dashed line is an annotation (not ranged): a zero-length line at (0, ref)
            # keeps it inside the auto-ranged y axis and names it in the legend
            self.figure.line(x=[0.0, 0.0], y=[float(reference)] * 2, color="black",
                             line_dash="dashed", line_width=1,
                             legend_label=reference_label or f"best possible {reference:.3f}")
        # the legend beside the curves, never over the newest points (clicking hides a curve)
        legend = self.figure.legend[0]
        legend.click_policy = "hide"
        legend.location = "top_left"
        legend.border_line_alpha = 0
        self.figure.add_layout(legend, "right")

    def append(self, name: str, points: Mapping[str, Sequence[float]] | pd.DataFrame) -> None:
        """Add points (one value per column, in ``columns`` order of appearance) to a curve.

        Parameters
        ----------
        name : str
            The curve.
        points : mapping or DataFrame
            Columns of the new points; missing columns are filled with NaN.

        Raises
        ------
        KeyError
            When ``name`` is not one of the curves.
        """
        src = self.sources[name]
        n_new = len(next(iter(points.values())) if isinstance(points, Mapping) else points)
        if n_new == 0:
            return
        new = {c: (np.asarray(points[c], dtype=np.float64) if c in points
                   else np.full(n_new, np.nan)) for c in self.columns}
        n_old = len(src.data[self.columns[0]])
        if n_old + n_new > self.max_points:
            src.data = {c: np.concatenate([np.asarray(src.data[c])[::2], new[c]])
                        for c in self.columns}
        else:
            src.stream(new)

    def mark(self, at: Mapping[str, float], label: str) -> None:
        """A labelled vertical line where a knob changed (e.g. "k 12 → 4").

        Parameters
        ----------
        at : mapping
            The position in every x column (``{"epoch": 1500, "updates": 1500, ...}``: the
            marker follows :meth:`set_x`); a missing column hides it on that axis.
        label : str
            Its text.
        """
        x = self._x
        pos = at.get(x)
        span = Span(location=float(pos) if pos is not None else 0.0, dimension="height",
                    line_color="#555555", line_dash="dotted", line_width=1.5,
                    visible=pos is not None)
        text = Label(x=float(pos) if pos is not None else 0.0, y=6, y_units="screen",
                     text=f" {label}", text_font_size="11px", text_color="#333333",
                     angle=1.5707963, visible=pos is not None)
        self.figure.add_layout(span)
        self.figure.add_layout(text)
        self.markers.append((dict(at), span, text))

    def set_label(self, name: str, label: str) -> None:
        """Rename curve ``name`` in the legend (e.g. "CD-12" after k moved to 4).

        Parameters
        ----------
        name : str
            One of the curves' names.
        label : str
            The new legend entry.

        Raises
        ------
        KeyError
            When ``name`` is not one of the curves.
        """
        renderer = self.renderers[name]
        for item in self.figure.legend[0].items:
            if renderer in item.renderers:
                item.label = {"value": label}

    def set_x(self, x: str) -> None:
        """Draw every curve against another of its columns (e.g. ``"updates"``).

        The race tab's "x axis" choice; the knob-change markers move along.

        Parameters
        ----------
        x : str
            One of the curves' columns.

        Raises
        ------
        ValueError
            When ``x`` is not one of the columns.
        """
        if x not in self.columns:
            raise ValueError(f"x axis {x!r} is not among the curve columns {self.columns}")
        for r in self.renderers.values():
            r.glyph.x = x
        self.figure.xaxis.axis_label = X_LABELS.get(x, x)
        self._x = x
        for at, span, text in self.markers:
            pos = at.get(x)
            span.visible = text.visible = pos is not None
            if pos is not None:
                span.location = text.x = float(pos)

    def frame(self, name: str) -> pd.DataFrame:
        """The points of one curve (what the browser has been sent).

        Parameters
        ----------
        name : str
            One of the curves' names.

        Returns
        -------
        pandas.DataFrame
            One row per point, one float column per curve column.

        Raises
        ------
        KeyError
            When ``name`` is not one of the curves.
        """
        data = self.sources[name].data
        return pd.DataFrame({c: np.asarray(data[c], dtype=np.float64) for c in self.columns})

    def __len__(self) -> int:
        return len(self.sources)


class LiveImage:
    """A grayscale or diverging image (a tile of receptive fields or samples), replaced whole.

    Parameters
    ----------
    title : str
        Figure title.
    palette : sequence of str
        :data:`DIVERGING` (limits ±max|value|, with a colour bar) or :data:`GREYS`.
    symmetric : bool
        Colour limits ±max|value| of each new image; otherwise ``clim``.
    clim : (float, float)
        Fixed colour limits when not ``symmetric``.
    size : int
        Pixels of the longer side of the frame.
    colorbar : bool
        Draw a colour bar.
    """

    def __init__(self, *, title: str, palette: Sequence[str] = GREYS, symmetric: bool = False,
                 clim: tuple[float, float] = (0.0, 1.0), size: int = 300, colorbar: bool = False):
        self.symmetric, self.size = symmetric, int(size)
        self.mapper = LinearColorMapper(palette=list(palette), low=clim[0], high=clim[1],
                                        nan_color="white")
        self.source = ColumnDataSource({"image": [np.zeros((1, 1))], "dw": [1], "dh": [1]})
        self.colorbar = bool(colorbar)
        # a title wider than a small tile widens the box (~7 px a character at Bokeh's 13 px
        # bold) instead of being cut ("noisy (channel outpu")
        self._title_width = 7 * len(title) + 2 * self.BORDER
        self.figure = figure(title=title, x_range=Range1d(0, 1), y_range=Range1d(0, 1),
                             tools="hover,save", tooltips=[("value", "@image{0.000}")],
                             frame_width=size, frame_height=size, toolbar_location=None,
                             min_border=4)
        self._fit(size, size)
        self.figure.image(image="image", x=0, y=0, dw="dw", dh="dh", source=self.source,
                          color_mapper=self.mapper)
        self.figure.axis.visible = False
        self.figure.grid.visible = False
        if colorbar:
            self.figure.add_layout(ColorBar(color_mapper=self.mapper, width=10), "right")
        self.shape: tuple[int, int] | None = None

    #: pixels around the frame: the title above, the colour bar (with its tick labels) right
    TITLE_HEIGHT, COLORBAR_WIDTH, BORDER = 30, 70, 8

    def _fit(self, frame_width: int, frame_height: int) -> None:
        """Frame of ``frame_width`` × ``frame_height`` pixels and an outer box that holds the
        frame, the title and the colour bar exactly (Bokeh's default 600 × 600 box left blank
        space and pushed the page wider than a projector)."""
        f = self.figure
        f.frame_width, f.frame_height = int(frame_width), int(frame_height)
        f.width = max(int(frame_width) + 2 * self.BORDER + (self.COLORBAR_WIDTH if self.colorbar else 0),
                      self._title_width)
        f.height = int(frame_height) + self.TITLE_HEIGHT + 2 * self.BORDER

    def update(self, grid: np.ndarray) -> None:
        """Show a new image (row 0 at the top, as in a tile of digits).

        Parameters
        ----------
        grid : numpy.ndarray
            The 2-D image (NaN pixels are drawn transparent, e.g. tile gaps).

        Raises
        ------
        ValueError
            When ``grid`` is not 2-D.
        """
        grid = np.asarray(grid, dtype=np.float64)
        if grid.ndim != 2:
            raise ValueError(f"an image must be 2-D, got shape {grid.shape}")
        h, w = grid.shape
        if self.shape != (h, w):                 # square pixels in a size × size box
            self.shape = (h, w)
            scale = self.size / max(h, w)
            self._fit(max(40, round(w * scale)), max(40, round(h * scale)))
            self.figure.x_range.end, self.figure.y_range.end = w, h
        if self.symmetric:
            lim = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
            lim = lim or 1.0
            self.mapper.low, self.mapper.high = -lim, lim
        self.source.data = {"image": [grid[::-1]], "dw": [w], "dh": [h]}

    def update_tiles(self, rows: np.ndarray, shape: tuple[int, int] | None = None,
                     fill: float = np.nan) -> None:
        """Tile ``rows`` (one image per row, :func:`rbmviz.viz.tile_images`) and show them.

        The race tab's receptive fields (columns of ``W``) and chain samples.

        Parameters
        ----------
        rows : numpy.ndarray
            One flattened image per row.
        shape : tuple of int, optional
            ``(height, width)`` of one image (default :func:`rbmviz.viz.image_shape`: square
            when the row length is a square number, else one row).
        fill : float
            Value of the gaps between tiles (NaN: transparent).

        Raises
        ------
        ValueError
            When the rows do not hold ``shape`` pixels each (numpy's reshape).
        """
        self.update(tile_images(rows, shape, fill=fill))


class LiveBars:
    """Grouped bars, e.g. p(v) of the model next to the data's, with fixed categories.

    The race tab's distribution over all patterns of a small model.

    Parameters
    ----------
    categories : sequence of str
        The groups on the x axis (kept while streaming, so only the heights change).
    series : sequence of str
        The bars within a group (e.g. ``("model", "data")``).
    colors : sequence of str
        One colour per series.
    title, y_label : str
        Figure title and y-axis label.
    height : int
        Minimum height in pixels.
    labels : mapping of str to str, optional
        Legend names by series (default: the series).
    """

    def __init__(self, categories: Sequence[str], series: Sequence[str], *,
                 colors: Sequence[str], title: str = "", y_label: str = "p", height: int = 280,
                 labels: Mapping[str, str] | None = None):
        self.categories, self.series = list(categories), list(series)
        x = [(c, s) for c in self.categories for s in self.series]
        color = [colors[j % len(colors)] for _ in self.categories for j in range(len(self.series))]
        self.source = ColumnDataSource({"x": x, "top": np.zeros(len(x)), "color": color,
                                        "series": [s for _ in self.categories for s in self.series],
                                        "label": self._labels(labels)})
        self.figure = figure(x_range=FactorRange(*x), title=title, sizing_mode="stretch_width",
                             height=height, min_height=height, tools="save",
                             tooltips=[("pattern", "@x"), ("", "@label"), ("p", "@top{0.0000}")],
                             y_axis_label=y_label)
        self.figure.vbar(x="x", top="top", width=0.9, color="color", legend_field="label",
                         source=self.source)
        self.figure.xaxis.major_label_orientation = np.pi / 2
        self.figure.xaxis.group_label_orientation = np.pi / 2
        # the series' names beside the bars, not over them
        legend = self.figure.legend[0]
        legend.location = "top_left"
        legend.border_line_alpha = 0
        self.figure.add_layout(legend, "right")
        self.figure.y_range.start = 0

    def _labels(self, labels: Mapping[str, str] | None) -> list[str]:
        labels = labels or {}
        return [labels.get(s, s) for _ in self.categories for s in self.series]

    def set_labels(self, labels: Mapping[str, str]) -> None:
        """New legend names for the series (e.g. a rule's k changed).

        Parameters
        ----------
        labels : mapping of str to str
            ``{series: name}``; a series left out is named by itself.
        """
        self.source.patch({"label": [(slice(0, len(self.source.data["label"])),
                                      self._labels(labels))]})

    def update(self, heights: Mapping[str, Sequence[float]]) -> None:
        """New bar heights.

        Parameters
        ----------
        heights : mapping of str to sequence of float
            One sequence per series, aligned with ``categories``.

        Raises
        ------
        ValueError
            When a series is missing or has the wrong length.
        """
        cols = []
        for s in self.series:
            h = np.asarray(heights[s], dtype=np.float64) if s in heights else None
            if h is None or h.shape != (len(self.categories),):
                raise ValueError(f"series {s!r} needs {len(self.categories)} heights")
            cols.append(h)
        top = np.stack(cols, axis=1).ravel()
        self.source.patch({"top": [(slice(0, len(top)), top)]})


class LiveScatter:
    """Points coloured by one of their columns (e.g. TAP solutions coloured by their free
    energy), optionally drawn over a grey background set; both replaced whole.

    Parameters
    ----------
    columns : sequence of str
        The columns of a point; ``"x"``, ``"y"`` and ``color`` must be among them (the others
        appear in the hover tool, and ``size`` may name one).
    color : str
        The column mapped to colour through a :class:`~bokeh.models.LinearColorMapper` whose
        limits follow the data of every update.
    name : str
        Name of the points' ``ColumnDataSource`` (browser tests find the data by it).
    background_name : str, optional
        With a name, a grey background layer (columns ``x``, ``y``) drawn under the points.
    size : str or float
        Marker size in pixels, or the column holding it.
    palette : sequence of str
        Colours of the mapper (:data:`VIRIDIS` by default).
    title, x_label, y_label, color_label : str
        Figure title, axis labels and colour-bar title.
    height : int
        Minimum height in pixels (the figure stretches to the width of its pane).

    Raises
    ------
    ValueError
        When ``x``, ``y`` or ``color`` is not among ``columns``.
    """

    def __init__(self, columns: Sequence[str], *, color: str, name: str,
                 background_name: str | None = None, size: str | float = 6,
                 palette: Sequence[str] = VIRIDIS, title: str = "", x_label: str = "x",
                 y_label: str = "y", color_label: str = "", height: int = 420):
        self.columns = list(columns)
        for col in ("x", "y", color) + ((size,) if isinstance(size, str) else ()):
            if col not in self.columns:
                raise ValueError(f"column {col!r} is not among the scatter columns {self.columns}")
        self.color = color
        self.mapper = LinearColorMapper(palette=list(palette), low=0.0, high=1.0)
        self.figure = figure(title=title, sizing_mode="stretch_width", min_height=height,
                             height=height, tools="pan,wheel_zoom,box_zoom,reset,save",
                             x_axis_label=x_label, y_axis_label=y_label)
        self.figure.grid.grid_line_alpha = 0.5
        self.background = None
        if background_name is not None:
            self.background = ColumnDataSource({"x": np.zeros(0), "y": np.zeros(0)},
                                               name=background_name)
            self.figure.scatter(x="x", y="y", source=self.background, size=3, color="#d0d0d0")
        self.source = ColumnDataSource({c: np.zeros(0) for c in self.columns}, name=name)
        self.renderer = self.figure.scatter(
            x="x", y="y", source=self.source, size=size, line_color="black",
            fill_color={"field": color, "transform": self.mapper})
        self.figure.add_tools(HoverTool(
            tooltips=[(c, f"@{{{c}}}{{0.[0000]}}") for c in self.columns if c != size],
            renderers=[self.renderer]))
        self.figure.add_layout(ColorBar(color_mapper=self.mapper, width=10, title=color_label),
                               "right")

    def update(self, points: Mapping[str, Sequence[float]] | pd.DataFrame,
               background: Mapping[str, Sequence[float]] | None = None) -> None:
        """Replace the points and, if given, the background.

        Parameters
        ----------
        points : mapping or pandas.DataFrame
            Every column of the scatter, of equal lengths.
        background : mapping, optional
            Columns ``x`` and ``y`` of the grey background layer (with ``background_name``).

        Raises
        ------
        ValueError
            When a column is missing or the columns differ in length.
        """
        data = {}
        for c in self.columns:
            if c not in points:
                raise ValueError(f"points need the column {c!r}")
            data[c] = np.asarray(points[c], dtype=np.float64).ravel()
        if len({len(v) for v in data.values()}) > 1:
            raise ValueError(f"scatter columns differ in length: "
                             f"{ {c: len(v) for c, v in data.items()} }")
        if background is not None:
            if self.background is None:
                raise ValueError("this scatter has no background layer (background_name)")
            bx = np.asarray(background["x"], dtype=np.float64).ravel()
            by = np.asarray(background["y"], dtype=np.float64).ravel()
            if bx.shape != by.shape:
                raise ValueError("background x and y differ in length")
            self.background.data = {"x": bx, "y": by}
        values = data[self.color][np.isfinite(data[self.color])]
        if len(values):
            lo, hi = float(values.min()), float(values.max())
            if hi - lo <= 1e-12 * max(1.0, abs(hi)):     # one value: a visible band around it
                lo, hi = lo - 0.5, hi + 0.5
            self.mapper.update(low=lo, high=hi)
        self.source.data = data


class LiveHistogram:
    """A histogram drawn from precomputed bin edges and heights (one ``quad`` glyph), replaced
    whole.

    Parameters
    ----------
    name : str
        Name of the ``ColumnDataSource`` (columns ``left``, ``right`` and ``count_column``).
    count_column : str
        Name of the heights column (e.g. ``"solutions"``).
    color : str
        Bar colour.
    title, x_label, y_label : str
        Figure title and axis labels.
    height : int
        Minimum height in pixels (the figure stretches to the width of its pane).
    """

    def __init__(self, *, name: str, count_column: str = "count", color: str = "#9467bd",
                 title: str = "", x_label: str = "value", y_label: str = "count",
                 height: int = 260):
        self.count_column = count_column
        self.source = ColumnDataSource({"left": np.zeros(0), "right": np.zeros(0),
                                        count_column: np.zeros(0)}, name=name)
        self.figure = figure(title=title, sizing_mode="stretch_width", min_height=height,
                             height=height, tools="pan,wheel_zoom,box_zoom,reset,save",
                             x_axis_label=x_label, y_axis_label=y_label,
                             tooltips=[("from", "@left{0.[0000]}"), ("to", "@right{0.[0000]}"),
                                       (y_label, f"@{{{count_column}}}")])
        self.figure.quad(left="left", right="right", bottom=0, top=count_column,
                         source=self.source, color=color, line_color="white")
        self.figure.y_range.start = 0

    def update(self, edges: Sequence[float], heights: Sequence[float]) -> None:
        """Replace the bins.

        Parameters
        ----------
        edges : sequence of float
            Bin edges, ``len(heights) + 1`` of them (or none, with no heights).
        heights : sequence of float
            The bin counts.

        Raises
        ------
        ValueError
            When the lengths do not match.
        """
        edges = np.asarray(edges, dtype=np.float64).ravel()
        heights = np.asarray(heights, dtype=np.float64).ravel()
        if not (len(edges) == len(heights) + 1 or len(edges) == len(heights) == 0):
            raise ValueError(f"a histogram needs len(edges) == len(heights) + 1, got "
                             f"{len(edges)} edges and {len(heights)} heights")
        self.source.data = {"left": edges[:-1], "right": edges[1:], self.count_column: heights}


#: (normal, projector) font sizes and curve widths of :func:`projector_style`
_FONTS = {"title": ("13px", "20px"), "axis_label": ("13px", "18px"),
          "major_label": ("11px", "16px"), "legend": ("13px", "17px")}
_LINE = (2, 4)


def projector_style(fig: figure, on: bool) -> None:
    """Projector fonts and thick curves for a Bokeh figure (classroom mode), or back to normal.

    Titles, axis labels, tick labels and legends grow to sizes readable from the back of a
    lecture hall; solid curves get twice the line width (dashed and dotted ones, e.g. bounds
    and markers, keep theirs).

    Parameters
    ----------
    fig : bokeh.plotting.figure
        A live figure of a tab (restyled in place).
    on : bool
        Projector style (True) or the normal one.
    """
    i = int(bool(on))
    if fig.title is not None:
        fig.title.text_font_size = _FONTS["title"][i]
    for axis in list(fig.xaxis) + list(fig.yaxis):
        axis.axis_label_text_font_size = _FONTS["axis_label"][i]
        axis.major_label_text_font_size = _FONTS["major_label"][i]
    for legend in fig.legend:
        legend.label_text_font_size = _FONTS["legend"][i]
    for r in fig.renderers:
        glyph = getattr(r, "glyph", None)
        if type(glyph).__name__ == "Line" and glyph.line_dash in ("solid", []):
            glyph.line_width = _LINE[i]
