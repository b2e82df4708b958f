"""Serve Panel's stylesheets from the built site instead of Panel's CDN.

Executed notebooks embed Bokeh documents whose Panel components import stylesheets from
``https://cdn.holoviz.org/panel/<version>/dist/…`` (BokehJS itself is inline).  Offline those
imports fail.  After the HTML is written, every such URL is replaced by a path relative to the
page, pointing at a copy of the same file from the installed Panel's ``dist`` directory under
``_static/panel/``; a file the installed Panel does not have is left pointing at the CDN (and
the docs test reports it).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

CDN = re.compile(r"https://cdn\.holoviz\.org/panel/[^/\"'\s]+/dist/([^\"'\s?)\\]+)(\?v=[^\"'\s)\\]*)?")


CSS_URL = re.compile(r"url\(['\"]?(?!data:|https?:|#)([^'\")]+)['\"]?\)")


def _copy(dist: Path, static: Path, rel: str) -> None:
    """Copy ``dist/rel`` to ``static/rel``, with the files a stylesheet refers to by relative
    ``url(...)`` (Panel's loading spinners)."""
    dst = static / rel
    if dst.exists():
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(dist / rel, dst)
    if dst.suffix == ".css":
        for ref in CSS_URL.findall(dst.read_text(encoding="utf-8")):
            target = (Path(rel).parent / ref.split("?")[0]).as_posix()
            parts: list[str] = []
            for part in target.split("/"):
                if part == "..":
                    if parts:
                        parts.pop()
                elif part not in ("", "."):
                    parts.append(part)
            target = "/".join(parts)
            if (dist / target).is_file():
                _copy(dist, static, target)


def _rewrite(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    import panel
    dist = Path(panel.__file__).parent / "dist"
    out = Path(app.outdir)
    static = out / "_static" / "panel"
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if "cdn.holoviz.org/panel/" not in text:
            continue
        prefix = "../" * (len(page.relative_to(out).parts) - 1) + "_static/panel/"

        def local(m: re.Match) -> str:
            rel = m.group(1)
            src = dist / rel
            if not src.is_file():
                return m.group(0)
            _copy(dist, static, rel)
            return prefix + rel

        page.write_text(CDN.sub(local, text), encoding="utf-8")


def setup(app):
    app.connect("build-finished", _rewrite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
