"""``rbmviz sweep``: many runs (trials x algorithms x grid), locally or on Dask
(:mod:`rbmviz.sweep`)."""
from __future__ import annotations

import difflib
import inspect
import json
import os
import sys
import warnings

from .. import settings as _settings
from .. import sweep as _sweep
from ..runs import METRICS
from ._core import (EXIT_INTERRUPTED, EXIT_OK, _fmt, _name_option, _reject_unused_algorithm_knobs,
                    _reject_unused_data_knobs, add_knob_options, command, writable_file_problem)


#: knobs a sweep sets itself (``--algorithms``, and the per-trial seeds from ``--seed``)
_SWEEP_SET = ("algorithm", "seed", "init_seed")


@command("sweep", help="train many runs (trials x algorithms x settings), locally or on Dask",
         examples=("rbmviz sweep --dataset bars_and_stripes --n-hidden 4 --epochs 500 --eval-every 50 "
                   "--algorithms cd,pcd,sdcp --k 12 --trials 25 --grid learning_rate=0.3,0.5 "
                   "--out runs/bs_sweep.csv",
                   "rbmviz sweep --dataset shifting_bar --N 12 --B 3 --n-hidden 12 --epochs 200 "
                   "--algorithms cd,pcd --trials 10 --grid k=12,24 --scheduler tcp://host:8786 "
                   "--out runs/sb.parquet"),
         usage="--algorithms A,B,... [--trials N] [--grid KNOB=V1,V2 ...] [--out FILE] [options]")
def _setup_sweep(parser):
    """Train every combination of trials x algorithms x grid values and summarise the final
    log-likelihood per algorithm and grid point (mean +- standard error over trials).

    Within a trial every algorithm and grid point starts from the same initial parameters
    and uses the same chain seed (both derived from --seed and the trial number), so the
    comparison is paired; different trials differ.  The papers use 25 trials on small data
    sets and 10 on large ones.  Knob options set the base settings of every run; an
    algorithm-specific knob (--k-inner, --n-chains) applies to the algorithms that take it.

    Runs go to a local process pool (--workers, default one per core; 0 = in this process)
    or to a Dask cluster (--scheduler tcp://host:8786; the workers need rbmviz installed).
    Results are one row per run and evaluation point (rbmviz.sweep): written to --out (.csv,
    or .parquet with pyarrow installed) as runs finish, so an interrupted sweep keeps what
    finished.  A diverging run is recorded (status 'diverged') and the sweep goes on.
    Records: without --eval-every (or an eval_every in --settings FILE) every run records
    about 100 times, at the same epochs (epochs / 100); records are always made at epoch 0
    and at the last epoch.  --eval-every none lets each run space its own records so that
    evaluation takes at most ~10 % of its time.

    Exit status: 0 done (diverged runs included), 1 the scheduler could not be reached or
    every run failed, 2 bad option or existing --out file, 130 interrupted (results so far
    kept)."""
    g = parser.add_argument_group("sweep")
    g.add_argument("--algorithms", required=True, metavar="A,B,...",
                   help="comma-separated training rules, e.g. cd,pcd,sdcp (one of: "
                        + ", ".join(_settings.TrainSettings.param["algorithm"].objects) + ")")
    g.add_argument("--trials", type=int, default=1, metavar="N",
                   help="independent trials, each with its own initial parameters (default: 1)")
    g.add_argument("--grid", action="append", default=[], metavar="KNOB=V1,V2",
                   help="vary a knob over comma-separated values; repeat for a product grid, "
                        "e.g. --grid learning_rate=0.3,0.5 --grid k=12,24")
    g.add_argument("--seed", type=int, default=0, metavar="INT",
                   help="sweep seed: trial t's initial-parameter and chain seeds are derived from "
                        "(seed, t) (default: 0)")
    g.add_argument("--scheduler", metavar="ADDR",
                   help="Dask scheduler address, e.g. tcp://host:8786 (default: run locally)")
    g.add_argument("--workers", type=int, metavar="N",
                   help="local processes (default: one per core; 0 or 1: in this process)")
    g.add_argument("--connect-timeout", type=float, default=10.0, metavar="S",
                   help="seconds to wait for the Dask scheduler (default: 10)")
    out = parser.add_argument_group("output")
    out.add_argument("--out", metavar="FILE",
                     help="results file, .csv or .parquet (needs pyarrow); refused if it exists "
                          "(unless --overwrite)")
    out.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    out.add_argument("--resume", action="store_true",
                     help="continue the sweep written to --out: the runs stored beside it "
                          "(FILE.runs/, one file per finished run) are skipped, a run cut off "
                          "mid-way continues from its kept state (FILE.runs/<run_id>.partial, "
                          "written at a record at most once a minute), the others run")
    out.add_argument("--checkpoints", metavar="E,E,...",
                     help="save each run's model at these epochs in FILE.runs/<run_id>/ "
                          "(needs --out)")
    out.add_argument("--settings", metavar="FILE", dest="settings_file",
                     help="base settings from FILE (a settings.json of rbmviz train); options given "
                          "on the command line override them")
    out.add_argument("--metric", metavar="NAME",
                     help="metric of the summary table (default: test_ll, else train_ll, else "
                          "pseudo_ll)")
    out.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
    options = {}
    for cls, title in zip(_settings.SETTINGS_CLASSES, ("data", "model", "training")):
        group = parser.add_argument_group(title, inspect.getdoc(cls).split("\n")[0])
        options.update(add_knob_options(group, cls, exclude=_SWEEP_SET))
    return lambda args, p: _run_sweep(args, p, options)


def _parse_grid(parser, items, algorithms) -> dict:
    """``["learning_rate=0.3,0.5", "k=12,24"]`` → ``{"learning_rate": ["0.3", "0.5"], ...}``
    (values are parsed and checked by :func:`rbmviz.sweep.plan`)."""
    grid = {}
    known = {n for cls in _settings.SETTINGS_CLASSES for n in _settings.knobs(cls)}
    used = {n for a in algorithms for n in _settings.algorithm_knobs(a)}
    every = {n for a in _settings.TrainSettings.param["algorithm"].objects
             for n in _settings.algorithm_knobs(a)}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip().lstrip("-").replace("-", "_")
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not key or not vals:
            parser.error(f"argument --grid: expected KNOB=V1,V2,..., got {item!r}")
        if key in _SWEEP_SET:
            parser.error(f"argument --grid: {key} is set by the sweep itself "
                         f"({'use --algorithms' if key == 'algorithm' else 'vary --trials or --seed'})")
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            parser.error(f"argument --grid: unknown setting {key!r}"
                         + (f" (did you mean {close[0]!r}?)" if close else ""))
        if key in grid:
            parser.error(f"argument --grid: {key} given twice")
        if key in every and key not in used:
            parser.error(f"argument --grid: {key} is not used by any of the algorithms "
                         f"{', '.join(algorithms)}")
        grid[key] = vals
    return grid


#: records per run a sweep makes when --eval-every is not given
RECORDS_PER_RUN = 100


def default_eval_every(epochs: int) -> int:
    """Epochs between a sweep's records when ``--eval-every`` is not given: about
    :data:`RECORDS_PER_RUN` per run, at the same epochs in every run (so that trials average
    point by point).  The knob's own default, every epoch, made the README's 60-run Bars &
    Stripes sweep (5,000 epochs each) take 5 minutes, ~90 % of it evaluating; with this,
    ~10 s."""
    return max(1, round(int(epochs) / RECORDS_PER_RUN))


def _sweep_base(args, parser, options, algorithms) -> dict:
    """The base settings: defaults, then --settings FILE, then the knob options given."""
    values = {}
    if args.settings_file:
        try:
            with open(args.settings_file, encoding="utf-8") as fh:
                values = json.load(fh)
            _settings.from_dict(values)
        except (OSError, ValueError, TypeError) as exc:
            parser.error(f"argument --settings: {args.settings_file}: {exc}")
        values = {k: v for k, v in values.items() if k not in _SWEEP_SET}
    given = [n for n in options if hasattr(args, n)]
    values.update({n: getattr(args, n) for n in given})
    try:
        data, _, train = _settings.from_dict(values)
    except ValueError as exc:
        parser.error(_name_option(str(exc), options))
    if "eval_every" not in values:
        values["eval_every"] = default_eval_every(train.epochs)
    _reject_unused_algorithm_knobs(parser, given, options, algorithms, sweep=True)
    _reject_unused_data_knobs(parser, given, options, data.dataset)
    return values


def _summary_table(summary) -> str:
    """The summary frame of :func:`rbmviz.sweep.summarize` as aligned text."""
    metric = summary["metric"].iloc[0] if len(summary) else "metric"
    groups = [c for c in summary.columns if c not in ("metric", "mean", "se", "n", "not_ok")]
    head = [*groups, f"final {metric} (mean ± s.e.)", "runs ok", "not ok"]
    rows = []
    for _, r in summary.iterrows():
        if r["n"] == 0:
            val = "—"
        elif r["n"] == 1:
            val = f"{r['mean']:.4f}"
        else:
            val = f"{r['mean']:.4f} ± {r['se']:.4f}"
        rows.append([*(_fmt(r[g]) for g in groups), val, str(r["n"]), str(r["not_ok"])])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def _run_sweep(args, parser, options) -> int:
    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    try:
        _sweep.plan({}, algorithms=algorithms, trials=1)    # names checked first
    except (ValueError, TypeError) as exc:
        parser.error(f"argument --algorithms: {exc}")
    if args.trials < 1:
        parser.error(f"argument --trials: must be at least 1, got {args.trials}")
    if args.workers is not None and args.workers < 0:
        parser.error(f"argument --workers: must be >= 0, got {args.workers}")
    if args.workers is not None and args.scheduler:
        parser.error("argument --workers: only for local runs; a --scheduler's cluster has its "
                     "own workers")
    if args.seed < 0:
        parser.error(f"argument --seed: must be >= 0, got {args.seed}")
    if not args.connect_timeout > 0:
        parser.error(f"argument --connect-timeout: must be > 0, got {args.connect_timeout}")
    if args.out is not None:      # before any run is trained
        problem = writable_file_problem(args.out)
        if problem:
            parser.error(f"argument --out: {problem}")
        if not (args.overwrite or args.resume) and os.path.exists(args.out):
            parser.error(f"argument --out: {args.out} exists; choose another file, pass "
                         f"--resume to continue that sweep or --overwrite to replace it")
    elif args.resume or args.checkpoints:
        parser.error(f"argument {'--resume' if args.resume else '--checkpoints'}: needs --out")
    if args.resume and args.overwrite:
        parser.error("argument --resume: not with --overwrite (which starts afresh)")
    checkpoints = None
    if args.checkpoints:
        try:
            checkpoints = [int(e) for e in args.checkpoints.split(",") if e.strip()]
            if not checkpoints or min(checkpoints) < 0:
                raise ValueError
        except ValueError:
            parser.error(f"argument --checkpoints: expected epochs E,E,... (integers >= 0), "
                         f"got {args.checkpoints!r}")
    base = _sweep_base(args, parser, options, algorithms)
    grid = _parse_grid(parser, args.grid, algorithms)
    try:
        with warnings.catch_warnings(record=True) as notes:
            warnings.simplefilter("always", _sweep.SweepNote)
            specs = _sweep.plan(base, algorithms=algorithms, trials=args.trials,
                                grid=grid or None, seed=args.seed)
    except (ValueError, TypeError) as exc:
        parser.error(_name_option(str(exc), options))
    for note in notes:
        print(f"{parser.prog}: note: {note.message}", file=sys.stderr)
    if args.metric is not None:
        if args.metric not in METRICS:
            parser.error(f"argument --metric: expected one of {', '.join(METRICS)}, got {args.metric!r}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = _sweep.run_specs(specs, scheduler=args.scheduler, workers=args.workers,
                                     out=args.out, overwrite=args.overwrite,
                                     progress=not args.quiet, connect_timeout=args.connect_timeout,
                                     resume=args.resume, checkpoints=checkpoints)
    except FileExistsError as exc:
        parser.error(f"argument --out: {exc}".replace("overwrite=True", "--overwrite")
                     .replace("resume=True", "--resume"))
    except (ValueError, ImportError) as exc:
        msg = str(exc)      # only errors about the output file are --out's
        if "stored run" in msg:
            parser.error(f"argument --resume: {msg}".replace("overwrite=True", "--overwrite"))
        if msg.startswith("out="):
            parser.error(f"argument --out: {msg}")
        if msg.startswith("checkpoints"):
            parser.error(f"argument --checkpoints: {msg}")
        if msg.startswith("RBMVIZ_"):      # an environment variable, refused before any run
            parser.error(msg)
        print(f"{parser.prog}: error: {type(exc).__name__}: {msg}", file=sys.stderr)
        return 1
    except ConnectionError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    for w in caught:
        if not str(w.message).startswith("sweep interrupted"):
            print(f"{parser.prog}: warning: {w.message}", file=sys.stderr)
    n_runs = frame["run_id"].nunique()
    last = frame.drop_duplicates("run_id", keep="last")
    counts = last["status"].value_counts().to_dict()
    if not args.quiet and len(frame):
        try:
            summary = _sweep.summarize(frame, args.metric)
        except ValueError as exc:
            print(f"{parser.prog}: warning: no summary: {exc}", file=sys.stderr)
        else:
            print(_summary_table(summary))
    status = ", ".join(f"{n} {s}" for s, n in counts.items())
    saved = f"; wrote {args.out}" if args.out else ""
    if frame.attrs.get("interrupted"):
        print(f"{parser.prog}: interrupted: {counts.get('ok', 0)} of {len(specs)} run(s) finished "
              f"({len(frame)} record(s) kept{saved})", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.quiet:
        resumed = frame.attrs.get("resumed", 0)
        continued = frame.attrs.get("continued", {})
        print(f"{n_runs} run(s): {status}; {len(frame)} record(s){saved}"
              + (f"; {resumed} run(s) resumed from {_sweep.store_path(args.out)}" if resumed else "")
              + (f"; {len(continued)} run(s) continued from their kept state ("
                 + ", ".join(f"{rid} from epoch {e:g}" for rid, e in continued.items()) + ")"
                 if continued else ""))
    if counts.get("failed", 0) == len(specs):
        return 1
    return EXIT_OK
