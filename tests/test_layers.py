"""The layers of the tree: ``engine`` knows no problem and no application; ``problems``
know the engine but not the application.  Checked on the source, so that a lazy
import inside a function cannot hide a dependency."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"engine": ("problems", "stealsearch"), "problems": ("stealsearch",)}


def _imports(path: Path):
    tree = ast.parse(path.read_text(), str(path))
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
