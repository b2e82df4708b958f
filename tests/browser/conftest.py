"""Fixtures for browser tests: the real explorer served by `panel serve` on a free localhost
port, and Debian's headless Chromium driven by Playwright (never `playwright install`).

Without Chromium the tests skip — except under CI (``CI=true``), where a missing browser is a
failure."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("RBMVIZ_CHROMIUM", "/usr/bin/chromium")
OUTPUT = ROOT / "tests" / "output"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _require_browser():
    missing = []
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        missing.append(f"Chromium at {CHROMIUM}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright Python package")
    if missing:
        msg = f"browser tests need {' and '.join(missing)} (apt-get install chromium; pip install playwright)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " — required under CI")
        pytest.skip(msg)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: compiles (and caches) the kernels the tabs use before the server starts, so that the first
#: Start does not wait for Numba on a fresh clone (the server's own warm-up does the same in
#: the background: rbmviz.live.warmup; the cold-start test measures that one)
WARM_UP = """
from rbmviz.live import warmup
for stage in warmup.STAGES:
    warmup.run_stage(stage)
"""


@pytest.fixture(scope="session")
def explorer_url():
    _require_browser()
    subprocess.run([sys.executable, "-c", WARM_UP], cwd=ROOT, check=True, timeout=600)
    port = _free_port()
    log = open(OUTPUT.mkdir(parents=True, exist_ok=True) or OUTPUT / "panel_serve.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "panel", "serve", str(ROOT / "apps" / "explorer.py"), "--port", str(port),
         "--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{port}", "--liveness",
         "--setup", str(ROOT / "apps" / "warmup.py"),
         # a closed page's session (and its training thread) goes within ~1.5 s, not ~30 s:
         # otherwise a test's race still trains while the next test measures its own rate
         "--unused-session-lifetime", "1000", "--check-unused-sessions", "500"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"panel serve did not come up (see {log.name})")
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/explorer"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()
