"""Sphinx configuration of the rbmviz documentation site.

Build (from the project root; executes every notebook in its quick form, warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The notebooks of ``notebooks/`` are copied into ``docs/notebooks/`` at build time (Sphinx only
reads files below its source directory) and executed by myst-nb; HoloViews/Bokeh output is
embedded with inline resources, so the plots stay interactive in the built HTML offline.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

# notebooks -> docs/notebooks (generated, git-ignored)
_NB_OUT = DOCS / "notebooks"
_NB_OUT.mkdir(exist_ok=True)
for _nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
    _dst = _NB_OUT / _nb.name
    if not _dst.exists() or _dst.stat().st_mtime < _nb.stat().st_mtime:
        shutil.copy2(_nb, _dst)
# results/<paper>/ (figures and tables beside the papers' numbers) -> docs/results (generated)
_RES_OUT = DOCS / "results"
if (ROOT / "results").is_dir():
    shutil.copytree(ROOT / "results", _RES_OUT, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.npz", "*.parquet", "runs"))

# the gallery: every rendered figure of results/<paper>/, grouped by paper
_PAPERS = {"cd-bias": "Fischer & Igel 2011 — CD bias",
           "dc-programming": "Upadhya & Sastry 2017 — DC programming",
           "tap-machines": "Tramel et al. 2018 — TAP machines"}
_RES_OUT.mkdir(exist_ok=True)
_lines = []
for _paper, _title in _PAPERS.items():
    _figs = sorted((_RES_OUT / _paper).glob("*.png")) if (_RES_OUT / _paper).is_dir() else []
    if _figs:
        _lines += [f"## {_title}", ""]
        for _fig in _figs:
            _cap = _fig.stem.replace("_", " ").replace("-", " ")
            _lines += [f"![{_cap}]({_paper}/{_fig.name})", "", f"*{_cap}*", ""]
if not _lines:
    _lines = ["No rendered figures under `results/` yet."]
# each paper page includes results/<paper>/_page.md: the README of the full-scale results, or
# a plain statement that they are not in the repository
for _paper in _PAPERS:
    _dir = _RES_OUT / _paper
    _dir.mkdir(exist_ok=True)
    _readme = ROOT / "results" / _paper / "README.md"
    (_dir / "_page.md").write_text(
        _readme.read_text(encoding="utf-8") if _readme.is_file() else
        "The full-scale results of this paper are not in the repository yet; the quick forms of "
        "the commands above reproduce the paper's claims at a smaller scale.\n", encoding="utf-8")
(_RES_OUT / "_gallery.md").write_text("\n".join(_lines) + "\n", encoding="utf-8")

import rbmviz  # noqa: E402

project = "rbmviz"
author = "rbmviz developers"
copyright = "2026, rbmviz developers"
release = version = rbmviz.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",   # MathJax served from the built site, not a CDN
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "results/**"]
templates_path = ["_templates"]
html_static_path = ["_static"]

# --- myst / myst-nb --------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("RBMVIZ_DOCS_EXECUTE", "force")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
nb_execution_in_temp = False
# plain text/html outputs of HoloViews/Panel carry their (inline) BokehJS
nb_mime_priority_overrides = [
    ("html", "application/vnd.holoviews_exec.v0+json", None),
    ("html", "application/vnd.holoviews_load.v0+json", None),
]
# HoloViews' comm bundles (application/vnd.holoviews_*) only mean something to a live kernel;
# the same outputs carry the plot as text/html with the embedded Bokeh document
suppress_warnings = ["mystnb.unknown_mime_type"]

# --- API reference -----------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False

# --- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "rbmviz"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
}
html_show_sourcelink = False
