"""The command line shared by the two DC-programming studies, ``rbmviz reproduce dc-small``
(:mod:`rbmviz.reproduce.dc_small`) and ``dc-mnist`` (:mod:`rbmviz.reproduce.dc_mnist`): their
execution and output options (:func:`add_run_arguments`) and the body of their ``main``
(:func:`execute`: validate, check ``--out``, run, print, save).
"""
from __future__ import annotations

import sys

from . import _dc


def add_run_arguments(parser):
    """The options of dc-small and dc-mnist that are not settings: execution and output."""
    r = parser.add_argument_group("execution")
    r.add_argument("--workers", type=int, metavar="INT",
                   help="local processes (default: one per core; 0 = serial in this process)")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on the Dask scheduler at ADDRESS (tcp://host:8786) instead")
    o = parser.add_argument_group("output")
    o.add_argument("--out", metavar="DIR",
                   help="write records.csv (streamed while the runs progress), summary.json and "
                        "figure.html here; refused if DIR already holds them (unless --overwrite)")
    o.add_argument("--overwrite", action="store_true", help="replace those files in DIR")
    o.add_argument("--resume", action="store_true",
                   help="continue an interrupted run into the same DIR: the runs stored in "
                        "DIR/records.runs/ (one file per finished run) are skipped, a run cut "
                        "off mid-way continues from its kept state (<run_id>.partial, written at "
                        "a record at most once a minute)")
    o.add_argument("--checkpoints", metavar="E,E,...",
                   help="save each run's model at these epochs in DIR/records.runs/<run>/")
    o.add_argument("--no-html", action="store_true", help="do not write figure.html")
    o.add_argument("--quiet", action="store_true", help="no progress bar")


def execute(module, args, parser, kw, check):
    """Shared body of the two commands' ``main``: validate, check ``--out``, run, print,
    save.  Returns the exit code."""
    try:
        check(**kw)
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
    if args.workers is not None and args.scheduler is not None:
        parser.error("--workers and --scheduler exclude each other")
    if (args.resume or args.checkpoints) and not args.out:
        parser.error(f"argument {'--resume' if args.resume else '--checkpoints'}: needs --out")
    if args.resume and args.overwrite:
        parser.error("argument --resume: not with --overwrite (which starts afresh)")
    checkpoints = None
    if args.checkpoints:
        try:
            checkpoints = _dc.parse_list(args.checkpoints, int, "checkpoints")
        except ValueError as exc:
            parser.error(f"argument --checkpoints: {exc}")
    if args.out:
        try:
            _dc.check_out_dir(args.out, args.overwrite or args.resume)
        except (OSError, ValueError) as exc:     # exists, not a directory, unwritable
            parser.error(f"argument --out: {exc}" + ("" if args.resume else
                                                     " (or --resume to continue it)"))
    try:
        records, summary = module.run(**kw, workers=args.workers, scheduler=args.scheduler,
                                      out=args.out, overwrite=args.overwrite,
                                      progress=not args.quiet, resume=args.resume,
                                      checkpoints=checkpoints)
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError) as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    print(module.format_summary(summary))
    continued = records.attrs.get("continued") or {}
    if continued:
        print(f"{len(continued)} run(s) continued from their kept state: "
              + ", ".join(f"{rid} from epoch {e:g}" for rid, e in continued.items()))
    if args.out:
        paths = module.save(records, summary, args.out, overwrite=args.overwrite or args.resume,
                            html=not args.no_html)
        print("wrote " + ", ".join(str(p) for p in paths))
    if records.attrs.get("interrupted"):
        return 130
    return 3 if (records["status"] != "ok").any() else 0
