"""Local clusters under dask's ``multiprocessing-method: forkserver``: the workers are
forked by a forkserver that preloaded our modules, the search is exact, and every
process (the forkserver too) ends with the run.  In a subprocess: the forkserver lives
as long as the process that started it."""
import json
import os
import subprocess
import sys

from conftest import REPO, end_pids, wait_gone

SCRIPT = r"""
import json, multiprocessing.forkserver as fs, os, sys
import psutil
from stealsearch.engine.deploy.cluster import FORKSERVER_PRELOAD, local_cluster
from stealsearch.engine import solve
from stealsearch.problems.uts import UTSProblem, UTSParams

cluster = local_cluster(2)
try:
    from distributed import Client
    with Client(cluster) as client:
        parents = set(client.run(os.getppid).values())
        loaded = client.run(lambda: sorted(m for m in FORKSERVER_PRELOAD if m in sys.modules))
        tree = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 9 -b 4 -r 19"))
        par = solve(tree, client=client, workers=2)
finally:
    cluster.close()
seq = solve(tree, backend="sequential")
forkserver = [p.pid for p in psutil.Process().children() if p.pid in parents]
print(json.dumps({"parents": sorted(parents), "me": os.getpid(), "forkserver": forkserver,
                  "preload": fs._forkserver._preload_modules,
                  "loaded": [sorted(v) for v in loaded.values()],
                  "count": par.count, "seq": seq.count, "status": par.status}))
"""


def test_workers_forked_by_a_preloaded_forkserver_search_exactly_and_end():
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD="forkserver")
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        end_pids([proc.pid])
    assert proc.returncode == 0, err
    got = json.loads(out.strip().splitlines()[-1])
    # the workers' parent is one process, a child of the script: the forkserver
    assert len(got["parents"]) == 1 and got["forkserver"] == got["parents"]
    assert got["parents"] != [got["me"]]
    from stealsearch.engine.deploy.cluster import FORKSERVER_PRELOAD

    assert got["preload"] == list(FORKSERVER_PRELOAD)
    assert got["loaded"] == [sorted(FORKSERVER_PRELOAD)] * 2
    assert got["count"] == got["seq"] and got["status"] == "exhausted"
    # the forkserver ended with the script that started it
    assert wait_gone(got["forkserver"], 30) == []
