"""The documentation's pages as a reader meets them: their code blocks, in order.

A page is MyST Markdown (docs/**/*.md).  Its fenced blocks are of five kinds:

* ``sh`` -- commands to type, one per line (``#`` starts a comment);
* ``python`` without a caption -- a script to run as it stands;
* a block whose caption names a file (``:caption: knapsack.py``), or a
  ``{literalinclude}`` with such a caption -- a file the reader saves under that name;
  later blocks of the page use it (``python knapsack.py``);
* ``text`` with the caption ``output`` -- what the block just before it prints;
* anything else (``text``, ``yaml``, ``toml``, ``json``, a bare fence) -- shown only.

``{include}`` directives bring other Markdown files into a page; their fences are part of
the site too (:func:`included_files`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: languages of blocks that are run (any other language is shown only)
RUN = ("sh", "python")
#: languages a shown block may have: a block in another language (``bash``, ``console``,
#: ``pycon``, ...) would look runnable and escape the test, so it is refused
SHOWN = ("", "text", "yaml", "toml", "json")
#: a caption that names a file: no spaces, a name and an extension
FILE_NAME = re.compile(r"^[\w.-]+\.\w+$")

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


@dataclass
class Block:
    page: Path
    line: int               # of the opening fence, 1-based
    kind: str               # "sh", "python", "file", "output" or "shown"
    language: str
    text: str
    caption: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """Every page of the site, in a stable order."""
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def _fences(text: str):
    """(line, info, options, body) of every top-level fence of ``text``."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, fence, info = i, m["fence"], m["info"].strip()
        i += 1
        body = []
        while i < len(lines):
            close = lines[i].strip()
            if close and set(close) == {fence[0]} and len(close) >= len(fence):
                break
            body.append(lines[i])
            i += 1
        i += 1
        options = {}
        if info.startswith("{"):
            while body and _OPTION.match(body[0]):
                o = _OPTION.match(body.pop(0))
                options[o["key"]] = o["value"].strip()
            if body and not body[0].strip():
                body.pop(0)
        yield start + 1, info, options, "\n".join(body) + ("\n" if body else "")


def blocks(page: Path) -> list[Block]:
    """The code blocks of one page, in order."""
    found = []
    for line, info, options, body in _fences(page.read_text()):
        caption = options.get("caption")
        if info.startswith("{"):
            directive, _, argument = info[1:].partition("}")
            argument = argument.strip()
            if directive == "literalinclude":
                if caption and FILE_NAME.match(caption):
                    body = (page.parent / argument).read_text()
                    found.append(Block(page, line, "file", "", body, caption))
                continue
            if directive != "code-block":
                continue            # another directive (toctree, eval-rst, figure, ...)
            language = argument
        else:
            language = info.split()[0] if info else ""
        if caption and FILE_NAME.match(caption):
            kind = "file"
        elif caption == "output":
            kind = "output"
        elif language in RUN:
            kind = language
        else:
            kind = "shown"
        found.append(Block(page, line, kind, language, body, caption))
    return found


def included_files(page: Path) -> list[Path]:
    """The Markdown files a page brings in with ``{include}``."""
    return [(page.parent / info.partition("}")[2].strip()).resolve()
            for _, info, _, _ in _fences(page.read_text()) if info.startswith("{include}")]


def commands(block: Block) -> list[tuple[int, str]]:
    """(line, command) of an ``sh`` block: comments dropped, ``\\`` continuations joined."""
    out, pending, first = [], "", None
    for n, raw in enumerate(block.text.splitlines(), block.line + 1):
        line = raw.rstrip()
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if first is None:
            first = n
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append((first, pending + line))
        pending, first = "", None
    return out
