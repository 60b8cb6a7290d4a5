"""The layers of the tree, checked on the source (a lazy import inside a function counts:
it cannot hide a dependency).

* ``stealsearch.engine`` knows no problem and no application; ``stealsearch.problems``
  know the engine but not the application.
* Inside the engine, five layers, each importing only itself and those below it::

      app         command-line plumbing, sweeps, honest timings     engine/app/
      solve       solve() and resume(): the choice of a transport   engine/solve.py
      transports  where a search runs: sequential, lanes, ramp-up,  engine/transports/
                  the Dask workers
      deploy      processes, clusters, signals, usable cores, the   engine/deploy/
                  dashboard page
      core        the search and its records: contract, tiers,      engine/core/
                  stacks, stealstack, worker, epochs, loop, result

  and no two modules import each other, directly or round a circle.
* One namespace: nothing imports the repository's folders by their bare names
  (``engine``, ``problems``, ``benchmarks``), which work from the repository root by
  accident and not at all once installed.
"""
import ast
import gc
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: folder -> the only ``stealsearch.*`` sub-packages its modules may import
ALLOWED = {"engine": ("stealsearch.engine",),
           "problems": ("stealsearch.engine", "stealsearch.problems")}
BARE = ("engine", "problems", "benchmarks", "cluster_configs")
#: the engine's layers, lowest first (engine/__init__.py, the public API, is above all)
ENGINE_LAYERS = ("core", "deploy", "transports", "solve", "app")


def _parse(path: Path) -> ast.AST:
    # No garbage collection while parsing: a finalizer run by the collector inside
    # compile() (an asyncio Task of an earlier test's client, logging "exception was
    # never retrieved") changes the recursion depth under CPython 3.11's AST
    # constructor, which then raises "SystemError: AST constructor recursion depth
    # mismatch" (seen once in a CI rehearsal, CPython 3.11.7).
    text = path.read_text()
    gc.disable()
    try:
        return ast.parse(text, str(path))
    finally:
        gc.enable()


def _imports(path: Path):
    for node in ast.walk(_parse(path)):
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


# -- inside the engine ------------------------------------------------------------------
def _engine_modules() -> dict[str, Path]:
    """``stealsearch.engine...`` dotted name -> its file."""
    out = {}
    for path in sorted((ROOT / "engine").rglob("*.py")):
        parts = path.relative_to(ROOT / "engine").with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(("stealsearch", "engine") + parts)] = path
    return out


def _engine_imports(name: str, path: Path, modules) -> set[str]:
    """The engine modules ``name`` imports: a ``from X import y`` names module X.y when
    y is a module, else X; relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            subs = {f"{source}.{a.name}" for a in node.names} & set(modules)
            found.update(subs or ({source} & set(modules)))
    found.discard(name)
    return found


def _layer(name: str) -> int:
    """The engine layer of a dotted module name (the API package is above them all)."""
    parts = name.split(".")[2:]
    if not parts:
        return len(ENGINE_LAYERS)
    return ENGINE_LAYERS.index(parts[0])


def test_every_engine_module_is_in_a_layer():
    strays = [str(p.relative_to(ROOT)) for n, p in _engine_modules().items()
              if n.split(".")[2:3] and n.split(".")[2] not in ENGINE_LAYERS]
    assert not strays, f"engine modules outside the layers {ENGINE_LAYERS}: {strays}"


def test_engine_layers_import_only_downwards():
    modules = _engine_modules()
    bad = []
    for name, path in modules.items():
        for dep in sorted(_engine_imports(name, path, modules)):
            if _layer(dep) > _layer(name):
                bad.append(f"{path.relative_to(ROOT)} ({ENGINE_LAYERS[_layer(name)]}) imports "
                           f"{dep} ({ENGINE_LAYERS[_layer(dep)]})")
    assert not bad, "\n".join(bad)


def test_no_two_engine_modules_import_each_other():
    """No circle of imports among the engine's modules (a package's ``__init__`` that
    re-exports its modules' names is not part of one: it only gathers them)."""
    modules = _engine_modules()
    packages = {n for n, p in modules.items() if p.name == "__init__.py"}
    graph = {n: _engine_imports(n, p, modules) - packages
             for n, p in modules.items() if n not in packages}
    # Tarjan's strongly connected components
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, f"modules that import each other: {circles}"


def test_the_checks_see_an_upward_import_and_a_circle(tmp_path, monkeypatch):
    """The two checks above on a made-up engine: they must fail where they should."""
    for rel, text in {"engine/__init__.py": "",
                      "engine/core/__init__.py": "", "engine/app/__init__.py": "",
                      "engine/core/a.py": "def f():\n    from ..app import b\n",
                      "engine/app/b.py": "from ..core import a\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    with pytest.raises(AssertionError, match="core/a.py .core. imports stealsearch.engine.app.b"):
        test_engine_layers_import_only_downwards()
    with pytest.raises(AssertionError, match="import each other"):
        test_no_two_engine_modules_import_each_other()
