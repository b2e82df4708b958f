"""From settings to a run: :func:`build_model` (a fresh RBM as the model settings say),
:func:`algorithm_kwargs` (the knobs the chosen rule takes) and :func:`make_run` (data, model and
:class:`~rbmviz.runs.Run`, not started).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..model import RBM
from ..runs import Run
from .classes import DataSettings, ModelSettings, TrainSettings, algorithm_knobs
from .data import load_data

__all__ = ["build_model", "algorithm_kwargs", "make_run"]


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
