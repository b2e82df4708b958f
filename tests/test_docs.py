"""The documentation site builds without a warning, with every notebook executed.

One Sphinx build (myst-nb executes each notebook of ``notebooks/`` in its quick form, warnings
are errors), made with the network unreachable, serves all the checks below: the build is clean,
every notebook's page carries its plots as embedded, interactive Bokeh documents with their data
and BokehJS inline, no page needs a script, stylesheet or image from another site (the site works
offline), every figure of ``results/`` is on a page, no page reads like a work log, no internal
link is broken, no executed cell prints a warning, and (in headless Chromium, when it is
installed) no output is wider than the page's content column at 1,280 px.

The network is cut with a new network namespace (``unshare -rn``, util-linux; only the loopback
interface, which the notebooks' kernels use, is brought up), so that neither Sphinx nor a
notebook's kernel nor anything they start can reach another host.  Where namespaces are not
allowed (some containers), every Python process of the build gets a ``sitecustomize`` that refuses
connections to any address but the loopback's.
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


# ------------------------------------------------------------------------- the network cut off

#: run as ``python LO_UP cmd ...`` inside a new network namespace: brings its loopback interface
#: up (SIOCGIFFLAGS / SIOCSIFFLAGS, IFF_UP; no iproute2 needed), then becomes ``cmd``
LO_UP = """
import fcntl, os, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
req = struct.pack("16sH14s", b"lo", 0, b"")
flags = struct.unpack("16sH14s", fcntl.ioctl(s, 0x8913, req))[1]
fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b""))
s.close()
os.execvp(sys.argv[1], sys.argv[1:])
"""

#: the fallback: a sitecustomize (found through PYTHONPATH by every Python process of the build,
#: the notebooks' kernels included) under which a connection to, or a name lookup of, anything
#: but the loopback raises; it then runs the sitecustomize it shadows, if any
GUARD = """
import importlib.machinery, importlib.util, ipaddress, os, socket, sys

def _local(host):
    if host in ("localhost", "", None) or (isinstance(host, str) and host.startswith("/")):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False

class _Unreachable(OSError):
    pass

def _refuse(what):
    raise _Unreachable(101, f"network unreachable (the docs test's offline build): {what}")

_connect, _connect_ex, _getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
        _refuse(address)
    return _connect(self, address)

def connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
        return 101
    return _connect_ex(self, address)

def getaddrinfo(host, *args, **kwargs):
    if not _local(host.decode() if isinstance(host, bytes) else host):
        _refuse(host)
    return _getaddrinfo(host, *args, **kwargs)

socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _spec is not None and _spec.loader is not None:
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
"""

#: an address outside the machine: connecting to it must fail in the offline build's environment
OUTSIDE = ("1.1.1.1", 443)
PROBE = f"""
import socket
try:
    socket.create_connection({OUTSIDE!r}, timeout=5).close()
except OSError as e:
    print("unreachable:", e)
else:
    print("REACHED")
"""


def _namespaces_work() -> bool:
    try:
        return subprocess.run(["unshare", "-rn", sys.executable, "-c", LO_UP, "true"],
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def offline(cmd: list[str], env: dict, scratch: Path) -> tuple[list[str], dict, str]:
    """``cmd`` and ``env`` made to run with the network unreachable, and the mechanism's name."""
    if _namespaces_work():
        return ["unshare", "-rn", sys.executable, "-c", LO_UP, *cmd], env, "network namespace"
    guard = scratch / "offline-guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(guard), env.get("PYTHONPATH", "")]))
    return cmd, {**env, "PYTHONPATH": path}, "socket guard"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    cmd, env, how = offline(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")], env, out)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000)
    probe = subprocess.run(offline([sys.executable, "-c", PROBE], env, out)[0], env=env,
                           capture_output=True, text=True, timeout=60)
    proc.offline = (how, (probe.stdout + probe.stderr).strip())
    return proc, out / "html"


def test_the_site_is_built_with_the_network_unreachable(site):
    """The build ran where no other host can be reached: a connection to one fails there."""
    proc, _ = site
    how, probe = proc.offline
    assert probe.startswith("unreachable:"), f"{how}: {OUTSIDE} reachable in the build's environment: {probe}"


def test_the_socket_guard_refuses_outside_addresses_only(tmp_path):
    """The fallback (no network namespaces) lets the loopback through and nothing else."""
    guard = tmp_path / "g"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    code = PROBE + """
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
socket.create_connection(s.getsockname(), timeout=5).close()
print("loopback ok")
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(guard), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("unreachable:") and "loopback ok" in out.stdout, out.stdout + out.stderr


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


def _page_text(page: Path) -> str:
    """A built page's text as a reader sees it: no scripts, styles or tags."""
    import html as html_lib
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", page.read_text(encoding="utf-8"), flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", text))


def test_no_work_log_wording_on_the_built_pages(site):
    """The built pages (with what the build generates: scorecards, figure lists, lesson pages,
    the CLI reference, the notebooks' outputs) do not read like a work log either.  The API
    reference is left out: its docstrings speak of a browser's session and of sweeps' runs in
    progress."""
    html = _built(site)
    offenders = []
    for page in sorted(html.rglob("*.html")):
        rel = page.relative_to(html)
        if {"_modules", "_static", "_sources", "api"} & set(rel.parts):
            continue
        for m in WORK_LOG.finditer(_page_text(page)):
            offenders.append(f"{rel}: {m.group(0)!r}")
    assert not offenders, "\n".join(offenders)


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


#: a URL of another site: absolute (http, https) or protocol-relative
_OUTSIDE_URL = re.compile(r"(?:https?:)?//[^\"'\s,\])}\\]+")


def _loaded_resources(text: str) -> list[str]:
    """What a page fetches: the src/href of its <script> and <link> tags, the src of its
    images, the stylesheets its Bokeh documents import, and the libraries the Bokeh/Panel
    loader is given to load (code inside BokehJS that names a CDN for features a page does not
    use is not a fetch)."""
    tags = re.findall(r"<(?:script|link)\b[^>]*?(?:src|href)=[\"']([^\"']+)", text)
    tags += re.findall(r"<img\b[^>]*?src=[\"']([^\"']+)", text)
    sheets = [obj["attributes"].get("url", "") for doc in _bokeh_docs(text)
              for obj in _objects(doc, {}).values() if obj["name"] == "ImportedStyleSheet"]
    lists = re.findall(r"const (?:css_urls|js_urls|js_modules) = (\[[^\]]*\])", text)
    lists += re.findall(r"const js_exports = (\{[^}]*\})", text)
    return tags + sheets + lists


def test_no_page_needs_another_site(site):
    """Scripts, stylesheets, images and the libraries the Bokeh/Panel loader fetches come from
    the site itself (it works offline): BokehJS and Panel's stylesheets are served from the
    build, never from a CDN."""
    html = _built(site)
    offenders = {}
    for page in html.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for ref in _loaded_resources(text):
            if ref.startswith(("[", "{")):
                urls = _OUTSIDE_URL.findall(ref)
            else:
                urls = [ref] if _OUTSIDE_URL.match(ref) else []
            for url in urls:
                offenders.setdefault(str(page.relative_to(html)), url)
            if not urls and ref.startswith(("../", "_static/")) and "_static/panel/" in ref:
                target = (page.parent / ref.split("?")[0]).resolve()
                assert target.is_file(), f"{page.relative_to(html)}: {ref} is not in the site"
    assert not offenders, offenders
    # the Panel stylesheets of the notebooks are served from the site
    tour = (html / "notebooks" / NOTEBOOKS[0]).with_suffix(".html").read_text(encoding="utf-8")
    assert any("_static/panel/" in r for r in _loaded_resources(tour))


def test_outside_urls_are_recognised():
    found = lambda ref: _OUTSIDE_URL.findall(ref) if ref.startswith(("[", "{")) else \
        ([ref] if _OUTSIDE_URL.match(ref) else [])  # noqa: E731
    assert found("https://cdn.bokeh.org/bokeh/release/bokeh-3.4.1.min.js")
    assert found("//cdn.jsdelivr.net/npm/x.css")
    assert found('["https://cdn.holoviz.org/panel/1.4.4/dist/panel.min.js"]') == \
        ["https://cdn.holoviz.org/panel/1.4.4/dist/panel.min.js"]
    assert not found("../_static/panel/css/loading.css") and not found("[]")


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
    for page in html.glob("papers/*.html"):      # their scorecards and figures take the width
        assert 'class="bd-sidebar-secondary' not in page.read_text(encoding="utf-8"), \
            page.relative_to(html)
    for page in html.glob("notebooks/*.html"):
        text = page.read_text(encoding="utf-8")
        assert 'class="bd-sidebar-secondary' not in text, page.relative_to(html)
        # the primary sidebar only holds the navbar for narrow screens
        assert not re.search(r'class="bd-sidebar-primary bd-sidebar(?! hide-on-wide)', text), \
            page.relative_to(html)


#: the typographic quotes a built page has where its Markdown source has straight ones
SMART_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


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
    text = text.translate(SMART_QUOTES)     # MyST's typography: TAP's -> TAP’s
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


# ------------------------------------------------------------- widths, in headless Chromium

CHROMIUM = os.environ.get("RBMVIZ_CHROMIUM", "/usr/bin/chromium")
WIDTH = 1280

#: what on the page as drawn now is wider than the article's column (its content box): a
#: visible canvas (Bokeh draws inside shadow roots: the walk descends into every shadowRoot) or
#: image outside it, a notebook output that has to scroll sideways, a table that does
WIDTH_JS = """(tables) => {
  const col = document.querySelector('article.bd-article') || document.body;
  const cs = getComputedStyle(col), cr = col.getBoundingClientRect();
  const left = cr.left + parseFloat(cs.paddingLeft), right = cr.right - parseFloat(cs.paddingRight);
  const problems = [];
  let canvases = 0, images = 0, outputs = 0;
  const where = el => {
    for (let e = el; e; e = e.parentElement || (e.getRootNode && e.getRootNode().host) || null) {
      if (e.classList && e.classList.contains('cell')) {
        const cells = [...document.querySelectorAll('div.cell')];
        return ` (cell ${cells.indexOf(e) + 1} of ${cells.length})`;
      }
      if (/^H[1-6]$/.test(e.tagName || '')) return '';
    }
    const h = [...document.querySelectorAll('h1, h2, h3')].filter(
      h => h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    return h ? ` (under "${h.textContent.replace(/[#¶]/g, '').trim().slice(0, 60)}")` : '';
  };
  const walk = root => {
    for (const el of root.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width >= 2 && r.height >= 2) {
        const kind = el.tagName === 'CANVAS' ? 'canvas' : el.tagName === 'IMG' ? 'image' : null;
        if (kind === 'canvas') canvases += 1;
        if (kind === 'image') images += 1;
        if (kind && (r.left < left - 1 || r.right > right + 1))
          problems.push(`${kind} ${Math.round(r.width)} px wide at [${Math.round(r.left)}, ` +
                        `${Math.round(r.right)}]${where(el)}`);
        if (root === document) {
          const cls = String(el.className || '');
          const output = el.closest('div.cell_output');
          if (cls.includes('cell_output')) outputs += 1;
          if ((output || (tables && cls.includes('pst-scrollable-table-container'))) &&
              getComputedStyle(el).overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1)
            problems.push(`${output ? 'output' : 'table'} ${el.scrollWidth} px wide scrolls in ` +
                          `${el.clientWidth} px${where(el)}`);
        }
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return {column: [Math.round(left), Math.round(right)], canvases, images, outputs, problems};
}"""

#: the number of canvases on the page (in every shadow root): stable once Bokeh has drawn
CANVASES_JS = """() => { let n = 0; const walk = root => { for (const el of root.querySelectorAll('*')) {
  if (el.tagName === 'CANVAS') n += 1; if (el.shadowRoot) walk(el.shadowRoot); } };
  walk(document); return n; }"""


#: the notebook outputs that hold a Bokeh document, each marked with data-rbmviz-figure=<n>,
#: with the section of the page it is in: ``[{n, section, title}]``
FIGURES_JS = """() => {
  const drawn = root => [...root.querySelectorAll('*')].some(
    el => el.tagName === 'CANVAS' || (el.shadowRoot && drawn(el.shadowRoot)));
  return [...document.querySelectorAll('div.cell_output')]
  .filter(out => out.querySelector('[data-root-id]') && out.getBoundingClientRect().height > 60
                 && drawn(out))
  .map((out, n) => {
    out.setAttribute('data-rbmviz-figure', String(n));
    const section = out.closest('section');
    const heading = section && section.querySelector('h1, h2, h3, h4');
    return {n, section: section ? section.id : '',
            title: heading ? heading.textContent.replace(/[#¶]/g, '').trim() : ''};
  });
}"""

GALLERY = ROOT / "docs" / "_static" / "gallery"


def _thumbnail(png: bytes, path: Path, size=(480, 320)) -> None:
    """A small PNG of a screenshot (at most ``size``, 256 colours)."""
    from io import BytesIO

    from PIL import Image
    image = Image.open(BytesIO(png)).convert("RGB")
    image.thumbnail(size)
    image.quantize(256).save(path, optimize=True)


def _store_thumbnails(page, notebook: str) -> int:
    """Screenshots of a notebook page's figures -> docs/_static/gallery/<notebook>-<n>.png,
    listed in figures.json for the gallery (docs/_ext/gallery.py), as the explorer's browser
    tests store its screenshots for the explorer's page."""
    import json
    GALLERY.mkdir(parents=True, exist_ok=True)
    for old in GALLERY.glob(f"{notebook}-*.png"):
        old.unlink()
    entries = []
    for fig in page.evaluate(FIGURES_JS):
        name = f"{notebook}-{fig['n'] + 1:02d}.png"
        shot = page.locator(f'[data-rbmviz-figure="{fig["n"]}"]').screenshot(timeout=60_000)
        _thumbnail(shot, GALLERY / name)
        entries.append({"notebook": notebook, "image": name, "section": fig["section"],
                        "title": fig["title"]})
    index = GALLERY / "figures.json"
    try:
        kept = [e for e in json.loads(index.read_text(encoding="utf-8")) if e["notebook"] != notebook]
    except (OSError, ValueError):
        kept = []
    order = {nb: i for i, nb in enumerate(NOTEBOOKS)}
    rows = sorted(kept + entries, key=lambda e: (order.get(e["notebook"], 99), e["image"]))
    index.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(entries)


def _pages_to_measure(html: Path) -> list[str]:
    skip = {"_modules", "_static", "_sources", "_images", "_downloads"}
    return [p.relative_to(html).as_posix() for p in sorted(html.rglob("*.html"))
            if not skip & set(p.relative_to(html).parts)
            and p.name not in ("genindex.html", "search.html", "py-modindex.html")]


@pytest.mark.browser
def test_no_output_is_wider_than_its_column(site):
    """At 1,280 px, in headless Chromium, on every page: each plot (its canvases) and image
    lies inside the article's column, no notebook output and no table outside the API
    reference has to scroll sideways, and no page asks another site for anything.  Each
    notebook figure's picture, as drawn here, goes to the gallery (docs/_static/gallery/)."""
    import shutil
    html = _built(site)
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"no Chromium at {CHROMIUM} (apt-get install chromium) — required under CI")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    problems, outside, measured = [], [], {"pages": 0, "canvases": 0, "images": 0, "outputs": 0,
                                           "thumbnails": 0}
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                          "--disable-background-networking"])
        context = browser.new_context(viewport={"width": WIDTH, "height": 900})
        context.route(re.compile(r"^(https?|wss?):"),
                      lambda route: (outside.append(route.request.url), route.abort()))
        page = context.new_page()
        for rel in _pages_to_measure(html):
            page.goto((html / rel).as_uri(), wait_until="load", timeout=300_000)
            last = -1
            for _ in range(60):                       # until Bokeh has drawn every plot
                n = page.evaluate(CANVASES_JS)
                if n == last:
                    break
                last = n
                page.wait_for_timeout(500)
            report = page.evaluate(WIDTH_JS, not rel.startswith("api/"))
            problems += [f"{rel}: {x}" for x in report["problems"]]
            measured["pages"] += 1
            for k in ("canvases", "images", "outputs"):
                measured[k] += report[k]
            if rel.startswith("notebooks/"):           # the gallery's thumbnails, as drawn
                measured["thumbnails"] += _store_thumbnails(page, Path(rel).stem)
        browser.close()
    print(f"measured at {WIDTH} px:", measured)
    assert measured["canvases"] and measured["images"], measured
    assert not outside, f"pages asked other sites for: {sorted(set(outside))[:20]}"
    assert not problems, "\n".join(problems)


def test_gallery_shows_every_figure_as_a_linked_thumbnail(site):
    """The gallery (scikit-learn's style) has a thumbnail of every notebook figure the browser
    check stored, of every explorer view and of every results/ figure; each links to a page
    of the site (and to the section the figure is in), and each notebook has its download."""
    import json
    html = _built(site)
    page = (html / "gallery.html").read_text(encoding="utf-8")
    cards = re.findall(r'<a class="rbmviz-thumb" href="([^"]+)"><img src="([^"]+)"', page)
    shown = {src for _, src in cards}
    expected = [f"_static/explorer/{p.name}" for p in ROOT.joinpath("docs/_static/explorer").glob("*.png")]
    for paper in (p for p in ROOT.joinpath("results").iterdir() if p.is_dir()):
        expected += [f"_static/figures/{paper.name}/{p.relative_to(paper).as_posix()}"
                     for p in paper.rglob("*.png")]
    listed = json.loads((ROOT / "docs/_static/gallery/figures.json").read_text(encoding="utf-8"))
    expected += [f"_static/gallery/{f['image']}" for f in listed]
    missing = [e for e in expected if e not in shown]
    assert not missing, f"not in the gallery: {missing}"
    assert {f["notebook"] for f in listed} == set(NOTEBOOKS), "a notebook without thumbnails"
    for href, src in cards:
        assert (html / src).is_file(), src
        target, _, anchor = href.partition("#")
        assert (html / target).is_file(), href
        if anchor:
            assert f'id="{anchor}"' in (html / target).read_text(encoding="utf-8"), href
    for name in NOTEBOOKS:
        assert re.search(rf'href="_downloads/[^"]+/{re.escape(name)}\.ipynb"', page), name
