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
#: where a number has its source or is code: generated blocks, inline values, code, comments
_SOURCED = [re.compile(p, re.S) for p in (
    r"<!-- generated:.*?<!-- end generated -->", r"<!--v .*?<!--/v-->", r"```.*?```",
    r"`[^`\n]*`", r"\$[^$\n]+\$", r"<!--.*?-->")]
#: the declaration of a file's numbers that are not run results (the papers', analytic bounds,
#: arithmetic of settings, lesson texts checked by their own tests):
#: ``<!-- not from a run: −2.639 −3.15 (why) -->``; and of measurements whose output no file
#: keeps (a one-off timing or re-solve), listed so that they stay visible until a kept run
#: sources them: ``<!-- no file keeps: 75.3 % (what was measured) -->``
_DECLARED = re.compile(r"<!-- (?:not from a run|no file keeps):(.*?)-->", re.S)
#: a number given as the value of a named setting ("η = 0.3", "p ≥ 0.35", "damping 0.5",
#: "weight decay 0.001"), and the numbers listed after it ("p = 0.1 / 0.2 / 0.3", "0.3–0.45")
_SETTING = re.compile(r"(?:\b(?:p|η|γ|λ|ε|lr|damping|momentum|weight decay|weight scale|"
                      r"learning rate|step|tolerance|rate|decay|noise)|[ηγλε])"
                      r"\s*(?:=|≥|≤|>|<|→|∈\s*\{)?\s*[−-]?$")
_LIST = re.compile(r"^\s*(?:[/,–…-])?\s*(?:and|to|or|then)?\s*$")
#: the number of a section, an equation, a figure, a table ("Sec. 4.2.1", "[eq. 1.2]")
_SECTION = re.compile(r"(?:\b(?:Sec|Secs|Section|eq|eqs|Eq|Eqs|Fig|Figs|Table|Alg|App)\.?|§)\s*$")
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


def given(path):
    """The settings and the papers' values the summary files give a prose file: those of the
    summaries beside a results README (and below it), of every results summary for a notebook
    or a documentation page."""
    where = path.parent if path.parent.parent == RESULTS else RESULTS
    out = set()
    for f in where.glob("**/summary.json"):
        s = json.loads(f.read_text(encoding="utf-8"))
        out |= _numbers(s.get("settings")) | _numbers(s.get("paper"))
    return out


def unsourced(text, given=frozenset()):
    """The numbers of :data:`_NUMBER` (decimals and percentages) in ``text`` that have no
    source: outside markers, code, math and comments; not a section, equation or figure
    number; not the value of
    a named setting (or listed after one); not in ``given`` (settings and the papers' values
    of the summary files); not in the text's ``not from a run`` declarations."""
    declared = set().union(*(_values(m.group()) for d in _DECLARED.findall(text)
                             for m in _NUMBER.finditer(d))) if _DECLARED.search(text) else set()
    for pattern in _SOURCED:
        text = pattern.sub(" ", text)
    out, setting, end = [], False, 0
    for m in _NUMBER.finditer(text):
        token = m.group()
        before = text[max(0, m.start() - 40):m.start()]
        setting = bool(_SETTING.search(before)) or (
            setting and not token.endswith("%") and bool(_LIST.match(text[end:m.start()])))
        end = m.end()
        if not ("." in token or token.endswith("%")) or _SECTION.search(before) or setting:
            continue
        if _values(token) & (set(given) | declared):
            continue
        out.append(token.replace("-", "−"))
    return out


@pytest.mark.parametrize("path", PROSE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_number_in_prose_has_a_source(path):
    """A run-derived number in a results README, a notebook's prose or a documentation page is
    an inline value from its run's file (:mod:`rbmviz.reproduce.report`), none typed by hand.

    Scanned: every decimal, signed or not ("−3.21", "0.0247", "2.7e-8"), and every percentage
    ("26.8 %") outside markers, generated blocks, code, math and comments.  Not a run result,
    so allowed:

    * the number of a section, an equation or a figure ("Sec. 4.2.1", "eq. 1.2");
    * the value of a named setting ("η = 0.3", "damping 0.5", "p = 0.1 / 0.2 / 0.3");
    * a number equal (up to its sign; a percentage as x / 100 too) to a setting or a paper's
      value recorded in a summary file: the ``settings`` and ``paper`` of the summaries
      beside a results README, of every results summary for a notebook or a page;
    * a number the file declares in ``<!-- not from a run: ... (why) -->`` (a paper's value
      no summary records, an analytic bound, arithmetic of settings, a test's tolerance);
    * a number the file lists in ``<!-- no file keeps: ... (what) -->``: a one-off
      measurement whose output is not kept, visible there until a kept run sources it.

    Integers without a percent sign are not scanned: in this prose they are settings, sizes
    and references (epochs, units, rows, seeds, figures, years)."""
    assert unsourced(_prose(path), given(path)) == []


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
