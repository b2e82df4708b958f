"""Defaults a data set brings, and the papers' own settings.

:func:`for_dataset` gives the settings a front end starts from when a data set is chosen (the
explorer's dropdown, ``rbmviz train --dataset``, notebooks): model size, batch, learning rate,
k, the algorithm, the metrics worth recording, the x-axis of the curves, the image shape of a
receptive field, the float type, how many rows to read and how often to evaluate.

The dtype rule (used here and by :func:`default_dtype`): **float64** when exact
log-likelihoods are at stake — the smaller layer has at most ``exact_max_bits`` (20) units, so
the exact ATLL is the default metric — or the model is small (``n_visible · n_hidden`` below
:data:`LARGE_MODEL`, where float32 buys nothing); **float32** otherwise (large models:
MNIST/Omniglot/CBCL with hundreds of hidden units), where the products dominate and float32
halves their cost.  float64 data are accepted and cast by the run.

The paper presets (:data:`tramel2018`, :data:`upadhya2017`, :data:`fischer2011`) are dicts of
named settings restating each paper's experimental protocol (the TAP theory page of the documentation,
the DC-programming and CD-bias theory pages).

>>> for_dataset("shifting_bar")["image_shape"]
(1, 9)
>>> for_dataset("mnist")["n_hidden"], for_dataset("mnist")["dtype"]
(500, 'float32')
"""
from __future__ import annotations

import copy
import difflib
from typing import Any

from . import datasets as _datasets
from ._validation import check_int
from .bounds import EXACT_BITS_DEFAULT
from .tap.presets import PRESETS as _TAP_PRESETS

__all__ = ["for_dataset", "names", "default_dtype", "LARGE_MODEL", "KEYS", "tramel2018",
           "upadhya2017", "fischer2011"]

#: ``n_visible · n_hidden`` from which a model counts as large (float32, stochastic metrics)
LARGE_MODEL = 50_000
#: keys every :func:`for_dataset` dict has
KEYS = ("dataset", "n_visible", "n_hidden", "algorithm", "batch_size", "learning_rate", "k",
        "epochs", "metrics", "x_axis", "image_shape", "dtype", "limit", "eval_every",
        "init", "init_scale", "visible_bias", "data")

_EXACT = ["train_ll", "recon_error", "weight_norm"]
_LARGE = ["spl", "recon_error", "weight_norm"]

# n_visible, image_shape: functions of the data knobs; the rest fixed per data set
_TABLE = {
    # Upadhya & Sastry (2017) Sec. 4.2.1: 9x4, full batch, eta 0.3 / 0.5, K = 12
    "bars_and_stripes": dict(n_hidden=4, algorithm="cd", batch_size=None, learning_rate=0.3, k=12,
                             epochs=5000, metrics=_EXACT, x_axis="epoch", limit=None,
                             init="normal", init_scale=0.01, visible_bias="base_rate"),
    # eta 0.5 (the paper's second rate): S-DCP/CS-DCP leave the -3.15 plateau by epoch ~2,000,
    # CD/PCD by ~5,500 (exact ATLL, seed 0) -- 8,000 epochs show both
    "shifting_bar": dict(n_hidden=4, algorithm="cd", batch_size=None, learning_rate=0.5, k=12,
                         epochs=8000, metrics=_EXACT, x_axis="epoch", limit=None,
                         init="normal", init_scale=0.01, visible_bias="base_rate"),
    # Fischer & Igel (2011) Sec. 3: 6x6, full batch, eta 0.1, U[-0.5, 0.5], biases 0
    "diag": dict(n_hidden=6, algorithm="cd", batch_size=None, learning_rate=0.1, k=1,
                 epochs=5000, metrics=_EXACT, x_axis="epoch", limit=None,
                 init="uniform", init_scale=0.5, visible_bias="zeros"),
    "ball_1d": dict(n_hidden=6, algorithm="cd", batch_size=None, learning_rate=0.1, k=1,
                    epochs=5000, metrics=_EXACT, x_axis="epoch", limit=None,
                    init="uniform", init_scale=0.5, visible_bias="zeros"),
    # scikit-learn's RBM example scale: 8x8 digits, 100 hidden units, small batches
    "digits": dict(n_hidden=100, algorithm="pcd", batch_size=20, learning_rate=0.05, k=1,
                   epochs=50, metrics=_LARGE, x_axis="updates", limit=None,
                   init="normal", init_scale=0.01, visible_bias="base_rate"),
    # Upadhya & Sastry Sec. 4.2.2 model size (500 hidden); batch 100 and PCD-1 for a live race
    "mnist": dict(n_hidden=500, algorithm="pcd", batch_size=100, learning_rate=0.05, k=1,
                  epochs=10, metrics=_LARGE, x_axis="updates", limit=10_000,
                  init="normal", init_scale=0.01, visible_bias="base_rate"),
    "binarized_mnist": dict(n_hidden=500, algorithm="pcd", batch_size=100, learning_rate=0.05, k=1,
                            epochs=10, metrics=_LARGE, x_axis="updates", limit=10_000,
                            init="normal", init_scale=0.01, visible_bias="base_rate"),
    "omniglot": dict(n_hidden=500, algorithm="pcd", batch_size=100, learning_rate=0.05, k=1,
                     epochs=10, metrics=_LARGE, x_axis="updates", limit=10_000,
                     init="normal", init_scale=0.01, visible_bias="base_rate"),
    # Tramel et al. (2018) Table 1 size for CBCL (361x256, batch 20)
    "cbcl": dict(n_hidden=256, algorithm="pcd", batch_size=20, learning_rate=0.02, k=1,
                 epochs=20, metrics=_LARGE, x_axis="updates", limit=None,
                 init="normal", init_scale=0.01, visible_bias="base_rate"),
}


#: the data sets' knobs (sizes of the generated ones, loading of the real ones) and which
#: generated data set takes which size knob, declared once in :mod:`rbmviz.datasets`
#: (documented there; these names read them)
DataKnobs = _datasets.DataKnobs
DATA_KNOBS: dict[str, tuple[str, ...]] = _datasets.DATA_KNOBS


def _shape(name, data):
    if name == "bars_and_stripes":
        return data["D"] ** 2, (data["D"], data["D"])
    if name == "shifting_bar":
        return data["N"], (1, data["N"])           # 1-D: drawn as a row
    if name in ("diag", "ball_1d"):
        return data["d"], (1, data["d"])
    if name == "digits":
        return 64, (8, 8)
    if name == "cbcl":
        return 361, (19, 19)
    return 784, (28, 28)                           # mnist, binarized_mnist, omniglot


def names() -> list[str]:
    """Data sets with a preset.

    Returns
    -------
    list of str
        Data set names.
    """
    return list(_TABLE)


def default_dtype(n_visible: int, n_hidden: int,
                  exact_max_bits: int = EXACT_BITS_DEFAULT) -> str:
    """The dtype rule for a model of this size.

    ``"float64"`` where exact log-likelihoods are feasible (smaller layer ≤ ``exact_max_bits``)
    or the model is small (``n_visible · n_hidden <`` :data:`LARGE_MODEL`), else ``"float32"``.

    Parameters
    ----------
    n_visible, n_hidden : int
        Layer sizes.
    exact_max_bits : int
        Largest smaller layer that is enumerated exactly.

    Returns
    -------
    str
        ``"float64"`` or ``"float32"``.
    """
    n_visible = check_int(n_visible, "n_visible", low=1)
    n_hidden = check_int(n_hidden, "n_hidden", low=1)
    if min(n_visible, n_hidden) <= exact_max_bits or n_visible * n_hidden < LARGE_MODEL:
        return "float64"
    return "float32"


def for_dataset(name: str, **data_knobs: Any) -> dict:
    """The defaults data set ``name`` brings.

    Parameters
    ----------
    name : str
        One of :func:`names` (every data set of :mod:`rbmviz.datasets`).
    **data_knobs
        The data set's size knobs (``D`` for bars_and_stripes, ``N``/``B`` for shifting_bar,
        ``d`` for diag/ball_1d); they change ``n_visible`` and ``image_shape``.

    Returns
    -------
    dict
        Keys :data:`KEYS`: ``n_hidden``, ``algorithm``, ``batch_size`` (None = full batch),
        ``learning_rate``, ``k``, ``epochs``, ``metrics`` (exact ``train_ll`` on the toy sets,
        ``spl``/``recon_error``/``weight_norm`` on the large ones), ``x_axis`` ("epoch" or
        "updates": large models stream records within an epoch), ``image_shape`` (rows, cols
        of one receptive field; 1-D data sets are a single row), ``dtype`` (the rule of
        :func:`default_dtype`), ``limit`` (rows read of each split; None = all),
        ``eval_every`` ("auto": evaluation on a time budget), ``init``/``init_scale``/
        ``visible_bias`` (initial parameters), ``data`` (the data knobs used).
        A fresh dict: change it freely.

    Raises
    ------
    ValueError
        For a data set without a preset (with the closest name).
    TypeError
        For a knob the data set does not have.
    """
    if name not in _TABLE:
        hint = difflib.get_close_matches(str(name), list(_TABLE), n=1)
        extra = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(f"name must be a data set with a preset, one of {names()}; got {name!r}{extra}")
    data = {k: DataKnobs.param[k].default for k in DATA_KNOBS.get(name, ())}
    unknown = sorted(set(data_knobs) - set(data))
    if unknown:
        raise TypeError(f"data set {name!r} has no knob(s) {unknown}; its knobs are {sorted(data)}")
    for key, value in data_knobs.items():
        lo, hi = DataKnobs.param[key].bounds
        data[key] = check_int(value, key, low=lo, high=hi)
    n_visible, image_shape = _shape(name, data)
    p = copy.deepcopy(_TABLE[name])
    p.update(dataset=name, n_visible=n_visible, image_shape=image_shape, eval_every="auto",
             dtype=default_dtype(n_visible, p["n_hidden"]), data=data)
    return {k: p[k] for k in KEYS}


# ---------------------------------------------------------------------------- paper presets

#: Tramel, Gabrié, Manoel, Caltagirone & Krzakala (2018), Table 1: TAP training settings
#: (name -> dict of :class:`rbmviz.tap.presets.TAPPreset` fields)
tramel2018: dict[str, dict] = {name: p.to_dict() for name, p in _TAP_PRESETS.items()}

#: Upadhya & Sastry (2017): S-DCP / CS-DCP against CD, PCD, CG at equal compute K = d·K′
#: (the DC-programming theory page of the documentation).  Small sets: full batch, 50,000 epochs, 25 trials,
#: exact ATLL; large sets: 500 hidden units, batch 200, 200 epochs, AIS ATLL (100 chains,
#: 10,000 linear β).
upadhya2017: dict[str, dict] = {
    "bars_and_stripes": dict(dataset="bars_and_stripes", data={"D": 3}, n_hidden=4, batch_size=None,
                             learning_rates=(0.3, 0.5), k=12, k_inner=4, d=3, epochs=50_000,
                             trials=25, init="normal", init_scale=0.01, visible_bias="base_rate",
                             dtype="float64", metrics=["train_ll"],
                             algorithms=("cd", "pcd", "cg", "sdcp", "csdcp")),
    "shifting_bar": dict(dataset="shifting_bar", data={"N": 9, "B": 1}, n_hidden=4, batch_size=None,
                         learning_rates=(0.3, 0.5), k=12, k_inner=4, d=3, epochs=50_000,
                         trials=25, init="normal", init_scale=0.01, visible_bias="base_rate",
                         dtype="float64", metrics=["train_ll"],
                         algorithms=("cd", "pcd", "cg", "sdcp", "csdcp")),
    "mnist": dict(dataset="mnist", data={"binarize": "stochastic"}, n_hidden=500, batch_size=200,
                  learning_rates=(0.01,), k=24, k_inner=4, d=6, epochs=200, trials=10,
                  init="normal", init_scale=0.01, visible_bias="base_rate", dtype="float32",
                  metrics=["ais_test_ll"], ais={"n_chains": 100, "n_betas": 10_000},
                  algorithms=("cd", "pcd", "cg", "sdcp", "csdcp")),
    "omniglot": dict(dataset="omniglot", data={"binarize": "stochastic"}, n_hidden=500,
                     batch_size=200, learning_rates=(0.01,), k=24, k_inner=4, d=6, epochs=200,
                     trials=10, init="normal", init_scale=0.01, visible_bias="base_rate",
                     dtype="float32", metrics=["ais_test_ll"],
                     ais={"n_chains": 100, "n_betas": 10_000},
                     algorithms=("cd", "pcd", "cg", "sdcp", "csdcp")),
}

#: Fischer & Igel (2011) Sec. 3: the bias of CD-1 against its bound (the CD-bias theory page of the documentation):
#: 6x6 RBMs, full-batch training with the expected CD-1 update, η = 0.1, W ~ U[−0.5, 0.5],
#: biases 0, 50,000 iterations, 25 initialisations.
fischer2011: dict[str, dict] = {
    name: dict(dataset=name, data={"d": 6}, n_hidden=6, batch_size=None, learning_rate=0.1, k=1,
               iterations=50_000, reps=25, init="uniform", init_scale=0.5, visible_bias="zeros",
               dtype="float64", weight_decay=0.0, paper_gap=gap)
    for name, gap in (("diag", 0.00138), ("ball_1d", 0.02628))
}
