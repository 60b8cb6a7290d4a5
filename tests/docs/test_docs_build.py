"""The documentation site builds with warnings as errors (what ``make docs`` does), and it
documents everything it says it does: every command of the command line, the public API,
every JSON schema, cluster configuration, example and benchmark section.

The build needs the docs extra (Sphinx, MyST, the PyData theme, sphinx-argparse), which
``make test`` installs with the test extra; without it the build test skips, naming the
extra.  The checks of what the pages include read the sources and need nothing.
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import docpages

ROOT = docpages.ROOT
DOCS = docpages.DOCS
NEEDED = ("sphinx", "myst_parser", "pydata_sphinx_theme", "sphinxarg")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the docs extra is not installed ({', '.join(missing)}): "
                    "pip install -e '.[docs]' (make test does)")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                           "-b", "html", "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-5000:]
    return out / "html"


def test_the_site_builds_with_warnings_as_errors(site):
    for page in docpages.pages():
        html = site / page.relative_to(DOCS).with_suffix(".html")
        assert html.exists(), html
    images = {p.name for p in (site / "_images").iterdir()}
    assert any(name.startswith("stealstack") for name in images), images


def _commands(parser: argparse.ArgumentParser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path + (name,)
                yield from _commands(sub, path + (name,))


def test_every_command_of_the_command_line_has_its_section(site):
    from stealsearch.cli import build_parser

    html = (site / "reference" / "cli.html").read_text()
    commands = list(_commands(build_parser()))
    assert len(commands) >= 20
    missing = [" ".join(c) for c in commands if f'id="stealsearch-{"-".join(c)}"' not in html]
    assert not missing, missing


def test_the_public_api_is_documented(site):
    import stealsearch

    html = (site / "reference" / "api.html").read_text()
    names = [n for n in stealsearch.__all__ if n[0].isupper() and not n.isupper()
             or n in ("solve", "resume", "dask_client", "check_problem")]
    missing = [n for n in names if f'id="stealsearch.{n}"' not in html]
    assert not missing, missing


# -- what the pages include (the sources; no build needed) ------------------------------------

def _included(page: str, pattern: str) -> list[str]:
    return re.findall(pattern, (DOCS / page).read_text())


def test_every_benchmark_section_is_in_the_record_in_make_bench_order():
    """benchmarks/results/<name>.md, in the order ``make bench`` assembles RESULTS.md:
    a new section fails here until the record page includes it."""
    from stealsearch.benchmarks.run_all import ORDER

    present = {p.stem for p in (ROOT / "benchmarks" / "results").glob("*.md")}
    expected = [n for n in ORDER if n in present] + sorted(present - set(ORDER))
    shown = list(dict.fromkeys(_included("explanation/benchmark-record.md",
                                         r"\{include\} \.\./\.\./benchmarks/results/(\w+)\.md")))
    assert shown == expected


def test_every_schema_cluster_config_and_example_is_shown():
    pairs = (("reference/schemas.md", r"schemas/([\w]+)\.schema\.json", "stealsearch/schemas",
              "*.schema.json", lambda p: p.name.split(".")[0]),
             ("reference/cluster-configs.md", r"cluster_configs/(\w+)\.yaml", "cluster_configs",
              "*.yaml", lambda p: p.stem),
             ("reference/examples.md", r"examples/(\w+)\.py", "examples", "*.py",
              lambda p: p.stem))
    for page, pattern, folder, glob, name in pairs:
        files = {name(p) for p in (ROOT / folder).glob(glob) if p.name != "__init__.py"}
        assert set(_included(page, pattern)) == files, page
