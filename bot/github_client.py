"""The one adapter between difforacle and GitHub's REST API, over PyGithub.

Everything the publisher needs from GitHub goes through `GitHubClient`, which speaks in
plain data (`CheckRunRef`, `IssueComment`, `PullFile`, ...) so that the publisher never sees
PyGithub objects. Tests point `base_url` at a local fake of the API; nothing else changes.

Retries (PyGithub's `GithubRetry`, on urllib3): server errors (500, 502, 503, 504) of
requests that can safely be repeated, and secondary rate limits (403/429 with Retry-After)
of any request, are retried with exponential backoff.
A write refused with 403 "Resource not accessible by integration" (the read-only token of a
pull request from a fork) raises `ReadOnlyToken`, so the caller can fall back to the
workflow's own outputs; any other failure raises `GitHubError` with a one-line message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from github import Auth, Github, GithubException, GithubRetry

DEFAULT_API_URL = "https://api.github.com"
RETRIED_STATUSES = [500, 502, 503, 504]  # a list: GithubRetry appends 403 to it
READ_ONLY_MESSAGE = "Resource not accessible by integration"
RATE_LIMIT_RESERVE = 0.2  # of the hour's requests: below this, progress updates are skipped

T = TypeVar("T")


class _Retry(GithubRetry):
    """GithubRetry, except that a POST is not repeated after a server error: GitHub may have
    applied it (a comment or a review would then appear twice). Rate limits, which GitHub
    answers before doing anything, are retried for every method."""

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if method.upper() == "POST" and status_code in RETRIED_STATUSES:
            return False
        return super().is_retry(method, status_code, has_retry_after)


class GitHubError(Exception):
    """A GitHub request failed for good (after retries); the message is one line."""


class ReadOnlyToken(GitHubError):
    """The token may read but not write (a fork's pull request in a workflow)."""


class NotFound(GitHubError):
    """GitHub answered 404: the thing is gone (a deleted comment) or the token may not see it."""


@dataclass(frozen=True)
class Retries:
    """How hard to try: attempts, exponential backoff base (seconds), wait on secondary rate limits."""

    total: int = 5
    backoff_factor: float = 1.0
    secondary_rate_wait: float = 60.0
    seconds_between_requests: float = 0.25  # GitHub asks integrations not to burst
    seconds_between_writes: float = 1.0


@dataclass(frozen=True)
class CheckRunRef:
    id: int
    html_url: str


@dataclass(frozen=True)
class IssueComment:
    id: int
    login: str
    body: str
    html_url: str = ""


@dataclass(frozen=True)
class PullFile:
    filename: str
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    patch: str | None  # None for binary files and very large diffs
    previous_filename: str | None = None


@dataclass(frozen=True)
class WorkflowRunRef:
    """A run of one of the repository's workflows (GitHub Actions)."""

    id: int
    path: str  # the workflow's file: ".github/workflows/difforacle.yml"
    status: str  # queued | in_progress | completed ...
    html_url: str = ""


@dataclass(frozen=True)
class PullDetails:
    """What a command on a pull request needs of it (an `issue_comment` event has no commits)."""

    number: int
    base_sha: str
    head_sha: str
    title: str
    body: str
    head_ref: str
    head_repository: str  # "owner/name"; another than the base's for a fork
    state: str  # open | closed


@dataclass(frozen=True)
class Review:
    id: int
    login: str
    commit_id: str
    body: str


@dataclass(frozen=True)
class ReviewComment:
    """A comment anchored on `line` of `path`, on the head (RIGHT) or base (LEFT) side of the diff."""

    path: str
    line: int
    body: str
    side: str = "RIGHT"
    start_line: int | None = None

    def to_json(self) -> dict:
        data: dict[str, Any] = {"path": self.path, "line": self.line, "side": self.side, "body": self.body}
        if self.start_line is not None and self.start_line < self.line:
            data.update(start_line=self.start_line, start_side=self.side)
        return data


@dataclass
class CheckRunOutput:
    title: str
    summary: str
    text: str | None = None
    annotations: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        data: dict[str, Any] = {"title": self.title, "summary": self.summary}
        if self.text:
            data["text"] = self.text
        if self.annotations:
            data["annotations"] = self.annotations
        return data


class GitHubClient:
    """One repository's check runs, pull requests, comments and reviews."""

    def __init__(self, repository: str, token: str | Auth.Auth, *, api_url: str = DEFAULT_API_URL,
                 retries: Retries = Retries(), timeout: int = 30) -> None:
        """`token`: a token, or an `Auth` that supplies one per request (the App's renewing token)."""
        retry = _Retry(total=retries.total, backoff_factor=retries.backoff_factor,
                            status_forcelist=RETRIED_STATUSES, allowed_methods=None,
                            secondary_rate_wait=retries.secondary_rate_wait)
        auth = self._auth = Auth.Token(token) if isinstance(token, str) else token
        self._github = Github(auth=auth, base_url=api_url.rstrip("/"), retry=retry,
                              timeout=timeout, lazy=True,
                              seconds_between_requests=retries.seconds_between_requests,
                              seconds_between_writes=retries.seconds_between_writes)
        self.repository = repository
        self._repo = self._github.get_repo(repository)
        # PyGithub objects already read, so that editing one needs no extra GET request
        self._check_runs: dict[int, Any] = {}
        self._comments: dict[int, Any] = {}
        self._workflow_runs: dict[int, Any] = {}

    def current_token(self) -> str:
        """The token the next request carries (an App's, renewed near its expiry), for git to use too."""
        return self._auth.token

    def rate_limit_low(self) -> bool:
        """Whether the last response said that less than RATE_LIMIT_RESERVE of the hour's requests are
        left (False before any response): what can wait, such as progress updates, then waits."""
        remaining, limit = self._github.requester.rate_limiting
        return limit > 0 and remaining < RATE_LIMIT_RESERVE * limit

    # ------------------------------------------------------------ check runs

    def create_check_run(self, name: str, head_sha: str, output: CheckRunOutput,
                         details_url: str | None = None, external_id: str = "") -> CheckRunRef:
        """`external_id`: the pull request's `pull_key`, which events about the check run (a re-run,
        a button) name it by when GitHub lists no pull request for them (a fork's)."""
        extra: dict[str, str] = {"details_url": details_url} if details_url else {}
        if external_id:
            extra["external_id"] = external_id
        run = self._call("create the check run", lambda: self._repo.create_check_run(
            name=name, head_sha=head_sha, status="in_progress", output=output.to_json(), **extra))
        self._check_runs[run.id] = run
        return CheckRunRef(run.id, run.html_url or "")

    def find_check_run(self, name: str, head_sha: str, app_slug: str) -> CheckRunRef | None:
        """The newest check run named `name` that the App `app_slug` made on `head_sha`, if any."""
        def newest() -> Any:
            runs = [run for run in self._repo.get_commit(head_sha).get_check_runs(check_name=name)
                    if run.app is not None and run.app.slug == app_slug]
            return max(runs, key=lambda run: run.id, default=None)

        run = self._call("list the commit's check runs", newest)
        if run is None:
            return None
        self._check_runs[run.id] = run
        return CheckRunRef(run.id, run.html_url or "")

    def update_check_run(self, check_run_id: int, output: CheckRunOutput, *,
                         conclusion: str | None = None, actions: Sequence[dict] | None = None) -> None:
        """Update the output (annotations are added to earlier ones); complete it with `conclusion`;
        `actions`: the buttons it shows from now on (GitHub sends a click as a
        `check_run.requested_action` event; [] takes them away, None leaves them)."""
        def update() -> None:
            run = self._check_runs.get(check_run_id) or self._repo.get_check_run(check_run_id)
            extra: dict[str, Any] = {"actions": list(actions)} if actions is not None else {}
            if conclusion is None:
                run.edit(output=output.to_json(), **extra)
            else:
                run.edit(output=output.to_json(), status="completed", conclusion=conclusion, **extra)

        self._call("update the check run", update)

    # ------------------------------------------------------------ pull requests

    def pull_head_sha(self, number: int) -> str:
        return self._call("read the pull request", lambda: self._repo.get_pull(number).head.sha)

    def pull_request(self, number: int) -> PullDetails:
        pull = self._call("read the pull request", lambda: self._repo.get_pull(number))
        head_repo = pull.head.repo.full_name if pull.head.repo is not None else ""
        return PullDetails(pull.number, pull.base.sha, pull.head.sha, pull.title or "", pull.body or "",
                           pull.head.ref or "", head_repo, pull.state or "open")

    def permission(self, login: str) -> str:
        """`login`'s permission on the repository: admin, write (maintain too), read or none."""
        return self._call(f"read {login}'s permission", lambda: self._repo.get_collaborator_permission(login))

    def pull_files(self, number: int) -> list[PullFile]:
        files = self._call("list the pull request's files",
                           lambda: list(self._repo.get_pull(number).get_files()))
        return [PullFile(f.filename, f.status, f.patch, f.previous_filename) for f in files]

    def issue_comments(self, number: int) -> list[IssueComment]:
        comments = self._call("list the pull request's comments",
                              lambda: list(self._issue(number).get_comments()))
        self._comments.update((c.id, c) for c in comments)
        return [IssueComment(c.id, _login(c), c.body or "", c.html_url or "") for c in comments]

    def create_issue_comment(self, number: int, body: str) -> IssueComment:
        comment = self._call("comment on the pull request",
                             lambda: self._issue(number).create_comment(body))
        self._comments[comment.id] = comment
        return IssueComment(comment.id, _login(comment), body, comment.html_url or "")

    def edit_issue_comment(self, number: int, comment_id: int, body: str) -> None:
        def edit() -> None:
            comment = self._comments.get(comment_id)
            if comment is None:
                comment = self._issue(number).get_comment(comment_id)
            comment.edit(body)

        self._call("edit the summary comment", edit)

    def reviews(self, number: int) -> list[Review]:
        reviews = self._call("list the pull request's reviews",
                             lambda: list(self._repo.get_pull(number).get_reviews()))
        return [Review(r.id, _login(r), r.commit_id or "", r.body or "") for r in reviews]

    def create_review(self, number: int, commit_id: str, body: str, comments: Sequence[ReviewComment]) -> int:
        """One review with `event: COMMENT` on `commit_id`, its comments anchored on diff lines."""
        def create() -> Any:
            pull = self._repo.get_pull(number)
            return pull.create_review(commit=self._repo.get_commit(commit_id), body=body, event="COMMENT",
                                      comments=[c.to_json() for c in comments])

        return self._call("post the review", create).id

    # ------------------------------------------------------------ workflow runs

    def workflow_runs(self, head_sha: str, event: str) -> list[WorkflowRunRef]:
        """The repository's workflow runs on `head_sha` that `event` started, newest first."""
        runs = self._call("list the workflow runs", lambda: list(
            self._repo.get_workflow_runs(event=event, head_sha=head_sha)))
        self._workflow_runs.update((run.id, run) for run in runs)
        return [WorkflowRunRef(run.id, run.path or "", run.status or "", run.html_url or "") for run in runs]

    def rerun_workflow_run(self, run_id: int) -> None:
        """Ask GitHub to run a completed workflow run again (needs `actions: write`)."""
        def rerun() -> None:
            run = self._workflow_runs.get(run_id) or self._repo.get_workflow_run(run_id)
            if not run.rerun():
                raise GitHubError(f"cannot run the workflow run {run_id} again: GitHub refused")

        self._call("run the pull request's workflow run again", rerun)

    def _issue(self, number: int) -> Any:
        """The pull request as an issue, for its comments: a lazy object that knows its URL (a lazy
        PullRequest's comment calls first GET the pull request for its `issue_url`)."""
        return self._repo.get_issue(number)

    # ------------------------------------------------------------ errors

    def _call(self, what: str, action: Callable[[], T]) -> T:
        return github_call(what, action)


def github_call(what: str, action: Callable[[], T]) -> T:
    """`action()`, its PyGithub and connection errors turned into a one-line `GitHubError`
    ("cannot <what>: ..."), or `ReadOnlyToken` for a write the token may not make."""
    try:
        return action()
    except GithubException as exc:
        message = _message(exc)
        if exc.status == 403 and READ_ONLY_MESSAGE.lower() in message.lower():
            raise ReadOnlyToken(f"cannot {what}: the token is read-only ({message})") from None
        error = NotFound if exc.status == 404 else GitHubError
        raise error(f"cannot {what}: GitHub answered {exc.status}: {message}") from None
    except (OSError, ValueError) as exc:  # connection errors, retries exhausted
        raise GitHubError(f"cannot {what}: {type(exc).__name__}: {_first_line(str(exc))}") from None


def _login(item: Any) -> str:
    return item.user.login if item.user else ""


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    message = str(data.get("message") or exc.message or "no message")
    errors = data.get("errors")
    if errors:
        message += f" ({_first_line(str(errors))})"
    return _first_line(message)


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""

