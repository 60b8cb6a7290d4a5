import os
import sys

# Functions defined in these test modules (sweep item kinds, fault helpers) run on Dask
# workers, which import them by module name: this folder must be on the path here and
# in spawned worker processes.
HERE = os.path.dirname(__file__)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
os.environ["PYTHONPATH"] = HERE + os.pathsep + os.environ.get("PYTHONPATH", "")
