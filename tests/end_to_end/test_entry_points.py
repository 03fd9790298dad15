"""Command-line entry points: a `main()` that reads `sys.argv`, a click command, and the targets
of the project's console scripts are run with argv lists of their option strings and a stdin
text; their output, exit code and return value are compared between base and head."""

from __future__ import annotations

import ast
import logging
import os
import random
import sys
from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components
from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.worker.command_line import (
    ARGV,
    STDIN,
    check_arguments,
    option_strings,
    run_command_line,
)
from difforacle.generator.worker.introspect import build_catalog
from difforacle.generator.worker.resolve import Missing, Resolver

COUNTER = '''\
import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(description="Repeat a word.")
    parser.add_argument("word")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--upper", action="store_true")
    args = parser.parse_args(argv)
    word = args.word.upper() if args.upper else args.word
    for _ in range(args.count):
        print(word)
    return 0
'''


def _commands(builder: RepoBuilder, before: dict[str, str], after: dict[str, str], **options: object):
    make_pr(builder, before, after)
    report = run_analyze(builder, max_sequences=200, **options)
    return [d for d in report.differences if d.statements and d.statements[-1].op.endswith("<argv>")]


@pytest.mark.slow
def test_an_option_whose_output_changes_is_detected(builder: RepoBuilder) -> None:
    changed = COUNTER.replace("range(args.count)", "range(max(args.count - 1, 1))")
    found = _commands(builder, {"tool/__init__.py": "", "tool/cli.py": COUNTER}, {"tool/cli.py": changed})
    assert found, "no difference in the command line's output"
    difference = found[0]
    assert difference.target == "tool.cli:main"
    assert (difference.path, difference.line) == ("tool/cli.py", 11)
    argv = [word for _, word in difference.statements[-1].args[0]["lit"][1]]
    assert any(word.startswith("--c") for word in argv), argv  # `--count`, or the prefix argparse takes
    assert "run_command_line(main, [" in difference.test
    assert difference.reproduced


def test_off_by_its_switch(builder: RepoBuilder) -> None:
    changed = COUNTER.replace("range(args.count)", "range(max(args.count - 1, 1))")
    found = _commands(builder, {"tool/__init__.py": "", "tool/cli.py": COUNTER}, {"tool/cli.py": changed},
                      components=Components.without(["cli"]))
    assert found == []


APP = """\
import sys


def run():
    total = 0
    for line in sys.stdin:
        line = line.strip()
        if line:
            total += len(line)
    print(total)
"""
PYPROJECT = '[project]\nname = "tool"\nversion = "0"\n\n[project.scripts]\ntool-count = "tool.app:run"\n'


@pytest.mark.slow
def test_a_console_script_whose_stdin_handling_changed(builder: RepoBuilder) -> None:
    """`run` reads no argv: only the scripts table makes it a command line."""
    changed = APP.replace("        line = line.strip()\n", "")
    found = _commands(builder, {"pyproject.toml": PYPROJECT, "tool/__init__.py": "", "tool/app.py": APP},
                      {"tool/app.py": changed})
    assert found, "no difference in the script's output"
    assert found[0].target == "tool.app:run"
    stdin = found[0].statements[-1].args[1]["lit"][1]
    assert stdin.strip() != stdin or "\n" in stdin, stdin  # what strip() changes: surrounding space
    assert found[0].reproduced


EXITS = """\
import sys

COMMANDS = ("start", "stop")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: prog start|stop")
    if sys.argv[1] not in COMMANDS:
        print(f"unknown command {sys.argv[1]}", file=sys.stderr)
        sys.exit(2)
    print(sys.argv[1] + "ed")
"""


def test_an_exit_code_that_changes(builder: RepoBuilder) -> None:
    found = _commands(builder, {"tool/__init__.py": "", "tool/service.py": EXITS},
                      {"tool/service.py": EXITS.replace("sys.exit(2)", "sys.exit(1)")})
    [exit_code] = [d for d in found if d.key.endswith("['exit']")]
    assert (exit_code.base, exit_code.head) == ("2", "1")
    assert 'assert run["exit"] == 2' in exit_code.test
    assert exit_code.reproduced


CLOCK = """\
import argparse
import os
import sys
import time


def main():
    parser = argparse.ArgumentParser(description="Say when.")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--label", default="now")
    args = parser.parse_args()
    print(sys.argv[0], parser.prog, args.label, time.time(), os.getcwd())
    if args.verbose:
        print("took", time.perf_counter(), file=sys.stderr)
    return 0
"""


def test_no_false_alarm_on_a_program_printing_its_name_the_time_and_its_folder(builder: RepoBuilder) -> None:
    refactored = (CLOCK.replace("args = ", "options = ").replace("args.", "options.")
                  .replace("    parser = ", "    # the command line's options\n    parser = ")
                  .replace("time.perf_counter(),", "time.perf_counter(), sep=' ',"))
    make_pr(builder, {"tool/__init__.py": "", "tool/clock.py": CLOCK}, {"tool/clock.py": refactored})
    report = run_analyze(builder, max_sequences=200)
    assert report.differences == []
    # main ran, with --verbose too: as a command line (the worker's own argv has no options)
    assert report.coverage.changed_lines_covered == report.coverage.changed_lines > 0


CLICK = """\
import click


@click.group()
def cli():
    pass


@cli.command()
@click.option("--times", default=1)
@click.argument("name")
def greet(times, name):
    for _ in range(times):
        click.echo(f"hello {name}")
"""


@pytest.mark.slow
def test_a_click_group_s_subcommand(builder: RepoBuilder) -> None:
    pytest.importorskip("click")
    found = _commands(builder, {"tool/__init__.py": "", "tool/cli.py": CLICK},
                      {"tool/cli.py": CLICK.replace('f"hello {name}"', 'f"hello, {name}"')})
    assert {d.target for d in found} & {"tool.cli:cli", "tool.cli:greet"}
    assert all(d.reproduced for d in found)


# ---------------------------------------------------------------- discovery


def test_option_strings_from_the_module_source() -> None:
    source = """\
import argparse, click, getopt, sys

parser = argparse.ArgumentParser()
parser.add_argument("-n", "--count", type=int)
parser.add_argument("--upper", action="store_true")
parser.add_argument("--mode", choices=["fast", "slow"])
parser.add_argument("action", choices=("add", "list"))
commands = parser.add_subparsers()
commands.add_parser("remove")
getopt.getopt(sys.argv[1:], "ab:", ["alpha", "beta="])


@click.option("--shout/--no-shout")
def shout(shout):
    if sys.argv[-1] == "-q":
        return
"""
    options = {text: (takes, choices) for text, takes, choices in option_strings(ast.parse(source))}
    assert options == {
        "-n": (True, []), "--count": (True, []), "--upper": (False, []), "--mode": (True, ["fast", "slow"]),
        "add": (False, []), "list": (False, []), "remove": (False, []),
        "-a": (False, []), "-b": (True, []), "--alpha": (False, []), "--beta": (True, []),
        "--shout": (False, []), "--no-shout": (False, []), "-q": (False, []),
    }


def test_the_catalog_lists_the_functions_that_read_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = '[project.entry-points.console_scripts]\nrun = "tool.app:serve"\n'
    (tmp_path / "pyproject.toml").write_text(scripts)
    package = tmp_path / "tool"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "app.py").write_text("""\
import argparse
import sys
from sys import argv


def main(argv_list=None):
    return options(argv_list)


def options(given=None):
    return argparse.ArgumentParser().parse_args(given)


def first():
    return argv[1]


def with_list(words):
    return argparse.ArgumentParser().parse_args(words)


def needs(name):
    return sys.argv


def _hidden():
    return sys.argv


def serve(port=8000):
    return port


def plain():
    return 1
""")
    monkeypatch.syspath_prepend(str(tmp_path))
    operations = {op["id"]: op for op in build_catalog(["tool.app"])["operations"]}
    commands = sorted(op_id for op_id, op in operations.items() if op["kind"] == "command")
    assert commands == ["tool.app:first<argv>", "tool.app:main<argv>", "tool.app:options<argv>",
                        "tool.app:serve<argv>"]  # `serve` by the scripts table
    main = operations["tool.app:main<argv>"]
    assert [p["hints"] for p in main["params"]] == [[ARGV], [STDIN]]
    assert main["dispatches"] == ["tool.app:main"]
    assert "tool.app:main" in operations  # still callable as a function too


def test_setup_cfg_console_scripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "setup.cfg").write_text("[options.entry_points]\nconsole_scripts =\n    go = solo:start\n")
    (tmp_path / "solo.py").write_text("def start():\n    print('go')\n\n\ndef stop():\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    operations = build_catalog(["solo"])["operations"]
    assert [op["id"] for op in operations if op["kind"] == "command"] == ["solo:start<argv>"]


# ---------------------------------------------------------------- running


def test_run_command_line_observes_and_puts_everything_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    before = (sys.argv, sys.stdin, sys.stdout, sys.stderr, list(logging.root.handlers))

    def main() -> int:
        logging.basicConfig()
        print(sys.argv, os.environ["COLUMNS"], sys.stdin.read())
        print("x" * 2_000_000, file=sys.stderr)
        logging.getLogger("t").warning("careful")
        sys.exit(3)

    run = run_command_line(main, ["--flag", "value"], "some\ninput")
    assert run["stdout"] == "['prog', '--flag', 'value'] 80 some\ninput\n"
    assert run["stderr"] == "x" * 1_000_000  # bounded: the log line came after the limit
    assert (run["exit"], run["returned"]) == (3, None)
    assert (sys.argv, sys.stdin, sys.stdout, sys.stderr, logging.root.handlers) == before
    assert "COLUMNS" not in os.environ
    assert run_command_line(lambda: 7, [])["returned"] == 7


def test_a_command_line_s_arguments_are_checked() -> None:
    assert check_arguments([["-v"], "text"], {}) is None
    assert check_arguments([["-v"]], {}) is None
    assert check_arguments([[1]], {}) == "argv is a list of str"
    assert check_arguments([[], 5], {}) == "stdin is a str"
    assert check_arguments([], {}) is not None


def test_a_command_resolves_to_its_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prog.py").write_text("import sys\n\n\ndef main():\n    print(len(sys.argv))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    resolver = Resolver()
    op = resolver.resolve("prog:main<argv>")
    assert (op.kind, op.callee([["a"]])) == ("command", "prog:main")
    resolver.check_binding(op, [["a"], ""], {})
    assert op.call([["a", "b"], ""], {})["stdout"] == "3\n"
    with pytest.raises(Missing):
        resolver.resolve("prog:gone<argv>")


def test_argv_lists_are_built_from_the_option_strings() -> None:
    values = ValueGenerator(random.Random(3), Constants(module=[["str", "word"]]))
    options = (("--count", True, ()), ("--mode", True, ("fast", "slow")), ("--quiet", False, ()),
               ("add", False, ()))
    lines = [[word for _, word in values.argv(options)[1]] for _ in range(300)]
    words = {word for line in lines for word in line}
    assert {"--count", "--mode", "--quiet", "add", "fast", "slow", "word"} <= words
    modes = []
    for line in lines:
        for at, word in enumerate(line):
            if word in ("--count", "--mode"):
                assert at + 1 < len(line), line  # an option that takes a value is followed by one
            if word == "--mode":
                modes.append(line[at + 1])
    assert sum(mode in ("fast", "slow") for mode in modes) > len(modes) / 2  # mostly its choices
    assert any(line[:1] == ["add"] for line in lines)  # a subcommand first
    assert any(word.startswith("--count=") for word in words)
