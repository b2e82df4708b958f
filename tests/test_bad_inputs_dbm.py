"""A catalogue of bad inputs for the deep TAP machine (:mod:`rbmviz.dbm`), adaTAP
(:mod:`rbmviz.tap.adatap`) and TAP inference (:mod:`rbmviz.tap`), in the style of
``tests/test_bad_inputs.py``.

Every case asserts the exception type, that the message names the argument or the file (a
regex), and that the error was raised by rbmviz's own checks: the innermost frame of the
traceback is in the ``rbmviz`` package, never in numpy, zipfile or the standard library.
Further tests: a path that is not a regular file (a FIFO) is refused without blocking,
``DBM.save`` refuses an existing file unless ``overwrite=True``, a refused ``set_params``
leaves the model unchanged, and a save killed while it writes (SIGKILL) leaves nothing that
blocks the next one.
"""
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import rbmviz
from rbmviz import datasets, tap
from rbmviz.dbm import (DBM, DBMTrainer, JointTAP, gradient, log_likelihood, pretrain, tap_log_z,
                        tap_solve)
from rbmviz.runs import Run
from rbmviz.tap import adatap
from test_bad_inputs import _innermost_file  # the catalogue's check: raised inside rbmviz

PKG = os.path.dirname(rbmviz.__file__)
X = datasets.bars_and_stripes(2)                   # (6, 4) binary


def _d(layers=(4, 3, 2)):
    return DBM(list(layers), seed=0, scale=0.1)


def _nan_dbm():
    d = _d()
    d.W[0][0, 0] = np.nan
    return d


def _rbm():
    return rbmviz.RBM(4, 3, seed=0, scale=0.1)


def _nan_rbm():
    rbm = _rbm()
    rbm.W[0, 0] = np.nan
    return rbm


def _half(rows=6):
    return [np.full((rows, 3), 0.5), np.full((rows, 2), 0.5)]


def _m(**replace):
    m = [X.astype(float)] + _half()
    for i, v in replace.items():
        m[int(i[1:])] = v
    return m


def _saved(t, drop=(), **replace):
    """Path of a saved DBM with some arrays replaced or dropped."""
    path = _d().save(t / "good.npz", overwrite=True)
    with np.load(path) as z:
        arrays = dict(z)
    arrays.update(replace)
    for key in drop:
        arrays.pop(key)
    np.savez(t / "bad.npz", **arrays)
    return t / "bad.npz"


def _write(t, name, data):
    path = t / name
    path.write_bytes(data)
    return path


def _truncated(t):
    data = _d().save(t / "whole.npz").read_bytes()
    return _write(t, "tr.npz", data[: len(data) // 2])


def _trained_then(other):
    tr = DBMTrainer(batch_size=6)
    tr.update(_d(), X)
    return tr.update(_d(other), X)


def _pretrain(dbm=None, data=X, **kw):
    return pretrain(_d() if dbm is None else dbm, data, **{"batch_size": 3, **kw})


def _grad(**kw):
    d = _d()
    args = dict(X=X, free=tap_solve(d, X), clamped=tap_solve(d, X, clamped=True))
    args.update(kw)
    return gradient(d, args.pop("X"), args.pop("free"), args.pop("clamped"), **args)


# (id, call(tmp_path), exception type, regex that names the argument or the file)
API_CASES = [
    # ------------------------------------------------------------------ DBM(...)
    ("dbm-layers-one", lambda t: DBM([5]), ValueError, "layers needs the visible size and at least one hidden"),
    ("dbm-layers-zero", lambda t: DBM([5, 0]), ValueError, r"layers\[1\] must be >= 1"),
    ("dbm-layers-float", lambda t: DBM([4, 2.5]), TypeError, r"layers\[1\] must be an integer"),
    ("dbm-layers-str", lambda t: DBM("43"), TypeError, "layers must be a sequence of layer sizes"),
    ("dbm-layers-int", lambda t: DBM(4), TypeError, "layers must be a sequence of layer sizes"),
    ("dbm-layers-dict", lambda t: DBM({4: 1, 3: 2}), TypeError, "layers must be a sequence of layer sizes"),
    ("dbm-layers-nested", lambda t: DBM([[4, 3]]), ValueError, "layers must be a flat sequence"),
    ("dbm-layers-huge", lambda t: DBM([20000, 3]), ValueError, r"layers\[0\]=20000 is too large.*UNITS_MAX"),
    ("dbm-layers-weights", lambda t: DBM([10000, 7000, 2]), ValueError, r"layers=\[10000, 7000, 2\] has .* weights.*WEIGHTS_MAX"),
    ("dbm-scale-negative", lambda t: DBM([4, 3], scale=-1), ValueError, "scale must be >= 0"),
    ("dbm-scale-nan", lambda t: DBM([4, 3], scale=float("nan")), ValueError, "scale must be finite"),
    ("dbm-seed-negative", lambda t: DBM([4, 3], seed=-1), ValueError, "seed must be >= 0"),
    ("dbm-seed-str", lambda t: DBM([4, 3], seed="a"), TypeError, "seed must be an integer"),
    # ------------------------------------------------------------------ set_params
    ("set_params-W-nan", lambda t: _d().set_params(W=[np.full((4, 3), np.nan), np.zeros((3, 2))]), ValueError,
     r"W\[0\] contains NaN"),
    ("set_params-W-inf", lambda t: _d().set_params(W=[np.zeros((4, 3)), np.full((3, 2), np.inf)]), ValueError,
     r"W\[1\] contains NaN or inf"),
    ("set_params-W-count", lambda t: _d().set_params(W=[np.zeros((4, 3))]), ValueError, "W must have shapes"),
    ("set_params-W-transposed", lambda t: _d().set_params(W=[np.zeros((3, 4)), np.zeros((3, 2))]), ValueError,
     r"W must have shapes \[\(4, 3\), \(3, 2\)\]"),
    ("set_params-W-not-a-list", lambda t: _d().set_params(W=3), TypeError, "W must be a list of arrays"),
    ("set_params-W-strings", lambda t: _d().set_params(W=[[["a"] * 3] * 4, np.zeros((3, 2))]), TypeError,
     r"W\[0\] must be numeric"),
    ("set_params-W-complex", lambda t: _d().set_params(W=[np.ones((4, 3)) * 1j, np.zeros((3, 2))]), TypeError,
     r"W\[0\] must be real"),
    ("set_params-biases-reshaped", lambda t: _d().set_params(biases=[np.zeros((2, 2)), np.zeros(3), np.zeros(2)]),
     ValueError, "biases must have shapes"),
    ("set_params-biases-nan", lambda t: _d().set_params(biases=[np.zeros(4), [0, np.nan, 0], np.zeros(2)]),
     ValueError, r"biases\[1\] contains NaN"),
    ("set_params-biases-str", lambda t: _d().set_params(biases="abc"), TypeError, "biases must be a list"),
    # ------------------------------------------------------------------ save / load
    ("save-exists", lambda t: (_d().save(t / "m.npz"), _d().save(t / "m.npz")), FileExistsError,
     r"m\.npz exists; pass overwrite=True"),
    ("save-path-type", lambda t: _d().save(3.5), TypeError, "path must be a file path"),
    ("save-directory", lambda t: _d().save(t, overwrite=True), IsADirectoryError, "is a directory"),
    ("save-under-a-file", lambda t: (_write(t, "f", b"x"), _d().save(t / "f" / "m.npz")), ValueError,
     r"path='.*f': .*not a directory"),
    ("save-overwrite-type", lambda t: _d().save(t / "m.npz", overwrite="yes"), TypeError,
     "overwrite must be True or False"),
    ("load-path-type", lambda t: DBM.load(None), TypeError, "path must be a file path"),
    ("load-missing", lambda t: DBM.load(t / "nope.npz"), FileNotFoundError, r"nope\.npz"),
    ("load-directory", lambda t: DBM.load(t), ValueError, "is a directory"),
    ("load-rbm-file", lambda t: DBM.load(_rbm().save(t / "r.npz")), ValueError,
     r"r\.npz is an rbmviz RBM file, not a DBM.*RBM\.load"),
    ("load-truncated", lambda t: DBM.load(_truncated(t)), ValueError, r"tr\.npz is not a readable \.npz"),
    ("load-text-file", lambda t: DBM.load(_write(t, "t.npz", b"hello")), ValueError, r"t\.npz is not a readable"),
    ("load-foreign-npz", lambda t: (np.savez(t / "f.npz", a=np.ones(2)), DBM.load(t / "f.npz")), ValueError,
     r"f\.npz is not a DBM.*no 'layers' array"),
    ("load-nan-W", lambda t: DBM.load(_saved(t, W1=np.full((4, 3), np.nan))), ValueError,
     r"bad\.npz: array 'W1' contains NaN"),
    ("load-inf-theta", lambda t: DBM.load(_saved(t, theta2=np.array([0, np.inf]))), ValueError,
     "array 'theta2' contains NaN or inf"),
    ("load-int-W", lambda t: DBM.load(_saved(t, W1=np.zeros((4, 3), dtype=np.int64))), ValueError,
     "array 'W1' has dtype int64"),
    ("load-W-chain", lambda t: DBM.load(_saved(t, W2=np.zeros((4, 2)))), ValueError, "array 'W2' has shape"),
    ("load-theta-shape", lambda t: DBM.load(_saved(t, theta1=np.zeros(5))), ValueError,
     r"array 'theta1' has shape \(5,\)"),
    ("load-layers-disagree", lambda t: DBM.load(_saved(t, layers=np.array([4, 3, 3]))), ValueError,
     r"array 'W2' has shape \(3, 2\) but layers=\[4, 3, 3\]"),
    ("load-layers-float", lambda t: DBM.load(_saved(t, layers=np.array([4.0, 3.0, 2.0]))), ValueError,
     "array 'layers' must be a 1-D integer array"),
    ("load-missing-theta", lambda t: DBM.load(_saved(t, drop=["theta2"])), ValueError,
     r"missing arrays \['theta2'\]"),
    ("load-layers-too-many", lambda t: DBM.load(_saved(t, layers=np.arange(1, 200))), ValueError,
     "declares 199 layers but holds only"),
    ("load-layer-too-large", lambda t: DBM.load(_saved(t, layers=np.array([20000, 1]), W1=np.zeros((20000, 1)),
                                                       W2=None, theta0=np.zeros(20000), theta1=np.zeros(1),
                                                       drop=["W2", "theta2"])),
     ValueError, r"bad\.npz: the declared weight shapes are too large.*layers\[0\]=20000"),
    # ------------------------------------------------------------------ tap_solve / tap_log_z
    ("tap_solve-dbm-type", lambda t: tap_solve("x", X), TypeError, "dbm must be an rbmviz.dbm.DBM"),
    ("tap_solve-nan-weights", lambda t: tap_solve(_nan_dbm(), X), ValueError, r"W\[0\] contains NaN or inf"),
    ("tap_solve-init-columns", lambda t: tap_solve(_d(), np.ones((2, 5))), ValueError, "init has 5 columns"),
    ("tap_solve-init-nonbinary", lambda t: tap_solve(_d(), np.full((2, 4), .5)), ValueError, "init must be binary"),
    ("tap_solve-init-complex", lambda t: tap_solve(_d(), X + 0j), TypeError, "init must (be|hold) (numeric|real)"),
    ("tap_solve-clamped-type", lambda t: tap_solve(_d(), X, clamped="yes"), TypeError, "clamped must be True or False"),
    ("tap_solve-damping-zero", lambda t: tap_solve(_d(), X, damping=0), ValueError, "damping must be > 0"),
    ("tap_solve-damping-str", lambda t: tap_solve(_d(), X, damping="half"), TypeError, "damping must be a real number"),
    ("tap_solve-tol", lambda t: tap_solve(_d(), X, tol=0), ValueError, "tol must be > 0"),
    ("tap_solve-max_iter", lambda t: tap_solve(_d(), X, max_iter=0), ValueError, "max_iter must be >= 1"),
    ("tap_solve-max_iter-float", lambda t: tap_solve(_d(), X, max_iter=2.5), TypeError, "max_iter must be an integer"),
    ("tap_solve-init_hidden-range", lambda t: tap_solve(_d(), X, init_hidden=[np.full((6, 3), 5.0), np.full((6, 2), .5)]),
     ValueError, r"init_hidden\[0\] has 5\.0.*\[0, 1\]"),
    ("tap_solve-init_hidden-negative", lambda t: tap_solve(_d(), X, init_hidden=[np.full((6, 3), .5), np.full((6, 2), -.1)]),
     ValueError, r"init_hidden\[1\] has -0\.1"),
    ("tap_solve-init_hidden-count", lambda t: tap_solve(_d(), X, init_hidden=_half()[:1]), ValueError,
     "init_hidden must have 2 arrays"),
    ("tap_solve-init_hidden-transposed", lambda t: tap_solve(_d(), X, init_hidden=[np.full((3, 6), .5), np.full((6, 2), .5)]),
     ValueError, r"init_hidden\[0\] must have shape \(6, 3\), got \(3, 6\)"),
    ("tap_solve-init_hidden-1d", lambda t: tap_solve(_d(), X[:1], init_hidden=[np.full(3, .5), np.full(2, .5)]),
     ValueError, r"init_hidden\[0\] must have shape \(1, 3\), got \(3,\)"),
    ("tap_solve-init_hidden-nan", lambda t: tap_solve(_d(), X, init_hidden=[np.full((6, 3), np.nan), np.full((6, 2), .5)]),
     ValueError, r"init_hidden\[0\] contains NaN"),
    ("tap_solve-init_hidden-int", lambda t: tap_solve(_d(), X, init_hidden=5), TypeError, "init_hidden must be a list"),
    ("tap_log_z-count", lambda t: tap_log_z(_d(), [X]), ValueError, "m must have 3 arrays"),
    ("tap_log_z-range", lambda t: tap_log_z(_d(), _m(m1=np.full((6, 3), 5.0))), ValueError, r"m\[1\] has 5\.0"),
    ("tap_log_z-rows", lambda t: tap_log_z(_d(), _m(m1=np.full((5, 3), .5))), ValueError, r"m\[1\] must have shape \(6, 3\)"),
    ("tap_log_z-clamped-type", lambda t: tap_log_z(_d(), _m(), clamped="yes"), TypeError, "clamped must be True or False"),
    ("tap_log_z-dbm-type", lambda t: tap_log_z(_rbm(), _m()), TypeError, "dbm must be an rbmviz.dbm.DBM"),
    # ------------------------------------------------------------------ log_likelihood
    ("log_likelihood-per_unit", lambda t: log_likelihood(_d(), X, per_unit="yes"), TypeError, "per_unit must be True or False"),
    ("log_likelihood-details", lambda t: log_likelihood(_d(), X, details=3), TypeError, "details must be True or False"),
    ("log_likelihood-n_init", lambda t: log_likelihood(_d(), X, n_init=0), ValueError, "n_init must be >= 1"),
    ("log_likelihood-seed", lambda t: log_likelihood(_d(), X, seed=-1), ValueError, "seed must be >= 0"),
    ("log_likelihood-init-columns", lambda t: log_likelihood(_d(), X, init=np.ones((2, 3))), ValueError, "init has 3 columns"),
    ("log_likelihood-X-nonbinary", lambda t: log_likelihood(_d(), X * .5), ValueError, "X must be binary"),
    ("log_likelihood-damping", lambda t: log_likelihood(_d(), X, damping=1.5), ValueError, "damping must be <= 1"),
    ("log_likelihood-nan-weights", lambda t: log_likelihood(_nan_dbm(), X), ValueError, r"W\[0\] contains NaN"),
    # ------------------------------------------------------------------ gradient
    ("gradient-free-type", lambda t: _grad(free="a"), TypeError, "free must be a DBMSolution"),
    ("gradient-clamped-type", lambda t: _grad(clamped=None), TypeError, "clamped must be a DBMSolution"),
    ("gradient-swapped", lambda t: _grad(free=tap_solve(_d(), X, clamped=True)), ValueError,
     "free must hold free solutions"),
    ("gradient-other-model", lambda t: _grad(free=tap_solve(_d((4, 5, 2)), X)), ValueError,
     "free does not match the model"),
    ("gradient-X-rows", lambda t: _grad(X=X[:3]), ValueError, "clamped has 6 rows for 3 rows of X"),
    ("gradient-rows-out-of-range", lambda t: _grad(rows=[10]), ValueError, "rows holds index 10, out of range"),
    ("gradient-rows-float", lambda t: _grad(rows=[0.5]), TypeError, "rows must be a 1-D array of integer"),
    ("gradient-rows-2d", lambda t: _grad(rows=[[0, 1]]), TypeError, "rows must be a 1-D array"),
    ("gradient-rows-empty", lambda t: _grad(rows=[]), ValueError, "no free solutions to average over"),
    # ------------------------------------------------------------------ DBMTrainer
    ("trainer-momentum-one", lambda t: DBMTrainer(momentum=1.0), ValueError, "momentum must be < 1"),
    ("trainer-momentum-negative", lambda t: DBMTrainer(momentum=-0.1), ValueError, "momentum must be >= 0"),
    ("trainer-learning_rate", lambda t: DBMTrainer(learning_rate=0), ValueError, "learning_rate must be > 0"),
    ("trainer-weight_decay", lambda t: DBMTrainer(weight_decay=-1), ValueError, "weight_decay must be >= 0"),
    ("trainer-batch_size", lambda t: DBMTrainer(batch_size=0), ValueError, "batch_size must be >= 1"),
    ("trainer-n_solutions", lambda t: DBMTrainer(n_solutions=0), ValueError, "n_solutions must be >= 1"),
    ("trainer-damping", lambda t: DBMTrainer(damping=0), ValueError, "damping must be > 0"),
    ("trainer-tol", lambda t: DBMTrainer(tol=0), ValueError, "tol must be > 0"),
    ("trainer-max_iter-huge", lambda t: DBMTrainer(max_iter=10**9), ValueError, "max_iter must be <= 100000"),
    ("trainer-seed-str", lambda t: DBMTrainer(seed="a"), TypeError, "seed must be an integer"),
    ("trainer-update-dbm-type", lambda t: DBMTrainer().update("x", X), TypeError, "dbm must be an rbmviz.dbm.DBM"),
    ("trainer-epoch-X-columns", lambda t: DBMTrainer().epoch(_d(), np.ones((3, 5))), ValueError, "X has 5 columns"),
    ("trainer-epoch-nan-weights", lambda t: DBMTrainer().epoch(_nan_dbm(), X), ValueError, r"W\[0\] contains NaN"),
    ("trainer-n_solutions-above-batch", lambda t: DBMTrainer(batch_size=3, n_solutions=4), ValueError,
     r"n_solutions \(K=4\) must be at most the batch size"),
    ("trainer-update-small-batch", lambda t: DBMTrainer(batch_size=6, n_solutions=5).update(_d(), X[:3]), ValueError,
     r"n_solutions \(K=5\) is larger than the batch \(3 rows\)"),
    ("trainer-epoch-batch-above-data", lambda t: DBMTrainer(batch_size=7).epoch(_d(), X), ValueError,
     r"batch_size=7 is larger than the data \(6 rows of X\)"),
    ("trainer-other-model", lambda t: _trained_then((4, 5, 2)), ValueError, "momentum state has shapes"),
    # ------------------------------------------------------------------ JointTAP in the run loop
    ("joint-momentum-one", lambda t: JointTAP(momentum=1.0), ValueError, "momentum must be < 1"),
    ("joint-unknown-knob", lambda t: JointTAP(k=3), TypeError, r"does not take.*\['k'\]"),
    ("joint-set-momentum-one", lambda t: JointTAP().set_settings(momentum=1.0), ValueError,
     "momentum must be < 1"),
    ("joint-seed-live", lambda t: JointTAP().set_settings(seed=3), ValueError,
     "seed of a running algorithm cannot change"),
    ("run-joint-on-rbm", lambda t: Run(_rbm(), X, JointTAP(), epochs=1), TypeError,
     "algorithm 'dbm-tap' trains a DBM; the model must be one, got RBM"),
    ("run-dbm-with-rule-name", lambda t: Run(_d(), X, "tap", epochs=1), TypeError,
     "rbm must be an rbmviz.RBM, got DBM"),
    ("run-dbm-metrics", lambda t: Run(_d(), X, JointTAP(), epochs=1, metrics=["train_ll"]),
     ValueError, r"metric\(s\) \['train_ll'\] are defined for RBMs"),
    ("run-dbm-metrics-str", lambda t: Run(_d(), X, JointTAP(), epochs=1, metrics="all"),
     ValueError, "metrics must be 'auto' or a list"),
    ("run-dbm-dtype", lambda t: Run(_d(), X, JointTAP(), epochs=1, dtype="float32"), ValueError,
     r"a DBM trains in its own dtype \(float64\)"),
    ("run-dbm-columns", lambda t: Run(_d(), np.ones((6, 5)), JointTAP(), epochs=1), ValueError,
     "data has 5 columns"),
    ("run-dbm-nonbinary", lambda t: Run(_d(), X * .5, JointTAP(), epochs=1), ValueError,
     "data must be binary"),
    ("run-dbm-nan-weights", lambda t: Run(_nan_dbm(), X, JointTAP(), epochs=1), ValueError,
     r"W\[0\] contains NaN"),
    ("run-dbm-K-above-batch", lambda t: Run(_d(), X, JointTAP(n_solutions=4), epochs=1,
                                            batch_size=3), ValueError,
     r"n_solutions \(K=4\) must be at most the batch size"),
    ("run-shuffle-type", lambda t: Run(_d(), X, JointTAP(), epochs=1, shuffle=3), TypeError,
     "shuffle must be a numpy.random.Generator or None, got int"),
    ("run-remainder", lambda t: Run(_rbm(), X, "cd", epochs=1, remainder="keep"), ValueError,
     "remainder"),
    # ------------------------------------------------------------------ pretrain
    ("pretrain-momentum-one", lambda t: _pretrain(momentum=1.0), ValueError, "momentum must be < 1"),
    ("pretrain-learning_rate", lambda t: _pretrain(learning_rate=-1), ValueError, "learning_rate must be > 0"),
    ("pretrain-epochs-huge", lambda t: _pretrain(epochs=10**9 + 1), ValueError, "epochs must be <= 10000000"),
    ("pretrain-epochs-negative", lambda t: _pretrain(epochs=-1), ValueError, "epochs must be >= 0"),
    ("pretrain-batch_size", lambda t: _pretrain(batch_size=0), ValueError, "batch_size must be >= 1"),
    ("pretrain-batch-above-data", lambda t: _pretrain(batch_size=7), ValueError,
     r"batch_size=7 is larger than the data \(6 rows of X\)"),
    ("pretrain-callback", lambda t: _pretrain(epochs=1, callback=3), TypeError, "callback must be callable"),
    ("pretrain-X-nonbinary", lambda t: _pretrain(data=X * .5), ValueError, "X must be binary"),
    ("pretrain-dbm-type", lambda t: _pretrain(_rbm()), TypeError, "dbm must be an rbmviz.dbm.DBM"),
    ("pretrain-max_iter", lambda t: _pretrain(max_iter=0), ValueError, "max_iter must be >= 1"),
    # ------------------------------------------------------------------ exact
    ("exact-too-large", lambda t: DBM([20, 5, 3]).exact(), ValueError, "exact enumeration needs at most"),
    ("exact-nan-weights", lambda t: _nan_dbm().exact(), ValueError, r"W\[0\] contains NaN"),
    ("exact_clamped-columns", lambda t: _d().exact_clamped(np.ones((2, 5))), ValueError, "X has 5 columns"),
    ("exact_log_likelihood-nonbinary", lambda t: _d().exact_log_likelihood(X * .5), ValueError, "X must be binary"),
    # ------------------------------------------------------------------ adaTAP
    ("adatap-rbm-type", lambda t: adatap.solve("x", X), TypeError, "rbm must be an rbmviz.RBM"),
    ("adatap-truncated", lambda t: adatap.solve(rbmviz.RBM(4, 3, visible="truncated_gaussian"), X), ValueError,
     "binary .Bernoulli."),
    ("adatap-nan-weights", lambda t: adatap.solve(_nan_rbm(), X), ValueError, r"rbm\.W contains NaN"),
    ("adatap-init-nonbinary", lambda t: adatap.solve(_rbm(), np.full((2, 4), .5)), ValueError, "init must be binary"),
    ("adatap-init-columns", lambda t: adatap.solve(_rbm(), np.ones((2, 5))), ValueError, "init has 5 columns"),
    ("adatap-damping", lambda t: adatap.solve(_rbm(), X, damping=0), ValueError, "damping must be > 0"),
    ("adatap-tol", lambda t: adatap.solve(_rbm(), X, tol=-1), ValueError, "tol must be >= 0"),
    ("adatap-max_iter", lambda t: adatap.solve(_rbm(), X, max_iter=0), ValueError, "max_iter must be >= 1"),
    ("adatap-min_iter", lambda t: adatap.solve(_rbm(), X, min_iter=0), ValueError, "min_iter must be >= 1"),
    ("adatap-init_clip", lambda t: adatap.solve(_rbm(), X, init_clip=0.5), ValueError, "init_clip must be < 0.5"),
    ("adatap-var_floor", lambda t: adatap.solve(_rbm(), X, var_floor=0), ValueError, "var_floor must be > 0"),
    ("adatap-method", lambda t: adatap.solve(_rbm(), X, method="magic"), ValueError, "method 'magic'"),
    ("adatap-direct-memory", lambda t: adatap.solve(rbmviz.RBM(8000, 10, init="zeros"), None, method="direct"),
     ValueError, r"method='direct'.*8,010×8,010.*would allocate about .*GiB, more than the bound of .*MEMORY_MAX"),
    ("interaction_step-W-1d", lambda t: adatap.interaction_step(np.ones(3), np.ones((2, 4)), np.ones((2, 4))),
     ValueError, "W must be 2-D"),
    ("interaction_step-y-shape", lambda t: adatap.interaction_step(np.ones((2, 2)), np.ones((2, 4)), np.ones((3, 4))),
     ValueError, r"y must have shape \(2, 4\), got \(3, 4\)"),
    ("interaction_step-A2-columns", lambda t: adatap.interaction_step(np.ones((2, 2)), np.ones((2, 5)), np.ones((2, 5))),
     ValueError, "A2 has 5 columns but W of shape"),
    ("interaction_step-A2-strings", lambda t: adatap.interaction_step(np.ones((2, 2)), "a", np.ones((2, 4))),
     TypeError, "A2 must be numeric"),
    ("interaction_step-nan", lambda t: adatap.interaction_step(np.ones((2, 2)), np.full((2, 4), np.nan), np.ones((2, 4))),
     ValueError, "A2 contains NaN"),
    ("interaction_step-logdet", lambda t: adatap.interaction_step(np.ones((2, 2)), np.ones((2, 4)), np.ones((2, 4)),
                                                                  logdet="y"), TypeError, "logdet must be True or False"),
    ("interaction_step-table-type", lambda t: adatap.interaction_step(np.ones((2, 2)), np.ones((2, 4)), np.ones((2, 4)),
                                                                      table="x"), TypeError, "table must be None, False or"),
    ("interaction_step-table-other-W", lambda t: adatap.interaction_step(
        np.ones((2, 2)), np.ones((2, 4)), np.ones((2, 4)), table=adatap._outer_table(np.ones((5, 3)))),
     ValueError, "table has products of shape"),
    ("interaction_step-method", lambda t: adatap.interaction_step(np.ones((2, 2)), np.ones((2, 4)), np.ones((2, 4)),
                                                                  method="lu"), ValueError, "method 'lu'"),
    ("interaction_step-memory", lambda t: adatap.interaction_step(np.zeros((8000, 10)), np.ones((1, 8010)),
                                                                  np.ones((1, 8010)), method="direct"),
     ValueError, r"method='direct'.*would allocate about.*bound"),
    # ------------------------------------------------------------------ TAP inference
    ("tap-solve-nan-weights", lambda t: tap.solve(_nan_rbm(), X), ValueError, r"rbm\.W contains NaN"),
    ("tap-solve-data_anchored", lambda t: tap.solve(_rbm(), X, data_anchored="no"), TypeError,
     "data_anchored must be True or False"),
    ("tap-solve-init_hidden-range", lambda t: tap.solve(_rbm(), X, init_hidden=np.full((6, 3), 5.0)), ValueError,
     "init_hidden has 5.0"),
    ("tap-solve-init_hidden-rows", lambda t: tap.solve(_rbm(), X, init_hidden=np.full((5, 3), .5)), ValueError,
     "init_hidden has 5 rows"),
    ("tap-solve-products", lambda t: tap.solve(_rbm(), X, products="float16"), ValueError, "products 'float16'"),
    ("tap-solve-init-outside", lambda t: tap.solve(_rbm(), np.full((1, 4), 1.5), data_anchored=False), ValueError,
     "init_visible has 1.5"),
    ("tap-free_energy-range", lambda t: tap.free_energy_binary(_rbm(), np.full((1, 4), 5.0), np.full((1, 3), .5)),
     ValueError, r"av has 5\.0"),
    ("tap-free_energy-1d", lambda t: tap.free_energy_binary(_rbm(), np.full(4, .5), np.full((1, 3), .5)), ValueError,
     "av must be 2-D"),
    ("tap-free_energy-columns", lambda t: tap.free_energy_binary(_rbm(), np.full((1, 4), .5), np.full((1, 2), .5)),
     ValueError, "ah has 2 columns but the model has n_hidden=3"),
    ("tap-free_energy-rows", lambda t: tap.free_energy_binary(_rbm(), np.full((2, 4), .5), np.full((1, 3), .5)),
     ValueError, "av and ah must have the same number of rows"),
    ("tap-free_energy-visible_field", lambda t: tap.free_energy_binary(_rbm(), np.full((1, 4), .5), np.full((1, 3), .5),
                                                                        visible_field=np.ones(3)),
     ValueError, r"visible_field must have shape \(1, 4\) or \(4,\)"),
    ("tap-free_energy-order", lambda t: tap.free_energy_binary(_rbm(), np.full((1, 4), .5), np.full((1, 3), .5), order=4),
     ValueError, "order"),
    ("tap-subset-out-of-range", lambda t: tap.solve(_rbm(), X).subset([10]), ValueError, "idx holds row 10, out of range"),
    ("tap-subset-2d", lambda t: tap.solve(_rbm(), X).subset([[0, 1]]), ValueError, "idx must be 1-D"),
    ("tap-subset-float", lambda t: tap.solve(_rbm(), X).subset([0.5]), TypeError, "idx must hold integers or booleans"),
    ("tap-subset-mask", lambda t: tap.solve(_rbm(), X).subset([True, False]), ValueError, r"a boolean idx must have shape \(6,\)"),
    ("tap-solve_counted-first_damping", lambda t: tap.solve_counted(_rbm(), X, first_damping=2), ValueError,
     "first_damping must be <= 1"),
    ("tap-solve_counted-scale_iter", lambda t: tap.solve_counted(_rbm(), X, scale_iter="no"), TypeError,
     "scale_iter must be True or False"),
    ("tap-solve_counted-return_fallback", lambda t: tap.solve_counted(_rbm(), X, return_fallback=1), TypeError,
     "return_fallback must be True or False"),
    ("tap-solve_counted-damping-empty", lambda t: tap.solve_counted(_rbm(), X, damping=()), ValueError,
     "damping: an empty sequence"),
    ("tap-solve_counted-fallback_tol", lambda t: tap.solve_counted(_rbm(), X, fallback_tol=0), ValueError,
     "fallback_tol must be > 0"),
    ("tap-solve_counted-init", lambda t: tap.solve_counted(_rbm(), X * .5), ValueError, "init_visible must be binary"),
    ("tap-solve_counted-nan-weights", lambda t: tap.solve_counted(_nan_rbm(), X), ValueError, r"rbm\.W contains NaN"),
    ("tap-log_likelihood-unique", lambda t: tap.log_likelihood(_rbm(), X, unique="no"), TypeError,
     "unique must be True or False"),
    ("tap-log_likelihood-details", lambda t: tap.log_likelihood(_rbm(), X, details="no"), TypeError,
     "details must be True or False"),
    ("tap-log_likelihood-undamped_first", lambda t: tap.log_likelihood(_rbm(), X, undamped_first=None), TypeError,
     "undamped_first must be True or False"),
    ("tap-log_likelihood-unique_tol", lambda t: tap.log_likelihood(_rbm(), X, unique=False, unique_tol=0), ValueError,
     "unique_tol must be > 0"),
    ("tap-log_likelihood-seed", lambda t: tap.log_likelihood(_rbm(), X, seed=-1), ValueError, "seed must be >= 0"),
    ("tap-log_likelihood-order", lambda t: tap.log_likelihood(_rbm(), X, order=4), ValueError, "order"),
    ("tap-log_likelihood-tol", lambda t: tap.log_likelihood(_rbm(), X, tol="small"), TypeError,
     "tol must be a real number"),
    ("tap-log_likelihood-max_iter", lambda t: tap.log_likelihood(_rbm(), X, max_iter=0), ValueError,
     "max_iter must be >= 1"),
    ("tap-log_likelihood-nan-weights", lambda t: tap.log_likelihood(_nan_rbm(), X), ValueError, r"rbm\.W contains NaN"),
    ("tap-data_term-nonbinary", lambda t: tap.data_term(_rbm(), np.full((1, 4), .5)), ValueError, "V must be binary"),
    ("tap-data_term-rbm-type", lambda t: tap.data_term("x", X), TypeError, "rbm must be an rbmviz.RBM"),
    ("tap-damping_ladder-floor", lambda t: tap.damping_ladder(0.5, floor=0), ValueError, "floor must be > 0"),
    ("tap-unique-tol-str", lambda t: tap.unique_solutions(tap.solve(_rbm(), X), tol="x"), TypeError,
     "tol must be a real number"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("call,exc,match", [pytest.param(*c[1:], id=c[0]) for c in API_CASES])
def test_bad_input_gets_a_clear_error(tmp_path, call, exc, match):
    with pytest.raises(exc, match=match) as info:
        call(tmp_path)
    origin = _innermost_file(info)
    assert origin.startswith(PKG), (
        f"raised from {origin}, not by rbmviz's checks: {type(info.value).__name__}: {info.value}")


def test_catalogue_size_and_ids():
    ids = [c[0] for c in API_CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 60


# ---------------------------------------------------------------------------- not a regular file
def _returns_within(fn, seconds=20.0):
    """Run ``fn`` in a daemon thread; its exception (or None), or fail if it blocks."""
    box = {}

    def run():
        try:
            fn()
            box["exc"] = None
        except BaseException as exc:       # noqa: BLE001 - handed to the test
            box["exc"] = exc

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    assert not th.is_alive(), f"blocked for more than {seconds} s"
    return box["exc"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "x.npz"
    os.mkfifo(fifo)
    try:
        exc = _returns_within(lambda: DBM.load(fifo))
        assert isinstance(exc, ValueError) and "x.npz" in str(exc) and "FIFO" in str(exc), exc
        exc = _returns_within(lambda: DBM.load(tmp_path / "x"))        # found as x.npz
        assert isinstance(exc, ValueError) and "FIFO" in str(exc), exc
        exc = _returns_within(lambda: _d().save(fifo, overwrite=True))
        assert isinstance(exc, ValueError) and "x.npz" in str(exc) and "FIFO" in str(exc), exc
    finally:
        # unblock a reader that (against the test's expectation) opened the FIFO
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)


# ---------------------------------------------------------------------------- save / load
def test_save_refuses_an_existing_file_unless_overwrite(tmp_path):
    d, other = _d(), _d((4, 3, 2))
    other.W[0][:] = 1.0
    path = d.save(tmp_path / "m")
    assert path.name == "m.npz" and path.exists()
    with pytest.raises(FileExistsError, match=r"m\.npz exists; pass overwrite=True"):
        other.save(tmp_path / "m.npz")
    np.testing.assert_array_equal(DBM.load(tmp_path / "m").W[0], d.W[0])       # untouched
    other.save(tmp_path / "m.npz", overwrite=True)
    np.testing.assert_array_equal(DBM.load(path).W[0], other.W[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]             # no temporary left


def test_save_round_trip_and_failed_write_leaves_nothing(tmp_path, monkeypatch):
    d = _d((5, 3, 2))
    d.biases[1][:] = [0.5, -1.0, 2.0]
    back = DBM.load(d.save(tmp_path / "m.npz"))
    assert back.layers == d.layers
    for a, b in zip(d.W + d.biases, back.W + back.biases):
        np.testing.assert_array_equal(a, b)

    def broken(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        d.save(tmp_path / "m.npz", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    monkeypatch.undo()
    assert DBM.load(tmp_path / "m.npz").layers == d.layers                     # the old file is intact


def test_a_dbm_file_without_format_tag_still_loads(tmp_path):
    """Files written before the format tag (layers, W1…, theta0…) load as before."""
    d = _d()
    arrays = {"layers": np.array(d.layers)}
    arrays.update({f"W{l + 1}": w for l, w in enumerate(d.W)})
    arrays.update({f"theta{l}": t for l, t in enumerate(d.biases)})
    np.savez(tmp_path / "old.npz", **arrays)
    back = DBM.load(tmp_path / "old.npz")
    np.testing.assert_array_equal(back.W[1], d.W[1])


def test_a_refused_set_params_leaves_the_model_unchanged():
    d = _d()
    before = d.copy()
    with pytest.raises(ValueError, match=r"biases\[2\] contains NaN"):
        d.set_params(W=[np.ones((4, 3)), np.ones((3, 2))], biases=[np.zeros(4), np.zeros(3), [np.nan, 0]])
    for a, b in zip(d.W + d.biases, before.W + before.biases):
        np.testing.assert_array_equal(a, b)


_KILLED_SAVE = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from rbmviz.dbm import DBM
    d = DBM([50, 40, 30], seed=1, scale=0.1)
    real = np.savez

    def dying(fh, **arrays):                 # write part of the archive, then SIGKILL
        fh.write(b"PK\\x03\\x04 half an archive")
        fh.flush()
        os.kill(os.getpid(), signal.SIGKILL)

    np.savez = dying
    d.save(sys.argv[1], overwrite=True)
""")


_NEXT_SAVE = textwrap.dedent("""
    import sys
    from rbmviz.dbm import DBM
    DBM([50, 40, 30], seed=1, scale=0.1).save(sys.argv[1], overwrite=True)
""")


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_a_save_killed_while_writing_never_blocks_the_next(tmp_path):
    path = tmp_path / "dbm.npz"
    before = _d()
    before.save(path)
    proc = subprocess.run([sys.executable, "-c", _KILLED_SAVE, str(path)], capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    leftovers = [p for p in tmp_path.iterdir() if p.name != "dbm.npz"]
    assert leftovers and all(p.name.startswith(".dbm.npz.") for p in leftovers)   # the crash's trace
    np.testing.assert_array_equal(DBM.load(path).W[0], before.W[0])               # nothing lost
    after = _d((4, 3, 2))
    after.W[0][:] = 0.25
    after.save(path, overwrite=True)                         # not blocked, in this process
    np.testing.assert_array_equal(DBM.load(path).W[0], after.W[0])
    # the next run (a new process) saves again and removes the dead writer's temporary file
    proc = subprocess.run([sys.executable, "-c", _NEXT_SAVE, str(path)], capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert DBM.load(path).layers == (50, 40, 30)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dbm.npz"]


@pytest.mark.parametrize("replace,match", [
    (dict(W2=np.zeros((4, 2))), "array 'W2' has shape"),
    (dict(theta1=np.zeros(5)), "array 'theta1' has shape"),
    (dict(layers=np.arange(1, 200)), "declares 199 layers"),
    (dict(extra=np.zeros(3)), None),
])
def test_declared_shapes_are_checked_before_any_array_is_read(tmp_path, monkeypatch, replace, match):
    """DBM.load reads the .npy headers first: a file whose declared shapes do not fit is
    refused without reading (allocating) a single array."""
    path = _saved(tmp_path, **replace)
    read = []
    real = np.lib.format.read_array

    def spy(*a, **k):
        read.append(1)
        return real(*a, **k)

    monkeypatch.setattr(np.lib.format, "read_array", spy)
    if match is None:                      # a good file (with an extra array) is read
        DBM.load(path)
        assert read
        return
    with pytest.raises(ValueError, match=match):
        DBM.load(path)
    assert not read
