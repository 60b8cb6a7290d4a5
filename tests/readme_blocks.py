"""README.md's code blocks as a reader meets them, and what each one promises.

The README's quickstart (its section ``## Quickstart``) runs as written after ``pip
install``, in an empty folder: tests/package/wheel_check.py runs it in the installed
wheel's fresh virtual environment (its step ``readme``), and tests/test_readme.py waits
for that record.  Its blocks say what they print in their comments, and the check holds
them to it:

* an ``sh`` line's comment: every number it names appears in what the command printed,
  and so does each of the words of :data:`OUTCOME_WORDS` it uses;
* a ``python`` line that calls ``print(...)`` and ends in a comment: that comment is the
  line the script prints, the printed lines in order.

The README's other blocks only install (``pip install``) or build (``make``): the clone's
commands, which the suite covers elsewhere (tests/package, tests/test_demo.py).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
QUICKSTART = "## Quickstart"
#: words of an ``sh`` comment that name an outcome the command's output must show
OUTCOME_WORDS = ("match", "verified", "optimal", "exhausted", "interrupted", "found")
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def section(text: str, heading: str) -> str:
    """The text of the ``##`` section ``heading`` (up to the next ``##`` heading)."""
    start = text.index(heading + "\n")
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end + 1]


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block of ``text``, in order."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(text)]


def quickstart(readme: Path = README) -> list[tuple[str, str]]:
    """The quickstart's blocks, in order."""
    return blocks(section(readme.read_text(), QUICKSTART))


def sh_lines(body: str) -> list[tuple[list[str], str]]:
    """(argv, comment) of every command of an ``sh`` block."""
    out = []
    for line in body.splitlines():
        argv = shlex.split(line, comments=True)
        if argv:
            comment = line.partition("#")[2].strip() if "#" in line else ""
            out.append((argv, comment))
    return out


def sh_promises(comment: str) -> list[str]:
    """What an ``sh`` line's comment says its output shows: its numbers and outcomes."""
    numbers = [n.rstrip(",") for n in _NUMBER.findall(comment)]
    words = [w for w in OUTCOME_WORDS if re.search(rf"\b{w}\b", comment)]
    return numbers + words


def missing_promises(comment: str, output: str) -> list[str]:
    """The promises of ``comment`` that ``output`` does not show."""
    return [p for p in sh_promises(comment) if p not in output]


def python_prints(body: str) -> list[str]:
    """The lines a ``python`` block says it prints: the comments of its ``print`` lines."""
    found = []
    for line in body.splitlines():
        code, _, comment = line.partition("#")
        if re.search(r"\bprint\(", code) and comment.strip():
            found.append(comment.strip())
    return found
