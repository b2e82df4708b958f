"""`rbmviz reproduce cd-bias`: the claims table against the paper (Fischer & Igel 2011, Sec. 3)
and the quick form."""
import json

from rbmviz import cli
from rbmviz.reproduce import cd_bias


def _row(ds, gap, *, k=1, wd=0.0, iteration=50_000, le=True, peak=0.8, start=0.005, bias_peak=0.05):
    return dict(dataset=ds, label=cd_bias.DATASETS[ds], k=k, weight_decay=wd, iteration=iteration,
                runs=5, bias=0.01, bound=0.01 + gap, gap=gap, gap_sem=0.0001, gap_min=gap,
                gap_max=gap, bias_start=start, bound_peak=peak, bias_le_bound=le,
                bias_peak=bias_peak)


def test_claims_judge_each_statement_of_the_paper():
    rows = [_row("diag", 0.00138 * 1.2), _row("ball_1d", 0.02628 * 0.6)]
    got = {c["claim"].split(":")[0]: c["verdict"] for c in cd_bias.claims(rows)}
    assert got["Diag"] == "agrees" and got["1DBall"] == "agrees"
    assert got["Theorem 4"] == "agrees"
    rows = [_row("diag", 0.00138 * 1.3), _row("ball_1d", 0.02628 * 0.4, le=False, peak=1.2),
            _row("diag", 0.001, k=5, start=0.04)]
    c = cd_bias.claims(rows)
    got = {x["claim"].split(":")[0]: x["verdict"] for x in c}
    assert got["Diag"] == "differs" and got["1DBall"] == "differs"      # outside 25 % / 50 %
    assert got["Theorem 4"] == "differs" and "2 of 3" in c[2]["measured"]
    assert [x["verdict"] for x in c[3:5]] == ["differs", "differs"]     # bound ≥ 1; bias large at start
    assert c[4]["judged"] == 0.04 / 0.05                                  # the start / peak ratio judged
    short = cd_bias.claims([_row("diag", 0.00138, iteration=5000)])
    assert short[0]["verdict"] == "not comparable (5,000 iterations)"
    assert short[1]["verdict"] == "not run"                              # no 1DBall


def test_cli_quick_prints_the_claims_and_writes_them(tmp_path, capsys):
    out = tmp_path / "cdb"
    # the quick preset with a shorter run (the preset itself keeps the paper's 50,000)
    assert cli.main(["reproduce", "cd-bias", "--quick", "--reps", "2", "--iterations", "3000",
                     "--quiet", "--no-html", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "the paper's claims:" in text and "[agrees] Theorem 4" in text
    assert "not comparable (3,000 iterations)" in text
    summary = json.loads((out / "summary.json").read_text())
    assert {(r["k"], r["weight_decay"]) for r in summary["final"]} == {(1, 0.0)}   # quick: CD-1 only
    assert summary["settings"]["reps"] == 2 and len(summary["claims"]) == 7
    assert all(r["bias_start"] < r["bias_peak"] for r in summary["final"])


def _wd_row(ds, k, wd, bound, delta):
    return dict(_row(ds, bound - 0.01, k=k, wd=wd), delta=delta)


def test_cd_bias_claims_each_can_differ_and_record_their_criterion():
    from rbmviz.reproduce.report import status
    # k > 1 with a larger bound than k = 1, weight decay with a larger Δ: both differ
    rows = [_wd_row("diag", 1, 0.0, 0.02, 10.0), _wd_row("diag", 2, 0.0, 0.03, 10.0),
            _wd_row("diag", 1, 0.001, 0.025, 12.0)]
    c = {x["claim"].split(" (")[0]: x for x in cd_bias.claims(rows)}
    assert c["the bound decreases with increasing k"]["verdict"] == "differs"
    assert c["the bound decreases with increasing k"]["judged"] == 0.03 / 0.02
    assert c["weight decay keeps the parameters, and so Δ, small"]["verdict"] == "differs"
    rows = [_wd_row("diag", 1, 0.0, 0.02, 10.0), _wd_row("diag", 2, 0.0, 0.01, 10.0),
            _wd_row("diag", 1, 0.001, 0.045, 8.0)]          # Δ judged; the bound only reported
    c = {x["claim"].split(" (")[0]: x for x in cd_bias.claims(rows)}
    assert c["the bound decreases with increasing k"]["verdict"] == "agrees"
    assert c["weight decay keeps the parameters, and so Δ, small"]["verdict"] == "agrees"
    # without those configurations they are not run; every row states its criterion
    got = cd_bias.claims([_row("diag", 0.00138)])
    assert [x["verdict"] for x in got[-2:]] == ["not run", "not run"]
    assert all(x["criterion"] and "judged" in x and status(x["verdict"]) for x in got)
    # the fitted numbers are flagged as circular
    assert all("circular" in x["note"] for x in got[:2])
