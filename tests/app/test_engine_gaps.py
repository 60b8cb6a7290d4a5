"""The engine's edge (engine/deploy/cluster.py, engine/solve.py): a local
cluster config's bad *values* (not only unknown keys) are one ClusterUnavailable line,
and solve()'s limits of the wrong type are an InputError, not a TypeError from a
comparison deep inside."""
import pytest

from stealsearch.engine.core.errors import InputError
from stealsearch.cli import main


@pytest.mark.parametrize("text", ["kind: local\nworkers: 2\nmemory_limit: lots\n",
                                  "kind: local\nworkers: 2\ndashboard_address: 'x'\n"])
def test_bad_values_in_a_local_cluster_config_are_one_line(tmp_path, capsys, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    code = main(["uts", "--cluster-config", str(path), "--node-limit", "10", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("kw", [{"node_limit": "3"}, {"time_limit": "1"},
                                {"checkpoint_every": "5"}, {"node_limit": 2.5}])
def test_solve_limits_of_the_wrong_type_raise_input_error(kw):
    from stealsearch.engine import solve
    from stealsearch.problems.uts import UTSProblem

    with pytest.raises(InputError):
        solve(UTSProblem.preset("default"), backend="sequential", **kw)
