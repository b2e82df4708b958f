"""The classroom caps of :mod:`rbmviz.app.limits`: parsing, refusing, bounding widgets, counting
sessions — headless (no server, no browser)."""
import argparse
import threading

import param
import pytest

from rbmviz.app import limits as L
from rbmviz.app.limits import LimitExceeded, Limits, SessionRegistry


def test_no_env_means_no_caps():
    lim = Limits.from_env({})
    assert lim == Limits()
    assert not lim.any and lim.describe() == ""
    lim.check(n_hidden=10**6, k=10**6, epochs=0, limit=None, points_per_second=10**4,
              max_speed=True)
    lim.check_model(784, 10**5)
    lim.check_data(10**7)


def test_env_parsing_and_round_trip():
    env = {"RBMVIZ_MAX_SESSIONS": "30", "RBMVIZ_MAX_HIDDEN": " 64 ", "RBMVIZ_MAX_K": "none",
           "RBMVIZ_MAX_EPOCHS": "", "RBMVIZ_FULL_SPEED": "no", "RBMVIZ_SESSION_THREADS": "2",
           "RBMVIZ_MAX_WEIGHTS": "50000"}
    lim = Limits.from_env(env)
    assert lim == Limits(max_sessions=30, max_hidden=64, full_speed=False, session_threads=2,
                         max_weights=50000)
    assert Limits.from_env(lim.to_env()) == lim
    assert lim.any
    text = lim.describe()
    assert "hidden units ≤ 64" in text and "concurrent sessions ≤ 30" in text
    assert "no full speed" in text and "2 threads per session" in text


@pytest.mark.parametrize("var, raw", [("RBMVIZ_MAX_HIDDEN", "abc"), ("RBMVIZ_MAX_K", "0"),
                                      ("RBMVIZ_MAX_SESSIONS", "-3"), ("RBMVIZ_MAX_EPOCHS", "1.5"),
                                      ("RBMVIZ_FULL_SPEED", "maybe")])
def test_bad_env_names_the_variable(var, raw):
    with pytest.raises(ValueError, match=var):
        Limits.from_env({var: raw})


@pytest.mark.parametrize("kwargs, exc", [({"max_k": 0}, ValueError), ({"max_k": 2.5}, TypeError),
                                         ({"max_hidden": True}, TypeError),
                                         ({"full_speed": 1}, TypeError),
                                         ({"session_threads": None}, TypeError)])
def test_bad_constructor_names_the_field(kwargs, exc):
    with pytest.raises(exc, match=next(iter(kwargs))):
        Limits(**kwargs)


def test_check_refuses_beyond_each_cap_and_accepts_at_the_cap():
    lim = Limits(max_hidden=8, max_k=5, max_epochs=100, max_rows=50, max_points_per_second=20,
                 full_speed=False, session_threads=1)
    lim.check(n_hidden=8, k=5, epochs=100, limit=50, points_per_second=20, max_speed=False,
              threads=1)
    cases = {"n_hidden": 9, "k": 6, "epochs": 101, "limit": 51, "points_per_second": 21,
             "threads": 2}
    for knob, value in cases.items():
        with pytest.raises(LimitExceeded, match=knob) as err:
            lim.check(**{knob: value})
        assert isinstance(err.value, ValueError)          # the tabs show ValueErrors
        assert "RBMVIZ_" in str(err.value) and "--" in str(err.value)
    with pytest.raises(LimitExceeded, match=r"epochs = 0 \(no end\).*RBMVIZ_MAX_EPOCHS"):
        lim.check(epochs=0)
    with pytest.raises(LimitExceeded, match="epochs = None"):
        lim.check(epochs=None)
    with pytest.raises(LimitExceeded, match="Full speed.*RBMVIZ_FULL_SPEED"):
        lim.check(max_speed=True)
    lim.check(unrelated_knob=10**9)                        # not a capped knob


def test_model_size_cap_gives_the_largest_allowed_hidden_layer():
    lim = Limits(max_weights=10_000)
    lim.check_model(784, 12)                               # 9,408 weights
    with pytest.raises(LimitExceeded, match=r"784 visible.*10,976 weights.*at most 12 hidden"):
        lim.check_model(784, 14)
    with pytest.raises(LimitExceeded, match="weights"):
        lim.check(n_visible=784, n_hidden=13)
    assert lim.hidden_cap(784) == 12 and lim.hidden_cap(9) == 1111 and lim.hidden_cap() is None
    assert Limits(max_weights=10_000, max_hidden=100).hidden_cap(9) == 100
    assert Limits(max_weights=10, max_hidden=100).hidden_cap(784) == 1   # never below 1
    with pytest.raises(LimitExceeded, match="n_hidden = 101"):
        Limits(max_hidden=100).check_model(9, 101)


def test_rows_cap():
    lim = Limits(max_rows=1000)
    lim.check_data(1000)
    with pytest.raises(LimitExceeded, match=r"60,000 rows.*1,000.*RBMVIZ_MAX_ROWS"):
        lim.check_data(60_000)


def test_threads_are_capped():
    assert Limits(session_threads=2).threads(8) == 2
    assert Limits(session_threads=2).threads(1) == 1
    assert Limits().threads(4) == 1


class _Knobs(param.Parameterized):
    n_hidden = param.Integer(100, bounds=(2, 1000), softbounds=(5, 500))
    k = param.Integer(10, bounds=(1, None))
    epochs = param.Integer(0, bounds=(0, None))
    limit = param.Integer(None, allow_None=True, bounds=(1, None))
    points_per_second = param.Integer(40, bounds=(1, 1000))
    max_speed = param.Boolean(True)
    learning_rate = param.Number(0.1, bounds=(0, 10))


def test_apply_bounds_values_and_widgets_of_one_session_only():
    pn = pytest.importorskip("panel")
    mine, other = _Knobs(), _Knobs()
    widgets = {"n_hidden": pn.widgets.IntSlider(start=2, end=1000, value=100),
               "k": pn.widgets.IntSlider(start=1, end=50, value=10),
               "epochs": pn.widgets.IntInput(value=0),
               "max_speed": pn.widgets.Checkbox(value=True),
               "learning_rate": pn.widgets.FloatSlider(start=0, end=10)}
    lim = Limits(max_weights=784 * 20, max_hidden=64, max_k=5, max_epochs=500,
                 max_points_per_second=10, full_speed=False, max_rows=300)
    lim.apply(mine, widgets, n_visible=784)
    assert (mine.n_hidden, mine.k, mine.epochs, mine.points_per_second) == (20, 5, 500, 10)
    assert mine.max_speed is False and mine.limit == 300
    assert mine.param["n_hidden"].bounds == (2, 20) and mine.param["n_hidden"].softbounds == (5, 20)
    assert mine.param["k"].bounds == (1, 5) and mine.param["limit"].bounds == (1, 300)
    assert widgets["n_hidden"].end == 20 and widgets["k"].end == 5 and widgets["epochs"].end == 500
    assert widgets["max_speed"].disabled and widgets["learning_rate"].end == 10
    with pytest.raises(ValueError):                       # param refuses beyond the cap
        mine.k = 6
    with pytest.raises(ValueError):
        mine.limit = 301
    # another session (and the class) are untouched
    assert other.param["k"].bounds == (1, None) and _Knobs.param["n_hidden"].bounds == (2, 1000)
    other.k = 40
    with pytest.raises(TypeError, match="instances"):
        lim.apply(_Knobs)


def test_clamp_lowers_a_preset_to_the_caps():
    lim = Limits(max_hidden=100, max_weights=784 * 50, max_k=5, max_epochs=1000, max_rows=2000,
                 max_points_per_second=10, full_speed=False)
    pre = {"n_hidden": 500, "k": 1, "epochs": None, "limit": None, "points_per_second": 40,
           "max_speed": True, "learning_rate": 0.05, "batch_size": None}
    assert lim.clamp(pre, n_visible=784) is pre
    assert pre == {"n_hidden": 50, "k": 1, "epochs": 1000, "limit": 2000, "points_per_second": 10,
                   "max_speed": False, "learning_rate": 0.05, "batch_size": None}
    assert lim.clamp({"n_hidden": 500}) == {"n_hidden": 100}       # no data set: max_hidden only
    assert lim.clamp({"epochs": 0, "limit": 30}) == {"epochs": 1000, "limit": 30}
    assert Limits().clamp({"n_hidden": 500, "epochs": None}) == {"n_hidden": 500, "epochs": None}


def test_apply_without_caps_changes_nothing():
    obj = _Knobs()
    Limits().apply([obj])
    assert obj.param["k"].bounds == (1, None) and obj.max_speed and obj.epochs == 0


def test_session_registry_counts_places():
    reg = SessionRegistry()
    assert reg.acquire("a", 2) and reg.acquire("b", 2)
    assert reg.acquire("a", 2)                             # the same session again: no new place
    assert not reg.acquire("c", 2) and reg.active == 2
    reg.release("a")
    reg.release("never-held")
    assert reg.acquire("c", 2) and reg.active == 2
    assert reg.acquire("d", None) and reg.active == 3      # no cap


def test_session_registry_is_thread_safe():
    reg, granted = SessionRegistry(), []
    barrier = threading.Barrier(16)

    def take(i):
        barrier.wait()
        if reg.acquire(f"s{i}", 5):
            granted.append(i)
    threads = [threading.Thread(target=take, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 5 == reg.active


def test_full_message_names_the_cap():
    text = L.full_message(Limits(max_sessions=30))
    assert "The class is full" in text and "**30**" in text and "RBMVIZ_MAX_SESSIONS" in text


def _parse(argv):
    parser = argparse.ArgumentParser(prog="rbmviz explore")
    L.add_arguments(parser)
    return parser.parse_args(argv)


def test_flags_become_environment_variables():
    args = _parse(["--max-hidden", "64", "--no-full-speed", "--max-sessions", "30"])
    env = L.environ_from_arguments(args, {})
    assert env == {"RBMVIZ_MAX_HIDDEN": "64", "RBMVIZ_FULL_SPEED": "0",
                   "RBMVIZ_MAX_SESSIONS": "30"}
    assert Limits.from_env(env) == Limits(max_hidden=64, full_speed=False, max_sessions=30)
    assert L.environ_from_arguments(_parse([]), {}) == {}


def test_classroom_preset_and_explicit_flags_win():
    env = L.environ_from_arguments(_parse(["--classroom", "--max-k", "3"]),
                                   {"RBMVIZ_MAX_HIDDEN": "7"})
    lim = Limits.from_env(env)
    expected = dict(L.CLASSROOM, max_k=3)
    for field, value in expected.items():
        assert getattr(lim, field) == value, field


@pytest.mark.parametrize("argv", [["--max-k", "0"], ["--max-hidden", "x"],
                                  ["--session-threads", "-1"]])
def test_bad_flags_are_refused_by_name(argv, capsys):
    with pytest.raises(SystemExit):
        _parse(argv)
    assert argv[0] in capsys.readouterr().err


# ---------------------------------------------------------------------- the tabs honour the caps
class _Context:
    def __init__(self, key):
        self.id = key


def _doc_with_session(key):
    from bokeh.document import Document
    doc = Document()
    ctx = _Context(key)
    doc._session_context = lambda: ctx
    return doc, ctx


def test_claim_place_fills_the_class_and_frees_a_place_when_a_session_ends(monkeypatch):
    pn = pytest.importorskip("panel")
    monkeypatch.setattr(L, "SESSIONS", SessionRegistry())
    lim = Limits(max_sessions=2)
    docs = []
    try:
        for key in ("a", "b", "c"):
            doc, ctx = _doc_with_session(key)
            pn.state.curdoc = doc
            docs.append((doc, ctx, L.claim_place(lim)))
    finally:
        pn.state.curdoc = None
    assert [granted for _, _, granted in docs] == [True, True, False]
    assert L.SESSIONS.active == 2
    doc_a, ctx_a, _ = docs[0]
    for callback in doc_a.session_destroyed_callbacks:     # Bokeh ends session "a"
        callback(ctx_a)
    assert L.SESSIONS.active == 1
    doc, _ = _doc_with_session("c")
    pn.state.curdoc = doc
    try:
        assert L.claim_place(lim)
    finally:
        pn.state.curdoc = None
    assert L.claim_place(lim)                              # no server session: always a place
    page = L.full_page(lim)
    assert "The class is full" in page[0].object


@pytest.fixture
def capped_page(monkeypatch):
    """The explorer's three tabs built (not started) under classroom caps."""
    pytest.importorskip("panel")
    for var, value in {"RBMVIZ_MAX_HIDDEN": "3", "RBMVIZ_MAX_K": "2", "RBMVIZ_FULL_SPEED": "0",
                       "RBMVIZ_MAX_POINTS_PER_SECOND": "5", "RBMVIZ_MAX_EPOCHS": "300"}.items():
        monkeypatch.setenv(var, value)
    import holoviews as hv
    hv.extension("bokeh")
    from rbmviz.app.layout import build
    layout = build(sync_url=False, template=False)
    yield layout
    for session in layout.tab_sessions.made():
        if session.race is not None:
            session.race.stop(timeout=2)


def test_the_tabs_bound_their_widgets_and_settings_by_the_caps(capped_page):
    race = capped_page.tab_sessions["Training race"]
    assert race.model.n_hidden <= 3 and race.widgets["n_hidden"].end == 3
    assert race.train.k <= 2 and race.widgets["k"].end == 2
    assert 0 < race.train.epochs <= 300
    assert race.view.points_per_second <= 5 and race.view.max_speed is False
    with pytest.raises((ValueError, TypeError)):          # "Full speed" cannot be switched on
        race.view.max_speed = True
    assert race.race is not None and race.race.threads == 1
    for title, session in capped_page.tab_sessions.items():
        if title == "Training race":
            continue
        for knob, cap in (("n_hidden", 3), ("k", 2), ("points_per_second", 5)):
            if knob in session.settings.param:
                assert getattr(session.settings, knob) <= cap, (title, knob)
                if knob in session.widgets and hasattr(session.widgets[knob], "end"):
                    assert session.widgets[knob].end <= cap, (title, knob)


def test_a_tab_refuses_an_engine_beyond_the_caps(capped_page, monkeypatch):
    race = capped_page.tab_sessions["Training race"]
    race.reset()
    assert race.race is not None                          # within the caps
    monkeypatch.setenv("RBMVIZ_MAX_ROWS", "5")            # the teacher restarts with a row cap
    race.limits = Limits.from_env()
    race.reset()
    assert race.race is None
    assert "RBMVIZ_MAX_ROWS" in race.alert_text.object and "Cannot start" in race.alert_text.object
    race.limits = Limits(max_weights=race.model.n_hidden)   # fewer weights than the model has
    race.reset()
    assert race.race is None and "RBMVIZ_MAX_WEIGHTS" in race.alert_text.object


def test_a_data_set_preset_is_lowered_to_the_caps(capped_page):
    race = capped_page.tab_sessions["Training race"]
    race.data.dataset = "shifting_bar"          # its preset has more hidden units than the cap
    assert race.model.n_hidden <= 3 and race.train.k <= 2 and 0 < race.train.epochs <= 300
    assert race.race is not None                # the new race starts within the caps
