"""stealsearch's generic parallel backtracking engine (knows nothing of any problem).

>>> from stealsearch.engine import solve, StealPolicy
>>> from stealsearch.engine import PythonProblem, FastProblem, RowLayout  # the reference and fast tiers

The engine in one picture (which file a change belongs in)
=========================================================

A search problem hands the engine a root frontier (node rows) and a kernel that
advances a depth-first search over a stack of rows for a budget of expansions; the
engine owns everything else.  Its files form layers; each imports only the ones below
it, and none imports a problem or the application (tests/test_layers.py).

**The contract and the tiers** -- what a problem is.
``problem.py`` is the plug-in contract and the raw tier (the kernel's signature, its
statuses ``BUDGET``/``EMPTY``/``IMPROVED``/``GROW``, counter slots, modes, and
``check_problem``).  ``reference.py`` is the Python tier (``PythonProblem``: ``root`` and
``children`` in plain Python, its own stack of objects).  ``fast.py`` is the fast tier
(``FastProblem``: per-node numba functions; it generates, caches and compiles the chunk
driver, helpers included); ``layout.py`` names the fields of its node rows
(``RowLayout``, ``Bits``, ``copy_row``...).  ``bitset.py``: popcount and ctz for kernels.

**One worker's search** -- the stealstack, without any transport.
``stack.py``: a worker's explicit stack, the chunk call of the kernel, the budget tuner.
``stealstack.py``: the shared portion (RELEASE, ACQUIRE, STEAL under one lock) and the
termination credit.  ``victims.py``: whom a thief polls.  ``policy.py``: every tunable
(``StealPolicy``).  ``termination.py``: rank 0's coordinator (exact termination by
credit, node-limit grants, stops) and its handlers.  ``worker.py``: the worker core, one
epoch on one worker -- its lanes (search threads), RELEASE/ACQUIRE/FINDWORK, the
node-limit reservations, the incumbent, the cut at the epoch's end; it imports no Dask,
its *host* carries its messages.  A change to how a worker searches, releases or steals
goes here; the exactness arguments are written beside the code.

**Epochs** -- how a search survives, stops and resumes.
``epochs.py``: a consistent cut (``Cut``: commit, roll back, deal), an epoch's spec and
outcome, the message names, the conservation identity, and the argument that no node
is lost or counted twice.  ``checkpoint.py``: cuts on disk, atomically.  ``loop.py``: THE
epoch loop of every backend (``EpochLoop``/``run_epochs``): limits between epochs, each
epoch's spec, commit or roll back, stop reasons, checkpoints, the search clock, the live
line and its estimate, the one place a ``SearchResult`` is built.  A change to what
happens *between* epochs, or to what every result reports, goes here and nowhere else.

**Transports** -- where an epoch runs (subclasses of ``loop.Transport``).
``sequential.py``: ``OneStack``, one stack in this thread (the reference backend; its
stack is a cut between any two chunks).  ``lanes.py``: ``Lanes``, T threads of the worker
core in this process (``--sequential --threads-per-worker T``; no Dask).
``dask_backend/``: ``DaskTransport``, the worker core on every Dask worker --
``driver.py`` (which workers, how an epoch runs), ``epoch_watch.py`` (one epoch's tasks,
shares, outcomes, lost and leaving workers), ``shipper.py`` (the problem to the
workers), ``calls.py`` (every client call, each bounded), ``timeouts.py`` (every client
wait); on the workers ``task.py`` (the epoch's task: the core's thin adapter),
``plugin.py`` (message router, set-up handlers, hand-over on a graceful close) and
``tables.py`` (the searches' state on a worker).  ``rampup.py``: two loops over one cut
-- ``Lanes`` (``OneStack`` for a problem that holds the GIL) here at once, the rows
handed to ``DaskTransport`` if the search lasts.  A new backend is a new ``Transport``.

**The entry points.**  ``solve.py``: ``solve()`` and ``resume()``, argument checks and the
choice of backend.  ``result.py``: ``SearchResult`` and ``WorkerStats``; ``outcome.py``: the
status rules, decoding and the independent verification of a solution.

**Around a search.**  ``cluster.py``: ``dask_client()``, the one door to a cluster (a
LocalCluster, a scheduler, a config), dashboard, probing; ``cluster_config.py``: reading
``cluster_configs/*.yaml``; ``addresses.py``: a scheduler address checked.
``interrupts.py``: Ctrl-C and SIGTERM, and starting worker processes shielded from them.
``progress.py``: the live line; ``estimate.py``: fraction done and ETA (Knuth probes);
``monitor.py``: the /stealsearch dashboard page.  ``timing.py``: warm-up and honest
speed-ups.  ``inputs.py``: reading inputs and writing outputs safely.  ``errors.py``: the
exceptions raised on purpose.

**Work that is not a stealstack search.**  ``sweep.py`` runs a grid of items and keeps a
table (``sweep_grid.py``: the grid; ``sweep_table.py``: the table and reading it back;
``provenance.py``: CPU model and git commit of each row); ``tasks.py``: the one runner
of plain functions as Dask tasks (a sweep's small items, ``stealsearch hrel``);
``commandline.py``: the flags and helpers every command shares.

A file over ~500 lines says at its top why it is one file.
"""
from .errors import InputError, SearchFailed  # noqa: F401
from .policy import StealPolicy  # noqa: F401
from .problem import (BUDGET, DECIDE, EMPTY, ENUMERATE, GROW, IMPROVED, N_ENGINE_COUNTERS,  # noqa: F401
                      NODES, OPTIMISE, SOLUTIONS, ContractError, InvalidProblem, Mode, Problem,
                      SolutionError, check_problem)
from .reference import PythonProblem  # noqa: F401
from .layout import Bits, RowLayout  # noqa: F401
from .fast import NOT_A_SOLUTION, FastProblem  # noqa: F401
from .result import SearchResult, WorkerStats  # noqa: F401
from .solve import resume, solve  # noqa: F401
