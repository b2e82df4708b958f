"""The explorer served for the browser tests: the README's ``panel serve`` command on a free
loopback port (used by ``conftest.explorer_url`` and the cold-start test)."""
import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "tests" / "output"


def free_port() -> int:
    """A free TCP port on the loopback address."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served_explorer(log_name: str = "panel_serve.log", *, env: dict | None = None,
                    timeout: float = 90.0):
    """``panel serve apps/explorer.py --setup apps/warmup.py`` (the README's command) on a free
    port of the loopback address; yields the explorer's URL once ``/liveness`` answers and stops
    the server afterwards.  A closed page's session (and its training thread) goes within
    ~1.5 s, not ~30 s: otherwise a test's race still trains while the next test measures its own
    rate."""
    port = free_port()
    log = open(OUTPUT.mkdir(parents=True, exist_ok=True) or OUTPUT / log_name, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "panel", "serve", str(ROOT / "apps" / "explorer.py"), "--port", str(port),
         "--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{port}", "--liveness",
         "--setup", str(ROOT / "apps" / "warmup.py"),
         "--unused-session-lifetime", "1000", "--check-unused-sessions", "500"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.time() + timeout
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
