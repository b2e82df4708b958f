"""Fixtures for browser tests: the real explorer served by `panel serve` on a free localhost
port, and Debian's headless Chromium driven by Playwright (never `playwright install`).

Without Chromium the tests skip — except under CI (``CI=true``), where a missing browser is a
failure."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from serving import served_explorer

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("RBMVIZ_CHROMIUM", "/usr/bin/chromium")
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
    with served_explorer() as url:
        yield url


# One Chromium per module, not per session: the sync API marks its event loop as running in
# the main thread while it is open, and tests outside tests/browser/ (the docs site's width
# check) open their own sync_playwright after these modules.
@pytest.fixture(scope="module")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()
