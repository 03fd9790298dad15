"""The unit of work of the App, one pull request at one head commit, and the App's own error.

A job is plain data so that it crosses the queue as JSON and can be logged; it never holds
a token (tokens are minted by the worker when the job runs, and expire). A `/difforacle` command
commented on the pull request is a job too (`comment_id` set), and so is a click on our check run's
"Accept all" button (`check_run_id` set, the command `accept all`): the event names no base, so it is
empty until the worker reads it from GitHub (`runner.run_command`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from difforacle.bot.acceptance import pull_key


class AppError(Exception):
    """A problem with the App's own setup that its operator must fix (a setting, the queue's storage,
    the sandbox image, a port): one line, exit status 2. The engine's `SetupError` is about a run's
    input instead (a ref, an interpreter)."""


@dataclass(frozen=True)
class PullRequestJob:
    delivery: str  # the X-GitHub-Delivery that asked for it
    installation_id: int
    repository: str  # "owner/name" of the base repository
    repository_id: int
    number: int
    base_sha: str
    head_sha: str
    base_ref: str = ""
    head_ref: str = ""
    title: str = ""
    body: str = ""  # the pull request's description (the engine reads it as evidence of intent)
    head_repository: str = ""  # "owner/name" the head commit lives in (a fork's differs)
    draft: bool = False
    comment_id: int = 0  # a command's comment (0: not a command)
    commenter: str = ""  # its author's login
    commenter_type: str = ""  # "User" or "Bot"
    comment: str = ""  # its text (the command)
    check_run_id: int = 0  # a click on a button of this check run of ours: the command it stands for

    @property
    def is_command(self) -> bool:
        return self.comment_id > 0 or self.check_run_id > 0

    @property
    def pull_key(self) -> str:
        """Names the pull request across head commits: coalescing and publishing locks use it."""
        return pull_key(self.repository, self.number)

    @property
    def job_id(self) -> str:
        """Names this pull request at this head commit: the same work, whatever delivery asked (a
        command: its comment)."""
        if self.check_run_id:  # each click is one (a delivery that comes again is run once, as any)
            return f"{self.pull_key}!check-run-{self.check_run_id}-{self.delivery}"
        if self.is_command:
            return f"{self.pull_key}!comment-{self.comment_id}"
        return f"{self.pull_key}@{self.head_sha}"

    @property
    def from_fork(self) -> bool:
        return bool(self.head_repository) and self.head_repository != self.repository

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PullRequestJob:
        return cls(**json.loads(text))
