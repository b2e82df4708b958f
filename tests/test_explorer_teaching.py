"""The explorer as a lesson, headless (no browser): lesson links checked once with one message
per bad value, the server's kernel warm-up and what a page says meanwhile, names a student
reads, knob changes marked on the curves and logged in the CSV, downloads that stand alone,
a lesson's scheduled changes in the served race, a diverging rule explained once."""
import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from rbmviz import algorithms
from rbmviz.app import layout, links, race_tab
from rbmviz.app.live_plots import LiveCurves, LiveImage
from rbmviz.live import lessons, warmup
from rbmviz.live.race import rule_title
from rbmviz.settings import DataSettings, ModelSettings, TrainSettings
from rbmviz.live.race import RaceSettings


def _race_objects():
    return [DataSettings(), ModelSettings(), TrainSettings(), RaceSettings()]


# ----------------------------------------------------------------------------- links
@pytest.mark.parametrize("key, value, names", [
    ("k", -5.0, ["k=", "at least 1", "at most 1,000"]),
    ("k", "abc", ["k=abc", "whole number"]),
    ("dataset", "nope", ["dataset=nope", "Bars & Stripes (bars_and_stripes)"]),
    ("n_hidden", 100000, ["n_hidden=100000", "at most 16,384"]),
    ("learning_rate", 0.0, ["learning_rate=", "above 0"]),
    ("learning_rate", math.inf, ["learning_rate=", "number"]),
    ("algorithms", ["cd", "nope"], ["algorithms=", "a list of"]),
    ("colour", "red", ["`colour` is not a setting"]),
])
def test_each_bad_link_value_gets_one_message_naming_it(key, value, names):
    labels = layout._option_labels("race")
    good, problems = links.check_query({key: value, "k": 4, "epochs": 300} if key != "k"
                                       else {key: value, "epochs": 300},
                                       _race_objects(), labels=labels)
    assert len(problems) == 1, problems
    for text in names:
        assert text in problems[0], (text, problems[0])
    assert key not in good and good["epochs"] == 300


def test_good_link_values_are_coerced_to_the_knobs_type():
    good, problems = links.check_query(
        {"k": 4.0, "learning_rate": 1, "batch_size": "none", "algorithms": "cd,csdcp",
         "dataset": "shifting_bar"}, _race_objects())
    assert problems == []
    assert good == {"k": 4, "learning_rate": 1.0, "batch_size": None,
                    "algorithms": ["cd", "csdcp"], "dataset": "shifting_bar"}
    assert isinstance(good["k"], int) and isinstance(good["learning_rate"], float)


def test_encode_query_round_trips_through_panels_parser():
    from panel.util import parse_query
    q = {"dataset": "bars_and_stripes", "k": 12, "learning_rate": 0.3,
         "algorithms": ["cd", "pcd"], "classroom": True}
    back = parse_query(links.encode_query(q))
    assert back == q


def test_allowed_text_reads_the_declaration():
    p = TrainSettings.param.k
    assert links.allowed_text(p) == "a whole number at least 1 and at most 1,000 (or empty for none)"
    assert links.allowed_text(DataSettings.param.dataset, {"diag": "Diag"}).startswith("one of:")


def test_read_link_fills_a_lesson_and_the_url_wins():
    lesson = lessons.get("dc-escape")
    link = layout.read_link({"lesson": lesson.key, "learning_rate": 0.3})
    assert link.lesson is lesson and link.tab == "race" and link.problems == []
    assert link.settings["learning_rate"] == 0.3                  # the URL's own value
    assert link.settings["algorithms"] == lesson.params["algorithms"]


@pytest.mark.parametrize("query, needle", [
    ({"lesson": "nope"}, "`lesson=nope` is not a lesson"),
    ({"tab": "nope"}, "`tab=nope` is not a tab"),
    ({"tab": "bias", "k": 99}, "`k=99`"),            # the CD-bias tab's k is at most 10
])
def test_read_link_names_bad_lessons_tabs_and_other_tabs_knobs(query, needle):
    link = layout.read_link(dict(query))
    assert len(link.problems) == 1 and needle in link.problems[0], link.problems


def test_every_lesson_link_is_clean():
    for lesson in lessons.LESSONS:
        link = layout.read_link(lessons.parse_query(lessons.query(lesson))["params"]
                                | {"lesson": lesson.key})
        assert link.problems == [], (lesson.key, link.problems)
        assert link.tab == lesson.tab


# ----------------------------------------------------------------------------- warm-up
def test_warmup_message_names_the_stage_and_the_time_left(monkeypatch):
    status = warmup.WarmupStatus(started=True, done=("race",), current="large",
                                 stage_started=0.0)
    monkeypatch.setattr(warmup, "_PENDING", ["rules", "bias", "tap"])
    assert status.message("race") is None                       # ready: nothing to say
    text = status.message("bias", "The tab opens by itself.")
    assert "CD-bias tab" in text and "s left" in text and text.endswith("The tab opens by itself.")
    left = int(text.split("about ")[1].split(" s")[0])
    by_key = {s.key: s.seconds for s in warmup.STAGES}
    assert left >= by_key["rules"] + by_key["bias"]             # waits for what is queued before
    warmup.prefer("bias")                                       # the page shows it: next
    assert warmup._PENDING == ["bias", "rules", "tap"]
    left_now = int(status.message("bias").split("about ")[1].split(" s")[0])
    assert left_now < left
    with pytest.raises(ValueError, match="key must be one of"):
        warmup.prefer("nope")
    assert warmup.WarmupStatus().message("tap") is None         # never started: no message


def test_every_warmup_stage_names_a_known_kernel_group():
    keys = [s.key for s in warmup.STAGES]
    assert keys[0] == "race" and set(keys) >= {"race", "large", "bias", "tap"}
    assert set(layout.TAB_STAGES.values()) <= set(keys)


# ----------------------------------------------------------------------------- names
def test_rule_titles_carry_their_budget():
    assert rule_title(algorithms.create("cd", k=12)) == "CD-12"
    assert rule_title(algorithms.create("pcd", k=1)) == "PCD-1"
    assert rule_title(algorithms.create("cg", k=12)) == "centered gradient (k = 12)"
    assert rule_title(algorithms.create("sdcp", k=12)) == "S-DCP (k = d·K′ = 3·4)"
    assert rule_title(algorithms.create("tap")) == "TAP"


def test_image_box_holds_frame_title_and_colour_bar():
    img = LiveImage(title="t", colorbar=True, size=300)
    img.update(np.zeros((10, 20)))
    f = img.figure
    assert (f.frame_width, f.frame_height) == (300, 150)
    assert f.width == 300 + 2 * img.BORDER + img.COLORBAR_WIDTH
    assert f.height == 150 + img.TITLE_HEIGHT + 2 * img.BORDER


def test_curve_markers_follow_the_x_axis_and_legends_rename():
    c = LiveCurves(["cd"], ["epoch", "updates", "value"], x="epoch", y="value",
                   source_prefix="t:", colors=["red"], reference=-2.6, labels={"cd": "CD-12"})
    c.mark({"epoch": 10.0, "updates": 40.0}, "k 12 → 4")
    (at, span, label), = c.markers
    assert span.location == 10.0 and label.text.strip() == "k 12 → 4"
    c.set_x("updates")
    assert span.location == label.x == 40.0
    c.set_label("cd", "CD-4")
    names = [item.label["value"] for item in c.figure.legend[0].items]
    assert names == ["CD-4", "best possible -2.600"]
    assert c.figure.legend[0] in c.figure.right                 # beside the curves


# ----------------------------------------------------------------------------- a session
@pytest.fixture
def session():
    s = race_tab.ExplorerSession(sync_url=False)
    s.race.max_speed = True
    yield s
    s.race.stop()


def test_live_k_change_is_marked_logged_and_renames_the_legend(session):
    for _ in range(3):
        session.race.step()
    assert [d.visible for d in session.downloads.objects] == [False] * 3 or session.race.n_records
    session.train.k = 4                                  # a drag of the k slider
    (row,) = session.knob_log
    assert row["knob"] == "k" and (row["old"], row["new"]) == (12, 4)
    assert row["epoch"] == session.race.epoch
    assert session.curves.markers[-1][2].text.strip() == "k 12 → 4"
    legend = [i.label["value"] for i in session.curves.figure.legend[0].items]
    assert legend[:2] == ["CD-4", "PCD-4"]
    assert session.race.runs["cd"].algorithm.k == 4


def test_csv_stands_alone_and_downloads_wait_for_data(session):
    session.reset()
    session.race.max_speed = True
    session._refresh_state()
    # the epoch-0 record exists from the start; before it nothing is offered
    session.train.learning_rate = 0.5
    for _ in range(4):
        session.race.step()
    session._refresh_state()
    text = session._csv_bytes().getvalue().decode()
    lines = text.splitlines()
    assert lines[0].startswith("# rbmviz explorer")
    settings = json.loads(lines[1][len("# settings: "):])
    assert settings["settings"]["dataset"] == "bars_and_stripes"
    assert settings["algorithms"]["cd"]["learning_rate"] == 0.5
    assert any(l.startswith("# knob change at epoch") and "learning_rate 0.3 -> 0.5" in l
               for l in lines)
    df = pd.read_csv(io.StringIO(text), comment="#")
    assert len(df) == session.race.n_records and {"algorithm", "epoch", "train_ll"} <= set(df)
    names = [b.filename for b in session.downloads.objects]
    assert all(b.visible for b in session.downloads.objects)
    assert names[0].startswith("rbmviz_bars_and_stripes_9x4_cd-pcd_epoch")
    assert names[1].startswith("rbmviz_bars_and_stripes_9x4_cd_epoch") and names[1].endswith(".npz")
    assert session._npz_bytes("pcd").getvalue()[:2] == b"PK"


def test_downloads_are_hidden_before_there_is_data(monkeypatch):
    s = race_tab.ExplorerSession(sync_url=False)
    try:
        monkeypatch.setattr(type(s.race), "n_records", property(lambda self: 0))
        s._update_downloads()
        assert not any(b.visible for b in s.downloads.objects)
    finally:
        s.race.stop()


def test_a_lessons_scheduled_change_runs_in_the_served_race_and_divergence_is_explained_once():
    lesson = lessons.get("lr-too-large")
    link = layout.read_link({"lesson": lesson.key})
    s = race_tab.ExplorerSession(sync_url=False, settings=link.settings, lesson=link.lesson)
    try:
        s.race.max_speed = True
        for _ in range(400):
            s.race.step()
            if not s.race.active:
                break
        assert [r["knob"] for r in s.knob_log] == ["learning_rate"]
        assert s.knob_log[0]["new"] == 10.0 and s.knob_log[0]["epoch"] >= 600
        assert s.curves.markers[0][2].text.strip() == "η 0.3 → 10"
        assert s.race.failed                            # a rule diverged and stopped
        for name, message in s.race.failed.items():
            s._error_from_thread(name, message)         # no document: applied at once
        alert = s.alert_text.object
        assert alert.count("stopped:") == len(s.race.failed)
        assert "learning_rate=10 may be too large" in alert
        assert "stopped:" not in s.state_text.object      # said once, not again in the status
    finally:
        s.race.stop()


def test_the_bias_tab_marks_a_live_k_change_on_both_plots():
    from rbmviz.app.bias_tab import BiasSession
    s = BiasSession()
    try:
        s.race.step()
        s.settings.k = 3
        assert s.race.settings.k == 3
        for curves in s.plots.values():
            (at, span, label), = curves.markers
            assert at == {"iteration": float(s.race.iteration)} and label.text.strip() == "k 1 → 3"
    finally:
        s.race.stop()


def test_classroom_mode_reaches_every_tab():
    lay = layout.build(sync_url=False, template=False)
    race = lay.session
    try:
        race.set_classroom(True)
        assert race.view.classroom
        assert not any(race.widgets[n].visible for n in race_tab.ADVANCED if n in race.widgets)
        assert race.curves.figure.title.text_font_size == "20px"
        solid = [r.glyph.line_width for r in race.curves.figure.renderers
                 if type(r.glyph).__name__ == "Line" and r.glyph.line_dash in ("solid", [])]
        assert solid and all(w == 4 for w in solid)
        bias = lay.tab_sessions["CD bias"]                 # made after the toggle: follows it
        assert bias.classroom and not bias.advanced.visible
        assert bias.plots["bias"].figure.title.text_font_size == "20px"
        race.set_classroom(False)                          # the page toggle, off again
        assert not bias.classroom and bias.advanced.visible
        assert race.curves.figure.title.text_font_size == "13px"
        assert race.widgets["seed"].visible
        race.reset()                                        # a new race keeps the mode's style
        race.set_classroom(True)
        race.reset()
        assert race.curves.figure.title.text_font_size == "20px"
    finally:
        for tab in lay.tab_sessions.made():
            tab.race.stop()


@pytest.mark.parametrize("dataset", ["bars_and_stripes", "shifting_bar"])
def test_the_default_race_rises_for_at_least_30_s_at_the_default_pace(dataset):
    """A data set's own race at its defaults keeps a class watching: the best curve is still
    gaining (below 95 % of its final gain) 30 s into the race at the default pace
    (points_per_second points a second, each eval_every epochs further)."""
    s = race_tab.ExplorerSession(sync_url=False, settings={"dataset": dataset})
    try:
        race = s.race
        race.max_speed = True
        while not race.finished:
            race.step()
        df = race.frame()
        epochs_per_second = s.train.eval_every * s.view.points_per_second
        t95 = {}
        for name, part in df.groupby("algorithm"):
            ll = part.set_index("epoch")[race.metric]
            gain = ll.iloc[-1] - ll.iloc[0]
            if gain > 0.3:                                    # a rule that learns (on Shifting
                reached = ll.index[ll >= ll.iloc[0] + 0.95 * gain][0]   # Bar PCD may not)
                t95[name] = reached / epochs_per_second
        assert t95 and max(t95.values()) >= 30, t95
        assert race.epoch / epochs_per_second <= 15 * 60         # and ends within a lecture
    finally:
        s.race.stop()


def test_the_docs_lesson_page_shows_every_lesson_and_the_explorer_page_every_tab():
    """The teaching path's lesson page (generated from the lessons on every docs build) carries
    every lesson: title, question, captions, its link, the screenshot the browser test stores
    and its notebook section; the explorer page links it and shows every tab's screenshot."""
    import importlib.util
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "docs"
    spec = importlib.util.spec_from_file_location("lesson_pages", root / "_ext" / "lesson_pages.py")
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    page = pages.render()
    for lesson in lessons.LESSONS:
        if "files not found" in lesson.title:      # the page shows the lessons with the data
            continue
        section = page[page.index(f"## {lesson.title}"):]
        section = section[:section.find("\n## ", 3) if "\n## " in section[3:] else None]
        assert f"?lesson={lesson.key}" in section
        assert f"**Predict first.** {lesson.predict}" in section
        for caption in lesson.notice:
            assert caption in section, caption
        image = f"_static/explorer/lesson-{lesson.key}.png"
        assert image in section and (root / image).is_file()
        assert f"notebooks/{lesson.notebook[0]}`, section “{lesson.notebook[1]}”" in section
    explorer = (root / "explorer.md").read_text()
    assert "{doc}`teaching/lessons`" in explorer
    for tab in ("race", "cd-bias", "tap-landscape"):
        assert f"_static/explorer/{tab}.png" in explorer and (root / f"_static/explorer/{tab}.png").is_file()


def test_k_snaps_to_a_valid_budget_while_a_dc_rule_races():
    s = race_tab.ExplorerSession(sync_url=False, settings={
        "dataset": "shifting_bar", "algorithms": ["cd", "sdcp"], "k_inner": 4})
    try:
        s.race.step()
        for dragged, snapped in ((13, 12), (15, 16), (43, 44), (2, 4)):
            s.train.k = dragged
            assert s.train.k == snapped and s.budget.d == snapped // 4
            assert {n: r.algorithm.k for n, r in s.race.runs.items()} == {"cd": snapped,
                                                                            "sdcp": snapped}
        assert s.alert_text.object == ""                  # nothing refused, nothing to warn
        assert [r["new"] for r in s.knob_log] == [12, 16, 44, 4]
        assert "S-DCP (k = d·K′ = 1·4)" in s.state_text.object
    finally:
        s.race.stop()


def test_a_bias_lessons_k_changes_run_in_the_tab_and_its_widgets_follow():
    from rbmviz.app.bias_tab import BiasSession
    lesson = lessons.get("cd-bias-k")
    s = BiasSession()
    try:
        s.lesson = lesson
        s.settings.param.update(**lesson.params)
        s.reset()
        first_at = lesson.changes[0][0]
        while s.race.iteration < first_at + 1:
            s.race.step()
        assert s.race.lesson_changes[0]["changes"] == lesson.changes[0][1]
        assert s.race.settings.k == s.settings.k == lesson.changes[0][1]["k"]
        assert s.plots["bias"].markers[-1][2].text.strip().startswith("k 1 →")
    finally:
        s.race.stop()
