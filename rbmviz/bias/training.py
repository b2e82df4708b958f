"""Exact expected-CD-k training of small RBMs (Fischer & Igel 2011, Sec. 3;
the CD-bias theory page of the documentation), with the bias, the bound and their factors recorded along the
way, a divergence guard and time-bounded kernel calls (Ctrl-C)."""
from __future__ import annotations

import math
import time

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_float, check_int
from ..bounds import MAX_WEIGHT_DEFAULT
from ..errors import Interrupted, RunDiverged
from ..kernels import bias as _kb
from ..model import RBM
from .exact import _check_exact_size, _check_k, _check_rbm, empirical_distribution

if TYPE_CHECKING:
    import pandas

__all__ = ["train_expected_cd", "RECORD_COLUMNS", "CHUNK_SECONDS"]

#: metric columns of the records of :func:`train_expected_cd`
RECORD_COLUMNS = _kb.METRICS


def _record_schedule(iterations, record_every, record_at):
    if record_at is not None:
        if record_every is not None:
            raise ValueError("give record_every or record_at, not both")
        arr = np.asarray(record_at)
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError("record_at must be a non-empty 1-D sequence of integer iteration numbers")
        arr = np.unique(arr.astype(np.int64))
        if arr[0] < 0 or arr[-1] > iterations:
            raise ValueError(f"record_at must lie in [0, iterations={iterations}], got "
                             f"{arr[0]}..{arr[-1]}")
        return arr
    if record_every is None:
        record_every = max(1, iterations // 100)
    record_every = check_int(record_every, "record_every", low=1)
    return np.unique(np.append(np.arange(0, iterations + 1, record_every), iterations)).astype(np.int64)


def _guard_limit(value, name) -> float:
    """A limit of the divergence guard: a float > 0, or ``inf`` (guard off)."""
    if isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and value == np.inf:
        return math.inf
    return check_float(value, name, low=0.0, low_open=True)


#: wall time one kernel call of :func:`train_expected_cd` aims at with ``chunk="auto"`` (so
#: Ctrl-C, which Python only sees between calls, takes effect within about this long)
CHUNK_SECONDS = 0.25


def train_expected_cd(rbms: RBM | Sequence[RBM], data: ArrayLike, *, k: int = 1,
                      learning_rate: float = 0.1, iterations: int = 1000,
                      weight_decay: float = 0.0, record_every: int | None = None,
                      record_at: Sequence[int] | None = None,
                      progress: bool | Callable[[int], Any] = False, chunk: str | int = "auto",
                      max_weight: float = MAX_WEIGHT_DEFAULT, max_ll_drop: str | float = "auto"
                      ) -> "pandas.DataFrame":
    """Train small RBMs in place with the exact expected CD-k update (no sampling noise).

    Every iteration is one full-batch step (the CD-bias theory page of the documentation)::

        W ← W + η (CD_W − λ W),   b ← b + η CD_b,   c ← c + η CD_c,
        CD = Σ_v (p_e(v) − q_k(v)) φ̄(v),   q_k = p_e Tᵏ,

    the expectation over the Gibbs chain of the batch CD-k update of
    :mod:`rbmviz.algorithms.cd` (the same as :func:`rbmviz.evaluate.expected_cd_update`),
    as Fischer & Igel train their 6×6 RBMs (Sec. 3).  Several models (e.g. the repetitions of
    an experiment) are trained in parallel, one per thread; there is no randomness, so the
    same initial models give identical results for any thread count and any ``chunk``.

    Divergence guard (inside the kernel, every iteration): an update that would make a
    parameter non-finite or larger than ``max_weight`` in magnitude is not applied, and a
    recorded log-likelihood more than ``max_ll_drop`` nats below the best one recorded
    before (a likelihood collapse) stops training too; either raises
    :class:`~rbmviz.errors.RunDiverged` naming the quantity (``"W"``, ``"b"``, ``"c"``,
    ``"log_likelihood"`` or a non-finite metric), its value and the iteration.

    Parameters
    ----------
    rbms : RBM or sequence of RBM
        Models of the same shape, each with n_visible <= 10 and n_hidden <= 10.  Updated in place (also when interrupted: parameters are written
        back after every chunk of iterations).
    data : array (n_samples, n_visible) of 0/1
        The training set; its empirical
        distribution ``p_e`` is used.
    k : int >= 1
        Gibbs steps of CD-k.
    learning_rate : float > 0
        Η.
    iterations : int >= 0
        Number of updates.
    weight_decay : float >= 0
        Λ, L2 decay of the weights only.
    record_every : int, optional
        Record every this many iterations (default: 100
        records), plus at 0 and at ``iterations``.
    record_at : sequence of int, optional
        Explicit iteration numbers (in
        ``[0, iterations]``) instead of ``record_every``.
    progress : bool or callable
        True shows a tqdm progress bar; a callable is called
        with the number of iterations done after every chunk.
    chunk : "auto" or int
        Iterations per kernel call.  ``"auto"`` sizes the calls to
        about :data:`CHUNK_SECONDS` of wall time each, so Ctrl-C (``KeyboardInterrupt``)
        takes effect within about that long; an int fixes the number.
    max_weight : float > 0
        Largest allowed ``|parameter|`` (the default, 1e3, is that of
        :class:`rbmviz.runs.Run`; the paper's runs stay below 10); ``inf`` turns this off.
    max_ll_drop : "auto" or float > 0 (``inf``: off)
        Largest allowed fall of the recorded mean
        log-likelihood below its best recorded value, in nats; ``"auto"`` is
        ``10 · n_visible · ln 2``, ten times the loss of the uniform model.

    Returns
    -------
    pandas.DataFrame
        One row per run and recorded iteration (the parameters after that many updates),
        columns ``run, iteration, k`` and :data:`RECORD_COLUMNS`: ``bias`` (max over
        parameters, batch), ``bound`` (Theorem 4), ``distance`` (½‖p_e − p‖₁), ``mixing``
        ((1 − e^{−(m+n)Δ})ᵏ), ``one_minus_mixing`` (1 − mixing, computed without
        cancellation), ``delta``, ``bd_bound`` (:func:`bengio_delalleau_bound`),
        ``log_likelihood`` (mean over the data, nats), ``weight_norm`` (‖W‖_F).

    Raises
    ------
    rbmviz.errors.RunDiverged
        When the guard above trips.  ``epoch`` is the iteration, ``quantity`` and ``value``
        say what showed it, ``records`` holds the records (dicts) made before it; the
        diverged model holds its last healthy parameters (those after ``epoch`` updates), the
        other models those reached when training stopped.
    ValueError
        For an empty ``rbms``, models of different shapes, a bad record schedule or an
        argument out of range.
    rbmviz.errors.Interrupted
        Ctrl-C (a ``KeyboardInterrupt``), between two kernel calls: the models hold the
        parameters written back after the last finished call, ``records`` the records (dicts)
        made up to it.
    """
    import pandas as pd

    models = [rbms] if isinstance(rbms, RBM) else list(rbms)
    if not models:
        raise ValueError("rbms is empty; expected an RBM or a sequence of RBMs")
    for m in models:
        _check_rbm(m)
    nv, nh = models[0].n_visible, models[0].n_hidden
    if any((m.n_visible, m.n_hidden) != (nv, nh) for m in models):
        raise ValueError("all models must have the same shape, got "
                         f"{sorted({(m.n_visible, m.n_hidden) for m in models})}")
    _check_exact_size(models[0], "exact expected-update training")
    pe = empirical_distribution(data, nv)
    k = _check_k(k)
    lr = check_float(learning_rate, "learning_rate", low=0.0, low_open=True)
    wd = check_float(weight_decay, "weight_decay", low=0.0)
    iterations = check_int(iterations, "iterations", low=0)
    auto_chunk = isinstance(chunk, str) and chunk == "auto"
    chunk = 16 if auto_chunk else check_int(chunk, "chunk", low=1)
    max_weight = _guard_limit(max_weight, "max_weight")
    if isinstance(max_ll_drop, str) and max_ll_drop == "auto":
        max_ll_drop = 10.0 * nv * math.log(2.0)
    max_ll_drop = _guard_limit(max_ll_drop, "max_ll_drop")
    schedule = _record_schedule(iterations, record_every, record_at)

    R = len(models)
    W = np.stack([np.asarray(m.W, np.float64) for m in models])
    b = np.stack([np.asarray(m.b, np.float64) for m in models])
    c = np.stack([np.asarray(m.c, np.float64) for m in models])
    out = np.full((R, len(schedule), _kb.N_METRICS), np.nan)
    status = np.full(R, -1, dtype=np.int64)
    reason = np.full(R, -1, dtype=np.int64)
    value = np.full(R, np.nan)
    best_ll = np.full(R, -np.inf)

    def kernel(lo, hi):
        _kb.run_expected_cd_(W, b, c, pe, k, lr, wd, lo, hi, schedule, out, status,
                             max_weight, max_ll_drop, best_ll, reason, value)

    def write_back():
        for i, m in enumerate(models):
            m.set_params(W=W[i], b=b[i], c=c[i])

    bar = None
    if callable(progress):
        step = progress
    elif progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=iterations, unit="it", desc=f"expected CD-{k}", leave=False)
        step = bar.update
    else:
        step = None
    def records():
        frame = pd.DataFrame(out.reshape(R * len(schedule), _kb.N_METRICS),
                             columns=list(RECORD_COLUMNS))
        frame.insert(0, "k", k)
        frame.insert(0, "iteration", np.tile(schedule, R))
        frame.insert(0, "run", np.repeat(np.arange(R), len(schedule)))
        return frame

    start = written = 0                       # written: iterations the models hold
    try:
        while True:
            stop = min(start + chunk, iterations)
            t0 = time.perf_counter()
            kernel(start, stop)
            if (status >= 0).any():
                break
            write_back()
            written = stop
            if step is not None:
                step(stop - start)
            if stop == iterations:
                kernel(stop, stop)            # the record after the last update
                break
            if auto_chunk:                    # next call ≈ CHUNK_SECONDS (at most 4x longer)
                per_it = (time.perf_counter() - t0) / max(stop - start, 1)
                chunk = int(min(4 * chunk, max(1, CHUNK_SECONDS / max(per_it, 1e-9))))
            start = stop
    except KeyboardInterrupt as exc:
        frame = records()
        done = frame[(frame.iteration <= written) & frame.bias.notna()]
        raise Interrupted(f"expected CD-{k} training interrupted after {written} of {iterations} "
                          f"iterations; the models hold the parameters after iteration {written}",
                          records=done.to_dict("records")) from exc
    finally:
        if bar is not None:
            bar.close()
    frame = records()
    if (status >= 0).any():
        write_back()
        r = int(np.argmax(status >= 0))
        it, why, val = int(status[r]), _kb.QUANTITIES[int(reason[r])], float(value[r])
        if why == "log_likelihood" and math.isfinite(val):
            what = (f"the mean log-likelihood collapsed to {val:.6g} nats at iteration {it}, more "
                    f"than max_ll_drop={max_ll_drop:.6g} below its best recorded value "
                    f"{best_ll[r]:.6g}")
            last_good = it
        elif why in ("W", "b", "c"):
            size = "is not finite" if not math.isfinite(val) else f"exceeds max_weight={max_weight:g}"
            what = (f"update {it + 1} would make an entry of {why} equal {val:.6g}, which {size}; "
                    f"the model holds the parameters after iteration {it}")
            last_good, it = it, it + 1
        else:
            what = f"the recorded {why} is {val} at iteration {it}"
            last_good = it
        done = frame[(frame.iteration < it) & frame.bias.notna()]
        raise RunDiverged(f"expected CD-{k} training diverged (learning_rate={lr:g}, run {r}): "
                          f"{what}; lower the learning rate or add weight decay",
                          epoch=it, last_good_epoch=last_good, quantity=why, value=val,
                          records=done.to_dict("records"))
    return frame
