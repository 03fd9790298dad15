"""Running the `difforacle` command as a user would, what its errors must look like, and the small
pull request the command line's tests run it on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.repos import GIT_ENV, RepoBuilder, make_pr


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m difforacle.bot <args>` in a subprocess, as a user would run it (`env`: more
    environment variables)."""
    env = {**os.environ, **GIT_ENV, **(env or {})}
    return subprocess.run([sys.executable, "-m", "difforacle.bot", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2, no traceback, and one `difforacle: ...` line on stderr (argparse adds its usage first)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, "no message on stderr"
    usage = [line for line in lines if line.startswith(("usage:", " "))]
    message = [line for line in lines if line not in usage]
    assert len(message) == 1, result.stderr
    assert message[0].startswith("difforacle: "), result.stderr
    for fragment in fragments:
        assert fragment in message[0], result.stderr
    return message[0]


# The command line's pull request: pkg.mod:convert('h') changes from 3600 to 3660; `same` does not.
MOD_BASE = '''\
def convert(unit):
    if unit == "h":
        return 3600
    if unit == "m":
        return 60
    return 1


def same(x):
    return x
'''
MOD_HEAD = MOD_BASE.replace("return 3600", "return 3660")
FAST = ("--budget", "4", "--max-sequences", "300", "--quiet")  # enough to find convert's difference


def convert_pr(builder: RepoBuilder) -> RepoBuilder:
    """A repository whose feature branch changes pkg.mod:convert('h') from 3600 to 3660."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/mod.py": MOD_BASE, "README.md": "hello\n"},
            {"pkg/mod.py": MOD_HEAD})
    return builder
