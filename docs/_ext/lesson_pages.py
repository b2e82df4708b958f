"""The lesson pages of the teaching path, generated from :data:`rbmviz.live.lessons.LESSONS`.

Each lesson gets a section: what it shows, the paper figure it matches, its length, the link
that opens it in the explorer, the "predict, then watch" question to ask before Start, the
captions of what to notice, the screenshot the browser test stores, and the notebook section
that works through the same phenomenon.  ``docs/conf.py`` writes the page on every build, so it
cannot drift from the lessons the explorer serves.
"""
from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
#: the explorer's address when started by ``rbmviz explore`` on the lecturer's machine
EXPLORER = "http://localhost:5006/explorer"
TABS = {"race": "Training race", "bias": "CD bias", "tap": "TAP landscape"}
#: the numbers tests/test_results_sources.py scans prose for (its ``_NUMBER``: decimals, signed
#: or not, percentages and integers; it reads an integer as a result only beside a unit, a
#: count or a comparison, but the page declares every number of the captions)
_NUMBER = re.compile(r"(?<![\w.\d−-])(?:(?<![\w.\d])[−-])?\d[\d,]*(?:\.\d+)?(?:e[−-]?\d+)?"
                     r"(?:\s?%)?(?![\w.]\d|\d)")


def render() -> str:
    """The Markdown of ``docs/teaching/lessons.md``.

    Returns
    -------
    str
        The page.
    """
    from rbmviz.live.lessons import LESSONS

    out = ["# Lessons", "",
           "Each lesson is a link that opens one tab of the explorer with its knobs set, runs at a "
           "pace a class can follow and shows two or three captions of what to notice; some change "
           "a knob themselves while they run (a labelled line on the curves marks it).  Every "
           "lesson's phenomenon is checked by a test that runs it headless "
           "(`tests/test_lessons.py`), and the screenshots come from a browser test that opens each "
           "link at 1,280×800, a projector's size.", "",
           "**How to use one in class:** open the link, read the question aloud and let the students "
           "predict, then press **Start** and watch together.  The captions appear in the explorer "
           "above the plots; the notebook section named under each lesson works through the same "
           "phenomenon with code.  The {doc}`lecturers-guide` strings them into a lecture.", ""]
    numbers = set()
    for lesson in LESSONS:
        if "files not found" in lesson.title:
            continue
        nb, heading = lesson.notebook or ("", "")
        out += [f"(lesson-{lesson.key})=", "", f"## {lesson.title}", "",
                f"{lesson.summary}  *{TABS[lesson.tab]} tab; about {lesson.seconds} s; "
                f"{lesson.figure}.*", "",
                f"Open it: `rbmviz explore`, then <{EXPLORER}?lesson={lesson.key}> "
                f"(the query `?lesson={lesson.key}` works on any explorer server).", ""]
        if lesson.predict:
            out += [f"**Predict first.** {lesson.predict}", ""]
        out += ["**Then watch:**", ""] + [f"* {line}" for line in lesson.notice] + [""]
        image = f"../_static/explorer/lesson-{lesson.key}.png"
        if (DOCS / "teaching" / image).resolve().is_file():
            out += [f"![{lesson.title}]({image})", ""]
        if nb:
            out += [f"**In the notebooks:** {{doc}}`../notebooks/{nb}`, section “{heading}”.", ""]
        for text in (lesson.notice, (lesson.predict,)):
            for line in text:
                numbers.update(n.rstrip(",").replace("-", "−") for n in _NUMBER.findall(line))
    if numbers:
        out += [f"<!-- not from a run: {' '.join(sorted(numbers))} (the lessons' own captions: "
                "tests/test_lessons.py runs every lesson and checks what they say) -->", ""]
    lengths = sorted({str(lesson.seconds) for lesson in LESSONS})
    out += [f"<!-- not from a run: {' '.join(lengths)} (the lessons' lengths at lecture pace, "
            "their ``seconds`` setting) -->", ""]
    return "\n".join(out)


def write(path: Path | None = None) -> Path:
    """Write the page (``docs/teaching/lessons.md`` by default) when its text changed.

    Parameters
    ----------
    path : Path, optional
        Where to write it.

    Returns
    -------
    Path
        The page.
    """
    path = Path(path or DOCS / "teaching" / "lessons.md")
    text = render()
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
