"""Centered rules: the centered gradient CG (Melchior, Fischer & Wiskott 2016, Alg. 1, variant
``dd^b_s``) and centered S-DCP, CS-DCP (Upadhya & Sastry 2017, Alg. 4).

A centered RBM with visible offset ``μ`` and hidden offset ``λ`` has the energy
``E(v, h) = −(v − μ)ᵀb̃ − (h − λ)ᵀc̃ − (v − μ)ᵀW(h − λ)`` (the DC-programming theory page of the documentation (centering)).  It is
the *same distribution* as the normal RBM

    ``W = W``,  ``b = b̃ − Wλ``,  ``c = c̃ − Wᵀμ``      (Melchior et al. 2016),

so these algorithms keep :class:`rbmviz.RBM` in the normal parameterisation ``(W, b, c)``
— every evaluation (exact log-likelihood, AIS, sampling) works on it unchanged — and hold
the offsets ``μ`` (:attr:`mu`), ``λ`` (:attr:`lam`) as algorithm state.
:meth:`CenteredMixin.centered_params` gives ``(W, b̃, c̃, μ, λ)``.

What centering changes is the *step*.  With the normal-parameter ascent direction
``(∇W, ∇b, ∇c)`` of a batch (data minus model statistics), the centered gradient
``∇W̃ = ⟨(v−μ)(h−λ)ᵀ⟩_d − ⟨(v−μ)(h−λ)ᵀ⟩_m``, ``∇b̃ = ∇b``, ``∇c̃ = ∇c`` equals
``∇W − ∇b λᵀ − μ ∇cᵀ`` (the ``μλᵀ`` terms cancel), and the step
``W̃ += η∇W̃``, ``b̃ += η∇b``, ``c̃ += η∇c`` is, in the normal parameters,

    ``W += η∇W̃``,  ``b += η(∇b − ∇W̃ λ)``,  ``c += η(∇c − ∇W̃ᵀ μ)``.

Moving the offsets (``μ ← (1−ν_μ)μ + ν_μ μ_batch``, ``λ`` alike) comes with the
re-parameterisation ``b̃ ← b̃ + ν_λ W(λ_batch − λ)``, ``c̃ ← c̃ + ν_μ Wᵀ(μ_batch − μ)`` that
keeps the model unchanged (orientation corrected: the errata noted on the documentation's theory pages; see
:func:`reparameterise`).  In the normal parameterisation that re-parameterisation is the
identity — ``(W, b, c)`` do not move when the offsets do — which is exactly the statement that
the distribution is unchanged.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import param

from ..kernels.dc import RULE_CENTERED
from .dcp import SDCP, InnerLoop
from .knobs import GibbsKnobs

if TYPE_CHECKING:
    from ..model import RBM

DEFAULT_NU = 0.01


def to_normal(W: np.ndarray, b_centered: np.ndarray, c_centered: np.ndarray, mu: np.ndarray,
              lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normal parameters ``(W, b, c)`` of the centered RBM ``(W, b̃, c̃; μ, λ)``.

    ``b = b̃ − Wλ``, ``c = c̃ − Wᵀμ`` (Melchior et al. 2016; the DC-programming theory page of
    the documentation).

    Parameters
    ----------
    W : numpy.ndarray, shape (n_visible, n_hidden)
        Weights (the same in both parameterisations).
    b_centered : numpy.ndarray, shape (n_visible,)
        Centered visible biases ``b̃``.
    c_centered : numpy.ndarray, shape (n_hidden,)
        Centered hidden biases ``c̃``.
    mu : numpy.ndarray, shape (n_visible,)
        Visible offsets ``μ``.
    lam : numpy.ndarray, shape (n_hidden,)
        Hidden offsets ``λ``.

    Returns
    -------
    W : numpy.ndarray
        The weights (the same array).
    b : numpy.ndarray
        Normal visible biases.
    c : numpy.ndarray
        Normal hidden biases.
    """
    return W, b_centered - W @ lam, c_centered - W.T @ mu


def to_centered(W: np.ndarray, b: np.ndarray, c: np.ndarray, mu: np.ndarray,
                lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centered biases ``(W, b̃, c̃)`` of the normal RBM ``(W, b, c)`` for offsets ``μ, λ``.

    ``b̃ = b + Wλ``, ``c̃ = c + Wᵀμ``; the inverse of :func:`to_normal`.

    Parameters
    ----------
    W, b, c : numpy.ndarray
        The normal RBM's weights (n_visible, n_hidden) and biases (n_visible,), (n_hidden,).
    mu, lam
        The offsets, as in :func:`to_normal`.

    Returns
    -------
    W : numpy.ndarray
        The weights (the same array).
    b_centered : numpy.ndarray
        ``b̃``.
    c_centered : numpy.ndarray
        ``c̃``.
    """
    return W, b + W @ lam, c + W.T @ mu


def centered_energy(V: np.ndarray, H: np.ndarray, W: np.ndarray, b_centered: np.ndarray,
                    c_centered: np.ndarray, mu: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Centered energy ``E(v, h) = −(v−μ)ᵀb̃ − (h−λ)ᵀc̃ − (v−μ)ᵀW(h−λ)`` of paired rows.

    Parameters
    ----------
    V : numpy.ndarray, shape (n, n_visible)
        Visible states.
    H : numpy.ndarray, shape (n, n_hidden)
        Hidden states.
    W : numpy.ndarray, shape (n_visible, n_hidden)
        Weights.
    b_centered, c_centered : numpy.ndarray
        Centered biases ``b̃``, ``c̃``.
    mu, lam : numpy.ndarray
        Offsets ``μ``, ``λ``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The energies.
    """
    Vc, Hc = V - mu, H - lam
    return -(Vc @ b_centered) - (Hc @ c_centered) - np.einsum("ni,ij,nj->n", Vc, W, Hc)


def reparameterise(W: np.ndarray, b_centered: np.ndarray, c_centered: np.ndarray,
                   mu: np.ndarray, lam: np.ndarray, mu_batch: np.ndarray, lam_batch: np.ndarray,
                   nu_mu: float, nu_lambda: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Move the offsets towards the batch means without changing the model.

    Upadhya & Sastry (2017) Alg. 4 steps 4.2–4.3, with the orientation corrected (the errata
    noted on the documentation's theory pages):
    ``b̃' = b̃ + ν_λ W(λ_batch − λ)``, ``c̃' = c̃ + ν_μ Wᵀ(μ_batch − μ)``,
    ``μ' = (1−ν_μ)μ + ν_μ μ_batch``, ``λ' = (1−ν_λ)λ + ν_λ λ_batch``.

    Parameters
    ----------
    W : numpy.ndarray, shape (n_visible, n_hidden)
        Weights.
    b_centered, c_centered : numpy.ndarray
        Centered biases ``b̃``, ``c̃``.
    mu, lam : numpy.ndarray
        Current offsets ``μ``, ``λ``.
    mu_batch, lam_batch : numpy.ndarray
        Batch means the offsets slide towards.
    nu_mu, nu_lambda : float
        Sliding factors in [0, 1].

    Returns
    -------
    b_centered, c_centered, mu, lam : numpy.ndarray
        The new ``(b̃', c̃', μ', λ')`` (new arrays).
    """
    b_new = b_centered + nu_lambda * (W @ (lam_batch - lam))
    c_new = c_centered + nu_mu * (W.T @ (mu_batch - mu))
    mu_new = (1.0 - nu_mu) * mu + nu_mu * mu_batch
    lam_new = (1.0 - nu_lambda) * lam + nu_lambda * lam_batch
    return b_new, c_new, mu_new, lam_new


class CenteredMixin:
    """Offsets ``μ``, ``λ`` as algorithm state, moved towards the batch means with sliding
    factors ``ν_μ``, ``ν_λ`` before every parameter step, and the centered step applied to the
    normal parameters (module docstring).

    ``μ`` starts at the mean of the training data given to :meth:`setup`, ``λ`` at 0.5
    (Upadhya & Sastry §4.1, following Melchior et al.).  The model's own initial parameters
    are kept as they are (so every algorithm of a comparison starts from the same
    distribution)."""

    #: the knobs of the offsets, mixed into a rule's ``Knobs``
    class OffsetKnobs(param.Parameterized):
        nu_mu = param.Number(
            DEFAULT_NU, bounds=(0.0, 1.0), softbounds=(0.0, 0.1), label="Offset rate ν_μ",
            doc="cg/csdcp only: sliding factor of the visible offset μ ← (1−ν_μ)μ + ν_μ·mean X "
                "(Melchior et al. 2016; 0 freezes it).")
        nu_lambda = param.Number(
            DEFAULT_NU, bounds=(0.0, 1.0), softbounds=(0.0, 0.1), label="Offset rate ν_λ",
            doc="cg/csdcp only: sliding factor of the hidden offset λ ← (1−ν_λ)λ + "
                "ν_λ·mean σ(XW + c) (0 freezes it).")

    LIVE_OFFSET_KNOBS = ("nu_mu", "nu_lambda")

    def setup(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        """Allocate the rule's state and the offsets: ``μ`` at the mean of ``data``, ``λ`` at 0.5.

        Parameters
        ----------
        rbm, data, batch_size
            As in :meth:`Algorithm.setup <rbmviz.algorithms.base.Algorithm.setup>`.
        """
        super().setup(rbm, data, batch_size)
        self.mu = np.asarray(data, dtype=np.float64).mean(axis=0).astype(rbm.dtype)
        self.lam = np.full(rbm.n_hidden, 0.5, dtype=rbm.dtype)
        self._mu_batch = np.empty_like(self.mu)
        self._lam_batch = np.empty_like(self.lam)

    def centered_params(self, rbm: RBM) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                 np.ndarray]:
        """The centered parameters of ``rbm`` for the current offsets (copies).

        Parameters
        ----------
        rbm : RBM
            The model being trained.

        Returns
        -------
        W, b_centered, c_centered, mu, lam : numpy.ndarray
            ``(W, b̃, c̃, μ, λ)``.
        """
        W, b, c = rbm.params
        W, bc, cc = to_centered(W, b, c, self.mu, self.lam)
        return W.copy(), bc, cc, self.mu.copy(), self.lam.copy()

    def _begin_batch(self, rbm, mean_v, mean_h):
        self._mu_batch[...] = mean_v          # μ_batch = mean X
        self._lam_batch[...] = mean_h         # λ_batch = mean σ(XW + c) at θ⁽ᵗ⁾

    def _fused_args(self, rbm):
        return RULE_CENTERED, self.mu, self.lam, self.nu_mu, self.nu_lambda, 1.0, 1.0

    def _step(self, rbm, gW, gb, gc):
        dt = self.mu.dtype.type
        # offsets slide towards the batch means (the normal parameters do not change: this is
        # the model-preserving re-parameterisation of b̃, c̃)
        self.mu *= dt(1.0 - self.nu_mu)
        self.mu += dt(self.nu_mu) * self._mu_batch
        self.lam *= dt(1.0 - self.nu_lambda)
        self.lam += dt(self.nu_lambda) * self._lam_batch
        # centered direction with the new offsets, expressed as a normal-parameter step
        gW -= np.outer(gb, self.lam)
        gW -= np.outer(self.mu, gc)
        gb -= gW @ self.lam
        gc -= gW.T @ self.mu
        self.apply_gradient_(rbm, gW, gb, gc)


class CSDCP(CenteredMixin, SDCP):
    """CS-DCP: centered S-DCP (Upadhya & Sastry 2017, Alg. 4).

    S-DCP's ``d`` inner steps of ``k_inner`` Gibbs steps (see :class:`~.dcp.SDCP`, whose
    budget settings ``k``/``d``/``k_inner`` it shares), where every inner step first slides
    the offsets towards the batch means ``μ_batch = mean X``,
    ``λ_batch = mean σ(XW + c)|θ⁽ᵗ⁾`` (so ``d`` times per batch, as printed) and then takes the
    centered step with the new offsets.

    Parameters
    ----------
    k, d, k_inner
        Gibbs budget, see :func:`~.dcp.resolve_budget` (default d = 3, k_inner = 4).
    nu_mu, nu_lambda : float in [0, 1]
        Sliding factors of the visible and hidden offsets (default 0.01).  0 freezes an
        offset.
    learning_rate, momentum, weight_decay, seed
        See :class:`~rbmviz.algorithms.base.Algorithm` (momentum and weight decay act on the
        normal-parameter step).

    Notes
    -----
    The printed Alg. 4 forms the data term ``G_W = (X−μ)ᵀ(H_p−λ)/N`` once, with the offsets of
    inner step 0, and the model term with the offsets of step ``l``.  Here the data
    statistics ``∇g(θ⁽ᵗ⁾)`` are computed once (in the normal parameterisation) and both terms
    are centered with the *current* offsets: the step is then exactly the centered gradient of
    the DC sub-problem ``f(θ) − θᵀ∇g(θ⁽ᵗ⁾)`` at the current parameterisation.  The two differ
    by ``O(ν)`` within a batch; with ``d = 1`` they coincide.
    """

    name = "csdcp"
    label = "CS-DCP"
    reference = "Upadhya & Sastry (2017) Alg. 4; Melchior et al. (2016)"
    equation = (r"\tilde\theta \leftarrow \tilde\theta + \eta\Big("
                r"\nabla_{\tilde\theta} g(\theta^{(t)}) - \langle \phi_{\mu,\lambda}(\tilde v,h)"
                r"\rangle_{\tilde v \leftarrow \text{Gibbs}^{K'}(\tilde v)}"
                r"\Big)\ \ d\ \text{times per batch}")

    class Knobs(CenteredMixin.OffsetKnobs, SDCP.Knobs):
        pass

    LIVE_KNOBS = (*SDCP.LIVE_KNOBS, *CenteredMixin.LIVE_OFFSET_KNOBS)


class CG(CenteredMixin, InnerLoop):
    """CG: the centered gradient with CD-k (Melchior, Fischer & Wiskott 2016, Alg. 1,
    ``dd^b_s``; the DC-programming theory page of the documentation (centering)).

    Per mini-batch: hidden probabilities of the data, ``k`` Gibbs steps from the data (as
    CD-k), offsets slid towards ``mean X`` and ``mean σ(XW + c)``, then the centered step with
    the new offsets.  This is CS-DCP with ``d = 1``, ``k_inner = k``.

    Parameters
    ----------
    k : int
        Gibbs steps per update (Melchior's Alg. 1 uses 1; Upadhya & Sastry run CG with
        CD-24).
    nu_mu, nu_lambda : float in [0, 1]
        Sliding factors (default 0.01).  With ``nu_mu = nu_lambda = 0`` and offsets set to 0,
        CG is CD-k.
    learning_rate, momentum, weight_decay, seed
        See :class:`~rbmviz.algorithms.base.Algorithm`.
    """

    name = "cg"
    label = "centered gradient"
    reference = "Melchior, Fischer & Wiskott (2016) Alg. 1 (dd^b_s)"
    equation = (r"\tilde\theta \leftarrow \tilde\theta + \eta\Big("
                r"\langle \phi_{\mu,\lambda}(v,h)\rangle_{\text{data}}"
                r" - \langle \phi_{\mu,\lambda}(v^{(k)},h)\rangle\Big),\ "
                r"\phi_{\mu,\lambda} = ((v-\mu)(h-\lambda)^\top, v, h)")

    class Knobs(CenteredMixin.OffsetKnobs, GibbsKnobs):
        pass

    LIVE_KNOBS = ("k", *InnerLoop.LIVE_KNOBS, *CenteredMixin.LIVE_OFFSET_KNOBS)

    @property
    def k_inner(self) -> int:
        """Gibbs steps per inner step: ``k`` (CG is CS-DCP with ``d = 1``)."""
        return self.k


__all__ = ["CG", "CSDCP", "CenteredMixin", "to_normal", "to_centered", "centered_energy",
           "reparameterise"]
