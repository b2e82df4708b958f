"""``rbmviz reproduce <experiment>``: the papers' experiments (:mod:`rbmviz.reproduce`).

Only the chosen experiment's module is imported: the experiments are listed from the
registry (:data:`rbmviz.reproduce.EXPERIMENTS`), and an experiment's options are added to its
parser when the command line names it (or its help is printed).  A study that declares its settings as a class
(``Settings``, a :class:`rbmviz.reproduce._study.StudySettings`) gets one option per
setting from it (:func:`add_settings_options`); its module adds the options that are not
settings (output, execution) with ``add_arguments``, and its ``main`` receives the resolved
settings as ``args.study_settings`` (:func:`settings_from_args`) — unless the module's
``uses_settings(args)`` says the options given are not its settings' (``rbmviz reproduce tap
--study``: the study reads them).  The parsed namespace says
which options were written on the command line (``args._given_options``,
:func:`given_options`); an experiment that sets the default ``_check_args`` (a function of
``args, parser``) has it called before its ``main``, to refuse an option that does not apply.
"""
from __future__ import annotations

import argparse
import inspect
from typing import Sequence

from .. import reproduce as _reproduce
from ..reproduce import _study
from ._core import EXIT_USAGE, command

__all__ = ["add_settings_options", "settings_from_args", "given_options"]


def add_settings_options(parser: argparse.ArgumentParser, settings_class: type, *,
                         title: str | None = None) -> dict[str, str]:
    """One option per setting of ``settings_class`` (and ``--quick`` when it has a preset), in
    an argument group ``title``.

    Every option defaults to None (not given): :func:`settings_from_args` fills the declared
    default, or the ``--quick`` preset's value.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The experiment's parser.
    settings_class : type
        A :class:`rbmviz.reproduce._study.StudySettings` subclass.
    title : str, optional
        Title of the group of options (default: the class's ``TITLE``).

    Returns
    -------
    dict
        ``{setting: option string}``.
    """
    cls = settings_class
    group = parser.add_argument_group(title or cls.TITLE)
    added = {}
    fmt = _study.format_value
    for name, p in _study.settings(cls).items():
        if p.precedence is not None and p.precedence < 0:
            continue
        option = _study.option(cls, name)
        kw = dict(_study.argument_kwargs(cls, name), dest=name)
        default = f"default: {cls.DEFAULTS_SHOWN.get(name, fmt(p.default))}"
        if name in cls.QUICK and name not in cls.DEFAULTS_SHOWN:
            default += f"; --quick: {fmt(cls.QUICK[name])}"
        kw["help"] = f"{(p.doc or '').strip()} ({default})".replace("%", "%%")
        group.add_argument(option, **kw)
        added[name] = option
    if cls.QUICK:
        group.add_argument("--quick", action="store_true",
                           help=(cls.QUICK_HELP or "the quick preset")
                           + "; explicit options override it")
    return added


def settings_from_args(settings_class: type, args: argparse.Namespace,
                       parser: argparse.ArgumentParser) -> _study.StudySettings:
    """The settings of the options given in ``args`` (the declared defaults, the ``--quick``
    preset, then the options given; a list option's text is split at commas, ``none`` is an
    empty list).

    Parameters
    ----------
    settings_class : type
        The experiment's settings class.
    args : argparse.Namespace
        The parsed options (of :func:`add_settings_options`).
    parser : argparse.ArgumentParser
        The experiment's parser: a bad value is its usage error (exit code 2), naming the
        option.

    Returns
    -------
    StudySettings
        The settings.
    """
    cls = settings_class
    params = _study.settings(cls)
    given = {}
    for name, p in params.items():
        value = getattr(args, name, None)
        if value is None:
            continue
        option = _study.option(cls, name)
        kind = _study.list_kind(p)
        try:
            given[name] = _study.parse_text(value, kind, option) if kind else value
            _study.resolve(cls, {name: given[name]})
        except (TypeError, ValueError) as exc:
            parser.error(str(exc) if str(exc).startswith(option) else f"argument {option}: {exc}")
    return _study.resolve(cls, given, quick=bool(getattr(args, "quick", False)))


def given_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> dict[str, str]:
    """The options written on the command line ``argv`` (not those left at their default):
    ``{dest: option string}``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser (its options are matched whole: experiment parsers do not abbreviate).
    argv : sequence of str
        The arguments.

    Returns
    -------
    dict
        ``{dest: option string as written}``.
    """
    given = {}
    actions = parser._option_string_actions
    for arg in argv:
        if arg == "--":
            break
        if not arg.startswith("-") or arg == "-":
            continue
        flag = arg.split("=", 1)[0]
        action = actions.get(flag)
        if action is not None and action.dest != argparse.SUPPRESS:
            given[action.dest] = flag
    return given


class _ExperimentParser(argparse.ArgumentParser):
    """The parser of one experiment: its options are added (its module imported) the first
    time it parses a command line or prints its help.  The parsed namespace says which
    options were written (``_given_options``, :func:`given_options`), so that an experiment
    can refuse an option that does not apply instead of ignoring it."""

    experiment: str | None = None

    def _fill_once(self) -> None:
        if self.experiment is not None and not getattr(self, "_filled", False):
            self._filled = True
            _fill(self.experiment, self)

    def parse_known_args(self, args=None, namespace=None):
        self._fill_once()
        import sys
        argv = list(sys.argv[1:] if args is None else args)
        ns, rest = super().parse_known_args(argv, namespace)
        ns._given_options = given_options(self, argv)
        return ns, rest

    def format_help(self) -> str:
        self._fill_once()
        return super().format_help()

    def format_usage(self) -> str:
        self._fill_once()
        return super().format_usage()


def _fill(name: str, p: argparse.ArgumentParser) -> None:
    module = _reproduce.get(name)
    p.description = inspect.cleandoc(module.__doc__ or _reproduce.EXPERIMENTS[name].help)
    cls = getattr(module, "Settings", None)
    if cls is not None:
        add_settings_options(p, cls)
    module.add_arguments(p)
    p.set_defaults(_experiment_main=module.main, _experiment_parser=p,
                   _experiment_settings=cls,
                   _experiment_uses_settings=getattr(module, "uses_settings", None))


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
    sub = parser.add_subparsers(dest="experiment", metavar="<experiment>", title="experiments",
                                parser_class=_ExperimentParser)
    for name, exp in _reproduce.EXPERIMENTS.items():
        sub.add_parser(name, help=exp.help, description=exp.help,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       allow_abbrev=False).experiment = name
    return _run_reproduce


def _run_reproduce(args, parser) -> int:
    run = getattr(args, "_experiment_main", None)
    if run is None:
        parser.print_help()
        return EXIT_USAGE
    check = getattr(args, "_check_args", None)
    if check is not None:               # an experiment's own check of the options given
        check(args, args._experiment_parser)
    cls = getattr(args, "_experiment_settings", None)
    uses = getattr(args, "_experiment_uses_settings", None)
    if cls is not None and (uses is None or uses(args)):
        args.study_settings = settings_from_args(cls, args, args._experiment_parser)
    return run(args, args._experiment_parser)
