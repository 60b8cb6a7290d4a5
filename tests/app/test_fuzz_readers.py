"""Fuzz every reader through the command line: random bytes, truncations, wrong types,
huge numbers, unicode.  Whatever the file holds, the command either succeeds (exit 0:
the mutation happened to be valid input) or prints one ``stealsearch ...: error: ...``
line and exits 2: never a traceback, never another exit code, never a process left
behind.  Most cases call ``stealsearch.cli.main`` in this process (cheap); a few run the
real console script."""
import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stealsearch.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"
LIQUID = ROOT / "problems" / "liquid" / "examples"

#: STEALSEARCH_FUZZ_EXAMPLES=500 for a longer hunt (random, not derandomised).
_EXAMPLES = int(os.environ.get("STEALSEARCH_FUZZ_EXAMPLES", "12"))
FUZZ = settings(max_examples=_EXAMPLES, deadline=None, derandomize=_EXAMPLES <= 12, database=None,
                suppress_health_check=[HealthCheck.too_slow])

#: Tokens users (and accidents) put into files: wrong types, huge and odd numbers, unicode.
NASTY = ["-1", "0", "1e999", "-1e999", "nan", "inf", "99999999999999999999999999", "1.5",
         "é", "😀", "\u202e", "\x00", "null", "[]", "{}", '"x"', "true", ",", "\n", " ", "#",
         ":", "- ", "[", "{", "'", '"', "\\", "\t", "e 1 1", "p edge 9 1", "0xff"]


def _sample(name: str) -> bytes:
    return (DATA / name).read_bytes()


def mutated(sample: bytes):
    """Strategies over the bytes of ``sample``: random bytes, a truncation, a token
    replaced or inserted, unicode text."""
    cut = st.integers(0, len(sample)).map(lambda k: sample[:k])
    edit = st.tuples(st.integers(0, len(sample)), st.integers(0, 8), st.sampled_from(NASTY)).map(
        lambda t: sample[:t[0]] + t[2].encode() + sample[t[0] + t[1]:])
    return st.one_of(st.binary(max_size=300), cut, edit, edit,
                     st.text(max_size=200).map(lambda s: s.encode("utf-8")))


def run_cli(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def check(argv):
    code, out, err = run_cli(argv)
    assert code in (0, 2), (argv, code, err[-500:])
    assert "Traceback" not in err
    if code == 2:
        lines = [ln for ln in err.splitlines() if not ln.startswith("stealsearch: warning:")]
        assert len(lines) == 1, err
        assert lines[0].startswith("stealsearch") and "error: " in lines[0], err
        assert all(ch.isprintable() for ch in lines[0]), repr(lines[0])


def _file(data: bytes, suffix: str, directory: str) -> str:
    path = os.path.join(directory, "input" + suffix)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _children() -> set[int]:
    from procutil import descendants

    return descendants()


@pytest.fixture(autouse=True)
def no_leftover_processes():
    before = _children()
    yield
    assert _children() - before == set(), "a fuzz case left a process behind"


def _fuzz_file(sample: bytes, suffix: str, argv_of):
    @FUZZ
    @given(mutated(sample))
    def inner(data):
        with tempfile.TemporaryDirectory() as d:
            check(argv_of(_file(data, suffix, d), d))
    inner()


LIMIT = ["--sequential", "--node-limit", "3000", "--quiet"]


def test_fuzz_dimacs():
    _fuzz_file((ROOT / "tests" / "clique" / "data" / "johnson8-4-4.clq").read_bytes()[:3000],
               ".clq", lambda p, d: ["clique", p, *LIMIT])


def test_fuzz_dimacs_gzip():
    sample = gzip.compress((ROOT / "tests" / "clique" / "data" / "hamming6-2.clq").read_bytes())
    _fuzz_file(sample, ".clq.gz", lambda p, d: ["clique", p, *LIMIT])


def test_fuzz_edge_list():
    _fuzz_file(_sample("edges.txt")[:1500], ".txt", lambda p, d: ["clique", p, *LIMIT])


def test_fuzz_traffic_yaml_and_json():
    _fuzz_file((LIQUID / "fig1.yaml").read_bytes(), ".yaml",
               lambda p, d: ["liquid", "traffic", p, *LIMIT])
    import yaml

    as_json = json.dumps(yaml.safe_load((LIQUID / "fig1.yaml").read_text())).encode()
    _fuzz_file(as_json, ".json", lambda p, d: ["liquid", "traffic", p, *LIMIT])


def test_fuzz_topology():
    def argv(path, d):
        traffic = os.path.join(d, "traffic.yaml")
        Path(traffic).write_text(f"topology: {os.path.basename(path)}\nallocation: [1, 1, 1, 1]\n")
        return ["liquid", "traffic", traffic, *LIMIT]
    _fuzz_file((LIQUID / "ring4.yaml").read_bytes(), ".yaml", argv)


def test_fuzz_dag_json_and_csv():
    _fuzz_file(_sample("dag.json")[:1500], ".json", lambda p, d: ["twolevel", p, "--quiet"])
    _fuzz_file(_sample("tasks.csv"), ".csv",
               lambda p, d: ["twolevel", p, "--arcs", str(DATA / "arcs.csv")])

    def arcs(path, d):
        return ["twolevel", str(DATA / "tasks.csv"), "--arcs", path]
    _fuzz_file(_sample("arcs.csv"), ".csv", arcs)


def test_fuzz_schedule_file():
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "s.json")
        assert run_cli(["twolevel", str(DATA / "dag.json"), "--out", good])[0] == 0
        sample = Path(good).read_bytes()[:2000]
    _fuzz_file(sample, ".json", lambda p, d: ["twolevel", str(DATA / "dag.json"), "--check", p])


def test_fuzz_tables_and_traces():
    _fuzz_file(_sample("table.csv"), ".csv", lambda p, d: ["commclust", p])
    _fuzz_file(_sample("trace.txt"), ".trace", lambda p, d: ["commclust", p])
    buf = io.BytesIO()
    np.save(buf, np.loadtxt(DATA / "table.csv", delimiter=","))
    _fuzz_file(buf.getvalue(), ".npy", lambda p, d: ["commclust", p])


def test_fuzz_messages():
    _fuzz_file(_sample("messages.csv"), ".csv", lambda p, d: ["hrel", p, "--algorithm", "direct"])
    as_json = json.dumps({"messages": np.loadtxt(DATA / "messages.csv", delimiter=",",
                                                 dtype=int).tolist()}).encode()
    _fuzz_file(as_json, ".json", lambda p, d: ["hrel", p, "--algorithm", "direct"])


def test_fuzz_cluster_config_never_starts_a_cluster_from_garbage():
    """Only inputs that are not a YAML mapping with a 'kind' (a real config would start a
    cluster: the deploy tests cover those); text and raw bytes alike."""
    import yaml

    @FUZZ
    @given(st.one_of(st.text(max_size=120).map(str.encode), st.binary(max_size=120)))
    def inner(data):
        try:
            spec = yaml.safe_load(data.decode("utf-8"))
        except Exception:
            spec = None
        if isinstance(spec, dict) and "kind" in spec:
            return
        with tempfile.TemporaryDirectory() as d:
            check(["uts", "--tree", "T1", "--cluster-config", _file(data, ".yaml", d),
                   "--node-limit", "1"])
    inner()


GRID_ITEM = st.one_of(st.integers(-3, 40).map(str), st.sampled_from(NASTY),
                      st.text(max_size=4))


@FUZZ
@given(st.lists(GRID_ITEM, max_size=4).map(",".join), st.sampled_from(["--P", "--h", "--skews"]))
def test_fuzz_hrel_grid(text, flag):
    argv = ["hrel", "sweep", "--sequential", "--P", "4", "--h", "2", "--skews", "0",
            "--seeds", "1", "--algorithms", "direct"]
    argv[argv.index(flag) + 1] = text
    check(argv)


@FUZZ
@given(st.lists(GRID_ITEM, max_size=3).map(",".join), st.sampled_from(["--sizes", "--c2-extra",
                                                                       "--kinds"]))
def test_fuzz_twolevel_grid(text, flag):
    argv = ["twolevel", "sweep", "--sequential", "--sizes", "10", "--seeds", "1",
            "--kinds", "sp", "--c2-extra", "2"]
    argv[argv.index(flag) + 1] = text
    check(argv)


@pytest.mark.parametrize("command", [["liquid", "traffic"], ["twolevel"]])
def test_binary_and_gzip_garbage_as_real_processes(tmp_path, command):
    """The console script itself: one line, exit 2, no raw bytes in the message."""
    binary = tmp_path / "garbage.json"
    binary.write_bytes(bytes(range(256)) * 8)
    proc = subprocess.run([sys.executable, "-m", "stealsearch", *command, str(binary)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert all(ch.isprintable() for ch in proc.stderr.strip())
