"""GitHub as the App, for one job: an installation token narrowed to the job's repository.

Why narrowed: an installation may cover every repository of an organisation, but a job only
needs its own, and only to fetch it (contents: read) and to publish on its pull request
(pull_requests: write for the comment and the review, checks: write for the check run). The
token asks for exactly that (`repository_ids`, `permissions`), so a token that leaks from a
job reaches nothing else, and it expires within the hour anyway.

PyGithub's `GithubIntegration.get_access_token` sends only `permissions`, so the request is
made through the integration's own requester (JWT authentication, retries and all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from github import Auth, GithubIntegration, GithubRetry

from difforacle.bot.github_client import RETRIED_STATUSES, GitHubClient, Retries, github_call

from .model import PullRequestJob
from .settings import AppSettings

# metadata read: a commenter's permission on the repository (who may accept a difference)
TOKEN_PERMISSIONS = {"contents": "read", "pull_requests": "write", "checks": "write", "metadata": "read"}
RENEW_BEFORE_EXPIRY = timedelta(minutes=5)  # a request must not start with a token about to expire
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class InstallationToken:
    token: str = field(repr=False)
    expires_at: str
    repositories: tuple[str, ...]  # full names, as GitHub granted them
    permissions: dict[str, str]

    def expires(self) -> datetime | None:
        """When GitHub stops accepting it (None: GitHub did not say)."""
        try:
            return datetime.fromisoformat(self.expires_at) if self.expires_at else None
        except ValueError:
            return None


class RenewingToken(Auth.Auth):
    """PyGithub authentication with the job's narrowed token, minted again near its expiry."""

    def __init__(self, first: InstallationToken, mint: Callable[[], InstallationToken], clock: Clock) -> None:
        self.current, self._mint, self._clock = first, mint, clock

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        expires = self.current.expires()
        if expires is not None and expires - RENEW_BEFORE_EXPIRY <= self._clock():
            self.current = self._mint()
        return self.current.token

    @property
    def _masked_token(self) -> str:
        return "token (removed)"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class AppAccess:
    """Mints narrowed installation tokens as the App and builds the publisher's client on them."""

    def __init__(self, settings: AppSettings, retries: Retries | None = None,
                 clock: Clock = _utc_now) -> None:
        settings.require("worker")
        retries = retries or Retries()
        assert settings.app_id is not None and settings.private_key is not None
        # minting a token twice is harmless, so unlike a comment its POST is retried after a 5xx
        retry = GithubRetry(total=retries.total, backoff_factor=retries.backoff_factor,
                            status_forcelist=list(RETRIED_STATUSES), allowed_methods=None,
                            secondary_rate_wait=retries.secondary_rate_wait)
        self._integration = GithubIntegration(
            auth=Auth.AppAuth(settings.app_id, settings.private_key), base_url=settings.api_url, retry=retry,
            seconds_between_requests=retries.seconds_between_requests,
            seconds_between_writes=retries.seconds_between_writes)
        self.settings, self.retries, self.clock = settings, retries, clock
        self._bot_login: str | None = None

    def bot_login(self) -> str:
        """The login the App's comments and reviews carry: "<slug>[bot]" (GET /app, once)."""
        if self._bot_login is None:
            slug = github_call("read the App", lambda: self._integration.get_app().slug)
            self._bot_login = f"{slug}[bot]"
        return self._bot_login

    def token_for(self, job: PullRequestJob) -> InstallationToken:
        """A token of the job's installation for its repository only, with TOKEN_PERMISSIONS."""
        body: dict[str, object] = {"permissions": dict(TOKEN_PERMISSIONS)}
        if job.repository_id:
            body["repository_ids"] = [job.repository_id]
        else:
            body["repositories"] = [job.repository.split("/", 1)[1]]
        _, data = github_call(
            f"get a token of installation {job.installation_id} for {job.repository}",
            lambda: self._integration.requester.requestJsonAndCheck(
                "POST", f"/app/installations/{job.installation_id}/access_tokens", input=body))
        repositories = tuple(r.get("full_name", "") for r in data.get("repositories") or ())
        return InstallationToken(data["token"], data.get("expires_at", ""), repositories,
                                 dict(data.get("permissions") or {}))

    def client(self, job: PullRequestJob, token: InstallationToken) -> GitHubClient:
        """The publisher's client: starts with `token`, renews it for the same job when it runs out."""
        auth = RenewingToken(token, lambda: self.token_for(job), self.clock)
        return GitHubClient(job.repository, auth, api_url=self.settings.api_url, retries=self.retries)
