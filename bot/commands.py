"""difforacle's commands and the parser that names them, without their options (`cli` adds those).

Light on purpose: the launcher answers `--help` and `--version` with this parser alone. Standard
library only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

EXIT_SETUP = 2

COMMANDS = {  # name -> its line in `difforacle --help`, in that order
    "diff": "report the behavioural differences head introduces over base",
    "demo": "build a small example repository and run diff on it",
    "action": "run in a GitHub Actions pull-request workflow and publish",
    "app": "run the GitHub App: webhook server, job worker, or both",
    "risk": "rank a pull request's units by defect score and split a budget",
}


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own exit status is 2 already; keep it one line
        self.print_usage(sys.stderr)
        print(f"difforacle: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_SETUP)


class _Version(argparse.Action):
    """`--version`: the installed version, read only when asked (reading it costs an import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print difforacle's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from difforacle.generator import VERSION  # the version module alone (the surface is lazy)

        print(f"difforacle {VERSION}")
        parser.exit()


def command_parser() -> tuple[Parser, dict[str, Parser]]:
    """The parser of `difforacle` and, by name, the parsers of its commands, without their options."""
    parser = Parser(prog="difforacle", description="Find behavioural differences between two commits.")
    parser.add_argument("--version", "-V", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    return parser, {name: commands.add_parser(name, help=line) for name, line in COMMANDS.items()}
