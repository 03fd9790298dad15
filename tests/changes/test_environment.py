"""The project's code never sees a token: its interpreter, its tests and its build commands get an
allow-listed environment (`difforacle.generator.changes.environment`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from difforacle.generator.changes.environment import project_environment
from difforacle.generator.changes.extensions import build_extensions
from difforacle.generator.changes.model import Checkout
from difforacle.generator.runtime.workers import worker_environment

SECRETS = {"GITHUB_TOKEN": "ghs_planted", "ACTIONS_RUNTIME_TOKEN": "planted",
           "AWS_SECRET_ACCESS_KEY": "planted", "PYPI_PASSWORD": "planted",
           "DIFFORACLE_APP_PRIVATE_KEY": "planted", "PYTHONSTARTUP": "/tmp/evil.py"}


def test_only_what_an_interpreter_needs_and_what_the_settings_name_passes() -> None:
    host = {**SECRETS, "PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
            "VIRTUAL_ENV": "/venv", "PYENV_VERSION": "3.10.13", "MY_SETTING": "on"}
    assert project_environment(environ=host) == {
        "PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC", "VIRTUAL_ENV": "/venv",
        "PYENV_VERSION": "3.10.13"}
    assert project_environment(["MY_SETTING"], environ=host)["MY_SETTING"] == "on"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


def test_the_worker_and_pytest_runs_get_no_secret(planted: None, tmp_path: Path) -> None:
    checkout = Checkout("main", "0" * 40, tmp_path, (tmp_path,))
    env = worker_environment(checkout, 0, str(tmp_path))
    assert not set(SECRETS) & set(env)
    assert env["PYTHONPATH"] == str(tmp_path) and env["HOME"] == str(tmp_path)


def test_build_commands_get_no_secret(planted: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SETTING", "on")
    checkout = Checkout("main", "0" * 40, tmp_path, (tmp_path,), pass_env=("MY_SETTING",))
    outcome = build_extensions([f"{sys.executable} -c 'import os, json; "
                                f"open(\"seen.json\", \"w\").write(json.dumps(sorted(os.environ)))'"],
                               [("base", checkout)], sys.executable, 30)
    assert outcome.note.startswith("Built both checkouts")
    seen = set(json.loads((tmp_path / "seen.json").read_text()))
    assert not set(SECRETS) & seen and "MY_SETTING" in seen and "PATH" in seen
