"""The `difforacle` command line: `diff` (the main job), `demo` (the bundled example), `risk`,
`action` (a GitHub Actions step) and `app` (the GitHub App's server and workers).

`diff` and `risk` read `[tool.difforacle]` from the repository's pyproject.toml (or `--config
FILE`); their flags override it. Exit status: 0 no behavioural difference (at most minor ones, an
exception's wording from outside the project, or ones only an input outside the declared types
shows), 1 differences found, 2 usage or setup
error (one line on stderr saying what to do, never a traceback) or internal error (one line too;
the traceback before it with DIFFORACLE_DEBUG=1). A run that fails once exploring has begun still
writes its partial report, marked as such.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import traceback
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from difforacle.generator import (
    ALLOCATIONS,
    COMPONENTS,
    DEMO_DESCRIPTION,
    OFF_BY_DEFAULT,
    WINDOW,
    Components,
    InternalError,
    Options,
    Progress,
    Report,
    SetupError,
    analyze,
    build_demo_repo,
    report_to_json,
)

from . import action_command, report_files, report_seal, risk_command
from .app import command as app_command
from .app.model import AppError
from .commands import EXIT_SETUP, command_parser
from .config import Config, ConfigError, load_config, load_config_file, run_options
from .markdown import render_markdown
from .progress import ProgressFile, ProgressPrinter
from .report_facts import behavioural

EXIT_SAME, EXIT_DIFFERENT = 0, 1
DEMO_BUDGET = 20.0


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (`commands.command_parser`), each command's options added."""
    parser, commands = command_parser()
    diff = commands["diff"]
    diff.add_argument("--repo", default=".", help="the git repository (default: the current directory)")
    diff.add_argument("--base", required=True, help="the commit the tests are generated on")
    diff.add_argument("--head", required=True, help="the commit the tests are replayed on")
    _add_settings_options(diff)
    _add_run_options(diff)
    diff.add_argument("--pr-title", default="", metavar="TEXT",
                      help="the pull request's title: evidence of what it means to change (with its body, "
                      "commit messages, changelog lines and changed docstrings)")
    diff.add_argument("--pr-body", default="", metavar="TEXT",
                      help="the pull request's description, the same")
    diff.add_argument("--report-key", type=Path, metavar="FILE",
                      help="sign the --json report with the key in FILE, which is read and deleted first; "
                      "this process is then closed to the code it tests (how the App runs the engine "
                      "beside a pull request's code)")
    _add_run_options(commands["demo"], budget=DEMO_BUDGET)
    action_command.add_arguments(commands["action"])
    app_command.add_arguments(commands["app"])
    risk = commands["risk"]
    risk.add_argument("--repo", default=".", help="the git repository (default: the current directory)")
    risk.add_argument("--base", required=True, help="the commit whose history is scored")
    risk.add_argument("--head", help="the pull request's head (default: rank every unit at base)")
    risk.add_argument("--budget", type=_positive_float, metavar="SECONDS",
                      help="time budget to split, less the history analysis (default: [tool.difforacle] "
                      "budget, else 60)")
    risk.add_argument("--window", type=_positive_int, default=WINDOW, metavar="N",
                      help=f"commits of history before base (default: {WINDOW})")
    risk.add_argument("--allocation", choices=ALLOCATIONS,
                      help="two tiers by defect probability, or equal shares (default: [tool.difforacle] "
                      "allocation, else defect)")
    _add_settings_options(risk)
    risk.add_argument("--json", type=Path, metavar="FILE",
                      help="write the ranking as JSON (difforacle.risk/1)")
    risk.add_argument("--no-cache", action="store_true", help="read every commit from git, not the cache")
    return parser


def _add_settings_options(parser: argparse.ArgumentParser) -> None:
    """What a project's [tool.difforacle] also says; a flag given overrides the file."""
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="read [tool.difforacle] from FILE (default: the repository's pyproject.toml)")
    parser.add_argument("--include", action="append", metavar="GLOB",
                        help="test only the changed files these globs match (repeatable; replaces the "
                        "file's)")
    parser.add_argument("--exclude", action="append", metavar="GLOB",
                        help="leave out the changed files these globs match (repeatable; replaces the "
                        "file's)")


def _add_run_options(parser: argparse.ArgumentParser, budget: float = 60.0) -> None:
    parser.add_argument("--budget", type=_positive_float, metavar="SECONDS",
                        help=f"time budget in seconds (default: [tool.difforacle] budget, else {budget:g})")
    parser.add_argument("--seed", type=int, help="random seed (default: [tool.difforacle] seed, else 0)")
    report_files.add_options(parser)
    parser.add_argument("--python", type=_interpreter, default=sys.executable, metavar="PATH",
                        help="interpreter that can import the project, Python 3.9+ (default: this one)")
    parser.add_argument("--max-sequences", type=_positive_int, metavar="N",
                        help="stop exploring after N sequences instead of by time (bit-for-bit reproducible)")
    parser.add_argument("--minimize-share", type=_share, default=Options.minimize_share, metavar="FRACTION",
                        help="share of the budget for shrinking the tests of differences "
                        f"(default: {Options.minimize_share:g})")
    parser.add_argument("--jobs", type=_positive_int, metavar="N",
                        help="workers exploring on base at once (default: the cores this process may use; 1 "
                        "with --max-sequences, whose report then does not depend on the machine)")
    parser.add_argument("--no-early-stop", dest="early_stop", action="store_false",
                        help="explore until the budget's end, even once the changed code is exhausted (every "
                        "changed line and branch run and nothing new found for a while)")
    parser.add_argument("--allocation", choices=ALLOCATIONS,
                        help="share generation over the changed units by defect score (two tiers) "
                        "or equally (default: [tool.difforacle] allocation, else defect)")
    parser.add_argument("--window", type=_positive_int, default=WINDOW, metavar="N",
                        help=f"commits of history before base for the defect scores (default: {WINDOW})")
    parser.add_argument("--disable", action="append", choices=COMPONENTS, default=[], metavar="COMPONENT",
                        help="switch a generation technique off, to measure it (repeatable): "
                        + ", ".join(COMPONENTS))
    parser.add_argument("--enable", action="append", choices=COMPONENTS, default=[], metavar="COMPONENT",
                        help="switch on a technique that is off by default (repeatable): "
                        + ", ".join(sorted(OFF_BY_DEFAULT)))
    parser.add_argument("--show-unreproduced", action="store_true",
                        help="also report differences whose test pytest did not reproduce (marked as such)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.add_argument("--progress-file", type=Path, metavar="FILE",
                        help="keep FILE holding the latest progress as JSON (for a process watching the run)")


def _number(text: str, convert: type[float] | type[int] = float) -> float:
    try:
        return convert(text)
    except ValueError:
        kind = "an integer" if convert is int else "a number"
        raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None


def _interpreter(text: str) -> str:
    """A path (`.venv/bin/python`) made absolute, since the workers start in folders of their own;
    a bare name (`python3.9`) is looked up on PATH as it is."""
    return os.path.abspath(text) if os.sep in text else text


def _positive_float(text: str) -> float:
    value = _number(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError("must be a finite number greater than 0")
    return value


def _share(text: str) -> float:
    value = _number(text)
    if not 0 <= value < 1:  # also refuses NaN
        raise argparse.ArgumentTypeError("must be a fraction of the budget, from 0 to below 1")
    return value


def _positive_int(text: str) -> int:
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def settings(args: argparse.Namespace, project: Path | None, default: Config | None = None) -> Config:
    """[tool.difforacle] of `--config FILE`, else of the project's pyproject.toml (`default` without
    a project), with each flag given overriding it."""
    if getattr(args, "config", None):
        if not args.config.is_file():
            raise ConfigError(f"--config {args.config}: no such file")
        config = load_config_file(args.config)
    else:
        config = load_config(project) if project is not None else default or Config()
    given = {"budget": args.budget, "seed": getattr(args, "seed", None), "allocation": args.allocation,
             "include": tuple(args.include) if getattr(args, "include", None) else None,
             "exclude": tuple(args.exclude) if getattr(args, "exclude", None) else None}
    return replace(config, **{key: value for key, value in given.items() if value is not None})


def _run(args: argparse.Namespace, repo: Path, base: str, head: str, config: Config) -> int:
    printer = None if args.quiet else ProgressPrinter(sys.stderr)
    progress_file = ProgressFile(args.progress_file) if args.progress_file else None

    def report_progress(update: Progress) -> None:
        for show in (printer, progress_file):
            if show is not None:
                show(update)

    options = run_options(config, python=args.python, max_sequences=args.max_sequences,
                          minimize_share=args.minimize_share, show_unreproduced=args.show_unreproduced,
                          history_window=args.window, early_stop=args.early_stop, jobs=args.jobs,
                          components=Components.without(args.disable, args.enable),
                          pr_title=getattr(args, "pr_title", ""), pr_body=getattr(args, "pr_body", ""),
                          progress=report_progress)
    stopped: InternalError | None = None
    with printer if printer is not None else nullcontext():
        try:
            report = analyze(repo, base, head, options)
        except InternalError as exc:
            stopped = exc
        finally:
            if progress_file is not None:
                progress_file.flush()
    if stopped is not None:
        return _internal_error(stopped, _write_partial(stopped.report, args))
    if printer is not None:
        printer.summary(report)
    _write_outputs(report, args)
    return EXIT_DIFFERENT if behavioural(report_to_json(report)) else EXIT_SAME  # what counts, as the bot


def _write_partial(report: Report, args: argparse.Namespace) -> str:
    """Write the partial report wherever the run was asked to write one; what happened, for the
    error line (writing must not hide the error that stopped the run)."""
    try:
        _write_outputs(report, args)
    except Exception as exc:
        return f"the partial report could not be written: {type(exc).__name__}: {exc}"
    return "the partial report was written" if report_files.requested(args) else ""


def _write_outputs(report: Report, args: argparse.Namespace) -> None:
    """The files asked for, then the Markdown report on stdout."""
    for report_file, path in report_files.requested(args):
        report_file.write(report, path)
    if getattr(args, "signing_key", None):
        report_seal.sign(args.json, args.signing_key)
    print(render_markdown(report_to_json(report)))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "risk":
            return risk_command.run(args, settings(args, Path(args.repo)))
        if args.command == "action":
            return action_command.run(args)
        if args.command == "app":
            return app_command.run(args)
        if args.command == "demo":
            with tempfile.TemporaryDirectory(prefix="difforacle-demo-") as tmp:
                base, head = build_demo_repo(Path(tmp) / "durations")
                print(DEMO_DESCRIPTION, file=sys.stderr)
                demo = settings(args, None, Config(budget=DEMO_BUDGET))
                return _run(args, Path(tmp) / "durations", base, head, demo)
        if args.report_key is not None:  # before any of the project's code runs
            if args.json is None:
                raise SetupError("--report-key signs the JSON report: give --json FILE too")
            args.signing_key = report_seal.take_key(args.report_key)
            report_seal.seal_process()
        return _run(args, Path(args.repo), args.base, args.head, settings(args, Path(args.repo)))
    except (SetupError, ConfigError, AppError) as exc:
        print(f"difforacle: {exc}", file=sys.stderr)
        return EXIT_SETUP
    except OSError as exc:
        print(f"difforacle: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_SETUP
    except KeyboardInterrupt:
        print("difforacle: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug of ours: one line, and the traceback only on request
        return _internal_error(exc)


def _internal_error(exc: Exception, outcome: str = "") -> int:
    """Exit status 2 and one line on stderr, after the traceback when DIFFORACLE_DEBUG is set
    (an uncaught exception would exit 1, which means "differences found")."""
    debug = bool(os.environ.get("DIFFORACLE_DEBUG"))
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    where, cause = "", exc
    if isinstance(exc, InternalError):
        where, cause = f" while {exc.phase}", exc.__cause__ or exc
    detail = f"{type(cause).__name__}: {cause}".splitlines()[0]
    remarks = [remark for remark in (outcome, "" if debug else "set DIFFORACLE_DEBUG=1 for the traceback")
               if remark]
    suffix = f" ({'; '.join(remarks)})" if remarks else ""
    print(f"difforacle: internal error{where}: {detail}{suffix}", file=sys.stderr)
    return EXIT_SETUP


if __name__ == "__main__":
    sys.exit(main())
