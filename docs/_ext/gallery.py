"""The gallery page's thumbnails, in the manner of scikit-learn's example gallery.

Three grids of cards, each card a thumbnail that links to the page it comes from:

* every figure of every notebook, one section per notebook with its page and a download of its
  ``.ipynb``; the thumbnails (``docs/_static/gallery/*.png``) and their list
  (``docs/_static/gallery/figures.json``: notebook, image, the section of the page that shows the
  figure) are written by the docs test's browser check, which draws every page of the built site
  in Chromium (``tests/test_docs.py``), as the explorer's screenshots are written by its browser
  tests;
* every view of the explorer (``docs/_static/explorer/*.png``): a lesson's links to the lesson
  on the teaching path, a tab's to the explorer's page;
* every figure of ``results/``, linking to its paper's page.

:func:`write` makes ``docs/results/_thumbnails.md`` (generated, not in git), which
``docs/gallery.md`` includes.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
THUMBS = DOCS / "_static" / "gallery"
EXPLORER = DOCS / "_static" / "explorer"

#: the explorer's tab screenshots, in the order of its tabs, with what each shows
TABS = {"race": "the training race", "cd-bias": "the CD-bias tab",
        "tap-landscape": "the TAP landscape tab"}


def _card(href: str, src: str, caption: str) -> str:
    cap = html.escape(caption)
    return (f'<a class="rbmviz-thumb" href="{html.escape(href)}">'
            f'<img src="{html.escape(src)}" alt="{cap}" loading="lazy"/>'
            f'<span>{cap}</span></a>')


def _grid(cards: list[str]) -> list[str]:
    return ['<div class="rbmviz-gallery">', *cards, "</div>", ""]


def _title(notebook: Path) -> str:
    """The notebook's first heading (its page's title)."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return notebook.stem
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", "")).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return notebook.stem


def figures() -> list[dict]:
    """The notebook figures' thumbnails that exist: ``{notebook, image, section, title}``."""
    try:
        listed = json.loads((THUMBS / "figures.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [f for f in listed if (THUMBS / f["image"]).is_file()]


def _notebooks() -> list[str]:
    out = ["## Notebooks", "",
           "Every figure of every notebook, as its page shows it executed (the site's build runs "
           "each notebook in its quick form). A thumbnail opens the figure's section of the page; "
           "the `.ipynb` runs in Jupyter (`python3 -m pip install rbmviz`, then open it).", ""]
    shots = figures()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb"),
                     key=lambda p: (p.stem != "quickstart", p.stem)):
        out += [f"### {_title(nb)}", "",
                f"{{doc}}`its page <notebooks/{nb.stem}>` · "
                f"{{download}}`download {nb.name} <notebooks/{nb.name}>`", ""]
        cards = [_card(f"notebooks/{nb.stem}.html" + (f"#{f['section']}" if f.get("section") else ""),
                       f"_static/gallery/{f['image']}", f.get("title") or nb.stem)
                 for f in shots if f["notebook"] == nb.stem]
        out += _grid(cards) if cards else ["Its figures are on its page.", ""]
    return out


def _lesson_anchors() -> dict[str, str]:
    """``lesson-<key>.png`` -> the anchor of its lesson on the lessons page."""
    page = DOCS / "teaching" / "lessons.md"
    anchors, label = {}, None
    if page.is_file():
        for line in page.read_text(encoding="utf-8").splitlines():
            if m := re.match(r"\((lesson-[\w-]+)\)=", line):
                label = m.group(1)
            elif m := re.search(r"_static/explorer/(lesson-[\w-]+\.png)", line):
                anchors[m.group(1)] = label or ""
    return anchors


def _explorer() -> list[str]:
    out = ["## The explorer", "",
           "Its tabs, and each lesson of the teaching path as a class sees it at 1,280×800 "
           "(screenshots of the running explorer, taken by its browser tests). A tab's "
           "thumbnail opens {doc}`the explorer's page <explorer>`, a lesson's opens the "
           "lesson, with its link, its question and what to watch.", ""]
    cards = []
    for key, caption in TABS.items():
        if (EXPLORER / f"{key}.png").is_file():
            cards.append(_card("explorer.html", f"_static/explorer/{key}.png", caption))
    anchors = _lesson_anchors()
    lessons = DOCS / "teaching" / "lessons.md"
    titles = dict(re.findall(r"!\[([^\]]+)\]\(\.\./_static/explorer/(lesson-[\w-]+\.png)\)",
                             lessons.read_text(encoding="utf-8"))) if lessons.is_file() else {}
    titles = {v: k for k, v in titles.items()}
    for png in sorted(EXPLORER.glob("*.png")):
        if png.stem in TABS:
            continue
        anchor = anchors.get(png.name, "")
        href = "teaching/lessons.html" + (f"#{anchor}" if anchor else "") \
            if png.stem.startswith("lesson-") else "explorer.html"
        cards.append(_card(href, f"_static/explorer/{png.name}",
                           titles.get(png.name, png.stem.replace("-", " "))))
    return out + (_grid(cards) if cards else ["No screenshots of the explorer are here.", ""])


def _results(papers: dict[str, str], figures_by_paper: dict[str, list[tuple[str, str]]]) -> list[str]:
    out = ["## Results", "",
           "Every figure of the runs kept in the repository under `results/`, by paper; a "
           "thumbnail opens the paper's page, which puts the figure beside the paper's numbers "
           "and the scorecard.", ""]
    for paper, title in papers.items():
        figs = figures_by_paper.get(paper, [])
        if not figs:
            continue
        out += [f"### {title}", ""]
        out += _grid([_card(f"papers/{paper}.html", f"_static/figures/{paper}/{rel}", f"{rel}: {cap}")
                      for rel, cap in figs])
    return out


def write(papers: dict[str, str], figures_by_paper: dict[str, list[tuple[str, str]]],
          out: Path | None = None) -> Path:
    """Write the gallery's cards to ``docs/results/_thumbnails.md``.

    Parameters
    ----------
    papers : dict
        ``{paper folder: title}``.
    figures_by_paper : dict
        ``{paper folder: [(path of the PNG below results/<paper>/, caption), ...]}``; the PNGs
        are served from ``_static/figures/<paper>/`` (the caller copies them there).
    out : Path, optional
        Where to write it.

    Returns
    -------
    Path
        The file written.
    """
    out = Path(out or DOCS / "results" / "_thumbnails.md")
    text = "\n".join(_notebooks() + _explorer() + _results(papers, figures_by_paper)) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
    return out
