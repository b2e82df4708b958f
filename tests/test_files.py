"""rbmviz._files: atomic writes, the overwrite policy, stale temporary files, checked loading."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pytest

from rbmviz import _files

PKG = str(Path(_files.__file__).resolve().parent)


def _innermost_file(excinfo) -> str:
    frames = traceback.extract_tb(excinfo.tb)
    return frames[-1].filename if frames else ""


def _listing(d):
    return sorted(p.name for p in Path(d).iterdir())


# ---------------------------------------------------------------------------- writing

def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "a.bin"
    _files.write_bytes(target, b"one")
    assert target.read_bytes() == b"one" and _listing(tmp_path) == ["a.bin"]
    _files.write_bytes(target, b"two", overwrite=True)
    assert target.read_bytes() == b"two" and _listing(tmp_path) == ["a.bin"]


def test_atomic_write_keeps_the_old_file_and_removes_the_temp_on_error(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    for exc in (RuntimeError, KeyboardInterrupt):
        with pytest.raises(exc):
            with _files.atomic_write(target, "w", overwrite=True) as fh:
                fh.write("half")
                raise exc
        assert target.read_text() == "old" and _listing(tmp_path) == ["a.txt"]


def test_temp_names_are_unique_per_process_and_call(tmp_path):
    target = tmp_path / "m.npz"
    with _files.atomic_path(target, overwrite=True) as t1, _files.atomic_path(tmp_path / "other") as t2:
        with _files.atomic_write(target, overwrite=True) as fh:
            t3, = [p for p in tmp_path.iterdir() if p not in (t1, t2)]
            fh.write(b"x")
        assert t1.parent == target.parent and t1.name.startswith(f".m.npz.{os.getpid()}.")
        assert t1.suffix == ".tmp" and t3 != t1 and t1 != t2
        assert _files.is_temp_file(t1, "m.npz") and _files.is_temp_file(t3)
        t1.write_bytes(b"y")
        t2.write_bytes(b"z")
    assert target.read_bytes() == b"y"           # the last rename wins; no temp left
    assert _listing(tmp_path) == ["m.npz", "other"]


def test_new_files_get_the_usual_permissions(tmp_path):
    path = _files.write_text(tmp_path / "f.txt", "x")
    assert stat.S_IMODE(path.stat().st_mode) == _files._FILE_MODE


def test_overwrite_policy_names_the_path_and_the_callers_hint(tmp_path):
    target = tmp_path / "m.npz"
    _files.write_bytes(target, b"old")
    with pytest.raises(FileExistsError, match=r"m\.npz exists; pass overwrite=True"):
        _files.write_bytes(target, b"new")
    with pytest.raises(FileExistsError, match=r"m\.npz exists; pass --overwrite to replace it"):
        _files.write_bytes(target, b"new", hint="pass --overwrite to replace it")
    assert target.read_bytes() == b"old" and _listing(tmp_path) == ["m.npz"]


def test_a_target_that_is_not_a_regular_file_is_refused_even_with_overwrite(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError, match=r"path .*d is a directory"):
        _files.write_bytes(tmp_path / "d", b"x", overwrite=True)
    os.mkfifo(tmp_path / "p.npz")
    with pytest.raises(ValueError, match=r"p\.npz exists and is a FIFO"):
        _files.savez(tmp_path / "p.npz", {"a": np.zeros(2)}, overwrite=True, name="file")


def test_stale_temps_of_a_dead_process_never_block_and_are_removed(tmp_path):
    target = tmp_path / "m.npz"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".m.npz.{pid}.abc123.tmp"
    stale.write_bytes(b"half a model")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    mine = tmp_path / f".m.npz.{os.getpid()}.zzz.tmp"         # a live writer's (this process)
    mine.write_bytes(b"in progress")
    os.utime(mine, (old, old))
    recent = tmp_path / f".m.npz.{pid}.new.tmp"                # newer than this process
    recent.write_bytes(b"?")
    _files.savez(target, {"a": np.arange(3)})
    assert not stale.exists() and mine.exists() and recent.exists()
    assert np.array_equal(_files.load_npz(target)["a"], np.arange(3))


def test_check_writable_dir_names_the_argument(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    assert _files.check_writable_dir(tmp_path / "new" / "dir", "out") == tmp_path / "new" / "dir"
    assert not (tmp_path / "new").exists()                      # nothing created by the check
    with pytest.raises(ValueError, match=r"^out=.*file\.txt.*exists and is not a directory"):
        _files.check_writable_dir(blocker, "out")
    with pytest.raises(ValueError, match=r"^out=.*cannot create .*file\.txt is not a directory"):
        _files.check_writable_dir(blocker / "run", "out")
    with pytest.raises(TypeError, match="^out must be a file path"):
        _files.check_writable_dir(3, "out")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs permissions")
def test_check_writable_dir_refuses_a_read_only_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ValueError, match=r"^state_dir=.*ro.*Permission denied"):
            _files.check_writable_dir(ro / "sub", "state_dir")
    finally:
        ro.chmod(0o700)


# ---------------------------------------------------------------------------- reading

def test_npz_headers_read_shapes_without_arrays(tmp_path):
    p = _files.savez(tmp_path / "a.npz", {"W": np.zeros((3, 2), np.float32), "n": np.array(4)})
    assert _files.npz_headers(p) == {"W": ((3, 2), np.dtype(np.float32)), "n": ((), np.dtype(int))}


def test_load_npz_check_runs_before_any_array_is_read(tmp_path, monkeypatch):
    p = _files.savez(tmp_path / "a.npz", {"W": np.zeros((3, 2))})
    seen = []
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("arrays read"))

    def check(headers):
        seen.append(headers)
        raise ValueError(f"{p}: W has shape {headers['W'][0]}")
    with pytest.raises(ValueError, match=r"a\.npz: W has shape \(3, 2\)"):
        _files.load_npz(p, check=check)
    assert seen


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "x.npz")
    with pytest.raises(ValueError, match=r"path .*x\.npz is a FIFO .*not a regular file") as info:
        _files.load_npz(tmp_path / "x.npz")
    assert _innermost_file(info).startswith(PKG)
