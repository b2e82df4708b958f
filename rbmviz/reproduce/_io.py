"""Small helpers every reproduction shares: option lists, JSON-ready numbers, atomic result
files (JSON, CSV, HTML figures: whole or not at all, through :mod:`rbmviz._files`), and the
"never overwrite what the user saved" rule for output directories."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from .. import _files

__all__ = ["parse_list", "finite_or_none", "json_default", "write_json", "write_csv",
           "save_figure", "remove_unwritten", "check_out_dir"]


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
    """Write ``obj`` as indented JSON atomically (a temporary file renamed when complete;
    an existing file is replaced)."""
    _files.write_json(path, obj, default=json_default, overwrite=True)


def write_csv(path, frame):
    """Write the DataFrame ``frame`` (no index) to ``path`` atomically (replacing it)."""
    with _files.atomic_path(path, overwrite=True) as tmp:
        frame.to_csv(tmp, index=False)
    return Path(path)


def save_figure(path, figure, **options):
    """Save the HoloViews ``figure`` as HTML (Bokeh, ``options`` of ``holoviews.save``) to
    ``path`` atomically (replacing it)."""
    import holoviews as hv
    hv.extension("bokeh", logo=False)
    with _files.atomic_path(path, overwrite=True, suffix=".html") as tmp:
        hv.save(figure, tmp, backend="bokeh", **options)
    return Path(path)


def remove_unwritten(out, files, written):
    """Remove the result ``files`` in ``out`` that this save did not write (e.g. an earlier
    figure.html when the figure is skipped now), once every new file is in place."""
    written = {Path(p).name for p in written}
    for name in files:
        if name not in written:
            (Path(out) / name).unlink(missing_ok=True)


def check_out_dir(out, overwrite=False, files=(), *, require_empty=False):
    """Refuse to write into ``out`` where that would replace what is there.

    * a path that exists and is not a directory: ``NotADirectoryError``;
    * a directory that cannot be created (an ancestor is a file: ``NotADirectoryError``) or
      written (``PermissionError``); one of ``files`` that is a FIFO or device: ``ValueError``;
    * ``require_empty``: an existing non-empty directory is a ``FileExistsError`` unless
      ``overwrite`` (which then replaces only ``files``);
    * otherwise: a directory already holding one of ``files`` is a ``FileExistsError`` unless
      ``overwrite``.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out} exists and is not a directory")
    problem = _files.writable_dir_problem(out)
    if problem:      # an ancestor that is a file, or a directory without write permission
        blocked = any(p.exists() and not p.is_dir() for p in Path(os.path.abspath(out)).parents)
        raise (NotADirectoryError if blocked else PermissionError)(problem)
    for name in files:      # a FIFO or device would block or swallow the result
        if (out / name).is_dir():          # e.g. a sweep's run store, ``records.runs``
            continue
        _files.check_not_special(out / name, "", what="a result file it can replace")
    if overwrite or not out.is_dir():
        return
    if require_empty:
        if any(not _files.is_temp_file(p) for p in out.iterdir()):
            raise FileExistsError(f"{out} exists and is not empty; choose another directory or "
                                  f"pass --overwrite to replace its {', '.join(files)}")
        return
    clash = [f for f in files if (out / f).exists()]
    if clash:
        raise FileExistsError(f"{out} already holds {', '.join(clash)}; choose another directory "
                              f"or pass --overwrite to replace them")
