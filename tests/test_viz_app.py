"""The plotting functions produce renderable Bokeh figures from real records, and the
foundation explorer page trains and fills its panes."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rbmviz
from rbmviz import evaluate, viz

hv = pytest.importorskip("holoviews")
hv.extension("bokeh")
BS = rbmviz.datasets.bars_and_stripes(3)


def test_learning_curves_have_one_curve_per_algorithm_and_the_bound():
    frames = [rbmviz.train(rbmviz.RBM(9, 4, seed=0), BS, a, epochs=200, learning_rate=0.3, k=2,
                           eval_every=20) for a in ("cd", "pcd")]
    plot = viz.learning_curves(pd.concat(frames), "train_ll", x="gibbs_steps", bound=-np.log(14))
    curves = [el for el in plot if isinstance(el, hv.Curve)]
    assert [c.label for c in curves] == ["cd", "pcd"]
    assert len(curves[0].data) == 11 and curves[0].kdims[0].name == "gibbs_steps"
    assert any(isinstance(el, hv.HLine) and el.data == -np.log(14) for el in plot)
    hv.render(plot)
    with pytest.raises(ValueError, match="metric 'atll'"):
        viz.learning_curves(frames[0], "atll")


def test_receptive_field_grid_places_columns_of_w():
    W = np.arange(9 * 4, dtype=float).reshape(9, 4) - 10
    grid = viz.tile_images(W.T, (3, 3), n_cols=2)
    assert grid.shape == (7, 7)
    np.testing.assert_array_equal(grid[:3, :3], W[:, 0].reshape(3, 3))
    np.testing.assert_array_equal(grid[4:, 4:], W[:, 3].reshape(3, 3))
    assert np.isnan(grid[3]).all()
    img = viz.receptive_fields(W)
    assert img.opts.get().kwargs["clim"] == (-25.0, 25.0)      # centred at 0
    hv.render(img)
    assert viz.image_shape(784) == (28, 28) and viz.image_shape(10) == (1, 10)


def test_distribution_bars_compare_model_and_data():
    rbm = rbmviz.RBM(3, 2, seed=0)
    p = evaluate.visible_distribution(rbm)
    bars = viz.distribution_bars(p, np.eye(8)[3], top=4)
    df = bars.data
    assert set(df.source) == {"model", "data"} and len(df) == 10        # 4 patterns + "other"
    assert df[df.source == "data"].p.sum() == 1.0
    model = df[df.source == "model"]
    assert model.p.sum() == pytest.approx(1.0)                            # "other" holds the rest
    assert list(model.pattern) == sorted(model.pattern[:-1]) + ["other"]
    fixed = viz.distribution_bars(p, np.eye(8)[3], patterns=[1, 3], other=False).data
    assert list(fixed.pattern[:2]) == ["001", "011"] and len(fixed) == 4
    hv.render(bars)


def test_explorer_session_races_without_a_server():
    # the explorer's session object works headless (as in a notebook): Start streams records
    # into one Bokeh source per algorithm, Pause stops them, live knobs reach the algorithms
    import sys
    import time
    from rbmviz.app import race_tab as explorer_ui
    s = explorer_ui.ExplorerSession(sync_url=False)
    try:
        assert set(s.curves.sources) == {"cd", "pcd"}
        s.start()
        s.view.max_speed = True
        deadline = time.time() + 60
        while time.time() < deadline and min(len(s.curves.frame(k)) for k in s.curves.sources) < 40:
            time.sleep(0.1)
        s.pause()
        time.sleep(0.5)
        n = {k: len(s.curves.frame(k)) for k in s.curves.sources}
        assert min(n.values()) >= 40
        time.sleep(0.5)
        assert {k: len(s.curves.frame(k)) for k in s.curves.sources} == n        # paused: no new points
        curve = s.curves.frame("pcd")
        assert curve.value.iloc[-1] > curve.value.iloc[0]                  # the likelihood rises
        s.train.learning_rate = 0.05                                         # a live knob
        assert all(r.algorithm.learning_rate == 0.05 for r in s.race.runs.values())
        assert "applies at the next update" in s.settings_text.object
        s.model.n_hidden = 6                                                 # needs a reset
        assert "press **Reset**" in s.settings_text.object
        s.reset()
        assert s.race.runs["cd"].rbm.n_hidden == 6 and len(s.curves.frame("cd")) == 0
        s.step()
        time.sleep(0.2)
        assert len(s.curves.frame("cd")) == 1
        assert s._csv_bytes().getvalue().startswith(b"algorithm,") or b"epoch" in s._csv_bytes().getvalue()
        assert s._npz_bytes().getvalue()[:2] == b"PK"
    finally:
        s.race.stop()


def test_long_races_thin_their_curves_and_keep_compact_records(monkeypatch):
    import sys
    from rbmviz.app import race_tab as explorer_ui
    import rbmviz.live.race
    monkeypatch.setattr(explorer_ui, "MAX_CURVE_POINTS", 20)
    monkeypatch.setattr(rbmviz.live.race, "RECORD_CHUNK", 8)
    s = explorer_ui.ExplorerSession(sync_url=False)
    try:
        for _ in range(45):
            s.race.step()
        data = s.curves.frame("cd")
        assert len(data) <= 20                                   # bounded
        assert data.epoch.iloc[0] == 0 and data.epoch.iloc[-1] == s.race.epoch
        assert data.epoch.is_monotonic_increasing
        frame = s.race.frame()                                   # every record is kept
        assert len(frame) == s.race.n_records == 2 * 45
        every = s.train.eval_every                               # the data set's pace
        assert every == explorer_ui.RACE_EVAL_EVERY.get(s.data.dataset, explorer_ui.TOY_EVAL_EVERY)
        assert list(frame[frame.algorithm == "cd"].epoch) == [every * i for i in range(45)]
    finally:
        s.race.stop()


@pytest.mark.parametrize("module, cls, live, value, reset_knob, label", [
    ("bias_tab", "BiasSession", "learning_rate", 0.05, "n_hidden", "Reset (bias)"),
    ("tap_tab", "TapSession", "learning_rate", 0.05, "n_hidden", "Reset (TAP)"),
])
def test_tab_sessions_apply_live_knobs_and_ask_for_reset(module, cls, live, value, reset_knob,
                                                         label):
    """The CD-bias and TAP tabs share SessionControls: a live knob reaches the running engine
    and says so, a structural knob asks for that tab's Reset, Step advances one point."""
    import importlib
    import sys
    import time
    mod = importlib.import_module(f"rbmviz.app.{module}")
    s = getattr(mod, cls)(doc=None)
    try:
        if module == "tap_tab":
            s.settings.dataset = "digits"
            s.settings.limit = 300
        s.reset()
        assert s.race is not None, s.alert_text.object
        setattr(s.settings, live, value)
        assert s.race.settings.learning_rate == value
        assert "applies from the next" in s.settings_text.object
        setattr(s.settings, reset_knob, getattr(s.settings, reset_knob) + 1)
        assert f"press **{label}**" in s.settings_text.object
        n = len(s.race.frame())
        s.step()
        deadline = time.time() + 60
        while time.time() < deadline and len(s.race.frame()) == n:
            time.sleep(0.1)
        assert len(s.race.frame()) == n + 1
    finally:
        if s.race is not None:
            s.race.stop()


def test_explore_command_line_builds_the_panel_serve_call():
    from rbmviz.app import serve
    script = serve.script_path()
    assert Path(script).is_file() and Path(script).parent.name == "app"
    cmd = serve.panel_argv(["--port", "5011", "--num-procs", "2"])
    assert cmd[:2] == ["serve", script]
    assert cmd[cmd.index("--port") + 1] == "5011" and cmd[cmd.index("--address") + 1] == "127.0.0.1"
    assert "--allow-websocket-origin=127.0.0.1:5011" in cmd and cmd[-2:] == ["--num-procs", "2"]
    assert "--show" not in cmd and "--show" in serve.panel_argv(["--show"])
    # all interfaces: the origins are the user's to give; a given origin is not doubled
    wide = serve.panel_argv(["--address", "0.0.0.0"])
    assert not any(a.startswith("--allow-websocket-origin") for a in wide)
    own = serve.panel_argv(["--allow-websocket-origin=h:1"])
    assert [a for a in own if a.startswith("--allow-websocket-origin")] == ["--allow-websocket-origin=h:1"]
    with pytest.raises(ValueError, match="--port"):
        serve.panel_argv(["--port", "70000"])
    assert serve.main(["--port", "70000"]) == 2
    assert serve.main(["--help"]) == 0


def test_help_pages_ship_with_the_package_and_the_app_links_nowhere_else():
    import re
    from rbmviz.app import help as app_help
    root = Path(app_help.__file__).parent
    for page in app_help.PAGES:
        text = app_help.help_text(page)
        assert text.startswith("# ") and len(text) > 500
    with pytest.raises(ValueError, match="page"):
        app_help.help_text("nope")
    # no module of the app or of the engines points at a file outside the package
    for path in list(root.glob("*.py")) + list((root.parent / "live").glob("*.py")) + \
            list((root / "help").glob("*.md")):
        text = path.read_text()
        assert not re.search(r"reference/|\.\./|/work/|apps/(?!explorer\.py)", text), path


def test_sidebar_shows_the_active_tabs_controls_only():
    from rbmviz.app.layout import build
    layout = build(template=False, sync_url=False)
    try:
        assert list(layout.sidebars) == ["Training race", "CD bias", "TAP landscape"]
        assert [s.visible for s in layout.sidebars.values()] == [True, False, False]
        # the other tabs are made when first shown (a classroom's sessions stay light)
        lazy = {t: dict.__getitem__(layout.tab_sessions, t) for t in ("CD bias", "TAP landscape")}
        assert not any(lz.built for lz in lazy.values())
        layout.tabs.active = 1
        assert lazy["CD bias"].built and not lazy["TAP landscape"].built
        assert [s.visible for s in layout.sidebars.values()] == [False, True, False]
        # each sidebar holds its own tab's widgets: the bias tab's dataset is in the bias one
        bias = layout.tab_sessions["CD bias"]
        assert bias.widgets["dataset"] in list(layout.sidebars["CD bias"].select(type(bias.widgets["dataset"])))
        race = layout.session
        assert race.widgets["dataset"] not in list(layout.sidebars["CD bias"].select(type(race.widgets["dataset"])))
        layout.tabs.active = 2
        assert [s.visible for s in layout.sidebars.values()] == [False, False, True]
    finally:
        for s in layout.tab_sessions.made():
            if s.race is not None:
                s.race.stop()


def test_a_data_set_brings_its_preset_and_sdcp_gets_a_d_slider():
    from rbmviz import presets
    from rbmviz.app import race_tab
    s = race_tab.ExplorerSession(sync_url=False)
    try:
        pre = presets.for_dataset("bars_and_stripes")
        assert (s.train.k, s.train.learning_rate, s.model.n_hidden) == (pre["k"], pre["learning_rate"], pre["n_hidden"])
        assert s.race.image_shape == (3, 3)
        rid = s.race_id
        s.data.dataset = "shifting_bar"                       # picking a data set: preset + new race
        assert s.race_id == rid + 1 and s.race.image_shape == (1, 9)   # a 1-D set is drawn as a row
        assert "shifting_bar: its defaults applied" in s.settings_text.object
        # S-DCP: d and K′ side by side, k = d·K′ follows and reaches the running rule
        s.view.algorithms = ["cd", "sdcp"]
        assert s.widgets["d_budget"].visible and s.widgets["k_inner"].visible
        s.reset()
        s.budget.d = 2
        assert s.train.k == 2 * 4 and "k = d·K′ = 2·4 = 8" in s.budget_text.object
        assert (s.race.runs["sdcp"].algorithm.d, s.race.runs["sdcp"].algorithm.k_inner) == (2, 4)
        assert s.race.runs["cd"].algorithm.k == 8                   # equal compute
        s.train.k_inner = 3                                           # K′ moves, d stays
        assert s.train.k == 6 and s.budget.d == 2
        assert (s.race.runs["sdcp"].algorithm.d, s.race.runs["sdcp"].algorithm.k_inner) == (2, 3)
        s.view.algorithms = ["cd"]
        assert not s.widgets["d_budget"].visible
        # a larger data set: no exact likelihood, points spaced by time within epochs
        s.data.dataset = "digits"
        pre = presets.for_dataset("digits")
        assert s.race.metric == "spl" and s.view.x_axis == pre["x_axis"] == "updates"
        assert not s.bars_box.visible and s.bars_pane.object is None   # no p(v) for 64 pixels
        assert s.train.k_inner is None and s.model.n_hidden == pre["n_hidden"]
        assert not s.widgets["eval_every"].visible and s.spacing_text.visible
        for _ in range(3):
            s.step()
        data = s.curves.frame("cd")
        assert len(data) == 3 and data.updates.is_monotonic_increasing and data.updates.iloc[-1] > 0
        assert s.race.epoch == data.epoch.iloc[-1] and s.progress.value > 0
    finally:
        s.race.stop()


def test_a_stopped_race_cannot_feed_the_next_races_curves():
    # a batch the old race's thread hands over after Reset (it was inside next() when Reset
    # stopped it) once became the first point of the new race's curves: [11, 0, 1, ...]
    from rbmviz.app import race_tab as explorer_ui
    s = explorer_ui.ExplorerSession(sync_url=False)
    try:
        old = s.race
        old.step()
        old_sink = old.sink
        s.reset()
        assert s.race is not old and len(s.curves.frame("cd")) == 0
        late = [dict(r, algorithm="cd") for r in old.frame().to_dict("records")[-1:]]
        old_sink(late, old.snapshot())                 # what the old thread would do
        assert s._inbox == [] and len(s.curves.frame("cd")) == 0
        s.race.step()                                  # the new race feeds as before
        first = s.curves.frame("cd")
        assert list(first.updates) == [0.0] and list(first.epoch) == [0.0]
    finally:
        s.race.stop()


def test_live_plots_stream_thin_and_switch_axes():
    import numpy as np
    from rbmviz.app.live_plots import LiveBars, LiveCurves, LiveImage, GREYS
    c = LiveCurves(["a", "b"], ["epoch", "updates", "value"], x="epoch", y="value",
                   source_prefix="curve:1:", colors=["red"], max_points=10)
    assert c.sources["a"].name == "curve:1:a"
    for i in range(7):
        c.append("a", {"epoch": [2 * i, 2 * i + 1], "updates": [20 * i, 20 * i + 10],
                       "value": [-i, -i - 0.5]})
    f = c.frame("a")
    assert len(f) <= 10 and f.epoch.is_monotonic_increasing and f.epoch.iloc[-1] == 13
    assert f.epoch.iloc[0] == 0 and len(c.frame("b")) == 0
    c.append("b", {"epoch": [0.0]})                  # missing columns are NaN
    assert np.isnan(c.frame("b").value.iloc[0])
    c.set_x("updates")
    assert all(r.glyph.x == "updates" for r in c.renderers.values())
    assert c.figure.xaxis[0].axis_label == "parameter updates"
    with pytest.raises(ValueError, match="x axis 'gibbs'"):
        c.set_x("gibbs")
    with pytest.raises(ValueError, match="column 'value'"):
        LiveCurves(["a"], ["epoch"], x="epoch", y="value", source_prefix="", colors=["red"])
    img = LiveImage(title="t", palette=GREYS)
    grid = np.arange(6.0).reshape(2, 3)
    img.update(grid)
    assert np.array_equal(img.source.data["image"][0], grid[::-1])     # row 0 on top
    assert img.figure.x_range.end == 3 and img.figure.y_range.end == 2
    sym = LiveImage(title="W", symmetric=True)
    sym.update(np.array([[-0.5, 2.0]]))
    assert (sym.mapper.low, sym.mapper.high) == (-2.0, 2.0)
    with pytest.raises(ValueError, match="2-D"):
        img.update(np.zeros(3))
    bars = LiveBars(["00", "11"], ["model", "data"], colors=["b", "o"])
    bars.update({"model": [0.25, 0.75], "data": [0.5, 0.5]})
    assert list(bars.source.data["top"]) == [0.25, 0.5, 0.75, 0.5]
    with pytest.raises(ValueError, match="'data' needs 2"):
        bars.update({"model": [0.25, 0.75]})


def test_bias_tab_streams_the_bias_below_its_bound_into_its_plots():
    import time
    from rbmviz.app.bias_tab import SERIES, BiasSession
    s = BiasSession(doc=None)
    try:
        s.reset()
        for _ in range(5):
            s.step()
        deadline = time.time() + 60
        while time.time() < deadline and len(s.plots["bias"].frame("bias")) < 6:
            time.sleep(0.1)
        frames = {k: s.plots[v[2]].frame(k) for k, v in SERIES.items()}
        assert {len(f) for f in frames.values()} == {6}             # iteration 0 and 5 steps
        assert frames["bias"].iteration.is_monotonic_increasing
        assert (frames["bias"].raw <= frames["bound"].raw * (1 + 1e-9)).all()
        assert (frames["bias"].value > 0).all()                      # clipped for the log axis
        assert s.plots["bias"].sources["bias"].name.startswith(f"curve-bias:{s.race_id}:")
    finally:
        s.race.stop()


def test_discard_pending_drops_undelivered_records_so_a_view_draws_each_once():
    """Every live engine's ``discard_pending`` (rbmviz.live.loop.BackgroundLoop): the bias
    tab draws a new engine's iteration-0 point itself and discards it from the stream; the
    next batch to the sink holds only the newer records."""
    from rbmviz.live.bias import BiasRace
    from rbmviz.live.race import Race
    from rbmviz.settings import DataSettings, ModelSettings, TrainSettings
    batches = []
    bias = BiasRace(sink=batches.append)
    first = bias.discard_pending()
    assert [r["iteration"] for r in first] == [0] and first == bias.records[:1]
    assert bias.discard_pending() == []
    bias.step()
    assert len(batches) == 1 and [r["iteration"] for r in batches[0]] == [bias.iteration] != [0]
    delivered = []
    race = Race(DataSettings(dataset="bars_and_stripes", D=3), ModelSettings(n_hidden=4),
                TrainSettings(eval_every=5), algorithms=["cd"],
                sink=lambda recs, snap: delivered.append(recs))
    new = race._advance()
    assert race.discard_pending() == new and race.discard_pending() == []
    race.step()
    assert len(delivered) == 1 and [r["epoch"] for r in delivered[0]] > [r["epoch"] for r in new]


def test_the_servers_loop_is_shared_fairly_between_sessions():
    from rbmviz.app.feed import LoopShare
    loop = LoopShare(share=0.5, window=2.0)
    assert loop.spacing(now=0.0) == 0.0
    loop.record(1, 0.02, now=10.0)                 # one session: 20 ms updates
    assert loop.spacing(now=10.0) == pytest.approx(0.04)
    for sid in range(30):                          # a lecture hall: 30 sessions at 20 ms
        loop.record(sid, 0.02, now=10.5)
    assert loop.spacing(now=10.5) == pytest.approx(30 * 0.02 / 0.5)
    assert loop.spacing(now=13.0) == 0.0           # history older than the window is gone
    with pytest.raises(ValueError, match="share"):
        LoopShare(share=0.0)
    with pytest.raises(ValueError, match="window"):
        LoopShare(window=0)
