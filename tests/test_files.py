"""rbmviz._files: atomic writes, the overwrite policy, stale temporary files, checked loading."""
from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rbmviz import _files
from test_bad_inputs import _innermost_file  # the catalogue's check: raised inside rbmviz

PKG = str(Path(_files.__file__).resolve().parent)


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


# ---------------------------------------------------------------------------- bad-file catalogue
#
# Each case builds a bad file (or path) in tmp_path and calls a public loader or writer; the
# call must raise the given type, with a message naming the file or argument, from rbmviz's
# own check (the innermost traceback frame lies inside the rbmviz package).

import io                        # noqa: E402
import pickle                    # noqa: E402
import zipfile                   # noqa: E402

import rbmviz                    # noqa: E402
from rbmviz import sweep as _sweep                        # noqa: E402
from rbmviz.reproduce import _io as _rio                   # noqa: E402
from rbmviz.reproduce._tap_state import RunState           # noqa: E402


def _model(tmp_path, name="good.npz", **kw):
    rbm = rbmviz.RBM(4, 3, seed=1, **kw)
    return rbm.save(tmp_path / name)


def _arrays(tmp_path):
    with np.load(_model(tmp_path, "src.npz")) as z:
        return dict(z)


def _with(tmp_path, name, change):
    arrays = _arrays(tmp_path)
    change(arrays)
    np.savez(tmp_path / name, **arrays)
    return tmp_path / name


def _raw_npz(path, members):
    """An .npz whose members are raw bytes (e.g. a .npy header that lies about its data)."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _lying_header(shape, dtype="<f8", payload=b"\0" * 64):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue() + payload             # the header includes the magic string


def _truncated(tmp_path, name="trunc.npz", keep=0.5):
    data = _model(tmp_path, "whole.npz").read_bytes()
    (tmp_path / name).write_bytes(data[: int(len(data) * keep)])
    return tmp_path / name


def _corrupt_compressed(tmp_path):
    arrays = _arrays(tmp_path)
    arrays["W"] = np.random.default_rng(0).random((200, 3))       # something to deflate
    arrays["b"] = np.zeros(200)
    p = tmp_path / "deflate.npz"
    np.savez_compressed(p, **arrays)
    data = bytearray(p.read_bytes())
    with zipfile.ZipFile(p) as zf:
        info = zf.getinfo("W.npy")
    mid = info.header_offset + 30 + len(info.filename) + info.compress_size // 2
    data[mid:mid + 16] = bytes(16)
    p.write_bytes(bytes(data))
    return p


def _fifo(tmp_path, name="x.npz"):
    os.mkfifo(tmp_path / name)
    return tmp_path / name


def _blocker(tmp_path):
    (tmp_path / "file.txt").write_text("a file, not a directory")
    return tmp_path / "file.txt"


def _dbm_file(tmp_path):
    from rbmviz.dbm import DBM
    return DBM([4, 3, 2]).save(tmp_path / "deep.npz")


def _state(tmp_path, **files):
    st = RunState(tmp_path / "state", {"seed": 0, "hidden": [3]})
    d = tmp_path / "state" / "nh3"
    d.mkdir(exist_ok=True)
    for name, build in files.items():
        build(d / name.replace("__", "."))
    return st


def _restore(st):
    """RunState.restore of N_h = 3; each file below is refused before the run is looked at."""
    return st.restore(3, None)


def _save_state(path, W=np.zeros((4, 3)), drop=()):
    arrays = dict(W=W, b=np.zeros(W.shape[0]), c=np.zeros(W.shape[1]), vW=np.zeros_like(W),
                  vb=np.zeros(W.shape[0]), vc=np.zeros(W.shape[1]), prev_gW=np.zeros_like(W),
                  counters=np.zeros(6, dtype=np.int64),
                  shuffle=np.array('{"bit_generator": "PCG64"}'), epoch=np.array(1),
                  wall_time=np.array(0.5))
    for k in drop:
        del arrays[k]
    np.savez(path, **arrays)


def _no_training(monkeypatch):
    monkeypatch.setattr(rbmviz.runs.Run, "__init__",
                        lambda *a, **k: pytest.fail("trained before refusing the output"))


TINY_SWEEP = dict(dataset="bars_and_stripes", epochs=2, eval_every=1, n_hidden=3)

LOAD = rbmviz.RBM.load

CATALOGUE = [
    # RBM.load: not a readable .npz
    ("load-truncated-half", lambda t: LOAD(_truncated(t)), ValueError, r"trunc\.npz .*not a readable \.npz"),
    ("load-truncated-tail", lambda t: LOAD(_truncated(t, keep=0.95)), ValueError, r"trunc\.npz .*not a readable"),
    ("load-empty-file", lambda t: (t.joinpath("e.npz").write_bytes(b""), LOAD(t / "e.npz")), ValueError, r"e\.npz .*not a readable"),
    ("load-random-bytes", lambda t: (t.joinpath("r.npz").write_bytes(os.urandom(300)), LOAD(t / "r.npz")), ValueError, r"r\.npz .*not a readable"),
    ("load-text-file", lambda t: (t.joinpath("t.npz").write_text("W,b,c\n1,2,3\n"), LOAD(t / "t.npz")), ValueError, r"t\.npz .*not a readable"),
    ("load-plain-npy", lambda t: (np.save(t / "plain.npy", np.zeros(3)), LOAD(t / "plain.npy")), ValueError, r"plain\.npy .*not a readable"),
    ("load-corrupt-deflate", lambda t: LOAD(_corrupt_compressed(t)), ValueError, r"deflate\.npz .*not a readable"),
    ("load-lying-header", lambda t: LOAD(_raw_npz(t / "lie.npz", {"W.npy": _lying_header((100000, 100000))})), ValueError, r"lie\.npz .*'W' declares shape \(100000, 100000\)"),
    ("load-bad-magic", lambda t: LOAD(_raw_npz(t / "magic.npz", {"W.npy": b"\x93NUMPY\x09\x00junk"})), ValueError, r"magic\.npz .*not a readable"),
    ("load-object-array", lambda t: LOAD(_with(t, "obj.npz", lambda a: a.update(W=np.array([{"x": 1}], dtype=object)))), ValueError, r"obj\.npz .*Python objects"),
    # RBM.load: not a regular file
    ("load-fifo", lambda t: LOAD(_fifo(t)), ValueError, r"x\.npz is a FIFO .*not a regular file"),
    ("load-directory", lambda t: (t.joinpath("d.npz").mkdir(), LOAD(t / "d.npz")), ValueError, r"d\.npz is a directory"),
    ("load-missing", lambda t: LOAD(t / "nothere.npz"), FileNotFoundError, r"nothere\.npz"),
    ("load-path-type", lambda t: LOAD(3.5), TypeError, r"^path must be a file path"),
    # RBM.load: the wrong arrays
    ("load-dbm-as-rbm", lambda t: LOAD(_dbm_file(t)), ValueError, r"deep\.npz is not an rbmviz RBM file"),
    ("load-foreign-arrays", lambda t: (np.savez(t / "f.npz", weights=np.zeros((3, 2))), LOAD(t / "f.npz")), ValueError, r"f\.npz is not an rbmviz RBM file"),
    ("load-missing-W", lambda t: LOAD(_with(t, "noW.npz", lambda a: a.pop("W"))), ValueError, r"noW\.npz is missing arrays \['W'\]"),
    ("load-missing-hidden", lambda t: LOAD(_with(t, "noh.npz", lambda a: a.pop("hidden"))), ValueError, r"noh\.npz is missing arrays \['hidden'\]"),
    ("load-W-1d", lambda t: LOAD(_with(t, "w1.npz", lambda a: a.update(W=np.zeros(12)))), ValueError, r"w1\.npz: array 'W' must be 2-D"),
    ("load-W-3d", lambda t: LOAD(_with(t, "w3.npz", lambda a: a.update(W=np.zeros((4, 3, 1))))), ValueError, r"w3\.npz: array 'W' must be 2-D"),
    ("load-W-too-many-units", lambda t: LOAD(_with(t, "big.npz", lambda a: a.update(W=np.zeros((16385, 1)), b=np.zeros(16385), c=np.zeros(1)))), ValueError, r"big\.npz: array 'W' of shape \(16385, 1\) is too large"),
    ("load-b-wrong-shape", lambda t: LOAD(_with(t, "bs.npz", lambda a: a.update(b=np.zeros(5)))), ValueError, r"bs\.npz: inconsistent shapes: array 'b'"),
    ("load-c-wrong-shape", lambda t: LOAD(_with(t, "cs.npz", lambda a: a.update(c=np.zeros((3, 1))))), ValueError, r"cs\.npz: inconsistent shapes: array 'c'"),
    ("load-huge-extra-array", lambda t: LOAD(_raw_npz(t / "extra.npz", {"junk.npy": _lying_header((2**14, 2**14), "|u1", b"\0" * 2**28)})), ValueError, r"extra\.npz: array 'junk' declares shape"),
    ("load-nan-W", lambda t: LOAD(_with(t, "nan.npz", lambda a: a["W"].__setitem__((1, 2), np.nan))), ValueError, r"nan\.npz: array 'W' contains NaN or inf .*\(1, 2\)"),
    ("load-inf-c", lambda t: LOAD(_with(t, "inf.npz", lambda a: a["c"].__setitem__(0, np.inf))), ValueError, r"inf\.npz: array 'c' contains NaN or inf"),
    ("load-int-W", lambda t: LOAD(_with(t, "int.npz", lambda a: a.update(W=np.zeros((4, 3), dtype=np.int64)))), ValueError, r"int\.npz: array 'W' has dtype int64"),
    ("load-string-b", lambda t: LOAD(_with(t, "str.npz", lambda a: a.update(b=np.array(["x"] * 4)))), ValueError, r"str\.npz: array 'b' has dtype <U1"),
    ("load-newer-version", lambda t: LOAD(_with(t, "v9.npz", lambda a: a.update(format_version=np.array(9)))), ValueError, r"v9\.npz was saved with model format version 9, newer"),
    ("load-nan-prior", lambda t: LOAD(_with(t, "prior.npz", lambda a: a.update(hidden_prior_V=np.array([np.nan] * 3)))), ValueError, r"prior\.npz: array 'hidden_prior_V' must hold finite numbers"),
    # RBM.save
    ("save-onto-directory", lambda t: (t.joinpath("d.npz").mkdir(), rbmviz.RBM(2, 2).save(t / "d.npz", overwrite=True)), IsADirectoryError, r"path .*d\.npz is a directory"),
    ("save-onto-fifo", lambda t: rbmviz.RBM(2, 2).save(_fifo(t, "p.npz"), overwrite=True), ValueError, r"path .*p\.npz exists and is a FIFO"),
    ("save-existing", lambda t: rbmviz.RBM(2, 2).save(_model(t, "m.npz")), FileExistsError, r"m\.npz exists; pass overwrite=True"),
    ("save-under-a-file", lambda t: rbmviz.RBM(2, 2).save(_blocker(t) / "sub" / "m.npz"), ValueError, r"path .*m\.npz cannot be written: cannot create .*file\.txt is not a directory"),
    ("save-path-type", lambda t: rbmviz.RBM(2, 2).save(["m.npz"]), TypeError, r"^path must be a file path"),
    # the sweep's output, refused before any run
    ("sweep-out-under-a-file", lambda t: _sweep.sweep(TINY_SWEEP, algorithms="cd", trials=1, workers=0, progress=False, out=_blocker(t) / "s.csv"), ValueError, r"^out=.*s\.csv.*: .*file\.txt exists and is not a directory"),
    ("sweep-out-fifo", lambda t: _sweep.sweep(TINY_SWEEP, algorithms="cd", trials=1, workers=0, progress=False, out=_fifo(t, "s.csv"), overwrite=True), ValueError, r"^out=.*s\.csv.*is a FIFO"),
    ("sweep-out-directory", lambda t: (t.joinpath("s.csv").mkdir(), _sweep.sweep(TINY_SWEEP, algorithms="cd", trials=1, workers=0, progress=False, out=t / "s.csv")), FileExistsError, r"^out=.*s\.csv.* is a directory"),
    # the TAP reproduction's state directory
    ("state-dir-under-a-file", lambda t: RunState(_blocker(t) / "state", {"seed": 0}), ValueError, r"^state_dir=.*state.*: cannot create"),
    ("state-settings-garbage", lambda t: (t.joinpath("state").mkdir(), t.joinpath("state", "settings.json").write_text("{not json"), RunState(t / "state", {"seed": 0})), ValueError, r"state_dir .*state: its settings\.json is not readable"),
    ("state-settings-fifo", lambda t: (t.joinpath("state").mkdir(), os.mkfifo(t / "state" / "settings.json"), RunState(t / "state", {"seed": 0})), ValueError, r"settings\.json is a FIFO"),
    ("state-format-1", lambda t: _restore(_state(t, state__npz=lambda p: _save_state(p))), ValueError, r"state file .*state\.npz was written by an earlier version of rbmviz.*delete the folder .*nh3"),
    ("state-truncated", lambda t: _restore(_state(t, run_state__pkl=lambda p: p.write_bytes(pickle.dumps({"format": 2, "run": {}})[:9]))), ValueError, r"state file .*run_state\.pkl is not a readable training state"),
    ("state-not-a-state", lambda t: _restore(_state(t, run_state__pkl=lambda p: p.write_bytes(pickle.dumps([1, 2])))), ValueError, r"state file .*run_state\.pkl is not a training state of format 2 \(got 'list'\)"),
    ("state-fifo", lambda t: _restore(_state(t, run_state__pkl=lambda p: os.mkfifo(p))), ValueError, r"state file .*run_state\.pkl is a FIFO"),
    ("eval-truncated", lambda t: _state(t, eval_0001__npz=lambda p: p.write_bytes(b"PK\x03\x04trunc")).load_eval(3, 1), ValueError, r"state file .*eval_0001\.npz is not a readable"),
    ("eval-missing-arrays", lambda t: _state(t, eval_0001__npz=lambda p: np.savez(p, row=np.array("{}"))).load_eval(3, 1), ValueError, r"eval_0001\.npz is missing arrays \['scalars', 'free_energy', 'counts'\]"),
    # reproductions' --out
    ("reproduce-out-under-a-file", lambda t: _rio.check_out_dir(_blocker(t) / "out", files=("summary.json",)), NotADirectoryError, r"cannot create .*out.*file\.txt is not a directory"),
    ("reproduce-result-fifo", lambda t: (t.joinpath("out").mkdir(), os.mkfifo(t / "out" / "summary.json"), _rio.check_out_dir(t / "out", True, ("summary.json",))), ValueError, r"summary\.json exists and is a FIFO"),
    # rbmviz._files directly
    ("headers-fifo", lambda t: _files.npz_headers(_fifo(t), "checkpoint"), ValueError, r"^checkpoint .*x\.npz is a FIFO"),
    ("headers-directory", lambda t: _files.npz_headers(t, "checkpoint"), ValueError, r"^checkpoint .* is a directory"),
    ("headers-truncated", lambda t: _files.npz_headers(_truncated(t), "model_file"), ValueError, r"^model_file .*trunc\.npz is not a readable"),
    ("writable-dir-type", lambda t: _files.check_writable_dir(None, "out"), TypeError, r"^out must be a file path"),
]


@pytest.mark.parametrize("build,exc,match", [pytest.param(*c[1:], id=c[0]) for c in CATALOGUE])
def test_bad_file_catalogue(tmp_path, monkeypatch, build, exc, match):
    _no_training(monkeypatch)
    with pytest.raises(exc, match=match) as info:
        build(tmp_path)
    origin = _innermost_file(info)
    assert origin.startswith(PKG), f"raised from {origin}: {type(info.value).__name__}: {info.value}"


def test_catalogue_size():
    assert len(CATALOGUE) >= 30


# ---------------------------------------------------------------------------- command line

from rbmviz import cli           # noqa: E402

CLI_TRAIN = ["train", "--dataset", "bars_and_stripes", "--algorithm", "cd", "--epochs", "2",
             "--eval-every", "1", "--quiet"]


def test_cli_train_refuses_a_fifo_among_its_files_before_training(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    _fifo(out, "model.npz")
    _no_training(monkeypatch)
    assert cli.main([*CLI_TRAIN, "--overwrite", "--out", str(out)]) == 2
    assert re.search(r"argument --out: .*model\.npz exists and is a FIFO", capsys.readouterr().err)


def test_cli_train_out_holding_only_stale_temporary_files_counts_as_empty(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".model.npz.999999.abcdef.tmp").write_bytes(b"half a model of a killed run")
    assert cli.main([*CLI_TRAIN, "--out", str(out)]) == 0
    rbmviz.RBM.load(out / "model.npz")


@pytest.mark.parametrize("experiment", ["cd-bias", "tap", "dc-small"])
def test_cli_reproduce_refuses_an_unwritable_out_before_any_run(tmp_path, capsys, monkeypatch,
                                                                 experiment):
    from rbmviz import reproduce
    module = reproduce.get(experiment)
    monkeypatch.setattr(module, "run", lambda *a, **k: pytest.fail("ran before refusing --out"))
    args = ["reproduce", experiment, "--out", str(_blocker(tmp_path) / "out")]
    assert cli.main(args) == 2
    assert re.search(r"argument --out: .*file\.txt is not a directory", capsys.readouterr().err)


def test_cli_sweep_refuses_a_fifo_out_before_any_run(tmp_path, capsys, monkeypatch):
    _no_training(monkeypatch)
    out = _fifo(tmp_path, "sweep.csv")
    args = ["sweep", "--algorithms", "cd", "--epochs", "1", "--quiet", "--workers", "0",
            "--overwrite", "--out", str(out)]
    assert cli.main(args) == 2
    assert re.search(r"argument --out: .*sweep\.csv.*FIFO", capsys.readouterr().err)


def test_a_fifo_in_a_sweeps_run_store_does_not_block_a_resume(tmp_path):
    out = tmp_path / "sweep.csv"
    store = _sweep.store_path(out)
    store.mkdir()
    os.mkfifo(store / "junk.json")
    os.mkfifo(store / "t0-cd.partial")
    df = _sweep.sweep(TINY_SWEEP, algorithms="cd", trials=1, workers=0, progress=False, out=out,
                      resume=True)
    assert set(df["status"]) == {"ok"}


def test_cli_train_refuses_a_fifo_settings_file_without_opening_it(tmp_path, capsys, monkeypatch):
    _no_training(monkeypatch)
    fifo = _fifo(tmp_path, "settings.json")
    assert cli.main([*CLI_TRAIN, "--settings", str(fifo), "--out", str(tmp_path / "run")]) == 2
    assert re.search(r"argument --settings: .*settings\.json is a FIFO", capsys.readouterr().err)


def test_a_resume_removes_the_kept_state_of_a_run_stored_just_before_a_kill(tmp_path):
    """Killed between storing a run and removing its kept state: the resumed sweep skips
    the run and removes what is left of it."""
    out = tmp_path / "sweep.csv"
    _sweep.sweep(TINY_SWEEP, algorithms="cd", trials=1, workers=0, progress=False, out=out)
    store = _sweep.store_path(out)
    (store / "t0-cd.partial").write_bytes(b"state of the run before it was stored")
    (store / ".t0-cd.partial.999999.abc.tmp").write_bytes(b"torn")
    before = (store / "t0-cd.json").read_bytes()
    _sweep.sweep(TINY_SWEEP, algorithms="cd", trials=1, workers=0, progress=False, out=out,
                 resume=True)
    assert sorted(p.name for p in store.iterdir()) == ["t0-cd.json"]
    assert (store / "t0-cd.json").read_bytes() == before
