"""Every sub-command's ``--json`` output: strict JSON (no NaN/Infinity, not even as
strings), and every engine result in the one schema, stealsearch/schemas/result.schema.json
(a plug-in problem's too: tests/app/test_registry_plugin.py checks its output with
:func:`check_engine_json`)."""
import json
from pathlib import Path

import pytest

from stealsearch.cli import main

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "stealsearch" / "schemas" / "result.schema.json").read_text())
CLIQUE = ROOT / "tests" / "clique" / "data"
LIQUID = ROOT / "problems" / "liquid" / "examples"

#: Commands whose --json is an engine result (the schema applies).
ENGINE_COMMANDS = [
    ["uts", "--options", "-t 1 -a 3 -d 5 -b 4 -r 19", "--sequential"],
    ["uts", "--tree", "T3", "--sequential", "--node-limit", "5000"],
    ["clique", str(CLIQUE / "johnson8-4-4.clq"), "--sequential"],
    ["clique", str(CLIQUE / "keller4.clq"), "--sequential", "--node-limit", "3"],
    ["clique", "--gnp", "30", "0.5", "--mode", "count", "--sequential"],
    ["clique", "--gnp", "30", "0.5", "--mode", "decide", "--k", "4", "--sequential"],
    ["clique", "--gnp", "30", "0.5", "--mode", "decide", "--k", "30", "--sequential"],
    ["design", "2", "7", "3", "--sequential"],
    ["factorize", "K4", "1", "--sequential"],
    ["liquid", "example", "--sequential"],
    ["liquid", "traffic", str(LIQUID / "ring4_alltoall.yaml"), "--sequential"],
    ["liquid", "teams", "example", "--full", "--sequential"],
    ["liquid", "alloc", "1", "0", "0", "0", "0", "0", "0", "1", "--sequential"],
]

#: Commands with their own JSON (polynomial algorithms, sweeps): strict JSON only.
OTHER_COMMANDS = [
    ["hrel", "--random", "6", "8", "--seed", "1", "--algorithm", "all"],
    ["hrel", "sweep", "--P", "4", "--h", "4", "--skews", "0", "--seeds", "1", "--sequential"],
    ["commclust", "--example", "cg8"],
    ["commclust", "--example", "random8", "--seed", "2"],
    ["commclust", "sweep", "--example", "cg8", "--tie-seeds", "2", "--sequential"],
    ["twolevel", "--table1", "--full"],
    ["twolevel", "sweep", "--sizes", "20", "--seeds", "1", "--kinds", "sp", "--sequential"],
    ["liquid", "t1-study", "--sequential", "--limit", "3"],
    ["sweep", str(ROOT / "benchmarks" / "grids" / "hrelation_small.yaml"), "--sequential",
     "--limit", "2"],
    ["reproduce", "002", "--quick", "--sequential", "--out", "{tmp}"],
]

#: Commands without --json (the tour prints for people only).
NO_JSON = {("demo",), ("check-proof",)}     # check-proof: a verdict line and its exit code


def _strict(text: str):
    def refuse(name):
        raise AssertionError(f"non-finite number {name} in JSON output")

    obj = json.loads(text, parse_constant=refuse)

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str):
            assert x.lower() not in ("inf", "-inf", "infinity", "-infinity", "nan"), x
    walk(obj)
    return obj


def check_engine_json(text: str) -> dict:
    """The object of an engine search's ``--json`` output, checked: strict JSON, valid
    against the result schema, one worker object per worker."""
    obj = _strict(text)
    jsonschema.validate(obj, SCHEMA)
    assert obj["n_workers"] == len(obj["workers"])
    return obj


@pytest.mark.parametrize("argv", ENGINE_COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_engine_result_json_follows_the_schema(capsys, argv):
    code = main(argv + ["--json"])
    out = capsys.readouterr().out
    assert code == 0
    check_engine_json(out)


#: the schema of each command's own JSON (stealsearch/schemas/NAME.schema.json)
OTHER_SCHEMAS = {("hrel", "--random"): "hrel", ("hrel", "sweep"): "hrel_sweep",
                 ("commclust", "--example"): "commclust", ("commclust", "sweep"): "commclust_sweep",
                 ("twolevel", "--table1"): "twolevel", ("twolevel", "sweep"): "twolevel_sweep",
                 ("liquid", "t1-study"): "liquid_t1_study", ("sweep",): "sweep",
                 ("reproduce",): "reproduce"}
#: the one status vocabulary: an engine search's, and complete/interrupted for the others
STATUSES = {"optimal", "found", "none", "exhausted", "interrupted", "complete"}


def schema_of(argv) -> dict:
    name = OTHER_SCHEMAS.get(tuple(argv[:2])) or OTHER_SCHEMAS[tuple(argv[:1])]
    return json.loads((ROOT / "stealsearch" / "schemas" / f"{name}.schema.json").read_text())


@pytest.mark.parametrize("argv", OTHER_COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_other_json_follows_its_schema(capsys, argv, tmp_path):
    argv = [str(tmp_path) if a == "{tmp}" else a for a in argv]
    code = main(argv + ["--json"])
    out = capsys.readouterr().out
    assert code == 0
    schema = schema_of(argv)
    jsonschema.Draft202012Validator.check_schema(schema)
    for line in out.strip().splitlines() if argv[0] == "reproduce" else [out]:
        obj = _strict(line)
        jsonschema.validate(obj, schema)
        assert obj["status"] in STATUSES
        if argv[0] == "sweep":       # no --out: the rows of this run are in the object
            assert len(obj["rows"]) == obj["ran"] and obj["rows"][0]["status"] == "ok"


def test_every_schema_status_is_of_the_one_vocabulary():
    for path in (ROOT / "stealsearch" / "schemas").glob("*.schema.json"):
        status = json.loads(path.read_text())["properties"]["status"]
        assert set(status["enum"]) <= STATUSES, path.name


def test_schema_rejects_a_result_without_the_engine_keys():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"status": "optimal", "objective": 3}, SCHEMA)


def test_resume_json_follows_the_schema(capsys, tmp_path):
    d = str(tmp_path / "ck")
    assert main(["uts", "--tree", "T3", "--sequential", "--node-limit", "20000", "--checkpoint",
                 d, "--json", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["resume", d, "--sequential", "--node-limit", "5000"]) == 0
    obj = _strict(capsys.readouterr().out)
    jsonschema.validate(obj, SCHEMA)
    assert obj["status"] == "interrupted"


def _leaf_commands(parser, path=()):
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaf_commands(sub, path + (name,))


def test_every_subcommand_is_covered_here():
    """A new sub-command must join one of the lists above (or NO_JSON)."""
    from stealsearch.cli import build_parser

    covered = {tuple(a[:2]) for a in ENGINE_COMMANDS + OTHER_COMMANDS} | \
        {tuple(a[:1]) for a in ENGINE_COMMANDS + OTHER_COMMANDS} | NO_JSON | {("resume",)}
    leaves = list(_leaf_commands(build_parser()))
    assert len(leaves) >= 15
    missing = [p for p in leaves if p not in covered]
    assert missing == [], missing
