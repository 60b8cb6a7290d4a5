"""Inputs and options that nothing bounded.  One case class per rule, each
case a real command-line run (forked from a process that imported the CLI once:
tests/app/bounded_runner.py) with a memory ceiling: one ``stealsearch ...: error:`` line,
exit 2, no traceback, and a peak resident memory above the parent's under the class's
ceiling (above the case's own resident memory when it starts).  Rules: only regular files are read; an input is capped (1 GiB, or
STEALSEARCH_MAX_INPUT_BYTES) before it is read whole, a gzip bomb before it inflates past
the cap; grids and cluster configs are checked by type and range before anything is
expanded (repeats, combinations, YAML aliases and nesting); counts in configs and options
are bounded (threads per worker, UTS depth); digits are ASCII digits; a checkpoint's
manifest is checked field by field."""
import gzip
import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from stealsearch.cli import main
from stealsearch.engine.core.checkpoint import sign, signing_key

HERE = Path(__file__).resolve().parent
MIB = 1 << 20


def gzip_bomb(path: Path, line: bytes, inflated: int) -> None:
    """A small gzip file that inflates to ``inflated`` bytes of ``line`` repeated."""
    block = line * (MIB // len(line))
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for _ in range(inflated // len(block)):
            f.write(z.compress(block))
        f.write(z.flush())


def grid(items, **top):
    return json.dumps(dict(top, items=items))      # JSON is YAML


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)) \
    + "items: [{kind: uts, instance: {tree: *i}}]\n"


def cases(d: Path) -> list:
    """(class, name, argv, env) of every case; files made in ``d``."""
    os.mkfifo(d / "fifo.clq")
    os.symlink("/dev/zero", d / "zero.clq")
    with open(d / "sparse.clq", "wb") as f:                  # 2 GiB, no blocks
        f.truncate(2 << 30)
    gzip_bomb(d / "bomb.clq.gz", b"e 1 2\n", 128 * MIB)
    gzip_bomb(d / "bomb_edges.txt", b"1 2\n", 128 * MIB)      # gzip by its magic bytes
    gzip_bomb(d / "bomb_grid.yaml", b"# x\n", 128 * MIB)
    shutil.copy(d / "bomb_grid.yaml", d / "bomb_config.yaml")
    texts = {
        "repeats.yaml": grid([{"kind": "uts", "instance": {"tree": "T1"}}], repeats=10 ** 12),
        "repeats_str.yaml": grid([{"kind": "uts", "instance": {"tree": "T1"}, "repeats": "many"}]),
        "combos.yaml": grid([{"kind": "clique", "instance": {
            "generator": "gnp", **{k: list(range(1000)) for k in ("n", "seed")},
            "p": [0.1 * i for i in range(1, 10)]},
            "settings": {"k": list(range(1, 1001)), "budget": list(range(1, 1001))}}]),
        "laughs.yaml": LAUGHS,
        "deep.yaml": "items: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "pbs.yaml": "kind: pbs\ncores: sixteen\nmemory: 4GB\n",
        "local0.yaml": "kind: local\nthreads_per_worker: 0\n",
        "local_many.yaml": "kind: local\nworkers: 1000000000\n",
        "local_float.yaml": "kind: local\nworkers: 2.5\n",
        "config_laughs.yaml": LAUGHS.replace("items: [{kind: uts, instance: {tree: *i}}]",
                                             "kind: local\nx: *i"),
        # 80 aliases, 10^8 values once walked: the alias count alone let it through
        "traffic_laughs.yaml": LAUGHS.replace("items: [{kind: uts, instance: {tree: *i}}]",
                                              "transfers: *i"),
        "sup3.clq": "p edge 3 1\ne 1 \u00b3\n",
        "circled.clq": "p edge \u2460 1\ne 1 1\n",
        "arabic.clq": "p edge 3 1\ne \u0661 \u0662\n",
        "huge_n.clq": "p edge 99999999999999999999 1\ne 1 2\n",
        "fullwidth.clq": "p edge 3 1\ne 1 \uff13\n",
    }
    for name, text in texts.items():
        (d / name).write_text(text)
    uts = ["uts", "--tree", "T1", "--node-limit", "1"]
    seq = ["--sequential", "--node-limit", "1000"]
    cap16 = {"STEALSEARCH_MAX_INPUT_BYTES": "16M"}
    return [
        # what the commands take with an input they refuse at once: the base of every
        # ceiling (a cluster config is read after the search's kernel is loaded)
        ("control", "plain", ["clique", "missing.clq", *seq], {}),
        ("control", "config", [*uts, "--cluster-config", "missing.yaml"], {}),
        ("non-regular file", "FIFO", ["clique", "fifo.clq", *seq], {}),
        ("non-regular file", "/dev/zero", ["clique", "/dev/zero", *seq], {}),
        ("non-regular file", "symlink to /dev/zero", ["clique", "zero.clq", *seq], {}),
        ("non-regular file", "/dev/urandom as a table", ["commclust", "/dev/urandom"], {}),
        ("non-regular file", "/dev/zero as a grid", ["sweep", "/dev/zero", "--sequential"], {}),
        ("non-regular file", "FIFO as a config", [*uts, "--cluster-config", "fifo.clq"], {}),
        ("size cap", "2 GiB graph", ["clique", "sparse.clq", *seq], {}),
        ("size cap", "bad cap", ["clique", "sup3.clq", *seq],
         {"STEALSEARCH_MAX_INPUT_BYTES": "lots"}),
        ("gzip bomb", "graph .clq.gz", ["clique", "bomb.clq.gz", *seq], cap16),
        ("gzip bomb", "edge list by magic", ["clique", "bomb_edges.txt", *seq], cap16),
        ("gzip bomb", "grid", ["sweep", "bomb_grid.yaml", "--sequential"], cap16),
        ("gzip bomb", "cluster config", [*uts, "--cluster-config", "bomb_config.yaml"], cap16),
        ("grid", "repeats 10^12", ["sweep", "repeats.yaml", "--sequential"], {}),
        ("grid", "repeats a string", ["sweep", "repeats_str.yaml", "--sequential"], {}),
        ("grid", "9 x 10^12 combinations", ["sweep", "combos.yaml", "--sequential"], {}),
        ("grid", "billion laughs", ["sweep", "laughs.yaml", "--sequential"], {}),
        ("grid", "nested 10^5 deep", ["sweep", "deep.yaml", "--sequential"], {}),
        ("config", "cores: sixteen", [*uts, "--cluster-config", "pbs.yaml"], {}),
        ("config", "threads_per_worker: 0", [*uts, "--cluster-config", "local0.yaml"], {}),
        ("config", "workers: 10^9", [*uts, "--cluster-config", "local_many.yaml"], {}),
        ("config", "workers: 2.5", [*uts, "--cluster-config", "local_float.yaml"], {}),
        ("config", "billion laughs", [*uts, "--cluster-config", "config_laughs.yaml"], {}),
        ("config", "billion laughs as a traffic file", ["liquid", "traffic",
                                                        "traffic_laughs.yaml"], {}),
        ("option", "--threads-per-worker 100000", [*uts, "--threads-per-worker", "100000"], {}),
        ("option", "UTS depth 10^20", ["uts", "--options", "-t 1 -a 3 -d 100000000000000000000 "
                                       "-b 4 -r 19", "--sequential"], {}),
        ("option", "UTS depth 0", ["uts", "--options", "-t 1 -a 3 -d 0 -b 4", "--sequential"], {}),
        ("digits", "superscript three", ["clique", "sup3.clq", *seq], {}),
        ("digits", "circled one", ["clique", "circled.clq", *seq], {}),
        ("digits", "Arabic-Indic", ["clique", "arabic.clq", *seq], {}),
        ("digits", "fullwidth three", ["clique", "fullwidth.clq", *seq], {}),
        ("digits", "20-digit vertex count", ["clique", "huge_n.clq", *seq], {}),
    ]


#: per class: MiB a case may take beyond its control case (the same command refusing a
#: missing file; the runner has the CLI imported: numba, Dask); the gzip bombs inflate
#: to 128 MiB, under a 16 MiB cap
CEILING_MIB = {"control": 0, "non-regular file": 32, "size cap": 32, "gzip bomb": 48,
               "grid": 64, "config": 32, "option": 32, "digits": 32, "manifest": 32}


def manifest_cases(d: Path) -> list:
    ck = d / "ck"
    assert main(["uts", "--tree", "default", "--sequential", "--node-limit", "100",
                 "--checkpoint", str(ck)]) == 0
    out = []
    for i, (field, value) in enumerate([("best_value", "big"), ("info", [1, 2]),
                                        ("counters", [1.5]), ("rows_file", "/etc/passwd")]):
        c = d / f"ck{i}"
        shutil.copytree(ck, c)
        m = json.loads((c / "manifest.json").read_text())
        m[field] = value
        (c / "manifest.json").write_text(json.dumps(sign(m, signing_key())))
        out.append(("manifest", f"{field}: {json.dumps(value)}", ["resume", str(c), "--sequential"], {}))
    return out


def test_every_bad_input_class_is_one_line_exit_2_and_bounded(tmp_path, capsys):
    d = tmp_path / "in"
    d.mkdir()
    all_cases = cases(d) + manifest_cases(d)
    capsys.readouterr()
    spec = [{"name": f"{c}: {n}", "argv": argv, "env": env, "cwd": str(d)}
            for c, n, argv, env in all_cases]
    (tmp_path / "cases.json").write_text(json.dumps(spec))
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(HERE / "bounded_runner.py"),
                           str(tmp_path / "cases.json"), str(report)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(report.read_text())
    assert len(results) == len(all_cases)
    control = {r["name"]: r["peak_above_start_mib"] for r in results
               if r["name"].startswith("control")}
    bad = []
    for (cls, name, argv, env), r in zip(all_cases, results):
        base = control["control: config" if "--cluster-config" in argv else "control: plain"]
        err = r["stderr"]
        lines = [ln for ln in err.splitlines() if not ln.startswith("stealsearch: warning:")]
        ok = (r["code"] == 2 and len(lines) == 1 and "error: " in lines[0]
              and "Traceback" not in err and r["peak_above_start_mib"] <= max(base, 0) + CEILING_MIB[cls])
        if not ok:
            bad.append((r["name"], r["code"], round(r["peak_above_start_mib"]), err[-400:]))
    print([(r["name"], r["code"], round(r["peak_above_start_mib"]), round(r["seconds"], 1)) for r in results])
    assert not bad, bad
