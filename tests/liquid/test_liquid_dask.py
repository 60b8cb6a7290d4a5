"""The liquid searches on the Dask backend (one LocalCluster for the module)."""
import pytest

from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.engine.solve import solve
from stealsearch.problems.liquid import (TeamCountProblem, fig1_traffic, schedule_traffic,
                             swiss_t1, verify_schedule)
from stealsearch.problems.liquid.generators import random_traffic
from stealsearch.problems.liquid.sweep import run_study


@pytest.fixture(scope="module")
def client():
    with dask_client(workers=2) as c:
        yield c


def test_dask_finds_verified_liquid_schedules(client):
    for x in (fig1_traffic(), swiss_t1().all_to_all([2, 1, 0, 3, 0, 0, 1, 0])):
        r = schedule_traffic(x, backend="dask", client=client)
        assert r["status"] == "liquid"
        verify_schedule(x, r["schedule"], require_liquid=True)


def test_dask_team_counts_equal_sequential(client):
    for x in (fig1_traffic(), random_traffic(3, links=6, transfers=10)):
        for full in (False, True):
            seq = solve(TeamCountProblem(x, full=full), backend="sequential").count
            par = solve(TeamCountProblem(x, full=full), backend="dask", client=client).count
            assert par == seq


def test_dask_decide_no_liquid_schedule(client):
    from stealsearch.problems.liquid import no_team_traffic

    r = schedule_traffic(no_team_traffic(), backend="dask", client=client)
    assert r["status"] == "optimal, not liquid" and r["length"] == 3


def test_study_items_as_dask_tasks(client):
    res = run_study(client, limit=2)
    assert [r["status"] for r in res["rows"]] == ["liquid"] * 2
