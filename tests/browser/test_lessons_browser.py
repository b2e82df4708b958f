"""Lesson links in real Chromium: every lesson of the Lessons menu opens its tab with its
captions and its settings in the URL, and its run streams after Start (a screenshot of each
at 1,280×800 goes to docs/_static/explorer/ for the documentation); a bad link shows one
message naming each bad value with what it accepts, and the URL and widgets show what runs."""
import re
import urllib.parse
from pathlib import Path

import pytest

from rbmviz import datasets
from rbmviz.live import lessons
from test_bias_tab import BIAS_JS
from test_explorer_browser import CURVES_JS, button
from test_projector import SCREENS, open_at
from test_tap_tab import TAP_JS

pytestmark = pytest.mark.browser

#: the value of the first Bokeh widget titled <title>
WIDGET_VALUE_JS = """(title) => {
  for (const m of Bokeh.documents[0].all_models)
    if (m.title === title && 'value' in m) return m.value;
  return null;
}"""

#: one wait per tab: the lesson's run has streamed points after Start
STREAMED = {
    "race": f"() => ({CURVES_JS})().length > 0 && ({CURVES_JS})().every(v => v.length >= 3)",
    "bias": f"() => (({BIAS_JS})()['bias'] || []).length >= 3",
    "tap": f"() => {{ const d = ({TAP_JS})(); return d['curve:tap_ll'] && "
           f"d['curve:tap_ll'].value.length >= 2; }}",
}
START = {"race": r"Start", "bias": r"Start \(bias\)", "tap": r"Start \(TAP\)"}


def _needs_files(lesson):
    name = lesson.params.get("dataset")
    return name == "mnist" and not datasets.available("mnist")


@pytest.mark.parametrize("key", lessons.keys())
def test_each_lesson_link_opens_with_its_captions_and_streams(browser, explorer_url, key):
    lesson = lessons.get(key)
    if _needs_files(lesson):
        pytest.skip(f"{key}: MNIST files missing in {datasets.data_dir()}")
    page = open_at(browser, explorer_url, (1280, 800), lessons.query(lesson), idle=False)
    try:
        page.get_by_text(f"Lesson: {lesson.title}").wait_for()
        for caption in lesson.notice:                  # every "what to notice" line is shown
            page.get_by_text(caption[:40], exact=False).first.wait_for()
        assert page.get_by_text("cannot run").count() == 0  # a clean link
        query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
        assert query["lesson"] == [key]
        start = page.get_by_role("button", name=re.compile(rf"^[^A-Za-z]*{START[lesson.tab]}$"))
        start.wait_for(timeout=120_000)
        start.click()
        page.wait_for_function(STREAMED[lesson.tab], timeout=120_000)
        SCREENS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENS / f"lesson-{key}.png"))
    finally:
        page.close()                                   # a failed page must not train on


@pytest.mark.parametrize("query, key, needle", [
    ("k=-5", "k", "Gibbs steps k must be a whole number at least 1"),
    ("k=abc", "k", "must be a whole number"),
    ("dataset=nope", "dataset", "Dataset must be one of: Bars & Stripes"),
    ("n_hidden=100000", "n_hidden", "at most 16,384"),
    ("learning_rate=0", "learning_rate", "must be a number above 0"),
    ("colour=red", "colour", "is not a setting of this tab"),
    ("lesson=nope", "lesson", "is not a lesson"),
])
def test_a_bad_link_value_is_named_once_and_dropped(browser, explorer_url, query, key, needle):
    page = open_at(browser, explorer_url, (1280, 800), "?epochs=300&" + query)
    try:
        page.get_by_text("This link has settings that cannot run").wait_for()
        assert page.get_by_text(re.compile(re.escape(needle))).count() == 1
        # the URL shows what runs: the bad value is gone, the good one kept
        page.wait_for_function(f"() => !new URLSearchParams(location.search).has('{key}')")
        assert "epochs=300" in page.url
        if key == "k":                                 # the widget shows the value that runs
            assert page.evaluate(WIDGET_VALUE_JS, "Gibbs steps k") == 12
    finally:
        page.close()
