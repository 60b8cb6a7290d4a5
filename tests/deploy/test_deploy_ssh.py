"""SSHCluster for real: an sshd of our own on 127.0.0.1 (conftest.local_sshd), a
cluster config of kind ssh naming it twice (scheduler + one worker host), and a
search through ``stealsearch --cluster-config``."""
import json
import subprocess
import sys
import threading

import pytest

from conftest import REPO, STEALSEARCH, descendants, end_pids, wait_gone

pytest.importorskip("asyncssh", reason="the ssh extra (pip install 'stealsearch[ssh]')")


def test_uts_on_an_ssh_cluster_of_this_machine(local_sshd, tmp_path):
    config = tmp_path / "ssh.yaml"
    config.write_text(f"""\
kind: ssh
hosts: [127.0.0.1, 127.0.0.1]
connect_options: {{port: {local_sshd.port}, username: {local_sshd.user},
                  client_keys: ["{local_sshd.key}"], known_hosts: null}}
worker_options: {{nthreads: 1, n_workers: 1}}
scheduler_options: {{port: 0, dashboard: false}}
remote_python: {sys.executable}
""")
    proc = subprocess.Popen([STEALSEARCH, "uts", "--tree", "default", "--cluster-config", str(config),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO, start_new_session=True)
    stop = threading.Event()

    def watch():  # record the processes sshd starts for us while they live
        while not stop.wait(0.2):
            local_sshd.track()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        stop.set()
        watcher.join(timeout=5)
        end_pids([proc.pid, *descendants(proc.pid)])
    assert proc.returncode == 0, err[-3000:]
    result = json.loads(out)
    assert result["count"] == 1732 and result["status"] == "exhausted"
    assert result["backend"] == "dask[1]"
    # the scheduler, the nanny, the worker process: all started over ssh,
    # all gone once the command closed its cluster (sshd itself excluded)
    sessions = [p for p in local_sshd.sessions() if p != local_sshd.proc.pid]
    assert len(sessions) >= 3
    assert not wait_gone(sessions, timeout=20), "processes started over ssh outlived the run"
