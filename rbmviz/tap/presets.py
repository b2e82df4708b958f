"""Table 1 of Tramel et al. (2018): the TAP-training settings of the paper's experiments, as
data (the TAP theory page of the documentation).

=====================  ====================  ====================  ====================
                       binary-MNIST          real-MNIST            CBCL
=====================  ====================  ====================  ====================
N_v                    784                   784                   361
N_h                    25, 50, 100, 500      100, 500              256
M (batch) = K          100                   100                   20
visible prior          binary                truncated G–B         truncated Gaussian
hidden prior           binary                binary                binary
γ                      0.005                 1e-2 → 1e-5           0.005
ε (ℓ2)                 0.001                 0.001                 0.01
η (momentum)           0.5                   0.5                   0.5
=====================  ====================  ====================  ====================

Data: MNIST scaled to [0, 1] and thresholded at 0.5 (binary-MNIST) or not (real-MNIST);
CBCL faces in [0, 1] (:mod:`rbmviz.datasets`; data directory ``RBMVIZ_DATA``).  Open points
and the choices made here (UNCONFIRMED in the paper): initial weights ``N(0, 0.001²)``;
truncation interval [0, 1]; real-MNIST's decreasing γ is geometric over the epochs; prior
parameters initialised from the data (:func:`init_priors_from_data`); 100 epochs.

Momentum: the presets use the heavy-ball form (``momentum_form="heavy_ball"``), not the
literal Alg. 2 line ``W ← W + γΔW(t) + γεR(W) + ηΔW(t−1)``, whose momentum term is not
scaled by γ (η/γ = 100 times the gradient step at Table 1's values).  Measured with the
literal form on the first 200 CBCL faces: ``|W|`` jumps from 0.005 to 0.41 in five updates, every
hidden unit saturates and ΔW ≈ 0 from then on (W moves only by the ℓ2 decay); on 500
real-MNIST images the TAP log-likelihood falls over three epochs.  Pass
``momentum_form="printed"`` to reproduce the literal rule.

>>> from rbmviz.tap.presets import PRESETS
>>> sorted(PRESETS)[:3]
['binary-mnist-100', 'binary-mnist-25', 'binary-mnist-50']
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from .. import datasets, units
from .._validation import check_choice, check_int
from ..model import RBM
from ..units import tg_log_g_moments
from .options import TAPSolverOptions as _O

__all__ = ["TAPPreset", "PRESETS", "BINARIZE", "names", "get", "of_dataset", "load_data", "build",
           "Built", "initial_model", "init_priors_from_data"]


@dataclass(frozen=True)
class TAPPreset:
    """One column of Table 1 of Tramel et al. (2018) with one hidden-layer size.

    Parameters
    ----------
    name : str
        Key in :data:`PRESETS`.
    dataset : {"binary-mnist", "real-mnist", "cbcl"}
        The data set.
    n_visible, n_hidden : int
        Layer sizes.
    batch_size : int
        Rows per update ``M``.
    n_solutions : int
        TAP runs per batch ``K``.
    visible, hidden : str
        Unit-type names of :mod:`rbmviz.units`.
    learning_rate, weight_decay, momentum : float
        γ, ε, η of Alg. 2.
    learning_rate_final : float, optional
        With ``epochs`` as the decay horizon, a geometric decay of γ.
    epochs : int
        Training epochs.
    init_scale : float
        Standard deviation of the initial weights.
    interval : tuple
        Support of truncated priors.
    order, damping, tol, max_iter : int or float
        Settings of TAP inference (:func:`rbmviz.tap.solve`); defaults and bounds
        :class:`rbmviz.tap.options.TAPSolverOptions`.
    momentum_form : str
        See :class:`rbmviz.algorithms.tap.TAP`.
    reference : str
        Where the numbers come from.
    """

    name: str
    dataset: str
    n_visible: int
    n_hidden: int
    batch_size: int
    n_solutions: int
    visible: str
    hidden: str
    learning_rate: float
    weight_decay: float
    momentum: float
    learning_rate_final: float | None = None
    epochs: int = 100
    init_scale: float = 1e-3
    interval: tuple = (0.0, 1.0)
    order: int = _O.order
    damping: float = _O.damping
    tol: float = _O.tol
    max_iter: int = _O.max_iter
    momentum_form: str = "heavy_ball"
    reference: str = "Tramel et al. (2018) Table 1"

    def algorithm_settings(self) -> dict:
        """Keyword arguments of :class:`rbmviz.algorithms.tap.TAP` for this preset.

        Returns
        -------
        dict
            ``learning_rate``, ``momentum``, ``weight_decay``, ``n_solutions``, the inference
            settings and the decay.
        """
        return {"learning_rate": self.learning_rate, "momentum": self.momentum,
                "weight_decay": self.weight_decay, "n_solutions": self.n_solutions,
                "order": self.order, "damping": self.damping, "tol": self.tol,
                "max_iter": self.max_iter, "momentum_form": self.momentum_form,
                "learning_rate_final": self.learning_rate_final,
                "decay_epochs": self.epochs if self.learning_rate_final is not None else None}

    def to_dict(self) -> dict:
        """The preset as plain values.

        Returns
        -------
        dict
            ``{field: value}``.
        """
        return asdict(self)


def _presets():
    out = {}
    for nh in (25, 50, 100, 500):
        out[f"binary-mnist-{nh}"] = TAPPreset(
            f"binary-mnist-{nh}", "binary-mnist", 784, nh, 100, 100, "bernoulli", "bernoulli",
            learning_rate=0.005, weight_decay=0.001, momentum=0.5)
    for nh in (100, 500):
        out[f"real-mnist-{nh}"] = TAPPreset(
            f"real-mnist-{nh}", "real-mnist", 784, nh, 100, 100, "truncated_gauss_bernoulli",
            "bernoulli", learning_rate=1e-2, learning_rate_final=1e-5, weight_decay=0.001,
            momentum=0.5)
    out["cbcl-256"] = TAPPreset("cbcl-256", "cbcl", 361, 256, 20, 20, "truncated_gaussian",
                                "bernoulli", learning_rate=0.005, weight_decay=0.01, momentum=0.5)
    return out


#: every Table 1 setting, by name
PRESETS: dict[str, TAPPreset] = _presets()


def names() -> list[str]:
    """Names of the Table 1 presets.

    Returns
    -------
    list of str
        The keys of :data:`PRESETS`.
    """
    return list(PRESETS)


def get(name: str, **overrides: Any) -> TAPPreset:
    """The preset ``name`` with fields replaced by ``overrides``.

    Parameters
    ----------
    name : str
        A name from :func:`names`.
    **overrides
        :class:`TAPPreset` fields to replace.

    Returns
    -------
    TAPPreset
        The preset.

    Raises
    ------
    TypeError
        For unknown fields.
    ValueError
        For an unknown ``name``.
    """
    check_choice(name, "TAP preset", tuple(PRESETS))
    fields = set(TAPPreset.__dataclass_fields__)
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise TypeError(f"TAP preset has no field(s) {unknown}; fields are {sorted(fields)}")
    return replace(PRESETS[name], **overrides)


#: how each Table 1 data set's grey levels are binarised (:func:`rbmviz.datasets.load_split`)
BINARIZE = {"binary-mnist": "threshold", "real-mnist": None, "cbcl": None}


def load_data(preset: TAPPreset | str, split: str = "train", limit: int | None = None) -> np.ndarray:
    """The preset's data rows (:func:`rbmviz.datasets.load_split`).

    Parameters
    ----------
    preset : TAPPreset or str
        The preset or its name.
    split : {"train", "test"}
        "test" for MNIST only (the CBCL loader has the 2,429 training faces only).
    limit : int, optional
        Keep at most the first ``limit`` rows.

    Returns
    -------
    numpy.ndarray, shape (n_samples, n_visible)
        The rows, in the preset's visible units' support.

    Raises
    ------
    ValueError
        For ``split="test"`` with CBCL, or an unknown split.
    """
    p = preset if isinstance(preset, TAPPreset) else get(preset)
    check_choice(split, "split", ("train", "test"))
    if p.dataset == "cbcl":
        if split != "train":
            raise ValueError("the CBCL loader provides the 2,429 training faces only (split='train')")
        return datasets.load_split("cbcl", "all", limit=limit, binarize=BINARIZE["cbcl"])
    return datasets.load_split("mnist", split, limit=limit, binarize=BINARIZE[p.dataset])


def _match_mean(V, mu, lo, hi, *, iters=60):
    """``U`` such that the truncated Gaussian ``∝ e^{−Vx²/2 + Ux}`` on ``[lo, hi]`` has mean
    ``mu`` (per unit; ``mu`` strictly inside the interval).  The mean increases with ``U``
    (its derivative is the variance, eq. 81), so a safeguarded Newton iteration on a
    bracket converges; returns ``(U, ln G(V, U))``."""
    span = hi - lo
    mu = np.clip(mu, lo + 1e-6 * span, hi - 1e-6 * span)
    U = V * mu                                   # the untruncated answer (eq. 71)
    a = np.full_like(U, -1e4 / span)             # mean(a) ≈ lo, mean(b) ≈ hi
    b = np.full_like(U, 1e4 / span)
    a = np.minimum(a, U - 1.0)
    b = np.maximum(b, U + 1.0)
    for _ in range(iters):
        _, m, v = tg_log_g_moments(V, U, lo, hi)
        done = np.abs(m - mu) <= 1e-12 * span
        if done.all():
            break
        low = m < mu
        a = np.where(low, U, a)
        b = np.where(low, b, U)
        step = U + (mu - m) / np.maximum(v, 1e-300)
        inside = (step >= a) & (step <= b)
        U = np.where(done, U, np.where(inside, step, 0.5 * (a + b)))
    return U, tg_log_g_moments(V, U, lo, hi)[0]


def init_priors_from_data(rbm: RBM, X: np.ndarray, *, eps: float = 1e-3) -> None:
    """Initialise the visible prior from the data so that the initial model (W ≈ 0) has the
    data's moments — Alg. 2's "θ(0) ← X" (the rule is UNCONFIRMED in the paper); in place.

    * Bernoulli: ``b = logit(mean)`` with the mean clipped to ``[eps, 1 − eps]``;
    * truncated Gaussian (eqs. 72–73): ``V = 1/s²`` from the pixel's variance s²
      (s² ≥ 1e-2·(hi − lo)² for nearly constant pixels) and ``U = b`` solved so that the
      *truncated* Gaussian's mean (eq. 78) equals the pixel mean;
    * truncated Gauss–Bernoulli (eq. 94): ``V`` and ``U`` as above from the non-zero values,
      and ``ρ`` such that the probability of a non-zero value,
      ``π₀ = σ(ln G(V, U) + logit ρ)`` (eq. 95), equals the fraction of non-zero values
      (clipped to ``[eps, 1 − eps]``): ``logit ρ = logit(fraction) − ln G(V, U)``.  (Setting
      ρ to the fraction itself — the rule of eq. 93's parameterisation — gives π₀ ≈ 1 on
      MNIST, whose slab normaliser G is large.)  The model's mean is then π₀ times the
      slab mean, i.e. the data mean.

    Parameters
    ----------
    rbm : RBM
        The model whose visible prior and biases are set, in place.
    X : numpy.ndarray, shape (n_samples, n_visible)
        Training rows.
    eps : float
        Clipping of means and fractions.
    """
    vp = getattr(rbm, "visible_prior", None)
    X = np.asarray(X, dtype=np.float64)
    name = getattr(vp, "name", "bernoulli")
    if name == "bernoulli":
        m = np.clip(X.mean(axis=0), eps, 1 - eps)
        rbm.b[:] = np.log(m) - np.log1p(-m)
        return
    lo, hi = vp.interval
    floor = 1e-2 * (hi - lo) ** 2
    if name == "truncated_gauss_bernoulli":
        nz = X != 0
        cnt = nz.sum(axis=0)
        frac = np.clip(cnt / X.shape[0], eps, 1 - eps)
        safe = np.maximum(cnt, 1)
        mu = np.where(cnt > 0, (X * nz).sum(axis=0) / safe, 0.5 * (lo + hi))
        var = np.where(cnt > 1, ((X - mu) ** 2 * nz).sum(axis=0) / safe, floor)
    else:
        mu, var = X.mean(axis=0), X.var(axis=0)
    V = 1.0 / np.maximum(var, floor)
    U, log_g = _match_mean(V, mu, lo, hi)
    vp.V = V
    rbm.b[:] = U
    if name == "truncated_gauss_bernoulli":
        logit_rho = np.log(frac) - np.log1p(-frac) - log_g
        # ρ = σ(logit ρ), kept inside (0, 1) in float64
        vp.rho = np.clip(0.5 * (1.0 + np.tanh(0.5 * logit_rho)), 1e-300, 1.0 - 1e-16)


class Built(NamedTuple):
    """What :func:`build` returns.

    Parameters
    ----------
    data : numpy.ndarray
        Training rows.
    rbm : RBM
        The initialised model.
    settings : dict
        Keyword arguments of the TAP algorithm (``rbmviz.algorithms.create("tap", **settings)``).
    """

    data: np.ndarray
    rbm: object
    settings: dict


def build(name: str, *, limit: int | None = None, seed: int = 0, **overrides: Any) -> Built:
    """Data, an initialised RBM and the TAP algorithm's settings for a Table 1 preset.

    Parameters
    ----------
    name : str
        A key of :data:`PRESETS` (e.g. ``"binary-mnist-100"``).
    limit : int, optional
        Keep only the first ``limit`` training rows.
    seed : int
        Seed of the weight initialisation ``W ~ N(0, init_scale²)``.
    **overrides
        :class:`TAPPreset` fields (``n_hidden=10``, ``epochs=5`` ...).

    Returns
    -------
    Built
        ``(data, rbm, settings)``.  Train with ``rbmviz.runs.Run(rbm, data, alg, epochs=p.epochs,
        batch_size=p.batch_size)`` where ``alg = rbmviz.algorithms.create("tap", **settings)``.
        The algorithm itself is not made here: ``rbmviz.tap`` sits below ``rbmviz.algorithms``,
        whose TAP rule imports it.

    Raises
    ------
    ValueError
        If the data do not have the preset's number of visible units, or an override is
        invalid.

    Examples
    --------
    >>> data, rbm, settings = build("binary-mnist-25", limit=200)      # doctest: +SKIP
    >>> alg = rbmviz.algorithms.create("tap", **settings)              # doctest: +SKIP
    """

    p = get(name, **overrides)
    check_int(seed, "seed", low=0)
    X = load_data(p, "train", limit)
    rbm = initial_model(p, X, seed=seed)
    return Built(X, rbm, {"seed": seed, **p.algorithm_settings()})


def initial_model(preset: TAPPreset, X: np.ndarray, *, seed: int = 0) -> RBM:
    """The preset's untrained model for the data ``X``: its unit priors (on the preset's
    interval), ``W ~ N(0, init_scale²)`` from ``seed``, and the priors fitted to ``X``
    (:func:`init_priors_from_data`).

    Parameters
    ----------
    preset : TAPPreset
        Layer sizes, unit types, interval and weight scale.
    X : numpy.ndarray, shape (n_samples, n_visible)
        Training rows in the visible prior's support.
    seed : int
        Seed of the weights.

    Returns
    -------
    RBM
        The model.

    Raises
    ------
    ValueError
        If ``X`` does not have the preset's number of visible units or lies outside the
        visible prior's support.
    """
    p = preset
    if X.shape[1] != p.n_visible:
        raise ValueError(f"preset {p.name!r} expects {p.n_visible} visible units, the data has "
                         f"{X.shape[1]} columns")
    kw = {}
    if p.visible != "bernoulli":
        kw["visible"] = units.make(p.visible, p.n_visible, interval=p.interval)
    if p.hidden != "bernoulli":
        kw["hidden"] = units.make(p.hidden, p.n_hidden, interval=p.interval)
    rbm = RBM(p.n_visible, p.n_hidden, seed=seed, init="normal", scale=p.init_scale, **kw)
    rbm.visible_prior.check_data(X, "data")
    init_priors_from_data(rbm, X)
    return rbm


def of_dataset(dataset: str, **overrides: Any) -> TAPPreset:
    """The Table 1 column of ``dataset`` (its first preset), with fields replaced.

    Parameters
    ----------
    dataset : {"binary-mnist", "real-mnist", "cbcl"}
        The data set.
    **overrides
        :class:`TAPPreset` fields to replace (e.g. ``n_hidden=64``).

    Returns
    -------
    TAPPreset
        The data set's paper-scale settings, with ``overrides`` applied.

    Raises
    ------
    ValueError
        For an unknown data set.
    """
    datasets_ = tuple(dict.fromkeys(q.dataset for q in PRESETS.values()))
    check_choice(dataset, "dataset", datasets_)
    return get(next(n for n, q in PRESETS.items() if q.dataset == dataset), **overrides)
