"""``rbmviz explore``: serve the explorer from an installed rbmviz (no source checkout needed).

    rbmviz explore [--port N] [--address A] [--show] [extra panel serve options]

It runs ``panel serve`` on the script :mod:`rbmviz.app.explorer` inside the package, in this
process (Ctrl-C stops it), with the page at ``http://A:N/explorer``, and ``--setup``
:mod:`rbmviz.app.warm_start`, which starts compiling the explorer's kernels in the background
when the server starts (:mod:`rbmviz.live.warmup`), so that a page opened a minute later never
waits for Numba.  Options it does not know
are handed to ``panel serve`` unchanged — e.g. ``--num-procs 2``,
``--allow-websocket-origin=lecture.example.org``, ``--oauth-provider ...`` (see
``panel serve --help``).  For ``--address`` other than ``0.0.0.0``/``::`` the websocket origin
``A:N`` (and ``localhost:N``) is allowed unless an ``--allow-websocket-origin`` is given; on all
interfaces the origins the students' browsers use must be given explicitly.  The classroom
caps (``--classroom``, ``--max-hidden N`` ..., :mod:`rbmviz.app.limits`) are set as
environment variables before the server starts.
"""
from __future__ import annotations

import argparse
import os
import sys
from importlib import resources

from . import limits

__all__ = ["main", "panel_argv", "script_path", "warm_start_path"]

DEFAULT_PORT = 5006
DEFAULT_ADDRESS = "127.0.0.1"
_ALL_INTERFACES = ("0.0.0.0", "::", "")


def script_path() -> str:
    """Path of the served script inside the installed package.

    Returns
    -------
    str
        The file :mod:`rbmviz.app.explorer` (``panel serve`` runs it once per page).
    """
    return str(resources.files("rbmviz.app").joinpath("explorer.py"))


def warm_start_path() -> str:
    """Path of the script that starts the kernel warm-up when the server starts.

    Returns
    -------
    str
        The file :mod:`rbmviz.app.warm_start` (``panel serve --setup`` runs it once).
    """
    return str(resources.files("rbmviz.app").joinpath("warm_start.py"))


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="rbmviz explore", description="Serve the rbmviz explorer (panel serve).",
        epilog="Any other option is passed to `panel serve` unchanged (see `panel serve --help`).")
    ap.add_argument("--port", type=int, default=DEFAULT_PORT,
                    help=f"port to listen on (default {DEFAULT_PORT}; 0 = any free port)")
    ap.add_argument("--address", default=DEFAULT_ADDRESS,
                    help=f"address to listen on (default {DEFAULT_ADDRESS}, this machine only; "
                         "0.0.0.0 for a classroom, with --allow-websocket-origin)")
    ap.add_argument("--show", action="store_true", help="open the page in a browser")
    limits.add_arguments(ap)          # --classroom, --max-hidden ... (rbmviz.app.limits)
    return ap


def _parse(argv):
    return _parser().parse_known_args(list(argv))


def environ_for(argv: list[str]) -> dict[str, str]:
    """The environment variables of the classroom caps (:mod:`rbmviz.app.limits`) that the
    ``rbmviz explore`` arguments ``argv`` set; inherited by ``--num-procs`` workers."""
    args, _ = _parse(argv)
    return limits.environ_from_arguments(args)


def panel_argv(argv: list[str]) -> list[str]:
    """The ``panel serve`` command line (without the leading ``panel``) for
    ``rbmviz explore`` arguments ``argv`` (the classroom caps are read by
    :func:`environ_for`, not passed to ``panel serve``).

    Parameters
    ----------
    argv : list of str
        ``rbmviz explore`` arguments: ``[--port N] [--address A] [--show]``, the classroom
        caps, and ``panel serve`` options passed on unchanged.

    Returns
    -------
    list of str
        ``["serve", <script>, "--port", ..., "--setup", <warm-up script>, ...]``, with the
        websocket origins of a local address allowed unless given.

    Raises
    ------
    ValueError
        For a port outside [0, 65535].
    SystemExit
        From argparse, for malformed known options (``--port x``).
    """
    args, extra = _parse(argv)
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in [0, 65535], got {args.port}")
    # --setup runs warm_start.py once when the server starts: the kernels compile in the
    # background before a page opens (rbmviz.live.warmup)
    out = ["serve", script_path(), "--port", str(args.port), "--address", args.address,
           "--setup", warm_start_path()]
    if args.show:
        out.append("--show")
    has_origin = any(a == "--allow-websocket-origin" or a.startswith("--allow-websocket-origin=")
                     for a in extra)
    if not has_origin and args.address not in _ALL_INTERFACES and args.port != 0:
        out += [f"--allow-websocket-origin={args.address}:{args.port}",
                f"--allow-websocket-origin=localhost:{args.port}"]
    return out + extra


def main(argv: list[str] | None = None) -> int:
    """Serve the explorer until interrupted; returns the exit status (0 on Ctrl-C).

    Parameters
    ----------
    argv : list of str, optional
        ``[--port N] [--address A] [--show] [panel serve options]``; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0 after Ctrl-C, 2 for bad arguments, else ``panel serve``'s.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cmd = panel_argv(argv)
        env = environ_for(argv)
    except ValueError as exc:
        print(f"rbmviz explore: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:            # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    from panel.command import main as panel_main
    os.environ.update(env)
    saved = sys.argv
    sys.argv = ["panel", *cmd]           # panel's entry point reads sys.argv
    try:
        panel_main()
    except KeyboardInterrupt:
        return 0
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, str):
            print(code, file=sys.stderr)
            return 1
        return int(code or 0)
    finally:
        sys.argv = saved
    return 0


if __name__ == "__main__":      # python -m rbmviz.app.serve
    sys.exit(main())
