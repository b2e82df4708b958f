"""The options of the TAP solver (Alg. 1), declared once.

:class:`TAPSolverOptions` is a ``param.Parameterized`` class whose parameters are the
options every TAP entry point takes: default, hard ``bounds``, slider ``softbounds``,
widget ``label`` and one help text (``doc``) each.  Everything else reads it:

* the signatures of :func:`rbmviz.tap.solve`, :func:`~rbmviz.tap.solve_counted`,
  :func:`~rbmviz.tap.log_likelihood`, :func:`~rbmviz.tap.unique_solutions`,
  :func:`~rbmviz.tap.damping_ladder`, the denoising functions of
  :mod:`rbmviz.tap.denoising`, :func:`rbmviz.dbm.tap_solve`, :func:`rbmviz.dbm.log_likelihood`,
  :class:`rbmviz.dbm.DBMTrainer` and :func:`rbmviz.dbm.pretrain` take their defaults from it
  (``damping=TAPSolverOptions.damping``), and check their values against its bounds
  (:func:`check_option`, messages naming the argument);
* :class:`rbmviz.tap.presets.TAPPreset`'s inference fields default to it;
* the TAP training rule's knobs (:class:`rbmviz.algorithms.tap.TAP`) ``order``,
  ``damping``, ``tol``, ``max_iter``, ``unique_tol`` and ``products`` are copies of these
  declarations (:func:`option_param`), with the rule's own label and a narrower ``max_iter``
  (:data:`rbmviz.bounds.TAP_ITER_MAX`, stated where the rule declares it).

An entry point whose default differs on purpose names the option it reads instead:
:func:`~rbmviz.tap.solve_counted`'s ``tol`` is :attr:`TAPSolverOptions.count_tol` (solutions
that are counted are solved more tightly, :func:`~rbmviz.tap.unique_solutions`), and the
likelihood of a deep TAP machine reads :class:`DeepLikelihoodOptions`, which re-declares
only its defaults (as a training rule's ``Knobs`` re-declares only its own defaults).

``tests/test_knobs.py`` checks every signature against these declarations.

This module imports param, :mod:`rbmviz._validation` and :mod:`rbmviz.bounds` only.
"""
from __future__ import annotations

from typing import Any

import param

from .._validation import check_choice, check_float, check_int
from ..bounds import narrowed, parameters_doc

__all__ = ["TAPSolverOptions", "DeepLikelihoodOptions", "option_param", "check_option"]


class TAPSolverOptions(param.Parameterized):
    """Options of the TAP fixed-point iteration (Tramel et al. 2018, Alg. 1; Gabrié et al. 2015).

    The Parameters section below is written from the declarations.
    """

    order = param.Integer(
        2, bounds=(1, 3), label="TAP order",
        doc="order of the TAP expansion — 1 naive mean field, 2 TAP (Onsager term), 3 third "
            "order; 1 and 3 for binary units only.")
    damping = param.Number(
        0.5, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.01, 1.0),
        label="TAP damping",
        doc="weight δ of the new iterate in the TAP fixed-point iteration, "
            "a ← δ a_new + (1 − δ) a_old (1 = undamped).")
    tol = param.Number(
        1e-8, bounds=(0.0, None), inclusive_bounds=(False, True), softbounds=(1e-12, 1e-4),
        label="TAP tolerance",
        doc="a TAP run has converged when the mean squared change of both layers' means "
            "between iterations is below tol (Fig. 3: 1e-8).")
    max_iter = param.Integer(
        1000, bounds=(1, None), softbounds=(10, 5000), label="TAP max iterations",
        doc="iterations after which a TAP run counts as not converged.")
    unique_tol = param.Number(
        1e-4, bounds=(0.0, None), inclusive_bounds=(False, True), softbounds=(1e-8, 1e-2),
        label="Uniqueness tolerance",
        doc="two solutions are the same when their means differ by less than this.")
    count_tol = param.Number(
        1e-12, bounds=(0.0, None), inclusive_bounds=(False, True), softbounds=(1e-14, 1e-8),
        label="Counting tolerance",
        doc="convergence threshold of the solves whose solutions are counted or averaged: at "
            "1e-8 a run stops up to ~1e-3 from its fixed point when the iteration contracts "
            "slowly, more than unique_tol, and one fixed point is counted many times.")
    first_max_iter = param.Integer(
        200, bounds=(1, None), softbounds=(10, 1000), label="Undamped iterations",
        doc="iterations of the undamped first attempt of a counting solve (an undamped "
            "iteration that has not converged by then oscillates).")
    first_damping = param.Number(
        1.0, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.01, 1.0),
        label="First damping", doc="damping of the first attempt of a counting solve "
                                   "(1 = undamped).")
    ladder_rungs = param.NumericTuple(
        (0.2, 0.1, 0.05), length=3, label="Damping ladder",
        doc="the dampings a counting solve descends to, below the training damping, for the "
            "rows whose iteration still oscillates.")
    ladder_floor = param.Number(
        0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.05, 1.0),
        label="Smallest damping",
        doc="the smallest damping of the ladder tried.")
    products = param.Selector(
        default="float64", objects=["float64", "float32"], label="TAP products",
        doc="precision of the matrix products of the TAP iteration (binary models): "
            "float32 is ~1.5× faster per solve and moves the fixed points by ~1e-4, below "
            "the accuracy of a run stopped at tol 1e-8; float64 as the paper.")


class DeepLikelihoodOptions(TAPSolverOptions):
    """The solver options of the TAP log-likelihood of a deep TAP machine
    (:func:`rbmviz.dbm.log_likelihood`, Tramel et al. 2018, App. E): a tighter tolerance
    (1e-10) and a larger iteration budget (2,000) than training's; the paper gives neither for
    App. E.  Only these defaults are re-declared: bounds and help are
    :class:`TAPSolverOptions`'."""

    tol = param.Number(1e-10)
    max_iter = param.Integer(2000)


TAPSolverOptions.__doc__ = TAPSolverOptions.__doc__.rstrip() + "\n\n" + parameters_doc(TAPSolverOptions)
DeepLikelihoodOptions.__doc__ = (DeepLikelihoodOptions.__doc__.rstrip() + "\n\n"
                                 + parameters_doc(DeepLikelihoodOptions))


def option_param(name: str, options: type = TAPSolverOptions, **narrow: Any) -> param.Parameter:
    """A copy of the declaration of option ``name``, for a class that takes it as its own
    parameter (e.g. a training rule's ``Knobs``).

    Parameters
    ----------
    name : str
        An option of ``options``.
    options : type
        :class:`TAPSolverOptions` or a subclass.
    **narrow
        ``default``, ``low``, ``high``, ``softbounds``, ``label``, ``doc_prefix``,
        ``doc_suffix`` of :func:`rbmviz.bounds.narrowed` (bounds may only narrow).

    Returns
    -------
    param.Parameter
        The copy of the option's declaration (:func:`rbmviz.bounds.narrowed`).

    Raises
    ------
    ValueError
        For an unknown option or bounds wider than the declaration's.
    """
    params = options.param.objects("existing")
    if name == "name" or name not in params:
        raise ValueError(f"unknown TAP solver option {name!r}; options are "
                         f"{[n for n in params if n != 'name']}")
    return narrowed(params[name], **narrow)


def check_option(name: str, value: Any, arg: str | None = None, *,
                 options: type = TAPSolverOptions) -> Any:
    """``value`` checked against the bounds of option ``name`` (and converted).

    Parameters
    ----------
    name : str
        The option (``"order"``, ``"damping"``, ``"tol"``, ...).
    value : object
        The value given.
    arg : str, optional
        The argument's name in messages (default ``name``; e.g. ``"fallback_tol"``).
    options : type
        :class:`TAPSolverOptions` or a subclass.

    Returns
    -------
    int, float or str
        The checked value.

    Raises
    ------
    TypeError
        Naming ``arg``, for a value of the wrong type.
    ValueError
        Naming ``arg``, for a value out of bounds (``"damping must be <= 1.0, got 2.0"``) or
        not one of the choices.
    """
    p = options.param[name]
    arg = arg or name
    if isinstance(p, param.Selector):
        return check_choice(value, arg, tuple(p.objects))
    lo, hi = p.bounds
    if isinstance(p, param.Integer):
        if name == "order":          # a choice among the orders: "unknown order 4; ..."
            return check_choice(value, arg, tuple(range(lo, hi + 1)))
        return check_int(value, arg, low=lo, high=hi)
    low_open = not p.inclusive_bounds[0]
    return check_float(value, arg, low=lo, high=hi, low_open=low_open)

