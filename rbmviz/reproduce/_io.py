"""Small helpers every reproduction shares: option lists, JSON-ready numbers, atomic JSON,
and the "never overwrite what the user saved" rule for output directories."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

__all__ = ["parse_list", "finite_or_none", "json_default", "write_json", "check_out_dir"]


def parse_list(text, kind, name, *, allow_empty=False):
    """``"0.3,0.5"`` → ``[0.3, 0.5]`` (``kind`` converts each item); lists and tuples pass
    through (converted).  ``"none"`` or an empty text gives ``[]`` when ``allow_empty``, else a
    ``ValueError``; a bad item is a ``ValueError`` naming the option ``name``."""
    if isinstance(text, (list, tuple)):
        items = list(text)
    else:
        text = str(text).strip()
        items = [] if text.lower() == "none" else [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        if allow_empty:
            return []
        raise ValueError(f"{name} is empty; expected a comma-separated list of "
                         f"{kind.__name__} values")
    try:
        return [kind(x) for x in items]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a comma-separated list of {kind.__name__} values, "
                         f"got {text!r}") from None


def finite_or_none(x):
    """``float(x)``, or ``None`` for ``None``/NaN (JSON has no NaN)."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def json_default(o):
    """``json.dump`` hook for numpy scalars and arrays."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_json(path, obj):
    """Write ``obj`` as indented JSON atomically (temporary file + rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, default=json_default)
        fh.write("\n")
    os.replace(tmp, path)


def check_out_dir(out, overwrite=False, files=(), *, require_empty=False):
    """Refuse to write into ``out`` where that would replace what is there.

    * a path that exists and is not a directory: ``NotADirectoryError``;
    * ``require_empty``: an existing non-empty directory is a ``FileExistsError`` unless
      ``overwrite`` (which then replaces only ``files``);
    * otherwise: a directory already holding one of ``files`` is a ``FileExistsError`` unless
      ``overwrite``.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out} exists and is not a directory")
    if overwrite or not out.is_dir():
        return
    if require_empty:
        if any(out.iterdir()):
            raise FileExistsError(f"{out} exists and is not empty; choose another directory or "
                                  f"pass --overwrite to replace its {', '.join(files)}")
        return
    clash = [f for f in files if (out / f).exists()]
    if clash:
        raise FileExistsError(f"{out} already holds {', '.join(clash)}; choose another directory "
                              f"or pass --overwrite to replace them")
