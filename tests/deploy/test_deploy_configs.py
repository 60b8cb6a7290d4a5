"""The shipped cluster_configs/*.yaml, read and checked, and what they would submit:
the SLURM and PBS job scripts (dask-jobqueue renders them without a batch system) and
the Kubernetes DaskCluster resource (dask-kubernetes' make_cluster_spec, no cluster)."""
import inspect
from pathlib import Path

import pytest

from stealsearch.engine.deploy.cluster import DEFAULT_WORKERS, read_cluster_config

CONFIGS = Path(__file__).resolve().parents[2] / "cluster_configs"


def test_every_shipped_config_is_listed_and_parses():
    import importlib.util

    names = sorted(p.stem for p in CONFIGS.glob("*.yaml"))
    assert names == ["kubernetes", "local", "pbs", "scheduler", "slurm", "ssh", "tls"]
    for name in names:
        if name == "kubernetes" and importlib.util.find_spec("dask_kubernetes") is None:
            continue  # not in the test extra; its own test below says so
        if name == "tls":
            continue  # names certificate files; tests/deploy/test_deploy_tls.py makes them
        assert read_cluster_config(str(CONFIGS / f"{name}.yaml")).kind == name
    readme = (CONFIGS / "README.md").read_text()
    assert all(f"{name}.yaml" in readme for name in names)


def test_local_and_scheduler_configs():
    local = read_cluster_config(str(CONFIGS / "local.yaml"))
    assert local.kwargs == {"workers": DEFAULT_WORKERS, "threads_per_worker": 1}
    scheduler = read_cluster_config(str(CONFIGS / "scheduler.yaml"))
    assert scheduler.address == "tcp://127.0.0.1:8786" and scheduler.factory is None


def test_ssh_config_runs_one_thread_per_worker_process():
    pytest.importorskip("asyncssh", reason="the ssh extra (pip install 'stealsearch[ssh]')")
    plan = read_cluster_config(str(CONFIGS / "ssh.yaml"))
    assert plan.kwargs["hosts"][0] == "node0"            # the first host runs the scheduler
    assert plan.kwargs["worker_options"]["nthreads"] == 1


@pytest.mark.parametrize("name, directives", [
    ("slurm", ["#SBATCH -p normal", "#SBATCH --cpus-per-task=16", "#SBATCH -t 01:00:00"]),
    ("pbs", ["#PBS -q workq", "#PBS -l select=1:ncpus=16", "#PBS -l walltime=01:00:00"]),
])
def test_jobqueue_configs_render_the_expected_job_script(name, directives):
    pytest.importorskip("dask_jobqueue", reason="the jobqueue extra (pip install 'stealsearch[jobqueue]')")
    plan = read_cluster_config(str(CONFIGS / f"{name}.yaml"))
    assert plan.scale == {"jobs": 4 if name == "slurm" else 2}
    # constructing the cluster starts only its scheduler, here; no job is submitted
    assert plan.expected_workers == plan.scale["jobs"] * 16
    # (the dashboard on a free port: another cluster on this machine may hold 8787)
    with plan.factory(**plan.kwargs, scheduler_options={"dashboard_address": ":0"}) as cluster:
        script = cluster.job_script()
        address = cluster.scheduler_address
    for line in directives:
        assert line in script, script
    worker = next(l for l in script.splitlines() if "distributed.cli.dask_worker" in l)
    # 16 worker processes of one thread each per job, pointed at this scheduler
    assert f"dask_worker {address}" in worker
    assert "--nworkers 16" in worker and "--nthreads 1" in worker


def test_kubernetes_config_makes_the_expected_cluster_resource():
    operator = pytest.importorskip(
        "dask_kubernetes.operator",
        reason="dask-kubernetes (~260 MB) is not in the test extra: pip install 'stealsearch[kubernetes]'")
    plan = read_cluster_config(str(CONFIGS / "kubernetes.yaml"))
    assert plan.factory is operator.KubeCluster
    # the keywords KubeCluster hands on to make_cluster_spec when it creates the cluster
    keys = set(inspect.signature(operator.make_cluster_spec).parameters)
    spec = operator.make_cluster_spec(**{k: v for k, v in plan.kwargs.items() if k in keys})
    assert spec["kind"] == "DaskCluster" and spec["metadata"]["name"] == "stealsearch"
    worker = spec["spec"]["worker"]
    assert worker["replicas"] == 4
    (container,) = worker["spec"]["containers"]
    assert container["args"][:3] == ["dask-worker", "--nthreads", "1"]
    assert container["resources"]["limits"] == {"cpu": "1", "memory": "2Gi"}
