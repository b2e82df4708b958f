"""The documentation site builds without a warning, with every notebook executed.

One Sphinx build (myst-nb executes each notebook of ``notebooks/`` in its quick form, warnings
are errors) serves all the checks below: the build is clean, every notebook's page carries its
plots as embedded, interactive Bokeh documents with BokehJS inline (no CDN: the site works
offline), no rbmviz warning appears in a notebook's output, and no page or docstring points to a
file that does not ship with rbmviz.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))

if os.environ.get("CI"):          # CI installs the docs stack ([test] includes [docs]): never skip there
    import myst_nb, numpydoc, sphinx  # noqa: F401,E401
else:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    pytest.importorskip("numpydoc")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000)
    return proc, out / "html"


def test_docs_build_without_warnings(site):
    proc, html = site
    log = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 0, "sphinx -W failed:\n" + "\n".join(log[-80:])
    assert (html / "index.html").is_file()
    assert (html / "api" / "index.html").is_file()
    for page in ("theory/tap", "theory/cd-bias", "theory/dc-programming", "theory/ais",
                 "howto/classroom", "howto/dask-sweeps", "getting-started", "explorer"):
        assert (html / f"{page}.html").is_file(), page


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_page_has_interactive_plots_offline(site, name):
    proc, html = site
    if proc.returncode != 0:
        pytest.fail("the docs build failed (see test_docs_build_without_warnings)")
    page = (html / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
    # executed: outputs are present, and the plots are embedded Bokeh documents
    assert "cell_output" in page, f"{name}: no cell output (not executed?)"
    assert page.count("docs_json") >= 1, f"{name}: no embedded Bokeh/HoloViews plot"
    # BokehJS itself is inline, never fetched from a CDN
    assert not re.search(r"<script[^>]+src=[\"']https?://cdn\.bokeh\.org", page)
    assert "Bokeh" in page


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_rbmviz_warning_in_notebook_output(site, name):
    proc, html = site
    if proc.returncode != 0:
        pytest.fail("the docs build failed (see test_docs_build_without_warnings)")
    page = (html / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
    stderr_blocks = re.findall(r'<div class="output stderr.*?</pre>', page, flags=re.S)
    bad = [b for b in stderr_blocks if "rbmviz" in b and "Warning" in b]
    assert not bad, f"{name}: rbmviz warning in the output:\n{bad[0][:500]}"


def test_no_reference_to_files_that_do_not_ship():
    """Docstrings, pages and notebooks point inside the package or its documentation."""
    pattern = re.compile(r"reference/[a-z-]+\.md|shared/reference|shared/seeds|seeds/0\d\d_")
    offenders = []
    paths = [*ROOT.joinpath("rbmviz").rglob("*.py"), *ROOT.joinpath("rbmviz").rglob("*.md"),
             *ROOT.joinpath("notebooks").glob("*.ipynb"), ROOT / "README.md",
             *[p for p in ROOT.joinpath("docs").rglob("*.md")
               if not {"notebooks", "results", "_build", "generated"} & set(p.parts)]]
    for path in paths:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not offenders, "\n".join(offenders[:40])


# Wording of a project's history rather than of the project: the site documents rbmviz as it is.
WORK_LOG = re.compile("|".join([
    r"\bthis session\b", r"\ban? earlier session\b", r"\bthe earlier session\b",
    r"\bthe latest session\b", r"\bthe session's\b", r"\bthe session that\b",
    r"\bnext sitting\b", r"\bwhen this was written\b", r"\btime of writing\b",
    r"\bin progress\b", r"\bhad not run\b", r"\bstopped part-way\b", r"\bthe earlier run\b",
    r"\bon this machine\b", r"\bthis machine's\b", r"\bthe seed's\b", r"\bthe seed (prints|drops)\b",
]), re.I)


def _site_sources():
    """The prose the documentation site shows: its pages, the notebooks, the README and the
    results' READMEs (each paper page includes its results/<paper>/README.md)."""
    docs = ROOT / "docs"
    return [*[p for p in docs.rglob("*.md")
              if not {"notebooks", "results", "_build", "generated"} & set(p.relative_to(docs).parts)],
            *ROOT.joinpath("notebooks").glob("*.ipynb"), ROOT / "README.md",
            *ROOT.joinpath("results").glob("*/README.md")]


def test_work_log_wording_detector():
    assert WORK_LOG.search("the run had not run when this was written")
    assert WORK_LOG.search("By the end of This Session it reached epoch 20")
    assert WORK_LOG.search("CBCL, in progress")
    assert not WORK_LOG.search("every browser session gets its own engine; the seed needs Reset")


def test_no_work_log_wording_on_the_site():
    """No page reads like a work log ('this session', 'when this was written', 'in progress' ...)."""
    import json
    offenders = []
    for path in _site_sources():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        for i, line in enumerate(text.splitlines(), 1):
            if m := WORK_LOG.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {m.group(0)!r} in {line.strip()[:90]}")
    assert not offenders, "\n".join(offenders)
