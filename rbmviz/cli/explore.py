"""``rbmviz explore``: serve the explorer app (:func:`rbmviz.app.serve.main`).

``rbmviz explore [--port N] [--address A] [--show] [classroom caps] [panel serve options]``
hands its arguments unchanged to :func:`rbmviz.app.serve.main`, which has its own parser
(``rbmviz explore --help``).

The one function-level import of the CLI is here, on purpose: :mod:`rbmviz.app` imports
Panel, and no other command may pay for loading Panel (``rbmviz train`` starts in a fraction
of the time).  It is not a way around an import cycle — :mod:`rbmviz.app` sits above the CLI's
other imports and imports nothing of :mod:`rbmviz.cli`.
"""
from __future__ import annotations

from ._core import command


def run_explore(argv: list[str]) -> int:
    """``rbmviz explore ARGV``: import the app (Panel) now, then serve it."""
    from ..app.serve import main as serve_main   # Panel loads only for this command
    return serve_main(list(argv))


@command("explore", help="serve the explorer app in a browser (panel serve)",
         examples=("rbmviz explore --show",
                   "rbmviz explore --address 0.0.0.0 --port 5006 --classroom "
                   "--allow-websocket-origin=lecture.example.org:5006 --num-procs 2"),
         usage="[--port N] [--address A] [--show] [options]", passthrough=run_explore)
def _setup_explore(parser):
    """Serve the rbmviz explorer (the race of training rules, the CD-k bias and the TAP
    landscape tabs) with Panel, at http://A:N/explorer.

    Options: --port N (default 5006), --address A (default 127.0.0.1; 0.0.0.0 for a
    classroom), --show (open a browser), the per-session classroom caps (--classroom,
    --max-hidden N, --max-k N, ...) and any `panel serve` option (--num-procs,
    --allow-websocket-origin, --oauth-provider ...).  See rbmviz explore --help for the full
    list (printed by the server's own parser)."""
    return lambda args, p: run_explore([])
