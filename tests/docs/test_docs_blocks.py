"""Every command and script of the documentation runs as written and prints what the
page says it prints.

A page is followed as a reader follows it (:mod:`docpages` reads its blocks): in an
empty folder of its own, block by block, in order.  A block captioned with a file name
is saved under that name; a ``python`` block is saved and run as a script (a process of
its own: a block that starts a LocalCluster without its ``__main__`` guard fails here as
it would for the reader); an ``sh`` block's lines run one by one; an ``output`` block is
compared with what the block before it printed (doctest's rules: ``...`` stands for
anything, whitespace is not significant).  How an ``sh`` line runs:

* ``stealsearch ARGS`` in this process, through ``stealsearch.cli.main`` (the console
  script calls the same function; each new process would pay ~1-2 s of imports and kernel
  loading on the shared 2-core machine without testing anything more);
* ``dask scheduler ...`` and ``dask worker ...`` as they are written, left running in
  the background as the page says (a terminal of their own), waited for (the scheduler
  answers; its workers have joined), and ended with the page.  When 127.0.0.1:8786 is
  taken, another free port stands in for 8786 in the rest of the page;
* a search on a cluster this machine cannot reach (``--cluster-config`` naming an
  ssh, slurm, pbs, sge, lsf or kubernetes config) is parsed by the command's own parser
  and its config read and checked key by key (``read_cluster_config``), as the command
  does before it starts anything; the search itself is not run;
* ``pip install`` and ``make`` lines are not run (installing: tests/package installs
  the wheel; ``make docs``: test_docs_build.py builds the site);
* any other line (``python script.py``, a redirection, ``cat``) through ``bash -c``.

Every process a page starts ends with it (checked by PID).
"""
from __future__ import annotations

import doctest
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import yaml

import docpages
from procutil import (_alive, claim_port, communicate_and_end_group, descendants, end_processes,
                      free_port, group_alive, port_taken, wait_until)

BIN = Path(sys.executable).parent
PAGES = docpages.pages()
SCHEDULER_PORT = "8786"
#: the config kinds whose cluster this machine cannot reach (ssh: hosts of the reader's)
REMOTE_KINDS = ("ssh", "slurm", "pbs", "sge", "lsf", "kubernetes")
#: first words of the lines that are not run, and why
NOT_RUN = {"pip": "installing (tests/package installs the wheel)",
           "make": "make's targets (make docs: test_docs_build.py builds the site)"}
SHELL = set("|&;<>()$`*?")
TIMEOUT = 240


def _page_id(page: Path) -> str:
    return str(page.relative_to(docpages.DOCS))


# -- what the pages hold ---------------------------------------------------------------------

def test_every_block_is_run_saved_compared_or_plainly_shown():
    """No block in a language that looks runnable and is not run; every ``output`` block
    follows a block that runs; every data file a page shows parses."""
    runnable = 0
    for page in PAGES:
        found = docpages.blocks(page)
        for i, b in enumerate(found):
            if b.kind == "shown":
                assert b.language in docpages.SHOWN, (b.where, b.language)
                _parse_data(b)
            elif b.kind == "output":
                assert i > 0 and found[i - 1].kind in docpages.RUN, \
                    f"{b.where}: an output block must follow an sh or python block"
            elif b.kind == "file":
                _parse_data(b)
            runnable += b.kind in docpages.RUN
    assert runnable >= 30


def test_included_files_hold_no_runnable_block():
    """A page's ``{include}`` brings in files the suite does not follow block by block:
    a command there would escape this test."""
    included = {f for page in PAGES for f in docpages.included_files(page)}
    assert len(included) >= 20
    for path in included:
        assert path.exists(), path
        for _, info, _, _ in docpages._fences(path.read_text()):
            language = info.split()[0] if info else ""
            assert language not in docpages.RUN and not info.startswith("{"), (path, info)


def _parse_data(block) -> None:
    name = (block.caption or "").lower()
    language = block.language or Path(name).suffix.lstrip(".")
    if language in ("yaml", "yml"):
        yaml.safe_load(block.text)
    elif language == "json":
        json.loads(block.text)
    elif language == "toml":
        tomllib.loads(block.text)


# -- following a page ------------------------------------------------------------------------

class Page:
    """One page followed in its own folder: the services it started, the stdout of the
    block just run, the port that stands in for the scheduler's."""

    def __init__(self, folder: Path, capsys, monkeypatch):
        self.folder, self.capsys, self.monkeypatch = folder, capsys, monkeypatch
        self.services: list[subprocess.Popen] = []
        self.port = SCHEDULER_PORT
        self.port_claim = None          # held while this page's scheduler may use 8786
        self.env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")

    def text(self, block) -> str:
        return block.text.replace(SCHEDULER_PORT, self.port)

    # a python block: a script of its own
    def run_script(self, block, index: int) -> str:
        script = self.folder / f"block_{index}.py"
        script.write_text(self.text(block))
        return self.process([sys.executable, script.name], block.where)

    def process(self, argv, where: str, shell: bool = False) -> str:
        proc = subprocess.Popen(argv, cwd=self.folder, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                shell=shell, executable="/bin/bash" if shell else None)
        # a cluster's processes end with their script
        out, err, leftover = communicate_and_end_group(proc, timeout=TIMEOUT)
        assert not leftover, f"{where}: left a process behind"
        assert proc.returncode == 0, f"{where}: exit {proc.returncode}\n{err[-3000:]}"
        assert "Traceback" not in err and "bootstrapping" not in err, f"{where}\n{err[-3000:]}"
        return out

    # an sh line
    def run_line(self, line: str, where: str) -> str:
        words = shlex.split(line, comments=True)
        if words[0] in NOT_RUN:
            return ""
        if words[:2] in (["dask", "scheduler"], ["dask", "worker"]):
            self.start_service(line, words, where)
            return ""
        if words[0] == "stealsearch" and not SHELL & set(line.split("#")[0]):
            if _remote_config(words, self.folder) is not None:
                self.check_remote(words, where)
                return ""
            return self.in_process(words, where)
        return self.process(line, where, shell=True)

    def in_process(self, words, where: str) -> str:
        from stealsearch.cli import main

        self.monkeypatch.chdir(self.folder)
        self.capsys.readouterr()
        code = main(words[1:])
        out, err = self.capsys.readouterr()
        assert code == 0, f"{where}: exit {code}\n{err[-3000:]}"
        assert "Traceback" not in err, f"{where}\n{err[-3000:]}"
        return out

    def check_remote(self, words, where: str) -> None:
        """What the command checks before it reaches a cluster: its flags (its own parser)
        and its config, key by key against the deployer's signature."""
        import importlib.util

        from stealsearch.cli import build_parser
        from stealsearch.engine.core.errors import InputError
        from stealsearch.engine.deploy.cluster_config import read_cluster_config

        self.monkeypatch.chdir(self.folder)
        args = build_parser().parse_args(words[1:])
        assert args.cluster_config, where
        try:
            read_cluster_config(args.cluster_config)
        except InputError as exc:
            # dask-kubernetes (~260 MB) is in no extra the suite installs: the config's
            # check then stops at the missing package, named with its extra
            assert importlib.util.find_spec("dask_kubernetes") is None, (where, exc)
            assert "stealsearch[kubernetes]" in str(exc), (where, exc)

    # dask scheduler / dask worker: left running, as in a terminal of their own
    def start_service(self, line: str, words, where: str) -> None:
        if words[1] == "scheduler" and self.port == SCHEDULER_PORT:
            self.port_claim = claim_port(int(SCHEDULER_PORT))
        if words[1] == "scheduler" and self.port == SCHEDULER_PORT and self.port_claim is None:
            self.port = str(free_port())
            line, words = line.replace(SCHEDULER_PORT, self.port), \
                [w.replace(SCHEDULER_PORT, self.port) for w in words]
        words = [str(BIN / "dask") if i == 0 else w for i, w in enumerate(words)]
        proc = subprocess.Popen(words, cwd=self.folder, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        self.services.append(proc)
        address = f"tcp://127.0.0.1:{self.port}"
        if words[1] == "scheduler":
            wait_until(lambda: port_taken(self.port) or proc.poll() is not None, 60,
                       f"the scheduler of {where} listens")
            assert proc.poll() is None, f"{where}: the scheduler exited ({proc.returncode})"
        else:
            n = int(words[words.index("--nworkers") + 1]) if "--nworkers" in words else 1
            from distributed import Client

            with Client(address, timeout="20s") as client:
                client.wait_for_workers(n, timeout=90)

    def end_services(self) -> None:
        for p in reversed(self.services):       # workers before their scheduler
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.services:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        end_processes([p.pid for p in self.services])
        # a worker's nanny and its worker processes end after the command that started them
        deadline = time.monotonic() + 30
        while any(group_alive(p.pid) for p in self.services) and time.monotonic() < deadline:
            time.sleep(0.2)
        if self.port_claim is not None:
            self.port_claim.close()
            self.port_claim = None
        alive = [p.pid for p in self.services if group_alive(p.pid)]
        for pgid in alive:
            os.killpg(pgid, signal.SIGKILL)
        assert not alive, f"a service outlived its page by 30 s: process groups {alive}"


@pytest.mark.parametrize("page", [p for p in PAGES
                                  if any(b.kind in docpages.RUN for b in docpages.blocks(p))],
                         ids=_page_id)
def test_page_runs_as_written(page, tmp_path, capsys, monkeypatch):
    from stealsearch.engine.deploy import interrupts

    interrupts._quiet_resource_tracker()    # this process's one tracker, there for good
    before = descendants()
    follow = Page(tmp_path, capsys, monkeypatch)
    last_out = None
    try:
        for index, block in enumerate(docpages.blocks(page)):
            if block.kind == "file":
                (tmp_path / block.caption).write_text(follow.text(block))
            elif block.kind == "python":
                last_out = follow.run_script(block, index)
            elif block.kind == "sh":
                last_out = "".join(
                    follow.run_line(line.replace(SCHEDULER_PORT, follow.port),
                                    f"{block.where} (line {n})")
                    for n, line in docpages.commands(block))
            elif block.kind == "output":
                want = follow.text(block)
                flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
                assert doctest.OutputChecker().check_output(want, last_out, flags), \
                    f"{block.where}: printed\n{last_out}\nbut the page shows\n{want}"
    finally:
        follow.end_services()
    # what the page started in this process (a LocalCluster of a command) ends with it
    new = descendants() - before
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in new) and time.monotonic() < deadline:
        time.sleep(0.2)
    leftover = {p for p in new if _alive(p)}
    end_processes(list(leftover), grace=0)
    assert not leftover, f"{_page_id(page)} left processes behind: {leftover}"


# -- helpers ---------------------------------------------------------------------------------

def _remote_config(words, folder: Path) -> str | None:
    """The kind of the config a command names, when its cluster is not this machine's."""
    if "--cluster-config" not in words:
        return None
    path = folder / words[words.index("--cluster-config") + 1]
    kind = (yaml.safe_load(path.read_text()) or {}).get("kind")
    return kind if kind in REMOTE_KINDS else None





