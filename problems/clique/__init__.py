"""Maximum clique on the stealstack engine (seed 003: Thimm, Kreher, Merkey 2005).

>>> from stealsearch.engine.solve import solve
>>> from stealsearch.problems.clique import CliqueProblem, gnp
>>> r = solve(CliqueProblem(gnp(60, 0.5, seed=1)), backend="sequential")
>>> r.status, r.objective, r.verified
('optimal', 8, True)
"""
from .generators import (decode_design, decode_factorization, design_graph, factor_graph,
                       gnp, named_graph, seed_figure_1_1)
from .model import CliqueInputError, Graph
from .io import read_dimacs, read_edge_list, read_graph, write_dimacs
from .problem import BOUNDS, MODES, CliqueProblem
from .verify import check_clique

__all__ = ["CliqueProblem", "CliqueInputError", "Graph", "BOUNDS", "MODES", "check_clique",
           "read_dimacs", "read_edge_list", "read_graph", "write_dimacs", "gnp",
           "design_graph", "factor_graph", "named_graph", "seed_figure_1_1",
           "decode_design", "decode_factorization", "max_clique"]


def max_clique(graph, bound: str = "auto", backend: str = "auto", **kwargs):
    """Maximum clique of a :class:`Graph` or a networkx graph, as labels.

    Parameters
    ----------
    graph : Graph or networkx graph
    bound : str, optional (default "auto")
        One of :data:`BOUNDS`; ``"auto"`` picks one by the graph's density and first
        clique, as :class:`CliqueProblem` and the ``clique`` command do.
    backend : str, optional (default "auto")
        As :func:`stealsearch.engine.solve.solve`'s, whose default it is.
    **kwargs
        Passed on to :func:`stealsearch.engine.solve.solve` (``workers``,
        ``time_limit``, ...).

    Returns
    -------
    list
        The labels of a maximum clique (of the best clique found, when a limit stopped
        the search first).

    >>> import networkx as nx
    >>> max_clique(nx.complete_graph(["x", "y", "z"]))
    ['x', 'y', 'z']
    """
    from stealsearch.engine.solve import solve

    if not isinstance(graph, Graph):
        graph = Graph.from_networkx(graph)
    return solve(CliqueProblem(graph, bound=bound), backend=backend, **kwargs).solution
