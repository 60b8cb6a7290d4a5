"""Sphinx configuration of the stealsearch documentation (``make docs``).

The pages are MyST Markdown; the API reference is autodoc over the docstrings (numpy
style, through napoleon), the command-line reference is sphinx-argparse over
``stealsearch.cli.build_parser``.  Every ``sh`` and ``python`` block of every page is run
by ``tests/docs/test_docs_blocks.py``; ``tests/docs/test_docs_build.py`` builds the site
with warnings as errors.
"""
from importlib import metadata

project = "stealsearch"
author = "the stealsearch authors"
copyright = "the stealsearch authors"     # noqa: A001 (Sphinx's name)
try:
    release = metadata.version("stealsearch")
except metadata.PackageNotFoundError:      # a source tree that was never installed
    release = "0+unknown"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# MyST: ::: fences for notes and warnings; anchors for the headings of every page, so
# that [text](page.md#a-heading) links are checked by the build
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
# The benchmark record includes the sections the benchmarks write
# (benchmarks/results/*.md), some of which step from a level-2 heading to a level-4 one.
suppress_warnings = ["myst.header"]

# the docstrings are numpy style (Parameters / Returns / Examples sections)
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# "a, b : type" stays one entry (the default repeats the text once per name)
napoleon_use_param = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "pydata_sphinx_theme"
html_title = f"stealsearch {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
