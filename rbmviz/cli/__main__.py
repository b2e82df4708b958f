"""``python -m rbmviz.cli``: the same as the ``rbmviz`` command."""
from . import main

if __name__ == "__main__":
    raise SystemExit(main())
