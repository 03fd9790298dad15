"""A report that the code under test cannot forge, though it runs beside the engine.

In the App the engine and the project's code share one sandbox and one user: the project's code
can write wherever the engine writes, signal the engine and, were nothing done, read its memory.
So the host does not take the report file on trust:

1. The host writes a fresh random key into a folder mounted for this run only; the engine reads
   it and deletes it before any of the project's code runs (`take_key`).
2. The engine makes itself not dumpable (`seal_process`): the kernel then gives its /proc
   entries (memory, descriptors, environment) to root and refuses ptrace to the same user, so
   the key in its memory is out of the project's reach.
3. The JSON report's exact bytes get an HMAC-SHA256 under that key, written beside it
   (`report.json.hmac`, `sign`); the host checks it before reading the report (`verify`).

The project's code can still change or delete the files; it cannot make the host accept what it
wrote. Standard library only: this runs in the sandbox, in the engine's own process.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import os
import secrets
import sys
from pathlib import Path

from difforacle.generator import SetupError, write_atomic

KEY_BYTES = 32
MAC_SUFFIX = ".hmac"
PR_SET_DUMPABLE = 4  # <linux/prctl.h>


def new_key(path: Path) -> bytes:
    """A fresh key, written to `path` readable by its owner only (the host's side)."""
    key = secrets.token_bytes(KEY_BYTES)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with open(descriptor, "wb") as handle:
        handle.write(key.hex().encode())
    return key


def take_key(path: Path) -> bytes:
    """The key at `path`, which is deleted: whatever runs after this cannot read it there."""
    try:
        text = path.read_text(encoding="ascii").strip()
        path.unlink()
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"--report-key {path}: cannot read and remove the key: {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < KEY_BYTES:
        raise SetupError(f"--report-key {path}: not a key of {KEY_BYTES} bytes in hex")
    return key


def seal_process() -> None:
    """Make this process not dumpable, or refuse to go on: a signed report from a process whose
    memory the tested code can read would prove nothing."""
    if not sys.platform.startswith("linux"):
        raise SetupError("--report-key needs Linux (prctl PR_SET_DUMPABLE)")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SetupError(f"--report-key: prctl(PR_SET_DUMPABLE, 0) failed: {os.strerror(ctypes.get_errno())}")


def mac(data: bytes, key: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def sign(path: Path, key: bytes) -> None:
    """Write the HMAC of the file at `path` beside it."""
    write_atomic(mac_path(path), mac(path.read_bytes(), key) + "\n")


def mac_path(path: Path) -> Path:
    return path.with_name(path.name + MAC_SUFFIX)


def verify(data: bytes, signature: str, key: bytes) -> bool:
    """Whether `signature` is the HMAC of `data` under `key` (compared in constant time)."""
    return hmac.compare_digest(mac(data, key), signature.strip())
