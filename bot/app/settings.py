"""The App's configuration: DIFFORACLE_* environment variables, then the credentials that the
manifest registration stored (`registration.py`), then defaults.

Each command needs only some of it (the web server verifies signatures, the worker mints
tokens), so `require` names exactly what is missing for the command at hand, in one message.
Secrets are kept out of `repr` so that a logged settings object leaks nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from .egress import HostListError, allow_list
from .model import AppError

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_WEB_URL = "https://github.com"
DEFAULT_MAX_BODY = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
DEFAULT_BUDGET = 60.0
DEFAULT_IMAGE = "difforacle:latest"
BASE_TAG = "difforacle-base:bookworm"  # `app build-image`'s base, made by debootstrap (image.py)
DEFAULT_MIRROR = "http://deb.debian.org/debian"  # where debootstrap gets the base's packages
SANDBOXES = ("auto", "docker", "bubblewrap")
CREDENTIALS_FILE = "app-credentials.json"

# what each role needs, by the variable a user sets
NEEDS = {
    "web": ("DIFFORACLE_WEBHOOK_SECRET",),
    "worker": ("DIFFORACLE_APP_ID", "DIFFORACLE_PRIVATE_KEY"),
}


@dataclass(frozen=True)
class AppSettings:
    data_dir: Path
    queue_url: str
    app_id: int | None = None
    private_key: str | None = field(default=None, repr=False)
    webhook_secret: str | None = field(default=None, repr=False)
    api_url: str = DEFAULT_API_URL
    web_url: str = DEFAULT_WEB_URL
    max_body: int = DEFAULT_MAX_BODY
    budget: float = DEFAULT_BUDGET
    sandbox: str = "auto"
    image: str = DEFAULT_IMAGE
    job_timeout: float = 1800.0  # wall clock of one job's sandboxed steps, install and engine together
    workers: int = 1  # jobs a consumer runs at once
    lease_seconds: float = 60.0  # a job whose worker stops renewing its lease this long is run again
    install_hosts: tuple[str, ...] = ()  # hosts the dependency step may reach besides the registries
    job_disk_mb: int = 8192  # a job's folder is a tmpfs of this size (a root worker); 0: no cap

    @property
    def credentials_path(self) -> Path:
        return self.data_dir / CREDENTIALS_FILE

    def require(self, *roles: str) -> AppSettings:
        """Self, or AppError naming every variable the roles need and lack."""
        present = {"DIFFORACLE_WEBHOOK_SECRET": self.webhook_secret, "DIFFORACLE_APP_ID": self.app_id,
                   "DIFFORACLE_PRIVATE_KEY": self.private_key}
        missing = [name for role in roles for name in NEEDS[role] if not present[name]]
        if missing:
            key_file = " (or DIFFORACLE_PRIVATE_KEY_FILE)"
            names = ", ".join(dict.fromkeys(n + (key_file if n.endswith("KEY") else "") for n in missing))
            raise AppError(f"missing configuration: {names}; set them in the environment, or register "
                             "the App through the server's /setup page "
                             f"(it stores them in {self.credentials_path})")
        return self


def load_settings(environ: Mapping[str, str] | None = None) -> AppSettings:
    """The settings from `environ` (default: the process environment); AppError on a bad value."""
    env = os.environ if environ is None else environ
    data_dir = Path(env.get("DIFFORACLE_DATA_DIR") or Path.home() / ".local" / "share" / "difforacle")
    stored = _stored_credentials(data_dir / CREDENTIALS_FILE)
    private_key = (env.get("DIFFORACLE_PRIVATE_KEY") or _read_key_file(env.get("DIFFORACLE_PRIVATE_KEY_FILE"))
                   or stored.get("pem"))
    app_id = env.get("DIFFORACLE_APP_ID") or stored.get("id")
    sandbox = env.get("DIFFORACLE_SANDBOX") or "auto"
    if sandbox not in SANDBOXES:
        raise AppError(f"DIFFORACLE_SANDBOX must be one of {', '.join(SANDBOXES)}, not {sandbox!r}")
    return AppSettings(
        data_dir=data_dir,
        queue_url=env.get("DIFFORACLE_QUEUE_URL") or f"sqlite:///{data_dir / 'queue.sqlite3'}",
        app_id=_number("DIFFORACLE_APP_ID", app_id, int) if app_id not in (None, "") else None,
        private_key=private_key or None,
        webhook_secret=env.get("DIFFORACLE_WEBHOOK_SECRET") or stored.get("webhook_secret") or None,
        api_url=(env.get("DIFFORACLE_GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
        web_url=(env.get("DIFFORACLE_GITHUB_URL") or DEFAULT_WEB_URL).rstrip("/"),
        max_body=_number("DIFFORACLE_MAX_BODY", env.get("DIFFORACLE_MAX_BODY", DEFAULT_MAX_BODY), int),
        budget=_number("DIFFORACLE_BUDGET", env.get("DIFFORACLE_BUDGET", DEFAULT_BUDGET), float),
        sandbox=sandbox,
        image=env.get("DIFFORACLE_SANDBOX_IMAGE") or DEFAULT_IMAGE,
        job_timeout=_number("DIFFORACLE_JOB_TIMEOUT", env.get("DIFFORACLE_JOB_TIMEOUT", 1800), float),
        workers=_number("DIFFORACLE_WORKERS", env.get("DIFFORACLE_WORKERS", 1), int),
        lease_seconds=_number("DIFFORACLE_LEASE_SECONDS", env.get("DIFFORACLE_LEASE_SECONDS", 60), float),
        install_hosts=_install_hosts(env.get("DIFFORACLE_INSTALL_HOSTS", "")),
        job_disk_mb=_disk_mb(env.get("DIFFORACLE_JOB_DISK_MB", "")),
    )


def _disk_mb(text: str) -> int:
    """DIFFORACLE_JOB_DISK_MB: a positive number of MB, or 0 for no cap."""
    if text.strip() == "0":
        return 0
    return _number("DIFFORACLE_JOB_DISK_MB", text or 8192, int)


def _install_hosts(text: str) -> tuple[str, ...]:
    """DIFFORACLE_INSTALL_HOSTS: `host` or `host:port` entries, split by commas or spaces."""
    hosts = tuple(entry for entry in text.replace(",", " ").split() if entry)
    try:
        allow_list({}, hosts)
    except HostListError as exc:
        raise AppError(str(exc)) from None
    return hosts


def with_stored_credentials(settings: AppSettings) -> AppSettings:
    """`settings` completed by the credentials that /setup stored after they were loaded.

    Why: a server started before the App was registered picks them up without a restart.
    """
    if settings.app_id and settings.private_key and settings.webhook_secret:
        return settings
    stored = load_settings({"DIFFORACLE_DATA_DIR": str(settings.data_dir)})
    return replace(settings, app_id=settings.app_id or stored.app_id,
                   private_key=settings.private_key or stored.private_key,
                   webhook_secret=settings.webhook_secret or stored.webhook_secret)


def _number(name: str, value: object, kind: type[int] | type[float]) -> int | float:
    try:
        number = kind(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise AppError(f"{name} must be a {'whole ' if kind is int else ''}number, not {value!r}") from None
    if number <= 0:
        raise AppError(f"{name} must be positive, not {value!r}")
    return number


def _read_key_file(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AppError(f"cannot read DIFFORACLE_PRIVATE_KEY_FILE {path}: {exc.strerror or exc}") from None


def _stored_credentials(path: Path) -> dict:
    """What the manifest registration stored, if anything."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise AppError(f"cannot read the stored App credentials {path}: {exc}") from None
    return data if isinstance(data, dict) else {}
