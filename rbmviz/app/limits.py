"""Per-session caps for a classroom server: whoever starts the explorer decides how much one
browser session may ask of the machine, so one student cannot starve the others.

The caps come from environment variables (read when a session starts, so a server started by
``rbmviz explore --max-hidden 64 ...`` or by ``RBMVIZ_MAX_HIDDEN=64 panel serve ...`` applies
them to every session, also in the worker processes of ``--num-procs``):

================================  =============================  ======================================
environment variable              ``rbmviz explore`` flag        caps
================================  =============================  ======================================
``RBMVIZ_MAX_SESSIONS``           ``--max-sessions N``           concurrent sessions per server process
                                                                 (later ones see "the class is full")
``RBMVIZ_MAX_HIDDEN``             ``--max-hidden N``             hidden units of a model
``RBMVIZ_MAX_WEIGHTS``            ``--max-weights N``            model size: visible × hidden weights
``RBMVIZ_MAX_K``                  ``--max-k N``                  Gibbs steps k per update
``RBMVIZ_MAX_EPOCHS``             ``--max-epochs N``             epochs of a race ("no end" is refused)
``RBMVIZ_MAX_ROWS``               ``--max-rows N``               training rows of a data set
``RBMVIZ_MAX_POINTS_PER_SECOND``  ``--max-points-per-second N``  the pace of a race
``RBMVIZ_FULL_SPEED``             ``--no-full-speed``            ``0``: "Full speed" is switched off
``RBMVIZ_SESSION_THREADS``        ``--session-threads N``        Numba threads of a session's trainer
================================  =============================  ======================================

Unset (or empty, or ``none``) means no cap; ``--classroom`` sets :data:`CLASSROOM` for every
cap not given explicitly.  The widgets' ranges end at the caps (:meth:`Limits.apply`), and a
session refuses settings beyond them with a message that names the knob, the cap and the
variable that set it (:meth:`Limits.check`, :class:`LimitExceeded`).

Counting sessions (:data:`SESSIONS`) is per server process: with ``--num-procs P`` the class
holds up to ``P × RBMVIZ_MAX_SESSIONS`` sessions.  A session's place is given back when Bokeh
destroys it, which happens ``--unused-session-lifetime`` (default 15 s) after its tab closes.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import threading
from collections.abc import Mapping
from typing import Any

import panel as pn

__all__ = [
    "CLASSROOM",
    "ENV",
    "SESSIONS",
    "LimitExceeded",
    "Limits",
    "SessionRegistry",
    "add_arguments",
    "claim_place",
    "current",
    "environ_from_arguments",
    "full_page",
]

#: field → environment variable
ENV = {
    "max_sessions": "RBMVIZ_MAX_SESSIONS",
    "max_hidden": "RBMVIZ_MAX_HIDDEN",
    "max_weights": "RBMVIZ_MAX_WEIGHTS",
    "max_k": "RBMVIZ_MAX_K",
    "max_epochs": "RBMVIZ_MAX_EPOCHS",
    "max_rows": "RBMVIZ_MAX_ROWS",
    "max_points_per_second": "RBMVIZ_MAX_POINTS_PER_SECOND",
    "full_speed": "RBMVIZ_FULL_SPEED",
    "session_threads": "RBMVIZ_SESSION_THREADS",
}
#: field → command-line flag of ``rbmviz explore``
FLAGS = {name: "--" + name.replace("_", "-") for name in ENV}
FLAGS["full_speed"] = "--no-full-speed"

#: ``--classroom``: caps for ~30 students sharing a 2–8 core server (every point of a race
#: stays well under a second on one core at these sizes)
CLASSROOM = {
    "max_sessions": 40,
    "max_hidden": 100,
    "max_weights": 784 * 100,
    "max_k": 25,
    "max_epochs": 100_000,
    "max_rows": 10_000,
    "max_points_per_second": 40,
    "full_speed": False,
    "session_threads": 1,
}

#: knob name (as the settings objects of the tabs call it) → the field that caps it
KNOB_CAPS = {
    "n_hidden": "max_hidden",
    "k": "max_k",
    "epochs": "max_epochs",
    "limit": "max_rows",
    "points_per_second": "max_points_per_second",
}
_WHAT = {
    "max_sessions": "concurrent sessions",
    "max_hidden": "hidden units",
    "max_weights": "weights (visible × hidden)",
    "max_k": "Gibbs steps k",
    "max_epochs": "epochs",
    "max_rows": "training rows",
    "max_points_per_second": "points per second",
    "session_threads": "threads per session",
}


class LimitExceeded(ValueError):
    """A setting is beyond a cap of this server (a ``ValueError``: the tabs show it as
    "Cannot start: ...")."""


def _source(field: str) -> str:
    return f"{ENV[field]} / {FLAGS[field]}"


@dataclasses.dataclass(frozen=True)
class Limits:
    """The caps of this server; ``None`` = no cap, every bound inclusive.

    Parameters
    ----------
    max_sessions : int or None
        Concurrent sessions of one server process.
    max_hidden : int or None
        Hidden units of a model.
    max_weights : int or None
        Weights of a model (visible × hidden units).
    max_k : int or None
        Gibbs steps k per update.
    max_epochs : int or None
        Epochs of a race (a race without an end is then refused).
    max_rows : int or None
        Training rows of a data set.
    max_points_per_second : int or None
        The pace of a race.
    full_speed : bool
        Whether a session may switch off the pace ("Full speed").
    session_threads : int
        Numba threads of each session's training thread (at least 1).
    """

    max_sessions: int | None = None
    max_hidden: int | None = None
    max_weights: int | None = None
    max_k: int | None = None
    max_epochs: int | None = None
    max_rows: int | None = None
    max_points_per_second: int | None = None
    full_speed: bool = True
    session_threads: int = 1

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "full_speed":
                if not isinstance(value, bool):
                    raise TypeError(f"full_speed must be a bool, got {value!r}")
                continue
            if value is None and f.name != "session_threads":
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{f.name} must be an int{' or None' if f.name != 'session_threads' else ''}, "
                                f"got {value!r}")
            if value < 1:
                raise ValueError(f"{f.name} must be >= 1, got {value}")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The caps set by the environment variables :data:`ENV`.

        Parameters
        ----------
        environ : mapping of str to str, optional
            The environment; default ``os.environ``.  An unset, empty or ``none`` variable
            sets no cap.

        Returns
        -------
        Limits
            The caps.

        Raises
        ------
        ValueError
            A variable that is neither empty / ``none`` nor a positive integer (for
            ``RBMVIZ_FULL_SPEED``: ``1/0/true/false/yes/no``), naming the variable.
        """
        environ = os.environ if environ is None else environ
        values = {}
        for field, var in ENV.items():
            raw = environ.get(var, "").strip()
            if raw.lower() in ("", "none"):
                continue
            if field == "full_speed":
                low = raw.lower()
                if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(f"{var} must be 1/0 (true/false), got {raw!r}")
                values[field] = low in ("1", "true", "yes", "on")
                continue
            try:
                number = int(raw)
            except ValueError:
                raise ValueError(f"{var} must be a positive integer (or empty for no cap), "
                                 f"got {raw!r}") from None
            if number < 1:
                raise ValueError(f"{var} must be a positive integer (or empty for no cap), "
                                 f"got {raw!r}")
            values[field] = number
        return cls(**values)

    def to_env(self) -> dict[str, str]:
        """The environment variables that reproduce these caps.

        Returns
        -------
        dict of str to str
            Every variable of :data:`ENV` with its value (``""`` = no cap).
        """
        out = {}
        for field, var in ENV.items():
            value = getattr(self, field)
            if field == "full_speed":
                out[var] = "1" if value else "0"
            else:
                out[var] = "" if value is None else str(value)
        return out

    @property
    def any(self) -> bool:
        """Whether any cap is set (beyond one thread per session)."""
        return self != Limits(session_threads=self.session_threads)

    def cap(self, knob: str) -> int | None:
        """The cap of a tab knob.

        Parameters
        ----------
        knob : str
            A knob name of the tabs' settings: ``n_hidden``, ``k``, ``epochs``, ``limit`` or
            ``points_per_second`` (:data:`KNOB_CAPS`); any other has no cap.

        Returns
        -------
        int or None
            The cap, or ``None`` when there is none.
        """
        field = KNOB_CAPS.get(knob)
        return None if field is None else getattr(self, field)

    # ------------------------------------------------------------------ refusing
    def check(self, **knobs: Any) -> None:
        """Refuse knob values beyond the caps.

        Parameters
        ----------
        **knobs
            Any of ``n_hidden``, ``k``, ``epochs`` (``0`` or ``None`` = no end), ``limit``
            (training rows; ``None`` = all rows, checked by :meth:`check_data`),
            ``points_per_second``, ``max_speed`` (bool), ``threads``, ``n_visible`` (with
            ``n_hidden``: the model size); other names are ignored.

        Raises
        ------
        LimitExceeded
            Naming the knob, its value, the cap and the variable / flag that set it.
        """
        for knob, value in knobs.items():
            if knob == "max_speed":
                if value and not self.full_speed:
                    raise LimitExceeded(
                        "max_speed (Full speed) is switched off on this server "
                        f"({_source('full_speed')}): the race keeps its pace so that every "
                        "session gets its share of the machine")
                continue
            if knob == "threads":
                if value is not None and value > self.session_threads:
                    raise LimitExceeded(f"threads = {value} is above this server's cap of "
                                        f"{self.session_threads} {_WHAT['session_threads']} "
                                        f"({_source('session_threads')})")
                continue
            field = KNOB_CAPS.get(knob)
            cap = None if field is None else getattr(self, field)
            if cap is None:
                continue
            if knob == "epochs" and not value:
                raise LimitExceeded(f"epochs = {value!r} (no end) is not allowed on this server: "
                                    f"choose at most {cap:,} epochs ({_source(field)})")
            if knob == "limit" and value is None:
                continue
            if value > cap:
                raise LimitExceeded(f"{knob} = {value:,} is above this server's cap of {cap:,} "
                                    f"{_WHAT[field]} ({_source(field)}, set by whoever started "
                                    f"the server)")
        if "n_visible" in knobs and "n_hidden" in knobs:
            self.check_model(knobs["n_visible"], knobs["n_hidden"])

    def check_model(self, n_visible: int, n_hidden: int) -> None:
        """Refuse a model beyond ``max_hidden`` or ``max_weights`` (``n_visible × n_hidden``).

        Parameters
        ----------
        n_visible : int
            Visible units of the model.
        n_hidden : int
            Hidden units of the model.

        Raises
        ------
        LimitExceeded
            Naming the cap passed, its value and the variable / flag that set it.
        """
        if self.max_hidden is not None and n_hidden > self.max_hidden:
            self.check(n_hidden=n_hidden)
        if self.max_weights is not None and n_visible * n_hidden > self.max_weights:
            most = self.hidden_cap(n_visible)
            raise LimitExceeded(
                f"n_hidden = {n_hidden:,} with {n_visible:,} visible units makes "
                f"{n_visible * n_hidden:,} weights, above this server's cap of "
                f"{self.max_weights:,} ({_source('max_weights')}): choose at most "
                f"{most:,} hidden units for this data set")

    def check_data(self, n_rows: int) -> None:
        """Refuse a training set of more than ``max_rows`` rows.

        Parameters
        ----------
        n_rows : int
            Rows of the training set.

        Raises
        ------
        LimitExceeded
            Naming the cap, its value and the variable / flag that set it.
        """
        if self.max_rows is not None and n_rows > self.max_rows:
            raise LimitExceeded(f"the training set has {n_rows:,} rows, above this server's cap "
                                f"of {self.max_rows:,} ({_source('max_rows')}): set the rows "
                                f"knob (limit) to at most {self.max_rows:,}")

    def hidden_cap(self, n_visible: int | None = None) -> int | None:
        """The most hidden units allowed: ``max_hidden``, and ``max_weights // n_visible``.

        Parameters
        ----------
        n_visible : int, optional
            Visible units of the data set (without it, ``max_weights`` does not count).

        Returns
        -------
        int or None
            The smaller of the two caps, or ``None`` when neither is set.
        """
        caps = [self.max_hidden]
        if n_visible and self.max_weights is not None:
            caps.append(max(1, self.max_weights // int(n_visible)))
        caps = [c for c in caps if c is not None]
        return min(caps) if caps else None

    def threads(self, requested: int = 1) -> int:
        """Numba threads for one session's trainer.

        Parameters
        ----------
        requested : int
            Threads asked for.

        Returns
        -------
        int
            ``requested`` capped by ``session_threads`` (at least 1).
        """
        return max(1, min(int(requested), self.session_threads))

    # ------------------------------------------------------------------ widgets
    def apply(self, settings: Any, widgets: Mapping | None = None, *,
              n_visible: int | None = None) -> None:
        """Bound a tab's knobs by the caps: the parameters' upper bounds (per instance), their
        current values (lowered to the cap; an endless ``epochs`` and "all rows" ``limit``
        become the cap), and the
        ``end`` of the matching widgets; "Full speed" is disabled when switched off.

        Parameters
        ----------
        settings : param.Parameterized or sequence of them
            The session's own settings objects (never classes: the bounds are per instance).
        widgets : mapping, optional
            Knob name → Panel widget showing it.
        n_visible : int, optional
            Visible units of the current data set (tightens ``n_hidden`` by ``max_weights``).

        Raises
        ------
        TypeError
            If ``settings`` holds a class instead of an instance.
        """
        objs = settings if isinstance(settings, (list, tuple)) else [settings]
        widgets = widgets or {}
        for obj in objs:
            if isinstance(obj, type):
                raise TypeError("settings must be instances (per-session), not classes: "
                                f"got {obj.__name__}")
            for knob in obj.param:
                cap = self._knob_cap(knob, n_visible)
                if knob == "max_speed" and not self.full_speed:
                    if getattr(obj, knob):
                        setattr(obj, knob, False)
                    obj.param[knob].constant = True      # refused, also from a crafted client
                    if knob in widgets:
                        widgets[knob].disabled = True
                    continue
                if cap is None:
                    continue
                p = obj.param[knob]
                lo, hi = p.bounds if p.bounds is not None else (None, None)
                p.bounds = (lo, cap if hi is None else min(hi, cap))
                soft = getattr(p, "softbounds", None)
                if soft is not None and soft[1] is not None and soft[1] > cap:
                    p.softbounds = (soft[0], cap)
                if _beyond(knob, getattr(obj, knob), cap):
                    setattr(obj, knob, cap)
        for knob, widget in widgets.items():
            cap = self._knob_cap(knob, n_visible)
            if cap is None or not hasattr(widget, "end"):
                continue
            if widget.end is None or widget.end > cap:
                start = getattr(widget, "start", None)
                widget.end = cap if start is None else max(cap, start)

    def clamp(self, values: dict, *, n_visible: int | None = None) -> dict:
        """Lower the capped knobs in ``values`` (e.g. a data set's preset) to the caps, in
        place.

        Parameters
        ----------
        values : dict
            Knob name → value: ``n_hidden`` (capped by ``max_hidden`` and, with
            ``n_visible``, ``max_weights``), ``k``, ``epochs`` (an endless ``0``/``None``
            becomes the cap), ``limit`` (``None`` = all rows becomes ``max_rows``),
            ``points_per_second``; ``max_speed`` is switched off when full speed is.  Other
            knobs are left alone.
        n_visible : int, optional
            Visible units of the data set.

        Returns
        -------
        dict
            ``values``, changed in place.
        """
        for knob in list(values):
            value = values[knob]
            if knob == "max_speed":
                if value and not self.full_speed:
                    values[knob] = False
                continue
            cap = self._knob_cap(knob, n_visible)
            if cap is not None and _beyond(knob, value, cap):
                values[knob] = cap
        return values

    def _knob_cap(self, knob, n_visible):
        """:meth:`cap`, with ``n_hidden`` capped by :meth:`hidden_cap` for ``n_visible``."""
        return self.hidden_cap(n_visible) if knob == "n_hidden" else self.cap(knob)

    def check_engine(self, engine: Any) -> None:
        """Refuse a live engine (:class:`rbmviz.live.Race`, ``BiasRace``, ``TapRace``, ...)
        that a session built beyond the caps: its models' sizes (each layer of a deep
        machine's ``layers``), its training rows, and the ``k``, ``epochs`` and pace in its
        settings.  Called by the tabs right after building
        an engine, before it starts (duck-typed: attributes an engine lacks are skipped).

        Parameters
        ----------
        engine : object
            A live engine (``rbm`` or ``runs`` or ``layers``, ``data`` or ``train_data``,
            ``settings`` or ``train_settings``, ``points_per_second``, ``max_speed``:
            whichever it has).

        Raises
        ------
        LimitExceeded
            For the first setting beyond a cap.
        """
        runs = getattr(engine, "runs", None) or {}
        for rbm in [getattr(engine, "rbm", None), *(getattr(r, "rbm", None) for r in runs.values())]:
            if rbm is not None:
                self.check_model(rbm.n_visible, rbm.n_hidden)
        data = getattr(engine, "train_data", None)
        if data is None:
            data = getattr(engine, "data", None)
        if data is not None and hasattr(data, "shape"):
            self.check_data(int(data.shape[0]))
        knobs = {}
        for source in (getattr(engine, "train_settings", None), getattr(engine, "settings", None)):
            if source is None or not hasattr(source, "param"):
                continue
            for name in ("k", "epochs", "points_per_second"):
                if name in source.param:
                    knobs.setdefault(name, getattr(source, name))
        for name in ("points_per_second", "max_speed"):
            value = getattr(engine, name, None)
            if isinstance(value, (bool, int)):
                knobs[name] = value
        self.check(**knobs)
        layers = getattr(engine, "layers", None) or ()     # a deep machine: each layer's size
        for n_visible, n_hidden in zip(layers, layers[1:]):
            self.check_model(n_visible, n_hidden)

    def describe(self) -> str:
        """One Markdown line listing the caps in force.

        Returns
        -------
        str
            "**This server's limits:** ..." ("" when there are none).
        """
        parts = []
        for field, what in _WHAT.items():
            value = getattr(self, field)
            if field == "session_threads":
                if self.any:
                    parts.append(f"{value} thread{'s' if value > 1 else ''} per session")
            elif value is not None:
                parts.append(f"{what} ≤ {value:,}")
        if not self.full_speed:
            parts.append("no full speed")
        return ("**This server's limits:** " + " · ".join(parts)) if parts else ""


def _beyond(knob, value, cap) -> bool:
    """Whether a knob's ``value`` becomes ``cap``: above it, or endless (``epochs`` 0 or
    None, ``limit`` None = all rows)."""
    if value is None:
        return knob in ("epochs", "limit")
    return (knob == "epochs" and value == 0) or value > cap


def current() -> Limits:
    """The caps of this server process, from ``os.environ`` now.

    Returns
    -------
    Limits
        :meth:`Limits.from_env` of the current environment.
    """
    return Limits.from_env()


# ---------------------------------------------------------------------- sessions
class SessionRegistry:
    """Who holds a place in the class (one server process); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[str] = set()

    def acquire(self, key: str, max_sessions: int | None) -> bool:
        """Take a place for session ``key``.

        Taking a place twice for the same key is allowed (and counts once).

        Parameters
        ----------
        key : str
            The session's id.
        max_sessions : int or None
            The places of the class (``None``: no cap).

        Returns
        -------
        bool
            Whether the session holds a place (``False`` when ``max_sessions`` are taken).
        """
        with self._lock:
            if key in self._held:
                return True
            if max_sessions is not None and len(self._held) >= max_sessions:
                return False
            self._held.add(key)
            return True

    def release(self, key: str) -> None:
        """Give back the place of session ``key`` (a no-op if it holds none).

        Parameters
        ----------
        key : str
            The session's id.
        """
        with self._lock:
            self._held.discard(key)

    @property
    def active(self) -> int:
        """How many sessions hold a place now."""
        with self._lock:
            return len(self._held)


#: the places of this server process
SESSIONS = SessionRegistry()


def claim_place(limits: Limits) -> bool:
    """Take a place in the class for the session being built (``pn.state.curdoc``); it is
    given back when Bokeh destroys the session.

    Parameters
    ----------
    limits : Limits
        The caps (``max_sessions`` counts).

    Returns
    -------
    bool
        Whether the session has a place (``False``: the class is full).  Outside a server (a
        notebook) there is always a place.
    """
    ctx = getattr(pn.state.curdoc, "session_context", None)
    if ctx is None:
        return True
    key = ctx.id
    if not SESSIONS.acquire(key, limits.max_sessions):
        return False
    pn.state.on_session_destroyed(lambda _ctx: SESSIONS.release(key))
    return True


def full_page(limits: Limits) -> pn.Column:
    """The page of a session that found the class full (no engine, no training).

    Parameters
    ----------
    limits : Limits
        The server's caps; the page names their ``max_sessions``.

    Returns
    -------
    panel.Column
        The page, showing :func:`full_message`.
    """
    return pn.Column(pn.pane.Markdown(full_message(limits), sizing_mode="stretch_width"),
                     sizing_mode="stretch_width", styles={"padding": "2em"})


def full_message(limits: Limits) -> str:
    """The Markdown shown to a session that finds the class full.

    Parameters
    ----------
    limits : Limits
        The caps (the text names ``max_sessions``).

    Returns
    -------
    str
        The message: how many sessions the class takes, who set that, and what to do.
    """
    return (f"## The class is full\n\nThis explorer server takes at most "
            f"**{limits.max_sessions}** sessions at a time "
            f"(set by whoever started it: {_source('max_sessions')}), and all are in use.\n\n"
            "Please try again in a minute (a place frees about 15–30 s after someone closes "
            "their tab), or ask your teacher.")


# ---------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the caps' flags (:data:`FLAGS`, ``--classroom``) to an ``rbmviz explore`` parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser; the flags go to a group "classroom limits".
    """
    group = parser.add_argument_group(
        "classroom limits", "caps per browser session, so that one student cannot starve the "
        "others (each also settable by its environment variable; default: no cap)")
    group.add_argument("--classroom", action="store_true",
                       help="sensible caps for ~30 students on one server: " + ", ".join(
                           f"{FLAGS[k]}{'' if isinstance(v, bool) else ' ' + str(v)}"
                           for k, v in CLASSROOM.items() if v is not True))
    for field, flag in FLAGS.items():
        if field == "full_speed":
            group.add_argument(flag, dest="full_speed", action="store_const", const=False,
                               default=None, help="switch off 'Full speed' (races keep their "
                               f"pace) [{ENV[field]}=0]")
            continue
        group.add_argument(flag, dest=field, type=_positive_int(flag), default=None,
                           metavar="N", help=f"at most N {_WHAT[field]} [{ENV[field]}]")


def _positive_int(flag):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {text!r}")
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {text!r}")
        return value
    return parse


def environ_from_arguments(args: argparse.Namespace,
                           environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment variables to set for the server from parsed ``rbmviz explore`` flags:
    explicit flags win over ``--classroom``, which wins over variables already set.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed flags of :func:`add_arguments`.
    environ : mapping of str to str, optional
        The environment the server inherits; default ``os.environ``.

    Returns
    -------
    dict of str to str
        Only the variables to change (validated through :class:`Limits`).
    """
    environ = os.environ if environ is None else environ
    values = dict(CLASSROOM) if getattr(args, "classroom", False) else {}
    for field in ENV:
        given = getattr(args, field, None)
        if given is not None:
            values[field] = given
    if not values:
        return {}
    base = dataclasses.asdict(Limits.from_env(environ))
    base.update(values)
    full = Limits(**base).to_env()
    return {ENV[f]: full[ENV[f]] for f in values}
