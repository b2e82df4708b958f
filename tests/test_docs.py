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

import numpy as np
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


# ---------------------------------------------------------------------------- the built site

def _built(site):
    proc, html = site
    if proc.returncode != 0:
        pytest.fail("the docs build failed (see test_docs_build_without_warnings)")
    return html


def _bokeh_docs(page: str):
    """The embedded Bokeh documents of a page (``var docs_json = {...};``), parsed."""
    import json
    decoder = json.JSONDecoder()
    for m in re.finditer(r"var docs_json = ", page):
        doc, _ = decoder.raw_decode(page, m.end())
        yield doc


def _objects(node, found):
    """Every Bokeh model serialised in ``node``, by id."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "id" in node and "name" in node:
            found.setdefault(node["id"], node)
        for v in node.values():
            _objects(v, found)
    elif isinstance(node, list):
        for v in node:
            _objects(v, found)
    return found


def _column_length(value) -> int:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict) and value.get("type") == "ndarray":
        n = 1
        for s in value.get("shape", [0]):
            n *= s
        return n
    return 0


def _plots_without_data(doc) -> list[str]:
    """Titles of the figures of a Bokeh document none of whose glyph renderers has data."""
    objs = _objects(doc, {})

    def resolve(ref):
        return objs.get(ref["id"], ref) if isinstance(ref, dict) and "id" in ref else ref

    empty = []
    for obj in objs.values():
        if obj["name"] != "Figure":
            continue
        attrs = obj.get("attributes", {})
        lengths = []
        for r in attrs.get("renderers", []):
            r = resolve(r)
            if r.get("name") != "GlyphRenderer":
                continue
            source = resolve(r.get("attributes", {}).get("data_source", {}))
            data = source.get("attributes", {}).get("data", {})
            columns = data.get("entries", []) if isinstance(data, dict) else []
            lengths.append(max((_column_length(v) for _, v in columns), default=0))
        if not lengths or max(lengths) == 0:
            title = resolve(attrs.get("title", {}))
            empty.append(str(title.get("attributes", {}).get("text", obj["id"]))
                         if isinstance(title, dict) else str(title))
    return empty


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_plot_has_data(site, name):
    """Every figure embedded in a notebook's page carries its data (no empty axes)."""
    page = (_built(site) / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
    docs = list(_bokeh_docs(page))
    assert docs, f"{name}: no embedded Bokeh document"
    empty = [t for doc in docs for t in _plots_without_data(doc)]
    assert not empty, f"{name}: plots without data: {empty}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_warning_text_in_notebook_output(site, name):
    """No executed cell prints a warning (Param sizing warnings, library warnings, ...)."""
    page = (_built(site) / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
    outputs = re.findall(r'<div class="cell_output docutils container">(.*?)</div>\s*</div>\s*</div>',
                         page, flags=re.S)
    text = [re.sub(r"<[^>]+>", "", o) for o in outputs if "docs_json" not in o]
    bad = [t.strip()[:300] for t in text if re.search(r"warn", t, flags=re.I)]
    stderr = re.findall(r'<div class="output stderr.*?</pre>', page, flags=re.S)
    assert not bad and not stderr, f"{name}: warning text in the output:\n{(bad or stderr)[0][:500]}"


_CDN = re.compile(r"https?://(cdn\.holoviz\.org|cdn\.bokeh\.org|cdn\.jsdelivr\.net|unpkg\.com|"
                  r"cdnjs\.cloudflare\.com|cdn\.mathjax\.org)[^\"'\s)\\]*")


def _loaded_resources(text: str) -> list[str]:
    """What a page fetches: the src/href of its <script> and <link> tags, the stylesheets its
    Bokeh documents import, and the libraries the Bokeh/Panel loader is given to load (code
    inside BokehJS that names a CDN for features a page does not use is not a fetch)."""
    tags = re.findall(r"<(?:script|link)\b[^>]*?(?:src|href)=[\"']([^\"']+)", text)
    sheets = [obj["attributes"].get("url", "") for doc in _bokeh_docs(text)
              for obj in _objects(doc, {}).values() if obj["name"] == "ImportedStyleSheet"]
    lists = re.findall(r"const (?:css_urls|js_urls|js_modules) = (\[[^\]]*\])", text)
    lists += re.findall(r"const js_exports = (\{[^}]*\})", text)
    return tags + sheets + lists


def test_site_loads_nothing_from_a_cdn(site):
    """Scripts and stylesheets come from the site itself (it works offline)."""
    html = _built(site)
    offenders = {}
    for page in html.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for ref in _loaded_resources(text):
            if m := _CDN.search(ref):
                offenders.setdefault(str(page.relative_to(html)), m.group(0))
            elif ref.startswith(("../", "_static/")) and "_static/panel/" in ref:
                target = (page.parent / ref.split("?")[0]).resolve()
                assert target.is_file(), f"{page.relative_to(html)}: {ref} is not in the site"
    assert not offenders, offenders
    # the Panel stylesheets of the notebooks are served from the site
    tour = (html / "notebooks" / NOTEBOOKS[0]).with_suffix(".html").read_text(encoding="utf-8")
    assert any("_static/panel/" in r for r in _loaded_resources(tour))


def test_every_results_figure_is_on_a_page(site):
    """Each PNG under results/ is shown by some page (compared by content: Sphinx renames)."""
    import hashlib
    html = _built(site)
    digest = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    shown = set()
    for page in html.rglob("*.html"):
        for src in re.findall(r'<img[^>]+src="([^"]+)"', page.read_text(encoding="utf-8")):
            path = (page.parent / src).resolve()
            if path.is_file():
                shown.add(digest(path))
    missing = [str(p.relative_to(ROOT)) for p in sorted(ROOT.joinpath("results").rglob("*.png"))
               if digest(p) not in shown]
    assert not missing, f"results figures on no page: {missing}"


def test_no_broken_internal_link(site):
    html = _built(site)
    broken = []
    for page in html.rglob("*.html"):
        if "_static" in page.relative_to(html).parts:
            continue
        text = re.sub(r"<script\b.*?</script>", "", page.read_text(encoding="utf-8"), flags=re.S)
        for href in re.findall(r'<a[^>]+href="([^"#?]+)[^"]*"', text):
            if re.match(r"[a-z]+:", href) or href.startswith("//"):
                continue
            if not (page.parent / href).resolve().exists():
                broken.append(f"{page.relative_to(html)} -> {href}")
    assert not broken, "\n".join(broken[:40])


def test_cli_reference_has_every_command(site):
    from rbmviz.cli import build_parser
    from rbmviz.reproduce import EXPERIMENTS
    page = (_built(site) / "cli.html").read_text(encoding="utf-8")
    commands = [a for a in build_parser()._actions if a.dest == "command"][0].choices
    missing = [f"rbmviz {c}" for c in commands if f'id="cli-rbmviz-{c}"' not in page]
    missing += [f"rbmviz reproduce {e}" for e in EXPERIMENTS
                if f'id="cli-rbmviz-reproduce-{e}"' not in page]
    assert not missing, missing
    assert "--learning-rate" in page and "--classroom" in page     # the options themselves


def test_api_reference_has_every_public_module(site):
    html = _built(site)
    public = sorted(p.stem if p.suffix == ".py" else p.name for p in ROOT.joinpath("rbmviz").iterdir()
                    if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").is_file()))
    missing = [m for m in public if not (html / "api" / "generated" / f"rbmviz.{m}.html").is_file()]
    assert not missing, f"modules missing from the API reference: {missing}"


def test_glossary_and_citation(site):
    html = _built(site)
    glossary = (html / "glossary.html").read_text(encoding="utf-8")
    for term in ("ATLL", "TAP", "AIS", "OPE", "MCC", "t90", "CD-k", "PCD"):
        assert f'id="term-{term}"' in glossary, term
    cite = (html / "cite.html").read_text(encoding="utf-8")
    import rbmviz
    assert rbmviz.__version__ in cite and "MIT" in cite
    index = (html / "index.html").read_text(encoding="utf-8")
    assert "pip install rbmviz" in re.sub(r"<[^>]+>", "", index)
    assert re.search(r'<img[^>]+explorer', index)


def test_notebook_pages_have_no_sidebars(site):
    """Notebook pages give the width of the (empty) sidebars to their plots."""
    html = _built(site)
    for page in html.glob("notebooks/*.html"):
        text = page.read_text(encoding="utf-8")
        assert 'class="bd-sidebar-secondary' not in text, page.relative_to(html)
        # the primary sidebar only holds the navbar for narrow screens
        assert not re.search(r'class="bd-sidebar-primary bd-sidebar(?! hide-on-wide)', text), \
            page.relative_to(html)


@pytest.mark.parametrize("paper", ["cd-bias", "dc-programming", "tap-machines"])
def test_paper_page_opens_with_its_scorecard(site, paper):
    """The scorecard comes before the figures and the discussion and lists every claim that a
    run's summary.json judges."""
    import html as html_lib
    from rbmviz.reproduce.report import results_rows
    page = (_built(site) / "papers" / f"{paper}.html").read_text(encoding="utf-8")
    start = page.index('id="scorecard"')
    assert start < page.index('id="figures"') < page.index('id="results-at-the-paper-s-scale"')
    card = page[start:page.index('id="figures"')]
    text = re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", "", card)))
    for summary in ROOT.joinpath("results", paper).rglob("summary.json"):
        try:
            rows = results_rows(summary.parent)
        except ValueError:
            continue
        for r in rows:
            assert re.sub(r"\s+", " ", r["claim"]) in text, (summary, r["claim"])


def test_api_reference_links_the_theory_pages(site):
    """Docstrings that cite a theory page ('the TAP theory page of the documentation') link it."""
    html = _built(site)
    linked = set()
    for page in (html / "api" / "generated").glob("*.html"):
        linked.update(re.findall(r'href="\.\./\.\./theory/([a-z-]+)\.html', page.read_text(encoding="utf-8")))
    assert {"tap", "ais", "cd-bias", "dc-programming", "tap-beyond"} <= linked, linked


def test_results_are_stamped_with_their_commit(site):
    """Each run's figures on a paper page carry the commit that produced the run's summary
    (in a clone with its history; a shallow clone cannot tell)."""
    import subprocess
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT,
                             capture_output=True, text=True).stdout.strip()
    if shallow != "false":
        pytest.skip("no git history to stamp the results with")
    for paper in ("cd-bias", "dc-programming", "tap-machines"):
        page = (_built(site) / "papers" / f"{paper}.html").read_text(encoding="utf-8")
        figures = page[page.index('id="figures"'):page.index('id="results-at-the-paper-s-scale"')]
        sections = {re.sub(r"<[^>]+>|#", "", s[:s.index("</h3>")]).split(">")[-1].strip(): s
                    for s in re.split(r"<h3", figures)[1:]}
        src = ROOT / "results" / paper
        runs = {p.parent for p in src.rglob("*.png") if (p.parent / "summary.json").is_file()}
        assert runs, paper
        for run in runs:
            label = "the quick form (top level)" if run == src else f"{run.relative_to(src).as_posix()}/"
            assert label in sections, (paper, label, list(sections))
            assert re.search(r"commit <code[^>]*><span[^>]*>[0-9a-f]{7,}", sections[label]), (paper, label)


def test_the_quickstart_and_tour_show_models_that_learned(site):
    """The teaching notebooks' printed numbers (from their executed cells) show what their text
    says: the quickstart's best model within 0.25 nats of −ln 14 with at least 90 % of its
    probability on the 14 patterns, the tour's model with at least 75 %."""
    html = _built(site)
    quick = re.sub(r"<[^>]+>", "", (html / "notebooks" / "quickstart.html").read_text(encoding="utf-8"))
    ll = re.search(r"exact log-likelihood after [\d,]+ epochs: CD (-?[\d.]+), PCD (-?[\d.]+)", quick)
    mass = re.search(r"the model puts ([\d.]+)% of its probability on the 14 patterns", quick)
    assert ll and mass, "the quickstart's printed numbers are missing"
    assert max(float(ll.group(1)), float(ll.group(2))) > -np.log(14) - 0.25
    assert float(mass.group(1)) >= 90
    tour = re.sub(r"<[^>]+>", "", (html / "notebooks" / "00_tour.html").read_text(encoding="utf-8"))
    mass = re.search(r"model puts ([\d.]+)% of its probability on the 14 patterns", tour)
    assert mass and float(mass.group(1)) >= 75


def test_scorecards_state_each_runs_extent_against_the_papers_protocol():
    """A verdict on a quick form is never read as one on the paper's experiment: the scorecard
    states each run's extent ("complete", or what falls short), and every cell its verdict."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import scorecards
    proto = {"trials": 10, "epochs": 200, "n_hidden": 500, "limit": None}
    assert scorecards.extent({"trials": 10, "epochs": 200, "n_hidden": 500, "limit": None},
                             proto) == "complete"
    assert scorecards.extent({"trials": 1, "epochs": 60, "n_hidden": 500, "limit": None}, proto) \
        == "partial: 1 of 10 trials, 60 of 200 epochs"
    assert scorecards.extent({"trials": 10, "epochs": 200, "n_hidden": 100, "limit": 1000}, proto) \
        == "partial: 100 hidden units, not 500, the first 1,000 rows"
    for paper in ("cd-bias", "dc-programming", "tap-machines"):
        card = scorecards.scorecard(paper, ROOT / "results" / paper)
        head = card.splitlines()
        assert head[2].startswith("| *extent of the run against the paper's protocol*")
        runs = head[0].count("|") - 3
        assert head[2].count("*complete*") + head[2].count("*partial:") == runs
    assert "*complete*" in scorecards.scorecard("dc-programming", ROOT / "results" / "dc-programming")
