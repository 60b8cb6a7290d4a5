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

CASES = [
    ("uts T1L, sequential", ["uts", "--tree", "T1L", "--sequential"]),
    ("uts T1L, 2 workers", ["uts", "--tree", "T1L", "--workers", "2"]),
    ("uts T1L, 1 process x 2 threads", ["uts", "--tree", "T1L", "--sequential", "--threads-per-worker", "2"]),
    ("clique G(1000, .35) s1, sequential", ["clique", "--gnp", "1000", "0.35", "--seed", "1", "--sequential"]),
    ("clique G(1000, .35) s1, 2 workers", ["clique", "--gnp", "1000", "0.35", "--seed", "1", "--workers", "2"]),
    ("clique G(1000, .35) s1, 1 process x 2 threads", ["clique", "--gnp", "1000", "0.35", "--seed", "1", "--sequential", "--threads-per-worker", "2"]),
]


def run(root: str, argv: list[str]) -> dict:
    """One ``stealsearch ARGV --json --quiet`` of checkout ``root``: search seconds, the
    whole process's wall and CPU seconds, the answer, nodes, backend and phases."""
    exe = os.path.join(root, ".venv", "bin", "stealsearch")
    t0 = time.perf_counter()
    p = subprocess.Popen([exe, *argv, "--json", "--quiet"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    d = json.loads(out)
    return {"search": d["search_seconds"], "wall": wall, "gap": wall - d["search_seconds"],
            "cpu": ru.ru_utime + ru.ru_stime, "nodes": d["nodes"],
            "answer": d.get("count") if d.get("count") is not None else d.get("objective"),
            "backend": d["backend"],
            "phases": [(p["phase"], p["nodes"], round(p["seconds"], 3)) for p in d["phases"]],
            "rc": os.waitstatus_to_exitcode(status)}


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit(__doc__.strip().splitlines()[4].strip())
    BASE, LOOP = argv[0], argv[1]
    REPS = int(argv[2]) if len(argv) > 2 else 3
    ONLY = argv[3] if len(argv) > 3 else ""
    compare(BASE, LOOP, REPS, [c for c in CASES if ONLY in c[0]])


def compare(BASE: str, LOOP: str, REPS: int, CASES: list) -> None:
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

    med = statistics.median
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


if __name__ == "__main__":
    main(sys.argv[1:])
