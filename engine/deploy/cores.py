"""How many cores this process may use: the one answer every default sizes itself by.

``os.cpu_count()`` is the machine's count, not ours: a process started under
``taskset``, a batch job given 4 of 64 cores, or a container limited to 2 CPUs would
start one search thread or worker process per core it cannot run on, and they would
share the cores it has (each speed-up figure measured that way means little).  The
usable cores are the smaller of

* the process's CPU **affinity** (``os.sched_getaffinity``: ``taskset``, ``cpuset``
  cgroups, SLURM's and Kubernetes' CPU pinning all end up here), and
* its cgroup's CPU **quota** (``cpu.max`` of cgroup v2, ``cpu.cfs_quota_us`` /
  ``cpu.cfs_period_us`` of cgroup v1: Docker's ``--cpus``, Kubernetes' CPU limits),
  the smallest over the process's cgroup and its ancestors, rounded up (a quota of
  1.5 CPUs runs 2 threads, as the JVM and .NET count it);

and at least 1.  The cgroup files are found through ``/proc/self/mountinfo`` and
``/proc/self/cgroup``, as the JVM finds them; :func:`usable_cores` takes a
``cgroup_root`` instead (a cgroup file system whose root is this process's cgroup, as
inside a container with its own cgroup namespace) so that a test can hand it a fake one.

>>> usable_cores() >= 1
True
"""
from __future__ import annotations

import math
import os
from pathlib import Path

#: where the kernel describes this process's mounts and cgroups
MOUNTINFO = "/proc/self/mountinfo"
PROC_CGROUP = "/proc/self/cgroup"


def affinity_cores() -> int:
    """Cores in this process's CPU affinity mask (the machine's count where the platform
    has no affinity, e.g. macOS)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):   # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _quota_v2(directory: Path) -> float | None:
    """``cpu.max``: ``"max 100000"`` (no limit) or ``"150000 100000"`` (1.5 CPUs)."""
    text = _read(directory / "cpu.max")
    if not text:
        return None
    parts = text.split()
    try:
        if parts[0] == "max":
            return None
        quota, period = int(parts[0]), int(parts[1]) if len(parts) > 1 else 100_000
    except (ValueError, IndexError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def _quota_v1(directory: Path) -> float | None:
    """``cpu.cfs_quota_us`` (-1: no limit) over ``cpu.cfs_period_us``."""
    quota, period = _read(directory / "cpu.cfs_quota_us"), _read(directory / "cpu.cfs_period_us")
    try:
        quota_us, period_us = int(quota), int(period)
    except (TypeError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def _up_to(mount: Path, relative: str) -> list[Path]:
    """The cgroup directory at ``relative`` below ``mount`` and each ancestor up to the
    mount itself (a limit on a parent binds its children too)."""
    parts = [p for p in relative.strip("/").split("/") if p and p != ".."]
    dirs = [mount.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]
    return [d for d in dirs if d.is_dir()] or [mount]


def _own_cgroups(proc_cgroup: str) -> tuple[str | None, str | None]:
    """(the v2 path, the v1 cpu controller's path) of this process's cgroups."""
    v2 = v1 = None
    text = _read(Path(proc_cgroup)) or ""
    for line in text.splitlines():
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        ident, controllers, path = fields
        if ident == "0" and controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _mounted_cgroups(mountinfo: str) -> list[tuple[str, Path, str]]:
    """(version, mount point, the cgroup path the mount shows as its root) of every
    cgroup2 mount and every cgroup v1 mount of the cpu controller."""
    found = []
    for line in (_read(Path(mountinfo)) or "").splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point = fields[3], fields[4].replace("\\040", " ")
        fstype, options = tail[0], tail[2].split(",")
        if fstype == "cgroup2":
            found.append(("v2", Path(point), root))
        elif fstype == "cgroup" and "cpu" in options:
            found.append(("v1", Path(point), root))
    return found


def _relative(own: str, mount_root: str) -> str:
    """This process's cgroup path as seen below a mount that shows ``mount_root``; a
    path outside it (a container without its own cgroup namespace) is the mount's root."""
    own, mount_root = own.rstrip("/") or "/", mount_root.rstrip("/") or "/"
    if mount_root == "/":
        return own
    if own == mount_root or own.startswith(mount_root + "/"):
        return own[len(mount_root):] or "/"
    return "/"


def cpu_quota(cgroup_root: str | os.PathLike | None = None, *, mountinfo: str = MOUNTINFO,
              proc_cgroup: str = PROC_CGROUP) -> float | None:
    """The CPUs this process's cgroup quota allows (a fraction is possible), or None
    when no quota applies.

    ``cgroup_root``: a cgroup file system to read instead of the mounted ones, whose
    root is this process's cgroup: a v2 tree (``cpu.max`` at its root) or a v1 tree
    (``cpu/`` or ``cpu,cpuacct/`` holding ``cpu.cfs_quota_us``)."""
    if cgroup_root is not None:
        root = Path(cgroup_root)
        places = [("v2", root)] + [("v1", root / name) for name in ("cpu,cpuacct", "cpu")
                                   if (root / name).is_dir()]
    else:
        v2, v1 = _own_cgroups(proc_cgroup)
        places = []
        for version, point, mount_root in _mounted_cgroups(mountinfo):
            own = v2 if version == "v2" else v1
            if own is not None:
                places += [(version, d) for d in _up_to(point, _relative(own, mount_root))]
    quotas = [q for version, d in places
              if (q := (_quota_v2(d) if version == "v2" else _quota_v1(d))) is not None]
    return min(quotas) if quotas else None


def usable_cores(cgroup_root: str | os.PathLike | None = None) -> int:
    """Cores this process may use: its affinity, capped by its cgroup's CPU quota
    (rounded up), at least 1.  See the module docstring."""
    cores = affinity_cores()
    quota = cpu_quota(cgroup_root)
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota - 1e-9)))
    return max(1, cores)
