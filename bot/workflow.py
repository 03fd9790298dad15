"""What a step of a GitHub Actions workflow can say without any token: outputs, the job
summary, and annotations through workflow commands.

Workflow commands are lines on stdout (`::warning file=...,line=...::message`); their data
and properties must be escaped or a message can break the line or inject another command
(https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts). Outputs go to
the file named by `$GITHUB_OUTPUT` in the heredoc form with a random delimiter, so that a
value cannot end its own entry.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

LEVELS = ("notice", "warning", "error")


@dataclass(frozen=True)
class Annotation:
    level: str  # notice | warning | error
    message: str
    title: str = ""
    path: str | None = None
    line: int | None = None
    end_line: int | None = None


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(annotation: Annotation) -> str:
    """The workflow command line for `annotation`."""
    if annotation.level not in LEVELS:
        raise ValueError(f"annotation level must be one of {LEVELS}, not {annotation.level!r}")
    properties = []
    if annotation.path:
        properties.append(f"file={escape_property(annotation.path)}")
        if annotation.line:
            properties.append(f"line={annotation.line}")
            if annotation.end_line and annotation.end_line >= annotation.line:
                properties.append(f"endLine={annotation.end_line}")
    if annotation.title:
        properties.append(f"title={escape_property(annotation.title)}")
    joined = (" " + ",".join(properties)) if properties else ""
    return f"::{annotation.level}{joined}::{escape_data(annotation.message)}"


class Workflow:
    """The running workflow step's channels; each is optional so that local runs work too."""

    def __init__(self, environ: Mapping[str, str] | None = None, stdout: TextIO | None = None) -> None:
        env = os.environ if environ is None else environ
        self.output_file = _path(env.get("GITHUB_OUTPUT"))
        self.summary_file = _path(env.get("GITHUB_STEP_SUMMARY"))
        self.stdout = stdout or sys.stdout

    def set_outputs(self, values: Mapping[str, str]) -> None:
        if self.output_file is None:
            return
        with self.output_file.open("a", encoding="utf-8") as out:
            for name, value in values.items():
                delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
                out.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")

    def add_summary(self, markdown: str) -> None:
        if self.summary_file is None:
            return
        with self.summary_file.open("a", encoding="utf-8") as out:
            out.write(markdown.rstrip("\n") + "\n")

    def annotate(self, annotations: list[Annotation]) -> None:
        for annotation in annotations:
            print(command(annotation), file=self.stdout, flush=True)

    def log(self, message: str) -> None:
        print(message, file=self.stdout, flush=True)

    def warn(self, message: str) -> None:
        """A warning the run's page shows (a `::warning` workflow command; the log has it too)."""
        print(f"::warning title=difforacle::{escape_data(message)}", file=self.stdout, flush=True)


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None
