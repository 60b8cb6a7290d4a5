"""README.md, the landing page: its quickstart runs as written after ``pip install`` in an
empty folder, and it stays a landing page.

The quickstart runs in the installed wheel's fresh virtual environment, in a folder of its
own (tests/package/wheel_check.py's step ``readme``, in the background process that
tests/conftest.py starts for the ``wheel_check`` fixture); every number and outcome its
comments promise is checked against what the commands print (tests/readme_blocks.py).
The README's other blocks install or build from a clone (``pip install``, ``make``),
which tests/package and tests/test_demo.py cover.  The rest here reads the file: its
length, its links, and nothing a pip user lacks.
"""
import re
import sys
from pathlib import Path

import pytest

import readme_blocks

sys.path.insert(0, str(Path(__file__).parent / "package"))
from wheel_check import wait_for_record  # noqa: E402  (tests/package/, the check's module)

ROOT = readme_blocks.ROOT
TEXT = readme_blocks.README.read_text()
#: the whole check reaches the quickstart after its build and install (~1-2 min on a
#: quiet 2-core machine); the wait allows for a loaded one
WAIT = 1200
#: folders of the repository that an installed package does not have
CLONE_ONLY = ("tests/", "examples/", "benchmarks/", "engine/", "problems/", "cluster_configs/",
              "stealsearch/")


def test_the_readme_is_a_landing_page():
    lines = TEXT.splitlines()
    assert len(lines) <= 200, len(lines)
    headings = [ln for ln in lines if ln.startswith("## ")]
    for want in ("## Install", "## Quickstart", "## How it works", "## The papers",
                 "## Documentation"):
        assert want in headings, (want, headings)
    assert headings.index("## Install") < headings.index("## Quickstart")


def test_the_readme_names_no_seed_issue_or_source_path():
    """Seed and issue numbers are the project's bookkeeping; source paths are not where an
    installed user is (links into docs/ and the root's LICENSE and CHANGELOG.md are for a
    reader of the repository, and are checked below)."""
    assert not re.search(r"\bseeds?\s+\d{3}\b|\(seed\s|\bissues?\s+#?\d+|#\d+\b", TEXT, re.I)
    prose = re.sub(r"\]\([^)]*\)", "]", TEXT)        # link targets are checked below
    for folder in CLONE_ONLY:
        assert not re.search(rf"(?<![\w.-]){re.escape(folder)}", prose), folder


def test_every_link_of_the_readme_leads_somewhere():
    targets = re.findall(r"\]\(([^)\s]+)\)", TEXT)
    local = [t for t in targets if not re.match(r"https?://", t)]
    assert len(local) >= 10
    for target in local:
        path, _, anchor = target.partition("#")
        assert (ROOT / path).is_file(), target
        if anchor:
            heading = anchor.replace("-", " ")
            text = (ROOT / path).read_text().lower()
            assert re.search(rf"^#+ {re.escape(heading)}$", text, re.M), target
        if path.startswith("docs/") and path.endswith(".md"):
            assert "_static" not in path and not path.startswith("docs/_"), target


def test_the_quickstart_blocks_run_and_promise_something():
    """What the installed-package check will run: only the package's own command and
    scripts, each with something to check."""
    found = readme_blocks.quickstart()
    languages = [lang for lang, _ in found]
    assert languages.count("sh") >= 1 and languages.count("python") >= 2, languages
    for language, body in found:
        assert language in ("sh", "python"), language
        if language == "sh":
            for argv, comment in readme_blocks.sh_lines(body):
                assert argv[0] == "stealsearch", argv
                assert readme_blocks.sh_promises(comment), (argv, comment)
        else:
            assert readme_blocks.python_prints(body), body
    others = readme_blocks.blocks(TEXT.replace(readme_blocks.section(TEXT, "## Quickstart"), ""))
    for language, body in others:
        for line in body.splitlines():
            words = line.split("#")[0].split()
            assert not words or words[0] in ("pip", "make"), line


def test_the_promises_are_read_as_the_readme_means_them():
    """The reading of the comments, on the README's own forms: a promise not shown fails."""
    comment = "4,130,071 nodes -> match (the published size)"
    assert readme_blocks.sh_promises(comment) == ["4,130,071", "match"]
    assert readme_blocks.missing_promises(comment, "count 4,130,071\n -> match") == []
    assert readme_blocks.missing_promises(comment, "count 4,130,070\n -> match") == ["4,130,071"]
    assert readme_blocks.python_prints("x = 1   # not printed\nprint(x)   # 1\n") == ["1"]


@pytest.mark.timeout(WAIT + 60)
def test_the_quickstart_runs_as_written_after_pip_install(wheel_check):
    record = wait_for_record(wheel_check, lambda r: r["step"] == "readme",
                             "a run of the README's quickstart", WAIT)
    assert record["ok"], record["detail"]
