"""Rebuild the README's sample inputs in this folder (deterministic: fixed seeds).

    python examples/data/generate.py

* ``g.clq``       DIMACS: G(90, 0.5) (seed 1)
* ``edges.txt``   edge list: G(150, 0.2) (seed 2) with a clique planted on 12 vertices
* ``messages.csv`` an h-relation, P = 8, h = 20 (seed 1)
* ``table.csv``   the commclust paper's Table 1 (cg8, 8 processes)
* ``trace.txt``   a point-to-point trace of 8 processes, two groups of 4 that talk inside
* ``dag.json``    a 2LVDS instance, 40 tasks (layered, seed 1), and the same instance as
  ``tasks.csv`` + ``arcs.csv``
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main() -> None:
    from stealsearch.problems.clique.generators import gnp
    from stealsearch.problems.clique.io import write_dimacs
    from stealsearch.problems.commclust.generators import example_table
    from stealsearch.problems.commclust.io import write_table_csv
    from stealsearch.problems.hrelation.generators import random_instance as hrel_instance
    from stealsearch.problems.hrelation.model import write_messages
    from stealsearch.problems.twolevel.generators import random_instance as dag_instance
    from stealsearch.problems.twolevel.io import write_csv, write_json

    write_dimacs(gnp(90, 0.5, seed=1), HERE / "g.clq", comment="G(90, 0.5), seed 1")

    g = gnp(150, 0.2, seed=2)
    edges = {tuple(sorted(map(int, e))) for e in g.edges()}
    planted = list(range(0, 150, 12))[:12]
    edges |= {(a, b) for i, a in enumerate(planted) for b in planted[i + 1:]}
    with open(HERE / "edges.txt", "w") as f:
        f.write("# G(150, 0.2) seed 2 with a clique planted on "
                + " ".join(map(str, planted)) + "\n")
        for a, b in sorted(edges):
            f.write(f"{a} {b}\n")

    write_messages(hrel_instance(8, 20, seed=1), HERE / "messages.csv")
    write_table_csv(example_table("cg8"), str(HERE / "table.csv"))

    rng = np.random.default_rng(3)
    with open(HERE / "trace.txt", "w") as f:
        f.write("# src dst count: processes 0-3 and 4-7 talk mostly inside their group\n")
        f.write("processes 8\n")
        for a in range(8):
            for b in range(8):
                if a != b:
                    same = (a < 4) == (b < 4)
                    f.write(f"{a} {b} {int(rng.integers(50, 100) if same else rng.integers(0, 5))}\n")

    dag = dag_instance(40, seed=1, kind="layered")
    write_json(dag, HERE / "dag.json")
    write_csv(dag, HERE / "tasks.csv", HERE / "arcs.csv")


if __name__ == "__main__":
    main()
