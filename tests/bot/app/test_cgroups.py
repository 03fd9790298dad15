"""Finding where a run's cgroup may go (on fake cgroup trees), and making one (fake v2, real v1)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from difforacle.bot.app.cgroups import CgroupRoot, RunCgroup, find_root, sweep_stale

V1_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_GROUPS = "8:pids:/service/w\n4:memory:/docker/abc/inner\n0::/\n"
V2_MOUNTS = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
V2_GROUPS = "0::/system.slice/difforacle.service\n"


def tree(tmp_path: Path, mounts: str, groups: str, folders: dict[str, str]) -> str:
    """A fake /proc/self and cgroup folders under tmp_path; returns the prefix to read them with."""
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/self/mountinfo").write_text(mounts)
    (tmp_path / "proc/self/cgroup").write_text(groups)
    for folder, controllers in folders.items():
        (tmp_path / folder.lstrip("/")).mkdir(parents=True)
        if controllers:
            (tmp_path / folder.lstrip("/") / "cgroup.controllers").write_text(controllers)
    return str(tmp_path)


def test_v1_runs_go_under_the_workers_own_memory_and_pids_cgroups(tmp_path: Path) -> None:
    prefix = tree(tmp_path, V1_MOUNTS, V1_GROUPS, {"/sys/fs/cgroup/memory/inner": "",
                                                   "/sys/fs/cgroup/pids/service/w": "",
                                                   "/sys/fs/cgroup/unified": "hugetlb"})
    root, reason = find_root(prefix=prefix)
    assert reason == "" and root == CgroupRoot(1, {"memory": tmp_path / "sys/fs/cgroup/memory/inner",
                                                   "pids": tmp_path / "sys/fs/cgroup/pids/service/w"})


def test_v2_is_taken_when_it_holds_both_controllers(tmp_path: Path) -> None:
    own = "/sys/fs/cgroup/system.slice/difforacle.service"
    prefix = tree(tmp_path, V2_MOUNTS, V2_GROUPS, {own: "cpu memory pids io"})
    root, _ = find_root(prefix=prefix)
    runs = tmp_path / own.lstrip("/") / "difforacle-runs"
    assert root == CgroupRoot(2, {"memory": runs, "pids": runs})


def test_without_the_controllers_there_is_no_root_and_a_reason(tmp_path: Path) -> None:
    own = "/sys/fs/cgroup/system.slice/difforacle.service"
    prefix = tree(tmp_path, V2_MOUNTS, V2_GROUPS, {own: "cpu io"})
    root, reason = find_root(prefix=prefix)
    assert root is None and "memory and pids" in reason
    assert find_root(prefix=str(tmp_path / "nowhere"))[0] is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_cgroup_the_worker_cannot_write_is_named(tmp_path: Path) -> None:
    own = "/sys/fs/cgroup/system.slice/difforacle.service"
    prefix = tree(tmp_path, V2_MOUNTS, V2_GROUPS, {own: "memory pids"})
    (tmp_path / own.lstrip("/")).chmod(0o555)
    root, reason = find_root(prefix=prefix)
    assert root is None and "not writable" in reason


def test_a_v2_run_gets_its_caps_and_the_runs_folder_its_controllers(tmp_path: Path) -> None:
    own = tmp_path / "service"
    own.mkdir()
    (own / "cgroup.subtree_control").write_text("")
    runs = own / "difforacle-runs"
    cgroup = RunCgroup(CgroupRoot(2, {"memory": runs, "pids": runs}), memory_mb=256, pids=64)
    real_mkdir = Path.mkdir

    def mkdir(path: Path, *args: object, **kwargs: object) -> None:  # a cgroupfs folder comes with files
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]
        for name in ("cgroup.subtree_control", "memory.max", "memory.swap.max", "pids.max", "memory.events"):
            (path / name).write_text("")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "mkdir", mkdir)
        cgroup.create()
    folder = cgroup.dirs["memory"]
    assert folder.parent == runs and cgroup.dirs["pids"] == folder
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (runs / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert ((folder / "memory.max").read_text(), (folder / "memory.swap.max").read_text(),
            (folder / "pids.max").read_text()) == (str(256 << 20), "0", "64")
    assert cgroup.procs_files() == [str(folder / "cgroup.procs")]
    assert not cgroup.out_of_memory()
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert cgroup.out_of_memory()


def test_a_real_run_cgroup_is_made_entered_and_removed_with_what_it_held() -> None:
    root, reason = find_root()
    if root is None:
        pytest.skip(f"no cgroups for this worker: {reason}")
    cgroup = RunCgroup(root, memory_mb=64, pids=8)
    cgroup.create()
    try:
        enter = 'for f in "$@"; do echo $$ > "$f"; done; exec sleep 60'
        sleeper = subprocess.Popen(["sh", "-c", enter, "sh", *cgroup.procs_files()])
        for path in cgroup.procs_files():
            for _ in range(100):
                if str(sleeper.pid) in Path(path).read_text().split():
                    break
                time.sleep(0.05)
            assert str(sleeper.pid) in Path(path).read_text().split()
    finally:
        cgroup.remove()
    assert sleeper.wait(timeout=10) == -9  # killed with the cgroup
    assert not any(folder.exists() for folder in cgroup.dirs.values())


def test_the_cgroups_of_a_gone_workers_runs_are_swept_and_a_living_ones_kept() -> None:
    root, reason = find_root()
    if root is None:
        pytest.skip(f"no cgroups for this worker: {reason}")
    gone = next(pid for pid in range(4_000_000, 3_000_000, -1) if not Path(f"/proc/{pid}").exists())
    left, living = RunCgroup(root, memory_mb=64, pids=8), RunCgroup(root, memory_mb=64, pids=8)
    left.dirs = {c: folder.with_name(f"run-{gone}-{folder.name.rsplit('-', 1)[1]}")
                 for c, folder in left.dirs.items()}
    left.create()
    living.create()
    try:
        enter = 'for f in "$@"; do echo $$ > "$f"; done; exec sleep 60'
        orphan = subprocess.Popen(["sh", "-c", enter, "sh", *left.procs_files()])
        deadline = time.monotonic() + 10
        while str(orphan.pid) not in Path(left.procs_files()[0]).read_text().split():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert sweep_stale(root) >= 1
        assert orphan.wait(timeout=10) == -9 and not any(f.exists() for f in left.dirs.values())
        assert all(f.exists() for f in living.dirs.values())  # this worker's own run stays
    finally:
        left.remove()
        living.remove()
