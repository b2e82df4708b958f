"""``rbmviz train``: one run, streamed to a CSV file, with the model and its settings."""
from __future__ import annotations

import argparse
import csv
import inspect
import json
import os
import sys
from pathlib import Path

from tqdm.auto import tqdm

from .. import _files, algorithms
from .. import presets as _presets
from .. import settings as _settings
from ..datasets import DatasetCorruptError, DatasetNotFoundError
from ..errors import RunDiverged
from ._core import (EXIT_DIVERGED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, _assign, _name_option,
                    _reject_unused_algorithm_knobs, _reject_unused_data_knobs,
                    add_knob_options, command)

#: the files a run writes into ``--out``
FILES = ("records.csv", "model.npz", "settings.json")
#: where a run that replaces an earlier one (``--overwrite``) writes its records and settings
#: until it has succeeded (its model goes to a temporary file unique to the process,
#: ``.model.npz.<pid>.<random>.tmp``, renamed to model.npz at the end: see rbmviz._files)
STAGED = {"records.csv": "records.new.csv", "settings.json": "settings.new.json"}
#: preset keys that are settings knobs (``rbmviz.presets.for_dataset``)
PRESET_KNOBS = ("algorithm", "n_hidden", "batch_size", "learning_rate", "k", "epochs", "dtype",
                "limit", "init", "init_scale", "visible_bias", "eval_every")


@command("train", help="train an RBM, streaming its metrics to a CSV file",
         examples=("rbmviz train --dataset bars_and_stripes --algorithm pcd --k 12 "
                   "--learning-rate 0.3 --epochs 1000 --eval-every 100 --out runs/bs_pcd",
                   "rbmviz train --dataset mnist --out runs/mnist_pcd1",
                   "rbmviz train --dataset mnist --limit 10000 --n-hidden 16 --batch-size 100 "
                   "--dtype float32 --epochs 20 --eval-every 5 --out runs/mnist_cd1",
                   "rbmviz train --settings runs/bs_pcd/settings.json --seed 1 --out runs/bs_pcd_seed1"),
         usage="--out DIR [--dataset NAME] [--algorithm NAME] [options]")
def _setup_train(parser):
    """Train an RBM on a data set with one training rule and record how it learns.

    Defaults fit the data set (--preset auto): the model size, batch, learning rate, k,
    epochs, float type and row limit of rbmviz.presets.for_dataset(DATASET) — e.g. mnist:
    784x500 PCD-1, batch 100, float32, 10,000 rows — and --eval-every none (auto: records
    spaced so that evaluation takes at most ~10% of the time), then the settings of
    --settings FILE, then the options given.  --preset none starts from the plain defaults
    listed below.

    A record is made at epoch 0, every --eval-every epochs and at the last epoch: exact
    log-likelihood of the training and test rows (train_ll, test_ll, nats per example) when
    the model has a layer of at most 20 units, pseudo-log-likelihood, reconstruction error
    and weight norm; larger models record a stochastic pseudo-likelihood over a fixed subset
    of sites and rows (spl), the reconstruction error and the weight norm.  Records stream to OUT/records.csv as they are made (a crash or Ctrl-C
    keeps the rows so far); OUT/settings.json holds every setting (reload it with
    --settings) and OUT/model.npz the trained model (rbmviz.RBM.load).  A progress bar shows
    the latest log-likelihood.  --out is checked before any work starts (it must be a
    directory that can be created and written).  With --overwrite the new run writes
    records.new.csv and settings.new.json, and replaces the old files only once it has
    finished: an interrupted, diverged or killed run keeps the old model.  settings.json and
    model.npz are written whole or not at all (through a temporary file renamed into place),
    so a run killed while writing never leaves a half model, and what it leaves behind never
    stops the next run with --overwrite.

    Test set: on the toy sets it is the training set (the complete pattern set); mnist,
    binarized_mnist and omniglot use their test split; digits and cbcl hold out their last
    20% of rows.  File data sets are read from the data directory (see `rbmviz info`).

    Exit status: 0 done, 1 unexpected error, 2 bad option, unwritable --out or missing data
    file, 3 the run diverged (the records so far are kept), 130 interrupted (Ctrl-C; the
    records so far are kept)."""
    out = parser.add_argument_group("output")
    out.add_argument("--out", required=True, metavar="DIR",
                     help="directory for records.csv, model.npz and settings.json; created if "
                          "missing, refused if it exists and is not empty (unless --overwrite)")
    out.add_argument("--overwrite", action="store_true",
                     help="replace records.csv, model.npz and settings.json in an existing --out "
                          "directory once the new run has finished (other files are left alone)")
    out.add_argument("--settings", metavar="FILE", dest="settings_file",
                     help="start from the settings in FILE (a settings.json written by an earlier "
                          "run); options given on the command line override them")
    out.add_argument("--preset", choices=("auto", "none"), default="auto",
                     help="auto: defaults sized to the data set (rbmviz.presets.for_dataset); "
                          "none: the plain defaults listed below (default: auto)")
    out.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    options = {}
    preset_text = _preset_default_text()
    for cls, title in zip(_settings.SETTINGS_CLASSES, ("data", "model", "training")):
        group = parser.add_argument_group(title, inspect.getdoc(cls).split("\n")[0])
        options.update(add_knob_options(group, cls, default_text=preset_text))
    return lambda args, p: _run_train(args, p, options)


def _preset_default_text() -> dict:
    """The help's "default" of every knob a data set's preset sets: what runs at the default
    data set with --preset auto (not the knob's plain declaration, which the preset overrides),
    and the plain default under --preset none."""
    from .. import presets
    dataset = _settings.DataSettings.param.dataset.default
    pre = presets.for_dataset(dataset)
    out = {}
    for knob in PRESET_KNOBS:
        if knob == "algorithm" or knob not in pre:
            continue
        plain = None
        for cls in _settings.SETTINGS_CLASSES:
            if knob in cls.param:
                plain = cls.param[knob].default
        value = pre[knob]
        show = lambda v: "none" if v is None else (f"{v:g}" if isinstance(v, float) else str(v))  # noqa: E731
        shown = show(value)
        plain = show(plain)
        by_rule = {n: algorithms.get(n).Knobs.param[knob].default for n in algorithms.names()
                   if knob in algorithms.get(n).Knobs.param}
        if len({repr(v) for v in by_rule.values()}) > 1:      # e.g. TAP's own gamma = 0.005
            plain = "the rule's own (" + ", ".join(
                f"{show(v)} for {n}" for n, v in by_rule.items()
                if repr(v) != repr(by_rule.get("cd"))) + f", else {show(by_rule.get('cd'))})"
        out[knob] = (f"default: the data set's preset, {shown} for {dataset}; "
                     f"--preset none: {plain}")
    return out


def preset_values(dataset: str, data_values: dict) -> dict:
    """The settings knobs of the data set's preset (:func:`rbmviz.presets.for_dataset`).

    Parameters
    ----------
    dataset : str
        The data set.
    data_values : dict
        Its data knobs (e.g. ``{"D": 4}``).

    Returns
    -------
    dict
        A flat dict for :func:`rbmviz.settings.from_dict`.
    """
    sizes = _presets.for_dataset(dataset).get("data", {})      # the knobs that size the data
    preset = _presets.for_dataset(dataset, **{k: v for k, v in data_values.items() if k in sizes})
    values = {k: preset[k] for k in PRESET_KNOBS if k in preset}
    if values.get("eval_every") == "auto":
        values["eval_every"] = None             # the settings' spelling of "auto"
    values.update(preset.get("data", {}))
    return values


def _read_settings_file(parser, path) -> dict:
    try:        # a FIFO or directory is refused without being opened (a FIFO would block)
        _files.check_regular_file(path, "", what="a settings.json written by rbmviz train")
    except (OSError, ValueError) as exc:
        parser.error(f"argument --settings: {exc}")
    try:
        with open(path, encoding="utf-8") as fh:
            values = json.load(fh)
        _settings.from_dict(values)             # checks names and values
    except (OSError, ValueError, TypeError) as exc:
        parser.error(f"argument --settings: {path}: {exc}")
    return values


def settings_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser,
                       options: dict[str, str]) -> tuple:
    """The three settings objects from the command line.

    The defaults, then the data set's preset (``--preset auto``), ``--settings FILE``, then
    the options given.  A bad value ends the command with argparse's usage error.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments.
    parser : argparse.ArgumentParser
        The subcommand's parser (for its usage errors).
    options : dict
        ``{knob: option string}`` of :func:`~rbmviz.cli._core.add_knob_options`.

    Returns
    -------
    tuple
        ``(DataSettings, ModelSettings, TrainSettings)``.
    """
    given = [n for n in options if hasattr(args, n)]
    file_values = _read_settings_file(parser, args.settings_file) if args.settings_file else {}
    values = {}
    if args.preset == "auto":
        dataset = getattr(args, "dataset", file_values.get(
            "dataset", _settings.DataSettings.param["dataset"].default))
        data_values = {**file_values, **{n: getattr(args, n) for n in given}}
        try:
            values = preset_values(dataset, data_values)
        except (ValueError, TypeError) as exc:
            parser.error(_name_option(str(exc), options))
    values = {k: v for k, v in values.items() if k not in given}   # given options: below
    values.update(file_values)
    try:
        objs = _settings.from_dict(values)
    except ValueError as exc:   # pragma: no cover - presets and files are checked above
        parser.error(str(exc))
    for obj in objs:
        for name in _settings.knobs(obj):
            if name in given:
                _assign(parser, obj, name, getattr(args, name), options[name])
    data, model, train = objs
    # options that the chosen algorithm / data set would silently ignore
    _reject_unused_algorithm_knobs(parser, given, options, [train.algorithm])
    _reject_unused_data_knobs(parser, given, options, data.dataset)
    return objs


def _check_out_dir(parser, out: Path, overwrite: bool):
    problem = _files.writable_dir_problem(out)
    if problem:
        parser.error(f"argument --out: {problem}")
    if out.is_dir() and not overwrite and any(not _files.is_temp_file(p) for p in out.iterdir()):
        parser.error(f"argument --out: {out} exists and is not empty; choose another directory "
                     f"or pass --overwrite to replace its {', '.join(FILES)}")
    for name in (*FILES, *STAGED.values()):      # written later: refused now, not after training
        try:
            _files.check_not_special(out / name, "", what="a regular file it can replace")
        except (OSError, ValueError) as exc:
            parser.error(f"argument --out: {str(exc).strip()}")


def _postfix(rec: dict) -> dict:
    keys = ([m for m in ("train_ll", "test_ll") if m in rec]
            or [m for m in ("pseudo_ll", "spl") if m in rec])
    return {m: f"{rec[m]:.4f}" for m in keys}


class _RecordWriter:
    """Records to a CSV file as they come (flushed after each), the header from the first."""

    def __init__(self, fh):
        self.fh, self.writer, self.count = fh, None, 0

    def write(self, rec: dict) -> None:
        if self.writer is None:
            self.writer = csv.DictWriter(self.fh, fieldnames=list(rec), extrasaction="ignore")
            self.writer.writeheader()
        self.writer.writerow(rec)
        self.fh.flush()
        self.count += 1

    def write_missing(self, records) -> None:
        """Records finished before an interrupt / divergence that were not written yet."""
        for rec in list(records)[self.count:]:
            self.write(rec)


def _run_train(args, parser, options) -> int:
    data, model, train = settings_from_args(args, parser, options)
    out = Path(args.out)
    _check_out_dir(parser, out, args.overwrite)
    try:
        run = _settings.make_run(data, model, train)
    except (DatasetNotFoundError, DatasetCorruptError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError) as exc:
        parser.error(_name_option(str(exc), options))

    out.mkdir(parents=True, exist_ok=True)
    replacing = any((out / name).exists() for name in FILES)
    paths = {name: out / (STAGED[name] if replacing else name) for name in STAGED}
    _files.write_json(paths["settings.json"], _settings.to_dict(data, model, train),
                      overwrite=True)
    csv_path = paths["records.csv"]
    kept = (f"; the previous {', '.join(FILES)} in {out} are kept" if replacing else "")

    bar = tqdm(total=run.epochs, unit="epoch", disable=args.quiet, file=sys.stderr,
               desc=f"{run.algorithm.label or run.algorithm.name} on {data.dataset}",
               dynamic_ncols=True)
    rec = None
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        writer = _RecordWriter(fh)
        try:
            for rec in run:
                writer.write(rec)
                bar.set_postfix(_postfix(rec), refresh=False)
                bar.update(rec["epoch"] - bar.n)
        except RunDiverged as exc:
            writer.write_missing(getattr(exc, "records", None) or run.records)
            bar.close()
            print(f"{parser.prog}: {exc}; {writer.count} record(s) kept in {csv_path}, "
                  f"model not saved{kept}", file=sys.stderr)
            return EXIT_DIVERGED
        except KeyboardInterrupt as exc:
            writer.write_missing(getattr(exc, "records", None) or run.records)
            bar.close()
            print(f"{parser.prog}: interrupted at epoch {run.epoch}; {writer.count} record(s) kept "
                  f"in {csv_path}, model not saved{kept}", file=sys.stderr)
            return EXIT_INTERRUPTED
    bar.close()
    # the model goes to a temporary file first; the finished run's files then replace the old
    # ones in three renames (each file is whole at any moment, old or new)
    with _files.atomic_write(out / "model.npz", overwrite=True) as fh:
        run.rbm._write_npz(fh)
        fh.flush()
        os.fsync(fh.fileno())
        if replacing:
            for name in ("settings.json", "records.csv"):
                os.replace(paths[name], out / name)
    if not args.quiet:
        metrics = ", ".join(f"{k} {v}" for k, v in _postfix(rec or {}).items())
        print(f"trained {run.epoch} epochs ({metrics}); wrote {out / 'records.csv'}, "
              f"{out / 'model.npz'}, {out / 'settings.json'}")
    return EXIT_OK


__all__ = ["FILES", "STAGED", "PRESET_KNOBS", "preset_values", "settings_from_args"]
