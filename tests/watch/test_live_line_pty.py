"""The live line through a ramp-up's hand-over, drawn on a real terminal (a pty): one
line with one clock.  Phase 1 searches here, holds at a node count until its
LocalCluster is up (the hand-over is forced, not timed), and the cluster's line takes
the place of phase 1's and goes on from its count and its time."""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

SCRIPT = """
from stealsearch.engine.transports.rampup import Place, run_rampup
from stealsearch.problems.uts import UTSProblem

if __name__ == "__main__":
    r = run_rampup(UTSProblem.preset("T1"), place=Place(workers=1), grace=3600.0,
                   handover_nodes=1_000_000, progress=True)
    print("RESULT", r.count, r.phases[0]["nodes"], flush=True)
"""

#: a frame of the live line: "<desc>: <count> nodes ... <elapsed mm:ss>"
FRAME = re.compile(r"^(uts \(ramp-up\)|uts on 1 workers): ([\d.]+)([kMG]?) nodes .*?(\d+):(\d\d)$")
SCALE = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}


def _run_in_a_terminal(script, timeout: float = 240.0) -> str:
    leader, follower = pty.openpty()
    # a terminal of 160 columns: tqdm sizes the line to it (a new pty has 0)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))
    proc = subprocess.Popen([sys.executable, str(script)], stdin=follower, stdout=follower,
                            stderr=follower, start_new_session=True)
    os.close(follower)
    out, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:                 # the terminal closed: the process ended
                break
            if not chunk:
                break
            out += chunk
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(leader)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return out.decode(errors="replace")


def test_the_line_goes_on_through_a_hand_over_as_one_line_with_one_clock(tmp_path):
    script = tmp_path / "live.py"
    script.write_text(SCRIPT)
    out = _run_in_a_terminal(script)
    assert "RESULT 4130071 1000000" in out, out[-2000:]     # T1, handed over at 1 M
    rows = [row for row in out.split("\n") if " nodes " in row]
    # one live line: a terminal row it was drawn on and left is one it cleared and a
    # line written above it took ("dashboard: ..."); its frames go on on the next row
    for row in rows[:-1]:
        segments = [f.strip() for f in row.split("\r")]
        last = max(i for i, f in enumerate(segments) if f)
        assert not FRAME.match(segments[last]) and not segments[last - 1], row[-300:]
    assert FRAME.match([f for f in rows[-1].split("\r") if f.strip()][-1].strip()), rows[-1]
    frames = [FRAME.match(f.strip()) for row in rows for f in row.split("\r")]
    frames = [m for m in frames if m]
    descs = [m.group(1) for m in frames]
    assert "uts (ramp-up)" in descs and "uts on 1 workers" in descs, descs
    assert descs == sorted(descs, key=lambda d: d != "uts (ramp-up)"), descs   # 1, then 2
    # one clock and one count: neither goes back, the hand-over included
    clocks = [int(m.group(4)) * 60 + int(m.group(5)) for m in frames]
    nodes = [float(m.group(2)) * SCALE[m.group(3)] for m in frames]
    assert clocks == sorted(clocks), list(zip(descs, clocks))
    assert nodes == sorted(nodes), list(zip(descs, nodes))
    first_cluster = descs.index("uts on 1 workers")
    assert nodes[first_cluster] >= 1_000_000            # it goes on from phase 1's count
