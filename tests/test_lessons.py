"""The explorer's lessons (rbmviz.live.lessons): every lesson's knobs are valid for its tab, its
link round-trips, and each lesson's engine, run headless at full speed for the length of the
lesson with its seed, shows the phenomenon its captions promise.

Numbers measured on the 2-core development machine are quoted beside each assertion.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbmviz import datasets
from rbmviz.live import lessons as L
from rbmviz.live.bias import LIVE_BIAS_KNOBS, BiasRace, BiasSettings, PACE_KNOBS as BIAS_PACE
from rbmviz.live.race import Race, live_knob_names
from rbmviz.live.tap import LIVE_TAP_KNOBS, PACE_KNOBS as TAP_PACE, TapSettings

needs_mnist = pytest.mark.skipif(not datasets.available("mnist"),
                                 reason="MNIST files missing (RBMVIZ_DATA)")


def _run(eng, points=None):
    """Step an engine headless (no pacing) until it is finished or ``points`` points are done."""
    done = 0
    while not eng.finished and (points is None or done < points):
        eng.step()
        done += 1
    return done


def _curve(frame, algorithm):
    g = frame[frame.algorithm == algorithm]
    return g.epoch.to_numpy(), g.train_ll.to_numpy()


def _at(epochs, values, epoch):
    """The value at the last record at or before ``epoch``."""
    return values[epochs <= epoch][-1]


# ---------------------------------------------------------------------- the catalogue
def test_at_least_ten_lessons_with_unique_url_safe_keys():
    keys = L.keys()
    assert len(keys) >= 10
    assert len(set(keys)) == len(keys)
    for lesson in L.LESSONS:
        assert lesson.key.replace("-", "").isalnum()
        assert lesson.tab in L.TABS
        assert 30 <= lesson.seconds <= 180
        assert 2 <= len(lesson.notice) <= 3 and all(n.strip() for n in lesson.notice)
        assert lesson.title and lesson.figure


def test_every_tab_has_lessons():
    assert {lesson.tab for lesson in L.LESSONS} == set(L.TABS)


@pytest.mark.parametrize("lesson", L.LESSONS, ids=lambda x: x.key)
def test_params_are_knobs_and_values_of_the_tab(lesson):
    allowed = L.tab_knobs(lesson.tab)
    assert set(lesson.params) <= set(allowed), set(lesson.params) - set(allowed)
    if lesson.tab == "race":
        data, model, train, view = L.race_settings(lesson)
        got = {**{n: getattr(o, n) for o in (data, model, train) for n in o.param if n != "name"},
               **view}
        for name, value in lesson.params.items():   # the settings keep the lesson's values
            assert got[name] == value, name
        live = set(live_knob_names(view["algorithms"]))
    elif lesson.tab == "bias":
        s = BiasSettings(**lesson.params)
        assert all(getattr(s, n) == v for n, v in lesson.params.items())
        live = set(LIVE_BIAS_KNOBS) | set(BIAS_PACE)
    else:
        s = TapSettings(**lesson.params)
        assert all(getattr(s, n) == v for n, v in lesson.params.items())
        live = set(LIVE_TAP_KNOBS) | set(TAP_PACE)
    for at, change in lesson.changes:                 # scheduled changes: live knobs only
        assert at > 0 and set(change) <= live, change


@pytest.mark.parametrize("lesson", L.LESSONS, ids=lambda x: x.key)
def test_query_round_trips(lesson):
    q = L.query(lesson)
    assert q.startswith(f"?lesson={lesson.key}&tab={lesson.tab}&")
    back = L.parse_query(q)
    assert back == {"lesson": lesson.key, "tab": lesson.tab, "params": lesson.params}
    assert L.query(L.get(lesson.key)) == q


def test_query_formats_lists_as_json_and_none_as_none():
    q = L.query("mnist-fields")
    assert "algorithms=%5B%22pcd%22%5D" in q        # ["pcd"], as pn.state.location.sync writes
    assert "eval_every=none" in q
    assert L.parse_query("?tab=race&algorithms=cd,pcd&k=3")["params"] == {
        "algorithms": ["cd", "pcd"], "k": 3}


def test_bad_links_and_keys_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown lesson 'nope'.*dc-escape"):
        L.get("nope")
    with pytest.raises(ValueError, match="no knob 'bogus'"):
        L.parse_query("?tab=race&bogus=1")
    with pytest.raises(ValueError, match="'k'"):
        L.parse_query("?tab=race&k=abc")
    with pytest.raises(ValueError, match="'algorithms'"):
        L.parse_query("?tab=race&algorithms=cd,nope")
    with pytest.raises(ValueError, match="tab must be one of"):
        L.parse_query("?tab=nope&k=1")


@pytest.mark.parametrize("lesson", [x for x in L.LESSONS if x.points is not None],
                         ids=lambda x: x.key)
def test_exact_lessons_last_their_length_at_their_pace(lesson):
    """Race lessons with exact likelihoods: a point every eval_every epochs at
    points_per_second, so epochs / (eval_every · points_per_second) is the lesson's length;
    the bias and TAP lessons' changes fall within it."""
    if lesson.tab == "race":
        p = lesson.params
        seconds = p["epochs"] / (p["eval_every"] * p["points_per_second"])
        assert seconds == pytest.approx(lesson.seconds, rel=0.2)
        assert all(at < p["epochs"] for at, _ in lesson.changes)
    elif lesson.tab == "bias":
        end = lesson.points * lesson.params["iterations_per_point"]
        assert all(at < end for at, _ in lesson.changes)


def test_engine_types_and_changes_are_applied_and_reported():
    seen = []
    eng = L.engine("cd-pcd-bars", max_speed=True, on_change=lambda at, ch: seen.append((at, ch)))
    assert isinstance(eng, Race) and eng.algorithms == ["cd", "pcd"]
    assert eng.train_settings.k == 1 and eng.points_per_second == 3
    while eng.epoch < 1500:
        eng.step()
    assert eng.train_settings.k == 12 and seen == [(1500, {"k": 12})]
    assert eng.runs["cd"].algorithm.k == 12 and eng.runs["pcd"].algorithm.k == 12
    assert eng.lesson_changes[0]["progress"] == 1500
    assert isinstance(L.engine("cd-bias-k"), BiasRace)


# ---------------------------------------------------------------------- the phenomena
def test_cd_pcd_bars_cd1_is_biased_pcd_oscillates_and_k12_lifts_cd():
    """Measured (seed 0): CD-1 at epoch 1,500 −4.27, after 1,500 epochs of CD-12 −3.76;
    step-to-step |ΔLL| over epochs 750–1,500: PCD 0.28, CD 0.034 (seeds 0–4: PCD 0.18–0.28,
    CD 0.03–0.04); 0.6 s."""
    lesson = L.get("cd-pcd-bars")
    eng = L.engine(lesson, max_speed=True)
    _run(eng)
    assert not eng.failed and eng.epoch == 3000
    f = eng.frame()
    ep, cd = _curve(f, "cd")
    _, pcd = _curve(f, "pcd")
    cd_switch, cd_end = _at(ep, cd, 1500), cd[-1]
    assert cd_switch < -4.0                       # CD-1 levels off (the bias)
    assert cd_end > cd_switch + 0.3               # k = 12 lifts it by ~0.5 nats
    assert -4.0 < cd_end
    window = (ep > 750) & (ep <= 1500)
    jumps_cd = np.abs(np.diff(cd[window])).mean()
    jumps_pcd = np.abs(np.diff(pcd[window])).mean()
    assert jumps_pcd > 4 * jumps_cd               # PCD-1 zig-zags (measured 8×)


def test_dc_escape_sdcp_and_csdcp_leave_the_plateau_cd_does_not():
    """Measured (seed 0, η = 0.5): CD stays in [−3.19, −3.14] for 2,400 epochs; CS-DCP
    passes −3.0 at epoch 1,340 and ends at −2.42, S-DCP passes it at ~1,890 and ends at −2.74
    (seeds 0–2: CS-DCP 1,260–1,360, S-DCP 1,750–1,900); 3 s."""
    eng = L.engine("dc-escape", max_speed=True)
    _run(eng)
    assert not eng.failed and eng.epoch == 2400
    f = eng.frame()
    ep, cd = _curve(f, "cd")
    _, sdcp = _curve(f, "sdcp")
    _, csdcp = _curve(f, "csdcp")
    assert abs(_at(ep, cd, 500) + 3.15) < 0.05 and abs(_at(ep, sdcp, 500) + 3.15) < 0.05
    assert cd.max() < -3.1 and cd[-1] < -3.1       # CD never leaves
    assert sdcp[-1] > -3.0 and csdcp[-1] > -3.0     # both DC rules escape
    assert sdcp[-1] > -2.8
    first = lambda ll: ep[np.argmax(ll > -3.0)]
    assert first(csdcp) < first(sdcp)                # CS-DCP first
    assert 1000 <= first(csdcp) <= 1700 and 1500 <= first(sdcp) <= 2300


def test_centered_vs_csdcp_csdcp_gets_there_first_cg_catches_up():
    """Measured (seed 0, η = 0.3): at epoch 300 CG −6.02, CS-DCP −4.13; epochs to 90 % of the
    best: CG 1,610, CS-DCP 560 (seeds 0–3: CG 1,090–1,610, CS-DCP 490–560); at 2,000 CG −3.69,
    CS-DCP −3.53; at 3,000 −3.54 / −3.57; 1 s."""
    eng = L.engine("centered-vs-csdcp", max_speed=True)
    _run(eng)
    assert not eng.failed
    f = eng.frame()
    ep, cg = _curve(f, "cg")
    _, cs = _curve(f, "csdcp")
    assert _at(ep, cs, 300) - _at(ep, cg, 300) > 1.5
    assert _at(ep, cg, 300) < -5.5 and _at(ep, cs, 300) > -4.5

    def t90(ll):
        return ep[np.argmax(ll >= ll[0] + 0.9 * (ll.max() - ll[0]))]

    assert 2 * t90(cs) < t90(cg)
    assert abs(_at(ep, cg, 2000) - _at(ep, cs, 2000)) < 0.3
    assert abs(cg[-1] - cs[-1]) < 0.2 and -3.8 < cg[-1] < -3.3


def _bias_run(key):
    lesson = L.get(key)
    eng = L.engine(lesson)
    _run(eng, lesson.points)
    assert eng.failed is None and len(eng.records) == lesson.points + 1
    return eng.frame()


def test_cd_bias_k_the_bias_stays_below_its_bound_and_falls_as_k_grows():
    """Measured (B&S 3×3, seed 0): bias at the end of k = 1, 2, 4, 8: 0.174, 0.141, 0.097,
    0.061; bound 0.315, 0.237, 0.161, 0.099; bias/bound at most 0.62; log-likelihood −3.07,
    −2.89, −2.77, −2.70; 0.5 s."""
    f = _bias_run("cd-bias-k")
    assert (f.bias <= f.bound + 1e-12).all()
    assert list(f.k.unique()) == [1, 2, 4, 8]
    ends = f.groupby("k").last()
    bias, bound, ll = ends.bias.to_numpy(), ends.bound.to_numpy(), ends.log_likelihood.to_numpy()
    assert np.all(np.diff(bias) < 0) and np.all(np.diff(bound) < 0) and np.all(np.diff(ll) > 0)
    assert bias[0] > 0.12 and bias[-1] < 0.08
    assert f[f.k == 1].bias.iloc[-1] > 5 * f.bias.iloc[0]     # grows with the weights under k=1


def test_weight_decay_cuts_the_bias_and_the_fit():
    """Measured (B&S 3×3, seed 0): at iteration 20,000 (no decay) bias 0.204, |W| 36.7,
    LL −3.09; 20,000 iterations of λ = 0.005 later bias 0.030, |W| 17.2, LL −3.52 (seeds 1, 2:
    bias 0.37 → 0.029 and 0.32 → 0.030); 0.5 s."""
    f = _bias_run("weight-decay-bias")
    assert (f.bias <= f.bound + 1e-12).all()
    before = f[f.iteration <= 20_000].iloc[-1]
    after = f.iloc[-1]
    assert before.bias > 0.15 and before.weight_norm > 30
    assert after.bias < before.bias / 5
    assert after.weight_norm < 0.6 * before.weight_norm
    assert after.log_likelihood < before.log_likelihood - 0.2


def test_lr_too_large_pcd_is_stopped_with_a_reason_cd_degrades():
    """Measured (seed 0): η 0.3 → 10 at epoch 600; PCD's run stops at epoch 610 ('train_ll
    collapsed to −12.6 nats ... learning_rate=10 may be too large'; seeds 0–3: 610–710); CD
    runs on, −5.80 → −7.64; 0.3 s."""
    errors = []
    eng = L.engine("lr-too-large", max_speed=True, on_error=lambda alg, msg: errors.append((alg, msg)))
    _run(eng)
    assert list(eng.failed) == ["pcd"]
    msg = eng.failed["pcd"]
    assert "diverged" in msg and "learning_rate=10" in msg and "too large" in msg
    assert errors == [("pcd", msg)]                  # reported once
    f = eng.frame()
    ep_p, _ = _curve(f, "pcd")
    assert 600 <= ep_p.max() <= 800
    ep, cd = _curve(f, "cd")
    assert ep.max() == 1200
    assert cd[-1] < _at(ep, cd, 600) - 0.5


def test_mnist_fields_form_from_noise():
    """Measured (MNIST 784×500, PCD-1, η = 0.01, batch 100): median neighbour correlation of
    the receptive fields 0.00 at the start, 0.10 after ~150 updates, 0.49 after ~300, 0.80
    after 1,000, 0.82 at 1,500; pseudo-likelihood −185 → −110; ~15 s.  (Digits when the MNIST
    files are missing.)"""
    lesson = L.get("mnist-fields")
    eng = L.engine(lesson, max_speed=True)
    shape = eng.image_shape
    name = lesson.params["algorithms"][0]
    assert L.smoothness(eng.runs[name].rbm.W, shape) < 0.05
    early = None
    while not eng.finished:
        eng.step()
        if early is None and eng.runs[name].algorithm.updates >= 100:
            early = L.smoothness(eng.runs[name].rbm.W, shape)
    assert not eng.failed
    final = L.smoothness(eng.runs[name].rbm.W, shape)
    f = eng.frame()
    assert early < 0.35 < final and final > 0.6
    assert f.spl.iloc[-1] > f.spl.iloc[0] + (40 if lesson.params["dataset"] == "mnist" else 3)


@needs_mnist
def test_tap_landscape_solutions_multiply_with_training():
    """Measured (the shipped 784×100 checkpoints, 500 data initialisations): unique TAP
    solutions 1 (epoch 1), 90 (epoch 10), 226 (epoch 100); ~16 s."""
    counts = []
    for key in ("tap-landscape-1", "tap-landscape-10", "tap-landscape-100"):
        eng = L.engine(key)
        eng.step()
        assert eng.failed is None and eng.snapshot is not None
        counts.append(eng.snapshot["n_unique"])
    n1, n10, n100 = counts
    assert n1 <= 3
    assert n10 >= 30 and n100 > 1.5 * n10 and n100 >= 150


@needs_mnist
def test_tap_denoising_tap_beats_ope_and_1nn_catches_up_as_p_grows():
    """Measured (fixed10 epoch-100 checkpoint, 50 held-out digits): mean MCC at p = 0.1: TAP
    0.90, OPE 0.78, 1-NN 0.69; at p = 0.3: TAP 0.60, 1-NN 0.60, OPE 0.45; ~4 s on 30 digits."""
    eng = L.engine("tap-denoising")

    def mean_mcc(p, n=30):
        rows = [eng.denoise(p, i)["mcc"] for i in range(n)]
        return {k: float(np.mean([r[k] for r in rows])) for k in ("ope", "nn", "tap")}

    low, high = mean_mcc(0.1), mean_mcc(0.3)
    assert low["tap"] > low["ope"] + 0.05 and low["tap"] > low["nn"] + 0.1
    assert high["tap"] > high["ope"] + 0.05
    assert high["nn"] > high["tap"] - 0.05                   # 1-NN catches up
    assert (low["tap"] - low["nn"]) > (high["tap"] - high["nn"]) + 0.1


def test_adatap_vs_tap_adatap_costs_far_more_per_update_and_gains_nothing():
    """Measured (digits 64×50, γ = 0.5, 10 iterations per update, seed 0): TAP LL per unit
    −0.221 → −0.161 over the first 10 epochs (150 updates, ~10–20 ms per update with the
    evaluation); after the switch adaTAP takes ~0.3–0.7 s per update (30× or more) and the
    LL wobbles between −0.20 and −0.18; the test runs the TAP part and 8 adaTAP points, ~15 s."""
    import time

    lesson = L.get("adatap-vs-tap")
    eng = L.engine(lesson)
    cost = {"tap": [0.0, 0], "adatap": [0.0, 0]}
    adatap_points = 0
    eng.step()                                     # the initial point (no training)
    while adatap_points < 8:
        # CPU time of this process, not wall time: other work on a shared machine does not
        # inflate it, and the ratio (measured 30x or more) has a wide margin
        inference, u0, t0 = eng.settings.inference, eng.updates, time.process_time()
        eng.step()
        assert eng.failed is None
        cost[inference][0] += time.process_time() - t0
        cost[inference][1] += eng.updates - u0
        adatap_points += inference == "adatap"
    assert eng.lesson_changes and eng.lesson_changes[0]["changes"] == {"inference": "adatap"}
    per_update = {k: t / n for k, (t, n) in cost.items()}
    assert per_update["adatap"] > 5 * per_update["tap"]
    f = eng.frame()
    switch = f[f.epoch <= 10.0].iloc[-1]
    assert switch.tap_ll > f.tap_ll.iloc[0] + 0.03          # TAP learned
    after = f[f.epoch > 10.0].tap_ll
    assert len(after) == 8
    assert abs(after.mean() - switch.tap_ll) < 0.05          # no collapse, no gain
    assert after.max() < switch.tap_ll + 0.02


def test_deep_tap_pretrains_layer_by_layer_then_joint_training_raises_the_likelihood():
    """Measured (digits, 64-100-50, γ = 0.1, 2 pretraining epochs per layer, seed 0): phases
    pretrain layer 1 (epochs 0–2), layer 2 (2–4), joint from epoch 4; TAP LL per unit −0.1185
    at the start of joint training, −0.1046 at epoch 12, −0.096 at 24, −0.081 at 58; both
    layers' receptive fields in every snapshot; the test runs to epoch 12, ~10 s."""
    eng = L.engine("deep-tap")
    phases = []
    while eng.epoch < 12:
        eng.step()
        assert eng.failed is None
        if not phases or phases[-1] != eng.phase:
            phases.append(eng.phase)
    assert phases == ["pretrain layer 1", "pretrain layer 2", "joint"]
    f = eng.frame()
    joint = f[f.phase == "joint"]
    assert joint.epoch.iloc[0] == pytest.approx(4.0)
    assert joint.tap_ll.iloc[-1] > joint.tap_ll.iloc[0] + 0.007
    snap = eng.snapshot
    assert snap["fields1"].shape == (64, 100) and snap["fields2"].shape == (64, 50)
    assert np.abs(snap["fields2"]).max() > 0 and np.isfinite(snap["fields2"]).all()
    assert abs(joint.tap_ll.iloc[0] + 0.118) < 0.01 and joint.tap_ll.iloc[-1] > -0.112


def test_module_examples_run():
    import doctest

    assert doctest.testmod(L).failed == 0


@pytest.mark.parametrize("lesson", L.LESSONS, ids=lambda l: l.key)
def test_each_lesson_asks_a_question_and_names_a_notebook_section_that_exists(lesson):
    """The teaching path's "predict, then watch": a question to ask before Start, and the
    notebook section that works through the same phenomenon (its heading is in the notebook)."""
    import json
    from pathlib import Path
    assert lesson.predict.endswith("?") and len(lesson.predict) > 30
    name, heading = lesson.notebook
    nb = Path(__file__).resolve().parents[1] / "notebooks" / f"{name}.ipynb"
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    headings = {line.lstrip("#").strip() for c in cells if c["cell_type"] == "markdown"
                for line in "".join(c["source"]).splitlines() if line.startswith("#")}
    assert heading in headings, sorted(headings)


def test_a_lesson_refuses_a_statement_for_a_question_and_a_bad_notebook():
    base = dict(key="x", title="x", tab="race", params={}, seconds=60, notice=("a", "b"), figure="f")
    with pytest.raises(ValueError, match="predict must be a question"):
        L.Lesson(**base, predict="CD ends higher.")
    with pytest.raises(ValueError, match="notebook must be"):
        L.Lesson(**base, notebook=("00_tour",))
