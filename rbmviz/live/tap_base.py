"""What the TAP tab's two engines share — :class:`~rbmviz.live.tap.TapRace` (a binary TAP
machine) and :class:`~rbmviz.live.tap_dbm.DBMTapRace` (a deep TAP machine): the images
(:func:`tap_data`), the streamed TAP metrics (:data:`LIVE_METRICS`, solved to
:data:`COUNT_TOL`: see :mod:`rbmviz.live.tap`), the shipped models a race can start from, the
tab's knobs (:class:`TapSettings`) and the engine base :class:`TapLoop`.  No Panel import.
"""
from __future__ import annotations

import threading
import warnings

import numpy as np
import param

from .. import algorithms as _algorithms
from .. import checkpoints as _checkpoints
from .. import datasets
from .._blas import single_threaded_blas
from .._seeds import stream_seed
from ..algorithms.knobs import AlgorithmKnobs as _AlgorithmKnobs, derive_knobs
from ..bounds import narrowed, parameters_doc
from ..evaluate.metrics import Metric, register
from ..settings import ModelSettings as _ModelSettings, TrainSettings as _TrainSettings
from ..tap.inference import damping_ladder, log_likelihood
from ..tap.options import TAPSolverOptions as _O
from .loop import SettingsLoop

__all__ = ["LIVE_TAP_KNOBS", "PACE_KNOBS", "RECORD_FIELDS", "TAP_DATASETS", "TAP_MODELS", "TOL",
           "MAX_ITER", "LIVE_FLOOR", "COUNT_TOL", "MAX_WEIGHT", "LIVE_EVAL_BUDGET",
           "POINT_SECONDS", "N_TEST", "mnist_available", "tap_data", "LIVE_METRICS",
           "TAP_CHECKPOINTS", "LIVE_DEFAULTS", "TapSettings", "refuse_model_change", "TapLoop"]

#: knobs the running race accepts between points: the TAP rule's live knobs it shows, and the
#: landscape interval
LIVE_TAP_KNOBS = ("learning_rate", "momentum", "momentum_form", "weight_decay", "n_solutions",
                  "order", "damping", "fixed_iter", "inference", "products", "landscape_every")
#: knobs of the view (pace), applied at once
PACE_KNOBS = ("updates_per_point", "points_per_second")
#: the fields of a record
RECORD_FIELDS = ("epoch", "updates", "tap_ll", "n_unique", "n_not_converged", "n_eval")
#: dataset name → label
TAP_DATASETS = {"mnist": "binary MNIST 28×28 (threshold 0.5; files)",
                "digits": "scikit-learn digits 8×8 (binary; no files)"}
#: model name → label: the machine trained with TAP (``"dbm-2"``: :mod:`rbmviz.live.tap_dbm`)
TAP_MODELS = {"rbm": "RBM (Alg. 2)",
              "dbm-2": "deep TAP machine, 2 hidden layers (App. E)"}
#: TAP solver settings of every solve (Fig. 3 caption: MSE change below 1e-8), the solver's
#: declared defaults (:class:`rbmviz.tap.options.TAPSolverOptions`)
TOL, MAX_ITER = _O.tol, _O.max_iter
#: the smallest damping of the live counting solves (:func:`damping_ladder`): the ladder's
#: first rung (0.2), narrowed from the declared floor — the deeper rungs cost up to 10x the
#: iterations per non-converging row, too slow for a streamed metric
LIVE_FLOOR = _O.ladder_rungs[0]
#: convergence of the solves whose solutions are counted (see the module docstring)
COUNT_TOL = _O.count_tol
#: parameters larger than this in magnitude count as a diverged run (the run settings' default,
#: :class:`rbmviz.settings.TrainSettings`, as rbmviz.runs.Run)
MAX_WEIGHT = _TrainSettings.param.max_weight.default
#: share of the wall time spent on the evaluation solve when points are spaced by time (as
#: rbmviz.runs.Run's own default: the updates are what the tab is about)
LIVE_EVAL_BUDGET = 0.1
#: each point trains at most about this long (Pause ends the point at the next training chunk,
#: ~0.25 s, through rbmviz.runs.Run.yield_when, so longer points do not slow it)
POINT_SECONDS = 1.5
#: held-out digits of the sklearn set (the last rows) and MNIST test images loaded
N_TEST = 200


def mnist_available() -> bool:
    """Whether the MNIST files :func:`tap_data` reads are in :func:`rbmviz.datasets.data_dir`.

    Returns
    -------
    bool
        True when every MNIST file is there (the tab then offers binary MNIST; else it falls
        back to the scikit-learn digits).
    """
    return bool(datasets.available("mnist"))


def tap_data(name: str, limit: int, *, seed: int = 0
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """Training and held-out test images of a :data:`TAP_DATASETS` entry, as 0/1 float64 rows,
    and the image shape.

    Loaded by :func:`rbmviz.datasets.load_split`.
    ``"mnist"``: the first ``limit`` MNIST training images and the first :data:`N_TEST` test
    images, binarised at 0.5 (binary MNIST, Tramel et al. 2018 Sec. VII), read from
    :func:`rbmviz.datasets.data_dir`.
    ``"digits"``: scikit-learn's 1,797 8×8 digits (pixel ≥ 8 → 1); the last :data:`N_TEST`
    are held out, the first ``min(limit, 1597)`` of a seeded permutation of the rest train.

    Parameters
    ----------
    name : str
        A key of :data:`TAP_DATASETS`.
    limit : int
        Training rows wanted (at least 10; MNIST has at most 60,000, the digits 1,597).
    seed : int
        Seed of the digits' permutation (unused for MNIST, whose first rows are taken).

    Returns
    -------
    train : numpy.ndarray
        Training images, shape (n, N_v).
    test : numpy.ndarray
        Held-out images, shape (:data:`N_TEST`, N_v).
    test_labels : numpy.ndarray
        The held-out images' digit classes, shape (:data:`N_TEST`,).
    shape : tuple of int
        The image shape (h, w), h·w = N_v.

    Raises
    ------
    ValueError
        For an unknown ``name`` or a ``limit`` that is not an integer >= 10.
    rbmviz.datasets.DatasetNotFoundError
        When an MNIST file is missing (a ``FileNotFoundError`` saying where it was looked
        for).
    """
    if name not in TAP_DATASETS:
        raise ValueError(f"dataset must be one of {list(TAP_DATASETS)}, got {name!r}")
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 10:
        raise ValueError(f"limit (training rows) must be an integer >= 10, got {limit!r}")
    if name == "mnist":
        train = datasets.load_split("mnist", "train", limit=int(limit))
        test, labels = datasets.load_split("mnist", "test", limit=N_TEST, return_labels=True)
        return train, test, labels, (28, 28)
    held_out = {"test_rows": N_TEST}
    train = datasets.load_split("digits", "train", limit=int(limit),
                                subset_seed=stream_seed(seed, "digits"), **held_out)
    test, labels = datasets.load_split("digits", "test", return_labels=True, **held_out)
    return train, test, labels, (8, 8)


# ---------------------------------------------------------------------- the live metrics
def _counted_solve(rbm, ctx):
    """One TAP solve of the evaluation rows per evaluation, shared by the three metrics:
    eq. (39) over the unique converged solutions, solved to :data:`COUNT_TOL`."""
    def solve_once():
        alg = ctx.algorithm
        with warnings.catch_warnings():   # non-converged runs are counted in the record
            warnings.simplefilter("ignore", RuntimeWarning)
            return log_likelihood(rbm, ctx.subset, unique=True, order=getattr(alg, "order", _O.order),
                                  damping=damping_ladder(getattr(alg, "damping", _O.damping), floor=LIVE_FLOOR),
                                  tol=COUNT_TOL,
                                  max_iter=MAX_ITER, details=True, undamped_first=True)
    return ctx.cached("live_tap_solve", solve_once)


#: the TAP tab's measurements, computed by the run loop (:class:`rbmviz.runs.Run`) through the
#: metrics registry: per-unit TAP log-likelihood, unique solutions, runs not converged
LIVE_METRICS = (
    Metric("tap_ll_per_unit",
           lambda rbm, ctx: float(_counted_solve(rbm, ctx).value) / (rbm.n_visible + rbm.n_hidden),
           "TAP log-likelihood per unit, eq. (39) / (N_v + N_h), unique solutions (nats)",
           binary_only=False, cost="expensive"),
    Metric("tap_unique", lambda rbm, ctx: float(_counted_solve(rbm, ctx).n_solutions),
           "unique TAP solutions reached from the evaluation rows", binary_only=False,
           cost="expensive"),
    Metric("tap_not_converged", lambda rbm, ctx: float(_counted_solve(rbm, ctx).n_not_converged),
           "TAP runs from the evaluation rows that did not converge", binary_only=False,
           cost="expensive", higher_is_better=False),
)
for _m in LIVE_METRICS:
    register(_m, replace=True)
del _m


def _checkpoint_order(name):
    info = _checkpoints.info(name)
    return (info.get("epoch") or 0, info.get("settings", {}).get("samples") or 0, name)


#: the shipped TAP models a race can start from (:mod:`rbmviz.checkpoints`), by epoch and, at
#: one epoch, the run on fewer rows first: the last is the most trained paper-scale model
TAP_CHECKPOINTS = sorted((n for n in _checkpoints.names() if n.startswith("tap-")),
                         key=_checkpoint_order)


class _TapViewKnobs(param.Parameterized):
    """The TAP tab's own knobs: data, model size, evaluation and landscape sets, pace."""

    start_from = param.Selector(
        default="none", objects=["none", *TAP_CHECKPOINTS], label="Start from",
        doc="A shipped trained model (rbmviz.checkpoints: binary MNIST, Nh = 100, after E "
            "epochs of TAP training) instead of a fresh one — jump to a rich landscape at once.")

    model = param.Selector(
        default="rbm", objects=list(TAP_MODELS), label="Model",
        doc="The machine trained with TAP: a binary RBM (Alg. 2), or a deep TAP machine with two "
            "hidden layers of n_hidden and n_hidden2 units (App. E, Alg. 4: layer-wise TAP "
            "pretraining, then joint TAP training of the whole DBM).")
    n_hidden2 = param.Integer(50, bounds=(1, 1000), softbounds=(5, 500),
                              label="Layer-2 units N2 (DBM)",
                              doc="Units of the deep TAP machine's second hidden layer (the first "
                                  "has n_hidden).")
    pretrain_epochs = param.Integer(
        1, bounds=(0, 1000), softbounds=(0, 20), label="Pretraining epochs per layer (DBM)",
        doc="Epochs of greedy layer-wise TAP-RBM pretraining per hidden layer before joint "
            "training (Alg. 4; the paper: 50 at γ = 0.001; live: a few at the tab's γ).")
    dataset = param.Selector(default="mnist", objects=list(TAP_DATASETS),
                             doc="Training images (binary MNIST needs the files; digits always works).")
    limit = param.Integer(2000, bounds=(10, 60_000), softbounds=(100, 10_000),
                          label="Training rows", doc="How many training images (kept small to be live).")
    # copies of the declarations (rbmviz.settings, rbmviz.algorithms.knobs), narrowed to a
    # machine and a batch that train live
    n_hidden = narrowed(_ModelSettings.param.n_hidden, default=100, low=2, high=1000,
                        softbounds=(5, 500), label="Hidden units Nh",
                        doc_suffix=" Here N_h from 2 to 1,000 (Table 1: 25, 50, 100, 500).")
    batch_size = narrowed(_TrainSettings.param.batch_size, default=100, high=10_000,
                          allow_None=False, softbounds=(10, 500), label="Batch M",
                          doc_suffix=" Here M, at most 10,000 (Table 1: 100).")
    seed = narrowed(_AlgorithmKnobs.param.seed, label="Seed",
                    doc_suffix=" Here also the initial weights and the subsets.")
    eval_rows = param.Integer(100, bounds=(1, 10_000), softbounds=(10, 2000),
                              label="Evaluation rows",
                              doc="Fixed training rows on which the TAP log-likelihood is measured.")
    landscape_every = param.Integer(2, bounds=(1, 1000), softbounds=(1, 20),
                                    label="Landscape every (epochs)",
                                    doc="Epochs between two landscape snapshots (live).  A "
                                        "snapshot solves from N images on the training "
                                        "thread: every 2 epochs the tab trains ~5.4 updates/s "
                                        "on 2 busy cores, every epoch ~4.6.")
    landscape_rows = param.Integer(500, bounds=(3, 10_000), softbounds=(50, 2000),
                                   label="Landscape initialisations N",
                                   doc="Data initialisations of a landscape snapshot (Fig. 5: 10,000).")
    updates_per_point = param.Integer(
        None, allow_None=True, bounds=(1, 10_000), softbounds=(1, 50), label="Updates per point",
        doc="Mini-batch updates between two plotted points; none = spaced by time (the "
            "evaluation solve takes at most a quarter of the time).")
    points_per_second = param.Integer(10, bounds=(1, 100), label="Points per second",
                                      doc="Upper bound on the pace of the stream.")


#: the live tab's values for the rule's knobs (its declaration keeps type, bounds and doc):
#: Table 1's binary-MNIST settings except γ (see the module docstring)
LIVE_DEFAULTS = {"learning_rate": 0.1, "momentum": 0.5, "weight_decay": 0.001,
                 "n_solutions": 100, "order": 2, "damping": 0.5, "momentum_form": "heavy_ball",
                 "inference": "tap", "products": "float32", "fixed_iter": None}

TapSettings = derive_knobs(
    "TapSettings", [_algorithms.get("tap")], include=list(LIVE_DEFAULTS), defaults=LIVE_DEFAULTS,
    labels={"learning_rate": "Learning rate γ", "momentum": "Momentum η",
            "weight_decay": "ℓ2 strength ε"},
    bases=(_TapViewKnobs,),
    doc="The knobs of a live TAP machine (Tramel et al. 2018, Alg. 2 and Table 1): the TAP "
        "rule's own knobs (copies of ``rbmviz.algorithms.TAP.Knobs``: bounds and docs from "
        "there, the live defaults :data:`LIVE_DEFAULTS`) plus the tab's data, evaluation, "
        "landscape and pace knobs.")
TapSettings.__doc__ = TapSettings.__doc__.rstrip() + "\n\n" + parameters_doc(TapSettings)


def refuse_model_change(changes: dict) -> None:
    """Refuse a change of machine (``model``) during a run.

    Parameters
    ----------
    changes : dict
        The knob changes asked of a running race.

    Raises
    ------
    ValueError
        When ``changes`` would switch the machine of a running race (an RBM and a deep TAP
        machine are different machines).
    """
    if "model" in changes:
        raise ValueError(f"model cannot change during a run (asked: {changes['model']!r}): an RBM "
                         f"and a deep TAP machine are different machines — press Reset to train "
                         f"the one chosen")


class TapLoop(SettingsLoop):
    """What the TAP tab's engines share (:class:`TapRace`, and the deep TAP machine's
    :class:`~rbmviz.live.tap_dbm.DBMTapRace`): :class:`TapSettings`, their set-up (the
    images, the checks of M and K, the fixed evaluation rows), the refusal of a change of
    machine, points serialised and run with single-threaded BLAS, and a
    ``sink(batch, snapshot)``."""

    settings_class = TapSettings
    live_knobs = LIVE_TAP_KNOBS
    pace_knobs = PACE_KNOBS
    record_fields = RECORD_FIELDS

    def _init_tap(self, settings, **engine):
        """:meth:`_init_engine`, then the images (:func:`tap_data`), the checks of M and K
        against them, and the fixed evaluation rows ``eval_data``.  Returns the random
        stream of the subsets (the evaluation rows drawn from it) and the evaluation rows'
        indices."""
        s = self._init_engine(settings, **engine)
        self._advance_lock = threading.Lock()
        self.data, self.test, self.test_labels, self.image_shape = tap_data(
            s.dataset, s.limit, seed=s.seed)
        n = len(self.data)
        if s.batch_size > n:
            raise ValueError(f"batch size M = {s.batch_size} exceeds the {n} training rows")
        self._check_n_solutions(s.n_solutions, " (K initialisations are rows of the batch)")
        rng = np.random.default_rng(stream_seed(s.seed, "subsets"))
        eval_idx = np.sort(rng.permutation(n)[: min(s.eval_rows, n)])
        self.eval_data = self.data[eval_idx]
        return rng, eval_idx

    def _check_n_solutions(self, k, why="") -> None:
        if k is not None and k > self.settings.batch_size:
            raise ValueError(f"n_solutions K = {k} must be <= the batch size "
                             f"M = {self.settings.batch_size}{why}")

    def _check_changes(self, changes: dict) -> None:
        refuse_model_change(changes)
        super()._check_changes(changes)
        self._check_n_solutions(changes.get("n_solutions"))

    def _advance(self) -> list[dict]:
        """One point (:meth:`_advance_point`), points serialised by ``_advance_lock``.  BLAS
        runs one thread per call meanwhile (:func:`rbmviz._blas.single_threaded_blas`): the
        TAP iteration's products are small (M × N_v × N_h), and two-thread OpenBLAS waits for
        a core held by the server or the browser — 784 × 100 points were ~10× slower on a busy
        2-core machine."""
        with self._advance_lock, single_threaded_blas():
            return self._advance_point()

    def _deliver(self, batch) -> None:
        if self.sink:
            self.sink(batch, self.snapshot)
