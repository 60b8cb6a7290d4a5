"""``make bench`` (benchmarks/run_all.py): the benchmark grids parse in both modes and
name real modules; items run through the sweep runner in a scratch copy: a benchmark
that writes its section is a row ``ok``, one that exits non-zero or writes nothing is a
failed row with its reason while the others run; RESULTS.md is assembled from the
sections with the table of the last runs.  The real benchmarks take minutes each:
``make bench-quick`` runs them, not this suite."""
import argparse
import importlib
import inspect
import os
import shlex
import subprocess
import sys
import textwrap

import pytest

from stealsearch.benchmarks import run_all
from stealsearch.engine.app.sweep import GridError, load_grid


class _Parsed(Exception):
    """Raised once a benchmark's parser has accepted its arguments: nothing runs."""


_real_parse_args = argparse.ArgumentParser.parse_args


def _parse_then_stop(self, args=None, namespace=None):
    assert not self.allow_abbrev, f"{self.prog}: its parser takes abbreviated options"
    _real_parse_args(self, args, namespace)
    raise _Parsed


@pytest.mark.parametrize("grid", ["bench.yaml", "bench_full.yaml"])
@pytest.mark.parametrize("quick", [False, True])
def test_benchmark_grids_name_real_modules(grid, quick):
    spec = run_all.grid_spec(run_all.GRIDS / grid, quick=quick)
    items = load_grid(spec, run_all.KINDS).items
    names = [it.params["name"] for it in items]
    assert len(names) == len(set(names)) and names
    for it in items:
        module = it.params.get("module") or f"stealsearch.benchmarks.bench_{it.params['name']}"
        mod = importlib.import_module(module)       # it imports, and runs as a script
        assert callable(mod.main) and '__name__ == "__main__"' in inspect.getsource(mod), module
        if not it.params.get("args"):
            continue
        # its arguments are the module's own options, spelt out (no parser takes prefixes)
        with pytest.raises(_Parsed):
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(argparse.ArgumentParser, "parse_args", _parse_then_stop)
                argv = shlex.split(it.params.get("args", ""))
                mp.setattr(sys, "argv", [module, *argv])
                mod.main(argv) if inspect.signature(mod.main).parameters else mod.main()
    if quick:
        assert spec["name"].endswith("_quick")
        assert all("quick" not in (b.get("settings") or {}) for b in spec["items"])


def test_only_and_bad_grids_are_one_line_errors(tmp_path):
    spec = run_all.grid_spec(run_all.GRIDS / "bench.yaml", only=["comm", "tiers"])
    assert [b["instance"]["name"] for b in spec["items"]] == ["comm", "tiers"]
    with pytest.raises(GridError, match="no benchmark to run among nope"):
        run_all.grid_spec(run_all.GRIDS / "bench.yaml", only=["nope"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("items: [1, 2]\n")
    with pytest.raises(GridError, match="not a mapping"):
        run_all.grid_spec(bad)


PROBES = {
    # writes its section with the machine line every section has
    "bench_probe_ok": """
        import sys
        from pathlib import Path
        def main(argv=None):
            argv = sys.argv[1:] if argv is None else argv
            Path("benchmarks/results/probe_ok.md").write_text(
                "## probe\\n\\nMachine: test; commit abc123.\\n\\nvalue " + " ".join(argv) + "\\n")
        if __name__ == "__main__":
            main()
    """,
    "bench_probe_crash": """
        import sys
        def main(argv=None):
            print("something went wrong here", file=sys.stderr)
            sys.exit(3)
        if __name__ == "__main__":
            main()
    """,
    "bench_probe_silent": """
        def main(argv=None):
            pass
        if __name__ == "__main__":
            main()
    """,
}


def test_items_run_in_a_scratch_copy_and_failures_are_rows(tmp_path, capsys, monkeypatch):
    work = run_all.scratch_copy(tmp_path / "work")
    # the probes are modules of their own (named by `module:`), importable by the
    # benchmark processes through PYTHONPATH; they write relative to the scratch copy
    probes = tmp_path / "probes"
    probes.mkdir()
    for module, text in PROBES.items():
        (probes / f"{module}.py").write_text(textwrap.dedent(text))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(probes), *filter(None, [os.environ.get("PYTHONPATH")])]))
    grid = tmp_path / "probes.yaml"
    grid.write_text(textwrap.dedent("""\
        name: probes
        items:
          - {kind: bench, instance: {name: probe_ok}, settings: {module: bench_probe_ok, args: "--full-size", quick: "7"}}
          - {kind: bench, instance: {name: probe_crash}, settings: {module: bench_probe_crash, quick: ""}}
          - {kind: bench, instance: {name: probe_silent}, settings: {module: bench_probe_silent, quick: skip}}
        """))
    # as `make bench-quick` runs it: a process of its own in the repository
    proc = subprocess.run([sys.executable, "-m", "stealsearch.benchmarks.run_all", "--grid", str(grid),
                           "--quick", "--workdir", str(work)], cwd=run_all.HERE.parent,
                          capture_output=True, text=True, timeout=300)
    code, out = proc.returncode, proc.stdout
    assert code == 1, proc.stderr
    assert "probes_quick: 1 of 2 benchmarks ok, 1 failed" in out
    assert "probe_crash: failed RuntimeError: exit code 3: something went wrong here" in out
    section = (work / "benchmarks" / "results" / "probe_ok.md").read_text()
    assert section.endswith("value 7\n")                  # the quick arguments
    results = (work / "benchmarks" / "RESULTS.md").read_text()
    assert "## probe" in results and "| probe_ok | `7` | ok |" in results
    assert "| probe_crash |" in results and "exit code 3" in results
    # the repository's own results are untouched
    assert not (run_all.HERE / "results" / "probe_ok.md").exists()

    # the full arguments; the silent one runs now and fails for writing nothing
    code = run_all.main(["--grid", str(grid), "--workdir", str(work), "--only", "probe_ok",
                         "probe_silent"])
    out = capsys.readouterr().out
    assert code == 1 and "did not write benchmarks/results/probe_silent.md" in out
    assert (work / "benchmarks" / "results" / "probe_ok.md").read_text().endswith("--full-size\n")
    assert str(work) not in (work / "benchmarks" / "RESULTS.md").read_text()


def test_results_md_is_the_assembly_of_its_sections(tmp_path):
    # RESULTS.md is generated: a figure written into it by hand, and not into its
    # results/<name>.md, would vanish at the next `make bench` (and from the docs, which
    # include the sections).  Assembling a copy of benchmarks/ must give the file back.
    import shutil
    repo = run_all.HERE.parent
    shutil.copytree(repo / "benchmarks", tmp_path / "benchmarks",
                    ignore=shutil.ignore_patterns("__pycache__", "*.png", "*.json*"))
    assembled = run_all.assemble(tmp_path).read_text()
    committed = (repo / "benchmarks" / "RESULTS.md").read_text()
    assert assembled == committed, (
        "benchmarks/RESULTS.md differs from its sections: write the text into "
        "benchmarks/results/<name>.md and run "
        "`python -m stealsearch.benchmarks.run_all --assemble`")
