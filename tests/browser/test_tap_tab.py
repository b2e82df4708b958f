"""The explorer's "TAP landscape" tab in headless Chromium (on the bundled 8×8 digits: no data
files): after Start, streamed TAP log-likelihood and unique-solution points arrive in the
plot's data sources, the landscape scatter gets its solutions, and moving the p slider changes
the noisy image of the denoising panel."""
import re
import time
from pathlib import Path

import pytest

from test_explorer_browser import open_explorer

OUTPUT = Path(__file__).resolve().parents[1] / "output"

pytestmark = pytest.mark.browser

#: {name: {column: [...]}} of the newest TAP race's sources "<kind>-tap:<id>:<series>"
TAP_JS = """() => {
  const found = [];
  for (const m of Bokeh.documents[0].all_models) {
    if (typeof m.name !== 'string' || !/^[a-z]+-tap:/.test(m.name) || !m.data) continue;
    const d = m.data;
    const keys = (d instanceof Map) ? Array.from(d.keys()) : Object.keys(d);
    const cols = {};
    for (const k of keys) {
      const v = (d instanceof Map) ? d.get(k) : d[k];
      cols[k] = Array.from(v || [], x => (x && typeof x === 'object') ? Array.from(x) : x);
    }
    const [kind, id, series] = m.name.split(':');
    found.push([parseInt(id), kind.replace('-tap', '') + ':' + series, cols]);
  }
  if (!found.length) return {};
  const last = Math.max(...found.map(f => f[0]));
  const out = {};
  for (const f of found) if (f[0] === last) out[f[1]] = f[2];
  return out;
}"""

#: the newest TAP race id among the named sources
MAX_ID_JS = """() => Math.max(0, ...Array.from(Bokeh.documents[0].all_models)
    .filter(m => typeof m.name === 'string' && m.name.startsWith('curve-tap:'))
    .map(m => parseInt(m.name.split(':')[1])))"""

#: the Bokeh model titled <title> gets the option whose label contains <label>
SELECT_JS = """([title, label]) => {
  for (const m of Bokeh.documents[0].all_models) {
    if (m.title !== title || !('options' in m)) continue;
    for (const o of m.options) {
      const [v, l] = Array.isArray(o) ? o : [o, o];
      if (String(l).includes(label)) { m.value = v; return true; }
    }
  }
  return false;
}"""

#: a slider's value, moved as a drag ends (value and value_throttled)
SLIDER_JS = """([title, value]) => {
  for (const m of Bokeh.documents[0].all_models) {
    if (m.title === title && 'value' in m && 'step' in m) {
      m.value = value; m.value_throttled = value; return true;
    }
  }
  return false;
}"""


#: a numeric input's value
VALUE_JS = """([title, value]) => {
  for (const m of Bokeh.documents[0].all_models) {
    if (m.title === title && 'value' in m && 'mode' in m) { m.value = value; return true; }
  }
  return false;
}"""



def pick(page, title_and_label):
    """Pick the option whose label contains ``label`` in the select titled ``title``, waiting
    until the select is in the page (a tab and its sidebar are made when first shown, and the
    sidebar's controls may arrive a message after the tab's buttons)."""
    page.wait_for_function(SELECT_JS, arg=title_and_label, timeout=60_000)

def tap_button(page, name):
    return page.get_by_role("button", name=re.compile(rf"^[^A-Za-z]*{name} \(TAP\)$"))


def tap_sources(page):
    return page.evaluate(TAP_JS)


def test_tap_tab_streams_the_landscape_and_denoises(browser, explorer_url):
    page = open_explorer(browser, explorer_url)
    page.get_by_text("TAP landscape", exact=True).click()     # the Bokeh tab header
    reset = tap_button(page, "Reset")
    reset.wait_for()
    pick(page, ["Dataset (TAP)", "digits"])
    # a smaller model and landscape keep the test quick on a busy machine
    assert page.evaluate(SLIDER_JS, ["Hidden units Nh", 30])
    assert page.evaluate(VALUE_JS, ["Landscape initialisations N", 200])
    page.get_by_text(re.compile(r"press \*?\*?Reset \(TAP\)")).wait_for()
    reset.click()
    page.wait_for_function(f"() => ({MAX_ID_JS})() >= 2")       # the Reset made a new race
    page.wait_for_function(f"() => ({TAP_JS})()['denoise:noisy'] !== undefined && "
                           f"({TAP_JS})()['curve:tap_ll'] !== undefined")
    tap_button(page, "Start").click()
    page.wait_for_function(
        f"() => {{ const d = ({TAP_JS})(); return ['curve:tap_ll', 'curve:n_unique'].every("
        f"s => d[s] && d[s].value.length >= 4) && d['landscape:solutions'] && "
        f"d['landscape:solutions'].x.length >= 1; }}", timeout=45_000)
    tap_button(page, "Pause").click()
    page.get_by_text(re.compile(r"paused · epoch")).wait_for()
    data = tap_sources(page)
    ll, count = data["curve:tap_ll"], data["curve:n_unique"]
    assert ll["epoch"][0] == 0 and ll["epoch"] == sorted(ll["epoch"])
    assert all(v < 0 and v == v for v in ll["value"])             # finite, negative nats/unit
    assert all(v >= 1 and float(v).is_integer() for v in count["value"])
    sols = data["landscape:solutions"]
    assert len(sols["x"]) == len(sols["free_energy"]) >= 1
    assert len(data["landscape:background"]["x"]) == 200          # the map's fit set
    assert sum(data["landscape:histogram"]["solutions"]) == len(sols["x"])

    # the denoising panel: a larger p flips more pixels of the same digit (nested noise)
    def image(name):               # BokehJS keeps an image as one flat array (row-major)
        return [float(v) for v in tap_sources(page)[f"denoise:{name}"]["image"][0]]

    page.wait_for_function(f"() => ({TAP_JS})()['denoise:noisy'].image[0].length === 64")
    clean, before = image("clean"), image("noisy")
    assert page.evaluate(SLIDER_JS, ["Flip probability p", 0.45])
    page.wait_for_function(
        f"""(before) => {{ const img = Array.from(({TAP_JS})()['denoise:noisy'].image[0]);
            return JSON.stringify(img) !== JSON.stringify(before); }}""", arg=before,
        timeout=30_000)
    after = image("noisy")
    assert set(after) <= {0.0, 1.0} and len(after) == 64 and image("clean") == clean
    flips_before = {i for i, (a, b) in enumerate(zip(before, clean)) if a != b}
    flips_after = {i for i, (a, b) in enumerate(zip(after, clean)) if a != b}
    assert flips_before < flips_after                            # p = 0.1 ⊂ p = 0.45
    page.get_by_text(re.compile(r"p = 0\.45")).wait_for()
    page.screenshot(path=str(OUTPUT / "tap_tab.png"), full_page=True)
    page.get_by_text(re.compile(r"^Landscape at epoch")).scroll_into_view_if_needed()
    page.screenshot(path=str(OUTPUT / "tap_tab_landscape.png"))
    page.close()


@pytest.mark.skipif(not __import__("rbmviz").datasets.available("mnist"),
                    reason="MNIST files missing in the data directory (set RBMVIZ_DATA)")
def test_tap_tab_trains_binary_mnist_784x100_at_5_updates_a_second(browser, explorer_url):
    """At the tab's defaults (binary MNIST, Nh = 100, M = K = 100) the TAP machine makes at
    least 5 mini-batch updates a second, counted from the streamed records."""
    time.sleep(3.0)                # the previous tests' sessions (and races) are gone by then
    page = open_explorer(browser, explorer_url)
    page.get_by_text("TAP landscape", exact=True).click()
    start = tap_button(page, "Start")
    start.wait_for()
    page.wait_for_function(f"() => ({TAP_JS})()['curve:tap_ll'] !== undefined")
    start.click()
    page.wait_for_function(f"() => ({TAP_JS})()['curve:tap_ll'].updates.length >= 2",
                           timeout=60_000)
    # the rate between the moments two records were first seen (a point comes every ~1.5 s:
    # reading the latest record at fixed times would be off by up to a point per reading)
    seen, t_end = [], time.time() + 15.0
    while time.time() < t_end:
        u = page.evaluate(f"() => {{ const u = ({TAP_JS})()['curve:tap_ll'].updates; "
                          f"return u[u.length - 1]; }}")
        if not seen or u != seen[-1][0]:
            seen.append((u, time.time()))
        time.sleep(0.1)
    tap_button(page, "Pause").click()
    assert len(seen) >= 3, seen
    (u0, t0), (u1, t1) = seen[0], seen[-1]
    rate = (u1 - u0) / (t1 - t0)
    print(f"TAP 784x100, M = 100: {rate:.1f} updates/s")
    page.close()
    # Floor against regressions: 3.0 updates/s measured on a quiet 2-core machine with the
    # HoloViews streams and two-thread BLAS.  Since the tab feeds plain Bokeh sources (a batch
    # ~40 ms of the server's loop instead of ~0.8 s) and the engine runs single-threaded BLAS,
    # 2.2/s were measured with the machine's load at 6-9 on 2 cores (0.13-0.26/s before at the
    # same load), the same as the engine alone without a browser (2.3/s): the tab no longer
    # costs updates.  On a quiet machine (AMD EPYC, no AVX-512): 3.0/s before, 4.1/s with the
    # counted solves undamped first and a 10 % evaluation budget, 4.7/s with the training
    # solves' products in float32, 5.2-5.3/s with 1.5-s points (Pause ends a point at the next
    # training chunk).  The target is 5/s: a run below it (a busy machine) is reported
    # as an expected failure instead of passing silently.
    assert rate > 0.1, rate          # the engine moves (0.3/s seen with a docs build beside it)
    if rate < 5.0:
        pytest.xfail(f"TAP tab at {rate:.1f} updates/s: the 5 updates/s target is not met yet")


@pytest.mark.skipif(not __import__("rbmviz").datasets.available("mnist"),
                    reason="MNIST files missing in the data directory (set RBMVIZ_DATA)")
def test_tap_landscape_shows_several_solutions_right_after_loading_a_shipped_model(
        browser, explorer_url):
    from rbmviz.live.tap import TAP_CHECKPOINTS
    name = TAP_CHECKPOINTS[-1]                        # the most trained shipped TAP model
    page = open_explorer(browser, explorer_url)
    page.get_by_text("TAP landscape", exact=True).click()
    tap_button(page, "Step").wait_for()
    before = page.evaluate(MAX_ID_JS)
    pick(page, ["Start from", name])
    page.wait_for_function(f"() => ({MAX_ID_JS})() > {before}", timeout=120_000)
    tap_button(page, "Step").click()                  # the first point: the loaded model as is
    page.wait_for_function(f"() => {{ const d = ({TAP_JS})(); return d['landscape:solutions'] "
                           f"&& d['landscape:solutions'].x.length > 1; }}", timeout=120_000)
    n = len(tap_sources(page)["landscape:solutions"]["x"])
    print(f"{name}: {n} unique TAP solutions right after loading")
    # the paper-scale epoch-100 model: 2,628 solutions from 10,000 rows when it was saved
    # (hundreds from the tab's 500); the classroom's "rich landscape in seconds"
    assert name == "tap-mnist-100-fixed10-epoch100" and n >= 50, (name, n)
    page.close()


def test_tap_tab_trains_a_deep_tap_machine_and_shows_both_layers_fields(browser, explorer_url):
    """Model = deep TAP machine (2 hidden layers, App. E) on the digits: its TAP
    log-likelihood streams, both layers' receptive fields arrive, and the landscape and
    denoising say that they are for the RBM only (no stand-in data)."""
    page = open_explorer(browser, explorer_url)
    page.get_by_text("TAP landscape", exact=True).click()
    reset = tap_button(page, "Reset")
    reset.wait_for()
    page.wait_for_function(f"() => ({MAX_ID_JS})() >= 1")
    before = page.evaluate(MAX_ID_JS)
    pick(page, ["Dataset (TAP)", "digits"])
    pick(page, ["Model (TAP)", "deep TAP machine"])
    assert page.evaluate(SLIDER_JS, ["Hidden units Nh", 30])
    assert page.evaluate(SLIDER_JS, ["Layer-2 units N2 (DBM)", 10])
    assert page.evaluate(VALUE_JS, ["Training rows (TAP)", 400])
    page.get_by_text(re.compile(r"press \*?\*?Reset \(TAP\)")).wait_for()
    reset.click()
    page.wait_for_function(f"() => ({MAX_ID_JS})() > {before}")
    page.get_by_text(re.compile(r"Landscape and denoising: RBM only")).wait_for()
    tap_button(page, "Start").click()
    page.wait_for_function(
        f"() => {{ const d = ({TAP_JS})(); return d['curve:tap_ll'] && "
        f"d['curve:tap_ll'].value.length >= 4 && d['fields:layer1'] && "
        f"d['fields:layer1'].image[0].length > 64 && d['fields:layer2'].image[0].length > 64; }}",
        timeout=60_000)
    tap_button(page, "Pause").click()
    page.get_by_text(re.compile(r"paused · epoch")).wait_for()
    data = tap_sources(page)
    ll = data["curve:tap_ll"]
    assert ll["epoch"][0] == 0 and ll["epoch"] == sorted(ll["epoch"])
    assert all(v < 0 and v == v for v in ll["value"])
    assert all(v >= 0 and float(v).is_integer() for v in data["curve:n_not_converged"]["value"])
    # no RBM-only series or panels for the DBM race
    assert not any(k.startswith(("landscape:", "denoise:")) for k in data), sorted(data)
    assert "curve:n_unique" not in data
    # 30 layer-1 fields of 8x8 (a 6x5 tile), 10 layer-2 fields: finite weights, not all zero
    for layer in ("fields:layer1", "fields:layer2"):
        img = [float(v) for v in data[layer]["image"][0]]
        assert any(v != 0 for v in img if v == v), layer
    page.screenshot(path=str(OUTPUT / "tap_tab_dbm.png"), full_page=True)
    page.close()
