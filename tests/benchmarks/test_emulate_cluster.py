"""The emulated cluster in small (benchmarks/emulate_cluster.py): 3 network namespaces
of one Dask worker x 2 lanes each, every byte between them through the delay proxy,
node cost dilated.  One cluster, three searches: exact; a machine cut off for longer
than the peer timeout, then reconnected (its late bytes delivered); a machine killed.
Each count is checked against the sequential search's, rows are conserved, and every
process and namespace the emulation made is gone at the end.

Needs root and ``ip netns``: skipped, with the reason, elsewhere.
"""
import pytest

from stealsearch.benchmarks import netns

REASON = netns.skip_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"emulated cluster: {REASON}")

#: the real cluster's peer timeout (dilated D times in the emulation)
PEER_TIMEOUT = 0.25
#: dilations tried in turn until the fault lands mid-search: a search lasts at least
#: its CPU time x D / cores (the stretches are sleeps), so a larger D forces it
DILATIONS = (8.0, 32.0, 128.0)


def _faulted(emu, problem, oracle, fault):
    for d in DILATIONS:
        out = emu.run(problem, oracle, dilation=d, rtt_ms=0.5, peer_timeout=PEER_TIMEOUT,
                      fault=dict(fault))
        if "missed" not in out["fault"]:
            return out
        assert out["exact"], out
    pytest.fail(f"the {fault['kind']} never landed mid-search, even at D {DILATIONS[-1]:g}")


def test_emulated_cluster_exact_through_a_cut_and_a_kill():
    from stealsearch.benchmarks.emulate_cluster import Emulation, sequential_oracle
    from stealsearch.problems.uts import UTSParams, UTSProblem

    problem = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 9 -b 4 -r 19"))   # 1,031,269 nodes
    oracle = sequential_oracle(problem)
    emu = Emulation(3, 2, prefix="sstest")
    with emu:
        namespaces = list(emu.bed.ns)
        assert all(len(emu.bed.pids(i)) == 1 for i in range(3))   # one worker a machine

        out = emu.run(problem, oracle, dilation=8.0, rtt_ms=0.5, peer_timeout=PEER_TIMEOUT)
        assert out["exact"] and out["conservation"] and out["count"] == oracle["count"]
        assert out["emulated_cores"] == 6 and out["steals_local"] > 0

        # cut off for 1.5 peer timeouts: its peers give it up, the epoch is searched
        # again from the last cut, and its bytes, delivered late, change nothing
        out = _faulted(emu, problem, oracle, {"kind": "cut", "machine": 1, "at": 0.2,
                                              "cut_for": 1.5 * PEER_TIMEOUT, "poll": 0.05})
        assert out["fault"]["healed"]
        assert out["exact"] and out["conservation"] and out["count"] == oracle["count"]

        out = _faulted(emu, problem, oracle, {"kind": "kill", "machine": 2, "at": 0.2,
                                              "poll": 0.05})
        assert out["fault"]["killed_pids"] and emu.bed.pids(2) == []
        assert out["exact"] and out["conservation"] and out["count"] == oracle["count"]
        procs = list(emu.bed.procs)
    assert all(p.poll() is not None for p in procs), "a process of the emulation survived"
    left = netns.sh("ip", "netns", "list", check=False).stdout
    assert not any(ns in left for ns in namespaces), "a namespace survived"
