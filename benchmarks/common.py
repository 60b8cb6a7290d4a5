"""Shared bits of the benchmark scripts: the machine header and writing a section."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_header() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"Machine: {platform.machine()}, {cpu_model()}, {os.cpu_count()} cores; "
            f"Python {platform.python_version()}; date {_dt.date.today().isoformat()}; "
            f"commit {commit()}; load average at start {load:.2f}.")


def write_section(path: str, title: str, lines: list[str]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"## {title}\n\n" + "\n".join(lines) + "\n")
