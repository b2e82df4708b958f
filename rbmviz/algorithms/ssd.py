"""Stochastic spectral descent, SSD (Carlson, Cevher & Carin 2015; the DC-programming theory page of the documentation (SSD)).

SSD takes steepest-descent steps in non-Euclidean norms: the Schatten-∞ (spectral) norm for
the weights and the ℓ∞ norm for the biases.  With the #-operator of a norm,
``s# = argmax_x ⟨s, x⟩ − ½‖x‖²`` (Carlson, Cevher & Carin 2015),

* ℓ∞ (dual ℓ1): ``s# = ‖s‖₁ · sign(s)``;
* Schatten-∞ (dual Schatten-1 / nuclear): ``S# = ‖S‖_S1 · U Vᵀ`` for the thin SVD
  ``S = U diag(σ) Vᵀ`` (components with σ_k = 0 dropped),

one update from a CD-k estimate ``(G_W, g_b, g_c)`` of the log-likelihood gradient (ascent
direction, data minus model statistics, ``∇F = −G``) is

    ``W += ε_W · G_W#``,  ``b += ε_b · g_b#``,  ``c += ε_c · g_c#``.

Step sizes (the paper's constants are UNCONFIRMED; rbmviz derives a valid majorisation
with ``L_W = 3JM``, ``L_b = 3J²``, ``L_c = 3M²`` for J visible, M hidden units):

* ``step_rule="relative"`` (default): ``ε_W = learning_rate``, ``ε_b = learning_rate·M/J``,
  ``ε_c = learning_rate·J/M`` — the block ratios ``L_W/L_b``, ``L_W/L_c`` of the bound, with
  ``learning_rate`` the weight step; ``learning_rate = 1/(3JM)``
  (:func:`bound_learning_rate`) gives exactly the bound's ``1/L`` steps, which decrease the
  objective for an exact gradient;
* ``step_rule="plain"``: ``ε_W = ε_b = ε_c = learning_rate`` (tuned steps).

Cost: one thin SVD of the J×M gradient per update.  SSD needs large batches (≈1000 on MNIST,
Carlson et al. 2015): ``‖G‖_S1`` grows with the noise of the estimate.
"""
from __future__ import annotations

import numpy as np
import param

from ..kernels.dc import RULE_SSD
from .dcp import InnerLoop
from .knobs import GibbsKnobs

STEP_RULES = ("relative", "plain")


def sharp_vector(s: np.ndarray) -> np.ndarray:
    """The #-operator of the ℓ∞ norm, ``s# = ‖s‖₁ · sign(s)`` (``sign(0) = 0``).

    It maximises ``⟨s, x⟩ − ½‖x‖²_∞`` (Carlson, Cevher & Carin 2015).

    Parameters
    ----------
    s : numpy.ndarray
        A bias gradient.

    Returns
    -------
    numpy.ndarray
        ``s#``, shape of ``s``.
    """
    s = np.asarray(s)
    return np.abs(s).sum() * np.sign(s)


def sharp_matrix(S: np.ndarray, rtol: float | None = None) -> np.ndarray:
    """The #-operator of the spectral (Schatten-∞) norm, ``S# = ‖S‖_S1 · U Vᵀ``.

    Via the thin SVD ``S = U diag(σ) Vᵀ``.  It maximises ``⟨S, X⟩ − ½‖X‖²_S∞``; ``U Vᵀ`` is the
    polar factor of ``S`` (Carlson, Cevher & Carin 2015).

    Parameters
    ----------
    S : numpy.ndarray, shape (J, M)
        A weight gradient.
    rtol : float, optional
        Singular directions with ``σ_k ≤ rtol · σ_max`` are dropped; default
        ``max(J, M) · eps``.

    Returns
    -------
    numpy.ndarray, shape (J, M)
        ``S#``.

    Raises
    ------
    ValueError
        If ``S`` contains NaN or inf.
    """
    S = np.asarray(S)
    if not np.all(np.isfinite(S)):
        raise ValueError("sharp_matrix: the gradient contains NaN or inf")
    U, sig, Vt = np.linalg.svd(S, full_matrices=False)
    if sig.size == 0 or sig[0] == 0.0:
        return np.zeros_like(S)
    if rtol is None:
        rtol = max(S.shape) * np.finfo(S.dtype).eps
    r = int(np.count_nonzero(sig > rtol * sig[0]))
    return sig.sum() * (U[:, :r] @ Vt[:r])


def bound_learning_rate(n_visible: int, n_hidden: int) -> float:
    """The ``learning_rate`` ``1/(3JM)`` that makes ``step_rule="relative"`` take the bound's steps.

    These are the majorisation steps ``1/L_W``, ``1/L_b``, ``1/L_c`` of the module docstring.

    Parameters
    ----------
    n_visible : int
        ``J``, visible units.
    n_hidden : int
        ``M``, hidden units.

    Returns
    -------
    float
        ``1 / (3 J M)``.
    """
    return 1.0 / (3.0 * n_visible * n_hidden)


class SSD(InnerLoop):
    """SSD: stochastic spectral descent with CD-k gradient estimates (Carlson et al. 2015).

    Parameters
    ----------
    k : int
        Gibbs steps of the CD-k estimate (≥ 1).  Carlson et al., as reproduced by Upadhya &
        Sastry, use CD-25 with batches of 1000.
    learning_rate : float
        Weight step ``ε_W`` (see ``step_rule``).
    step_rule : {"relative", "plain"}
        How the bias steps follow from ``learning_rate`` (module docstring).
    momentum, weight_decay, seed
        See :class:`~rbmviz.algorithms.base.Algorithm` (applied to the #-directions).
    """

    name = "ssd"
    label = "SSD"
    reference = "Carlson, Cevher & Carin (2015)"
    equation = (r"W \leftarrow W + \epsilon_W \|G_W\|_{S_1} U V^\top,\ "
                r"b \leftarrow b + \epsilon_b \|g_b\|_1 \operatorname{sign} g_b,\ "
                r"c \leftarrow c + \epsilon_c \|g_c\|_1 \operatorname{sign} g_c")

    class Knobs(GibbsKnobs):
        step_rule = param.Selector(
            default="relative", objects=list(STEP_RULES), label="SSD step rule",
            doc="ssd only: 'relative' = bias steps ε_b = η·M/J, ε_c = η·J/M (the block ratios of "
                "the majorisation bound, Carlson et al. 2015); 'plain' = every step η.")

    LIVE_KNOBS = ("k", "step_rule", *InnerLoop.LIVE_KNOBS)

    @property
    def k_inner(self) -> int:
        """Gibbs steps per update: ``k`` (one inner step per batch).

        Returns
        -------
        int
            ``self.k``.
        """
        return self.k

    def step_sizes(self, n_visible: int, n_hidden: int) -> tuple[float, float, float]:
        """The step sizes ``(ε_W, ε_b, ε_c)`` for a model of this size.

        Parameters
        ----------
        n_visible, n_hidden : int
            ``J`` and ``M``, as in :func:`bound_learning_rate`.

        Returns
        -------
        tuple of float
            ``(ε_W, ε_b, ε_c)`` under ``step_rule``.
        """
        lr = self.learning_rate
        if self.step_rule == "plain":
            return lr, lr, lr
        return lr, lr * n_hidden / n_visible, lr * n_visible / n_hidden

    def _fused_args(self, rbm):
        _, eb, ec = self.step_sizes(rbm.n_visible, rbm.n_hidden)
        lr = self.learning_rate
        empty = np.zeros(0, dtype=rbm.dtype)
        return RULE_SSD, empty, empty, 0.0, 0.0, eb / lr, ec / lr

    def _step(self, rbm, gW, gb, gc):
        _, eb, ec = self.step_sizes(rbm.n_visible, rbm.n_hidden)
        lr = self.learning_rate
        if not np.all(np.isfinite(gW)):     # diverged parameters: a NaN step, so that the
            dW = np.full_like(gW, np.nan)   # run's check reports the epoch (no SVD of NaN)
        else:
            dW = sharp_matrix(gW).astype(gW.dtype, copy=False)
        db = (sharp_vector(gb) * (eb / lr)).astype(gb.dtype, copy=False)
        dc = (sharp_vector(gc) * (ec / lr)).astype(gc.dtype, copy=False)
        self.apply_gradient_(rbm, dW, db, dc)       # θ += learning_rate · (…)


__all__ = ["SSD", "sharp_vector", "sharp_matrix", "bound_learning_rate", "STEP_RULES"]
