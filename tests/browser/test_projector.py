"""The explorer on a projector, in real Chromium: at 1,024×768, 1,280×800 and 1,920×1,080 every
visible Bokeh canvas and image of every tab lies inside the window and inside its tab, and
each plot's legend is on screen (Bokeh draws inside shadow roots: rbmviz's layout check walks
them), and the page's stylesheets and KaTeX formulas are styled.  At 1,280×800 the screenshots of every tab are stored where the documentation's
explorer page shows them (docs/_static/explorer/)."""
import re
from pathlib import Path

import pytest

from layout_check import layout_report
from test_bias_tab import BIAS_JS
from test_explorer_browser import CURVES_JS, button
from test_tap_tab import TAP_JS

pytestmark = pytest.mark.browser

SCREENS = Path(__file__).resolve().parents[2] / "docs" / "_static" / "explorer"
SIZES = [(1024, 768), (1280, 800), (1920, 1080)]


def open_at(browser, url, size, query="", idle=True):
    """A new page at ``size`` on ``url + query``, once BokehJS has its document (and, with
    ``idle``, has rendered it: a page that opens on the TAP tab streams its first landscape
    at once and need not become idle before Start)."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(90_000)
    page.goto(url + query)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0" +
                           (" && Bokeh.documents[0].is_idle" if idle else ""), timeout=90_000)
    return page


def fits(page, where):
    report = layout_report(page)
    assert report["problems"] == [], (where, report)
    assert report["canvases"] >= 1 and report["legends"] >= 1, (where, report)
    return report


#: the page's styles as the browser applied them, walking Bokeh's shadow roots: stylesheet
#: links not (yet) loaded, and formulas shown twice — Panel's KaTeX stylesheet shows one of a
#: formula's two renderings (MathML or KaTeX's HTML); without it both show, the MathML text
#: beside the formula (formulas not displayed, e.g. in a collapsed card, are not counted)
STYLES_JS = """() => { const out = {links: 0, unloaded: [], formulas: 0, shown_twice: 0};
  const shown = (e) => e !== null && e.getClientRects().length > 0;
  const walk = (root) => {
    root.querySelectorAll('link[rel="stylesheet"]').forEach(l => {
      out.links += 1; if (!l.sheet) out.unloaded.push(l.href); });
    root.querySelectorAll('.katex').forEach(k => {
      if (!shown(k)) return;
      out.formulas += 1;
      if (shown(k.querySelector('.katex-mathml')) && shown(k.querySelector('.katex-html')))
        out.shown_twice += 1; });
    root.querySelectorAll('*').forEach(e => { if (e.shadowRoot) walk(e.shadowRoot); });
  };
  walk(document);
  return out; }"""


def styles_applied(page):
    """Wait until every stylesheet link has loaded and no formula shows both its renderings,
    then return what :data:`STYLES_JS` saw (a stored screenshot of an unstyled page is a
    defect)."""
    try:
        page.wait_for_function(f"() => {{ const s = ({STYLES_JS})(); "
                               f"return s.unloaded.length === 0 && s.shown_twice === 0; }}",
                               timeout=30_000)
    except Exception:                       # the assertions below name what is missing
        pass
    report = page.evaluate(STYLES_JS)
    assert report["links"] >= 1 and not report["unloaded"], report
    assert report["shown_twice"] == 0, report
    return report


def shot(page, size, name):
    styles_applied(page)
    if tuple(size) == (1280, 800):
        SCREENS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENS / f"{name}.png"))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_tab_fits_the_screen_with_its_legends(browser, explorer_url, size):
    page = open_at(browser, explorer_url, size)
    button(page, "Start").click()
    page.wait_for_function(f"() => ({CURVES_JS})().every(v => v.length >= 20)", timeout=60_000)
    fits(page, "race")
    if tuple(size) == (1280, 800):
        # the stored screenshot shows the rules past Bars & Stripes' plateau (near ln 1/512
        # for its first ~500 epochs at the paper's settings): every curve up by 1.5 nats
        page.wait_for_function(f"() => ({CURVES_JS})().every(v => v.length > 1 && "
                               f"v[v.length - 1] > v[0] + 1.5)", timeout=150_000)
    shot(page, size, "race")
    button(page, "Pause").click()

    page.get_by_text("CD bias", exact=True).click()
    start = button(page, r"Start \(bias\)")
    start.wait_for()
    start.click()
    page.wait_for_function(f"() => (({BIAS_JS})()['bias'] || []).length >= 5", timeout=60_000)
    fits(page, "CD bias")
    shot(page, size, "cd-bias")
    button(page, r"Pause \(bias\)").click()

    page.get_by_text("TAP landscape", exact=True).click()
    start = page.get_by_role("button", name=re.compile(r"^[^A-Za-z]*Start \(TAP\)$"))
    start.wait_for()
    start.click()
    # the stored screenshot is past the first epoch's dip (the TAP log-likelihood falls for
    # about one epoch at the defaults, then climbs): 0.01 nat per unit above its start
    page.wait_for_function(f"() => {{ const d = ({TAP_JS})(); return d['curve:tap_ll'] && "
                           f"d['curve:tap_ll'].value.length >= 3; }}", timeout=90_000)
    if tuple(size) == (1280, 800):
        page.wait_for_function(f"() => {{ const v = ({TAP_JS})()['curve:tap_ll'].value; "
                               f"return v[v.length - 1] > v[0] + 0.01; }}", timeout=180_000)
    fits(page, "TAP landscape")
    shot(page, size, "tap-landscape")
    page.close()
