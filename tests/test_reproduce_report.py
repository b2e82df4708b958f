"""rbmviz.reproduce.report: claim rows, scorecards, and numbers in prose from one source."""
import json

import pytest

from rbmviz.reproduce import report


def test_claim_rows_need_a_known_verdict_and_a_criterion():
    c = report.make_claim("x rises", "inconclusive (too short)", criterion="x_last > x_first",
                          judged=float("nan"))
    assert c["judged"] is None and report.status(c["verdict"]) == "inconclusive"
    with pytest.raises(ValueError, match="starts with none"):
        report.make_claim("x", "holds", criterion="c", judged=1)
    with pytest.raises(ValueError, match="no criterion"):
        report.make_claim("x", "agrees", criterion=" ", judged=1)
    assert report.status("not comparable (5,000 iterations)") == "not comparable"
    with pytest.raises(ValueError):
        report.status("agreeslike")


def test_scorecard_rows_of_a_results_directory(tmp_path):
    claims = [report.make_claim("a", "differs", criterion="a > 1", judged=0.5, paper="> 1",
                                measured="a = 0.5"),
              {"claim": "b", "paper": "p", "observed": "seen", "holds": None}]     # older TAP form
    (tmp_path / "summary.json").write_text(json.dumps({"claims": claims}))
    rows = report.results_rows(tmp_path)
    assert [(r["claim"], r["ours"], r["status"]) for r in rows] == [("a", "0.5", "differs"),
                                                                   ("b", "seen", "inconclusive")]
    md = report.claims_markdown(rows)
    assert md.splitlines()[2] == "| a | > 1 | 0.5 (a = 0.5) | **differs** | a > 1 |"
    with pytest.raises(FileNotFoundError):
        report.results_rows(tmp_path / "none")
    with pytest.raises(ValueError, match="no list of claims"):
        report.claim_rows({"final": []})


def test_prose_numbers_are_checked_and_rendered_from_their_summary(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    summary = {"final": [{"dataset": "diag", "k": 1, "gap": 0.001441},
                         {"dataset": "ball_1d", "k": 1, "gap": -0.0247}],
               "elapsed_seconds": 395.5,
               "claims": [report.make_claim("a", "agrees", criterion="c", judged=1)]}
    (run / "summary.json").write_text(json.dumps(summary))
    readme = tmp_path / "README.md"
    good = ("gap <!--v run/summary.json final[dataset=diag].gap .5f-->0.00144<!--/v--> and "
            "<!--v run/summary.json final.1.gap .4f-->\u22120.0247<!--/v--> in "
            "<!--v run/summary.json elapsed_seconds ,.0f-->396<!--/v--> s\n"
            "<!-- generated: claims run -->\n"
            + report.claims_markdown(report.results_rows(run)) + "<!-- end generated -->\n")
    readme.write_text(good)
    assert report.check(readme) == []
    bad = good.replace("0.00144", "0.00138").replace("| agrees |", "| differs |")
    readme.write_text(bad)
    problems = report.check(readme)
    assert len(problems) == 2 and "'0.00138'" in problems[1] and "claims run" in problems[0]
    assert report.render(readme) == problems and readme.read_text() == good
    readme.write_text("<!--v run/summary.json final[dataset=none].gap .5f-->1<!--/v-->\n"
                      "<!--v missing.json x .1f-->1<!--/v-->")
    assert [p.split(":")[0] for p in report.check(readme)] == [
        "value run/summary.json final[dataset=none].gap", "value missing.json x"]
    with pytest.raises(FileNotFoundError):
        report.check(tmp_path / "nope.md")


def test_lookup_paths():
    data = {"a": [{"k": 1, "lr": 0.3, "v": 2}, {"k": 1, "lr": 0.5, "v": 3}]}
    assert report.lookup(data, "a[lr=0.5].v") == 3 and report.lookup(data, "a.0.v") == 2
    assert report.lookup(data, "a[k=1,lr=0.3].v") == 2
    for bad in ("b", "a.7", "a[k=2].v", "a.0.v[k=1]"):
        with pytest.raises(KeyError):
            report.lookup(data, bad)


def test_values_from_a_csv_table(tmp_path):
    (tmp_path / "curves.csv").write_text("n_hidden,epoch,n_unique,ll\n100,1,2,-0.2171\n100,10,278,-0.1322\n")
    md = tmp_path / "a.md"
    md.write_text("<!--v curves.csv [n_hidden=100,epoch=10].n_unique ,d-->260<!--/v--> and "
                  "<!--v curves.csv [epoch=1].ll .4f-->−0.2171<!--/v-->")
    assert report.check(md) == ["value curves.csv [n_hidden=100,epoch=10].n_unique: the text "
                                "says '260', the source gives '278'"]
    report.render(md)
    assert report.check(md) == [] and "-->278<!--" in md.read_text()


def test_notebook_markdown_cells_are_checked_and_rendered(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps({"final": [{"alg": "pcd", "ll": -6.526}]}))
    nb = {"cells": [{"cell_type": "markdown", "metadata": {},
                     "source": ["PCD ends at <!--v s.json final[alg=pcd].ll .2f-->\u22127.24<!--/v-->\n",
                                "on Bars & Stripes."]},
                    {"cell_type": "code", "metadata": {}, "source": ["x = '<!--v s.json nope .1f-->1<!--/v-->'"],
                     "outputs": [], "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    assert report.check(path) == ["value s.json final[alg=pcd].ll: the text says '\u22127.24', "
                                  "the source gives '-6.53'"]           # code cells are not read
    report.render(path)
    assert report.check(path) == []
    cell = json.loads(path.read_text())["cells"][0]["source"]
    assert cell == ["PCD ends at <!--v s.json final[alg=pcd].ll .2f-->\u22126.53<!--/v-->\n",
                    "on Bars & Stripes."]
