"""``make bench``: run every benchmark script, then assemble RESULTS.md.

Each ``benchmarks/bench_<name>.py`` writes its section to ``benchmarks/results/<name>.md``;
RESULTS.md is those sections in a fixed order.  ``python -m benchmarks.run_all --assemble``
only re-assembles.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys

ORDER = ["uts", "comm", "setup", "resilience", "clique", "liquid", "hrelation", "commclust", "twolevel",
         "tiers"]
HERE = os.path.dirname(__file__)

HEADER = """# Benchmark results

Produced by `make bench` (each script can also be run alone: `python -m benchmarks.bench_<name>`).
Every figure below was measured by the script named in its section, on the machine its
header names. This machine kind is shared and noisy: figures are medians, and speed-ups are
ratios against the sequential run *of the same script run*.

"""


def assemble() -> None:
    names = [n for n in ORDER if os.path.exists(os.path.join(HERE, "results", f"{n}.md"))]
    extra = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "results", "*.md"))
                   if os.path.basename(p)[:-3] not in ORDER)
    with open(os.path.join(HERE, "RESULTS.md"), "w") as out:
        out.write(HEADER)
        for name in names + extra:
            with open(os.path.join(HERE, "results", f"{name}.md")) as f:
                out.write(f.read().rstrip() + "\n\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assemble", action="store_true", help="only rebuild RESULTS.md")
    ap.add_argument("--only", nargs="*", default=None, help="benchmark names to run")
    args = ap.parse_args(argv)
    failed = []
    if not args.assemble:
        for name in args.only or ORDER:
            if not os.path.exists(os.path.join(HERE, f"bench_{name}.py")):
                continue
            print(f"== benchmarks.bench_{name}", flush=True)
            if subprocess.run([sys.executable, "-m", f"benchmarks.bench_{name}"]).returncode:
                failed.append(name)
    assemble()
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
