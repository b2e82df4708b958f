"""The explorer's "CD bias" tab in headless Chromium: after Start, streamed bias and bound
points arrive in the plot's data sources and the bound lies above the bias in the data shown."""
import re
from pathlib import Path

import pytest

from test_explorer_browser import button, open_explorer

OUTPUT = Path(__file__).resolve().parents[1] / "output"

pytestmark = pytest.mark.browser

#: {series: [[iteration, value], ...]} of the newest bias race's sources "curve-bias:<id>:<series>"
BIAS_JS = """() => {
  const found = [];
  for (const m of Bokeh.documents[0].all_models) {
    if (typeof m.name !== 'string' || !m.name.startsWith('curve-bias:') || !m.data) continue;
    const d = m.data;
    const get = (k) => Array.from(((d instanceof Map) ? d.get(k) : d[k]) || []);
    const [_, id, series] = m.name.split(':');
    const x = get('iteration'), y = get('value');
    found.push([parseInt(id), series, x.map((xi, i) => [xi, y[i]])]);
  }
  if (!found.length) return {};
  const last = Math.max(...found.map(f => f[0]));
  const out = {};
  for (const f of found) if (f[0] === last) out[f[1]] = f[2];
  return out;
}"""


def test_bias_tab_streams_bias_below_the_bound(browser, explorer_url):
    page = open_explorer(browser, explorer_url)
    page.get_by_text("CD bias", exact=True).click()     # the Bokeh tab header
    start = button(page, r"Start \(bias\)")
    start.wait_for()
    page.wait_for_function(f"() => ['bias', 'bound', 'bd_bound'].every(s => s in ({BIAS_JS})())")
    start.click()
    page.wait_for_function(
        f"() => {{ const d = ({BIAS_JS})(); return ['bias', 'bound'].every("
        f"s => (d[s] || []).length >= 5); }}", timeout=30_000)
    button(page, r"Pause \(bias\)").click()
    page.get_by_text(re.compile(r"paused · iteration")).wait_for()
    data = page.evaluate(BIAS_JS)
    bias = dict(map(tuple, data["bias"]))
    bound = dict(map(tuple, data["bound"]))
    common = sorted(set(bias) & set(bound))
    assert len(common) >= 5 and common[0] == 0
    for it in common:
        assert 0 < bias[it] <= bound[it] * (1 + 1e-9), (it, bias[it], bound[it])
    assert set(data) == {"bias", "bound", "bd_bound", "distance", "mixing"}
    assert all(v > 0 for _, v in data["bd_bound"])          # clipped for the log axis
    page.screenshot(path=str(OUTPUT / "bias_tab.png"), full_page=True)
    page.close()
