"""The explorer ships in the wheel: build a wheel from a copy of the sources, install it into a
fresh virtual environment outside the checkout, and serve ``rbmviz explore`` from there.

The virtual environment sees the stack of the interpreter running the tests (a ``.pth`` file
naming its site-packages: the system Python's, or a virtual environment's) and installs
the wheel with ``--no-deps --no-index`` (no network).  The checkout may itself be installed in
editable mode; the test asserts that the venv's Python imports rbmviz (and finds the help
pages and shipped checkpoints) from the venv's site-packages, not from the checkout.  The
server listens on 127.0.0.1 only and is killed after the page answered (bounded waits).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import site
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what a wheel is built from (everything else in the checkout must not be needed)
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "rbmviz")
SERVE_TIMEOUT = 150.0

PROBE = """
import json, sys
import rbmviz, rbmviz.app, rbmviz.app.serve, rbmviz.checkpoints as ck
from importlib import resources
help_pages = sorted(p.name for p in resources.files("rbmviz.app").joinpath("help").iterdir())
print(json.dumps({"rbmviz": rbmviz.__file__, "script": rbmviz.app.serve.script_path(),
                  "checkpoints": ck.names(), "help": help_pages}))
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(cmd, **kw):
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300, **kw)
    assert out.returncode == 0, f"{cmd} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """(venv directory, its python, the wheel) — built and installed once for the module."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", ".ruff_cache",
                                    "*.egg-info", "*.npz.tmp*")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        elif path.exists():
            shutil.copy2(path, src / name)
    dist = tmp / "dist"
    # --no-isolation: build with the installed setuptools (no network)
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist),
          str(src)], cwd=tmp)
    (wheel,) = dist.glob("rbmviz-*.whl")
    env_dir = tmp / "venv"
    # a venv that sees *this* interpreter's packages (the stack the suite runs with), whether
    # it is the system Python or itself a venv: `--system-site-packages` would see the base
    # installation's instead (inside a venv: no numba).  Plain path lines of a .pth file, so
    # an editable install of the checkout (a .pth import hook there) is not activated.
    _run([sys.executable, "-m", "venv", str(env_dir)], cwd=tmp)
    python = env_dir / "bin" / "python"
    venv_site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp).stdout.strip()
    outer = [p for p in dict.fromkeys(site.getsitepackages() + [sysconfig.get_paths()["purelib"],
                                                                 sysconfig.get_paths()["platlib"]])
             if Path(p).is_dir()]
    (Path(venv_site) / "_rbmviz_test_stack.pth").write_text("\n".join(outer) + "\n")
    _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--no-cache-dir",
          "--disable-pip-version-check", "--quiet", str(wheel)], cwd=tmp)
    return env_dir, python, wheel


def _clean_env(env_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(env_dir)
    env.update(NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return env


def test_wheel_holds_the_app_and_its_data(venv):
    import zipfile
    _, _, wheel = venv
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "rbmviz/app/explorer.py" in names and "rbmviz/app/serve.py" in names
    assert "rbmviz/app/limits.py" in names
    for page in (ROOT / "rbmviz" / "app" / "help").glob("*.md"):
        assert f"rbmviz/app/help/{page.name}" in names
    for ck in (ROOT / "rbmviz" / "checkpoints").glob("*.npz"):
        assert f"rbmviz/checkpoints/{ck.name}" in names
        assert f"rbmviz/checkpoints/{ck.stem}.json" in names
    assert not [n for n in names if "__pycache__" in n or ".ruff_cache" in n or n.endswith(".nbi")]


def test_rbmviz_imports_from_the_venv_not_the_checkout(venv):
    env_dir, python, _ = venv
    out = _run([str(python), "-c", PROBE], cwd=env_dir.parent, env=_clean_env(env_dir))
    found = json.loads(out.stdout.strip().splitlines()[-1])
    site = Path(found["rbmviz"]).resolve()
    assert env_dir.resolve() in site.parents, f"rbmviz came from {site}, not the venv"
    assert ROOT.resolve() not in site.parents
    assert env_dir.resolve() in Path(found["script"]).resolve().parents
    shipped = sorted(p.stem for p in (ROOT / "rbmviz" / "checkpoints").glob("*.npz")
                     if p.with_suffix(".json").exists())
    assert sorted(found["checkpoints"]) == shipped
    assert sorted(found["help"]) == sorted(p.name for p in (ROOT / "rbmviz" / "app" / "help").glob("*.md"))
    assert found["help"], "no help pages in the wheel"


def test_rbmviz_explore_serves_the_page_from_the_wheel(venv):
    env_dir, _, _ = venv
    exe = env_dir / "bin" / "rbmviz"
    assert exe.exists(), "the wheel installs no rbmviz command"
    port = _free_port()
    log_path = env_dir.parent / "explore.log"
    with open(log_path, "w") as log:
        # NUMBA_DISABLE_JIT: the fresh venv has no kernel cache, and compiling the kernels the
        # page's engines touch takes minutes on a busy 2-core machine; what is tested here is
        # that the installed wheel serves the app (the kernels are tested everywhere else).
        # --liveness is handed to `panel serve` unchanged (an extra option).
        proc = subprocess.Popen([str(exe), "explore", "--port", str(port), "--address", "127.0.0.1",
                                 "--liveness"],
                                cwd=env_dir.parent, env=dict(_clean_env(env_dir), NUMBA_DISABLE_JIT="1"),
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVE_TIMEOUT
        page = status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=5):
                    break
            except OSError:
                time.sleep(0.5)
        if proc.poll() is None:
            # one request: every GET builds a whole session (the three tabs and their engines)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/explorer",
                                        timeout=max(10.0, deadline - time.monotonic())) as r:
                page = r.read().decode("utf-8", "replace")
                status = r.status
        log_text = log_path.read_text(errors="replace")
        assert page is not None, f"rbmviz explore did not answer within {SERVE_TIMEOUT:.0f} s:\n{log_text[-3000:]}"
        assert status == 200
        assert "rbmviz explorer" in page and "Bokeh" in page
        assert "Traceback" not in log_text, log_text[-3000:]
        # it listens on the loopback address only
        assert f"Bokeh app running at: http://127.0.0.1:{port}/explorer" in log_text, log_text[-2000:]
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
