"""The publisher (`difforacle.bot.publisher`) against the fake GitHub: check run, one summary
comment, one review per head."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_github import FakeGitHub

from difforacle.bot.acceptance import decode_state, fingerprint
from difforacle.bot.github_client import GitHubClient, IssueComment, Retries
from difforacle.bot.publisher import (
    PROGRESS_INTERVAL,
    Published,
    Publisher,
    PublishSettings,
    PullRequestContext,
)
from difforacle.bot.summary import NO_LONGER_DIFFERS, REVIEW_MARKER, SUMMARY_MARKER
from difforacle.bot.workflow import Workflow

OWNER, REPO, NUMBER = "octo", "durations", 7
BASE, HEAD, HEAD2 = "a" * 40, "b" * 40, "c" * 40
FAST = Retries(total=3, backoff_factor=0, secondary_rate_wait=0, seconds_between_requests=0,
               seconds_between_writes=0)
PATCH = """\
@@ -10,3 +10,4 @@ def parse(text):
     value = text.strip()
-    return int(value)
+    number = int(value)
+    return number * 60
     # end
"""
TEST_PATCH = "@@ -1,2 +1,3 @@\n def test_parse():\n     assert True\n+    assert 1\n"
DEFAULTS = PublishSettings()
FILES = [{"filename": "pkg/parse.py", "status": "modified", "patch": PATCH}]


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as server:
        server.add_token("rw", "github-actions[bot]")
        server.add_pull(OWNER, REPO, NUMBER, BASE, HEAD, FILES)
        yield server


def _difference(number: int, line: int = 12, **fields: object) -> dict:
    test = f"def test_parse_{number}():\n    assert parse('1h') == 3600\n"
    base = {"id": f"D{number}", "kind": "return", "target": "pkg.parse:parse", "path": "pkg/parse.py",
            "line": line, "side": "head", "base": "3600", "head": "3660", "test": test, "pin_base": test,
            "pin_head": test.replace("3600", "3660"), "count": 1}
    return {**base, **fields}


def _report(differences: list[dict], head: str = HEAD) -> dict:
    return {"schema": "difforacle.report/1", "base": BASE, "head": head, "differences": differences,
            "coverage": {"changed_lines": 2, "changed_lines_covered": 2, "uncovered": {}},
            "stats": {"sequences": 10, "seconds": 1.0}, "notes": []}


def _publish(fake: FakeGitHub, report: dict, tmp_path: Path, *, token: str = "rw", head: str = HEAD,
             settings: PublishSettings = DEFAULTS, fork: bool = False, summary: IssueComment | None = None,
             head_reviewed: bool | None = None) -> tuple[Published, str]:
    client = GitHubClient(f"{OWNER}/{REPO}", token, api_url=fake.url, retries=FAST)
    log = io.StringIO()
    workflow = Workflow({"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
                         "GITHUB_OUTPUT": str(tmp_path / "output")}, log)
    publisher = Publisher(client, PullRequestContext(f"{OWNER}/{REPO}", NUMBER, BASE, head, fork=fork),
                          settings, workflow)
    publisher.start()
    publisher.progress("exploring: 100 sequences")
    published = publisher.finish(report, str(tmp_path / "report.json"), summary=summary,
                                 head_reviewed=head_reviewed)
    return published, log.getvalue()


def test_first_run_posts_a_check_run_a_comment_and_one_anchored_review(
        fake: FakeGitHub, tmp_path: Path) -> None:
    report = _report([_difference(1), _difference(2, line=40)])  # line 40 is outside the diff

    published, _ = _publish(fake, report, tmp_path)

    assert fake.violations == []
    [run] = fake.check_runs.values()
    assert (run.status, run.conclusion, run.head_sha) == ("completed", "neutral", HEAD)
    assert run.name == "difforacle"
    assert [a["start_line"] for a in run.annotations] == [12, 40]
    [comment] = fake.comments_on(OWNER, REPO, NUMBER)
    assert comment.body.startswith(SUMMARY_MARKER) and comment.login == "github-actions[bot]"
    assert "| D1 |" in comment.body and "(review comment)" in comment.body
    [review] = fake.reviews_on(OWNER, REPO, NUMBER)
    assert review.state == "COMMENTED" and review.commit_id == HEAD and REVIEW_MARKER in review.body
    assert [(c.path, c.line, c.side) for c in review.comments] == [("pkg/parse.py", 12, "RIGHT")]
    assert "def test_parse_1" in review.comments[0].body
    assert (published.conclusion, published.failed, published.review_comments) == ("neutral", False, 1)
    outputs = (tmp_path / "output").read_text()
    assert "differences<<" in outputs and "\n2\n" in outputs
    assert (tmp_path / "summary.md").read_text().startswith(SUMMARY_MARKER)


def _outputs(tmp_path: Path) -> dict[str, str]:
    """The step outputs written, as GitHub reads the `name<<DELIMITER` form of GITHUB_OUTPUT."""
    lines, found = (tmp_path / "output").read_text().splitlines(), {}
    while lines:
        name, delimiter = lines.pop(0).split("<<", 1)
        value = []
        while (line := lines.pop(0)) != delimiter:
            value.append(line)
        found[name] = "\n".join(value)
    return found


def test_a_clean_pull_request_gets_no_comment_by_default(fake: FakeGitHub, tmp_path: Path) -> None:
    """comment: on-difference. The check run and the job summary say it; no comment, no review."""
    published, _ = _publish(fake, _report([]), tmp_path)

    assert fake.violations == [] and fake.comments_on(OWNER, REPO, NUMBER) == []
    assert fake.reviews_on(OWNER, REPO, NUMBER) == []
    assert published.comment_id is None and published.comment_skipped and published.errors == []
    [run] = fake.check_runs.values()
    assert (run.status, run.conclusion) == ("completed", "success") and published.completed
    assert "No behavioural difference" in (tmp_path / "summary.md").read_text()
    outputs = _outputs(tmp_path)
    assert [outputs[name] for name in ("differences", "possible-regressions", "conclusion")] == [
        "0", "0", "success"]


def test_a_summary_is_edited_to_say_the_differences_are_gone(fake: FakeGitHub, tmp_path: Path) -> None:
    """comment: on-difference. The comment a push with differences got is edited, not left stale
    nor deleted: it keeps the acceptances for a later push that shows them again."""
    first, _ = _publish(fake, _report([_difference(1)]), tmp_path)
    [comment] = fake.comments_on(OWNER, REPO, NUMBER)
    state = decode_state(comment.body)[0]

    fake.set_pull_head(OWNER, REPO, NUMBER, HEAD2)  # a push that takes the differences away
    again, _ = _publish(fake, _report([], head=HEAD2), tmp_path, head=HEAD2)

    [edited] = fake.comments_on(OWNER, REPO, NUMBER)
    assert edited.id == comment.id == first.comment_id == again.comment_id and not again.comment_skipped
    assert NO_LONGER_DIFFERS in edited.body and "No behavioural difference" in edited.body
    assert decode_state(edited.body)[0].earlier == state.ids  # D1 keeps its number for later pushes
    assert "/difforacle accept" not in edited.body  # nothing to accept
    assert fake.violations == []


def test_comment_always_and_never(fake: FakeGitHub, tmp_path: Path) -> None:
    """always: a clean pull request gets its summary comment too; never: not even one with a
    difference (the check run, its annotations, the review and the job summary still say it)."""
    clean, _ = _publish(fake, _report([]), tmp_path, settings=PublishSettings(comment="always"))
    [comment] = fake.comments_on(OWNER, REPO, NUMBER)
    assert clean.comment_id == comment.id and "No behavioural difference" in comment.body
    assert NO_LONGER_DIFFERS not in comment.body  # no earlier push differed

    quiet, _ = _publish(fake, _report([_difference(1)]), tmp_path, settings=PublishSettings(comment="never"))
    assert quiet.comment_id is None and quiet.comment_skipped
    assert [c.id for c in fake.comments_on(OWNER, REPO, NUMBER)] == [comment.id]  # left as it was
    assert "| D1 |" in (tmp_path / "summary.md").read_text()
    assert "/difforacle accept" not in (tmp_path / "summary.md").read_text()  # no comment to answer
    assert _outputs(tmp_path)["possible-regressions"] == "1"
    with pytest.raises(ValueError, match="comment must be one of"):
        _publish(fake, _report([]), tmp_path, settings=PublishSettings(comment="sometimes"))


def test_publishing_makes_only_the_requests_it_needs(fake: FakeGitHub, tmp_path: Path) -> None:
    """Each request counts against the installation's 5,000 an hour: a first run with one finding
    reads nothing twice, and comments through the issue (a pull request's comment calls in PyGithub
    GET the pull request first, for its issue URL); progress right after the start waits (the new
    check run says what is happening)."""
    _publish(fake, _report([_difference(1)]), tmp_path)
    assert [(r.method, r.operation) for r in fake.requests] == [
        ("POST", "checks/create"), ("GET", "issues/list-comments"),
        ("GET", "pulls/list-files"), ("GET", "pulls/list-reviews"), ("POST", "pulls/create-review"),
        ("POST", "issues/create-comment"), ("PATCH", "checks/update")]
    fake.requests.clear()
    _publish(fake, _report([_difference(1)]), tmp_path)  # a re-run edits the comment it listed
    assert [(r.method, r.operation) for r in fake.requests] == [
        ("POST", "checks/create"), ("GET", "issues/list-comments"),
        ("GET", "pulls/list-files"), ("GET", "pulls/list-reviews"), ("PATCH", "issues/update-comment"),
        ("PATCH", "checks/update")]
    fake.requests.clear()
    _publish(fake, _report([]), tmp_path)  # nothing to comment on a line of: the files are not listed
    assert [(r.method, r.operation) for r in fake.requests] == [
        ("POST", "checks/create"), ("GET", "issues/list-comments"),
        ("PATCH", "issues/update-comment"), ("PATCH", "checks/update")]


def test_what_the_caller_remembers_saves_the_listings(fake: FakeGitHub, tmp_path: Path) -> None:
    """The App remembers our summary comment (its id and hidden state) and whether a head's run got as
    far as reviewing: a comment deleted since is looked for again, and made anew."""
    first, _ = _publish(fake, _report([_difference(1)]), tmp_path, head_reviewed=False)
    assert [(r.method, r.operation) for r in fake.requests] == [
        ("POST", "checks/create"), ("GET", "issues/list-comments"), ("GET", "pulls/list-files"),
        ("POST", "pulls/create-review"), ("POST", "issues/create-comment"), ("PATCH", "checks/update")]
    assert first.comment_id is not None and decode_state(first.state_block)[0].ids == {
        "D1": fingerprint(_difference(1))}
    remembered = IssueComment(first.comment_id, "github-actions[bot]", first.state_block)

    fake.set_pull_head(OWNER, REPO, NUMBER, HEAD2)  # a push
    fake.requests.clear()
    second, _ = _publish(fake, _report([_difference(1)], head=HEAD2), tmp_path, head=HEAD2,
                         summary=remembered, head_reviewed=False)
    assert [(r.method, r.operation) for r in fake.requests] == [
        ("POST", "checks/create"), ("GET", "pulls/list-files"), ("POST", "pulls/create-review"),
        ("PATCH", "issues/update-comment"), ("PATCH", "checks/update")]
    [comment] = fake.comments_on(OWNER, REPO, NUMBER)
    assert comment.id == first.comment_id and decode_state(comment.body)[0].ids == {
        "D1": fingerprint(_difference(1))}
    assert second.errors == []

    del fake.issue_comments[comment.id]  # someone deleted it
    fake.requests.clear()
    third, _ = _publish(fake, _report([]), tmp_path, summary=remembered)
    assert [(r.method, r.operation, r.status) for r in fake.requests] == [
        ("POST", "checks/create", 201), ("PATCH", "issues/update-comment", 404),
        ("GET", "issues/list-comments", 200), ("POST", "issues/create-comment", 201),
        ("PATCH", "checks/update", 200)]
    [again] = fake.comments_on(OWNER, REPO, NUMBER)
    assert third.comment_id == again.id != first.comment_id and third.errors == []


def test_progress_updates_are_spaced_and_wait_while_the_rate_limit_runs_low(fake: FakeGitHub) -> None:
    client = GitHubClient(f"{OWNER}/{REPO}", "rw", api_url=fake.url, retries=FAST)
    now = [1000.0]
    publisher = Publisher(client, PullRequestContext(f"{OWNER}/{REPO}", NUMBER, BASE, HEAD), DEFAULTS,
                          Workflow({}, io.StringIO()), clock=lambda: now[0])
    publisher.start()

    def updates() -> int:
        return len(fake.requests_to("PATCH", "/repos/*/check-runs/*"))

    publisher.progress("importing")  # not at once: the check run was just created saying as much
    now[0] += PROGRESS_INTERVAL - 1
    publisher.progress("exploring: 100 sequences")  # still too soon
    assert updates() == 0
    now[0] += 1
    publisher.progress("exploring: 150 sequences")
    assert updates() == 1
    now[0] += PROGRESS_INTERVAL - 1
    publisher.progress("exploring: 180 sequences")  # too soon after the last
    assert updates() == 1
    now[0] += 1
    fake.rate_limit_remaining = 999  # under a fifth of the hour's 5,000 left: results come first
    publisher.progress("exploring: 200 sequences")
    assert updates() == 2  # this one still went: the last response before it had 4,999 left
    now[0] += PROGRESS_INTERVAL
    publisher.progress("exploring: 300 sequences")
    assert updates() == 2
    fake.rate_limit_remaining = 1000
    client.issue_comments(NUMBER)  # any response says how many are left
    publisher.progress("exploring: 400 sequences")
    assert updates() == 3
    [run] = fake.check_runs.values()
    assert run.output["summary"] == "exploring: 400 sequences"


def test_a_new_push_edits_the_comment_and_a_rerun_adds_no_second_review(
        fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_issue_comment(OWNER, REPO, NUMBER, SUMMARY_MARKER + "\nnot ours", login="someone")
    _publish(fake, _report([_difference(1)]), tmp_path)
    _publish(fake, _report([_difference(1)]), tmp_path)  # the same head again: a re-run
    fake.set_pull_head(OWNER, REPO, NUMBER, HEAD2)
    _publish(fake, _report([], head=HEAD2), tmp_path, head=HEAD2)

    assert fake.violations == []
    comments = fake.comments_on(OWNER, REPO, NUMBER)
    ours = [c for c in comments if c.login == "github-actions[bot]"]
    assert len(comments) == 2 and len(ours) == 1  # someone else's marker does not fool us
    assert "No behavioural difference" in ours[0].body and HEAD2[:7] in ours[0].body
    assert [r.commit_id for r in fake.reviews_on(OWNER, REPO, NUMBER)] == [HEAD]
    assert [run.conclusion for run in fake.check_runs.values()] == ["neutral", "neutral", "success"]


def test_many_findings_batch_annotations_and_cap_review_comments(fake: FakeGitHub, tmp_path: Path) -> None:
    report = _report([_difference(n, line=12 if n % 2 else 13) for n in range(1, 121)])

    published, _ = _publish(fake, report, tmp_path, settings=PublishSettings(max_comments=5))

    assert fake.violations == []
    [run] = fake.check_runs.values()
    assert len(run.annotations) == 120
    updates = [r for r in fake.requests_to("PATCH", "/repos/*/check-runs/*")
               if r.json.get("output", {}).get("annotations")]
    assert [len(r.json["output"]["annotations"]) for r in updates] == [50, 50, 20]
    assert updates[-1].json["conclusion"] == "neutral"
    [review] = fake.reviews_on(OWNER, REPO, NUMBER)
    assert len(review.comments) == published.review_comments == 5
    [comment] = fake.comments_on(OWNER, REPO, NUMBER)
    assert len(comment.body) < 65536 and "| D120 |" in comment.body


def test_differences_set_apart_get_no_review_comment_and_fail_nothing(fake: FakeGitHub,
                                                                      tmp_path: Path) -> None:
    outside = _difference(1, head="raises AttributeError: x", base="raises TypeError: y",
                          verdict="outside-declared-types", evidence="only an input outside ...")
    minor = _difference(2, head="raises TypeError: at 4", base="raises TypeError: at 3", severity="minor")
    published, _ = _publish(fake, _report([outside, minor]), tmp_path,
                            settings=PublishSettings(fail_on="difference"))
    assert fake.violations == [] and fake.reviews_on(OWNER, REPO, NUMBER) == []
    assert (published.conclusion, published.failed, published.review_comments) == ("success", False, 0)
    [comment] = fake.comments_on(OWNER, REPO, NUMBER)
    assert "### Outside the declared types" in comment.body and "### Minor differences" in comment.body
    counted = _difference(3)
    published, _ = _publish(fake, _report([outside, counted]), tmp_path,
                            settings=PublishSettings(fail_on="difference"))
    assert (published.conclusion, published.failed, published.review_comments) == ("failure", True, 1)
    [review] = fake.reviews_on(OWNER, REPO, NUMBER)  # the first report had no review at all
    assert ["def test_parse_3" in c.body for c in review.comments] == [True]


def test_fail_on_decides_the_conclusion(fake: FakeGitHub, tmp_path: Path) -> None:
    failing = _difference(1, head="raises ValueError: bad")
    published, _ = _publish(fake, _report([_difference(2)]), tmp_path,
                            settings=PublishSettings(fail_on="regression"))
    assert (published.conclusion, published.failed) == ("neutral", False)
    published, _ = _publish(fake, _report([failing]), tmp_path,
                            settings=PublishSettings(fail_on="regression"))
    assert (published.conclusion, published.failed) == ("failure", True)
    levels = [a["annotation_level"] for a in list(fake.check_runs.values())[-1].annotations]
    assert levels == ["failure"]
    with pytest.raises(ValueError, match="fail-on"):
        Publisher(None, PullRequestContext("o/r", 1, BASE, HEAD), PublishSettings(fail_on="sometimes"),
                  Workflow({}))


def test_a_fork_pull_request_falls_back_to_the_job_summary(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_token("ro", "github-actions[bot]", read_only=True)

    published, log = _publish(fake, _report([_difference(1)]), tmp_path, token="ro", fork=True)

    assert fake.check_runs == {} and fake.comments_on(OWNER, REPO, NUMBER) == []
    assert published.fallback is not None and "read-only" in published.fallback
    assert "falling back to the job summary" in log
    assert "::warning file=pkg/parse.py,line=12,title=return of pkg.parse%3Aparse differs::" in log
    assert "| D1 |" in (tmp_path / "summary.md").read_text()
    assert fake.violations == []


def test_a_server_error_is_retried_for_an_edit_but_a_post_is_never_repeated(
        fake: FakeGitHub, tmp_path: Path) -> None:
    _publish(fake, _report([_difference(1)]), tmp_path)
    fake.set_pull_head(OWNER, REPO, NUMBER, HEAD2)
    fake.fail_next(1, status=502, method="PATCH", path="/repos/*/issues/comments/*")
    fake.fail_next(1, status=502, method="POST", path="/repos/*/pulls/*/reviews", processed=True)

    published, log = _publish(fake, _report([_difference(1)], head=HEAD2), tmp_path, head=HEAD2)

    edited = fake.comments_on(OWNER, REPO, NUMBER)[0].body
    assert f"..{HEAD2[:7]}" in edited and "No behavioural" not in edited  # edited despite the 502
    assert len(fake.requests_to("PATCH", "/repos/*/issues/comments/*")) == 2
    assert len(fake.reviews_on(OWNER, REPO, NUMBER)) == 2  # posted once for HEAD2, not twice
    assert any("post the review" in error for error in published.errors)
    assert "GitHub answered 502" in log


def test_a_suggestion_goes_into_the_test_file_the_pull_request_changes(tmp_path: Path) -> None:
    with FakeGitHub().serve() as fake:
        fake.add_token("rw")
        fake.add_pull(OWNER, REPO, NUMBER, BASE, HEAD,
                      [*FILES, {"filename": "tests/test_parse.py", "status": "modified",
                                "patch": TEST_PATCH}])
        _publish(fake, _report([_difference(1)]), tmp_path)

        assert fake.violations == []
        [review] = fake.reviews_on(OWNER, REPO, NUMBER)
        suggestion = next(c for c in review.comments if c.path == "tests/test_parse.py")
        assert suggestion.line == 3
        assert "```suggestion\n    assert 1\n\n\ndef test_parse_1():" in suggestion.body


def test_a_secondary_rate_limit_is_waited_out_even_for_a_post(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.rate_limit_next(1, status=403, retry_after=0, method="POST", path="/repos/*/issues/*/comments")

    published, _ = _publish(fake, _report([_difference(1)]), tmp_path)

    assert published.errors == [] and published.comment_id is not None
    assert len(fake.comments_on(OWNER, REPO, NUMBER)) == 1
    assert [r.status for r in fake.requests_to("POST", "/repos/*/issues/*/comments")] == [403, 201]


def test_a_clean_run_passes_only_when_the_changed_code_ran(fake: FakeGitHub, tmp_path: Path) -> None:
    """success needs min-reach of the changed lines run; below it the check is neutral and lists
    the units not checked, with why; fail-on unverified fails it."""
    partly = _report([])
    partly["coverage"] = {"changed_lines": 4, "changed_lines_covered": 1, "measured_by": "coverage.py 7.6",
                          "uncovered": {"pkg/parse.py": [3, 4, 5]}}
    where = {"path": "pkg/parse.py", "side": "head"}
    partly["reach"] = [
        {"unit": "pkg.parse:parse", **where, "lines": 1, "run": 1, "reason": ""},
        {"unit": "pkg.parse:_fold", **where, "lines": 3, "run": 0,
         "reason": "no public operation reaches it (nothing the module offers calls it)"}]
    published, _ = _publish(fake, partly, tmp_path, settings=PublishSettings(comment="always"))
    assert (published.conclusion, published.failed) == ("neutral", False)
    [comment] = fake.comments_on(OWNER, REPO, NUMBER)
    assert (f"## difforacle: {BASE[:7]}..{HEAD[:7]}\n\nNo behavioural difference in the 1 changed line that "
            "ran; nothing could be checked for 3 changed lines.") in comment.body
    [run] = fake.check_runs.values()
    assert run.output["title"] == ("no behavioural difference in the 1 changed line that ran; nothing could "
                                   f"be checked for 3 changed lines ({BASE[:7]}..{HEAD[:7]})")
    assert ("- `pkg.parse:_fold` (`pkg/parse.py`): 0 of 3 changed lines checked; no public operation "
            "reaches it") in comment.body
    assert "`pkg.parse:parse` (" not in comment.body  # a unit that ran is not listed
    published, _ = _publish(fake, partly, tmp_path, settings=PublishSettings(fail_on="unverified"))
    assert (published.conclusion, published.failed) == ("failure", True)
    lenient = PublishSettings(fail_on="unverified", min_reach=0.25)
    published, _ = _publish(fake, partly, tmp_path, settings=lenient)
    assert (published.conclusion, published.failed) == ("success", False)
    unmeasured = {**partly, "coverage": {**partly["coverage"], "measured_by": "not measured"}, "reach": []}
    published, _ = _publish(fake, unmeasured, tmp_path, settings=PublishSettings(min_reach=0.0))
    assert published.conclusion == "neutral"
    assert fake.violations == []
