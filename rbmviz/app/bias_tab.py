"""The explorer's "CD bias" tab: a small RBM trains with the exact expected CD-k update while
its true bias, Fischer & Igel's bound and the Bengio–Delalleau-type bound stream on a log
axis, with the bound's two factors in a second plot.

Mirrors :class:`rbmviz.app.race_tab.ExplorerSession`: :class:`rbmviz.live.bias.BiasRace` trains on
its own thread and calls its sink (``_current_sink``) at most 10 times a second; the sink waits (back-pressure)
until the browser took the previous batch and schedules ``_drain`` on the document's event
loop, which streams the records into one Bokeh source per curve
(:mod:`rbmviz.app.live_plots`).  One
:class:`BiasSession` per browser session (the factory runs per session); closing the tab
stops its thread.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import panel as pn

from ..live.bias import BIAS_DATASETS, BiasRace
from .feed import SettingsSession, change_text
from .help import help_card
from .live_plots import LiveCurves
from .widgets import widget_for

#: values are clipped to this range before they reach the log axis
CLIP = (1e-12, 1e12)
#: series → (legend label, colour, plot)
SERIES = {
    "bias": ("true bias (exact, max over parameters)", "#d62728", "bias"),
    "bound": ("Fischer–Igel bound (Thm 4)", "#1f77b4", "bias"),
    "bd_bound": ("Bengio–Delalleau-type bound (stand-in)", "#7f7f7f", "bias"),
    "distance": ("distance ½‖p_e − p‖₁", "#2ca02c", "factors"),
    "mixing": ("mixing (1 − e^{−(m+n)Δ})ᵏ", "#ff7f0e", "factors"),
}
RESET_KNOBS = {"dataset", "n_hidden", "init_scale", "seed"}
FORMULA = (r"\text{bias}_k \;\le\; \underbrace{\tfrac12\lVert p_e - p\rVert_1}_{\text{distance}}"
           r"\;\underbrace{\bigl(1 - e^{-(m+n)\Delta}\bigr)^{k}}_{\text{mixing}}")
INTRO = """\
A small RBM (m visible, n hidden units) trains with the **exact expected CD-k update** (no
sampling: every state is enumerated).  The red curve is the true bias of that update — the
largest difference, over all parameters, between the log-likelihood gradient and the expected
CD-k update.  Fischer & Igel (2011) bound it by a *distance* that shrinks as the model learns
the data times a *mixing* factor that grows towards 1 with the parameters (through Δ).  The
grey curve is a bound of the Bengio–Delalleau type (a Doeblin-argument stand-in derived in
in the help below, not their exact formula): it lies between 0 and 2ᵐ.
"""
CAPTION = (f"Log axes: values are clipped to [{CLIP[0]:g}, {CLIP[1]:g}] before plotting (the "
           "Bengio–Delalleau-type bound can be astronomically large or tiny, the bias can be 0); "
           "hover shows the unclipped value.")


class BiasSession(SettingsSession):
    """What one browser session's "CD bias" tab owns: settings, the race, streams, widgets.

    Parameters
    ----------
    doc : bokeh.document.Document, optional
        The session's document (:class:`~rbmviz.app.feed.SettingsSession`).
    """

    engine_class = BiasRace
    tag = "bias"
    reset_knobs = frozenset(RESET_KNOBS)
    applies_from = "the next point"
    error_prefix = "CD bias"

    # ------------------------------------------------------------------ widgets
    def _knob_widgets(self, s):
        w = {}
        w["dataset"] = pn.widgets.Select.from_param(
            s.param.dataset, options={label: name for name, (label, _) in BIAS_DATASETS.items()},
            name="Dataset (bias)")
        w["n_hidden"] = widget_for(s, "n_hidden", label="Hidden units n")
        w["k"] = widget_for(s, "k", label="k (Gibbs steps of CD-k)")
        w["learning_rate"] = widget_for(s, "learning_rate")
        w["weight_decay"] = widget_for(s, "weight_decay")
        w["iterations_per_point"] = widget_for(s, "iterations_per_point")
        w["points_per_second"] = widget_for(s, "points_per_second", label="Points per second (bias)")
        w["init_scale"] = widget_for(s, "init_scale", kind="input")
        w["seed"] = widget_for(s, "seed", kind="input", label="Seed (bias)")
        return w

    def _build_views(self):
        self.bias_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=340)
        self.factors_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=260)
        self.plots: dict[str, LiveCurves] = {}

    # ------------------------------------------------------------------ controls
    def reset(self) -> None:
        """The Reset (bias) button: stop the running engine and start a new
        :class:`~rbmviz.live.bias.BiasRace` from the current settings (refused, with a
        notification, beyond the classroom caps), with fresh plots showing its point at
        iteration 0."""
        if not self._new_engine(lambda: BiasRace(self.settings, sink=self._current_sink(),
                                                  on_error=self._error_from_thread)):
            return
        race = self.race
        m, n = race.rbm.n_visible, race.rbm.n_hidden
        ds = BIAS_DATASETS[race.settings.dataset][0]
        titles = {"bias": (f"CD-k bias and its bounds — {ds}, m = {m}, n = {n} (log scale)", 340),
                  "factors": ("the two factors of the Fischer–Igel bound (log scale)", 260)}
        self.plots = {}
        for plot, (title, height) in titles.items():
            names = [k for k, v in SERIES.items() if v[2] == plot]
            curves = LiveCurves(
                names, ("iteration", "value", "raw"), x="iteration", y="value",
                source_prefix=f"curve-bias:{self.race_id}:", colors=[SERIES[k][1] for k in names],
                labels={k: SERIES[k][0] for k in names}, title=title, y_axis_type="log",
                y_label="value (clipped, log)", x_label="iteration (exact expected CD-k updates)",
                tooltips=("iteration", "raw"), height=height)
            curves.figure.legend.location = "bottom_left"
            self.plots[plot] = curves
        self.bias_pane.object = self.plots["bias"].figure
        self.factors_pane.object = self.plots["factors"].figure
        self.settings_text.object = ""
        self.alert_text.object = ""
        self._apply(race.records[:])          # the point at iteration 0
        self._after_reset()                   # classroom style, a lesson's schedule
        race.discard_pending()                # drawn above: not again with the first batch

    # ------------------------------------------------------------------ thread → document
    def _mark_change(self, changes: dict) -> None:
        """A labelled line ("k 1 → 4") on both plots at the race's current iteration."""
        race = self.race
        if race is None or not changes:
            return
        for curves in self.plots.values():
            curves.mark({"iteration": float(race.iteration)}, change_text(changes))

    def _apply_batch(self, records, state):
        self._apply(records)

    def _apply(self, records):
        if records and self.plots:
            df = pd.DataFrame.from_records(records)
            for name, (_, _, plot) in SERIES.items():
                raw = df[name].to_numpy(dtype=float)
                self.plots[plot].append(name, {
                    "iteration": df["iteration"].to_numpy(dtype=float),
                    "value": np.clip(np.nan_to_num(raw, nan=CLIP[0]), *CLIP), "raw": raw})
        self._refresh_state()

    def _status(self, race, last):
        s = race.settings
        text = (f"iteration {race.iteration:,} · k = {s.k} · η = {s.learning_rate:g} · "
                f"λ = {s.weight_decay:g}")
        if last is not None:
            text += (f" · bias = {last['bias']:.3g} ≤ bound = {last['bound']:.3g} "
                     f"(Δ = {last['delta']:.3g}, log-likelihood {last['log_likelihood']:.3f})")
        return text

    # ------------------------------------------------------------------ layout
    def _controls(self, w):
        return ([pn.pane.Markdown("### Data"), w["dataset"],
                 pn.pane.Markdown("### Training (live)"), w["k"], w["learning_rate"],
                 w["weight_decay"]],
                [w["n_hidden"], pn.pane.Markdown("### Pace"), w["iterations_per_point"],
                 w["points_per_second"],
                 pn.Card(w["init_scale"], w["seed"], title="Initialisation", collapsed=True)])

    def figures(self) -> list:
        """The bias and factor plots.

        Returns
        -------
        list of bokeh.plotting.figure
            The figures of the current engine (empty before the first Reset).
        """
        return [c.figure for c in self.plots.values()]

    def panel(self) -> pn.Column:
        """The tab's main area: text, buttons, plots and the help page.

        Returns
        -------
        panel.Column
            The tab, named "CD bias": the introduction and the bound's formula, the controls,
            the bias and factor plots, the help page.
        """
        return self._page(
            [pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
             pn.pane.LaTeX(f"${FORMULA}$", renderer="katex", sizing_mode="stretch_width"),
             pn.pane.Markdown("m visible and n hidden units, Δ from the ϑ/ξ formulas of Fischer & "
                              "Igel §5; the distance is the total-variation distance between the "
                              "data's empirical distribution p_e and the model's p.",
                              sizing_mode="stretch_width")],
            [self.bias_pane, self.factors_pane,
             pn.pane.Markdown(f"*{CAPTION}*", sizing_mode="stretch_width"), help_card("cd_bias")],
            name="CD bias")


def make_bias_tab(session: Any = None) -> BiasSession:
    """The "CD bias" tab's session for this browser session.

    Its :meth:`~BiasSession.panel` is the tab, its :meth:`~BiasSession.sidebar` the
    controls; :func:`rbmviz.app.layout.build` calls it when the tab is first opened.

    Parameters
    ----------
    session : rbmviz.app.race_tab.ExplorerSession, optional
        The explorer's race-tab session, whose document the tab shares (the tab has its own
        engine); None for Panel's current document.

    Returns
    -------
    BiasSession
        The new session, with its first engine made (not started).
    """
    return BiasSession(doc=getattr(session, "doc", None) if session is not None else None)
