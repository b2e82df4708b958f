"""Every knob of a training run, defined once: data set, model, training rule.

The three classes below are ``param.Parameterized``: each knob declares its default, its
bounds and its help text in one place — the algorithm knobs of :class:`TrainSettings`
(``k``, ``learning_rate``, ``n_chains``, ``damping`` ...) are not even declared here but
copied from each rule's one declaration (``rbmviz.algorithms.get(name).Knobs``, see
:mod:`rbmviz.algorithms.knobs`), whose bounds keep a run from hanging
(:mod:`rbmviz.bounds`) — and

* the explorer app draws their widgets with ``pn.Param`` (labels, sliders from ``softbounds``);
* the ``rbmviz train`` command builds one ``--kebab-case`` option per knob (:mod:`rbmviz.cli`);
* :class:`rbmviz.estimator.RBMEstimator` takes the same algorithm knobs as parameters;
* notebooks set them as keyword arguments, e.g. ``TrainSettings(algorithm="pcd", k=12)``.

Assigning a value out of bounds raises a ``ValueError`` naming the knob (param checks it).

Helpers turn settings into a run:

>>> from rbmviz.settings import DataSettings, ModelSettings, TrainSettings, make_run
>>> run = make_run(DataSettings(dataset="bars_and_stripes", D=3), ModelSettings(n_hidden=4),
...                TrainSettings(algorithm="pcd", k=12, learning_rate=0.3, epochs=100, eval_every=50))
>>> [rec["epoch"] for rec in run]
[0, 50, 100]

and to and from one flat ``dict`` of all knobs (:func:`to_dict`, :func:`from_dict`; names are
unique across the three classes), which the CLI writes as ``settings.json`` and the explorer
mirrors to its URL.

This module imports param only (no Panel).
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from . import algorithms as _algorithms
from . import datasets as _datasets
from .algorithms import knobs as _knobs
from . import presets as _presets
from .bounds import EPOCHS_MAX, MAX_WEIGHT_DEFAULT, SEED_MAX, UNITS_MAX, narrowed, parameters_doc
from .model import RBM
from .runs import Run

__all__ = [
    "DataSettings", "ModelSettings", "TrainSettings", "SETTINGS_CLASSES",
    "load_data", "build_model", "algorithm_kwargs", "make_run",
    "to_dict", "from_dict", "knobs", "parse_value", "set_knob", "clean_param_error",
    "algorithm_knobs", "algorithm_defaults", "live_knobs", "dataset_knobs",
    "ALGORITHM_KNOBS_EXCLUDED",
    "DATASETS", "DatasetRule", "TEST_FRACTION",
]

_SEED_MAX = SEED_MAX


# ---------------------------------------------------------------------------- data sets

@dataclass(frozen=True)
class DatasetRule:
    """How :func:`load_data` builds the train/test pair of one data set.

    Parameters
    ----------
    kind : str
        "toy" (generated complete pattern set; test = train), "bundled" (ships with a
        dependency; fixed held-out split), "file" (read from the data directory).
    knobs : tuple of str
        The :class:`DataSettings` knobs the data set uses.
    splits : tuple of str or None
        For data sets with an official split, the (train, test) split names.
    test_rows : int or None
        Rows of the official test split (so that ``limit`` reads only what it keeps).
    """

    kind: str
    knobs: tuple[str, ...]
    splits: tuple[str, str] | None = None
    test_rows: int | None = None


#: the rule of every data set :class:`DataSettings` offers
DATASETS: dict[str, DatasetRule] = {
    **{name: DatasetRule("toy", size_knobs) for name, size_knobs in _presets.DATA_KNOBS.items()},
    "digits": DatasetRule("bundled", ("binarize", "data_seed", "limit")),
    "mnist": DatasetRule("file", ("binarize", "data_seed", "limit"), ("train", "test"), 10_000),
    "binarized_mnist": DatasetRule("file", ("limit",), ("train", "test"), 10_000),
    "omniglot": DatasetRule("file", ("binarize", "data_seed", "limit"), ("background", "evaluation"),
                            13_180),
    "cbcl": DatasetRule("file", ("binarize", "data_seed", "limit")),
}

#: fraction of the rows held out (the last ones) as the test set of data sets without an
#: official split (digits, CBCL)
TEST_FRACTION = 0.2


def _dataset_names() -> list[str]:
    return [n for n in _datasets.names() if n in DATASETS]


class DataSettings(param.Parameterized):
    """Which data set to train on, and its size knobs.

    Only the knobs of the chosen data set matter (:func:`dataset_knobs`); the test-set rule is
    that of :func:`load_data`.
    """

    dataset = param.Selector(
        default="bars_and_stripes", objects=_dataset_names(),
        doc="Data set. Toy sets (bars_and_stripes, shifting_bar, diag, ball_1d) are generated; "
            "digits ships with scikit-learn; mnist, binarized_mnist, omniglot and cbcl are read "
            "from the data directory (see `rbmviz info`).")
    # the generated data sets' size knobs: copies of their declaration (rbmviz.presets)
    D = narrowed(_presets.DataKnobs.param.D)
    N = narrowed(_presets.DataKnobs.param.N)
    B = narrowed(_presets.DataKnobs.param.B)
    d = narrowed(_presets.DataKnobs.param.d)
    binarize = param.Selector(
        default="threshold", objects=["threshold", "stochastic"],
        doc="Grey-level data to 0/1: 'threshold' (a pixel is 1 when at least half on) or "
            "'stochastic' (1 with probability equal to its grey level, one fixed draw from "
            "data_seed).")
    data_seed = param.Integer(
        0, bounds=(0, _SEED_MAX), softbounds=(0, 100),
        doc="Seed of the stochastic binarisation.")
    limit = param.Integer(
        None, allow_None=True, bounds=(1, None), softbounds=(1, 60000),
        doc="Use at most this many rows of each split (real data sets only); none = all.")


class ModelSettings(param.Parameterized):
    """The RBM's size and initial parameters (binary visible and hidden units)."""

    n_hidden = param.Integer(
        4, bounds=(1, UNITS_MAX), softbounds=(1, 1000), label="Hidden units",
        doc="Number of hidden units. Exact log-likelihoods need a layer of at most 20 units.")
    init = param.Selector(
        default="normal", objects=["normal", "uniform", "zeros"], label="Weight init",
        doc="Initial weights: 'normal' W ~ N(0, scale²) (Upadhya & Sastry), 'uniform' "
            "W ~ U[−scale, scale] (Fischer & Igel), 'zeros'.")
    init_scale = param.Number(
        0.01, bounds=(0.0, 10.0), softbounds=(0.0, 1.0), label="Init scale",
        doc="Standard deviation (normal) or half-width (uniform) of the initial weights.")
    visible_bias = param.Selector(
        default="base_rate", objects=["base_rate", "zeros"],
        doc="Initial visible biases: 'base_rate' b_i = logit(mean of pixel i in the training "
            "data) (Hinton's practical guide), or 'zeros'. Hidden biases start at 0.")
    dtype = param.Selector(
        default="float64", objects=["float64", "float32"],
        doc="Float type of the parameters: float64 for small models and exact work, float32 "
            "for speed on large models.")
    init_seed = param.Integer(
        0, bounds=(0, _SEED_MAX), softbounds=(0, 100), label="Init seed",
        doc="Seed of the initial weights.")


def _document(cls, extra: str = "") -> None:
    """Append to ``cls``'s docstring the Parameters section written from its declarations."""
    cls.__doc__ = cls.__doc__.rstrip() + "\n\n" + parameters_doc(cls) + extra


_document(DataSettings)
_document(ModelSettings)

#: knobs of the algorithms that are not :class:`TrainSettings` knobs: S-DCP's ``d`` (its name
#: is the data sets' ``d``; in the settings ``d = k / k_inner``)
ALGORITHM_KNOBS_EXCLUDED = ("d",)


class _RunKnobs(param.Parameterized):
    algorithm = param.Selector(
        default="cd", objects=_algorithms.names(),
        doc="Training rule: cd = contrastive divergence CD-k (chains start at the data); "
            "pcd = persistent CD (chains carry over); cg = centered gradient; sdcp / csdcp = "
            "(centered) stochastic difference-of-convex programming; ssd = stochastic spectral "
            "descent; tap = TAP training (deterministic TAP fixed points replace the Gibbs "
            "chains, Tramel et al. 2018).")


#: every algorithm's knobs, copied from their one declaration (``cls.Knobs``)
_AlgorithmKnobs = param.parameterized_class(
    "AlgorithmKnobs",
    _knobs.union_params([_algorithms.get(n) for n in _algorithms.names()],
                        exclude=ALGORITHM_KNOBS_EXCLUDED),
    bases=_RunKnobs)


class TrainSettings(_AlgorithmKnobs):
    """The training rule and the run loop's knobs.

    The algorithm knobs (``k``, ``learning_rate``, ``n_chains``, ...) are not declared here:
    they are copies of each rule's ``Knobs`` (:mod:`rbmviz.algorithms.knobs`), so their bounds
    and docs are those of the rule.  Defaults follow the chosen algorithm: a knob left at one
    rule's default takes the new rule's default when ``algorithm`` changes (e.g. TAP's learning
    rate 0.005, S-DCP's budget d = 3, K′ = 4); values set explicitly stay.  Only the knobs the
    chosen algorithm accepts are passed to it (:func:`algorithm_kwargs`,
    :func:`algorithm_knobs`); :func:`live_knobs` names those a running algorithm accepts.
    """

    batch_size = param.Integer(
        None, allow_None=True, bounds=(1, None), softbounds=(1, 1000),
        doc="Training rows per update; none = the full training set (full batch).")
    epochs = param.Integer(
        100, bounds=(0, EPOCHS_MAX), softbounds=(0, 10_000),
        doc="Passes over the training set.")
    eval_every = param.Integer(
        1, allow_None=True, bounds=(1, EPOCHS_MAX), softbounds=(1, 1000),
        doc="Epochs between records (evaluations); records are also made at epoch 0 and at "
            "the last epoch.  none = auto: the run measures what evaluation costs and spaces "
            "the records so that it takes at most ~10% of the time (rbmviz.runs.Run "
            "eval_every='auto'; large models then also record within an epoch).")
    max_weight = param.Number(   # the bounds of rbmviz.runs.Run's check: any finite value > 0
        MAX_WEIGHT_DEFAULT, bounds=(0.0, None), inclusive_bounds=(False, True), softbounds=(1.0, 1e4),
        doc="The run stops as diverged when a parameter grows beyond this magnitude.")

    def __init__(self, **params: Any) -> None:
        algorithm = params.get("algorithm", type(self).param["algorithm"].default)
        if algorithm in _algorithms.names():
            own = algorithm_defaults(algorithm)
            params = {**{n: v for n, v in own.items() if n not in params}, **params}
        super().__init__(**params)
        self.param.watch(self._follow_algorithm_defaults, "algorithm")

    def _follow_algorithm_defaults(self, event):
        old = algorithm_defaults(event.old) if event.old in _algorithms.names() else {}
        new = algorithm_defaults(event.new)
        union = {n: p.default for n, p in knobs(TrainSettings).items()}
        with param.parameterized.batch_call_watchers(self):
            for n, value in new.items():
                if getattr(self, n) == old.get(n, union[n]) and value != getattr(self, n):
                    setattr(self, n, value)



_document(TrainSettings, "    **params\n        The knobs above, by name (a knob not given takes the chosen "
                         "algorithm's default).\n")

SETTINGS_CLASSES = (DataSettings, ModelSettings, TrainSettings)


def knobs(cls_or_obj: Any) -> dict[str, param.Parameter]:
    """The knobs of a settings class (or instance) in declaration order, ``name`` excluded.

    Parameters
    ----------
    cls_or_obj : type or param.Parameterized
        A settings class or instance.

    Returns
    -------
    dict
        ``{knob: param.Parameter}``.
    """
    return {n: p for n, p in cls_or_obj.param.objects("existing").items() if n != "name"}


def _check_unique_names():
    seen: dict[str, str] = {}
    for cls in SETTINGS_CLASSES:
        for n in knobs(cls):
            if n in seen:  # pragma: no cover - guards future edits
                raise TypeError(f"knob {n!r} is defined in both {seen[n]} and {cls.__name__}; "
                                f"names must be unique across the settings classes")
            seen[n] = cls.__name__


_check_unique_names()


# ---------------------------------------------------------------------------- helpers

def algorithm_knobs(algorithm: str) -> list[str]:
    """The :class:`TrainSettings` knobs that algorithm ``algorithm`` takes.

    The intersection of its constructor's arguments and the knobs (e.g. ``n_chains`` only for
    ``pcd``).

    Parameters
    ----------
    algorithm : str
        A registered training rule (:func:`rbmviz.algorithms.names`), e.g. ``"pcd"``.

    Returns
    -------
    list of str
        Knob names, in :class:`TrainSettings` order.
    """
    accepted = _algorithms.accepted_settings(algorithm)
    return [n for n in knobs(TrainSettings) if n in accepted]


def algorithm_defaults(algorithm: str) -> dict:
    """The defaults of algorithm ``algorithm`` for the :class:`TrainSettings` knobs it takes.

    Its own declaration, e.g. ``learning_rate`` 0.005 for ``tap``.

    Parameters
    ----------
    algorithm : str
        As in :func:`algorithm_knobs`.

    Returns
    -------
    dict
        ``{knob: default}``.
    """
    own = _knobs.defaults(_algorithms.get(algorithm))
    return {n: own[n] for n in algorithm_knobs(algorithm)}


def live_knobs(algorithm: str) -> tuple[str, ...]:
    """The knobs a running ``algorithm`` accepts between updates (``cls.LIVE_KNOBS``).

    Parameters
    ----------
    algorithm : str
        The rule's registry name.

    Returns
    -------
    tuple of str
        The names of its live knobs, e.g. ``("k", "learning_rate", "momentum",
        "weight_decay")`` for ``"cd"``.
    """
    return tuple(_algorithms.get(algorithm).LIVE_KNOBS)


def dataset_knobs(dataset: str) -> list[str]:
    """The :class:`DataSettings` knobs data set ``dataset`` uses (besides ``dataset``).

    Parameters
    ----------
    dataset : str
        A registered data set (:func:`rbmviz.datasets.names`).

    Returns
    -------
    list of str
        The names of its own knobs, e.g. ``["D"]`` for Bars & Stripes.
    """
    return list(_rule(dataset).knobs)


def _rule(dataset: str) -> DatasetRule:
    try:
        return DATASETS[dataset]
    except KeyError:
        raise ValueError(f"no train/test rule for data set {dataset!r}; known: {sorted(DATASETS)} "
                         f"(add one to rbmviz.settings.DATASETS)") from None


def _binarize(X: np.ndarray, mode: str, seed: int) -> np.ndarray:
    """Grey levels in [0, 1] to 0/1 floats: ``X >= 0.5`` or Bernoulli(X) drawn from ``seed``."""
    if mode == "threshold":
        return (X >= 0.5).astype(np.float64)
    rng = np.random.default_rng(seed)
    return (rng.random(X.shape) < X).astype(np.float64)


def _held_out(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n_test = int(len(X) * TEST_FRACTION)
    return X[: len(X) - n_test], X[len(X) - n_test:]


def load_data(settings: DataSettings) -> tuple[np.ndarray, np.ndarray]:
    """Load (or generate) the training and test rows of ``settings.dataset``.

    Rule for the test set:

    * toy sets (``bars_and_stripes``, ``shifting_bar``, ``diag``, ``ball_1d``): the test set
      **is** the training set — both are the complete pattern set (the papers' ATLL);
    * ``mnist``, ``binarized_mnist``: the official ``train`` / ``test`` files;
      ``omniglot``: the ``background`` / ``evaluation`` alphabets;
    * ``digits`` (1797 images) and ``cbcl`` (2429 faces), which have no official split: a fixed
      deterministic split in file order, the last ``floor(0.2 n)`` rows are the test set and the
      rest the training set (digits: 1438 / 359).

    Grey-level data (mnist, omniglot, digits, cbcl) are binarised by ``settings.binarize``;
    ``settings.limit`` keeps the first ``limit`` rows of each split (real data sets only).

    Parameters
    ----------
    settings : DataSettings
        The data set and its size knobs.

    Returns
    -------
    train, test : numpy.ndarray
        Float64 0/1 rows, shape (n_rows, n_visible).

    Raises
    ------
    rbmviz.datasets.DatasetNotFoundError
        A data set file is missing (the message says where to put it).
    ValueError
        Bad sizes (e.g. ``B >= N``) or a corrupt data file.
    """
    s = settings
    name = s.dataset
    rule = _rule(name)
    if rule.kind == "toy":
        X = _datasets.load(name, **{k: getattr(s, k) for k in rule.knobs})
        return X, X
    limit = s.limit
    test_limit = None if limit is None or rule.test_rows is None else min(limit, rule.test_rows)
    if name == "digits":
        X = _datasets.digits(binarize=None)          # grey levels / 16, in [0, 1]
        train, test = _held_out(_binarize(X, s.binarize, s.data_seed))
    elif name == "cbcl":
        train, test = _held_out(_binarize(_datasets.cbcl(), s.binarize, s.data_seed))
    elif name == "binarized_mnist":
        tr, te = rule.splits
        train = _datasets.binarized_mnist(split=tr, limit=limit)
        test = _datasets.binarized_mnist(split=te, limit=test_limit)
    else:  # mnist, omniglot: binarised by the loader
        tr, te = rule.splits
        kw = {"binarize": s.binarize, "seed": s.data_seed}
        train = _datasets.load(name, split=tr, limit=limit, **kw)
        test = _datasets.load(name, split=te, limit=test_limit, **kw)
    if limit is not None:
        train, test = train[:limit], test[:limit]
    return train, test


def build_model(model_settings: ModelSettings, train_data: np.ndarray) -> RBM:
    """A fresh :class:`~rbmviz.model.RBM` initialised as ``model_settings`` says.

    ``n_visible = train_data.shape[1]``; visible biases at the base rate of ``train_data`` if
    asked.

    Parameters
    ----------
    model_settings : ModelSettings
        Size and initialisation.
    train_data : numpy.ndarray, shape (n_samples, n_visible)
        Training rows.

    Returns
    -------
    RBM
        The new model.

    Raises
    ------
    ValueError
        If ``train_data`` is not 2-D.
    """
    m = model_settings
    train_data = np.asarray(train_data)
    if train_data.ndim != 2:
        raise ValueError(f"train_data must be 2-D (n_samples, n_visible), got shape {train_data.shape}")
    return RBM(train_data.shape[1], m.n_hidden, seed=m.init_seed, init=m.init, scale=m.init_scale,
               data=train_data if m.visible_bias == "base_rate" else None, dtype=m.dtype)


def algorithm_kwargs(train_settings: TrainSettings) -> dict:
    """Keyword arguments for ``rbmviz.algorithms.create(train_settings.algorithm, **kw)``.

    The knobs that algorithm accepts (learning rate and seed included), nothing else.

    Parameters
    ----------
    train_settings : TrainSettings
        The settings.

    Returns
    -------
    dict
        ``{knob: value}``.

    Examples
    --------
    >>> sorted(algorithm_kwargs(TrainSettings(algorithm="cd")))
    ['k', 'learning_rate', 'momentum', 'seed', 'weight_decay']
    """
    t = train_settings
    return {n: getattr(t, n) for n in algorithm_knobs(t.algorithm)}


def make_run(data_settings: DataSettings, model_settings: ModelSettings,
             train_settings: TrainSettings, **run_overrides: Any) -> Run:
    """Load the data, build the model and return the :class:`~rbmviz.runs.Run` (not started).

    The model is ``run.rbm``, the rows ``run.data`` / ``run.test_data``.

    Parameters
    ----------
    data_settings : DataSettings
        The data set.
    model_settings : ModelSettings
        The model.
    train_settings : TrainSettings
        The rule and the run loop's knobs.
    **run_overrides
        Replace or add :class:`Run` arguments, e.g. ``epochs=None`` for an open-ended run in
        the dashboard, ``metrics=[...]``, ``test_data=...``.

    Returns
    -------
    Run
        The run.
    """
    train, test = load_data(data_settings)
    rbm = build_model(model_settings, train)
    t = train_settings
    kwargs = dict(epochs=t.epochs, batch_size=t.batch_size,
                  eval_every="auto" if t.eval_every is None else t.eval_every,
                  max_weight=t.max_weight, test_data=test, **algorithm_kwargs(t))
    kwargs.update(run_overrides)
    return Run(rbm, train, t.algorithm, **kwargs)


# ---------------------------------------------------------------------------- flat dicts

#: a knob's kind ("choice", "bool", "int", "float" or "other"), as the command line reads it
_param_kind = _knobs.knob_kind

_NONE_WORDS = ("none", "null", "")


def parse_value(p: param.Parameter, value: Any) -> Any:
    """Convert ``value`` (a Python value, or text) to the type of knob ``p``.

    Text from a command line / URL query / JSON: ``"12"`` → 12 for Integer knobs, ``"0.3"`` →
    0.3 for Number knobs, ``"none"`` → None where None is allowed.  Bounds are not checked
    here: param checks them when the value is assigned.

    Parameters
    ----------
    p : param.Parameter
        The knob's declaration: its kind and whether None is allowed.
    value : object
        A Python value, or its text.

    Returns
    -------
    object
        ``value`` in the knob's type (its bounds unchecked).

    Raises
    ------
    ValueError
        Saying what was expected.
    """
    kind = _knobs.knob_kind(p)
    if value is None or (isinstance(value, str) and value.strip().lower() in _NONE_WORDS
                         and kind != "choice"):
        if p.allow_None:
            return None
        raise ValueError(f"expected {_expected(p)}, got {value!r}")
    if kind == "int":
        if isinstance(value, str):
            try:
                value = int(value.strip().replace("_", ""))
            except ValueError:
                raise ValueError(f"expected {_expected(p)}, got {value!r}") from None
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"expected {_expected(p)}, got {value!r}")
        return int(value)
    if kind == "float":
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise ValueError(f"expected {_expected(p)}, got {value!r}") from None
        elif isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"expected {_expected(p)}, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"expected a finite number, got {value!r}")
        return value
    if kind == "bool" and isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _expected(p: param.Parameter) -> str:
    kind = _knobs.knob_kind(p)
    what = {"int": "an integer", "float": "a number", "bool": "true or false"}.get(kind, "a value")
    if kind == "choice":
        what = "one of " + ", ".join(map(str, p.objects))
    return what + (" or none" if p.allow_None else "")


def clean_param_error(exc: Exception) -> str:
    """param's message without its ``"Integer parameter 'TrainSettings.k' "`` prefix.

    E.g. ``"must be at least 1, not 0."`` (for messages that name the knob another way).

    Parameters
    ----------
    exc : Exception
        An error raised by param.

    Returns
    -------
    str
        The message.
    """
    return re.sub(r"^\w+ parameter '[\w.]+' ", "", str(exc))


def to_dict(data_settings: DataSettings, model_settings: ModelSettings,
            train_settings: TrainSettings, *, changed_only: bool = False) -> dict:
    """One flat ``{knob: value}`` dict of the three settings objects (JSON-ready values).

    In declaration order: data knobs, model knobs, training knobs.

    Parameters
    ----------
    data_settings : DataSettings
        The data settings.
    model_settings : ModelSettings
        The model settings.
    train_settings : TrainSettings
        The training settings.
    changed_only : bool
        Keep only the values that differ from the defaults (short URLs).

    Returns
    -------
    dict
        ``{knob: value}``.

    Raises
    ------
    TypeError
        If an argument is not the settings class it should be.
    """
    out = {}
    for obj, cls in zip((data_settings, model_settings, train_settings), SETTINGS_CLASSES):
        if not isinstance(obj, cls):
            raise TypeError(f"expected a {cls.__name__}, got {type(obj).__name__}")
        for n, p in knobs(cls).items():
            v = getattr(obj, n)
            if changed_only and v == p.default:
                continue
            out[n] = v
    return out


def from_dict(values: dict) -> tuple[DataSettings, ModelSettings, TrainSettings]:
    """Settings objects from a flat dict as written by :func:`to_dict`.

    Missing knobs keep their defaults.  Values may be text (URL query strings): see
    :func:`parse_value`.

    Parameters
    ----------
    values : dict
        ``{knob: value}``.

    Returns
    -------
    tuple
        ``(DataSettings, ModelSettings, TrainSettings)``.

    Raises
    ------
    TypeError
        If ``values`` is not a dict.
    ValueError
        For an unknown knob (with the closest known name) or a bad value (naming the knob and
        what it accepts).
    """
    if not isinstance(values, dict):
        raise TypeError(f"settings must be a dict, got {type(values).__name__}")
    all_knobs = [n for cls in SETTINGS_CLASSES for n in knobs(cls)]
    unknown = [k for k in values if k not in all_knobs]
    if unknown:
        hints = []
        for k in unknown:
            close = difflib.get_close_matches(str(k), all_knobs, n=1)
            hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ValueError(f"unknown setting(s) {', '.join(hints)}; known settings: {', '.join(all_knobs)}")
    objs = tuple(cls() for cls in SETTINGS_CLASSES)
    for obj, cls in zip(objs, SETTINGS_CLASSES):
        for n, p in knobs(cls).items():
            if n in values:
                set_knob(obj, n, values[n])
    return objs


def set_knob(obj: param.Parameterized, name: str, value: Any) -> None:
    """Parse (:func:`parse_value`) and assign one knob.

    Parameters
    ----------
    obj : param.Parameterized
        A settings object.
    name : str
        The knob.
    value : object
        The value or its text.

    Raises
    ------
    ValueError
        Naming the knob, for a value it does not accept.
    """
    p = obj.param[name]
    try:
        setattr(obj, name, parse_value(p, value))
    except ValueError as exc:
        raise ValueError(f"invalid value {value!r} for setting {name!r}: {clean_param_error(exc)}") from None
