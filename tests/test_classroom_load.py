"""A lecture hall on one server: 30 concurrent explorer sessions racing on the loopback address.

Each session is a Bokeh client session (``bokeh.client.pull_session``, no browser) that does
what a student does: open the lesson's link (a race that does not end during the test), press
Start, and watch the curves stream.  Measured over ``RBMVIZ_LOAD_SECONDS`` (default 600 s, the reported figure;
set e.g. 60 for a trial run):

* every session receives at least one curve update per second (a streamed batch of points);
* Pause in one session takes effect within 1 s (no point arrives later than 1 s after the
  click, and the page says "paused");
* the server's memory (RSS of the server process and its workers) stays bounded: it grows by
  less than 10 % (or 40 MB) over the second half of the run;
* a session beyond ``RBMVIZ_MAX_SESSIONS`` gets the "class is full" page.

Marked slow (minutes of both cores).  Knobs: ``RBMVIZ_LOAD_SESSIONS`` (30),
``RBMVIZ_LOAD_SECONDS`` (600), ``RBMVIZ_LOAD_PROCS`` (``--num-procs``, 1).  The figures go to
``tests/output/classroom_load.json`` and are printed.
"""
from __future__ import annotations

import importlib
import itertools
import json
import os
import pkgutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "tests" / "output"
SESSIONS = int(os.environ.get("RBMVIZ_LOAD_SESSIONS", "30"))
SECONDS = float(os.environ.get("RBMVIZ_LOAD_SECONDS", "600"))
PROCS = int(os.environ.get("RBMVIZ_LOAD_PROCS", "1"))
#: how long a session may take to arrive, and to start racing, on a busy 2-core machine
CONNECT_TIMEOUT = 120.0
#: server CPU seconds to build one page (three tabs), generously: students arrive together
PAGE_SECONDS = 40.0
WARM_UP_SECONDS = 20.0

#: the query of the students' link: a race that does not end during the test, a point an epoch
LESSON = {"epochs": "10000000", "eval_every": "1"}
WARM_UP = """
from rbmviz.live.race import Race
from rbmviz.settings import DataSettings, ModelSettings, TrainSettings
race = Race(DataSettings(), ModelSettings(n_hidden=4), TrainSettings(k=5, eval_every=2), ["cd", "pcd"])
for _ in range(3):
    race.step()
race.snapshot()
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _prepare_client(monkeypatch):
    """The client must know Panel's Bokeh models to deserialize the page, and wait for a busy
    server as long as a browser does (Tornado gives a websocket 20 s, while the server builds
    the pages of the students who arrived first)."""
    import panel.models
    import tornado.httpclient
    for info in pkgutil.iter_modules(panel.models.__path__):
        importlib.import_module(f"panel.models.{info.name}")
    defaults = dict(tornado.httpclient.HTTPRequest._DEFAULTS, connect_timeout=600.0,
                    request_timeout=600.0)
    monkeypatch.setattr(tornado.httpclient.HTTPRequest, "_DEFAULTS", defaults)
    from bokeh.client.connection import ClientConnection
    monkeypatch.setattr(ClientConnection, "_handle_messages", _handle_messages_in_a_loop)


async def _handle_messages_in_a_loop(self):
    """``bokeh.client``'s message reader, as a loop.  Bokeh's own recurses once per message
    received (``_handle_messages -> _next -> run -> _handle_messages``) and never unwinds
    while the session lives, so a client slowed down and then stopped after ~250 messages (a
    couple of minutes of streaming; with the default recursion limit it died with
    RecursionError) — which looked like a stalled server session.  A browser has no such limit.
    """
    from bokeh.client.states import CONNECTED_AFTER_ACK, DISCONNECTED, ErrorReason
    while True:
        message = await self._pop_message()
        if message is None:
            await self._transition_to_disconnected(
                DISCONNECTED(ErrorReason.HTTP_ERROR, 500, "Internal server error."))
            return
        if message.msgtype == "PATCH-DOC":
            self._session._handle_patch(message)
        if ((self._until_predicate is not None and self._until_predicate())
                or not isinstance(self._state, CONNECTED_AFTER_ACK)):
            await self._next()          # stop, or whatever the new state does
            return


class Student:
    """One client session on its own thread and IOLoop (``loop_until_closed`` runs it, so the
    server's patches are applied as they arrive); actions are scheduled onto that loop."""

    def __init__(self, url: str, index: int, timeout: float = 600.0):
        self.url, self.index, self.timeout = url, index, timeout
        self.session = self.loop = self.error = None
        self.ready = threading.Event()
        self.closed = threading.Event()
        self.updates: list[float] = []        # arrival times of curve batches
        self._last = -1.0
        self.connect_seconds = None
        self.thread = threading.Thread(target=self._run, name=f"student-{index}", daemon=True)
        self.thread.start()

    def _run(self):
        from bokeh.client import pull_session
        t0 = time.monotonic()
        sid = f"student-{self.index}-{os.getpid()}"
        try:
            # as a browser does: GET the page (the server builds the session: the lesson is in
            # the URL, which the race tab syncs its knobs with), then connect its websocket
            query = urllib.parse.urlencode({**LESSON, "bokeh-session-id": sid})
            with urllib.request.urlopen(f"{self.url}?{query}", timeout=self.timeout) as r:
                r.read()
            # the lesson's arguments on the websocket too: a session whose websocket comes
            # later than the server keeps an unconnected page (--unused-session-lifetime, 15 s
            # by default; connecting 30 students takes ~70 s here) is made anew from the
            # websocket's request, and without them half the class raced the preset's 5,000
            # epochs and stopped streaming after 250 points
            self.session = pull_session(url=self.url, session_id=sid, arguments=LESSON)
            self.loop = self.session._connection.io_loop
            self.connect_seconds = time.monotonic() - t0
            self.session.document.on_change(self._on_change)
        except Exception as exc:  # noqa: BLE001 - re-raised by the test thread
            self.error = exc
            self.ready.set()
            return
        # what BokehJS sends once the page is rendered: Panel holds back plot updates until then
        from bokeh.events import DocumentReady
        document = self.session.document
        self.loop.add_callback(lambda: document.callbacks.send_event(DocumentReady()))
        self.ready.set()
        try:
            self.session._connection.loop_until_closed()
        finally:
            self.closed.set()

    def _on_change(self, event):
        from bokeh.models import ColumnDataSource
        model = getattr(event, "model", None)
        # only the curve sources (named at creation: no themed default is looked up)
        if not isinstance(model, ColumnDataSource) or not (model.name or "").startswith("curve:"):
            return
        now = time.monotonic()
        if now - self._last > 0.02:           # the events of one patch message: one batch
            self.updates.append(now)
        self._last = now

    # ------------------------------------------------------------------ what a student does
    def models(self, cls):
        return [m for m in self.session.document.models if isinstance(m, cls)]

    def _on_loop(self, fn):
        done, box = threading.Event(), {}

        def call():
            try:
                box["value"] = fn()
            except Exception as exc:  # noqa: BLE001 - re-raised below, in the caller
                box["error"] = exc
            finally:
                done.set()
        self.loop.add_callback(call)
        if not done.wait(30):
            raise TimeoutError(f"student {self.index}: the client loop did not run {fn}")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def click(self, word: str) -> float:
        """Press the race tab's button with ``word`` in its label (the other tabs' buttons say
        "(bias)", "(TAP)"); returns the time of the click."""
        from bokeh.events import ButtonClick
        from bokeh.models import Button
        (button,) = [b for b in self.models(Button) if word in b.label and "(" not in b.label]

        def press():
            self.session.document.callbacks.send_event(ButtonClick(button))
            return time.monotonic()
        return self._on_loop(press)

    def text(self) -> str:
        from bokeh.models import Markup
        return self._on_loop(lambda: " ".join(str(m.text) for m in self.models(Markup)))

    def close(self):
        if self.loop is not None and self.session is not None:
            self.loop.add_callback(self.session.close)
            self.closed.wait(10)


def _rss(pid: int) -> int:
    import psutil
    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


@pytest.fixture(scope="module")
def server():
    from rbmviz.app import serve
    subprocess.run([sys.executable, "-c", WARM_UP], cwd=ROOT, check=True, timeout=600)
    port = _free_port()
    OUTPUT.mkdir(parents=True, exist_ok=True)
    log = open(OUTPUT / "classroom_load_server.log", "w")  # noqa: SIM115 - closed in finally
    env = dict(os.environ, RBMVIZ_MAX_SESSIONS=str(SESSIONS), RBMVIZ_SESSION_THREADS="1",
               NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "panel", "serve", serve.script_path(), "--port", str(port),
           "--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{port}", "--liveness",
           "--num-procs", str(PROCS)]
    # its own process group: --num-procs workers are killed with it
    proc = subprocess.Popen(cmd, cwd=OUTPUT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"panel serve did not come up (see {log.name})")
            time.sleep(0.3)
        yield proc, f"http://127.0.0.1:{port}/explorer"
    finally:
        _stop_group(proc)
        log.close()


def _stop_group(proc, timeout=15.0):
    """SIGTERM to the server's process group, SIGKILL to whatever is left after ``timeout``;
    returns whether it ended on SIGTERM."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    try:
        proc.wait(timeout)
        clean = True
    except subprocess.TimeoutExpired:
        clean = False
    try:
        os.killpg(proc.pid, signal.SIGKILL)     # workers that outlived the parent
    except ProcessLookupError:
        pass
    proc.wait(5)
    return clean


def _connect(url, n, first=0):
    """``n`` students arrive together (as a class does); each page is built by the server in
    turn, so the wait is bounded by ``n`` times a page's build time."""
    budget = CONNECT_TIMEOUT + PAGE_SECONDS * n
    deadline = time.monotonic() + budget
    students = [Student(url, i, timeout=budget) for i in range(first, first + n)]
    for s in students:
        if not s.ready.wait(max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"session {s.index} did not arrive in time")
        if s.error is not None:
            raise s.error
    return students


def test_thirty_students_race_on_one_server(server, monkeypatch):
    from bokeh.models import Button
    proc, url = server
    _prepare_client(monkeypatch)
    figures = {"sessions": SESSIONS, "seconds": SECONDS, "num_procs": PROCS,
               "cpu_count": os.cpu_count(), "load_average_before": os.getloadavg()}
    students = []
    try:
        t0 = time.monotonic()
        students = _connect(url, SESSIONS)
        figures["connect_seconds_total"] = time.monotonic() - t0
        figures["connect_seconds_max"] = max(s.connect_seconds for s in students)

        # one more student: the class is full (per server process)
        if PROCS == 1:
            (extra,) = _connect(url, 1, first=SESSIONS)
            try:
                assert "The class is full" in extra.text()
                assert not [b for b in extra.models(Button) if "Start" in b.label]
            finally:
                extra.close()

        for s in students:
            s.click("Start")
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while not all(s.updates for s in students) and time.monotonic() < deadline:
            time.sleep(0.5)
        figures["first_update_seconds"] = time.monotonic() - t0 - figures["connect_seconds_total"]
        assert all(s.updates for s in students), \
            f"sessions without a point: {[s.index for s in students if not s.updates]}"
        time.sleep(WARM_UP_SECONDS)

        start = time.monotonic()
        rss = [(0.0, _rss(proc.pid))]
        paused = False
        pause = {}
        while (now := time.monotonic()) - start < SECONDS:
            time.sleep(2.0)
            rss.append((time.monotonic() - start, _rss(proc.pid)))
            if not paused and now - start >= SECONDS / 2:
                paused = True
                pause = _pause_latency(students[0])
        end = time.monotonic()
        figures["load_average_after"] = os.getloadavg()
        assert paused

        rates, gaps = [], []
        for s in students[1:]:              # student 0 paused for a while
            times = [t for t in s.updates if start <= t <= end]
            rates.append(len(times) / (end - start))
            edges = [start, *times, end]
            gaps.append(max(b - a for a, b in itertools.pairwise(edges)))
        figures["updates_total_per_session"] = [len(s.updates) for s in students]
        figures["last_update_before_end_seconds"] = [round(end - s.updates[-1], 1) if s.updates
                                                     else None for s in students]
        rss_mb = [r / 2**20 for _, r in rss]
        mid = min(range(len(rss)), key=lambda i: abs(rss[i][0] - SECONDS / 2))
        figures.update(
            updates_per_second_min=min(rates), updates_per_second_median=statistics.median(rates),
            updates_per_second_max=max(rates), longest_gap_seconds_max=max(gaps),
            longest_gap_seconds_median=statistics.median(gaps),
            rss_mb_start=rss_mb[0], rss_mb_mid=rss_mb[mid], rss_mb_end=rss_mb[-1],
            rss_mb_max=max(rss_mb), rss_mb_series=[(round(t), round(m, 1)) for (t, _), m
                                                   in zip(rss, rss_mb)][::5],
            **pause)
    finally:
        OUTPUT.mkdir(parents=True, exist_ok=True)
        (OUTPUT / "classroom_load.json").write_text(json.dumps(figures, indent=1))
        print("\nclassroom load:", json.dumps({k: v for k, v in figures.items()
                                               if k != "rss_mb_series"}, indent=1))
        for s in students:
            s.close()

    assert figures["updates_per_second_min"] >= 1.0, figures
    assert figures["pause_last_update_seconds"] <= 1.0, figures
    assert figures["pause_state_seconds"] <= 1.0, figures
    growth = figures["rss_mb_end"] - figures["rss_mb_mid"]
    assert growth <= max(0.10 * figures["rss_mb_mid"], 40.0), figures


def _pause_latency(student: Student) -> dict:
    """Press Pause; the last point after it, and when the page says paused."""
    clicked = student.click("Pause")
    said_paused = None
    deadline = clicked + 10
    while time.monotonic() < deadline:
        if said_paused is None and "<strong>paused</strong>" in student.text().replace(
                "&lt;", "<").replace("&gt;", ">"):
            said_paused = time.monotonic()
        if said_paused is not None and time.monotonic() - clicked > 4.0:
            break
        time.sleep(0.05)
    after = [t for t in student.updates if t > clicked]
    out = {"pause_last_update_seconds": (after[-1] - clicked) if after else 0.0,
           "pause_updates_after_click": len(after),
           "pause_state_seconds": (said_paused - clicked) if said_paused else float("inf")}
    student.click("Start")
    return out
