"""``.. rbmviz-cli::`` — the command-line reference, generated from the argument parsers.

Every subcommand of ``rbmviz`` (and every experiment of ``rbmviz reproduce``) gets a section
with its one-line summary and its complete ``--help`` text, as argparse prints it; ``rbmviz
explore`` hands its arguments to the explorer server's own parser, whose help is shown instead.
The page cannot drift from the command: it is rebuilt from the same parsers on every build.
"""
from __future__ import annotations

import argparse
import os
from contextlib import contextmanager

from docutils.parsers.rst import Directive

WIDTH = "88"


@contextmanager
def _columns(width: str):
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help or "" for a in action._choices_actions}
    return {}


def commands() -> list[tuple[str, str, str, int]]:
    """``(command line, summary, help text, depth)`` of ``rbmviz`` and all its subcommands."""
    from rbmviz.app.serve import _parser as explore_parser
    from rbmviz.cli import build_parser

    out = []
    with _columns(WIDTH):
        top = build_parser()
        out.append(("rbmviz", "", top.format_help(), 0))
        summaries = _summaries(top)
        for name, sub in _subparsers(top).items():
            text = explore_parser().format_help() if name == "explore" else sub.format_help()
            out.append((f"rbmviz {name}", summaries.get(name, ""), text, 1))
            sub_summaries = _summaries(sub)
            for exp, p in _subparsers(sub).items():
                out.append((f"rbmviz {name} {exp}", sub_summaries.get(exp, ""), p.format_help(), 2))
    return out


class RbmvizCli(Directive):
    has_content = False

    def run(self):
        underline = {0: "-", 1: "-", 2: "~"}
        lines = []
        for cmd, summary, text, depth in commands():
            if depth == 0:
                lines += ["", ".. code-block:: text", ""]
                lines += ["   " + ln for ln in text.rstrip().splitlines()]
                continue
            title = f"``{cmd}``"
            lines += ["", f".. _cli-{cmd.replace(' ', '-')}:", "", title, underline[depth] * len(title), ""]
            if summary:
                lines += [summary[0].upper() + summary[1:] + ".", ""]
            lines += [".. code-block:: text", ""]
            lines += ["   " + ln if ln.strip() else "" for ln in text.rstrip().splitlines()]
        self.state_machine.insert_input(lines, "rbmviz-cli")
        return []


def setup(app):
    app.add_directive("rbmviz-cli", RbmvizCli)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
