"""The GitHub App end to end, as a user runs it: `difforacle app run` in a subprocess (web server
and worker, embedded SQLite queue, bubblewrap sandbox) against the fake GitHub, which mints the
installation tokens, serves the repository over git's HTTP protocol and records what is published.

Why one long test rather than many: the unit and runner tests cover each piece; this one covers
the seams between them (the command's configuration, the signed delivery, the queue between the
web thread and the worker, the publishing, the redelivery, the push, the shutdown) in the order
a pull request's life goes through them.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.app_helpers import (
    AppProcess,
    Published,
    app_environment,
    install_app,
    published_on,
    pull_request_payload,
    wait_for,
)
from support.fake_github import FakeGitHub, git_files
from support.repos import RepoBuilder, make_pr

from difforacle.bot.app.queue import make_huey
from difforacle.bot.app.state import JobState
from difforacle.bot.summary import REVIEW_MARKER, SUMMARY_MARKER

OWNER, NAME, NUMBER = "octo", "clock", 12
FULL_NAME = f"{OWNER}/{NAME}"
BUDGET = 8.0
JOB_TIMEOUT = 120.0  # seconds for one job: the budget, a venv, git and publishing, on a busy machine
UNITS = '''"""Conversions between units of time."""


def hours_to_seconds(hours: int) -> int:
    """How many seconds `hours` hours last."""
    return {expression}
'''
BEFORE = {"clock/__init__.py": "", "clock/units.py": UNITS.format(expression="hours * 3600")}
REGRESSION = {"clock/units.py": UNITS.format(expression="hours * 3660")}
FIX = {"clock/units.py": UNITS.format(expression="hours * 60 * 60")}  # same behaviour as base
CHANGED_LINE = ("clock/units.py", 6)


def table_rows(summary: str) -> list[list[str]]:
    """The findings table of a summary comment: each row's cells after the finding's id."""
    rows = [line for line in summary.splitlines() if line.startswith("| ") and not line.startswith("| |")]
    return [[cell.strip() for cell in row.strip("|").split("|")][1:] for row in rows]


@pytest.mark.slow
def test_a_pull_request_is_tested_published_once_and_updated_on_push(tmp_path: Path,
                                                                      bubblewrap: object) -> None:
    builder = RepoBuilder(tmp_path / "origin")
    base, head = make_pr(builder, BEFORE, REGRESSION)
    with FakeGitHub(strict_tokens=True).serve() as fake:
        fake.add_git_repo(OWNER, NAME, builder.root)
        fake.add_pull_from_git(OWNER, NAME, NUMBER, builder.root, "main", "feature", title="Faster clocks")
        installed = install_app(fake, tmp_path / "secrets", OWNER, [NAME])
        data_dir = tmp_path / "data"
        env = app_environment(data_dir, fake, installed, budget=BUDGET)
        queue = make_huey(f"sqlite:///{data_dir / 'queue.sqlite3'}")  # the App's embedded queue, read here
        state = JobState(queue)

        def ours() -> Published:
            return published_on(fake, FULL_NAME, NUMBER, installed.login)

        def settled(delivery: str, head_sha: str) -> bool:
            """The delivery's job is over: the check run on its head completed, the delivery done."""
            runs = [run for run in ours().check_runs if run.head_sha == head_sha]
            return (bool(runs) and all(run.status == "completed" for run in runs)
                    and state.delivery_status(delivery) == "done")

        with AppProcess(env, tmp_path / "app.log") as app:
            try:
                # 1. the pull request is opened: answered at once, then tested and published
                opened = pull_request_payload(fake, installed.installation_id, FULL_NAME, NUMBER)
                started = time.monotonic()
                assert app.deliver("pull_request", opened, "delivery-opened") == (
                    202, {"status": "queued", "jobs": [f"{FULL_NAME}#{NUMBER}@{head}"]})
                wait_for(lambda: bool(ours().comments), timeout=JOB_TIMEOUT, what="the summary comment")
                to_comment = time.monotonic() - started
                wait_for(lambda: settled("delivery-opened", head), timeout=30, what="the first job to end")

                first = ours()
                [run] = first.check_runs
                assert (run.head_sha, run.status, run.conclusion) == (head, "completed", "neutral")
                [comment] = first.comments
                assert comment.body.startswith(SUMMARY_MARKER)
                assert table_rows(comment.body) == [
                    ["`clock.units:hours_to_seconds`", "return", "`3600`", "`3660`",
                     "`clock/units.py:6` (review comment)"]]
                assert "Ran in the bubblewrap sandbox" in comment.body
                [review] = first.reviews
                assert review.commit_id == head and REVIEW_MARKER in review.body
                assert [(c.path, c.line) for c in review.comments] == [CHANGED_LINE]
                assert "- base: `3600`\n- head: `3660`" in review.comments[0].body

                # 2. GitHub redelivers the same delivery: answered as a duplicate, nothing runs
                requests = len(fake.requests)
                assert app.deliver("pull_request", opened, "delivery-opened") == (
                    200, {"status": "duplicate", "delivery_status": "done"})
                assert queue.pending_count() == 0 and state.running_jobs() == []
                assert len(fake.requests) == requests

                # 3. a push fixes the regression: a new check run, the same comment edited in place
                builder.switch("feature")
                fixed = builder.commit(FIX, "keep the hour at 3600 seconds")
                builder.switch("main")
                fake.set_pull_head(OWNER, NAME, NUMBER, fixed, files=git_files(builder.root, base, fixed))
                pushed = pull_request_payload(fake, installed.installation_id, FULL_NAME, NUMBER,
                                              "synchronize", before=head)
                assert app.deliver("pull_request", pushed, "delivery-pushed")[0] == 202
                wait_for(lambda: settled("delivery-pushed", fixed), timeout=JOB_TIMEOUT,
                         what="the job of the new head to end")

                second = ours()
                assert [(r.head_sha, r.status, r.conclusion) for r in second.check_runs] == [
                    (head, "completed", "neutral"), (fixed, "completed", "success")]
                [edited] = second.comments
                assert edited.id == comment.id and edited.updated_at != comment.updated_at
                span = f"{base[:7]}..{fixed[:7]}"
                assert edited.body.startswith(f"{SUMMARY_MARKER}\n\n## difforacle: {span}\n\n"
                                              "No behavioural difference")
                assert table_rows(edited.body) == [] and "3660" not in edited.body
                assert [(r.id, r.commit_id) for r in second.reviews] == [(review.id, head)]
                assert fake.violations == []
            except BaseException:
                print(app.log())  # shown by pytest when the test fails
                raise

            # 4. stopped as a service manager stops it: cleanly, in time
            assert app.stop(timeout=30) == 0, app.log()

        log = app.log()
        assert "Traceback" not in log and " ERROR " not in log, log
        # opened, pushed: no other
        assert log.count("Executing difforacle.bot.app.queue.difforacle.run_job") == 2, log
        for token, identity in fake.tokens.items():  # the installation tokens never reach the log
            if identity.installation_id is not None:
                assert token not in log
    print(f"delivery to summary comment: {to_comment:.1f} s")
