"""Maximum clique over the whole DIMACS second-challenge set and BHOSLIB, against
glasgow_clique_solver and MoMC, one core, same run (issue 23).

Instances: every ``*.clq`` / ``*.clq.gz`` in ``--dimacs DIR`` (default
``$STEALSEARCH_DIMACS_SET``) and in ``--bhoslib DIR`` (default ``$STEALSEARCH_BHOSLIB``);
a folder that is not there is named in the output and skipped.  Where they come from
(none is committed; the repository's tests/clique/data holds a small sample):

* DIMACS: the unweighted graphs of github jamestrimble/max-weight-clique-instances,
  ``DIMACS/weighted/*.clq`` with their vertex-weight (``n``) lines dropped; MANN_a45 as
  the complement of github EJLeet/Minimum-Vertex-Cover ``MANN_a45.clq``; hamming10-2
  generated (10-bit words, an edge at Hamming distance >= 2: 518,656 edges, as the file).
* BHOSLIB: github hvidberrrg/benchmark-graphs ``bhoslib/graphs/frb*-mis/*.mis``
  (independent-set form) complemented into clique form.

Peers: as :mod:`benchmarks.bench_peers` (``$STEALSEARCH_PEERS``, ``$GLASGOW_CLIQUE_SOLVER``,
``$MOMC``; a missing peer is skipped with the reason).  Every omega a peer reports is
compared with ours (verified inside ``solve``); a disagreement aborts.

Figures: CPU seconds (ours: the searching thread over building the problem -- vertex
order, root bound, initial clique -- and the search; a peer's: its process, from
getrusage), one run per graph, a CPU limit per run (``--limit``, the issue's 120 s by
default), nodes (MoMC: branches) beside CliSAT's published recursive calls (San Segundo,
Furini, Alvarez, Pardalos, EJOR 2023, appendix Tables 1-2, github psanse/CliSAT).  The
machine is shared: ``--part I/K`` runs every K-th graph from the I-th so a set can be
split into short exclusive holds, each appending its records to ``--raw`` (JSON lines);
``--report`` writes the table from all the records there.  ``--bounds B ...`` runs our
other bounds on each graph beside ``auto`` (records under ``bounds``), ``--skip`` leaves
a peer out; every finished omega is also checked against the published one
(:func:`known_omega`).

    python -m stealsearch.benchmarks.bench_dimacs --part 1/6 --limit 120
    python -m stealsearch.benchmarks.bench_dimacs --report
    python -m stealsearch.benchmarks.bench_dimacs --only keller5 C250.9 --bounds incmaxsat --skip glasgow
"""
from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

from stealsearch.problems.clique import read_dimacs

from . import bench_peers as peers_mod
from .bench_peers import find_peers, run_glasgow, run_momc, run_ours
from .common import machine_header, write_section

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"

#: CliSAT's published recursive calls and MoMC's (branches) from the CliSAT appendix,
#: Table 1 (DIMACS) and Table 2 (BHOSLIB): name -> (CliSAT steps, MoMC steps)
CLISAT_STEPS = {
    "brock200_1": (6459, 72181), "brock400_1": (4781237, 10462110),
    "brock400_2": (2560166, 8521285), "brock400_3": (851004, 8357671),
    "brock400_4": (303585, 2384115), "brock800_1": (107277894, 235564546),
    "brock800_2": (66145240, 223408604), "brock800_3": (49625642, 108221563),
    "brock800_4": (24581677, 175510646), "C250.9": (3417260, 6639713),
    "C2000.5": (675567772, 3185621), "DSJC500_5": (33179, 280166),
    "DSJC1000_5": (3029020, 17047147), "gen400_p0.9_55": (0, 4049),
    "gen400_p0.9_65": (1, 3154), "gen400_p0.9_75": (1, 3360), "hamming10-2": (0, 131840),
    "keller5": (222737, 7821773), "MANN_a45": (19130, 83195),
    "MANN_a81": (179444376, 406990467), "p_hat300-3": (2555, 9336), "p_hat500-2": (305, 4075),
    "p_hat500-3": (75644, 372329), "p_hat700-2": (2547, 16365),
    "p_hat700-3": (650084, 2678530), "p_hat1000-1": (5244, 66268),
    "p_hat1000-2": (132244, 749907), "p_hat1000-3": (110015398, 358413660),
    "p_hat1500-1": (79771, 498585), "p_hat1500-2": (3580545, 14955067),
    "san400_0.7_1": (1436, 5185), "san400_0.7_2": (1006, 882), "san400_0.7_3": (0, 1153),
    "san400_0.9_1": (1, 6591), "san1000": (2196, 17651), "sanr200_0.9": (31120, 74213),
    "sanr400_0.5": (8228, 62483), "sanr400_0.7": (1588204, 5518655), "frb30-15-1": (0, 918),
    "frb30-15-2": (0, 985), "frb30-15-3": (0, 1095), "frb30-15-4": (0, 1155),
    "frb30-15-5": (126, 981), "frb35-17-1": (0, 2158), "frb35-17-2": (643, 2928),
    "frb35-17-3": (0, 1409), "frb35-17-4": (102, 1427), "frb35-17-5": (221, 1727),
    "frb40-19-1": (0, 2816), "frb40-19-2": (121, 1700), "frb40-19-3": (0, 2660),
    "frb40-19-4": (4140, 10881), "frb40-19-5": (1938, 8399), "frb45-21-1": (2434, 102403),
    "frb45-21-2": (42513, 61069), "frb45-21-3": (19794, 29443), "frb45-21-4": (13243, 26477),
    "frb45-21-5": (113072, 158421), "frb50-23-1": (333199, 613547),
    "frb50-23-2": (117948, 214297), "frb50-23-3": (2149755, 4902490),
    "frb50-23-4": (6401, 12354), "frb50-23-5": (66901, 225983),
    "frb53-24-1": (1271221, 1981396), "frb53-24-2": (152126, 126751),
    "frb53-24-3": (747174, 977570), "frb53-24-4": (1320753, 1893507),
    "frb53-24-5": (168563, 428286), "frb56-25-1": (23724283, 41817946),
    "frb56-25-2": (1290189, 1355963), "frb56-25-3": (3780230, 4895951),
    "frb56-25-4": (4668820, 13978117), "frb56-25-5": (36028666, 100513778),
    "frb59-26-1": (62599285, 138978307), "frb59-26-2": (75062511, 64467920),
    "frb59-26-3": (35806103, 53434151), "frb59-26-4": (44200880, 83521902),
    "frb59-26-5": (15343706, 4451221),
}

#: the clique numbers the literature gives (DIMACS second challenge; a BHOSLIB frbN-K-i
#: graph has omega = N by construction, :func:`known_omega`): every solver's omega is
#: checked against them, and against a folder's ``omega.tsv`` where it lists the graph
KNOWN_OMEGA = {
    "brock200_1": 21, "brock200_2": 12, "brock200_4": 17, "brock400_1": 27, "brock400_2": 29,
    "brock400_3": 31, "brock400_4": 33, "brock800_1": 23, "brock800_2": 24, "brock800_3": 25,
    "brock800_4": 26, "C125.9": 34, "C250.9": 44, "DSJC500_5": 13, "DSJC1000_5": 15,
    "keller4": 11, "keller5": 27, "p_hat300-1": 8, "p_hat300-2": 25, "p_hat300-3": 36,
    "p_hat500-1": 9, "p_hat500-2": 36, "p_hat500-3": 50, "p_hat700-1": 11, "p_hat700-2": 44,
    "p_hat700-3": 62, "p_hat1000-1": 10, "p_hat1000-2": 46, "p_hat1500-1": 12,
    "p_hat1500-2": 65, "sanr200_0.7": 18, "sanr200_0.9": 42, "sanr400_0.5": 13,
    "sanr400_0.7": 21, "gen200_p0.9_55": 55, "gen400_p0.9_55": 55, "gen400_p0.9_65": 65,
    "gen400_p0.9_75": 75, "MANN_a27": 126, "san400_0.9_1": 100, "hamming8-2": 128,
    "hamming8-4": 16, "johnson16-2-4": 8, "c-fat200-5": 58, "c-fat500-5": 64,
    "c-fat500-10": 126,
}


def known_omega(name: str, folder: Path | None = None) -> int | None:
    """The published clique number of graph ``name``: ``KNOWN_OMEGA``, a BHOSLIB name's
    N, or the ``omega.tsv`` (columns instance, n, m, omega) of ``folder``; None if none."""
    if folder is not None and (folder / "omega.tsv").is_file():
        for line in (folder / "omega.tsv").read_text().splitlines()[1:]:
            cols = line.split("\t")
            if cols and cols[0] == name:
                return int(cols[3])
    if name in KNOWN_OMEGA:
        return KNOWN_OMEGA[name]
    m = re.fullmatch(r"frb(\d+)-\d+-\d+", name)
    return int(m.group(1)) if m else None


def folders(args) -> list[tuple[str, Path | None, str]]:
    """(family, folder or None, why) for the DIMACS and BHOSLIB folders."""
    out = []
    for family, given, env in (("dimacs", args.dimacs, "STEALSEARCH_DIMACS_SET"),
                               ("bhoslib", args.bhoslib, "STEALSEARCH_BHOSLIB")):
        path = given or os.environ.get(env)
        if not path:
            out.append((family, None, f"{family}: no folder (give --{family} DIR or ${env})"))
        elif not Path(path).is_dir():
            out.append((family, None, f"{family}: {path} is not a folder"))
        else:
            out.append((family, Path(path), ""))
    return out


def graph_files(args) -> list[tuple[str, Path]]:
    files = []
    for family, folder, why in folders(args):
        if folder is None:
            print("skipped:", why, flush=True)
            continue
        found = sorted(list(folder.glob("*.clq")) + list(folder.glob("*.clq.gz")))
        files += [(family, f) for f in found]
    return files


def stem(path: Path) -> str:
    return re.sub(r"\.clq(\.gz)?$", "", path.name)


def run(args) -> None:
    peers = find_peers()
    for p in peers.values():
        print(f"peer {p.name}: {p.path or p.missing} (commit {p.commit})", flush=True)
    if args.peers_first and not (peers["glasgow"] or peers["momc"]):
        raise SystemExit("--peers-first: neither glasgow nor MoMC was found (give --peers DIR)")
    files = graph_files(args)
    if args.only:                       # in the order given (the likeliest first)
        by_name = {stem(f): (fam, f) for fam, f in files}
        files = [by_name[n] for n in args.only if n in by_name]
    previous = {}
    if args.resume and Path(args.raw).is_file():
        for line in Path(args.raw).read_text().splitlines():
            r = json.loads(line)
            if r["limit"] == args.limit:
                previous[r["instance"]] = r
    peers_mod.WALL_FACTOR = max(peers_mod.WALL_FACTOR, args.wall_factor)
    part, parts = (int(x) for x in args.part.split("/"))
    files = files[part - 1::parts]
    from stealsearch.problems.clique.problem import FAST_BOUNDS
    # load every kernel before a timed run (the incremental variants' too)
    peers_mod.warm_kernels(["auto", *FAST_BOUNDS,
                            *(b for b in args.bounds or [] if "inc" in b.split("+"))])
    for family, f in files:
        graph = read_dimacs(f)
        name = stem(f)
        load = os.getloadavg()[0]
        rec = {"instance": name, "family": family, "n": graph.n, "m": graph.m,
               "density": round(graph.density(), 4), "load": load, "limit": args.limit,
               "date": time.strftime("%Y-%m-%d %H:%M"), "commit": _commit()}
        if not args.peers_first:
            # ours stops at 1.5x the limit in wall seconds (the peers: 3x, bench_peers):
            # beyond the CPU limit a run does not count, and the holds must stay short
            rec["ours"] = run_ours(graph, "auto", args.limit, wall_factor=args.wall_factor)
            run_bounds(rec, graph, args)
        kept = previous.get(name, {})
        for key, fn in (("momc", run_momc), ("glasgow", run_glasgow)):
            if key in args.skip:
                continue
            if key in kept and (kept[key]["status"] == "optimal" or kept[key].get("why") == "cpu"):
                rec[key] = kept[key]            # --resume: a finished peer run is not repeated
                continue
            if peers[key]:
                rec[key] = fn(peers[key], f if f.suffix == ".clq" else _plain(f), args.limit)
                rec[key]["commit"] = peers[key].commit
        if args.peers_first:
            # the long stage: ours only where a peer finished (the targets are over those
            # graphs; a graph no peer solves would cost the whole limit for no ratio)
            if any(rec.get(k, {}).get("status") == "optimal" for k in ("glasgow", "momc")):
                rec["ours"] = run_ours(graph, "auto", args.limit, wall_factor=args.wall_factor)
                run_bounds(rec, graph, args)
            else:
                rec["ours"] = {"status": "not run", "why": "no peer finished", "cpu": 0.0,
                               "seconds": 0.0, "nodes": 0, "omega": 0}
        omegas = {k: rec[k]["omega"] for k in ("ours", "glasgow", "momc")
                  if k in rec and rec[k]["status"] == "optimal"}
        omegas.update({f"ours {b}": x["omega"] for b, x in rec.get("bounds", {}).items()
                       if x["status"] == "optimal"})
        known = known_omega(name, f.parent)
        if known is not None:
            omegas["published"] = known
        if len(set(omegas.values())) > 1:
            raise AssertionError(f"{name}: the solvers disagree on omega: {omegas}")
        print(json.dumps(rec), flush=True)
        with open(args.raw, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def run_bounds(rec: dict, graph, args) -> None:
    """Our runs with each bound of ``--bounds`` beside ``auto``'s, in ``rec["bounds"]``;
    a bound ``auto`` resolved to in the default order is not run twice (its record is
    ``rec["ours"]``).  A
    bound may carry options: ``B+inc`` (MoMC's incremental bound over the engine's
    finished subtrees, ``incremental=True``), ``B+none`` (no initial clique), or both."""
    for spec in args.bounds or []:
        b, *options = spec.split("+")
        if (not options and b == rec["ours"].get("resolved")
                and rec["ours"].get("order", "degeneracy") == "degeneracy"):
            continue
        unknown = set(options) - {"inc", "none"}
        if unknown:
            raise SystemExit(f"--bounds {spec}: unknown option(s) {sorted(unknown)}; "
                             "expected inc, none")
        kw = {"incremental": "inc" in options}
        if "none" in options:
            kw["heuristic"] = "none"
        rec.setdefault("bounds", {})[spec] = run_ours(graph, b, args.limit,
                                                      wall_factor=args.wall_factor, **kw)


def _commit() -> str:
    """The checkout's commit (and '+' when its tree has changes), for the raw records."""
    import subprocess
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=7", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--",
                                "problems", "engine"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + ("+" if dirty else "")


def _plain(gz: Path) -> Path:
    """A gzip file unpacked into a temporary .clq for the peers (they read plain files)."""
    import gzip
    import tempfile
    out = Path(tempfile.mkdtemp()) / gz.name[:-3]
    out.write_bytes(gzip.decompress(gz.read_bytes()))
    return out


def _cell(r) -> str:
    if r is None:
        return "—"
    if r["status"] == "not run":
        return "not run"
    if r["status"] != "optimal":
        return f"> {r.get('cpu', 0):.1f}"
    return f"{r['cpu']:.3f}"


def _branched(r) -> str:
    """Our nodes that pushed a child: the count comparable with CliSAT's recursive calls
    (whose bound tests run in the parent's loop, so a child pruned by its bound is no
    call; ours pops it and counts it in ``nodes``).  Older records lack it."""
    return f"{r['branched']:,}" if r.get("branched") is not None else "—"


def report(args) -> list[str]:
    recs = {}
    # --also's files first: a graph re-run at a higher limit (in --raw) replaces its record
    for raw in [*(args.also or []), args.raw]:
        for line in Path(raw).read_text().splitlines():
            r = json.loads(line)
            recs[r["instance"]] = r             # the latest record of a graph wins
    rows = sorted(recs.values(), key=lambda r: (r["family"], r["instance"]))
    limits = sorted({r["limit"] for r in rows})
    limit = max(limits) if rows else args.limit
    limit_text = (f"{limit:g} CPU s" if len(limits) <= 1 else
                  " or ".join(f"{x:g}" for x in limits) + " CPU s (each record's own: a graph "
                  f"some peer solved within {min(limits):g} s was not re-run)")
    commits = sorted({f"{k} {r[k].get('commit', 'unknown')}" for r in rows
                      for k in ("glasgow", "momc") if k in r})
    L = [machine_header(), "", "Peers (built from their public sources): " + "; ".join(commits)
         + ".  Runs: " + ", ".join(sorted({r["date"][:10] for r in rows})) + ".", "",
         f"One run per graph, sequential, CPU seconds; limit {limit_text} per solver and graph "
         "(`> x`: stopped at the limit).  Ours = `auto` (CPU of the searching thread over building "
         "the problem -- vertex order, root bound, AMTS initial clique -- and the search); peers: "
         "their process's CPU (reading the file included).  *init*: our first incumbent (AMTS) and "
         "its seconds; *ratio*: ours / the better peer among those that finished.  CliSAT and its "
         "MoMC column: the recursive calls published in the CliSAT appendix (another machine; "
         "nodes only); *ours branched*: our nodes that pushed a child, the count that "
         "compares with CliSAT's calls (a child its bound prunes is no CliSAT call).  Dates and load averages per graph are in the raw records "
         f"({', '.join(Path(x).name for x in [*(args.also or []), args.raw])})."
         + ("  Ours: commit " + ", ".join(sorted({r["commit"] for r in rows if "commit" in r}))
            + " (the records' checkout; '+': with uncommitted changes)."
            if any("commit" in r for r in rows) else "")
         + ("  *not run*: no peer finished the graph within the limit (`--peers-first`: "
            "ours runs only where a ratio can be taken)."
            if any(r["ours"]["status"] == "not run" for r in rows) else ""), "",
         "| graph | n | dens. | ω | ours CPU | ours nodes | ours branched | bound | init (s) | glasgow CPU | MoMC CPU | MoMC branches | ratio | CliSAT steps | CliSAT's MoMC steps | load |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tot = {"ours": 0.0, "glasgow": 0.0, "momc": 0.0}
    solved = {"ours": 0, "glasgow": 0, "momc": 0}
    in_reach, missed, worst = [], [], []
    family_tot: dict = {}
    for r in rows:
        o, g, m = r["ours"], r.get("glasgow"), r.get("momc")
        for k in solved:
            if r.get(k) and r[k]["status"] == "optimal":
                solved[k] += 1
        peer_ok = [x for x in (g, m) if x and x["status"] == "optimal"]
        better = min((x["cpu"] for x in peer_ok), default=None)
        ratio = ""
        if better is not None:
            in_reach.append(r["instance"])
            fam = family_tot.setdefault(r["family"], {"ours": 0.0, "glasgow": 0.0, "momc": 0.0,
                                                       "graphs": 0})
            fam["graphs"] += 1
            for k in tot:
                x = r.get(k)
                # the totals: graphs a peer solved; a solver that did not finish one
                # counts its limit (at least what it would have cost)
                if x:
                    tot[k] += x["cpu"] if x["status"] == "optimal" else r["limit"]
                    fam[k] += x["cpu"] if x["status"] == "optimal" else r["limit"]
            if o["status"] == "optimal":
                ratio = f"{o['cpu'] / max(better, 1e-3):.2f}"
                worst.append((o["cpu"] / max(better, 1e-3), r["instance"]))
            else:
                missed.append(r["instance"])
                ratio = f"> {r['limit'] / max(better, 1e-3):.1f}"
        omega = o["omega"] if o["status"] == "optimal" else (
            peer_ok[0]["omega"] if peer_ok else f"≥ {o['omega']}")
        cs = CLISAT_STEPS.get(r["instance"], (None, None))
        momc_nodes = f"{m['nodes']:,}" if m and m["status"] == "optimal" else "—"
        clisat = "" if cs[0] is None else f"{cs[0]:,}"
        clisat_momc = "" if cs[1] is None else f"{cs[1]:,}"
        ran = o["status"] != "not run"
        if not ran:
            omega = peer_ok[0]["omega"] if peer_ok else "?"
        init = (f"{o.get('initial', '')} ({o.get('initial_seconds', 0):.2f})" if ran else "—")
        L.append(f"| {r['instance']} | {r['n']} | {r['density']:.2f} | {omega} | {_cell(o)} | "
                 f"{o['nodes']:,} | {_branched(o)} | {o.get('resolved', '')} | {init} "
                 f"| {_cell(g)} | {_cell(m)} | {momc_nodes} | "
                 f"{ratio} | {clisat} | {clisat_momc} | {r['load']:.1f} |")
    L += ["", f"- solved within the limit: ours {solved['ours']}, glasgow {solved['glasgow']}, "
          f"MoMC {solved['momc']} of {len(rows)} graphs"]
    if tot["glasgow"] or tot["momc"]:
        better_tot = min(v for k, v in tot.items() if k != "ours" and v)
        L.append(f"- total CPU over the {len(in_reach)} graphs a peer solved (a solver's limit "
                 f"where it did not finish): ours {tot['ours']:.1f} s, glasgow {tot['glasgow']:.1f} s, "
                 f"MoMC {tot['momc']:.1f} s; ours / the better peer's total "
                 f"{tot['ours'] / better_tot:.2f} (target ≤ 0.67)")
    for family, t in sorted(family_tot.items()):
        better_tot = min((v for k, v in t.items() if k in ("glasgow", "momc") and v), default=0)
        if better_tot:
            L.append(f"- {family} only ({t['graphs']} graphs a peer solved): ours {t['ours']:.1f} s, "
                     f"glasgow {t['glasgow']:.1f} s, MoMC {t['momc']:.1f} s; ours / the better "
                     f"peer's total {t['ours'] / better_tot:.2f}")
    if worst:
        worst.sort(reverse=True)
        L.append("- worst graphs against the better peer: " + ", ".join(
            f"{n} {x:.2f}x" for x, n in worst[:6]) + " (target: none above 1.5)")
    if missed:
        L.append(f"- solved by a peer, not by us within the limit: {', '.join(missed)}")
    out = RESULTS / "dimacs.md" if not args.out else Path(args.out)
    write_section(str(out), "Maximum clique: the DIMACS set and BHOSLIB against glasgow and MoMC "
                  f"(issue 23){args.title_suffix}", L)
    print("\n".join(L))
    return L


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--dimacs", default=None, help="folder of the DIMACS .clq files "
                    "(default $STEALSEARCH_DIMACS_SET)")
    ap.add_argument("--bhoslib", default=None, help="folder of the BHOSLIB frb*.clq files "
                    "(default $STEALSEARCH_BHOSLIB)")
    ap.add_argument("--peers", default=None, help="folder of the built peers (bench_peers)")
    ap.add_argument("--limit", type=float, default=120.0, help="CPU seconds per solver and graph")
    ap.add_argument("--part", default="1/1", help="I/K: every K-th graph from the I-th")
    ap.add_argument("--only", nargs="*", default=None, help="graph names to run")
    ap.add_argument("--raw", default=str(RESULTS / "dimacs_raw.jsonl"),
                    help="JSON lines the runs append to and --report reads")
    ap.add_argument("--peers-first", action="store_true",
                    help="run the peers first and ours only where one of them finished")
    ap.add_argument("--wall-factor", type=float, default=1.5,
                    help="a run's wall-clock stop, x the CPU limit (ours; the peers' is at least "
                         "3): a niced run on a loaded machine needs more than 1.5")
    ap.add_argument("--resume", action="store_true",
                    help="keep the peers' finished runs (solved, or stopped by the CPU limit) "
                         "recorded in --raw at this limit")
    ap.add_argument("--bounds", nargs="*", default=None,
                    help="our bounds to run beside auto (each graph's records under 'bounds')")
    ap.add_argument("--skip", nargs="*", default=[], choices=("glasgow", "momc"),
                    help="peers not to run")
    ap.add_argument("--report", action="store_true", help="write the table from --raw")
    ap.add_argument("--also", nargs="*", default=None,
                    help="--report: raw files read before --raw (e.g. a lower limit's stage; a "
                         "graph in --raw replaces its record there)")
    ap.add_argument("--title-suffix", default="", help="appended to the table's heading")
    ap.add_argument("--out", default=None, help="markdown file of the table (default results/dimacs.md)")
    args = ap.parse_args(argv)
    if args.peers:
        peers_mod.PATHS["peers"] = args.peers
    if args.report:
        return report(args)
    return run(args)


if __name__ == "__main__":
    main()
