"""Compile every problem package's numba kernels once, in one process, before the tests.

The kernels are compiled with ``cache=True``: the first process to run one writes it to
numba's on-disk cache (next to the sources), every later process loads it (~0.1-1 s).  In
a fresh clone nothing is cached yet, and the first tests that start a LocalCluster had
each of its worker processes compile the same clique kernels at the same time: the
suite's slowest tests on a fresh clone were those compiles (a kill test 27 s, a schema
test 21 s, a tiny-limit test 29 s; 0.2-0.9 s each with the cache warm), several processes
doing one compile's work.  tests/conftest.py runs :func:`warm` once per session before
the first test, so each kernel is compiled once; with a warm cache it only loads them.

Each package's own ``warmup`` (its sweep items', ``stealsearch.problems.*.sweep_items``)
is what runs, plus the clique modes the sweeps do not use; nothing here is asserted (the
tests check the results), an error is raised as it comes.

numba's cache of a kernel holds the helpers it calls from other files, and is renewed only
when the kernel's own file changes; a helper edited alone would leave its callers' cached
code as it was.  So first, :func:`drop_stale_caches` removes a problem package's numba
cache files (its sub-packages' included) that are older than its newest module with numba
functions.

    python tests/warm_kernels.py      # the same, with the seconds each package took
"""
import time
from pathlib import Path

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"


def _clique_modes() -> None:
    """The clique kernels of every mode and vertex order (the sweeps' warm-up runs the
    optimise mode in the default order only)."""
    from stealsearch.engine.solve import solve
    from stealsearch.problems.clique.generators import gnp
    from stealsearch.problems.clique.problem import CliqueProblem

    from stealsearch.problems.clique.problem import ORDERS

    graph = gnp(40, 0.5, seed=1)
    for mode, extra in (("decide", {"k": 5}), ("count", {}), ("count-maximal", {})):
        solve(CliqueProblem(graph, mode=mode, **extra), backend="sequential")
    for order in ORDERS:
        solve(CliqueProblem(graph, order=order), backend="sequential")


def _liquid_teams() -> None:
    """The liquid kernels the sweeps' warm-up does not load: team counting, colouring."""
    from stealsearch.engine.solve import solve
    from stealsearch.problems.liquid.problem import ColouringProblem, TeamCountProblem
    from stealsearch.problems.liquid.topology import fig1_traffic, no_team_traffic

    solve(TeamCountProblem(fig1_traffic(), full=True), backend="sequential")
    solve(ColouringProblem(no_team_traffic()), backend="sequential")


def _steps():
    from stealsearch.problems.clique import sweep_items as clique
    from stealsearch.problems.commclust import sweep_items as commclust
    from stealsearch.problems.hrelation import sweep_items as hrelation
    from stealsearch.problems.liquid import sweep_items as liquid
    from stealsearch.problems.twolevel import sweep_items as twolevel
    from stealsearch.problems.uts import sweep_items as uts

    return [("uts", uts._warmup), ("clique", clique._warmup), ("clique modes", _clique_modes),
            ("liquid", liquid._warmup), ("liquid teams", _liquid_teams), ("hrelation", hrelation._warmup),
            ("commclust", commclust._warmup), ("twolevel", twolevel._warmup)]


def drop_stale_caches(root: Path = PROBLEMS) -> list:
    """Remove the numba cache files (``*.nbi``, ``*.nbc``) of each package under ``root``,
    sub-packages included, that are older than the package's newest module with numba
    functions; their names."""
    removed = []
    for package in sorted(p for p in root.iterdir() if p.is_dir()):
        numba_modules = [p for p in package.rglob("*.py") if "@njit" in p.read_text()]
        if not numba_modules:
            continue
        newest = max(p.stat().st_mtime for p in numba_modules)
        for f in sorted(package.rglob("__pycache__/*.nb[ic]")):
            if f.stat().st_mtime < newest:
                f.unlink(missing_ok=True)
                removed.append(f.name)
    return removed


def warm() -> dict:
    """Drop stale numba caches, then run every step; the seconds each took."""
    drop_stale_caches()
    seconds = {}
    for name, step in _steps():
        t = time.perf_counter()
        step()
        seconds[name] = round(time.perf_counter() - t, 2)
    return seconds


if __name__ == "__main__":
    print(warm())
