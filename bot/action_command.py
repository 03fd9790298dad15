"""`difforacle action`: the step a pull-request workflow runs (action.yml calls it).

It reads the standard environment of a workflow run, so it also runs locally with a saved
event: `GITHUB_EVENT_PATH` (the `pull_request` event: base and head SHAs, number, fork or
not), `GITHUB_WORKSPACE` (the checkout), `GITHUB_TOKEN`, `GITHUB_REPOSITORY`,
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
import json
import os
import sys
import tempfile
from collections.abc import Mapping
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

from .config import ConfigError, inputs_from_env, load_config, merge, run_options
from .progress import describe as describe_progress
from .workflow import Workflow

if TYPE_CHECKING:
    from .github_client import Retries
    from .publisher import PullRequestContext

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
REPORT_NAME = "difforacle-report.json"
# action.yml's history cache step: its `cache-hit` and `cache-matched-key` outputs
HISTORY_CACHE_HIT, HISTORY_CACHE_KEY = "DIFFORACLE_HISTORY_CACHE_HIT", "DIFFORACLE_HISTORY_CACHE_KEY"


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("action", help="run in a GitHub Actions pull-request workflow and publish")
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


def run(args: argparse.Namespace, environ: Mapping[str, str] | None = None,
        retries: Retries | None = None) -> int:
    """The `action` subcommand (errors are `SetupError`s, reported by `bot.cli.main`)."""
    from .github_client import DEFAULT_API_URL, GitHubClient, Retries
    from .publisher import Publisher, PublishSettings

    env = dict(os.environ if environ is None else environ)
    event_path = args.event or (Path(env["GITHUB_EVENT_PATH"]) if env.get("GITHUB_EVENT_PATH") else None)
    if event_path is None:
        raise SetupError("no event: set GITHUB_EVENT_PATH (as GitHub Actions does) or pass --event FILE")
    pull = pull_request_from_event(event_path, env)
    root = (args.repo or _project_dir(env)).resolve()
    try:
        config = merge(load_config(root), inputs_from_env(env))
    except ConfigError as exc:
        raise SetupError(str(exc)) from None
    workflow = Workflow(env)
    token = env.get("GITHUB_TOKEN") or ""
    api_url = env.get("GITHUB_API_URL") or DEFAULT_API_URL
    client = GitHubClient(pull.repository, token, api_url=api_url, retries=retries or Retries()) \
        if token else None
    settings = PublishSettings(config.fail_on, config.min_reach, config.max_comments)
    publisher = Publisher(client, pull, settings, workflow)
    report_path = args.json or Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / REPORT_NAME
    workflow.log(f"difforacle: {pull.repository}#{pull.number} {pull.base_sha[:12]}..{pull.head_sha[:12]}, "
                 f"budget {config.budget:g} s")
    publisher.start()

    def progress(update: Progress) -> None:
        publisher.progress(describe_progress(update))

    python = args.python or env.get("DIFFORACLE_PYTHON") or sys.executable
    options = run_options(config, python=python, pr_title=pull.title, pr_body=pull.body, progress=progress)
    _check_commits(root, pull)
    report = analyze(root, pull.base_sha, pull.head_sha, options)
    data = report_to_json(report)
    validate_report(data)
    write_atomic(report_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    published = publisher.finish(data, str(report_path))
    if (cache := history_cache(env)) is not None:
        workflow.log(f"difforacle: {cache}; reading the history took {report.stats.history_seconds:.2f} s")
    workflow.log(f"difforacle: {len(data['differences'])} difference(s); check run conclusion "
                 f"{published.conclusion}" + (" (fail-on: failing the step)" if published.failed else ""))
    return 1 if published.failed else 0


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


def pull_request_from_event(path: Path, env: Mapping[str, str]) -> PullRequestContext:
    """The pull request a `pull_request` event is about; SetupError for anything else."""
    from .publisher import PullRequestContext

    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SetupError(f"cannot read the event {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SetupError(f"the event {path} is not JSON ({exc})") from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pull, dict):
        name = env.get("GITHUB_EVENT_NAME") or "this event"
        raise SetupError(f"{name} is not a pull request event: run difforacle on `pull_request`")
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
