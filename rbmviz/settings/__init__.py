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

The package imports param only (no Panel), one job per module: :mod:`~rbmviz.settings.classes`
(the settings classes and which knobs a rule or data set takes), :mod:`~rbmviz.settings.data`
(each data set's train/test rule and :func:`load_data`), :mod:`~rbmviz.settings.build`
(:func:`build_model`, :func:`make_run`) and :mod:`~rbmviz.settings.text` (flat dicts and
text: :func:`to_dict`, :func:`from_dict`, :func:`parse_value`); this package re-exports
their names.
"""
from __future__ import annotations

from .build import algorithm_kwargs, build_model, make_run
from .classes import (ALGORITHM_KNOBS_EXCLUDED, SETTINGS_CLASSES, DataSettings, ModelSettings,
                      TrainSettings, algorithm_defaults, algorithm_knobs, knobs, live_knobs)
from .data import DATASETS, TEST_FRACTION, DatasetRule, dataset_knobs, load_data
from .text import clean_param_error, from_dict, parse_value, set_knob, to_dict

__all__ = [
    "DataSettings", "ModelSettings", "TrainSettings", "SETTINGS_CLASSES",
    "load_data", "build_model", "algorithm_kwargs", "make_run",
    "to_dict", "from_dict", "knobs", "parse_value", "set_knob", "clean_param_error",
    "algorithm_knobs", "algorithm_defaults", "live_knobs", "dataset_knobs",
    "ALGORITHM_KNOBS_EXCLUDED",
    "DATASETS", "DatasetRule", "TEST_FRACTION",
]
