"""The shared background loop of the live engines: pacing, pause/step, stop, failures."""
import threading
import time

import pytest

from rbmviz.live.loop import BackgroundLoop


class Counter(BackgroundLoop):
    thread_name = "test-counter"

    def __init__(self, target=None, fail_at=None, pace=None, **kw):
        self._init_loop(**kw)
        self.n, self.target, self.fail_at, self.pace = 0, target, fail_at, pace
        self.delivered, self.errors = [], []
        self.got = threading.Event()

    @property
    def finished(self):
        return self.target is not None and self.n >= self.target

    def _pace(self):
        return self.pace

    def _advance(self):
        with self._lock:
            self.n += 1
            if self.fail_at == self.n:
                raise RuntimeError("boom")
            rec = {"n": self.n}
            self._pending.append(rec)
            return [rec]

    def _deliver(self, batch):
        self.delivered.extend(batch)
        self.got.set()

    def _report_failure(self, message):
        self.errors.append(message)
        self.got.set()


def _wait(pred, timeout=10.0):
    t0 = time.perf_counter()
    while not pred():
        if time.perf_counter() - t0 > timeout:
            raise AssertionError("timed out")
        time.sleep(0.01)


def test_runs_to_target_and_delivers_every_record_once_in_order():
    c = Counter(target=50, max_updates_per_second=1000)
    c.start()
    _wait(lambda: c.finished and not c.running and len(c.delivered) == 50)
    c.stop()
    assert [r["n"] for r in c.delivered] == list(range(1, 51))
    assert not c._thread.is_alive()


def test_step_while_paused_advances_exactly_one_point():
    c = Counter()
    assert c.step() == [{"n": 1}] and c.delivered == [{"n": 1}]
    c.step()
    assert c.n == 2 and [r["n"] for r in c.delivered] == [1, 2]
    assert not c.running and c._thread is None   # stepping never starts the thread


def test_pause_stops_advancing_and_pacing_limits_the_rate():
    c = Counter(pace=0.02, max_updates_per_second=1000)
    c.start()
    time.sleep(0.3)
    c.pause()
    time.sleep(0.1)
    n = c.n
    time.sleep(0.2)
    assert c.n == n                      # paused: no more points
    assert 3 <= n <= 20                  # 0.3 s at <= 50 points/s
    c.stop()


def test_throttled_delivery_coalesces_batches():
    c = Counter(target=200, max_updates_per_second=2)
    c.start()
    _wait(lambda: len(c.delivered) == 200)
    c.stop()
    assert [r["n"] for r in c.delivered] == list(range(1, 201))


def test_a_failing_thread_reports_instead_of_dying_silently():
    c = Counter(fail_at=3, max_updates_per_second=1000)
    c.start()
    assert c.got.wait(5) and _wait(lambda: c.errors) is None
    assert "boom" in c.errors[0] and "training thread failed" in c.errors[0]
    assert not c.running
    c.stop()


def test_stopped_loop_cannot_restart_and_bad_rate_is_refused():
    c = Counter()
    c.start()
    c.stop()
    with pytest.raises(RuntimeError, match="stopped"):
        c.start()
    with pytest.raises(ValueError, match="max_updates_per_second"):
        Counter(max_updates_per_second=0)
