"""Crash-safe files: the one way rbmviz writes a file, checks a target and reads an ``.npz``.

Writing (:func:`atomic_write`, :func:`atomic_path` and the shortcuts :func:`write_bytes`,
:func:`write_text`, :func:`write_json`, :func:`savez`) goes to a temporary file in the target's
directory, named ``.<name>.<pid>.<random>.tmp`` (unique per process and call), which is
flushed, ``fsync``-ed and then renamed over the target with :func:`os.replace`.  A reader
therefore sees either the previous complete file or the new complete one, never a half file;
an exception removes the temporary file.  A process killed while writing (``SIGKILL`` skips
every clean-up) leaves its temporary file behind: it never blocks a later write (no other
process uses its name) and the next write of the same target removes it
(:func:`remove_stale_temps`) once it is sure nobody writes it any more.

The overwrite policy is the caller's: ``overwrite=False`` refuses an existing target with a
``FileExistsError`` that names the path and how to allow it (``hint``: a Python keyword for
the library, a command-line flag such as ``--overwrite`` for the CLI).  A target that exists
but is not a regular file (a directory, a FIFO, a device) is refused in either case.

Reading (:func:`check_regular_file`, :func:`npz_headers`, :func:`load_npz`) refuses a path
that is not a regular file before opening it (opening a FIFO would block), reads the arrays'
declared shapes and dtypes from the ``.npy`` headers inside the archive before any array, and
turns what numpy and zipfile raise for a truncated, corrupt or foreign file into a
``ValueError`` naming the file and what was expected.

:func:`check_writable_dir` refuses, before any work starts, an output directory that cannot be
created or written.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
import tempfile
import time
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any, Callable, Iterator

import numpy as np

__all__ = ["atomic_write", "atomic_path", "write_bytes", "write_text", "write_json", "savez",
           "check_overwrite", "check_not_special", "check_regular_file", "check_writable_dir",
           "writable_dir_problem", "remove_stale_temps", "is_temp_file", "npz_headers",
           "load_npz", "OVERWRITE_HINT"]

#: the default advice of a refused existing target (the library's keyword)
OVERWRITE_HINT = "pass overwrite=True to replace it"

#: when this process (the module's import) started: a temporary file older than this whose
#: writer is no longer running is stale
_PROCESS_START = time.time()


def _read_umask() -> int:
    """The process's umask (``os.umask`` can only be read by setting it; done once, at import)."""
    if os.name != "posix":
        return 0o022
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: permissions of a new file, as ``open`` would create it (``mkstemp`` creates 0600)
_FILE_MODE = 0o666 & ~_read_umask()


# ---------------------------------------------------------------------------- checks

def _as_path(path, name: str) -> Path:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a file path (str or os.PathLike), got {type(path).__name__}")
    path = Path(path)
    if str(path) in ("", "."):
        raise ValueError(f"{name} is empty; expected a file path")
    return path


def _named(name: str, path) -> str:
    """``"<name> <path>"`` for the messages (just the path when ``name`` is empty)."""
    return f"{name} {path}" if name else str(path)


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return what
    return "not a regular file"


def check_not_special(path: str | os.PathLike, name: str = "path", *,
                      what: str = "a file name") -> Path:
    """Refuse a write target that exists but is not a regular file.

    Parameters
    ----------
    path : str or os.PathLike
        The file to be written.
    name : str
        The argument's name in the message.
    what : str
        What is expected, for the message (e.g. ``"a file name for the model"``).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    IsADirectoryError
        If ``path`` is a directory.
    ValueError
        If ``path`` is a FIFO, socket or device.
    TypeError
        If ``path`` is not a path.
    """
    path = _as_path(path, name)
    try:
        mode = os.stat(path).st_mode
    except OSError:            # missing (or unreachable: the write itself says why)
        return path
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{_named(name, path)} is a directory; expected {what}")
    if not stat.S_ISREG(mode):
        raise ValueError(f"{_named(name, path)} exists and is {_kind(mode)}, not a regular file; "
                         f"expected {what}")
    return path


def check_overwrite(path: str | os.PathLike, overwrite: bool, *, hint: str = OVERWRITE_HINT,
                    name: str = "path", what: str = "a file name") -> Path:
    """Refuse an existing ``path`` unless ``overwrite`` (and anything not a regular file).

    Parameters
    ----------
    path : str or os.PathLike
        The file to be written.
    overwrite : bool
        Whether an existing regular file may be replaced.
    hint : str
        How to allow the replacement, appended to the message (``"pass --overwrite to
        replace it"`` for the command line).
    name : str
        The argument's name in the message.
    what : str
        What is expected, for the message of a directory or special file.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    IsADirectoryError, ValueError
        See :func:`check_not_special`.
    """
    path = check_not_special(path, name, what=what)
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(f"{path} exists; {hint}")
    return path


def check_regular_file(path: str | os.PathLike, name: str = "path", *,
                       what: str = "a file") -> Path:
    """Refuse, without opening it, a ``path`` that is missing or not a regular file.

    ``os.stat`` does not open the file, so a FIFO is refused instead of blocking the reader.

    Parameters
    ----------
    path : str or os.PathLike
        The file to be read.
    name : str
        The argument's name in the message.
    what : str
        What the file should be (e.g. ``"a model written by RBM.save (.npz)"``).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If it is a directory, FIFO, socket or device, or cannot be examined.
    TypeError
        If ``path`` is not a path.
    """
    path = _as_path(path, name)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{_named(name, path)} does not exist; expected {what}") from None
    except OSError as exc:
        raise ValueError(f"{_named(name, path)} cannot be examined ({exc.strerror or exc}); "
                         f"expected {what}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{_named(name, path)} is {_kind(mode)}, not a regular file; expected {what}")
    return path


def _nearest_existing(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not os.path.lexists(path) and path.parent != path:
        path = path.parent
    return path


def _probe_writable(directory: Path) -> str | None:
    """``None`` if a file can be created in the existing ``directory``, else why not."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def writable_dir_problem(path: str | os.PathLike) -> str | None:
    """Why the directory ``path`` could not be created or written, or ``None``.

    ``path`` (or, if it does not exist yet, its nearest existing ancestor, where it would be
    created) must be a directory in which a file can be created.  Nothing is left behind.

    Parameters
    ----------
    path : str or os.PathLike
        The directory.

    Returns
    -------
    str or None
        The problem, or None if the directory can be written.
    """
    path = Path(path)
    if os.path.lexists(path) and not path.is_dir():
        return f"{path} exists and is not a directory"
    base = _nearest_existing(path)
    if not base.is_dir():
        return f"cannot create {path}: {base} is not a directory"
    why = _probe_writable(base)
    if why:
        where = "" if base == Path(os.path.abspath(path)) else f" (in {base})"
        return f"cannot write to {path}{where}: {why}"
    return None


def check_writable_dir(path: str | os.PathLike, name: str = "out") -> Path:
    """Refuse, before any work, an output directory that cannot be created or written.

    Parameters
    ----------
    path : str or os.PathLike
        The output directory (created later by the writer if missing).
    name : str
        The argument's name in the message.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        Naming ``name`` and ``path``: ``path`` is not a directory, cannot be created (an
        ancestor is a file) or does not accept a new file (permissions, read-only file system).
    TypeError
        If ``path`` is not a path.
    """
    path = _as_path(path, name)
    problem = writable_dir_problem(path)
    if problem:
        raise ValueError(f"{name}={str(path)!r}: {problem}")
    return path


# ---------------------------------------------------------------------------- temporary files

def _temp_pattern(target: str) -> re.Pattern:
    return re.compile(r"\." + re.escape(target) + r"\.(\d+)(?:\.[A-Za-z0-9_]+)?\.tmp(?:\.\w+)?")


def is_temp_file(path: str | os.PathLike, target: str | None = None) -> bool:
    """Whether ``path`` is named as a temporary file of :func:`atomic_write`.

    Parameters
    ----------
    path : str or os.PathLike
        A file name.
    target : str, optional
        The target's file name; by default any target.

    Returns
    -------
    bool
        True for ``.<target>.<pid>[.<random>].tmp[.<suffix>]``.
    """
    name = Path(path).name
    if target is not None:
        return _temp_pattern(target).fullmatch(name) is not None
    return re.fullmatch(r"\..+\.\d+(?:\.[A-Za-z0-9_]+)?\.tmp(?:\.\w+)?", name) is not None


def _pid_running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (True when it cannot be told)."""
    if pid == os.getpid():
        return True
    if os.name != "posix" or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:            # EPERM: it runs, as another user
        return True
    return True


def remove_stale_temps(path: str | os.PathLike, *, finished: bool = False) -> list[Path]:
    """Remove the temporary files of ``path`` that a killed writer left behind.

    A temporary file ``.<name>.<pid>.<random>.tmp`` beside ``path`` is removed only if no
    process ``pid`` runs on this machine and it was last modified before this process started:
    its writer is gone, so nothing will rename it.  Anything else is left alone (it never
    blocks a write anyway: every writer uses a new name).

    Parameters
    ----------
    path : str or os.PathLike
        The target file.
    finished : bool
        The caller knows that nobody writes ``path`` any more (e.g. a sweep's run that is
        stored): every temporary file of ``path`` is removed except this process's own.

    Returns
    -------
    list of pathlib.Path
        The files removed.
    """
    path = Path(path)
    pattern = _temp_pattern(path.name)
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            pid = int(m.group(1))
            gone = (pid != os.getpid() if finished
                    else st.st_mtime < _PROCESS_START and not _pid_running(pid))
            if stat.S_ISREG(st.st_mode) and gone:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX; a no-op where directories cannot be opened)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _new_temp(path: Path, suffix: str = "") -> tuple[int, Path]:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp" + suffix,
                               dir=path.parent)
    try:
        os.chmod(tmp, _FILE_MODE)
    except OSError:
        pass
    return fd, Path(tmp)


def _prepare(path, overwrite, hint, name, what, mkdir) -> Path:
    path = check_overwrite(path, overwrite, hint=hint, name=name, what=what)
    if mkdir and not path.parent.is_dir():
        problem = writable_dir_problem(path.parent)
        if problem:
            raise ValueError(f"{_named(name, path)} cannot be written: {problem}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"{_named(name, path)} cannot be written: cannot create "
                             f"{path.parent}: {exc.strerror or exc}") from None
    remove_stale_temps(path)
    return path


def _commit(tmp: Path, path: Path, overwrite: bool, hint: str) -> None:
    if not overwrite and os.path.lexists(path):      # created while we wrote
        raise FileExistsError(f"{path} exists; {hint}")
    os.replace(tmp, path)
    _fsync_dir(path.parent)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", *, overwrite: bool = False,
                 hint: str = OVERWRITE_HINT, name: str = "path", what: str = "a file name",
                 encoding: str | None = None, newline: str | None = None,
                 mkdir: bool = True) -> Iterator[IO]:
    """Open a temporary file to write ``path`` through; on success it replaces ``path``.

    The temporary file ``.<name>.<pid>.<random>.tmp`` lies in ``path``'s directory; when the
    ``with`` block ends normally it is flushed, ``fsync``-ed and renamed to ``path``
    (:func:`os.replace`, atomic); when the block raises (any exception, ``KeyboardInterrupt``
    included) it is removed and ``path`` is untouched.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    mode : str
        ``"wb"`` (binary) or ``"w"`` (text).
    overwrite : bool
        Replace an existing ``path``; otherwise it is refused (checked before the block runs
        and again before the rename).
    hint : str
        How to allow the replacement, for the ``FileExistsError`` (e.g. ``"pass --overwrite
        to replace it"`` on the command line).
    name, what : str
        The argument's name and what is expected, for the messages.
    encoding, newline : str, optional
        As for :func:`open` (text mode; the encoding defaults to UTF-8).
    mkdir : bool
        Create ``path``'s directory if missing.

    Yields
    ------
    file object
        The open temporary file.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    IsADirectoryError, ValueError
        If ``path`` exists and is not a regular file.
    ValueError
        If ``path``'s directory is missing and cannot be created (an ancestor is a file).
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = _prepare(path, overwrite, hint, name, what, mkdir)
    fd, tmp = _new_temp(path)
    try:
        if mode == "w":
            fh = os.fdopen(fd, "w", encoding=encoding or "utf-8", newline=newline)
        else:
            fh = os.fdopen(fd, "wb")
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _commit(tmp, path, overwrite, hint)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, overwrite: bool = False,
                hint: str = OVERWRITE_HINT, name: str = "path", what: str = "a file name",
                mkdir: bool = True, suffix: str = "") -> Iterator[Path]:
    """Like :func:`atomic_write`, for writers that take a file name (e.g. ``DataFrame.to_csv``).

    Yields the temporary file's path (the file exists, empty); write it completely inside the
    ``with`` block.  It is then ``fsync``-ed and renamed to ``path``, or removed on an exception.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    overwrite, hint, name, what, mkdir
        As for :func:`atomic_write`.
    suffix : str
        Appended to the temporary file's name (``.tmp.html``), for writers that add an
        extension to a name without it.

    Yields
    ------
    pathlib.Path
        The temporary file to write.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    IsADirectoryError, ValueError
        If ``path`` exists and is not a regular file.
    """
    if suffix and not re.fullmatch(r"\.\w+", suffix):
        raise ValueError(f"suffix must be '.' and letters or digits, got {suffix!r}")
    path = _prepare(path, overwrite, hint, name, what, mkdir)
    fd, tmp = _new_temp(path, suffix)
    os.close(fd)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        _commit(tmp, path, overwrite, hint)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_bytes(path: str | os.PathLike, data: bytes, **kwargs) -> Path:
    """Write ``data`` to ``path`` atomically (keywords of :func:`atomic_write`).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    data : bytes
        Its content.
    **kwargs
        ``overwrite``, ``hint``, ``name``, ``what``, ``mkdir``.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    return _write(path, "wb", data, kwargs)


def _write(path, mode, content, kwargs) -> Path:
    with atomic_write(path, mode, **kwargs) as fh:
        fh.write(content)
    return Path(path)


def write_text(path: str | os.PathLike, text: str, **kwargs) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically, as :func:`write_bytes` writes bytes
    (its keywords, and ``newline``); returns ``path``."""
    return _write(path, "w", text, kwargs)


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2,
               default: Callable | None = None, sort_keys: bool = False,
               trailing_newline: bool = True, **kwargs) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (:func:`write_text`; its keywords).

    ``indent``, ``default`` and ``sort_keys`` are :func:`json.dumps`'s; ``trailing_newline``
    ends the file with a newline.  Returns ``path``.
    """
    text = json.dumps(obj, indent=indent, default=default, sort_keys=sort_keys)
    return write_text(path, text + ("\n" if trailing_newline else ""), **kwargs)


def savez(path: str | os.PathLike, arrays: dict, *, compressed: bool = False, **kwargs) -> Path:
    """Write ``arrays`` (``{name: array}``) as an ``.npz`` archive to ``path`` atomically (no
    ``.npz`` appended; :func:`numpy.savez_compressed` with ``compressed``; the keywords of
    :func:`write_bytes`).  Returns ``path``."""
    with atomic_write(path, "wb", **kwargs) as fh:
        (np.savez_compressed if compressed else np.savez)(fh, **arrays)
    return Path(path)


# ---------------------------------------------------------------------------- reading .npz

#: what numpy and zipfile raise for a truncated, corrupt or foreign archive
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, KeyError,
                TypeError, NotImplementedError, OverflowError, RuntimeError)


def npz_headers(path: str | os.PathLike, name: str = "path", *,
                what: str = "an .npz archive") -> dict[str, tuple[tuple, np.dtype]]:
    """The declared shape and dtype of every array in the ``.npz`` file ``path``, read from
    the ``.npy`` headers without reading any array.

    Each declared size is checked against the size the archive stores for that member, so
    that a header declaring more data than the file holds is refused here rather than by an
    allocation.

    Parameters
    ----------
    path : str or os.PathLike
        The archive (checked to be a regular file first).
    name : str
        The argument's name in the messages.
    what : str
        What the file should be, for the messages.

    Returns
    -------
    dict
        ``{array name: (shape, dtype)}``.

    Raises
    ------
    FileNotFoundError
        For a missing file.
    ValueError
        Naming the file: not a regular file, not a zip archive (or truncated), an unreadable
        ``.npy`` header or one declaring more data than stored.
    """
    path = check_regular_file(path, name, what=what)
    out = {}
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                key = info.filename[:-4]
                with zf.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
                    elif version in ((2, 0), (3, 0)):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
                    else:
                        raise ValueError(f"unsupported .npy format version {version}")
                    offset = fh.tell()
                if dtype.hasobject:
                    raise ValueError(f"array {key!r} holds Python objects (dtype {dtype}), "
                                     f"which rbmviz does not load")
                nbytes = math.prod(shape) * dtype.itemsize
                if nbytes > info.file_size - offset:
                    raise ValueError(f"array {key!r} declares shape {shape} of {dtype} "
                                     f"({nbytes:,} bytes) but the archive stores "
                                     f"{max(info.file_size - offset, 0):,} bytes for it")
                out[key] = (tuple(shape), dtype)
    except _READ_ERRORS as exc:
        raise ValueError(f"{_named(name, path)} is not a readable .npz archive (corrupt, truncated or "
                         f"another format?); expected {what}: {type(exc).__name__}: {exc}") from None
    return out


def load_npz(path: str | os.PathLike, name: str = "path", *, what: str = "an .npz archive",
             check: Callable[[dict], None] | None = None) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``path`` (``allow_pickle=False``), after checks.

    The file must be a regular file (:func:`check_regular_file`); its headers are read and
    passed to ``check`` (:func:`npz_headers`) before any array is read, so that a file
    declaring the wrong or too large shapes is refused without allocating them.

    Parameters
    ----------
    path : str or os.PathLike
        The archive.
    name : str
        The argument's name in the messages.
    what : str
        What the file should be, for the messages.
    check : callable, optional
        ``check(headers)`` with ``{array name: (shape, dtype)}``; raises ``ValueError`` for
        headers the caller cannot use.

    Returns
    -------
    dict
        ``{array name: numpy.ndarray}``.

    Raises
    ------
    FileNotFoundError
        For a missing file.
    ValueError
        Naming the file, for anything unreadable (see :func:`npz_headers`) and whatever
        ``check`` refuses.
    """
    headers = npz_headers(path, name, what=what)
    if check is not None:
        check(headers)
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            if not isinstance(z, np.lib.npyio.NpzFile):      # pragma: no cover - zip checked
                raise ValueError("not an .npz archive")
            return {key: z[key] for key in z.files}
    except _READ_ERRORS as exc:
        raise ValueError(f"{_named(name, path)} is not a readable .npz archive (corrupt or "
                         f"truncated?); expected {what}: {type(exc).__name__}: {exc}") from None
