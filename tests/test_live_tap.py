"""The TAP-landscape engine of the explorer: TAP training on a thread, streaming the TAP
log-likelihood, unique-solution counts and landscape snapshots; on-demand denoising."""
import threading
import time

import numpy as np
import pytest

from rbmviz import datasets, tap
from rbmviz.live.tap import COUNT_TOL, RECORD_FIELDS, TapRace, TapSettings, tap_data
from rbmviz.model import RBM
from rbmviz.tap.denoising import denoise

#: a small, fast configuration on the bundled 8×8 digits (no files)
SMALL = dict(dataset="digits", limit=300, n_hidden=20, batch_size=50, n_solutions=50,
             eval_rows=60, landscape_rows=120, learning_rate=0.5, updates_per_point=2,
             points_per_second=100)


class Collector:
    def __init__(self):
        self.batches, self.snapshots, self.lock = [], [], threading.Lock()

    def __call__(self, records, snapshot):
        with self.lock:
            self.batches.append(list(records))
            self.snapshots.append(snapshot)

    @property
    def records(self):
        with self.lock:
            return [r for b in self.batches for r in b]


def wait_for(cond, timeout=15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


def check_snapshot(snap, race):
    n = snap["n_unique"]
    assert n >= 1
    for key in ("x", "y", "free_energy", "counts"):
        assert len(snap[key]) == n, key
    assert snap["counts"].sum() == snap["n_converged"] <= snap["n_init"] == len(race.landscape_data)
    assert np.all(np.isfinite(snap["free_energy"])) and np.all(np.isfinite(snap["x"]))
    assert snap["hist_heights"].sum() == n                  # a histogram of the unique solutions
    assert len(snap["hist_edges"]) == len(snap["hist_heights"]) + 1
    assert snap["hist_edges"][0] <= snap["free_energy"].min() <= snap["free_energy"].max() \
        <= snap["hist_edges"][-1]
    assert snap["mean_free_energy"] == pytest.approx(snap["free_energy"].mean())


def test_records_stream_with_the_library_values():
    sink = Collector()
    race = TapRace(TapSettings(**SMALL), sink=sink)
    try:
        race.start()
        assert wait_for(lambda: len(sink.records) >= 6)
    finally:
        race.stop()
    recs = sink.records
    assert set(RECORD_FIELDS) <= set(recs[0]) and recs[0]["updates"] == 0
    ups = [r["updates"] for r in recs]
    assert ups == list(range(0, 2 * len(recs), 2))
    assert [r["epoch"] for r in recs] == pytest.approx([u / race.n_batches for u in ups])
    for r in recs:
        assert np.isfinite(r["tap_ll"]) and r["tap_ll"] < 0
        assert r["n_unique"] >= 1 and r["n_not_converged"] >= 0 and r["n_eval"] == 60
    assert len(sink.batches) < len(recs)                   # delivered in batches
    # the first point is eq. 39 / (Nv + Nh) of the initial model, computed independently
    s = TapSettings(**SMALL)
    train, *_ = tap_data("digits", s.limit, seed=s.seed)
    fresh = TapRace(s)
    assert np.array_equal(fresh.data, train)
    ll = tap.log_likelihood(fresh.rbm, fresh.eval_data, tol=COUNT_TOL, unique=True,
                            undamped_first=True)
    assert recs[0]["tap_ll"] == pytest.approx(ll / (64 + 20), rel=1e-10)
    # at initialisation (tiny weights) every data point reaches the same TAP solution
    assert recs[0]["n_unique"] == 1
    snap = sink.snapshots[-1]
    assert snap is not None and snap["id"] >= 1
    check_snapshot(snap, race)


def test_snapshot_matches_an_independent_solve_and_the_map_is_fitted_once():
    race = TapRace(TapSettings(**{**SMALL, "landscape_every": 1, "updates_per_point": 3}))
    race.step()
    first = race.snapshot
    check_snapshot(first, race)
    assert first["epoch"] == 0 and first["map"] == "data"
    sol = tap.solve_counted(race.rbm, race.landscape_data, tol=COUNT_TOL, max_iter=1000)
    u = tap.unique_solutions(sol)
    assert first["n_unique"] == u.n_unique
    assert np.allclose(np.sort(first["free_energy"]), np.sort(u.free_energy), rtol=1e-12)
    # the map was fitted on the landscape images: their embedding is the grey background
    assert len(first["background_x"]) == len(race.landscape_data)
    fitted = race.solution_map
    while race.snapshot["id"] < 3:                          # two more epochs
        race.step()
    snap = race.snapshot
    check_snapshot(snap, race)
    assert race.solution_map is fitted and snap["map_epoch"] == 0 and snap["map"] == "data"
    assert np.array_equal(snap["background_x"], first["background_x"])
    assert snap["epoch"] == pytest.approx(2.0, abs=3 / race.n_batches)
    assert [s["id"] for s in race.snapshots] == [1, 2, 3]
    # refit on demand: pending while there are fewer than 3 solutions ...
    race.refit_map()
    race.step()
    if race.snapshot["n_unique"] < 3:
        assert race.snapshot["refit_pending"] and race.snapshot["map"] == "data"
    # ... then fitted on the solutions (Fig. 6): strong random couplings at first order
    # (naive mean field) have many fixed points
    race.rbm.W[...] = np.random.default_rng(1).normal(0, 5.0, race.rbm.W.shape)
    race.run.max_ll_drop = float("inf")     # planted by hand: the run's divergence guard would
                                            # (rightly) stop a likelihood that falls this far
    race.update_settings(learning_rate=1e-6, momentum=0.0, order=1)
    race.refit_map()
    race.step()
    snap = race.snapshot
    assert snap["map"] == "solutions" and snap["n_unique"] >= 3 and not snap["refit_pending"]
    assert race.solution_map is not fitted
    assert np.allclose(snap["x"], snap["background_x"], atol=1e-8)   # fit set = embedded set


def test_pause_step_and_reproducibility():
    sink = Collector()
    race = TapRace(TapSettings(**SMALL), sink=sink)
    try:
        race.start()
        assert wait_for(lambda: len(sink.records) >= 3)
        race.pause()
        time.sleep(0.5)
        n = len(race.records)
        time.sleep(0.5)
        assert len(race.records) == n and not race.running
        assert len(sink.records) == n                       # everything recorded was delivered
        rec = race.step()
        assert len(rec) == 1 and len(race.records) == n + 1 and sink.records[-1] == rec[0]
    finally:
        race.stop()
    assert not race._thread.is_alive()
    other = TapRace(TapSettings(**SMALL))
    for _ in range(n + 1):
        other.step()
    assert other.records == race.records                   # bit-for-bit from the seed
    assert np.array_equal(other.rbm.W, race.rbm.W)


def test_live_settings_and_reset_knobs():
    race = TapRace(TapSettings(**SMALL))
    race.step()
    race.update_settings(learning_rate=0.01, order=1, damping=0.8, n_solutions=10)
    a = race.algorithm
    assert (a.learning_rate, a.order, a.damping, a.n_solutions) == (0.01, 1, 0.8, 10)
    with pytest.raises(ValueError, match="Reset"):
        race.update_settings(n_hidden=30)
    with pytest.raises(ValueError, match="n_solutions"):
        race.update_settings(n_solutions=51)
    with pytest.raises(ValueError, match="n_solutions"):
        TapRace(TapSettings(**{**SMALL, "n_solutions": 60}))


def test_fixed_iterations_are_a_live_knob_of_the_rbm_and_refused_for_the_dbm():
    """'Alg. 1 iterations per update' (App. D): a race started with fixed_iter trains as the
    library's TAP rule with that knob; it can be switched mid-run (the solves of the next
    update run that many iterations); the deep machine refuses it."""
    from rbmviz.algorithms import TAP
    from rbmviz.live.tap_dbm import DBMTapRace
    race = TapRace(TapSettings(**{**SMALL, "fixed_iter": 3}))
    race.step()                                      # epoch 0
    race.step()                                      # 2 updates (updates_per_point)
    a = race.algorithm
    assert isinstance(a, TAP) and a.fixed_iter == 3
    assert (a.updates, a.tap_iterations, a.gibbs_steps_per_update) == (2, 6, 3)
    ref = TapRace(TapSettings(**SMALL))
    ref.step()
    ref.step()
    assert ref.algorithm.tap_iterations != 6
    assert not np.array_equal(race.rbm.W, ref.rbm.W)           # another rule than to-tol
    race.update_settings(fixed_iter=7)
    race.step()
    assert (a.updates, a.tap_iterations) == (4, 6 + 2 * 7)
    race.update_settings(fixed_iter=None)
    race.step()
    assert a.fixed_iter is None and a.gibbs_steps_per_update not in (3, 7)
    with pytest.raises(ValueError, match="fixed_iter"):
        DBMTapRace(TapSettings(**{**DBM_SMALL, "fixed_iter": 3}))
    dbm = DBMTapRace(TapSettings(**DBM_SMALL))
    with pytest.raises(ValueError, match="TAP2 only: fixed_iter"):
        dbm.update_settings(fixed_iter=3)


def test_divergence_is_reported_not_raised():
    errors = []
    race = TapRace(TapSettings(**SMALL), on_error=errors.append)
    race.step()
    race.rbm.W[0, 0] = np.nan
    assert race.step() == []
    assert race.failed and errors == [race.failed] and "diverged" in race.failed
    assert race.finished and len(race.records) == 1
    assert race.step() == [] and len(errors) == 1


def test_a_missing_mnist_file_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RBMVIZ_DATA", str(tmp_path))
    with pytest.raises(datasets.DatasetNotFoundError, match=str(tmp_path)):
        TapRace(TapSettings(dataset="mnist"))


def test_denoising_on_demand():
    race = TapRace(TapSettings(**SMALL))
    for _ in range(3):
        race.step()
    clean = race.test[5]
    zero = race.denoise(0.0, 5)
    for k in ("noisy", "ope", "tap"):
        assert np.array_equal(zero[k].ravel(), clean), k
    assert zero["mcc"]["tap"] == pytest.approx(1.0)
    lo, hi = race.denoise(0.1, 5), race.denoise(0.3, 5)
    flips_lo = lo["noisy"].ravel() != clean
    flips_hi = hi["noisy"].ravel() != clean
    assert flips_lo.sum() < flips_hi.sum() and np.all(flips_hi[flips_lo])   # nested noise
    assert lo["clean"].shape == race.image_shape == (8, 8)
    # the TAP estimate is the library's TAP denoiser on the current model
    y = hi["noisy"].reshape(1, -1)
    lib = denoise(race.model_copy(), y, 0.3, method="tap", train=race.data)
    assert np.array_equal(hi["tap"].ravel(), lib[0])
    nn = denoise(None, y, 0.3, method="nn", train=race.data)
    assert np.array_equal(hi["nn"].ravel(), nn[0])
    assert all(-1 <= v <= 1 for v in hi["mcc"].values())
    with pytest.raises(ValueError, match="index"):
        race.denoise(0.1, len(race.test))
    with pytest.raises(ValueError, match="p"):
        race.denoise(0.7, 0)


def test_model_copy_is_independent():
    race = TapRace(TapSettings(**SMALL))
    race.step()
    m = race.model_copy()
    assert isinstance(m, RBM) and np.array_equal(m.W, race.rbm.W) and m.W is not race.rbm.W
    race.step()
    race.step()
    assert not np.array_equal(m.W, race.rbm.W)


def test_the_tab_falls_back_offline_and_reports_a_missing_file(tmp_path, monkeypatch):
    """The Panel side, headless (no server document: updates apply directly)."""
    pytest.importorskip("panel")
    from rbmviz.app import tap_tab

    monkeypatch.setenv("RBMVIZ_DATA", str(tmp_path))
    session = tap_tab.TapSession(doc=None)
    try:
        assert session.settings.dataset == "digits" and session.race is not None
        assert "MNIST files are not in" in session.settings_text.object
        session.settings.param.update(**{k: v for k, v in SMALL.items() if k != "dataset"})
        session.reset()
        session.race.step()
        assert session.hold_document is False                  # plain Bokeh sources only
        ll = session.curves["ll"].frame("tap_ll")
        rec = session.race.records[0]
        assert len(ll) == 1 and ll.value[0] == rec["tap_ll"] and ll.updates[0] == 0
        assert list(session.curves["count"].frame("n_unique").value) == [rec["n_unique"]]
        assert session.shown_snapshot == 1 and "Landscape at epoch 0.00" in session.landscape_text.object
        snap = session.race.snapshot
        sols = session.scatter.source.data
        assert list(sols["free_energy"]) == list(snap["free_energy"])
        assert len(session.scatter.background.data["x"]) == len(session.race.landscape_data)
        assert sum(session.histogram.source.data["solutions"]) == snap["n_unique"]
        names = {m.name for m in (*session.curves["ll"].sources.values(), session.scatter.source,
                                  session.histogram.source)}
        rid = session.race_id
        assert {f"curve-tap:{rid}:tap_ll", f"landscape-tap:{rid}:solutions",
                f"landscape-tap:{rid}:histogram"} <= names
        assert wait_for(lambda: "MCC against the clean digit" in session.denoise_text.object)
        noisy = session.denoise_images["noisy"].source.data["image"][0]
        assert noisy.shape == (8, 8) and set(np.unique(noisy)) <= {0.0, 1.0}
        session.settings.dataset = "mnist"
        assert "Reset (TAP)" in session.settings_text.object
        session.reset()
        assert session.race is None
        assert "a data file is missing" in session.alert_text.object
        assert str(tmp_path) in session.alert_text.object
    finally:
        if session.race is not None:
            session.race.stop()


def test_settings_derive_from_the_tap_rule_and_the_run_loop_measures():
    from rbmviz.algorithms import TAP
    from rbmviz.live.tap import LIVE_DEFAULTS
    from rbmviz.runs import Run
    for name in LIVE_DEFAULTS:                       # one declaration: bounds, type, choices
        mine, rule = TapSettings.param[name], TAP.Knobs.param[name]
        assert type(mine) is type(rule) and mine.doc == rule.doc, name
        assert getattr(mine, "bounds", None) == getattr(rule, "bounds", None), name
        assert getattr(mine, "objects", None) == getattr(rule, "objects", None), name
    assert "adatap" in TapSettings.param.inference.objects
    race = TapRace(TapSettings(**SMALL))
    try:
        assert isinstance(race.run, Run) and race.run.algorithm is race.algorithm
        recs = [race.step()[0] for _ in range(3)]
        assert [r["updates"] for r in recs] == [0, 2, 4]            # updates_per_point = 2
        # the record's TAP log-likelihood is eq. (39) per unit on the evaluation rows
        ref = tap.log_likelihood(race.rbm, race.eval_data, unique=True, tol=COUNT_TOL,
                                 max_iter=1000, details=True, undamped_first=True)
        assert recs[-1]["tap_ll"] == pytest.approx(float(ref.value) / (64 + 20), rel=1e-9)
        assert recs[-1]["n_unique"] == ref.n_solutions
        race.update_settings(updates_per_point=None)                 # spaced by time now
        assert race.step()[0]["updates"] > 4
        race.update_settings(inference="adatap", learning_rate=0.05)
        assert race.algorithm.inference == "adatap" and race.algorithm.learning_rate == 0.05
        assert race.step()[0]["updates"] > recs[-1]["updates"]
    finally:
        race.stop()


@pytest.mark.skipif(not datasets.available("mnist"), reason="MNIST files missing (RBMVIZ_DATA)")
def test_a_race_starts_from_a_shipped_model_with_a_rich_landscape():
    from rbmviz import checkpoints
    from rbmviz.live.tap import TAP_CHECKPOINTS
    assert TAP_CHECKPOINTS, "no shipped TAP model"
    name = TAP_CHECKPOINTS[-1]                                  # the most trained one
    rbm, info = checkpoints.load(name)
    race = TapRace(TapSettings(start_from=name, n_hidden=7, landscape_rows=300,
                               updates_per_point=1))
    try:
        assert race.rbm.n_hidden == rbm.n_hidden and np.array_equal(race.rbm.W, rbm.W)
        race.step()                                              # the first point: no training
        assert race.snapshot["epoch"] == 0 and race.snapshot["n_unique"] > 1
    finally:
        race.stop()
    with pytest.raises(ValueError, match="pixel"):
        TapRace(TapSettings(start_from=name, dataset="digits"))


def test_live_scatter_and_histogram_replace_their_data():
    """The plain-Bokeh landscape figures (rbmviz.app.live_plots): data replaced whole, the
    colour mapper follows the values, bad input is refused."""
    pytest.importorskip("bokeh")
    from rbmviz.app.live_plots import LiveHistogram, LiveScatter
    sc = LiveScatter(("x", "y", "fe", "size"), color="fe", size="size", name="pts",
                     background_name="bg")
    assert sc.source.name == "pts" and sc.background.name == "bg"
    sc.update({"x": [0, 1, 2], "y": [1, 2, 3], "fe": [-5.0, -3.0, -4.0], "size": [6, 7, 8]},
              background={"x": np.arange(10), "y": np.arange(10)})
    assert (sc.mapper.low, sc.mapper.high) == (-5.0, -3.0)
    assert list(sc.source.data["fe"]) == [-5.0, -3.0, -4.0] and len(sc.background.data["x"]) == 10
    sc.update({"x": [0], "y": [0], "fe": [2.0], "size": [6]})          # background kept
    assert sc.mapper.low < 2.0 < sc.mapper.high and len(sc.background.data["x"]) == 10
    with pytest.raises(ValueError, match="length"):
        sc.update({"x": [0, 1], "y": [0], "fe": [1.0], "size": [6]})
    with pytest.raises(ValueError, match="fe"):
        sc.update({"x": [0], "y": [0], "size": [6]})
    with pytest.raises(ValueError, match="among"):
        LiveScatter(("x", "y"), color="fe", name="n")
    h = LiveHistogram(name="hist", count_column="solutions")
    h.update([0.0, 1.0, 3.0], [2, 5])
    d = h.source.data
    assert list(d["left"]) == [0, 1] and list(d["right"]) == [1, 3] and list(d["solutions"]) == [2, 5]
    h.update([], [])
    assert len(h.source.data["solutions"]) == 0
    with pytest.raises(ValueError, match="edges"):
        h.update([0.0, 1.0], [1, 2])


# ---------------------------------------------------------------------- deep TAP machine
#: a small 2-hidden-layer deep TAP machine on the digits: 20 updates an epoch, one
#: pretraining epoch per layer, then joint training
DBM_SMALL = dict(model="dbm-2", dataset="digits", limit=400, n_hidden=25, n_hidden2=10,
                 batch_size=20, n_solutions=20, eval_rows=80, learning_rate=0.3,
                 pretrain_epochs=1, updates_per_point=10, points_per_second=100)


def test_dbm_engine_steps_and_its_tap_log_likelihood_rises():
    from rbmviz import dbm as dbm_mod
    from rbmviz.live.tap_dbm import DBM_RECORD_FIELDS, DBMTapRace, tap_engine
    race = tap_engine(TapSettings(**DBM_SMALL))
    assert isinstance(race, DBMTapRace) and race.layers == (64, 25, 10)
    assert isinstance(tap_engine(TapSettings(**SMALL)), TapRace)
    recs = [race.step()[0] for _ in range(12)]
    assert set(DBM_RECORD_FIELDS) <= set(recs[0])
    assert [r["updates"] for r in recs] == list(range(0, 120, 10))
    assert [r["phase"] for r in recs[:6]] == ["pretrain layer 1"] * 2 + ["pretrain layer 2"] * 2 \
        + ["joint"] * 2
    ll = np.array([r["tap_ll"] for r in recs])
    assert np.all(np.isfinite(ll)) and np.all(ll < 0)
    # the record is App. E's TAP log-likelihood per unit of the evaluation rows, recomputed
    ref = dbm_mod.log_likelihood(race.dbm, race.eval_data, init=race.eval_data, tol=1e-8,
                                 max_iter=1000, per_unit=True)
    assert recs[-1]["tap_ll"] == pytest.approx(ref, rel=1e-9)
    # joint TAP training raises it (measured: -0.258 at the start, ~-0.24 after 120 updates)
    assert ll[-3:].mean() > ll[0] + 0.005, ll
    # receptive fields: W1 and W1 W2 projected to the pixels, in the snapshot
    snap = race.snapshot
    assert snap["kind"] == "dbm" and snap["fields1"].shape == (64, 25)
    assert snap["fields2"].shape == (64, 10)
    f = race.receptive_fields()
    assert np.allclose(f[2], race.dbm.W[0] @ race.dbm.W[1])
    assert np.array_equal(f[1], race.dbm.W[0])


def test_dbm_engine_pretrains_and_trains_as_the_library_does():
    """Whole epochs of the live engine give the weights of rbmviz.dbm.pretrain and
    DBMTrainer.epoch (same random streams), bit for bit."""
    from rbmviz.dbm import DBM, DBMTrainer, pretrain
    from rbmviz.live.tap import MAX_ITER, TOL
    from rbmviz.live.tap_dbm import DBMTapRace
    from rbmviz._seeds import stream_seed
    s = TapSettings(**{**DBM_SMALL, "updates_per_point": 5})
    race = DBMTapRace(s)
    for _ in range(1 + 60 // 5):                     # two pretraining epochs and one joint
        race.step()
    assert race.updates == 60 and race.phase == "joint" and race.trainer.epochs == 1
    ref = DBM(race.layers, seed=stream_seed(s.seed, "init"), scale=0.01)
    ref.biases[0][:] = np.log(np.clip(race.data.mean(0), 1e-3, 1 - 1e-3)) \
        - np.log1p(-np.clip(race.data.mean(0), 1e-3, 1 - 1e-3))
    pretrain(ref, race.data, epochs=1, learning_rate=0.3, batch_size=20, momentum=s.momentum,
             weight_decay=s.weight_decay, damping=s.damping, tol=TOL, max_iter=MAX_ITER,
             seed=race.pretrain_seed)
    tr = DBMTrainer(learning_rate=0.3, momentum=s.momentum, weight_decay=s.weight_decay,
                    batch_size=20, n_solutions=20, damping=s.damping, tol=TOL, max_iter=MAX_ITER,
                    seed=stream_seed(s.seed, "joint"))
    tr.epoch(ref, race.data)
    for a, b in zip(ref.W + ref.biases, race.dbm.W + race.dbm.biases):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_dbm_engine_drives_the_library_runs_and_points_by_time():
    """Each phase of the live deep TAP machine is a rbmviz.runs.Run (the layers' TAP rule,
    then JointTAP); with updates_per_point = None a point is bounded by time and Pause ends
    the loop thread's point within about a training chunk."""
    from rbmviz.algorithms.tap import TAP
    from rbmviz.dbm import JointTAP
    from rbmviz.live.tap_dbm import CHUNK_SECONDS, DBMTapRace
    from rbmviz.runs import Run
    race = DBMTapRace(TapSettings(**{**DBM_SMALL, "updates_per_point": 30}))
    race.step()
    assert isinstance(race.run, Run) and isinstance(race.run.algorithm, TAP)
    assert race.run.rbm is race._layer_rbm and race.run.algorithm.momentum_form == "heavy_ball"
    race.step()                                      # 30 updates: into layer 2's pretraining
    assert race.phase == "pretrain layer 2" and race.run.algorithm.updates == 10
    race.step()                                      # 60: into the joint phase
    assert race.phase == "joint" and isinstance(race.run.algorithm, JointTAP)
    assert race.run.algorithm is race.trainer.algorithm and race.trainer.updates == 20
    sink = Collector()
    timed = DBMTapRace(TapSettings(**{**DBM_SMALL, "updates_per_point": None}), sink=sink)
    try:
        timed.start()
        assert wait_for(lambda: len(sink.records) >= 3)
        t0 = time.perf_counter()
        timed.pause()
        assert wait_for(lambda: not timed._advance_lock.locked(), timeout=5.0)
        assert time.perf_counter() - t0 < 20 * CHUNK_SECONDS + 1.0
    finally:
        timed.stop()
    ups = [r["updates"] for r in timed.records]
    assert ups[0] == 0 and all(b > a for a, b in zip(ups, ups[1:]))


def test_dbm_knobs_are_refused_mid_run_with_a_clear_message():
    from rbmviz.live.tap_dbm import DBMTapRace
    race = DBMTapRace(TapSettings(**DBM_SMALL))
    race.step()
    race.step()                                       # pretraining layer 1
    with pytest.raises(ValueError, match="model cannot change during a run.*press Reset"):
        race.update_settings(model="rbm")
    with pytest.raises(ValueError, match="Reset"):
        race.update_settings(n_hidden2=20)
    with pytest.raises(ValueError, match="TAP2 only"):
        race.update_settings(order=1)
    race.update_settings(learning_rate=0.05, damping=0.7)        # live in both phases
    assert race.trainer.learning_rate == 0.05 and race._layer_alg.learning_rate == 0.05
    assert race._layer_alg.damping == 0.7
    rbm_race = TapRace(TapSettings(**SMALL))
    with pytest.raises(ValueError, match="model cannot change during a run"):
        rbm_race.update_settings(model="dbm-2")
    with pytest.raises(ValueError, match="TAP2"):
        DBMTapRace(TapSettings(**{**DBM_SMALL, "inference": "adatap"}))
    with pytest.raises(ValueError, match="DBMTapRace"):
        TapRace(TapSettings(**DBM_SMALL))


def test_the_tab_shows_the_dbm_fields_and_says_what_does_not_apply():
    """The Panel side with model = "dbm-2", headless: the TAP LL curve and both layers'
    receptive fields are fed, the landscape and denoising are hidden behind a plain note."""
    pytest.importorskip("panel")
    from rbmviz.app import tap_tab
    session = tap_tab.TapSession(doc=None)
    try:
        session.settings.param.update(**DBM_SMALL)
        assert "Reset (TAP)" in session.settings_text.object
        session.reset()
        assert type(session.race).__name__ == "DBMTapRace", session.alert_text.object
        for _ in range(3):
            session.race.step()
        ll = session.curves["ll"].frame("tap_ll")
        assert list(ll.value) == [r["tap_ll"] for r in session.race.records]
        assert "n_unique" not in session.curves["count"].sources          # no fake counts
        rid = session.race_id
        f1, f2 = session.fields[1].source, session.fields[2].source
        assert (f1.name, f2.name) == (f"fields-tap:{rid}:layer1", f"fields-tap:{rid}:layer2")
        # 25 fields of 8x8 tiled 5x5 with 1-pixel gaps, 10 fields 4x3 (rbmviz.viz.tile_images)
        assert f1.data["image"][0].shape[0] > 8 and np.isfinite(f2.data["image"][0]).any()
        assert session.fields_box.visible and session.dbm_text.visible
        assert not session.landscape_box.visible and not session.denoise_box.visible
        assert session.scatter is None and session.denoise_images == {}   # no stand-in data
        assert "RBM only" in session.dbm_text.object
        assert "pretrain layer" in session.state_text.object
        session.settings.model = "rbm"                     # asks for Reset, keeps the DBM
        assert "press **Reset (TAP)**" in session.settings_text.object
        assert type(session.race).__name__ == "DBMTapRace"
    finally:
        if session.race is not None:
            session.race.stop()


def test_shipped_tap_models_are_offered_by_epoch_the_paper_scale_one_last():
    """'Start from' lists the shipped TAP models by epoch, at one epoch the run on fewer rows
    first, so the last is the most trained paper-scale model (60,000 images, epoch 100)."""
    from rbmviz import checkpoints
    from rbmviz.live.tap import TAP_CHECKPOINTS
    infos = [checkpoints.info(n) for n in TAP_CHECKPOINTS]
    keys = [(i["epoch"], i["settings"]["samples"]) for i in infos]
    assert keys == sorted(keys) and len(set(TAP_CHECKPOINTS)) == len(TAP_CHECKPOINTS)
    assert keys[-1] == (100, 60_000)
    assert infos[-1]["measured"]["n_unique"] > 1000
