"""The App's sandboxes (`difforacle.bot.app.sandbox` and its Docker and bubblewrap
implementations) against a hostile project: a real Docker engine with the locally built
image, and bubblewrap. Every attack is contained, the result says how the run ended, and the
next run in the same sandbox works. The engine itself runs inside each sandbox.

The image is built once per session (debootstrap base + Dockerfile; minutes when cold) and
reused while the sources are unchanged. Without a Docker engine or bwrap the tests skip
locally and fail in CI (CI is set), where the services are installed by .ci/services.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import http.server
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.hostile_project import PROJECT, write_project
from support.paths import BENCHMARKS, ROOT, TESTS
from support.repos import GIT_ENV, RepoBuilder, make_pr
from support.services import TEST_IMAGE, service_unavailable
from support.tcp import tcp_server

from difforacle.bot.app import job_disk
from difforacle.bot.app.egress import EgressProxy, allow_list
from difforacle.bot.app.sandbox import (
    SANDBOX_HOME,
    Limits,
    Mount,
    Sandbox,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
)
from difforacle.bot.app.sandbox_bwrap import BubblewrapSandbox
from difforacle.bot.app.sandbox_choice import select_sandbox

SANDBOXES = ("docker", "bubblewrap")
HOSTILE = Limits(memory_mb=256, pids=64, cpus=1.0, wall_seconds=8.0, output_bytes=64 * 1024, tmp_mb=64,
                 file_mb=64)
SECRET = "s3cr3t-webhook-value-7f1d"
KEY_MARKER = "PRIVATE-KEY-MARKER-2b9c"


def _unavailable(what: str, why: object) -> None:
    service_unavailable(what, f"the sandbox tests need it: {why}")


@pytest.fixture(scope="session", params=SANDBOXES)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    try:
        if request.param == "docker":
            return select_sandbox("docker", request.getfixturevalue("sandbox_image"))
        return select_sandbox("bubblewrap", TEST_IMAGE)
    except SandboxUnavailable as exc:
        _unavailable(request.param, exc)
        raise


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project")


def hostile(sandbox: Sandbox, project: Path, script: str, *args: str, limits: Limits = HOSTILE,
            egress: Path | None = None, mounts: list[Mount] | None = None,
            env: dict[str, str] | None = None) -> SandboxResult:
    request = SandboxRequest(argv=[sandbox.python, f"{PROJECT}/{script}", *args],
                             mounts=[Mount(project, PROJECT), *(mounts or [])], workdir=PROJECT,
                             env=env or {}, egress=egress, limits=limits)
    result = sandbox.run(request)
    assert result.sandbox == sandbox.name
    return result


def assert_next_run_works(sandbox: Sandbox, project: Path) -> None:
    result = sandbox.run(SandboxRequest(argv=[sandbox.python, "-c", "print('still fine')"],
                                        mounts=[Mount(project, PROJECT)], workdir=PROJECT, limits=HOSTILE))
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "still fine\n", False), result


def assert_nothing_left(script: str) -> None:
    """No process on this machine still runs the script (a container's show in /proc too)."""
    deadline = time.monotonic() + 10
    while True:
        running = [pid for pid in _pids() if f"{PROJECT}/{script}".encode() in _cmdline(pid)]
        if not running or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not running, f"{len(running)} processes of {script} survived the sandbox"


def _pids() -> list[str]:
    return [name for name in os.listdir("/proc") if name.isdigit()]


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.slow
def test_fork_bomb_is_held_to_the_pids_limit_and_killed_at_the_wall_clock(sandbox: Sandbox,
                                                                          project: Path) -> None:
    limits = Limits(**{**HOSTILE.__dict__, "wall_seconds": 5.0})
    result = hostile(sandbox, project, "fork_bomb.py", limits=limits)
    forks = re.search(r"forks (\d+) (\w+)", result.stdout)
    assert forks, result
    assert int(forks.group(1)) < HOSTILE.pids and forks.group(2) == "EAGAIN", result.stdout
    assert result.timed_out and result.exit_code is None
    assert result.seconds < limits.wall_seconds + 15
    assert_nothing_left("fork_bomb.py")
    assert_next_run_works(sandbox, project)


def test_memory_bomb_stops_at_the_memory_limit(sandbox: Sandbox, project: Path) -> None:
    result = hostile(sandbox, project, "memory_bomb.py")
    allocated = [int(n) for n in re.findall(r"allocated (\d+)", result.stdout)]
    assert allocated and max(allocated) <= HOSTILE.memory_mb, result
    assert result.out_of_memory and not result.timed_out, result
    assert result.exit_code != 0
    assert_nothing_left("memory_bomb.py")
    assert_next_run_works(sandbox, project)


@pytest.mark.slow
def test_memory_is_capped_for_the_run_as_a_whole(sandbox: Sandbox, project: Path) -> None:
    """Four processes each holding well under the cap, over it together: the kernel kills one.

    Which one is the kernel's choice: it may kill a process that had already said it was holding
    its share, so what is checked is how they ended, not how many got as far as holding."""
    each = HOSTILE.memory_mb * 3 // 8
    result = hostile(sandbox, project, "memory_team.py", "4", str(each))
    statuses = re.search(r"statuses \[([^]]*)\]", result.stdout)
    assert statuses, result
    ended = [int(s) for s in statuses.group(1).split(",")]
    assert len(ended) == 4 and int(signal.SIGKILL) in ended, result.stdout
    assert result.out_of_memory and not result.timed_out, result
    assert_next_run_works(sandbox, project)


def _while_a_fork_bomb_runs(sandbox: Sandbox, project: Path) -> SandboxResult:
    """A run of forks.py started once a fork bomb beside it holds every process it can get."""
    bomb = threading.Thread(target=hostile, args=(sandbox, project, "fork_bomb.py"))
    bomb.start()
    try:
        held, deadline = 0, time.monotonic() + 30
        while time.monotonic() < deadline:  # until the bomb's process count stops growing
            time.sleep(0.5)
            count = sum(f"{PROJECT}/fork_bomb.py".encode() in _cmdline(pid) for pid in _pids())
            if count > 10 and count == held:
                break
            held = count
        assert held > 10, "the fork bomb never got going"
        return hostile(sandbox, project, "forks.py", "20")
    finally:
        bomb.join()
        assert_nothing_left("fork_bomb.py")


@pytest.mark.slow
def test_a_fork_bomb_leaves_the_job_beside_it_room_to_run(sandbox: Sandbox, project: Path) -> None:
    """Each run's process cap is its own (a cgroup), not the sandbox uid's shared with other jobs."""
    result = _while_a_fork_bomb_runs(sandbox, project)
    assert (result.exit_code, result.stdout) == (0, "forked 20\n"), result


@pytest.mark.slow
def test_without_a_cgroup_bubblewraps_fork_bomb_starves_the_job_beside_it(project: Path) -> None:
    """What the cgroup prevents: under RLIMIT_NPROC alone the two runs share one uid's count."""
    try:
        sandbox = BubblewrapSandbox()
    except SandboxUnavailable as exc:
        _unavailable("bubblewrap", exc)
    if sandbox.cgroups is None:
        pytest.skip("this worker gets no cgroups: the rlimit-only case is the one it runs")
    sandbox.cgroups = None
    result = _while_a_fork_bomb_runs(sandbox, project)
    assert result.exit_code != 0 and "forked" not in result.stdout, result


@pytest.mark.slow
def test_a_disk_filler_fills_its_own_capped_job_folder_and_no_other(sandbox: Sandbox, project: Path,
                                                                   tmp_path: Path) -> None:
    """Job folders are tmpfs of a fixed size (`job_disk.py`, as the runner makes them)."""
    if os.geteuid() != 0:
        pytest.skip("only a root worker caps its job folders")
    filled, beside = tmp_path / "job-a", tmp_path / "job-b"
    for folder in (filled, beside):
        folder.mkdir()
        assert job_disk.cap(folder, 16) is None
    try:
        filler = hostile(sandbox, project, "disk_filler.py", "/job",
                         mounts=[Mount(filled, "/job", read_only=False)])
        wrote = re.search(r"wrote (\d+) (\w+)", filler.stdout)
        assert wrote and wrote.group(2) == "ENOSPC" and int(wrote.group(1)) <= 16, filler
        neighbour = hostile(sandbox, project, "disk_filler.py", "/job", "12",
                            mounts=[Mount(beside, "/job", read_only=False)])
        assert neighbour.stdout == "wrote 12 done\n", neighbour
    finally:
        for folder in (filled, beside):
            job_disk.release(folder)
    assert not os.path.ismount(filled) and not any(filled.iterdir())  # the files went with the tmpfs


@pytest.mark.slow
def test_infinite_loop_is_killed_at_the_wall_clock(sandbox: Sandbox, project: Path) -> None:
    limits = Limits(**{**HOSTILE.__dict__, "wall_seconds": 3.0})
    result = hostile(sandbox, project, "infinite_loop.py", limits=limits)
    assert result.timed_out and result.exit_code is None and not result.out_of_memory
    assert 3.0 <= result.seconds < 15.0
    assert_nothing_left("infinite_loop.py")
    assert_next_run_works(sandbox, project)


@pytest.mark.slow
def test_a_run_is_stopped_when_its_caller_asks(sandbox: Sandbox, project: Path) -> None:
    stop = threading.Event()
    timer = threading.Timer(2.0, stop.set)  # the pull request moved on while its engine ran
    timer.start()
    try:
        request = SandboxRequest(argv=[sandbox.python, f"{PROJECT}/infinite_loop.py"],
                                 mounts=[Mount(project, PROJECT)], workdir=PROJECT,
                                 limits=Limits(**{**HOSTILE.__dict__, "wall_seconds": 60.0}), stop=stop)
        result = sandbox.run(request)
    finally:
        timer.cancel()
    assert result.cancelled and result.outcome == "cancelled"
    assert not result.timed_out and result.exit_code is None and not result.out_of_memory
    assert 2.0 <= result.seconds < 15.0  # within a poll of being asked, not at its 60 s limit
    assert_nothing_left("infinite_loop.py")
    assert_next_run_works(sandbox, project)


@pytest.fixture
def listener() -> Iterator[tuple[int, list]]:
    """A TCP server on every interface of this machine, counting the connections it accepts."""
    accepted: list = []
    with tcp_server("0.0.0.0", lambda connection, peer: accepted.append(peer)) as port:
        yield port, accepted


def _host_addresses(sandbox: Sandbox) -> list[str]:
    """Where this machine can be reached from inside: loopback, its main address, Docker's bridge."""
    addresses = ["127.0.0.1"]
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        addresses.append(probe.getsockname()[0])
    except OSError:
        pass
    finally:
        probe.close()
    if sandbox.name == "docker":
        addresses.append(_bridge_gateway(sandbox))
    return list(dict.fromkeys(addresses))


def _bridge_gateway(sandbox: Sandbox) -> str:
    """This machine's address on Docker's default bridge (the IPv4 address of its interface)."""
    bridge = sandbox.client.networks.get("bridge")  # type: ignore[attr-defined]
    name = bridge.attrs.get("Options", {}).get("com.docker.network.bridge.name", "docker0")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        answer = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
    return socket.inet_ntoa(answer[20:24])


def test_no_network_without_asking(sandbox: Sandbox, project: Path, listener: tuple[int, list]) -> None:
    port, accepted = listener
    targets = [f"{address}:{port}" for address in _host_addresses(sandbox)] + ["1.1.1.1:443"]
    result = hostile(sandbox, project, "network.py", *targets)
    assert result.exit_code == 0, result
    outcomes = json.loads(result.stdout)
    assert "connected" not in outcomes.values(), outcomes
    assert outcomes["dns"] != "resolved"
    assert accepted == []
    assert_next_run_works(sandbox, project)


@pytest.fixture
def private_index() -> Iterator[str]:
    """An HTTP server on this machine's loopback serving one page, as a private package index does."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"index page"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_dependency_steps_only_way_out_is_the_egress_proxy(sandbox: Sandbox, project: Path,
                                                              listener: tuple[int, list],
                                                              private_index: str) -> None:
    """The install step's request has egress: no connection of its own reaches anything, while
    through the proxy it reaches the index the operator named (on this machine's loopback, which
    only a named host may be), and neither this machine's other services nor a metadata address."""
    port, accepted = listener
    targets = [f"{address}:{port}" for address in _host_addresses(sandbox)] + ["1.1.1.1:443"]
    metadata, elsewhere = "http://169.254.169.254/latest/meta-data/", f"http://{targets[-2]}/"
    index = f"http://{private_index}/simple/"
    # each connection attempt may wait seconds on a loaded machine: the wall limit is not the point here
    limits = dataclasses.replace(HOSTILE, wall_seconds=40.0)
    with EgressProxy(allow_list({}, [private_index]), environ={}) as proxy:
        direct = hostile(sandbox, project, "network.py", *targets, egress=proxy.socket_path, limits=limits)
        fetched = hostile(sandbox, project, "fetch.py", index, metadata, elsewhere, "https://example.com/",
                          egress=proxy.socket_path, limits=limits)
    assert direct.exit_code == 0 and fetched.exit_code == 0, (direct, fetched)
    outcomes = json.loads(direct.stdout)
    assert [outcomes[target] for target in targets].count("connected") == 0, outcomes
    assert outcomes["dns"] != "resolved"
    pages = json.loads(fetched.stdout)
    assert pages[index] == "200 index page", pages
    assert pages[metadata] == pages[elsewhere] == "HTTP 403", pages
    assert "403" in pages["https://example.com/"], pages  # the proxy refused the tunnel
    assert accepted == []
    assert sorted(reason.split(" ", 1)[0] for reason in proxy.refused) == sorted(
        ["169.254.169.254:80", f"{targets[-2]}", "example.com:443"]), proxy.refused
    assert_next_run_works(sandbox, project)


def test_bubblewraps_network_is_its_own_with_only_a_loopback(project: Path) -> None:
    try:
        sandbox = select_sandbox("bubblewrap", TEST_IMAGE)
    except SandboxUnavailable as exc:
        _unavailable("bubblewrap", exc)
    with EgressProxy(allow_list({}), environ={}) as proxy:
        request = SandboxRequest(argv=["sh", "-c", "cat /proc/net/dev; ls /etc"], workdir="/",
                                 egress=proxy.socket_path, limits=Limits(wall_seconds=20))
        result = sandbox.run(request)
    assert result.exit_code == 0, result
    interfaces = [line.split(":")[0].strip() for line in result.stdout.splitlines() if ":" in line]
    assert interfaces == ["lo"], result.stdout
    assert "ssl" in result.stdout.split() and "resolv.conf" not in result.stdout.split()


@pytest.mark.slow
def test_secrets_of_the_worker_are_out_of_reach(sandbox: Sandbox, project: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    key_dir = tmp_path / "worker"
    key_dir.mkdir()
    key = key_dir / "private-key.pem"
    key.write_text(f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_MARKER}\n-----END RSA PRIVATE KEY-----\n")
    key.chmod(0o600)
    monkeypatch.setenv("DIFFORACLE_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("DIFFORACLE_PRIVATE_KEY", KEY_MARKER)
    monkeypatch.setenv("DIFFORACLE_PRIVATE_KEY_FILE", str(key))
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    # The script walks every folder it can see (the interpreter's tree among them): its wall-clock
    # limit is what a loaded machine needs for that walk; what is asserted is what it finds.
    result = hostile(sandbox, project, "read_secrets.py", str(key), env={"GREETING": "hello"},
                     limits=dataclasses.replace(HOSTILE, wall_seconds=40.0))
    seen = result.stdout + result.stderr
    assert result.exit_code == 0 and "searched" in result.stdout, result
    for secret in (SECRET, KEY_MARKER, "DIFFORACLE_WEBHOOK_SECRET", "DIFFORACLE_PRIVATE_KEY", "GITHUB_TOKEN"):
        assert secret not in seen
    assert "FOUND" not in seen
    assert re.search(rf"KEY {re.escape(str(key))} (FileNotFoundError|PermissionError)", seen), seen
    environment = json.loads(re.search(r"^ENV (.*)$", result.stdout, re.M).group(1))
    assert environment["GREETING"] == "hello" and environment["HOME"] == SANDBOX_HOME
    assert_next_run_works(sandbox, project)


def test_files_outside_its_own_folders_cannot_be_deleted(sandbox: Sandbox, project: Path,
                                                         tmp_path: Path) -> None:
    host_file = tmp_path / "host" / "precious.txt"
    host_file.parent.mkdir()
    host_file.write_text("keep me\n")
    stdlib = os.path.dirname(os.__file__) if sandbox.name == "bubblewrap" else "/usr/lib/python3.11"
    planted = Path(stdlib, "planted_by_sandbox.py")
    result = hostile(sandbox, project, "delete.py", str(host_file), f"{PROJECT}/keep.txt", stdlib)
    try:
        assert "DONE" not in result.stdout, result.stdout
        assert result.exit_code == 0, result
        assert host_file.read_text() == "keep me\n"
        assert (project / "keep.txt").is_file() and (project / "delete.py").is_file()
        assert not Path("/planted").exists()
        assert sandbox.name == "docker" or not planted.exists()
    finally:
        if sandbox.name == "bubblewrap":
            planted.unlink(missing_ok=True)
    assert_next_run_works(sandbox, project)


def test_a_writable_mount_is_writable_and_given_back(sandbox: Sandbox, project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    owner = out.stat().st_uid
    request = SandboxRequest(argv=[sandbox.python, "-c", "open('/out/made.txt', 'w').write('made')"],
                             mounts=[Mount(project, PROJECT), Mount(out, "/out", read_only=False)],
                             limits=HOSTILE)
    result = sandbox.run(request)
    assert result.exit_code == 0, result
    assert (out / "made.txt").read_text() == "made"
    assert (out / "made.txt").stat().st_uid == owner == out.stat().st_uid


def test_a_mount_deep_inside_tmp_is_reachable(sandbox: Sandbox, project: Path) -> None:
    """The folders above a mount target in the sandbox's /tmp are made traversable (a worker
    whose interpreter or checkout lives under /tmp, as CI's may, must be able to run)."""
    target = "/tmp/deep/er/project"
    request = SandboxRequest(argv=[sandbox.python, "-c", f"import os; print(sorted(os.listdir({target!r})))"],
                             mounts=[Mount(project, target)], workdir="/", limits=HOSTILE)
    result = sandbox.run(request)
    assert result.exit_code == 0, result
    assert sorted(p.name for p in project.iterdir())[0] in result.stdout


def test_os_exit_status_is_reported(sandbox: Sandbox, project: Path) -> None:
    result = hostile(sandbox, project, "exit.py")
    assert (result.exit_code, result.stdout) == (7, "leaving\n")
    assert not result.timed_out and not result.out_of_memory
    assert_next_run_works(sandbox, project)


def test_segfault_is_reported_as_the_signal(sandbox: Sandbox, project: Path) -> None:
    result = hostile(sandbox, project, "segfault.py")
    assert result.exit_code == 128 + 11 and result.stdout == "crashing\n", result
    assert not result.timed_out and not result.out_of_memory
    assert_next_run_works(sandbox, project)


def test_stdout_flood_is_capped_and_the_run_completes(sandbox: Sandbox, project: Path) -> None:
    result = hostile(sandbox, project, "flood.py")
    assert result.exit_code == 0 and not result.timed_out, result.outcome
    assert result.truncated
    assert result.stdout == "x" * HOSTILE.output_bytes
    assert result.stderr == "flooded\n"
    assert_next_run_works(sandbox, project)


PACKAGE_BASE = {"shapes/__init__.py": "",
                "shapes/area.py": "def area(w: int, h: int) -> int:\n    return w * h\n"}
PACKAGE_HEAD = {"shapes/area.py": "def area(w: int, h: int) -> int:\n    return w * h + (w > 3)\n"}


@pytest.mark.slow
def test_the_engine_runs_inside_the_sandbox(sandbox: Sandbox, tmp_path: Path) -> None:
    builder = RepoBuilder(tmp_path / "repo")
    base, head = make_pr(builder, PACKAGE_BASE, PACKAGE_HEAD)
    out = tmp_path / "out"
    out.mkdir()
    request = SandboxRequest(
        argv=["difforacle", "diff", "--repo", "/work/repo", "--base", base, "--head", head,
              "--json", "/out/report.json", "--budget", "5", "--quiet"],
        mounts=[Mount(builder.root, "/work/repo", read_only=False), Mount(out, "/out", read_only=False)],
        workdir="/work/repo", env={**GIT_ENV, "LANG": "C.UTF-8"},
        limits=Limits(memory_mb=2048, pids=256, cpus=1.0, wall_seconds=240.0))
    result = sandbox.run(request)
    assert result.exit_code == 1, (result.outcome, result.stderr[-3000:])
    report = json.loads((out / "report.json").read_text())
    targets = {difference["target"] for difference in report["differences"]}
    assert "shapes.area:area" in targets, report["differences"]
    assert builder.status() == "", "the engine left the repository as it found it"


def test_auto_falls_back_to_bubblewrap_and_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("docker")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable, match="no Docker engine answers at unix:///nonexistent"):
        select_sandbox("docker", TEST_IMAGE)
    try:
        chosen = select_sandbox("auto", TEST_IMAGE)
    except SandboxUnavailable as exc:
        assert "apt-get install bubblewrap" in str(exc) and "Docker" in str(exc)
    else:
        assert chosen.name == "bubblewrap"


def test_a_missing_image_is_named_with_how_to_build_it(docker_client) -> None:
    with pytest.raises(SandboxUnavailable, match=r"no image 'difforacle:no-such-tag'.*build-image"):
        select_sandbox("docker", "difforacle:no-such-tag")


def test_leftover_containers_of_a_dead_worker_are_removed(sandbox_image: str, docker_client) -> None:
    from difforacle.bot.app.sandbox_docker import LABEL, DockerSandbox

    left = docker_client.containers.run(sandbox_image, ["true"], detach=True, labels={LABEL: "gone:1"},
                                        network_mode="none")
    try:
        left.wait(timeout=60)
        assert DockerSandbox(sandbox_image, docker_client).remove_leftovers(min_age=0) >= 1
        assert not docker_client.containers.list(all=True, filters={"id": left.id})
    finally:
        with contextlib.suppress(Exception):
            left.remove(force=True)


NON_ROOT_UID = 10002  # a worker's own uid (not the sandbox uid a root worker hands runs to)
NON_ROOT_PROBE = """
import json, sys
from pathlib import Path
from checkout_code import use_this_checkout
use_this_checkout()
from difforacle.bot.app.egress import EgressProxy, allow_list
from difforacle.bot.app.sandbox import Limits, Mount, SandboxRequest
from difforacle.bot.app.sandbox_choice import select_sandbox
from support.hostile_project import PROJECT
project, out = Path(sys.argv[1]), Path(sys.argv[2])
sandbox = select_sandbox("bubblewrap", "unused")
limits = Limits(memory_mb=256, pids=64, wall_seconds=5.0, output_bytes=4096, tmp_mb=64, file_mb=64)
results = {}
def run(name, argv, **more):
    request = SandboxRequest(argv=argv, mounts=[Mount(project, PROJECT), Mount(out, "/out", read_only=False)],
                             workdir=PROJECT, env={"GREETING": "hello"}, limits=limits, **more)
    result = sandbox.run(request)
    results[name] = {k: getattr(result, k) for k in ("exit_code", "stdout", "stderr", "timed_out",
                                                     "out_of_memory")}
python = sandbox.python
run("fork_bomb", [python, f"{PROJECT}/fork_bomb.py"])
run("after_fork_bomb", [python, "-c", "print('still fine')"])
run("memory_bomb", [python, f"{PROJECT}/memory_bomb.py"])
run("secrets", [python, f"{PROJECT}/read_secrets.py", sys.argv[3]])
run("network", [python, f"{PROJECT}/network.py", "127.0.0.1:" + sys.argv[4]])
with EgressProxy(allow_list({}, [f"{sys.argv[5]}:{sys.argv[4]}"]), environ={}) as proxy:
    run("egress", [python, f"{PROJECT}/fetch.py", f"http://{sys.argv[5]}:{sys.argv[4]}/",
                   "http://169.254.169.254/"], egress=proxy.socket_path)
run("nested_userns", ["unshare", "--user", "true"])
run("write", ["sh", "-c", "id -u; echo made > /out/made.txt"])
print(json.dumps(results))
"""


@pytest.mark.slow
def test_bubblewrap_for_a_non_root_worker(tmp_path: Path, listener: tuple[int, list],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Without root, bwrap runs in a user namespace of the worker's own uid: the same containment."""
    if os.geteuid() != 0:
        pytest.skip("runs as a non-root worker already: the parametrized tests cover it")
    try:
        root_sandbox = select_sandbox("bubblewrap", TEST_IMAGE)
    except SandboxUnavailable as exc:
        _unavailable("bubblewrap", exc)
    python = next((p for p in (sys.executable, "/usr/bin/python3") if _runs_as(NON_ROOT_UID, p)), None)
    if python is None:
        _unavailable("a Python interpreter another user can run", "neither this one nor /usr/bin/python3")
    folder = Path(tempfile.mkdtemp(prefix="difforacle-nonroot-"))
    try:
        project, out = write_project(folder / "project"), folder / "out"
        out.mkdir()
        for path in (folder, project, out):
            os.chown(path, NON_ROOT_UID, NON_ROOT_UID)
        key = tmp_path / "private-key.pem"
        key.write_text(KEY_MARKER)
        monkeypatch.setenv("DIFFORACLE_WEBHOOK_SECRET", SECRET)
        port, accepted = listener
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT}:{TESTS}:{BENCHMARKS}",
               "DIFFORACLE_WEBHOOK_SECRET": SECRET}
        main_address = _host_addresses(root_sandbox)[-1]
        done = subprocess.run([python, "-c", NON_ROOT_PROBE, str(project), str(out), str(key), str(port),
                               main_address],
                              user=NON_ROOT_UID, group=NON_ROOT_UID, extra_groups=[], env=env, cwd=folder,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)
        assert results["fork_bomb"]["timed_out"] and "EAGAIN" in results["fork_bomb"]["stdout"]
        assert results["after_fork_bomb"]["stdout"] == "still fine\n", results["after_fork_bomb"]
        assert results["memory_bomb"]["out_of_memory"], results["memory_bomb"]
        secrets = results["secrets"]["stdout"]
        assert SECRET not in secrets and KEY_MARKER not in secrets and '"GREETING": "hello"' in secrets
        assert "connected" not in results["network"]["stdout"]
        assert results["egress"]["stdout"], results["egress"]
        egress = json.loads(results["egress"]["stdout"])  # the dependency step's way out
        assert egress["http://169.254.169.254/"] == "HTTP 403", results["egress"]
        assert len(accepted) == 1  # the proxy's, to the host the operator named; none of the run without
        assert results["nested_userns"]["exit_code"] != 0, results["nested_userns"]
        assert results["write"]["stdout"] == f"{NON_ROOT_UID}\n"
        assert (out / "made.txt").stat().st_uid == NON_ROOT_UID
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _runs_as(uid: int, python: str) -> bool:
    try:
        return subprocess.run([python, "-c", "pass"], user=uid, group=uid, extra_groups=[], env={},
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def test_the_image_runs_as_a_non_root_user_with_a_healthcheck(sandbox_image: str, docker_client) -> None:
    config = docker_client.images.get(sandbox_image).attrs["Config"]
    assert config["User"] == "10001:10001"
    assert "/healthz" in " ".join(config["Healthcheck"]["Test"])
    assert config["Cmd"][:3] == ["difforacle", "app", "serve"]
    probe = ["python", "-c", "import sys; print(sys.version_info[:2])"]
    version = docker_client.containers.run(sandbox_image, probe, remove=True, network_mode="none")
    assert version.decode().strip() == "(3, 11)"


def test_bubblewrap_sets_a_sandbox_up_again_when_its_loopback_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap's own setup failure (seen under load) is tried again; the command's own failure is not."""
    monkeypatch.setattr("difforacle.bot.app.sandbox_bwrap.time.sleep", lambda seconds: None)
    failed = SandboxResult("bubblewrap", 1, "", "bwrap: loopback: Failed RTM_NEWADDR: No child processes\n")
    ran = SandboxResult("bubblewrap", 0, "ok\n", "")
    own = SandboxResult("bubblewrap", 1, "", "Traceback (most recent call last): ...\n")
    request = SandboxRequest(argv=["true"], workdir="/")
    for results, expected, calls in (([failed, ran], ran, 2), ([failed, failed, failed], failed, 3),
                                     ([own, ran], own, 1)):
        sandbox, queue = object.__new__(BubblewrapSandbox), list(results)
        monkeypatch.setattr(sandbox, "_run_once", lambda request, queue=queue: queue.pop(0))
        assert sandbox.run(request) is expected
        assert len(results) - len(queue) == calls
