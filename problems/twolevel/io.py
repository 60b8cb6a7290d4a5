"""Readers and writers for 2LVDS instances (seed paper 004, section 2.1) and schedules.

Formats
-------
JSON (one file)::

    {"tasks": [{"id": 1, "p": 2}, ...],
     "arcs":  [{"from": 1, "to": 2, "c1": 1, "c2": 2}, ...]}

CSV (two files, with a header row; extra columns are ignored)::

    tasks.csv: task,p          arcs.csv: from,to,c1,c2
               1,2                       1,2,1,2

Task ids are kept as written: integers when they parse as integers, strings otherwise.
networkx: a ``DiGraph`` with node attribute ``p`` and edge attributes ``c1``, ``c2``
(names configurable).  Every error names the file and the line (CSV) or the JSON
path (``tasks[3]``), and is a :class:`TwoLevelInputError`.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from stealsearch.engine.core.inputs import read_input_text, shown

from .model import TwoLevelInputError, TwoLevelInstance


def _number(value, where: str, what: str) -> float:
    if isinstance(value, bool):
        raise TwoLevelInputError(f"{where}: {what} must be a number, got {shown(value)}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TwoLevelInputError(f"{where}: {what} must be a number, got {shown(value)}") from None
    except OverflowError:
        raise TwoLevelInputError(f"{where}: {what} is too large: {shown(value)}") from None
    if math.isnan(x) or math.isinf(x):
        raise TwoLevelInputError(f"{where}: {what} must be a finite number, got {shown(value)}")
    return x


def _task_id(value, where: str):
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict, float)):
        raise TwoLevelInputError(f"{where}: task id must be an integer or a string, got {shown(value)}")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text:
        raise TwoLevelInputError(f"{where}: empty task id")
    try:
        return int(text)
    except ValueError:
        return text


def instance_from_dict(data, source: str = "<json>") -> TwoLevelInstance:
    """Instance from the JSON structure above.  Example::

        >>> inst = instance_from_dict({"tasks": [{"id": "a", "p": 3}, {"id": "b", "p": 1}],
        ...                            "arcs": [{"from": "a", "to": "b", "c1": 1, "c2": 2}]})
        >>> inst.names, inst.m
        (['a', 'b'], 1)
    """
    if not isinstance(data, dict) or "tasks" not in data:
        raise TwoLevelInputError(f"{source}: expected an object with 'tasks' and 'arcs'")
    tasks, arcs = data.get("tasks"), data.get("arcs", [])
    if not isinstance(tasks, list) or not isinstance(arcs, list):
        raise TwoLevelInputError(f"{source}: 'tasks' and 'arcs' must be lists")
    names, p, twhere = [], [], []
    for k, t in enumerate(tasks):
        where = f"{source}: tasks[{k}]"
        if not isinstance(t, dict) or "id" not in t or "p" not in t:
            raise TwoLevelInputError(f"{where}: expected {{\"id\": ..., \"p\": ...}}")
        names.append(_task_id(t["id"], where))
        p.append(_number(t["p"], where, "p"))
        twhere.append(f"tasks[{k}]")
    out, awhere = [], []
    for a, arc in enumerate(arcs):
        where = f"{source}: arcs[{a}]"
        if not isinstance(arc, dict) or not all(k in arc for k in ("from", "to", "c1", "c2")):
            raise TwoLevelInputError(f"{where}: expected {{\"from\", \"to\", \"c1\", \"c2\"}}")
        out.append((_task_id(arc["from"], where), _task_id(arc["to"], where),
                    _number(arc["c1"], where, "c1"), _number(arc["c2"], where, "c2")))
        awhere.append(f"arcs[{a}]")
    return TwoLevelInstance.build(names, p, out, source=source, task_where=twhere,
                                  arc_where=awhere)


def read_json(path) -> TwoLevelInstance:
    """Instance from a JSON file (format in the module docstring)."""
    path = Path(path)
    data = _load_json(path)
    return instance_from_dict(data, source=str(path))


def _load_json(path: Path):
    text = read_input_text(path, TwoLevelInputError)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TwoLevelInputError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise TwoLevelInputError(f"{path}: JSON nested too deeply") from None


def _read_csv_rows(path, columns):
    path = Path(path)
    handle = io.StringIO(read_input_text(path, TwoLevelInputError), newline="")
    with handle:
        reader = csv.reader(handle)
        header = None
        for line_no, row in enumerate(reader, start=1):
            if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip().lower() for c in row]
                missing = [c for c in columns if c not in header]
                if missing:
                    raise TwoLevelInputError(f"{path}: line {line_no}: header must name columns "
                                             f"{', '.join(columns)} (missing {', '.join(missing)})")
                index = [header.index(c) for c in columns]
                continue
            if len(row) < len(header):
                raise TwoLevelInputError(f"{path}: line {line_no}: expected {len(header)} "
                                         f"fields, got {len(row)}")
            yield line_no, [row[i].strip() for i in index]
        if header is None:
            raise TwoLevelInputError(f"{path}: empty file (expected a header "
                                     f"{','.join(columns)})")


def read_csv(tasks_path, arcs_path) -> TwoLevelInstance:
    """Instance from a tasks CSV (``task,p``) and an arcs CSV (``from,to,c1,c2``)."""
    names, p, twhere = [], [], []
    for line, (tid, pv) in _read_csv_rows(tasks_path, ("task", "p")):
        where = f"{tasks_path}: line {line}"
        names.append(_task_id(tid, where))
        p.append(_number(pv, where, "p"))
        twhere.append(f"{tasks_path} line {line}")
    arcs, awhere = [], []
    for line, (u, v, x1, x2) in _read_csv_rows(arcs_path, ("from", "to", "c1", "c2")):
        where = f"{arcs_path}: line {line}"
        arcs.append((_task_id(u, where), _task_id(v, where), _number(x1, where, "c1"),
                     _number(x2, where, "c2")))
        awhere.append(f"{arcs_path} line {line}")
    return TwoLevelInstance.build(names, p, arcs, source=str(tasks_path), task_where=twhere,
                                  arc_where=awhere)


def from_networkx(graph, p: str = "p", c1: str = "c1", c2: str = "c2",
                  source: str = "<networkx>") -> TwoLevelInstance:
    """Instance from a ``networkx.DiGraph`` with node attribute ``p`` and edge attributes
    ``c1``/``c2``.  Example::

        >>> import networkx as nx
        >>> g = nx.DiGraph(); g.add_node("x", p=2); g.add_node("y", p=1)
        >>> g.add_edge("x", "y", c1=1, c2=2)
        >>> from_networkx(g).m
        1
    """
    if not getattr(graph, "is_directed", lambda: False)():
        raise TwoLevelInputError(f"{source}: expected a directed graph (networkx.DiGraph)")
    if graph.is_multigraph():
        raise TwoLevelInputError(f"{source}: multigraphs are not supported (parallel arcs)")
    names, pv = [], []
    for node, attrs in graph.nodes(data=True):
        if p not in attrs:
            raise TwoLevelInputError(f"{source}: task {node!r} has no attribute {p!r}")
        names.append(node)
        pv.append(_number(attrs[p], f"{source}: task {node!r}", p))
    arcs = []
    for u, v, attrs in graph.edges(data=True):
        where = f"{source}: arc ({u!r}, {v!r})"
        for key in (c1, c2):
            if key not in attrs:
                raise TwoLevelInputError(f"{where}: no attribute {key!r}")
        arcs.append((u, v, _number(attrs[c1], where, c1), _number(attrs[c2], where, c2)))
    return TwoLevelInstance.build(names, pv, arcs, source=source)


def to_networkx(inst: TwoLevelInstance):
    """The instance as a ``networkx.DiGraph`` (attributes ``p``, ``c1``, ``c2``)."""
    import networkx as nx

    g = nx.DiGraph()
    for name, pv in zip(inst.names, inst.p.tolist()):
        g.add_node(name, p=pv)
    for u, v, x1, x2 in zip(inst.src.tolist(), inst.dst.tolist(), inst.c1.tolist(),
                            inst.c2.tolist()):
        g.add_edge(inst.names[u], inst.names[v], c1=x1, c2=x2)
    return g


def _num(x: float):
    return int(x) if float(x).is_integer() else float(x)


def instance_to_dict(inst: TwoLevelInstance) -> dict:
    """The JSON structure of the module docstring."""
    names = inst.names
    return {"tasks": [{"id": names[k], "p": _num(v)} for k, v in enumerate(inst.p.tolist())],
            "arcs": [{"from": names[u], "to": names[v], "c1": _num(x1), "c2": _num(x2)}
                     for u, v, x1, x2 in zip(inst.src.tolist(), inst.dst.tolist(),
                                             inst.c1.tolist(), inst.c2.tolist())]}


def write_json(inst: TwoLevelInstance, path) -> None:
    Path(path).write_text(json.dumps(instance_to_dict(inst), indent=1) + "\n")


def write_csv(inst: TwoLevelInstance, tasks_path, arcs_path) -> None:
    names = inst.names
    with open(tasks_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task", "p"])
        for k, v in enumerate(inst.p.tolist()):
            w.writerow([names[k], _num(v)])
    with open(arcs_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["from", "to", "c1", "c2"])
        for u, v, x1, x2 in zip(inst.src.tolist(), inst.dst.tolist(), inst.c1.tolist(),
                                inst.c2.tolist()):
            w.writerow([names[u], names[v], _num(x1), _num(x2)])


def read_instance(path, arcs=None) -> TwoLevelInstance:
    """JSON file, or a tasks CSV plus its arcs CSV (``arcs``)."""
    path = Path(path)
    if path.suffix.lower() == ".csv" or arcs is not None:
        if arcs is None:
            raise TwoLevelInputError(f"{path}: a CSV task file needs its arcs file (--arcs ARCS.csv)")
        return read_csv(path, arcs)
    return read_json(path)


def schedule_from_dict(inst: TwoLevelInstance, data, source: str = "<schedule>"):
    """A schedule in the format of :meth:`TwoLevelSchedule.to_dict`, as the plain arrays
    :func:`stealsearch.problems.twolevel.verify.verify_schedule` reads (a ``SimpleNamespace``).

    Only the structure is checked here (known tasks, integer ids, numbers); feasibility
    is the verifier's job.  Example::

        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> from stealsearch.problems.twolevel.algorithms import two_level_opt
        >>> inst = table1_instance()
        >>> s = schedule_from_dict(inst, two_level_opt(inst).to_dict())
        >>> len(s.copy_task), len(s.msg_task)
        (20, 9)
    """
    from types import SimpleNamespace

    import numpy as np

    if not isinstance(data, dict) or not all(k in data for k in
                                             ("processor_cluster", "copies", "messages")):
        raise TwoLevelInputError(f"{source}: expected an object with 'processor_cluster', "
                                 "'copies' and 'messages'")
    index = {name: k for k, name in enumerate(inst.names)}

    def task_of(value, where):
        tid = _task_id(value, where)
        if tid not in index:
            raise TwoLevelInputError(f"{where}: unknown task {value!r}")
        return index[tid]

    def integer(value, where, what):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TwoLevelInputError(f"{where}: {what} must be an integer, got {value!r}")
        return value

    clusters = [integer(c, f"{source}: processor_cluster[{q}]", "cluster")
                for q, c in enumerate(data["processor_cluster"])]
    cols = {k: [] for k in ("task", "proc", "start")}
    for r, c in enumerate(data["copies"]):
        where = f"{source}: copies[{r}]"
        if not isinstance(c, dict) or not all(k in c for k in ("task", "processor", "start")):
            raise TwoLevelInputError(f"{where}: expected task, processor, start")
        cols["task"].append(task_of(c["task"], where))
        cols["proc"].append(integer(c["processor"], where, "processor"))
        cols["start"].append(_number(c["start"], where, "start"))
        if "cluster" in c and 0 <= cols["proc"][-1] < len(clusters) \
                and c["cluster"] != clusters[cols["proc"][-1]]:
            raise TwoLevelInputError(f"{where}: cluster {c['cluster']!r} disagrees with "
                                     f"processor_cluster[{c['processor']}]")
    mcols = {k: [] for k in ("task", "from_copy", "from_proc", "to_proc", "start", "dur")}
    for e, msg in enumerate(data["messages"]):
        where = f"{source}: messages[{e}]"
        need = ("task", "from_copy", "channel", "start", "duration")
        if not isinstance(msg, dict) or not all(k in msg for k in need):
            raise TwoLevelInputError(f"{where}: expected {', '.join(need)}")
        ch = msg["channel"]
        if not isinstance(ch, list) or len(ch) != 2:
            raise TwoLevelInputError(f"{where}: channel must be [from_processor, to_processor]")
        mcols["task"].append(task_of(msg["task"], where))
        mcols["from_copy"].append(integer(msg["from_copy"], where, "from_copy"))
        mcols["from_proc"].append(integer(ch[0], where, "channel"))
        mcols["to_proc"].append(integer(ch[1], where, "channel"))
        mcols["start"].append(_number(msg["start"], where, "start"))
        mcols["dur"].append(_number(msg["duration"], where, "duration"))
    i64 = lambda v: np.asarray(v, dtype=np.int64)       # noqa: E731
    f64 = lambda v: np.asarray(v, dtype=np.float64)     # noqa: E731
    return SimpleNamespace(
        processor_cluster=i64(clusters), copy_task=i64(cols["task"]),
        copy_processor=i64(cols["proc"]), copy_start=f64(cols["start"]),
        msg_task=i64(mcols["task"]), msg_from_copy=i64(mcols["from_copy"]),
        msg_from_processor=i64(mcols["from_proc"]), msg_to_processor=i64(mcols["to_proc"]),
        msg_start=f64(mcols["start"]), msg_duration=f64(mcols["dur"]))


def read_schedule(inst: TwoLevelInstance, path):
    """A schedule JSON file (``--schedule-out`` format) for the verifier."""
    path = Path(path)
    data = _load_json(path)
    return schedule_from_dict(inst, data, source=str(path))
