"""The explorer's help pages: Markdown files shipped inside the package
(``rbmviz/app/help/*.md``), shown in a collapsed card at the bottom of each tab.  The app
links to nothing outside rbmviz."""
from __future__ import annotations

from importlib import resources

import panel as pn

#: page name → card title
PAGES = {"race": "Help: the training race", "cd_bias": "Help: the CD bias and its bounds",
         "tap": "Help: TAP machines and their landscape"}


def help_text(page: str) -> str:
    """The Markdown text of a help page.

    Parameters
    ----------
    page : str
        The page's key in :data:`PAGES`: ``"race"``, ``"cd_bias"`` or ``"tap"``.

    Returns
    -------
    str
        The page's Markdown (``rbmviz/app/help/<page>.md``).

    Raises
    ------
    ValueError
        For a page that is not a key of :data:`PAGES`, naming the keys.
    """
    if page not in PAGES:
        raise ValueError(f"page must be one of {list(PAGES)}, got {page!r}")
    return resources.files(__package__).joinpath("help", f"{page}.md").read_text(encoding="utf-8")


def help_card(page: str) -> pn.Card:
    """A collapsed card showing a help page, at the bottom of the tab it explains.

    Parameters
    ----------
    page : str
        A key of :data:`PAGES`, as for :func:`help_text`.

    Returns
    -------
    panel.Card
        The card (collapsed), titled by :data:`PAGES`.

    Raises
    ------
    ValueError
        For an unknown page (from :func:`help_text`).
    """
    return pn.Card(pn.pane.Markdown(help_text(page), sizing_mode="stretch_width"),
                   title=PAGES[page], collapsed=True, sizing_mode="stretch_width")
