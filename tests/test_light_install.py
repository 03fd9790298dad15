"""`pip install difforacle` without the `app` extra: the command line never loads the App's server
packages, and `difforacle app ...` says in one line what to install. And `--help` stays fast: it
loads none of the slow packages the engine and the publishing use when they run.

Each test runs the real entry point in a subprocess whose import system answers as if the extra's
packages were not installed (ModuleNotFoundError, as Python raises for a missing package), so an
import that slipped back to module level fails the command it breaks.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.command_line import assert_one_line_error
from support.paths import FIXTURES
from support.repos import GIT_ENV, RepoBuilder, make_pr

from difforacle.bot.app import command
from difforacle.bot.app.command import EXTRA_PACKAGES
from difforacle.bot.app.model import AppError

WEBHOOKS = FIXTURES / "github" / "webhooks"
SLOW_TO_IMPORT = frozenset({"git", "github", "jsonschema", "coverage", "black"})  # 50-200 ms each

# Runs `difforacle <argv>` with the packages named in argv[1] missing; on exit, prints the top-level
# modules loaded (stdout's last line) and those it tried to import and could not (stderr's last line).
WITHOUT = """
import atexit, json, sys
from importlib.abc import MetaPathFinder

MISSING = set(sys.argv[1].split(","))
tried = set()


class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in MISSING:
            tried.add(name.partition(".")[0])
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def loaded():
    print(json.dumps(sorted({name.partition(".")[0] for name in sys.modules})), flush=True)
    print(json.dumps(sorted(tried)), file=sys.stderr, flush=True)


sys.meta_path.insert(0, NotInstalled())
atexit.register(loaded)
from difforacle.bot.launcher import main
sys.exit(main(sys.argv[2:]))
"""


def run_without(missing: frozenset[str], *argv: str, cwd: Path | None = None,
                env: dict[str, str] | None = None,
                timeout: float = 120) -> tuple[subprocess.CompletedProcess, set[str], set[str]]:
    """`difforacle *argv` with `missing` not importable: the result (without the last lines), the
    top-level modules it loaded and those it tried to import."""
    result = subprocess.run([sys.executable, "-c", WITHOUT, ",".join(sorted(missing)), *argv], cwd=cwd,
                            env={**os.environ, **GIT_ENV, **(env or {})},
                            capture_output=True, text=True, timeout=timeout)
    *out, loaded = result.stdout.splitlines() or [""]
    *err, tried = result.stderr.splitlines() or [""]
    trimmed = subprocess.CompletedProcess(result.args, result.returncode, "\n".join(out), "\n".join(err))
    return trimmed, set(json.loads(loaded)), set(json.loads(tried))


HELPS = [["--help"], *([command, "--help"] for command in ("diff", "demo", "action", "risk", "app")),
         ["app", "serve", "--help"], ["app", "build-image", "--help"]]


@pytest.mark.parametrize("argv", HELPS, ids=" ".join)
def test_help_loads_none_of_the_app_extra_nor_the_slow_packages(argv: list[str]) -> None:
    result, loaded, tried = run_without(EXTRA_PACKAGES, *argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: difforacle")
    assert not loaded & (EXTRA_PACKAGES | SLOW_TO_IMPORT) and not tried


OURS_LOADED = """
import atexit, sys
atexit.register(lambda: print(" ".join(sorted(n for n in sys.modules if n.startswith("difforacle")))))
from difforacle.bot.launcher import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("argv", "status"), [(["--help"], 0), (["--version"], 0), (["-V"], 0), ([], 2)],
                         ids=lambda value: " ".join(value) if isinstance(value, list) else str(value))
def test_help_and_version_load_none_of_the_engine(argv: list[str], status: int) -> None:
    """Answered by the launcher: of the engine only its lazy surface and, for the version, the
    module that reads it; of the front ends only the launcher and the commands' parser."""
    result = subprocess.run([sys.executable, "-c", OURS_LOADED, *argv], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == status, result.stderr
    *shown, loaded = result.stdout.splitlines()
    assert set(loaded.split()) <= {"difforacle", "difforacle.bot", "difforacle.bot.launcher",
                                   "difforacle.bot.commands", "difforacle.generator",
                                   "difforacle.generator.version"}, loaded
    if argv[:1] in (["--version"], ["-V"]):
        assert shown == [f"difforacle {importlib.metadata.version('difforacle')}"]
    elif argv:
        assert shown[0].startswith("usage: difforacle") and "risk" in shown[0]


@pytest.mark.parametrize("argv", [["app", "serve"], ["app", "worker"], ["app", "run", "--port", "0"],
                                  ["app", "build-image"]], ids=" ".join)
def test_app_without_the_extra_says_what_to_install(argv: list[str], tmp_path: Path) -> None:
    env = {"DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_WEBHOOK_SECRET": "s", "DIFFORACLE_APP_ID": "1",
           "DIFFORACLE_PRIVATE_KEY": "not a key"}
    result, _, tried = run_without(EXTRA_PACKAGES, *argv, env=env)
    assert_one_line_error(result, "pip install 'difforacle[app]'")
    assert tried  # the line came from a missing package, not from a setting


@pytest.mark.parametrize("name", ["flask", "werkzeug.serving", "huey.consumer", "docker.errors"])
def test_a_missing_package_of_the_extra_is_an_app_error(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(args: argparse.Namespace, environ: object) -> int:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(command, "_run", missing)
    with pytest.raises(AppError, match=rf"needs {name.partition('.')[0]}, .*pip install 'difforacle\[app\]'"):
        command.run(argparse.Namespace(app_command="serve"))


@pytest.mark.parametrize("name", ["yaml", "flaskish", None])
def test_any_other_missing_module_is_not_hidden_behind_the_hint(name: str | None,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the extra's own packages get the hint: anything else missing is a bug of ours."""
    def missing(args: argparse.Namespace, environ: object) -> int:
        raise ImportError("cannot import it", name=name)

    monkeypatch.setattr(command, "_run", missing)
    with pytest.raises(ImportError, match="cannot import it"):
        command.run(argparse.Namespace(app_command="serve"))


@pytest.fixture
def pr(builder: RepoBuilder) -> tuple[str, str]:
    return make_pr(builder, {"pkg/__init__.py": "", "pkg/mod.py": "def rate(x):\n    return x * 2\n"},
                   {"pkg/mod.py": "def rate(x):\n    return x * 3\n"})


@pytest.mark.slow
def test_diff_demo_risk_and_action_run_without_the_extra(builder: RepoBuilder, pr: tuple[str, str],
                                                    tmp_path: Path) -> None:
    base, head = pr
    root = str(builder.root)
    fast = ("--budget", "4", "--max-sequences", "100", "--quiet")
    diff, loaded, tried = run_without(EXTRA_PACKAGES, "diff", "--repo", root, "--base", base, "--head", head,
                                      *fast)
    assert diff.returncode == 1, diff.stderr
    assert "pkg.mod:rate" in diff.stdout and not tried and not loaded & EXTRA_PACKAGES

    demo, loaded, tried = run_without(EXTRA_PACKAGES, "demo", "--budget", "3", "--max-sequences", "50",
                                      "--quiet")
    assert demo.returncode in (0, 1), demo.stderr
    assert "durations" in demo.stdout + demo.stderr and not tried and not loaded & EXTRA_PACKAGES

    risk, loaded, tried = run_without(EXTRA_PACKAGES, "risk", "--repo", root, "--base", base, "--head", head,
                                      "--no-cache")
    assert risk.returncode == 0, risk.stderr
    assert "rate" in risk.stdout and not tried and not loaded & EXTRA_PACKAGES

    event = json.loads((WEBHOOKS / "pull_request.opened.json").read_text())
    event["pull_request"]["base"]["sha"], event["pull_request"]["head"]["sha"] = base, head
    (tmp_path / "event.json").write_text(json.dumps(event))
    env = {"GITHUB_EVENT_PATH": str(tmp_path / "event.json"), "GITHUB_WORKSPACE": root,
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output"),
           "RUNNER_TEMP": str(tmp_path), "DIFFORACLE_BUDGET": "4"}
    action, loaded, tried = run_without(EXTRA_PACKAGES, "action", "--repo", root, env=env)
    assert action.returncode == 0, action.stderr  # fail-on: never
    assert "pkg.mod:rate" in (tmp_path / "summary.md").read_text()
    assert not tried and not loaded & EXTRA_PACKAGES
