"""A search in this process loads no ``distributed``: the worker core
(engine/core/worker.py) imports no Dask, and the lanes' host is this process.  Checked in a
fresh interpreter, by ``sys.modules`` after the search."""
import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
from stealsearch.cli import main
rc = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m == "distributed" or m.startswith("distributed."))
print(json.dumps({"rc": rc, "distributed": loaded}), file=sys.stderr)
"""


@pytest.mark.parametrize("place", [["--sequential"], ["--sequential", "--threads-per-worker", "2"]])
def test_a_search_in_this_process_loads_no_distributed(place):
    out = subprocess.run([sys.executable, "-c", PROBE, "uts", "--tree", "T1", *place, "--json"],
                         capture_output=True, text=True, timeout=240)
    probe = json.loads(out.stderr.strip().splitlines()[-1])
    assert probe == {"rc": 0, "distributed": []}, out.stderr
    result = json.loads(out.stdout)
    assert result["count"] == 4_130_071               # T1's published size
    assert result["backend"] == ("sequential" if len(place) == 1 else "sequential[2 threads]")
