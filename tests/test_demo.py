"""``stealsearch demo`` on its smallest setting (1 worker, T1 on the lanes): exits 0 and
prints the verified figures (published values: UTS T1's size, keller4's clique number,
...), the lanes' section before the cluster's, and the cluster's start-up said for what it
is."""
import re
import subprocess
import sys


def test_demo_prints_the_verified_figures():
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "demo", "--workers", "1",
                           "--lanes-tree", "T1"], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    # UTS T1: 4,130,071 nodes (UTS 2.1 release notes): one thread's rate, then the lanes'
    # whole tree, then the tree on the cluster
    lanes = out.index("== This machine: UTS T1 (4,130,071 nodes)")
    cluster = out.index("== A LocalCluster of 1 worker processes, started in ")
    assert lanes < cluster
    assert re.search(r"^\s+1 thread\s+4,130,071 nodes .*\(CPU: \d+\.\d\d cores\)$", out, re.M)
    assert re.search(r"^\s+sequential\[\d+ threads?\]\s+4,130,071 nodes .*\(CPU: \d+\.\d\d "
                     r"cores\)  = published$", out, re.M)
    assert re.search(r"the lanes, threads of this process \(the default\): \d+\.\d\dx one "
                     r"thread's rate on \d+ cores \(\d+\.\d\dx per core of CPU each had\), "
                     r"with nothing to start", out)
    assert re.search(r"a cluster pays when it adds cores this machine lacks .* many times "
                     r"longer than \d+\.\d s", out)
    assert re.search(r"^\s+dask\[1\]\s+4,130,071 nodes .*= published$", out, re.M)
    assert "rows conserved: True" in out
    # keller4: omega = 11 (DIMACS); the 2-(7,3,1) design is the Fano plane
    assert re.search(r"DIMACS keller4\s+ω = 11 \(sequential 11\), verified: True", out)
    assert "clique of size 7 found; a Fano plane: True" in out
    # the liquid paper's Fig. 1: Λ = 6, round robin 7 steps, a liquid schedule of 6 steps
    assert "Λ = 6 (bottlenecks l11, l12)" in out
    assert "round robin 7 steps; liquid schedule of 6 steps found on dask[1], verified: True" in out
    # h-relations: direct 1.5h, forwarding 6h/5 = the lower bound
    assert re.search(r"direct\s+length\s+150\.0 packet times\s+verified: True", out)
    assert re.search(r"forwarding length\s+120\.0 packet times\s+verified: True", out)
    # communication clustering: the paper's CG table splits into its two halves
    assert "best partition [[0, 1, 2, 3], [4, 5, 6, 7]] with G_c = 13.856 at 2 clusters" in out
    # two-level scheduling: makespan equals the lower bound
    assert "makespan 20 = lower bound 20: True; verified: True" in out
    assert re.search(r"^demo finished in [\d.]+ s: all results verified$", out, re.M)
    assert "False" not in out
    assert not re.search(r"\bseed 00\d\b", out)


def test_demo_refuses_a_tree_it_does_not_know():
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "demo", "--lanes-tree", "T9"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "stealsearch: error: demo: --lanes-tree takes one of T1, T1L, T2, T3, T3L, T4, T5, "
        "default, not 'T9'"]
    assert proc.stdout == ""
