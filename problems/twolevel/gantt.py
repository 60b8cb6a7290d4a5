"""Gantt chart of a 2LVDS schedule, in the style of Fig. 4 of seed paper 004.

One row per processor, grouped and labelled by cluster (Pi_c / pi_q, 0-based like the
data); one bar per task copy, labelled with the task; copies of duplicated tasks are
hatched; messages are arrows from the end of the sending copy (sender's row) to the
receiving row at the moment the channel is released (start + duration): blue inside a
cluster, red between clusters.  Large schedules are refused (``max_rows``) rather than
drawn unreadably.
"""
from __future__ import annotations

import numpy as np

from .model import TwoLevelInputError


def gantt_chart(schedule, path, max_rows: int = 80, max_arrows: int = 600,
                title: str | None = None) -> None:
    """Write the Gantt chart of ``schedule`` to ``path`` (PNG).

    Example::

        >>> import os, tempfile
        >>> from pathlib import Path
        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> from stealsearch.problems.twolevel.algorithms import two_level_opt
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "fig4.png")
        ...     gantt_chart(two_level_opt(table1_instance()), path)
        ...     Path(path).read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
        True
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D

    inst = schedule.instance
    nproc = schedule.n_processors
    if nproc > max_rows:
        raise TwoLevelInputError(f"Gantt chart: {nproc} processors is more than {max_rows} rows; "
                                 "use a smaller instance")
    names = inst.names
    clusters = schedule.processor_cluster
    # one row per processor, a gap between clusters
    row_y = np.empty(nproc)
    y = 0.0
    for q in range(nproc):
        if q > 0 and clusters[q] != clusters[q - 1]:
            y += 0.6
        row_y[q] = y
        y += 1.0
    height = max(3.0, 0.42 * y + 2.0)
    makespan = schedule.makespan
    fig, ax = plt.subplots(figsize=(min(16, 6 + 0.02 * inst.n), height), dpi=90)
    cmap = plt.get_cmap("tab20")
    dup = np.bincount(schedule.copy_task, minlength=inst.n) > 1
    label_bars = schedule.n_copies <= 400
    for r in range(schedule.n_copies):
        t = int(schedule.copy_task[r])
        q = int(schedule.copy_processor[r])
        s = float(schedule.copy_start[r])
        w = float(inst.p[t])
        ax.barh(row_y[q], w, left=s, height=0.7, color=cmap(t % 20), edgecolor="black",
                linewidth=0.6, hatch="///" if dup[t] else None, alpha=0.9)
        if label_bars:
            ax.text(s + w / 2, row_y[q], str(names[t]), ha="center", va="center", fontsize=8)
    nmsg = min(schedule.n_messages, max_arrows)
    for e in range(nmsg):
        q0 = int(schedule.msg_from_processor[e])
        q1 = int(schedule.msg_to_processor[e])
        t0 = float(schedule.msg_start[e])
        t1 = t0 + float(schedule.msg_duration[e])
        color = "tab:blue" if schedule.msg_level[e] == 1 else "tab:red"
        ax.annotate("", xy=(t1, row_y[q1]), xytext=(t0, row_y[q0]),
                    arrowprops=dict(arrowstyle="->", color=color, lw=0.8, alpha=0.75))
    ax.set_yticks(row_y)
    ax.set_yticklabels([f"\u03a0{clusters[q]} / \u03c0{q}" for q in range(nproc)], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, makespan * 1.02)
    ax.set_xlabel("time")
    ax.grid(axis="x", linestyle=":", alpha=0.5)
    lb = schedule.lower_bound
    ax.set_title(title or (f"2LVDSOPT: {schedule.n_clusters} clusters, {nproc} processors, "
                           f"C_max = {makespan:g}" + ("" if lb is None else f" (LB {lb:g})")),
                 fontsize=10)
    handles = [Patch(facecolor="white", edgecolor="black", hatch="///", label="duplicated task"),
               Line2D([0], [0], color="tab:blue", label="intra-cluster message"),
               Line2D([0], [0], color="tab:red", label="inter-cluster message")]
    if schedule.n_messages > nmsg:
        handles.append(Line2D([0], [0], color="none",
                              label=f"({schedule.n_messages - nmsg} messages not drawn)"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4,
              fontsize=7, frameon=False)
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as exc:
        raise TwoLevelInputError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        plt.close(fig)
