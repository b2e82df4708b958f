"""Every run-derived number of results/ comes from its run's summary file.

* each results README's generated claims tables and inline numbers (markers of
  :mod:`rbmviz.reproduce.report`), and those of the notebooks' prose and the documentation
  pages, equal what the run files give;
* no run-derived number in that prose is typed by hand
  (:func:`test_every_number_in_prose_has_a_source` states the rule);
* every stored claim records its criterion and verdict, and the stored claims are the ones
  the current checks give on the stored outputs (``results/rejudge.py --check``);
* the files rendered from a summary (``claims.md``, the TAP ``summary.txt``) equal their
  rendering.
"""
import importlib.util
import re
import json
from pathlib import Path

import pytest

from rbmviz.reproduce import report, tap_summary

RESULTS = Path(__file__).resolve().parents[1] / "results"
ROOT = RESULTS.parent
READMES = sorted(RESULTS.glob("*/README.md"))
SUMMARIES = sorted(RESULTS.glob("**/summary.json"))
#: the documentation's own pages (not the copies of results READMEs and notebooks it builds)
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md")
               if not {"results", "notebooks", "_build", "jupyter_execute", "generated"}
               & set(p.relative_to(ROOT / "docs").parts))


@pytest.mark.parametrize("readme", READMES, ids=lambda p: p.parent.name)
def test_readme_numbers_equal_their_summary(readme):
    assert report.check(readme) == []


@pytest.mark.parametrize("notebook", sorted((RESULTS.parent / "notebooks").glob("*.ipynb")),
                         ids=lambda p: p.stem)
def test_notebook_numbers_equal_their_summary(notebook):
    """Numbers a notebook's prose takes from a summary file (markers in Markdown cells)."""
    assert report.check(notebook) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_page_numbers_equal_their_source(page):
    """Numbers a documentation page takes from a run's file (markers)."""
    assert report.check(page) == []


@pytest.mark.parametrize("readme", [r for r in READMES if r.parent.name != "tap-machines"],
                         ids=lambda p: p.parent.name)
def test_each_claims_table_of_a_readme_is_generated(readme):
    """The claims tables of these READMEs are generated blocks, one per run directory."""
    text = readme.read_text(encoding="utf-8")
    runs = sorted({p.parent.relative_to(readme.parent).as_posix() or "."
                   for p in readme.parent.glob("**/summary.json")})
    assert runs and all(f"<!-- generated: claims {r} -->" in text for r in runs)


@pytest.mark.parametrize("path", SUMMARIES, ids=lambda p: p.parent.relative_to(RESULTS).as_posix())
def test_stored_claims_record_criterion_and_verdict(path):
    summary = json.loads(path.read_text(encoding="utf-8"))
    rows = report.claim_rows(summary)
    assert rows and all(r["criterion"] and r["status"] in report.VERDICTS for r in rows)
    if (path.parent / "claims.md").is_file():
        assert (path.parent / "claims.md").read_text(encoding="utf-8") == report.claims_markdown(rows)
    if (path.parent / "summary.txt").is_file():
        assert (path.parent / "summary.txt").read_text(encoding="utf-8") == \
            tap_summary.format_summary(summary) + "\n"


def test_stored_claims_are_the_current_checks_on_the_stored_outputs(capsys):
    spec = importlib.util.spec_from_file_location("rejudge", RESULTS / "rejudge.py")
    rejudge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rejudge)
    assert rejudge.main(["--check"]) == 0, capsys.readouterr().out


def test_a_changed_number_is_caught(tmp_path):
    """The check is not vacuous: a README number edited by hand is reported."""
    src = RESULTS / "cd-bias"
    for f in src.glob("**/summary.json"):
        (tmp_path / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f.relative_to(src)).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    text = (src / "README.md").read_text(encoding="utf-8")
    marker = "final[dataset=diag].gap .5f-->"
    i = text.index(marker) + len(marker)
    (tmp_path / "README.md").write_text(text[:i] + "0.00138" + text[i + 7:], encoding="utf-8")
    assert len(report.check(tmp_path / "README.md")) == 1


# ------------------------------------------------------------------ numbers without a source
#: a number a reader compares with the papers: a decimal, signed or not (a log-likelihood, a
#: bias, an MCC, a time: "−3.21", "0.0247", "2.7e-8", "1,250.5"), or a percentage ("26.8 %").
#: A minus after a digit or a letter (a range "0.1-0.3", "1e-3") is not a sign.
_NUMBER = re.compile(r"(?<![\w.\d−-])(?:(?<![\w.\d])[−-])?\d[\d,]*(?:\.\d+)?(?:e[−-]?\d+)?"
                     r"(?:\s?%)?(?![\w.]\d|\d)")
#: where a number has its source or is code: generated blocks, inline values, code, math,
#: comments, link targets
_SOURCED = [re.compile(p, re.S) for p in (
    r"<!-- generated:.*?<!-- end generated -->", r"<!--v .*?<!--/v-->", r"```.*?```",
    r"`[^`\n]*`", r"\$\$.*?\$\$", r"\$(?:[^$\n]|\n(?!\n))+?\$", r"<!--.*?-->",
    r"\]\([^)\s]*\)", r"<https?://[^>\s]*>")]
#: the declaration of a file's numbers that are not run results (the papers', analytic bounds,
#: arithmetic of settings, lesson texts checked by their own tests):
#: ``<!-- not from a run: −2.639 −3.15 (why) -->``; and of measurements whose output no file
#: keeps (a one-off timing or re-solve), listed so that they stay visible until a kept run
#: sources them: ``<!-- no file keeps: 75.3 % (what was measured) -->``
_DECLARED = re.compile(r"<!-- (?:not from a run|no file keeps):(.*?)-->", re.S)
#: a number given as the value of a named setting ("η = 0.3", "p ≥ 0.35", "damping 0.5",
#: "weight decay 0.001"), and the numbers listed after it ("p = 0.1 / 0.2 / 0.3", "0.3–0.45")
_SETTING = re.compile(r"(?:\b(?:p|η|γ|λ|ε|lr|damping|momentum|weight decay|weight scale|"
                      r"learning rate|step|tolerance|rate|decay|noise|N_h|N|B|K|K′|M|d|k|batch|"
                      r"seed|epochs?)|[ηγλε])"
                      r"\s*(?:=|≥|≤|>|<|→|∈\s*\{)?\s*[−-]?$")
_LIST = re.compile(r"^\s*(?:[/,–…→-]\s*(?:and|to|or|then)?|and|to|or|then)\s*$")
#: an integer that is a measurement, so scanned like a decimal: a time or a size ("35 s per
#: epoch", "46 / 45 / 60 min", "11 CPU-minutes", "3 MB": a unit after it or after the list it
#: opens); a count of outcomes ("262 unique solutions", "6–7 completed trials", "9 runs
#: diverge"; not a total: "of the 10,000 rows converge"); a ratio ("~5× faster", "ratio 56–66,
#: 186–203"); a value of a before → after chain or of a change ("262 → 289", "grow from 262 to
#: 289"); an approximate or bounded count ("about 90", "over 200", "~190", "within 12"); the
#: epoch a run reached or an event happened ("stopped at epoch 10", "passes 10 % at epoch 25");
#: and the numbers listed after any of these
_UNIT = (r"(?:ms|s|sec|seconds?|min|minutes?|h|hours?|days?|(?:CPU|core)[- ]"
         r"(?:s|h|min|seconds?|minutes?|hours?)|[kMG]B)\b")
_OUTCOME = (r"(?:(?:(?:unique|distinct|different|TAP|new|more)\s+)*(?:solutions?|fixed points?)"
            r"|(?:completed|converged|unconverged|diverged|escaped|stuck)\s+(?:rows?|runs?|"
            r"trials?|chains?)|(?:rows?|runs?|trials?|chains?)\s+(?:converge|diverge|escape|fail|"
            r"reach|stay|leave|hit|oscillate)\w*|diverged|converged|escaped)\b")
_LISTED = r"^(?:\s*(?:[/,–-]|and|or|to)\s*[~≈]?\d[\d,]*)*\s*"
_TIMED = re.compile(_LISTED + "(?:" + _UNIT + r"|×(?!\s?\d))")
_COUNTED = re.compile(_LISTED + _OUTCOME)
_MEASURED_AFTER = re.compile(_LISTED + "(?:" + _UNIT + "|" + _OUTCOME
                             + r"|×(?!\s?\d)|→\s*[~≈]?\d)")
_TOTAL = re.compile(r"\bof(?:\s+(?:the|all|its))?\s*$")
#: the epoch a run reached or an event happened at ("stopped at epoch 10", "peaks at epoch 50")
_REACHED = re.compile(
    r"(?:\b(?:reached|reaches|stopped at|stops at|ended at|ends at)\s+epoch|"
    r"\b(?:peaks?|peaked|pass(?:es|ed)?|leaves?|left|turns?|turned|cross(?:es|ed)?|escapes?|"
    r"escaped|diverges?|diverged|stalls?|stalled|dips?|dipped|overtakes?|overtook|levels? off|"
    r"levelled off|tapers?|tapered)\b[^.;:]{0,40}?"
    r"\b(?:at|by|around|after|before|between|from)\s+epochs?)\s*$", re.I)
_CHANGE = (r"\b(?:grows?|grew|rises?|rose|falls?|fell|drops?|climbs?|increases?|decreases?)"
           r"\s+from\s+(?:[\d,]+\s+to\s+)?")
_MEASURED_BEFORE = re.compile(r"(?:(?:\d\s*→|[~≈]|\b(?:about|around|roughly|nearly|over|"
                              r"more than|within|ratios?\s*[≈=]?)|" + _CHANGE + r")\s*$)|"
                              + _REACHED.pattern, re.I)
#: the number of a section, an equation, a figure, a table ("Sec. 4.2.1", "[eq. 1.2]")
_SECTION = re.compile(r"(?:\b(?:Sec|Secs|Section|eq|eqs|Eq|Eqs|Fig|Figs|Table|Alg|App)\.?|§)\s*$")
#: a year ("Fischer & Igel 2011")
_YEAR = re.compile(r"(?:19|20)\d\d")
PROSE = sorted(READMES + sorted((ROOT / "notebooks").glob("*.ipynb")) + PAGES)


def _prose(path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        text = "\n\n".join("".join(c["source"]) for c in json.loads(text)["cells"]
                           if c["cell_type"] == "markdown")
    return text


def _values(token):
    """The numbers a token of :data:`_NUMBER` may stand for (a percentage: x and x / 100)."""
    x = float(token.replace("−", "-").replace(",", "").rstrip("%").strip())
    return {round(abs(x), 12)} | ({round(abs(x) / 100, 12)} if token.endswith("%") else set())


def _numbers(data):
    """Every number of a summary's ``settings`` or ``paper`` entry, nested or not."""
    if isinstance(data, dict):
        return set().union(*map(_numbers, data.values())) if data else set()
    if isinstance(data, list):
        return set().union(*map(_numbers, data)) if data else set()
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return {round(abs(float(data)), 12)}
    return set()


def given(path, keys=("settings", "paper")):
    """The settings and the papers' values (or those of ``keys`` only) the summary files give
    a prose file: those of the summaries beside a results README (and below it), of every
    results summary for a notebook or a documentation page."""
    where = path.parent if path.parent.parent == RESULTS else RESULTS
    out = set()
    for f in where.glob("**/summary.json"):
        s = json.loads(f.read_text(encoding="utf-8"))
        out |= set().union(*(_numbers(s.get(k)) for k in keys))
    return out


def unsourced(text, given=frozenset(), papers=frozenset()):
    """The scanned numbers of ``text`` that have no source, as typed (a minus as "−"); the
    rule is :func:`test_every_number_in_prose_has_a_source`'s."""
    return [token for token, _, _ in _unsourced(text, given, papers)]


def _unsourced(text, given, papers=frozenset()):
    """:func:`unsourced`'s numbers with their offsets in the text stripped of sourced parts
    (markers, code, math, comments, link targets), and that text."""
    declared = set().union(*(_values(m.group()) for d in _DECLARED.findall(text)
                             for m in _NUMBER.finditer(d))) if _DECLARED.search(text) else set()
    for pattern in _SOURCED:
        text = pattern.sub(" ", text)
    out, setting, end, measured, end_measured, reached = [], False, 0, False, 0, False
    for m in _NUMBER.finditer(text):
        token = m.group()
        before, after = text[max(0, m.start() - 40):m.start()], text[m.end():m.end() + 80]
        integer = not ("." in token or "e" in token or token.endswith("%"))
        # the epoch of an event, and the epochs listed after it ("dips between epochs 10 and 40")
        reached = bool(_REACHED.search(before)) or (
            reached and integer and bool(_LIST.match(text[end:m.start()])))
        setting = not reached and (bool(_SETTING.search(before)) or (
            setting and not token.endswith("%") and bool(_LIST.match(text[end:m.start()]))))
        end = m.start() + len(token.rstrip(","))
        total = bool(_TOTAL.search(before))  # "of the 10,000 rows converge": not the count
        measured = not integer or bool(
            (_MEASURED_AFTER.match(after) and not total) or _MEASURED_BEFORE.search(before)
            or (measured and _LIST.match(text[end_measured:m.start()])))
        if measured:  # a trailing comma is the list's, not the number's
            end_measured = m.start() + len(token.rstrip(","))
        if not measured:
            continue
        if _SECTION.search(before) or setting or (integer and _YEAR.fullmatch(token)):
            continue
        # no setting or paper value is a duration, a size or a speed-up, and no setting is a
        # count of outcomes: one that happens to be equal excuses none; the epoch of an event
        # equals too many (evaluation epochs, sizes) to be excused by one, so it is declared
        if integer and (reached or _TIMED.match(after)):
            excused = declared
        elif integer and not total and _COUNTED.match(after):
            excused = set(papers) | declared
        else:
            excused = set(given) | declared
        if _values(token) & excused:
            continue
        out.append((token.replace("-", "−"), m.start(), text))
    return out


@pytest.mark.parametrize("path", PROSE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_number_in_prose_has_a_source(path):
    """A run-derived number in a results README, a notebook's prose or a documentation page is
    an inline value from its run's file (:mod:`rbmviz.reproduce.report`), none typed by hand.

    Scanned, outside markers, generated blocks, code, math, comments and link targets: every
    decimal or power of ten, signed or not ("−3.21", "0.0247", "2.7e-8", "3e-7"), every
    percentage ("26.8 %"), and every integer that is a measurement (:data:`_UNIT`,
    :data:`_OUTCOME`, :data:`_MEASURED_BEFORE`):

    * a time or a size: a unit after it, or after the list it opens ("35 s per epoch",
      "46 / 45 / 60 min", "11 CPU-minutes", "34 MB");
    * a count of outcomes: solutions, fixed points, completed, converged, diverged or escaped
      rows, runs, trials ("262 unique solutions", "6–7 completed trials", "9 runs diverge"),
      but not the total they are counted of ("of the 10,000 rows converge");
    * a ratio ("~5× faster", "ratio 56–66"), a before → after value or a change ("262 → 289",
      "grow from 262 to 289"), an approximate or bounded count ("about 90", "over 200", "~190",
      "within 12 epochs"), the epoch a run reached or an event happened at ("stopped at epoch
      10", "passes 10 % at epoch 25", "dips between epochs 10 and 40"), and the numbers listed
      after any of these.

    Other integers are what this prose's integers are when no unit, count or comparison makes
    them a measurement: settings (epochs 100, batch 100, 10 trials), sizes (784×500), section,
    equation, figure and table numbers, list enumerations, years, citations, dates.

    Not a run result, so allowed:

    * the number of a section, an equation or a figure ("Sec. 4.2.1", "eq. 1.2"); a year;
    * the value of a named setting ("η = 0.3", "damping 0.5", "p = 0.1 / 0.2 / 0.3",
      "N_h = 100", "epochs 0 → 1 → 10");
    * a number equal (up to its sign; a percentage as x / 100 too) to a setting or a paper's
      value recorded in a summary file: the ``settings`` and ``paper`` of the summaries
      beside a results README, of every results summary for a notebook or a page — except a
      time, a size, an "N×" ratio or an event's epoch, which no setting or paper value excuses,
      and a count of outcomes, which only a paper's value excuses;
    * a number the file declares in ``<!-- not from a run: ... (why) -->`` (a paper's value
      no summary records, an analytic bound, arithmetic of settings, a file's size, a test's
      tolerance);
    * a number the file lists in ``<!-- no file keeps: ... (what) -->``: a one-off
      measurement whose output is not kept, visible there until a kept run sources it."""
    assert unsourced(_prose(path), given(path), given(path, ["paper"])) == []


def test_a_typed_number_is_caught():
    """The scan is not vacuous: typed numbers, signed or not, and percentages are reported; a
    sourced, declared, given or setting one is not, and ranges, exponents and section numbers
    are not read as signs or results."""
    text = ("ends at −3.21 nats; <!--v s.json final .2f-->−3.30<!--/v-->; the paper's −3.15; "
            "p = 0.1-0.3, η = 1e-3, `x = -1.5`; MCC 0.431 at p = 0.1 / 0.2, 26.8 % of 10,000 "
            "starts, 12 % below; Sec. 4.2.1, [eq. 1.2]; damping 0.5, then 0.2; bound 0.0099 "
            "(lr 0.005)\n"
            "<!-- not from a run: −3.15 (the paper) -->")
    assert unsourced(text) == ["−3.21", "0.431", "26.8 %", "12 %", "0.0099"]
    assert unsourced(text, given={0.268, 0.0099}) == ["−3.21", "0.431", "12 %"]


def test_a_typed_integer_count_is_caught(tmp_path):
    """The integer scan is not vacuous: a hand-typed count, wall time, ratio or reached epoch
    in a README is reported; settings, sizes, section numbers, years, enumerations, link
    targets, totals and declared or sourced integers are not, nor a setting's value that a
    summary records — unless it is written as a count or a time."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"settings": {"epochs": 100, "trials": 6},
                                                  "paper": {"lead_epochs": 100}}))
    (tmp_path / "README.md").write_text(
        "# Fischer & Igel (2011)\n\n1. Train 100 epochs (batch 100, N_h = 500, 784×500) as in "
        "Sec. 4 and [Fig. 3](fig3.png); the paper: ≈ 100 epochs ahead.\n"
        "2. The count grows from 262 to 289 unique solutions; 6 completed trials; "
        "46 / 45 min of CPU; ~5× faster; the run stopped at epoch 7; agrees within 3e-7; "
        "the count passes the paper's at epoch 100; "
        "of the 10,000 rows converge <!--v run/summary.json settings.epochs d-->100<!--/v--> "
        "and about 13 min <!-- no file keeps: 13 (a one-off timing) -->.\n")
    summary = json.loads((run / "summary.json").read_text())
    known = _numbers(summary["settings"]) | _numbers(summary["paper"])
    assert unsourced((tmp_path / "README.md").read_text(), known) == \
        ["262", "289", "6", "46", "45", "5", "7", "3e−7", "100"]
    assert unsourced("the 10 runs took 12 min; 3 trials", {10.0, 12.0, 3.0}) == ["12"]


def test_a_selector_compares_and_picks_an_extreme(tmp_path):
    """An event's epoch is a marker too: the first row past a threshold, the row of a peak."""
    rows = "n_hidden,epoch,n_unique,fraction\n" + "".join(
        f"{h},{e},{u},{u / 100}\n" for h, e, u in
        [(25, 0, 1), (25, 10, 40), (25, 50, 90), (25, 100, 30), (100, 10, 5), (100, 25, 12)])
    (tmp_path / "c.csv").write_text(rows)
    md = tmp_path / "r.md"
    md.write_text("passes 10 % at epoch <!--v c.csv [n_hidden=100,fraction>0.1].epoch d-->25"
                  "<!--/v-->; peaks at epoch <!--v c.csv [n_hidden=25,n_unique=max].epoch d-->50"
                  "<!--/v--> (<!--v c.csv [n_unique=min].n_unique d-->1<!--/v--> at the start)")
    assert report.check(md) == []
    md.write_text("<!--v c.csv [n_hidden=25,n_unique>=50].epoch d-->100<!--/v-->")
    assert report.check(md) == ["value c.csv [n_hidden=25,n_unique>=50].epoch: the text says "
                                "'100', the source gives '50'"]
    for bad in ("[n_hidden=7,n_unique=max].epoch", "[n_unique>x].epoch", "[n_hidden].epoch"):
        md.write_text(f"<!--v c.csv {bad} d-->1<!--/v-->")
        assert len(report.check(md)) == 1, bad


def test_a_computed_value_is_checked_and_rendered(tmp_path):
    """A number computed from sourced ones (a ratio, a difference) is a marker too: its
    expression of paths in braces is evaluated, checked and rendered like a path."""
    (tmp_path / "a.json").write_text(json.dumps({"final": [{"k": 1, "bound": 0.0099},
                                                            {"k": 10, "bound": 0.0033}]}))
    (tmp_path / "b.json").write_text(json.dumps({"bias": 0.002, "label": "x"}))
    md = tmp_path / "r.md"
    md.write_text("<!--v a.json {final[k=1].bound}/{final[k=10].bound} .1f-->3.0<!--/v-->× and "
                  "<!--v a.json ({final.0.bound}-{b.json:bias})*1000 .1f-->8.1<!--/v--> and "
                  "<!--v a.json abs({b.json:bias}-{final.1.bound})/{final.1.bound} .0%-->39%"
                  "<!--/v-->")
    assert report.check(md) == ["value a.json ({final.0.bound}-{b.json:bias})*1000: the text "
                                "says '8.1', the source gives '7.9'"]
    report.render(md)
    assert report.check(md) == [] and "-->7.9<!--" in md.read_text()
    md.write_text("<!--v a.json max({final.0.bound},{final.1.bound})-min({b.json:bias},1) .4f-->"
                  "0.0079<!--/v-->")
    assert report.check(md) == []
    for bad in ("{b.json:label}*2", "abs({b.json:bias},1)", "round({b.json:bias})",
                "{final.0.bound}.__class__", "{nope}+1", "{final.0.bound}/0", "__import__('os')"):
        md.write_text(f"<!--v a.json {bad} .1f-->1<!--/v-->")
        assert len(report.check(md)) == 1, bad
