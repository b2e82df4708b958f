"""A PNG of a results ``figure.html`` (Bokeh, BokehJS inline) through headless Chromium.

    python results/snapshot.py runs/dc-mnist-paper/figure.html results/dc-programming/dc-mnist-paper/figure.png

Playwright drives the system's ``chromium`` (Debian's package); the page is given a few seconds
to draw, longer for large files (``make.snapshot`` of ``results/tap-machines``).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tap-machines"))

from make import snapshot  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    snapshot(sys.argv[1], sys.argv[2])
