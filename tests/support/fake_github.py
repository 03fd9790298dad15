"""A stateful in-memory fake of the GitHub REST endpoints the publisher (bot/) uses.

Why: GitHub is out of reach from the tests, and mocking PyGithub would only test our own
guesses. This fake speaks HTTP, so a real `github.Github(base_url=fake.url, ...)` client runs
end to end against it. It holds the publisher to GitHub's contract, not to ours:

- every request body is validated against the operation's schema from GitHub's published
  OpenAPI description (`tests/fixtures/github/openapi-operations.json`, made by
  `tests/fixtures/github/trim.py`); an invalid body answers 422 like GitHub and is recorded in
  `fake.violations`;
- the rules the schemas do not carry are enforced too (comment size, review comments anchored
  inside the diff hunks, `commit_id` the head of the pull request, head sha of a check run a
  known commit, ...); breaking one also answers 422 and is recorded (kind "rule");
- tokens may be read-only (a fork's GITHUB_TOKEN: every write answers 403), and failures
  (502, secondary rate limits with Retry-After) can be injected to test retries;
- GitHub Apps (`add_app`, `add_installation`, `create_app_from_manifest`): JWTs are checked
  (RS256 against the App's public key), installation tokens are minted narrowed to the
  repositories and permissions asked for, and a request outside them answers 403;
- git over smart HTTP (`add_git_repo`): `git fetch` runs `git http-backend` on a local
  repository and needs `Authorization` with a token that covers the repository.

Use it through the `fake_github` fixture (or `FakeGitHub().serve()`), register what GitHub
would already know (`add_pull`, `add_pull_from_git`, `add_issue_comment`, `add_token`), point
the client at `fake.url` (or take `fake.client()`), then assert on `fake.check_runs`,
`fake.issue_comments`, `fake.reviews`, `fake.requests` and `fake.violations`.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import itertools
import json
import math
import re
import secrets
import subprocess
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Flask, Response, g, request
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from werkzeug.exceptions import HTTPException
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wsgi import get_input_stream

if TYPE_CHECKING:
    from github import Github

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "github"
OPERATIONS_FILE = FIXTURES / "openapi-operations.json"

MAX_COMMENT_LENGTH = 65536  # characters of an issue comment's body
MAX_ANNOTATIONS = 50  # per check-run create or update request
MAX_PER_PAGE = 100
DEFAULT_PER_PAGE = 30
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
SIDES = ("LEFT", "RIGHT")
DOCS = "https://docs.github.com/rest"
READ_ONLY_MESSAGE = "Resource not accessible by integration"
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 0000:FAKE:0000."
)
DEFAULT_LOGIN = "github-actions[bot]"
KNOWN_USER_IDS = {"github-actions[bot]": 41898282, "octocat": 583231, "github": 9919}
GITHUB_ACTIONS_APP = {"id": 15368, "slug": "github-actions", "name": "GitHub Actions", "owner": "github"}
REVIEW_STATES = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED",
                 None: "PENDING"}
# The URL templates of a repository: `<name>_url` is the repository's API URL plus the suffix.
REPO_URL_TEMPLATES = {
    "archive": "/{archive_format}{/ref}", "assignees": "/assignees{/user}", "blobs": "/git/blobs{/sha}",
    "branches": "/branches{/branch}", "collaborators": "/collaborators{/collaborator}",
    "comments": "/comments{/number}", "commits": "/commits{/sha}", "compare": "/compare/{base}...{head}",
    "contents": "/contents/{+path}", "contributors": "/contributors", "deployments": "/deployments",
    "downloads": "/downloads", "events": "/events", "forks": "/forks", "git_commits": "/git/commits{/sha}",
    "git_refs": "/git/refs{/sha}", "git_tags": "/git/tags{/sha}", "hooks": "/hooks",
    "issue_comment": "/issues/comments{/number}", "issue_events": "/issues/events{/number}",
    "issues": "/issues{/number}", "keys": "/keys{/key_id}", "labels": "/labels{/name}",
    "languages": "/languages", "merges": "/merges", "milestones": "/milestones{/number}",
    "notifications": "/notifications{?since,all,participating}", "pulls": "/pulls{/number}",
    "releases": "/releases{/id}", "stargazers": "/stargazers", "statuses": "/statuses/{sha}",
    "subscribers": "/subscribers", "subscription": "/subscription", "tags": "/tags", "teams": "/teams",
    "trees": "/git/trees{/sha}",
}
# The permission a refused write lacks, as GitHub names it in X-Accepted-GitHub-Permissions.
PERMISSIONS = {"checks/create": "checks=write", "checks/update": "checks=write",
               "issues/create-comment": "issues=write; pull_requests=write",
               "issues/update-comment": "issues=write; pull_requests=write",
               "pulls/create-review": "pull_requests=write"}
# Operations authenticated as the App itself (a JWT), not with a token.
APP_JWT_OPERATIONS = frozenset({"apps/create-installation-access-token", "apps/get-authenticated"})
NO_AUTH_OPERATIONS = frozenset({"apps/create-from-manifest"})  # the temporary code is the credential
MAX_JWT_LIFETIME = 600  # GitHub refuses a JWT whose exp is more than 10 minutes after its iat
LEVELS = {"read": 1, "write": 2, "admin": 3}
# a repository role and the base permission GitHub's "permission" field shows for it (maintain is
# write, triage is read); `role_name` shows the role itself
ROLES = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
NOT_ACCESSIBLE = ("There is at least one repository that does not exist or is not accessible to the parent "
                  "installation.")
GIT_PATH = re.compile(r"^/([^/]+)/([^/]+?)\.git(/.*)$")


# ------------------------------------------------------------------ records

@dataclass
class Identity:
    """Who a token authenticates as; `read_only` is a fork pull request's GITHUB_TOKEN.

    An installation token also has the repositories (full names) and permissions it was
    narrowed to; None means unrestricted.
    """

    login: str = DEFAULT_LOGIN
    read_only: bool = False
    repositories: frozenset[str] | None = None
    permissions: dict[str, str] | None = None
    installation_id: int | None = None
    expires_at: datetime | None = None  # an installation token's end; GitHub answers 401 after it

    def may_access(self, full_name: str) -> bool:
        return self.repositories is None or full_name in self.repositories

    def may(self, accepted: str) -> bool:
        """Whether the permissions grant one of "checks=write; pull_requests=write"."""
        if self.permissions is None or not accepted:
            return True
        for choice in accepted.split(";"):
            name, _, level = choice.strip().partition("=")
            if LEVELS.get(self.permissions.get(name, ""), 0) >= LEVELS.get(level, 1):
                return True
        return False

    @property
    def is_app(self) -> bool:
        return self.login.endswith("[bot]")


@dataclass
class App:
    """A registered GitHub App; `public_key` (PEM) verifies its JWTs."""

    id: int
    slug: str
    name: str
    owner: str
    public_key: str
    permissions: dict[str, str]
    events: list[str]
    client_id: str = ""
    client_secret: str = field(default="", repr=False)
    webhook_secret: str = field(default="", repr=False)
    url: str = ""
    hook_url: str = ""
    public: bool = False

    @property
    def bot_login(self) -> str:
        return f"{self.slug}[bot]"


@dataclass
class Installation:
    id: int
    app: App
    account: str
    repositories: set[str]  # full names the installation may access
    permissions: dict[str, str]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    json: Any  # the parsed body, the raw text if it was not JSON, None without a body
    status: int
    token: str | None
    operation: str | None  # GitHub's operationId ("checks/create"), None for an unknown route


@dataclass(frozen=True)
class Violation:
    """A request GitHub would refuse with 422: `kind` "schema" (the OpenAPI schema), "json" or "rule"."""

    operation: str
    method: str
    path: str
    kind: str
    errors: tuple[str, ...]
    body: Any


@dataclass
class InjectedFailure:
    status: int
    remaining: int
    method: str | None
    path: str | None  # fnmatch pattern on the request path
    retry_after: int | None
    message: str
    processed: bool = False  # the request takes effect, then the failure is answered

    def matches(self, method: str, path: str) -> bool:
        return ((self.method is None or self.method.upper() == method)
                and (self.path is None or fnmatch.fnmatchcase(path, self.path)))


@dataclass(frozen=True)
class DiffLine:
    """One line of a file's patch: `old`/`new` are its base/head line numbers (None if absent)."""

    kind: str  # " " context, "+" added, "-" removed
    old: int | None
    new: int | None
    position: int  # lines below the file's first @@ header (the deprecated `position`)
    hunk: int  # index of its hunk in the patch
    index: int  # index of the line in the patch text


@dataclass
class PullFile:
    """One entry of GET .../pulls/{n}/files; `patch` is None for binary or oversized diffs."""

    filename: str
    status: str = "modified"
    patch: str | None = None
    previous_filename: str | None = None
    sha: str = ""
    additions: int | None = None
    deletions: int | None = None
    lines: list[DiffLine] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        lines = self.patch.split("\n") if self.patch else []
        if self.additions is None:
            self.additions = sum(1 for line in lines if line.startswith("+"))
        if self.deletions is None:
            self.deletions = sum(1 for line in lines if line.startswith("-"))
        if not self.sha:
            self.sha = _fake_sha(f"{self.filename}\0{self.patch}")
        self.lines = parse_patch(self.patch)

    def find(self, line: int, side: str) -> DiffLine | None:
        """The diff line with that base (LEFT) or head (RIGHT) line number, if the patch shows it."""
        for diff_line in self.lines:
            number = diff_line.new if side == "RIGHT" else diff_line.old
            if number == line:
                return diff_line
        return None

    def at_position(self, position: int) -> DiffLine | None:
        return next((line for line in self.lines if line.position == position), None)

    def diff_hunk(self, upto: DiffLine) -> str:
        """GitHub's `diff_hunk` of a review comment: its hunk's header through the commented line."""
        text = (self.patch or "").split("\n")
        start = max(i for i in range(upto.index + 1) if text[i].startswith("@@"))
        return "\n".join(text[start:upto.index + 1])


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    private: bool = False
    default_branch: str = "main"
    commits: set[str] = field(default_factory=set)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class Pull:
    repo: Repo
    number: int
    id: int
    base_sha: str
    head_sha: str
    files: list[PullFile]
    title: str = "A pull request"
    body: str = ""
    user: str = "octocat"
    base_ref: str = "main"
    head_ref: str = "feature"
    head_repo: str | None = None  # "owner/name" of the head repository; None: the base repository
    draft: bool = False
    state: str = "open"
    created_at: str = ""

    @property
    def head_full_name(self) -> str:
        return self.head_repo or self.repo.full_name

    @property
    def from_fork(self) -> bool:
        return self.head_full_name != self.repo.full_name

    def file(self, path: str) -> PullFile | None:
        return next((f for f in self.files if f.filename == path), None)


@dataclass
class WorkflowRun:
    """A run of a repository's workflow (GitHub Actions), as GET .../actions/runs lists it."""

    repo: Repo
    id: int
    path: str  # the workflow's file, ".github/workflows/difforacle.yml"
    event: str  # what started it: "pull_request", "workflow_run", ...
    head_sha: str
    name: str = "difforacle"
    status: str = "completed"
    conclusion: str | None = "success"
    run_attempt: int = 1
    reruns: list[dict[str, Any]] = field(default_factory=list)  # the bodies of POST .../rerun


@dataclass
class CheckRun:
    repo: Repo
    id: int
    name: str
    head_sha: str
    app_login: str
    status: str = "queued"
    conclusion: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    details_url: str | None = None
    external_id: str | None = None
    output: dict[str, Any] = field(default_factory=dict)  # title, summary, text, images
    annotations: list[dict[str, Any]] = field(default_factory=list)  # accumulated over updates
    actions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class IssueComment:
    repo: Repo
    issue_number: int
    id: int
    body: str
    login: str
    created_at: str
    updated_at: str


@dataclass
class ReviewComment:
    id: int
    path: str
    body: str
    line: int | None
    side: str
    start_line: int | None
    start_side: str | None
    position: int
    diff_hunk: str


@dataclass
class Review:
    repo: Repo
    pull_number: int
    id: int
    login: str
    body: str
    state: str
    commit_id: str
    submitted_at: str | None
    comments: list[ReviewComment] = field(default_factory=list)


class ApiError(Exception):
    """An error answer; `kind` set means GitHub would refuse this request (a violation)."""

    def __init__(self, status: int, message: str, *, kind: str | None = None, errors: list[Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.errors = errors
        self.headers = headers or {}


# ------------------------------------------------------------------ diffs

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_patch(patch: str | None) -> list[DiffLine]:
    """The lines of a GitHub `patch` (hunks only, no file headers) with their line numbers."""
    if not patch:
        return []
    lines: list[DiffLine] = []
    old = new = 0
    hunk = -1
    for index, text in enumerate(patch.split("\n")):
        header = HUNK_HEADER.match(text)
        if header:
            old, new, hunk = int(header.group(1)), int(header.group(3)), hunk + 1
            continue
        if hunk < 0 or text.startswith("\\"):  # "\ No newline at end of file"
            continue
        kind = text[:1] or " "
        if kind == "+":
            lines.append(DiffLine("+", None, new, index, hunk, index))
            new += 1
        elif kind == "-":
            lines.append(DiffLine("-", old, None, index, hunk, index))
            old += 1
        else:
            lines.append(DiffLine(" ", old, new, index, hunk, index))
            old, new = old + 1, new + 1
    return lines


def git_files(repo_path: str | Path, base: str, head: str) -> list[PullFile]:
    """The files of a pull request from `base` to `head`, as GitHub lists them.

    Like GitHub, the diff is `git diff base...head` (from their merge base), with three lines
    of context and renames detected; `patch` is the hunks without the file headers.
    """
    out = _git(repo_path, "-c", "core.quotepath=false", "diff", "--no-color", "--no-ext-diff",
               "--find-renames", "--full-index", "--unified=3", "--src-prefix=a/", "--dst-prefix=b/",
               f"{base}...{head}")
    files = []
    for section in re.split(r"^(?=diff --git )", out, flags=re.MULTILINE):
        if section.startswith("diff --git "):
            files.append(_section_file(section))
    return files


def _section_file(section: str) -> PullFile:
    lines = section.split("\n")
    if lines[-1] == "":
        lines.pop()
    first_hunk = next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))
    header, patch = lines[1:first_hunk], lines[first_hunk:]
    old_name, new_name = _names_from_diff_line(lines[0])
    status, sha = "modified", ""
    for line in header:
        if line.startswith("new file mode"):
            status = "added"
        elif line.startswith("deleted file mode"):
            status = "removed"
        elif line.startswith("rename from "):
            status, old_name = "renamed", line.removeprefix("rename from ")
        elif line.startswith("rename to "):
            new_name = line.removeprefix("rename to ")
        elif line.startswith("--- a/"):
            old_name = _unquote(line.removeprefix("--- a/"))
        elif line.startswith("+++ b/"):
            new_name = _unquote(line.removeprefix("+++ b/"))
        elif line.startswith("old mode") and not patch:
            status = "changed"
        elif line.startswith("index "):
            before, after = line.split()[1].split("..")
            sha = before if set(after) == {"0"} else after
    return PullFile(
        filename=old_name if status == "removed" else new_name,
        status=status,
        patch="\n".join(patch) if patch else None,
        previous_filename=old_name if status == "renamed" else None,
        sha=sha,
    )


def _names_from_diff_line(line: str) -> tuple[str, str]:
    rest = line.removeprefix("diff --git ")
    if rest.startswith("a/") and " b/" in rest:
        half = (len(rest) - 1) // 2  # "a/X b/X" when the names are equal
        if rest[:half].removeprefix("a/") == rest[half + 1:].removeprefix("b/"):
            name = rest[:half].removeprefix("a/")
            return name, name
        old, _, new = rest.partition(" b/")
        return old.removeprefix("a/"), new
    return rest, rest


def _unquote(name: str) -> str:
    return name[1:-1] if len(name) > 1 and name[0] == '"' == name[-1] else name


def _git(repo_path: str | Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo_path), *args], check=True, capture_output=True,
                          text=True).stdout


# ------------------------------------------------------------------ helpers

def _fake_sha(text: str) -> str:
    return f"{zlib.crc32(text.encode()):08x}" * 5


def _user_id(login: str) -> int:
    return KNOWN_USER_IDS.get(login) or 10_000_000 + zlib.crc32(login.encode()) % 90_000_000


def _node_id(kind: str, number: int) -> str:
    return f"{kind}_kwFAKE{number}"


def _ruby(value: Any) -> str:
    """A value as GitHub's validation messages show it (nil, quoted strings), kept short."""
    text = "nil" if value is None else json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _join(messages: list[str]) -> str:
    """GitHub's one-string list: "A", "A and B", "A, B, and C"."""
    if len(messages) <= 2:
        return " and ".join(messages)
    return ", ".join(messages[:-1]) + ", and " + messages[-1]


@cache
def load_operations() -> dict[str, Any]:
    """The trimmed OpenAPI operations (tests/fixtures/github/openapi-operations.json)."""
    return json.loads(OPERATIONS_FILE.read_text(encoding="utf-8"))


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


# ------------------------------------------------------------------ the fake

class FakeGitHub:
    """GitHub's REST API for one test: state, rules, tokens, failure injection, request log.

    `FakeGitHub(default_login=...)`: tokens not registered with `add_token` authenticate as
    `default_login` (read-write) unless `strict_tokens`, which answers them 401. Timestamps
    come from a clock that starts at `start` and ticks one second per write, so runs are
    deterministic.
    """

    def __init__(self, *, default_login: str = DEFAULT_LOGIN, strict_tokens: bool = False,
                 start: datetime = datetime(2024, 1, 1, tzinfo=UTC)) -> None:
        self.default_login = default_login
        self.strict_tokens = strict_tokens
        self.read_only = False  # every token read-only at once
        self.rate_limit_remaining = 4999  # what every response says is left of the hour's 5,000 requests
        self.tokens: dict[str, Identity] = {}
        self.repos: dict[str, Repo] = {}
        self.pulls: dict[tuple[str, int], Pull] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.issue_comments: dict[int, IssueComment] = {}
        self.reviews: dict[int, Review] = {}
        self.workflow_runs: dict[int, WorkflowRun] = {}
        self.requests: list[RecordedRequest] = []
        self.violations: list[Violation] = []
        self.failures: list[InjectedFailure] = []
        self.apps: dict[int, App] = {}
        self.installations: dict[int, Installation] = {}
        self.manifest_codes: dict[str, tuple[App, str]] = {}  # code -> the App and its private key
        self.git_repos: dict[str, Path] = {}  # "owner/name" -> the git directory served
        self.collaborators: dict[tuple[str, str], str] = {}  # ("owner/name", login) -> role
        self.url = ""  # set by serve()
        # token expiry follows this clock; tests skew it to make a job outlive its token
        self.wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self._clock = start
        self._lock = threading.RLock()
        self._ids = {kind: itertools.count(base) for kind, base in
                     {"repo": 600_001, "pull": 500_001, "check_run": 100_001, "comment": 200_001,
                      "review": 300_001, "review_comment": 400_001, "app": 700_001,
                      "installation": 800_001, "workflow_run": 900_001}.items()}
        operations = load_operations()["operations"]
        self.documentation = {op_id: op.get("documentation_url") or DOCS for op_id, op in operations.items()}
        self.validators = {
            op_id: Draft202012Validator(op["request_body"]["schema"], format_checker=FormatChecker())
            for op_id, op in operations.items() if op.get("request_body")
        }
        self.app = self._make_app()

    # ------------------------------------------------------------ setup by tests

    def add_token(self, token: str, login: str = DEFAULT_LOGIN, *, read_only: bool = False) -> Identity:
        """Register a token: whose it is (`login`, e.g. "github-actions[bot]") and whether it may write."""
        identity = Identity(login, read_only)
        self.tokens[token] = identity
        return identity

    def add_repo(self, owner: str, name: str, *, private: bool = False, default_branch: str = "main",
                 commits: Iterable[str] = ()) -> Repo:
        """Register a repository (idempotent) and commits GitHub knows in it."""
        key = f"{owner}/{name}"
        repo = self.repos.get(key)
        if repo is None:
            repo = self.repos[key] = Repo(owner, name, next(self._ids["repo"]), private, default_branch)
        repo.commits.update(commits)
        return repo

    def add_pull(self, owner: str, repo: str, number: int, base_sha: str, head_sha: str,
                 files: Iterable[PullFile | dict[str, Any]] = (), **details: Any) -> Pull:
        """Register an open pull request and its files (dicts shaped like GitHub's file entries).

        `details`: title, body, user (login of the author), base_ref, head_ref, draft, state,
        head_repo ("owner/name" of a fork, for a pull request from a fork).
        """
        repository = self.add_repo(owner, repo, commits=(base_sha, head_sha))
        pull = Pull(repository, number, next(self._ids["pull"]), base_sha, head_sha,
                    [self._pull_file(f) for f in files], created_at=self._tick(), **details)
        self.pulls[(repository.full_name, number)] = pull
        self._point_pull_ref(pull)
        return pull

    def add_pull_from_git(self, owner: str, repo: str, number: int, repo_path: str | Path, base: str,
                          head: str, **details: Any) -> Pull:
        """Register a pull request whose files are `git diff base...head` of a local repository."""
        base_sha = _git(repo_path, "rev-parse", f"{base}^{{commit}}").strip()
        head_sha = _git(repo_path, "rev-parse", f"{head}^{{commit}}").strip()
        merge_base = _git(repo_path, "merge-base", base_sha, head_sha).strip()
        files = git_files(repo_path, base_sha, head_sha)
        pull = self.add_pull(owner, repo, number, base_sha, head_sha, files, **details)
        pull.repo.commits.add(merge_base)
        return pull

    def add_workflow_run(self, owner: str, repo: str, head_sha: str, *,
                         path: str = ".github/workflows/difforacle.yml", event: str = "pull_request",
                         **details: Any) -> WorkflowRun:
        """Register a workflow run of the repository (`details`: name, status, conclusion)."""
        repository = self.add_repo(owner, repo, commits=(head_sha,))
        run = WorkflowRun(repository, next(self._ids["workflow_run"]), path, event, head_sha, **details)
        self.workflow_runs[run.id] = run
        return run

    def set_pull_head(self, owner: str, repo: str, number: int, head_sha: str,
                      files: Iterable[PullFile | dict[str, Any]] | None = None) -> Pull:
        """A push to the pull request: a new head (and files), as a `synchronize` event follows."""
        pull = self.pulls[(f"{owner}/{repo}", number)]
        pull.head_sha = head_sha
        pull.repo.commits.add(head_sha)
        if files is not None:
            pull.files = [self._pull_file(f) for f in files]
        self._point_pull_ref(pull)
        return pull

    def _point_pull_ref(self, pull: Pull) -> None:
        """In a served repository, `refs/pull/N/head` names the pull request's head, as on GitHub;
        a head that is not in its objects (a made-up SHA) leaves no such ref."""
        git_dir = self.git_repos.get(pull.repo.full_name)
        if git_dir is None:
            return
        ref = f"refs/pull/{pull.number}/head"
        git = ["git", "--git-dir", str(git_dir)]
        exists = subprocess.run([*git, "cat-file", "-e", f"{pull.head_sha}^{{commit}}"],
                                capture_output=True).returncode == 0
        args = ["update-ref", ref, pull.head_sha] if exists else ["update-ref", "-d", ref]
        subprocess.run([*git, *args], capture_output=True, check=exists)

    def add_issue_comment(self, owner: str, repo: str, number: int, body: str, *,
                          login: str = "octocat") -> IssueComment:
        """Seed a comment on an issue or pull request, e.g. by another user or a previous run."""
        repository = self.repos[f"{owner}/{repo}"]
        now = self._tick()
        comment = IssueComment(repository, number, next(self._ids["comment"]), body, login, now, now)
        self.issue_comments[comment.id] = comment
        return comment

    def add_collaborator(self, owner: str, repo: str, login: str, role: str = "write") -> None:
        """Give `login` a role on the repository: admin, maintain, write, triage or read."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        self.collaborators[(f"{owner}/{repo}", login)] = role

    def add_app(self, slug: str, *, private_key: str | None = None, name: str | None = None,
                owner: str = "octo", permissions: dict[str, str] | None = None,
                events: Iterable[str] = ("pull_request", "check_run")) -> tuple[App, str]:
        """Register a GitHub App; returns it and its private key (PEM, made here unless given)."""
        pem = private_key or _new_private_key()
        public = serialization.load_pem_private_key(pem.encode(), None).public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        app_id = next(self._ids["app"])
        app = App(app_id, slug, name or slug, owner, public,
                  dict(permissions or {"checks": "write", "pull_requests": "write", "contents": "read",
                                       "metadata": "read"}),
                  list(events), client_id=f"Iv1.{secrets.token_hex(8)}", client_secret=secrets.token_hex(20),
                  webhook_secret=secrets.token_hex(20))
        self.apps[app_id] = app
        return app, pem

    def add_installation(self, app: App, account: str, repositories: Iterable[str],
                         permissions: dict[str, str] | None = None) -> Installation:
        """Install `app` on `account` for some of its repositories ("owner/name", registered here)."""
        names = {name if "/" in name else f"{account}/{name}" for name in repositories}
        for full_name in names:
            self.add_repo(*full_name.split("/", 1))
        installation = Installation(next(self._ids["installation"]), app, account, names,
                                    dict(permissions or app.permissions))
        self.installations[installation.id] = installation
        return installation

    def create_app_from_manifest(self, manifest: str | dict[str, Any], *, owner: str = "octo") -> str:
        """What GitHub does when the user confirms a manifest on /settings/apps/new: registers the
        App and redirects with a temporary code (returned here) for POST /app-manifests/{code}/conversions."""
        data = json.loads(manifest) if isinstance(manifest, str) else manifest
        for key in ("url",):
            if not data.get(key):
                raise ValueError(f"the manifest lacks {key}")
        name = data.get("name") or "app"
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        app, pem = self.add_app(slug, name=name, owner=owner, permissions=data.get("default_permissions"),
                                events=data.get("default_events") or ())
        app.url, app.public = data["url"], bool(data.get("public"))
        app.hook_url = (data.get("hook_attributes") or {}).get("url", "")
        code = secrets.token_hex(10)
        self.manifest_codes[code] = (app, pem)
        return code

    def add_git_repo(self, owner: str, name: str, path: str | Path) -> Repo:
        """Serve a local repository at `{url}/{owner}/{name}.git` (fetch only), as GitHub serves clones."""
        git_dir = Path(_git(path, "rev-parse", "--absolute-git-dir").strip())
        self.git_repos[f"{owner}/{name}"] = git_dir
        repository = self.add_repo(owner, name)
        for (full_name, _), pull in self.pulls.items():
            if full_name == repository.full_name:
                self._point_pull_ref(pull)
        return repository

    def fail_next(self, count: int = 1, *, status: int = 502, method: str | None = None,
                  path: str | None = None, retry_after: int | None = None, message: str = "Server Error",
                  processed: bool = False) -> None:
        """Answer the next `count` requests matching `method` and `path` (fnmatch) with `status`.

        `processed`: the request takes effect before the failure is answered, as when a gateway
        times out after GitHub did the write; a retry then writes twice unless the client checks.
        """
        self.failures.append(InjectedFailure(status, count, method, path, retry_after, message, processed))

    def rate_limit_next(self, count: int = 1, *, status: int = 403, retry_after: int | None = 0,
                        method: str | None = None, path: str | None = None) -> None:
        """Answer the next `count` matching requests with a secondary rate limit (403 or 429).

        `retry_after` seconds go in the Retry-After header (None: no header, then PyGithub's
        GithubRetry waits its `secondary_rate_wait`, 60 s by default).
        """
        self.fail_next(count, status=status, method=method, path=path, retry_after=retry_after,
                       message=SECONDARY_RATE_LIMIT_MESSAGE)

    # ------------------------------------------------------------ inspection

    def comments_on(self, owner: str, repo: str, number: int) -> list[IssueComment]:
        return [c for c in self.issue_comments.values()
                if c.repo.full_name == f"{owner}/{repo}" and c.issue_number == number]

    def reviews_on(self, owner: str, repo: str, number: int) -> list[Review]:
        return [r for r in self.reviews.values()
                if r.repo.full_name == f"{owner}/{repo}" and r.pull_number == number]

    def requests_to(self, method: str | None = None, path: str | None = None) -> list[RecordedRequest]:
        """The logged requests with that method and path (an fnmatch pattern)."""
        return [r for r in self.requests
                if (method is None or r.method == method.upper())
                and (path is None or fnmatch.fnmatchcase(r.path, path))]

    # ------------------------------------------------------------ serving

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """WSGI entry point; one request at a time, so the state needs no finer locking."""
        with self._lock:
            if GIT_PATH.match(environ.get("PATH_INFO", "")):
                return self._git_http(environ, start_response)
            return self.app(environ, start_response)

    @contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator[FakeGitHub]:
        """Serve the fake over HTTP on a free port in a background thread; sets `self.url`."""
        server = make_server(host, port, self, threaded=True, request_handler=_QuietHandler)
        self.url = f"http://{host}:{server.server_port}"
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                  name="fake-github", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

    def client(self, token: str = "test-token", **kwargs: Any) -> Github:
        """A PyGithub client on the fake, without PyGithub's default pauses (0.25 s per request,
        1 s per write) and with quick retries; `kwargs` override any of these."""
        from github import Auth, Github, GithubRetry

        options: dict[str, Any] = {
            "retry": GithubRetry(total=3, backoff_factor=0, secondary_rate_wait=0),
            "seconds_between_requests": None,
            "seconds_between_writes": None,
            "timeout": 10,
        }
        options.update(kwargs)
        return Github(base_url=self.url, auth=Auth.Token(token), **options)

    # ------------------------------------------------------------ HTTP plumbing

    def _make_app(self) -> Flask:
        app = Flask("fake_github")
        repo = "/repos/<owner>/<repo>"
        issue, pull = f"{repo}/issues", f"{repo}/pulls/<int:pull_number>"
        routes: list[tuple[str, str, str, Callable[..., Any]]] = [
            ("GET", repo, "repos/get", self._get_repo),
            ("GET", f"{repo}/commits/<sha>", "repos/get-commit", self._get_commit),
            ("POST", f"{repo}/check-runs", "checks/create", self._create_check_run),
            ("GET", f"{repo}/check-runs/<int:check_run_id>", "checks/get", self._get_check_run),
            ("PATCH", f"{repo}/check-runs/<int:check_run_id>", "checks/update", self._update_check_run),
            ("GET", f"{repo}/check-runs/<int:check_run_id>/annotations", "checks/list-annotations",
             self._list_annotations),
            ("GET", f"{issue}/<int:issue_number>", "issues/get", self._get_issue),
            ("GET", f"{issue}/<int:issue_number>/comments", "issues/list-comments", self._list_comments),
            ("POST", f"{issue}/<int:issue_number>/comments", "issues/create-comment", self._create_comment),
            ("GET", f"{issue}/comments/<int:comment_id>", "issues/get-comment", self._get_comment),
            ("PATCH", f"{issue}/comments/<int:comment_id>", "issues/update-comment", self._update_comment),
            ("GET", pull, "pulls/get", self._get_pull),
            ("GET", f"{pull}/files", "pulls/list-files", self._list_files),
            ("GET", f"{pull}/reviews", "pulls/list-reviews", self._list_reviews),
            ("POST", f"{pull}/reviews", "pulls/create-review", self._create_review),
            ("GET", f"{pull}/reviews/<int:review_id>", "pulls/get-review", self._get_review),
            ("GET", f"{pull}/comments", "pulls/list-review-comments", self._list_review_comments),
            ("GET", f"{repo}/commits/<path:ref>/check-runs", "checks/list-for-ref", self._list_check_runs),
            ("GET", f"{repo}/collaborators/<username>/permission", "repos/get-collaborator-permission-level",
             self._get_permission),
            ("GET", f"{repo}/actions/runs", "actions/list-workflow-runs-for-repo", self._list_workflow_runs),
            ("POST", f"{repo}/actions/runs/<int:run_id>/rerun", "actions/re-run-workflow",
             self._rerun_workflow),
            ("GET", "/user", "users/get-authenticated", self._get_user),
            ("GET", "/app", "apps/get-authenticated", self._get_app),
            ("POST", "/app/installations/<int:installation_id>/access_tokens",
             "apps/create-installation-access-token", self._create_access_token),
            ("POST", "/app-manifests/<code>/conversions", "apps/create-from-manifest",
             self._convert_manifest),
        ]
        for method, rule, operation, view in routes:
            app.add_url_rule(rule, endpoint=operation, view_func=view, methods=[method])
        app.before_request(self._before)
        app.after_request(self._after)
        app.register_error_handler(ApiError, self._api_error)
        app.register_error_handler(HTTPException, self._http_error)
        return app

    def _before(self) -> Response | None:
        """Injected failures, authentication, the repository, write access, then the body."""
        g.body, g.token, g.failure = self._read_body(), None, None
        failure = next((f for f in self.failures if f.matches(request.method, request.path)), None)
        if failure is not None:
            failure.remaining -= 1
            if failure.remaining <= 0:
                self.failures.remove(failure)
            if not failure.processed:
                raise _failure_error(failure)
            g.failure = failure
        operation = request.endpoint
        if operation in APP_JWT_OPERATIONS or operation in NO_AUTH_OPERATIONS:
            g.identity, g.app = None, self._authenticate_app() if operation in APP_JWT_OPERATIONS else None
            if request.method in WRITE_METHODS:
                self._validate_body(operation)
            return None
        g.identity = self._authenticate()
        if operation is None:
            raise ApiError(404, "Not Found")
        args = request.view_args or {}
        full_name = f"{args['owner']}/{args['repo']}" if "owner" in args else None
        if full_name is not None and full_name not in self.repos:
            raise ApiError(404, "Not Found")
        if request.method in WRITE_METHODS:
            if g.identity is None:
                raise ApiError(401, "Requires authentication")
            accepted = PERMISSIONS.get(operation, "")
            outside = full_name is not None and not g.identity.may_access(full_name)
            if g.identity.read_only or self.read_only or outside or not g.identity.may(accepted):
                raise ApiError(403, READ_ONLY_MESSAGE, headers={"X-Accepted-GitHub-Permissions": accepted})
            self._validate_body(operation)
        return None

    def _authenticate_app(self) -> App:
        """The App whose JWT (RS256, `iss` its id, at most 10 minutes long) authenticates the request."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise ApiError(401, "A JSON web token could not be decoded")
        g.token = token
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
            app = self.apps.get(int(claims.get("iss")))
            if app is None:
                raise ApiError(401, "Integration not found")
            claims = jwt.decode(token, app.public_key, algorithms=["RS256"],
                                options={"require": ["iat", "exp", "iss"]}, leeway=60)
        except (jwt.PyJWTError, TypeError, ValueError):
            raise ApiError(401, "A JSON web token could not be decoded") from None
        if claims["exp"] - claims["iat"] > MAX_JWT_LIFETIME:
            raise ApiError(401, "'Expiration time' claim ('exp') is too far in the future")
        return app

    def _read_body(self) -> Any:
        raw = request.get_data(cache=True, as_text=True)
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw

    def _authenticate(self) -> Identity | None:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if not token or scheme.lower() not in ("token", "bearer"):
            return None
        g.token = token
        identity = self.tokens.get(token)
        if identity is None or self._expired(identity):
            if self.strict_tokens or identity is not None:
                raise ApiError(401, "Bad credentials")
            identity = Identity(self.default_login)
        return identity

    def _expired(self, identity: Identity) -> bool:
        return identity.expires_at is not None and self.wall_clock() >= identity.expires_at

    def _validate_body(self, operation: str) -> None:
        body = g.body
        if isinstance(body, str):
            raise ApiError(400, "Problems parsing JSON", kind="json", errors=["Problems parsing JSON"])
        validator = self.validators.get(operation)
        if validator is None:
            return
        required = load_operations()["operations"][operation]["request_body"]["required"]
        if body is None and not required:
            return
        problems = sorted(validator.iter_errors(body),
                          key=lambda e: ([str(p) for p in e.absolute_path], e.message))
        if problems:
            lines = [_describe(problem) for problem in problems]
            raise ApiError(422, "Invalid request.\n\n" + "\n".join(lines), kind="schema",
                           errors=[{"code": "missing_field" if p.validator == "required" else "invalid",
                                    "field": ".".join(str(x) for x in p.absolute_path) or None,
                                    "message": line} for p, line in zip(problems, lines, strict=True)])

    def _after(self, response: Response) -> Response:
        if getattr(g, "failure", None) is not None:
            response = self._api_error(_failure_error(g.failure))
        response.headers.setdefault("X-GitHub-Media-Type", "github.v3; format=json")
        response.headers.setdefault("X-RateLimit-Limit", "5000")
        response.headers.setdefault("X-RateLimit-Remaining", str(self.rate_limit_remaining))
        response.headers.setdefault("X-RateLimit-Reset", "4102444800")
        response.headers.setdefault("X-RateLimit-Resource", "core")
        self.requests.append(RecordedRequest(
            method=request.method, path=request.path, query=dict(request.args.items()),
            json=getattr(g, "body", None), status=response.status_code, token=getattr(g, "token", None),
            operation=request.endpoint,
        ))
        return response

    def _api_error(self, error: ApiError) -> Response:
        if error.kind is not None:
            self.violations.append(Violation(
                operation=request.endpoint or "", method=request.method, path=request.path, kind=error.kind,
                errors=tuple(e["message"] if isinstance(e, dict) else str(e)
                             for e in error.errors or [error.message]),
                body=getattr(g, "body", None),
            ))
        payload: dict[str, Any] = {"message": error.message}
        if error.errors is not None and error.kind != "json":
            payload["errors"] = error.errors
        payload["documentation_url"] = self.documentation.get(request.endpoint or "", DOCS)
        payload["status"] = str(error.status)
        response = self._json(payload, error.status)
        response.headers.update(error.headers)
        return response

    def _http_error(self, error: HTTPException) -> Response:
        status = 404 if error.code in (404, 405) else error.code or 500
        return self._json({"message": "Not Found" if status == 404 else error.name,
                           "documentation_url": DOCS, "status": str(status)}, status)

    @staticmethod
    def _json(payload: Any, status: int = 200) -> Response:
        return Response(json.dumps(payload), status=status, content_type="application/json; charset=utf-8")

    def _page(self, items: list[Any], key: str | None = None) -> Response:
        """One page of a list, with GitHub's Link header (next, last, first, prev); with `key`, the
        page is `{"total_count": n, key: [...]}` as in the checks and search APIs."""
        per_page = _int_arg("per_page", DEFAULT_PER_PAGE)
        per_page = DEFAULT_PER_PAGE if per_page < 1 else min(per_page, MAX_PER_PAGE)
        page = max(_int_arg("page", 1), 1)
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        response = self._json(chunk if key is None else {"total_count": len(items), key: chunk})
        links = []

        def link(number: int, rel: str) -> str:
            query = {**request.args.to_dict(), "per_page": str(per_page), "page": str(number)}
            return f'<{request.base_url}?{urlencode(query)}>; rel="{rel}"'

        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(min(page - 1, last), "prev")]
        if links:
            response.headers["Link"] = ", ".join(links)
        return response

    def _tick(self) -> str:
        self._clock += timedelta(seconds=1)
        return self._clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    # ------------------------------------------------------------ lookups

    def _repo(self, owner: str, repo: str) -> Repo:
        return self.repos[f"{owner}/{repo}"]  # _before answered 404 for an unknown repository

    def _pull(self, owner: str, repo: str, number: int) -> Pull:
        pull = self.pulls.get((f"{owner}/{repo}", number))
        if pull is None:
            raise ApiError(404, "Not Found")
        return pull

    def _check_run(self, owner: str, repo: str, check_run_id: int) -> CheckRun:
        run = self.check_runs.get(check_run_id)
        if run is None or run.repo.full_name != f"{owner}/{repo}":
            raise ApiError(404, "Not Found")
        return run

    def _comment(self, owner: str, repo: str, comment_id: int) -> IssueComment:
        comment = self.issue_comments.get(comment_id)
        if comment is None or comment.repo.full_name != f"{owner}/{repo}":
            raise ApiError(404, "Not Found")
        return comment

    def _pull_file(self, entry: PullFile | dict[str, Any]) -> PullFile:
        if isinstance(entry, PullFile):
            return entry
        known = {"filename", "status", "patch", "previous_filename", "sha", "additions", "deletions"}
        return PullFile(**{key: value for key, value in entry.items() if key in known})

    # ------------------------------------------------------------ repositories and users

    def _get_repo(self, owner: str, repo: str) -> Response:
        return self._json(self._repo_json(self._repo(owner, repo)))

    def _get_commit(self, owner: str, repo: str, sha: str) -> Response:
        repository = self._repo(owner, repo)
        matches = [c for c in sorted(repository.commits) if c.startswith(sha)] if len(sha) >= 7 else []
        if not matches:
            raise ApiError(422, f"No commit found for SHA: {sha}")
        full, base = matches[0], f"{_api_base()}/repos/{repository.full_name}"
        person = {"name": "Test", "email": "test@example.com", "date": "2020-01-01T00:00:00Z"}
        return self._json({
            "sha": full, "node_id": _node_id("C", zlib.crc32(full.encode())), "url": f"{base}/commits/{full}",
            "html_url": f"https://github.com/{repository.full_name}/commit/{full}",
            "commit": {"message": "", "author": person, "committer": person,
                       "tree": {"sha": _fake_sha(full), "url": f"{base}/git/trees/{_fake_sha(full)}"},
                       "url": f"{base}/git/commits/{full}", "comment_count": 0},
            "author": None, "committer": None, "parents": [], "files": [],
        })

    def _get_user(self) -> Response:
        identity = g.identity
        if identity is None:
            raise ApiError(401, "Requires authentication")
        if identity.is_app:  # an installation token is no user: GitHub refuses GET /user
            raise ApiError(403, READ_ONLY_MESSAGE)
        return self._json(self._user_json(identity.login))

    def _get_permission(self, owner: str, repo: str, username: str) -> Response:
        """A user's permission: the repository's owner is admin, a collaborator has their role, anyone
        else reads a public repository and has none on a private one."""
        repository = self._repo(owner, repo)
        role = self.collaborators.get((repository.full_name, username))
        if username == repository.owner:
            role = "admin"
        elif role is None:
            role = "none" if repository.private else "read"
        permission = ROLES.get(role, "none")
        levels = ["pull", "triage", "push", "maintain", "admin"]
        rank = {"none": -1, "read": 0, "triage": 1, "write": 2, "maintain": 3, "admin": 4}[role]
        permissions = {name: rank >= i for i, name in enumerate(levels)}
        user = {**self._user_json(username), "permissions": permissions, "role_name": role}
        return self._json({"permission": permission, "role_name": role, "user": user})

    def _user_json(self, login: str) -> dict[str, Any]:
        user_id = _user_id(login)
        kind = "Bot" if login.endswith("[bot]") else "Organization" if login == "github" else "User"
        html = f"https://github.com/apps/{login.removesuffix('[bot]')}" if kind == "Bot" else f"https://github.com/{login}"
        return {"login": login, "id": user_id, "node_id": _node_id("U", user_id),
                "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}?v=4", "gravatar_id": "",
                "url": f"{_api_base()}/users/{quote(login)}", "html_url": html, "type": kind,
                "site_admin": False}

    def _repo_json(self, repo: Repo | str) -> dict[str, Any]:
        """A repository; a full name not registered (a fork) gets a minimal fork entry."""
        if isinstance(repo, str):
            registered = self.repos.get(repo)
            owner, name = repo.split("/", 1)
            repo_id, private, branch, fork = (
                (registered.id, registered.private, registered.default_branch, False) if registered
                else (600_000 - zlib.crc32(repo.encode()) % 100_000, False, "main", True))
        else:
            owner, name, repo_id, private, branch, fork = (repo.owner, repo.name, repo.id, repo.private,
                                                          repo.default_branch, False)
        full_name = f"{owner}/{name}"
        url = f"{_api_base()}/repos/{full_name}"
        identity = getattr(g, "identity", None)
        push = identity is not None and not identity.read_only and not self.read_only
        open_pulls = sum(1 for p in self.pulls.values()
                         if p.repo.full_name == full_name and p.state == "open")
        counts = dict.fromkeys(("forks", "forks_count", "stargazers_count", "watchers", "watchers_count",
                                "size", "network_count", "subscribers_count"), 0)
        return {
            "id": repo_id, "node_id": _node_id("R", repo_id), "name": name, "full_name": full_name,
            "private": private, "owner": self._user_json(owner), "html_url": f"https://github.com/{full_name}",
            "description": None, "fork": fork, "url": url,
            **{f"{key}_url": f"{url}{suffix}" for key, suffix in REPO_URL_TEMPLATES.items()},
            "git_url": f"git://github.com/{full_name}.git", "ssh_url": f"git@github.com:{full_name}.git",
            "clone_url": f"https://github.com/{full_name}.git", "svn_url": f"https://github.com/{full_name}",
            "mirror_url": None, "homepage": None, "language": None, "license": None, **counts,
            "open_issues": open_pulls, "open_issues_count": open_pulls, "default_branch": branch,
            "has_issues": True, "has_projects": True, "has_wiki": True, "has_pages": False,
            "has_discussions": False, "visibility": "private" if private else "public", "archived": False,
            "disabled": False, "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z",
            "pushed_at": "2020-01-01T00:00:00Z",
            "permissions": {"admin": False, "maintain": False, "push": push, "triage": push, "pull": True},
        }

    def _association(self, repo: Repo, login: str) -> str:
        return "OWNER" if login == repo.owner else "NONE"

    # ------------------------------------------------------------ GitHub Apps

    def _get_app(self) -> Response:
        return self._json(self._registered_app_json(g.app))

    def _create_access_token(self, installation_id: int) -> Response:
        """An installation token, narrowed to the repositories and permissions asked for (if any)."""
        installation = self.installations.get(installation_id)
        if installation is None or installation.app is not g.app:
            raise ApiError(404, "Not Found")
        body = g.body or {}
        names = {f"{installation.account}/{name}" for name in body.get("repositories") or ()}
        by_id = {repo.id: repo.full_name for repo in self.repos.values()}
        names |= {by_id.get(repo_id, f"#{repo_id}") for repo_id in body.get("repository_ids") or ()}
        if not names <= installation.repositories:
            raise ApiError(422, NOT_ACCESSIBLE)
        permissions = body.get("permissions") or dict(installation.permissions)
        for name, level in permissions.items():
            if LEVELS[level] > LEVELS.get(installation.permissions.get(name, ""), 0):
                raise ApiError(422, "The permissions requested are not granted to this installation.")
        repositories = frozenset(names or installation.repositories)
        token = f"ghs_{secrets.token_hex(18)}"
        expires = (self.wall_clock() + timedelta(hours=1)).replace(microsecond=0)
        self.tokens[token] = Identity(installation.app.bot_login, repositories=repositories,
                                      permissions=dict(permissions), installation_id=installation.id,
                                      expires_at=expires)
        return self._json({
            "token": token, "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"), "permissions": permissions,
            "repository_selection": "selected" if names else "all",
            "repositories": [self._repo_json(name) for name in sorted(names)],
        }, 201)

    def _convert_manifest(self, code: str) -> Response:
        """The App made from a manifest, with its secrets; a code works once."""
        found = self.manifest_codes.pop(code, None)
        if found is None:
            raise ApiError(404, "Not Found")
        app, pem = found
        return self._json({**self._registered_app_json(app), "client_id": app.client_id,
                           "client_secret": app.client_secret, "webhook_secret": app.webhook_secret,
                           "pem": pem}, 201)

    def _registered_app_json(self, app: App) -> dict[str, Any]:
        installations = sum(1 for i in self.installations.values() if i.app is app)
        return {**self._app_json(app.bot_login), "client_id": app.client_id, "description": None,
                "external_url": app.url or f"https://example.com/{app.slug}",
                "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
                "permissions": app.permissions, "events": app.events, "installations_count": installations}

    # ------------------------------------------------------------ git over smart HTTP

    def _git_http(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """`git fetch` over HTTP via `git http-backend`: upload-pack only, with a token covering the repo."""
        path = environ.get("PATH_INFO", "")
        owner, name, rest = GIT_PATH.match(path).groups()  # type: ignore[union-attr]
        full_name, query = f"{owner}/{name}", environ.get("QUERY_STRING", "")
        token = _basic_auth_token(environ.get("HTTP_AUTHORIZATION", ""))
        identity = self.tokens.get(token) if token else None
        if identity is not None and self._expired(identity):
            identity = None
        fetching = rest == "/git-upload-pack" or "service=git-upload-pack" in query
        status, headers, body = 200, [], b""
        if identity is None:
            status, headers, body = 401, [("WWW-Authenticate", 'Basic realm="GitHub"')], b"Unauthorized\n"
        elif full_name not in self.git_repos or not identity.may_access(full_name) \
                or not identity.may("contents=read"):
            status, body = 404, b"Repository not found.\n"
        elif not fetching or rest not in ("/info/refs", "/git-upload-pack"):
            status, body = 403, b"Only fetching is supported.\n"
        else:
            status, headers, body = _http_backend(self.git_repos[full_name], rest, environ)
        self.requests.append(RecordedRequest(
            method=environ.get("REQUEST_METHOD", "GET"), path=path, query=dict(_query_pairs(query)),
            json=None, status=status, token=token, operation="git/" + rest.strip("/").replace("/", "-")))
        reason = {200: "OK", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}.get(status, "Error")
        start_response(f"{status} {reason}", [*headers, ("Content-Length", str(len(body)))])
        return [body]

    # ------------------------------------------------------------ check runs

    def _list_workflow_runs(self, owner: str, repo: str) -> Response:
        repository = self._repo(owner, repo)
        wanted = {key: request.args.get(key) for key in ("event", "head_sha", "status")}
        runs = [run for run in sorted(self.workflow_runs.values(), key=lambda run: -run.id)
                if run.repo is repository and all(value is None or getattr(run, key) == value
                                                  for key, value in wanted.items())]
        return self._page([self._workflow_run_json(run) for run in runs], key="workflow_runs")

    def _rerun_workflow(self, owner: str, repo: str, run_id: int) -> Response:
        run = self.workflow_runs.get(run_id)
        if run is None or run.repo is not self._repo(owner, repo):
            raise ApiError(404, "Not Found")
        if run.status != "completed":
            raise ApiError(403, "This workflow run is not completed")
        run.reruns.append(self._read_body() or {})
        run.run_attempt += 1
        run.status, run.conclusion = "queued", None
        return self._json({}, 201)

    def _workflow_run_json(self, run: WorkflowRun) -> dict[str, Any]:
        url = f"{self.url}/repos/{run.repo.full_name}/actions/runs/{run.id}"
        return {"id": run.id, "name": run.name, "node_id": _node_id("WorkflowRun", run.id), "path": run.path,
                "event": run.event, "head_sha": run.head_sha, "head_branch": "feature", "status": run.status,
                "conclusion": run.conclusion, "run_attempt": run.run_attempt, "run_number": run.id % 1000,
                "workflow_id": 1, "url": url, "html_url": f"https://github.com/{run.repo.full_name}/actions/runs/"
                f"{run.id}", "rerun_url": f"{url}/rerun", "repository": self._repo_json(run.repo),
                "created_at": self._tick(), "updated_at": self._tick()}

    def _list_check_runs(self, owner: str, repo: str, ref: str) -> Response:
        """The check runs on a commit, by name, status and App; `filter=latest` (the default) keeps
        the newest run of each name and App."""
        repository = self._repo(owner, repo)
        runs = [r for r in self.check_runs.values() if r.repo is repository and r.head_sha.startswith(ref)]
        name, status, app_id = (request.args.get(key) for key in ("check_name", "status", "app_id"))
        runs = [r for r in runs if (name is None or r.name == name) and (status is None or r.status == status)
                and (app_id is None or str(self._app_json(r.app_login)["id"]) == app_id)]
        if request.args.get("filter", "latest") == "latest":
            newest: dict[tuple[str, str], CheckRun] = {}
            for run in sorted(runs, key=lambda r: r.id):
                newest[(run.name, run.app_login)] = run
            runs = list(newest.values())
        return self._page([self._check_run_json(r) for r in sorted(runs, key=lambda r: -r.id)],
                          key="check_runs")

    def _create_check_run(self, owner: str, repo: str) -> Response:
        repository, body, identity = self._repo(owner, repo), g.body, g.identity
        if not identity.is_app:
            raise ApiError(403, "You must authenticate via a GitHub App.")
        if body["head_sha"] not in repository.commits:
            raise ApiError(422, f"No commit found for SHA: {body['head_sha']}", kind="rule",
                           errors=[f"No commit found for SHA: {body['head_sha']}"])
        self._check_run_rules(body, creating=True)
        run_id = next(self._ids["check_run"])
        run = CheckRun(repository, run_id, body["name"], body["head_sha"], identity.login)
        run.started_at = body.get("started_at") or self._tick()
        self._apply_check_run(run, body)
        self.check_runs[run.id] = run
        return self._json(self._check_run_json(run), 201)

    def _update_check_run(self, owner: str, repo: str, check_run_id: int) -> Response:
        run = self._check_run(owner, repo, check_run_id)
        self._check_run_rules(g.body, creating=False)
        self._apply_check_run(run, g.body)
        return self._json(self._check_run_json(run))

    def _check_run_rules(self, body: dict[str, Any], *, creating: bool) -> None:
        """What GitHub checks beyond the schema (the update schema carries the first rule itself)."""
        annotations = (body.get("output") or {}).get("annotations") or []
        if len(annotations) > MAX_ANNOTATIONS:
            message = f"Only {MAX_ANNOTATIONS} annotations are allowed per request ({len(annotations)} given)"
            raise ApiError(422, "Validation Failed", kind="rule", errors=[
                {"resource": "CheckRun", "code": "custom", "field": "annotations", "message": message}])
        completing = body.get("status") == "completed" or body.get("completed_at")
        if creating and completing and not body.get("conclusion"):
            raise ApiError(422, "Invalid request.\n\n\"conclusion\" wasn't supplied.", kind="rule",
                           errors=[{"code": "missing_field", "field": "conclusion",
                                    "message": "\"conclusion\" wasn't supplied."}])
        if body.get("conclusion") == "stale":
            raise ApiError(422, "Validation Failed", kind="rule", errors=[
                {"resource": "CheckRun", "code": "custom", "field": "conclusion",
                 "message": "Only GitHub can set the conclusion stale"}])

    def _apply_check_run(self, run: CheckRun, body: dict[str, Any]) -> None:
        for key in ("name", "details_url", "external_id", "started_at"):
            if key in body:
                setattr(run, key, body[key])
        if "status" in body:
            run.status = body["status"]
        if body.get("conclusion"):
            run.status, run.conclusion = "completed", body["conclusion"]
        if run.status == "completed":
            run.completed_at = body.get("completed_at") or run.completed_at or self._tick()
        if "actions" in body:
            run.actions = body["actions"]
        output = body.get("output")
        if output:
            # given fields replace the earlier ones; annotations are appended to the earlier ones
            run.output.update({key: output[key] for key in ("title", "summary", "text", "images")
                               if key in output})
            run.annotations.extend(output.get("annotations") or [])

    def _get_check_run(self, owner: str, repo: str, check_run_id: int) -> Response:
        return self._json(self._check_run_json(self._check_run(owner, repo, check_run_id)))

    def _list_annotations(self, owner: str, repo: str, check_run_id: int) -> Response:
        run = self._check_run(owner, repo, check_run_id)
        keys = ("path", "start_line", "end_line", "start_column", "end_column", "annotation_level", "title",
                "message", "raw_details")
        return self._page([{**{key: a.get(key) for key in keys},
                            "blob_href": f"https://github.com/{run.repo.full_name}/blob/{run.head_sha}/{a['path']}"}
                           for a in run.annotations])

    def _check_run_json(self, run: CheckRun) -> dict[str, Any]:
        url = f"{_api_base()}/repos/{run.repo.full_name}/check-runs/{run.id}"
        pulls = [self._pull_ref(p) for p in self.pulls.values()
                 if p.repo is run.repo and p.head_sha == run.head_sha and not p.from_fork]
        return {
            "id": run.id, "node_id": _node_id("CR", run.id), "head_sha": run.head_sha,
            "external_id": run.external_id,
            "url": url, "html_url": f"https://github.com/{run.repo.full_name}/runs/{run.id}",
            "details_url": run.details_url, "status": run.status, "conclusion": run.conclusion,
            "started_at": run.started_at, "completed_at": run.completed_at,
            "output": {"title": run.output.get("title"), "summary": run.output.get("summary"),
                       "text": run.output.get("text"), "annotations_count": len(run.annotations),
                       "annotations_url": f"{url}/annotations"},
            "name": run.name, "check_suite": {"id": 900_000 + run.id}, "app": self._app_json(run.app_login),
            "pull_requests": pulls,
        }

    def _app_json(self, login: str) -> dict[str, Any]:
        slug = login.removesuffix("[bot]")
        known = GITHUB_ACTIONS_APP
        registered = next((app for app in self.apps.values() if app.slug == slug), None)
        if registered is not None:
            app_id, name, owner = registered.id, registered.name, registered.owner
        elif slug == known["slug"]:
            app_id, name, owner = known["id"], known["name"], known["owner"]
        else:
            app_id, name, owner = zlib.crc32(slug.encode()) % 1_000_000, slug, slug
        return {"id": app_id, "slug": slug, "node_id": _node_id("A", int(app_id)), "name": name,
                "owner": self._user_json(str(owner)), "html_url": f"https://github.com/apps/{slug}"}

    def _pull_ref(self, pull: Pull) -> dict[str, Any]:
        url = f"{_api_base()}/repos/{pull.repo.full_name}"
        repo = {"id": pull.repo.id, "url": url, "name": pull.repo.name}
        return {"url": f"{url}/pulls/{pull.number}", "id": pull.id,
                "number": pull.number, "head": {"ref": pull.head_ref, "sha": pull.head_sha, "repo": repo},
                "base": {"ref": pull.base_ref, "sha": pull.base_sha, "repo": repo}}

    # ------------------------------------------------------------ issues and comments

    def _get_issue(self, owner: str, repo: str, issue_number: int) -> Response:
        pull = self._pull(owner, repo, issue_number)
        base = f"{_api_base()}/repos/{pull.repo.full_name}"
        return self._json({
            "id": pull.id + 1, "node_id": _node_id("I", pull.id), "number": pull.number, "title": pull.title,
            "body": pull.body, "user": self._user_json(pull.user), "state": pull.state, "locked": False,
            "url": f"{base}/issues/{pull.number}", "html_url": f"https://github.com/{pull.repo.full_name}/pull/{pull.number}",
            "comments_url": f"{base}/issues/{pull.number}/comments", "labels": [], "assignees": [],
            "comments": len(self.comments_on(owner, repo, issue_number)), "created_at": pull.created_at,
            "updated_at": pull.created_at, "closed_at": None,
            "author_association": self._association(pull.repo, pull.user),
            "pull_request": {"url": f"{base}/pulls/{pull.number}",
                             "html_url": f"https://github.com/{pull.repo.full_name}/pull/{pull.number}"},
        })

    def _list_comments(self, owner: str, repo: str, issue_number: int) -> Response:
        self._pull(owner, repo, issue_number)
        since = request.args.get("since")
        comments = [c for c in self.comments_on(owner, repo, issue_number)
                    if since is None or c.updated_at >= since]
        return self._page([self._comment_json(c) for c in sorted(comments, key=lambda c: c.id)])

    def _create_comment(self, owner: str, repo: str, issue_number: int) -> Response:
        pull = self._pull(owner, repo, issue_number)
        body = g.body["body"]
        _check_comment_length(body)
        now = self._tick()
        comment_id = next(self._ids["comment"])
        comment = IssueComment(pull.repo, issue_number, comment_id, body, g.identity.login, now, now)
        self.issue_comments[comment.id] = comment
        return self._json(self._comment_json(comment), 201)

    def _get_comment(self, owner: str, repo: str, comment_id: int) -> Response:
        return self._json(self._comment_json(self._comment(owner, repo, comment_id)))

    def _update_comment(self, owner: str, repo: str, comment_id: int) -> Response:
        comment = self._comment(owner, repo, comment_id)
        _check_comment_length(g.body["body"])
        comment.body, comment.updated_at = g.body["body"], self._tick()
        return self._json(self._comment_json(comment))

    def _comment_json(self, comment: IssueComment) -> dict[str, Any]:
        base = f"{_api_base()}/repos/{comment.repo.full_name}"
        return {
            "id": comment.id, "node_id": _node_id("IC", comment.id),
            "url": f"{base}/issues/comments/{comment.id}",
            "html_url": f"https://github.com/{comment.repo.full_name}/pull/{comment.issue_number}"
                        f"#issuecomment-{comment.id}",
            "issue_url": f"{base}/issues/{comment.issue_number}", "body": comment.body,
            "user": self._user_json(comment.login), "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "author_association": self._association(comment.repo, comment.login),
            "performed_via_github_app": None,
            "reactions": {"url": f"{base}/issues/comments/{comment.id}/reactions", "total_count": 0},
        }

    # ------------------------------------------------------------ pull requests

    def _get_pull(self, owner: str, repo: str, pull_number: int) -> Response:
        pull = self._pull(owner, repo, pull_number)
        base = f"{_api_base()}/repos/{pull.repo.full_name}"
        html = f"https://github.com/{pull.repo.full_name}/pull/{pull.number}"
        head_owner = pull.head_full_name.split("/", 1)[0]
        review_comments = sum(len(r.comments) for r in self.reviews_on(owner, repo, pull_number))
        return self._json({
            "url": f"{base}/pulls/{pull.number}", "id": pull.id, "node_id": _node_id("PR", pull.id),
            "html_url": html, "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
            "issue_url": f"{base}/issues/{pull.number}", "commits_url": f"{base}/pulls/{pull.number}/commits",
            "review_comments_url": f"{base}/pulls/{pull.number}/comments",
            "review_comment_url": f"{base}/pulls/comments{{/number}}",
            "comments_url": f"{base}/issues/{pull.number}/comments",
            "statuses_url": f"{base}/statuses/{pull.head_sha}",
            "number": pull.number, "state": pull.state, "locked": False, "title": pull.title,
            "user": self._user_json(pull.user), "body": pull.body, "labels": [], "milestone": None,
            "created_at": pull.created_at, "updated_at": pull.created_at, "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None, "assignee": None, "assignees": [], "requested_reviewers": [],
            "requested_teams": [], "draft": pull.draft,
            "head": {"label": f"{head_owner}:{pull.head_ref}", "ref": pull.head_ref, "sha": pull.head_sha,
                     "user": self._user_json(head_owner), "repo": self._repo_json(pull.head_full_name)},
            "base": {"label": f"{pull.repo.owner}:{pull.base_ref}", "ref": pull.base_ref,
                     "sha": pull.base_sha,
                     "user": self._user_json(pull.repo.owner), "repo": self._repo_json(pull.repo)},
            "_links": {"self": {"href": f"{base}/pulls/{pull.number}"}, "html": {"href": html},
                       "issue": {"href": f"{base}/issues/{pull.number}"}},
            "author_association": self._association(pull.repo, pull.user), "auto_merge": None,
            "merged": False, "mergeable": True, "rebaseable": True, "mergeable_state": "clean",
            "merged_by": None,
            "comments": len(self.comments_on(owner, repo, pull_number)), "review_comments": review_comments,
            "maintainer_can_modify": pull.from_fork, "commits": 1,
            "additions": sum(f.additions or 0 for f in pull.files),
            "deletions": sum(f.deletions or 0 for f in pull.files), "changed_files": len(pull.files),
        })

    def _list_files(self, owner: str, repo: str, pull_number: int) -> Response:
        pull = self._pull(owner, repo, pull_number)
        return self._page([self._file_json(pull, f) for f in pull.files[:3000]])  # GitHub lists 3000 at most

    def _file_json(self, pull: Pull, entry: PullFile) -> dict[str, Any]:
        path = quote(entry.filename)
        data: dict[str, Any] = {
            "sha": entry.sha, "filename": entry.filename, "status": entry.status,
            "additions": entry.additions,
            "deletions": entry.deletions, "changes": (entry.additions or 0) + (entry.deletions or 0),
            "blob_url": f"https://github.com/{pull.head_full_name}/blob/{pull.head_sha}/{path}",
            "raw_url": f"https://github.com/{pull.head_full_name}/raw/{pull.head_sha}/{path}",
            "contents_url": f"{_api_base()}/repos/{pull.head_full_name}/contents/{path}?ref={pull.head_sha}",
        }
        if entry.patch is not None:
            data["patch"] = entry.patch
        if entry.previous_filename is not None:
            data["previous_filename"] = entry.previous_filename
        return data

    # ------------------------------------------------------------ reviews

    def _list_reviews(self, owner: str, repo: str, pull_number: int) -> Response:
        pull = self._pull(owner, repo, pull_number)
        login = g.identity.login if g.identity else None
        visible = [r for r in self.reviews_on(owner, repo, pull_number)
                   if r.state != "PENDING" or r.login == login]
        return self._page([self._review_json(pull, r) for r in visible])

    def _get_review(self, owner: str, repo: str, pull_number: int, review_id: int) -> Response:
        pull = self._pull(owner, repo, pull_number)
        review = self.reviews.get(review_id)
        if review is None or review.repo is not pull.repo or review.pull_number != pull_number:
            raise ApiError(404, "Not Found")
        return self._json(self._review_json(pull, review))

    def _list_review_comments(self, owner: str, repo: str, pull_number: int) -> Response:
        pull = self._pull(owner, repo, pull_number)
        reviews = [r for r in self.reviews_on(owner, repo, pull_number) if r.state != "PENDING"]
        return self._page([self._review_comment_json(pull, r, c) for r in reviews for c in r.comments])

    def _create_review(self, owner: str, repo: str, pull_number: int) -> Response:
        """GitHub creates the review with all its comments or refuses the whole of it."""
        pull, body, login = self._pull(owner, repo, pull_number), g.body or {}, g.identity.login
        commit_id = body.get("commit_id") or pull.head_sha
        if commit_id != pull.head_sha:  # GitHub accepts older commits of the PR too; the publisher must not
            _unprocessable(["The commitOID is not part of the pull request"])
        event = body.get("event")
        if event in ("APPROVE", "REQUEST_CHANGES") and login == pull.user:
            action = "approve" if event == "APPROVE" else "request changes on"
            _unprocessable([f"Can not {action} your own pull request"])
        pending = [r for r in self.reviews_on(owner, repo, pull_number) if r.state == "PENDING"]
        if event is None and any(r.login == login for r in pending):
            _unprocessable(["User can only have one pending review per pull request"])
        comments, problems = [], []
        for entry in body.get("comments") or []:
            comment_or_problem = self._anchor(pull, entry)
            if isinstance(comment_or_problem, str):
                problems.append(comment_or_problem)
            else:
                comments.append(comment_or_problem)
        if problems:
            _unprocessable([_join(problems)])
        state = REVIEW_STATES[event]
        submitted_at = None if state == "PENDING" else self._tick()
        review = Review(pull.repo, pull_number, next(self._ids["review"]), login, body.get("body") or "",
                        state, commit_id, submitted_at, comments)
        self.reviews[review.id] = review
        return self._json(self._review_json(pull, review))

    def _anchor(self, pull: Pull, entry: dict[str, Any]) -> ReviewComment | str:
        """The review comment anchored in the diff, or why GitHub could not resolve it."""
        diff = pull.file(entry["path"])
        if diff is None:
            return "Path could not be resolved"
        if entry.get("line") is None and entry.get("position") is not None:
            at = diff.at_position(entry["position"])
            if at is None:
                return "Line could not be resolved"
            if at.kind == "-":
                return self._review_comment(diff, entry, at, at.old, "LEFT", None, None)
            return self._review_comment(diff, entry, at, at.new, "RIGHT", None, None)
        side = entry.get("side") or "RIGHT"
        end = diff.find(entry["line"], side) if entry.get("line") is not None and side in SIDES else None
        if end is None:
            return "Line could not be resolved"
        start_line, start_side = entry.get("start_line"), None
        if start_line is not None:
            start_side = entry.get("start_side") or side
            start = diff.find(start_line, start_side) if start_side in SIDES else None
            if start is None:
                return "Line could not be resolved"
            if start.hunk != end.hunk:
                return "Pull request review thread start line must be part of the same hunk as the line."
            if start.position >= end.position:
                return "Pull request review thread start line must precede the end line."
        return self._review_comment(diff, entry, end, entry["line"], side, start_line, start_side)

    def _review_comment(self, diff: PullFile, entry: dict[str, Any], at: DiffLine, line: int | None,
                        side: str, start_line: int | None, start_side: str | None) -> ReviewComment:
        return ReviewComment(next(self._ids["review_comment"]), diff.filename, entry["body"], line, side,
                             start_line, start_side, at.position, diff.diff_hunk(at))

    def _review_json(self, pull: Pull, review: Review) -> dict[str, Any]:
        base = f"{_api_base()}/repos/{pull.repo.full_name}/pulls/{pull.number}"
        html = f"https://github.com/{pull.repo.full_name}/pull/{pull.number}#pullrequestreview-{review.id}"
        data: dict[str, Any] = {
            "id": review.id, "node_id": _node_id("PRR", review.id), "user": self._user_json(review.login),
            "body": review.body, "state": review.state, "html_url": html, "pull_request_url": base,
            "author_association": self._association(pull.repo, review.login),
            "_links": {"html": {"href": html}, "pull_request": {"href": base}}, "commit_id": review.commit_id,
        }
        if review.submitted_at is not None:
            data["submitted_at"] = review.submitted_at
        return data

    def _review_comment_json(self, pull: Pull, review: Review, comment: ReviewComment) -> dict[str, Any]:
        base = f"{_api_base()}/repos/{pull.repo.full_name}/pulls"
        html = f"https://github.com/{pull.repo.full_name}/pull/{pull.number}#discussion_r{comment.id}"
        return {
            "id": comment.id, "node_id": _node_id("PRRC", comment.id), "url": f"{base}/comments/{comment.id}",
            "pull_request_review_id": review.id, "diff_hunk": comment.diff_hunk, "path": comment.path,
            "position": comment.position, "original_position": comment.position,
            "commit_id": review.commit_id, "original_commit_id": review.commit_id,
            "user": self._user_json(review.login), "body": comment.body,
            "created_at": review.submitted_at, "updated_at": review.submitted_at, "html_url": html,
            "pull_request_url": f"{base}/{pull.number}",
            "author_association": self._association(pull.repo, review.login),
            "_links": {"self": {"href": f"{base}/comments/{comment.id}"}, "html": {"href": html},
                       "pull_request": {"href": f"{base}/{pull.number}"}},
            "start_line": comment.start_line, "original_start_line": comment.start_line,
            "start_side": comment.start_side, "line": comment.line, "original_line": comment.line,
            "side": comment.side, "subject_type": "line",
        }


# ------------------------------------------------------------------ module helpers

def _api_base() -> str:
    """The fake's own root as the client reached it, so PyGithub follows the URLs it returns."""
    return request.host_url.rstrip("/")


def _int_arg(name: str, default: int) -> int:
    try:
        return int(request.args.get(name, default))
    except ValueError:
        return default


def _new_private_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


def _basic_auth_token(header: str) -> str | None:
    """The password of `Authorization: Basic base64(user:password)`: git sends the token there."""
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return None
    try:
        _, _, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return password or None


def _query_pairs(query: str) -> list[tuple[str, str]]:
    return [tuple(part.split("=", 1)) if "=" in part else (part, "") for part in query.split("&") if part]


def _http_backend(git_dir: Path, rest: str, environ: dict[str, Any]) -> tuple[int, list[tuple[str, str]],
                                                                               bytes]:
    """Run `git http-backend` (CGI) for one request; any reachable SHA may be fetched, as on GitHub."""
    body = get_input_stream(environ).read()
    config = {"uploadpack.allowReachableSHA1InWant": "true", "uploadpack.allowAnySHA1InWant": "false",
              "safe.directory": "*"}
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "GIT_PROJECT_ROOT": str(git_dir),
           "GIT_HTTP_EXPORT_ALL": "1",
           "PATH_INFO": rest, "REQUEST_METHOD": environ.get("REQUEST_METHOD", "GET"),
           "QUERY_STRING": environ.get("QUERY_STRING", ""), "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
           "CONTENT_LENGTH": str(len(body)), "REMOTE_ADDR": "127.0.0.1", "REMOTE_USER": "x-access-token",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(git_dir), "GIT_CONFIG_COUNT": str(len(config))}
    for index, (key, value) in enumerate(config.items()):
        env.update({f"GIT_CONFIG_KEY_{index}": key, f"GIT_CONFIG_VALUE_{index}": value})
    for header in ("HTTP_GIT_PROTOCOL", "HTTP_CONTENT_ENCODING"):
        if environ.get(header):
            env[header] = environ[header]
    out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60).stdout
    head, _, payload = out.partition(b"\r\n\r\n")
    if not payload and b"\n\n" in head:
        head, _, payload = out.partition(b"\n\n")
    status, headers = 200, []
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.split()[0])
        elif key and key.lower() != "content-length":
            headers.append((key, value.strip()))
    return status, headers, payload


def _failure_error(failure: InjectedFailure) -> ApiError:
    headers = {} if failure.retry_after is None else {"Retry-After": str(failure.retry_after)}
    return ApiError(failure.status, failure.message, headers=headers)


def _check_comment_length(body: str) -> None:
    if len(body) > MAX_COMMENT_LENGTH:
        raise ApiError(422, "Validation Failed", kind="rule", errors=[
            {"resource": "IssueComment", "code": "unprocessable", "field": "data",
             "message": f"Body is too long (maximum is {MAX_COMMENT_LENGTH} characters)"}])


def _unprocessable(errors: list[str]) -> None:
    """GitHub's answer to a review it cannot create: "Unprocessable Entity" and a list of strings."""
    raise ApiError(422, "Unprocessable Entity", kind="rule", errors=errors)


def _describe(error: ValidationError) -> str:
    """A schema error worded like GitHub's "Invalid request." details."""
    where = "/".join(f"properties/{part}" if isinstance(part, str) else "items"
                     for part in error.absolute_path)
    prefix = f"For '{where}', " if where else ""
    value = error.instance
    if error.validator == "required":
        missing = re.match(r"'(.*)' is a required property", error.message)
        return f"{prefix}\"{missing.group(1) if missing else error.message}\" wasn't supplied."
    if error.validator == "type":
        kinds = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return f"{prefix}{_ruby(value)} is not {' or '.join(_article(k) for k in kinds)}."
    if error.validator == "enum":
        return f"{prefix}{_ruby(value)} is not a member of {json.dumps(error.validator_value)}."
    if error.validator in ("anyOf", "oneOf"):
        return f"{prefix}No subschema in \"{error.validator}\" matched."
    if error.validator == "maxItems":
        return f"{prefix}the array has {len(value)} items (maximum is {error.validator_value})."
    if error.validator == "maxLength":
        return f"{prefix}the string has {len(value)} characters (maximum is {error.validator_value})."
    return f"{prefix}{error.message}"


def _article(kind: str) -> str:
    articles = {"null": "null", "integer": "an integer", "object": "an object", "array": "an array"}
    return articles.get(kind, f"a {kind}")


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    """A fake GitHub served on 127.0.0.1 for one test (import this fixture into a test module or conftest)."""
    with FakeGitHub().serve() as fake:
        yield fake
