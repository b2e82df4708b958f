"""TAP machines (Tramel et al. 2018; Gabrié et al. 2015): TAP inference, unique solutions,
TAP free energies and the TAP log-likelihood (the TAP theory page of the documentation).

* :func:`solve` — fixed points of the TAP equations from many initialisations (Alg. 1,
  eqs. 37–38; orders 1–3 of the extended mean field for binary models), with their TAP free
  energies (eq. 36) and log-partition estimates;
* :func:`unique_solutions` — distinct solutions and the map initialisation → solution;
* :func:`log_likelihood` — the TAP log-likelihood (eq. 39), :func:`data_term` its data part;
* :mod:`~rbmviz.tap.denoising` (:func:`denoise`, :func:`corrupt`, :func:`mcc`,
  :func:`denoising_curve`), :mod:`~rbmviz.tap.landscape` (solution counts, free-energy
  distributions, Isomap maps, receptive fields), :mod:`~rbmviz.tap.presets` (Table 1).
"""
from .inference import (COUNT_TOL, LADDER_RUNGS, TAPLogLikelihood, TAPSolution, UniqueSolutions,
                        damping_ladder, data_term, free_energy_binary, log_likelihood, solve, solve_counted,
                        unique_solutions)
from . import denoising, landscape, presets
from .denoising import corrupt, denoise, denoising_curve, mcc

__all__ = ["solve", "solve_counted", "TAPSolution", "unique_solutions", "UniqueSolutions", "log_likelihood",
           "COUNT_TOL", "damping_ladder", "LADDER_RUNGS", "TAPLogLikelihood", "free_energy_binary", "data_term", "denoising", "landscape", "presets",
           "denoise", "corrupt", "mcc", "denoising_curve"]
