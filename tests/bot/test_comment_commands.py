"""`/difforacle` commands on a pull request (`difforacle.bot.comment_commands`) against the fake
GitHub: who may accept, what is recorded in the summary comment, what is answered, and how the
next publication judges the accepted differences."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from support.action import WEBHOOKS
from support.fake_github import FakeGitHub
from support.report_samples import json_difference

from difforacle.bot.acceptance import (
    STATE_OPEN,
    Acceptance,
    State,
    StateSeal,
    decode_state,
    fingerprint,
    pull_key,
    with_state,
)
from difforacle.bot.comment_commands import (
    CommentEvent,
    NotACommentCommand,
    answer,
    comment_event,
)
from difforacle.bot.github_client import GitHubClient, Retries
from difforacle.bot.publisher import ACTIONS_BOT, Published, Publisher, PublishSettings, PullRequestContext
from difforacle.bot.summary import ACCEPT_ALL_BUTTON, ACCEPT_HINT, SUMMARY_MARKER
from difforacle.bot.workflow import Workflow

OWNER, REPO, NUMBER = "octo", "durations", 7
BASE, HEAD = "a" * 40, "b" * 40
FAST = Retries(total=3, backoff_factor=0, secondary_rate_wait=0, seconds_between_requests=0,
               seconds_between_writes=0)
PATCH = "@@ -10,2 +10,2 @@ def parse(text):\n     value = text.strip()\n-    return int(value)\n" \
        "+    return 2\n"
FAILING = PublishSettings(fail_on="difference")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as server:
        server.add_token("rw", ACTIONS_BOT)
        server.add_pull(OWNER, REPO, NUMBER, BASE, HEAD,
                        [{"filename": "pkg/parse.py", "status": "modified", "patch": PATCH}])
        server.add_collaborator(OWNER, REPO, "ann", "maintain")
        server.add_collaborator(OWNER, REPO, "tom", "triage")
        yield server


def fixture(name: str) -> dict:
    return json.loads((WEBHOOKS / f"{name}.json").read_text(encoding="utf-8"))


def _client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient(f"{OWNER}/{REPO}", "rw", api_url=fake.url, retries=FAST)


def _report(inputs: tuple[int, ...] = (1, 2)) -> dict:
    tests = [f"def test_parse():\n    x = parse('{n}h')\n    assert x == 1\n" for n in inputs]
    differences = [json_difference(n, line=11, test=test, pin_base=test) for n, test in enumerate(tests, 1)]
    return {"schema": "difforacle.report/1", "base": BASE, "head": HEAD, "differences": differences,
            "coverage": {"changed_lines": 1, "changed_lines_covered": 1, "uncovered": {}},
            "stats": {"sequences": 10, "seconds": 1.0}, "notes": []}


def _publish(fake: FakeGitHub, tmp_path: Path, settings: PublishSettings = FAILING,
             report: dict | None = None) -> Published:
    workflow = Workflow({"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}, io.StringIO())
    publisher = Publisher(_client(fake), PullRequestContext(f"{OWNER}/{REPO}", NUMBER, BASE, HEAD), settings,
                          workflow)
    publisher.start()
    return publisher.finish(report or _report(), str(tmp_path / "report.json"))


def _comment(fake: FakeGitHub, body: str, login: str) -> CommentEvent:
    seeded = fake.add_issue_comment(OWNER, REPO, NUMBER, body, login=login)
    return CommentEvent(f"{OWNER}/{REPO}", NUMBER, seeded.id, login, body,
                        "Bot" if login.endswith("[bot]") else "User")


def _summary(fake: FakeGitHub) -> str:
    [summary] = [c for c in fake.comments_on(OWNER, REPO, NUMBER)
                 if c.login == ACTIONS_BOT and c.body.startswith(SUMMARY_MARKER)]
    return summary.body


def _replies(fake: FakeGitHub) -> list[str]:
    return [c.body for c in fake.comments_on(OWNER, REPO, NUMBER)
            if c.login == ACTIONS_BOT and not c.body.startswith(SUMMARY_MARKER)]


def test_a_writer_accepts_and_the_next_publication_turns_the_check_green(fake: FakeGitHub,
                                                                         tmp_path: Path) -> None:
    first = _publish(fake, tmp_path)
    assert (first.conclusion, first.failed, first.review_comments) == ("failure", True, 2)
    ids = decode_state(_summary(fake))[0].ids
    assert list(ids) == ["D1", "D2"] and ACCEPT_HINT in _summary(fake)

    command = _comment(fake, "/difforacle accept D1 D2", "ann")
    answered = answer(_client(fake), command, ACTIONS_BOT)

    assert (answered.status, answered.rerun) == ("accepted", True)
    assert answered.pull is not None and answered.pull.head_sha == HEAD
    [confirmation] = _replies(fake)
    assert confirmation.startswith("@ann accepted D1, D2: they no longer fail the check")
    state = decode_state(_summary(fake))[0]
    assert set(state.accepted) == set(ids.values()) and {a.by for a in state.accepted.values()} == {"ann"}
    assert state.handled == (command.comment_id,)

    again = answer(_client(fake), command, ACTIONS_BOT)  # redelivered, or the workflow's second step
    assert (again.status, again.rerun) == ("accepted", True) and len(_replies(fake)) == 1
    assert decode_state(_summary(fake))[0] == state

    second = _publish(fake, tmp_path)  # the rerun: same differences, accepted

    assert (second.conclusion, second.failed, second.review_comments) == ("success", False, 0)
    body = _summary(fake)
    assert "### Accepted on the pull request" in body and "accepted by @ann" in body
    assert ACCEPT_HINT not in body  # nothing left to accept
    assert decode_state(body)[0].accepted == state.accepted
    assert fake.violations == []


def test_an_acceptance_is_taken_back_and_the_difference_fails_again(fake: FakeGitHub, tmp_path: Path) -> None:
    _publish(fake, tmp_path)
    answer(_client(fake), _comment(fake, "/difforacle accept all", "ann"), ACTIONS_BOT)
    assert _publish(fake, tmp_path).conclusion == "success"
    d1, _ = decode_state(_summary(fake))[0].ids.values()

    one = answer(_client(fake), _comment(fake, "/difforacle unaccept D2 D3", "ann"), ACTIONS_BOT)

    assert (one.status, one.rerun) == ("unaccepted", True)
    assert _replies(fake)[-1] == ("@ann took back the acceptance of D2: from the next run on they count "
                                  "again, as possible regressions. Updating the check. the pull request's "
                                  "reports have no difference D3.")
    assert set(decode_state(_summary(fake))[0].accepted) == {d1}
    assert _publish(fake, tmp_path).conclusion == "failure"  # D2 fails the check again

    twice = answer(_client(fake), _comment(fake, "/difforacle unaccept d2", "ann"), ACTIONS_BOT)
    assert (twice.status, twice.rerun) == ("unaccepted", False)
    assert _replies(fake)[-1] == "@ann (D2: not accepted, nothing to take back.)"
    every = answer(_client(fake), _comment(fake, "/difforacle unaccept all", "ann"), ACTIONS_BOT)
    assert (every.status, every.rerun) == ("unaccepted", True)
    assert _replies(fake)[-1].startswith("@ann took back the acceptance of D1:")
    assert decode_state(_summary(fake))[0].accepted == {}
    none = answer(_client(fake), _comment(fake, "/difforacle unaccept all", "ann"), ACTIONS_BOT)
    assert (none.status, none.rerun) == ("unaccepted", False)
    assert _replies(fake)[-1] == "@ann nothing on this pull request is accepted."
    refused = answer(_client(fake), _comment(fake, "/difforacle unaccept all", "tom"), ACTIONS_BOT)
    assert refused.status == "refused"
    assert fake.violations == []


def test_help_lists_every_command_even_before_any_report(fake: FakeGitHub) -> None:
    helped = answer(_client(fake), _comment(fake, "/difforacle help", "ann"), ACTIONS_BOT)
    assert (helped.status, helped.rerun) == ("help", False)
    [text] = _replies(fake)
    assert text.startswith("@ann commands, for people with write access")
    for command in ("accept D2", "accept all", "unaccept D2", "unaccept all", "rerun", "help"):
        assert f"`/difforacle {command}`" in text
    stranger = answer(_client(fake), _comment(fake, "/difforacle help", "tom"), ACTIONS_BOT)
    assert stranger.status == "refused" and "`/difforacle help`" in _replies(fake)[-1]  # the refusal lists it


def test_anyone_without_write_access_is_refused_politely_and_nothing_changes(fake: FakeGitHub,
                                                                             tmp_path: Path) -> None:
    _publish(fake, tmp_path)
    for login in ("tom", "stranger"):
        answered = answer(_client(fake), _comment(fake, "/difforacle accept all", login), ACTIONS_BOT)
        assert (answered.status, answered.rerun) == ("refused", False)
    replies = _replies(fake)
    assert [r.split(" thank you")[0] for r in replies] == ["@tom", "@stranger"]
    assert "(your access: read)" in replies[0]
    assert decode_state(_summary(fake))[0].accepted == {}
    assert _publish(fake, tmp_path).conclusion == "failure"
    permission = fake.requests_to("GET", f"/repos/{OWNER}/{REPO}/collaborators/*/permission")
    assert [r.path.split("/")[-2] for r in permission] == ["tom", "stranger"]


def test_a_strangers_command_leaves_the_summary_alone_and_is_answered_once(fake: FakeGitHub,
                                                                           tmp_path: Path) -> None:
    """Anyone may comment: a refusal must not rewrite the summary (nor grow its hidden state) per
    comment, and a redelivered command of theirs gets no second reply."""
    _publish(fake, tmp_path)
    before = _summary(fake)
    edits = len(fake.requests_to("PATCH", f"/repos/{OWNER}/{REPO}/issues/comments/*"))
    commands = [_comment(fake, f"/difforacle accept D{n}", "stranger") for n in (1, 2, 1)]
    for command in [*commands, commands[0]]:  # the last one redelivered
        assert answer(_client(fake), command, ACTIONS_BOT).status == "refused"
    assert _summary(fake) == before
    assert len(fake.requests_to("PATCH", f"/repos/{OWNER}/{REPO}/issues/comments/*")) == edits
    assert len(_replies(fake)) == 3


def test_bots_and_comments_that_are_no_command_cost_no_request(fake: FakeGitHub) -> None:
    before = len(fake.requests)
    for body, login in (("/difforacle accept all", "renovate[bot]"), ("/difforacle accept all", ACTIONS_BOT),
                        ("Looks good to me", "ann")):
        assert answer(_client(fake), _comment(fake, body, login), ACTIONS_BOT).status == "ignored"
    assert len(fake.requests) == before


def test_a_bad_command_gets_the_usage_and_an_accept_before_any_report_says_so(fake: FakeGitHub) -> None:
    bad = answer(_client(fake), _comment(fake, "/difforacle approve D1", "ann"), ACTIONS_BOT)
    early = answer(_client(fake), _comment(fake, "/difforacle accept D1", "ann"), ACTIONS_BOT)
    rerun = answer(_client(fake), _comment(fake, "/difforacle rerun", "ann"), ACTIONS_BOT)

    assert (bad.status, early.status, rerun.status) == ("invalid", "no report", "rerun")
    assert (bad.rerun, early.rerun, rerun.rerun) == (False, False, True)
    assert _replies(fake) == [
        "@ann 'approve D1' is not a command I know. I understand `/difforacle accept D2` (several: "
        "`accept D2 D5`; every difference of the latest report: `accept all`), `/difforacle unaccept D2` (or "
        "`unaccept all`), `/difforacle rerun` or `/difforacle help`.",
        "@ann there is nothing to accept: difforacle has not reported on this pull request yet. "
        "`/difforacle rerun` runs the analysis.",
        "@ann running the analysis again on the pull request's head."]


def test_a_state_in_someone_elses_comment_is_not_trusted(fake: FakeGitHub, tmp_path: Path) -> None:
    _publish(fake, tmp_path)
    ids = decode_state(_summary(fake))[0].ids
    forged = (f'{SUMMARY_MARKER}\n{STATE_OPEN}{{"v":1,"ids":{{}},"accepted":{{"{ids["D1"]}":'
              '{"by":"ann","at":"2026-01-02T03:04:05Z"}},"handled":[]} -->')
    fake.add_issue_comment(OWNER, REPO, NUMBER, forged, login="mallory")

    again = _publish(fake, tmp_path)

    assert again.conclusion == "failure" and "Accepted" not in _summary(fake)


def test_an_edited_unreadable_state_is_ignored_with_a_note(fake: FakeGitHub, tmp_path: Path) -> None:
    _publish(fake, tmp_path)
    [summary] = [c for c in fake.issue_comments.values() if c.login == ACTIONS_BOT]
    summary.body = summary.body.replace('"v":1', '"v":"one"')

    again = _publish(fake, tmp_path)

    assert again.conclusion == "failure" and again.errors == []
    body = _summary(fake)
    assert "- The summary comment's hidden state could not be read (not a version 1 state)" in body
    assert decode_state(body)[1] is None  # written again, whole


def test_the_comment_of_a_webhook_or_workflow_event() -> None:
    payload = fixture("issue_comment.created.pull_request")
    event = comment_event(payload)
    assert (event.repository, event.number, event.login, event.user_type) == (
        "Codertocat/Hello-World", 1, "Codertocat", "User")
    with pytest.raises(NotACommentCommand, match="on an issue, not on a pull request"):
        comment_event(fixture("issue_comment.created"))
    with pytest.raises(NotACommentCommand, match="a comment edited"):
        comment_event({**payload, "action": "edited"})
    with pytest.raises(ValueError, match="lacks 'id'"):
        comment_event({**payload, "comment": {"body": "/difforacle rerun"}})


def test_with_a_state_secret_another_workflows_marker_comment_is_not_the_summary(fake: FakeGitHub,
                                                                                 tmp_path: Path) -> None:
    """github-actions[bot] is every workflow of the repository: one may post the marker first, with a
    state accepting everything. Sealed by the state secret, the real summary alone counts."""
    secret = b"the repository's DIFFORACLE_STATE_SECRET"
    sealed = PublishSettings(fail_on="difference", state_secret=secret)
    fingerprints = [fingerprint(d) for d in _report()["differences"]]
    forged = State({"D1": fingerprints[0], "D2": fingerprints[1]},
                   {f: Acceptance("ann", "2026-01-01T00:00:00Z") for f in fingerprints})
    impostor = fake.add_issue_comment(OWNER, REPO, NUMBER, with_state(f"{SUMMARY_MARKER}\nall clear", forged),
                                      login=ACTIONS_BOT)

    first = _publish(fake, tmp_path, sealed)
    assert (first.conclusion, first.failed) == ("failure", True)  # the forged acceptances are not applied
    assert first.comment_id != impostor.id
    answered = answer(_client(fake), _comment(fake, "/difforacle accept D1", "ann"), ACTIONS_BOT, secret)
    assert answered.status == "accepted"
    [ours] = [c for c in fake.comments_on(OWNER, REPO, NUMBER) if c.id == first.comment_id]
    state = decode_state(ours.body, StateSeal(secret, pull_key(f"{OWNER}/{REPO}", NUMBER)))[0]
    assert set(state.accepted) == {fingerprints[0]}
    [forgery] = [c for c in fake.comments_on(OWNER, REPO, NUMBER) if c.id == impostor.id]
    assert decode_state(forgery.body)[0] == forged  # left as it was: never edited as if ours

    unsealed = _publish(fake, tmp_path)  # without the secret, the first marker comment is taken
    assert unsealed.comment_id == impostor.id and unsealed.conclusion == "success"


def test_a_difference_keeps_its_number_across_pushes_and_accept_means_the_one_seen(fake: FakeGitHub,
                                                                                   tmp_path: Path) -> None:
    """The maintainer saw D1 on the first push; a second push (its engine numbering its own
    differences D1, D2 again) no longer shows it and shows a new one. `accept D1` is still theirs."""
    _publish(fake, tmp_path)  # parse('1h') is D1, parse('2h') is D2
    seen = decode_state(_summary(fake))[0].ids
    _publish(fake, tmp_path, report=_report((2, 3)))  # the engine calls them D1 and D2
    state = decode_state(_summary(fake))[0]
    assert state.ids == {"D2": seen["D2"], "D3": state.ids["D3"]} and state.earlier == {"D1": seen["D1"]}
    assert "D3" in _summary(fake)  # the new difference, under a number never given before

    answered = answer(_client(fake), _comment(fake, "/difforacle accept D1", "ann"), ACTIONS_BOT)
    assert answered.status == "accepted"
    accepted = decode_state(_summary(fake))[0].accepted
    assert set(accepted) == {seen["D1"]}  # not the new difference the engine numbered D1
    assert "D1: not in the latest report" in _replies(fake)[-1]
    unknown = answer(_client(fake), _comment(fake, "/difforacle accept D9", "ann"), ACTIONS_BOT)
    assert unknown.rerun is False and "no difference D9" in _replies(fake)[-1]


def test_accept_all_means_the_report_the_command_was_written_under(fake: FakeGitHub, tmp_path: Path) -> None:
    """`accept all` written under the first report, answered after a push published a second (the
    commands and the pull_request workflow share a queue): the first report's differences only."""
    _publish(fake, tmp_path)  # D1, D2
    first = decode_state(_summary(fake))[0].ids
    early = _comment(fake, "/difforacle accept all", "ann")
    _publish(fake, tmp_path, report=_report((2, 3)))  # D2, D3: D3 is new
    latest = decode_state(_summary(fake))[0].ids
    assert set(latest) == {"D2", "D3"}

    assert answer(_client(fake), early, ACTIONS_BOT).status == "accepted"
    state = decode_state(_summary(fake))[0]
    assert set(state.accepted) == set(first.values())  # D1 and D2, not D3 that the maintainer never saw
    assert "a newer report was published since" in _replies(fake)[-1]

    late = _comment(fake, "/difforacle accept all", "ann")  # written under the second report
    answer(_client(fake), late, ACTIONS_BOT)
    assert set(decode_state(_summary(fake))[0].accepted) == set(first.values()) | {latest["D3"]}
    assert "newer report" not in _replies(fake)[-1]


# ------------------------------------------------------------------ the check run's "Accept all" button

BUTTON = PublishSettings(fail_on="difference", accept_button=True)


def _click(login: str, head_sha: str = HEAD) -> CommentEvent:
    """A click on the button, as the App's runner hands it over: no comment, the check run's head."""
    return CommentEvent(f"{OWNER}/{REPO}", NUMBER, 0, login, "/difforacle accept all", head_sha=head_sha)


def test_a_report_with_differences_to_accept_shows_the_button_on_its_check_run(fake: FakeGitHub,
                                                                                tmp_path: Path) -> None:
    _publish(fake, tmp_path, BUTTON)
    [run] = fake.check_runs.values()
    assert run.actions == [ACCEPT_ALL_BUTTON] and run.external_id == f"{OWNER}/{REPO}#{NUMBER}"
    assert fake.violations == []  # label, identifier and description within GitHub's limits
    _publish(fake, tmp_path)  # the Action's: no App to answer a click
    assert list(fake.check_runs.values())[-1].actions == []
    _publish(fake, tmp_path, replace(BUTTON, comment="never"))  # no summary to record an acceptance in
    assert list(fake.check_runs.values())[-1].actions == []
    clean = {**_report(), "differences": []}
    _publish(fake, tmp_path, BUTTON, report=clean)  # nothing to accept
    assert list(fake.check_runs.values())[-1].actions == []


def test_a_writers_click_accepts_the_check_runs_report_and_a_readers_is_refused(fake: FakeGitHub,
                                                                                tmp_path: Path) -> None:
    _publish(fake, tmp_path, BUTTON)
    ids = decode_state(_summary(fake))[0].ids
    for _ in range(2):  # two clicks of a reader: each gets its answer (no comment id to find it by)
        assert answer(_client(fake), _click("tom"), ACTIONS_BOT).status == "refused"
    assert [r.split(" thank you")[0] for r in _replies(fake)] == ["@tom", "@tom"]
    assert decode_state(_summary(fake))[0].accepted == {}

    clicked = answer(_client(fake), _click("ann"), ACTIONS_BOT)

    assert (clicked.status, clicked.rerun) == ("accepted", True)
    state = decode_state(_summary(fake))[0]
    assert set(state.accepted) == set(ids.values()) and state.handled == ()  # no comment to remember
    assert _replies(fake)[-1].startswith("@ann accepted D1, D2")
    assert _publish(fake, tmp_path, BUTTON).conclusion == "success"
    assert list(fake.check_runs.values())[-1].actions == []  # nothing left to accept
    assert fake.violations == []


def test_a_click_on_an_older_heads_check_run_accepts_nothing(fake: FakeGitHub, tmp_path: Path) -> None:
    _publish(fake, tmp_path, BUTTON)
    older = answer(_client(fake), _click("ann", head_sha="c" * 40), ACTIONS_BOT)
    assert (older.status, older.rerun) == ("outdated", False)
    assert decode_state(_summary(fake))[0].accepted == {}
    assert "has moved on to bbbbbbbbbbbb: nothing was accepted" in _replies(fake)[-1]
