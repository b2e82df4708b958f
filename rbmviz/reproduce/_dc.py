"""Shared helpers of the Upadhya & Sastry (2017) reproductions ``dc-small`` and ``dc-mnist``
(the DC-programming theory page of the documentation, the paper's numbers, DC-programming theory page).

* names and labels of the compared algorithms and data sets, the paper's numbers;
* :func:`time_to_fraction` (from :mod:`rbmviz.sweep`) — the paper's speed measure, "the epoch at which the model
  achieves 90 % of the maximum ATLL" (Sec. 4.2.1, the vertical lines of Figs. 2 and 3);
* :func:`summarize` — final ATLL per group and algorithm with its spread over trials,
  time to 90 %, distance to the theoretical bound, trials stuck at the Shifting Bar local
  optimum, divergences;
* :func:`run_grid` — the trials through :func:`rbmviz.sweep.sweep`;
* output directories that never overwrite (:func:`check_out_dir`; the files are written by
  :func:`rbmviz.reproduce.report.save`).

Every trial starts all algorithms (and every grid point) from the same initial parameters
and the same Gibbs-stream seed (the sweep's contract), as in the paper ("all the
algorithms start with the same initial setting").
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..sweep import curve_means, time_to_fraction
from . import _io
from ._io import finite_or_none as _f

__all__ = ["ALGORITHMS", "ALGORITHM_LABELS", "DATASET_LABELS", "BOUNDS", "LOCAL_OPTIMUM",
           "STUCK_BELOW", "parse_list", "still_rising", "time_to_fraction", "curve_means", "summarize",
           "run_grid", "check_out_dir", "write_json", "FILES"]

#: the algorithms of the paper's small- and large-data comparisons, in its legend order
ALGORITHMS = ("cd", "pcd", "cg", "sdcp", "csdcp")
ALGORITHM_LABELS = {"cd": "CD", "pcd": "PCD", "cg": "CG", "sdcp": "S-DCP", "csdcp": "CS-DCP",
                    "ssd": "SSD"}
DATASET_LABELS = {"bars_and_stripes": "Bars & Stripes", "shifting_bar": "Shifting Bar",
                  "mnist": "MNIST", "binarized_mnist": "binarized MNIST",
                  "omniglot": "Omniglot", "digits": "digits (8x8)", "cbcl": "CBCL"}
#: best achievable average log-likelihood: uniform over the complete pattern set,
#: −ln 14 and −ln 9 (the paper's "−2.6" and "−2.2", quoted from Melchior et al. 2016)
BOUNDS = {"bars_and_stripes": -math.log(14), "shifting_bar": -math.log(9)}
#: ATLL at which CD and PCD stall on Shifting Bar for η = 0.3 and 0.5 (Sec. 4.2.1)
LOCAL_OPTIMUM = -3.15
#: a Shifting Bar trial whose final ATLL is below this still sits at the local optimum
#: (−3.15 ± 0.15; the bound is −2.197)
STUCK_BELOW = -3.0
#: files written to an output directory (``records.runs/``: one file per finished run, see
#: :func:`rbmviz.sweep.store_path`)
FILES = ("records.csv", "summary.json", "figure.html", "records.runs")


def parse_list(text, kind, name):
    """``"0.3,0.5"`` → ``[0.3, 0.5]`` (``kind`` converts each item); a clear ``ValueError``
    naming the option ``name`` otherwise.  Lists and tuples pass through (converted)."""
    return _io.parse_list(text, kind, name)



def summarize(records, metric, *, by=("dataset", "learning_rate"), x="epoch", fraction=0.9,
              of="max", stuck_below=STUCK_BELOW):
    """The numbers to compare with the paper, one entry per group (``by``) and algorithm.

    Parameters
    ----------
    records : tidy frame of the sweep (columns ``trial``, ``algorithm``, ``by``, ``x``,
        ``metric``).  A trial that diverged has no rows after its last healthy evaluation.
    metric : the ATLL column (``test_ll`` exact, ``ais_test_ll`` AIS).

    Returns
    -------
    list of dict with keys ``*by, algorithm, label, trials, epochs`` (last evaluation),
    ``final`` (mean over trials of the ATLL at the last evaluation), ``final_sem``,
    ``final_min``, ``final_max``, ``best`` (maximum of the mean curve), ``best_at``,
    ``t90`` (:func:`time_to_fraction` of the mean curve, in units of ``x``), ``bound`` and
    ``gap`` (bound − final, small data sets), ``stuck`` (Shifting Bar: trials whose final
    ATLL is below ``stuck_below``) and ``stuck_mean`` (their mean final ATLL),
    ``incomplete`` (trials that stopped before the last evaluation, e.g. diverged).
    """
    by = [c for c in by if c in records.columns]
    rows = []
    groups = records.groupby(by, sort=False) if by else [((), records)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        labels = dict(zip(by, key))
        for alg, ga in g.groupby("algorithm", sort=False):
            last_x = ga[x].max()
            per_trial_last = ga.sort_values(x).groupby("trial").tail(1)
            complete = per_trial_last[per_trial_last[x] == last_x]
            final = complete[metric]
            mean_curve = ga.groupby(x, sort=True)[metric].mean()
            n = len(final)
            ds = labels.get("dataset")
            bound = BOUNDS.get(ds)
            row = dict(labels, algorithm=alg, label=ALGORITHM_LABELS.get(alg, alg),
                       trials=int(ga["trial"].nunique()), epochs=_f(last_x),
                       final=_f(final.mean()) if n else None,
                       final_sem=_f(final.std(ddof=1) / math.sqrt(n)) if n > 1 else None,
                       final_min=_f(final.min()) if n else None,
                       final_max=_f(final.max()) if n else None,
                       best=_f(mean_curve.max()), best_at=_f(mean_curve.idxmax()),
                       t90=time_to_fraction(mean_curve.index.to_numpy(), mean_curve.to_numpy(),
                                            fraction, of=of),
                       bound=bound, gap=_f(bound - final.mean()) if (bound is not None and n) else None,
                       incomplete=int(len(per_trial_last) - n))
            if ds == "shifting_bar":
                stuck = final[final < stuck_below]
                row.update(stuck=int(len(stuck)), stuck_mean=_f(stuck.mean()) if len(stuck) else None)
            for k, v in list(row.items()):
                if isinstance(v, np.generic):
                    row[k] = v.item()
            rows.append(row)
    return rows


def still_rising(row: dict) -> bool:
    """Whether the trial-mean curve of summary row ``row`` peaks at its last evaluation: it
    has not levelled off, so its time to 90 % of its maximum says little (the rule every
    time-to-90 % claim applies before judging).

    Parameters
    ----------
    row : dict
        A row of :func:`summarize` (``best_at``, ``epochs``).

    Returns
    -------
    bool
        True when the curve's maximum is at its last evaluation.
    """
    return (row.get("best_at") is not None and row.get("epochs") is not None
            and row["best_at"] >= row["epochs"])


def first_to_fraction(rows, *, by=("dataset", "learning_rate")):
    """Per group: the algorithms ordered by ``t90`` (those that never gain last).

    Returns
    -------
    list of dict ``{**group, "order": [(label, t90), ...]}``.
    """
    out, seen = [], {}
    for r in rows:
        key = tuple(r.get(c) for c in by if c in r)
        seen.setdefault(key, []).append(r)
    for key, rs in seen.items():
        order = sorted(rs, key=lambda r: (r["t90"] is None, r["t90"] if r["t90"] is not None else 0))
        out.append(dict({c: rs[0].get(c) for c in by if c in rs[0]},
                        order=[(r["label"], r["t90"]) for r in order]))
    return out


def run_grid(base, *, algorithms, trials, grid, seed, workers, scheduler, out, overwrite,
             progress, run_overrides, paired_chains=False, resume=False, checkpoints=None,
             algorithm_settings=None):
    """All runs of an experiment through :func:`rbmviz.sweep.sweep` (trials × algorithms ×
    grid; same initial parameters for every algorithm of a trial, each algorithm its own
    Gibbs stream unless ``paired_chains``).

    ``out`` (a directory or None): the records stream into ``out/records.csv`` as runs
    finish, each finished run is stored at once in ``out/records.runs/`` (never overwriting
    unless ``overwrite``); ``resume=True`` skips the runs stored there by an earlier,
    interrupted call with the same settings; ``checkpoints`` (epochs) saves each run's model
    there (see :func:`rbmviz.sweep.run_specs`).

    ``base`` holds the study's budget for every rule it compares (e.g. S-DCP's ``k_inner``);
    the knobs of it that none of ``algorithms`` takes are dropped here, as a sweep refuses a
    base setting that none of its rules takes.
    """
    from .. import settings as _settings
    from .. import sweep as _sweep
    taken = {n for a in algorithms for n in _settings.algorithm_knobs(a)}
    every = {n for a in _settings.TrainSettings.param["algorithm"].objects
             for n in _settings.algorithm_knobs(a)}
    base = {k: v for k, v in base.items() if k not in every or k in taken}
    path = None if out is None else Path(out) / "records.csv"
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    return _sweep.sweep(base, algorithms=list(algorithms), trials=trials, grid=grid, seed=seed,
                        scheduler=scheduler, workers=workers, run_overrides=run_overrides,
                        out=path, overwrite=overwrite, progress=progress,
                        paired_chains=paired_chains, resume=resume, checkpoints=checkpoints,
                        algorithm_settings=algorithm_settings)


def check_out_dir(out, overwrite=False, files=FILES):
    """Refuse (``FileExistsError``) an output directory that already holds one of ``files``
    unless ``overwrite``, and a path that is not a directory (``NotADirectoryError``)."""
    _io.check_out_dir(out, overwrite, files)


write_json = _io.write_json
