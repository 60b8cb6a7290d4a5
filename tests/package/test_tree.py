"""A fresh clone passes anywhere: the tree holds no symbolic link and no path
of the machine it was written on; pyproject.toml's package list names every package and
data folder of the tree (what it misses, the wheel misses); the sources compile with
warnings as errors on this Python (test_wheel.py does it on every claimed Python)."""
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("engine", "problems", "benchmarks", "cluster_configs", "stealsearch", "tests",
           "examples", "docs")


def tracked() -> list[tuple[str, str]]:
    """(mode, path) of every tracked file."""
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s"], capture_output=True,
                         text=True, check=True).stdout
    return [(line.split()[0], line.split("\t", 1)[1]) for line in out.splitlines()]


def test_no_tracked_symbolic_link():
    links = [path for mode, path in tracked() if mode == "120000"]
    assert not links, f"symbolic links break a clone on another machine: {links}"


# a path of one machine: its home, its work folders (a test's own temporary folders are
# made with tmp_path / tempfile, never named)
MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:work|root|home|Users|farm|tmp)/[\w.-]")


def test_no_absolute_machine_path_in_the_tree():
    found = []
    for mode, path in tracked():
        p = ROOT / path
        if mode == "120000" or p.suffix in (".png", ".gz", ".npz", ".npy", ".pdf") \
                or p.name == Path(__file__).name:
            continue
        try:
            text = p.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{path}:{n}: {line.strip()[:100]}")
    assert not found, "\n".join(found[:20])


def test_the_package_list_names_every_package_and_data_folder():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = config["package-dir"]               # import name -> folder
    listed = set(config["packages"])
    data = config.get("package-data", {})
    in_tree = set()
    for name, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            in_tree.add(".".join([name, *rel.parts]) if rel.parts else name)
    assert in_tree - listed == set(), "packages missing from pyproject.toml"
    for name in listed:                          # every listed one exists (code or data)
        top = max((m for m in mapping if name == m or name.startswith(m + ".")), key=len)
        folder = ROOT / mapping[top] / Path(*name[len(top):].strip(".").split(".")) \
            if name != top else ROOT / mapping[top]
        assert folder.is_dir(), f"{name}: no folder {folder}"
        if not (folder / "__init__.py").exists():     # a data folder: its files ship
            assert name in data and any(folder.glob(g) for g in data[name]), name


@pytest.mark.parametrize("folder", SOURCES[:-1])
def test_sources_compile_with_warnings_as_errors(folder):
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
            except (SyntaxError, Warning) as exc:
                bad.append(f"{path.relative_to(ROOT)}: {exc}")
    assert not bad, "\n".join(bad)


def test_requires_python_is_what_is_tested():
    # the claimed versions are the classifiers, which test_wheel.py installs the wheel on;
    # requires-python starts at the oldest of them, and this Python is one of them
    import wheel_check

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    minors = wheel_check.claimed_minors()
    assert minors == list(range(minors[0], minors[-1] + 1)) and len(minors) >= 2
    assert project["requires-python"] == f">=3.{minors[0]}"
    assert sys.version_info[0] == 3 and sys.version_info[1] in minors
