"""Tests for `difforacle.bot.app.settings`: the App's configuration from the environment and stored
credentials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from difforacle.bot.app.model import AppError
from difforacle.bot.app.settings import CREDENTIALS_FILE, DEFAULT_API_URL, load_settings


def test_defaults_use_an_embedded_sqlite_queue_in_the_data_dir(tmp_path: Path) -> None:
    settings = load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path)})
    assert settings.queue_url == f"sqlite:///{tmp_path / 'queue.sqlite3'}"
    assert (settings.api_url, settings.sandbox, settings.app_id, settings.private_key) == \
        (DEFAULT_API_URL, "auto", None, None)


def test_each_missing_variable_is_named_for_the_role_that_needs_it(tmp_path: Path) -> None:
    settings = load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path)})
    with pytest.raises(AppError) as web:
        settings.require("web")
    assert "DIFFORACLE_WEBHOOK_SECRET" in str(web.value) and "DIFFORACLE_APP_ID" not in str(web.value)
    with pytest.raises(AppError) as both:
        settings.require("web", "worker")
    message = str(both.value)
    for name in ("DIFFORACLE_WEBHOOK_SECRET", "DIFFORACLE_APP_ID", "DIFFORACLE_PRIVATE_KEY_FILE", "/setup"):
        assert name in message


def test_private_key_from_a_file_and_secrets_stay_out_of_repr(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text("-----BEGIN RSA PRIVATE KEY-----\nsecret\n")
    settings = load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_APP_ID": "42",
                              "DIFFORACLE_PRIVATE_KEY_FILE": str(key), "DIFFORACLE_WEBHOOK_SECRET": "hush"})
    assert settings.require("web", "worker").app_id == 42
    assert settings.private_key and settings.private_key.startswith("-----BEGIN")
    assert "secret" not in repr(settings) and "hush" not in repr(settings)


def test_stored_registration_credentials_fill_what_the_environment_lacks(tmp_path: Path) -> None:
    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"id": 7, "pem": "PEM", "webhook_secret": "s"}))
    settings = load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_APP_ID": "9"})
    assert (settings.app_id, settings.private_key, settings.webhook_secret) == (9, "PEM", "s")


@pytest.mark.parametrize(("name", "value", "words"), [
    ("DIFFORACLE_APP_ID", "abc", "whole number"),
    ("DIFFORACLE_BUDGET", "-3", "positive"),
    ("DIFFORACLE_SANDBOX", "chroot", "auto, docker, bubblewrap"),
    ("DIFFORACLE_PRIVATE_KEY_FILE", "/nonexistent/key.pem", "cannot read"),
    ("DIFFORACLE_INSTALL_HOSTS", "mirror.example, https://x/simple", "'https://x/simple'.*not a host"),
    ("DIFFORACLE_JOB_DISK_MB", "-1", "positive"),
    ("DIFFORACLE_JOB_DISK_MB", "lots", "whole number"),
])
def test_bad_values_are_one_line_app_errors(tmp_path: Path, name: str, value: str, words: str) -> None:
    with pytest.raises(AppError, match=words) as error:
        load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path), name: value})
    assert "\n" not in str(error.value)


def test_install_hosts_are_split_by_commas_or_spaces(tmp_path: Path) -> None:
    settings = load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path),
                              "DIFFORACLE_INSTALL_HOSTS": " mirror.example,10.0.0.5:3141  files.corp "})
    assert settings.install_hosts == ("mirror.example", "10.0.0.5:3141", "files.corp")
    assert load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path)}).install_hosts == ()


def test_job_disk_cap_defaults_to_8_gb_and_0_turns_it_off(tmp_path: Path) -> None:
    def disk(value: str | None) -> int:
        env = {"DIFFORACLE_DATA_DIR": str(tmp_path)}
        return load_settings(env if value is None else {**env, "DIFFORACLE_JOB_DISK_MB": value}).job_disk_mb
    assert (disk(None), disk("0"), disk("512")) == (8192, 0, 512)


def test_unreadable_stored_credentials_are_an_app_error(tmp_path: Path) -> None:
    (tmp_path / CREDENTIALS_FILE).write_text("{not json")
    with pytest.raises(AppError, match="stored App credentials"):
        load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path)})
