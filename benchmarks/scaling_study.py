"""Scaling past this machine: calibrate the simulator on real 1-2 worker runs, predict.

1. Calibration: for every case of ``benchmarks/results/model_calibration.json``
   (written by :mod:`stealsearch.benchmarks.calibrate_model`), the simulator is given that run's
   own measured per-worker kernel rate (nodes / busy seconds, median over runs) and
   the measured steal round trip, and predicts the search time, steals and idle time
   of the same 1- and 2-worker runs; the error is predicted / measured - 1.  Also
   against the figures of RESULTS.md's UTS section (rate = its 1-worker rate).
2. Prediction: efficiency at 1-1024 workers for T1L and the clique instances at
   unloaded rates, the default policy, each victim order with steal-half on and off,
   and a few latencies.

Writes ``benchmarks/results/scaling_model.{md,json,png}``.

    python -m stealsearch.benchmarks.scaling_study            # ~10-20 min on a quiet core
    python -m stealsearch.benchmarks.scaling_study --quick    # fewer seeds and worker counts
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from .common import commit, cpu_model
from .simulate import Machine, Profile, SimPolicy, simulate

PROFILES = "benchmarks/profiles"
OUT = "benchmarks/results/scaling_model"
#: steal round trip between two workers of this machine, bench_comm (RESULTS.md): an
#: empty steal 0.830 ms, 64 rows 0.975 ms; the namespace testbed at delay 0: ~0.8 ms.
RTT = 0.0009
#: unloaded kernel rates per worker, nodes/s.  UTS: RESULTS.md's dask 1-worker
#: 4.42-4.43 M/s.  Cliques: RESULTS.md's sequential colour runs (nodes / wall s):
#: G(1000,.35) 1,104,513 / 1.39 s, G(500,.5) 925,187 / 0.78 s.
RATES = {"T1": 4.43e6, "T3": 4.43e6, "T1L": 4.42e6,
         "G1000_0.35": 1_104_513 / 1.39, "G500_0.5": 925_187 / 0.78}
#: rows hidden per level in a block cut by a chunk's end (see simulate()): fitted so
#: that the simulated 1-worker RELEASE count of T1 matches the real one (277 at h = 2.3;
#: h = 0 gives 8, 2 gives ~190, 3 gives ~700); T1L is the same generator (geometric,
#: b0 = 4), deeper.  T3 and the cliques match at h = 0 (within -2% to +35%).
HIDDEN = {"T1": 2.3, "T1L": 2.3}
#: RESULTS.md UTS section (2026-11-21, load 1.87): (dask-1 s, dask-2 s, dask-2 steals).
PUBLISHED = {"T1": (0.933, 0.634, 3), "T3": (0.928, 0.569, 6), "T1L": (23.099, 13.818, 11)}


def med(xs):
    return statistics.median(xs)


def sim_many(prof, n, pol, mc, seeds):
    h = HIDDEN.get(prof.meta.get("case"), 0.0)
    return [simulate(prof, n, pol, mc, seed=s, hidden_per_level=h) for s in range(seeds)]


def calibration(seeds: int) -> list[dict]:
    with open("benchmarks/results/model_calibration.json") as f:
        cal = json.load(f)
    rows = []
    for case, runs in cal.items():
        if case == "machine" or not os.path.exists(f"{PROFILES}/{case}.npz"):
            continue
        prof = Profile.load(f"{PROFILES}/{case}.npz")
        for label, n in (("dask1", 1), ("dask2", 2)):
            rs = runs.get(label)
            if not rs:
                continue
            nodes = med([r["nodes"] for r in rs])
            rate = med([sum(w["nodes"] for w in r["workers"]) / sum(w["busy_seconds"] for w in r["workers"])
                        for r in rs])
            # the profile of a clique is its proof tree: give it the measured time per node
            rate_eff = rate * prof.total / nodes
            sims = sim_many(prof, n, SimPolicy(), Machine(rate=rate_eff, latency=RTT), seeds)
            meas = med([r["search_seconds"] for r in rs])
            pred = med([s["search_seconds"] for s in sims])
            rows.append({
                "case": case, "workers": n, "rate_Mps": rate / 1e6, "load": med([r["load"] for r in rs]),
                "measured_s": meas, "predicted_s": pred, "error": pred / meas - 1,
                "measured_steals": med([sum(w["steals_succeeded"] for w in r["workers"]) for r in rs]),
                "predicted_steals": med([s["steals"] for s in sims]),
                "measured_idle": med([sum(w["idle_seconds"] for w in r["workers"]) / (n * r["search_seconds"])
                                      for r in rs]),
                "predicted_idle": med([s["idle_fraction"] for s in sims]),
                "measured_releases": med([sum(w["releases"] for w in r["workers"]) for r in rs]),
                "predicted_releases": med([s["releases"] for s in sims])})
            print("calibration", rows[-1], flush=True)
    for case, (t1, t2, steals) in PUBLISHED.items():
        prof = Profile.load(f"{PROFILES}/{case}.npz")
        mc = Machine(rate=RATES[case], latency=RTT)
        s1 = sim_many(prof, 1, SimPolicy(), mc, 1)
        s2 = sim_many(prof, 2, SimPolicy(), mc, seeds)
        rows.append({"case": f"{case} (RESULTS.md)", "workers": 2, "rate_Mps": RATES[case] / 1e6,
                     "load": 1.87, "measured_s": t2, "predicted_s": med([s["search_seconds"] for s in s2]),
                     "error": med([s["search_seconds"] for s in s2]) / t2 - 1,
                     "measured_steals": steals, "predicted_steals": med([s["steals"] for s in s2]),
                     "measured_speedup_1to2": t1 / t2,
                     "predicted_speedup_1to2": s1[0]["search_seconds"] / med([s["search_seconds"] for s in s2])})
        print("published", rows[-1], flush=True)
    return rows


def predictions(cases, ns, seeds, variant_ns) -> dict:
    out = {"default": [], "variants": [], "latency": []}
    for case in cases:
        prof = Profile.load(f"{PROFILES}/{case}.npz")
        mc = Machine(rate=RATES[case], latency=RTT)
        for n in ns:
            t = time.time()
            sims = sim_many(prof, n, SimPolicy(), mc, seeds if n <= 256 else 1)
            out["default"].append(summary(case, n, "default", sims))
            print(out["default"][-1], f"({time.time() - t:.1f} s)", flush=True)
        for n in variant_ns:
            for victims in ("ring", "random", "permutation", "richest"):
                for half in (True, False):
                    pol = SimPolicy(victims=victims, steal_half=half)
                    sims = sim_many(prof, n, pol, mc, 1)
                    out["variants"].append(summary(case, n, f"{victims}, half {'on' if half else 'off'}", sims))
                    print(out["variants"][-1], flush=True)
        for n in variant_ns:
            for lat in (0.0001, 0.001, 0.005, 0.02):
                sims = sim_many(prof, n, SimPolicy(), Machine(rate=RATES[case], latency=lat), 1)
                out["latency"].append(summary(case, n, f"rtt {lat * 1e3:g} ms", sims))
                print(out["latency"][-1], flush=True)
    return out


def extra(ns=(64, 256, 1024)) -> list[dict]:
    """Bounded polling, and a 10x costlier node (T1L as a ~230 s tree: the protocol's
    losses against a search long enough to amortise the ramp-up)."""
    prof = Profile.load(f"{PROFILES}/T1L.npz")
    rows = []
    for label, pol, rate in (
            ("ring, all peers (default)", SimPolicy(), RATES["T1L"]),
            ("random, polling 4", SimPolicy(victims="random", polling=4), RATES["T1L"]),
            ("richest, polling 4", SimPolicy(victims="richest", polling=4), RATES["T1L"]),
            ("default, node 10x costlier", SimPolicy(), RATES["T1L"] / 10),
            ("random, polling 4, node 10x costlier", SimPolicy(victims="random", polling=4),
             RATES["T1L"] / 10)):
        for n in ns:
            t = time.time()
            rows.append(summary("T1L", n, label, sim_many(prof, n, pol, Machine(rate=rate, latency=RTT), 1)))
            print(rows[-1], f"({time.time() - t:.1f} s)", flush=True)
    return rows


def orders(ns=(64, 256), seeds=(0, 1, 2)) -> list[dict]:
    """The victim orders on T1L (steal-half on) over three seeds of the split resampling:
    the one-seed table's differences are of the order of the seed-to-seed spread."""
    prof = Profile.load(f"{PROFILES}/T1L.npz")
    rows = []
    for n in ns:
        for victims in ("ring", "random", "permutation", "richest"):
            sims = [simulate(prof, n, SimPolicy(victims=victims), Machine(rate=RATES["T1L"], latency=RTT),
                             seed=sd, hidden_per_level=HIDDEN["T1L"]) for sd in seeds]
            rows.append(summary("T1L", n, f"{victims} (3 seeds, median [min-max])", sims))
            print(rows[-1], flush=True)
    return rows


def summary(case, n, label, sims) -> dict:
    return {"case": case, "workers": n, "config": label,
            "efficiency": med([s["efficiency"] for s in sims]),
            "efficiency_min": min(s["efficiency"] for s in sims),
            "efficiency_max": max(s["efficiency"] for s in sims),
            "search_s": med([s["search_seconds"] for s in sims]),
            "steals": med([s["steals"] for s in sims]),
            "idle": med([s["idle_fraction"] for s in sims]), "seeds": len(sims)}


def plot(pred, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    for case in sorted({r["case"] for r in pred["default"]}):
        rs = [r for r in pred["default"] if r["case"] == case]
        ax.errorbar([r["workers"] for r in rs], [r["efficiency"] for r in rs],
                    yerr=[[r["efficiency"] - r["efficiency_min"] for r in rs],
                          [r["efficiency_max"] - r["efficiency"] for r in rs]],
                    marker="o", capsize=3, label=case)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("workers")
    ax.set_ylabel("predicted efficiency")
    ax.set_title("default policy, steal round trip 0.9 ms")
    ax.grid(alpha=0.3)
    ax.legend()
    costly = [r for r in pred.get("extra", []) if r["config"] == "default, node 10x costlier"]
    if costly:
        ax.plot([r["workers"] for r in costly], [r["efficiency"] for r in costly], "o--",
                color="tab:orange", alpha=0.6, label="T1L, node 10x costlier")
        ax.legend()
    ax = axes[1]
    colours = {"ring": "tab:blue", "random": "tab:green", "permutation": "tab:red",
               "richest": "tab:purple"}
    for cfg in dict.fromkeys(r["config"] for r in pred["variants"] if r["case"] == "T1L"):
        rs = [r for r in pred["variants"] if r["case"] == "T1L" and r["config"] == cfg]
        ax.plot([r["workers"] for r in rs], [r["efficiency"] for r in rs], marker="o",
                color=colours[cfg.split(",")[0]], linestyle="-" if cfg.endswith("half on") else "--",
                label=cfg)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("workers")
    ax.set_title("T1L: victim order (colour) x steal-half (solid on, dashed off)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="rewrite the .md from the .json")
    ap.add_argument("--orders", action="store_true",
                    help="add the victim orders over three seeds to the .json")
    ap.add_argument("--extra", action="store_true",
                    help="add bounded polling and a costlier node to the .json")
    ap.add_argument("--cases", nargs="+", default=["T1L", "G1000_0.35"])
    args = ap.parse_args(argv)
    if args.extra or args.orders:
        with open(OUT + ".json") as f:
            data = json.load(f)
        if args.extra:
            data["predictions"]["extra"] = extra()
        if args.orders:
            data["predictions"]["orders"] = orders()
        with open(OUT + ".json", "w") as f:
            json.dump(data, f, indent=1)
        return
    if args.report_only:
        with open(OUT + ".json") as f:
            data = json.load(f)
        plot(data["predictions"], OUT + ".png")
        print("\n".join(write_md(data, NOTES)))
        return
    seeds = 2
    ns = [1, 2, 4, 8, 16, 64, 256] if args.quick else [1, 2, 4, 8, 16, 64, 256, 1024]
    variant_ns = [16, 64, 256]
    t0 = time.time()
    data = {"machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "commit": commit(),
                        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                        "load_at_start": os.getloadavg()[0]},
            "constants": {"rtt_s": RTT, "rates": RATES}}
    data["calibration"] = calibration(seeds)
    data["predictions"] = predictions(args.cases, ns, seeds, variant_ns)
    data["predictions"]["extra"] = [] if args.quick else extra()
    data["predictions"]["orders"] = [] if args.quick else orders()
    data["seconds"] = time.time() - t0
    with open(OUT + ".json", "w") as f:
        json.dump(data, f, indent=1)
    plot(data["predictions"], OUT + ".png")
    print("\n".join(write_md(data, NOTES)))


#: the reading of the figures, written after looking at them (kept with the code that
#: writes the tables so that a rerun keeps it next to its numbers).
NOTES: tuple[str, ...] = (
    "**Reading.**",
    "",
    "* *Calibration.*  Given each run's measured kernel rate, the model reproduces the 1-2 worker "
    "search times within a few per cent and the RELEASE counts of T3 and the cliques within -3% to "
    "+41% with no fitted parameter; T1's RELEASEs needed one fitted parameter (rows hidden in "
    "blocks, 2.3 per level, fitted on 1 worker: 277 real vs 291; checked at 2 workers: 349 vs 288).  "
    "The idle share is under-predicted (measured 1-4%, model 0-1%): thieves and event loops wait "
    "for a CPU on the loaded 2-core VM.  At 2 workers the time error is small mostly because the measured per-worker rate is an input: the "
    "model does not predict CPU contention.  Against RESULTS.md's 2-worker figures with the unloaded "
    "1-worker rate it is 15-24% optimistic (predicted speed-up 1->2 ~1.96x, measured 1.47-1.67x): on "
    "this 2-core VM each worker process also runs its event loop and the other tenants' jobs.  The "
    "model's efficiencies below are therefore an upper bound set by the protocol alone (steal "
    "latency, polling, ramp-up, termination), on machines with a core per worker.",
    "* *Where it stops scaling.*  T1L (23 s sequential) stays >= 0.95 efficient to 16 workers and "
    "drops to ~0.5 at 64, ~0.2 at 256, ~0.04 at 1024; with a 10x costlier node (the same tree as a "
    "230 s search) 0.83 at 64 and 0.61 at 256.  So the limit is the ramp-up and tail against the work "
    "per worker, not steady state: each thief polls victims one synchronous round trip at a time, "
    "so a FINDWORK round over all peers lasts (n - 1) x 0.9 ms (0.23 s at 256 workers, the whole "
    "T1L search at that size), and a worker only has rows to give once its local portion exceeds "
    "the threshold.  G(1000,.35) (a 1.2 s proof tree) is 0.94 at 16, 0.81 at 64, 0.16 at 256: it is "
    "too small for more than ~64 workers whatever the policy (0-40 steals; the dealt root rows "
    "carry it).",
    "* *Victim order and steal-half.*  Steal-half matters most: off, T1L's efficiency roughly halves "
    "at 64-256 workers (0.53 -> 0.33 at 64, ring).  Among orders (three seeds, T1L): the fixed random "
    "permutation is best at 64 (0.63 [0.60-0.64] against ring 0.51 [0.48-0.54], random 0.54, "
    "richest 0.51); at 256 permutation and random 0.24 / 0.23 against ring 0.19 and richest 0.16.  "
    "Ring sends the thieves of a neighbourhood along the same path; richest sends every idle worker "
    "first to the same stale richest peer (sizes gossiped every 100 ms), whose event loop queues "
    "the steals.  Bounded polling (4 victims a round) changes little for random (0.56 at 64) and "
    "hurts richest.  On G(1000,.35) the order makes no difference (0-40 steals in all).",
    "* *Latency* (model, T1L at 16 / 64 workers): round trip 0.1 ms 0.90 / 0.65, 1 ms 0.85 / 0.62, "
    "5 ms 0.77 / 0.36, 20 ms 0.46 / 0.18.  See latency.md for the measured 2-worker side.",
    "* *Not modelled:* CPU contention and the GIL share of the event loop, work inflation before an "
    "optimum is found (the clique profile is the proof tree), the scheduler, message loss, and "
    "network bandwidth (rows are small).  The split templates are resampled from the recorded top "
    "levels, so the shape below them is statistical, not the real tree's; the spread over seeds is "
    "shown [min-max].",
)



def write_md(data, notes=()):
    from .common import write_section

    m = data["machine"]
    lines = [f"Machine (simulation and calibration runs): {m['cpu']}, {m['cores']} cores; date {m['date']}; "
             f"commit {m['commit']}; load average at start {m['load_at_start']:.1f}.  "
             "Scripts: `benchmarks/record_profile.py` (tree profiles, real kernel), "
             "`benchmarks/calibrate_model.py` (real 1-2 worker runs), `benchmarks/simulate.py` "
             "(the discrete-event model), `benchmarks/scaling_study.py` (this section).", "",
             "**Tree.** The top levels of each real tree are recorded exactly with the engine's kernel "
             "(`benchmarks/profiles/*.npz`; T1L: 5 levels, 1,585 nodes; G(1000,.35): 2 levels, 92,116 nodes, "
             "the proof tree at incumbent omega = 11, 919,756 nodes against 1,104,513 sequential), with the "
             "exact subtree size of each deepest node (their sum is the real count: checked).  Below, rows are "
             "split by split shapes resampled from the recorded ones (work conserved exactly); rows under "
             "1/20 of a chunk are consumed as blocks.", "",
             "### Calibration at 1-2 workers", "",
             "Inputs taken from each real run: its per-worker kernel rate (nodes / busy s) and the steal round "
             f"trip {data['constants']['rtt_s'] * 1e3:.1f} ms (bench_comm); outputs compared: search time, "
             "steals, idle share.  The machine was loaded (load ~5 on 2 cores), so the 2-worker rate is about "
             "half the 1-worker one: CPU contention, which the model does not predict but takes as input.", "",
             "| case | workers | load | rate M/s | measured s | model s | error | steals meas / model "
             "| idle meas / model | RELEASEs meas / model |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["calibration"]:
        if "measured_speedup_1to2" in r:
            continue
        lines.append(f"| {r['case']} | {r['workers']} | {r['load']:.1f} | {r['rate_Mps']:.2f} | "
                     f"{r['measured_s']:.3f} | {r['predicted_s']:.3f} | {100 * r['error']:+.1f}% | "
                     f"{r['measured_steals']:.0f} / {r['predicted_steals']:.0f} | "
                     f"{100 * r['measured_idle']:.1f}% / {100 * r['predicted_idle']:.1f}% | "
                     f"{r['measured_releases']:.0f} / {r['predicted_releases']:.0f} |")
    errs = [abs(r["error"]) for r in data["calibration"] if "measured_speedup_1to2" not in r]
    lines += ["", f"Median absolute error {100 * statistics.median(errs):.1f}%, largest "
              f"{100 * max(errs):.1f}%.", "",
              "Against RESULTS.md's UTS section (2026-11-21, load 1.87), with the unloaded 1-worker rate "
              "for both workers (so the model has no CPU contention):", "",
              "| tree | measured 2-worker s | model s | speed-up 1->2 measured | model | steals measured / model |",
              "|---|---|---|---|---|---|"]
    for r in data["calibration"]:
        if "measured_speedup_1to2" in r:
            lines.append(f"| {r['case'].split()[0]} | {r['measured_s']:.3f} | {r['predicted_s']:.3f} | "
                         f"{r['measured_speedup_1to2']:.2f}x | {r['predicted_speedup_1to2']:.2f}x | "
                         f"{r['measured_steals']} / {r['predicted_steals']:.0f} |")
    pred = data["predictions"]
    ns = sorted({r["workers"] for r in pred["default"]})
    lines += ["", "### Predicted efficiency, default policy (ring, k 8, steal-half, acquire 64, "
              "threshold 32, chunks 5 ms, back-off 1-4 ms), round trip 0.9 ms", "",
              "Efficiency = sequential kernel time / (workers x search time); median over seeds of the "
              "split resampling [min-max]; unloaded rates (UTS 4.42 M nodes/s, G(1000,.35) 0.79 M/s).", "",
              "| case | " + " | ".join(str(n) for n in ns) + " |", "|---|" + "---|" * len(ns)]
    for case in sorted({r["case"] for r in pred["default"]}):
        cells = []
        for n in ns:
            r = next((x for x in pred["default"] if x["case"] == case and x["workers"] == n), None)
            cells.append("—" if r is None else f"{r['efficiency']:.2f} [{r['efficiency_min']:.2f}-"
                         f"{r['efficiency_max']:.2f}]")
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    for key, title in (("variants", "Victim order x steal-half"), ("latency", "Round trip"),
                       ("extra", "Bounded polling; a 10x costlier node"),
                       ("orders", "Victim orders, T1L, steal-half on, three seeds")):
        if not pred.get(key):
            continue
        vn = sorted({r["workers"] for r in pred[key]})
        lines += ["", f"### {title} (efficiency{'; one seed each' if key != 'orders' else ''})", "",
                  "| case | setting | " + " | ".join(f"{n} workers" for n in vn) + " |",
                  "|---|---|" + "---|" * len(vn)]
        for case in sorted({r["case"] for r in pred[key]}):
            for cfg in dict.fromkeys(r["config"] for r in pred[key] if r["case"] == case):
                cells = [next((f"{x['efficiency']:.2f}" + (f" [{x['efficiency_min']:.2f}-{x['efficiency_max']:.2f}]"
                                                             if x["seeds"] > 1 else "")
                               for x in pred[key] if x["case"] == case
                               and x["config"] == cfg and x["workers"] == n), "—") for n in vn]
                lines.append(f"| {case} | {cfg} | " + " | ".join(cells) + " |")
    lines += ["", "![predicted efficiency](results/scaling_model.png)", ""] + list(notes)
    write_section(OUT + ".md", "Scaling model (discrete-event simulation, calibrated at 1-2 workers)", lines)
    return lines


if __name__ == "__main__":
    main()
