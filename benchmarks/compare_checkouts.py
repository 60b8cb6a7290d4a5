"""Two checkouts of stealsearch, same run: each command of each, interleaved in pairs (the
order alternating every round), medians of ROUNDS; search seconds from ``--json``, the
whole process's wall and CPU time from ``wait4``, and the median of the per-pair ratios.

    python benchmarks/compare_checkouts.py BEFORE_CHECKOUT AFTER_CHECKOUT [ROUNDS [FILTER]]

Each checkout needs its own ``make venv`` (``CHECKOUT/.venv/bin/stealsearch``).  FILTER
keeps the cases whose name contains it.  Written for issue 24's before/after
(results/loop.md); warm both checkouts' kernels first, and hold the machine's lock.
"""
import json
import os
import statistics
import subprocess
import sys
import time

if len(sys.argv) < 3:
    sys.exit(__doc__.strip().splitlines()[4].strip())
BASE, LOOP = sys.argv[1], sys.argv[2]
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
CASES = [
    ("uts T1L, sequential", ["uts", "--tree", "T1L", "--sequential"]),
    ("uts T1L, 2 workers", ["uts", "--tree", "T1L", "--workers", "2"]),
    ("uts T1L, 1 process x 2 threads", ["uts", "--tree", "T1L", "--sequential", "--threads-per-worker", "2"]),
    ("clique G(1000, .35) s1, sequential", ["clique", "--gnp", "1000", "0.35", "--seed", "1", "--sequential"]),
    ("clique G(1000, .35) s1, 2 workers", ["clique", "--gnp", "1000", "0.35", "--seed", "1", "--workers", "2"]),
    ("clique G(1000, .35) s1, 1 process x 2 threads", ["clique", "--gnp", "1000", "0.35", "--seed", "1", "--sequential", "--threads-per-worker", "2"]),
]


def run(root, argv):
    exe = os.path.join(root, ".venv", "bin", "stealsearch")
    t0 = time.perf_counter()
    p = subprocess.Popen([exe, *argv, "--json", "--quiet"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    d = json.loads(out)
    return {"search": d["search_seconds"], "wall": wall, "cpu": ru.ru_utime + ru.ru_stime,
            "nodes": d["nodes"], "answer": d.get("count") or d.get("objective"),
            "backend": d["backend"], "rc": os.waitstatus_to_exitcode(status)}


ONLY = sys.argv[4] if len(sys.argv) > 4 else ""
CASES = [c for c in CASES if ONLY in c[0]]
rows = {name: {"base": [], "loop": []} for name, _ in CASES}
loads = [os.getloadavg()[0]]
for rep in range(REPS):
    for name, argv in CASES:
        order = [("base", BASE), ("loop", LOOP)] if rep % 2 == 0 else [("loop", LOOP), ("base", BASE)]
        for tag, root in order:
            r = run(root, argv)
            rows[name][tag].append(r)
            print(json.dumps({"case": name, "tag": tag, "rep": rep, **r}), flush=True)
    loads.append(os.getloadavg()[0])

med = lambda xs: statistics.median(xs)
print("LOADS", loads)
print("| case | search s before | after | after/before | wall s before | after | CPU s before | after | answer, nodes (after) |")
print("|---|---|---|---|---|---|---|---|---|")
for name, _ in CASES:
    b, a = rows[name]["base"], rows[name]["loop"]
    sb, sa = med([x["search"] for x in b]), med([x["search"] for x in a])
    ratios = med([x["search"] / y["search"] for x, y in zip(a, b)])
    print(f"| {name} | {sb:.2f} | {sa:.2f} | {ratios:.3f} | {med([x['wall'] for x in b]):.2f} | "
          f"{med([x['wall'] for x in a]):.2f} | {med([x['cpu'] for x in b]):.2f} | "
          f"{med([x['cpu'] for x in a]):.2f} | {a[0]['answer']}, {med([x['nodes'] for x in a]):,.0f} |")
