"""Answering a `/difforacle` command commented on a pull request, for the Action and the App alike.

The event (`issue_comment`, action `created`) names the comment and the pull request's number,
never its commits: `answer` reads the pull request from GitHub, checks the commenter's permission
(GitHub's "repository permissions for a user": admin, maintain or write may accept; anyone else
gets a polite refusal and nothing changes), records an `accept` in the summary comment's hidden
state (`bot.acceptance`), and replies. Comments by bots and comments that are no command are
ignored without a request.

Why the caller then runs the analysis again (`Answer.rerun`): a check run is made from the whole
report, which only the engine has (no report is stored anywhere); run again on the pull
request's head, it reads the acceptances back from the state, so the check turns green as soon
as nothing unaccepted is left. A comment already answered (its id is in the state: a redelivered
webhook, or the Action's second step of the same workflow) is not answered twice, but its
permission is checked again before anything runs. A refusal leaves the summary alone (anyone may
comment: their comments must not rewrite it, nor grow its state); its reply carries the
comment's id in a hidden mark instead, by which a redelivery finds it answered.

The App's check run has an "Accept all" button; a click is answered here as the comment
`/difforacle accept all` by whoever clicked (`CommentEvent` without a comment id, with the check
run's head, which must still be the pull request's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .acceptance import (
    HELP,
    State,
    StateSeal,
    decode_state,
    is_bot,
    may_accept,
    now_utc,
    parse_command,
    pull_key,
    refusal,
    reply,
    resolve,
    unaccept_reply,
    with_state,
)
from .github_client import GitHubClient, PullDetails
from .publisher import summary_among

ANSWER_MARK = "<!-- difforacle:answer {} -->"  # at the end of a reply that changed no state


class NotACommentCommand(ValueError):
    """The event is not a comment on a pull request (the message says what it is)."""


@dataclass(frozen=True)
class CommentEvent:
    """The parts of an `issue_comment` event a command needs."""

    repository: str  # owner/name
    number: int  # the pull request's
    comment_id: int
    login: str
    body: str
    user_type: str = "User"
    # the head the command was given on, where the event names one (a click on a check run's button,
    # comment_id 0): the pull request's head must still be it
    head_sha: str = ""


@dataclass(frozen=True)
class Answer:
    # "ignored" | "refused" | "invalid" | "accepted" | "unaccepted" | "rerun" | "help" | "closed" |
    # "no report" | "outdated" (a button of an older head's check run)
    status: str
    detail: str
    rerun: bool = False  # the analysis should run again on `pull`'s head
    pull: PullDetails | None = None


def comment_event(payload: Any, repository: str = "") -> CommentEvent:
    """The comment of an `issue_comment` payload; NotACommentCommand when it is no new comment on a
    pull request (an issue's comment, an edit, a deletion); ValueError for a malformed payload."""
    if not isinstance(payload, dict) or not isinstance(payload.get("comment"), dict) \
            or not isinstance(payload.get("issue"), dict):
        raise NotACommentCommand("not an issue_comment event")
    if payload.get("action") != "created":
        raise NotACommentCommand(f"a comment {payload.get('action') or 'event'}, not one created")
    issue, comment = payload["issue"], payload["comment"]
    if not issue.get("pull_request"):
        raise NotACommentCommand("a comment on an issue, not on a pull request")
    user = comment.get("user") if isinstance(comment.get("user"), dict) else {}
    try:
        return CommentEvent(repository or str(payload["repository"]["full_name"]), _integer(issue["number"]),
                            _integer(comment["id"]), str(user.get("login") or ""),
                            str(comment.get("body") or ""), str(user.get("type") or "User"))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"the issue_comment event lacks {exc}") from None


def _integer(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("an integer number or id")
    return value


def wants_answer(event: CommentEvent, bot_login: str = "") -> bool:
    """Whether the comment is a command from a person (no request needed to tell)."""
    return (parse_command(event.body) is not None and not is_bot(event.login, event.user_type)
            and event.login != bot_login)


def answer(client: GitHubClient, event: CommentEvent, bot_login: str,
           state_secret: bytes | None = None) -> Answer:
    """Check, record and reply (see the module docstring); GitHubError when GitHub fails. With
    `state_secret`, the summary is the comment whose state it sealed (`acceptance.StateSeal`)."""
    command = parse_command(event.body)
    if command is None or not wants_answer(event, bot_login):
        return Answer("ignored", "not a command" if command is None else f"a bot's command ({event.login})")
    pull = client.pull_request(event.number)
    comments = client.issue_comments(event.number)
    seal = StateSeal(state_secret, pull_key(event.repository, event.number)) if state_secret else None
    summary = summary_among(comments, bot_login, seal)
    state, problem = decode_state(summary.body if summary else "", seal)
    answered = event.comment_id in state.handled

    def respond(text: str, new_state: State) -> None:
        if answered:
            return
        client.create_issue_comment(event.number, text)
        if summary is not None:  # the comment's id, remembered as answered (with any acceptance)
            client.edit_issue_comment(event.number, summary.id, with_state(summary.body, new_state.answered(
                event.comment_id), seal))

    permission = client.permission(event.login)
    if not may_accept(permission):
        mark = ANSWER_MARK.format(event.comment_id)  # a click has no comment: each is answered once
        replied = event.comment_id and any(c.login == bot_login and c.body.endswith(mark) for c in comments)
        if not answered and not replied:
            client.create_issue_comment(event.number, f"{refusal(event.login, permission)}\n\n{mark}")
        return Answer("refused", f"{event.login} has {permission or 'no'} access", pull=pull)
    if pull.state != "open":
        respond(f"@{event.login} this pull request is {pull.state}: there is nothing to run.", state)
        return Answer("closed", f"the pull request is {pull.state}", pull=pull)
    if event.head_sha and event.head_sha != pull.head_sha:
        respond(f"@{event.login} that check run is of {event.head_sha[:12]}, and the pull request has moved "
                f"on to {pull.head_sha[:12]}: nothing was accepted. The newest check run shows what differs "
                "now, with its own button.", state)
        return Answer("outdated", f"the check run is of {event.head_sha[:12]}, not the head", pull=pull)
    if command.action == "invalid":
        respond(reply(command, event.login), state)
        return Answer("invalid", command.problem, pull=pull)
    if command.action == "rerun":
        respond(reply(command, event.login), state)
        return Answer("rerun", f"{event.login} asked for a rerun", rerun=True, pull=pull)
    if command.action == "help":
        respond(f"@{event.login} {HELP}", state)
        return Answer("help", f"{event.login} asked for help", pull=pull)
    if summary is None or problem is not None:
        why = ("difforacle has not reported on this pull request yet" if summary is None else problem)
        respond(f"@{event.login} there is nothing to accept: {why}. `/difforacle rerun` runs the analysis.",
                state)
        return Answer("no report", str(why), pull=pull)
    resolution = resolve(command, state, event.comment_id)
    if command.action == "unaccept":
        taken, removed = state.unaccept(resolution.fingerprints)
        respond(unaccept_reply(event.login, resolution, removed), state if answered else taken)
        detail = f"{event.login} took back {len(removed)} acceptance(s)"
        return Answer("unaccepted", detail, rerun=bool(removed), pull=pull)
    accepted, new = state.accept(resolution.fingerprints, event.login, now_utc())
    if answered:  # already recorded when it was answered
        accepted = state
    respond(reply(command, event.login, resolution, len(new)), accepted)
    detail = f"{event.login} accepted {', '.join(resolution.ids) or 'nothing'}"
    return Answer("accepted", detail, rerun=bool(resolution.ids), pull=pull)
