"""Tests of the fake GitHub (tests/support/fake_github.py) through a real PyGithub client.

Why: the publisher's tests trust the fake to answer as GitHub does; these pin the rules it
enforces (schemas, limits, diff anchors, tokens, pagination, failures) so that a change to the
fake cannot quietly make those tests lenient.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from github import Auth, Github, GithubException, GithubIntegration, GithubRetry
from jsonschema import Draft202012Validator

from support.fake_github import FIXTURES, FakeGitHub, git_files, load_operations, parse_patch
from support.repos import RepoBuilder, make_pr

OWNER, REPO, NUMBER = "octo", "widgets", 7
BASE, HEAD = "b" * 40, "h" * 40
# base lines 1-5 and 20-24 shown; head: line 2 replaced by two lines, line 22 removed
PATCH = "\n".join([
    "@@ -1,5 +1,6 @@",
    " one",
    "-two",
    "+TWO",
    "+two and a half",
    " three",
    " four",
    " five",
    "@@ -20,5 +21,4 @@ def later():",
    " twenty",
    " twenty-one",
    "-twenty-two",
    " twenty-three",
    " twenty-four",
])
ANNOTATION = {"path": "src/app.py", "start_line": 2, "end_line": 2, "annotation_level": "warning",
              "message": "m"}


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as served:
        served.add_pull(OWNER, REPO, NUMBER, BASE, HEAD,
                        [{"filename": "src/app.py", "status": "modified", "patch": PATCH},
                         {"filename": "logo.png", "status": "added"}],
                        title="Faster widgets", user="contributor")
        yield served


@pytest.fixture
def gh(fake: FakeGitHub) -> Github:
    return fake.client()


def test_check_run_is_created_then_updated_with_annotations_accumulated(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    run = repo.create_check_run(name="difforacle", head_sha=HEAD, status="in_progress",
                                output={"title": "Running", "summary": "...", "annotations": [ANNOTATION]})
    assert (run.name, run.status, run.head_sha) == ("difforacle", "in_progress", HEAD)
    assert run.app.slug == "github-actions"
    assert [p.number for p in run.pull_requests] == [NUMBER]

    later = {**ANNOTATION, "start_line": 3, "end_line": 3}
    run.edit(status="completed", conclusion="failure",
             output={"title": "2 differences", "summary": "found", "annotations": [later]})
    again = repo.get_check_run(run.id)
    assert (again.status, again.conclusion, again.output.title) == ("completed", "failure", "2 differences")
    assert again.output.annotations_count == 2
    assert [a.start_line for a in again.get_annotations()] == [2, 3]
    stored = fake.check_runs[run.id]
    assert stored.completed_at is not None and stored.output["summary"] == "found"
    assert fake.violations == []


def test_more_than_50_annotations_in_one_request_are_refused(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    run = repo.create_check_run(name="difforacle", head_sha=HEAD,
                                output={"title": "t", "summary": "s", "annotations": [ANNOTATION] * 50})
    with pytest.raises(GithubException) as refused:
        run.edit(output={"title": "t", "summary": "s", "annotations": [ANNOTATION] * 51})
    assert refused.value.status == 422
    assert refused.value.data["message"].startswith("Invalid request.")
    assert len(fake.check_runs[run.id].annotations) == 50
    with pytest.raises(GithubException):
        repo.create_check_run(name="again", head_sha=HEAD,
                              output={"title": "t", "summary": "s", "annotations": [ANNOTATION] * 51})
    assert len(fake.check_runs) == 1
    assert [(v.operation, v.kind) for v in fake.violations] == [("checks/update", "schema"),
                                                                 ("checks/create", "schema")]


def test_a_comment_over_65536_characters_is_refused(fake: FakeGitHub, gh: Github) -> None:
    pull = gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    comment = pull.create_issue_comment("x" * 65536)
    with pytest.raises(GithubException) as refused:
        pull.create_issue_comment("x" * 65537)
    assert refused.value.status == 422
    assert refused.value.data["errors"][0]["message"] == "Body is too long (maximum is 65536 characters)"
    with pytest.raises(GithubException):
        comment.edit("y" * 65537)
    assert [len(c.body) for c in fake.comments_on(OWNER, REPO, NUMBER)] == [65536]
    assert [v.kind for v in fake.violations] == ["rule", "rule"]


def test_one_bad_anchor_refuses_the_whole_review(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    pull = repo.get_pull(NUMBER)
    good = {"path": "src/app.py", "line": 3, "side": "RIGHT", "body": "added line"}
    outside = {"path": "src/app.py", "line": 12, "side": "RIGHT", "body": "not in any hunk"}
    with pytest.raises(GithubException) as refused:
        pull.create_review(body="review", event="COMMENT", comments=[good, outside])
    assert refused.value.status == 422
    assert refused.value.data["message"] == "Unprocessable Entity"
    assert refused.value.data["errors"] == ["Line could not be resolved"]
    assert fake.reviews == {}
    assert fake.violations[0].errors == ("Line could not be resolved",)


@pytest.mark.parametrize(("comment", "error"), [
    ({"line": 2, "side": "RIGHT"}, None),  # added line
    ({"line": 2, "side": "LEFT"}, None),  # removed line, on the base side
    ({"line": 22, "side": "LEFT"}, None),
    ({"line": 22, "side": "RIGHT"}, None),  # context line: head line 22 is base line 21
    ({"line": 24}, None),  # side defaults to RIGHT
    ({"line": 25, "side": "RIGHT"}, "Line could not be resolved"),  # past the hunk
    ({"line": 2, "side": "MIDDLE"}, "Line could not be resolved"),
    ({"line": 4, "start_line": 2, "side": "RIGHT"}, None),
    ({"line": 3, "start_line": 2, "start_side": "LEFT", "side": "RIGHT"}, None),
    ({"line": 22, "start_line": 3, "side": "RIGHT"},
     "Pull request review thread start line must be part of the same hunk as the line."),
    ({"line": 3, "start_line": 3, "side": "RIGHT"},
     "Pull request review thread start line must precede the end line."),
    ({"path": "README.md", "line": 1}, "Path could not be resolved"),
    ({"path": "logo.png", "line": 1}, "Line could not be resolved"),  # no patch: a binary file
    ({"position": 3}, None),  # the deprecated diff position: "+TWO"
    ({"position": 99}, "Line could not be resolved"),
])
def test_review_comments_must_anchor_in_the_diff(fake: FakeGitHub, gh: Github, comment: dict,
                                                  error: str | None) -> None:
    pull = gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    entry = {"path": "src/app.py", "body": "here", **comment}
    if error is None:
        review = pull.create_review(body="", event="COMMENT", comments=[entry])
        assert len(fake.reviews[review.id].comments) == 1
    else:
        with pytest.raises(GithubException) as refused:
            pull.create_review(body="", event="COMMENT", comments=[entry])
        assert refused.value.data["errors"] == [error]


def test_review_errors_are_joined_in_one_string_like_github(gh: Github) -> None:
    pull = gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    bad = [{"path": "src/app.py", "line": 99, "body": "a"}, {"path": "nope.py", "line": 1, "body": "b"},
           {"path": "src/app.py", "line": 98, "body": "c"}]
    with pytest.raises(GithubException) as refused:
        pull.create_review(body="", event="COMMENT", comments=bad)
    assert refused.value.data["errors"] == [
        "Line could not be resolved, Path could not be resolved, and Line could not be resolved"]


def test_review_comment_carries_its_diff_hunk_and_lines(fake: FakeGitHub, gh: Github) -> None:
    pull = gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    inline = {"path": "src/app.py", "line": 3, "start_line": 2, "side": "RIGHT", "body": "x"}
    pull.create_review(body="see inline", event="COMMENT", comments=[inline])
    (comment,) = pull.get_review_comments()
    assert (comment.line, comment.start_line, comment.side, comment.commit_id) == (3, 2, "RIGHT", HEAD)
    assert comment.diff_hunk == "\n".join(PATCH.split("\n")[:5])


def test_review_commit_id_must_be_the_head_of_the_pull_request(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    pull = repo.get_pull(NUMBER)
    with pytest.raises(GithubException) as refused:
        pull.create_review(commit=repo.get_commit(BASE), body="stale", event="COMMENT")
    assert refused.value.status == 422
    review = pull.create_review(commit=repo.get_commit(HEAD), body="fresh", event="COMMENT")
    assert review.commit_id == HEAD

    fake.set_pull_head(OWNER, REPO, NUMBER, "n" * 40)  # a push: the old head is stale now
    with pytest.raises(GithubException):
        repo.get_pull(NUMBER).create_review(commit=repo.get_commit(HEAD), body="late", event="COMMENT")


def test_a_read_only_token_may_read_but_every_write_is_403(fake: FakeGitHub) -> None:
    fake.add_token("fork-token", read_only=True)
    gh = fake.client("fork-token")
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    pull = repo.get_pull(NUMBER)
    assert pull.title == "Faster widgets"
    assert repo.permissions.push is False
    writes = [
        lambda: repo.create_check_run(name="difforacle", head_sha=HEAD),
        lambda: pull.create_issue_comment("hello"),
        lambda: pull.create_review(body="r", event="COMMENT"),
    ]
    for write in writes:
        with pytest.raises(GithubException) as refused:
            write()
        assert refused.value.status == 403
        assert refused.value.data["message"] == "Resource not accessible by integration"
    assert (fake.check_runs, fake.issue_comments, fake.reviews) == ({}, {}, {})
    assert fake.violations == []  # refused for lack of permission, not for a bad request


def test_an_invalid_body_is_answered_422_and_recorded(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    with pytest.raises(GithubException) as refused:
        repo.create_check_run(name="difforacle", head_sha=HEAD, status="bogus")
    assert refused.value.status == 422
    data = refused.value.data
    assert data["message"].startswith("Invalid request.\n\n") and "bogus" in data["message"]
    assert data["errors"] and data["documentation_url"].startswith("https://docs.github.com/")
    (violation,) = fake.violations
    assert (violation.operation, violation.kind) == ("checks/create", "schema")
    assert violation.body["status"] == "bogus"
    assert fake.check_runs == {}


def test_a_check_run_needs_a_known_commit_and_an_app_token(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    with pytest.raises(GithubException) as refused:
        repo.create_check_run(name="difforacle", head_sha="0" * 40)
    assert refused.value.data["message"] == f"No commit found for SHA: {'0' * 40}"
    fake.add_token("pat", login="octocat")
    with pytest.raises(GithubException) as refused:
        fake.client("pat").get_repo(f"{OWNER}/{REPO}").create_check_run(name="difforacle", head_sha=HEAD)
    assert refused.value.status == 403


def test_120_comments_come_in_pages_with_link_headers(fake: FakeGitHub, gh: Github) -> None:
    for index in range(120):
        fake.add_issue_comment(OWNER, REPO, NUMBER, f"comment {index}", login="someone")
    comments = list(gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER).get_issue_comments())
    assert [c.body for c in comments] == [f"comment {index}" for index in range(120)]
    assert {c.user.login for c in comments} == {"someone"}
    pages = fake.requests_to("GET", f"/repos/{OWNER}/{REPO}/issues/{NUMBER}/comments")
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3", "4"]

    url = f"{fake.url}/repos/{OWNER}/{REPO}/issues/{NUMBER}/comments"
    response = requests.get(url, params={"per_page": 100}, headers={"Authorization": "token t"}, timeout=10)
    assert len(response.json()) == 100
    assert response.links["next"]["url"].endswith("per_page=100&page=2")
    assert response.links["last"]["url"].endswith("page=2")
    last = requests.get(response.links["next"]["url"], headers={"Authorization": "token t"}, timeout=10)
    assert len(last.json()) == 20 and "next" not in last.links


def test_an_injected_502_is_retried_then_succeeds(fake: FakeGitHub, gh: Github) -> None:
    pull = gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    fake.fail_next(1, status=502, method="POST", path="/repos/*/issues/*/comments")
    pull.create_issue_comment("after a bad gateway")
    statuses = [r.status for r in fake.requests_to("POST", "*/comments")]
    assert statuses == [502, 201]
    assert [c.body for c in fake.comments_on(OWNER, REPO, NUMBER)] == ["after a bad gateway"]


def test_a_502_after_the_write_took_effect_makes_a_retry_write_again(fake: FakeGitHub, gh: Github) -> None:
    pull = gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    fake.fail_next(1, status=502, method="POST", processed=True)
    pull.create_issue_comment("summary")
    assert [c.body for c in fake.comments_on(OWNER, REPO, NUMBER)] == ["summary", "summary"]


@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_rate_limit_with_retry_after_is_retried(fake: FakeGitHub, gh: Github,
                                                             status: int) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    fake.rate_limit_next(2, status=status, retry_after=0, method="POST")
    repo.create_check_run(name="difforacle", head_sha=HEAD)
    posts = fake.requests_to("POST")
    assert [r.status for r in posts] == [status, status, 201]
    assert len(fake.check_runs) == 1


def test_the_rate_limit_answer_looks_like_githubs(fake: FakeGitHub) -> None:
    fake.rate_limit_next(1, status=403, retry_after=7)
    response = requests.get(f"{fake.url}/repos/{OWNER}/{REPO}", timeout=10)
    assert response.status_code == 403 and response.headers["Retry-After"] == "7"
    assert response.json()["message"].startswith("You have exceeded a secondary rate limit")
    assert requests.get(f"{fake.url}/repos/{OWNER}/{REPO}", timeout=10).status_code == 200


def test_comments_are_written_as_the_tokens_login(fake: FakeGitHub) -> None:
    fake.add_token("app-token", login="difforacle[bot]")
    fake.add_issue_comment(OWNER, REPO, NUMBER, "I like it", login="reviewer")
    pull = fake.client("app-token").get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    mine = pull.create_issue_comment("summary")
    assert (mine.user.login, mine.user.type) == ("difforacle[bot]", "Bot")
    assert [(c.user.login, c.body) for c in pull.get_issue_comments()] == [
        ("reviewer", "I like it"), ("difforacle[bot]", "summary")]
    with pytest.raises(GithubException) as refused:  # an installation token is no user
        fake.client("app-token").get_user().login  # noqa: B018
    assert refused.value.status == 403


def test_pending_reviews_are_seen_by_their_author_only(fake: FakeGitHub, gh: Github) -> None:
    pull = gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER)
    pull.create_review(body="draft")  # no event: PENDING
    with pytest.raises(GithubException):
        pull.create_review(body="another draft")
    fake.add_token("other", login="someone-else[bot]")
    assert [r.state for r in pull.get_reviews()] == ["PENDING"]
    assert list(fake.client("other").get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER).get_reviews()) == []


def test_a_strict_fake_refuses_unknown_tokens() -> None:
    with FakeGitHub(strict_tokens=True).serve() as strict:
        strict.add_repo(OWNER, REPO)
        with pytest.raises(GithubException) as refused:
            strict.client("nobody").get_repo(f"{OWNER}/{REPO}")
        assert refused.value.status == 401


def test_what_pygithub_requests_implicitly(fake: FakeGitHub) -> None:
    """The publisher's request count depends on these; a PyGithub upgrade that changes them shows here."""
    eager = fake.client()
    eager.get_repo(f"{OWNER}/{REPO}")  # lazy=False (the default) fetches the repository
    assert [r.path for r in fake.requests] == [f"/repos/{OWNER}/{REPO}"]

    fake.requests.clear()
    repo = fake.client(lazy=True).get_repo(f"{OWNER}/{REPO}")
    pull = repo.get_pull(NUMBER)
    assert fake.requests == []  # lazy objects: nothing yet
    pull.create_issue_comment("hi")  # needs pull.issue_url: GET the pull request first
    # a lazy Commit knows its sha from its URL and the review goes to pull.url: no GET
    repo.get_pull(NUMBER).create_review(commit=repo.get_commit(HEAD), body="r", event="COMMENT")
    assert [(r.method, r.operation) for r in fake.requests] == [
        ("GET", "pulls/get"), ("POST", "issues/create-comment"), ("POST", "pulls/create-review")]

    fake.requests.clear()
    eager_repo = eager.get_repo(f"{OWNER}/{REPO}")
    eager_repo.get_pull(NUMBER).create_review(commit=eager_repo.get_commit(HEAD), body="r", event="COMMENT")
    assert [(r.method, r.operation) for r in fake.requests] == [
        ("GET", "repos/get"), ("GET", "pulls/get"), ("GET", "repos/get-commit"),
        ("POST", "pulls/create-review")]


def test_pull_files_come_from_a_git_repository(tmp_path: Path, fake: FakeGitHub, gh: Github) -> None:
    builder = RepoBuilder(tmp_path)
    text = "".join(f"line {i}\n" for i in range(1, 31))
    after = {"pkg/mod.py": text.replace("line 15\n", "X\n"), "old.txt": None, "new.txt": "fresh\n"}
    base, head = make_pr(builder, {"pkg/mod.py": text, "old.txt": "gone\n"}, after)
    fake.add_pull_from_git("octo", "lib", 3, tmp_path, "main", "feature")
    pull = gh.get_repo("octo/lib").get_pull(3)
    assert (pull.base.sha, pull.head.sha) == (base, head)
    files = {f.filename: f for f in pull.get_files()}
    assert {name: f.status for name, f in files.items()} == {"new.txt": "added", "old.txt": "removed",
                                                               "pkg/mod.py": "modified"}
    assert files["pkg/mod.py"].patch.startswith("@@ -12,7 +12,7 @@")
    assert (files["pkg/mod.py"].additions, files["pkg/mod.py"].deletions) == (1, 1)
    pull.create_review(commit=gh.get_repo("octo/lib").get_commit(head), body="", event="COMMENT",
                       comments=[{"path": "pkg/mod.py", "line": 15, "body": "changed"}])
    with pytest.raises(GithubException):
        pull.create_review(body="", event="COMMENT",
                           comments=[{"path": "pkg/mod.py", "line": 1, "body": "far"}])


def test_git_files_detect_renames(tmp_path: Path) -> None:
    builder = RepoBuilder(tmp_path)
    text = "".join(f"row {i}\n" for i in range(20))
    base, head = make_pr(builder, {"a.txt": text}, {"a.txt": None, "b.txt": text + "row 20\n"})
    (renamed,) = git_files(tmp_path, base, head)
    assert (renamed.filename, renamed.previous_filename, renamed.status) == ("b.txt", "a.txt", "renamed")
    assert [line.new for line in parse_patch(renamed.patch) if line.kind == "+"] == [21]


def test_responses_have_the_fields_github_always_sends(fake: FakeGitHub) -> None:
    """Each operation's success answer has the top-level fields its OpenAPI response requires."""
    url, auth = f"{fake.url}/repos/{OWNER}/{REPO}", {"Authorization": "token t"}

    def call(method: str, path: str, body: dict | None = None) -> dict:
        response = requests.request(method, url + path, json=body, headers=auth, timeout=10)
        assert response.status_code in (200, 201), response.text
        data = response.json()
        return data[0] if isinstance(data, list) else data

    run = call("POST", "/check-runs", {"name": "n", "head_sha": HEAD})
    comment = call("POST", f"/issues/{NUMBER}/comments", {"body": "x"})
    answers = {
        "checks/create": run,
        "checks/update": call("PATCH", f"/check-runs/{run['id']}", {"status": "in_progress"}),
        "issues/create-comment": comment,
        "issues/list-comments": call("GET", f"/issues/{NUMBER}/comments"),
        "issues/update-comment": call("PATCH", f"/issues/comments/{comment['id']}", {"body": "y"}),
        "pulls/get": call("GET", f"/pulls/{NUMBER}"),
        "pulls/list-files": call("GET", f"/pulls/{NUMBER}/files"),
        "pulls/create-review": call("POST", f"/pulls/{NUMBER}/reviews", {"event": "COMMENT", "body": "b"}),
        "pulls/list-reviews": call("GET", f"/pulls/{NUMBER}/reviews"),
        "repos/get": call("GET", ""),
        "checks/list-for-ref": call("GET", f"/commits/{HEAD}/check-runs"),
        "repos/get-collaborator-permission-level": call("GET", "/collaborators/octocat/permission"),
        "actions/list-workflow-runs-for-repo": call("GET", "/actions/runs"),
        "actions/re-run-workflow": call("POST", f"/actions/runs/{fake.add_workflow_run(OWNER, REPO, HEAD).id}"
                                        "/rerun"),
        **_app_answers(fake),
    }
    operations = load_operations()["operations"]
    assert set(answers) == set(operations)
    for operation, answer in answers.items():
        assert set(operations[operation]["response"]["required"]) <= set(answer), operation
    assert fake.violations == []


def test_fixtures_load_and_name_their_source() -> None:
    operations = load_operations()
    assert operations["_source"]["package"] == "@octokit/openapi"
    assert operations["_source"]["version"] and operations["_source"]["trimmed_on"]
    expected = {"checks/create", "checks/update", "issues/list-comments", "issues/create-comment",
                "issues/update-comment", "pulls/get", "pulls/list-files", "pulls/list-reviews",
                "pulls/create-review", "repos/get", "checks/list-for-ref", "apps/get-authenticated",
                "apps/create-installation-access-token", "apps/create-from-manifest",
                "repos/get-collaborator-permission-level", "actions/list-workflow-runs-for-repo",
                "actions/re-run-workflow"}
    assert set(operations["operations"]) == expected
    for operation in operations["operations"].values():
        body = operation["request_body"]
        if body is not None:
            Draft202012Validator.check_schema(body["schema"])
            assert "$ref" not in json.dumps(body["schema"])
    hooks = {path.name: json.loads(path.read_text()) for path in (FIXTURES / "webhooks").glob("*.json")}
    assert set(hooks) >= {"pull_request.opened.json", "pull_request.synchronize.json",
                          "pull_request.opened.fork.json", "check_run.rerequested.json",
                          "installation.created.json"}
    for hook in hooks.values():
        assert hook["_source"]["package"] == "@octokit/webhooks-examples" and hook["_source"]["version"]
    fork = hooks["pull_request.opened.fork.json"]["pull_request"]
    assert fork["head"]["repo"]["fork"] is True
    assert fork["head"]["repo"]["full_name"] != fork["base"]["repo"]["full_name"]
    synchronize = hooks["pull_request.synchronize.json"]
    assert synchronize["after"] == synchronize["pull_request"]["head"]["sha"]
    on_issue, on_pull = hooks["issue_comment.created.json"], hooks["issue_comment.created.pull_request.json"]
    assert "pull_request" not in on_issue["issue"]
    assert on_pull["issue"]["pull_request"]["url"].endswith("/pulls/1")
    assert on_pull["comment"]["user"]["type"] == "User" and on_pull["installation"]["id"]


def test_a_users_permission_is_their_role_with_maintain_shown_as_write(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    for login, role in (("mia", "maintain"), ("wes", "write"), ("tia", "triage"), ("ada", "admin")):
        fake.add_collaborator(OWNER, REPO, login, role)
    logins = ("mia", "wes", "tia", "ada", "stranger")
    assert [repo.get_collaborator_permission(login) for login in logins] == [
        "write", "write", "read", "admin", "read"]
    assert repo.get_collaborator_permission(OWNER) == "admin"
    assert fake.requests[-1].operation == "repos/get-collaborator-permission-level"


# --- GitHub Apps, installation tokens, manifests, git over HTTP ---------------------------------

def _app_answers(fake: FakeGitHub) -> dict[str, dict]:
    """The success answers of the App operations (JWT, token, manifest), for the response check."""
    app, key = fake.add_app("answers")
    installation = fake.add_installation(app, OWNER, [REPO])
    jwt_header = {"Authorization": f"Bearer {Auth.AppAuth(app.id, key).token}"}
    code = fake.create_app_from_manifest({"name": "From manifest", "url": "https://example.com"})
    return {
        "apps/get-authenticated": requests.get(f"{fake.url}/app", headers=jwt_header, timeout=10).json(),
        "apps/create-installation-access-token": requests.post(
            f"{fake.url}/app/installations/{installation.id}/access_tokens", headers=jwt_header,
            json={"repositories": [REPO]}, timeout=10).json(),
        "apps/create-from-manifest": requests.post(f"{fake.url}/app-manifests/{code}/conversions",
                                                   timeout=10).json(),
    }


def _integration(fake: FakeGitHub, app_id: int, key: str) -> GithubIntegration:
    return GithubIntegration(auth=Auth.AppAuth(app_id, key), base_url=fake.url,
                             retry=GithubRetry(total=0), seconds_between_requests=None,
                             seconds_between_writes=None)


def test_an_installation_token_is_narrowed_to_the_repositories_and_permissions_asked(
        fake: FakeGitHub) -> None:
    other = fake.add_repo(OWNER, "other")
    app, key = fake.add_app("difforacle")
    installation = fake.add_installation(app, OWNER, [REPO, "other"])
    integration = _integration(fake, app.id, key)
    assert integration.get_app().slug == "difforacle"

    _, answer = integration.requester.requestJsonAndCheck(
        "POST", f"/app/installations/{installation.id}/access_tokens",
        input={"repository_ids": [fake.repos[f"{OWNER}/{REPO}"].id],
               "permissions": {"checks": "write", "contents": "read"}})
    token = answer["token"]
    assert fake.tokens[token].repositories == {f"{OWNER}/{REPO}"}
    assert fake.tokens[token].login == "difforacle[bot]"
    gh = fake.client(token)
    gh.get_repo(f"{OWNER}/{REPO}").create_check_run(name="difforacle", head_sha=HEAD)  # checks: write
    with pytest.raises(GithubException) as outside:
        gh.get_repo(f"{OWNER}/other").create_check_run(name="difforacle", head_sha=HEAD)
    assert outside.value.status == 403
    with pytest.raises(GithubException) as not_granted:  # pull_requests was not asked for
        gh.get_repo(f"{OWNER}/{REPO}").get_pull(NUMBER).create_issue_comment("hi")
    assert not_granted.value.status == 403
    assert other.id != fake.repos[f"{OWNER}/{REPO}"].id and fake.violations == []


def test_a_token_for_more_than_the_installation_has_is_refused(fake: FakeGitHub) -> None:
    fake.add_repo(OWNER, "elsewhere")
    app, key = fake.add_app("difforacle", permissions={"contents": "read", "metadata": "read"})
    installation = fake.add_installation(app, OWNER, [REPO])
    requester = _integration(fake, app.id, key).requester
    url = f"/app/installations/{installation.id}/access_tokens"
    for body in ({"repositories": ["elsewhere"]}, {"permissions": {"checks": "write"}},
                 {"permissions": {"contents": "sideways"}}):
        with pytest.raises(GithubException) as refused:
            requester.requestJsonAndCheck("POST", url, input=body)
        assert refused.value.status == 422
    assert [v.kind for v in fake.violations] == ["schema"]  # "sideways" is not in the schema's enum


def test_app_endpoints_need_a_jwt_signed_by_the_apps_key(fake: FakeGitHub) -> None:
    app, key = fake.add_app("difforacle")
    _, stranger_key = fake.add_app("stranger")
    forged = Auth.AppAuth(app.id, stranger_key).token  # the right id, the wrong key
    for header in ({}, {"Authorization": "token t"}, {"Authorization": f"Bearer {forged}"}):
        assert requests.get(f"{fake.url}/app", headers=header, timeout=10).status_code == 401
    long_lived = Auth.AppAuth(app.id, key, jwt_expiry=600, jwt_issued_at=-60).token
    assert requests.get(f"{fake.url}/app", headers={"Authorization": f"Bearer {long_lived}"},
                        timeout=10).status_code == 401  # more than 10 minutes from iat to exp


def test_a_manifest_code_is_converted_once_into_the_apps_credentials(fake: FakeGitHub) -> None:
    manifest = {"name": "My difforacle", "url": "https://example.com", "public": False,
                "hook_attributes": {"url": "https://example.com/webhook"},
                "default_permissions": {"checks": "write"}, "default_events": ["pull_request"]}
    code = fake.create_app_from_manifest(json.dumps(manifest))
    first = requests.post(f"{fake.url}/app-manifests/{code}/conversions", timeout=10)
    assert first.status_code == 201
    data = first.json()
    assert data["slug"] == "my-difforacle" and data["pem"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert data["permissions"] == {"checks": "write"} and data["events"] == ["pull_request"]
    assert _integration(fake, data["id"], data["pem"]).get_app().slug == "my-difforacle"
    assert requests.post(f"{fake.url}/app-manifests/{code}/conversions", timeout=10).status_code == 404


def test_check_runs_of_a_commit_are_listed_by_name_latest_first(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(f"{OWNER}/{REPO}")
    first = repo.create_check_run(name="difforacle", head_sha=HEAD)
    repo.create_check_run(name="lint", head_sha=HEAD)
    second = repo.create_check_run(name="difforacle", head_sha=HEAD)
    commit = repo.get_commit(HEAD)
    assert [r.id for r in commit.get_check_runs(check_name="difforacle")] == [second.id]
    every = commit.get_check_runs(check_name="difforacle", filter="all")
    assert [r.id for r in every] == [second.id, first.id]
    assert fake.requests_to("GET", "*/check-runs")[-1].query["check_name"] == "difforacle"


def _git(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {"PATH": os.environ["PATH"], "HOME": str(cwd or "/"), "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env={**base, **(env or {})}, capture_output=True,
                          text=True, timeout=60)


def _auth(token: str) -> dict[str, str]:
    header = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraheader",
            "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {header}"}


def test_git_fetch_over_http_needs_a_token_for_the_repository(tmp_path: Path, fake: FakeGitHub) -> None:
    builder = RepoBuilder(tmp_path / "served")
    base, head = make_pr(builder, {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    fake.add_git_repo("octo", "lib", builder.root)
    fake.add_token("narrow", "difforacle[bot]").repositories = frozenset({"octo/lib"})
    fake.add_token("elsewhere", "difforacle[bot]").repositories = frozenset({f"{OWNER}/{REPO}"})
    clone = tmp_path / "clone"
    assert _git("init", "-q", str(clone)).returncode == 0
    url = f"{fake.url}/octo/lib.git"

    anonymous = _git("fetch", "-q", "--no-tags", url, base, cwd=clone)
    assert anonymous.returncode != 0
    wrong = _git("fetch", "-q", "--no-tags", url, base, cwd=clone, env=_auth("elsewhere"))
    assert wrong.returncode != 0 and "not found" in wrong.stderr.lower()
    fetched = _git("fetch", "-q", "--no-tags", url, base, head, cwd=clone, env=_auth("narrow"))
    assert fetched.returncode == 0, fetched.stderr
    assert _git("cat-file", "-e", f"{head}^{{commit}}", cwd=clone).returncode == 0
    tokens = {r.token for r in fake.requests if r.operation and r.operation.startswith("git/")}
    assert tokens == {None, "elsewhere", "narrow"}
    assert {r.status for r in fake.requests if r.token == "narrow"} == {200}
    push = _git("push", "-q", url, f"{head}:refs/heads/evil", cwd=clone, env=_auth("narrow"))
    assert push.returncode != 0


def test_workflow_runs_are_listed_by_head_and_event_and_run_again(fake: FakeGitHub) -> None:
    first = fake.add_workflow_run(OWNER, REPO, HEAD)
    fake.add_workflow_run(OWNER, REPO, HEAD, event="workflow_run", path=".github/workflows/publish.yml")
    fake.add_workflow_run(OWNER, REPO, "f" * 40)
    url, auth = f"{fake.url}/repos/{OWNER}/{REPO}/actions", {"Authorization": "token t"}
    listed = requests.get(f"{url}/runs", params={"head_sha": HEAD, "event": "pull_request"}, headers=auth,
                          timeout=10).json()
    assert listed["total_count"] == 1 and listed["workflow_runs"][0]["id"] == first.id
    assert requests.post(f"{url}/runs/{first.id}/rerun", headers=auth, timeout=10).status_code == 201
    assert (first.run_attempt, first.status, first.reruns) == (2, "queued", [{}])
    again = requests.post(f"{url}/runs/{first.id}/rerun", headers=auth, timeout=10)
    assert again.status_code == 403  # not completed yet
    assert fake.violations == []
