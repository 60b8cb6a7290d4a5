"""The package a user installs, checked as a user meets it.

``python tests/package/wheel_check.py --report R.json [--python PY ...]`` builds the sdist
and, from it, the wheel (``python -m build``), installs the wheel into a fresh virtual
environment in a temporary folder outside the repository, one per Python given, and runs
the commands from another temporary folder, one that holds folders named ``engine`` and
``problems`` (such folders broke ``python -m stealsearch`` when those names were
installed at the top level).  The first Python gets the whole check; the others (the
other Pythons the project claims) a smoke check (:func:`steps_for`).  Every step is one record of the
report, written as it ends (``{"python", "step", "ok", "detail", "seconds"}``), so that
the tests in test_wheel.py can read each result while the rest still runs.

Every figure is checked against something that is not the code that produced it: UTS
T1's published size, keller4's published clique number and the graph's own edges (read
here, not by our reader), the sweep's table, the reports' files.  Each command has a
timeout and runs in a process group of its own, ended on timeout.

Run in the background by tests/conftest.py when test_wheel.py is collected, beside the
rest of the suite (it uses about one core; the suite leaves the other one partly idle).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
import readme_blocks  # noqa: E402  (tests/, beside this folder)
T1_NODES = 4_130_071                 # UTS T1, published (Olivier et al., the UTS paper)
KELLER4_OMEGA = 11                   # DIMACS keller4, published
KELLER4 = ROOT / "tests" / "clique" / "data" / "keller4.clq"
CMD_TIMEOUT = 600

FULL_STEPS = ("build", "install", "top-level", "compile", "version", "clique-dask", "uts",
              "clique", "demo", "reproduce", "sweep", "resume", "api-script")
SMOKE_STEPS = ("install", "top-level", "compile", "version", "uts")
#: README.md's quickstart, run as written in an empty folder (tests/readme_blocks.py says
#: how; tests/test_readme.py reads its record): the first Python's, after ``version``
README_STEP = "readme"


def steps_for(index: int, count: int) -> tuple[str, ...]:
    """The steps of the ``index``-th of ``count`` Pythons: the first, every step; the
    others, the smoke steps, and the last of them (the newest claimed Python, where new
    warnings appear first) also the clique on 2 Dask workers with every warning shown.
    (Each clique step compiles the clique kernels afresh in its venv: ~25 s of a core
    per Python on the suite's 2 cores.)"""
    if index == 0:
        return FULL_STEPS
    return SMOKE_STEPS + (("clique-dask",) if index == count - 1 else ())

#: stderr lines a command may print when it succeeds: the first-run notice of a command
#: that compiles kernels in the fresh venv (stealsearch.engine.app.compile_notice); any
#: other line is a finding
DOCUMENTED_STDERR: tuple[str, ...] = ("stealsearch: compiling kernels, first run only",)


def wait_for_record(check, match, what: str, wait: float) -> dict:
    """The first record of the background check (the ``wheel_check`` fixture's
    ``(ended, report)``) that ``match`` accepts, waited for up to ``wait`` seconds; a
    test failure naming ``what`` when the check ends without one or the wait runs out."""
    import pytest

    ended, report = check
    deadline = time.monotonic() + wait
    while True:
        finished = ended()       # before reading: its last record is read
        try:
            data = json.loads(Path(report).read_text())
        except (OSError, ValueError):
            data = {"records": [], "done": False}
        found = [r for r in data["records"] if match(r)]
        if found:
            return found[0]
        if finished or data["done"]:
            pytest.fail(f"the wheel check ended without {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} after {wait} s")
        time.sleep(1)


def claimed_minors() -> list[int]:
    """The 3.X versions pyproject.toml's classifiers claim."""
    import re

    text = (ROOT / "pyproject.toml").read_text()
    return sorted(int(m) for m in re.findall(r'"Programming Language :: Python :: 3\.(\d+)"',
                                             text))


def claimed_pythons() -> list[str]:
    """This interpreter, then one of every other CPython the classifiers claim (3.10-3.13)
    found on PATH as ``python3.X`` or through pyenv."""
    found = {sys.version_info[:2]: sys.executable}
    pyenv = shutil.which("pyenv")
    for minor in claimed_minors():
        if (3, minor) in found:
            continue
        candidates = [shutil.which(f"python3.{minor}")]
        if pyenv:
            versions = subprocess.run([pyenv, "versions", "--bare"], capture_output=True,
                                      text=True).stdout.split()
            for v in sorted((v for v in versions if v.startswith(f"3.{minor}.")),
                            key=lambda v: [int(x) for x in v.split(".") if x.isdecimal()]):
                prefix = subprocess.run([pyenv, "prefix", v], capture_output=True,
                                        text=True).stdout.strip()
                candidates.append(str(Path(prefix) / "bin" / "python3") if prefix else None)
        for c in filter(None, candidates):
            try:
                out = subprocess.run([c, "-c", "import sys, venv; print(*sys.version_info[:2])"],
                                     capture_output=True, text=True, timeout=30).stdout.split()
            except (OSError, subprocess.SubprocessError):
                continue
            if out == ["3", str(minor)]:
                found[(3, minor)] = c
                break
    return [sys.executable] + [p for v, p in sorted(found.items())
                               if p != sys.executable]


def run_order(index: int, count: int) -> tuple[str, ...]:
    """The steps the ``index``-th Python runs, in order: :func:`steps_for`, and on the
    first the README's quickstart early (its wait is the README test's), where it compiles
    the kernels that the later steps then load."""
    steps = steps_for(index, count)
    if index != 0:
        return steps
    at = steps.index("version") + 1
    return steps[:at] + (README_STEP,) + steps[at:]


class StepFailed(Exception):
    pass


class Report:
    def __init__(self, path: Path):
        self.path = path
        self.records: list[dict] = []
        self._write()

    def _write(self):
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({"records": self.records, "done": False}))
        os.replace(tmp, self.path)

    def add(self, python: str, step: str, ok: bool, detail: str, seconds: float):
        self.records.append({"python": python, "step": step, "ok": ok, "detail": detail,
                             "seconds": round(seconds, 2)})
        self._write()

    def finish(self):
        self.path.write_text(json.dumps({"records": self.records, "done": True}))


def run(argv, cwd, env, timeout=CMD_TIMEOUT) -> subprocess.CompletedProcess:
    """``argv`` in its own process group; the group is ended on timeout."""
    proc = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise StepFailed(f"{' '.join(map(str, argv[:4]))} ran past {timeout} s; "
                         f"stderr: {err[-500:]}") from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def ok_run(argv, cwd, env, timeout=CMD_TIMEOUT, quiet=True) -> subprocess.CompletedProcess:
    """``argv`` must exit 0 (and, with ``quiet``, print nothing undocumented on stderr)."""
    p = run(argv, cwd, env, timeout)
    name = " ".join(str(a) for a in argv[1:4])
    if p.returncode != 0:
        # A long report's tail hides the failing line: keep the lines that are not a
        # matched claim (the failures, the summaries), then the tail.
        telling = [ln for ln in p.stdout.splitlines() if not ln.lstrip().startswith("matched")]
        raise StepFailed(f"{name}: exit {p.returncode}; stderr: {p.stderr[-800:]}; "
                         f"stdout: {chr(10).join(telling)[-2500:]}")
    if quiet:
        stray = [ln for ln in p.stderr.splitlines()
                 if ln.strip() and not ln.startswith(DOCUMENTED_STDERR or ("\0",))]
        if stray:
            raise StepFailed(f"{name}: stderr not empty: {stray[:5]}")
    return p


def clean_env(venv: Path) -> dict:
    """A user's environment: the venv's bin first, nothing of this repository on the
    path, no user site, our own warnings not hidden."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PYTEST", "COV_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONWARNINGS"] = "default"       # what a user sees, not what pytest filters
    return env


def read_graph(path: Path) -> tuple[int, set]:
    """DIMACS ``p``/``e`` lines, read here (not by the package's reader)."""
    n, edges = 0, set()
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts and parts[0] == "p":
            n = int(parts[2])
        elif parts and parts[0] == "e":
            u, v = int(parts[1]), int(parts[2])
            edges.add((min(u, v), max(u, v)))
    return n, edges


def is_clique(vertices, edges) -> bool:
    return all((min(u, v), max(u, v)) in edges for u, v in combinations(vertices, 2))


class Check:
    def __init__(self, report: Report, scratch: Path):
        self.report = report
        self.scratch = scratch
        self.dist = scratch / "dist"

    def step(self, python: str, name: str, fn):
        t = time.perf_counter()
        try:
            detail = fn() or ""
            ok = True
        except StepFailed as exc:
            detail, ok = str(exc), False
        except Exception as exc:          # a bug here must be a failed step, not a hang
            detail, ok = f"{type(exc).__name__}: {exc}", False
        self.report.add(python, name, ok, detail, time.perf_counter() - t)
        return ok

    # -- the distribution ---------------------------------------------------------------
    def build(self):
        # the sdist first, then the wheel from the unpacked sdist: what is missing from
        # the sdist is missing from the wheel too
        # (of the tree, the files git tracks or would: not a developer's venv or outputs)
        src = self.scratch / "src"
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached",
                                "--others", "--exclude-standard"], capture_output=True,
                               check=True).stdout.decode().split("\0")
        for name in filter(None, files):
            if (ROOT / name).is_file():
                (src / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, src / name)
        ok_run([sys.executable, "-m", "build", "--outdir", self.dist, src], self.scratch,
               dict(os.environ), quiet=False)
        wheels = sorted(self.dist.glob("stealsearch-*.whl"))
        sdists = sorted(self.dist.glob("stealsearch-*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            raise StepFailed(f"expected one wheel and one sdist, got {os.listdir(self.dist)}")
        return f"{wheels[0].name}, {sdists[0].name}"

    # -- one Python ---------------------------------------------------------------------
    def python_check(self, python: str, index: int, count: int):
        label = python
        venv = self.scratch / f"venv{index}"
        work = self.scratch / f"run{index}"
        work.mkdir()
        for decoy in ("engine", "problems"):        # folders a user may well have
            (work / decoy).mkdir()
            (work / decoy / "__init__.py").write_text("raise ImportError('the wrong one')\n")
        env = clean_env(venv)
        py = venv / "bin" / "python"
        cmd = venv / "bin" / "stealsearch"
        steps = tuple(x for x in run_order(index, count) if x != "build")   # (done)

        def install():
            ok_run([python, "-m", "venv", venv], self.scratch, env, quiet=False)
            wheel = next(self.dist.glob("stealsearch-*.whl"))
            # --no-compile: pip byte-compiling numpy, scipy, bokeh, ... costs ~20 s a venv;
            # our own sources are compiled (warnings as errors) by the compile step
            ok_run([py, "-m", "pip", "install", "--quiet", "--no-compile", wheel], self.scratch,
                   env, quiet=False)
            v = ok_run([py, "-c", "import sys; print(sys.version.split()[0])"], work, env)
            return f"Python {v.stdout.strip()}"

        def top_level():
            site = ok_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          work, env).stdout.strip()
            info = next(Path(site).glob("stealsearch-*.dist-info"))
            tops = set()
            for line in (info / "RECORD").read_text().splitlines():
                first = line.split(",")[0].split("/")[0]
                if first != "..":                  # ../../../bin/stealsearch
                    tops.add(first)
            if tops != {"stealsearch", info.name}:
                raise StepFailed(f"the wheel installs at the top level: {sorted(tops)}")
            for name in ("engine", "problems", "benchmarks", "cluster_configs"):
                if (Path(site) / name).exists():
                    raise StepFailed(f"site-packages/{name} exists")
            return f"only stealsearch/ and {info.name}"

        def compile_():
            pkg = Path(ok_run([py, "-c", "import stealsearch, os; "
                                        "print(os.path.dirname(stealsearch.__file__))"],
                              work, env).stdout.strip())
            ok_run([py, "-W", "error", "-m", "compileall", "-q", "-f", pkg], work, env)
            return "python -W error -m compileall: clean"

        def version():
            a = ok_run([cmd, "--version"], work, env).stdout.strip()
            b = ok_run([py, "-m", "stealsearch", "--version"], work, env).stdout.strip()
            c = ok_run([py, "-c", "import sys, stealsearch; print(stealsearch.__version__); "
                                  "assert 'numba' not in sys.modules, 'numba loaded'"],
                       work, env).stdout.strip()
            if not (a == b == f"stealsearch {c}") or c.startswith("0+"):
                raise StepFailed(f"versions disagree: {a!r} / {b!r} / {c!r}")
            return a

        def uts():
            p = ok_run([cmd, "uts", "--tree", "T1", "--sequential", "--json"], work, env)
            r = json.loads(p.stdout)
            if r["count"] != T1_NODES or r["status"] != "exhausted":
                raise StepFailed(f"T1: {r['status']} {r['count']} != {T1_NODES}")
            return f"T1: {r['count']:,} nodes (published {T1_NODES:,})"

        graph = work / "keller4.clq"
        shutil.copyfile(KELLER4, graph)
        n, edges = read_graph(graph)

        def clique_check(where):
            # every process's warnings shown (PYTHONWARNINGS reaches the worker processes):
            # ok_run fails on any stderr line, so on 2 workers this is the warnings check
            p = ok_run([cmd, "clique", graph, *where, "--json"], work,
                       dict(env, PYTHONWARNINGS="always"))
            r = json.loads(p.stdout)
            sol = [int(v) for v in r["solution"]]
            if r["objective"] != KELLER4_OMEGA or len(set(sol)) != KELLER4_OMEGA \
                    or not is_clique(sol, edges) or not all(1 <= v <= n for v in sol):
                raise StepFailed(f"keller4: {r['status']} {r['objective']} {sol}")
            return f"keller4 {' '.join(where)}: ω = {r['objective']}, a clique of the file"

        def demo():
            p = ok_run([cmd, "demo"], work, env)
            out = p.stdout
            if "all results verified" not in out or "DIMACS keller4" not in out:
                raise StepFailed(f"demo: {out[-600:]}")
            return out.strip().splitlines()[-1]

        def reproduce():
            out = work / "rep"
            # --sequential: what the install can break is finding the grids and writing the
            # reports (the same code on any backend); the cluster path is the README test's.
            # On a cluster, first compiles on busy workers made quick items time out here.
            ok_run([cmd, "reproduce", "all", "--quick", "--sequential", "--out", out], work, env)
            reports = sorted(p.name for p in out.glob("*.md"))
            want = ["000_liquid.md", "001_hrelation.md", "002_commclust.md", "003_clique.md",
                    "004_twolevel.md"]
            if reports != want:
                raise StepFailed(f"reports: {reports}")
            for name in want:
                text = (out / name).read_text()
                if "matched" not in text or not list(out.glob(name[:-3] + "*.png")):
                    raise StepFailed(f"{name}: no verdict or no plot")
            return "5 reports with verdicts and plots"

        def sweep():
            grid = work / "mine.yaml"
            grid.write_text("name: mine\nitems:\n"
                            "  - kind: uts\n    instance: {tree: T1}\n"
                            "  - kind: clique\n    instance: {generator: gnp, n: 60, p: 0.5, "
                            "seed: [1, 2]}\n")
            ok_run([cmd, "sweep", grid, "--out", work / "res", "--sequential"], work, env)
            import csv
            rows = list(csv.DictReader(open(work / "res" / "mine.csv")))
            if len(rows) != 3 or any(r["status"] != "ok" for r in rows):
                raise StepFailed(f"sweep rows: {rows}")
            t1 = [r for r in rows if r["kind"] == "uts"]
            if len(t1) != 1 or int(t1[0]["count"]) != T1_NODES:
                raise StepFailed(f"the UTS row does not count T1: {t1}")
            return "3 rows ok, T1 counted exactly"

        def resume():
            ck = work / "ck"
            p = ok_run([cmd, "uts", "--tree", "T1", "--sequential", "--node-limit", "1000000",
                        "--checkpoint", ck, "--json"], work, env)
            first = json.loads(p.stdout)
            if first["status"] != "interrupted":
                raise StepFailed(f"first part: {first['status']}")
            p = ok_run([cmd, "resume", ck, "--sequential"], work, env)
            r = json.loads(p.stdout)
            if r["count"] != T1_NODES or r["status"] != "exhausted":
                raise StepFailed(f"resumed: {r['status']} {r['count']}")
            return f"1,000,000 nodes, then resumed to {r['count']:,}"

        def readme():
            # in a folder of its own, empty but for what the blocks write
            here = work / "readme"
            here.mkdir()
            ran = []
            for i, (language, body) in enumerate(readme_blocks.quickstart()):
                if language == "sh":
                    for argv, comment in readme_blocks.sh_lines(body):
                        if argv[0] != "stealsearch":
                            raise StepFailed(f"the quickstart runs {argv[0]!r}: not a "
                                             f"command of the package")
                        p = ok_run([cmd, *argv[1:]], here, env)   # the venv's command
                        missing = readme_blocks.missing_promises(comment, p.stdout)
                        if missing:
                            raise StepFailed(f"{' '.join(argv)}: the output shows none of "
                                             f"{missing}; it printed {p.stdout[-1500:]}")
                        ran.append(" ".join(argv[:3]))
                elif language == "python":
                    script = here / f"quickstart_{i}.py"
                    script.write_text(body)
                    p = ok_run([py, script.name], here, env)
                    printed = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()]
                    if printed != readme_blocks.python_prints(body):
                        raise StepFailed(f"quickstart block {i} printed {printed}, the "
                                         f"README shows {readme_blocks.python_prints(body)}")
                    ran.append(f"python block {i}")
                else:
                    raise StepFailed(f"a quickstart block in {language or 'no language'!r}: "
                                     f"neither run nor shown as output")
            if len(ran) < 3:
                raise StepFailed(f"the quickstart runs too little: {ran}")
            return f"{len(ran)} commands and scripts as written: {', '.join(ran)}"

        def api_script():
            script = work / "mine.py"
            script.write_text(API_SCRIPT)
            p = ok_run([py, script, graph], work, env)
            return p.stdout.strip().splitlines()[-1]

        table = {"install": install, "top-level": top_level, "compile": compile_,
                 "version": version, "uts": uts,
                 "clique": lambda: clique_check(["--sequential"]),
                 "clique-dask": lambda: clique_check(["--workers", "2"]),
                 "demo": demo, "reproduce": reproduce, "sweep": sweep, "resume": resume,
                 "api-script": api_script, README_STEP: readme}
        for name in steps:
            if not self.step(label, name, table[name]) and name == "install":
                for rest in steps[steps.index(name) + 1:]:
                    self.report.add(label, rest, False, "not run: the install failed", 0.0)
                return


#: a user's script: the public API only, checked against facts it computes itself
API_SCRIPT = '''
import sys
from itertools import combinations

import stealsearch
from stealsearch.problems.clique import CliqueProblem, read_dimacs
from stealsearch.problems.uts import UTSProblem

if __name__ == "__main__":
    assert "engine" not in sys.modules and "problems" not in sys.modules
    r = stealsearch.solve(UTSProblem.preset("T1"), backend="sequential")
    assert r.count == 4130071, r.count
    g = read_dimacs(sys.argv[1])
    r = stealsearch.solve(CliqueProblem(g), backend="dask", workers=2)
    assert r.objective == 11 and r.verified, (r.objective, r.verified)
    assert isinstance(r, stealsearch.SearchResult)
    edges = set()
    with open(sys.argv[1]) as f:
        for line in f:
            if line.startswith("e "):
                _, u, v = line.split()
                edges.add(frozenset((int(u), int(v))))
    assert all(frozenset((int(u), int(v))) in edges for u, v in combinations(r.solution, 2))
    print(f"API: T1 {4130071:,} nodes; keller4 omega {r.objective} on {r.backend}")
'''


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", required=True, type=Path)
    ap.add_argument("--python", action="append", default=[],
                    help="an interpreter to check (the first: the whole check)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args(argv)
    report = Report(args.report)
    scratch = Path(tempfile.mkdtemp(prefix="stealsearch-wheel-"))
    try:
        check = Check(report, scratch)
        pythons = args.python or claimed_pythons()
        if check.step(pythons[0], "build", check.build):
            for i, python in enumerate(pythons):
                check.python_check(python, i, len(pythons))
        else:
            for i, python in enumerate(pythons):
                for name in run_order(i, len(pythons)):
                    if name != "build":
                        report.add(python, name, False, "not run: the build failed", 0.0)
    finally:
        report.finish()
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0 if all(r["ok"] for r in report.records) else 1


if __name__ == "__main__":
    sys.exit(main())
