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

import io
import time

import numpy as np
import pandas as pd
import panel as pn

from .. import algorithms, datasets, presets
from ..algorithms.dcp import DEFAULT_K_INNER, resolve_budget
from ..algorithms.knobs import derive_knobs
from ..live.race import Race, RaceSettings, live_knob_names
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
from .widgets import widget_for

#: knobs hidden in classroom mode
ADVANCED = ("batch_size", "momentum", "weight_decay", "seed", "init_seed", "init", "init_scale",
            "max_weight", "points_per_second", "max_speed", "visible_bias", "dtype",
            "binarize", "data_seed", "limit")
#: algorithms that split their Gibbs budget k into d inner steps of K′ (equal compute)
DCP_ALGORITHMS = ("sdcp", "csdcp")
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
#: points per streamed curve; beyond, the curve is thinned to every other point
MAX_CURVE_POINTS = 4000
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
#: epochs per point of a small model's race (its exact evaluation is cheap)
TOY_EVAL_EVERY = 20
#: the S-DCP/CS-DCP inner-step count d, declared once by the rule (the data sets' own ``d``
#: takes that name in the settings, so the tab keeps the rule's d in its own object)
BudgetKnobs = derive_knobs("BudgetKnobs", [algorithms.get("sdcp")], include=["d"],
                           defaults={"d": 3})


def _available_datasets():
    return [n for n in datasets.names() if datasets.available(n) and n in presets.names()]


class ExplorerSession(SessionControls, DocumentFeed):
    """Everything one browser session owns: settings, the race, streams, widgets."""

    finished_message = "The race reached its epoch limit: raise 'Epochs' or Reset."
    #: plain Bokeh sources (rbmviz.app.live_plots): no freeze needed; the batch's events are
    #: collected in order and leave as one websocket message (a source gets one operation
    #: per batch, so nothing is combined or reordered)
    hold_document = "collect"
    step_in_thread = False

    def __init__(self, *, threads=1, sync_url=True):
        self.threads = threads
        self.data = DataSettings(dataset="bars_and_stripes")
        self.model = ModelSettings()
        self.train = TrainSettings(eval_every=TOY_EVAL_EVERY)
        self.view = RaceSettings()
        self.budget = BudgetKnobs()
        self.doc = pn.state.curdoc
        self.race: Race | None = None
        self.race_id = 0
        self._images_due = 0.0
        self._quiet = False                 # True while a preset or the budget sets knobs
        self._building = True               # no race before the URL's knobs are read
        self.apply_preset(reset=False)
        self._init_feed()
        self._build_widgets()
        self.limits = limits.current()     # classroom caps (H4): widget ranges end at them
        self.limits.apply([self.data, self.model, self.train, self.view], self.widgets)
        if sync_url and pn.state.location is not None:
            self._sync_url()
        self._building = False
        self.reset()
        pn.state.on_session_destroyed(self._destroyed)

    # ------------------------------------------------------------------ presets
    def preset(self) -> dict:
        """The defaults the current data set brings (:func:`rbmviz.presets.for_dataset`)."""
        d = self.data
        return presets.for_dataset(d.dataset, **{k: getattr(d, k) for k in dataset_knobs(d.dataset)
                                                 if k in ("D", "N", "B", "d")})

    def apply_preset(self, *, reset=True) -> dict:
        """Set model size, batch, learning rate, k, epochs, row limit, dtype and x axis to the
        current data set's preset; with ``reset`` start a new race from them."""
        pre = self.preset()
        caps = getattr(self, "limits", None) or limits.current()     # classroom caps (H4)
        caps.clamp(pre, n_visible=pre.get("n_visible"))
        targets = {"model": self.model, "data": self.data, "train": self.train, "view": self.view}
        values = {obj: {} for obj in targets}
        for knob, obj in PRESET_KNOBS.items():
            values[obj][knob] = pre[knob]
        values["train"]["k_inner"] = None     # S-DCP's K′ back to its rule for the new k
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
        w["dataset"] = widget_for(ds, "dataset", kind="select", options=_available_datasets())
        for name in ("D", "N", "B", "d", "binarize", "data_seed", "limit"):
            w[name] = widget_for(ds, name)
        for name in ("n_hidden", "init", "init_scale", "visible_bias", "dtype", "init_seed"):
            w[name] = widget_for(ms, name)
        w["algorithms"] = widget_for(vs, "algorithms")
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

        self.start_button = pn.widgets.Button(label="▶ Start", color="primary", width=90)
        self.pause_button = pn.widgets.Button(label="❚❚ Pause", width=90)
        self.step_button = pn.widgets.Button(label="Step", width=70)
        self.reset_button = pn.widgets.Button(label="Reset", color="danger", width=70)
        self.start_button.on_click(lambda e: self.start())
        self.pause_button.on_click(lambda e: self.pause())
        self.step_button.on_click(lambda e: self.step())
        self.reset_button.on_click(lambda e: self.reset())
        self.epoch_counter = pn.indicators.Number(label="epoch", value=0, format="{value:,.2f}",
                                                  font_size="28pt", title_size="10pt")
        self.progress = pn.indicators.Progress(value=0, max=1000, bar_color="primary",
                                               sizing_mode="stretch_width")
        self.state_text = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.settings_text = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.alert_text = pn.pane.Markdown("", sizing_mode="stretch_width", styles={"color": "#b00020"})
        self.equations = pn.Column(sizing_mode="stretch_width")
        self.download_csv = pn.widgets.FileDownload(callback=self._csv_bytes, filename="rbmviz_records.csv",
                                                    label="Records (CSV)")
        self.download_npz = pn.widgets.FileDownload(callback=self._npz_bytes, filename="rbmviz_model.npz",
                                                    label="Model (.npz)")
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

    def _sync_url(self):
        loc = pn.state.location
        query = dict(getattr(loc, "query_params", {}) or {})
        if "dataset" in query:          # the data set's preset first; the URL's knobs win
            loc.sync(self.data, {"dataset": "dataset"})
        for obj in (self.data, self.model, self.train):
            loc.sync(obj, {n: n for n in obj.param if n != "name"})
        loc.sync(self.view, {"algorithms": "algorithms", "x_axis": "x_axis", "classroom": "classroom"})

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
            "**Points:** spaced by time — evaluation takes at most a quarter of the time, "
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
    def details(self):
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
                self.budget.d = self._budget_d()
            finally:
                self._quiet = False
        if names & {"classroom", "algorithms", "k", "k_inner", "n_hidden", "D", "N", "d"}:
            self._update_visibility()
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
                what = ", ".join(f"{k} = {v:g}" for k, v in live.items())
                who = ", ".join(sorted(applied)) or "no running algorithm"
                self.settings_text.object = f"✔ {what} — applies at the next update ({who})."
        not_live = {n for n in names if n in self.train.param and n not in live_names
                    and n not in ("epochs",)}
        needs_reset = sorted(names & RESET_KNOBS | not_live)
        if needs_reset:
            self.settings_text.object = (f"⟳ Changed {', '.join(needs_reset)}: press **Reset** to "
                                         f"apply (the current race keeps its settings).")
        if "epochs" in names:
            self._refresh_state()

    # ------------------------------------------------------------------ controls
    def reset(self):
        """A new race from the current settings (stops the old one)."""
        if self.race is not None:
            self.race.stop(timeout=2)
        self._clear_feed()
        try:
            self.race = Race(self.data, self.model, self.train, self.view.algorithms,
                             sink=self._current_sink(), on_error=self._error_from_thread, threads=self.threads,
                             points_per_second=self.view.points_per_second,
                             max_speed=self.view.max_speed)
            self.limits.check_engine(self.race)     # refused beyond the caps (H4)
        except (ValueError, TypeError, FileNotFoundError) as exc:
            self.race = None
            self._notify(f"Cannot start: {exc}", "error")
            return
        race = self.race
        self.race_id += 1
        best = datasets.max_log_likelihood(race.train_data) if race.metric == "train_ll" else None
        title = race.metric_label + (f" — dashed: best possible {best:.3f}" if best is not None else "")
        self.curves = LiveCurves(race.algorithms, CURVE_COLUMNS, x=self.view.x_axis, y="value",
                                 source_prefix=f"curve:{self.race_id}:", colors=COLORS,
                                 title=title, y_label=race.metric, reference=best,
                                 max_points=MAX_CURVE_POINTS)
        self.curves_pane.object = self.curves.figure
        snap = race.snapshot()
        focus = snap["focus"]
        self.fields = LiveImage(title=f"receptive fields: columns of W ({focus})",
                                palette=DIVERGING, symmetric=True, colorbar=True)
        self.samples = LiveImage(title=f"samples from the Gibbs chains ({focus})", palette=GREYS)
        self.bars = None
        if "p_model" in snap:
            # a fixed axis (the data's patterns, at most 40, plus "other") so streaming only
            # changes bar heights
            p_data = snap["p_data"]
            n_bits = race.runs[focus].rbm.n_visible
            self._patterns = np.sort(np.argsort(-p_data, kind="stable")[:min(40, int((p_data > 0).sum()))])
            labels = [format(int(i), f"0{n_bits}b") for i in self._patterns]
            if len(self._patterns) < len(p_data):
                labels.append("other")
            self.bars = LiveBars(labels, ("model", "data"), colors=("#1f77b4", "#ff7f0e"),
                                 title=f"p(v) of the data's patterns (and all others): model "
                                       f"({focus}) vs data")
            self.bars_pane.object = self.bars.figure
        else:
            self.bars_pane.object = None
        self.bars_box.visible = "p_model" in snap
        self._update_images(snap)
        self.fields_pane.object = self.fields.figure
        self.samples_pane.object = self.samples.figure
        self.settings_text.object = ""
        self.alert_text.object = ""
        self._refresh_state()

    # ------------------------------------------------------------------ thread → document
    def _apply_batch(self, records, snapshot):
        self._apply(records, snapshot)

    def _error_from_thread(self, name, message):
        def show():
            self._notify(f"{name or 'training'}: {message}", "error")
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
        if self.bars is not None and snap.get("p_model") is not None:
            idx = self._patterns
            heights = {}
            for key, p in (("model", snap["p_model"]), ("data", snap["p_data"])):
                h = list(np.asarray(p, dtype=np.float64)[idx])
                if len(idx) < len(p):
                    h.append(max(0.0, 1.0 - float(np.sum(h))))
                heights[key] = h
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
        failed = "".join(f"\n\n⚠ **{n}** stopped: {m}" for n, m in race.failed.items())
        alg = race.runs[race.algorithms[0]].algorithm     # what the algorithms really use now
        knobs = " · ".join(f"{k} = {getattr(alg, k):g}" for k in live_knobs(alg.name)
                           if isinstance(getattr(alg, k, None), (int, float))
                           and not isinstance(getattr(alg, k), bool))
        self.state_text.object = (f"**{state}** · {', '.join(race.active) or 'no active run'} · "
                                  f"{knobs}{failed}")

    # ------------------------------------------------------------------ export
    def _csv_bytes(self):
        df = self.race.frame() if self.race is not None else pd.DataFrame()
        return io.BytesIO(df.to_csv(index=False).encode())

    def _npz_bytes(self):
        import tempfile
        from pathlib import Path
        race = self.race
        rbm = race.runs[race.focus].rbm
        with tempfile.TemporaryDirectory() as tmp:
            path = rbm.save(Path(tmp) / "model.npz")
            return io.BytesIO(path.read_bytes())

    # ------------------------------------------------------------------ layout
    def sidebar(self):
        w = self.widgets
        return [
            pn.pane.Markdown("### Data and model"), w["dataset"], w["D"], w["N"], w["B"], w["d"],
            w["binarize"], w["data_seed"], w["limit"], w["n_hidden"],
            pn.pane.Markdown("### Algorithms"), w["algorithms"], self.equations,
            pn.pane.Markdown("### Training"), w["k"], pn.Row(w["d_budget"], w["k_inner"]),
            self.budget_text, w["learning_rate"], w["eval_every"], self.spacing_text, w["epochs"],
            w["batch_size"], w["momentum"], w["weight_decay"], w["seed"], self.details,
            pn.pane.Markdown("### View"), w["x_axis"], w["points_per_second"], w["max_speed"],
            w["classroom"],
            pn.Card(w["init"], w["init_scale"], w["visible_bias"], w["dtype"], w["init_seed"],
                    w["max_weight"], title="Initialisation and limits", collapsed=True),
        ]

    def race_tab(self):
        controls = pn.Row(self.start_button, self.pause_button, self.step_button, self.reset_button,
                          self.epoch_counter, sizing_mode="stretch_width")
        return pn.Column(controls, self.progress, self.state_text, self.settings_text, self.alert_text,
                         self.curves_pane,
                         # side by side where they fit, one under the other where not
                         pn.FlexBox(self.fields_pane, self.samples_pane, gap="12px",
                                    sizing_mode="stretch_width"),
                         self.bars_box,
                         pn.Row(self.download_csv, self.download_npz), help_card("race"),
                         name="Training race", sizing_mode="stretch_width")

