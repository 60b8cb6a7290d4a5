"""Every shell command of README.md runs as written, from a fresh clone's point of view.

The ``sh`` code blocks are extracted from README.md and every ``stealsearch`` line runs, in
a scratch directory that sees the repository's files (so a command's output files land
there, not in the repository).  The first lines run as real processes with the venv's
``stealsearch`` on PATH (the console script as a user types it); the others run the same
argument list through ``stealsearch.cli.main`` in this process, because each new process
pays ~2 s of imports and numba cache loading, which on the shared 2-core machine would
double this test's time without testing anything more.  A
command naming ``--scheduler tcp://127.0.0.1:8786`` gets a real scheduler with two workers,
started here (on another free port, substituted in that one command, when 8786 is taken)
and ended by PID.  The only lines not run are ``make demo`` / ``make test``: CI runs them.
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from procutil import _alive, claim_port, communicate_and_end_group, end_processes, free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SCHEDULER = "tcp://127.0.0.1:8786"


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                lines.append(line)
    return lines


COMMANDS = readme_commands()


def test_the_readme_has_only_stealsearch_and_make_commands():
    assert len(COMMANDS) >= 25
    for line in COMMANDS:
        first = shlex.split(line, comments=True)[0]
        assert first == "stealsearch" or line.split("#")[0].strip() in ("make demo", "make test"), line


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A scratch working directory that sees the repository's files."""
    work = tmp_path_factory.mktemp("readme")
    for entry in ROOT.iterdir():
        if entry.name in (".git", ".venv") or entry.name.startswith("."):
            continue
        (work / entry.name).symlink_to(entry)
    return work


@pytest.fixture(scope="module")
def scheduler():
    """A real ``dask scheduler`` with 2 ``dask worker`` processes; its address."""
    claim = claim_port(8786)
    port = 8786 if claim is not None else free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(BIN / "dask")
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)]
    procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1",
                                   "--no-dashboard"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True))
    try:
        from distributed import Client

        deadline = time.monotonic() + 90
        while True:
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(2, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield address
    finally:
        # each process leads its own session: end the group it started (nannies, workers)
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        end_processes([p.pid for p in procs])
        if claim is not None:
            claim.close()
        assert not any(_alive(p.pid) for p in procs)


RUNNABLE = [c for c in COMMANDS if c.startswith("stealsearch")]
AS_PROCESSES = 2      # the first commands run as real processes (see the module docstring)


@pytest.mark.parametrize("index", range(len(RUNNABLE)),
                         ids=[" ".join(shlex.split(c, comments=True)[1:4]) for c in RUNNABLE])
def test_readme_command_runs_as_written(index, clone, request, capsys, monkeypatch):
    line = RUNNABLE[index]
    words = shlex.split(line, comments=True)
    if SCHEDULER in words:
        address = request.getfixturevalue("scheduler")
        words = [address if w == SCHEDULER else w for w in words]
    if index < AS_PROCESSES:
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        proc = subprocess.run(words, cwd=clone, env=env, capture_output=True, text=True,
                              timeout=240)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    else:
        from stealsearch.cli import main

        monkeypatch.chdir(clone)
        code = main(words[1:])
        out, err = capsys.readouterr()
    assert code == 0, (line, err[-2000:])
    assert "Traceback" not in err, (line, err[-2000:])
    assert out.strip(), line
    if "--json" in words:
        json.loads(out)


# -- the Python blocks ---------------------------------------------------------------------

def readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


PY_BLOCKS = readme_python_blocks()

#: What the first lines a block prints must start with (the values its comments promise).
PY_FIRST_LINES = {
    "from stealsearch.problems.clique import CliqueProblem": ["11 [", "1735"],
    "from stealsearch.problems.liquid import swiss_t1": ["liquid 48 1834.67 129"],
    "from stealsearch.problems.uts import UTSProblem": ["4130071 {'leaves': 3305118, 'depth': 10}"],
    "class Queens(PythonProblem)": ["92"],
}


def test_the_readme_has_python_blocks():
    assert len(PY_BLOCKS) >= 5
    for key in PY_FIRST_LINES:
        assert sum(key in b for b in PY_BLOCKS) == 1, key


@pytest.mark.parametrize("index", range(len(PY_BLOCKS)),
                         ids=[b.splitlines()[0][:40] for b in PY_BLOCKS])
def test_readme_python_block_runs_as_a_script(index, clone):
    """Each block saved as ``script.py`` and run: no traceback, each line printed once (a
    block that starts a LocalCluster without its ``__main__`` guard printed its first line
    once per worker process and failed with ~30 "bootstrapping" tracebacks), the promised
    values, and no process left behind (the script's session is checked by its group)."""
    block = PY_BLOCKS[index]
    script = clone / f"readme_block_{index}.py"
    script.write_text(block)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=clone, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    # the cluster's processes end with the script
    out, err, leftover = communicate_and_end_group(proc, timeout=300)
    assert not leftover, "the README block left a process behind"
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "bootstrapping" not in err, err[-3000:]
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if lines:
        assert lines.count(lines[0]) == 1, out
    for key, firsts in PY_FIRST_LINES.items():
        if key in block:
            assert len(lines) >= len(firsts), out
            for line, want in zip(lines, firsts):
                assert line.startswith(want), (line, want)
