"""Exceptions shared by every layer of rbmviz (the lowest module: it imports nothing of rbmviz).

* :class:`RunDiverged` — a training run stopped itself because a quantity that shows
  divergence (a parameter, a log-likelihood, a pseudo-likelihood ...) went bad.
* :class:`Interrupted` — a run was stopped by Ctrl-C (``KeyboardInterrupt``); it carries the
  records finished before the interrupt.
"""
from __future__ import annotations

__all__ = ["RunDiverged", "Interrupted"]


class RunDiverged(RuntimeError):
    """Training produced NaN/inf, exploding parameters or a collapsing likelihood.

    Parameters
    ----------
    message : str
        The error message.
    epoch : int
        The epoch in which it happened (parameters are checked after every chunk of updates).
    last_good_epoch : int
        The epoch of the last healthy evaluation.
    quantity : str
        What showed it, e.g. ``"W"``, ``"train_ll"``, ``"spl"``, or ``"ll_guard"`` (the run's
        always-on log-likelihood check of a few training rows, whatever the recorded metrics).
    value : float
        Its value when the run stopped.
    records : list of dict, optional
        The records finished before the divergence (empty when the raiser keeps none).

    Attributes
    ----------
    epoch, last_good_epoch, quantity, value, records
        The parameters, as given (``records`` is ``[]`` if None).
    """

    def __init__(self, message: str, *, epoch: int, last_good_epoch: int, quantity: str,
                 value: float, records: list[dict] | None = None) -> None:
        super().__init__(message)
        self.epoch, self.last_good_epoch = epoch, last_good_epoch
        self.quantity, self.value = quantity, value
        self.records = [] if records is None else records


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run: a ``KeyboardInterrupt`` (so ``except KeyboardInterrupt`` still
    catches it) that keeps what was finished.

    Parameters
    ----------
    message : str
        The error message.
    records : list of dict, optional
        The records finished before the interrupt (:func:`rbmviz.train` raises this with the
        run's records; ``pandas.DataFrame(exc.records)`` is the table ``train`` would have
        returned so far).
    run : object, optional
        The interrupted :class:`rbmviz.runs.Run` (its model holds the parameters reached).

    Attributes
    ----------
    records, run
        The parameters, as given (``records`` is ``[]`` if None).
    """

    def __init__(self, message: str = "interrupted", *, records: list[dict] | None = None,
                 run: object | None = None) -> None:
        super().__init__(message)
        self.records = [] if records is None else records
        self.run = run
