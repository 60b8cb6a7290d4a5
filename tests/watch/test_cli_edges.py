"""What a user meets first: a short repr and a notebook table of a result, help(solve)'s
sections, the status line, the sweeps as sub-commands, resume's output flags."""
import json
import pydoc
import shutil
from pathlib import Path

import pytest

from stealsearch.cli import main
from stealsearch.engine import solve
from stealsearch.problems.clique.generators import gnp
from stealsearch.problems.clique.problem import CliqueProblem

ROOT = Path(__file__).resolve().parents[2]


def test_short_repr_html_and_the_status_line():
    r = solve(CliqueProblem(gnp(120, 0.5, seed=1)), backend="sequential", node_limit=300)
    text = repr(r)
    assert text.startswith("SearchResult(problem='clique', status='interrupted', objective=")
    assert f"bound={r.bound}" in text and len(text) < 200
    html = r._repr_html_()
    assert html.startswith("<table>") and "interrupted (node_limit)" in html and "gap" in html
    assert str(r).splitlines()[0].endswith("interrupted [node_limit]")
    r.stop_reason = "interrupted"                # a Ctrl-C: said once, not twice
    assert "[interrupted]" not in str(r).splitlines()[0]


def test_help_of_solve_has_returns_and_examples():
    text = pydoc.render_doc(solve)
    assert "Returns\n" in text and "Examples\n" in text and ">>> r = solve(" in text


@pytest.mark.parametrize("command", ["hrel", "twolevel", "commclust"])
def test_the_sweeps_are_sub_commands(capsys, command):
    with pytest.raises(SystemExit) as e:
        main([command, "sweep", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: stealsearch {command} sweep") and "--out DIR" in out


def test_a_file_named_sweep_is_read_as_a_file(capsys, tmp_path, monkeypatch):
    shutil.copy(ROOT / "examples" / "data" / "messages.csv", tmp_path / "sweep")
    monkeypatch.chdir(tmp_path)
    assert main(["hrel", "./sweep", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "./sweep"


def test_resume_takes_the_output_flags(capsys, tmp_path):
    d = str(tmp_path / "ck")
    assert main(["uts", "--tree", "T3", "--sequential", "--node-limit", "20000",
                 "--checkpoint", d, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["resume", d, "--sequential", "--node-limit", "5000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "interrupted"
    assert main(["resume", d, "--sequential", "--node-limit", "5000", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert not captured.out.lstrip().startswith("{") and captured.err == ""


@pytest.mark.parametrize("argv", [["clique", "--gnp", "60", "0.5", "--sequential"],
                                  ["liquid", "example", "--sequential"],
                                  ["liquid", "alloc", "1", "0", "0", "0", "0", "0", "0", "1",
                                   "--sequential"]], ids=lambda a: " ".join(a[:2]))
def test_out_writes_the_json_result(capsys, tmp_path, argv):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "stealsearch" / "schemas" / "result.schema.json").read_text())
    out = tmp_path / "r.json"
    assert main(argv + ["--out", str(out), "--quiet"]) == 0
    assert "objective" in capsys.readouterr().out or argv[0] == "liquid"   # the report too
    obj = json.loads(out.read_text())
    jsonschema.validate(obj, schema)
    assert obj["solution"] is not None and obj["verified"] is True
    assert main(argv + ["--out", str(tmp_path / "no" / "r.json")]) == 2       # one line, early
    assert "no such directory" in capsys.readouterr().err
