"""The reproductions' shared I/O rules: option lists, JSON, never overwriting."""
import json
import math

import numpy as np
import pytest

from rbmviz.reproduce import _io


def test_parse_list():
    assert _io.parse_list("0.3, 0.5", float, "eta") == [0.3, 0.5]
    assert _io.parse_list((1, "2"), int, "k") == [1, 2]
    assert _io.parse_list("none", int, "k", allow_empty=True) == []
    with pytest.raises(ValueError, match="eta is empty"):
        _io.parse_list("", float, "eta")
    with pytest.raises(ValueError, match="k must be a comma-separated list of int"):
        _io.parse_list("1,x", int, "k")


def test_write_json_is_atomic_and_numpy_aware(tmp_path):
    path = tmp_path / "s.json"
    _io.write_json(path, {"a": np.float64(1.5), "b": np.arange(3), "c": _io.finite_or_none(math.nan)})
    assert json.loads(path.read_text()) == {"a": 1.5, "b": [0, 1, 2], "c": None}
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(TypeError, match="not JSON serialisable"):
        _io.write_json(tmp_path / "t.json", {"x": object()})


def test_check_out_dir_never_overwrites(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    _io.check_out_dir(tmp_path, files=("summary.json",))               # no clash
    with pytest.raises(FileExistsError, match="not empty"):
        _io.check_out_dir(tmp_path, files=("summary.json",), require_empty=True)
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(FileExistsError, match="already holds summary.json"):
        _io.check_out_dir(tmp_path, files=("summary.json",))
    _io.check_out_dir(tmp_path, True, files=("summary.json",), require_empty=True)
    with pytest.raises(NotADirectoryError):
        _io.check_out_dir(tmp_path / "notes.txt")
