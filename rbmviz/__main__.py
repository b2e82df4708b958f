"""``python -m rbmviz``: the same as the ``rbmviz`` command (see :mod:`rbmviz.cli`)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
