"""The ``rbmviz`` command (also ``python -m rbmviz``).

Subcommands are registered with :func:`command`: one decorated function adds a subcommand's
arguments to its parser and returns the function that runs it.  The options of
``rbmviz train`` are generated from the settings classes of :mod:`rbmviz.settings`, so the
command line, the notebooks and the explorer share one definition of every knob.

Exit codes: 0 success, 1 unexpected error, 2 bad usage or missing/corrupt data file,
3 the run diverged, 130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import argparse
import csv
import inspect
import json
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import param

from . import settings as _settings

PROG = "rbmviz"

EXIT_OK, EXIT_USAGE, EXIT_DIVERGED, EXIT_INTERRUPTED = 0, 2, 3, 130

Runner = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


@dataclass(frozen=True)
class _Command:
    setup: Callable[[argparse.ArgumentParser], Runner]
    help: str
    examples: tuple[str, ...]
    usage: str | None


_COMMANDS: dict[str, _Command] = {}


def command(name: str, *, help: str, examples: tuple[str, ...] | list[str], usage: str | None = None):
    """Register subcommand ``name``.

    The decorated function ``setup(parser)`` adds the subcommand's arguments to ``parser``
    and returns ``run(args, parser) -> exit code``.  Its docstring is the subcommand's
    ``--help`` description; ``examples`` are shown in the subcommand's and the top-level
    help; ``usage`` (optional) replaces argparse's generated usage line after
    ``rbmviz <name>`` (for commands with many options).
    """
    def register(setup: Callable[[argparse.ArgumentParser], Runner]):
        _COMMANDS[name] = _Command(setup, help, tuple(examples), usage)
        return setup
    return register


def _wrap_command(cmd: str, width: int = 78) -> str:
    """A long shell command split over lines ending in `` \\`` (still copy-pasteable); an
    option stays on one line with its value."""
    chunks: list[str] = []
    for word in cmd.split(" "):
        if chunks and not word.startswith("-") and chunks[-1].startswith("-") and " " not in chunks[-1]:
            chunks[-1] += " " + word
        else:
            chunks.append(word)
    lines, line = [], "  " + chunks[0]
    for chunk in chunks[1:]:
        if len(line) + 1 + len(chunk) > width - 2:
            lines.append(line + " \\")
            line = "      " + chunk
        else:
            line += " " + chunk
    return "\n".join(lines + [line])


def _examples_block(examples) -> str:
    return "examples:\n" + "\n".join(_wrap_command(e) for e in examples)


def build_parser() -> argparse.ArgumentParser:
    """The ``rbmviz`` argument parser with every registered subcommand."""
    from . import __version__
    examples = [c.examples[0] for c in _COMMANDS.values() if c.examples]
    parser = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
        description=textwrap.dedent("""\
            Train restricted Boltzmann machines and watch them learn.

            Each subcommand has its own help: rbmviz <command> --help.
            The same settings are available in Python (rbmviz.settings) and in the
            explorer app."""),
        epilog=_examples_block(examples))
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", title="commands")
    for name, c in _COMMANDS.items():
        p = sub.add_parser(name, help=c.help, description=inspect.cleandoc(c.setup.__doc__ or c.help),
                           usage=c.usage and f"{PROG} {name} {c.usage}",
                           epilog=_examples_block(c.examples) if c.examples else None,
                           formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
        p.set_defaults(_run=c.setup(p), _parser=p)
    return parser


def main(argv=None) -> int:
    """Run the ``rbmviz`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit
    code (argparse's usage errors and ``--help`` included, they do not raise)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if getattr(args, "_run", None) is None:
            parser.print_help()
            return EXIT_USAGE
        return args._run(args, args._parser)
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        code = exc.code
        if code is None:
            return EXIT_OK
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1


# ---------------------------------------------------------------------------- knob options

def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _fmt(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _range_text(p: param.Parameter) -> str:
    bounds = getattr(p, "bounds", None)
    if not bounds:
        return ""
    lo, hi = bounds
    if hi is not None and hi >= 2**63 - 1:   # seeds: "any non-negative integer"
        hi = None
    inc_lo, inc_hi = getattr(p, "inclusive_bounds", (True, True))
    if hi is None:
        return f"{'>=' if inc_lo else '>'} {_fmt(lo)}"
    if lo is None:
        return f"{'<=' if inc_hi else '<'} {_fmt(hi)}"
    return f"{'[' if inc_lo else '('}{_fmt(lo)}, {_fmt(hi)}{']' if inc_hi else ')'}"


def _type_for(p: param.Parameter):
    """An argparse ``type`` converting text with :func:`rbmviz.settings.parse_value`."""
    def convert(text):
        try:
            return _settings.parse_value(p, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = type(p).__name__.lower()
    return convert


def add_knob_options(parser, cls, *, exclude=()) -> dict[str, str]:
    """Add one ``--kebab-case`` option per knob of settings class ``cls`` to ``parser`` (an
    argument group works too): type, choices, default and help come from the knob.  Options
    default to ``argparse.SUPPRESS`` so that only the options given appear in the namespace.
    Returns ``{knob: option string}``."""
    added = {}
    for name, p in _settings.knobs(cls).items():
        if name in exclude:
            continue
        kind = _settings._param_kind(p)
        help_ = (p.doc or "").strip().replace("%", "%%")
        extra = []
        kw: dict = {"dest": name, "default": argparse.SUPPRESS}
        if kind == "choice":
            choices = [str(o) for o in p.objects]
            kw["choices"] = choices
            if len(",".join(choices)) > 30:
                kw["metavar"] = "NAME"
                extra.append("one of: " + ", ".join(choices))
        elif kind == "bool":
            kw["action"] = argparse.BooleanOptionalAction
        else:
            kw["type"] = _type_for(p)
            kw["metavar"] = ("INT" if kind == "int" else "X") + ("|none" if p.allow_None else "")
            rng = _range_text(p)
            if rng:
                extra.append(rng)
        extra.append(f"default: {_fmt(p.default)}")
        kw["help"] = f"{help_} ({'; '.join(extra)})"
        option = _option(name)
        parser.add_argument(option, **kw)
        added[name] = option
    return added


def _assign(parser, obj, name, value, option):
    try:
        setattr(obj, name, value)
    except ValueError as exc:
        parser.error(f"argument {option}: {_settings.clean_param_error(exc)}")


# ---------------------------------------------------------------------------- train

_FILES = ("records.csv", "model.npz", "settings.json")


@command("train", help="train an RBM, streaming its metrics to a CSV file",
         examples=("rbmviz train --dataset bars_and_stripes --algorithm pcd --k 12 "
                   "--learning-rate 0.3 --epochs 1000 --eval-every 100 --out runs/bs_pcd",
                   "rbmviz train --dataset mnist --limit 10000 --n-hidden 16 --batch-size 100 "
                   "--dtype float32 --epochs 20 --eval-every 5 --out runs/mnist_cd1",
                   "rbmviz train --settings runs/bs_pcd/settings.json --seed 1 --out runs/bs_pcd_seed1"),
         usage="--out DIR [--dataset NAME] [--algorithm NAME] [options]")
def _setup_train(parser):
    """Train an RBM on a data set with one training rule and record how it learns.

    A record is made at epoch 0, every --eval-every epochs and at the last epoch: exact
    log-likelihood of the training and test rows (train_ll, test_ll, nats per example) when
    the model has a layer of at most 20 units, pseudo-log-likelihood, reconstruction error
    and weight norm.  Records stream to OUT/records.csv as they are made (a crash keeps the
    rows so far); OUT/settings.json holds every setting (reload it with --settings) and
    OUT/model.npz the trained model (rbmviz.RBM.load).  A progress bar shows the latest
    log-likelihood.

    Test set: on the toy sets it is the training set (the complete pattern set); mnist,
    binarized_mnist and omniglot use their test split; digits and cbcl hold out their last
    20% of rows.  File data sets are read from the data directory (see `rbmviz info`).

    Exit status: 0 done, 2 bad option or missing data file, 3 the run diverged (the records
    so far are kept), 130 interrupted."""
    out = parser.add_argument_group("output")
    out.add_argument("--out", required=True, metavar="DIR",
                     help="directory for records.csv, model.npz and settings.json; created if "
                          "missing, refused if it exists and is not empty (unless --overwrite)")
    out.add_argument("--overwrite", action="store_true",
                     help="replace records.csv, model.npz and settings.json in an existing --out "
                          "directory (other files are left alone)")
    out.add_argument("--settings", metavar="FILE", dest="settings_file",
                     help="start from the settings in FILE (a settings.json written by an earlier "
                          "run); options given on the command line override them")
    out.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    options = {}
    for cls, title in zip(_settings.SETTINGS_CLASSES, ("data", "model", "training")):
        group = parser.add_argument_group(title, inspect.getdoc(cls).split("\n")[0])
        options.update(add_knob_options(group, cls))
    return lambda args, p: _run_train(args, p, options)


def _settings_from_args(args, parser, options):
    """The three settings objects: defaults, then --settings FILE, then the options given."""
    if args.settings_file:
        try:
            with open(args.settings_file, encoding="utf-8") as fh:
                values = json.load(fh)
            objs = _settings.from_dict(values)
        except (OSError, ValueError, TypeError) as exc:
            parser.error(f"argument --settings: {args.settings_file}: {exc}")
    else:
        objs = tuple(cls() for cls in _settings.SETTINGS_CLASSES)
    given = [n for n in options if hasattr(args, n)]
    for obj in objs:
        for name in _settings.knobs(obj):
            if name in given:
                _assign(parser, obj, name, getattr(args, name), options[name])
    data, model, train = objs
    # options that the chosen algorithm / data set would silently ignore
    from . import algorithms
    algo_knobs = {n for a in algorithms.names() for n in _settings.algorithm_knobs(a)}
    takes = _settings.algorithm_knobs(train.algorithm)
    for name in given:
        if name in algo_knobs and name not in takes:
            parser.error(f"argument {options[name]}: not used by algorithm {train.algorithm!r} "
                         f"(it takes {', '.join(_option(n) for n in takes)})")
    _reject_unused_data_knobs(parser, given, options, data.dataset)
    return objs


def _reject_unused_data_knobs(parser, given, options, dataset):
    """A usage error for a size option the chosen data set would silently ignore."""
    data_knobs = set(_settings.knobs(_settings.DataSettings)) - {"dataset"}
    uses = _settings.dataset_knobs(dataset)
    for name in given:
        if name in data_knobs and name not in uses:
            what = ", ".join(_option(n) for n in uses) or "no size options"
            parser.error(f"argument {options[name]}: not used by data set {dataset!r} "
                         f"(it takes {what})")


def _name_option(message: str, options: dict[str, str]) -> str:
    """``"batch_size=100 is larger ..."`` → ``"argument --batch-size: batch_size=100 is larger
    ..."`` when a message from the library starts with a knob's name."""
    first = message.split(" ", 1)[0].split("=", 1)[0]
    return f"argument {options[first]}: {message}" if first in options else message


def _check_out_dir(parser, out: Path, overwrite: bool):
    if out.exists() and not out.is_dir():
        parser.error(f"argument --out: {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        parser.error(f"argument --out: {out} exists and is not empty; choose another directory "
                     f"or pass --overwrite to replace its {', '.join(_FILES)}")


def _write_json_atomic(path: Path, obj) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def _postfix(rec: dict) -> dict:
    keys = [m for m in ("train_ll", "test_ll") if m in rec] or [m for m in ("pseudo_ll",) if m in rec]
    return {m: f"{rec[m]:.4f}" for m in keys}


def _run_train(args, parser, options) -> int:
    from .datasets import DatasetCorruptError, DatasetNotFoundError
    from .runs import RunDiverged

    data, model, train = _settings_from_args(args, parser, options)
    out = Path(args.out)
    _check_out_dir(parser, out, args.overwrite)
    try:
        run = _settings.make_run(data, model, train)
    except (DatasetNotFoundError, DatasetCorruptError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        parser.error(_name_option(str(exc), options))

    out.mkdir(parents=True, exist_ok=True)
    for name in _FILES:  # only reached with --overwrite when the directory is not empty
        (out / name).unlink(missing_ok=True)
    _write_json_atomic(out / "settings.json", _settings.to_dict(data, model, train))
    csv_path = out / "records.csv"

    from tqdm.auto import tqdm
    bar = tqdm(total=run.epochs, unit="epoch", disable=args.quiet, file=sys.stderr,
               desc=f"{run.algorithm.label or run.algorithm.name} on {data.dataset}",
               dynamic_ncols=True)
    rec = None
    try:
        with open(csv_path, "w", newline="", encoding="utf-8") as fh:
            writer = None
            for rec in run:
                if writer is None:
                    writer = csv.DictWriter(fh, fieldnames=list(rec))
                    writer.writeheader()
                writer.writerow(rec)
                fh.flush()
                bar.set_postfix(_postfix(rec), refresh=False)
                bar.update(rec["epoch"] - bar.n)
    except RunDiverged as exc:
        bar.close()
        print(f"{parser.prog}: {exc}; {len(run.records)} record(s) kept in {csv_path}, "
              f"model not saved", file=sys.stderr)
        return EXIT_DIVERGED
    except KeyboardInterrupt:
        bar.close()
        print(f"{parser.prog}: interrupted at epoch {run.epoch}; {len(run.records)} record(s) kept "
              f"in {csv_path}, model not saved", file=sys.stderr)
        return EXIT_INTERRUPTED
    bar.close()
    run.rbm.save(out / "model.npz")
    if not args.quiet:
        metrics = ", ".join(f"{k} {v}" for k, v in _postfix(rec).items())
        print(f"trained {run.epoch} epochs ({metrics}); wrote {csv_path}, {out / 'model.npz'}, "
              f"{out / 'settings.json'}")
    return EXIT_OK


# ---------------------------------------------------------------------------- info

@command("info", help="show the version, the Numba threading set-up and the data sets",
         examples=("rbmviz info",))
def _setup_info(parser):
    """Show rbmviz's version, the Numba threading layer and thread count, the data
    directory and which data sets can be loaded.

    The data directory is $RBMVIZ_DATA if set, else ~/.cache/rbmviz/data; `rbmviz train
    --dataset NAME` on a missing data set explains which files to put there."""
    return _run_info


def _run_info(args, parser) -> int:
    import numba
    import numpy as np

    from . import __version__, datasets
    from .kernels.gibbs import sigmoid_

    # the threading layer is chosen at the first parallel kernel call
    x = np.zeros((2, 2))
    sigmoid_(x, np.zeros(2), np.empty_like(x))
    try:
        layer = numba.threading_layer()
    except ValueError:  # pragma: no cover - no parallel region ran
        layer = "not initialised"
    print(f"rbmviz {__version__} (Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"numba {numba.__version__})")
    print(f"numba threading layer: {layer} (requested: {numba.config.THREADING_LAYER}); "
          f"threads: {numba.get_num_threads()} of NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}")
    root = datasets.data_dir()
    source = "from RBMVIZ_DATA" if os.environ.get("RBMVIZ_DATA") else "default; set RBMVIZ_DATA to change"
    print(f"data directory: {root} ({source}{'' if root.is_dir() else '; does not exist'})")
    print("data sets:")
    width = max(map(len, datasets.names()))
    for name in datasets.names():
        rule = _settings.DATASETS.get(name)
        kind = rule.kind if rule else "file"
        if kind == "toy":
            status = "generated"
        elif kind == "bundled":
            status = "bundled (scikit-learn)"
        else:
            status = ("available" if datasets.available(name)
                      else f"missing (files go in {root / name}/)")
        print(f"  {name:<{width}}  {status}")
    return EXIT_OK


# ---------------------------------------------------------------------------- reproduce

@command("reproduce", help="reproduce an experiment of one of the source papers",
         examples=("rbmviz reproduce cd-bias --out runs/cd_bias",
                   "rbmviz reproduce cd-bias --reps 5 --iterations 5000 --ks 1,5 "
                   "--weight-decay none"),
         usage="<experiment> [options]")
def _setup_reproduce(parser):
    """Reproduce an experiment of one of the source papers, print its summary next to the
    paper's numbers and optionally write its curves (CSV), summary (JSON) and figure (HTML).

    Each experiment has its own options: rbmviz reproduce <experiment> --help.

    Exit status: 0 done, 2 bad option or existing output directory, 3 a run diverged,
    130 interrupted."""
    from . import reproduce
    sub = parser.add_subparsers(dest="experiment", metavar="<experiment>", title="experiments")
    for name, exp in reproduce.EXPERIMENTS.items():
        module = reproduce.get(name)
        p = sub.add_parser(name, help=exp.help, description=inspect.cleandoc(module.__doc__ or exp.help),
                           formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
        module.add_arguments(p)
        p.set_defaults(_experiment_main=module.main, _experiment_parser=p)
    return _run_reproduce


def _run_reproduce(args, parser) -> int:
    run = getattr(args, "_experiment_main", None)
    if run is None:
        parser.print_help()
        return EXIT_USAGE
    return run(args, args._experiment_parser)


# ---------------------------------------------------------------------------- sweep

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
    from . import algorithms as _algs
    grid = {}
    known = {n for cls in _settings.SETTINGS_CLASSES for n in _settings.knobs(cls)}
    used = {n for a in algorithms for n in _settings.algorithm_knobs(a)}
    every = {n for a in _algs.names() for n in _settings.algorithm_knobs(a)}
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
            import difflib
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
        data, _, _ = _settings.from_dict(values)
    except ValueError as exc:
        parser.error(_name_option(str(exc), options))
    used = {n for a in algorithms for n in _settings.algorithm_knobs(a)}
    from . import algorithms as _algs
    every = {n for a in _algs.names() for n in _settings.algorithm_knobs(a)}
    for name in given:
        if name in every and name not in used:
            parser.error(f"argument {options[name]}: not used by any of the algorithms "
                         f"{', '.join(algorithms)}")
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
    import warnings

    from . import sweep as _sweep
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
    base = _sweep_base(args, parser, options, algorithms)
    grid = _parse_grid(parser, args.grid, algorithms)
    try:
        specs = _sweep.plan(base, algorithms=algorithms, trials=args.trials, grid=grid or None,
                            seed=args.seed)
    except (ValueError, TypeError) as exc:
        parser.error(_name_option(str(exc), options))
    if args.metric is not None:
        from .runs import METRICS
        if args.metric not in METRICS:
            parser.error(f"argument --metric: expected one of {', '.join(METRICS)}, got {args.metric!r}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = _sweep.run_specs(specs, scheduler=args.scheduler, workers=args.workers,
                                     out=args.out, overwrite=args.overwrite,
                                     progress=not args.quiet, connect_timeout=args.connect_timeout)
    except FileExistsError as exc:
        parser.error(f"argument --out: {exc}".replace("overwrite=True", "--overwrite"))
    except (ValueError, ImportError) as exc:
        parser.error(f"argument --out: {exc}")
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
        print(f"{n_runs} run(s): {status}; {len(frame)} record(s){saved}")
    if counts.get("failed", 0) == len(specs):
        return 1
    return EXIT_OK


# ---------------------------------------------------------------------------- bench

#: the benchmarks of bench/run_all.py, by name → script
BENCHMARKS = {"small": "bench_small.py", "large": "bench_large.py"}


def _bench_dir() -> Path:
    """``bench/`` of the source checkout this package was imported from (it is not installed
    with the package)."""
    return Path(__file__).resolve().parents[1] / "bench"


@command("bench", help="run the benchmarks against numpy and scikit-learn (source checkout)",
         examples=("rbmviz bench --quick", "rbmviz bench small"),
         usage="[--quick] [small] [large]")
def _setup_bench(parser):
    """Run the benchmarks of bench/run_all.py and print their table: `small` (full-batch
    CD-12/PCD-12 on 3x3 bars & stripes, rbmviz's fused kernel vs plain numpy, epochs/s) and
    `large` (PCD-1 on MNIST 784x500, rbmviz vs scikit-learn's BernoulliRBM, updates/s).
    Without names, all of them, and bench/results/latest.json is written.

    The benchmarks live in the bench/ directory of a source checkout (git clone of rbmviz),
    which is not installed with the package; run this command from an editable install
    (pip install -e .).  `large` reads MNIST from the data directory (see `rbmviz info`).

    Exit status: the benchmark's (0 done), 2 no source checkout, 130 interrupted."""
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"benchmarks to run, of: {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="few rounds (~15 s instead of ~30 s); ratios are indicative")
    return _run_bench


def _run_bench(args, parser) -> int:
    import subprocess
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"argument name: unknown benchmark {unknown[0]!r}; expected "
                     f"{', '.join(BENCHMARKS)}")
    bench = _bench_dir()
    scripts = ([bench / BENCHMARKS[n] for n in dict.fromkeys(args.names)] if args.names
               else [bench / "run_all.py"])
    missing = [s for s in scripts if not s.is_file()]
    if missing:
        print(f"{parser.prog}: error: the benchmarks need a source checkout of rbmviz (git clone, "
              f"then pip install -e .): bench/ is not installed with the package, and "
              f"{missing[0]} does not exist", file=sys.stderr)
        return EXIT_USAGE
    root = bench.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    for script in scripts:
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        try:
            code = subprocess.run(cmd, cwd=root, env=env).returncode
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        if code != 0:
            return code
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
