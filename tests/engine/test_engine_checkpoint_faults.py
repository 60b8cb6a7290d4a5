"""Checkpoint writes that fail (a full disk: a real ENOSPC on a small tmpfs where this
user may mount one, an injected one otherwise): said once, the search goes on without
checkpoints (or stops with its result when they are required), no temporary file left,
the folder keeps the last cut and resumes exactly.  Also stdout that cannot be written,
and two runs on one checkpoint folder."""
import errno
import json
import logging
import os
import shutil
import subprocess
import sys

import pytest

from stealsearch.cli import main
from stealsearch.engine import resume, solve
from stealsearch.engine.core import checkpoint as ck
from stealsearch.engine.transports import sequential
from stealsearch.problems.uts import UTSProblem

from forced import NodeEpochs

BIN = os.path.dirname(sys.executable)
T1_COUNT = 4130071


def _fill(folder) -> None:
    """Fill the file system of ``folder`` to the last byte (a file ``filler`` there)."""
    with open(os.path.join(folder, "..", "filler"), "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        for size in (4096, 512, 1):      # the last blocks too
            try:
                while True:
                    f.write(b"\0" * size)
                    f.flush()
            except OSError:
                pass


@pytest.fixture(params=["tmpfs", "injected"])
def full_disk(request, tmp_path, monkeypatch):
    """``(folder, fill)``: a checkpoint folder, and a call that makes its disk full from
    then on (a 4 MB tmpfs filled to the last byte; where none can be mounted, every
    later write of a file there fails with ENOSPC)."""
    base = tmp_path / "disk"
    base.mkdir()
    if request.param == "tmpfs":
        if os.geteuid() != 0 or shutil.which("mount") is None or subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(base)],
                capture_output=True).returncode != 0:
            pytest.skip("no tmpfs can be mounted here (the injected ENOSPC covers it)")
        request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(base)]))
        return base / "ck", lambda: _fill(base / "ck")
    full = []
    real_open = open

    def failing_open(path, mode="r", *args, **kwargs):
        if full and "w" in mode and str(path).startswith(str(base)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(ck, "open", failing_open, raising=False)
    return base / "ck", lambda: full.append(True)


#: a sequential epoch ends every this many nodes (T1: 9 cuts), not at moments: on a fast
#: machine T1 is searched before its first timed cut, so no write would fail mid-search
CUT_NODES = 500_000


def fill_after(writes: int, fill, monkeypatch) -> list:
    """Make the disk full once ``writes`` cuts were written (0: before the first), and
    cut the sequential backend's epochs at node counts (:data:`CUT_NODES`)."""
    real_run_epochs = sequential.run_epochs
    monkeypatch.setattr(sequential, "run_epochs", lambda problem, transport, **kw:
                        real_run_epochs(problem, NodeEpochs(transport, CUT_NODES), **kw))
    done = []
    real_write = ck.CheckpointWriter.write

    def write(self, cut, status="running"):
        if len(done) == writes:
            fill()
        real_write(self, cut, status=status)
        done.append(status)

    monkeypatch.setattr(ck.CheckpointWriter, "write", write)
    return done


def leftovers(folder) -> list:
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name)


def cannot_write(caplog) -> list:
    return [r for r in caplog.records if "cannot write it" in r.getMessage()]


def test_a_full_disk_is_said_once_and_the_count_is_exact(full_disk, monkeypatch, caplog):
    """The disk fills after the first cut: one warning, the search goes on without
    checkpoints to the exact count, no temporary file; the folder keeps that first cut,
    and a resume from it (once there is room) reaches the same exact count."""
    folder, fill = full_disk
    written = fill_after(1, fill, monkeypatch)
    caplog.set_level(logging.WARNING, logger="stealsearch")
    r = solve(UTSProblem.preset("T1"), backend="sequential", checkpoint=str(folder),
              checkpoint_every=0.05)
    assert (r.status, r.count) == ("exhausted", T1_COUNT) and r.conservation()["holds"]
    assert "No space left on device" in r.info["checkpoint_error"]
    assert len(cannot_write(caplog)) == 1 and "goes on without" in cannot_write(caplog)[0].getMessage()
    assert len(written) == 1, "a checkpoint that failed was tried again"
    assert leftovers(folder) == []
    first = json.loads((folder / "manifest.json").read_text())
    assert first["status"] == "running" and first["rows"] > 0
    # room again; a temporary file of a writer that died (kill -9) is removed by the next
    (folder / ".." / "filler").unlink(missing_ok=True)
    monkeypatch.undo()
    (folder / f".{first['rows_file']}.tmp-999999").write_bytes(b"partial")
    again = resume(str(folder), backend="sequential")
    assert (again.status, again.count) == ("exhausted", T1_COUNT)
    assert leftovers(folder) == []


def test_required_checkpoints_stop_the_search_with_its_result(full_disk, monkeypatch, caplog,
                                                              capsys):
    """``--checkpoint-required``: the first write fails (the disk was full from the
    start), the search stops as interrupted with its result (exit 1, the result still
    printed), one line says why, no temporary file; through the API the same result."""
    folder, fill = full_disk
    fill_after(0, fill, monkeypatch)
    caplog.set_level(logging.WARNING, logger="stealsearch")
    rc = main(["uts", "--tree", "T1", "--sequential", "--checkpoint", str(folder),
               "--checkpoint-required", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert (res["status"], res["stop_reason"]) == ("interrupted", "checkpoint_failed")
    assert 0 < res["count"] < T1_COUNT and res["conservation"]["holds"]
    assert len(cannot_write(caplog)) == 1 and "checkpoints are required" in cannot_write(caplog)[0].getMessage()
    assert leftovers(folder) == []
    assert main(["uts", "--tree", "T1", "--sequential", "--checkpoint-required"]) == 2


def test_stdout_that_cannot_be_written_is_one_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        p = subprocess.run([os.path.join(BIN, "stealsearch"), "uts", "--tree", "default",
                            "--sequential", "--json"], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    assert p.returncode == 1
    assert p.stderr == "stealsearch: error: cannot write the output (No space left on device)\n"


def test_a_folder_another_search_writes_into_is_refused_in_one_true_line(tmp_path):
    """Two runs on one checkpoint folder would delete each other's rows files: the second
    is refused, and the line names the first (not "holds no stealsearch checkpoint")."""
    folder = tmp_path / "ck"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from stealsearch.engine.core.checkpoint import DirectoryLock, _make_directory; "
         "d = _make_directory(sys.argv[1]); lock = DirectoryLock.take(d, sys.argv[1]); "
         "print('held', flush=True); sys.stdin.read()", str(folder)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(ck.CheckpointError, match=f"another search \\(process {holder.pid}\\) "
                                                     "is writing into it"):
            solve(UTSProblem.preset("default"), backend="sequential", checkpoint=str(folder))
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # the first run gone, the folder is free again
    r = solve(UTSProblem.preset("default"), backend="sequential", checkpoint=str(folder))
    assert r.count == 1732
