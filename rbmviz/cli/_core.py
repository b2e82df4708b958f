"""The machinery shared by the subcommands: the registry, the parser, one option per settings
knob, output checks and the exit codes."""
from __future__ import annotations

import argparse
import inspect
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

import param

from .. import __version__, _files
from .. import algorithms as _algorithms
from .. import settings as _settings

PROG = "rbmviz"

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_DIVERGED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

Runner = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


@dataclass(frozen=True)
class _Command:
    setup: Callable[[argparse.ArgumentParser], Runner]
    help: str
    examples: tuple[str, ...]
    usage: str | None
    passthrough: Callable[[list[str]], int] | None = None


_COMMANDS: dict[str, _Command] = {}


def command(name: str, *, help: str, examples: tuple[str, ...] | list[str], usage: str | None = None,
            passthrough: Callable[[list[str]], int] | None = None
            ) -> Callable[[Callable[[argparse.ArgumentParser], Runner]],
                          Callable[[argparse.ArgumentParser], Runner]]:
    """Register subcommand ``name``.

    The decorated function ``setup(parser)`` adds the subcommand's arguments to ``parser``
    and returns ``run(args, parser) -> exit code``.  Its docstring is the subcommand's
    ``--help`` description; ``examples`` are shown in the subcommand's and the top-level
    help; ``usage`` (optional) replaces argparse's generated usage line after
    ``rbmviz <name>`` (for commands with many options).  ``passthrough(argv)`` (optional)
    receives the raw arguments after ``rbmviz <name>`` instead (a command with its own parser,
    e.g. ``explore``).

    Parameters
    ----------
    name : str
        The subcommand.
    help : str
        One line for the top-level help.
    examples : sequence of str
        Example command lines.
    usage : str, optional
        Usage line after ``rbmviz <name>``.
    passthrough : callable, optional
        ``passthrough(argv) -> exit code`` for a command with its own parser.

    Returns
    -------
    callable
        The decorator, which registers ``setup`` and returns it unchanged.
    """
    def register(setup: Callable[[argparse.ArgumentParser], Runner]):
        _COMMANDS[name] = _Command(setup, help, tuple(examples), usage, passthrough)
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
    """The ``rbmviz`` argument parser with every registered subcommand.

    Returns
    -------
    argparse.ArgumentParser
        The parser.
    """
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


def add_knob_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type, *,
                     exclude: Iterable[str] = (),
                     default_text: Mapping[str, str] | None = None) -> dict[str, str]:
    """Add one ``--kebab-case`` option per knob of settings class ``cls`` to ``parser``.

    Type, choices, bounds, default and help come from the knob's one declaration.  Options
    default to ``argparse.SUPPRESS`` so that only the options given appear in the namespace.

    Parameters
    ----------
    parser : argparse.ArgumentParser or argument group
        Where the options go.
    cls : type
        A settings class (:mod:`rbmviz.settings`).
    exclude : iterable of str
        Knobs left out.
    default_text : mapping, optional
        ``{knob: text}`` shown instead of "default: <declared default>" where something
        else decides the default (e.g. ``rbmviz train``'s data-set preset).

    Returns
    -------
    dict
        ``{knob: option string}``.
    """
    added = {}
    default_text = default_text or {}
    for name, p in _settings.knobs(cls).items():
        if name in exclude:
            continue
        kind = _algorithms.knobs.knob_kind(p)
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
        extra.append(default_text.get(name) or f"default: {_fmt(p.default)}")
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


def _name_option(message: str, options: dict[str, str]) -> str:
    """``"batch_size=100 is larger ..."`` → ``"argument --batch-size: batch_size=100 is larger
    ..."`` when a message from the library starts with a knob's name."""
    first = message.split(" ", 1)[0].split("=", 1)[0]
    return f"argument {options[first]}: {message}" if first in options else message


def _reject_unused_data_knobs(parser, given, options, dataset):
    """A usage error for a size option the chosen data set would silently ignore."""
    data_knobs = set(_settings.knobs(_settings.DataSettings)) - {"dataset"}
    uses = _settings.dataset_knobs(dataset)
    for name in given:
        if name in data_knobs and name not in uses:
            what = ", ".join(_option(n) for n in uses) or "no size options"
            parser.error(f"argument {options[name]}: not used by data set {dataset!r} "
                         f"(it takes {what})")


def _reject_unused_algorithm_knobs(parser, given, options, algorithms, *, sweep=False):
    """A usage error for an algorithm option none of ``algorithms`` takes."""
    every = {n for a in _algorithms.names() for n in _settings.algorithm_knobs(a)}
    used = {n for a in algorithms for n in _settings.algorithm_knobs(a)}
    for name in given:
        if name in every and name not in used:
            takes = [_option(n) for a in algorithms for n in _settings.algorithm_knobs(a)]
            if sweep:
                parser.error(f"argument {options[name]}: not used by any of the algorithms "
                             f"{', '.join(algorithms)}")
            parser.error(f"argument {options[name]}: not used by algorithm {algorithms[0]!r} "
                         f"(it takes {', '.join(dict.fromkeys(takes))})")


# ---------------------------------------------------------------------------- outputs

_nearest_existing = _files._nearest_existing
_probe_writable = _files._probe_writable


def writable_dir_problem(out: Path) -> str | None:
    """Why the output directory ``out`` could not be created or written, or ``None``.

    Checked before any work starts: ``out`` (or, if it does not exist yet, its nearest
    existing ancestor, where it would be created) must be a directory in which a file can
    be created.  Nothing is left behind by the check (:func:`rbmviz._files.writable_dir_problem`).

    Parameters
    ----------
    out : pathlib.Path
        The output directory.

    Returns
    -------
    str or None
        The problem, or None if the directory can be written.
    """
    return _files.writable_dir_problem(out)


def writable_file_problem(out: Path) -> str | None:
    """Why the output file ``out`` could not be written, or ``None``.

    Its directory, or the nearest existing ancestor where it would be created, must accept
    a new file.

    Parameters
    ----------
    out : pathlib.Path
        The output file.

    Returns
    -------
    str or None
        The problem, or None if the file can be written.
    """
    out = Path(out)
    if out.is_dir():
        return f"{out} is a directory; expected a file name"
    base = _nearest_existing(out.parent)
    if not base.is_dir():
        return f"cannot create {out}: {base} is not a directory"
    why = _probe_writable(base)
    if why:
        return f"cannot write {out} (in {base}): {why}"
    return None
