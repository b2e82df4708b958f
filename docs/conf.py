"""Sphinx configuration of the rbmviz documentation site.

Build (from the project root; executes every notebook in its quick form, warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The notebooks of ``notebooks/`` are copied into ``docs/notebooks/`` at build time (Sphinx only
reads files below its source directory) and executed by myst-nb; HoloViews/Bokeh output is
embedded with inline resources, so the plots stay interactive in the built HTML offline.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))          # the project's own Sphinx extensions and page makers
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

# every figure of results/<paper>/ (at any depth) reaches the site: each paper page shows its
# paper's figures, run by run, with the commit that last changed the run's summary.json; the
# gallery shows them all.  Captions say what each figure holds.
_PAPERS = {"cd-bias": "Fischer & Igel 2011 — CD bias",
           "dc-programming": "Upadhya & Sastry 2017 — DC programming",
           "tap-machines": "Tramel et al. 2018 — TAP machines"}
_FIGURE_CAPTIONS = {
    ("cd-bias", "figure.png"): "the CD-1 bias and its Theorem-4 bound, the distance "
                               "½‖p_e − p‖₁, 1 − the mixing factor and Δ against the iteration "
                               "(mean over runs, 10–90 % band; Fig. 1)",
    ("dc-programming", "figure.png"): "trial-mean exact ATLL against the epoch for every "
                                      "training rule, per data set and learning rate (Fig. 2)",
    ("tap-machines", "figure.png"): "TAP log-likelihood, unique solutions and their free energy, "
                                    "the Isomap of the solutions, the data map and denoising "
                                    "(Figs. 3, 5, 6, 7, 8)",
    ("tap-machines", "fig4.png"): "receptive fields ranked by their ℓ0.1 spread and by mean "
                                  "activation (Fig. 4)",
    ("tap-machines", "denoising-by-nh.png"): "denoising MCC against the flip probability for "
                                             "every N_h side by side, with the OPE and 1-NN "
                                             "(Fig. 8 across runs)",
}


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


_FULL_HISTORY = _git("rev-parse", "--is-shallow-repository") == "false"
COMMIT = _git("rev-parse", "--short", "HEAD")


def _provenance(summary: Path) -> str:
    """``rbmviz <version>, commit <hash> (<date>)`` for one run's summary.json: the version
    and commit it records, else the last commit that changed it (a full clone only)."""
    if not summary.is_file():
        return ""
    try:
        meta = json.loads(summary.read_text(encoding="utf-8"))
    except ValueError:
        meta = {}
    meta = {**meta.get("provenance", {}), **{k: meta[k] for k in ("version", "commit") if k in meta}}
    parts = [f"rbmviz {meta['version']}"] if meta.get("version") else []
    if meta.get("commit"):
        parts.append(f"commit `{str(meta['commit'])[:10]}`")
    elif _FULL_HISTORY:
        last = _git("log", "-1", "--format=%h %cs", "--", str(summary.relative_to(ROOT)))
        if last:
            sha, date = last.split()
            parts.append(f"summary.json last changed in commit `{sha}` ({date})")
    return ", ".join(parts)


def _run_order(rel: Path):
    """Run folders in reading order: the top level, the quick forms, then the longer runs;
    the paper's main data set before the others (CBCL, real-valued MNIST)."""
    name = rel.as_posix()
    return (len(rel.parts), "quick" not in name, "cbcl" in name or "real" in name, name)


def _caption(paper: str, fig: Path) -> str:
    return _FIGURE_CAPTIONS.get((paper, fig.name), fig.stem.replace("_", " ").replace("-", " "))


_RES_OUT.mkdir(exist_ok=True)
for _paper, _title in _PAPERS.items():
    _src = ROOT / "results" / _paper
    _dir = _RES_OUT / _paper
    _dir.mkdir(exist_ok=True)
    _figs = sorted(_src.rglob("*.png"), key=lambda p: _run_order(p.relative_to(_src))) \
        if _src.is_dir() else []
    _runs: dict[Path, list[Path]] = {}
    for _fig in _figs:
        _runs.setdefault(_fig.parent.relative_to(_src), []).append(_fig)
    _page = []
    for _run, _run_figs in _runs.items():
        _label = "the quick form (top level)" if str(_run) == "." else f"`{_run}/`"
        _stamp = _provenance(_src / _run / "summary.json")
        _page += [f"### {_label}", ""] + ([f"*{_stamp}*", ""] if _stamp else [])
        for _fig in _run_figs:
            _rel = _fig.relative_to(_src).as_posix()
            _cap = _caption(_paper, _fig)
            _page += [f"![{_cap}]({_rel})", "", f"*{_rel}*: {_cap}.", ""]
    (_dir / "_figures.md").write_text(
        "\n".join(_page or ["No rendered figures of this paper are in the repository."]) + "\n",
        encoding="utf-8")
# each paper page opens with its scorecard, generated from the runs' summary.json files
# (rbmviz.reproduce.report): one row per claim of the paper, one column per run folder, each
# cell the run's verdict; the runs' own claims tables (numbers judged, criteria) follow below.
import scorecards  # noqa: E402

for _paper in _PAPERS:
    (_RES_OUT / _paper / "_scorecard.md").write_text(
        scorecards.scorecard(_paper, ROOT / "results" / _paper, order=_run_order), encoding="utf-8")
# each paper page includes results/<paper>/_page.md: the README of the full-scale results, or
# a plain statement that they are not in the repository.  A paper with a run-by-run page
# (docs/papers/<paper>-runs.md) keeps its discussion short: the README's per-run sections
# under "The paper's claims and ours" go to results/<paper>/_runs.md, which that page includes.
_CLAIMS_HEADING = re.compile(r"(?m)^## The paper's claims and ours\s*$")


def _split_runs(readme: str, paper: str) -> tuple[str, str]:
    """``(discussion, runs)``: the README without its per-run ``###`` sections (a link to the
    run-by-run page in their place), and those sections one heading level up."""
    m = _CLAIMS_HEADING.search(readme)
    if not m:
        return readme, ""
    end = re.search(r"(?m)^## ", readme[m.end():])
    stop = m.end() + end.start() if end else len(readme)
    runs = readme[m.end():stop]
    runs = re.sub(r"(?m)^(#{3,6}) ", lambda h: h.group(1)[1:] + " ", runs)
    link = ("\nEach run's numbers beside the paper's, the tables it printed and the criterion of "
            f"each verdict are on {{doc}}`/papers/{paper}-runs`; the scorecard at the top of this "
            "page sums them up.\n\n")
    return readme[:m.end()] + link + readme[stop:], runs


for _paper in _PAPERS:
    _readme = ROOT / "results" / _paper / "README.md"
    _text = _readme.read_text(encoding="utf-8") if _readme.is_file() else (
        "The full-scale results of this paper are not in the repository; the quick forms of "
        "the commands above reproduce the paper's claims at a smaller scale.\n")
    _runs_text = ""
    if (DOCS / "papers" / f"{_paper}-runs.md").is_file():
        _text, _runs_text = _split_runs(_text, _paper)
        (_RES_OUT / _paper / "_runs.md").write_text(
            _runs_text or "The runs of this paper are not in the repository.\n", encoding="utf-8")
    (_RES_OUT / _paper / "_page.md").write_text(_text, encoding="utf-8")

import rbmviz  # noqa: E402

import gallery  # noqa: E402
import lesson_pages  # noqa: E402

# the lesson pages of the teaching path, from the explorer's own lessons (never hand-copied)
lesson_pages.write()
# the gallery's thumbnails (scikit-learn's style): every notebook figure, every view of the
# explorer, every results/ figure, each a link to its page; the results' PNGs are served from
# _static/figures/ (docs/results/_static/ is a static path: generated, not in git; not
# _static/results/, which Sphinx would skip as it matches exclude_patterns "results/**")
_THUMB_STATIC = _RES_OUT / "_static"
_THUMB_STATIC.mkdir(exist_ok=True)
_thumbs: dict[str, list[tuple[str, str]]] = {}
for _paper in _PAPERS:
    _src = ROOT / "results" / _paper
    for _fig in sorted(_src.rglob("*.png"), key=lambda p: _run_order(p.relative_to(_src))) \
            if _src.is_dir() else []:
        _rel = _fig.relative_to(_src).as_posix()
        _dst = _THUMB_STATIC / "figures" / _paper / _rel
        _dst.parent.mkdir(parents=True, exist_ok=True)
        if not _dst.exists() or _dst.stat().st_mtime < _fig.stat().st_mtime:
            shutil.copy2(_fig, _dst)
        _thumbs.setdefault(_paper, []).append((_rel, _caption(_paper, _fig)))
gallery.write(_PAPERS, _thumbs)

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
    "cli_reference",            # .. rbmviz-cli:: — the CLI reference from the argparse parsers
    "offline_assets",           # Panel's stylesheets served from the site, not its CDN
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "results/**"]
templates_path = ["_templates"]
html_static_path = ["_static", "results/_static"]

# --- myst / myst-nb --------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
# {{ version }} and {{ commit }} on the pages (the "how to cite" page stamps the build)
myst_substitutions = {"version": version, "commit": COMMIT or "(not a git checkout)"}
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
html_title = f"rbmviz {version}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    # the in-page table of contents beside the prose pages; the notebooks give that width to
    # their plots, the paper pages to their scorecards (one column per run) and figures (a
    # pattern no page matches gets no secondary sidebar)
    "secondary_sidebar_items": {"*": ["page-toc"], "theory/*": ["page-toc"],
                                "howto/*": ["page-toc"], "api/**": ["page-toc"]},
    "footer_start": ["copyright"],
}
html_show_sourcelink = False
# no primary sidebar where it would be empty (the top-level pages and the notebooks have no
# sub-pages) or would repeat the page's own toctree (the paper pages)
html_sidebars = {"*": [], "notebooks/*": [], "papers/*": []}
html_css_files = ["rbmviz.css"]


# docstrings name the theory pages in words ("the TAP theory page of the documentation", so
# that they read well in a terminal); in the API reference they become links to those pages
_THEORY_PAGES = {"tap-beyond": "tap-beyond", "tap": "tap", "ais": "ais",
                 "dc-programming": "dc-programming", "cd-bias": "cd-bias"}
_THEORY_MENTION = re.compile(r"\b([Tt])he (TAP-beyond|TAP|AIS|DC-programming|CD-bias) theory page"
                             r"( of the documentation)?")
_THEORY_INDEX = re.compile(r"\b([Tt])he documentation's theory pages")


def _link_theory_pages(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if "theory page" not in line or ":doc:" in line:
            continue
        line = _THEORY_MENTION.sub(
            lambda m: f":doc:`{m.group(1)}he {m.group(2)} theory page "
                      f"</theory/{_THEORY_PAGES[m.group(2).lower()]}>`", line)
        lines[i] = _THEORY_INDEX.sub(lambda m: f":doc:`{m.group(1)}he theory pages </theory/index>`",
                                     line)


def _drop_modules_without_source(app):
    """viewcode lists on its index page every module an object of the API reference names,
    those whose source it cannot read too (an object whose ``__module__`` is ``builtins``),
    and links them to pages it does not write: leave them out."""
    modules = getattr(app.env, "_viewcode_modules", {})
    for name in [name for name, entry in modules.items() if not entry]:
        del modules[name]
    return []


def setup(app):
    app.connect("autodoc-process-docstring", _link_theory_pages)
    app.connect("html-collect-pages", _drop_modules_without_source, priority=400)

