"""The files a run writes its report to: one entry per `--OPTION PATH` of `diff` and `demo`.

A new file destination (another format, for another tool) is a function that writes the report
to a path, and one entry in `REPORT_FILES`: the command line's option, the writing, and the
partial report written after an internal error all come from this table.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from difforacle.generator import Report, report_to_json, write_atomic, write_json, write_tests

from .markdown import render_markdown


def write_markdown(report: Report, path: Path) -> None:
    write_atomic(path, render_markdown(report_to_json(report)))


@dataclass(frozen=True)
class ReportFile:
    option: str  # the command line's option, "--json"
    metavar: str  # what it takes: FILE or DIR
    help: str
    write: Callable[[Report, Path], object]  # writes the report there

    @property
    def dest(self) -> str:
        """The option's name in the parsed arguments."""
        return self.option.removeprefix("--").replace("-", "_")


REPORT_FILES = (
    ReportFile("--json", "FILE", "write the JSON report (difforacle.report/1)", write_json),
    ReportFile("--markdown", "FILE", "write the markdown report", write_markdown),
    ReportFile("--tests-dir", "DIR", "write the pytest files of each difference (pin_base and pin_head)",
               write_tests),
)


def add_options(parser: argparse.ArgumentParser) -> None:
    for report_file in REPORT_FILES:
        parser.add_argument(report_file.option, type=Path, metavar=report_file.metavar, help=report_file.help)


def requested(args: argparse.Namespace) -> list[tuple[ReportFile, Path]]:
    """The report files the command line asked for, with their paths, in the table's order."""
    return [(report_file, path) for report_file in REPORT_FILES
            if (path := getattr(args, report_file.dest, None)) is not None]
