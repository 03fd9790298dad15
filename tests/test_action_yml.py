"""Tests of the GitHub Action's metadata, action.yml: a composite action whose inputs reach its scripts
only through `env:` (no `${{ }}` in a `run:` script, the classic script injection), whose outputs come
from steps that exist, and whose variables are the ones `bot.config` reads.

CI also validates the file against the GitHub Actions schema (check-jsonschema) and audits it with
zizmor (.ci/run); these tests pin difforacle's own rules, which neither tool knows.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.paths import ROOT

from difforacle.bot.action_command import HISTORY_CACHE_HIT, HISTORY_CACHE_KEY
from difforacle.bot.config import INPUT_ENV
from difforacle.bot.publisher import report_outputs
from difforacle.generator.planning.history import default_cache_dir

ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
PINNED = re.compile(r"actions/cache/(restore|save)@[0-9a-f]{40}")
ARTIFACT = re.compile(r"actions/(upload|download)-artifact@[0-9a-f]{40}")

# Every input and the variable the run step gives it; the configuration inputs are `bot.config`'s.
EXPECTED_ENV = {
    **INPUT_ENV,
    "python": "DIFFORACLE_PYTHON",
    "github-token": "GITHUB_TOKEN",
    "publish": "DIFFORACLE_PUBLISH",
    "workflow": "DIFFORACLE_WORKFLOW",
    "state-secret": "DIFFORACLE_STATE_SECRET",
}


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def steps(action: dict[str, Any]) -> list[dict[str, Any]]:
    return action["runs"]["steps"]


def step(action: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [s for s in steps(action) if s["id"] == name]
    return found


def test_composite(action: dict[str, Any]) -> None:
    assert action["runs"]["using"] == "composite"
    assert all(step.get("shell") == "bash" for step in steps(action) if "run" in step)


def test_inputs_and_defaults(action: dict[str, Any]) -> None:
    defaults = {name: spec.get("default") for name, spec in action["inputs"].items()}
    assert defaults == {
        # empty: the project's [tool.difforacle], else difforacle's default (GitHub cannot tell
        # an input left at its default from one given, so a non-empty default would hide the file)
        "budget": "", "seed": "", "github-token": "${{ github.token }}", "fail-on": "",
        "python": "", "working-directory": ".", "max-comments": "", "allocation": "", "min-reach": "",
        "comment": "", "include": "", "exclude": "", "publish": "here",
        "workflow": ".github/workflows/difforacle.yml", "state-secret": "",
    }
    assert all(spec.get("description") for spec in action["inputs"].values())


def test_no_expression_inside_any_script(action: dict[str, Any]) -> None:
    for step in steps(action):
        script = step.get("run", "")
        assert "${{ inputs." not in script, step.get("name")
        assert "${{" not in script, step.get("name")  # nor any other expression: they go through env too


def test_every_input_is_used_only_through_env(action: dict[str, Any]) -> None:
    used: dict[str, str] = {}  # input -> the variable it is passed in
    for step in steps(action):
        for variable, value in step.get("env", {}).items():
            for expression in EXPRESSION.findall(str(value)):
                if expression.startswith("inputs.") and "uses" not in step:
                    assert str(value) == f"${{{{ {expression} }}}}", f"{variable}: pass the input alone"
                    used[expression.removeprefix("inputs.")] = variable
    # working-directory is a step key, not shell text, so it is safe where it is.
    assert [step.get("working-directory") for step in steps(action) if step.get("id") == "difforacle"] == [
        "${{ inputs.working-directory }}"]
    assert used == EXPECTED_ENV
    assert set(used) | {"working-directory"} == set(action["inputs"])


def test_outputs_map_to_existing_steps(action: dict[str, Any]) -> None:
    ids = [step["id"] for step in steps(action) if "id" in step]
    assert len(ids) == len(set(ids))
    # what `difforacle action` writes: the report's (bot.publisher.report_outputs), the check run's
    # conclusion, and a command's rerun
    assert set(action["outputs"]) == {*report_outputs({"differences": []}, ""), "conclusion", "rerun"}
    for name, spec in action["outputs"].items():
        found = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", spec["value"])
        assert found is not None, name
        assert found[1] in ids and found[2] == name


def test_difforacle_installs_into_its_own_venv_from_the_action(action: dict[str, Any]) -> None:
    install, run = step(action, "install"), step(action, "difforacle")
    assert install["env"]["DIFFORACLE_VENV"] == "${{ runner.temp }}/difforacle-venv"
    assert install["env"]["DIFFORACLE_HOST"] == "${{ steps.host.outputs.python }}"
    assert '"$DIFFORACLE_HOST" -m venv --clear "$DIFFORACLE_VENV"' in install["run"]
    assert ('pip install --disable-pip-version-check --quiet \\\n'
            '  --constraint "$GITHUB_ACTION_PATH/constraints.txt" "$GITHUB_ACTION_PATH"') in install["run"]
    assert run["env"]["DIFFORACLE"] == "${{ steps.install.outputs.executable }}"
    assert 'command -v python' in run["run"] and run["run"].rstrip().endswith(
        'exec "$DIFFORACLE" action --python "$DIFFORACLE_PYTHON"')


def test_pips_cache_is_kept_by_runner_python_and_pins(action: dict[str, Any], tmp_path: Path) -> None:
    """Restored before the install and saved right after it when it missed; keyed by the runner's
    system, the Python difforacle runs on and the pins, so that new pins never reuse a stale cache."""
    host, restore, install = step(action, "host"), step(action, "pip-cache"), step(action, "install")
    save = step(action, "save-pip-cache")
    folder, key = "${{ runner.temp }}/difforacle-pip-cache", "${{ steps.host.outputs.pip-cache-key }}"
    assert install["env"]["PIP_CACHE_DIR"] == restore["with"]["path"] == save["with"]["path"] == folder
    assert restore["with"]["key"] == save["with"]["key"] == key
    assert PINNED.fullmatch(restore["uses"])[1] == "restore" and PINNED.fullmatch(save["uses"])[1] == "save"
    assert save["if"] == "steps.pip-cache.outputs.cache-hit != 'true'"
    assert restore["continue-on-error"] is True and save["continue-on-error"] is True

    def key_for(pins: str) -> dict[str, str]:
        (tmp_path / "constraints.txt").write_text(pins)
        output = tmp_path / "output"
        output.write_text("")
        env = {"PATH": os.environ["PATH"], "RUNNER_OS": "Linux", "GITHUB_ACTION_PATH": str(tmp_path),
               "GITHUB_OUTPUT": str(output)}
        subprocess.run([shutil.which("bash") or "/bin/bash", "-c", host["run"]], env=env, check=True,
                       timeout=30)
        return dict(line.split("=", 1) for line in output.read_text().splitlines())

    first, again, other = key_for("a==1\n"), key_for("a==1\n"), key_for("a==2\n")
    assert first == again and first["pip-cache-key"] != other["pip-cache-key"]
    assert re.fullmatch(r"difforacle-pip-Linux-3\.\d+-[0-9a-f]{16}", first["pip-cache-key"])
    assert os.access(first["python"], os.X_OK)


def run_step(action: dict[str, Any], tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """Run the run step's script with a stub `difforacle` that records its arguments and DIFFORACLE_* env."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "difforacle"
    stub.write_text('#!/bin/sh\necho "args=$*"\nenv | grep -E "^(DIFFORACLE_|GITHUB_TOKEN=)" | sort\n')
    stub.chmod(0o755)
    python = bin_dir / "python"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    script = step(action, "difforacle")["run"]
    base = {"PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(shutil.which('env') or '/usr/bin/env')}",
            "DIFFORACLE": str(stub), "DIFFORACLE_PYTHON": ""}
    done = subprocess.run([shutil.which("bash") or "/bin/bash", "-c", script], env={**base, **env},
                          cwd=tmp_path, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def test_run_step_defaults_python_to_the_one_on_path(action: dict[str, Any], tmp_path: Path) -> None:
    seen = run_step(action, tmp_path, {"DIFFORACLE_BUDGET": "120", "GITHUB_TOKEN": "t0ken"})
    assert seen["args"] == f"action --python {tmp_path / 'bin' / 'python'}"
    assert seen["DIFFORACLE_PYTHON"] == str(tmp_path / "bin" / "python")
    assert seen["DIFFORACLE_BUDGET"] == "120" and seen["GITHUB_TOKEN"] == "t0ken"


def test_run_step_keeps_a_given_python_and_inputs_stay_data(action: dict[str, Any], tmp_path: Path) -> None:
    hostile = '$(touch pwned); `touch pwned`; " ; touch pwned'
    env = {"DIFFORACLE_PYTHON": "/opt/py/bin/python3", "DIFFORACLE_SEED": hostile}
    seen = run_step(action, tmp_path, env)
    assert seen["DIFFORACLE_PYTHON"] == "/opt/py/bin/python3"
    assert seen["DIFFORACLE_SEED"] == hostile
    assert not (tmp_path / "pwned").exists()


# ---------------------------------------------------------------- the history cache


def test_the_history_cache_is_restored_before_the_run_and_saved_after_it(action: dict[str, Any]) -> None:
    names = [s["id"] for s in steps(action)]
    assert names == ["host", "pip-cache", "install", "save-pip-cache", "history-cache", "download-report",
                     "difforacle", "upload-report", "save-history-cache"]
    restore, save = step(action, "history-cache"), step(action, "save-history-cache")
    assert PINNED.fullmatch(restore["uses"])[1] == "restore" and PINNED.fullmatch(save["uses"])[1] == "save"
    assert restore["uses"].split("@")[1] == save["uses"].split("@")[1]  # one version of actions/cache
    where = "${{ steps.install.outputs.history-cache }}"
    assert restore["with"]["path"] == save["with"]["path"] == where
    # keyed by repository, base and head; this base's latest cache, else any of the repository's, is
    # restored when this pair has none; only in a pull_request run (never in a job with a write
    # token that runs the pull request's code)
    key, prefixes = restore["with"]["key"], restore["with"]["restore-keys"].splitlines()
    repository = "difforacle-history-${{ github.repository }}-"
    assert prefixes == [repository + "${{ github.event.pull_request.base.sha }}-", repository]
    assert key == prefixes[0] + "${{ github.event.pull_request.head.sha }}"
    assert restore["if"] == "github.event_name == 'pull_request'"
    assert save["if"].startswith("always() && github.event_name == 'pull_request' && ")
    assert save["with"]["key"] == "${{ steps.history-cache.outputs.cache-primary-key }}"
    # saved when the run failed too, not when this base's cache came back as it is; neither step
    # can fail the action
    assert "steps.history-cache.outputs.cache-hit != 'true'" in save["if"]
    assert restore["continue-on-error"] is True and save["continue-on-error"] is True
    run = step(action, "difforacle")["env"]
    assert run[HISTORY_CACHE_HIT] == "${{ steps.history-cache.outputs.cache-hit }}"
    assert run[HISTORY_CACHE_KEY] == "${{ steps.history-cache.outputs.cache-matched-key }}"


@pytest.mark.parametrize("xdg", ["", "xdg"])
def test_the_cached_folder_is_the_one_difforacle_writes(action: dict[str, Any], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, xdg: str) -> None:
    [line] = [line for line in step(action, "install")["run"].splitlines() if "history-cache=" in line]
    env = {"HOME": str(tmp_path / "home"), "GITHUB_OUTPUT": str(tmp_path / "output"),
           **({"XDG_CACHE_HOME": str(tmp_path / xdg)} if xdg else {})}
    subprocess.run([shutil.which("bash") or "/bin/bash", "-c", line], env=env, check=True, timeout=30)
    monkeypatch.setenv("HOME", env["HOME"])
    if xdg:
        monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    else:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert (tmp_path / "output").read_text() == f"history-cache={default_cache_dir()}\n"


def test_the_report_artifact_goes_from_the_pull_request_run_to_the_publishing_job(
        action: dict[str, Any]) -> None:
    """Uploaded by a pull_request run (whatever its outcome), downloaded by a workflow_run job from the
    run that started it, into the folder `difforacle action` reads; both pinned by commit."""
    upload, download = step(action, "upload-report"), step(action, "download-report")
    assert ARTIFACT.fullmatch(upload["uses"])[1] == "upload"
    assert ARTIFACT.fullmatch(download["uses"])[1] == "download"
    folder = "${{ runner.temp }}/difforacle-artifact"
    assert upload["with"]["path"] == download["with"]["path"] == step(action, "difforacle")["env"][
        "DIFFORACLE_ARTIFACT"] == folder
    assert upload["with"]["name"] == download["with"]["name"] == "difforacle-report"
    assert upload["if"].startswith("always() && github.event_name == 'pull_request'")
    assert download["if"] == "github.event_name == 'workflow_run'"
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
