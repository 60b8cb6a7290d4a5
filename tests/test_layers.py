"""The layers of the tree: ``stealsearch.engine`` knows no problem and no application;
``stealsearch.problems`` know the engine but not the application.  And one namespace:
nothing imports the repository's folders by their bare names (``engine``, ``problems``,
``benchmarks``), which work from the repository root by accident and not at all once
installed.  Checked on the source, so that a lazy import inside a function cannot hide a
dependency."""
import ast
import gc
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: folder -> the only ``stealsearch.*`` sub-packages its modules may import
ALLOWED = {"engine": ("stealsearch.engine",),
           "problems": ("stealsearch.engine", "stealsearch.problems")}
BARE = ("engine", "problems", "benchmarks", "cluster_configs")


def _imports(path: Path):
    # No garbage collection while parsing: a finalizer run by the collector inside
    # compile() (an asyncio Task of an earlier test's client, logging "exception was
    # never retrieved") changes the recursion depth under CPython 3.11's AST
    # constructor, which then raises "SystemError: AST constructor recursion depth
    # mismatch" (seen once in a CI rehearsal, CPython 3.11.7).
    text = path.read_text()
    gc.disable()
    try:
        tree = ast.parse(text, str(path))
    finally:
        gc.enable()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def _within(name: str, packages) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_nothing_above_it(layer):
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}"
           for path in sorted((ROOT / layer).rglob("*.py"))
           for line, name in _imports(path)
           if name.split(".")[0] == "stealsearch" and not _within(name, ALLOWED[layer])]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("folder", ["engine", "problems", "benchmarks", "stealsearch",
                                    "tests", "examples"])
def test_nothing_imports_the_bare_folder_names(folder):
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}"
           for path in sorted((ROOT / folder).rglob("*.py"))
           for line, name in _imports(path)
           if name.split(".")[0] in BARE]
    assert not bad, "\n".join(bad)
