"""Registering the App through GitHub's manifest flow (`difforacle.bot.app.registration`), against the fake
GitHub, which plays both the page where the user confirms the manifest and the code exchange."""

from __future__ import annotations

import json
import logging
import re
import stat
from collections.abc import Iterator
from dataclasses import replace
from html import unescape
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from support.fake_github import FakeGitHub

from difforacle.bot.app.installation import AppAccess
from difforacle.bot.app.registration import registration_blueprint, setup_token
from difforacle.bot.app.settings import AppSettings, load_settings

FORM = re.compile(r'<form method="post" action="([^"]+)">'
                  r'<input type="hidden" name="manifest" value="([^"]+)">')


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, fake: FakeGitHub) -> AppSettings:
    return AppSettings(data_dir=tmp_path / "data", queue_url="sqlite:///unused", api_url=fake.url,
                       web_url=fake.url)


@pytest.fixture
def client(settings: AppSettings) -> FlaskClient:
    app = Flask("registration-test")
    app.config["settings"] = settings
    app.register_blueprint(registration_blueprint(settings))
    return app.test_client()


def _form(client: FlaskClient, query: str = "") -> tuple[str, dict, str]:
    """The form's action, the manifest it posts, and the state in the action (asked with the token)."""
    token = setup_token(client.application.config["settings"])
    page = client.get(f"/setup{query}{'&' if query else '?'}token={token}")
    assert page.status_code == 200, page.text
    action, manifest = FORM.search(page.text).groups()
    action = unescape(action)
    return action, json.loads(unescape(manifest)), action.rsplit("state=", 1)[1]


def test_the_setup_page_posts_a_manifest_with_the_permissions_and_events(
        client: FlaskClient, fake: FakeGitHub, settings: AppSettings) -> None:
    action, manifest, state = _form(client)

    assert action == f"{fake.url}/settings/apps/new?state={state}" and re.fullmatch(r"[0-9a-f]{32}", state)
    assert manifest["default_permissions"] == {"checks": "write", "pull_requests": "write",
                                               "contents": "read", "metadata": "read", "issues": "read"}
    assert manifest["default_events"] == ["pull_request", "check_run", "check_suite", "issue_comment"]
    assert manifest["hook_attributes"] == {"url": "http://localhost/webhook", "active": True}
    assert manifest["redirect_url"] == "http://localhost/setup/callback"
    assert manifest["public"] is False and manifest["name"] == "difforacle"

    org_action, org_manifest, _ = _form(client, "?org=acme-corp&url=https://difforacle.example.com")
    assert org_action.startswith(f"{fake.url}/organizations/acme-corp/settings/apps/new?state=")
    assert org_manifest["hook_attributes"]["url"] == "https://difforacle.example.com/webhook"
    token = setup_token(settings)
    assert client.get(f"/setup?org=../evil&token={token}").status_code == 400
    assert client.get(f"/setup?url=javascript:alert(1)&token={token}").status_code == 400


def test_only_who_holds_the_servers_token_may_register(client: FlaskClient, settings: AppSettings) -> None:
    """Until the App is registered, whoever reaches /setup could register an App of their own, which
    the server would then trust: the page asks for the one-time token the server printed at start."""
    for query in ("", "?token=", "?token=guess", f"?token={setup_token(settings)}x"):
        page = client.get(f"/setup{query}")
        assert page.status_code == 403 and "<form" in page.text and 'name="manifest"' not in page.text
        assert "printed in the server's log" in page.text
    token = setup_token(settings)
    assert token == setup_token(settings) and len(token) >= 32  # one token per data folder, kept
    assert stat.S_IMODE((settings.data_dir / "setup-token").stat().st_mode) == 0o600
    assert client.get(f"/setup?token={token}").status_code == 200


def test_the_callback_checks_the_state_and_stores_the_credentials_privately(
        client: FlaskClient, fake: FakeGitHub, settings: AppSettings,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    _, manifest, state = _form(client)
    code = fake.create_app_from_manifest(manifest)  # the user confirms on GitHub

    for bad in ("", "0" * 32, "../../etc/passwd", state.upper()):
        refused = client.get(f"/setup/callback?code={code}&state={bad}")
        assert refused.status_code == 400
    assert not settings.credentials_path.exists() and code in fake.manifest_codes  # not exchanged

    page = client.get(f"/setup/callback?code={code}&state={state}")

    assert page.status_code == 200, page.text
    stored = json.loads(settings.credentials_path.read_text())
    [app] = fake.apps.values()
    assert (stored["id"], stored["slug"], stored["webhook_secret"]) == (app.id, app.slug, app.webhook_secret)
    assert stored["pem"].startswith("-----BEGIN RSA PRIVATE KEY-----") and stored["client_secret"]
    assert stat.S_IMODE(settings.credentials_path.stat().st_mode) == 0o600
    for secret in (stored["pem"].splitlines()[1], stored["webhook_secret"], stored["client_secret"]):
        assert secret not in page.text and secret not in caplog.text
    assert f"https://github.com/apps/{app.slug}/installations/new" in page.text

    loaded = load_settings({"DIFFORACLE_DATA_DIR": str(settings.data_dir)})
    assert (loaded.app_id, loaded.private_key, loaded.webhook_secret) == (app.id, stored["pem"],
                                                                         app.webhook_secret)
    loaded = replace(loaded, api_url=fake.url)
    assert AppAccess(loaded).bot_login() == f"{app.slug}[bot]"  # the stored key signs for the App

    assert client.get(f"/setup/callback?code={code}&state={state}").status_code == 409  # registered now
    assert client.get("/setup").status_code == 409
    assert not (settings.data_dir / "setup-token").exists()  # used up


def test_a_code_github_refuses_stores_nothing(client: FlaskClient, settings: AppSettings) -> None:
    _, _, state = _form(client)

    page = client.get(f"/setup/callback?code=unknown-code&state={state}")

    assert page.status_code == 502 and "cannot exchange the manifest code: GitHub answered 404" in page.text
    assert not settings.credentials_path.exists()
    assert client.get(f"/setup/callback?code=unknown-code&state={state}").status_code == 400  # used up
