"""The `difforacle` command's first step: `--help`, `--version` and a call without a command are
answered from `commands`' parser alone, without the engine or the front ends' modules (a third of a
second of imports); a command goes on to `cli`, which adds each command's options to that parser.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .commands import command_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-"):  # no command: --help, --version or a usage error, all final
        command_parser()[0].parse_args(args)
    from .cli import main as run_command

    return run_command(args)
