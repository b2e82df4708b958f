"""The ``rbmviz`` command (also ``python -m rbmviz``), one module per subcommand.

Subcommands are registered with :func:`command` (:mod:`._core`): one decorated function adds
a subcommand's arguments to its parser and returns the function that runs it.  The options
of ``rbmviz train`` are generated from the settings classes of :mod:`rbmviz.settings`, which
derive the algorithm knobs from each rule's one declaration (``cls.Knobs``), so the command
line, the notebooks, the estimator and the explorer share one definition of every knob.

Modules: :mod:`.train`, :mod:`.info`, :mod:`.reproduce`, :mod:`.sweep`, :mod:`.bench`,
:mod:`.explore` (Panel is imported only when ``rbmviz explore`` runs).

Exit codes: 0 success, 1 unexpected error (one line, no traceback unless ``RBMVIZ_DEBUG=1``),
2 bad usage, unwritable output or missing/corrupt data file, 3 the run diverged,
130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import os
import sys
import traceback

# importing a subcommand module registers it; the order is the order of the help
from . import train  # noqa: F401,I001
from . import info, reproduce, sweep, bench, explore  # noqa: F401,E402,I001
from ._core import (_COMMANDS, EXIT_DIVERGED, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE,
                    PROG, add_knob_options, build_parser, command, writable_dir_problem,
                    writable_file_problem)
from .bench import BENCHMARKS

__all__ = ["main", "build_parser", "command", "add_knob_options", "PROG", "EXIT_OK", "EXIT_ERROR",
           "EXIT_USAGE", "EXIT_DIVERGED", "EXIT_INTERRUPTED", "BENCHMARKS", "writable_dir_problem",
           "writable_file_problem"]


def _passthrough(argv):
    """``(runner, rest)`` when ``argv`` names a command with its own parser, else ``None``."""
    if argv and argv[0] in _COMMANDS and _COMMANDS[argv[0]].passthrough is not None:
        return _COMMANDS[argv[0]].passthrough, argv[1:]
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the ``rbmviz`` command with ``argv``.

    Ctrl-C anywhere ends with exit code 130 and one line; an unexpected error with exit code 1
    and one line naming it (the traceback only with the environment variable
    ``RBMVIZ_DEBUG=1``).

    Parameters
    ----------
    argv : list of str, optional
        The arguments; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit code (argparse's usage errors and ``--help`` included, they do not raise).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        direct = _passthrough(argv)
        if direct is not None:
            runner, rest = direct
            return runner(rest)
        parser = build_parser()
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
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # no raw traceback for the user
        if os.environ.get("RBMVIZ_DEBUG"):
            traceback.print_exc()
        print(f"{PROG}: error: {type(exc).__name__}: {exc} (set RBMVIZ_DEBUG=1 for the "
              f"traceback)", file=sys.stderr)
        return EXIT_ERROR
