"""The explorer's "Training race" tab: one :class:`ExplorerSession` per browser session.

Kept apart from the served script (``apps/explorer.py``, ``rbmviz/app/explorer.py``: they only
compose) because Bokeh clears the served script's globals when a session ends, and the
training thread must not depend on them.

Data flow: :class:`rbmviz.live.race.Race` trains on its own thread and calls its sink at most
10 times a second; the sink (``_current_sink``) hands the batch to the document's event loop with
``doc.add_next_tick_callback`` (never touching widgets or streams from the thread), where
``_apply`` streams the records into one Bokeh ``ColumnDataSource`` per algorithm and refreshes
the model views (:mod:`rbmviz.app.live_plots`: a point costs ~1 ms of the server's event loop,
so clicks get through while the race streams).  Closing the tab stops the race.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import panel as pn

from .. import algorithms, datasets, presets
from ..algorithms.dcp import DEFAULT_D, DEFAULT_K_INNER, resolve_budget
from ..algorithms.knobs import derive_knobs
from ..bounds import parameters_doc
from ..live import warmup
from ..live.race import DC_RULES, Race, RaceSettings, live_knob_names, rule_title
from ..settings import (
    DataSettings,
    ModelSettings,
    TrainSettings,
    algorithm_knobs,
    dataset_knobs,
    live_knobs,
)
from . import limits
from .feed import DocumentFeed, SessionControls
from .help import help_card
from .live_plots import DIVERGING, GREYS, LiveBars, LiveCurves, LiveImage
from .race_export import RaceDownloads
from .widgets import widget_for

if TYPE_CHECKING:
    from ..live.lessons import Lesson

#: knobs hidden in classroom mode
ADVANCED = ("batch_size", "momentum", "weight_decay", "seed", "init_seed", "init", "init_scale",
            "max_weight", "points_per_second", "max_speed", "visible_bias", "dtype",
            "binarize", "data_seed", "limit")
#: algorithms that split their Gibbs budget k into d inner steps of K′ (equal compute)
DCP_ALGORITHMS = DC_RULES
#: the data, model and run knobs whose change needs a new race ("press Reset")
RESET_KNOBS = {"D", "N", "B", "d", "binarize", "data_seed", "limit", "n_hidden",
               "init", "init_scale", "visible_bias", "dtype", "init_seed", "batch_size",
               "eval_every", "seed", "max_weight", "algorithms"}
#: knobs of the training rules shown in the "Training" section (the rest of the selected
#: rules' knobs go to "Algorithm details")
MAIN_TRAIN = ("k", "k_inner", "learning_rate", "epochs", "eval_every", "batch_size",
              "momentum", "weight_decay", "seed")
#: the knobs a data set's preset sets (rbmviz.presets.for_dataset) → their settings object
PRESET_KNOBS = {"n_hidden": "model", "init": "model", "init_scale": "model",
                "visible_bias": "model", "dtype": "model", "limit": "data",
                "batch_size": "train", "learning_rate": "train", "k": "train",
                "epochs": "train", "x_axis": "view"}
CURVE_COLUMNS = ["epoch", "updates", "gibbs_steps", "wall_time", "value", "weight_norm"]
#: the y axis of the race's curves, by metric, with units
Y_LABELS = {"train_ll": "log-likelihood (nats per pattern)",
            "test_ll": "test log-likelihood (nats per pattern)",
            "spl": "pseudo-log-likelihood (nats per image)"}
def _short(v) -> str:
    return f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


#: the live knobs as the status line names them
LIVE_NAMES = {"learning_rate": "η", "momentum": "momentum", "weight_decay": "weight decay"}
#: points per streamed curve; beyond, the curve is thinned to every other point
MAX_CURVE_POINTS = 4000
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
#: epochs per point of a small model's race (its exact evaluation is cheap): at the default
#: pace (10 points per second) Bars & Stripes rises for ~30 s (its curve climbs until epoch
#: ~1,500), Shifting Bar leaves its plateau at ~7 s (CS-DCP) and ~27 s (CD)
TOY_EVAL_EVERY = 20
RACE_EVAL_EVERY = {"bars_and_stripes": 5}
#: the rules a data set's own race starts with (else RaceSettings' default, CD against PCD):
#: Shifting Bar's point is the DC rules escaping the plateau where CD and PCD stay
RACE_RULES = {"shifting_bar": ["cd", "pcd", "csdcp"]}
#: the S-DCP/CS-DCP inner-step count d, declared once by the rule (the data sets' own ``d``
#: takes that name in the settings, so the tab keeps the rule's d in its own object), starting
#: at the rule's own default budget (rbmviz.algorithms.dcp.DEFAULT_D)
BudgetKnobs = derive_knobs("BudgetKnobs", [algorithms.get("sdcp")], include=["d"],
                           defaults={"d": DEFAULT_D},
                           doc="The race tab's S-DCP/CS-DCP inner-step count d (a copy of the "
                               "rule's declaration, starting at its default budget).")
BudgetKnobs.__doc__ = BudgetKnobs.__doc__ + "\n\n" + parameters_doc(BudgetKnobs)


def _available_datasets():
    return [n for n in datasets.names() if datasets.available(n) and n in presets.names()]


class ExplorerSession(RaceDownloads, SessionControls, DocumentFeed):
    """Everything one browser session owns: settings, the race, streams, widgets.

    Parameters
    ----------
    threads : int
        Numba threads of the race's training thread.
    sync_url : bool
        Whether the knobs follow the page's URL (and the URL's knobs are read at the start).
    settings : dict, optional
        Knob values from a checked link (:func:`rbmviz.app.layout.read_link`), set after the
        data set's preset.
    lesson : rbmviz.live.lessons.Lesson, optional
        A lesson whose scheduled knob changes run with every race.
    """

    finished_message = "The race reached its epoch limit: raise 'Epochs' or Reset."
    #: plain Bokeh sources (rbmviz.app.live_plots): no freeze needed; the batch's events are
    #: collected in order and leave as one websocket message (a source gets one operation
    #: per batch, so nothing is combined or reordered)
    hold_document = "collect"
    step_in_thread = False

    def __init__(self, *, threads: int = 1, sync_url: bool = True, settings: dict | None = None,
                 lesson: Lesson | None = None) -> None:
        self.threads = threads
        self.data = DataSettings(dataset="bars_and_stripes")
        self.model = ModelSettings()
        self.train = TrainSettings(eval_every=TOY_EVAL_EVERY)
        self.view = RaceSettings()
        self.budget = BudgetKnobs()
        self.doc = pn.state.curdoc
        self.race: Race | None = None
        self.race_id = 0
        self.lesson = lesson               # a lesson link's knob changes run with every race
        self.knob_log: list[dict] = []     # live knob changes of the current race (CSV, markers)
        self._failures: dict[str, str] = {}  # rule title -> why it stopped (this race)
        self._images_due = 0.0
        self._quiet = False                 # True while a preset or the budget sets knobs
        self._building = True               # no race before the URL's knobs are read
        self.apply_preset(reset=False)
        self._init_feed()
        self._build_widgets()
        self.limits = limits.current()     # classroom caps (H4): widget ranges end at them
        self.limits.apply([self.data, self.model, self.train, self.view], self.widgets)
        if settings:                        # a checked link (rbmviz.app.layout.read_link)
            self._apply_settings(settings)
        if sync_url and pn.state.location is not None:
            self._sync_url()
        self._building = False
        self.reset()
        pn.state.on_session_destroyed(self._destroyed)

    # ------------------------------------------------------------------ presets
    def preset(self) -> dict:
        """The defaults the current data set brings.

        Returns
        -------
        dict
            :func:`rbmviz.presets.for_dataset` of the data set and its own knobs (D, N, B, d):
            model size, batch, learning rate, k, epochs, x axis, image shape, ...
        """
        d = self.data
        return presets.for_dataset(d.dataset, **{k: getattr(d, k) for k in dataset_knobs(d.dataset)
                                                 if k in ("D", "N", "B", "d")})

    def apply_preset(self, *, reset: bool = True) -> dict:
        """Set model size, batch, learning rate, k, epochs, row limit, dtype and x axis to the
        current data set's preset (lowered to the classroom caps).

        Parameters
        ----------
        reset : bool
            Whether to start a new race from them.

        Returns
        -------
        dict
            The preset (:meth:`preset`), as applied.
        """
        pre = self.preset()
        caps = getattr(self, "limits", None) or limits.current()     # classroom caps (H4)
        caps.clamp(pre, n_visible=pre.get("n_visible"))
        targets = {"model": self.model, "data": self.data, "train": self.train, "view": self.view}
        values = {obj: {} for obj in targets}
        for knob, obj in PRESET_KNOBS.items():
            values[obj][knob] = pre[knob]
        values["train"]["k_inner"] = None     # S-DCP's K′ back to its rule for the new k
        values["train"]["eval_every"] = RACE_EVAL_EVERY.get(self.data.dataset, TOY_EVAL_EVERY)
        if self.data.dataset in RACE_RULES:       # else the rules chosen stay
            values["view"]["algorithms"] = list(RACE_RULES[self.data.dataset])
        self._quiet = True
        try:
            for obj, vals in values.items():
                targets[obj].param.update(**vals)
            self.budget.d = self._budget_d()
        finally:
            self._quiet = False
        self.image_shape = tuple(pre["image_shape"])
        if reset:
            self.reset()
        if hasattr(self, "widgets"):
            self._update_visibility()
            self.settings_text.object = (
                f"ℹ {self.data.dataset}: its defaults applied — {pre['n_hidden']} hidden units, "
                f"batch {pre['batch_size'] or 'full'}, η = {pre['learning_rate']:g}, "
                f"k = {pre['k']}, x axis {pre['x_axis']}.")
        return pre

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self):
        w = self.widgets = {}
        ds, ms, ts, vs = self.data, self.model, self.train, self.view
        w["dataset"] = widget_for(ds, "dataset", kind="select",
                                  options={datasets.label(n): n for n in _available_datasets()})
        for name in ("D", "N", "B", "d", "binarize", "data_seed", "limit"):
            w[name] = widget_for(ds, name)
        for name in ("n_hidden", "init", "init_scale", "visible_bias", "dtype", "init_seed"):
            w[name] = widget_for(ms, name)
        w["algorithms"] = widget_for(vs, "algorithms", options={
            algorithms.get(n).label or n: n for n in vs.param.algorithms.objects})
        w["k"] = widget_for(ts, "k", kind="slider")        # every racing rule needs a k
        w["d_budget"] = widget_for(self.budget, "d", kind="slider")
        w["k_inner"] = widget_for(ts, "k_inner", label="K′ (empty: 4 if it divides k)")
        for name in ts.param:
            if name not in ("name", "algorithm", "k", "k_inner"):
                w[name] = widget_for(ts, name)
        w["eval_every"].label = "Epochs per point"
        w["epochs"].label = "Stop after epochs"
        self.budget_text = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.spacing_text = pn.pane.Markdown("", sizing_mode="stretch_width")
        for name in ("x_axis", "points_per_second", "max_speed", "classroom"):
            w[name] = widget_for(vs, name)

        self._make_controls(widths=(90, 90, 70, 70))
        self.epoch_counter = pn.indicators.Number(label="epoch", value=0, format="{value:,.2f}",
                                                  font_size="28pt", title_size="10pt")
        self.progress = pn.indicators.Progress(value=0, max=1000, bar_color="primary",
                                               sizing_mode="stretch_width")
        self.warm_text = pn.pane.Markdown("", sizing_mode="stretch_width", visible=False,
                                          styles={"color": "#8a5a00"})
        self._warm_watch = None
        self.text_panes += (self.warm_text,)
        self.equations = pn.Column(sizing_mode="stretch_width")
        self._init_downloads()
        # plain Bokeh figures, made at each Reset and then only fed (rbmviz.app.live_plots)
        self.curves_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=360, name="curves")
        self.fields_pane = pn.pane.Bokeh(sizing_mode="fixed")
        self.samples_pane = pn.pane.Bokeh(sizing_mode="fixed")
        self.bars_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=280)
        # shown for small models only; a Column's visibility sticks (a Bokeh pane's, set right
        # after its object, does not always), and no stale bars of a previous race remain
        self.bars_box = pn.Column(self.bars_pane, sizing_mode="stretch_width")
        self.curves: LiveCurves | None = None

        for obj in (ds, ms, ts, vs):
            obj.param.watch(self._on_knob, [n for n in obj.param if n != "name"])
        self.budget.param.watch(self._on_budget, "d")
        self._update_visibility()

    def _apply_settings(self, settings: dict) -> None:
        """Set knobs from a checked link: the data set first (its preset), then the rest (the
        link's values win over the preset's), each on the settings object that declares it."""
        settings = dict(settings)
        if "dataset" in settings:
            self.data.dataset = settings.pop("dataset")
        for obj in (self.data, self.model, self.train, self.view):
            mine = {k: v for k, v in settings.items() if k in obj.param and k != "name"}
            if mine:
                obj.param.update(**mine)

    def _sync_url(self):
        loc = pn.state.location
        query = dict(getattr(loc, "query_params", {}) or {})
        if "dataset" in query:          # the data set's preset first; the URL's knobs win
            loc.sync(self.data, {"dataset": "dataset"})
        for obj in (self.data, self.model, self.train):
            loc.sync(obj, {n: n for n in obj.param if n != "name"})
        loc.sync(self.view, {n: n for n in ("algorithms", "x_axis", "points_per_second", "classroom")})

    def _shown_train_knobs(self) -> set:
        """The training knobs some selected rule takes (``settings.algorithm_knobs``)."""
        shown = {"epochs", "eval_every", "batch_size", "max_weight"}
        for name in self.view.algorithms:
            shown.update(algorithm_knobs(name))
        return shown

    def _update_visibility(self):
        used = set(dataset_knobs(self.data.dataset))
        classroom = self.view.classroom
        dcp = any(a in DCP_ALGORITHMS for a in self.view.algorithms)
        train_knobs = self._shown_train_knobs()
        exact = self._exact_feasible()
        for name, w in self.widgets.items():
            visible = True
            if name in ("D", "N", "B", "d", "binarize", "data_seed", "limit"):
                visible = name in used
            elif name in ("k_inner", "d_budget"):
                visible = dcp
            elif name == "eval_every":
                visible = exact
            elif name in self.train.param:
                visible = name in train_knobs
            if classroom and name in ADVANCED:
                visible = False
            w.visible = visible
        self.spacing_text.visible = not exact
        self.spacing_text.object = (
            "**Points:** spaced by time — evaluation takes at most 15 % of the time, "
            "records within an epoch (large model: no exact likelihood).")
        self.details.objects = [self.widgets[n] for n in self.train.param
                                if n in self.widgets and n not in MAIN_TRAIN
                                and n not in ("epochs", "eval_every", "max_weight")]
        self.details.visible = any(w.visible for w in self.details.objects)
        self.equations.objects = [
            pn.pane.LaTeX(f"$\\text{{{algorithms.get(n).label or n}}}:\\ {algorithms.get(n).equation}$",
                          renderer="katex", sizing_mode="stretch_width", styles={"font-size": "0.85em"})
            for n in self.view.algorithms if algorithms.get(n).equation]
        self.budget_text.visible = dcp
        self.budget_text.object = self._budget()

    def _exact_feasible(self) -> bool:
        """Whether the current data and model size allow the exact log-likelihood."""
        return min(self.preset()["n_visible"], self.model.n_hidden) <= 20

    @property
    def details(self) -> pn.Card:
        """The "Algorithm details" card: the selected rules' knobs beyond the main ones."""
        if not hasattr(self, "_details"):
            self._details = pn.Card(title="Algorithm details", collapsed=True,
                                    sizing_mode="stretch_width")
        return self._details

    # ------------------------------------------------------------------ the d·K′ budget
    def _k_inner(self) -> int:
        """K′ as S-DCP resolves it for the current k (:func:`resolve_budget`)."""
        if self.train.k_inner is not None:
            return self.train.k_inner
        try:
            return resolve_budget(k=self.train.k, k_inner=None)[1]
        except ValueError:
            return DEFAULT_K_INNER

    def _snap_k(self) -> None:
        """While S-DCP or CS-DCP is selected, k snaps to the nearest multiple of K′ (k = d·K′,
        equal compute) instead of each value K′ does not divide being refused: a drag of the
        k slider then moves through the valid budgets, and every racing rule runs the same k."""
        if not any(a in DCP_ALGORITHMS for a in self.view.algorithms) or self.train.k is None:
            return
        inner = self._k_inner()
        k = self.train.k
        if k % inner:
            self.train.k = max(inner, int(round(k / inner)) * inner)

    def _budget_d(self) -> int:
        k = self.train.k or 1
        return max(1, k // self._k_inner())

    def _on_budget(self, event):
        """The d slider: k = d·K′ (K′ kept)."""
        if self._quiet:
            return
        self.train.k = int(event.new) * self._k_inner()

    def _budget(self):
        """The equal-compute rule on screen: S-DCP/CS-DCP's d·K′ = k."""
        k, k_inner = self.train.k, self.train.k_inner
        try:
            d, inner = resolve_budget(k=k, k_inner=k_inner)
        except ValueError:
            return (f"⚠ K′ = {k_inner} does not divide k = {k}: move d or K′ "
                    f"(equal compute: every algorithm spends k Gibbs steps per update)")
        return (f"**k = d·K′ = {d}·{inner} = {k}** — S-DCP/CS-DCP take d = {d} inner steps of "
                f"K′ = {inner} Gibbs steps: the same Gibbs budget per update as CD-{k}.")

    # ------------------------------------------------------------------ knob changes
    def _on_knob(self, *events):
        names = {e.name for e in events}
        if self._quiet:
            return
        if "dataset" in names:
            self.apply_preset(reset=not self._building)
            return
        if "k_inner" in names:             # K′ moved: keep d, k = d·K′
            self._quiet = True
            try:
                self.train.k = self.budget.d * self._k_inner()
            finally:
                self._quiet = False
        if "k" in names:
            self._quiet = True
            try:
                self._snap_k()
                self.budget.d = self._budget_d()
            finally:
                self._quiet = False
        if names & {"classroom", "algorithms", "k", "k_inner", "n_hidden", "D", "N", "d"}:
            self._update_visibility()
        if "classroom" in names:
            SessionControls.set_classroom(self, self.view.classroom)
        if names & {"x_axis", "classroom", "points_per_second", "max_speed"}:
            if "x_axis" in names and self.curves is not None:
                self.curves.set_x(self.view.x_axis)
            if self.race is not None:
                self.race.points_per_second = self.view.points_per_second
                self.race.max_speed = self.view.max_speed
            return
        racing = self.race.algorithms if self.race is not None else self.view.algorithms
        live_names = live_knob_names(racing)
        live = {e.name: e.new for e in events if e.name in live_names}
        if live.keys() & {"k", "k_inner"}:  # the budget travels whole
            live["k"] = self.train.k
            if self.train.k_inner is not None:
                live["k_inner"] = self.train.k_inner
        if live and self.race is not None:
            try:
                applied = self.race.update_settings(**live)
            except (ValueError, TypeError) as exc:
                self._notify(str(exc), "error")
            else:
                olds = {e.name: e.old for e in events}
                self._log_change({k: (olds.get(k), v) for k, v in live.items() if k in olds})
                what = ", ".join(f"{k} = {v:g}" for k, v in live.items())
                who = ", ".join(rule_title(self.race.runs[n].algorithm) for n in sorted(applied))
                self.settings_text.object = (f"✔ {what} — applies at the next update "
                                             f"({who or 'no running algorithm'}).")
                if live.keys() & {"k", "k_inner"}:
                    self._relabel()
                self._refresh_state()            # the status line shows what runs now
        not_live = {n for n in names if n in self.train.param and n not in live_names
                    and n not in ("epochs",)}
        needs_reset = sorted(names & RESET_KNOBS | not_live)
        if needs_reset:
            self.settings_text.object = (f"⟳ Changed {', '.join(needs_reset)}: press **Reset** to "
                                         f"apply (the current race keeps its settings).")
        if "epochs" in names:
            self._refresh_state()

    # ------------------------------------------------------------------ controls
    def reset(self) -> None:
        """A new race from the current settings (stops the old one; refused, with a
        notification, beyond the classroom caps), with fresh curves, images and bars."""
        if not self._new_engine(lambda: Race(
                self.data, self.model, self.train, self.view.algorithms,
                sink=self._current_sink(), on_error=self._error_from_thread,
                threads=self.threads, points_per_second=self.view.points_per_second,
                max_speed=self.view.max_speed)):
            return
        race = self.race
        self.knob_log = []
        self._failures = {}
        self._make_downloads()
        if self.lesson is not None and self.lesson.changes:
            from ..live import lessons
            lessons.schedule(race, self.lesson.changes, on_change=self._lesson_change)
        best = datasets.max_log_likelihood(race.train_data) if race.metric == "train_ll" else None
        title = f"{race.metric_label} — {datasets.label(self.data.dataset)}"
        self.curves = LiveCurves(race.algorithms, CURVE_COLUMNS, x=self.view.x_axis, y="value",
                                 source_prefix=f"curve:{self.race_id}:", colors=COLORS,
                                 title=title, y_label=Y_LABELS.get(race.metric, race.metric),
                                 reference=best, labels=self._rule_titles(race),
                                 reference_label=(None if best is None else
                                                  f"best possible {best:.3f}"),
                                 max_points=MAX_CURVE_POINTS)
        self.curves_pane.object = self.curves.figure
        snap = race.snapshot()
        focus = rule_title(race.runs[snap["focus"]].algorithm)
        self.fields = LiveImage(title=f"receptive fields: columns of W ({focus})",
                                palette=DIVERGING, symmetric=True, colorbar=True)
        self.samples = LiveImage(title=f"samples from the Gibbs chains ({focus})", palette=GREYS)
        self.bars = None
        self._kl = {}
        if "p_model" in snap:
            # a fixed axis (the data's patterns, at most 40, plus "other") so streaming only
            # changes bar heights
            p_data = snap["p_data"]
            n_bits = race.runs[snap["focus"]].rbm.n_visible
            self._patterns = np.sort(np.argsort(-p_data, kind="stable")[:min(40, int((p_data > 0).sum()))])
            labels = [format(int(i), f"0{n_bits}b") for i in self._patterns]
            if len(self._patterns) < len(p_data):
                labels.append("other")
            series = [*race.algorithms, "data"]
            colors = [COLORS[i % len(COLORS)] for i in range(len(race.algorithms))] + ["#444444"]
            self.bars = LiveBars(labels, series, colors=colors, labels={
                                     **self._rule_titles(race), "data": "data"},
                                 title="p(v): each rule's probability of the data's patterns "
                                       "(and of all others together) next to the data's",
                                 y_label="probability")
            self.bars_pane.object = self.bars.figure
        else:
            self.bars_pane.object = None
        self.bars_box.visible = "p_model" in snap
        self._update_images(snap)
        self.fields_pane.object = self.fields.figure
        self.samples_pane.object = self.samples.figure
        self.settings_text.object = ""
        self.alert_text.object = ""
        SessionControls.set_classroom(self, self.view.classroom)   # the new figures' style
        self._refresh_state()

    # ------------------------------------------------------------------ thread → document
    def _apply_batch(self, records, snapshot):
        self._apply(records, snapshot)

    def _error_from_thread(self, name, message):
        """A rule stopped (diverged) or the thread failed: explained once, in the alert
        line (one entry per rule, with the reason and what to try), with a short toast."""
        def show():
            race = self.race
            title = (rule_title(race.runs[name].algorithm) if race is not None and name in race.runs
                     else name or "training")
            notes = pn.state.notifications
            if notes is not None:
                notes.warning(f"{title} stopped ({message.split(':')[0]}): the reason is above "
                              f"the curves", duration=6000)
            self._failures[title] = message
            self.alert_text.object = "\n\n".join(f"⚠ **{t}** stopped: {m}"
                                                  for t, m in self._failures.items())
            self._refresh_state()
        self._schedule(show)

    def _apply(self, records, snapshot, force_images=False):
        race = self.race
        if race is None:
            return
        if records and self.curves is not None:
            df = pd.DataFrame.from_records(records)
            for name, part in df.groupby("algorithm", sort=False):
                if name in self.curves.sources:
                    self.curves.append(name, part.assign(value=part[race.metric]))
        now = time.perf_counter()
        if snapshot is not None and (force_images or now >= self._images_due):
            # ~2 images per second for small models; a large model's hundreds of receptive
            # fields cost the event loop more than its curve points, so about one a second
            big = snapshot.get("W") is not None and snapshot["W"].size > 50_000
            self._images_due = now + (0.9 if big else 0.4)
            self._update_images(snapshot)
        self._refresh_state()

    def _update_images(self, snap):
        shape = self.race.image_shape
        if snap.get("W") is not None:
            self.fields.update_tiles(np.asarray(snap["W"])[:, :100].T, shape)
        if snap.get("samples") is not None:
            self.samples.update_tiles(np.asarray(snap["samples"])[:100], shape, fill=0.5)
        if self.bars is not None and snap.get("p_models"):
            idx = self._patterns
            heights = {}
            p_data = np.asarray(snap["p_data"], dtype=np.float64)
            self._kl = {}
            for key in self.bars.series:
                p = p_data if key == "data" else snap["p_models"].get(key)
                if p is None:                    # a diverged rule: its bars drop to zero
                    heights[key] = [0.0] * len(self.bars.categories)
                    continue
                p = np.asarray(p, dtype=np.float64)
                h = list(p[idx])
                if len(idx) < len(p):
                    h.append(max(0.0, 1.0 - float(np.sum(h))))
                heights[key] = h
                if key != "data":               # KL(data ‖ model), nats: exact, all patterns
                    on = p_data > 0
                    self._kl[key] = float(np.sum(p_data[on] * (np.log(p_data[on])
                                                               - np.log(np.maximum(p[on], 1e-300)))))
            self.bars.update(heights)

    def _refresh_state(self):
        race = self.race
        if race is None:
            return
        epoch = race.epoch
        self.epoch_counter.value = epoch
        target = self.train.epochs
        if target:                      # moves within an epoch for large models
            self.progress.value = int(1000 * min(epoch / target, 1.0))
        state = "running" if race.running else ("finished" if race.finished else "paused")
        failed = "" if race.active else " — every rule stopped (see above): press Reset"
        # what every racing rule really uses now (read from the algorithm objects)
        # the knobs every racing rule shares are named once (momentum and weight decay only
        # when on), then each rule with its own k (in its name) and its KL(data‖model)
        shared = []
        for knob, label in LIVE_NAMES.items():
            values = {getattr(race.runs[n].algorithm, knob, None) for n in race.algorithms}
            values.discard(None)
            if len(values) == 1:
                v = values.pop()
                if knob == "learning_rate" or v:
                    shared.append(f"{label} = {v:g}")
            elif values:
                shared.append(f"{label} = " + " / ".join(
                    f"{getattr(race.runs[n].algorithm, knob):g}" for n in race.algorithms))
        rules = []
        for name in race.algorithms:
            kl = getattr(self, "_kl", {}).get(name)
            extra = f" KL(data‖model) = {kl:.3f} nats" if kl is not None else ""
            gone = " (stopped)" if name in race.failed else ""
            rules.append(f"**{rule_title(race.runs[name].algorithm)}**{gone}{extra}")
        self.state_text.object = (f"**{state}** · {' · '.join(shared)} — "
                                  + (" · ".join(rules) or "no active run") + failed)
        self._update_downloads()
        preparing = warmup.status().message(self._warm_stage())
        self.warm_text.object = preparing or ""
        self.warm_text.visible = bool(preparing)
        if preparing:
            warmup.prefer(self._warm_stage())   # what the page shows now compiles next
        if preparing and self._warm_watch is None and self.doc is not None:
            # refresh the "preparing" line every second until the kernels are ready
            self._warm_watch = pn.state.add_periodic_callback(self._warm_tick, period=1000)

    def _warm_stage(self) -> str:
        """The warm-up stage (:mod:`rbmviz.live.warmup`) this race's kernels belong to."""
        race = self.race
        if race is not None and not race.exact:
            return "large"
        rules = race.algorithms if race is not None else self.view.algorithms
        return "race" if set(rules) <= {"cd", "pcd"} else "rules"

    def _warm_tick(self):
        if warmup.status().message(self._warm_stage()) is None and self._warm_watch is not None:
            self._warm_watch.stop()
            self._warm_watch = None
        self._refresh_state()

    def _log_change(self, changes: dict) -> None:
        """Record live knob changes ``{knob: (old, new)}`` at the race's newest point: a
        labelled line on the curves ("k 12 → 4") and a row of the CSV's change log."""
        race = self.race
        if race is None or not changes:
            return
        records = race.runs[race.algorithms[0]].records
        last = records[-1] if records else {}      # before the first record: from the start
        at = {c: float(last.get(c, 0.0)) for c in ("epoch", "updates", "gibbs_steps", "wall_time")}
        text = ", ".join(f"{LIVE_NAMES.get(k, k)} {_short(o)} → {_short(n)}"
                         for k, (o, n) in changes.items())
        for knob, (old, new) in changes.items():
            self.knob_log.append({**at, "knob": knob, "old": old, "new": new})
        if self.curves is not None and at:
            self.curves.mark(at, text)

    def _lesson_change(self, at, changes):
        """From the race's thread: a lesson's scheduled change was applied to the running
        rules; move the widgets to it on the page (which logs and marks it)."""
        def apply():
            self.train.param.update(**{k: v for k, v in changes.items() if k in self.train.param})
        self._schedule(apply)

    def set_classroom(self, on: bool) -> None:
        """Classroom mode (``view.classroom``, in the URL): projector fonts and thick curves,
        the advanced knobs hidden (:data:`ADVANCED`).

        Parameters
        ----------
        on : bool
            Switch classroom mode on (True) or back to the normal style (False).
        """
        if self.view.classroom != bool(on):
            self.view.classroom = bool(on)          # _on_knob restyles and hides
        else:
            SessionControls.set_classroom(self, on)

    def figures(self) -> list:
        """The race's live figures.

        Returns
        -------
        list of bokeh.plotting.figure
            Curves, p(v) bars (small models), receptive fields, samples (those made so far).
        """
        out = [] if self.curves is None else [self.curves.figure]
        if getattr(self, "bars", None) is not None:
            out.append(self.bars.figure)
        out += [img.figure for img in (getattr(self, "fields", None), getattr(self, "samples", None))
                if img is not None]
        return out

    @staticmethod
    def _rule_titles(race) -> dict:
        """The legend name of every racing rule, with its current k (``rule_title``)."""
        return {n: rule_title(race.runs[n].algorithm) for n in race.algorithms}

    def _relabel(self):
        """Legends follow a live change of k or K′ ("CD-12" → "CD-4")."""
        race = self.race
        if race is None:
            return
        titles = self._rule_titles(race)
        if self.curves is not None:
            for name, title in titles.items():
                self.curves.set_label(name, title)
        if self.bars is not None:
            self.bars.set_labels({**titles, "data": "data"})

    # ------------------------------------------------------------------ layout
    def sidebar(self) -> list:
        """The controls of this tab (shown in the sidebar while the tab is active).

        Returns
        -------
        list
            Panel objects: data and model, the racing rules, training, view, and a card of
            initialisation knobs and limits.
        """
        w = self.widgets
        return [
            pn.pane.Markdown("### Data and model"), w["dataset"], w["D"], w["N"], w["B"], w["d"],
            w["binarize"], w["data_seed"], w["limit"], w["n_hidden"],
            pn.pane.Markdown("### Algorithms"), w["algorithms"],
            pn.pane.Markdown("### Training"), w["k"], pn.Row(w["d_budget"], w["k_inner"]),
            self.budget_text, w["learning_rate"], w["eval_every"], self.spacing_text, w["epochs"],
            w["batch_size"], w["momentum"], w["weight_decay"], w["seed"], self.details,
            pn.pane.Markdown("### View"), w["x_axis"], w["points_per_second"], w["max_speed"],
            pn.Card(w["init"], w["init_scale"], w["visible_bias"], w["dtype"], w["init_seed"],
                    w["max_weight"], title="Initialisation and limits", collapsed=True),
        ]

    def race_tab(self) -> pn.Column:
        """The tab's main area: buttons, status, update rules, curves, images, downloads and
        the help page.

        Returns
        -------
        panel.Column
            The tab, named "Training race".
        """
        controls = pn.Row(self.start_button, self.pause_button, self.step_button, self.reset_button,
                          self.epoch_counter, sizing_mode="stretch_width")
        return pn.Column(controls, self.progress, self.warm_text, self.state_text,
                         self.settings_text, self.alert_text,
                         pn.Card(self.equations, title="Update rules of the racing algorithms",
                                 collapsed=True, sizing_mode="stretch_width"),
                         self.curves_pane,
                         # side by side where they fit, one under the other where not
                         pn.FlexBox(self.fields_pane, self.samples_pane, gap="12px",
                                    sizing_mode="stretch_width"),
                         self.bars_box,
                         self.downloads, help_card("race"),
                         name="Training race", sizing_mode="stretch_width")

