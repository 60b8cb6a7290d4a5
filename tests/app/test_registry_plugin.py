"""The registry of problem packages (stealsearch/registry.py): its rules on made-up entry
points, our own declarations, a start that loads no problem, and a third party's plug-in
installed for real.

The plug-in test writes a small package into a temporary folder (subset sum on the
engine's reference tier: a pyproject.toml with the entry point, ``cli.py``, ``demo.py``,
``sweep_items.py``), installs it with pip, offline, into a temporary virtual environment
that sees this one's packages (a ``.pth`` file), and runs ``python -m stealsearch`` there:
the plug-in's command, its JSON, its sweep item kinds, its place in the order; then a
broken plug-in and one that clashes with ours, beside it.  Every answer is checked
against brute force over all subsets, here.
"""
import csv
import itertools
import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
import types
from pathlib import Path

import pytest

import stealsearch
from stealsearch import registry
from test_json_schema import check_engine_json, schema_of

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300


# -- the rules, on made-up entry points ---------------------------------------------------

def _ep(name, value, dist="ss-other", version="1.0"):
    return types.SimpleNamespace(name=name, value=value,
                                 dist=types.SimpleNamespace(name=dist, version=version))


OUR_EPS = [_ep(n, f"stealsearch.problems.{n}", "stealsearch", "0.1")
           for n in ("twolevel", "uts", "liquid", "clique", "hrelation", "commclust")]


def test_ours_in_the_tour_order_then_plug_ins_by_name():
    accepted, refusals = registry.accept(
        [_ep("zeta", "zeta_pkg"), *OUR_EPS, _ep("alpha", "alpha_pkg", "ss-alpha")])
    assert refusals == []
    assert [p.name for p in accepted] == list(registry.TOUR) + ["alpha", "zeta"]
    assert [p.ours for p in accepted] == [True] * 6 + [False] * 2
    assert accepted[-2].distribution == "ss-alpha 1.0" and accepted[-2].package == "alpha_pkg"


@pytest.mark.parametrize("ep, why", [
    (_ep("uts", "mine"), "'uts' is one of stealsearch's own problems"),
    (_ep("sweep", "mine"), "'sweep' is a stealsearch command"),
    (_ep("resume", "mine"), "'resume' is a stealsearch command"),
    (_ep("Sub Sum", "mine"), "not a lower-case Python identifier"),
    (_ep("sub-sum", "mine"), "not a lower-case Python identifier"),
    (_ep("subsum", "mine:main"), "names 'mine:main', not a package"),
    (_ep("clique_plus", "mine"), "its name extends 'clique'"),
])
def test_a_refused_entry_point_is_one_line_and_the_rest_stays(ep, why):
    accepted, refusals = registry.accept([*OUR_EPS, ep, _ep("fine", "fine_pkg")])
    assert [p.name for p in accepted] == list(registry.TOUR) + ["fine"]
    assert len(refusals) == 1 and "\n" not in refusals[0], refusals
    assert refusals[0].startswith(f"plug-in '{ep.name}' ") and why in refusals[0], refusals


def test_a_name_two_distributions_declare_is_refused_for_both():
    accepted, refusals = registry.accept(
        [*OUR_EPS, _ep("subsum", "a_pkg", "ss-a"), _ep("subsum", "b_pkg", "ss-b", "2.0")])
    assert [p.name for p in accepted] == list(registry.TOUR)
    assert refusals == ["plug-in 'subsum' refused: declared by ss-a 1.0 and by ss-b 2.0"]


def test_without_our_metadata_ours_are_the_packages_on_disk():
    """A source tree never installed (or installed from an older pyproject.toml): ours
    are found on disk, in the same order, and a plug-in still comes after them."""
    accepted, refusals = registry.accept([_ep("subsum", "mine")],
                                         registry._our_packages_on_disk)
    assert refusals == []
    assert [p.name for p in accepted] == list(registry.TOUR) + ["subsum"]
    assert all(p.ours and p.package == f"stealsearch.problems.{p.name}" for p in accepted[:-1])
    # with our entry points present, the disk is not looked at
    assert registry.accept(OUR_EPS, lambda: pytest.fail("looked on disk"))[1] == []


# -- our own declarations ----------------------------------------------------------------

def test_our_entry_points_declare_every_problem_package_and_each_has_its_faces():
    """pyproject.toml's entry points, the installed metadata and the folders of problems/
    name the same packages; each has its command, its tour and its item kinds, named
    after it."""
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "entry-points"][registry.GROUP]
    on_disk = sorted(p.parent.name for p in (ROOT / "problems").glob("*/__init__.py"))
    installed = registry.problems()
    assert sorted(declared) == on_disk == sorted(p.name for p in installed)
    assert all(declared[p.name] == p.package and p.ours for p in installed)
    assert [p.name for p in installed] == list(registry.TOUR)
    kinds = registry.item_kinds()
    for p in installed:
        assert callable(p.face(registry.CLI).register), p
        assert callable(p.face(registry.DEMO).tour), p
        mine = registry.kinds_of(p, p.face(registry.SWEEP_ITEMS))
        assert p.name in mine and mine.items() <= kinds.items(), p
    assert [name for name, _ in registry.tours()] == list(registry.TOUR)


def test_the_reproduce_seeds_are_registered_problems_of_ours():
    from stealsearch.reproduce import SEEDS

    assert set(SEEDS.values()) <= {p.name for p in registry.problems() if p.ours}


def test_the_commands_are_the_tour_ours_in_order_then_the_rest():
    """``stealsearch``'s commands: the tour, every problem's own in the registry's order
    (each package's ``register`` asked here, on a recorder), then the built-in ones."""
    import argparse

    from stealsearch.cli import build_parser

    class Recorder:
        names: list = []

        def add_parser(self, name, **kwargs):
            self.names.append(name)
            return argparse.ArgumentParser(prog=name)

    for p in registry.problems():
        p.face(registry.CLI).register(Recorder())
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == ["demo", *Recorder.names, "sweep", "reproduce", "resume",
                                 "check-proof"]
    assert set(registry.BUILTIN_COMMANDS) == {"demo", "sweep", "reproduce", "resume"}
    assert Recorder.names[:2] == ["uts", "clique"] and "hrel" in Recorder.names


def test_a_start_loads_no_problem_numba_or_dask():
    """``stealsearch --version`` and reading the registry import no problem package, and
    neither numpy, numba nor Dask (the registry is data until a face is needed; the
    engine package loads its names on use)."""
    code = textwrap.dedent("""
        import sys
        from stealsearch.cli import main
        assert main(["--version"]) == 0
        from stealsearch import registry
        assert [p.name for p in registry.problems()][:1] == ["uts"]
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "numpy",
                       "dask", "distributed") or m.startswith("stealsearch.problems."))
        print(heavy)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"stealsearch {stealsearch.__version__}", "[]"], \
        proc.stdout


# -- a third party's plug-in, installed ----------------------------------------------------

#: the plug-ins' build backend (PEP 517, in their own tree): a pure-Python wheel from
#: pyproject.toml's name, version, entry points and package list, so that pip builds them
#: offline with nothing installed for it (setuptools is not in every venv, and before
#: version 70 it needs the wheel package to build one)
BACKEND = '''
    import base64
    import hashlib
    import os
    import tomllib
    import zipfile
    from pathlib import Path


    def get_requires_for_build_wheel(config_settings=None):
        return []


    def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
        meta = tomllib.loads(Path("pyproject.toml").read_text())
        project, packages = meta["project"], meta["tool"]["tiny-backend"]["packages"]
        stem = f"{project['name'].replace('-', '_')}-{project['version']}"
        info = f"{stem}.dist-info"
        files = {path.as_posix(): path.read_bytes()
                 for package in packages for path in sorted(Path(package).rglob("*.py"))}
        files[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\\nName: {project['name']}\\n"
                                     f"Version: {project['version']}\\n").encode()
        files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\\nGenerator: tiny-backend\\n"
                                  b"Root-Is-Purelib: true\\nTag: py3-none-any\\n")
        files[f"{info}/entry_points.txt"] = "".join(
            f"[{group}]\\n" + "".join(f"{k} = {v}\\n" for k, v in table.items())
            for group, table in project.get("entry-points", {}).items()).encode()
        record = [f"{name},sha256=" + base64.urlsafe_b64encode(
                      hashlib.sha256(data).digest()).rstrip(b"=").decode() + f",{len(data)}"
                  for name, data in files.items()]
        files[f"{info}/RECORD"] = "\\n".join(record + [f"{info}/RECORD,,", ""]).encode()
        wheel = f"{stem}-py3-none-any.whl"
        with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
            for name, data in files.items():
                z.writestr(name, data)
        return wheel
    '''


def _pyproject(name: str, entry_points: dict, package: str) -> str:
    lines = ["[build-system]", "requires = []", 'build-backend = "tiny_backend"',
             'backend-path = ["."]', "", "[project]", f'name = "{name}"', 'version = "0.1"', "",
             f'[project.entry-points."{registry.GROUP}"]']
    lines += [f'{k} = "{v}"' for k, v in entry_points.items()]
    lines += ["", "[tool.tiny-backend]", f'packages = ["{package}"]', ""]
    return "\n".join(lines)


PLUGIN = {
    "pyproject.toml": _pyproject("ss-subsetsum", {"subsetsum": "ss_subsetsum"}, "ss_subsetsum"),
    "tiny_backend.py": BACKEND,
    "ss_subsetsum/__init__.py": '''
        """Subset sum as a stealsearch plug-in: the largest subset sum within a capacity,
        or how many subsets have exactly that sum."""
        ''',
    "ss_subsetsum/problem.py": '''
        import random

        from stealsearch import InputError, PythonProblem, SolutionError


        class SubsetSum(PythonProblem):
            name = "subsetsum"

            def __init__(self, weights, capacity, count=False):
                super().__init__(mode="enumerate" if count else "optimise")
                if not weights or min(weights) <= 0 or capacity < 0:
                    raise InputError("subsetsum: weights must be positive, the capacity >= 0")
                self.weights, self.capacity = tuple(weights), capacity
                self.left = [sum(self.weights[i:]) for i in range(len(self.weights) + 1)]

            def root(self):
                return (0, 0, ())             # next item, sum so far, the items taken

            def children(self, node):
                i, total, taken = node
                if i == len(self.weights):
                    return []
                out = [(i + 1, total, taken)]
                if total + self.weights[i] <= self.capacity:
                    out.append((i + 1, total + self.weights[i], taken + (i,)))
                return out

            def objective(self, node):
                return node[1]

            def bound(self, node):
                return min(self.capacity, node[1] + self.left[node[0]])

            def is_solution(self, node):
                return node[0] == len(self.weights) and node[1] == self.capacity

            def decode_node(self, node):
                return list(node[2])

            def verify(self, solution, value):
                if len(set(solution)) != len(solution):
                    raise SolutionError(f"an item taken twice: {solution}")
                total = sum(self.weights[i] for i in solution)
                if total != value or total > self.capacity:
                    raise SolutionError(f"{solution} sums to {total}, not {value}")
                return True


        def random_weights(n, seed):
            rng = random.Random(seed)
            return [rng.randint(1, 30) for _ in range(n)]
        ''',
    "ss_subsetsum/cli.py": '''
        from stealsearch.engine.app.commandline import (add_backend_arguments, print_json,
                                                        result_json, solve_from_args)

        from .problem import SubsetSum


        def register(subparsers):
            p = subparsers.add_parser("subsetsum", help="the largest subset sum within a "
                                                        "capacity (a plug-in)")
            p.add_argument("weights", type=int, nargs="+", metavar="W", help="item weights")
            p.add_argument("--capacity", type=int, required=True, help="the largest sum")
            p.add_argument("--count", action="store_true",
                           help="count the subsets whose sum is the capacity instead")
            add_backend_arguments(p)
            p.set_defaults(func=run)


        def run(args):
            problem = SubsetSum(args.weights, args.capacity, count=args.count)
            result = solve_from_args(problem, args)
            if args.json:
                print_json(result_json(result, weights=args.weights, capacity=args.capacity))
            else:
                print(result)
            return 0
        ''',
    "ss_subsetsum/sweep_items.py": '''
        from .problem import SubsetSum, random_weights


        def subsetsum(*, n: int, seed: int = 0, capacity: int, solve_kwargs=None) -> dict:
            """The largest subset sum of n random weights within the capacity."""
            from stealsearch import solve

            weights = random_weights(n, seed)
            r = solve(SubsetSum(weights, capacity), **(solve_kwargs or {"backend": "sequential"}))
            return {"weights": weights, "best": r.objective, "subset": r.solution,
                    "verified": r.verified, "search_status": r.status, "nodes": r.nodes}


        def subsetsum_count(*, n: int, seed: int = 0, capacity: int, solve_kwargs=None) -> dict:
            """How many subsets of n random weights sum to exactly the capacity."""
            from stealsearch import solve

            weights = random_weights(n, seed)
            r = solve(SubsetSum(weights, capacity, count=True),
                      **(solve_kwargs or {"backend": "sequential"}))
            return {"weights": weights, "count": r.count, "search_status": r.status}


        def helper_not_a_kind():
            return None
        ''',
    "ss_subsetsum/demo.py": '''
        from .problem import SubsetSum


        def tour(client, workers):
            from stealsearch import solve

            where = {"backend": "sequential"} if client is None else {"client": client}
            r = solve(SubsetSum([8, 6, 7, 5, 3, 10, 9], 20), **where)
            print(f"subset sum: best {r.objective} with items {r.solution}, "
                  f"verified: {r.verified}")
            return r.verified
        ''',
}

#: a plug-in whose cli.py needs a module that is not installed, and an entry point that
#: names a module where a package belongs
BROKEN = {
    "pyproject.toml": _pyproject("ss-broken", {"broken": "ss_broken", "flat": "ss_broken.plain"},
                                 "ss_broken"),
    "tiny_backend.py": BACKEND,
    "ss_broken/__init__.py": "",
    "ss_broken/cli.py": "import ss_broken_missing_dependency  # noqa: F401\n",
    "ss_broken/plain.py": "",
}

#: a package that claims names of ours: a problem's, a built-in command's, and a
#: command of clique's (after one of its own, which must not stay behind)
CLASH = {
    "pyproject.toml": _pyproject("ss-clash", {"uts": "ss_clash", "sweep": "ss_clash",
                                              "grab": "ss_clash"}, "ss_clash"),
    "tiny_backend.py": BACKEND,
    "ss_clash/__init__.py": "",
    "ss_clash/cli.py": '''
        def register(subparsers):
            subparsers.add_parser("grab", help="a command of its own")
            subparsers.add_parser("design", help="one that clique's package has")
        ''',
}

BAD_LINES = {
    "stealsearch: warning: plug-in 'broken' (ss-broken 0.1) skipped: importing it failed: "
    "ModuleNotFoundError: No module named 'ss_broken_missing_dependency'",
    "stealsearch: warning: plug-in 'flat' (ss-broken 0.1) skipped: ss_broken.plain is a "
    "module, not a package of faces",
    "stealsearch: warning: plug-in 'uts' (ss-clash 0.1) refused: 'uts' is one of "
    "stealsearch's own problems",
    "stealsearch: warning: plug-in 'sweep' (ss-clash 0.1) refused: 'sweep' is a stealsearch "
    "command",
    "stealsearch: warning: plug-in 'grab' (ss-clash 0.1) skipped: its command 'design' is "
    "taken (by stealsearch's clique)",
}


def _write_package(folder: Path, files: dict) -> Path:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return folder


class Env:
    """A temporary virtual environment that sees this one's packages, with plug-ins."""

    def __init__(self, root: Path):
        self.work = root / "work"
        self.work.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                       check=True, timeout=TIMEOUT)
        self.python = str(venv / "bin" / "python")
        site = self.run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])")
        # addsitedir, not a bare path: this environment's own .pth files (the editable
        # install of stealsearch) must be read too
        Path(site.strip(), "project.pth").write_text(
            f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")

    def run_python(self, code: str) -> str:
        proc = subprocess.run([self.python, "-c", code], capture_output=True, text=True,
                              timeout=TIMEOUT, cwd=self.work, env=self.env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    def install(self, *packages: Path) -> None:
        """pip, offline, with no build environment of its own (the plug-ins' backend
        needs nothing)."""
        proc = subprocess.run(
            [self.python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
             "--no-build-isolation", "--no-cache-dir", "--disable-pip-version-check",
             *map(str, packages)], capture_output=True, text=True, timeout=TIMEOUT,
            cwd=self.work, env=self.env)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]

    def stealsearch(self, *argv, code: int = 0) -> subprocess.CompletedProcess:
        proc = subprocess.run([self.python, "-m", "stealsearch", *map(str, argv)],
                              capture_output=True, text=True, timeout=TIMEOUT, cwd=self.work,
                              env=self.env)
        assert proc.returncode == code, (argv, proc.returncode, proc.stderr[-3000:])
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        return proc


def _make_env(tmp_path_factory, *packages: dict) -> Env:
    root = tmp_path_factory.mktemp("plugin")
    env = Env(root)
    env.install(*(_write_package(root / f"src{i}", files) for i, files in enumerate(packages)))
    return env


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return _make_env(tmp_path_factory, PLUGIN)


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    return _make_env(tmp_path_factory, PLUGIN, BROKEN, CLASH)


def best_sum(weights, capacity) -> int:
    return max(sum(c) for r in range(len(weights) + 1)
               for c in itertools.combinations(weights, r) if sum(c) <= capacity)


def exact_count(weights, capacity) -> int:
    return sum(sum(c) == capacity for r in range(len(weights) + 1)
               for c in itertools.combinations(weights, r))


WEIGHTS = [13, 7, 22, 5, 17, 9, 31, 4, 11, 19]
CAPACITY = 61


def test_the_plug_in_is_a_command_of_its_own(good):
    proc = good.stealsearch("--help")
    assert proc.stderr == ""
    listed = [line.split()[0] for line in proc.stdout.splitlines()
              if line.startswith("    ") and not line.startswith("     ")]
    assert listed.index("twolevel") < listed.index("subsetsum") < listed.index("sweep"), listed
    assert "subsetsum" in good.stealsearch("subsetsum", "--help").stdout


def test_the_plug_ins_json_is_an_engine_result_checked_by_brute_force(good):
    # the instance: one capacity some subsets reach exactly, one that none reaches
    assert exact_count(WEIGHTS, CAPACITY) > 1 and best_sum(WEIGHTS, 8) < 8
    for capacity in (CAPACITY, 8):
        proc = good.stealsearch("subsetsum", *WEIGHTS, "--capacity", capacity, "--sequential",
                                "--json")
        r = check_engine_json(proc.stdout)
        assert proc.stderr == ""
        assert (r["problem"], r["status"], r["mode"]) == ("subsetsum", "optimal", "optimise")
        assert r["objective"] == best_sum(WEIGHTS, capacity) == r["bound"]
        assert r["verified"] is True and sum(WEIGHTS[i] for i in r["solution"]) == r["objective"]
    proc = good.stealsearch("subsetsum", *WEIGHTS, "--capacity", CAPACITY, "--count",
                            "--sequential", "--json")
    r = check_engine_json(proc.stdout)
    assert (r["status"], r["count"]) == ("exhausted", exact_count(WEIGHTS, CAPACITY))
    # the plug-in's bad input takes the command line's one error policy
    proc = good.stealsearch("subsetsum", "4", "-2", "--capacity", "5", "--sequential", code=2)
    assert proc.stderr == "stealsearch: error: subsetsum: weights must be positive, the " \
                          "capacity >= 0\n"


def test_a_sweep_runs_the_plug_ins_item_kinds_on_a_worker(good):
    """Small items run as Dask tasks: the worker process imports the plug-in too."""
    grid = good.work / "plug.yaml"
    grid.write_text(textwrap.dedent("""
        name: plug
        items:
          - kind: subsetsum
            instance: {n: [8, 12], seed: [1, 2], capacity: 50}
          - kind: subsetsum_count
            instance: {n: 12, seed: [3, 4], capacity: 40}
          - kind: uts
            instance: {tree: default}
        """))
    proc = good.stealsearch("sweep", grid, "--out", good.work / "out", "--workers", "1",
                            "--json")
    summary = json.loads(proc.stdout)
    pytest.importorskip("jsonschema").validate(summary, schema_of(["sweep"]))
    assert (summary["status"], summary["total"], summary["ok"]) == ("complete", 7, 7)
    with open(good.work / "out" / "plug.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["kind"] for r in rows) == ["subsetsum"] * 4 + ["subsetsum_count"] * 2 + ["uts"]
    for r in rows:
        assert r["status"] == "ok" and r["worker"].startswith("tcp://"), r
        if r["kind"] == "uts":
            assert r["count"] == "1732"
            continue
        weights = json.loads(r["weights"])
        if r["kind"] == "subsetsum":
            assert int(r["best"]) == best_sum(weights, 50) and r["verified"] == "True"
            assert sum(weights[i] for i in json.loads(r["subset"])) == int(r["best"])
        else:
            assert int(r["count"]) == exact_count(weights, 40)
    # the kinds are listed with ours, and a public helper not named after it is no kind
    help_text = " ".join(good.stealsearch("sweep", "--help").stdout.split())
    assert "twolevel_table1, subsetsum, subsetsum_count." in help_text
    assert "helper_not_a_kind" not in help_text


def test_the_plug_in_comes_after_ours_in_the_registry_and_the_tour(good):
    out = good.run_python(textwrap.dedent("""
        from stealsearch import registry
        print([p.name for p in registry.problems()])
        tours = dict(registry.tours())
        print(list(tours))
        print(tours["subsetsum"](None, 1))
    """)).splitlines()
    assert out[0] == out[1] == str(list(registry.TOUR) + ["subsetsum"])
    # the plug-in's section of the tour, run here without a cluster
    found = re.fullmatch(r"subset sum: best (\d+) with items (\[[\d, ]*\]), verified: True",
                         out[2])
    weights = [8, 6, 7, 5, 3, 10, 9]
    assert found and int(found[1]) == best_sum(weights, 20), out
    assert sum(weights[i] for i in json.loads(found[2])) == int(found[1])
    assert out[3:] == ["True"], out


def test_a_broken_plug_in_is_one_warning_line_and_the_rest_works(bad):
    proc = bad.stealsearch("uts", "--tree", "default", "--sequential", "--json")
    assert json.loads(proc.stdout)["count"] == 1732
    lines = proc.stderr.splitlines()
    assert len(lines) == len(BAD_LINES) and set(lines) == BAD_LINES, proc.stderr
    # the good plug-in still works beside them; --quiet silences the warnings
    proc = bad.stealsearch("subsetsum", *WEIGHTS, "--capacity", CAPACITY, "--sequential",
                           "--json", "--quiet")
    assert check_engine_json(proc.stdout)["objective"] == best_sum(WEIGHTS, CAPACITY)
    assert proc.stderr == ""
    # --help: the refused and the skipped are not commands (the half-registered
    # 'grab' is withdrawn), clique's 'design' is still clique's
    proc = bad.stealsearch("--help")
    listed = [line.split()[0] for line in proc.stdout.splitlines()
              if line.startswith("    ") and not line.startswith("     ")]
    assert "subsetsum" in listed and not {"broken", "flat", "grab"} & set(listed), listed
    assert listed.count("design") == listed.count("uts") == listed.count("sweep") == 1
    assert "--bound" in bad.stealsearch("design", "--help").stdout      # clique's own options
    bad.stealsearch("grab", code=2)
