"""Every run-derived number of results/ comes from its run's summary file.

* each results README's generated claims tables and inline numbers (markers of
  :mod:`rbmviz.reproduce.report`) equal what the summary files give;
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
READMES = sorted(RESULTS.glob("*/README.md"))
SUMMARIES = sorted(RESULTS.glob("**/summary.json"))


@pytest.mark.parametrize("readme", READMES, ids=lambda p: p.parent.name)
def test_readme_numbers_equal_their_summary(readme):
    assert report.check(readme) == []


@pytest.mark.parametrize("notebook", sorted((RESULTS.parent / "notebooks").glob("*.ipynb")),
                         ids=lambda p: p.stem)
def test_notebook_numbers_equal_their_summary(notebook):
    """Numbers a notebook's prose takes from a summary file (markers in Markdown cells)."""
    assert report.check(notebook) == []


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
#: a signed decimal (a log-likelihood, a free energy, a bias) in prose: the numbers a reader
#: compares with the papers.  A minus after a digit or a letter (a range "0.1-0.3", "1e-3")
#: is not a sign.
_SIGNED = re.compile(r"(?<![\w.\d])[−-]\d+\.\d+")
#: where a number has its source or is code: generated blocks, inline values, code, comments
_SOURCED = [re.compile(p, re.S) for p in (
    r"<!-- generated:.*?<!-- end generated -->", r"<!--v .*?<!--/v-->", r"```.*?```",
    r"`[^`\n]*`", r"\$[^$\n]+\$", r"<!--.*?-->")]
#: the declaration of a file's numbers that are not run results (the papers', analytic bounds,
#: lesson texts checked by their own tests): ``<!-- not from a run: −2.639 −3.15 (why) -->``
_DECLARED = re.compile(r"<!-- not from a run:(.*?)-->", re.S)
ROOT = RESULTS.parent
PROSE = sorted(READMES + sorted((ROOT / "notebooks").glob("*.ipynb"))
               + [p for p in (ROOT / "docs").rglob("*.md")
                  if not {"results", "notebooks", "_build", "jupyter_execute", "generated"}
                  & set(p.relative_to(ROOT / "docs").parts)])


def _prose(path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        text = "\n\n".join("".join(c["source"]) for c in json.loads(text)["cells"]
                           if c["cell_type"] == "markdown")
    return text


def unsourced(text):
    """Signed decimals of ``text`` outside markers, code and comments that its
    ``not from a run`` declarations do not list."""
    declared = {n.replace("-", "−") for d in _DECLARED.findall(text) for n in _SIGNED.findall(d)}
    for pattern in _SOURCED:
        text = pattern.sub(" ", text)
    return [n for n in (m.replace("-", "−") for m in _SIGNED.findall(text)) if n not in declared]


@pytest.mark.parametrize("path", PROSE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_signed_number_in_prose_has_a_source(path):
    """A log-likelihood, free energy or bias in a results README, a notebook's prose or a
    documentation page is an inline value from its run's summary file (or is declared as the
    paper's, an analytic bound, or a number a test checks): none is typed by hand."""
    assert unsourced(_prose(path)) == []


def test_a_typed_number_is_caught():
    """The scan is not vacuous: a typed log-likelihood is reported, a sourced or declared one
    is not, and ranges and exponents are not read as signs."""
    text = ("ends at −3.21 nats; <!--v s.json final .2f-->−3.30<!--/v-->; the paper's −3.15; "
            "p = 0.1-0.3, η = 1e-3, `x = -1.5`\n<!-- not from a run: −3.15 (the paper) -->")
    assert unsourced(text) == ["−3.21"]
