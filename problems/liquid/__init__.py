"""Liquid schedules of collective data exchanges (seed 000: Gabrielyan & Hersch,
"Network topology aware scheduling of collective data exchanges").

Faces: the model (:mod:`.model`), topologies and traffic readers (:mod:`.topology`),
round robin (:mod:`.roundrobin`), the engine searches (:mod:`.problem`, kernels in
:mod:`.kernels`), the independent verifier (:mod:`.verify`), generators
(:mod:`.generators`), the Swiss-T1 study, this package's sweep (:mod:`.sweep`) and the CLI (:mod:`.cli`).
"""
from .model import LiquidInputError, Traffic, Transfer
from .roundrobin import round_robin_schedule, round_robin_summary
from .problem import (ColouringProblem, LiquidScheduleProblem, TeamCountProblem, count_teams,
                     greedy_colouring, schedule_traffic)
from .topology import Topology, fig1_traffic, load_topology, load_traffic, no_team_traffic, swiss_t1
from .verify import verify_schedule

__all__ = ["LiquidInputError", "Traffic", "Transfer", "Topology", "fig1_traffic", "no_team_traffic",
           "swiss_t1", "load_topology", "load_traffic", "round_robin_schedule", "round_robin_summary",
           "LiquidScheduleProblem", "TeamCountProblem", "ColouringProblem", "count_teams",
           "greedy_colouring", "schedule_traffic", "verify_schedule"]
