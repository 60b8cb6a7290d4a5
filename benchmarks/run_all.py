"""``make bench``: the benchmark set through the one sweep runner, then RESULTS.md.

A benchmark is a module with a ``main(argv)`` (``benchmarks/bench_<name>.py``) that
measures and writes its section ``benchmarks/results/<name>.md``: the machine, date and
commit in its header, speed-ups as ratios against the sequential run of the same run.
The sets are grids of the sweep runner (:mod:`stealsearch.engine.app.sweep`), one item per benchmark:

    benchmarks/grids/bench.yaml       make bench        the standard set (~20-30 min on 2 cores)
    benchmarks/grids/bench_full.yaml  make bench-full   + the heavy studies: clique in full,
                                                        scaling model, peers, latency
    make bench-quick                  every item's ``quick`` arguments, in a scratch copy:
                                      a smoke run that leaves the repository as it is

**Adding a benchmark** is one line in a grid (its section is assembled after the ones
of :data:`ORDER`; a line there places it)::

    - {kind: bench, instance: {name: setup}, settings: {args: "", quick: "--quick"}}

``name`` is the section (``results/<name>.md``) and, unless ``module`` says otherwise,
the module ``benchmarks.bench_<name>``; ``args`` its command-line arguments; ``quick``
those of ``--quick`` (``skip``: not in the quick run); ``writes`` the file it must
(re)write when not ``results/<name>.md``.

Items run one after another (``client=None``), each as a child process
``python -m MODULE ARGS`` in its own process group: a benchmark starts its own clusters
and loads its own kernels, no two benchmarks disturb each other's timings, and one that
runs past its ``timeout`` is ended with its group.  An item fails (and the others go
on) when the child exits non-zero or has not rewritten its section, or the section
names no commit.  The table of the run is ``benchmarks/results/runs/<grid>.csv`` (a new
one each run; ``--resume`` continues an interrupted run instead), and RESULTS.md is
assembled from ``results/*.md`` with a table of the last run of every benchmark.

    python -m stealsearch.benchmarks.run_all                 # = make bench
    python -m stealsearch.benchmarks.run_all --only uts comm # a part of the set
    python -m stealsearch.benchmarks.run_all --assemble      # only rebuild RESULTS.md
"""
from __future__ import annotations

import argparse
import collections
import csv
import glob
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRIDS = HERE / "grids"

#: Sections of RESULTS.md in this order; any other results/<name>.md follows, sorted.
#: One name per line (several people add benchmarks at once).
ORDER = [
    "uts",
    "comm",
    "resilience",
    "rampup",
    "setup",
    "clique",
    "liquid",
    "hrelation",
    "commclust",
    "twolevel",
    "tiers",
    "estimate",
    "defaults16",
    "device16_h200",
    "threads",
]

#: the item kind of the benchmark grids
KINDS = {"bench": "stealsearch.benchmarks.run_all:bench"}

#: The folder the benchmark processes run in (their outputs are relative to it): the
#: repository, or the scratch copy of a quick run.  Not an item parameter: the table's
#: keys and rows do not depend on where a checkout lies.
WORKDIR = HERE.parent

#: seconds between SIGTERM and SIGKILL when a benchmark's group is ended
TERM_GRACE = 10.0

HEADER = """# Benchmark results

Produced by `make bench` (`python -m stealsearch.benchmarks.run_all`: the set of
`benchmarks/grids/bench.yaml` through the sweep runner; `make bench-full` adds the heavy
studies of `bench_full.yaml`).  Each section was written by the module its item names
(`python -m stealsearch.benchmarks.bench_<name>` runs one alone), on the machine, date and commit its
header names.  This machine kind is shared and noisy: figures are medians, and speed-ups
are ratios against the sequential run *of the same benchmark run*.

"""


# ------------------------------------------------------------------------ the item
def bench(*, name: str, module: str = "", args: str = "", writes: str = "") -> dict:
    """Run one benchmark as a child process in :data:`WORKDIR`; check that it rewrote
    its section and that the section names its commit."""
    from stealsearch.engine.deploy import interrupts

    module = module or f"stealsearch.benchmarks.bench_{name}"
    output = WORKDIR / (writes or f"benchmarks/results/{name}.md")
    argv = [sys.executable, "-m", module, *shlex.split(args)]
    print(f"== {name}: python -m {module} {args}".rstrip(), file=sys.stderr, flush=True)
    start = time.time()
    tail: collections.deque = collections.deque(maxlen=5)
    proc = subprocess.Popen(argv, cwd=WORKDIR, env=_child_env(), stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)
    echo = threading.Thread(target=_echo, args=(proc.stderr, tail), daemon=True)
    echo.start()
    try:
        # the child has its own session (a terminal's Ctrl-C does not reach it): a first
        # Ctrl-C, which the runner records, ends it here
        while True:
            try:
                code = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                interrupts.stop_if_requested()
    except BaseException:        # the item's timeout (an alarm) or Ctrl-C: end the group
        _end_group(proc)
        raise
    finally:
        echo.join(timeout=5)
        proc.stderr.close()
    if code != 0:
        last = next((line for line in reversed(tail) if line.strip()), "")
        raise RuntimeError(f"exit code {code}: {_relative(last.strip())[:300]}")
    if not output.exists() or output.stat().st_mtime < start - 1:
        raise RuntimeError(f"did not write {output.relative_to(WORKDIR)}")
    text = output.read_text(errors="replace")
    if output.suffix == ".md" and "commit" not in text.lower():
        raise RuntimeError(f"{output.relative_to(WORKDIR)} names no commit")
    return {"module": module, "output": str(output.relative_to(WORKDIR)),
            "output_bytes": len(text.encode())}


def _child_env() -> dict:
    """The environment of a benchmark: in a scratch copy, git (which the scripts ask for
    the commit their section names) is pointed at this checkout."""
    env = dict(os.environ)
    if WORKDIR.resolve() != HERE.parent:
        try:
            git_dir = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse",
                                      "--absolute-git-dir"], capture_output=True, text=True,
                                     timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            git_dir = ""
        if git_dir:
            env.update(GIT_DIR=git_dir, GIT_WORK_TREE=str(HERE.parent))
    return env


def _echo(stream, tail) -> None:
    for line in stream:
        sys.stderr.write(line)
        tail.append(line)


def _end_group(proc) -> None:
    """SIGTERM to the benchmark's process group, SIGKILL after :data:`TERM_GRACE`."""
    for sig, wait in ((signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _relative(text: str) -> str:
    """An error line without this machine's paths (the table may be committed)."""
    return text.replace(str(WORKDIR) + os.sep, "").replace(str(WORKDIR), ".")


# ------------------------------------------------------------------- grids and runs
def grid_spec(path: str | os.PathLike, quick: bool = False, only=None) -> dict:
    """The grid file as a dict: ``quick`` puts every item's ``quick`` arguments in place
    of its ``args`` (dropping the ``skip`` ones) and names the table ``<name>_quick``;
    ``only``: the items whose ``name`` is listed."""
    import yaml

    from stealsearch.engine.app.sweep import GridError

    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise GridError(f"{path}: cannot read the grid ({exc.__class__.__name__})") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("items"), list):
        raise GridError(f"{path}: expected a mapping with an 'items' list")
    spec.setdefault("name", path.stem)
    blocks = []
    for block in spec["items"]:
        if not isinstance(block, dict):
            raise GridError(f"{path}: an item is not a mapping: {block!r}")
        block = dict(block)
        settings = dict(block.get("settings") or {})
        quick_args = settings.pop("quick", "")
        if quick:
            if quick_args == "skip":
                continue
            settings["args"] = quick_args or ""
        block["settings"] = settings
        name = (block.get("instance") or {}).get("name")
        if only and name not in only:
            continue
        blocks.append(block)
    if quick:
        spec["name"] = f"{spec['name']}_quick"
    if not blocks:
        raise GridError(f"{path}: no benchmark to run" + (f" among {' '.join(only)}" if only else ""))
    spec["items"] = blocks
    return spec


def scratch_copy(workdir: Path) -> Path:
    """A copy of benchmarks/ (its scripts, grids and results, so that the scripts' own
    inputs are there and their outputs land in the copy) with the rest of the
    repository's top level linked beside it."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(HERE, workdir / "benchmarks", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "runs"))
    for entry in HERE.parent.iterdir():
        target = workdir / entry.name
        # lexists: a link left by an earlier call (dangling or not) is already there
        if entry.name in ("benchmarks", ".git", ".venv") or os.path.lexists(target):
            continue
        target.symlink_to(entry)
    return workdir


def run(spec: dict, workdir: Path, resume: bool = False, progress=None):
    """Run a benchmark grid with :data:`WORKDIR` = ``workdir``; the sweep summary and
    every item's outcome."""
    from stealsearch.engine.app.sweep import load_grid, read_outcomes, run_sweep

    global WORKDIR
    out = workdir / "benchmarks" / "results" / "runs"
    grid = load_grid(spec, KINDS)
    if not resume:
        for suffix in (".csv", ".parquet"):
            (out / f"{grid.name}{suffix}").unlink(missing_ok=True)
    old, WORKDIR = WORKDIR, workdir
    try:
        summary = run_sweep(grid, out, client=None, progress=progress)
    finally:
        WORKDIR = old
    return summary, read_outcomes(grid, out)


# ---------------------------------------------------------------------- assembling
def last_runs(results: Path) -> list:
    """The newest row of every benchmark in ``results/runs/*.csv``."""
    newest: dict = {}
    for path in sorted(glob.glob(str(results / "runs" / "*.csv"))):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                name = row.get("name")
                if name and (name not in newest or row.get("date", "") >= newest[name].get("date", "")):
                    newest[name] = dict(row, table=Path(path).name)
    return [newest[n] for n in sorted(newest)]


def assemble(root: Path | None = None) -> Path:
    """``root``/benchmarks/RESULTS.md from ``results/*.md`` (ORDER first, then the
    others sorted) and the table of the last runs."""
    bench_dir = (root or HERE.parent) / "benchmarks"
    results = bench_dir / "results"
    present = {p.stem for p in results.glob("*.md")}
    names = [n for n in ORDER if n in present] + sorted(present - set(ORDER))
    lines = [HEADER]
    runs = last_runs(results)
    if runs:
        lines.append("Last run of each benchmark (tables in `benchmarks/results/runs/`):\n\n"
                     "| benchmark | arguments | status | seconds | date (UTC) | commit | CPU |\n"
                     "|---|---|---|---:|---|---|---|\n")
        for r in runs:
            status = r.get("status", "")
            if r.get("error"):
                status += f": {r['error'][:80]}"
            lines.append(f"| {r['name']} | `{r.get('args') or '(none)'}` | {status} | "
                         f"{float(r.get('seconds') or 0):.0f} | {r.get('date', '')} | "
                         f"{(r.get('commit') or '')[:12]} | {r.get('cpu', '')} |\n")
        lines.append("\n")
    for name in names:
        lines.append((results / f"{name}.md").read_text().rstrip() + "\n\n")
    path = bench_dir / "RESULTS.md"
    path.write_text("".join(lines))
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true",
                      help="the standard set, then the heavy studies (bench_full.yaml)")
    mode.add_argument("--grid", default=None, metavar="FILE", help="another benchmark grid")
    ap.add_argument("--quick", action="store_true",
                    help="every item's quick arguments, in a scratch copy (--workdir)")
    ap.add_argument("--workdir", default=None, metavar="DIR",
                    help="run in DIR (a scratch copy of benchmarks/ is made there; default "
                         "with --quick: a new temporary folder; else the repository)")
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME", help="only these benchmarks")
    ap.add_argument("--resume", action="store_true",
                    help="continue the run table of an interrupted run (default: a new run)")
    ap.add_argument("--assemble", action="store_true", help="only rebuild RESULTS.md")
    args = ap.parse_args(argv)
    from stealsearch.engine.core.errors import InputError

    try:
        if args.assemble:
            print(f"wrote {assemble()}")
            return 0
        if args.grid:
            specs = [grid_spec(args.grid, quick=args.quick, only=args.only)]
        else:
            specs = [grid_spec(GRIDS / "bench.yaml", quick=args.quick, only=args.only)]
            if args.full:
                full = grid_spec(GRIDS / "bench_full.yaml", quick=args.quick, only=args.only)
                replaced = {b["instance"]["name"] for b in full["items"]}
                specs[0]["items"] = [b for b in specs[0]["items"]
                                     if b["instance"]["name"] not in replaced]
                specs = [s for s in specs if s["items"]] + [full]
        if args.workdir is not None or args.quick:
            workdir = Path(args.workdir or tempfile.mkdtemp(prefix="stealsearch-bench-"))
            scratch_copy(workdir.resolve())
            workdir = workdir.resolve()
        else:
            workdir = HERE.parent
        runs = [run(spec, workdir, resume=args.resume) for spec in specs]
    except InputError as exc:
        print(f"run_all: {exc}", file=sys.stderr)
        return 2
    path = assemble(workdir)
    ok = True
    for summary, outcomes in runs:
        print(f"{summary.grid}: {summary.ok} of {summary.total} benchmarks ok, "
              f"{summary.failed} failed, {summary.timeout} timed out ({summary.seconds:.0f} s)")
        for o in outcomes:
            if not o.ok:
                ok = False
                print(f"  {o.item.columns['name']}: {o.status or 'not run'} {o.error}".rstrip())
    print(f"wrote {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    # run as the module the runner imports for the items (stealsearch.benchmarks.run_all:bench), not
    # as __main__, so that both see the same WORKDIR
    from stealsearch.benchmarks.run_all import main as _main

    sys.exit(_main())
