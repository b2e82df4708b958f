"""The reproductions' settings classes, the options derived from them, and the one report writer
(rbmviz.reproduce._study, rbmviz.cli.reproduce, rbmviz.reproduce.report)."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rbmviz import algorithms, cli
from rbmviz.reproduce import _study, cd_bias, dc_small, report

ROOT = Path(__file__).resolve().parents[1]
STUDIES = {"cd-bias": cd_bias, "dc-small": dc_small}


@pytest.mark.parametrize("name", list(STUDIES))
def test_help_lists_one_option_per_setting(name, capsys):
    cls = STUDIES[name].Settings
    assert cli.main(["reproduce", name, "--help"]) == 0
    text = capsys.readouterr().out
    flat, bare = " ".join(text.split()), "".join(text.split())      # argparse wraps at hyphens
    for setting, p in _study.settings(cls).items():
        option = cls.FLAGS.get(setting, "--" + setting.replace("_", "-"))
        if p.precedence is not None and p.precedence < 0:
            assert f"[{option} " not in flat               # no option of its own
            continue
        assert option in flat, option
        assert "".join((p.doc or "").split()) in bare           # the help is the declaration's
    if cls.QUICK:
        assert "--quick" in flat


def test_training_knobs_are_copies_of_the_rules_declarations():
    for study, rule, knobs in ((cd_bias, "cd", ("learning_rate",)),
                               (dc_small, "sdcp", ("k", "k_inner", "seed"))):
        declared = algorithms.get(rule).Knobs.param
        for knob in knobs:
            mine = study.Settings.param[knob]
            assert (mine.bounds, type(mine)) == (declared[knob].bounds, type(declared[knob]))
    assert cd_bias.Settings.param.learning_rate.default == algorithms.get("cd").Knobs.param.learning_rate.default


def test_only_the_chosen_experiment_is_imported():
    code = ("import sys\nfrom rbmviz import cli\ncli.main(['reproduce', 'cd-bias', '--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('rbmviz.reproduce.')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    loaded = res.stdout.strip().splitlines()[-1]
    assert "rbmviz.reproduce.cd_bias" in loaded
    for other in ("dc_small", "dc_mnist", "tap", "tap_beyond"):
        assert f"'rbmviz.reproduce.{other}'" not in loaded


def test_resolve_checks_each_setting_against_its_declaration():
    s = _study.resolve(cd_bias.Settings, {"reps": 3, "ks": (1, 5)})
    assert (s.reps, s.ks, s.iterations) == (3, [1, 5], 50_000)
    assert _study.resolve(cd_bias.Settings, quick=True).ks == [1]
    assert _study.resolve(cd_bias.Settings, {"ks": [2]}, quick=True).ks == [2]   # given wins
    assert _study.resolve(cd_bias.Settings, {"weight_decays": "none"}).weight_decays == []
    with pytest.raises(ValueError, match="reps must be >= 1, got 0"):
        _study.resolve(cd_bias.Settings, {"reps": 0})
    with pytest.raises(TypeError, match=r"no setting\(s\) \['rep'\]"):
        _study.resolve(cd_bias.Settings, {"rep": 2})
    assert "Parameters\n----------\n" in cd_bias.Settings.__doc__         # generated
    assert "record_every : int" in cd_bias.Settings.__doc__


@pytest.mark.parametrize("argv, message", [
    (["--reps", "0"], "argument --reps: reps must be >= 1"),
    (["--learning-rate", "0"], "argument --learning-rate: learning_rate must be > 0"),
    (["--ks", "x"], "--ks must be a comma-separated list of int values"),
])
def test_bad_option_is_a_usage_error_naming_it(argv, message, capsys):
    assert cli.main(["reproduce", "cd-bias", "--quiet", *argv]) == 2
    assert message in capsys.readouterr().err


def test_summary_tail_forms():
    claim = report.make_claim("c", "agrees", criterion="crit", judged=0.5, measured="m")
    lines = report.summary_tail({"claims": [claim], "elapsed_seconds": 2.0},
                                before_time=["between"])
    assert lines == ["", "the paper's claims:", "  [agrees] c", "      measured: m",
                     "      criterion: crit (judged: 0.5)", "between", "run time: 2.0 s"]
    held = dict(claim="c", paper="p", observed="o", holds=False)
    lines = report.summary_tail({"claims": [held]}, heading="H", form="holds")
    assert lines == ["", "H", "  [ NO] c — paper: p", "        this run: o"]
    with pytest.raises(ValueError, match="form"):
        report.summary_tail({}, form="table")


def test_save_writes_whole_files_and_refuses_to_replace(tmp_path):
    frame = pd.DataFrame({"a": [1, 2]})
    out = tmp_path / "out"
    files = ("t.csv", "summary.json", "figure.html")
    paths = report.save(out, {"x": 1.5}, {"t": frame}, files=files, require_empty=True)
    assert [p.name for p in paths] == ["t.csv", "summary.json"]
    assert json.loads((out / "summary.json").read_text()) == {"x": 1.5}
    with pytest.raises(FileExistsError):
        report.save(out, {"x": 2}, {"t": frame}, files=files, require_empty=True)
    (out / "figure.html").write_text("old")
    report.save(out, {"x": 2}, {"t": frame}, files=files, require_empty=True, overwrite=True,
                clean=True)
    assert not (out / "figure.html").exists()           # not redrawn: removed
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    # a table the study streamed there is kept unless overwrite
    (out / "t.csv").write_text("streamed\n")
    report.save(out, {}, {"t": frame}, streamed=("t",))
    assert (out / "t.csv").read_text() == "streamed\n"
    report.save(out, {}, {"t": frame}, streamed=("t",), overwrite=True)
    assert (out / "t.csv").read_text() != "streamed\n"
