"""The bias of k-step contrastive divergence, computed exactly, and its bounds.

Fischer & Igel (2011), "Bounding the bias of contrastive divergence learning", restated in
the CD-bias theory page of the documentation (section numbers below refer to it).  Project convention: ``W`` has
shape (n_visible, n_hidden), energy ``E(v, h) = −vᵀWh − bᵀv − cᵀh`` (the paper's ``w`` is
``Wᵀ``; its ``m`` visible and ``n`` hidden units are ``n_visible`` and ``n_hidden``).

What is computed
----------------
For a start distribution ``μ`` over visible states (the empirical distribution ``p_e`` of
the training rows for the batch update, a point mass for one pattern), with ``T`` the
visible-to-visible block-Gibbs transition matrix and ``q_k = μ Tᵏ``:

* the **bias** of the expected CD-k update, for every parameter ``θ_a`` of ``(W, b, c)``
  (§2.1; the identity of Bengio & Delalleau)

      exact gradient − E[CD-k update] = Σ_v (q_k(v) − p(v)) φ̄_a(v),
      φ̄(v) = (v σ(c + vW)ᵀ, v, σ(c + vW)),

  and its maximum over all ``n_visible·n_hidden + n_visible + n_hidden`` parameters;
* the **bound** of Theorem 3 (one pattern ``v⁽⁰⁾``) and Theorem 4 (batch),

      bias ≤ ‖μ − p‖ (1 − e^{−(n_visible + n_hidden) Δ})ᵏ,

  ``‖μ − p‖`` the total-variation distance (with the ½): ``1 − p(v⁽⁰⁾)`` for one pattern,
  ``½‖p_e − p‖₁`` for the batch; Δ from the ϑ/ξ formulas of §5 (:func:`delta`);
* the stand-in for the earlier Bengio–Delalleau bound (§2.2, :func:`bengio_delalleau_bound`).

Limits
------
The exact bias enumerates **both** layers: it builds ``p(h | v)`` and ``p(v | h)`` for all
``2**n_visible × 2**n_hidden`` pairs and the ``2**n_visible × 2**n_visible`` transition
matrix, so it needs ``n_visible <= 10`` and ``n_hidden <= 10`` (:data:`MAX_EXACT_UNITS`;
tables of at most 2**20 entries, 8 MiB each).  The bound only needs ``p(v)`` on the data
rows and ``log Z`` (enumeration of the smaller layer, at most 30 units), Δ and the
Bengio–Delalleau bound need nothing but the parameters.

Training
--------
:func:`train_expected_cd` trains small RBMs with the exact expected CD-k update (no
sampling noise), as the paper trains its 6×6 RBMs, recording bias, bound and both of its
factors (Numba kernel :mod:`rbmviz.kernels.bias`, parallel over runs).
"""
from .exact import (
                    MAX_BRUTE_FORCE_UNITS,
                    MAX_EXACT_UNITS,
                    BoundFactors,
                    bengio_delalleau_bound,
                    bias_table,
                    bound_factors,
                    cd_bias_bound,
                    cd_bias_exact,
                    cd_bias_parameters,
                    delta,
                    delta_brute_force,
                    delta_terms,
                    empirical_distribution,
)
from .training import CHUNK_SECONDS, RECORD_COLUMNS, train_expected_cd

__all__ = [
    "MAX_EXACT_UNITS", "MAX_BRUTE_FORCE_UNITS", "BoundFactors", "delta", "delta_terms",
    "delta_brute_force", "empirical_distribution", "cd_bias_exact", "cd_bias_parameters",
    "cd_bias_bound", "bound_factors", "bengio_delalleau_bound", "bias_table", "train_expected_cd",
    "RECORD_COLUMNS", "CHUNK_SECONDS",
]
