"""A lecturer starts the server a minute before the class, on a machine whose Numba cache is
empty: the server's warm-up (rbmviz.live.warmup, started by ``panel serve --setup apps/warmup.py``) compiles every
tab's kernels in the background, so that 60 s later a lesson link's first *training* point
arrives within 3 s of Start — for an MNIST race, a digits race, the CD-bias tab and the TAP
tab — and each tab opens within 3 s.  The server runs with ``NUMBA_CACHE_DIR`` in a new empty
folder (a cold start)."""
import os
import re
import time

import pytest

from rbmviz import datasets
from serving import served_explorer
from test_bias_tab import BIAS_JS
from test_explorer_browser import CURVES_JS, button
from test_tap_tab import TAP_JS

pytestmark = pytest.mark.browser

#: how long after the server starts the first page opens (the lecturer's minute)
LEAD = 60.0
#: Start -> first training point, and tab click -> its Start button
LIMIT = 3.0


@pytest.fixture(scope="module")
def cold_server(browser, tmp_path_factory):      # `browser` skips (or fails under CI) first
    cache = tmp_path_factory.mktemp("empty-numba-cache")
    started = time.time()
    with served_explorer("cold_serve.log", env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)),
                         timeout=120.0) as url:
        time.sleep(max(0.0, started + LEAD - time.time()))
        yield url


def _open(browser, url):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0 && "
                           "Bokeh.documents[0].is_idle", timeout=60_000)
    return page


RACES = [pytest.param("?dataset=mnist&epochs=2", id="mnist",
                      marks=pytest.mark.skipif(not datasets.available("mnist"),
                                               reason="MNIST files missing")),
         pytest.param("?dataset=digits&epochs=5", id="digits")]


@pytest.mark.parametrize("query", RACES)
def test_first_training_point_within_3_s_of_start(browser, cold_server, query):
    page = _open(browser, cold_server + query)
    assert page.get_by_text("Preparing").count() == 0, "the warm-up had not finished"
    t0 = time.time()
    button(page, "Start").click()
    # the epoch-0 record comes with Reset; the second point is the first of training
    page.wait_for_function(f"() => ({CURVES_JS})().every(v => v.length >= 2)", timeout=60_000)
    dt = time.time() - t0
    print(f"{query}: first training point {dt:.2f} s after Start")
    button(page, "Pause").click()
    page.close()
    time.sleep(2)                          # the session (and its thread) is gone
    assert dt <= LIMIT


@pytest.mark.parametrize("tab, start, streamed", [
    ("CD bias", r"Start \(bias\)", f"() => (({BIAS_JS})()['bias'] || []).length >= 2"),
    ("TAP landscape", r"Start \(TAP\)",
     f"() => {{ const d = ({TAP_JS})(); return d['curve:tap_ll'] && "
     f"d['curve:tap_ll'].value.length >= 2; }}"),
], ids=["cd-bias", "tap"])
def test_each_tab_opens_and_trains_within_3_s(browser, cold_server, tab, start, streamed):
    page = _open(browser, cold_server)
    t0 = time.time()
    page.get_by_text(tab, exact=True).click()
    button_ = page.get_by_role("button", name=re.compile(rf"^[^A-Za-z]*{start}$"))
    button_.wait_for(timeout=60_000)
    opened = time.time() - t0
    t1 = time.time()
    button_.click()
    page.wait_for_function(streamed, timeout=60_000)
    first = time.time() - t1
    print(f"{tab}: opened in {opened:.2f} s, first training point {first:.2f} s after Start")
    page.close()
    time.sleep(2)
    assert opened <= LIMIT and first <= LIMIT
