"""The CD-bias engine of the explorer: exact expected CD-k on a thread, streaming the bias
and its bounds."""
import threading
import time

import numpy as np
import pytest

from rbmviz import bias as rbias
from rbmviz.live.bias import BIAS_DATASETS, RECORD_FIELDS, BiasRace, BiasSettings


class Collector:
    def __init__(self):
        self.batches, self.lock = [], threading.Lock()

    def __call__(self, records):
        with self.lock:
            self.batches.append(list(records))

    @property
    def records(self):
        with self.lock:
            return [r for b in self.batches for r in b]


def wait_for(cond, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


def test_records_stream_and_the_bounds_hold():
    sink = Collector()
    race = BiasRace(BiasSettings(iterations_per_point=20, points_per_second=200), sink=sink)
    try:
        race.start()
        assert wait_for(lambda: len(sink.records) >= 15)
    finally:
        race.stop()
    recs = sink.records
    assert recs[0]["iteration"] == 0 and set(RECORD_FIELDS) <= set(recs[0])
    its = [r["iteration"] for r in recs]
    assert its == sorted(its) and its[1] - its[0] == 20
    for r in recs:
        assert 0 <= r["bias"] <= r["bound"] + 1e-12, r
        assert r["bias"] <= r["bd_bound"] + 1e-12, r
        assert r["bound"] == pytest.approx(r["distance"] * r["mixing"], rel=1e-9)
    # the sink is called at most ~10 times a second: records come in batches
    assert len(sink.batches) < len(recs)
    assert recs[-1]["log_likelihood"] > recs[0]["log_likelihood"]


def test_records_match_the_offline_measures():
    race = BiasRace(BiasSettings(dataset="bars_and_stripes_2", n_hidden=3, k=2))
    race.step()
    rec = race.records[-1]
    table = rbias.bias_table(race.rbm, race.data, ks=[2]).iloc[0]
    for f in ("bias", "bound", "distance", "mixing", "delta", "bd_bound"):
        assert rec[f] == pytest.approx(table[f], rel=1e-6, abs=1e-12), f


def test_pause_stops_the_stream():
    sink = Collector()
    race = BiasRace(BiasSettings(points_per_second=100), sink=sink)
    try:
        race.start()
        assert wait_for(lambda: len(sink.records) >= 5)
        race.pause()
        time.sleep(0.3)
        n = len(race.records)
        time.sleep(0.5)
        assert len(race.records) == n and not race.running
        assert len(sink.records) == n            # everything recorded was delivered
        race.start()
        assert wait_for(lambda: len(sink.records) > n + 3)
    finally:
        race.stop()
    assert not race._thread.is_alive()


def test_live_k_change_applies():
    race = BiasRace(BiasSettings(iterations_per_point=100))
    for _ in range(3):
        race.step()
    same = BiasRace(BiasSettings(iterations_per_point=100))
    for _ in range(3):
        same.step()
    race.update_settings(k=5)
    a, b = race.step()[0], same.step()[0]
    assert a["k"] == 5 and b["k"] == 1
    assert a["bias"] != pytest.approx(b["bias"], rel=1e-3)
    assert a["mixing"] < b["mixing"] or a["mixing"] == b["mixing"] == 1.0
    with pytest.raises(ValueError, match="Reset"):
        race.update_settings(n_hidden=3)


def test_reset_rebuilds_from_the_settings():
    s = BiasSettings(dataset="shifting_bar", n_hidden=4, seed=3)
    a = BiasRace(s)
    for _ in range(4):
        a.step()
    s.seed = 4
    b = BiasRace(s)                     # a new race is the reset: fresh model, iteration 0
    assert len(b.records) == 1 and b.iteration == 0
    assert b.rbm.W.shape == (6, 4) and np.abs(b.rbm.W).max() <= 0.5
    assert not np.array_equal(a.rbm.W, b.rbm.W)
    assert np.all(b.rbm.b == 0) and np.all(b.rbm.c == 0)
    assert BiasRace(BiasSettings(dataset="shifting_bar", n_hidden=4, seed=3)).records[0] == a.records[0]


@pytest.mark.parametrize("name", list(BIAS_DATASETS))
def test_every_dataset_is_small_enough(name):
    race = BiasRace(BiasSettings(dataset=name, n_hidden=8))
    race.step()
    assert race.data.shape[1] <= rbias.MAX_EXACT_UNITS
    assert race.records[-1]["bias"] <= race.records[-1]["bound"] + 1e-12


def test_divergence_is_reported_not_raised():
    errors = []
    race = BiasRace(BiasSettings(learning_rate=2.0, iterations_per_point=10_000, init_scale=5.0),
                    on_error=errors.append)
    for _ in range(3):
        race.step()
    assert (race.failed is None) == (not errors)
