"""The four package sweep commands are front ends of the one sweep runner (stealsearch.engine.app.sweep):
with ``--out DIR`` a re-run resumes (items already done are not computed again, counted
through the item function itself), a failing item is recorded with its error while the
others finish, and an interrupted run keeps its finished rows.

The item functions are wrapped here (the runner resolves ``module:function`` when an
item runs, in this process with ``--sequential``), so a failure and a Ctrl-C can be put
on one chosen item; everything else is the real item, verifier included."""
import json

import pytest

from stealsearch.cli import main

#: (command, item module, item function, the item made to fail, planned items,
#:  the JSON's list of failed items)
FRONT_ENDS = {
    "hrel": (["hrel", "sweep", "--P", "6,7", "--h", "8", "--skews", "0", "--seeds", "1",
              "--algorithms", "direct,forwarding"],
             "stealsearch.problems.hrelation.sweep_items", "hrelation",
             lambda kw: kw["P"] == 7 and kw["algorithm"] == "direct", 4,
             lambda d: d["failed"]),
    "twolevel": (["twolevel", "sweep", "--kinds", "sp,layered", "--sizes", "20", "--seeds", "2"],
                 "stealsearch.problems.twolevel.sweep_items", "twolevel",
                 lambda kw: kw["kind"] == "sp" and kw["seed"] == 1, 4,
                 lambda d: d["failed"]),
    "commclust": (["commclust", "sweep", "--example", "cg8", "--example", "is16",
                   "--tie-seeds", "2"],
                  "stealsearch.problems.commclust.sweep_items", "commclust",
                  lambda kw: kw.get("table") == "is16" and kw["tie_seed"] == 1, 4,
                  lambda d: d["failed"]),
    "liquid": (["liquid", "t1-study", "--limit", "3"],
               "stealsearch.problems.liquid.sweep_items", "liquid_t1",
               lambda kw: kw["allocation"] == "0 0 0 0 0 0 0 2", 3,
               lambda d: d["summary"]["failed"]),
}


class Injected(RuntimeError):
    pass


def _wrap(monkeypatch, module_name, function, calls, fail=lambda kw: False, interrupt_at=None):
    import functools
    import importlib

    module = importlib.import_module(module_name)
    real = getattr(module, function)
    real = getattr(real, "__wrapped_item__", real)

    def item(**kw):
        calls.append(kw)
        if interrupt_at is not None and len(calls) == interrupt_at:
            raise KeyboardInterrupt
        if fail(kw):
            raise Injected("injected failure\nsecond line")
        return real(**kw)

    # the runner checks parameters against the real signature and runs its warm-up hook
    functools.update_wrapper(item, real)
    item.__wrapped_item__ = real
    monkeypatch.setattr(module, function, item)


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    return code, (json.loads(out) if "--json" in argv and out.strip() else None)


@pytest.mark.parametrize("name", sorted(FRONT_ENDS))
def test_failing_item_recorded_then_resumed(name, tmp_path, monkeypatch, capsys):
    argv, module, function, fail, planned, failures = FRONT_ENDS[name]
    argv = argv + ["--sequential", "--out", str(tmp_path), "--json"]
    calls = []
    _wrap(monkeypatch, module, function, calls, fail=fail)
    code, data = _run(capsys, argv)
    assert code == 1
    assert len(calls) == planned                       # the others ran on
    [failed] = failures(data)
    assert failed["status"] == "failed" and failed["error"] == "Injected: injected failure"
    tables = list(tmp_path.glob("*.csv"))
    assert tables, "no sweep table in --out"

    calls.clear()
    _wrap(monkeypatch, module, function, calls)        # the failure is mended
    code, data = _run(capsys, argv)
    assert code == 0 and failures(data) == []
    assert len(calls) == 1 and fail(calls[0])          # only the failed item ran again


def test_interrupted_sweep_resumes_without_recomputing(tmp_path, monkeypatch, capsys):
    argv, module, function, _, planned, _ = FRONT_ENDS["hrel"]
    argv = argv + ["--sequential", "--out", str(tmp_path), "--json"]
    calls = []
    _wrap(monkeypatch, module, function, calls, interrupt_at=3)    # Ctrl-C in the 3rd item
    assert main(argv) == 130
    capsys.readouterr()
    done_keys = [line.split(",")[0] for line in
                 (tmp_path / "hrel_sweep.csv").read_text().splitlines()[1:]]
    assert len(done_keys) == 2                         # two whole rows, none for the 3rd

    calls.clear()
    _wrap(monkeypatch, module, function, calls)
    code, data = _run(capsys, argv)
    assert code == 0 and data["status"] == "complete" and data["records"] == planned
    assert data["items_done_before"] == 2 and len(calls) == planned - 2
