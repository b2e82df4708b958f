"""``rbmviz reproduce <experiment>``: the papers' experiments (:mod:`rbmviz.reproduce`)."""
from __future__ import annotations

import argparse
import inspect

from .. import reproduce as _reproduce
from ._core import EXIT_USAGE, command


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
    sub = parser.add_subparsers(dest="experiment", metavar="<experiment>", title="experiments")
    for name, exp in _reproduce.EXPERIMENTS.items():
        module = _reproduce.get(name)
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
