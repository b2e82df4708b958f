"""When :class:`rbmviz.runs.Run` trains and records (the *Evaluation on a budget* section of
:mod:`rbmviz.runs`): the mini-batch boundaries, the update at which the next record is due
(fixed spacing, or spaced so that evaluation takes at most the run's ``eval_budget`` of the wall
time) and the training chunks up to it.
"""
from __future__ import annotations

import math
import time

import numpy as np

from . import models as _models

__all__ = ["EvaluationSchedule", "batch_bounds", "FIRST_EVAL_SUSPECT"]

#: a first evaluation slower than this (s) and than 20 updates may include one-off costs (Numba
#: cache loads, thread start-up): under eval_every="auto" the second record then follows after
#: one update/epoch, and the schedule uses the smaller of the two costs from then on
FIRST_EVAL_SUSPECT = 0.05


def batch_bounds(n_rows: int, batch_size: int) -> np.ndarray:
    """Boundaries of ``n_rows // batch_size`` mini-batches of (nearly) equal size.

    The remainder is spread one row at a time over the first batches (as
    ``numpy.array_split``).

    Parameters
    ----------
    n_rows : int
        Rows of the training data.
    batch_size : int
        Rows per batch (at most ``n_rows``).

    Returns
    -------
    numpy.ndarray, shape (n_batches + 1,)
        Batch ``i`` is rows ``bounds[i]:bounds[i + 1]``.
    """
    n_batches = max(1, n_rows // batch_size)
    sizes = np.full(n_batches, n_rows // n_batches, dtype=np.int64)
    sizes[: n_rows % n_batches] += 1
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


class EvaluationSchedule:
    """The record schedule of :class:`rbmviz.runs.Run`, which inherits it.

    It reads the run's spacing options (``eval_every``, ``record_every_updates``,
    ``eval_budget``, ``chunk_seconds``, ``yield_when``) and the measured costs of an update and
    of an evaluation, and trains through the run's ``_train_chunk``.
    """

    def _target(self) -> int:
        """Run updates at which the next record is due (never past the last epoch).  Under
        ``eval_every="auto"``, a run with nothing to evaluate (no metrics and no likelihood
        guard, e.g. a model of another kind) records at epoch ends: a free evaluation would
        otherwise make a record per update.  Records within epochs keep at least the budget's
        spacing to the last one (made at the last epoch whatever the budget): a record due
        closer to it than that moves to it."""
        nb, last = self.n_batches, self._u_record
        if self.record_every_updates is not None:
            r = self.record_every_updates
            target = (last // r + 1) * r
        elif self.eval_every == "auto" and not self.metrics and self._guard_rows is None:
            target = (last // nb + 1) * nb
        elif self.eval_every != "auto":
            span = self.eval_every * nb
            target = (last // span + 1) * span
        else:
            t_upd = self._t_update or self._prior_update_seconds()
            beta = self.eval_budget
            t_eval = min(self._eval_times[-2:]) if self._eval_times else 0.0
            n = max(1, math.ceil((1.0 - beta) / beta * t_eval / t_upd))
            if len(self._eval_times) == 1 and t_eval > max(FIRST_EVAL_SUSPECT, 20 * t_upd):
                n = 1     # the first evaluation may include one-off costs: measure again soon
            target = self._u_record + n
            if nb == 1 or n >= nb:                     # whole epochs: records at epoch ends
                target = -(-target // nb) * nb
            elif self.epochs is not None and self.epochs * nb - target < n:
                target = self.epochs * nb      # no record closer than n updates to the last
            target = max(target, last + 1)
        if self.epochs is not None:
            target = min(target, self.epochs * nb)
        return target

    def _train_until(self, target, deadline):
        """Train in time-bounded chunks until ``target()`` updates (re-read after every
        chunk: auto spacing uses the measured cost of an update), the deadline passes (after
        at least one chunk) or an interrupt was requested."""
        first = True
        while True:
            goal = target()
            if self._u >= goal:
                return
            if not first and deadline is not None and time.perf_counter() >= deadline:
                return
            if not first and self.yield_when is not None and self.yield_when():
                return
            first = False
            budget = self.chunk_seconds
            if deadline is not None:
                budget = min(budget, max(deadline - time.perf_counter(), 0.0))
            t_upd = self._t_update or self._prior_update_seconds()
            n = max(1, min(goal - self._u, int(budget / max(t_upd, 1e-9))))
            self._train_chunk(n)

    def _prior_update_seconds(self):
        """A pessimistic guess of one update's cost before any was measured (about 1 GFLOP/s
        on ``2k + 4`` products of the model's couplings per batch row,
        :func:`rbmviz.runs.models.couplings`: an RBM's Gibbs steps), so the first chunk
        stays short on large models."""
        k = getattr(self.algorithm, "gibbs_steps_per_update", 1) or 1
        flops = 2.0 * self.batch_size * _models.couplings(self.rbm) * (2 * k + 4)
        return 5e-6 + flops / 1e9
