"""Layout checks in the served page: every visible Bokeh canvas and image lies inside the
window and inside the tab that holds it, and every plot's legend is on screen.  Bokeh draws
inside shadow roots, so the walk descends into every ``element.shadowRoot``."""

#: problems of the visible canvases, images and legends; [] when the page fits
LAYOUT_JS = """() => {
  const W = window.innerWidth, problems = [];
  const tabs = [];
  function walk(root, visit) {
    for (const el of root.querySelectorAll('*')) {
      visit(el);
      if (el.shadowRoot) walk(el.shadowRoot, visit);
    }
  }
  walk(document, el => {
    const cls = String(el.className || '');
    if (cls.includes('bk-panel-models-tabs-Tabs')) tabs.push(el.getBoundingClientRect());
  });
  const tab = tabs.length ? tabs[0] : {left: 0, right: W};
  let canvases = 0, legends = 0;
  walk(document, el => {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return;          // hidden (another tab) or empty
    const cls = String(el.className || '');
    const isCanvas = el.tagName === 'CANVAS' && !cls.includes('bk-glyph');
    const isLegend = cls.startsWith('bk-Legend');
    const isImage = el.tagName === 'IMG';
    if (!(isCanvas || isLegend || isImage)) return;
    if (isCanvas) canvases += 1;
    if (isLegend) legends += 1;
    const what = isLegend ? 'legend' : (isImage ? 'image' : 'canvas');
    if (r.left < -1 || r.right > W + 1)
      problems.push(`${what} [${Math.round(r.left)}, ${Math.round(r.right)}] outside the window (0, ${W})`);
    else if (!isImage && (r.left < tab.left - 1 || r.right > tab.right + 1))
      problems.push(`${what} [${Math.round(r.left)}, ${Math.round(r.right)}] outside its tab ` +
                    `[${Math.round(tab.left)}, ${Math.round(tab.right)}]`);
  });
  return {problems, canvases, legends, tab: [Math.round(tab.left), Math.round(tab.right)]};
}"""


def layout_report(page) -> dict:
    """``{"problems": [...], "canvases": n, "legends": n, "tab": [left, right]}`` of the page
    as it is drawn now."""
    return page.evaluate(LAYOUT_JS)
