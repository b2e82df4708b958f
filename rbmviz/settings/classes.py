"""The settings classes (:class:`DataSettings`, :class:`ModelSettings`, :class:`TrainSettings`:
``param`` classes whose algorithm knobs are copied from the rules' declarations) and which knobs
a rule takes (:func:`algorithm_knobs`, :func:`algorithm_defaults`, :func:`live_knobs`).
"""
from __future__ import annotations

from typing import Any

import param

from .. import algorithms as _algorithms
from ..algorithms import knobs as _knobs
from .. import presets as _presets
from ..bounds import EPOCHS_MAX, MAX_WEIGHT_DEFAULT, SEED_MAX, UNITS_MAX, narrowed, parameters_doc
from .data import _dataset_names

__all__ = ["DataSettings", "ModelSettings", "TrainSettings", "SETTINGS_CLASSES", "knobs",
           "algorithm_knobs", "algorithm_defaults", "live_knobs", "ALGORITHM_KNOBS_EXCLUDED"]

_SEED_MAX = SEED_MAX


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
    # how the real data sets are loaded: copies of their declaration (rbmviz.datasets)
    binarize = narrowed(_presets.DataKnobs.param.binarize)
    data_seed = narrowed(_presets.DataKnobs.param.data_seed)
    limit = narrowed(_presets.DataKnobs.param.limit)


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
