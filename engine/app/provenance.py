"""Where and from what a run came: the CPU model and the git commit of this checkout
(recorded in every sweep row and every reproduction report)."""
from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

_CPU = None


def cpu_model() -> str:
    global _CPU
    if _CPU is None:
        model = ""
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.lower().startswith("model name"):
                        model = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        _CPU = model or platform.processor() or platform.machine() or "unknown"
    return _CPU



def git_commit(path: str | os.PathLike | None = None) -> str:
    """The checkout's commit (``-dirty`` with uncommitted changes), or ``unknown``."""
    here = str(path or Path(__file__).resolve().parent)
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


