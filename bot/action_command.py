"""`difforacle action`: the step a pull-request workflow runs (action.yml calls it).

It reads the standard environment of a workflow run, so it also runs locally with a saved
event: `GITHUB_EVENT_PATH`, one of
- `pull_request`: base and head SHAs, number, fork or not. The analysis runs here, on the
  checkout, and publishes where the token may; the report and the pull request's number are also
  written as the report artifact (`DIFFORACLE_ARTIFACT`), which action.yml uploads;
- `workflow_run` (a `pull_request` run completed): nothing is checked out and no code of the pull
  request runs. The report artifact that run uploaded (action.yml downloads it) is checked against
  GitHub (the pull request's head must be the run's) and published with this job's token: how a
  pull request from a fork, whose own run has a read-only token, gets its comment and check run;
- `issue_comment`: a `/difforacle` command, answered by `bot.comment_commands` (the commenter's
  permission, the acceptance recorded in the summary comment). When it asks for a new run, GitHub
  is asked to run the pull request's own `pull_request` workflow run again (`DIFFORACLE_WORKFLOW`,
  whose token is read-only for a fork); nothing of the pull request is checked out or run here.
`GITHUB_WORKSPACE` (the checkout), `GITHUB_TOKEN`, `GITHUB_REPOSITORY`,
`GITHUB_API_URL`, `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT`; the action's inputs arrive as
`DIFFORACLE_*` variables (see `bot.config.INPUT_ENV`) and override `[tool.difforacle]` in
the project's pyproject.toml. The base and head are the pull request's `base.sha` and
`head.sha`, never `GITHUB_SHA` (a merge commit GitHub made). What action.yml's cache step
restored of the git history arrives as `DIFFORACLE_HISTORY_CACHE_HIT` and `_KEY`, and is logged.

Exit status: 0, or 1 when `fail-on` says the differences fail the step; 2 when the run
cannot start (no event, not a pull request, a base commit missing from a shallow clone, a
bad setting). Publishing failures are logged and do not change the status.

The publishing modules (PyGithub under them) and GitPython are imported when the step runs,
not with the command line, whose `--help` they would slow down several times over.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from difforacle.generator import (
    Progress,
    SetupError,
    analyze,
    open_repo,
    report_to_json,
    validate_report,
    write_atomic,
)

from .config import Config, ConfigError, inputs_from_env, load_config, merge, run_options
from .progress import describe as describe_progress
from .workflow import Workflow

if TYPE_CHECKING:
    from .github_client import GitHubClient, Retries
    from .publisher import PublishSettings, PullRequestContext

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
COMMENT_EVENT = "issue_comment"  # a `/difforacle` command on a pull request (bot.comment_commands)
WORKFLOW_RUN_EVENT = "workflow_run"  # a `pull_request` run completed: publish its report artifact
REPORT_NAME = "difforacle-report.json"
ARTIFACT_DIR = "difforacle-artifact"  # under $RUNNER_TEMP: the report and the pull request's number
ARTIFACT_REPORT, ARTIFACT_PULL = "report.json", "pull.json"
DEFAULT_WORKFLOW = ".github/workflows/difforacle.yml"  # the pull_request workflow a command runs again
# `here`: publish with this job's token (a pull request of the repository itself); `artifact`: only
# leave the report artifact, for the workflow_run job to publish (the recipe for forks)
PUBLISH_MODES = ("here", "artifact")
# action.yml's history cache step: its `cache-hit` and `cache-matched-key` outputs
HISTORY_CACHE_HIT, HISTORY_CACHE_KEY = "DIFFORACLE_HISTORY_CACHE_HIT", "DIFFORACLE_HISTORY_CACHE_KEY"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `difforacle action` (its parser: `commands.command_parser`)."""
    parser.add_argument("--event", type=Path, metavar="FILE",
                        help="the webhook event (default: $GITHUB_EVENT_PATH)")
    parser.add_argument("--repo", type=Path, metavar="PATH",
                        help="the project in the checkout (default: the current directory if it is "
                        "inside $GITHUB_WORKSPACE, else $GITHUB_WORKSPACE)")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help=f"where to write the JSON report (default: $RUNNER_TEMP/{REPORT_NAME})")
    parser.add_argument("--python", metavar="PATH",
                        help="interpreter that can import the project "
                        "(default: $DIFFORACLE_PYTHON, else this one)")


def publish_settings(config: Config, env: Mapping[str, str]) -> PublishSettings:
    """How the Action publishes, from the run's settings and its inputs: the same for the job that
    ran the engine and for the workflow_run job that publishes its report."""
    from .publisher import PublishSettings

    return PublishSettings(config.fail_on, config.min_reach, config.max_comments,
                           state_secret=state_secret(env), comment=config.comment)


def state_secret(env: Mapping[str, str]) -> bytes | None:
    """The `state-secret` input: what seals the summary's state (`acceptance.StateSeal`), or None."""
    secret = env.get("DIFFORACLE_STATE_SECRET") or ""
    return secret.encode() if secret else None


def run(args: argparse.Namespace, environ: Mapping[str, str] | None = None,
        retries: Retries | None = None) -> int:
    """The `action` subcommand (errors are `SetupError`s, reported by `bot.cli.main`)."""
    from .github_client import DEFAULT_API_URL, GitHubClient, Retries
    from .publisher import Publisher, report_outputs

    env = dict(os.environ if environ is None else environ)
    event_path = args.event or (Path(env["GITHUB_EVENT_PATH"]) if env.get("GITHUB_EVENT_PATH") else None)
    if event_path is None:
        raise SetupError("no event: set GITHUB_EVENT_PATH (as GitHub Actions does) or pass --event FILE")
    event = read_event(event_path)
    root = (args.repo or _project_dir(env)).resolve()
    workflow = Workflow(env)
    token = env.get("GITHUB_TOKEN") or ""
    api_url = env.get("GITHUB_API_URL") or DEFAULT_API_URL

    def client_for(repository: str) -> GitHubClient | None:
        if not token:
            return None
        return GitHubClient(repository, token, api_url=api_url, retries=retries or Retries())

    if _is_comment(event, env):
        _answer_command(event, env, client_for, workflow)
        return 0
    if env.get("GITHUB_EVENT_NAME") == WORKFLOW_RUN_EVENT or "workflow_run" in event:
        return publish_artifact(event, env, client_for, workflow, _artifact_dir(env))
    pull = _pull_from(event, event_path, env)
    client = client_for(pull.repository)
    _check_commits(root, pull)
    base_config, settings_note = settings_of(root, pull)
    try:
        config = merge(base_config, inputs_from_env(env))
    except ConfigError as exc:
        raise SetupError(str(exc)) from None
    settings = publish_settings(config, env)
    publish = env.get("DIFFORACLE_PUBLISH") or "here"
    if publish not in PUBLISH_MODES:
        raise SetupError(f"publish must be one of {', '.join(PUBLISH_MODES)}, not {publish!r}")
    # `artifact`: the workflow_run job publishes; this one (the pull request's code runs in it) uses no token
    publisher = Publisher(client if publish == "here" else None, pull, settings, workflow)
    report_path = args.json or Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / REPORT_NAME
    workflow.log(f"difforacle: {pull.repository}#{pull.number} {pull.base_sha[:12]}..{pull.head_sha[:12]}, "
                 f"budget {config.budget:g} s")
    publisher.start()

    def progress(update: Progress) -> None:
        publisher.progress(describe_progress(update))

    python = args.python or env.get("DIFFORACLE_PYTHON") or sys.executable
    options = run_options(config, python=python, pr_title=pull.title, pr_body=pull.body, progress=progress)
    report = analyze(root, pull.base_sha, pull.head_sha, options)
    if settings_note:
        report.notes.append(settings_note)
    data = report_to_json(report)
    validate_report(data)
    write_atomic(report_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    _write_artifact(_artifact_dir(env), data, pull)
    if publish == "artifact":
        workflow.set_outputs(report_outputs(data, str(report_path)))
        workflow.log(f"difforacle: {len(data['differences'])} difference(s); the workflow_run job publishes "
                     "the report artifact")
        return 0
    published = publisher.finish(data, str(report_path))
    if (cache := history_cache(env)) is not None:
        workflow.log(f"difforacle: {cache}; reading the history took {report.stats.history_seconds:.2f} s")
    workflow.log(f"difforacle: {len(data['differences'])} difference(s); check run conclusion "
                 f"{published.conclusion}" + (" (fail-on: failing the step)" if published.failed else ""))
    return 1 if published.failed else 0


def _is_comment(event: dict, env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_EVENT_NAME") == COMMENT_EVENT or ("comment" in event and "issue" in event)


def _answer_command(event: dict, env: Mapping[str, str], client_for: Callable[[str], GitHubClient | None],
                    workflow: Workflow) -> None:
    """Answer a `/difforacle` command (`bot.comment_commands`); when it asks for a new run (an
    accept, a rerun, from someone with write access), ask GitHub to run the pull request's own
    `pull_request` workflow run again. No code of the pull request is checked out or run here: this
    job has the repository's write token even for a fork."""
    from .comment_commands import NotACommentCommand, answer, comment_event, wants_answer
    from .github_client import GitHubError
    from .publisher import ACTIONS_BOT

    try:
        comment = comment_event(event, env.get("GITHUB_REPOSITORY") or "")
    except NotACommentCommand as exc:
        workflow.log(f"difforacle: nothing to do: {exc}")
        return
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    if not wants_answer(comment, ACTIONS_BOT):
        workflow.log("difforacle: nothing to do: the comment is no /difforacle command of a person")
        return
    client = client_for(comment.repository)
    if client is None:
        raise SetupError("a /difforacle command needs a token that may comment (github-token, with "
                         "pull-requests: write)")
    try:
        answered = answer(client, comment, ACTIONS_BOT, state_secret(env))
    except GitHubError as exc:
        raise SetupError(f"cannot answer {comment.login}'s command: {exc}") from None
    workflow.log(f"difforacle: {answered.status}: {answered.detail}")
    if not answered.rerun or answered.pull is None:
        return
    wanted = env.get("DIFFORACLE_WORKFLOW") or DEFAULT_WORKFLOW
    head = answered.pull.head_sha
    try:
        runs = [run for run in client.workflow_runs(head, "pull_request") if run.path == wanted]
        if not runs:
            workflow.warn(f"difforacle: no run of {wanted} on the pull request's head {head[:12]} to run "
                          "again (set the action's `workflow` input to the pull_request workflow's file)")
            return
        if runs[0].status != "completed":
            workflow.log(f"difforacle: {wanted} is running on {head[:12]} ({runs[0].html_url}): it publishes "
                         "with the acceptance when it completes")
            return
        client.rerun_workflow_run(runs[0].id)
    except GitHubError as exc:
        raise SetupError(f"cannot run {wanted} again on {head[:12]}: {exc} (the workflow needs "
                         "`actions: write`)") from None
    workflow.log(f"difforacle: asked GitHub to run {wanted} again on {head[:12]} ({runs[0].html_url})")
    workflow.set_outputs({"rerun": runs[0].html_url or str(runs[0].id)})


def _artifact_dir(env: Mapping[str, str]) -> Path:
    """Where the report artifact is written (a pull_request run) or was downloaded (workflow_run)."""
    given = env.get("DIFFORACLE_ARTIFACT")
    return Path(given) if given else Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / ARTIFACT_DIR


def _write_artifact(folder: Path, report: dict, pull: PullRequestContext) -> None:
    """The report and the pull request's number, for a `workflow_run` job to publish."""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / ARTIFACT_REPORT, json.dumps(report, ensure_ascii=False) + "\n")
    write_atomic(folder / ARTIFACT_PULL, json.dumps({"number": pull.number, "head_sha": pull.head_sha})
                 + "\n")


def publish_artifact(event: dict, env: Mapping[str, str], client_for: Callable[[str], GitHubClient | None],
                     workflow: Workflow, folder: Path) -> int:
    """Publish the report a completed `pull_request` run uploaded (see the module). The artifact was
    made where the pull request's code ran, so nothing in it is trusted: the report must be a valid
    report of the run's head, and the pull request it names must have that head now, as GitHub
    says; its base, title and the settings come from GitHub and this job's inputs, not from it."""
    from jsonschema import ValidationError

    from .github_client import GitHubError
    from .publisher import Publisher, PullRequestContext

    run = event.get("workflow_run")
    if not isinstance(run, dict) or not isinstance(run.get("head_sha"), str):
        raise SetupError("the workflow_run event lacks its run's head_sha")
    if run.get("event") not in PULL_REQUEST_EVENTS:
        workflow.log(f"difforacle: nothing to publish: the run was started by {run.get('event')!r}, "
                     "not by a pull request")
        return 0
    head = run["head_sha"]
    try:
        report = json.loads((folder / ARTIFACT_REPORT).read_text(encoding="utf-8"))
        named = json.loads((folder / ARTIFACT_PULL).read_text(encoding="utf-8"))
        number = named["number"]
        if type(number) is not int:
            raise TypeError("the pull request's number")
        validate_report(report)
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        workflow.warn(f"difforacle: nothing to publish: the run's report artifact in {folder} is missing or "
                      f"invalid ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})")
        return 0
    if report.get("head") != head:
        workflow.warn(f"difforacle: not published: the report artifact is of {str(report.get('head'))[:12]}, "
                      f"the run of {head[:12]}")
        return 0
    repository = env.get("GITHUB_REPOSITORY") or str((event.get("repository") or {}).get("full_name") or "")
    client = client_for(repository)
    if client is None:
        raise SetupError("publishing a pull request's report needs a token that may comment and create "
                         "check runs (github-token, with pull-requests: write and checks: write)")
    try:
        details = client.pull_request(number)
    except GitHubError as exc:
        raise SetupError(f"cannot read the pull request #{number} the report names: {exc}") from None
    if details.head_sha != head:
        workflow.log(f"difforacle: not published: #{number}'s head is now {details.head_sha[:12]}, not the "
                     f"run's {head[:12]} (a newer run publishes it)")
        return 0
    if report.get("base") != details.base_sha:
        workflow.warn(f"difforacle: not published: the report compares {str(report.get('base'))[:12]}, "
                      f"#{number}'s base is {details.base_sha[:12]}")
        return 0
    pull = PullRequestContext(repository, number, details.base_sha, head,
                              fork=details.head_repository != repository, title=details.title,
                              head_ref=details.head_ref, body=details.body)
    try:
        config = merge(Config(), inputs_from_env(env))  # never the pull request's own settings
    except ConfigError as exc:
        raise SetupError(str(exc)) from None
    publisher = Publisher(client, pull, publish_settings(config, env), workflow)
    publisher.start()
    published = publisher.finish(report, str(folder / ARTIFACT_REPORT))
    workflow.log(f"difforacle: published {repository}#{number} {head[:12]}: {len(report['differences'])} "
                 f"difference(s); check run conclusion {published.conclusion}"
                 + (" (fail-on: failing the step)" if published.failed else ""))
    return 1 if published.failed else 0


def settings_of(root: Path, pull: PullRequestContext) -> tuple[Config, str]:
    """`[tool.difforacle]` as the base commit has it (a pull request does not decide how it is
    judged: its `fail-on`, `exclude`, `min-reach` or `build` apply once merged, as in the App), and
    a note when the head commit's differs; ConfigError messages name the base commit."""
    base = _settings_at(root, pull.base_sha, "base")
    try:
        head = _settings_at(root, pull.head_sha, "head")
    except SetupError as exc:
        return base, (f"This pull request's difforacle settings are not valid ({exc}); the base commit's "
                      "apply.")
    if head == base:
        return base, ""
    return base, ("This pull request changes difforacle's settings ([tool.difforacle] in pyproject.toml): "
                  "the base commit's apply to it, its own once it is merged.")


def _settings_at(root: Path, sha: str, side: str) -> Config:
    """The settings in the project's pyproject.toml at commit `sha`, read from git (defaults without one)."""
    import git

    repo = open_repo(root)
    prefix = repo.git.rev_parse("--show-prefix").strip()
    text = ""  # no pyproject.toml: the defaults
    with contextlib.suppress(git.GitCommandError):
        text = repo.git.show(f"{sha}:{prefix}pyproject.toml")
    with tempfile.TemporaryDirectory(prefix="difforacle-settings-") as folder:
        (Path(folder) / "pyproject.toml").write_text(text, encoding="utf-8")
        try:
            return load_config(Path(folder))
        except ConfigError as exc:
            where = f"pyproject.toml of the {side} commit {sha[:12]}"
            raise SetupError(str(exc).replace(str(Path(folder) / "pyproject.toml"), where)) from None


def history_cache(env: Mapping[str, str]) -> str | None:
    """What action.yml's cache step restored of the defect scores' history, for the log (an exact
    hit, an earlier base's cache or none); None when no such step ran (a run outside the action)."""
    if HISTORY_CACHE_HIT not in env:
        return None
    key = env.get(HISTORY_CACHE_KEY) or ""
    if env[HISTORY_CACHE_HIT] == "true":
        return f"history cache hit ({key})"
    if key:
        return f"history cache of an earlier base restored ({key})"
    return "no history cache restored"


def _project_dir(env: Mapping[str, str]) -> Path:
    """The step's working directory (the action's `working-directory`) when it lies in the
    workspace, else the workspace itself."""
    workspace = env.get("GITHUB_WORKSPACE")
    here = Path.cwd()
    if not workspace or here.resolve().is_relative_to(Path(workspace).resolve()):
        return here
    return Path(workspace)


def _check_commits(root: Path, pull: PullRequestContext) -> None:
    import git

    repo = open_repo(root)
    for name, sha in (("base", pull.base_sha), ("head", pull.head_sha)):
        try:
            repo.git.cat_file("-e", f"{sha}^{{commit}}")
        except git.GitCommandError:
            raise SetupError(f"the pull request's {name} commit {sha[:12]} is not in the clone at {root}: "
                             "check out with `actions/checkout` and `fetch-depth: 0`") from None


def read_event(path: Path) -> dict:
    """The webhook event a workflow run was started by; SetupError when it cannot be read."""
    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SetupError(f"cannot read the event {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SetupError(f"the event {path} is not JSON ({exc})") from None
    return event if isinstance(event, dict) else {}


def pull_request_from_event(path: Path, env: Mapping[str, str]) -> PullRequestContext:
    """The pull request a `pull_request` event is about; SetupError for anything else."""
    return _pull_from(read_event(path), path, env)


def _pull_from(event: dict, path: Path, env: Mapping[str, str]) -> PullRequestContext:
    from .publisher import PullRequestContext

    pull = event.get("pull_request")
    if not isinstance(pull, dict):
        name = env.get("GITHUB_EVENT_NAME") or "this event"
        raise SetupError(f"{name} is not a pull request event: run difforacle on `pull_request` (or on "
                         "`issue_comment`, for its commands)")
    try:
        base, head = pull["base"], pull["head"]
        repository = env.get("GITHUB_REPOSITORY") or base["repo"]["full_name"]
        head_repo = (head.get("repo") or {}).get("full_name")
        fork = head_repo != base["repo"]["full_name"]
        return PullRequestContext(repository, int(pull["number"]), base["sha"], head["sha"], fork=fork,
                                  title=str(pull.get("title") or ""), head_ref=head.get("ref") or "",
                                  body=str(pull.get("body") or ""))
    except (KeyError, TypeError, ValueError) as exc:
        raise SetupError(f"the event {path} lacks the pull request's {exc}: "
                         "is it a pull_request event?") from None
