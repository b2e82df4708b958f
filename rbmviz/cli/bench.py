"""``rbmviz bench``: the benchmarks of a source checkout (``bench/``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ._core import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, command

#: the benchmarks of bench/run_all.py, by name → script
BENCHMARKS = {"small": "bench_small.py", "large": "bench_large.py"}


def _bench_dir() -> Path:
    """``bench/`` of the source checkout this package was imported from (it is not installed
    with the package)."""
    return Path(__file__).resolve().parents[2] / "bench"


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
