"""One job of the App: a pull request at one head commit, from a token to the published findings.

The steps, and why each is the way it is:

1. An installation token narrowed to the job's repository, with contents read, pull
   requests write and checks write (`installation.py`): a token that leaks reaches nothing else.
2. The check run, in progress, so that the pull request shows the run at once; a job run again
   (its worker was killed) takes that check run over instead of adding a second one: the queue's
   state remembers it, so that finding it costs no request (`_start_check_run`).
3. Base and head fetched into a fresh directory under `data_dir/work`, the token only in git's
   environment (`checkout.py`); the directory is removed whatever happens.
4. `[tool.difforacle]` read from the *base* commit: a pull request does not choose how it is
   itself judged (its fail-on, ignored targets, install commands). The engine gets that file
   (`diff --config`), never the head's, and applies its scope and float policy as it runs.
5. Dependencies, the only step with a way out: to the package registries, through the egress
   proxy (`egress.py`; the sandbox itself has no network). A virtual environment made inside the
   sandbox, then the configured `install` commands, by default `pip install -r requirements.txt`
   if the head has one and `pip install .` if the head is a project (pyproject.toml with
   [project] or [build-system], or setup.py). They run in the head checkout with the
   environment's bin first on PATH, in the sandbox with no secret in their environment; the
   worker's package-index settings (mirror, certificates) are passed to this step only, and its
   proxy is the egress proxy's upstream. What the proxy refused is named if the step fails.
   If the head cannot be installed (a setup.py importing the package the head broke), the
   base's dependencies are installed from a clone made before any of the pull request's code
   ran, and the engine then reports what the head broke. Git never runs on a checkout that
   a sandboxed step has written to.
6. The engine (`python -m difforacle.bot diff`) in the sandbox with no way out, with the environment's
   interpreter as --python; both steps together within `settings.job_timeout`. Its JSON
   report is read without following links (the sandbox could plant one) and validated. Its
   progress, a small file it rewrites in its output folder, is read the same way and shown on
   the check run while it runs (`bot.progress`). A new push stops it: while it runs, the queue's
   state is asked every CURRENT_POLL seconds whether the job's head is still the latest, and the
   sandbox is killed once it is not (the check run says superseded, the slot goes to the new head).
7. Publishing under the pull request's lock, and only if the job's head is still the head
   both for the queue and for GitHub (read as git's `refs/pull/N/head`, which costs none of the
   installation's API requests; through the API only if git cannot tell), read again just
   before the review, the first write; otherwise the check run says it was superseded and
   nothing else is written. The summary names the sandbox that ran.

Failures give `JobOutcome("failed", one line)` and complete the check run with a failure (or
timed_out) conclusion; running the job again publishes nothing twice (see `bot.publisher`).

A command commented on the pull request (`/difforacle accept`, `rerun`) is answered first
(`run_command`: the same narrowed token, the commenter's permission, the acceptance recorded in
the summary comment, a reply, under the pull request's publishing lock); when it asks for it, the
pull request's head as GitHub has it now is then run as above, so the check reflects the
acceptance as soon as that run publishes.
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import shlex
import shutil
import stat
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from jsonschema import ValidationError

from difforacle.bot import report_seal
from difforacle.bot.comment_commands import CommentEvent, answer
from difforacle.bot.config import Config, ConfigError, load_config
from difforacle.bot.github_client import CheckRunOutput, CheckRunRef, GitHubClient, GitHubError, IssueComment
from difforacle.bot.progress import describe as describe_progress
from difforacle.bot.progress import watch_progress_file
from difforacle.bot.publisher import HeadMoved, Publisher, PublishSettings, PullRequestContext
from difforacle.bot.workflow import Workflow
from difforacle.generator import Progress, validate_report

from . import job_disk
from .checkout import FetchError, clone_commit, clone_url, fetch_pull_request, pull_head, read_file
from .egress import EgressProxy, allow_list
from .events import MAX_BODY
from .installation import AppAccess, InstallationToken
from .model import AppError, PullRequestJob
from .sandbox import Limits, Mount, Sandbox, SandboxError, SandboxRequest, SandboxResult
from .settings import AppSettings

log = logging.getLogger("difforacle.app.runner")

# where the work directory's parts appear inside the sandbox
REPO, VENV, OUT, CONFIG, KEY = "/work/repo", "/work/venv", "/work/out", "/work/config", "/work/key"
REPORT_NAME = "report.json"
KEY_NAME = "report.key"  # the engine's signing key (bot.report_seal), deleted by the engine as it starts
PROGRESS_NAME = "progress.json"  # rewritten by the engine in the sandbox, read for the check run
CURRENT_POLL = 2.0  # seconds between looks at whether a running engine's head is still the latest
MAX_REPORT_BYTES = 50_000_000
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
SYSTEM_CERTIFICATES = "/etc/ssl/certs/ca-certificates.crt"
# the worker's proxy variables stay with the egress proxy, which goes through them (`egress.py`)
PACKAGE_INDEX_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT")


@dataclass(frozen=True)
class JobOutcome:
    status: str  # "published" | "superseded" | "failed" | "answered" (a command that ran nothing)
    detail: str


class JobStateView(Protocol):
    """What the runner needs of the queue's shared state (bot/app/state.py)."""

    def is_current(self, job: PullRequestJob) -> bool: ...

    def publish_lock(self, pull_key: str) -> AbstractContextManager[None]: ...

    def record_head(self, job: PullRequestJob, before: str | None = None, *, updated: float | None = None,
                    first: bool = False) -> bool: ...

    def check_run(self, job: PullRequestJob) -> dict | None: ...

    def open_check_run(self, job: PullRequestJob) -> dict | None: ...

    def check_run_completed(self, job: PullRequestJob) -> None: ...

    def remember_check_run(self, job: PullRequestJob, check_run_id: int | None = None,
                           url: str = "") -> None: ...

    def summary_comment(self, pull_key: str) -> dict | None: ...

    def remember_summary_comment(self, pull_key: str, comment_id: int, state_block: str) -> None: ...

    def forget_summary_comment(self, pull_key: str) -> None: ...

    def newest_comment(self, pull_key: str) -> int: ...


class JobFailed(Exception):
    """A step failed; the message is one line for the log and the check run, without secrets."""

    def __init__(self, message: str, conclusion: str = "failure") -> None:
        super().__init__(message)
        self.conclusion = conclusion


class Superseded(Exception):
    """The pull request moved on to another head: nothing is published for this one."""


def run_job(job: PullRequestJob, settings: AppSettings, state: JobStateView, *,
            sandbox: Sandbox | None = None, github: AppAccess | None = None) -> JobOutcome:
    """Run one job end to end (see the module docstring); never raises for an expected failure."""
    if job.is_command:
        return run_command(job, settings, state, sandbox=sandbox, github=github)
    if not state.is_current(job):
        _cancel_left_check_run(job, settings, state, github)
        return JobOutcome("superseded", "a newer head arrived before the job started")
    token: InstallationToken | None = None
    publisher: Publisher | None = None
    try:
        github = github or AppAccess(settings)
        token = github.token_for(job)
        client = github.client(job, token)
        pull = PullRequestContext(job.repository, job.number, job.base_sha, job.head_sha, fork=job.from_fork,
                                  title=job.title, head_ref=job.head_ref, body=job.body)
        publisher, earlier = _start_check_run(job, state, client, pull, github.bot_login())
        with _work_dir(settings, job) as work:
            return _run_in(work, job, settings, state, sandbox, client, token, publisher,
                           head_reviewed=None if earlier else False)
    except Superseded as exc:
        if publisher is not None:
            publisher.abandon("Superseded", f"Not published: {exc}", "cancelled")
        log.info("job %s: superseded: %s", job.job_id, exc)
        return JobOutcome("superseded", str(exc))
    except (JobFailed, GitHubError, FetchError, AppError, SandboxError, OSError) as exc:
        reason = _redact(_one_line(exc), token)
        if publisher is not None:
            publisher.abandon("difforacle could not run", f"difforacle could not test this commit: {reason}",
                              getattr(exc, "conclusion", "failure"))
        log.warning("job %s failed: %s", job.job_id, reason)
        return JobOutcome("failed", reason)
    finally:
        if publisher is not None and publisher.check_run_completed:
            state.check_run_completed(job)  # published or abandoned: nothing is left open for a later run


def _cancel_left_check_run(job: PullRequestJob, settings: AppSettings, state: JobStateView,
                           github: AppAccess | None) -> None:
    """A run of this head was killed after creating its check run, and a newer push came before the
    run was recovered: the check run is cancelled, or it would say "in progress" forever. One
    attempt: whatever GitHub answers, nothing else will come back to it."""
    left = state.open_check_run(job)
    if not left:
        return
    try:
        github = github or AppAccess(settings)
        client = github.client(job, github.token_for(job))
        client.update_check_run(int(left["id"]), CheckRunOutput(
            "Superseded", "Not published: a newer head arrived before this run could finish."),
            conclusion="cancelled")
        log.info("job %s: its check run, left in progress by a stopped run, cancelled", job.job_id)
    except (GitHubError, AppError, OSError) as exc:
        log.warning("job %s: could not cancel the check run a stopped run left: %s", job.job_id,
                    _one_line(exc))
    finally:
        state.check_run_completed(job)


def _start_check_run(job: PullRequestJob, state: JobStateView, client: GitHubClient, pull: PullRequestContext,
                     bot_login: str) -> tuple[Publisher, bool]:
    """The publisher, its check run in progress, and whether an earlier run of this head started
    (without one, this head has no review of ours either). A run of a head that an earlier run
    (killed, or failed on a queue error) gave a check run takes that one over without a request;
    only if the earlier run died while creating it are the head's check runs listed to find it."""
    remembered = state.check_run(job)
    publish = PublishSettings(bot_login=bot_login, reuse_check_run=remembered == {}, accept_button=True)
    publisher = Publisher(client, pull, publish, Workflow({}, _LogStream(job)))
    if remembered:  # {"id", "url"}: created by the earlier run
        publisher.start(known=CheckRunRef(int(remembered["id"]), remembered["url"]))
        return publisher, True
    if remembered is None:
        state.remember_check_run(job)  # creating: a run after one that dies now must look for it
    publisher.start()
    if publisher.check_run is not None:
        state.remember_check_run(job, publisher.check_run.id, publisher.check_run.html_url)
    return publisher, remembered is not None


def run_command(job: PullRequestJob, settings: AppSettings, state: JobStateView, *,
                sandbox: Sandbox | None = None, github: AppAccess | None = None) -> JobOutcome:
    """Answer a command job; then, if it asks for it, run the pull request's current head."""
    token: InstallationToken | None = None
    try:
        github = github or AppAccess(settings)
        token = github.token_for(job)
        client = github.client(job, token)
        comment = CommentEvent(job.repository, job.number, job.comment_id, job.commenter, job.comment,
                               job.commenter_type or "User", head_sha=job.head_sha)
        with state.publish_lock(job.pull_key):  # the state is rewritten by publishing too
            state.forget_summary_comment(job.pull_key)  # the answer rewrites the summary's hidden state
            answered = answer(client, comment, github.bot_login())
    except (GitHubError, AppError) as exc:
        reason = _redact(_one_line(exc), token)
        log.warning("job %s failed: %s", job.job_id, reason)
        return JobOutcome("failed", reason)
    log.info("job %s: %s: %s", job.job_id, answered.status, answered.detail)
    pull = answered.pull
    if not answered.rerun or pull is None:
        return JobOutcome("answered", f"{answered.status}: {answered.detail}")
    analysis = replace(job, base_sha=pull.base_sha, head_sha=pull.head_sha, title=pull.title,
                       body=pull.body[:MAX_BODY], head_ref=pull.head_ref,
                       head_repository=pull.head_repository, comment_id=0, commenter="", commenter_type="",
                       comment="", check_run_id=0)
    if not state.record_head(analysis):
        return JobOutcome("superseded", f"the head {pull.head_sha[:12]} was superseded already")
    return run_job(analysis, settings, state, sandbox=sandbox, github=github)


def _run_in(work: Path, job: PullRequestJob, settings: AppSettings, state: JobStateView,
            sandbox: Sandbox | None, client: GitHubClient, token: InstallationToken,
            publisher: Publisher, head_reviewed: bool | None) -> JobOutcome:
    repo, venv, out, home = work / "repo", work / "venv", work / "out", work / "home"
    settings_dir = work / "config"
    for folder in (venv, out, settings_dir):
        folder.mkdir()
    log.info("job %s: fetching with a token for %s only (%s)", job.job_id, ", ".join(token.repositories),
             ", ".join(f"{name}: {level}" for name, level in sorted(token.permissions.items())))
    url = clone_url(settings.web_url, job.repository)
    try:
        fetch_pull_request(job, repo, url, token.token, home)
    except FetchError:
        if client.pull_head_sha(job.number) != job.head_sha:
            raise Superseded(f"the pull request's head is no longer {job.head_sha[:12]}") from None
        raise
    config = _base_config(repo, job, home, settings_dir)
    publisher.configure(replace(publisher.settings, fail_on=config.fail_on, min_reach=config.min_reach,
                                max_comments=config.max_comments, comment=config.comment))
    if sandbox is None:
        from .sandbox_choice import select_sandbox

        sandbox = select_sandbox(settings.sandbox, settings.image)
    deadline = time.monotonic() + settings.job_timeout
    base_checkout = work / "base"
    clone_commit(repo, job.base_sha, base_checkout, home)  # before the pull request's code runs
    notes: list[str] = []
    try:
        commands = list(config.install) or _default_install(repo, job.head_sha, home)
        installed = _install(sandbox, repo, venv, commands, deadline, settings.install_hosts, notes)
    except JobFailed as failure:
        if failure.conclusion == "timed_out":
            raise
        # A head that breaks its own installation (a setup.py importing the changed package) is
        # still tested: with the base's dependencies, the engine reports what the head broke.
        log.info("job %s: %s; installing the base's dependencies instead", job.job_id, failure)
        shutil.rmtree(venv)
        venv.mkdir()
        commands = list(config.install) or _default_install(base_checkout, job.base_sha, home)
        installed = _install(sandbox, base_checkout, venv, commands, deadline, settings.install_hosts, notes)
        notes.append(f"Installing the head's dependencies failed ({failure}); those of the base commit "
                     "were installed instead.")
    log.info("job %s: dependencies installed in the %s sandbox in %.1f s (%d command(s))", job.job_id,
             installed.sandbox, installed.seconds, len(commands))
    if not state.is_current(job):
        raise Superseded("a newer head arrived while the dependencies were installed")

    def show_progress(update: Progress) -> None:  # on the check run, from the engine's progress file
        publisher.progress(describe_progress(update))

    with watch_progress_file(out / PROGRESS_NAME, show_progress), _while_current(state, job) as stop:
        result, key = _engine(sandbox, repo, venv, out, settings_dir, job, settings, deadline, stop)
    if result.cancelled:
        raise Superseded("a newer head arrived while the engine ran: it was stopped")
    log.info("job %s: the engine ran in the %s sandbox in %.1f s", job.job_id, result.sandbox, result.seconds)
    report = _read_report(out / REPORT_NAME, result, key)
    report["notes"] = [*report.get("notes", []), *notes, f"Ran in the {result.sandbox} sandbox: no network "
                       "and no secrets; the dependencies were installed by a separate step."]

    def current_head() -> str:  # over git: none of the installation's API requests
        try:
            return pull_head(url, job.number, client.current_token(), home)
        except FetchError as exc:
            log.info("job %s: %s; asking the API", job.job_id, exc)
            return client.pull_head_sha(job.number)

    return _publish(job, state, publisher, report, result, current_head, head_reviewed)


def _publish(job: PullRequestJob, state: JobStateView, publisher: Publisher, report: dict,
             result: SandboxResult, current_head: Callable[[], str],
             head_reviewed: bool | None) -> JobOutcome:
    """Under the pull request's lock, and only while the job's head is the pull request's head. The
    summary comment as the last run wrote it is remembered in the queue's state, so that it is
    edited without listing the pull request's comments."""
    with state.publish_lock(job.pull_key):
        head = current_head()
        if not state.is_current(job) or head != job.head_sha:
            raise Superseded(f"the pull request moved on to {head[:12]}" if head != job.head_sha
                             else "a newer head arrived while the engine ran")
        known = state.summary_comment(job.pull_key)
        summary = (IssueComment(int(known["id"]), publisher.settings.bot_login, str(known["state"]))
                   if known else None)
        state.forget_summary_comment(job.pull_key)  # until it is written: a run killed meanwhile lists them
        try:
            published = publisher.finish(report, REPORT_NAME, summary=summary, head_reviewed=head_reviewed,
                                         still_head=lambda: current_head() == job.head_sha,
                                         newest_comment=state.newest_comment(job.pull_key))
        except HeadMoved as exc:
            raise Superseded(str(exc)) from None
        if published.comment_id is not None:
            state.remember_summary_comment(job.pull_key, published.comment_id, published.state_block)
    detail = f"{len(report['differences'])} difference(s), {published.conclusion}, {result.sandbox} sandbox"
    if (published.comment_id is None and not published.comment_skipped) or not published.completed:
        # what was published stays; running the job again completes the rest and duplicates nothing
        reason = f"published only in part ({detail}): {'; '.join(published.errors) or 'no check run'}"
        log.warning("job %s failed: %s", job.job_id, reason)
        return JobOutcome("failed", reason)
    if published.errors:
        detail += f"; degraded: {'; '.join(published.errors)}"
    log.info("job %s: published: %s", job.job_id, detail)
    return JobOutcome("published", detail)


# ------------------------------------------------------------------ configuration

def _base_config(repo: Path, job: PullRequestJob, home: Path, folder: Path) -> Config:
    """[tool.difforacle] of the base commit, read from git's objects (defaults without one), and
    written to `folder/pyproject.toml` for the engine's `--config`."""
    text = read_file(repo, job.base_sha, "pyproject.toml", home)
    (folder / "pyproject.toml").write_bytes(text or b"")
    if text is None:
        return Config()
    try:
        return load_config(folder)
    except ConfigError as exc:
        where = f"pyproject.toml of the base commit {job.base_sha[:12]}"
        raise JobFailed(str(exc).replace(str(folder / "pyproject.toml"), where)) from None


def _default_install(repo: Path, head: str, home: Path) -> list[str]:
    """requirements.txt, then the project itself when the head is an installable project."""
    commands = []
    if read_file(repo, head, "requirements.txt", home) is not None:
        commands.append("python -m pip install -r requirements.txt")
    pyproject = read_file(repo, head, "pyproject.toml", home)
    if read_file(repo, head, "setup.py", home) is not None or _is_project(pyproject):
        commands.append("python -m pip install .")
    return commands


def _is_project(pyproject: bytes | None) -> bool:
    if pyproject is None:
        return False
    try:
        document = tomllib.loads(pyproject.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # pip says what is wrong with it
    return "project" in document or "build-system" in document


# ------------------------------------------------------------------ sandboxed steps

def _install(sandbox: Sandbox, repo: Path, venv: Path, commands: list[str], deadline: float,
             install_hosts: tuple[str, ...] = (), notes: list[str] | None = None) -> SandboxResult:
    """The virtual environment, then the install commands: the one step that reaches out, and only
    to the package registries (and the worker's index and `install_hosts`), through the egress
    proxy. What it was refused is said in `notes`, and in the failure when the step failed."""
    make_venv = f"{shlex.quote(sandbox.python)} -m venv {'' if commands else '--without-pip '}{VENV}"
    script = "\n".join(["set -eu", make_venv, "set -x", *commands])
    env = {"PATH": f"{VENV}/bin:{SANDBOX_PATH}", "VIRTUAL_ENV": VENV, "LANG": "C.UTF-8",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PYTHONDONTWRITEBYTECODE": "1",
           **package_index_environment()}
    mounts = [Mount(repo, REPO, read_only=False), Mount(venv, VENV, read_only=False)]
    if Path(SYSTEM_CERTIFICATES).is_file():  # the host's trust store (a proxy's CA may be in it)
        mounts.append(Mount(Path(SYSTEM_CERTIFICATES), SYSTEM_CERTIFICATES))
        env["PIP_CERT"] = env.get("PIP_CERT") or SYSTEM_CERTIFICATES
    with EgressProxy(allow_list(os.environ, install_hosts)) as proxy:
        result = sandbox.run(SandboxRequest(
            argv=["sh", "-c", script], workdir=REPO, env=env, egress=proxy.socket_path, mounts=mounts,
            limits=Limits(wall_seconds=_remaining(deadline, "installing the dependencies"))))
    refused = f" (refused on the way out: {'; '.join(proxy.refused)})" if proxy.refused else ""
    if result.timed_out or result.exit_code != 0:
        raise JobFailed(f"installing the dependencies failed in the {result.sandbox} sandbox "
                        f"({result.outcome}): {last_error_line(result.stderr)}{refused}",
                        "timed_out" if result.timed_out else "failure")
    if refused and notes is not None:
        notes.append(f"The dependency step reaches only the package registries{refused}.")
    return result


@contextmanager
def _while_current(state: JobStateView, job: PullRequestJob) -> Iterator[threading.Event]:
    """An event set once the job's head is no longer the pull request's (a new push), looked at every
    CURRENT_POLL seconds while the block runs: the engine is stopped then, not run to its end for
    a result nobody will see, and its slot goes to the new head."""
    stop, done = threading.Event(), threading.Event()

    def watch() -> None:
        while not done.wait(CURRENT_POLL):
            try:
                current = state.is_current(job)
            except Exception as exc:  # the shared state hiccuped: the engine goes on, the next look may tell
                log.debug("job %s: could not tell whether the head is current: %s", job.job_id, exc)
                continue
            if not current:
                stop.set()
                return

    watcher = threading.Thread(target=watch, name=f"current-{job.job_id}", daemon=True)
    watcher.start()
    try:
        yield stop
    finally:
        done.set()
        watcher.join()


def _engine(sandbox: Sandbox, repo: Path, venv: Path, out: Path, settings_dir: Path, job: PullRequestJob,
            settings: AppSettings, deadline: float,
            stop: threading.Event | None = None) -> tuple[SandboxResult, bytes]:
    """`python -I -m difforacle.bot diff ...`: -I so that nothing of the project can stand in for ours;
    `--config` the base commit's settings, so that the head's pyproject.toml is never read; `--jobs`
    the sandbox's CPUs (a Docker CPU quota leaves every core in the affinity the engine would count);
    `--report-key` a fresh key the report is signed with (`bot.report_seal`), returned with the result."""
    limits = Limits(wall_seconds=_remaining(deadline, "running the engine"))
    key_dir = out.parent / "key"
    key_dir.mkdir(mode=0o700)
    key = report_seal.new_key(key_dir / KEY_NAME)
    argv = [sandbox.python, "-I", "-m", "difforacle.bot", "diff", "--repo", REPO, "--base", job.base_sha,
            "--head", job.head_sha, "--budget", f"{settings.budget:g}", "--jobs", str(math.ceil(limits.cpus)),
            "--config", f"{CONFIG}/pyproject.toml", "--json", f"{OUT}/{REPORT_NAME}",
            "--python", f"{VENV}/bin/python", "--quiet", "--progress-file", f"{OUT}/{PROGRESS_NAME}",
            "--report-key", f"{KEY}/{KEY_NAME}",
            f"--pr-title={job.title}", f"--pr-body={job.body}"]  # `=`: a text starting with "-" is no option
    env = {"PATH": f"{VENV}/bin:{SANDBOX_PATH}", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "GIT_CONFIG_NOSYSTEM": "1"}
    result = sandbox.run(SandboxRequest(
        argv=argv, workdir=OUT, env=env,
        mounts=[Mount(repo, REPO, read_only=False), Mount(venv, VENV), Mount(out, OUT, read_only=False),
                Mount(settings_dir, CONFIG), Mount(key_dir, KEY, read_only=False)],
        limits=limits, stop=stop))
    if result.cancelled:
        return result, key
    if result.timed_out:
        raise JobFailed(f"the engine was {result.outcome} in the {result.sandbox} sandbox", "timed_out")
    if result.exit_code not in (0, 1):
        raise JobFailed(f"the engine failed in the {result.sandbox} sandbox ({result.outcome}): "
                        f"{last_error_line(result.stderr)}")
    return result, key


def _read_report(path: Path, result: SandboxResult, key: bytes) -> dict:
    """The engine's report: a regular file (no link), not too big, signed under `key` (the project's
    code shares the engine's sandbox and may have written it), valid `difforacle.report/1`."""
    try:
        raw = _read_regular(path, MAX_REPORT_BYTES)
    except FileNotFoundError:
        raise JobFailed(f"the engine wrote no report in the {result.sandbox} sandbox ({result.outcome}): "
                        f"{last_error_line(result.stderr)}") from None
    try:
        signature = _read_regular(report_seal.mac_path(path), 1024).decode("ascii", errors="replace")
    except FileNotFoundError:
        signature = ""
    if not report_seal.verify(raw, signature, key):
        raise JobFailed("the engine's report was changed after the engine wrote it (its signature does not "
                        "match): the code under test wrote it; nothing is published from it")
    try:
        report = json.loads(raw)
        validate_report(report)
    except (ValueError, ValidationError) as exc:
        message = exc.message if isinstance(exc, ValidationError) else str(exc)
        raise JobFailed(f"the engine's report is invalid: {message.splitlines()[0][:200]}") from None
    return report


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file (not through a link) of at most `limit` bytes; JobFailed otherwise,
    FileNotFoundError when there is none."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError:
        raise JobFailed(f"the engine's {path.name} is not a regular file") from None
    with open(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise JobFailed(f"the engine's {path.name} is not a regular file of at most {limit:,} bytes")
        return handle.read()


def _remaining(deadline: float, what: str) -> float:
    left = deadline - time.monotonic()
    if left < 1:
        raise JobFailed(f"no time left for {what} (DIFFORACLE_JOB_TIMEOUT)", "timed_out")
    return left


# ------------------------------------------------------------------ helpers

_UNCAPPED_WARNED = threading.Event()  # the worker says once that job folders are not capped


@contextmanager
def _work_dir(settings: AppSettings, job: PullRequestJob) -> Iterator[Path]:
    """A fresh private directory for the job, a tmpfs of `job_disk_mb` where the worker can mount
    one (`job_disk.py`), removed afterwards whatever happened."""
    root = settings.data_dir / "work"
    root.mkdir(parents=True, exist_ok=True)
    name = f"{job.repository.replace('/', '-')}-{job.number}-{job.head_sha[:12]}-"
    work = Path(tempfile.mkdtemp(prefix=name, dir=root))
    if settings.job_disk_mb:
        why = job_disk.cap(work, settings.job_disk_mb)
        if why and not _UNCAPPED_WARNED.is_set():
            _UNCAPPED_WARNED.set()
            log.warning("job folders are not capped in size (%s): one job's files can fill the disk", why)
    try:
        yield work
    finally:
        job_disk.release(work)
        shutil.rmtree(work, onerror=_force_remove)
        if work.exists():
            log.warning("job %s: could not remove its work directory %s", job.job_id, work)


def sweep_stale_work(settings: AppSettings, now: float | None = None) -> int:
    """Remove the work directories of jobs whose worker was killed (a job removes its own).

    A directory is stale once no job could still be running in it: older than the job's
    sandboxed steps may take (`job_timeout`) plus two leases (the fetch before them and the
    publishing after) plus ten minutes. Run at worker start; returns how many went.
    """
    root = settings.data_dir / "work"
    if not root.is_dir():
        return 0
    limit = (time.time() if now is None else now) - (settings.job_timeout + 2 * settings.lease_seconds + 600)
    removed = 0
    for work in root.iterdir():
        if work.is_dir() and not work.is_symlink() and work.stat().st_mtime < limit:
            job_disk.release(work)
            shutil.rmtree(work, onerror=_force_remove)
            removed += not work.exists()
    return removed


def _force_remove(function: object, path: str, _: object) -> None:
    """rmtree's retry for a folder the sandbox made read-only: make it writable, remove again."""
    try:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


class _LogStream(io.TextIOBase):
    """The publisher's workflow log, into the App's log (a worker has no workflow step)."""

    def __init__(self, job: PullRequestJob) -> None:
        self.job = job

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                log.info("job %s: %s", self.job.job_id, line)
        return len(text)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:500] if lines else type(exc).__name__


def last_error_line(text: str) -> str:
    """The line that says what went wrong: the last error line if there is one (pip ends with
    notes and hints that never do), else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith(("error", "fatal")) or "Error:" in line]
    chosen = errors[-1] if errors else lines[-1] if lines else "no error output"
    return chosen[:300]


def package_index_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The worker's settings for reaching a package index (proxy, mirror, certificates), passed
    to the dependency step and to no other: an index URL may hold credentials, which that step,
    running the project's install code, can then read. The worker's operator chooses to set them.
    """
    env = os.environ if environ is None else environ
    return {name: env[name] for name in PACKAGE_INDEX_VARIABLES if env.get(name)}


def _redact(text: str, token: InstallationToken | None) -> str:
    return text.replace(token.token, "***") if token is not None and token.token else text
