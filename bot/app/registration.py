"""Registering the App through GitHub's manifest flow, from this server's /setup page.

    GET /setup             a page whose form posts the App's manifest to GitHub
                           ({web_url}/settings/apps/new, or .../organizations/<org>/... with ?org=),
                           with a random `state` remembered here for an hour
    GET /setup/callback    where GitHub sends the browser back: the state is checked and used up,
                           the code exchanged (POST {api_url}/app-manifests/{code}/conversions),
                           and the App's id, slug, private key, webhook secret and OAuth client
                           stored in settings.credentials_path (atomically, mode 0600), where
                           `load_settings` finds them

Why this way: the manifest asks for exactly what the worker needs (checks and pull requests
write, contents, metadata and issues read; pull_request, check_run, check_suite and
issue_comment events;
installation events come to every App anyway), and the secrets go from GitHub to the file
without anyone copying them. The pages never show a secret and the log names only the App.
Once credentials exist (stored, or given in the environment) both pages refuse: whoever
reaches /setup must not be able to swap the App for one of their own. Before that, /setup asks
for a one-time token (`setup_token`: made at the server's start, printed in its log, kept in
data_dir mode 0600, removed once the App is registered): otherwise whoever reaches the server
first could register an App of their own, which the server would then trust. The callback needs
no token: its one-time state is given only on a page the token opened. States are files under
data_dir, so any process of the server may answer the callback.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
import secrets
import time
from html import escape
from pathlib import Path
from typing import Any

from flask import Blueprint, request
from github import Github

from difforacle.bot.github_client import GitHubError, github_call
from difforacle.generator import write_atomic

from .settings import AppSettings
from .webhook import WEBHOOK_PATH

log = logging.getLogger("difforacle.app")

SETUP_PATH, CALLBACK_PATH = "/setup", "/setup/callback"
# issues read: GitHub sends issue_comment (the /difforacle commands) only to Apps that may read issues;
# metadata read covers a user's repository permission (who may accept)
PERMISSIONS = {"checks": "write", "pull_requests": "write", "contents": "read", "metadata": "read",
               "issues": "read"}
# installation and installation_repositories come unasked
EVENTS = ["pull_request", "check_run", "check_suite", "issue_comment"]
STATE_SECONDS = 3600.0  # GitHub's manifest codes expire after an hour too
STATE = re.compile(r"[0-9a-f]{32}")
ORG = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?")
CODE = re.compile(r"[A-Za-z0-9_-]{1,100}")
TOKEN_FILE = "setup-token"
STORED = ("id", "slug", "name", "html_url", "client_id", "client_secret", "webhook_secret", "pem")


def registration_blueprint(settings: AppSettings) -> Blueprint:
    """/setup and /setup/callback for `create_app(..., blueprints=[...])`."""
    pages = Blueprint("registration", __name__)
    states = _States(settings.data_dir / "setup-states")

    @pages.get(SETUP_PATH)
    def setup() -> tuple[str, int]:
        if _registered(settings):
            return _already(settings)
        if not hmac.compare_digest(request.args.get("token", "").encode(), setup_token(settings).encode()):
            return _ask_token(), 403
        org = request.args.get("org", "")
        if org and not ORG.fullmatch(org):
            return _page("Not an organisation", f"<p>{escape(org)} is not an organisation's name.</p>"), 400
        base = _public_url()
        if base is None:
            return _page("Bad URL", "<p>?url= must be an http(s) URL without a path.</p>"), 400
        manifest = app_manifest(base, request.args.get("name") or "difforacle")
        owner = f"/organizations/{org}" if org else ""
        action = f"{settings.web_url}{owner}/settings/apps/new?state={states.new()}"
        body = (f"<p>GitHub will create the App <b>{escape(manifest['name'])}</b>"
                f"{f' for {escape(org)}' if org else ''}, receiving webhooks at "
                f"<code>{escape(manifest['hook_attributes']['url'])}</code>, with the permissions "
                f"{escape(', '.join(f'{k}: {v}' for k, v in PERMISSIONS.items()))}.</p>"
                f'<form method="post" action="{escape(action)}">'
                f'<input type="hidden" name="manifest" value="{escape(json.dumps(manifest))}">'
                '<button type="submit">Create the GitHub App</button></form>')
        return _page("Register difforacle as a GitHub App", body), 200

    @pages.get(CALLBACK_PATH)
    def callback() -> tuple[str, int]:
        if _registered(settings):
            return _already(settings)
        code, state = request.args.get("code", ""), request.args.get("state", "")
        if not states.take(state):
            return _page("Unknown state", f'<p>This link is unknown or expired: <a href="{SETUP_PATH}">'
                         "start again</a>.</p>"), 400
        if not CODE.fullmatch(code):
            return _page("No code", "<p>GitHub sent no usable code.</p>"), 400
        try:
            app = exchange_code(settings, code)
        except GitHubError as exc:
            log.warning("registration failed: %s", exc)
            return _page("Registration failed", f"<p>{escape(str(exc))}</p>"), 502
        store_credentials(settings.credentials_path, app)
        (settings.data_dir / TOKEN_FILE).unlink(missing_ok=True)
        log.info("registered the GitHub App %s (id %s); its credentials are in %s", app["slug"], app["id"],
                 settings.credentials_path)
        install = f"{app.get('html_url') or settings.web_url + '/apps/' + app['slug']}/installations/new"
        name = escape(str(app.get("name") or app["slug"]))
        return _page("Registered", f"<p>The GitHub App <b>{name}</b> (id {int(app['id'])}) is registered; "
                     "its credentials are stored on this server.</p><p>Next, "
                     f'<a href="{escape(install)}">install it</a> on your repositories.</p>'), 200

    return pages


blueprint = registration_blueprint  # the name `command.registration_blueprints` looks for


def app_manifest(base_url: str, name: str = "difforacle") -> dict[str, Any]:
    """The manifest GitHub creates the App from; `base_url` is where GitHub reaches this server."""
    return {
        "name": name[:34],  # GitHub's limit on an App's name
        "url": base_url,
        "description": "Finds behavioural regressions in pull requests: tests generated on the base "
                       "commit, replayed on the head.",
        "hook_attributes": {"url": f"{base_url}{WEBHOOK_PATH}", "active": True},
        "redirect_url": f"{base_url}{CALLBACK_PATH}",
        "public": False,
        "default_permissions": dict(PERMISSIONS),
        "default_events": list(EVENTS),
    }


def exchange_code(settings: AppSettings, code: str) -> dict[str, Any]:
    """The App's id, slug and secrets for a manifest code (no authentication: the code is the credential;
    no retry: a code works once)."""
    github = Github(base_url=settings.api_url, retry=None, timeout=30)
    _, data = github_call("exchange the manifest code", lambda: github.requester.requestJsonAndCheck(
        "POST", f"/app-manifests/{code}/conversions"))
    missing = [key for key in ("id", "slug", "pem", "webhook_secret") if not data.get(key)]
    if missing:
        raise GitHubError(f"cannot exchange the manifest code: GitHub's answer lacks {', '.join(missing)}")
    return data


def store_credentials(path: Path, app: dict[str, Any]) -> None:
    """The App's credentials as `load_settings` reads them: written atomically, readable by us only."""
    stored = {key: app[key] for key in STORED if app.get(key) is not None}
    stored["owner"] = (app.get("owner") or {}).get("login")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, json.dumps(stored, indent=2) + "\n", mode=0o600)


def setup_token(settings: AppSettings) -> str:
    """The token /setup asks for: made once per data folder (readable by us only), the same for every
    process of the server, until the App is registered."""
    path = settings.data_dir / TOKEN_FILE
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    made = path.with_name(f".{TOKEN_FILE}.{secrets.token_hex(8)}")
    write_atomic(made, secrets.token_urlsafe(32) + "\n", mode=0o600)
    try:
        os.link(made, path)  # the first process to get here makes the token; the others read it
    except FileExistsError:
        pass
    finally:
        made.unlink()
    return path.read_text(encoding="ascii").strip()


def _ask_token() -> str:
    """The page that asks for the token, keeping the query's other fields."""
    kept = "".join(f'<input type="hidden" name="{escape(key)}" value="{escape(value)}">'
                   for key, value in request.args.items() if key in ("org", "url", "name"))
    return _page("Registration token", "<p>Registering the App needs the one-time token printed in the "
                 "server's log when it started (it is also in the data folder, file "
                 f"<code>{TOKEN_FILE}</code>).</p>"
                 f'<form method="get" action="{SETUP_PATH}">{kept}<label>Token <input name="token" '
                 'type="password" autocomplete="off"></label> <button type="submit">Continue</button></form>')


def _registered(settings: AppSettings) -> bool:
    return settings.app_id is not None or settings.credentials_path.exists()


def _already(settings: AppSettings) -> tuple[str, int]:
    return _page("Already registered", "<p>This server already has a GitHub App. To register another, "
                 f"remove {escape(str(settings.credentials_path))} (or the DIFFORACLE_APP_ID variable) "
                 "and restart the server.</p>"), 409


def _public_url() -> str | None:
    """Where GitHub reaches this server: ?url= when given (behind a proxy), else the request's host."""
    given = request.args.get("url")
    if given is None:
        return request.host_url.rstrip("/")
    given = given.rstrip("/")
    return given if re.fullmatch(r"https?://[A-Za-z0-9.-]+(?::\d{1,5})?", given) else None


def _page(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"</head><body><h1>{escape(title)}</h1>{body}</body></html>")


class _States:
    """One-time states of the manifest flow: a file each, so that any server process may check one."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def new(self) -> str:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        for old in self.folder.iterdir():
            if time.time() - old.stat().st_mtime > STATE_SECONDS:
                old.unlink(missing_ok=True)
        state = secrets.token_hex(16)
        (self.folder / state).touch(mode=0o600)
        return state

    def take(self, state: str) -> bool:
        """True once for a state made here less than an hour ago."""
        if not STATE.fullmatch(state):
            return False
        path = self.folder / state
        try:
            fresh = time.time() - path.stat().st_mtime <= STATE_SECONDS
            path.unlink()
        except FileNotFoundError:
            return False
        return fresh
