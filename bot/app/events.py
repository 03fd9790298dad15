"""What a GitHub webhook event asks of the App: jobs to run, a head to record, or nothing.

Pure functions of the event name and payload (plus a look-up of a pull request's latest job,
for re-runs of a check run or suite), so the receiver stays a thin HTTP layer and this is tested alone.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from difforacle.bot.acceptance import pull_key
from difforacle.bot.comment_commands import NotACommentCommand, comment_event, wants_answer
from difforacle.bot.summary import ACCEPT_ALL_ACTION

from .model import PullRequestJob

RUN_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")
RECORDED_EVENTS = ("installation", "installation_repositories")
RERUN_EVENTS = ("check_run", "check_suite")  # "Re-run" on our check run, "Re-run all checks" on its suite
ACCEPT_ALL_COMMAND = "/difforacle accept all"  # what a click on the check run's "Accept all" stands for
COMMENT_EVENT = "issue_comment"  # `/difforacle accept` and `rerun` (bot.comment_commands)
MAX_COMMENT = 2_000  # characters of a command's comment kept in its job (the command is its first line)
MAX_BODY = 20_000  # characters of a pull request's description kept in its job (the engine reads as many)
SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


class BadPayload(ValueError):
    """The payload lacks a field the event must have (answered 400)."""


@dataclass(frozen=True)
class Head:
    """A pull request's new head, recorded even when nothing runs (it supersedes older jobs)."""

    job: PullRequestJob
    before: str | None = None  # the head it replaced, if the event says
    updated: float | None = None  # the pull request's updated_at in the event (POSIX seconds), if any
    first: bool = False  # an `opened` event: the pull request's first head, older than any other


@dataclass(frozen=True)
class Route:
    kind: str  # "run" (jobs), "skip" (recognised, nothing to run), "record", "ping", "ignore"
    reason: str = ""
    heads: tuple[Head, ...] = ()  # to record; a "run" runs their jobs
    comment: tuple[str, int] | None = None  # a comment created on a pull request: (pull_key, its id)


def route(event: str, payload: dict[str, Any], delivery: str,
          latest_job: Callable[[str], PullRequestJob | None]) -> Route:
    """The route of one delivery; BadPayload if a field the event needs is missing or mistyped."""
    if event == "ping":
        return Route("ping", str(payload.get("zen", "")))
    if event in RECORDED_EVENTS:
        return Route("record", f"{event}.{payload.get('action', '')}")
    if event == "pull_request" and payload.get("action") in RUN_ACTIONS:
        return _pull_request(payload, delivery)
    if event == "pull_request" and payload.get("action") == "closed":
        return Route("skip", "the pull request is closed")
    if event in RERUN_EVENTS and payload.get("action") == "rerequested":
        return _rerequested(event, payload, delivery, latest_job)
    if event == "check_run" and payload.get("action") == "requested_action":
        return _requested_action(payload, delivery, latest_job)
    if event == COMMENT_EVENT and payload.get("action") == "created":
        return _comment(payload, delivery)
    return Route("ignore", f"{event}.{payload.get('action', '')}".rstrip("."))


def _pull_request(payload: dict[str, Any], delivery: str) -> Route:
    action = payload["action"]
    pull = _get(payload, "pull_request", dict)
    head, base = _object(pull.get("head")), _object(pull.get("base"))
    head_repo = _object(head.get("repo"))  # null when the fork was deleted
    job = PullRequestJob(
        delivery=delivery,
        installation_id=_installation(payload),
        repository=_get(payload, "repository.full_name", str),
        repository_id=_get(payload, "repository.id", int),
        number=_get(payload, "pull_request.number", int),
        base_sha=_sha(payload, "pull_request.base.sha"),
        head_sha=_sha(payload, "pull_request.head.sha"),
        base_ref=str(base.get("ref") or ""),
        head_ref=str(head.get("ref") or ""),
        title=str(pull.get("title") or ""),
        body=str(pull.get("body") or "")[:MAX_BODY],
        head_repository=str(head_repo.get("full_name") or ""),
        draft=bool(pull.get("draft")),
    )
    before = payload.get("before") if action == "synchronize" else None
    before = before if isinstance(before, str) and SHA.fullmatch(before) else None
    head = Head(job, before, _timestamp(pull.get("updated_at")), first=action == "opened")
    if pull.get("state") == "closed":
        return Route("skip", "the pull request is closed")
    if job.draft and action != "ready_for_review":
        return Route("skip", "the pull request is a draft (it runs when marked ready for review)", (head,))
    return Route("run", action, (head,))


def _rerequested(item: str, payload: dict[str, Any], delivery: str,
                 latest_job: Callable[[str], PullRequestJob | None]) -> Route:
    """A re-run of our check run or of its check suite: the pull requests at that head run again.

    GitHub lists the pull requests of a check run or suite only when their head branch is in
    the repository; for a fork's, our check run's `external_id` (the pull request's key,
    "owner/name#number") names it. A suite has no such id: "Re-run all checks" on a fork's pull
    request finds nothing, and our check run's own "Re-run" is the way.
    """
    head_sha = _sha(payload, f"{item}.head_sha")
    repository = _get(payload, "repository.full_name", str)
    installation = _installation(payload)
    entries = _listed_pulls(payload[item])
    external = _external_pull(payload[item], repository)
    if external is not None:
        entries.setdefault(external, {})
    heads: list[Head] = []
    for number, entry in sorted(entries.items()):
        known = latest_job(pull_key(repository, number))
        if known is not None and known.head_sha != head_sha:
            continue  # the check run is of an older head: nothing is published for it any more
        head, base = _object(entry.get("head")), _object(entry.get("base"))
        if known is not None:
            job = dataclasses.replace(known, delivery=delivery, installation_id=installation)
        elif head.get("sha") == head_sha and base.get("sha"):
            job = PullRequestJob(delivery=delivery, installation_id=installation, repository=repository,
                                 repository_id=_get(payload, "repository.id", int), number=number,
                                 base_sha=str(base["sha"]), head_sha=head_sha,
                                 base_ref=str(base.get("ref") or ""), head_ref=str(head.get("ref") or ""),
                                 head_repository=repository)
        else:
            continue
        heads.append(Head(job))
    if not heads:
        return Route("skip", f"no open pull request has {head_sha[:12]} as its head")
    return Route("run", "rerequested", tuple(heads))


def _requested_action(payload: dict[str, Any], delivery: str,
                      latest_job: Callable[[str], PullRequestJob | None]) -> Route:
    """A click on our check run's "Accept all" button: the command `accept all`, by whoever
    clicked, answered as if they had commented it (the same write-access check), on the report of
    that check run's head. The pull request is the check run's `external_id` (ours name it; a
    fork's pull request is listed nowhere else), else the one GitHub lists."""
    identifier = _get(payload, "requested_action.identifier", str)
    if identifier != ACCEPT_ALL_ACTION:
        return Route("ignore", f"check_run.requested_action {identifier!r}")
    repository = _get(payload, "repository.full_name", str)
    head_sha = _sha(payload, "check_run.head_sha")
    external = _external_pull(payload["check_run"], repository)
    numbers = [external] if external is not None else list(_listed_pulls(payload["check_run"]))
    if len(numbers) != 1:
        return Route("skip", f"the check run names {len(numbers)} pull requests, not one")
    known = latest_job(pull_key(repository, numbers[0]))
    if known is not None and known.head_sha != head_sha:
        return Route("skip", f"the check run is of {head_sha[:12]}, an older head of the pull request")
    sender = _object(payload.get("sender"))
    job = PullRequestJob(delivery=delivery, installation_id=_installation(payload), repository=repository,
                         repository_id=_get(payload, "repository.id", int), number=numbers[0], base_sha="",
                         head_sha=head_sha, check_run_id=_get(payload, "check_run.id", int),
                         commenter=_get(payload, "sender.login", str),
                         commenter_type=str(sender.get("type") or "User"), comment=ACCEPT_ALL_COMMAND)
    return Route("run", "requested_action", (Head(job),))


def _listed_pulls(item: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The pull requests a check run or suite lists, by number (only those whose head branch is in
    the repository: GitHub lists no fork's)."""
    listed = item.get("pull_requests")
    return {int(pr["number"]): pr for pr in (listed if isinstance(listed, list) else [])
            if isinstance(pr, dict) and isinstance(pr.get("number"), int)}


def _external_pull(item: dict[str, Any], repository: str) -> int | None:
    """The number of the pull request our check run's `external_id` (its `pull_key`) names, if it
    names one of `repository`'s."""
    external = str(item.get("external_id") or "")
    number = external.rpartition("#")[2]
    return int(number) if external.startswith(f"{repository}#") and number.isdigit() else None


def _comment(payload: dict[str, Any], delivery: str) -> Route:
    """A command on a pull request becomes a job the worker answers (permission, state, reply) and
    which then runs the analysis again on the head it reads from GitHub; anything else is skipped
    here, without a request."""
    try:
        comment = comment_event(payload, _get(payload, "repository.full_name", str))
    except NotACommentCommand as exc:
        return Route("ignore", str(exc))
    except ValueError as exc:
        raise BadPayload(str(exc)) from None
    seen = (pull_key(comment.repository, comment.number), comment.comment_id)
    if not wants_answer(comment):
        return Route("skip", "the comment is no /difforacle command of a person", comment=seen)
    job = PullRequestJob(delivery=delivery, installation_id=_installation(payload),
                         repository=comment.repository, repository_id=_get(payload, "repository.id", int),
                         number=comment.number, base_sha="", head_sha="", comment_id=comment.comment_id,
                         commenter=comment.login, commenter_type=comment.user_type,
                         comment=comment.body[:MAX_COMMENT])
    return Route("run", "command", (Head(job),), comment=seen)


def _timestamp(value: Any) -> float | None:
    """GitHub's "2024-03-01T10:00:05Z" as POSIX seconds; None if absent or not a time."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def _object(value: Any) -> dict[str, Any]:
    """An optional object of the payload: {} when absent, null or of another type."""
    return value if isinstance(value, dict) else {}


def _installation(payload: dict[str, Any]) -> int:
    try:
        return _get(payload, "installation.id", int)
    except BadPayload:
        raise BadPayload("the payload names no installation: is this webhook a GitHub App's?") from None


def _get(payload: dict[str, Any], dotted: str, kind: type) -> Any:
    value: Any = payload
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise BadPayload(f"the payload lacks {dotted}")
        value = value[part]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BadPayload(f"the payload's {dotted} is not a {kind.__name__}")
    return value


def _sha(payload: dict[str, Any], dotted: str) -> str:
    value = _get(payload, dotted, str)
    if not SHA.fullmatch(value):
        raise BadPayload(f"the payload's {dotted} is not a commit SHA")
    return value
