"""A scikit-learn estimator around :class:`rbmviz.RBM` and every rbmviz training rule.

:class:`RBMEstimator` follows the contract of ``sklearn.neural_network.BernoulliRBM``
(``fit`` / ``partial_fit`` / ``transform`` / ``score_samples`` / ``gibbs``, fitted
``components_``, ``intercept_hidden_``, ``intercept_visible_``), so it can stand in a
``Pipeline`` before a classifier, inside ``GridSearchCV`` or be ``clone``-d, while training
runs through the one rbmviz loop (:class:`rbmviz.runs.Run`) with any algorithm of
:func:`rbmviz.algorithms.names`.

Its parameters are derived from the algorithms' knob declarations
(:mod:`rbmviz.algorithms.knobs`): every knob of every rule (``k``, ``momentum``,
``n_chains``, ``nu_mu``, ``damping`` ...) is a parameter with the declared default, and its
``_parameter_constraints`` are the declared bounds — one definition for the API, the run
settings, the CLI, the explorer and this estimator.

Inputs: like ``BernoulliRBM``, ``X`` may hold 0/1 states or probabilities in [0, 1] (e.g.
grey levels scaled with ``MinMaxScaler``).  Probabilities enter the data term of the update
as they are (the positive statistics ``Xᵀσ(XW + c)`` use them as mean-field values); the
Gibbs chains are always binary states (CD starts them with a draw from the data
probabilities, PCD's persistent chains start at a Bernoulli draw of data rows).  Values
outside [0, 1] are refused with a ``ValueError`` (``BernoulliRBM`` silently trains on them).

Differences to ``BernoulliRBM``, on purpose:

* ``score_samples`` is the deterministic pseudo-log-likelihood over **all** sites, not one
  random site scaled by ``n_features`` (scikit-learn issue 23179); for probabilities it is
  the expected pseudo-log-likelihood cross-entropy (see :meth:`RBMEstimator.score_samples`);
* ``gibbs`` returns float 0/1 arrays (``BernoulliRBM`` returns booleans) and its random
  stream is reproducible from ``random_state``.
"""
from __future__ import annotations

import copy
import inspect

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import algorithms as _algorithms
from .._numerics import sigmoid as _sigmoid
from .._seeds import stream_seed
from ..bounds import EPOCHS_MAX, UNITS_MAX, check_model_size
from ..model import RBM
from ..runs import Run
from ..settings import ModelSettings
from .params import (ALGORITHM_NAME, KNOBS, RULE_DEPENDENT, _check_unit_interval, _knob_docs, constraint,
                     interval, options, pseudo_log_likelihood_expected)

__all__ = ["RBMEstimator", "KNOBS", "PARAMETERS", "RULE_DEPENDENT", "pseudo_log_likelihood_expected"]

#: metrics recorded by ``fit`` / ``partial_fit`` (all cheap: no partition function) on binary
#: data; on probabilities the pseudo-likelihood is left out (it is defined for 0/1 rows) ...
_METRICS = ("pseudo_ll", "recon_error", "weight_norm")
#: ... on at most this many (the first) training rows: the pseudo-likelihood costs
#: O(rows · n_features · n_components) and is not part of training
_EVAL_ROWS = 256
#: algorithm state (besides arrays) carried from one ``partial_fit`` call to the next
_COUNTERS = ("counter", "updates", "gibbs_steps")


class RBMEstimator(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Restricted Boltzmann machine with binary units as a scikit-learn transformer.

    A drop-in for ``sklearn.neural_network.BernoulliRBM`` (in a ``Pipeline`` before a
    classifier, in ``GridSearchCV``, with ``clone``) that trains with any rbmviz algorithm
    (:func:`rbmviz.algorithms.names`: CD-k, PCD-k, ...) through the rbmviz run loop
    (:class:`rbmviz.runs.Run`), so the metric records of the run are kept (``records_``).

    Parameter layout as everywhere in rbmviz: ``rbm_.W`` has shape
    (n_features, n_components); scikit-learn's ``components_`` is its transpose.

    The algorithm knobs (``k`` ... ``inference`` below) are one parameter per knob of every
    algorithm, with the default, bounds and meaning of its one declaration
    (``rbmviz.algorithms.get(name).Knobs``); a knob the chosen algorithm does not take must
    stay at its default.

    Parameters
    ----------
    n_components : int, default=256
        Number of binary hidden units.
    algorithm : str, default="pcd"
        Training rule, one of :func:`rbmviz.algorithms.names` (``"pcd"`` is the stochastic
        maximum likelihood of ``BernoulliRBM``; ``"cd"`` is CD-k).
    learning_rate : float or None, default=None
        Step size (> 0); None = the chosen rule's declared default (0.1 for the sampling
        rules, γ = 0.005 for ``"tap"``, Table 1 of Tramel et al. 2018).  Unlike
        ``BernoulliRBM`` the gradient is a *mean* over the mini-batch for every algorithm.
    batch_size : int, default=10
        Rows per parameter update (clipped to the number of rows in ``fit``).  Also the
        number of persistent chains of ``"pcd"`` unless ``n_chains`` is set.
    n_iter : int, default=10
        Epochs (full passes over the training data) of ``fit``.
{KNOB_DOCS}
    init_scale : float, default=0.01
        Standard deviation of the normal initial weights, within the bounds of
        :class:`rbmviz.settings.ModelSettings`'s ``init_scale`` ([0, 10]).
    init_visible_bias : {"zeros", "base_rate"}, default="zeros"
        ``"base_rate"`` starts the visible biases at the logit of the training data's
        column means (Hinton's practical guide); ``"zeros"`` as ``BernoulliRBM``.
    dtype : {"float64", "float32"}, default="float64"
        Floating type of the parameters during training.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial weights, the epoch shuffles, the algorithm's Gibbs stream and the
        samples of :meth:`gibbs`.  Pass an int for bit-identical results across calls.
    verbose : int, default=0
        If > 0, ``fit`` evaluates after every epoch and prints each record.

    Attributes
    ----------
    rbm_ : rbmviz.RBM
        The trained model (``W`` of shape (n_features, n_components), ``b``, ``c``).
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix, ``rbm_.W.T`` (a copy).
    intercept_hidden_ : ndarray of shape (n_components,)
        Biases of the hidden units, ``rbm_.c`` (a copy).
    intercept_visible_ : ndarray of shape (n_features,)
        Biases of the visible units, ``rbm_.b`` (a copy).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column names.
    n_iter_ : int
        Epochs trained so far (``n_iter`` after :meth:`fit`, plus one per
        :meth:`partial_fit` call).
    records_ : pandas.DataFrame
        The run's metric records (``epoch``, ``updates``, ``gibbs_steps``, ``wall_time``,
        ``pseudo_ll``, ``recon_error``, ``weight_norm``; the first two on the first 256
        training rows): epoch 0 and the last epoch, every epoch when ``verbose``, one row per
        :meth:`partial_fit` call.
    run_ : rbmviz.runs.Run
        The last run; ``run_.algorithm`` holds the training state (persistent chains,
        velocities, position in the random stream) that :meth:`partial_fit` continues.
        It references the last training rows (``run_.data``), so a pickled estimator
        includes them.

    See Also
    --------
    sklearn.neural_network.BernoulliRBM : The estimator whose contract this one follows.
    rbmviz.runs.Run : The training loop behind :meth:`fit`.

    Notes
    -----
    ``fit``, ``partial_fit`` and ``score_samples`` accept 0/1 states or probabilities in
    [0, 1], as ``BernoulliRBM`` (a ``ValueError`` for values outside, which ``BernoulliRBM``
    silently trains on); probabilities enter the data term as they are.  ``transform``
    accepts any finite values (mean-field input); ``gibbs`` needs 0/1 states.

    ``score_samples`` is the deterministic pseudo-log-likelihood over all sites;
    ``BernoulliRBM.score_samples`` flips one random site per row and scales by
    ``n_features`` (noisy; scikit-learn issue 23179).

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.pipeline import make_pipeline
    >>> import rbmviz
    >>> from rbmviz.estimator import RBMEstimator
    >>> X, y = rbmviz.datasets.digits(binarize="threshold", return_labels=True)
    >>> X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    >>> model = make_pipeline(
    ...     RBMEstimator(n_components=64, algorithm="pcd", learning_rate=0.1, n_iter=10,
    ...                  random_state=0),
    ...     LogisticRegression(max_iter=1000))
    >>> accuracy = model.fit(X_train, y_train).score(X_test, y_test)
    >>> bool(accuracy > 0.85)
    True
    >>> rbm = model[0]
    >>> rbm.components_.shape, rbm.transform(X_test[:3]).shape
    ((64, 64), (3, 64))
    >>> list(rbm.records_.epoch), int(rbm.records_.updates.iloc[-1])
    ([0, 10], 1340)
    """

    _parameter_constraints: dict = {
        "n_components": [interval("int", 1, UNITS_MAX, closed="both")],
        "algorithm": [ALGORITHM_NAME],
        "batch_size": [interval("int", 1, None, closed="left")],
        "n_iter": [interval("int", 0, EPOCHS_MAX, closed="both")],
        **{name: constraint(p) for name, p in KNOBS.items()},
        "init_scale": constraint(ModelSettings.param.init_scale),   # the model settings' bounds
        "init_visible_bias": [options({"zeros", "base_rate"})],
        "dtype": [options({"float64", "float32"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # The knob parameters (``learning_rate`` and ``momentum`` ... ``inference``) are every
    # algorithm's knobs with their declared defaults (:data:`KNOBS`; None for a knob whose
    # default differs between the rules, :data:`RULE_DEPENDENT`); tests/test_estimator.py
    # fails if this signature and the declarations disagree.
    def __init__(
        self,
        n_components: int = 256,
        *,
        algorithm: str = "pcd",
        learning_rate: float | None = None,
        batch_size: int = 10,
        n_iter: int = 10,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        k: int | None = None,
        n_chains: int | None = None,
        nu_mu: float = 0.01,
        nu_lambda: float = 0.01,
        d: int | None = None,
        k_inner: int | None = None,
        step_rule: str = "relative",
        n_solutions: int | None = None,
        order: int = 2,
        damping: float = 0.5,
        tol: float = 1e-08,
        max_iter: int = 1000,
        fixed_iter: int | None = None,
        unique: bool = False,
        unique_tol: float = 0.0001,
        momentum_form: str = "heavy_ball",
        learning_rate_final: float | None = None,
        decay_epochs: int | None = None,
        products: str = "float64",
        inference: str = "tap",
        init_scale: float = 0.01,
        init_visible_bias: str = "zeros",
        dtype: str = "float64",
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
    ) -> None:
        """Store the parameters unchanged (scikit-learn's rule; see the class docstring)."""
        self.n_components = n_components
        self.algorithm = algorithm
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.k = k
        self.n_chains = n_chains
        self.nu_mu = nu_mu
        self.nu_lambda = nu_lambda
        self.d = d
        self.k_inner = k_inner
        self.step_rule = step_rule
        self.n_solutions = n_solutions
        self.order = order
        self.damping = damping
        self.tol = tol
        self.max_iter = max_iter
        self.fixed_iter = fixed_iter
        self.unique = unique
        self.unique_tol = unique_tol
        self.momentum_form = momentum_form
        self.learning_rate_final = learning_rate_final
        self.decay_epochs = decay_epochs
        self.products = products
        self.inference = inference
        self.init_scale = init_scale
        self.init_visible_bias = init_visible_bias
        self.dtype = dtype
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ training
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: None = None) -> "RBMEstimator":
        """Train a new RBM on the rows of ``X`` for ``n_iter`` epochs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, every entry a state (0/1) or a probability in [0, 1].
        y : None
            Ignored.

        Returns
        -------
        self : RBMEstimator
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` has entries outside [0, 1] (or is empty, or holds NaN/inf).
        rbmviz.RunDiverged
            If training diverges (try a smaller ``learning_rate``).  A failed ``fit``
            leaves the estimator unfitted.
        """
        try:
            X = self._check_values(self._validate(X))
            self._initialise(X)
            n = X.shape[0]
            algo = self._make_algorithm(n_chains=min(self.batch_size, n))  # pins the chain count
            run = Run(self.rbm_, X, algo, epochs=self.n_iter,
                      batch_size=min(self.batch_size, n), seed=self._run_seed,
                      eval_every=max(self.n_iter, 1) if not self.verbose else 1,
                      **_run_options(X))
            for rec in run:
                self._report(rec)
        except BaseException:
            self._forget()          # a failed fit leaves no half-trained model behind
            raise
        self.run_ = run
        self._records = list(run.records)
        self._epochs_done = run.epoch
        self._wall_time = run.wall_time
        self._publish()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: None = None) -> "RBMEstimator":
        """One epoch over the rows of ``X`` (in mini-batches), continuing training.

        The first call (on an unfitted estimator) initialises the model as :meth:`fit`;
        later calls, and calls after :meth:`fit`, continue with the same algorithm state:
        persistent chains, momentum velocities and the position in the Gibbs stream carry
        over, so a sequence of calls is one run over a stream of data.  Each call appends
        one record to ``records_``.  The algorithm's live knobs (``LIVE_KNOBS``, e.g.
        ``learning_rate``, ``k``, ``momentum``, ``weight_decay``) and ``batch_size``
        changed with ``set_params`` between calls take effect at the next call (``n_iter``
        and ``verbose`` are :meth:`fit`'s); the other parameters (``n_components``,
        ``algorithm``, the rule's other knobs, the initialisation, ``dtype``,
        ``random_state``) are fixed by the first call or by :meth:`fit`: changing one of them
        and calling ``partial_fit`` is a ``ValueError`` naming it (call :meth:`fit` to start
        a new model with it), never silently ignored.

        Parameters
        ----------
        X, y
            As in :meth:`fit`: the training rows, and nothing.

        Returns
        -------
        self : RBMEstimator
            The estimator, its model trained one more epoch.

        Raises
        ------
        ValueError
            If ``X`` has entries outside [0, 1] or another number of features than before,
            or a parameter that fixes the model or the rule was changed with ``set_params``
            since the model was made (the message names it and says to call :meth:`fit`).
        rbmviz.RunDiverged
            If training diverges; the estimator is then left as it was before the call
            (unfitted on a first call).
        """
        if not hasattr(self, "rbm_"):
            try:
                X = self._check_values(self._validate(X))
                self._initialise(X)
                algo = self._make_algorithm(n_chains=self.batch_size)  # fixed for all calls
                self._records, self._epochs_done, self._wall_time = [], 0, 0.0
                run = Run(self.rbm_, X, algo, epochs=1,
                          batch_size=min(self.batch_size, X.shape[0]), seed=self._run_seed,
                          eval_every=1, **_run_options(X))
                records = list(run)            # the epoch-0 record, then the epoch-1 record
            except BaseException:
                self._forget()
                raise
            self._add_record(records[0], epoch_offset=0, time_offset=0.0)
        else:
            algo = self.run_.algorithm
            self._check_fixed_params(algo)
            X = self._check_values(self._validate(X, reset=False))
            saved = _algorithm_state(algo)
            self._sync_settings(algo)
            params = tuple(p.copy() for p in self.rbm_.params)
            seed = int(np.random.SeedSequence([self._run_seed, self._epochs_done])
                       .generate_state(1, np.uint64)[0] & np.uint64(2**63 - 1))
            try:
                # a ready algorithm resumes: chains, velocities and stream position carry over
                run = Run(self.rbm_, X, algo, epochs=1,
                          batch_size=min(self.batch_size, X.shape[0]), seed=seed,
                          eval_every=1, record_initial=False, **_run_options(X))
                records = list(run)
            except BaseException:
                # a diverged (or interrupted) call leaves the model as it was before it
                for old, new in zip(params, self.rbm_.params):
                    new[...] = old
                _restore_algorithm_state(algo, saved)
                raise
        self.run_ = run
        self._model_params = self.get_params(deep=False)
        self._add_record(records[-1], epoch_offset=self._epochs_done, time_offset=self._wall_time)
        self._epochs_done += 1
        self._wall_time += run.wall_time
        self._publish()
        return self

    # ------------------------------------------------------------------ inference
    def transform(self, X: ArrayLike) -> np.ndarray:
        """Hidden-unit probabilities ``p(h_j = 1 | v)`` of every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Visible states or probabilities.  As in ``BernoulliRBM``, finite values outside
            [0, 1] are used as they are (``σ(c + X W)`` is defined for any input): e.g. test
            rows scaled by a ``MinMaxScaler`` fitted on the training rows, which may fall
            slightly outside.  Training (``fit``, ``partial_fit``) requires [0, 1].

        Returns
        -------
        H : ndarray of shape (n_samples, n_components), float64
            ``σ(c + X W)``, the latent representation.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        W, _, c = self.rbm_.params
        return _sigmoid(X @ W.astype(np.float64) + c.astype(np.float64))

    def score_samples(self, X: ArrayLike) -> np.ndarray:
        """Pseudo-log-likelihood over all sites of every row of ``X`` (nats).

        ``PL(v) = Σ_i log p(v_i | v_{−i})``, computed exactly from free-energy differences;
        for 0/1 rows the same quantity as :func:`rbmviz.evaluate.pseudo_log_likelihood`, per
        row; for probabilities its cross-entropy form
        ``Σ_i [x_i log p_i + (1 − x_i) log(1 − p_i)]`` (:func:`pseudo_log_likelihood_expected`).
        Deterministic, unlike ``BernoulliRBM.score_samples``, which flips one random site
        per row and multiplies by ``n_features`` (scikit-learn issue 23179); the two agree
        only in expectation.  Cost O(n_samples · n_features · n_components).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in [0, 1].

        Returns
        -------
        pseudo_log_likelihood : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = self._check_values(self._validate(X, reset=False))
        return pseudo_log_likelihood_expected(self.rbm_, X)

    def score(self, X: ArrayLike, y: None = None) -> float:
        """Mean pseudo-log-likelihood of the rows of ``X`` (higher is better), so that
        ``GridSearchCV`` can rank models without a scorer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in [0, 1].
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        return float(np.mean(self.score_samples(X)))

    def gibbs(self, v: ArrayLike) -> np.ndarray:
        """One block-Gibbs step v → h → v from every row of ``v``.

        Successive calls use successive positions of a random stream seeded by
        ``random_state`` (reset by ``fit``), so they differ from each other while the
        sequence is reproducible.

        Parameters
        ----------
        v : array-like of shape (n_samples, n_features)
            Binary (0/1) visible states to start from (not probabilities).

        Returns
        -------
        v_new : ndarray of shape (n_samples, n_features)
            Sampled visible states, 0/1 floats of the model's dtype (``BernoulliRBM``
            returns booleans).

        Raises
        ------
        ValueError
            If ``v`` holds values other than 0 and 1, or has the wrong number of features.
        """
        check_is_fitted(self)
        v = self._check_values(self._validate(v, reset=False, name="v"), name="v")
        if not _is_binary(v):
            r, col = np.argwhere((v != 0) & (v != 1))[0]
            raise ValueError(f"v must be binary (0/1) states: a Gibbs step starts from visible "
                             f"states, not probabilities; found {v[r, col]!r} at row {r}, "
                             f"column {col}")
        out = self.rbm_.gibbs(v, 1, seed=self._sample_seed, counter=self._sample_counter)
        self._sample_counter += 2
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True      # Bernoulli units: X in [0, 1] (see Notes)
        tags.input_tags.sparse = False
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    # ------------------------------------------------------------------ internals
    def _check_values(self, X, *, name="X"):
        """The one place where validated input meets the Bernoulli units: ``X`` unchanged if
        every entry is in [0, 1] (states or probabilities), else ``ValueError`` naming
        ``name``.  A subclass may map other data into [0, 1] here (the tests do, to run
        scikit-learn's common checks, which feed values above 1)."""
        return _check_unit_interval(X, name)

    def _validate(self, X, *, reset=True, name="X"):
        """scikit-learn's ``validate_data`` (features, NaN/inf, float64), with a message that
        names ``name`` when the values are not numbers."""
        if _is_complex(X):       # a ValueError, as scikit-learn's estimator checks expect
            raise ValueError(f"{name}: Complex data not supported; {name} must hold real "
                             f"numbers in [0, 1]")
        try:
            return validate_data(self, X, dtype=np.float64, reset=reset)
        except (ValueError, TypeError) as exc:
            if "convert" in str(exc) or "dtype" in str(exc):
                raise type(exc)(f"{name} must hold numbers in [0, 1]: {exc}") from None
            raise

    def _forget(self):
        """Back to unfitted: drop every fitted attribute (a failed ``fit``)."""
        for name in list(vars(self)):
            if name.endswith("_") and not name.startswith("__"):
                delattr(self, name)

    def _initialise(self, X):
        """A new model and seeds for the rows ``X`` (validated, binary)."""
        check_model_size(X.shape[1], self.n_components, visible_name="the features of X",
                          hidden_name="n_components")
        rng = check_random_state(self.random_state)
        init_seed = int(rng.randint(2**31 - 1))
        self._run_seed = int(rng.randint(2**31 - 1))
        self._sample_seed = stream_seed(self._run_seed, "sample")
        self._sample_counter = 0
        self._model_params = self.get_params(deep=False)   # what the model is made with
        self.rbm_ = RBM(X.shape[1], self.n_components, seed=init_seed, init="normal",
                        scale=self.init_scale,
                        data=X if self.init_visible_bias == "base_rate" else None,
                        dtype=self.dtype)
        self._n_features_out = self.n_components

    def _check_fixed_params(self, algo):
        """Refuse a :meth:`partial_fit` call after ``set_params`` changed a parameter that the
        current model and rule cannot take on (``n_components``, ``algorithm``, a knob the
        rule fixes at its start ...): ``ValueError`` naming each such parameter, its value
        then and now, and what to do.  The rule's live knobs and the parameters read at every
        call (:data:`_EACH_CALL`) may change."""
        was = getattr(self, "_model_params", None)
        if was is None:            # an estimator pickled before this check existed
            return
        now = self.get_params(deep=False)
        live = set(getattr(algo, "LIVE_KNOBS", ()))
        changed = [key for key, value in now.items()
                   if key not in _EACH_CALL and key not in live and not _same(value, was.get(key))]
        if changed:
            what = ", ".join(f"{key}={was.get(key)!r} -> {now[key]!r}" for key in changed)
            free = sorted(live | set(_EACH_CALL))
            raise ValueError(
                f"set_params changed {what} after the model was made; partial_fit continues the "
                f"current model (n_components={was.get('n_components')!r}, algorithm="
                f"{was.get('algorithm')!r}) and cannot apply {', '.join(changed)}: call fit to "
                f"train a new model with the new value(s), or set them back (partial_fit takes "
                f"changes of {', '.join(free)} between calls)")

    def _knob_values(self) -> dict:
        """The algorithm knobs the chosen rule takes, from this estimator's parameters; a knob
        it does not take is a ``ValueError`` unless it is at its declared default."""
        name = self.algorithm
        accepted = _algorithms.accepted_settings(name)
        values = {}
        for key, p in KNOBS.items():
            value = getattr(self, key)
            if key in accepted:
                if value is None and key in RULE_DEPENDENT:
                    continue            # the chosen rule's own declared default
                values[key] = value
            elif value != p.default:
                raise ValueError(f"algorithm {name!r} does not take the setting {key!r} "
                                 f"(got {key}={value!r}); leave it at its default "
                                 f"{p.default!r} or choose another algorithm")
        return values

    def _make_algorithm(self, n_chains):
        """The training rule with this estimator's settings (those the rule takes).

        ``n_chains`` (for rules with persistent chains, when the ``n_chains`` parameter is
        None) is fixed explicitly, so that the chains keep their shape across
        :meth:`partial_fit` calls with fewer rows than ``batch_size``."""
        values = self._knob_values()
        if "n_chains" in values and values["n_chains"] is None:
            values["n_chains"] = n_chains
        algo = _algorithms.create(self.algorithm, seed=self._run_seed, **values)
        # the values that run (a rule-dependent knob left at None reads the rule's default)
        self._algorithm_knobs = {**{key: val for key, val in algo.settings().items()
                                    if key in KNOBS}, **values}
        return algo

    def _sync_settings(self, algo):
        """Hand the live knobs changed with ``set_params`` since the algorithm was made (e.g.
        a learning-rate schedule between :meth:`partial_fit` calls) to it; changing another
        knob after the first call is a ``ValueError`` naming it."""
        values = self._knob_values()
        before = self._algorithm_knobs
        changed = {key: val for key, val in values.items()
                   if key in before and val != before[key]
                   and not (key == "n_chains" and val is None)}
        fixed = sorted(set(changed) - set(algo.LIVE_KNOBS))
        if fixed:
            raise ValueError(f"{', '.join(fixed)} cannot change between partial_fit calls "
                             f"(fixed by the first call); use fit to start again")
        if changed:
            self._validate_params()
            algo.set_settings(**changed)
            before.update(changed)
        return changed

    def _add_record(self, rec, *, epoch_offset, time_offset):
        rec = dict(rec, epoch=rec["epoch"] + epoch_offset,
                   wall_time=rec["wall_time"] + time_offset)
        self._records.append(rec)
        self._report(rec)

    def _report(self, rec):
        if not self.verbose:
            return
        metrics = ", ".join(f"{m} = {rec[m]:.4g}" for m in _METRICS if m in rec)
        print(f"[{type(self).__name__}] epoch {rec['epoch']}, updates {rec['updates']}, "
              f"{metrics}, time = {rec['wall_time']:.2f}s", flush=True)

    def _publish(self):
        """Refresh the scikit-learn views of the model after training."""
        import pandas as pd
        W, b, c = self.rbm_.params
        self.components_ = np.ascontiguousarray(W.T)
        self.intercept_hidden_ = c.copy()
        self.intercept_visible_ = b.copy()
        self.records_ = pd.DataFrame.from_records(self._records)
        self.n_iter_ = int(self._epochs_done)


RBMEstimator.__doc__ = RBMEstimator.__doc__.replace("{KNOB_DOCS}", _knob_docs())

#: the estimator's parameters in signature order, with their defaults (read from
#: :meth:`RBMEstimator.__init__`)
PARAMETERS = {name: p.default for name, p in inspect.signature(RBMEstimator.__init__).parameters.items()
              if name != "self"}


#: parameters :meth:`RBMEstimator.partial_fit` reads at every call (or never: ``n_iter`` and
#: ``verbose`` are :meth:`RBMEstimator.fit`'s), so that changing them between calls is fine
_EACH_CALL = ("batch_size", "n_iter", "verbose")


def _same(a, b) -> bool:
    """Whether two parameter values are the same (identity for objects such as a
    ``RandomState``, equality for plain values)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - arrays, objects without a truth value
        return False


def _is_complex(X) -> bool:
    """Whether ``X`` (an array, a list of rows, or an array-like object) holds complex values
    (asked of its ``dtype``, without converting objects that refuse numpy's functions)."""
    dtype = getattr(X, "dtype", None)
    if dtype is None and isinstance(X, (list, tuple)):
        try:
            dtype = np.asarray(X).dtype
        except (ValueError, TypeError):
            return False
    try:
        return dtype is not None and np.dtype(dtype).kind == "c"
    except TypeError:
        return False


def _is_binary(X) -> bool:
    return bool(np.all((X == 0) | (X == 1)))


def _run_options(X) -> dict:
    """Metrics and data options of the run for the training rows ``X`` (in [0, 1])."""
    if _is_binary(X):
        return {"metrics": list(_METRICS), "pl_rows": _EVAL_ROWS}
    # probabilities: the pseudo-likelihood is defined for 0/1 rows only
    return {"metrics": ["recon_error", "weight_norm"], "pl_rows": _EVAL_ROWS,
            "data_probabilities": True}


def _algorithm_state(algo):
    """Copies of an algorithm's array state and counters, so that a diverged
    :meth:`RBMEstimator.partial_fit` call can be rolled back."""
    state = {key: val.copy() for key, val in vars(algo).items() if isinstance(val, np.ndarray)}
    state.update({key: copy.copy(getattr(algo, key)) for key in _COUNTERS if hasattr(algo, key)})
    return state


def _restore_algorithm_state(algo, state):
    """Put back the arrays (where they still have the same shape and dtype) and the
    counters saved by :func:`_algorithm_state`."""
    for key, old in state.items():
        new = getattr(algo, key, None)
        if isinstance(old, np.ndarray):
            if isinstance(new, np.ndarray) and new.shape == old.shape and new.dtype == old.dtype:
                setattr(algo, key, old.copy())   # training writes in place: keep ``state`` intact
        else:
            setattr(algo, key, old)
