"""The bundled demo repository really contains the regressions the demo advertises."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import git
import pytest

from difforacle.generator.demo import DEMO_DESCRIPTION, build_demo_repo

_PROBE = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from durations import RateMeter, format_duration, parse_duration

    def outcome(call):
        try:
            return ["ok", call()]
        except Exception as exc:
            return ["raise", type(exc).__name__]

    meter = RateMeter(2)
    for amount in (1, 2, 3):
        meter.add(amount)
    print(json.dumps({
        "parse": {t: outcome(lambda t=t: parse_duration(t))
                  for t in ["90s", "15m", "1h", "2h30m", "1d", "", "5x", "h"]},
        "format": {str(s): outcome(lambda s=s: format_duration(s))
                   for s in [0, 1, 59, 60, 3600, 3661, 9000, 86400, 90061, -1]},
        "meter": {"size": meter.size(), "total": meter.total, "mean": meter.mean()},
        "meter_10": {"size": (lambda m: ([m.add(1) for _ in range(11)], m.size())[1])(RateMeter())},
        "empty_mean": RateMeter().mean(),
    }))
    """
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("demo")
    repo_path = root / "repo"
    base_sha, head_sha = build_demo_repo(repo_path)
    results = {}
    for name, sha in (("base", base_sha), ("head", head_sha)):
        checkout = root / name
        subprocess.run(
            ["git", "-C", str(repo_path), "worktree", "add", "--detach", str(checkout), sha],
            check=True,
            capture_output=True,
        )
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, str(checkout)],
            cwd=checkout,
            check=True,
            capture_output=True,
            text=True,
        )
        results[name] = json.loads(proc.stdout)
    return {"path": repo_path, "base_sha": base_sha, "head_sha": head_sha, **results}


def test_commits_and_branches(demo: dict) -> None:
    repo = git.Repo(demo["path"])
    base = repo.commit(demo["base_sha"])
    head = repo.commit(demo["head_sha"])
    assert repo.heads.main.commit == base
    assert repo.heads.feature.commit == head
    assert head.parents == (base,)
    assert not base.parents
    changed = {d.a_path for d in base.diff(head)}
    assert changed == {"durations/parse.py", "durations/meter.py"}
    assert {b.path for b in base.tree.traverse() if b.type == "blob"} == {
        "durations/__init__.py",
        "durations/parse.py",
        "durations/meter.py",
    }
    assert not repo.is_dirty(untracked_files=True)
    assert DEMO_DESCRIPTION.strip()


def test_deterministic_shas(demo: dict, tmp_path: Path) -> None:
    assert build_demo_repo(tmp_path / "again") == (demo["base_sha"], demo["head_sha"])


def test_hour_regression(demo: dict) -> None:
    base, head = demo["base"]["parse"], demo["head"]["parse"]
    assert base["1h"] == ["ok", 3600]
    assert head["1h"] == ["ok", 3660]
    assert base["2h30m"] == ["ok", 9000]
    assert head["2h30m"] == ["ok", 9120]
    for text in ["90s", "15m", "1d", "", "5x", "h"]:
        assert base[text] == head[text], text
    assert base["90s"] == ["ok", 90]
    assert base["1d"] == ["ok", 86400]
    assert base["5x"] == ["raise", "ValueError"]


def test_meter_window_regression(demo: dict) -> None:
    base, head = demo["base"], demo["head"]
    assert base["meter"] == {"size": 2, "total": 5, "mean": 2.5}
    assert head["meter"] == {"size": 3, "total": 6, "mean": 2.0}
    assert base["meter_10"]["size"] == 10
    assert head["meter_10"]["size"] == 11
    assert base["empty_mean"] == head["empty_mean"] == 0.0


def test_format_duration_unchanged(demo: dict) -> None:
    base, head = demo["base"]["format"], demo["head"]["format"]
    assert base == head
    assert base["9000"] == ["ok", "2h30m"]
    assert base["90061"] == ["ok", "1d1h1m1s"]
    assert base["0"] == ["ok", "0s"]
    assert base["-1"] == ["raise", "ValueError"]


def test_refuses_non_empty_path(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x")
    with pytest.raises(FileExistsError):
        build_demo_repo(tmp_path)
