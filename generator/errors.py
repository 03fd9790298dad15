"""The two ways a run ends without a full report: the user's setup, or a bug of ours."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report.model import Report


class SetupError(Exception):
    """A usage or setup problem the user must fix (exit status 2, one-line message)."""



class InternalError(Exception):
    """The engine failed (a bug of ours) after it had started running the project's code.

    `report` holds what was known by then, with `report.error` saying where the run stopped,
    so a front end can still write it (marked partial) before it exits with status 2. The
    original exception is the `__cause__`.
    """

    def __init__(self, report: Report, phase: str, cause: BaseException) -> None:
        super().__init__(f"while {phase}: {type(cause).__name__}: {cause}")
        self.report, self.phase = report, phase
