"""The plan of a sweep: :class:`RunSpec` (one run), :func:`derive_seed` and :func:`plan`
(trials × algorithms × grid points, with the paired per-trial seeds)."""
from __future__ import annotations

import difflib
import hashlib
import inspect
import pickle
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .. import algorithms as _algorithms
from .. import datasets as _datasets
from .. import settings as _settings
from .._validation import check_int, check_seed
from ..runs import METRICS as _METRICS

if TYPE_CHECKING:
    from ..runs import Run

__all__ = ["RunSpec", "Plan", "SweepNote", "derive_seed", "plan", "RESERVED_COLUMNS",
           "RECORD_COLUMNS", "STATUSES"]

#: the per-record columns, in frame order (metrics follow)
RECORD_COLUMNS = ("epoch", "updates", "gibbs_steps", "seconds")
#: the values of the ``status`` column
STATUSES = ("ok", "diverged", "failed", "interrupted")
#: column names a grid label may not take
RESERVED_COLUMNS = ("run_id", "trial", "algorithm", *RECORD_COLUMNS, "status", "error",
                    "wall_time", *_METRICS)

#: knobs that a trial sets (derived from the sweep seed) and a grid may therefore not vary
_TRIAL_KNOBS = ("init_seed", "seed")

# ---------------------------------------------------------------------------- the plan

@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep.

    Parameters
    ----------
    run_id : str
        Unique within the plan, e.g. ``"t03-pcd-learning_rate=0.3"``.
    trial : int
        Trial index (0-based); runs of one trial share their initial parameters.
    algorithm : str
        Training rule (:func:`rbmviz.algorithms.names`).
    settings : dict
        The complete flat settings dict (:func:`rbmviz.settings.to_dict` form).
    run_overrides : dict
        Extra :class:`~rbmviz.runs.Run` keyword arguments (``metrics=[...]``,
        ``exact_max_bits`` ...), passed to :func:`rbmviz.settings.make_run`; picklable.
    labels : dict
        The grid values of this run, copied onto every row of the frame.
    """

    run_id: str
    trial: int
    algorithm: str
    settings: dict
    run_overrides: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)

    def make_run(self) -> Run:
        """Load the data, build the model (from ``settings["init_seed"]``) and make the run.

        Returns
        -------
        rbmviz.runs.Run
            The run of this spec, not started.
        """
        objs = _settings.from_dict(self.settings)
        return _settings.make_run(*objs, **self.run_overrides)


class Plan(list):
    """The :class:`RunSpec` list of :func:`plan`, with the plan's notes.

    A ``list`` in every respect (compares equal to a list of the same runs).

    Parameters
    ----------
    specs : iterable of RunSpec
        The runs.
    notes : iterable of str
        The plan's notes (below).

    Attributes
    ----------
    notes : list of str
        What the plan applied differently from how it was asked, e.g. a grid knob that only
        some of the algorithms take, which varies their runs only.  :func:`plan` also issues
        each note as a :class:`SweepNote` warning, and :func:`rbmviz.sweep.sweep` puts them
        into the frame's ``attrs["notes"]``.
    """

    notes: list

    def __init__(self, specs: Sequence[RunSpec] = (), notes: Sequence[str] = ()) -> None:
        super().__init__(specs)
        self.notes = list(notes)


class SweepNote(UserWarning):
    """A note of :func:`plan`: a setting applied to some of the runs only (see :class:`Plan`)."""


def derive_seed(seed: int, trial: int, purpose: str) -> int:
    """The 63-bit seed of ``purpose`` in trial ``trial`` of a sweep seeded with ``seed``.

    A function of these three only (the whole ``purpose`` string is hashed).

    Parameters
    ----------
    seed : int
        The sweep's seed.
    trial : int
        Trial index.
    purpose : str
        ``"init"``: initial parameters; ``"chain/<algorithm>"`` or, paired, ``"chain"``:
        shuffles and Gibbs chains.

    Returns
    -------
    int
        A seed in ``[0, 2**63)``.
    """
    tag = int.from_bytes(hashlib.blake2b(purpose.encode(), digest_size=8).digest(), "little")
    state = np.random.SeedSequence([int(seed), int(trial), tag]).generate_state(1, np.uint64)[0]
    return int(state) & (2**63 - 1)


def _algorithm_list(algorithms) -> list[str]:
    if isinstance(algorithms, str):
        algorithms = [a.strip() for a in algorithms.split(",") if a.strip()]
    try:
        algorithms = list(algorithms)
    except TypeError:
        raise TypeError(f"algorithms must be a list of names or a comma-separated string, "
                        f"got {type(algorithms).__name__}") from None
    if not algorithms:
        raise ValueError(f"algorithms is empty; expected one or more of {_algorithms.names()}")
    for a in algorithms:
        if not isinstance(a, str):
            raise TypeError(f"algorithms must hold names (str), got {a!r}")
        _algorithms.get(a)                         # ValueError naming the valid ones
    dup = sorted({a for a in algorithms if algorithms.count(a) > 1})
    if dup:
        raise ValueError(f"algorithms lists {dup} more than once")
    return algorithms


def _all_knobs() -> dict:
    return {n: p for cls in _settings.SETTINGS_CLASSES for n, p in _settings.knobs(cls).items()}


def _takers() -> dict:
    """``{knob: [algorithms that take it]}`` for every algorithm knob of the settings, from
    the rules' own declarations (:func:`rbmviz.settings.algorithm_knobs`)."""
    out: dict = {}
    for a in _algorithms.names():
        for n in _settings.algorithm_knobs(a):
            out.setdefault(n, []).append(a)
    return out


def _data_users() -> dict:
    """``{data knob: [data sets that use it]}`` (:func:`rbmviz.settings.dataset_knobs`)."""
    out: dict = {}
    for d in _settings.DATASETS:
        for n in _settings.dataset_knobs(d):
            out.setdefault(n, []).append(d)
    return out


def _is_default(name: str, value, takers: list) -> bool:
    """Whether ``value`` is a declared default of knob ``name`` (the settings' own, or that of
    one of the rules ``takers``): a full settings dict (a ``settings.json``) names every
    knob, and a knob left at its default asks for nothing."""
    defaults = [_all_knobs()[name].default]
    defaults += [_settings.algorithm_defaults(a).get(name) for a in takers]
    return any(value == d for d in defaults)


def _refuse_untaken(where: str, name: str, algorithms: list, takers: list) -> None:
    raise ValueError(f"{where} sets {name!r}, which none of the sweep's algorithms "
                     f"{', '.join(algorithms)} takes (the rules that take it: "
                     f"{', '.join(takers)}); drop it or add one of those rules to algorithms")


def _refuse_unused_data(where: str, name: str, datasets: list, users: list) -> None:
    raise ValueError(f"{where} sets {name!r}, which the sweep's data set(s) "
                     f"{', '.join(datasets)} do not use (the data sets that use it: "
                     f"{', '.join(users)}); drop it or choose one of those data sets")


def _check_base_knobs(base: dict, algorithms: list, datasets: list) -> None:
    """A base setting no algorithm (or data set) of the sweep takes is refused, unless it is
    at a declared default."""
    takers, users, known = _takers(), _data_users(), _all_knobs()
    for name, value in base.items():
        if name in _TRIAL_KNOBS or name not in known:
            continue
        parsed = _parse(name, value, known, "base")
        if name in takers and not set(takers[name]) & set(algorithms):
            if not _is_default(name, parsed, takers[name]):
                _refuse_untaken(f"base {name}={value!r}", name, algorithms, takers[name])
        elif name in users and not set(users[name]) & set(datasets):
            if parsed != known[name].default:
                _refuse_unused_data(f"base {name}={value!r}", name, datasets, users[name])


def _grid_knobs(grid) -> dict:
    """``{grid key: set of knobs it varies}``."""
    out = {}
    for key, values in (grid or {}).items():
        values = list(values)
        if values and all(isinstance(v, dict) for v in values):
            out[key] = {k for v in values for k in v}
        else:
            out[key] = {key}
    return out


def _check_grid_knobs(grid, algorithms: list, datasets: list) -> tuple[dict, list]:
    """Refuse grid knobs that no algorithm / data set of the sweep takes; return ``({grid key:
    algorithms it applies to}, notes)`` for the keys only some of the algorithms take."""
    takers, users = _takers(), _data_users()
    applies, notes = {}, []
    for key, knobs in _grid_knobs(grid).items():
        rules = set()
        algorithm_knob = False
        for name in sorted(knobs):
            where = f"grid[{key!r}]" if knobs != {key} else "grid"
            if name in takers:
                algorithm_knob = True
                mine = [a for a in algorithms if a in takers[name]]
                if not mine:
                    _refuse_untaken(where, name, algorithms, takers[name])
                rules |= set(mine)
            elif name in users and not set(users[name]) & set(datasets):
                _refuse_unused_data(where, name, datasets, users[name])
            else:
                rules |= set(algorithms)         # a run-loop, model or data knob: every rule
        if algorithm_knob and rules != set(algorithms):
            mine = [a for a in algorithms if a in rules]
            others = [a for a in algorithms if a not in rules]
            applies[key] = mine
            notes.append(f"grid[{key!r}] applies to {', '.join(mine)} only (the algorithms of "
                         f"this sweep that take {', '.join(sorted(knobs))}); "
                         f"{', '.join(others)} {'runs' if len(others) == 1 else 'run'} once per other "
                         f"grid point, with an empty "
                         f"{key!r} label")
    return applies, notes


def _label_text(values: dict) -> str:
    return ",".join(f"{k}={_fmt(v)}" for k, v in values.items())


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _grid_points(grid) -> list[tuple[dict, dict]]:
    """``grid`` → list of (labels, knob values), the product over the grid's keys in order."""
    if grid is None:
        return [({}, {})]
    if not isinstance(grid, dict):
        raise TypeError(f"grid must be a dict {{knob: [values, ...]}}, got {type(grid).__name__}")
    known = _all_knobs()
    axes = []
    for key, values in grid.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"grid keys must be non-empty strings, got {key!r}")
        if key in RESERVED_COLUMNS:
            raise ValueError(f"grid key {key!r} is a column of the sweep frame; choose another "
                             f"name" + (" (use algorithms= for algorithms)" if key == "algorithm" else ""))
        if key in _TRIAL_KNOBS:
            raise ValueError(f"grid key {key!r}: {' and '.join(_TRIAL_KNOBS)} are set per trial from "
                             f"the sweep seed (vary trials= or seed= instead)")
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
            raise TypeError(f"grid[{key!r}] must be a list of values, got {values!r}")
        values = list(values)
        if not values:
            raise ValueError(f"grid[{key!r}] is empty; expected at least one value")
        n_dict = sum(isinstance(v, dict) for v in values)
        axis = []
        if n_dict == len(values):              # several knobs per point, labelled by the key
            for v in values:
                if not v:
                    raise ValueError(f"grid[{key!r}] holds an empty dict")
                bad = [k for k in v if k not in known or k in _TRIAL_KNOBS or k == "algorithm"]
                if bad:
                    ok = ", ".join(n for n in known if n not in _TRIAL_KNOBS and n != "algorithm")
                    raise ValueError(f"grid[{key!r}] sets {bad}, which are not sweepable settings; "
                                     f"sweepable settings: {ok}")
                parsed = {k: _parse(k, x, known, f"grid[{key!r}]") for k, x in v.items()}
                axis.append(({key: _label_text(parsed)}, parsed))
        elif n_dict:
            raise TypeError(f"grid[{key!r}] mixes dicts and plain values; use one or the other")
        else:
            if key not in known:
                close = difflib.get_close_matches(key, list(known), n=1)
                raise ValueError(f"grid key {key!r} is not a setting"
                                 + (f" (did you mean {close[0]!r}?)" if close else "")
                                 + "; a key that is not a setting needs dict values, e.g. "
                                   "{'budget': [{'k': 12}, {'k': 24, 'k_inner': 4}]}")
            parsed = [_parse(key, v, known, "grid") for v in values]
            axis = [({key: p}, {key: p}) for p in parsed]
        labels = [lab[key] for lab, _ in axis]
        if len(set(map(repr, labels))) != len(labels):
            raise ValueError(f"grid[{key!r}] repeats a value: {values}")
        axes.append(axis)
    points = [({}, {})]
    for axis in axes:
        points = [({**lab, **l2}, {**kv, **k2}) for lab, kv in points for l2, k2 in axis]
    return points


def _algorithm_settings(given, algorithms) -> dict:
    """Checked ``{algorithm: {knob: parsed value}}`` of :func:`plan`."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise TypeError(f"algorithm_settings must be a dict {{algorithm: {{knob: value}}}}, "
                        f"got {type(given).__name__}")
    known = _all_knobs()
    out = {}
    for alg, values in given.items():
        if alg not in algorithms:
            raise ValueError(f"algorithm_settings names {alg!r}, which is not among the "
                             f"sweep's algorithms {algorithms}")
        if not isinstance(values, dict):
            raise TypeError(f"algorithm_settings[{alg!r}] must be a dict {{knob: value}}, "
                            f"got {type(values).__name__}")
        bad = [k for k in values if k not in known or k in _TRIAL_KNOBS or k == "algorithm"]
        if bad:
            raise ValueError(f"algorithm_settings[{alg!r}] sets {bad}, which are not sweepable "
                             f"settings")
        takers = _takers()
        for k in values:
            if k in takers and alg not in takers[k]:
                raise ValueError(f"algorithm_settings[{alg!r}] sets {k!r}, which {alg} does not "
                                 f"take (the rules that take it: {', '.join(takers[k])})")
        out[alg] = {k: _parse(k, v, known, f"algorithm_settings[{alg!r}]") for k, v in values.items()}
    return out


def _parse(name, value, known, where):
    try:
        return _settings.parse_value(known[name], value)
    except ValueError as exc:
        raise ValueError(f"{where}: invalid value {value!r} for setting {name!r}: {exc}") from None


def plan(base: dict, *, algorithms: str | Sequence[str], trials: int, grid: dict | None = None, seed: int = 0,
         run_overrides: dict | None = None, paired_chains: bool = False,
         algorithm_settings: dict | None = None) -> list[RunSpec]:
    """The runs of a sweep: trials × algorithms × grid points, in that nesting order.

    Parameters
    ----------
    base : dict
        Flat settings (:func:`rbmviz.settings.to_dict` form; missing knobs keep their
        defaults; values may be text).  ``algorithm``, ``init_seed`` and ``seed`` are set by
        the sweep.
    algorithms : list of str or str
        Names, or one comma-separated string such as ``"cd,pcd,sdcp"``.
    trials : int >= 1
        Independent repetitions (the papers: 25 on small data, 10 on large).
    grid : dict, optional
        ``{knob: [values, ...]}``, e.g. ``{"learning_rate": [0.3, 0.5], "k": [12, 24]}``; or
        ``{name: [dict, ...]}`` to vary several knobs together, e.g.
        ``{"budget": [{"k": 12}, {"k": 24, "k_inner": 4}]}`` (column ``budget`` holds
        ``"k=12"``, ``"k=24,k_inner=4"``).  The product of all keys is taken.
    seed : int
        Sweep seed.  Trial ``t`` uses ``init_seed = derive_seed(seed, t, "init")`` for every
        algorithm and grid point: the runs of a trial start from identical parameters (a
        paired comparison); trials differ.  The chain seed is
        ``derive_seed(seed, t, "chain/<algorithm>")``: the same for all grid points of an
        algorithm, different between algorithms.
    paired_chains : bool
        Give every algorithm of a trial the *same* chain seed ``derive_seed(seed, t, "chain")``
        (common random numbers).  Then rules that coincide mathematically give identical
        curves (S-DCP with d = 1 and CD-K′), but so can rules that merely *couple*: with the
        same uniforms, PCD's persistent chains and CD's restarted ones meet within a few
        steps while the model mixes fast, and the two curves coincide — an artefact of the
        shared stream, not a property of the rules.  Off by default.
    run_overrides : dict, optional
        Extra :class:`~rbmviz.runs.Run` keyword arguments for every run (picklable).
    algorithm_settings : dict, optional
        ``{algorithm: {knob: value}}``: settings of one algorithm's runs only, over the base
        and the grid point — e.g. a rule with its own step scale (SSD's
        ``learning_rate`` multiplies a spectral-norm direction, not a gradient).  A grid key
        it sets takes the algorithm's value in that algorithm's labels (and run ids), so the
        frame shows what ran.

    Returns
    -------
    Plan
        The runs (a list of :class:`RunSpec` with :attr:`Plan.notes`); algorithm-specific
        knobs an algorithm does not take (``k_inner`` for ``cd``, ``n_chains`` for all but
        ``pcd``) are reset to their defaults in its settings.

    Raises
    ------
    ValueError, TypeError
        An unknown algorithm or knob, a bad value (naming it), or a combination an algorithm
        refuses (e.g. ``k_inner`` not dividing ``k``), found before anything runs.  Also: a
        base setting or grid knob that none of the algorithms (or none of the data sets)
        takes, naming the rules that take it (a base setting at its declared default is
        accepted: a full ``settings.json`` names every knob); a ``batch_size`` larger than
        the training set where its size is known (generated and bundled data sets, or
        ``limit``); ``run_overrides`` keys that are not :class:`~rbmviz.runs.Run` arguments,
        and values the run refuses (the plan builds the run of the first spec of each
        algorithm to check them — of the first spec only for data sets read from files).

    Warns
    -----
    SweepNote
        For a grid knob that only some of the algorithms take: it varies their runs only,
        the others run once per other grid point with an empty label (also in
        :attr:`Plan.notes`).
    """
    if not isinstance(base, dict):
        raise TypeError(f"base must be a flat settings dict, got {type(base).__name__}")
    algorithms = _algorithm_list(algorithms)
    trials = check_int(trials, "trials", low=1)
    seed = check_seed(seed)
    run_overrides = {} if run_overrides is None else run_overrides
    if not isinstance(run_overrides, dict):
        raise TypeError(f"run_overrides must be a dict of Run keyword arguments, "
                        f"got {type(run_overrides).__name__}")
    try:
        pickle.dumps(run_overrides)
    except Exception as exc:
        raise TypeError(f"run_overrides must be picklable (runs may execute in other processes): "
                        f"{exc}") from None
    _check_run_override_keys(run_overrides)
    base_objs = _settings.from_dict(dict(base))        # unknown knob / bad value: ValueError
    base_flat = _settings.to_dict(*base_objs)
    points = _grid_points(grid)
    datasets = sorted({values.get("dataset", base_flat["dataset"]) for _, values in points})
    _check_base_knobs(base, algorithms, datasets)
    applies, notes = _check_grid_knobs(grid, algorithms, datasets)
    own = _algorithm_settings(algorithm_settings, algorithms)
    for alg, values in own.items():
        varied = [k for k in values if len({repr(lab.get(k)) for lab, _ in points}) > 1]
        if varied:
            raise ValueError(f"algorithm_settings[{alg!r}] sets {varied}, which the grid varies: "
                             f"{alg}'s grid points would all be one run")
    defaults = {n: p.default for n, p in _all_knobs().items()}
    specific = {n for a in _algorithms.names() for n in _settings.algorithm_knobs(a)}
    specific -= set.intersection(*(set(_settings.algorithm_knobs(a)) for a in _algorithms.names()))
    width = len(str(trials - 1))
    specs, checked, rows = [], set(), {}
    for trial in range(trials):
        for algorithm in algorithms:
            trial_seeds = {"init_seed": derive_seed(seed, trial, "init"),
                           "seed": derive_seed(seed, trial, "chain" if paired_chains
                                               else f"chain/{algorithm}")}
            takes = set(_settings.algorithm_knobs(algorithm))
            seen = set()
            for labels, values in points:
                mine = own.get(algorithm, {})
                # a grid key the algorithm does not take: one run, with an empty label
                labels = {k: (None if algorithm not in applies.get(k, algorithms)
                              else mine.get(k, v)) for k, v in labels.items()}
                if repr(labels) in seen:
                    continue
                seen.add(repr(labels))
                flat = {**base_flat, **values, **mine, "algorithm": algorithm, **trial_seeds}
                for n in specific - takes:
                    flat[n] = defaults[n]
                try:
                    objs = _settings.from_dict(flat)
                except ValueError as exc:
                    where = f" at grid point {_label_text(labels)}" if labels else ""
                    raise ValueError(f"{exc}{where}") from None
                _check_batch_size(objs, run_overrides, labels, rows)
                flat = _settings.to_dict(*objs)
                key = repr(sorted((k, v) for k, v in flat.items() if k not in _TRIAL_KNOBS))
                if key not in checked:            # the algorithm's own checks, before running
                    checked.add(key)
                    try:
                        _algorithms.create(algorithm, **_settings.algorithm_kwargs(objs[2]))
                    except (ValueError, TypeError) as exc:
                        where = f" at grid point {_label_text(labels)}" if labels else ""
                        raise type(exc)(f"algorithm {algorithm!r}{where}: {exc}") from None
                run_id = f"t{trial:0{width}d}-{algorithm}" + "".join(
                    f"-{k}={_fmt(v)}" for k, v in labels.items() if v is not None)
                specs.append(RunSpec(run_id, trial, algorithm, flat, dict(run_overrides),
                                     dict(labels)))
    if run_overrides:
        _check_run_override_values(specs)
    for note in notes:
        warnings.warn(note, SweepNote, stacklevel=2)
    return Plan(specs, notes)


#: :class:`~rbmviz.runs.Run` arguments a sweep sets itself (not ``run_overrides``)
_RUN_OWN = ("rbm", "data", "algorithm", "self")


def _run_arguments() -> list:
    from ..runs import Run
    sig = inspect.signature(Run.__init__)
    return [n for n, p in sig.parameters.items()
            if n not in _RUN_OWN and p.kind is not inspect.Parameter.VAR_KEYWORD]


def _check_run_override_keys(run_overrides: dict) -> None:
    """Keys of ``run_overrides``: :class:`~rbmviz.runs.Run` arguments, not the rules' knobs
    (which belong in ``base``, ``grid`` or ``algorithm_settings``, where the plan checks them)."""
    allowed = _run_arguments()
    takers = _takers()
    for key in run_overrides:
        if not isinstance(key, str):
            raise TypeError(f"run_overrides keys must be Run argument names (str), got {key!r}")
        if key in takers and key not in allowed:
            raise ValueError(f"run_overrides[{key!r}]: {key} is a knob of the rules "
                             f"{', '.join(takers[key])}; set it in base, grid or "
                             f"algorithm_settings (where the plan checks which rules take it)")
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            raise ValueError(f"run_overrides has the unknown key {key!r}"
                             + (f" (did you mean {close[0]!r}?)" if close else "")
                             + f"; expected rbmviz.runs.Run arguments: {', '.join(allowed)}")


def _check_run_override_values(specs: list) -> None:
    """Build the run of the first spec of each algorithm (of the first only when its data
    set is read from files), so that ``run_overrides`` values a run refuses are refused by
    the plan, with the run's own message, instead of failing every run."""
    done = set()
    for spec in specs:
        if spec.algorithm in done:
            continue
        if done and _settings.DATASETS[spec.settings["dataset"]].kind == "file":
            break
        done.add(spec.algorithm)
        objs = _settings.from_dict(spec.settings)
        try:
            _settings.make_run(*objs, **spec.run_overrides)
        except (ValueError, TypeError) as exc:
            if isinstance(exc, _datasets.DatasetNotFoundError):
                raise
            raise type(exc)(f"run_overrides {sorted(spec.run_overrides)} refused by the run "
                            f"{spec.run_id}: {exc}") from None


def _train_rows(data_settings, cache: dict):
    """The number of training rows of ``data_settings`` where it is known without reading a
    file (generated and bundled data sets), else the upper bound ``limit`` (or None)."""
    rule = _settings.DATASETS[data_settings.dataset]
    knobs = tuple((k, getattr(data_settings, k)) for k in ("dataset", *rule.knobs))
    if knobs not in cache:
        if rule.kind in ("toy", "bundled"):
            cache[knobs] = (len(_settings.load_data(data_settings)[0]), "rows")
        elif data_settings.limit is not None:
            cache[knobs] = (data_settings.limit, "rows at most (limit)")
        else:
            cache[knobs] = (None, "")
    return cache[knobs]


def _check_batch_size(objs, run_overrides, labels, cache) -> None:
    """A ``batch_size`` larger than the training set is refused (where its size is known)."""
    batch = run_overrides.get("batch_size", objs[2].batch_size)
    if batch is None or not isinstance(batch, (int, np.integer)):
        return
    n, what = _train_rows(objs[0], cache)
    if n is not None and batch > n:
        where = f" at grid point {_label_text({k: v for k, v in labels.items() if v is not None})}" \
            if any(v is not None for v in labels.values()) else ""
        raise ValueError(f"batch_size={batch} is larger than the training set of "
                         f"{objs[0].dataset!r} ({n} {what}){where}; choose batch_size <= {n} "
                         f"(none = the full training set)")
