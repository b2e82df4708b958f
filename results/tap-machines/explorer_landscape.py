"""What the explorer's TAP tab shows right after loading a shipped checkpoint under *Start
from*: its first landscape snapshot (Alg. 1 from the tab's ``landscape_rows`` data
initialisations, with the tab's default settings), written to a JSON file the README cites.

    python results/tap-machines/explorer_landscape.py \
        --out results/tap-machines/explorer-landscape.json

One snapshot per checkpoint of ``--checkpoints`` (about 10 s each on one core).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT = "tap-mnist-100-fixed10-epoch100"


def snapshot(checkpoint: str) -> dict:
    """The counts of the tab's first landscape snapshot from ``checkpoint``."""
    from rbmviz.live.tap import TapRace, TapSettings
    race = TapRace(TapSettings(start_from=checkpoint))
    snap = race._take_snapshot()  # the engine's own snapshot, so the count is the tab's
    return {"checkpoint": checkpoint, "landscape_rows": race.settings.landscape_rows,
            "n_init": int(snap["n_init"]), "n_converged": int(snap["n_converged"]),
            "n_unique": int(snap["n_unique"])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoints", default=DEFAULT,
                    help=f"comma-separated checkpoint names (default {DEFAULT})")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent
                                          / "explorer-landscape.json"))
    args = ap.parse_args(argv)
    rows = [snapshot(c) for c in args.checkpoints.split(",") if c]
    Path(args.out).write_text(json.dumps({"snapshots": rows}, indent=1) + "\n", encoding="utf-8")
    for r in rows:
        print(f"{r['checkpoint']}: {r['n_unique']} unique solutions from {r['n_init']} rows "
              f"({r['n_converged']} converged)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
