"""The layers of the tree: ``engine`` knows no problem and no application; ``problems``
know the engine but not the application.  Checked on the source, so that a lazy
import inside a function cannot hide a dependency."""
import ast
import gc
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"engine": ("problems", "stealsearch"), "problems": ("stealsearch",)}


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


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer):
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}"
           for path in sorted((ROOT / layer).rglob("*.py"))
           for line, name in _imports(path)
           if name.split(".")[0] in FORBIDDEN[layer]]
    assert not bad, "\n".join(bad)
