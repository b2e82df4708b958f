"""The explorer's "TAP landscape" tab: a TAP machine trains live (Tramel et al. 2018, Alg. 2)
while its TAP log-likelihood and its number of unique TAP solutions stream; every few epochs
the Isomap map of the solutions (coloured by TAP free energy) and the free-energy histogram
refresh; a denoising panel shows one held-out digit through a binary symmetric channel with
the OPE, 1-NN and TAP estimates.

Mirrors :class:`rbmviz.app.bias_tab.BiasSession`: :class:`rbmviz.live.tap.TapRace` trains on its own
thread and calls its sink (``_current_sink``) at most 10 times a second; the
:class:`rbmviz.app.feed.DocumentFeed` mix-in applies back-pressure and runs ``_apply_batch`` on the
document's event loop, which streams the records into the curves' Bokeh
``ColumnDataSource`` s and, when the snapshot id changed, replaces the landscape's sources
(:mod:`rbmviz.app.live_plots`: plain Bokeh figures made at Reset and only fed afterwards — a
batch costs the server's event loop milliseconds, not the ~0.1 s per HoloViews stream update
that kept clicks waiting while the tab streamed).  Denoising runs on a short-lived worker thread when the p slider or the
digit moves (never on the training thread, never on the event loop); its result is handed to
the document the same way.  One :class:`TapSession` per browser session; closing the tab stops
its thread.
"""
from __future__ import annotations

import threading
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import panel as pn
from bokeh.core.property.vectorization import value as _literal

from .. import datasets
from .feed import SettingsSession, change_text
from .help import help_card
from .live_plots import DIVERGING, GREYS, LiveCurves, LiveHistogram, LiveImage, LiveScatter
from .widgets import autohide, widget_for
from ..live.tap import N_TEST, TAP_DATASETS, TAP_MODELS, TapRace, TapSettings, mnist_available
from ..live.tap_dbm import DBMTapRace, tap_engine

#: streamed series → (legend label, colour, plot)
SERIES = {
    "tap_ll": ("TAP log-likelihood per unit (eq. 39 / (Nv + Nh))", "#d62728", "ll"),
    "n_unique": ("unique TAP solutions", "#2ca02c", "count"),
    "n_not_converged": ("not converged", "#7f7f7f", "count"),
}
#: the deep TAP machine's streamed series (no unique-solution count: rbmviz.dbm has none)
DBM_SERIES = {
    "tap_ll": ("TAP log-likelihood per unit (App. E: clamped Φ − free Φ, / (N0 + N1 + N2))",
               "#d62728", "ll"),
    "n_not_converged": ("TAP runs not converged (free + clamped)", "#7f7f7f", "count"),
}
DBM_NOTE = (
    "**Landscape and denoising: RBM only.**  The map of unique TAP solutions, their free-energy "
    "histogram and the denoising panel are drawn for the TAP RBM: rbmviz has no de-duplication "
    "of deep-TAP-machine solutions and no denoiser with channel evidence for a DBM, so they are "
    "not shown for the deep TAP machine (to see them: Model = RBM, then Reset (TAP)).  "
    "Above: the DBM's TAP log-likelihood through layer-wise pretraining and joint training, and "
    "the receptive fields of both hidden layers.")
#: the columns of a streamed curve point
CURVE_COLUMNS = ("epoch", "updates", "value")
RESET_KNOBS = {"dataset", "limit", "n_hidden", "batch_size", "seed", "eval_rows", "landscape_rows",
               "model", "n_hidden2", "pretrain_epochs"}
#: the images of the denoising panel, in order
DENOISE_VIEWS = (("clean", "clean digit"), ("noisy", "noisy (channel output)"),
                 ("ope", "OPE"), ("nn", "1-NN"), ("tap", "TAP"))
FORMULA = (r"\frac{1}{N_v+N_h}\Big[\textstyle\sum_i \ln P_i(x_i) + \sum_j \ln Z^h_j\big("
           r"\sum_i W_{ij}x_i, 0\big) + \frac1K\sum_k \mathbb{F}_{RBM}(a_k, c_k)\Big]")
INTRO = """\
A binary RBM trains with **TAP training** (Tramel et al. 2018, Alg. 2): every mini-batch of M
images starts K runs of the TAP fixed-point iteration (Alg. 1) from data points; the
solutions replace the Gibbs chains of contrastive divergence in the gradient (eqs. 40–42).
The red curve is the **TAP log-likelihood per unit** (eq. 39 divided by Nv + Nh) of a fixed
set of training images, the green one the **number of unique TAP solutions** reached from
them.  Every few epochs the **landscape** refreshes: the unique solutions reached from N
training images, placed on a 2-D Isomap map and coloured by their TAP free energy 𝔽 (eq. 36;
𝔽 ≈ −ln 𝒵, the higher the more weight), and the histogram of those free energies (Fig. 5).
With **Model = deep TAP machine** (App. E) a DBM with two hidden layers is pretrained layer by
layer as TAP RBMs, then trained jointly with TAP (Alg. 4); its TAP log-likelihood streams, and
the receptive fields of both layers (W⁽¹⁾, and W⁽¹⁾W⁽²⁾ projected to the pixels) refresh.
"""
MAP_NOTE = {
    "data": ("Map: an Isomap fitted **once**, on the N training images of the landscape set "
             "(grey), at the first snapshot; each solution is placed by its visible means aᵛ — the "
             "coordinates mean the same at every epoch (Fig. 7's construction).  **Refit map** "
             "refits it on the current solutions' [aᵛ, aʰ] as in Fig. 6."),
    "solutions": ("Map: an Isomap fitted **once** on the unique solutions' [aᵛ, aʰ] of epoch "
                  "{epoch:.2f} (grey: those solutions, Fig. 6); later solutions are embedded with "
                  "the same map, so positions stay comparable.  **Refit map** fits it again."),
}


class TapSession(SettingsSession):
    """What one browser session's "TAP landscape" tab owns: settings, race, streams, widgets.

    Parameters
    ----------
    doc : bokeh.document.Document, optional
        The document it feeds, usually the explorer's (:func:`make_tap_tab`).
    """

    engine_class = TapRace
    tag = "TAP"
    unwatched = ("start_from",)
    reset_knobs = frozenset(RESET_KNOBS)
    applies_from = "the next update"
    error_prefix = "TAP landscape"
    missing_file_hint = "(or choose the scikit-learn digits, which need no files)"

    def __init__(self, doc: Any = None) -> None:
        self.shown_snapshot = None
        self._dn_lock = threading.Lock()
        self._dn_want, self._dn_busy = None, False
        self._fallback = not mnist_available()
        super().__init__(doc)
        if self._fallback:
            self.settings_text.object = (f"ℹ The MNIST files are not in `{datasets.data_dir()}` "
                                         f"(set RBMVIZ_DATA): using the scikit-learn digits.")

    def _new_settings(self) -> TapSettings:
        """The declared defaults; the scikit-learn digits when the MNIST files are missing
        (work offline: no toast at page load, a note in the tab)."""
        return TapSettings(**({"dataset": "digits"} if self._fallback else {}))

    # ------------------------------------------------------------------ widgets
    def _knob_widgets(self, s):
        w = {}
        w["dataset"] = pn.widgets.Select.from_param(
            s.param.dataset, options={label: name for name, label in TAP_DATASETS.items()},
            label="Dataset (TAP)")
        w["start_from"] = widget_for(s, "start_from", kind="select")
        w["model"] = pn.widgets.Select.from_param(
            s.param.model, options={label: name for name, label in TAP_MODELS.items()},
            label="Model (TAP)")
        w["n_hidden2"] = widget_for(s, "n_hidden2")
        w["pretrain_epochs"] = widget_for(s, "pretrain_epochs")
        w["limit"] = widget_for(s, "limit", kind="input", label="Training rows (TAP)")
        w["n_hidden"] = widget_for(s, "n_hidden")
        w["batch_size"] = widget_for(s, "batch_size", label="Batch size M")
        w["n_solutions"] = widget_for(s, "n_solutions", label="TAP solutions per batch K (≤ M; empty = M)")
        for name in ("learning_rate", "momentum", "momentum_form", "weight_decay", "damping",
                     "landscape_every", "updates_per_point"):
            w[name] = widget_for(s, name)
        w["order"] = widget_for(s, "order", label="TAP order (1 mean field, 2 TAP, 3)")
        w["fixed_iter"] = widget_for(s, "fixed_iter", kind="input",
                                     label="Alg. 1 iterations per update (empty = to convergence)")
        w["inference"] = widget_for(s, "inference", kind="radio")
        w["products"] = widget_for(s, "products", kind="radio",
                                   label="Products of the training solves (RBM)")
        w["landscape_rows"] = widget_for(s, "landscape_rows", kind="input")
        w["eval_rows"] = widget_for(s, "eval_rows", kind="input", label="Evaluation rows (TAP LL)")
        w["points_per_second"] = widget_for(s, "points_per_second", label="Points per second (TAP)")
        w["seed"] = widget_for(s, "seed", kind="input", label="Seed (TAP)")
        return w

    def _build_views(self):
        self.p_slider = pn.widgets.FloatSlider(label="Flip probability p", start=0.0, end=0.5,
                                               step=0.01, value=0.1)
        self.digit_slider = pn.widgets.IntSlider(label="Test digit", start=0, end=N_TEST - 1, value=0)
        # every move asks; the worker computes only the newest request (see _request_denoise)
        self.p_slider.param.watch(self._request_denoise, "value")
        self.digit_slider.param.watch(self._request_denoise, "value")
        self.denoise_button = pn.widgets.Button(label="Denoise with the current model", width=230)
        self.denoise_button.on_click(self._request_denoise)

        self.refit_button = pn.widgets.Button(label="Refit map", width=100)
        self.refit_button.on_click(lambda e: self.refit_map())
        self.landscape_text = autohide(pn.pane.Markdown("", sizing_mode="stretch_width"))
        self.map_text = autohide(pn.pane.Markdown("", sizing_mode="stretch_width"))
        self.denoise_text = autohide(pn.pane.Markdown("", sizing_mode="stretch_width"))
        # plain Bokeh figures, made at each Reset and then only fed (rbmviz.app.live_plots)
        self.ll_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=300)
        self.count_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=240)
        self.map_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=420)
        self.hist_pane = pn.pane.Bokeh(sizing_mode="stretch_width", min_height=260)
        # image tiles side by side where they fit, wrapping on a narrow screen
        self.denoise_pane = pn.FlexBox(gap="8px", sizing_mode="stretch_width")
        self.fields_pane = pn.FlexBox(gap="12px", sizing_mode="stretch_width")
        # (a Bokeh pane's own `visible` follows its figure's: toggle a box around it instead)
        self.fields_box = pn.Column(self.fields_pane, visible=False)
        self.dbm_text = pn.pane.Markdown(DBM_NOTE, sizing_mode="stretch_width", visible=False)
        self.curves: dict[str, LiveCurves] = {}
        self.fields: dict[int, LiveImage] = {}
        self.landscape_box = pn.Column(self.landscape_text, self.map_pane, self.hist_pane,
                                       self.map_text, sizing_mode="stretch_width")
        self.denoise_box = pn.Column(
            pn.pane.Markdown(
                "### Denoising (Sec. VII.4.1)\nEach pixel of a held-out digit is flipped with "
                "probability p (binary symmetric channel).  **OPE**: the best pixel-by-pixel "
                "guess from the pixel's training mean; **1-NN**: the closest training image; "
                "**TAP**: Alg. 1 with the channel's evidence added to the visible field "
                "(eq. 47), started at the OPE, with the current model.", sizing_mode="stretch_width"),
            pn.Row(self.p_slider, self.digit_slider, self.denoise_button),
            self.denoise_pane, self.denoise_text, sizing_mode="stretch_width")
        self.settings.param.watch(self._on_start_from, "start_from")

    def _on_start_from(self, event):
        """A shipped model picked: binary MNIST and a new race from it at once."""
        if event.new != "none" and self.settings.dataset != "mnist":
            self.settings.dataset = "mnist"
        self.reset()
        if self.race is not None and self.race.start_info is not None:
            info = self.race.start_info
            self.settings_text.object = (
                f"ℹ Started from the shipped model **{event.new}** ({info.get('title', '')}; "
                f"epoch {info.get('epoch')}): press Step or Start to see its landscape.")

    # ------------------------------------------------------------------ controls
    def reset(self) -> None:
        """The Reset (TAP) button: stop the running engine and start a new one from the
        current settings (:func:`~rbmviz.live.tap_dbm.tap_engine`: a TAP RBM or a deep TAP
        machine; refused, with a notification, beyond the classroom caps or without the data
        files), with fresh curves, landscape and denoising views."""
        if not self._new_engine(lambda: tap_engine(self.settings, sink=self._current_sink(),
                                                    on_error=self._error_from_thread)):
            return
        self.shown_snapshot = None
        rid = self.race_id
        race = self.race
        ds = TAP_DATASETS[race.settings.dataset].split(" (")[0]
        deep = isinstance(race, DBMTapRace)
        series = DBM_SERIES if deep else SERIES
        if deep:
            title = (f"{ds}, {len(race.data):,} images · deep TAP machine "
                     f"{'–'.join(str(n) for n in race.layers)}")
        else:
            title = (f"{ds}, {len(race.data):,} images · Nv = {race.rbm.n_visible}, "
                     f"Nh = {race.rbm.n_hidden}")
        self.curves = {}
        for plot, fig_title, ylabel in (
                ("ll", f"TAP log-likelihood per unit on {len(race.eval_data)} training images — "
                       f"{title}", "TAP LL per unit (nats)"),
                ("count", (f"TAP runs from the {len(race.eval_data)} evaluation images that did "
                           f"not converge" if deep else f"TAP solutions reached from the "
                           f"{len(race.eval_data)} evaluation images"), "runs" if deep else "solutions")):
            names = [n for n, (_, _, p) in series.items() if p == plot]
            curves = LiveCurves(names, CURVE_COLUMNS, x="epoch", y="value",
                                source_prefix=f"curve-tap:{rid}:",
                                colors=[series[n][1] for n in names], title=fig_title,
                                y_label=ylabel, height=300 if plot == "ll" else 240)
            for item, n in zip(curves.figure.legend.items, names):
                item.label = _literal(series[n][0])
            curves.figure.legend.location = "bottom_right" if plot == "ll" else "top_left"
            self.curves[plot] = curves
        self.ll_pane.object = self.curves["ll"].figure
        self.count_pane.object = self.curves["count"].figure
        self.scatter = self.histogram = None
        self.denoise_images = {}
        self.map_pane.object = self.hist_pane.object = None
        self.denoise_pane.objects = []
        if not deep:             # the landscape and denoising exist for the RBM only (DBM_NOTE)
            self.scatter = LiveScatter(
                ("x", "y", "free_energy", "count", "size"), color="free_energy", size="size",
                name=f"landscape-tap:{rid}:solutions", background_name=f"landscape-tap:{rid}:background",
                title="unique TAP solutions on the Isomap map (colour: free energy 𝔽)",
                x_label="Isomap 1", y_label="Isomap 2", color_label="TAP free energy 𝔽 (eq. 36)")
            self.histogram = LiveHistogram(
                name=f"landscape-tap:{rid}:histogram", count_column="solutions", color="#9467bd",
                title="free energies 𝔽 of the unique solutions (Fig. 5)",
                x_label="TAP free energy 𝔽", y_label="unique solutions")
            self.map_pane.object = self.scatter.figure
            self.hist_pane.object = self.histogram.figure
            self.denoise_images = {}
            for key, label in DENOISE_VIEWS:
                img = LiveImage(title=label, palette=GREYS, size=140)
                img.source.name = f"denoise-tap:{rid}:{key}"
                img.update(np.zeros(race.image_shape))
                self.denoise_images[key] = img
            self.denoise_pane.objects = [pn.pane.Bokeh(img.figure)
                                         for img in self.denoise_images.values()]
        self.fields = {}
        if deep:
            for layer, what in ((1, "columns of W⁽¹⁾"), (2, "columns of W⁽¹⁾W⁽²⁾ (projected to "
                                                              "the pixels)")):
                img = LiveImage(title=f"hidden layer {layer}: {what}", palette=DIVERGING,
                                symmetric=True, colorbar=True, size=320)
                img.source.name = f"fields-tap:{rid}:layer{layer}"
                self.fields[layer] = img
            self.fields_pane.objects = [pn.pane.Bokeh(f.figure) for f in self.fields.values()]
        else:
            self.fields_pane.objects = []
        self.fields_box.visible = self.dbm_text.visible = deep
        self.landscape_box.visible = self.denoise_box.visible = not deep
        self.refit_button.disabled = deep
        self.landscape_text.object = "*The first landscape snapshot is taken at the first point.*"
        self.map_text.object = ""
        self.denoise_text.object = ""
        self.settings_text.object = ""
        self.alert_text.object = ""
        self._after_reset()                   # classroom style, a lesson's schedule
        self._refresh_state()
        self._request_denoise()

    def refit_map(self) -> None:
        """The Refit map button: the next landscape snapshot refits the Isomap on its unique
        solutions (Fig. 6; :meth:`rbmviz.live.tap.TapRace.refit_map`)."""
        if self.race is not None:
            self.race.refit_map()
            self.map_text.object = ("⟳ The map will be refitted on the solutions of the next "
                                    "snapshot (at the next point: press Start or Step).")

    # ------------------------------------------------------------------ thread → document
    def _mark_change(self, changes: dict) -> None:
        """A labelled line ("inference tap → adatap") on the curves at the current epoch."""
        race = self.race
        if race is None or not changes:
            return
        at = {"epoch": float(race.epoch), "updates": float(race.updates)}
        for curves in self.curves.values():
            curves.mark(at, change_text(changes))

    def _apply_batch(self, records, snapshot):
        self._apply(records, snapshot)

    def _apply(self, records, snapshot):
        if records and self.curves:
            df = pd.DataFrame.from_records(records)
            for curves in self.curves.values():
                for name in curves.sources:
                    curves.append(name, {"epoch": df["epoch"], "updates": df["updates"],
                                         "value": df[name]})
        if snapshot is not None and snapshot["id"] != self.shown_snapshot:
            if snapshot.get("kind") == "dbm":
                self._show_fields(snapshot)
            else:
                self._show_snapshot(snapshot)
        self._refresh_state()

    def _show_fields(self, snap):
        self.shown_snapshot = snap["id"]
        shape = self.race.image_shape
        for layer, img in self.fields.items():
            img.update_tiles(np.asarray(snap[f"fields{layer}"]).T, shape)

    def _show_snapshot(self, snap):
        self.shown_snapshot = snap["id"]
        counts = np.asarray(snap["counts"], dtype=np.float64)
        size = 6 + 10 * np.sqrt(counts / max(float(counts.max()), 1.0)) if len(counts) else counts
        self.scatter.update({"x": snap["x"], "y": snap["y"], "free_energy": snap["free_energy"],
                             "count": counts, "size": size},
                            background={"x": snap["background_x"], "y": snap["background_y"]})
        self.histogram.update(snap["hist_edges"], snap["hist_heights"])
        fe = snap["free_energy"]
        rng = f"𝔽 ∈ [{fe.min():.4g}, {fe.max():.4g}], mean {snap['mean_free_energy']:.4g}" if len(fe) else ""
        self.landscape_text.object = (
            f"**Landscape at epoch {snap['epoch']:.2f}** ({snap['updates']:,} updates): "
            f"{_plural(snap['n_unique'], 'unique solution')} from {snap['n_init']} initialisations "
            f"({snap['n_converged']} converged) · {rng}")
        note = MAP_NOTE[snap["map"]].format(epoch=snap["map_epoch"] or 0.0)
        if snap.get("refit_pending"):
            note += ("\n\n⟳ Refit requested: an Isomap needs at least 3 unique solutions; it "
                     "will be refitted at the first snapshot that has them.")
        self.map_text.object = note

    # ------------------------------------------------------------------ denoising
    def _request_denoise(self, *_):
        race = self.race
        if race is None or isinstance(race, DBMTapRace):      # RBM only (DBM_NOTE)
            return
        with self._dn_lock:
            self._dn_want = (float(self.p_slider.value), int(self.digit_slider.value), race,
                             self.race_id)
            if self._dn_busy:
                return
            self._dn_busy = True
        threading.Thread(target=self._denoise_worker, daemon=True,
                         name="rbmviz-tap-denoise").start()

    def _denoise_worker(self):
        while True:
            with self._dn_lock:
                want, self._dn_want = self._dn_want, None
                if want is None:
                    self._dn_busy = False
                    return
            p, index, race, rid = want
            try:
                out = race.denoise(p, index)
            except Exception as exc:          # shown to the user, never raised on a thread
                self._schedule(partial(self._notify, f"Denoising failed: {exc}"))
                continue
            self._schedule(partial(self._show_denoise, out, rid))

    def _show_denoise(self, out, race_id):
        if race_id != self.race_id:
            return
        for key, _ in DENOISE_VIEWS:
            self.denoise_images[key].update(out[key])
        m = out["mcc"]
        conv = "" if out["tap_converged"] else " (TAP did not converge within max_iter)"
        self.denoise_text.object = (
            f"Test digit {out['index']} (a '{out['label']}'), p = {out['p']:.2f}, model of epoch "
            f"{out['epoch']:.2f} · MCC against the clean digit — noisy {m['noisy']:.3f} · "
            f"OPE {m['ope']:.3f} · 1-NN {m['nn']:.3f} · **TAP {m['tap']:.3f}**{conv}")

    def _status(self, race, last):
        s = race.settings
        if isinstance(race, DBMTapRace):
            text = (f"epoch {race.epoch:.2f} · {race.updates:,} updates · "
                    f"**{race.phase}** (pretraining: {s.pretrain_epochs} epoch(s) per layer; "
                    f"joint epochs {race.trainer.epochs}) · γ = {s.learning_rate:g} · η = "
                    f"{s.momentum:g} (heavy ball) · ε = {s.weight_decay:g} · K = "
                    f"{s.n_solutions or s.batch_size} · TAP2 · damping {s.damping:g}")
            if last is not None:
                text += (f" · TAP LL per unit {last['tap_ll']:.4f} ({last['n_free']} free "
                         f"solutions; {last['n_not_converged']} runs not converged)")
            return text
        info = getattr(race, "start_info", None)
        if info:                       # a run from a shipped checkpoint: its training counts
            samples = info.get("settings", {}).get("samples")
            on = f" on {samples:,} images" if isinstance(samples, int) else ""
            where = f"epoch {info.get('epoch', '?')} of the checkpoint{on} + {race.epoch:.2f} here"
        else:
            where = f"epoch {race.epoch:.2f}"
        text = (f"{where} · {race.updates:,} updates · γ = "
                f"{s.learning_rate:g} · η = {s.momentum:g} ({s.momentum_form}) · ε = "
                f"{s.weight_decay:g} · K = {s.n_solutions or s.batch_size} · {s.inference} order "
                f"{s.order} · damping {s.damping:g}")
        if last is not None:
            text += (f" · TAP LL per unit {last['tap_ll']:.4f} · "
                     f"{_plural(last['n_unique'], 'unique solution')} "
                     f"({last['n_not_converged']} not converged)")
        return text

    # ------------------------------------------------------------------ layout
    def _controls(self, w):
        return ([pn.pane.Markdown("### Start"), w["dataset"], w["model"], w["start_from"],
                 pn.pane.Markdown("### Training (live)"), w["learning_rate"],
                 pn.pane.Markdown("Inference (Alg. 1 TAP, or adaptive TAP, App. D)"),
                 w["inference"]],
                [pn.pane.Markdown("### Model and data"), w["limit"], w["n_hidden"],
                 w["n_hidden2"], w["pretrain_epochs"], w["batch_size"],
                 pn.pane.Markdown("### Training"), w["momentum"], w["momentum_form"],
                 w["weight_decay"], w["n_solutions"], w["order"], w["damping"], w["fixed_iter"],
                 w["products"],
                 pn.pane.Markdown("### Landscape"), w["landscape_every"], w["landscape_rows"],
                 w["eval_rows"],
                 pn.pane.Markdown("### Pace"), w["updates_per_point"], w["points_per_second"],
                 pn.Card(w["seed"], title="Seed", collapsed=True)])

    def figures(self) -> list:
        """The tab's live figures.

        Returns
        -------
        list of bokeh.plotting.figure
            The curves, the landscape map and histogram, the denoising tiles, the receptive
            fields (those of the current engine).
        """
        out = [c.figure for c in self.curves.values()]
        out += [x.figure for x in (self.scatter, self.histogram) if x is not None]
        out += [img.figure for img in list(self.denoise_images.values()) + list(self.fields.values())]
        return out

    def panel(self) -> pn.Column:
        """The tab's main area: text, buttons, plots, denoising and the help page.

        Returns
        -------
        panel.Column
            The tab, named "TAP landscape".
        """
        return self._page(
            [pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
             pn.pane.LaTeX(f"$\\text{{TAP LL per unit}} = {FORMULA}$", renderer="katex",
                           sizing_mode="stretch_width")],
            [self.ll_pane, self.count_pane, self.fields_box, self.dbm_text,
             self.landscape_box, self.denoise_box, help_card("tap")],
            name="TAP landscape", buttons=[self.refit_button])


def _plural(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")


def make_tap_tab(session: Any = None) -> TapSession:
    """The "TAP landscape" tab's session for this browser session.

    Its :meth:`~TapSession.panel` is the tab, its :meth:`~TapSession.sidebar` the controls.

    Parameters
    ----------
    session : rbmviz.app.race_tab.ExplorerSession, optional
        As in :func:`rbmviz.app.bias_tab.make_bias_tab`.

    Returns
    -------
    TapSession
        The new session; its first engine (a TAP RBM or a deep TAP machine) is made, not
        started.
    """
    return TapSession(doc=getattr(session, "doc", None) if session is not None else None)
