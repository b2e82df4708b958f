"""Shared helpers of the benchmarks: environment, machine facts, data, interleaved timing.

Import this module before numpy/numba/rbmviz (the bench scripts do): it sets
``OMP_WAIT_POLICY=PASSIVE``, ``GOMP_SPINCOUNT=3000`` and ``OPENBLAS_THREAD_TIMEOUT=16`` (as
``rbmviz/__init__`` does; the first two only work before the first parallel Numba call, the
last before numpy loads OpenBLAS) and ``RBMVIZ_DATA`` (default ``../shared/data`` next to the project)
with ``setdefault``, so the caller's environment wins.
"""
from __future__ import annotations

import gzip
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("GOMP_SPINCOUNT", "3000")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "16")
os.environ.setdefault("RBMVIZ_DATA", str(ROOT.parent / "shared" / "data"))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

RESULTS = ROOT / "bench" / "results"


#: fraction of ones of threshold-binarised MNIST training images (pixel ≥ 128): the density
#: of the synthetic stand-in used when the MNIST files are missing
MNIST_DENSITY = 0.132


def synthetic_mnist_like(limit: int, seed: int = 0) -> np.ndarray:
    """``limit`` rows of 784 0/1 pixels with MNIST's density (:data:`MNIST_DENSITY`), float64:
    each row lights a random blob of pixels around a random centre of a 28×28 grid, so the
    ones cluster as in digits (the products' cost depends on the density, not the content)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:28, 0:28]
    cy, cx = rng.uniform(9, 19, size=(2, limit, 1, 1))
    sy, sx = rng.uniform(3.0, 7.0, size=(2, limit, 1, 1))
    d = ((yy - cy) / sy) ** 2 + ((xx - cx) / sx) ** 2
    score = d + rng.exponential(0.6, size=d.shape)
    k = int(round(MNIST_DENSITY * 784))
    thr = np.partition(score.reshape(limit, 784), k - 1, axis=1)[:, k - 1:k]
    return (score.reshape(limit, 784) <= thr).astype(np.float64)


def load_mnist_binary(limit: int) -> tuple[np.ndarray, str]:
    """First ``limit`` MNIST training images, threshold-binarised (pixel ≥ 128 → 1), float64.

    Uses ``rbmviz.datasets.mnist`` when it is available and works, else reads the IDX file
    directly (same definition), else — no MNIST files at all — :func:`synthetic_mnist_like`
    rows of the same density, and says so.  Returns ``(X, source)``; ``source`` names which
    (it starts with ``"SYNTHETIC"`` for the stand-in)."""
    try:
        import rbmviz
        X = rbmviz.datasets.mnist(split="train", binarize="threshold", limit=limit)
        return np.ascontiguousarray(X, dtype=np.float64), "rbmviz.datasets.mnist"
    except Exception as exc:  # noqa: BLE001 - fall back to the raw file, say why
        why = f"{type(exc).__name__}: {exc}"
    p = Path(os.environ["RBMVIZ_DATA"]) / "mnist" / "train-images-idx3-ubyte.gz"
    try:
        raw = np.frombuffer(gzip.open(p).read(), np.uint8, offset=16).reshape(-1, 784)[:limit]
        return (raw >= 128).astype(np.float64), f"IDX file directly ({why})"
    except (OSError, ValueError, EOFError) as exc:
        return (synthetic_mnist_like(limit),
                f"SYNTHETIC 0/1 rows of MNIST's density {MNIST_DENSITY:.3f} (no MNIST files: "
                f"{type(exc).__name__}: {exc})")


def machine_info() -> dict:
    """Versions, cores, load, thread settings and BLAS libraries of this process."""
    import numba
    import threadpoolctl

    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "cpu_count": os.cpu_count(),
        "loadavg_1min": round(os.getloadavg()[0], 2),
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
        "GOMP_SPINCOUNT": os.environ.get("GOMP_SPINCOUNT"),
        "OPENBLAS_THREAD_TIMEOUT": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "numba_num_threads": numba.get_num_threads(),
        "numba_threading_layer": _numba_layer(),
        "blas": [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "architecture",
                                        "threading_layer")} | {"lib": Path(d["filepath"]).name}
                 for d in threadpoolctl.threadpool_info()],
    }
    try:
        import sklearn
        info["sklearn"] = sklearn.__version__
    except ImportError:
        pass
    try:
        import rbmviz
        info["rbmviz"] = rbmviz.__version__
    except ImportError:
        pass
    return info


def _numba_layer():
    import numba
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        return f"(not started; config {numba.config.THREADING_LAYER})"


class OtherLoad:
    """CPU time used by *other* processes while a benchmark runs, in cores (Linux
    ``/proc``; ``None`` elsewhere): (busy jiffies of the whole machine − this process's
    jiffies) ÷ elapsed jiffies.  A steady competitor (another benchmark hogging one core)
    slows every round alike, so the spread of rounds does not reveal it; this does.

    Use ``mon = OtherLoad()`` … ``mon.cores()``."""

    def __init__(self):
        self._t0 = self._snap()

    @staticmethod
    def _snap():
        try:
            with open("/proc/stat") as fh:
                v = [int(x) for x in fh.readline().split()[1:]]
            busy = sum(v) - v[3] - (v[4] if len(v) > 4 else 0)      # minus idle, iowait
            with open("/proc/self/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            own = int(f[11]) + int(f[12])                            # utime + stime
            return time.monotonic(), busy, own
        except (OSError, ValueError, IndexError):
            return None

    def cores(self):
        t1 = self._snap()
        if t1 is None or self._t0 is None:
            return None
        hz = os.sysconf("SC_CLK_TCK")
        dt = t1[0] - self._t0[0]
        other = (t1[1] - self._t0[1]) - (t1[2] - self._t0[2])
        return max(0.0, other / hz / dt) if dt > 0 else None


def interleaved(contenders: dict, rounds: int, reps: int, warmup: int = 2) -> dict:
    """Time every contender side by side.

    ``contenders`` maps a name to a zero-argument callable doing one unit of work (one
    update), or to ``(callable, reps)`` to override ``reps`` for it.  Each is warmed up
    ``warmup`` times, then ``rounds`` rounds are run; in each round every contender runs its
    ``reps`` units back to back (the order rotates from round to round) and its mean time
    per unit is recorded.  Returns, per name, the median and the min/max over rounds
    (seconds per unit) — machine noise hits all contenders alike."""
    names = list(contenders)
    spec = {n: (c if isinstance(c, tuple) else (c, reps)) for n, c in contenders.items()}
    for name in names:
        for _ in range(warmup):
            spec[name][0]()
    per = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            f, n = spec[name]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            per[name].append((time.perf_counter() - t0) / n)
    return {name: {"median": statistics.median(v), "min": min(v), "max": max(v), "rounds": v}
            for name, v in per.items()}


def interleaved_checked(contenders: dict, rounds: int, reps: int, warmup: int = 2,
                        busy_cores: float = 0.25) -> dict:
    """:func:`interleaved` with a noise reading per round: the CPU that other processes used
    during that round (:class:`OtherLoad`, in cores; 1-minute load average where ``/proc``
    is missing).  A round in which they used more than ``busy_cores`` is *noisy*: its times
    are kept in ``rounds`` but left out of ``median``/``min``/``max``, which come from the
    quiet rounds only (``None`` when no round was quiet).  Also returns, under the key
    ``"_noise"``, ``{"round_other_cores": [...], "quiet_rounds": [...]}``."""
    names = list(contenders)
    spec = {n: (c if isinstance(c, tuple) else (c, reps)) for n, c in contenders.items()}
    for name in names:
        for _ in range(warmup):
            spec[name][0]()
    per = {name: [] for name in names}
    other = []
    for r in range(rounds):
        k = r % len(names)
        mon = OtherLoad()
        load0 = os.getloadavg()[0]
        for name in names[k:] + names[:k]:
            f, n = spec[name]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            per[name].append((time.perf_counter() - t0) / n)
        oc = mon.cores()
        other.append(oc if oc is not None else max(0.0, min(load0, os.getloadavg()[0]) - 1.0))
    quiet = [o <= busy_cores for o in other]
    out = {}
    for name, v in per.items():
        q = [x for x, ok in zip(v, quiet) if ok]
        out[name] = {"median": statistics.median(q) if q else None, "min": min(q) if q else None,
                     "max": max(q) if q else None, "rounds": v}
    out["_noise"] = {"round_other_cores": other, "quiet_rounds": quiet}
    return out


def fmt_ms(s: float) -> str:
    return f"{s * 1e3:8.3f}"


def table(rows, headers, left: int = 1) -> str:
    """A plain fixed-width text table; the first ``left`` columns are left-aligned."""
    cols = [[str(h)] + [str(r[i]) for r in rows] for i, h in enumerate(headers)]
    widths = [max(len(x) for x in col) for col in cols]
    line = lambda vals: "  ".join(v.rjust(w) if i >= left else v.ljust(w)  # noqa: E731
                                  for i, (v, w) in enumerate(zip(vals, widths)))
    out = [line([str(h) for h in headers]), line(["-" * w for w in widths])]
    out += [line([str(x) for x in r]) for r in rows]
    return "\n".join(out)
