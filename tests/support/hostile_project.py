"""A hostile project for the sandbox tests: one script per attack, written into a folder that the
tests mount read-only at PROJECT. Each script prints what it managed, so that a test can check
both that the attack was contained and that the sandbox's result says how the run ended.
"""

from __future__ import annotations

from pathlib import Path

PROJECT = "/work/project"

SCRIPTS = {
    # fork until refused (counting), then every process forks forever
    "fork_bomb.py": """
import errno, os, time
count = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(300)
            os._exit(0)
        count += 1
except OSError as exc:
    print("forks", count, errno.errorcode.get(exc.errno), flush=True)
while True:
    try:
        os.fork()
    except OSError:
        pass
""",
    # argv: how many processes, and MB each holds: together over a cap none of them reaches alone
    "memory_team.py": """
import os, sys, time
count, mb = int(sys.argv[1]), int(sys.argv[2])
children = []
for _ in range(count):
    pid = os.fork()
    if pid == 0:
        held = bytearray(mb << 20)
        for page in range(0, len(held), 4096):
            held[page] = 1
        print("holding", mb, flush=True)
        time.sleep(3)
        os._exit(0)
    children.append(pid)
codes = [os.waitpid(pid, 0)[1] for pid in children]
print("statuses", codes, flush=True)
""",
    # argv: how many processes to start one after another; the well-behaved job beside a bomb
    "forks.py": """
import subprocess, sys
for _ in range(int(sys.argv[1])):
    subprocess.run(["true"], check=True)
print("forked", sys.argv[1], flush=True)
""",
    # argv: a folder, and how many MB to write there (default: until a write fails), 1 MB a file
    "disk_filler.py": """
import errno, os, sys
folder, most = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None
written = 0
try:
    while most is None or written < most:
        with open(os.path.join(folder, f"filler-{written}"), "wb") as handle:
            handle.write(b"x" * (1 << 20))
        written += 1
    print("wrote", written, "done", flush=True)
except OSError as exc:
    print("wrote", written, errno.errorcode.get(exc.errno), flush=True)
""",
    # touches every page it gets, reporting as it goes
    "memory_bomb.py": """
chunks = []
while True:
    chunks.append(b"\\x01" * (16 << 20))
    print("allocated", 16 * len(chunks), flush=True)
""",
    "infinite_loop.py": """
while True:
    pass
""",
    # argv: addresses to connect to, as host:port; prints one JSON object of outcomes
    "network.py": """
import json, socket, sys
outcomes = {}
for address in sys.argv[1:]:
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        outcomes[address] = "connected"
    except OSError as exc:
        outcomes[address] = type(exc).__name__
try:
    socket.getaddrinfo("pypi.org", 443)
    outcomes["dns"] = "resolved"
except OSError as exc:
    outcomes["dns"] = type(exc).__name__
for path in ("/var/run/docker.sock", "/run/docker.sock"):
    try:
        unix = socket.socket(socket.AF_UNIX)
        unix.connect(path)
        outcomes[path] = "connected"
    except OSError as exc:
        outcomes[path] = type(exc).__name__
print(json.dumps(outcomes), flush=True)
""",
    # argv: URLs fetched through whatever proxy the environment names; prints one JSON object of outcomes
    "fetch.py": """
import json, sys, urllib.error, urllib.request
outcomes = {}
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            outcomes[url] = f"{answer.status} {answer.read(100).decode(errors='replace')}"
    except urllib.error.HTTPError as exc:
        outcomes[url] = f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        outcomes[url] = type(exc).__name__ + ": " + str(exc)[:100]
print(json.dumps(outcomes), flush=True)
""",
    # argv: the worker's key file on the host; prints everything it could find
    "read_secrets.py": """
import glob, json, os, sys
sys.stdout.reconfigure(line_buffering=True)  # a run stopped at its time limit still shows how far it got
key = sys.argv[1]
print("ENV", json.dumps(dict(os.environ)))
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        print("PROC", path, open(path, "rb").read())
    except OSError as exc:
        print("PROC", path, type(exc).__name__)
for path in (key, "/proc/1/root" + key, "/proc/self/root" + key):
    try:
        print("KEY", path, open(path).read())
    except OSError as exc:
        print("KEY", path, type(exc).__name__)
name = os.path.basename(key)
for top in ("/home", "/root", "/tmp", "/var", "/work", "/etc", "/opt", "/run", "/srv", "/mnt"):
    for folder, _, files in os.walk(top):
        if name in files:
            print("FOUND", os.path.join(folder, name))
print("searched", flush=True)
""",
    # argv: a file on the host outside every mount, a read-only project file, the interpreter's folder
    "delete.py": """
import os, shutil, sys
host_file, project_file, stdlib = sys.argv[1:4]
attempts = {
    "host file": lambda: os.remove(host_file),
    "project file": lambda: os.remove(project_file),
    "project tree": lambda: shutil.rmtree(os.path.dirname(project_file)),
    "plant in stdlib": lambda: open(os.path.join(stdlib, "planted_by_sandbox.py"), "w").close(),
    "etc passwd": lambda: os.remove("/etc/passwd"),
    "root folder": lambda: os.mkdir("/planted"),
}
for what, attempt in attempts.items():
    try:
        attempt()
        print(what, "DONE")
    except OSError as exc:
        print(what, type(exc).__name__)
sys.stdout.flush()
""",
    "exit.py": """
import os
print("leaving", flush=True)
os._exit(7)
""",
    "segfault.py": """
import ctypes
print("crashing", flush=True)
ctypes.string_at(0)
""",
    # 128 MB on stdout, then a line on stderr, then a normal exit
    "flood.py": """
import sys
chunk = "x" * 65536
for _ in range(2048):
    sys.stdout.write(chunk)
sys.stdout.flush()
print("flooded", file=sys.stderr, flush=True)
""",
}


def write_project(folder: Path) -> Path:
    """The hostile scripts and a file the attacks try to delete, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in SCRIPTS.items():
        (folder / name).write_text(source.lstrip(), encoding="utf-8")
    (folder / "keep.txt").write_text("the project's own file\n", encoding="utf-8")
    return folder
