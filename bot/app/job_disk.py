"""A job's folder as a tmpfs of a fixed size, so that what the project's code writes there (the
checkouts, the virtual environment, the output, a disk filler) cannot fill the worker's disk or
take the room of the job beside it: a write past the size fails with ENOSPC in that job alone.

Mounting needs root (a non-root worker's job folders are not capped: `cap` says why). The pages
of a tmpfs are memory, charged to the process that writes them: a sandboxed run's writes count
against its memory cap too, like its /tmp and HOME, and may be swapped out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

COMMAND_SECONDS = 30.0


def cap(folder: Path, size_mb: int) -> str | None:
    """Mounts a tmpfs of `size_mb` on the empty `folder` (private to its owner); None once it is
    mounted, else the reason it could not be."""
    if os.geteuid() != 0:
        return "capping a job's disk needs a root worker (it mounts a tmpfs)"
    mount = shutil.which("mount")
    if mount is None:
        return "mount is not installed (apt-get install mount)"
    options = f"size={size_mb}m,mode=0700,nosuid,nodev"
    try:
        done = subprocess.run([mount, "-t", "tmpfs", "-o", options, "difforacle-job", str(folder)],
                              capture_output=True, text=True, timeout=COMMAND_SECONDS)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"mount failed: {exc}"
    if done.returncode != 0:
        return f"mount failed: {(done.stderr.strip().splitlines() or [done.returncode])[0]}"
    return None


def release(folder: Path) -> None:
    """Unmounts the tmpfs on `folder`, if there is one (its contents go with it); lazily when a
    process still holds it, so that the folder itself can be removed."""
    if not os.path.ismount(folder):
        return
    umount = shutil.which("umount") or "umount"
    for flags in ([], ["--lazy"]):
        try:
            done = subprocess.run([umount, *flags, str(folder)], capture_output=True, timeout=COMMAND_SECONDS)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return
